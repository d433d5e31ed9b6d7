"""Numbers the prose of "Heads that copy" quotes, computed from SmolLM2-135M-Instruct's export.

Each is a function without arguments, so a chapter writes
{{ toymodels.heads_that_copy.values.NAME }} and the number on the page is the one the export
gives, never typed in.
"""

import numpy as np

from ..models.smollm2 import live
from ..page.html import count_words, head_name
from ..page.prose import public_functions
from . import heads as hc
from .figure import link

COPIES = 0.3  # a head "copies" when a second-copy row gives the token to copy this much
STRONG = 0.5
SINKY = 0.4  # a layer "rests on the first token" when its heads give it this much on average


def _pct(p):
    return f"{100 * float(p):.0f}%"


def _model():
    return hc.index()["model"]


def _name(at):
    layer, head = at
    return head_name(layer + 1, head + 1)


def model_name():
    return _model()["name"]


def n_layers():
    return _model()["layers"]


def n_heads_per_layer():
    return _model()["heads"]


def n_kv_heads():
    return _model()["kv_heads"]


def n_heads_total():
    m = _model()
    return m["layers"] * m["heads"]


def head_size():
    return _model()["head_size"]


def params_millions():
    return f"{_model()['params'] / 1e6:.0f}"


def vocab():
    return _model()["vocab"]


def n_texts():
    return count_words(len(hc.texts()))


def period():
    """Random tokens in each repeated run (each run says them twice)."""
    return hc.runs()[0]["period"]


def n_runs():
    return count_words(len(hc.runs()))


def first_token():
    """The token every random run opens with, as prose quotes it: '“The”'."""
    return hc.spoken(hc.runs()[0]["pieces"][0])


def texts_opening_first():
    """How many of the curated texts (all but the random runs) open with the runs' first token,
    out of how many: 'four of the six'."""
    first = hc.runs()[0]["pieces"][0]
    curated = [t for t in hc.texts() if "period" not in t]
    n = sum(t["pieces"][0] == first for t in curated)
    return f"{count_words(n, among=(len(curated),))} of the {count_words(len(curated))}"


def pool_size():
    """How many word tokens the random runs are drawn from."""
    return f"{_copying()['pool']:,}"


# the heads, by score


def _top(measure):
    return hc.strongest(measure, 1)[0]


def _score(measure, at):
    return hc.scores()[measure][at]


def top_induction_head():
    return _name(_top("induction"))


def top_induction_score():
    return _pct(_score("induction", _top("induction")))


def uniform_induction():
    """What an induction score would be if every second-copy row spread its attention evenly
    over the tokens it can see."""
    P = period()
    return _pct(np.mean([1 / (i + 1) for i in range(P, 2 * P)]))


def copies_pct():
    return _pct(COPIES)


def strong_pct():
    return _pct(STRONG)


def _n_over(measure, at):
    return int((hc.scores()[measure] >= at).sum())


def n_copying_heads():
    """Heads whose induction score reaches COPIES, as a count in words."""
    return count_words(_n_over("induction", COPIES))


def n_strong_copying_heads():
    """In digits when the count of copying heads is (the two share a sentence)."""
    return count_words(_n_over("induction", STRONG), among=(_n_over("induction", COPIES),))


def _copying_heads_per_run():
    return [
        int((x >= COPIES).sum()) for x in hc.run_inductions([hc.text(r["id"]) for r in hc.runs()])
    ]


def copying_heads_per_run():
    """The spread of the count of copying heads over the runs taken one at a time: '3 to 10'."""
    n = _copying_heads_per_run()
    return f"{min(n)} to {max(n)}"


def stripe_offset():
    """How far left of the diagonal an induction head's stripe lies on the repeated tokens: the
    token after the first occurrence is one less than a period back."""
    return period() - 1


def _layers_over(measure, at):
    layers = sorted({int(x) + 1 for x in np.argwhere(hc.scores()[measure] >= at)[:, 0]})
    return f"{layers[0]} to {layers[-1]}" if len(layers) > 1 else str(layers[0])


def copying_layers():
    """The layers the heads with an induction score of at least COPIES sit in: '17 to 24'."""
    return _layers_over("induction", COPIES)


def previous_layers():
    """The layers the heads giving the previous token at least STRONG sit in: '2 to 20'."""
    return _layers_over("previous", STRONG)


def top_previous_head():
    return _name(_top("previous"))


def top_previous_score():
    return _pct(_score("previous", _top("previous")))


def n_previous_heads():
    """Heads giving the previous token at least half of a row on average."""
    return count_words(_n_over("previous", STRONG))


def previous_before_induction():
    """Whether the strongest previous-token head sits in an earlier layer than the strongest
    induction head, as prose: 'an earlier layer' or 'a later layer'."""
    return "an earlier layer" if _top("previous")[0] < _top("induction")[0] else "a later layer"


def top_self_head():
    return _name(_top("self"))


def top_self_score():
    return _pct(_score("self", _top("self")))


# the first token


def sink_mean():
    return _pct(hc.scores()["sink"].mean())


def sinky_pct():
    return _pct(SINKY)


def n_sinky_layers():
    return count_words(int((hc.sink_by_layer() >= SINKY).sum()))


def sink_low_layers():
    """The layers whose heads give the first token least on average, in words: 'layers 12, 2
    and 1'."""
    by = hc.sink_by_layer()
    low = [int(n) + 1 for n in np.argsort(by, kind="stable")[:3]]
    return f"layers {low[0]}, {low[1]} and {low[2]}"


def top_sink_head():
    return _name(_top("sink"))


def top_sink_score():
    return _pct(_score("sink", _top("sink")))


# "it" looking back


def it_cat_head():
    layer, head, _ = link("cat", " it", " cat")
    return head_name(layer + 1, head + 1)


def it_cat_share():
    return _pct(link("cat", " it", " cat")[2])


def it_cat_column():
    """In the head that sends "it" most to "cat": what the other tokens after "cat" give it."""
    layer, head, _ = link("cat", " it", " cat")
    d = hc.text("cat")
    i, j = d["pieces"].index(" it"), d["pieces"].index(" cat")
    rows = [r for r in range(j + 1, len(d["pieces"])) if r != i]
    return _pct(d["att"][layer, head][rows, j].mean())


def it_glass_head():
    layer, head, _ = link("glass", " it", " glass")
    return head_name(layer + 1, head + 1)


def it_glass_share():
    return _pct(link("glass", " it", " glass")[2])


def it_animal_share():
    return _pct(link("animal", " it", " animal")[2])


# copying


def _acc(heads=(), copy=2):
    return hc.accuracy(heads, copy)


def _said(acc):
    right, total = acc
    return f"{right} of {total}"


def n_guesses():
    return _acc()[1]


def copy_none():
    return _said(_acc())


def per_run():
    """Guesses counted on the second copy of one run."""
    return hc.run_accuracy()[0][1]


def _range(heads=()):
    right = [r for r, _ in hc.run_accuracy(heads)]
    if min(right) == max(right):
        return f"{right[0]} of {per_run()} in every run"
    return f"{np.mean(right):.1f} of {per_run()} a run, from {min(right)} to {max(right)}"


def copy_none_per_run():
    """Right guesses on the second copy per run with nothing pulled out: mean and range."""
    return _range()


def copy_without_induction_per_run():
    return _range(_copying()["induction_heads"])


def copy_without_previous_per_run():
    return _range(_copying()["previous_heads"])


def copy_without_control_per_run():
    return _range(_copying()["control_heads"])


# the fixed first token


def _sink_of_runs():
    return np.mean([hc.link_shares(hc.text(r["id"])["att"])["sink"].mean() for r in hc.runs()])


def sink_runs_with_first():
    """The share a row gives the first token on the random runs, over all heads, as stored."""
    return _pct(_sink_of_runs())


def sink_runs_without_first():
    """The same runs without the fixed first token in front (their first token a random word)."""
    bare = _copying()["without_first"]
    return _pct(np.mean([b["sink"] for b in bare]) / hc.index()["scale"])


def sink_runs_without_first_least():
    """The least the first token gets in one of those runs, over all heads."""
    bare = _copying()["without_first"]
    return _pct(min(b["sink"] for b in bare) / hc.index()["scale"])


def copy_runs_without_first():
    bare = _copying()["without_first"]
    return _said((sum(b["right"] for b in bare), per_run() * len(bare)))


def copy_runs_without_first_range():
    right = [b["right"] for b in _copying()["without_first"]]
    return f"{min(right)} to {max(right)}"


# the plain-text control: the same heads out on the curated texts


def _loss(cid, tid=None):
    d = hc.plain_loss()[cid]
    return f"{(d[tid] if tid else np.mean(list(d.values()))):.2f}"


def _all_induction():
    return hc.condition(_copying()["induction_heads"])["id"]


def plain_loss_none():
    """Mean loss over the curated texts (nats per token, each text weighing alike)."""
    return _loss("none")


def plain_loss_previous():
    return _loss("previous")


def plain_loss_induction():
    return _loss(_all_induction())


def plain_loss_control():
    return _loss("control")


def glass_loss_none():
    return _loss("none", "glass")


def glass_loss_previous():
    return _loss("previous", "glass")


def glass_loss_induction():
    return _loss(_all_induction(), "glass")


def glass_loss_control():
    return _loss("control", "glass")


def elinor_loss_control():
    return _loss("control", "elinor")


def n_texts_plain():
    """The curated texts of the plain-text control, in words: 'six texts'."""
    return count_words(len(_copying()["plain"]["texts"]), "text")


def elinor_loss_none():
    return _loss("none", "elinor")


def elinor_loss_induction():
    return _loss(_all_induction(), "elinor")


def elinor_loss_previous():
    return _loss("previous", "elinor")


def copy_first():
    """The same runs' first copy, where nothing can be copied yet."""
    return _said(_acc(copy=1))


def copy_without_top():
    return _said(_acc([_top("induction")]))


def _copying():
    return hc.index()["copying"]


def copy_without_induction():
    return _said(_acc(_copying()["induction_heads"]))


def copy_without_previous():
    return _said(_acc(_copying()["previous_heads"]))


def copy_without_control():
    return _said(_acc(_copying()["control_heads"]))


def _lost(heads):
    """Right guesses on the second copy that pulling HEADS out costs."""
    return _acc()[0] - _acc(heads)[0]


def control_lost():
    """Right guesses the random heads cost, out of those the whole model makes: '16 of 192'."""
    return f"{_lost(_copying()['control_heads'])} of {_acc()[0]}"


def induction_lost():
    """Right guesses the induction heads cost: '192'."""
    return str(_lost(_copying()["induction_heads"]))


def control_against_induction_plain():
    """How the random heads' mean loss on the curated texts compares with the induction heads',
    as the table rounds them: 'more than', 'as much as' or 'less than'."""
    control, induction = float(plain_loss_control()), float(plain_loss_induction())
    if control == induction:
        return "as much as"
    return "more than" if control > induction else "less than"


def previous_cost():
    """How pulling out the previous-token heads compares with pulling out the induction heads:
    'even more', 'as much' or 'less'."""
    prev, ind = _acc(_copying()["previous_heads"])[0], _acc(_copying()["induction_heads"])[0]
    return "even more" if prev < ind else "as much" if prev == ind else "less"


def n_pulled():
    return count_words(len(_copying()["induction_heads"]))


def n_pulled_start():
    return count_words(len(_copying()["induction_heads"]), start=True)


def induction_heads_out():
    """The stored induction heads pulled out, strongest first: 'L19 H7, L18 H5, … and L24 H3'."""
    names = [head_name(layer + 1, head + 1) for layer, head in _copying()["induction_heads"]]
    return ", ".join(names[:-1]) + " and " + names[-1]


def previous_heads_out():
    names = [head_name(layer + 1, head + 1) for layer, head in _copying()["previous_heads"]]
    return ", ".join(names[:-1]) + " and " + names[-1]


def previous_after_induction():
    """Which of the pulled-out previous-token heads cannot feed the pulled-out induction heads
    (a head feeds only later layers), as a clause."""
    ind = _copying()["induction_heads"]
    last = max(layer for layer, _ in ind)
    late = [head_name(la + 1, h + 1) for la, h in _copying()["previous_heads"] if la >= last]
    if not late:
        return "all of them sit before the last induction head, so each could feed one"
    n = len(ind)
    if len(late) == 1:
        return f"{late[0]} sits after all {count_words(n)} induction heads and cannot feed them"
    said = ", ".join(late[:-1]) + " and " + late[-1]
    return f"{said} sit after all {count_words(n)} induction heads and cannot feed them"


def n_conditions():
    return len(hc.conditions())


# grouped-query attention


def top_induction_siblings():
    """The query heads that share the strongest induction head's keys and values, with their
    induction and first-token scores: 'L19 H8 (induction 50%, first token 88%) and …'."""
    layer, head = _top("induction")
    s = hc.scores()
    return " and ".join(
        f"{head_name(layer + 1, h + 1)} (induction {_pct(s['induction'][layer, h])}, "
        f"first token {_pct(s['sink'][layer, h])})"
        for h in hc.siblings(head)
        if h != head
    )


def kv_numbers_per_token():
    """Numbers the key/value cache keeps for each token, over all layers, as the model is."""
    m = _model()
    return f"{2 * m['layers'] * m['kv_heads'] * m['head_size']:,}"


def kv_numbers_per_token_full():
    """The same if every query head had keys and values of its own."""
    m = _model()
    return f"{2 * m['layers'] * m['heads'] * m['head_size']:,}"


def kv_saving():
    m = _model()
    return count_words(m["heads"] // m["kv_heads"])


def kv_heads_in_words():
    return count_words(_model()["kv_heads"])


def heads_in_words():
    return count_words(_model()["heads"])


# the reader's own text (live.py)


def live_size():
    """'97.7 MB': what the page downloads to run the model on the reader's text."""
    return live.size_mb()


def live_max_tokens():
    return live.MAX_TOKENS


def kv_bytes_per_token():
    """'46,080': the KV cache's bytes for one token: every layer keeps the keys and values of
    its key/value heads, in float32."""
    c = live.manifest()["config"]
    hs = c["d"] // c["n_head"]
    return f"{c['n_layer'] * 2 * c['n_kv'] * hs * 4:,}"


def float_bytes():
    """4: the bytes of one number in float32, as the page's model keeps them."""
    return np.dtype(np.float32).itemsize


def kv_bytes_full():
    """'2.9 MB': the KV cache at the token limit."""
    c = live.manifest()["config"]
    per = c["n_layer"] * 2 * c["n_kv"] * (c["d"] // c["n_head"]) * 4
    return f"{per * live.MAX_TOKENS / 1e6:.1f} MB"


PROSE_VALUES = public_functions(globals())  # every public function above
