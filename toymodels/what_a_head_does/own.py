"""Figure "Your own pair": two texts that differ in a word and two candidate next words, typed
by the reader and measured live by SmolLM2 in the page (live.py): for the token the reader
taps, every head's direct logit attribution beside its attention to the word that differs,
and the patches the reader asks for (a head, a handful of heads, or a whole layer), each with
the share of the logit difference it recovers and the time its forward took.

State: clean, corrupt (the texts), a, b (the candidates, each one token), token (the clean
text's token measured, 0-based; "" for the last), head (the opened head, "L24H4"; "" for the
one with the largest attribution), patch (the heads last asked to be patched together: "L24H4
L20H3", or a layer, "L24"), at (where the patch puts the output back, a value of AT: every
position, the token measured alone, or the changed word alone), way (a value of WAYS: the
clean output into the corrupted run, what it recovers; or the corrupted output into the clean
run, what it loses), patched (the patches asked for on this pair, newest first, "|" between
them, the newest included, each "L24H4" or, with another place or way, "L24H4~token~noise":
what the table of patches lists, so that a link or a reload shows the same table). Until the
reader loads the model, the figure says what it will do and offers the download (the same
files as "Heads that copy", kept once for both).
"""

import re

from ..models import causal
from ..models.causal import live as model
from ..models.smollm2 import live as smollm2
from ..page import kit
from ..page.html import esc, head_name, level, quoted, state_button, whole
from . import live
from .figure import (
    DLA_SCALE,
    head_map,
    head_value,
    logits,
    percent,
    read_head,
    signed_legend,
    signed_level,
    strongest,
    word,
)
from .patching import share

DEFAULTS = {
    "clean": "After Lucy and Mark finished dinner, Mark passed the salt to",
    "corrupt": "After Lucy and Mark finished dinner, Lucy passed the salt to",
    "a": "Lucy",
    "b": "Mark",
    "token": "",
    "head": "",
    "patch": "",
    "at": "every",
    "way": "denoise",
    "patched": "",
}
FRESH = ("token", "head", "patch", "patched")  # what the pair's form sets back to its default
# where a patch puts the output back: value -> (its button, how a row says it, {to} the word)
AT = {
    "every": ("Every position", "at every position"),
    "token": ("The token measured", "at the token measured only"),
    "word": ("The changed word", "at {to} only"),
}
# which way: value -> (its button, how a row says it, the share's verb)
WAYS = {
    "denoise": ("Clean into corrupted", "clean into corrupted", "recovers"),
    "noise": ("Corrupted into clean", "corrupted into clean", "loses"),
}
CHOICES = {"at": tuple(AT), "way": tuple(WAYS)}
MAX_CANDIDATE = 40  # characters of a candidate word
SHOWN_PATCHES = 8  # the latest patches listed
PATCH_ITEM = re.compile(r"[Ll]([0-9]{1,2})(?:[Hh]([0-9]{1,2}))?")


def patch_examples():
    """(placeholder, help) of the patch box, naming heads the open model has: SmolLM2's
    L24H4 L20H3 (layers 4/5 and 2/3 of the way up), a reader's file its own."""
    layers, heads = causal.layers_heads()
    a, b = max(1, round(layers * 4 / 5)), max(1, round(layers * 2 / 3))
    h, g = min(4, heads), min(3, heads)
    return (
        f"L{a}H{h} L{b}H{g}, or L{a}",
        f"Name heads as L{a}H{h} (layer {a}, head {h}) and a whole layer as L{a}, separated "
        "by spaces.",
    )


def read_patch(text):
    """'L24H4 L20' -> (sorted (layer, head) 0-based, the canonical text, None) or, for text
    that names no head of the model, ([], '', a message)."""
    layers, heads = causal.layers_heads()
    chosen = set()
    for item in re.split(r"[\s,;]+", text.strip()):
        if not item:
            continue
        m = PATCH_ITEM.fullmatch(item)
        if not m:
            return [], "", f"{quoted(item[:20])} is not a head. {patch_examples()[1]}"
        L = int(m.group(1)) - 1
        hs = range(heads) if m.group(2) is None else [int(m.group(2)) - 1]
        if not 0 <= L < layers or not all(0 <= h < heads for h in hs):
            return (
                [],
                "",
                (
                    f"{quoted(item)} is not a head of this model: its layers go from L1 to "
                    f"L{layers}, and each has heads H1 to H{heads}."
                ),
            )
        chosen |= {(L, h) for h in hs}
    chosen = sorted(chosen)
    return chosen, patch_text(chosen, heads), None


def patch_text(chosen, heads):
    """[(23, 0) … (23, 8), (19, 2)] -> 'L20H3 L24': a layer whose every head is chosen by its
    name alone."""
    out = []
    for L in sorted({L for L, _ in chosen}):
        hs = [h for layer, h in chosen if layer == L]
        out += [f"L{L + 1}"] if len(hs) == heads else [head_value(L, h) for h in hs]
    return " ".join(out)


def patch_name(chosen, heads):
    """How a patch is said: 'L24 H4', 'layer 24 (all 9 heads)', 'L20 H3 and L24 H4'."""
    parts = []
    for item in patch_text(chosen, heads).split():
        layer, _, head = item[1:].partition("H")
        parts.append(
            head_name(int(layer), int(head)) if head else f"layer {layer} (all {heads} heads)"
        )
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def read(state):
    """The reader's pair as the model reads it -> {note: "load", or what keeps the pair from
    the model; notes: what was done to the texts; pair, ids, a, b (token ids), token}."""
    out = {"note": None, "notes": [], "pair": None}
    if not model.loaded():
        return out | {"note": "load"}
    clean, notes = model.tidy(state["clean"])
    corrupt, more = model.tidy(state["corrupt"])
    out["notes"] = notes + [n for n in more if n not in notes]
    words = [state[k].strip()[:MAX_CANDIDATE] for k in ("a", "b")]
    note = (
        model.problem(clean)
        or (live.NO_CORRUPT if not corrupt.strip() else None)
        or (live.NO_CANDIDATES if not all(words) else None)
    )
    if note:
        return out | {"note": note}
    cands = []
    for w in words:
        ids = live.candidate(w)
        if len(ids) != 1:
            pieces = ", ".join(quoted(model.piece(i)) for i in ids)
            return out | {
                "note": f"{quoted(w)} is {len(ids)} tokens for this model ({pieces}): the "
                "logit difference compares two single tokens, so choose a word it reads whole."
            }
        cands.append(ids[0])
    if cands[0] == cands[1]:
        return out | {"note": live.SAME_CANDIDATES}
    (ids, cut), (bad, cut_bad) = model.encode(clean), model.encode(corrupt)
    if cut or cut_bad:
        out["notes"].append(model.cut_note(ids if cut else bad))
    if len(ids) != len(bad):
        return out | {
            "note": f"The two texts must have the same number of tokens, so that each head’s "
            f"output can be put back token by token: the first has {len(ids)}, the second "
            f"{len(bad)}. Change a word for one the model reads in as many tokens."
        }
    if ids == bad:
        return out | {"note": live.SAME_TEXTS}
    t = whole(state["token"], 4)
    t = len(ids) - 1 if t is None or t >= len(ids) else t
    state["token"] = str(t)
    return out | {"pair": live.pair(ids, bad), "ids": ids, "a": cands[0], "b": cands[1], "token": t}


def form(state, said, fid):
    """The four boxes and the button, in the form that loads the model when asked."""
    box = kit.own_model_attrs("hc-own wh-own", smollm2.files(), smollm2.WARM, smollm2.MEMORY_MB)

    def field(name, label, cls=""):
        most = str(MAX_CANDIDATE) if name in ("a", "b") else None
        return (
            f'<span class="wh-field{cls}"><label class="hc-what" for="{esc(fid)}-{name}">'
            f"{esc(label)}</label> {kit.text_box(fid, name, state[name], maxlength=most)}</span>"
        )

    return (
        f"<form{box}>"
        + field("clean", "Clean text", " wh-text")
        + field("corrupt", "Corrupted text: the same, one word changed", " wh-text")
        + field("a", "Candidate a")
        + field("b", "Candidate b")
        # a new pair starts afresh: its token, head and patches are not the last pair's
        + "".join(f'<input type="hidden" name="{k}" value="">' for k in FRESH)
        + f'<button type="submit" data-fk="own-show">Measure every head</button>{said}</form>'
        + causal.chooser()
        + '<noscript><p class="hc-own-msg">Your own pair: with JavaScript on, this figure runs '
        f"SmolLM2 on two texts you type ({smollm2.size_mb()}, loaded only when you ask)."
        "</p></noscript>"
        '<p class="wh-lms-note">A course package leaves the live model out: this figure works '
        "on the site itself.</p>"
    )


def messages(own):
    note = own["note"]
    if note == "load":
        return smollm2.load_box(
            "Nothing is measured yet: this figure runs SmolLM2 in your browser on the pair "
            "above, or one you type. The same download as in “Heads that copy”: "
            f"{smollm2.size_mb()}, kept for your next visits."
        )
    lines = "".join(f'<p class="hc-own-msg">{esc(n)}</p>' for n in own["notes"])
    if note:
        return lines + f'<p class="hc-own-msg" role="alert">{esc(note)}</p>'
    n = len(own["ids"])
    return lines + f'<p class="hc-own-msg">Your pair, as the model reads it: {n} tokens each.</p>'


def progress(p):
    done, total = p.layers
    line = f"Running your two texts: {done} of {total} layers."
    return (
        f'<p class="hc-progress"><progress max="{total}" value="{done}" '
        f'aria-label="Layers computed"></progress> {esc(line)}</p>'
    ), line


def pair_table(own, lds):
    p, t = own["pair"], own["token"]
    a, b = (quoted(word(model.piece(own[k]))) for k in ("a", "b"))
    rows = []
    for name, trace, ld in zip(("Clean", "Corrupted"), p.traces, lds, strict=True):
        pieces = [esc(model.piece(i)) for i in trace.ids[: t + 1]]
        text = "".join(
            f"<strong>{s}</strong>" if j in p.differ else s for j, s in enumerate(pieces)
        )
        prefers = a if ld > 0 else b
        rows.append(
            f'<tr><th scope="row">{name}</th><td>{text}…</td><td>{esc(logits(ld))}</td>'
            f"<td>{esc(prefers)}</td></tr>"
        )
    return (
        '<div class="hc-scroll"><table class="mh-matrix wh-texts">'
        f"<caption>Up to the token measured, and what comes next: {esc(a)} (a) or {esc(b)} (b)"
        '</caption><thead><tr><th scope="col">Run</th><th scope="col">Text</th>'
        '<th scope="col">logit a − logit b</th><th scope="col">Prefers</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def backwards(own, lds):
    """A note when the clean text does not lean to candidate a more than the corrupted one:
    the shares a patch recovers then read backwards (over 100%, or below 0%)."""
    if lds[0] > max(lds[1], 0):
        return ""
    a, b = (quoted(word(model.piece(own[k]))) for k in ("a", "b"))
    return (
        f'<p class="hc-note">Here the clean text does not prefer {esc(a)} (a) more than the '
        f"corrupted one does: logit a − logit b is {esc(logits(lds[0]))} (clean) against "
        f"{esc(logits(lds[1]))} (corrupted), so a patch’s share recovered reads backwards "
        "(over 100%, or below 0%). Choose as a the word the clean text leads to, and as b the "
        "corrupted text’s.</p>"
    )


def blank_name(piece):
    """A token of white space alone named for a screen reader (its button shows '␣')."""
    return "a line break" if "\n" in piece else "a space"


def patch_form(state, fid, error, to):
    placeholder, hint = patch_examples()
    field = kit.text_box(
        fid,
        "patch",
        state["patch"],
        placeholder=placeholder,
        aria_describedby=f"{fid}-patch-help",
    )
    said = f'<p class="hc-own-msg" role="alert">{esc(error)}</p>' if error else ""
    return (
        '<form class="wh-patch" data-state-form>'
        f'<label class="hc-what" for="{esc(fid)}-patch">Patch together</label> {field} '
        '<button type="submit" data-fk="patch-go">Patch</button> '
        f'<span class="mh-help" id="{esc(fid)}-patch-help">{esc(hint)}</span>{said}</form>'
        + settings(state, to)
    )


def settings(state, to):
    """Where the next patch puts the output back, and which way."""
    at = [(k, v[0] if k != "word" else f"{v[0]}, {to}") for k, v in AT.items()]
    ways = [(k, v[0]) for k, v in WAYS.items()]
    return (
        '<div class="wh-family"><span class="wh-family-name">Put back at</span>'
        + kit.choices("at", at, state["at"], label="Put back at")
        + '</div><div class="wh-family"><span class="wh-family-name">Which way</span>'
        + kit.choices("way", ways, state["way"], label="Which way")
        + "</div>"
    )


def history(state):
    """The patches to list, newest first: state["patch"] (if it names heads) with state's
    place and way, then those of state["patched"] -> (a list of (heads as (layer, head)
    pairs, at, way), the canonical "patched" text)."""
    out = []
    items = [f"{state['patch']}~{state['at']}~{state['way']}", *state["patched"].split("|")]
    for item in items:
        text, at, way = (item.split("~") + ["every", "denoise"])[:3]
        chosen, canonical, error = read_patch(text)
        key = (chosen, at, way)
        if chosen and not error and at in AT and way in WAYS and key not in out:
            out.append(key)
    out = out[:SHOWN_PATCHES]
    heads = causal.layers_heads()[1]
    return out, "|".join(patch_item(c, at, way, heads) for c, at, way in out)


def patch_item(chosen, at, way, heads):
    """One patch as the state's "patched" lists it: 'L24H4', or 'L24H4~token~noise' for
    another place or way than the first of each."""
    text = patch_text(chosen, heads)
    return text if (at, way) == ("every", "denoise") else f"{text}~{at}~{way}"


def patch_rows(own, lds, heads, asked, to):
    """The patches ASKED for that are done, newest first, each read at the token measured:
    which heads, from which run into which and where, the patched run's logit difference and
    the share it recovers (denoising) or loses (noising)."""
    p, t, a, b = own["pair"], own["token"], own["a"], own["b"]
    rows, n = [], p.traces[0].model.n_layer
    for chosen, at, way in asked:
        patch = p.patch(chosen, way, at, t)
        if not patch.complete:
            continue
        ld = patch.logit_diff(t, a, b)
        part = share(ld, *lds, way)
        done = "—" if part is None else f"{WAYS[way][2]} {percent(part)}"
        first = chosen[0][0] + 1  # the forward runs from the first patched layer up
        ran = f"layers {first}–{n}" if first < n else f"layer {n}"
        rows.append(
            f'<tr><th scope="row">{esc(patch_name(chosen, heads))}</th>'
            f"<td>{esc(WAYS[way][1])}, {esc(AT[at][1].format(to=to))}</td>"
            f"<td>{esc(logits(ld))}</td><td>{esc(done)}</td>"
            f"<td>{1000 * patch.seconds:.0f} ms, {ran}</td></tr>"
        )
    if not rows:
        return ""
    return (
        '<div class="hc-scroll"><table class="mh-matrix wh-patches">'
        "<caption>Each head’s output put from one run into the other, where the row says; "
        "the logit difference read at the token measured</caption>"
        '<thead><tr><th scope="col">Heads</th><th scope="col">Patched</th>'
        '<th scope="col">logit a − logit b</th><th scope="col">Share of the difference</th>'
        '<th scope="col">Its forward</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def head_section(state, own, at, att, dla, to):
    L, H = at
    name = head_name(L + 1, H + 1)
    a = quoted(word(model.piece(own["a"])))
    facts = [
        f"Attention from the token measured to {to}: {percent(att[L, H])}.",
        f"Direct logit attribution: {logits(dla[L, H])} towards {a}.",
    ]
    buttons = "".join(
        state_button("patch", value, text, state["patch"] == value, fk=f"patch-{value}")
        for value, text in (
            (head_value(L, H), f"Patch {name}"),
            (f"L{L + 1}", f"Patch all of layer {L + 1}"),
        )
    )
    html = (
        f'<section class="hc-opened" aria-label="{esc(name)}, opened"><h3>{esc(name)}</h3>'
        f"<ul>{''.join(f'<li>{esc(f)}</li>' for f in facts)}</ul>"
        f'<div class="mh-pick" role="group" aria-label="Patch">{buttons}</div></section>'
    )
    return html, f"Opened {name}: " + " ".join(facts)


def render(state=None, fid="what-own"):
    state = kit.merge(DEFAULTS, state, choices=CHOICES)
    for key in ("clean", "corrupt"):
        state[key] = state[key][: model.MAX_CHARS + 1]
    for key in ("a", "b"):
        state[key] = state[key][:MAX_CANDIDATE]
    state["patch"] = state["patch"][:200]
    state["patched"] = state["patched"][: 100 * SHOWN_PATCHES]
    try:
        own = read(state)
        p = own["pair"]
        if p is not None and not p.complete:
            p.advance()
    except MemoryError:
        own, p = {"note": model.MEMORY, "notes": [], "pair": None}, None
    said = messages(own)
    if p is None:
        summary = "Your own pair: " + (
            f"load SmolLM2 ({smollm2.size_mb()}) to measure it."
            if own["note"] == "load"
            else own["note"]
        )
        return kit.result(
            form(state, said, fid) + kit.summary_line(summary), state, summary=summary
        )
    if not p.complete:
        bar, line = progress(p)
        return kit.result(form(state, said, fid) + bar, state, summary=line, more=True)
    return _measured(state, own, said, fid)


def advance_patches(p, asked, heads, t):
    """The first of the patches ASKED for that is not done goes a piece further -> (the line
    saying how far it is, or "" once it is done; whether any is still to be done)."""
    working = ""
    for c, at, way in asked:
        patch = p.patch(c, way, at, t)
        if not patch.complete:
            patch.advance(model.BUDGET_S)
            if not patch.complete:
                working = (
                    f'<p class="hc-progress">Patching {esc(patch_name(c, heads))}: layer '
                    f"{patch.done} of {p.traces[0].model.n_layer}…</p>"
                )
            break
    return working, any(not p.patch(c, way, at, t).complete for c, at, way in asked)


def two_maps(att, dla, at, measured, to):
    """The attention map and the direct attribution map, side by side, AT opened."""
    maps = (
        ("att", f"Attention from {measured} to {to}", att, level, percent, "attention"),
        ("dla", f"Direct logit attribution at {measured}", dla, signed, logits, "attribution"),
    )
    drawn = []
    for key, title, values, colour, shown, name in maps:
        legend = (
            kit.legend(None)
            if key == "att"
            else signed_legend(f"−{DLA_SCALE:g}", f"+{DLA_SCALE:g} logit")
        )
        table = head_map(key, title, values, colour, lambda v, s=shown, n=name: f"{n} {s(v)}", at)
        drawn.append(f'<div class="wh-one">{table}{legend}</div>')
    return f'<div class="wh-maps">{"".join(drawn)}</div>'


def signed(v):
    return signed_level(v, DLA_SCALE)


def _measured(state, own, said, fid):
    """The figure once both texts have run: the tokens, the two texts' logit differences, the
    two maps, the opened head and the patches (the first not done computed a piece further)."""
    p, t, a, b = own["pair"], own["token"], own["a"], own["b"]
    heads = p.traces[0].model.n_head
    lds = p.logit_diffs(t, a, b)
    dla = p.attribution(t, a, b)["heads"]
    att = p.attention(t)
    to = quoted("".join(model.piece(own["ids"][j]) for j in p.differ).strip())
    at = read_head(state["head"])
    if at is None or at[0] >= dla.shape[0] or at[1] >= dla.shape[1]:  # not a head of this model
        at = strongest(abs(dla))
    state["head"] = head_value(*at)
    chosen, text, error = read_patch(state["patch"])
    if chosen:
        state["patch"] = text
    asked, state["patched"] = history(state)
    working, more = advance_patches(p, asked, heads, t)
    piece = model.piece(own["ids"][t])
    measured = quoted(word(piece) or piece)
    pieces = [model.piece(i) for i in own["ids"]]
    tokens = kit.token_buttons(
        [q if q.strip() else "␣" for q in pieces],  # a piece of white space alone shows '␣'
        t,
        key="token",
        label="The token measured: its next-word guess is what a and b compete for",
        fk="t",
        group="hc-tokens",
        names=lambda i: None if pieces[i].strip() else blank_name(pieces[i]),
        pieces=True,
    )
    opened, facts = head_section(state, own, at, att, dla, to)
    note = (
        f'<p class="hc-note">The two texts are the same up to the token measured, so nothing '
        f"differs for patching to recover: choose {to} or a token after it.</p>"
        if t < p.differ[0]
        else backwards(own, lds)
    )
    html = (
        form(state, said, fid)
        + tokens
        + pair_table(own, lds)
        + two_maps(att, dla, at, measured, to)
        + opened
        + patch_form(state, fid, error, to)
        + working
        + note
        + patch_rows(own, lds, heads, asked, to)
    )
    summary = (
        f"Your pair at {measured}: logit a − logit b {logits(lds[0])} (clean), "
        f"{logits(lds[1])} (corrupted). {facts}"
    )
    return kit.result(html + kit.summary_line(summary), state, summary=summary, more=more)
