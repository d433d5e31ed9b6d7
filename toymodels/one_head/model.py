"""One causal attention head over four words, with every number chosen by hand.

The sentence is "Puff found a key". Each word is a vector of four yes/no features
(noun, alive, action, article), one row of X. Three small matrices turn each word into
a query, a key and a value of two numbers each; then, for every word,

    scores = q · k / √d_head  ->  causal mask  ->  softmax  ->  Σ share × value.

The head's job: a noun looks for an action, so "key" looks back at "found". Nothing
here is learned; the chapter "One head, from scratch" walks through every step, and
its figure lets the reader move the query of "key" and watch the rest follow.
"""

import numpy as np

WORDS = ("Puff", "found", "a", "key")
FEATURES = ("noun", "alive", "action", "article")
D_MODEL = len(FEATURES)
D_HEAD = 2

# one row per word, one column per feature: "Puff" is a noun that is alive
X = np.array(
    [
        [1.0, 1.0, 0.0, 0.0],  # Puff
        [0.0, 0.0, 1.0, 0.0],  # found
        [0.0, 0.0, 0.0, 1.0],  # a
        [1.0, 0.0, 0.0, 0.0],  # key
    ]
)
# one row per feature: what that feature adds to a word's query, key or value
W_Q = np.array(
    [
        [2.0, 0.0],  # noun: look for an action
        [0.0, 0.0],  # alive
        [0.0, 1.0],  # action: look (gently) for something alive
        [0.0, 0.0],  # article: look for nothing
    ]
)
W_K = np.array(
    [
        [-1.0, 0.0],  # noun
        [-0.5, 2.0],  # alive
        [2.0, 1.0],  # action
        [0.5, -1.0],  # article
    ]
)
# the values sit on the corners of a unit square, so a blend of them is easy to see
W_V = np.array(
    [
        [1.0, 1.0],  # noun
        [-1.0, 0.0],  # alive
        [1.0, 0.0],  # action
        [0.0, 0.0],  # article
    ]
)

QUERY_WORD = len(WORDS) - 1  # the figure moves the query of the last word, "key"
MAX_LENGTH = 4.0  # the longest query the figure draws


def softmax(scores):
    """Each row of SCORES -> shares that are positive and add up to 1.

    Subtracting a row's largest score first changes no share (it divides the top and the
    bottom of the fraction by the same number) and keeps np.exp from overflowing; a score
    of -inf becomes a share of exactly 0.
    """
    scores = np.asarray(scores, dtype=float)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def causal_mask(scores):
    """SCORES with every later word's score (above the diagonal) replaced by -inf."""
    n = scores.shape[-1]
    later = np.triu(np.ones((n, n), dtype=bool), k=1)
    return np.where(later, -np.inf, scores)


def attend(x=X, w_q=W_Q, w_k=W_K, w_v=W_V, causal=True):
    """The whole head, every intermediate kept: a dict of numpy arrays."""
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    dots = q @ k.T
    scores = dots / np.sqrt(k.shape[1])
    masked = causal_mask(scores) if causal else scores
    shares = softmax(masked)
    return {
        "Q": q,
        "K": k,
        "V": v,
        "dots": dots,
        "scores": scores,
        "masked": masked,
        "shares": shares,
        "out": shares @ v,
    }


def query(angle, length):
    """A query of LENGTH pointing ANGLE degrees anticlockwise from the first axis."""
    a = np.radians(angle)
    return length * np.array([np.cos(a), np.sin(a)])


def angle_of(vector):
    """The direction of a 2-number vector in degrees, 0 to 360."""
    return float(np.degrees(np.arctan2(vector[1], vector[0])) % 360)


def look(q, keys, values):
    """One query against every key it may see -> dots, scores, shares and output."""
    dots = keys @ q
    scores = dots / np.sqrt(keys.shape[1])
    shares = softmax(scores)
    return {"dots": dots, "scores": scores, "shares": shares, "out": shares @ values}


HEAD = attend()
KEYS = HEAD["K"][: QUERY_WORD + 1]  # the keys the query of "key" may see: all four
VALUES = HEAD["V"][: QUERY_WORD + 1]
AIMS = {word: angle_of(k) for word, k in zip(WORDS, KEYS, strict=True)}


def tie(a, b):
    """The direction (degrees) in which a query scores keys A and B alike and both above 0:
    at right angles to the difference of the two keys."""
    d = KEYS[WORDS.index(b)] - KEYS[WORDS.index(a)]
    u = np.array([-d[1], d[0]])
    return angle_of(u if u @ KEYS[WORDS.index(a)] > 0 else -u)


BETWEEN = tie("found", "Puff")  # where "found" and "Puff" get equal shares


PROSE_VALUES = ("D_MODEL", "D_HEAD")
