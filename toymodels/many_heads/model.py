"""Three hand-made causal attention heads over a six-number word vector.

Each word becomes x = [cos 0.35j, sin 0.35j, action, doer, pronoun, thing]:
its position j as a clock hand, then four yes/no features from a small lexicon.
Every head reads two of those numbers through fixed 6×2 matrices, so the
figure is ordinary multi-head attention, head_i = Attention(X W_i^Q, X W_i^K, X W_i^V),
with weights chosen by hand instead of learned.
"""

import re

import numpy as np

D_MODEL = 6
N_HEAD = 3
D_HEAD = D_MODEL // N_HEAD  # 2
MAX_WORDS = 16
# The hand must not come round within a sentence (2π / TURN > MAX_WORDS), or a word would
# match the word a full turn back as well as the previous one. A longer hand keeps the gap
# between the previous word's score and its neighbours' (CLOCK² (1 − cos TURN)) as sharp as
# a turn of 0.7 with a hand of 3.5 made it.
TURN = 0.35  # radians the clock hand turns per word
CLOCK = 6.9  # length of head 1's query and key
CLOCK_PRODUCT = round(CLOCK**2, 2)  # q·k = 47.61·cos 0.35(i−1−j)
FULL_TURN = round(2 * np.pi / TURN)  # words for the hand to come round: 18
FEATURE = 2.5  # length of heads 2 and 3's feature lists

FEATURES = ("action", "doer", "pronoun", "thing")
HEAD_NAMES = ("previous word", "who did it", "what it stands for")
HEAD_FEATURES = (None, ("action", "doer"), ("pronoun", "thing"))

# word -> the features it has; a word listed with none is known but plain
LEXICON = {}
for _feature, _words in {
    "action": "found kept took saw sat ate chased held dropped lost gave made ran liked loved "
    "opened thanked solved crossed picked hid left fed carried bought met wanted",
    "doer": "puff cat dog she he girl boy fox bird mouse scientist engineer animal queen anna "
    "tom teacher child mother father friend",
    "pronoun": "it",
    "thing": "key box ball hat mat book cake door apple cup coin stone street problem letter "
    "map bag toy shell bone ring mouse",
    "": "a an the and but or because so then shiny old new big small red little tired happy "
    "was is were on in at of to with by from into under near too very not didn't",
}.items():
    for _w in _words.split():
        LEXICON.setdefault(_w, set())
        if _feature:
            LEXICON[_w].add(_feature)

WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


def split_words(sentence):
    """The words of a sentence, punctuation dropped: 'kept it.' -> ['kept', 'it']."""
    return WORD.findall(sentence)


def embed(words):
    """X (T, 6) for a list of words, and the words the lexicon does not know."""
    T = len(words)
    j = np.arange(T)
    X = np.zeros((T, D_MODEL))
    X[:, 0], X[:, 1] = np.cos(TURN * j), np.sin(TURN * j)
    unknown = []
    for t, w in enumerate(words):
        feats = LEXICON.get(w.lower().replace("’", "'"))
        if feats is None:
            unknown.append(w)
            continue
        for f in feats:
            X[t, 2 + FEATURES.index(f)] = 1.0
    return X, unknown


def _pick(a, b):
    """A 6×2 matrix that copies feature a into slot 0 and feature b into slot 1."""
    W = np.zeros((D_MODEL, D_HEAD))
    W[2 + FEATURES.index(a), 0] = 1.0
    W[2 + FEATURES.index(b), 1] = 1.0
    return W


def weights():
    """W_Q, W_K, W_V (3, 6, 2) and W_O (6, 6): every number of the model."""
    c, s = np.cos(TURN), np.sin(TURN)
    WQ = np.zeros((N_HEAD, D_MODEL, D_HEAD))
    WK = np.zeros((N_HEAD, D_MODEL, D_HEAD))
    WV = np.zeros((N_HEAD, D_MODEL, D_HEAD))
    # head 1: the query is the key turned back by one word, so it points at j = i − 1
    WQ[0, :2] = CLOCK * np.array([[c, -s], [s, c]])
    WK[0, :2] = CLOCK * np.eye(2)
    WV[0, :2] = np.eye(2)
    for h, (a, b) in ((1, HEAD_FEATURES[1]), (2, HEAD_FEATURES[2])):
        WQ[h] = FEATURE * _pick(a, b)  # q = 2.5·[a, b]
        WK[h] = FEATURE * _pick(b, a)  # k = 2.5·[b, a]: an a-word seeks a b-word and back
        WV[h] = _pick(a, b)
    # W_O stands in for a learned mixing matrix: fixed, seeded, rounded
    WO = np.round(np.random.default_rng(2017).normal(size=(D_MODEL, D_MODEL)) / np.sqrt(D_MODEL), 2)
    return WQ, WK, WV, WO


def causal_attention(q, k):
    """Scores (T, T), causal mask (T, T) bool, and softmax weights (T, T) with masked cells
    exactly 0."""
    T = q.shape[0]
    scores = q @ k.T / np.sqrt(q.shape[1])  # (T, T)
    mask = np.tril(np.ones((T, T), dtype=bool))  # True where j <= i
    masked = np.where(mask, scores, -np.inf)  # (T, T)
    e = np.exp(masked - masked.max(axis=1, keepdims=True))
    return scores, mask, e / e.sum(axis=1, keepdims=True)


def multi_head(words):
    """Every intermediate of three-head attention over the words, as a dict of arrays."""
    X, unknown = embed(words)  # (T, 6)
    WQ, WK, WV, WO = weights()
    q = np.einsum("td,hde->hte", X, WQ)  # (3, T, 2)
    k = np.einsum("td,hde->hte", X, WK)  # (3, T, 2)
    v = np.einsum("td,hde->hte", X, WV)  # (3, T, 2)
    att = [causal_attention(q[h], k[h]) for h in range(N_HEAD)]
    scores = np.stack([a[0] for a in att])  # (3, T, T)
    mask = att[0][1]  # (T, T)
    w = np.stack([a[2] for a in att])  # (3, T, T)
    out = w @ v  # (3, T, 2)
    concat = out.transpose(1, 0, 2).reshape(len(words), D_MODEL)  # (T, 6)
    return dict(
        X=X,
        unknown=unknown,
        q=q,
        k=k,
        v=v,
        scores=scores,
        mask=mask,
        weights=w,
        out=out,
        concat=concat,
        WO=WO,
        y=concat @ WO,
    )


PROSE_VALUES = (
    "D_MODEL",
    "N_HEAD",
    "D_HEAD",
    "TURN",
    "CLOCK",
    "CLOCK_PRODUCT",
    "FULL_TURN",
    "MAX_WORDS",
    "FEATURE",
)
