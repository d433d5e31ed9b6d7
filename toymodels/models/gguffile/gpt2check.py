"""The source's claims about GPT-2 small, checked on a reader's own file.

The multi-head attention source page reads GPT-2 small (architecture gpt2, 12 layers of 12
heads, 768 wide) on SENTENCE and says of its layer 4, numbering layers and heads from 0 as it
does ("layer 4" is the fifth of the 12): one head reads the previous word (head 11, over 99%
of every token's attention on the token just before it), one sends "it" to "cat" (head 3),
and most of the rest put the bulk of their attention on the first token. When the file a
reader opens has GPT-2 small's shape, `shares` lists every head's three shares on that
sentence at that layer and `claims` says whether each claim holds there, so the reader checks
it on their own copy of the model.

The shares of a head, from its map `a` (T, T) at layer LAYER:

    previous  the mean over rows t = 2..T-1 of a[t, t-1]
    first     the mean over rows t = 2..T-1 of a[t, 0]
    it_cat    a["it", "cat"], the share "it" gives "cat"
    it_top    the token "it" gives its largest share (a position)

Rows 0 and 1 are left out of the two means: row 0 can only read itself, and at row 1 the
previous token is the first.
"""

import numpy as np

SENTENCE = "The cat sat on the mat because it was tired"
LAYER = 4  # numbered from 0, as the source numbers it
SHAPE = {"arch": "gpt2", "layers": 12, "heads": 12, "width": 768}
PREVIOUS_HEAD, IT_CAT_HEAD = 11, 3  # the heads the source names
EVERY_TOKEN = 0.99  # "over 99%" of every token's attention on the previous one


def is_gpt2_small(model):
    """Whether MODEL (gguffile.model.load's) has GPT-2 small's shape."""
    return (
        getattr(model, "arch", None) == SHAPE["arch"]
        and model.n_layer == SHAPE["layers"]
        and model.n_head == SHAPE["heads"]
        and model.d == SHAPE["width"]
    )


def position(pieces, word):
    """The first token of PIECES (the tokens as text) that is WORD, spaces aside."""
    for i, p in enumerate(pieces):
        if p.strip() == word:
            return i
    raise ValueError(
        f"the file's tokenizer does not read {word!r} as one token of {SENTENCE!r}: "
        "the source's sentence cannot be checked on it"
    )


def layer_map(model, ids, layer=LAYER):
    """Every head's map (heads, T, T) at LAYER, the forward stopped there."""
    for i, a, _ in model.run(ids):
        if i == layer:
            return np.asarray(a, np.float64)
    raise ValueError(f"the model has no layer {layer}")


def shares(model, tok):
    """The source's sentence read by TOK (the file's tokenizer) and MODEL at LAYER -> {"tokens":
    the pieces, "it", "cat": their positions, "layer": LAYER, "previous", "first", "it_cat":
    one share per head (lists of floats), "it_top": per head, the position "it" gives most,
    "strict": per head, the least share any row t >= 2 gives the previous token}."""
    ids = tok.encode(SENTENCE)
    pieces = [tok.decode([i]) for i in ids]
    it, cat = position(pieces, "it"), position(pieces, "cat")
    a = layer_map(model, ids)
    T = len(ids)
    rows = np.arange(2, T)
    prev = a[:, rows, rows - 1]  # (heads, T-2)
    return {
        "tokens": pieces,
        "it": it,
        "cat": cat,
        "layer": LAYER,
        "previous": prev.mean(-1).tolist(),
        "strict": prev.min(-1).tolist(),
        "first": a[:, rows, 0].mean(-1).tolist(),
        "it_cat": a[:, it, cat].tolist(),
        "it_top": a[:, it].argmax(-1).tolist(),
    }


def claims(s):
    """Whether each of the source's three claims holds in SHARES s -> [(claim, holds, what
    was found)], plain text. A claim holds when:

    previous  some head gives the previous token over 99% of every row's attention (the
              source's head 11)
    it_cat    some head gives "cat" the largest share of "it"'s attention (the source's
              head 3)
    first     more than half of the other heads give the first token more than half of
              their attention on average

    The head named for each claim is the one that comes closest (the largest least share of
    the previous token; of the heads whose "it" looks at "cat" most, or else of all, the one
    giving "cat" the most); the heads named where a claim holds are not among "the other".
    """
    prev, strict = np.asarray(s["previous"]), np.asarray(s["strict"])
    it_cat, first = np.asarray(s["it_cat"]), np.asarray(s["first"])
    to_cat = np.asarray(s["it_top"]) == s["cat"]
    p = int(strict.argmax())
    c = int(np.where(to_cat, it_cat, -1.0).argmax() if to_cat.any() else it_cat.argmax())
    p_holds = bool(strict[p] > EVERY_TOKEN)
    c_holds = bool(to_cat[c])
    named = {p} if p_holds else set()
    named |= {c} if c_holds else set()
    rest = [h for h in range(len(first)) if h not in named]
    parked = [h for h in rest if first[h] > 0.5]
    layer = s["layer"]
    return [
        (
            f"In layer {layer}, one head reads the previous word (the source: head "
            f"{PREVIOUS_HEAD}, over 99% of every word's attention).",
            p_holds,
            f"Head {p} gives the previous word at least {strict[p]:.1%} of every word's "
            f"attention ({prev[p]:.1%} on average).",
        ),
        (
            f"In layer {layer}, one head sends “it” to “cat” (the source: head {IT_CAT_HEAD}).",
            c_holds,
            f"Head {c} gives “cat” {it_cat[c]:.1%} of “it”'s attention, "
            + ("more than any other word." if c_holds else "less than another word."),
        ),
        (
            f"In layer {layer}, most of the other heads put the bulk of their attention on "
            "the first word.",
            len(parked) * 2 > len(rest),
            f"{len(parked)} of the other {len(rest)} heads give the first word more than half "
            "of their attention on average.",
        ),
    ]
