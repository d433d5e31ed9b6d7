"""Numbers the prose of "What a head does" quotes, computed from the export (heads.py).

Each is a function without arguments, so a chapter writes
{{ toymodels.what_a_head_does.values.NAME }} and the number on the page is the one the export
gives, never typed in. The example pair is Figure 1's first, EXAMPLE.

Attention is read from the last token, so where the prose sets it against patching it takes
the patch made at that same token ("patch_token"); "patch" is the patch at every position.
"""

import numpy as np

from ..page.html import count_words, head_name, num, quoted
from ..page.prose import public_functions
from . import heads as wh
from .attribution import spearman
from .figure import DEFAULTS, NO_FLIP, differing, logits, percent, strongest, word

EXAMPLE = DEFAULTS["pair"]
LOOKS = 0.5  # a head "looks at" the differing word when it gives it this much attention
RECOVERS = 0.1  # patching a head "matters" when it recovers this share of the difference
NOTHING = 0.05  # and "changes nothing" below this share, either way
BLIND = 0.05  # a head "barely looks" below this much attention
DIRECT = 0.1  # logits: a head "writes almost nothing" straight to the answer below this
TOP = 10  # the heads that look most and that matter most, per pair
LATE = 25  # layers from this one (1-based) up are the "late" ones


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
    """Of those, how many recover at least RECOVERS patched at the last token."""
    looks = _all("att_clean") >= LOOKS
    return int((looks & (_all("patch_token") >= RECOVERS)).sum())


def n_looking_nothing():
    looks = _all("att_clean") >= LOOKS
    return int((looks & (np.abs(_all("patch_token")) < NOTHING)).sum())


def _rho(x, y):
    return f"{spearman(x, y):.2f}"


def rho_attention_token():
    """Spearman over every head of every kept pair: attention against the patch at the same
    (last) token."""
    return _rho(_all("att_clean"), _all("patch_token"))


def rho_attention_token_size():
    """The same against the size of the effect, whichever way."""
    return _rho(_all("att_clean"), np.abs(_all("patch_token")))


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


def neg_repeat():
    """What patching it does in the three repeated-name pairs where it costs most: '−34%,
    −25% and −19%'."""
    L, H = _negative()
    v = sorted(_all("patch")[_kept_in("repeat"), L, H])[:3]
    return ", ".join(percent(x) for x in v[:-1]) + " and " + percent(v[-1])


def _neg_reads():
    """The kept pairs where that head's last token gives the answer's tokens at least LOOKS
    of its attention: [pair index]."""
    L, H = _negative()
    return np.flatnonzero(_all("att_answer")[:, L, H] >= LOOKS)


def neg_reads_pairs():
    return count_words(len(_neg_reads()))


def neg_reads_against():
    """In how many of those its direct attribution is against the answer, as prose says it:
    'all nine' or 'eight'."""
    L, H = _negative()
    n = int((_all("dla_clean")[_neg_reads(), L, H] < 0).sum())
    return f"all {count_words(n)}" if n == len(_neg_reads()) else count_words(n)


def neg_reads_dla():
    L, H = _negative()
    return logits(_all("dla_clean")[_neg_reads(), L, H].mean())


def patch_sum_median():
    """The shares recovered by each head alone, added over all heads: the median over pairs."""
    return percent(np.median(_all("patch").sum((1, 2))))


def patch_sum_range():
    s = _all("patch").sum((1, 2))
    return f"{percent(s.min())} to {percent(s.max())}"


# where the patch is made, and which way


def ex_blind_self():
    """Its attention from the last token to that token itself, in the clean text."""
    return percent(_example()["att_self"][_ex_blind()])


def ex_blind_answer():
    """Its attention from the last token to the answer's tokens, in the clean text."""
    return percent(_example()["att_answer"][_ex_blind()])


def ex_looker_token():
    return percent(_example()["patch_token"][_ex_looker()])


def ex_looker_noise():
    """The head that looks most, noised: what the clean run loses without it."""
    return percent(_example()["noise"][_ex_looker()])


def _indirect_range(key):
    """The head acting through later layers: KEY's lowest and highest over the indirect-object
    pairs, as 'x to y' (or one value where they round the same)."""
    v = _all(key)[_kept_in("ioi")][(slice(None), *_indirect())]
    low, high = percent(v.min()), percent(v.max())
    return low if low == high else f"{low} to {high}"


def indirect_every_range():
    return _indirect_range("patch")


def indirect_token_range():
    return _indirect_range("patch_token")


def indirect_word_range():
    return _indirect_range("patch_word")


def indirect_induct_range():
    """Its attention from the changed name to the token after that name's first occurrence."""
    return _indirect_range("att_induct")


def rho_attention_every():
    """Attention against the patch at every position, pooled (what the last token's attention
    cannot see is in it too)."""
    return _rho(_all("att_clean"), _all("patch"))


# looking and mattering, at the same token


def _moves(att):
    """The share of heads (in pairs) under the mask ATT that move the difference by at least
    RECOVERS either way, patched at the token whose attention is read."""
    return float((np.abs(_all("patch_token")[att]) >= RECOVERS).mean())


def looking_moves_pct():
    return percent(_moves(_all("att_clean") >= LOOKS))


def blind_moves_pct():
    return percent(_moves(_all("att_clean") < BLIND))


def looking_vs_blind():
    """How many times likelier a head that looks is to matter than one that barely looks."""
    att = _all("att_clean")
    return f"{_moves(att >= LOOKS) / _moves(att < BLIND):.0f}"


def _top(values):
    """Per pair, the set of TOP heads with the largest VALUES (kept pairs, layers, heads)."""
    flat = values.reshape(len(values), -1)
    return [set(np.argsort(-row, kind="stable")[:TOP].tolist()) for row in flat]


def _overlap(x, y):
    return float(np.mean([len(a & b) for a, b in zip(_top(x), _top(y), strict=True)]))


def top_n():
    return count_words(TOP)


def top_shared():
    """Of the TOP heads that look most and the TOP whose patch at the last token moves the
    difference most either way, how many are the same, on average over the kept pairs."""
    return num(_overlap(_all("att_clean"), np.abs(_all("patch_token"))), 1)


def top_chance():
    """The same for two sets of TOP heads drawn at random: TOP * TOP / heads."""
    return num(TOP * TOP / n_heads_total())


# direct attribution, like with like


def _ddla():
    """Each head's change of direct attribution between the two texts, as a share of the
    change of the model's logit difference: (kept pairs, layers, heads)."""
    gap = np.array([wh.pair(pid)["ld_clean"] - wh.pair(pid)["ld_corrupt"] for pid in wh.kept()])
    return (_all("dla_clean") - _all("dla_corrupt")) / gap[:, None, None]


def rho_ddla():
    return _rho(_ddla(), _all("patch"))


def rho_ddla_size():
    return _rho(np.abs(_ddla()), np.abs(_all("patch")))


def late_layers():
    return f"{LATE}–{n_layers()}"


def rho_ddla_late():
    return _rho(_ddla()[:, LATE - 1 :], _all("patch")[:, LATE - 1 :])


def pearson_ddla_late():
    x, y = _ddla()[:, LATE - 1 :].ravel(), _all("patch")[:, LATE - 1 :].ravel()
    return f"{np.corrcoef(x, y)[0, 1]:.2f}"


def top_shared_ddla():
    """Of the TOP heads whose change of attribution is largest and the TOP whose patch (every
    position) moves most, either way, how many are the same on average."""
    return num(_overlap(np.abs(_ddla()), np.abs(_all("patch"))), 1)


# the pairs that flip


def _flips(family=None):
    return [
        p
        for p in wh.all_pairs()
        if p["kept"] and p["why"] == "flips" and family in (None, p["family"])
    ]


def n_flips():
    return len(_flips())


def n_no_flip():
    return count_words(n_kept() - n_flips())


def _ever_flips(family):
    """Curated pairs of FAMILY where the model's answer changes sign at all, kept or not."""
    return sum(
        "ld_clean" in p and p["ld_clean"] > 0 > p["ld_corrupt"]
        for p in wh.all_pairs()
        if p["family"] == family
    )


def weak_flips():
    """Whether the model changes its answer in any pronoun or "she or he" pair, kept or not,
    as a clause: 'the model never changes its answer' or '… in two pairs'."""
    n = _ever_flips("pronoun") + _ever_flips("gender")
    if n == 0:
        return "the model never changes its answer"
    return f"the model changes its answer in {count_words(n, 'pair')}"


def no_flip_mark():
    return quoted(NO_FLIP)


# pair by pair


def _per_pair():
    """Each kept pair's rank correlation over its heads of attention with the patch at the
    same (last) token: [(rho, pair id)], lowest first."""
    att, patch = _all("att_clean"), _all("patch_token")
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
