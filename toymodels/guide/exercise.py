"""The author guide's exercise: make the last of six words give the first at least 90%."""

import numpy as np


def check_strength(env):
    """Exercise: the last word must give the first word at least 90%."""
    w = env.get("w")
    if not isinstance(w, np.ndarray) or w.ndim != 2 or w.shape[0] != w.shape[1] or w.shape[0] < 2:
        return False, "Run the cell so that w holds the head's shares, one row per word."
    if not np.allclose(w.sum(axis=1), 1):
        return False, "Each row of w should add up to 1; compute w with first_word_head."
    last = w[-1, 0]
    if last < 0.9:
        return False, (
            f"The last word gives the first word {100 * last:.1f}%; "
            "raise the strength until it reaches 90%."
        )
    return True, (
        f"Right: the last word now gives the first word {100 * last:.1f}%. The other words all "
        "score 0, so the first word wins only by how far its score rises above theirs."
    )
