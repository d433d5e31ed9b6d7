"""The source's claim about GPT-2 small, checked on the reader's own file in Figure 1.

When the model file the reader opened has GPT-2 small's shape (gpt2check.is_gpt2_small), the
figure offers the source's sentence at the source's layer (one button sets the text, the
layer and the marked token) and lists every head's previous-token, "it" -> "cat" and
first-token shares there, with whether each of the source's three claims holds on this file.
Every number is gpt2check's (`shares`, `claims`), worked out once per file opened: a forward
stopped at the source's layer, on one short sentence.
"""

from ..models import ownfile
from ..models.causal import live
from ..models.gguffile import gpt2check
from ..page import kit
from ..page.html import attrs, esc, quoted

COLUMNS = ("Previous token", "“it” → “cat”", "First token")


def applies():
    """Whether the model open now is the reader's file and has GPT-2 small's shape."""
    return ownfile.is_open() and gpt2check.is_gpt2_small(ownfile.model()[0])


def shares():
    """gpt2check.shares on the open file, worked out once and let go with the file; or, where
    the file's tokenizer does not read "it" and "cat" as one token each, why the sentence
    cannot be checked on it (a string)."""

    def work():
        try:
            return gpt2check.shares(*ownfile.model())
        except ValueError as e:
            return f"Your file has GPT-2 small’s shape, but {e}."

    return ownfile.kept("gpt2check", work)


def state_of(s):
    """The figure's fields that show the sentence at the source's layer (1-based in the
    figure), the row of "it" marked (after the file's BOS, where its model reads one)."""
    ids = live.encode(gpt2check.SENTENCE)[0]
    start = len(ids) - len(s["tokens"])
    return {
        "text": live.SID,
        "own": gpt2check.SENTENCE,
        "layer": str(s["layer"] + 1),
        "token": str(start + s["it"]),
        "write": "",
    }


def offer(state):
    """Above the maps: the button that shows the source's sentence at its layer (disabled, with
    a line beside it, once they are shown: a tap never moves it), or "" when the open model is
    not GPT-2 small's shape."""
    if not applies():
        return ""
    s = shares()
    if isinstance(s, str):
        return f'<p class="hc-own-msg">{esc(s)}</p>'
    wanted = state_of(s)
    layer = s["layer"]
    shown = all(state[k] == v for k, v in wanted.items() if k != "write")
    fields = "".join(f"<input{attrs(type='hidden', name=k, value=v)}>" for k, v in wanted.items())
    button = attrs(type="submit", data_fk="source-sentence", disabled=shown)
    said = (
        f'<span class="hc-source-on">In the maps below: layer {layer + 1} here (the source’s '
        f"layer {layer}), the row of “it” marked.</span>"
        if shown
        else ""
    )
    return (
        f'<form class="hc-source-offer" data-state-form>{fields}'
        f"<p>Your file has GPT-2 small’s shape: the source reads GPT-2 small on "
        f"{esc(quoted(gpt2check.SENTENCE))} and says three things of its layer {layer}; "
        "below the maps, each is checked on your file.</p>"
        f"<button{button}>Show the source’s sentence at its layer</button> {said}</form>"
    )


def section():
    """Below the maps: whether each of the source's claims holds on the reader's file, and
    every head's shares as a table, or "" when the open model is not GPT-2 small's shape."""
    if not applies():
        return ""
    s = shares()
    if isinstance(s, str):  # said above the maps
        return ""
    layer = s["layer"]
    named = f"your file, {ownfile.name()},"
    claims = "".join(
        f'<li class="{"pass" if holds else "fail"}">{esc(claim)} On {esc(named)} this '
        f"{'holds' if holds else 'does not hold'}: {esc(found)}</li>"
        for claim, holds, found in gpt2check.claims(s)
    )
    rows = [f"Head\u00a0{h}" for h in range(len(s["previous"]))]  # never split
    values = list(zip(s["previous"], s["it_cat"], s["first"], strict=True))
    table = kit.matrix(
        f"Every head of layer {layer} (counted from 0, as the source counts; layer "
        f"{layer + 1} and H1 to H{len(rows)} in the maps) on your file: its share of attention "
        "to the previous token and to the first (the mean over the third token on), and "
        "“it”’s share to “cat”",
        rows,
        COLUMNS,
        values,
        places=3,
        cls="mh-matrix hc-source-table",
    )
    return (
        '<section class="hc-source" aria-label="The source’s claims on your file">'
        f'<h3 class="hc-kv">The source’s claims about GPT-2 small’s layer {layer}, on your '
        "file</h3>"
        f'<ul class="hc-source-claims">{claims}</ul>{table}</section>'
    )
