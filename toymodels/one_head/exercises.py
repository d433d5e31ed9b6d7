"""The checks of the exercises in "One head, from scratch".

Each receives the page's namespace after the reader runs the cell, tries the reader's
function on cases chosen to catch the usual slips, and returns (passed, message). A
reader's function may do anything, raise included, so every call is guarded.
"""

import numpy as np

from .model import causal_mask, softmax

SMALL = np.array([1.0, 2.0, 3.0])
LARGE = SMALL + 1000.0  # e to the 1000 overflows a float
ROWS = np.array([[1000.0, 1001.0, 999.0], [0.0, 1.0, -1.0]])  # one shift for all would fail
WITH_MINUS_INF = np.array([0.5, -np.inf, 1.5])  # a masked score: its share must be exactly 0


def _call(f, x):
    """f(copy of x) with numpy's warnings silenced -> (array or None, what went wrong)."""
    try:
        with np.errstate(all="ignore"):
            out = f(np.array(x, dtype=float))
    except Exception as err:  # the reader's code may raise anything
        return None, f"it raised {type(err).__name__}: {err}"
    if out is None:
        return None, "it returned None; end it with return"
    try:
        out = np.asarray(out, dtype=float)
    except (TypeError, ValueError):
        return None, "it did not return an array of numbers"
    if out.shape != np.shape(x):
        return None, f"it returned shape {out.shape} for scores of shape {np.shape(x)}"
    return out, None


def check_softmax(env):
    """Exercise: a softmax that gives the same shares for scores near 1000 as near 1."""
    f = env.get("softmax")
    if not callable(f):
        return False, "Define a function softmax(scores) in the cell, then run it."
    want = softmax(SMALL)
    out, why = _call(f, SMALL)
    if why:
        return False, f"softmax(np.array([1.0, 2.0, 3.0])): {why}."
    if not np.allclose(out, want, atol=1e-9):
        return False, (
            "For the scores [1, 2, 3] the shares should be "
            f"{np.round(want, 3).tolist()}, not {np.round(out, 3).tolist()}: "
            "e to each score, divided by the sum of them all."
        )
    out, why = _call(f, LARGE)
    if why:
        return False, f"softmax(np.array([1000.0, 1001.0, 1002.0])): {why}."
    if not np.all(np.isfinite(out)):
        return False, (
            "For the scores [1000, 1001, 1002] your softmax gives "
            f"{out.tolist()}: e to the 1000 is too large for a float, so np.exp returns inf "
            "and inf ÷ inf is nan. Subtract the largest score from every score before np.exp: "
            "the shares stay the same, and the largest exponent becomes e⁰ = 1."
        )
    if not np.allclose(out, want, atol=1e-9):
        return False, (
            "The scores [1000, 1001, 1002] differ by the same steps as [1, 2, 3], so they "
            f"should get the same shares, {np.round(want, 3).tolist()}; yours gives "
            f"{np.round(out, 3).tolist()}. Subtract the same number from every score, and "
            "divide by the sum of the exponentials."
        )
    out, why = _call(f, ROWS)
    if why or not np.all(np.isfinite(out)) or not np.allclose(out, softmax(ROWS), atol=1e-9):
        return False, (
            "It works on one row, but a table of scores must be taken row by row, and each row "
            "shifted by its own largest score: with [[1000, 1001, 999], [0, 1, −1]] one shift "
            "for the whole table sends the second row to e^−1000 = 0, and 0 ÷ 0 is nan. Use "
            "scores.max(axis=-1, keepdims=True) and e.sum(axis=-1, keepdims=True)."
        )
    out, why = _call(f, WITH_MINUS_INF)
    if why or not np.allclose(out, softmax(WITH_MINUS_INF), atol=1e-12) or out[1] != 0:
        return False, (
            "A masked score is −∞, and its share must be exactly 0 while the others still add "
            "up to 1. Check that np.exp of −∞ minus the row's largest score gives 0."
        )
    return True, (
        "Right: your softmax gives the same shares for [1000, 1001, 1002] as for [1, 2, 3]. "
        "Only the gaps between scores matter, so subtracting the largest changes nothing but "
        "keeps every exponent at 0 or below."
    )


def check_mask(env):
    """Exercise: a causal mask that hides exactly the later words, and never the word itself."""
    f = env.get("causal_mask")
    if not callable(f):
        return False, "Define a function causal_mask(scores) in the cell, then run it."
    rng = np.random.default_rng(13)
    for n in (4, 1, 3, 6):
        scores = np.round(rng.uniform(-3, 3, (n, n)), 2)
        out, why = _call(f, scores)
        if why:
            return False, f"causal_mask on a {n} × {n} table of scores: {why}."
        later = np.triu(np.ones((n, n), dtype=bool), k=1)
        hidden = np.isneginf(out) | (out < -1e4)  # -np.inf, or a huge negative like -1e9
        if np.any(hidden[np.diag_indices(n)]):
            return False, (
                "Your mask hides the diagonal too, so no word can see itself: the first word "
                "then sees nothing at all, its row is all −∞, and the softmax divides 0 by 0. "
                "A word always sees itself. Hide only the cells above the diagonal "
                "(np.triu(..., k=1))."
            )
        if np.any(hidden & ~later):
            if np.all(hidden[np.tril_indices(n, -1)]) and n > 1:
                return False, (
                    "Your mask hides the earlier words and keeps the later ones. Row i is word "
                    "i looking at the words j; a later word has j > i, above the diagonal."
                )
            return False, "Your mask hides some words that come before or at each word."
        if not np.allclose(out[~later], scores[~later]):
            return False, (
                "The scores a word may see must stay as they were; change only the later "
                "words' scores."
            )
        if n > 1 and np.allclose(out[later], 0):
            return False, (
                "A later word's score is now 0, but e⁰ = 1, so the softmax still gives it a "
                "share. Use -np.inf: e to the −∞ is exactly 0."
            )
        if n > 1 and not np.any(hidden[later]):
            return False, (
                "No later word is hidden yet: every score above the diagonal (column j > row "
                "i) must become -np.inf."
            )
        if not np.all(hidden[later]):
            return False, (
                f"On a {n} × {n} table some later words still have a score: every cell above "
                "the diagonal must become -np.inf. Build the mask from the table's own size, "
                "scores.shape[0], not from a fixed number."
            )
    exact = np.all(np.isneginf(causal_mask(scores)[later]) == np.isneginf(out[later]))
    note = "" if exact else " (-np.inf is exact: e to the −∞ is 0 to the last digit.)"
    return True, (
        "Right: every word sees itself and the words before it, and each later word's score "
        "is gone, so its share will be exactly 0." + note
    )
