"""Numbers the prose of "One head, from scratch" quotes, computed from the head.

Each is a function without arguments (or a constant), so the chapter writes
{{ toymodels.one_head.values.NAME }} and the number on the page is the one the model gives.
Shares are written as the tables write them, each rounded on its own to a tenth of a point.
"""

import numpy as np

from ..page.html import count_words, num
from ..page.prose import public_functions
from . import model as m
from .worked import percent, short

KEY = m.QUERY_WORD
FOUND, PUFF, A = m.WORDS.index("found"), m.WORDS.index("Puff"), m.WORDS.index("a")
H = m.HEAD


def _vec(v):
    return f"[{', '.join(short(x) for x in v)}]"


def _share(row, j):
    """Share j of ROW as the tables show it."""
    return percent(row[j])


def n_words():
    """'four'"""
    return count_words(len(m.WORDS))


def n_features():
    return count_words(m.D_MODEL)


def d_head_words():
    return count_words(m.D_HEAD)


def key_query():
    """The query of "key": the noun row of W_Q."""
    return _vec(H["Q"][KEY])


def puff_key_sum():
    """'[−1, 0] + [−0.5, 2] = [−1.5, 2]': Puff's key as the sum of two rows of W_K."""
    rows = [m.W_K[f] for f in np.flatnonzero(m.X[PUFF])]
    return " + ".join(_vec(r) for r in rows) + " = " + _vec(H["K"][PUFF])


def key_found_dot_text():
    """'2 × 2 + 0 × 1 = 4'"""
    q, k = H["Q"][KEY], H["K"][FOUND]
    terms = " + ".join(f"{short(a)} × {short(b)}" for a, b in zip(q, k, strict=True))
    return f"{terms} = {short(q @ k)}"


def key_found_dot():
    return short(H["dots"][KEY, FOUND])


def sqrt_d():
    return num(np.sqrt(m.D_HEAD))


def key_found_score():
    return num(H["scores"][KEY, FOUND])


def key_found_share():
    return _share(H["shares"][KEY], FOUND)


def key_a_share():
    return _share(H["shares"][KEY], A)


def found_puff_share():
    """What "found" gives "Puff", the one earlier word it sees."""
    return _share(H["shares"][FOUND], PUFF)


def puff_unmasked_found():
    """What "Puff" would give "found" if nothing hid the later words."""
    return _share(m.attend(causal=False)["shares"][PUFF], FOUND)


def puff_self():
    return _share(H["shares"][PUFF], PUFF)


def a_sees():
    """'three': the words "a" can see, itself included."""
    return count_words(A + 1)


def a_share():
    return _share(H["shares"][A], A)


def key_output_terms():
    """'0.006 × [0, 1] + 0.876 × [1, 0] + …': the output of "key" as a weighted sum."""
    w, v = H["shares"][KEY], H["V"]
    return " + ".join(f"{num(w[j], 3)} × {_vec(v[j])}" for j in range(len(m.WORDS)))


def key_output():
    out = H["out"][KEY]
    return f"[{num(out[0])}, {num(out[1])}]"


def _aim(word):
    return m.AIMS[word] % 360


def puff_aim():
    """The direction of Puff's key on the plane, in degrees: '126.9°'."""
    return f"{_aim('Puff'):.1f}°"


def key_aim():
    return f"{_aim('key'):.1f}°".replace(".0°", "°")


def puff_off_key():
    """How far Puff's key points from the key of "key", in whole degrees: '53°'."""
    d = abs(_aim("Puff") - _aim("key")) % 360
    return f"{min(d, 360 - d):.0f}°"


def between_angle():
    return str(round(m.BETWEEN) % 360)


def e_number():
    """Euler's number to three places: '2.718'."""
    return f"{np.e:.3f}"


PROSE_VALUES = public_functions(globals())  # every public function above
