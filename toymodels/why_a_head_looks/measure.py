"""The induction circuit of a character model, measured with the split and the knockout.

What: on the copying test's repeated nonsense (toymodels/models/charmodel/copy_test.py), for every
query i in a repeat of period P, an induction head should look at the target j = i - P + 1,
the character after the earlier copy of i's character. For each such case, `cases` splits the
score s[i, j] (split.Split.pairs) and ranks the components on the key side by their lift: how
much more they add to the target's score than to an average key j' <= i (a component adding
the same to every key, such as the norm's bias on the key side, cannot move attention and
lifts nothing); the query side's components likewise. It then takes the top-lifting component
out of the keys (split.Split.knockout) and reads the attention to the target again; the
control takes out, one at a time, every other earlier head instead. `summary` reduces the
cases to the numbers a page quotes, with the weight-based K-composition scores beside the
measured lifts.

The same on SmolLM2 (`smollm2_cases`, `smollm2_summary`): a head on runs of random tokens
said twice (the caller hands them over, such as "Heads that copy"'s export: this package reads
no other chapter's model code), its target the token after the earlier copy, or for a
previous-token or sink head the token before or the first (`targets`), where the control
takes out, one at a time, N_CONTROL earlier heads drawn at random (every one of the 100-170
would be slow), and a random direction as long as the top component.

Why shipped: the chapter's prose values and its figure read these numbers, and the same
functions can run on a reader's own model in the browser.
"""

import json

import numpy as np

from ..models.charmodel import copy_test
from ..models.charmodel import model as cm
from ..page.html import head_name
from . import smollm2 as s2
from . import split as sp

DROP = 0.5  # a knockout "moves" the attention when it takes this share of it away
N_STRETCHES = 20  # stretches of the copying test measured (each gives 30-48 cases)
N_CONTROL = 10  # SmolLM2: earlier heads drawn at random and taken out, one at a time, per case
SEED = 0  # the random directions of the control


def induction_heads(run):
    """RUN's induction heads, (layer, head) 0-based: copy_test.induction_heads of the shipped
    evaluation."""
    return copy_test.induction_heads(cm.evaluation(), run)


def cases(params, cfg, layer, head, n=N_STRETCHES):
    """One record per (stretch, query in a repeat) of the copying test's first N stretches:
    the attention to the target before, each component's lift on the key side and on the query
    side, the top-lifting key component and the attention left when it is taken out of the
    keys, the attention left when each other earlier head is taken out instead (the control),
    and "left": the attention left when each component is taken out of the keys, by name."""
    x, periods = copy_test.copy_set(n=n)
    rng = np.random.default_rng(SEED)
    out = []
    for idx, P in zip(x, periods, strict=True):
        s = sp.Split(params, cfg, idx)
        names = s.parts(layer)[0]
        heads = [nm for nm in names if nm.startswith("L")]
        for i in range(P, len(idx)):
            j = i - P + 1
            _, terms = s.pairs(layer, head, i)  # (C+1, C+1, i+1)
            key_side = terms.sum(0)  # (C+1, i+1) each key component's total, per key
            lift = key_side[:, j] - key_side.mean(-1)  # (C+1,)
            query_side = terms.sum(1)  # (C+1, i+1) each query component's total, per key
            query_lift = query_side[:, j] - query_side.mean(-1)  # (C+1,)
            top = names[int(np.argmax(lift[: len(names)]))]
            before = float(s.attention(layer, head, i)[j])
            left = {nm: float(s.knockout(layer, head, i, nm, "keys")[j]) for nm in names}
            top_part = s.parts(layer)[1][names.index(top), : i + 1]  # (i+1, D)
            noise = sp.random_like(top_part, rng)
            random_left = float(s.without(layer, head, i, noise, "keys")[j])
            out.append(
                {
                    "i": i,
                    "j": j,
                    "before": before,
                    "top": top,
                    "after": left[top],
                    "control": [left[h] for h in heads if h != top],
                    "left": left,
                    "random_left": random_left,
                    "lift": dict(zip(names + [sp.NORM_BIAS], lift.tolist(), strict=True)),
                    "query_lift": dict(
                        zip(names + [sp.NORM_BIAS], query_lift.tolist(), strict=True)
                    ),
                }
            )
    return out


def _drop(before, after):
    return (before - after) / before


def summary(run, layer, head, n=N_STRETCHES):
    """What the cases of RUN's head (LAYER, HEAD) say, as plain numbers: how often each
    component lifts the target most, the median attention before and after taking the top
    one out of the keys, the share of cases where that takes at least DROP of the attention
    away, the controls' median drops (the other heads; random directions as long as the top
    component), the median drop when each component is taken out, each earlier head's mean
    lift beside its K-composition score into this head (and their rank correlation)."""
    params, cfg, _ = cm.load(run)
    cs = cases(params, cfg, layer, head, n)
    before = np.array([c["before"] for c in cs])
    after = np.array([c["after"] for c in cs])
    drops = _drop(before, after)
    control = np.array([np.median(_drop(c["before"], np.array(c["control"]))) for c in cs])
    random_left = np.array([c["random_left"] for c in cs])
    tops = {}
    for c in cs:
        tops[c["top"]] = tops.get(c["top"], 0) + 1
    comp = sp.composition(params, cfg, layer)
    k_scores = dict(zip(comp["earlier"], comp["K"][head].tolist(), strict=True))
    lifts = {h: float(np.mean([c["lift"][h] for c in cs])) for h in k_scores}
    return {
        "run": run,
        "head": head_name(layer + 1, head + 1),
        "cases": len(cs),
        "top_counts": dict(sorted(tops.items(), key=lambda kv: -kv[1])),
        "before_median": float(np.median(before)),
        "after_median": float(np.median(after)),
        "moved_share": float(np.mean(drops >= DROP)),
        "drop_median": float(np.median(drops)),
        "control_drop_median": float(np.median(control)),
        "random_drop_median": float(np.median(_drop(before, random_left))),
        "drop_by_component": {
            n: float(np.median([_drop(c["before"], c["left"][n]) for c in cs]))
            for n in cs[0]["left"]
        },
        "mean_lift": {n: float(np.mean([c["lift"][n] for c in cs])) for n in cs[0]["lift"]},
        "mean_query_lift": {
            n: float(np.mean([c["query_lift"][n] for c in cs])) for n in cs[0]["query_lift"]
        },
        "k_composition": k_scores,
        "k_random": sp.random_composition(cfg["d_model"], cfg["d_head"]),
        "k_vs_lift_rank": rank_correlation(list(k_scores.values()), list(lifts.values())),
    }


def targets(run, target="induction"):
    """The (query i, target key j) cases of RUN ({"ids", "period", "start"}) for a head of
    kind TARGET: "induction", each query of the second copy and the token after the earlier
    copy of its token; "previous", every query from the third token on and the token before
    it; "first", the same queries and the first token (a sink). A query that sees two keys or
    fewer is left out: its average key is almost the target itself."""
    ids = run["ids"]
    if target == "induction":
        P, start = run["period"], run["start"]
        return [(i, i - P + 1) for i in range(start + P, min(start + 2 * P, len(ids)))]
    if target == "previous":
        return [(i, i - 1) for i in range(2, len(ids))]
    if target == "first":
        return [(i, 0) for i in range(2, len(ids))]
    raise ValueError(f"no target '{target}': induction, previous or first")


def smollm2_cases(model, layer, head, runs, target="induction"):
    """One record per case (`targets`) of SmolLM2's head (LAYER, HEAD) on RUNS, each {"id",
    "ids"} and, for induction, "period" and "start": P = period random tokens from position
    start, said twice. As `cases` gives for the character model, but with N_CONTROL random
    earlier heads as the control and without "left" for every component."""
    rng = np.random.default_rng(SEED)
    out = []
    for run in runs:
        s = s2.Split(model, run["ids"])
        names, reads = s.reads(layer)
        keys = s.key(layer, head, reads)  # (C, T, K) every component's part of every key
        heads = [nm for nm in names if nm.startswith("L")]
        for i, j in targets(run, target):
            q = s.query(layer, head, reads[:, i], i)  # (C, K)
            key_side = keys[:, : i + 1] @ q.sum(0) * s.scale  # (C, i+1)
            query_side = q @ keys[:, : i + 1].sum(0).T * s.scale  # (C, i+1)
            lift = key_side[:, j] - key_side.mean(-1)  # (C,)
            query_lift = query_side[:, j] - query_side.mean(-1)  # (C,)
            top = names[int(np.argmax(lift))]
            others = [h for h in heads if h != top]
            drawn = rng.choice(len(others), size=min(N_CONTROL, len(others)), replace=False)
            top_part = s.part(layer, top)[: i + 1]  # (i+1, d)
            noise = sp.random_like(top_part, rng)
            out.append(
                {
                    "text": run["id"],
                    "i": i,
                    "j": j,
                    "before": float(s.attention(layer, head, i)[j]),
                    "top": top,
                    "after": float(s.knockout(layer, head, i, top, "keys")[j]),
                    "control": [
                        float(s.knockout(layer, head, i, others[n], "keys")[j]) for n in drawn
                    ],
                    "random_left": float(s.without(layer, head, i, noise, "keys")[j]),
                    "lift": dict(zip(names, lift.tolist(), strict=True)),
                    "query_lift": dict(zip(names, query_lift.tolist(), strict=True)),
                }
            )
    return out


def smollm2_summary(model, layer, head, runs, target="induction", cs=None):
    """What the cases of SmolLM2's head (LAYER, HEAD) say, as plain numbers (as `summary`
    gives for the character model): the top key-side components and how often each tops a
    case, the median attention to the target before and after taking the top one out of the
    keys, the share of cases where that takes at least DROP of it away, the median drops for
    the top component, the random earlier heads and the random directions, and the largest
    mean lifts on each side. CS: the cases, where the caller has them already."""
    cs = smollm2_cases(model, layer, head, runs, target) if cs is None else cs
    before = np.array([c["before"] for c in cs])
    drops = _drop(before, np.array([c["after"] for c in cs]))
    control = np.array([np.median(_drop(c["before"], np.array(c["control"]))) for c in cs])
    random_drops = _drop(before, np.array([c["random_left"] for c in cs]))
    tops = {}
    for c in cs:
        tops[c["top"]] = tops.get(c["top"], 0) + 1

    def largest(key, n=5):
        mean = {nm: float(np.mean([c[key][nm] for c in cs])) for nm in cs[0][key]}
        return dict(sorted(mean.items(), key=lambda kv: -kv[1])[:n])

    return {
        "head": head_name(layer + 1, head + 1),
        "cases": len(cs),
        "top_counts": dict(sorted(tops.items(), key=lambda kv: -kv[1])),
        "before_median": float(np.median(before)),
        "after_median": float(np.median([c["after"] for c in cs])),
        "moved_share": float(np.mean(drops >= DROP)),
        "drop_median": float(np.median(drops)),
        "control_drop_median": float(np.median(control)),
        "random_drop_median": float(np.median(random_drops)),
        "random_moved_share": float(np.mean(random_drops >= DROP)),
        "mean_lift": largest("lift"),
        "mean_query_lift": largest("query_lift"),
    }


def smollm2_report(model, heads, runs):
    """SmolLM2's HEADS ((layer, head) pairs, 0-based) summarised on RUNS, one line of JSON
    each."""
    return [json.dumps(smollm2_summary(model, *h, runs), ensure_ascii=False) for h in heads]


def report(runs=("reference-induction", "reference-repeats", "induction")):
    """Every induction head of RUNS summarised, one line of JSON each (what
    `python -m toymodels.why_a_head_looks.measure` prints)."""
    return [
        json.dumps(summary(run, *head), ensure_ascii=False)
        for run in runs
        for head in induction_heads(run)
    ]


def rank_correlation(a, b):
    """Spearman's rank correlation of two equal-length lists (no ties expected)."""
    ra = np.argsort(np.argsort(a)).astype(float)
    rb = np.argsort(np.argsort(b)).astype(float)
    return float(np.corrcoef(ra, rb)[0, 1])


if __name__ == "__main__":
    print("\n".join(report()))
