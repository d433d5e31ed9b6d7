"""Numbers the prose of "Real heads" quotes, computed from the exported maps.

Each is a function without arguments, so a chapter can write
{{ toymodels.real_heads.values.NAME }} and the number on the page is the one the
export gives, never typed in.
"""

import numpy as np

from ..page.html import count_words, plural_of
from ..page.prose import public_functions
from .maps import (
    BROAD,
    THRESHOLD,
    content_rows,
    counts,
    head_name,
    label_of,
    measures,
    model,
    pct0,
    pick,
    sentence,
)

_cache = {}


def _all(mid=None):
    m = model(mid)
    return m, [sentence(m["id"], s["id"]) for s in m["sentences"]]


def overall(mid=None):
    """Each head's measures averaged over every sentence (sentences weigh alike) and its label
    from them."""
    key = ("overall", mid)
    if key not in _cache:
        m, ds = _all(mid)
        ms = [measures(d["att"], d["sinks"], d["causal"]) for d in ds]
        avg = {k: np.mean([x[k] for x in ms], axis=0) for k in ms[0]}
        L, H = avg["sink"].shape
        per = [[pick(avg, (layer, head)) for head in range(H)] for layer in range(L)]
        _cache[key] = ([[label_of(x) for x in row] for row in per], per)
    return _cache[key]


def _heads_with(label, mid=None):
    labels, _ = overall(mid)
    return [
        (layer, head)
        for layer, row in enumerate(labels)
        for head, found in enumerate(row)
        if found == label
    ]


def _listing(heads):
    names = [head_name(layer, head) for layer, head in heads]
    if len(names) <= 1:
        return "".join(names) or "none"
    return ", ".join(names[:-1]) + " and " + names[-1]


def n_layers():
    return model()["layers"]


def n_heads_per_layer():
    return model()["heads"]


def n_heads_total():
    m = model()
    return m["layers"] * m["heads"]


def n_sentences():
    return len(model()["sentences"])


def model_name():
    return model()["name"]


def n_sink_heads():
    return count_words(len(_heads_with("sink")))


def n_broad_heads():
    return count_words(len(_heads_with("broad")))


def n_other_heads():
    return count_words(len(_heads_with("other")))


def _best(measure):
    _, per = overall()
    return max(
        ((layer, head) for layer in range(len(per)) for head in range(len(per[0]))),
        key=lambda at: per[at[0]][at[1]][measure],
    )


def best_previous_head():
    return head_name(*_best("previous"))


def best_previous_share():
    layer, head = _best("previous")
    return pct0(overall()[1][layer][head]["previous"])


def sink_share_all():
    """Average share of a token's attention that rests on [CLS] and [SEP], over all heads and
    sentences."""
    _, per = overall()
    return pct0(float(np.mean([m["sink"] for row in per for m in row])))


def _sink_by_layer():
    _, per = overall()
    return [float(np.mean([m["sink"] for m in row])) for row in per]


def sink_share_first_layer():
    return pct0(_sink_by_layer()[0])


def sink_peak_layer():
    s = _sink_by_layer()
    return str(int(np.argmax(s)) + 1)


def sink_share_peak_layer():
    return pct0(max(_sink_by_layer()))


def _link(sid, word_from, word_to, nth_from=-1, nth_to=0):
    """The head that sends most of token word_from's attention to word_to in one sentence:
    (layer, head, share)."""
    d = sentence(model()["id"], sid)
    toks = d["tokens"]
    i = [k for k, t in enumerate(toks) if t == word_from][nth_from]
    j = [k for k, t in enumerate(toks) if t == word_to][nth_to]
    w = d["att"][:, :, i, j]
    layer, head = np.unravel_index(int(np.argmax(w)), w.shape)
    return int(layer), int(head), float(w[layer, head])


def it_cat_head():
    layer, head, _ = _link("cat", "it", "cat")
    return head_name(layer, head)


def it_cat_share():
    return pct0(_link("cat", "it", "cat")[2])


def _repeats():
    """The sentence with a repeated phrase, and (i, j) for each token i that came before with j
    its last earlier occurrence (special tokens and punctuation left out): the words of the
    second copy, and every "the" after the first."""
    d = sentence(model()["id"], "fox")
    toks = d["tokens"]
    pairs = []
    for i in range(len(toks)):
        if i in d["sinks"] or toks[i] in (",", "."):
            continue
        earlier = [j for j in range(i) if toks[j] == toks[i] and j not in d["sinks"]]
        if earlier:
            pairs.append((i, earlier[-1]))
    return d, pairs


def _strongest(d, pairs):
    """(layer, head, share): the head giving the (i, j) links of PAIRS most weight on average."""
    share = np.mean([d["att"][:, :, i, j] for i, j in pairs], axis=0)
    layer, head = np.unravel_index(int(np.argmax(share)), share.shape)
    return int(layer), int(head), float(share[layer, head])


def _copy():
    """In the sentence with a repeated phrase: the head whose repeated tokens look most at their
    last earlier occurrence (for a "the" of the second copy, that may be in the second copy)."""
    d, pairs = _repeats()
    return (*_strongest(d, pairs), len(pairs))


def copy_head():
    return head_name(*_copy()[:2])


def copy_share():
    return pct0(_copy()[2])


def threshold_pct():
    return pct0(THRESHOLD)


def broad_pct():
    return pct0(BROAD)


def n_tokens_fewest():
    return min(s["tokens"] for s in model()["sentences"])


def n_tokens_most():
    return max(s["tokens"] for s in model()["sentences"])


def n_broad_first_layer():
    """How many broad heads sit in the first layer; in digits when the total is ('20, of which
    10'), so the sentence that quotes both does not mix them."""
    return count_words(counts_overall()[0]["broad"], among=(len(_heads_with("broad")),))


def counts_overall():
    return counts(overall()[0])


def _column_share(sid, layer, head, word):
    """Average share the sentence's own tokens give `word` (its first occurrence) in one head."""
    d = sentence(model()["id"], sid)
    j = d["tokens"].index(word)
    rows = content_rows(len(d["tokens"]), d["sinks"], d["causal"])
    return float(d["att"][layer, head][rows, j].mean())


def it_cat_column_share():
    layer, head, _ = _link("cat", "it", "cat")
    return pct0(_column_share("cat", layer, head, "cat"))


def it_animal_head():
    layer, head, _ = _link("animal", "it", "animal")
    return head_name(layer, head)


def it_animal_share():
    return pct0(_link("animal", "it", "animal")[2])


TARGETS = {"previous": "the token before", "next": "the token after"}


def _habit_heads(label):
    """Heads with a positional label, as the prose lists them: 'one, L1 H3, which gives the token
    before 100% of a row on average'; 'three (L1 H3, L2 H1 and L2 H5); the strongest, L1 H3,
    gives …'; 'none'."""
    heads, (_, per) = _heads_with(label), overall()
    if not heads:
        return "none"
    best = max(heads, key=lambda at: per[at[0]][at[1]][label])
    share = f"{TARGETS[label]} {pct0(per[best[0]][best[1]][label])} of a row on average"
    if len(heads) == 1:
        return f"one, {head_name(*best)}, which gives {share}"
    return (
        f"{count_words(len(heads))} ({_listing(heads)}); the strongest, {head_name(*best)}, "
        f"gives {share}"
    )


def previous_heads_line():
    return _habit_heads("previous")


def next_heads_line():
    return _habit_heads("next")


def previous_heads_found():
    """Where the guess's answer says the previous-token heads are: 'in one head of the 72, L1 H3,
    which gives it 100% on average'."""
    heads, (_, per) = _heads_with("previous"), overall()
    total = n_heads_total()
    if not heads:
        return f"in none of the {total} heads"
    best = max(heads, key=lambda at: per[at[0]][at[1]]["previous"])
    share = pct0(per[best[0]][best[1]]["previous"])
    if len(heads) == 1:
        return f"in one head of the {total}, {head_name(*best)}, which gives it {share} on average"
    return (
        f"in {count_words(len(heads))} {plural_of(len(heads), 'head')} of the {total} "
        f"({_listing(heads)}), the strongest of them {share} on average"
    )


def _induction():
    """In the sentence with a repeated phrase: the head whose repeated tokens look most at the
    token just after their last earlier occurrence, what an induction head attends to."""
    d, pairs = _repeats()
    after = [(i, j + 1) for i, j in pairs if j + 1 < i and j + 1 not in d["sinks"]]
    return _strongest(d, after)


def induction_head():
    return head_name(*_induction()[:2])


def induction_share():
    return pct0(_induction()[2])


PROSE_VALUES = public_functions(globals())  # every public function above
