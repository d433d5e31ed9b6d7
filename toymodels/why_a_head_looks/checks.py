"""The checks of the chapter's two exercises, on the character model of Figure 1 (its run
values.RUN): each takes the variables the reader's code left and returns (passed, message),
against split.py's own answer."""

import numpy as np

from ..models.charmodel import model as cm
from . import split as sp

RUN = "reference-repeats"
TEXT = "vbk qzx dwp vbk qzx dw"
QUERY, KEY = 21, 10  # Figure 1's default cell: the last "w" and the "p" after the earlier "w"


def k_score_answer():
    """K-composition of L1 H2 into L2 H1, as split.composition computes it."""
    params, cfg, _ = cm.load(RUN)
    return float(sp.composition(params, cfg, 1)["K"][0, 1])


def check_k_score(env):
    """Exercise: k_score is L1 H2's K-composition score into L2 H1."""
    got = env.get("k_score")
    try:
        got = float(got)
    except (TypeError, ValueError):
        return False, "Leave the score in k_score, as one number."
    want = k_score_answer()
    if abs(got - want) > 1e-6:
        return False, (
            f"k_score is {got:.4f}; it should be |W_QK W_OV| / (|W_QK| |W_OV|), each |…| "
            "the Frobenius norm np.linalg.norm gives, with W_QK on the left."
        )
    return True, (
        f"Right: {want:.3f}. Random matrices of these shapes score "
        f"{sp.random_composition(32, 8):.3f} on average, so L1 H2 writes into what L2 H1's "
        "keys read more than chance would."
    )


def split_answer():
    """The (query component, key component) terms of Figure 1's default score (C+1, C+1)."""
    params, cfg, _ = cm.load(RUN)
    s = sp.Split(params, cfg, cm.encode(TEXT))
    return s.pairs(1, 0, QUERY)[1][:, :, KEY]


def check_split(env):
    """Exercise: terms[a, b] is query component a's part times key component b's part."""
    terms = env.get("terms")
    want = split_answer()
    if not isinstance(terms, np.ndarray) or terms.shape != want.shape:
        return False, f"Leave a {want.shape[0]} × {want.shape[1]} array in terms."
    if np.abs(terms - want).max() > 1e-9:
        if abs(terms.sum() - want.sum()) < 1e-9:
            return False, (
                "The terms add up to the score, but not pair by pair: row a is query "
                "component a, column b key component b."
            )
        return False, (
            f"Your terms add up to {terms.sum():.4f}, the score is {want.sum():.4f}: each "
            "term is (reads[a, i] @ Wq) · (reads[b, j] @ Wk) / √8."
        )
    return True, f"Right: {want.size} terms that add up to the score, {want.sum():.2f}."
