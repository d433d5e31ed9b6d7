"""Multi-head attention in its five mechanical steps, on "The cat sat on the mat".

d_model = 4 split into 2 heads of 2. Each word is x = [first, noun, article, 1]:
head 1 lets an article look for a noun before it (the second "the" finds "cat"),
head 2 gives every word the same query and only the first word a key, so every
word looks back at "The". The reader can edit both heads' W_Q and W_K.
"""

import numpy as np

from ..many_heads.model import causal_attention

SENTENCE = "The cat sat on the mat"
D_MODEL, N_HEAD = 4, 2
D_HEAD = D_MODEL // N_HEAD
FEATURES = ("first", "noun", "article", "one")
NOUNS = {"cat", "mat", "dog", "hat", "rug", "box", "fox", "key"}
ARTICLES = {"the", "a", "an"}
S = 3.0  # strength of the hand-made links

# per head: W_Q and W_K (d_model, d_head); rows follow FEATURES
PRESETS = {
    "designed": (
        (
            S * np.array([[0, 0], [0, 1], [1, 0], [0, 0]]),
            S * np.array([[0, 0], [1, 0], [0, 1], [0, 0]]),
        ),
        (
            S * np.array([[0, 0], [0, 0], [0, 0], [1, 0]]),
            S * np.array([[1, 0], [0, 0], [0, 0], [0, 0]]),
        ),
    ),
    "zeros": ((np.zeros((4, 2)), np.zeros((4, 2))), (np.zeros((4, 2)), np.zeros((4, 2)))),
    "swapped": None,  # filled below: head 1 and head 2 trade places
}
PRESETS["swapped"] = (PRESETS["designed"][1], PRESETS["designed"][0])


def embed(words):
    """X (T, 4): [first, noun, article, 1] for each word."""
    X = np.zeros((len(words), D_MODEL))
    X[0, 0] = 1.0
    for t, w in enumerate(words):
        X[t, 1] = w.lower() in NOUNS
        X[t, 2] = w.lower() in ARTICLES
    X[:, 3] = 1.0
    return X


def weights(heads=None):
    """W_Q, W_K, W_V, W_O, each (4, 4); heads = ((W_Q1, W_K1), (W_Q2, W_K2)) or the designed
    preset."""
    heads = heads or PRESETS["designed"]
    # (4, 4) each: head h in columns 2h, 2h+1
    WQ = np.concatenate([np.asarray(q, dtype=float) for q, _ in heads], axis=1)
    WK = np.concatenate([np.asarray(k, dtype=float) for _, k in heads], axis=1)
    WV = np.eye(D_MODEL)  # values: the word vector itself
    # stands in for learned weights
    WO = np.round(np.random.default_rng(4).normal(size=(D_MODEL, D_MODEL)) / 2, 2)
    return WQ, WK, WV, WO


def split(M, n_head):
    """(T, d_model) -> (h, T, d_head): a reshape and a transpose, no arithmetic."""
    T, d = M.shape
    return M.reshape(T, n_head, d // n_head).transpose(1, 0, 2)


def concat(H):
    """(h, T, d_head) -> (T, h·d_head): the inverse of split."""
    h, T, d = H.shape
    return H.transpose(1, 0, 2).reshape(T, h * d)


def attend(q, k, v):
    """Scaled, causal attention in every head: q, k, v (h, T, d_head) -> weights (h, T, T),
    out (h, T, d_head)."""
    # (h, T, T): chapter 1's attention, per head
    w = np.stack([causal_attention(qh, kh)[2] for qh, kh in zip(q, k, strict=True)])
    return w, w @ v  # (h, T, d_head)


def forward(words, heads=None):
    """Every step of multi-head attention as a dict of arrays."""
    X = embed(words)  # (T, 4)
    WQ, WK, WV, WO = weights(heads)
    Q, K, V = X @ WQ, X @ WK, X @ WV  # (T, 4) each: project
    q, k, v = split(Q, N_HEAD), split(K, N_HEAD), split(V, N_HEAD)  # (2, T, 2) each: split
    w, out = attend(q, k, v)  # (2, T, T), (2, T, 2): attend
    C = concat(out)  # (T, 4): concatenate
    Y = C @ WO  # (T, 4): mix
    return dict(
        X=X, WQ=WQ, WK=WK, WV=WV, WO=WO, Q=Q, K=K, V=V, q=q, k=k, v=v, weights=w, out=out, C=C, Y=Y
    )


def check_head2_first(env):
    """Exercise: head 2 (weights w2 in the reader's cells) attends to the first token as far as
    it can."""
    w2 = env.get("w2")
    if not isinstance(w2, np.ndarray) or w2.shape != (3, 3):
        return False, "Run the cell so that w2 holds head 2's 3 × 3 attention weights."
    if w2[1, 0] < 0.9:
        return (
            False,
            f"Token 1 gives {100 * w2[1, 0]:.0f}% to token 0; aim for over 90%. "
            "Its key must score highest.",
        )
    if w2[2, 1] > 0.1:
        return (
            False,
            f"Token 2 still gives {100 * w2[2, 1]:.0f}% to token 1; "
            "the key of token 1 must score low.",
        )
    return True, (
        f"Correct: token 1 gives {100 * w2[1, 0]:.0f}% to token 0. Token 2 can only split its "
        "weight between tokens 0 and 2: their vectors are identical, so no key can tell them "
        "apart. That is why real models add the position to every word."
    )


PROSE_VALUES = ("D_MODEL", "N_HEAD", "D_HEAD")
