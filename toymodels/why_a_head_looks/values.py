"""Numbers the prose of "Why a head looks there" quotes, each from code: the character model's
induction circuit measured with the split (measure.summary, computed once per build), and
SmolLM2's heads as the export measured them (exported.py).

Each is a function without arguments: {{ toymodels.why_a_head_looks.values.NAME }}.
"""

import numpy as np

from ..page.html import count_words, num
from ..page.prose import public_functions
from . import exported as ex
from . import measure
from .figure import RUNS

RUN = "reference-repeats"  # Figure 1's model: one previous-character head, one induction head
STRETCHES = 10  # stretches of the copying test measured for the prose
_cache = {}


def _char():
    if "char" not in _cache:
        (head,) = measure.induction_heads(RUN)
        _cache["char"] = measure.summary(RUN, *head, n=STRETCHES)
    return _cache["char"]


def _cfg():
    from ..models.charmodel import model as cm

    return cm.load(RUN)[1]


def _pct(x):
    return f"{num(100 * x, 1)}%"


def _first(kind):
    return next(h for h in ex.heads() if h["kind"] == kind)


# the character model (Figure 1)


def char_layers():
    return count_words(_cfg()["n_layer"], "layer")


def char_heads():
    return count_words(_cfg()["n_head"], "head")


def char_width():
    return _cfg()["d_model"]


def char_run():
    return RUNS[RUN]


def char_head():
    return _char()["head"]


def char_cases():
    return f"{_char()['cases']:,}"


def char_stretches():
    return count_words(STRETCHES, "stretch", plural="stretches")


def char_before():
    return _pct(_char()["before_median"])


def char_moved():
    return _pct(_char()["moved_share"])


def char_random_drop():
    return _pct(_char()["random_drop_median"])


def char_control_drop():
    return _pct(_char()["control_drop_median"])


def _lift(name):
    return _char()["mean_lift"][name]


def char_top_component():
    """The component that lifts the target most on the key side, on average."""
    lifts = {n: v for n, v in _char()["mean_lift"].items()}
    return max(lifts, key=lifts.get)


def char_top_lift():
    return num(_lift(char_top_component()))


def char_prev_head():
    """The earlier head that lifts the target most on the key side."""
    heads = {n: v for n, v in _char()["mean_lift"].items() if n.startswith("L")}
    return max(heads, key=heads.get)


def char_prev_lift():
    return num(_lift(char_prev_head()))


def char_top_share():
    """How often the top component is the one that lifts the target most, case by case."""
    s = _char()
    return _pct(s["top_counts"].get(char_top_component(), 0) / s["cases"])


def char_prev_share():
    s = _char()
    return _pct(s["top_counts"].get(char_prev_head(), 0) / s["cases"])


def char_k_top_score():
    return num(_char()["k_composition"][char_k_top()], 3)


def char_k_top():
    """The earlier head with the largest K-composition score into the induction head."""
    k = _char()["k_composition"]
    return max(k, key=k.get)


def char_k_random():
    return num(_char()["k_random"], 3)


def char_k_rank():
    return num(_char()["k_vs_lift_rank"])


# SmolLM2 (Figures 2 and 4)


def smollm2_layers():
    return ex.data()["shape"]["layers"]


def smollm2_heads():
    return ex.data()["shape"]["heads"]


def smollm2_width():
    return ex.data()["shape"]["d_model"]


def n_induction():
    return count_words(sum(h["kind"] == "induction" for h in ex.heads()), "induction head")


def induction_names():
    names = [h["name"] for h in ex.heads() if h["kind"] == "induction"]
    return ", ".join(names[:-1]) + " and " + names[-1]


def top_induction():
    return _first("induction")["name"]


def induction_tops():
    """The top key-side components of the induction heads (one name when they agree)."""
    tops = {h["top_counts"][0][0] for h in ex.heads() if h["kind"] == "induction"}
    return ", ".join(sorted(tops))


def induction_cases():
    return f"{_first('induction')['cases']:,}"


def induction_before():
    return _pct(_first("induction")["before"])


def induction_after():
    return _pct(_first("induction")["after"])


def induction_moved_phrase():
    """How often, at the least, the knockout moves an induction head's attention: "in every
    case", or "in at least 93.0% of the cases"."""
    least = min(h["moved_share"] for h in ex.heads() if h["kind"] == "induction")
    return "in every case" if least == 1 else f"in at least {_pct(least)} of the cases"


def induction_control_drop_max():
    return _pct(max(h["control_drop"] for h in ex.heads() if h["kind"] == "induction"))


def induction_random_drops():
    drops = [h["random_drop"] for h in ex.heads() if h["kind"] == "induction"]
    return f"{_pct(min(drops))} to {_pct(max(drops))}"


def induction_query_top():
    return _first("induction")["query_top"][0][0]


def prev_name():
    return _first("previous")["name"]


def prev_top():
    return _first("previous")["top_counts"][0][0]


def prev_before():
    return _pct(_first("previous")["before"])


def prev_after():
    return _pct(_first("previous")["after"])


def prev_moved():
    return _pct(_first("previous")["moved_share"])


def sink_name():
    return _first("sink")["name"]


def sink_top():
    return _first("sink")["top_counts"][0][0]


def sink_before():
    return _pct(_first("sink")["before"])


def sink_after():
    return _pct(_first("sink")["after"])


def sink_moved():
    return _pct(_first("sink")["moved_share"])


def rank_range():
    """The rank correlations of weights and measure over the induction heads, low to high."""
    r = [h["rank"] for h in ex.heads() if h["kind"] == "induction"]
    return f"{num(min(r))} to {num(max(r))}"


def k_random():
    return num(ex.data()["k_random"], 3)


def k_prev_into_top():
    """The previous-token head's K-composition score into the top induction head."""
    h = _first("induction")
    return num(h["k"][ex.earlier(h).index(prev_name())], 3)


def k_prev_rank_into_top():
    """Where the weights rank the previous-token head among the top induction head's earlier
    heads (1 = first)."""
    h = _first("induction")
    k = np.array(h["k"])
    mine = k[ex.earlier(h).index(prev_name())]
    return f"{int((k > mine).sum()) + 1}"


PROSE_VALUES = public_functions(globals())  # every public function above
