"""Figure "Three measures of every head": for one curated pair of texts, three maps of
SmolLM2's 270 heads (30 layers × 9 heads) side by side: where the last token looks (its
attention to the word that differs between the two texts), what the head writes straight
towards the answer (direct logit attribution), and what the model gets back when the head
alone is patched from the clean run into the corrupted one. A tap on a head opens it in all
three maps and lists its numbers.

State: pair (a kept pair's id, e.g. "ioi1"), head ("L24H4", 1-based; "" opens the head whose
patching, as shown, moves most in that pair), patch (which patching the third map shows, one
of PATCHES: the clean output put back at every position, at the last token alone, where the
attention map is read, or at the changed word alone; or noising, the corrupted output put
into the clean run). The numbers are the export's (heads.py); nothing here computes a measure.
"""

import re

from ..page import kit
from ..page.html import attrs, esc, head_name, level, num, quoted
from . import heads as wh

DEFAULTS = {"pair": "ioi1", "head": "", "patch": "every"}
# value: (the export's array, its button, the map's title, how a cell says its value)
PATCHES = {
    "every": ("patch", "Every position", "Patching at every position: share recovered", "recovers"),
    "token": (
        "patch_token",
        "The last token",
        "Patching at the last token only: share recovered",
        "recovers",
    ),
    "word": (
        "patch_word",
        "The changed word",
        "Patching at the changed word only: share recovered",
        "recovers",
    ),
    "noise": ("noise", "Noising", "Noising at every position: share lost", "loses"),
}
DLA_SCALE = 1.0  # logits: the darkest colour of the attribution map, each way
PATCH_SCALE = 0.5  # of the difference: the darkest colour of the patching map, each way
NO_FLIP = "answer kept"  # how a pair whose answer does not flip is marked
HEAD = re.compile(r"[Ll]([0-9]{1,2})\s*[Hh]([0-9]{1,2})")


def _choices():
    return {"pair": tuple(wh.kept()), "patch": tuple(PATCHES)}


CHOICES = _choices()


def head_value(layer, head):
    """What a cell sets, 0-based in: (23, 3) -> 'L24H4'."""
    return f"L{layer + 1}H{head + 1}"


def read_head(text):
    """'L24H4' (or 'L24 H4') -> (23, 3), 0-based; None for anything else or out of range."""
    m = HEAD.fullmatch(text.strip())
    if not m:
        return None
    layer, head = int(m.group(1)) - 1, int(m.group(2)) - 1
    layers, heads = wh.shape()
    return (layer, head) if 0 <= layer < layers and 0 <= head < heads else None


def strongest(values):
    """(layer, head), 0-based, of the largest value of a (layers, heads) array."""
    flat = int(values.argmax())
    return divmod(flat, values.shape[1])


def normalise(state):
    """-> kit.Normalised, with .pair: the pair's entry with its arrays, and .at: the opened
    head (layer, head)."""
    state = kit.merge(DEFAULTS, state, choices=CHOICES)
    p = wh.pair(state["pair"])
    at = read_head(state["head"]) or strongest(p[PATCHES[state["patch"]][0]])
    state["head"] = head_value(*at)
    return kit.Normalised(state, pair=p, at=at)


def word(piece):
    """A token as the prose quotes it: its leading space dropped."""
    return piece.strip() or piece


def differing(p, text):
    """The differing word of the clean (text 0) or corrupted (1) text, its tokens joined."""
    return "".join(p["pieces"][text][i] for i in p["differ"]).strip()


def signed_level(v, scale):
    """A signed value -> a colour class of the two-way scale (site.css): l0 near zero, the
    blues l3, l5, l7, l9 towards a (positive), the oranges neg1 … neg4 towards b; darkest from
    SCALE on."""
    t = abs(float(v)) / scale
    if t < 0.05:
        return "l0"
    k = min(4, 1 + int(t * 4))
    return f"l{2 * k + 1}" if v > 0 else f"neg{k}"


def logits(v):
    """A logit difference or attribution with its sign: '+2.86', '−0.40'."""
    text = num(v)
    return text if text.startswith("−") or float(text) == 0 else "+" + text


def percent(v):
    """A share as the maps name it: '58%', '−0.3%' (a tenth of a point under 10%)."""
    x = 100 * float(v)
    text = f"{x:.1f}" if abs(x) < 10 else f"{x:.0f}"
    return num(float(text), 1 if abs(x) < 10 else 0) + "%"


def measures(p, patch="every"):
    """The three maps: (key, title, its (layers, heads) values, colour class of a value, how a
    cell names its value); the third the patching PATCH names."""
    to = quoted(differing(p, 0))
    array, _, title, verb = PATCHES[patch]
    return (
        (
            "att",
            f"Attention from the last token to {to}",
            p["att_clean"],
            level,
            lambda v: f"attention {percent(v)}",
        ),
        (
            "dla",
            "Direct logit attribution",
            p["dla_clean"],
            lambda v: signed_level(v, DLA_SCALE),
            lambda v: f"attribution {logits(v)}",
        ),
        (
            "patch",
            title,
            p[array],
            lambda v: signed_level(v, PATCH_SCALE),
            lambda v: f"{'noising' if patch == 'noise' else 'patching'} {verb} {percent(v)}",
        ),
    )


def head_map(key, title, values, colour, said, opened):
    """A map of every head, a row per layer and a column per head, each cell coloured by
    COLOUR(its value) and named by SAID(its value); OPENED (layer, head) is the tab stop."""
    layers, heads = values.shape
    rows = []
    for L in range(layers):
        cells = []
        for H in range(heads):
            on = opened == (L, H)
            cell = attrs(
                class_=colour(values[L, H]) + (" open" if on else ""),
                data_key="head",
                data_value=head_value(L, H),
                data_fk=f"{key}-{L + 1}-{H + 1}",
                tabindex="0" if on else "-1",
                aria_label=f"{head_name(L + 1, H + 1)}: {said(values[L, H])}",
            )
            cells.append(f"<td{cell}></td>")
        rows.append(
            f'<tr><th scope="row"><span class="sr">Layer </span>L{L + 1}</th>{"".join(cells)}</tr>'
        )
    cols = "".join(f'<th scope="col">H{H + 1}</th>' for H in range(heads))
    return (
        f'<div class="hc-scroll"><table class="hc-all wh-map" data-roving="grid">'
        f'<caption class="wh-title">{esc(title)}</caption>'
        f"<thead><tr><td></td>{cols}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def signed_legend(low, high):
    """The two-way colour scale, LOW to HIGH through zero (for the eye: every cell names its
    own value)."""
    swatches = "".join(f'<span class="sw neg{k}"></span>' for k in (4, 3, 2, 1))
    swatches += "".join(f'<span class="sw l{k}"></span>' for k in (0, 3, 5, 7, 9))
    return (
        '<p class="mh-legend" aria-hidden="true">'
        f"<span>{esc(low)}</span>{swatches}<span>{esc(high)}</span></p>"
    )


def labels(ids):
    """The pairs' buttons: their two candidate answers, or where two pairs of a family share
    them (the same names in another order), the clean text's first three words; a pair whose
    answer does not flip (kept because its difference moves enough) marked so."""
    entry = {e["id"]: e for e in wh.all_pairs()}
    out = [f"{word(entry[i]['a'])} or {word(entry[i]['b'])}" for i in ids]
    out = [
        " ".join(entry[i]["clean"].split()[:3]) + "…" if out.count(text) > 1 else text
        for i, text in zip(ids, out, strict=True)
    ]
    return [
        text if entry[i]["why"] == "flips" else f"{text} ({NO_FLIP})"
        for i, text in zip(ids, out, strict=True)
    ]


def flip_line(p):
    """Whether the model's answer flips between the two texts, in a sentence."""
    a, b = quoted(word(p["a"])), quoted(word(p["b"]))
    if p["why"] == "flips":
        return (
            f"The answer flips: the model prefers {a} after the clean text, {b} after the "
            "corrupted one."
        )
    return (
        f"The answer does not flip: the model prefers {quoted(prefers(p, p['ld_clean']))} after "
        f"both texts. The pair is kept because the logit difference moves "
        f"{num(p['ld_clean'] - p['ld_corrupt'])} towards {b}."
    )


def picker(current):
    groups = "".join(
        f'<div class="wh-family"><span class="wh-family-name">{esc(name)}</span>'
        + kit.choices("pair", list(zip(ids, labels(ids), strict=True)), current, label=name)
        + "</div>"
        for _, name, ids in wh.by_family()
    )
    return f'<div class="wh-pairs">{groups}</div>'


def marked(p, text):
    """Text 0 (clean) or 1 (corrupted) with its differing tokens marked."""
    out = []
    for i, piece in enumerate(p["pieces"][text]):
        out.append(f"<strong>{esc(piece)}</strong>" if i in p["differ"] else esc(piece))
    return "".join(out)


def prefers(p, ld):
    return word(p["a"] if ld > 0 else p["b"])


def pair_panel(p):
    a, b = quoted(word(p["a"])), quoted(word(p["b"]))
    rows = "".join(
        f'<tr><th scope="row">{name}</th><td>{marked(p, t)}…</td>'
        f"<td>{esc(logits(ld))}</td><td>{esc(quoted(prefers(p, ld)))}</td></tr>"
        for t, name, ld in ((0, "Clean", p["ld_clean"]), (1, "Corrupted", p["ld_corrupt"]))
    )
    return (
        '<div class="hc-scroll"><table class="mh-matrix wh-texts">'
        f"<caption>The two texts, and what comes next: {esc(a)} (a) or {esc(b)} (b)</caption>"
        '<thead><tr><th scope="col">Run</th><th scope="col">Text</th>'
        '<th scope="col">logit a − logit b</th><th scope="col">Prefers</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
        f'<p class="mh-summary">{esc(flip_line(p))}</p>'
    )


def head_facts(p, at):
    """The opened head's numbers in both texts, as a list of sentences."""
    L, H = at
    w0, w1 = quoted(differing(p, 0)), quoted(differing(p, 1))
    a = quoted(word(p["a"]))
    return [
        f"Attention from the last token to {w0}: {percent(p['att_clean'][L, H])} "
        f"(in the corrupted text, to {w1}: {percent(p['att_corrupt'][L, H])}).",
        f"Direct logit attribution: {logits(p['dla_clean'][L, H])} towards {a} "
        f"(in the corrupted text: {logits(p['dla_corrupt'][L, H])}).",
        f"Patched from the clean run into the corrupted one, it recovers "
        f"{percent(p['patch'][L, H])} of the logit difference at every position, "
        f"{percent(p['patch_token'][L, H])} at the last token only and "
        f"{percent(p['patch_word'][L, H])} at {w0} only.",
        f"Noised, its output from the corrupted run put into the clean one (every position), "
        f"the model loses {percent(p['noise'][L, H])} of it.",
    ]


def render(state=None, fid="what-head"):
    read = normalise(state)
    state, p, at = read.state, read.pair, read.at
    maps = []
    for key, title, values, colour, said in measures(p, state["patch"]):
        legend = (
            kit.legend(None)
            if key == "att"
            else signed_legend(f"−{DLA_SCALE:g}", f"+{DLA_SCALE:g} logit")
            if key == "dla"
            else signed_legend(f"−{PATCH_SCALE:.0%}", f"+{PATCH_SCALE:.0%}")
        )
        maps.append(
            f'<div class="wh-one">{head_map(key, title, values, colour, said, at)}{legend}</div>'
        )
    name = head_name(at[0] + 1, at[1] + 1)
    facts = head_facts(p, at)
    opened = (
        f'<section class="hc-opened" aria-label="{esc(name)}, opened"><h3>{esc(name)}</h3>'
        f"<ul>{''.join(f'<li>{esc(f)}</li>' for f in facts)}</ul></section>"
    )
    shown = (
        '<div class="wh-family"><span class="wh-family-name">Patching shown</span>'
        + kit.choices(
            "patch", [(k, v[1]) for k, v in PATCHES.items()], state["patch"], label="Patching shown"
        )
        + "</div>"
    )
    html = (
        kit.controls(picker(state["pair"]) + shown)
        + pair_panel(p)
        + f'<div class="wh-maps">{"".join(maps)}</div>'
        + opened
    )
    summary = (
        f"{p['clean']} (clean) against {p['corrupt']} (corrupted), candidates "
        f"{quoted(word(p['a']))} and {quoted(word(p['b']))}. Opened {name}: " + " ".join(facts)
    )
    return kit.result(html, state, summary=summary)
