"""Numbers the prose of "What a head does" quotes, computed from the export (heads.py).

Each is a function without arguments, so a chapter writes
{{ toymodels.what_a_head_does.values.NAME }} and the number on the page is the one the export
gives, never typed in. The example pair is Figure 1's first, EXAMPLE.
"""

import numpy as np

from ..page.html import count_words, head_name, num, quoted
from ..page.prose import public_functions
from . import heads as wh
from .attribution import spearman
from .figure import DEFAULTS, differing, logits, percent, strongest, word

EXAMPLE = DEFAULTS["pair"]
LOOKS = 0.5  # a head "looks at" the differing word when it gives it this much attention
RECOVERS = 0.1  # patching a head "matters" when it recovers this share of the difference
NOTHING = 0.05  # and "changes nothing" below this share, either way
BLIND = 0.05  # a head "barely looks" below this much attention
DIRECT = 0.1  # logits: a head "writes almost nothing" straight to the answer below this


def _name(at):
    return head_name(at[0] + 1, at[1] + 1)


def _kept_in(family):
    ids = {p["id"] for p in wh.all_pairs() if p["family"] == family}
    return [n for n, pid in enumerate(wh.kept()) if pid in ids]


def _example():
    return wh.pair(EXAMPLE)


# the model and the pairs


def n_layers():
    return wh.shape()[0]


def n_heads_per_layer():
    return wh.shape()[1]


def n_heads_total():
    layers, heads = wh.shape()
    return layers * heads


def n_pairs():
    return len(wh.all_pairs())


def n_kept():
    return len(wh.kept())


def _count(family, which):
    return wh.family_counts()[family][which]


def pronoun_kept():
    return count_words(_count("pronoun", 0))


def pronoun_total():
    return _count("pronoun", 1)


def gender_kept():
    return count_words(_count("gender", 0))


def gender_total():
    return _count("gender", 1)


def ioi_kept():
    return _count("ioi", 0)


def ioi_total():
    return _count("ioi", 1)


def repeat_kept():
    return _count("repeat", 0)


def repeat_total():
    return _count("repeat", 1)


def flip_min():
    return f"{wh.index()['keep_rule']['flip_min']:g}"


def move_min():
    return f"{wh.index()['keep_rule']['move_min']:g}"


# the example pair


def ex_clean():
    return _example()["clean"]


def ex_corrupt():
    return _example()["corrupt"]


def ex_a():
    return quoted(word(_example()["a"]))


def ex_b():
    return quoted(word(_example()["b"]))


def ex_word_clean():
    return quoted(differing(_example(), 0))


def ex_word_corrupt():
    return quoted(differing(_example(), 1))


def ex_ld_clean():
    return logits(_example()["ld_clean"])


def ex_ld_corrupt():
    return logits(_example()["ld_corrupt"])


def _ex_top():
    return strongest(_example()["patch"])


def ex_top_head():
    return _name(_ex_top())


def ex_top_att():
    return percent(_example()["att_clean"][_ex_top()])


def ex_top_dla():
    return logits(_example()["dla_clean"][_ex_top()])


def ex_top_patch():
    return percent(_example()["patch"][_ex_top()])


def _ex_looker():
    return strongest(_example()["att_clean"])


def ex_looker_head():
    """The head that gives the differing word most attention in the example."""
    return _name(_ex_looker())


def ex_looker_att():
    return percent(_example()["att_clean"][_ex_looker()])


def ex_looker_patch():
    return percent(_example()["patch"][_ex_looker()])


def _ex_blind():
    """The head that recovers most in the example among those that barely look."""
    p = _example()
    return strongest(np.where(p["att_clean"] < BLIND, p["patch"], -np.inf))


def ex_blind_head():
    return _name(_ex_blind())


def ex_blind_att():
    return percent(_example()["att_clean"][_ex_blind()])


def ex_blind_patch():
    return percent(_example()["patch"][_ex_blind()])


def ex_blind_dla():
    return logits(_example()["dla_clean"][_ex_blind()])


# every kept pair


def _all(key):
    return wh.arrays()[key]


def _threshold(x):
    return f"{100 * x:g}%"


def looks_pct():
    return _threshold(LOOKS)


def recovers_pct():
    return _threshold(RECOVERS)


def nothing_pct():
    return _threshold(NOTHING)


def blind_pct():
    return _threshold(BLIND)


def n_looking():
    """Head-and-pair cases where the head gives the differing word at least LOOKS."""
    return int((_all("att_clean") >= LOOKS).sum())


def n_looking_matters():
    looks = _all("att_clean") >= LOOKS
    return int((looks & (_all("patch") >= RECOVERS)).sum())


def n_looking_nothing():
    looks = _all("att_clean") >= LOOKS
    return int((looks & (np.abs(_all("patch")) < NOTHING)).sum())


def n_matters():
    """Head-and-pair cases where patching the head recovers at least RECOVERS, either way."""
    return int((np.abs(_all("patch")) >= RECOVERS).sum())


def n_matters_blind():
    big = np.abs(_all("patch")) >= RECOVERS
    return int((big & (_all("att_clean") < BLIND)).sum())


def _rho(x, y):
    return f"{spearman(x, y):.2f}"


def rho_attention():
    """Spearman over every head of every kept pair: attention against patching."""
    return _rho(_all("att_clean"), _all("patch"))


def rho_attention_size():
    """The same against the size of the effect, whichever way."""
    return _rho(_all("att_clean"), np.abs(_all("patch")))


def rho_dla():
    return _rho(_all("dla_clean"), _all("patch"))


def rho_attention_ioi():
    ns = _kept_in("ioi")
    return _rho(_all("att_clean")[ns], _all("patch")[ns])


def _ioi_mean(key):
    return _all(key)[_kept_in("ioi")].mean(0)


def _ranked(values, n=3):
    order = np.argsort(-values.ravel(), kind="stable")[:n]
    return [divmod(int(i), values.shape[1]) for i in order]


def _listed(values, n=3):
    return ", ".join(f"{_name(at)} ({percent(values[at])})" for at in _ranked(values, n))


def ioi_top_patch():
    """The three heads whose patching recovers most on average over the indirect-object pairs,
    with their means."""
    return _listed(_ioi_mean("patch"))


def ioi_top_att():
    return _listed(_ioi_mean("att_clean"))


def _indirect():
    """Over the indirect-object pairs, the head that recovers most on average among those
    that barely look at the differing word and write almost nothing straight to the answer
    (mean attribution under DIRECT logits either way)."""
    quiet = (_ioi_mean("att_clean") < BLIND) & (np.abs(_ioi_mean("dla_clean")) < DIRECT)
    return strongest(np.where(quiet, _ioi_mean("patch"), -np.inf))


def indirect_head():
    return _name(_indirect())


def indirect_patch():
    return percent(_ioi_mean("patch")[_indirect()])


def indirect_att():
    return percent(_ioi_mean("att_clean")[_indirect()])


def indirect_dla():
    return logits(_ioi_mean("dla_clean")[_indirect()])


def ioi_top_shared():
    """How many of the three heads that recover most over the indirect-object pairs are among
    the three that look most at the differing name."""
    both = set(_ranked(_ioi_mean("patch"))) & set(_ranked(_ioi_mean("att_clean")))
    return count_words(len(both))


def _negative():
    return strongest(-_all("patch").mean(0))


def neg_head():
    """The head whose patching pulls the model furthest the wrong way on average."""
    return _name(_negative())


def neg_mean():
    return percent(_all("patch").mean(0)[_negative()])


def neg_pairs():
    """In how many kept pairs patching that head costs at least RECOVERS."""
    L, H = _negative()
    return int((_all("patch")[:, L, H] <= -RECOVERS).sum())


def neg_ioi_att():
    return percent(_ioi_mean("att_clean")[_negative()])


def neg_dla():
    """Its mean direct attribution over the kept pairs, in logits."""
    return logits(_all("dla_clean").mean(0)[_negative()])


def patch_sum_median():
    """The shares recovered by each head alone, added over all heads: the median over pairs."""
    return percent(np.median(_all("patch").sum((1, 2))))


def patch_sum_range():
    s = _all("patch").sum((1, 2))
    return f"{percent(s.min())} to {percent(s.max())}"


# pair by pair


def _per_pair():
    """Each kept pair's rank correlation over its heads of attention with patching:
    [(rho, pair id)], lowest first."""
    att, patch = _all("att_clean"), _all("patch")
    return sorted((spearman(att[n], patch[n]), pid) for n, pid in enumerate(wh.kept()))


def _pair_text(pid):
    return quoted(wh.pair(pid)["clean"] + "…")


def agree_least_rho():
    return num(_per_pair()[0][0])


def agree_least_text():
    return _pair_text(_per_pair()[0][1])


def agree_most_rho():
    return num(_per_pair()[-1][0])


def agree_most_text():
    return _pair_text(_per_pair()[-1][1])


def n_pairs_opposed():
    """Kept pairs whose heads rank the other way round by attention than by patching."""
    return sum(rho < 0 for rho, _ in _per_pair())


PROSE_VALUES = public_functions(globals())  # every public function above
