"""Export "Why a head looks there" (toymodels/data/why_a_head_looks/smollm2.json): SmolLM2's
heads of three kinds measured with the split and the knockout (why_a_head_looks/measure.py) on
the curated texts of "Heads that copy" (toymodels/data/smollm2/), and for each the K-composition
score of every earlier head from the weights alone (why_a_head_looks/smollm2.py) beside its
measured key-side lift, with their rank correlation.

The heads are those "Heads that copy" ranks strongest by its scores of the same export: the
N_INDUCTION strongest induction heads (measured on the texts' second copies), the strongest
previous-token head and the strongest first-token (sink) head (measured at every query from the
third token on, on every text). Numbers are rounded (DIGITS) so that a run on another machine
writes the same bytes.
"""

import json
from pathlib import Path

import numpy as np

from ..heads_that_copy import heads as hc
from ..page.html import head_name
from ..why_a_head_looks import measure
from ..why_a_head_looks import smollm2 as s2

OUT = Path(__file__).resolve().parent.parent / "data" / "why_a_head_looks" / "smollm2.json"
N_INDUCTION = 5
N_RUNS = 4  # random-token texts said twice, of the export's ten
PASSAGE = "elinor"  # a passage of prose, for the previous-token and sink heads
KINDS = {"induction": "induction", "previous": "previous", "sink": "first"}  # score: target
DIGITS = 4
TOP = 6  # components kept per side


def heads():
    """[(kind, layer, head)]: the heads measured, 0-based."""
    out = [("induction", L, h) for L, h in hc.strongest("induction", N_INDUCTION)]
    return out + [(kind, *hc.strongest(kind, 1)[0]) for kind in ("previous", "sink")]


def texts(kind):
    """The runs measure.smollm2_cases takes for a head of KIND."""
    runs = hc.runs()[:N_RUNS]
    if kind != "induction":
        runs.append(hc.entry(PASSAGE))
    return runs


def _r(x):
    return round(float(x), DIGITS)


def entry(model, kind, layer, head):
    """One head's measures, as plain JSON."""
    runs = texts(kind)
    cs = measure.smollm2_cases(model, layer, head, runs, KINDS[kind])
    got = measure.smollm2_summary(model, layer, head, runs, cs=cs)
    control = [float(np.median(c["control"])) for c in cs]

    def mean(key, names):
        return [float(np.mean([c[key][n] for c in cs])) for n in names]

    names = list(cs[0]["lift"])
    key_side, query_side = mean("lift", names), mean("query_lift", names)
    earlier, k = s2.k_composition(model, layer, head)
    lift = mean("lift", earlier)

    def top(values):
        order = sorted(range(len(names)), key=lambda n: (-values[n], n))[:TOP]
        return [[names[n], _r(values[n])] for n in order]

    return {
        "kind": kind,
        "layer": layer,
        "head": head,
        "name": head_name(layer + 1, head + 1),
        "texts": [r["id"] for r in runs],
        "cases": got["cases"],
        "top_counts": [[n, c] for n, c in list(got["top_counts"].items())[:3]],
        "before": _r(got["before_median"]),
        "after": _r(got["after_median"]),
        "control_after": _r(np.median(control)),
        "random_after": _r(np.median([c["random_left"] for c in cs])),
        "moved_share": _r(got["moved_share"]),
        "drop": _r(got["drop_median"]),
        "control_drop": _r(got["control_drop_median"]),
        "random_drop": _r(got["random_drop_median"]),
        "key_top": top(key_side),
        "query_top": top(query_side),
        "k": [_r(x) for x in k],
        "lift": [_r(x) for x in lift],
        "rank": _r(measure.rank_correlation(k.tolist(), lift)),
    }


def export(model, out=OUT):
    """Measure every head of `heads` and write OUT; -> what was written."""
    data = {
        "v": 1,
        "model": hc.index()["model"]["name"],
        "shape": {"layers": model.n_layer, "heads": model.n_head, "d_model": model.d},
        "drop": measure.DROP,
        "n_control": measure.N_CONTROL,
        "k_random": _r(s2.random_k_composition(model)),
        "heads": [entry(model, *h) for h in heads()],
    }
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n", "utf-8")
    return data
