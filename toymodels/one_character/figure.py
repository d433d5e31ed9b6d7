"""Figure "One character at a time": the trained character model, live, cut open, ablated and replayed.

The figure itself is the live prediction (section 1); its slots are the chapter's other
sections, so one state drives them all and lives in the URL:
  run    which shipped model (char_lab.RUNS)       step   its checkpoint ("" = the last)
  text   what the reader typed (kept as typed)     sel    the selected character ("" = the last)
  lh     the head of sections 3-5, "L.H" ("" = the last layer's strongest copier)
  off    heads pulled out, "L.H,L.H"               copy   the nonsense pair's seed (0 = the chapter's)
  at, at_run, write   one-shot requests: the drum's position (an index into at_run's checkpoints),
         write on (any value).
The build pre-renders the defaults; the browser calls this same function under Pyodide.
"""

from ..page.html import attrs, esc, level, num, pct, state_button, tenths, whole
from ..split_attend import param_count
from . import draw, lab
from . import model as cm

DEFAULTS = {
    "run": lab.DEFAULT_RUN,
    "step": "",
    "text": "the queen. the qu",
    "sel": "",
    "lh": "",
    "off": "",
    "copy": "0",
    "at": "",
    "at_run": "",
    "write": "",
}
MAX_TYPED = 200  # the text box keeps this much, known characters or not
WRITE_ON = 24  # characters per press of "Write on"
WINDOW = 24  # the eight small grids show the last this-many characters
ANCHORS = {
    "embed": "numbers",
    "attention": "queries",
    "mlp": "cut-open",
    "residual": "bringing-back",
    "predict": "predict",
}
SECTIONS = (
    "numbers",
    "scores",
    "weights",
    "residual",
    "anatomy",
    "heads",
    "copying",
    "drum",
    "ablate",
)
SUDDEN = 500  # steps: a rise of copying within this many is called sudden
RUN_NAMES = {
    "reference-induction": "Reference size, copies",
    "reference": "Reference recipe",
    "reference-repeats": "Reference size, slow copier",
    "induction": "Twice as wide",
}


def _pairs(text, L, H):
    out = set()
    for part in str(text).split(","):
        l, _, h = part.partition(".")
        if 1 <= (whole(l, 9) or 0) <= L and 1 <= (whole(h, 9) or 0) <= H:
            out.add((int(l), int(h)))
    return sorted(out)


def _off_text(pairs):
    return ",".join(f"{l}.{h}" for l, h in sorted(pairs))


def q(ch):
    return f"“{draw.show_char(ch)}”"


SPOKEN = {" ": "space", ".": "full stop", ",": "comma", "'": "apostrophe"}


def said(ch):
    """A character as a screen reader should say it: '␣' would be read as 'open box'."""
    return SPOKEN.get(ch, ch)


def shown(ch):
    """A character as markup: what the eye needs, and its name for a screen reader."""
    if ch not in SPOKEN:
        return esc(ch)
    return f'<span aria-hidden="true">{esc(draw.show_char(ch))}</span><span class="sr">{SPOKEN[ch]}</span>'


def normalise(state):
    """Defaults filled in, one-shots carried out, every field clamped -> (state, view)."""
    s = {**DEFAULTS, **{k: str(v) for k, v in (state or {}).items() if k in DEFAULTS}}
    if s["run"] not in lab.RUNS:
        s["run"] = DEFAULTS["run"]
    steps = lab.steps(s["run"])
    at = whole(s["at"], 9)
    if (
        at is not None and at < len(steps) and s["at_run"] == s["run"]
    ):  # a drum move made for another model is void
        s["step"] = str(steps[at])
    step = whole(s["step"], 9)
    step = steps[-1] if step is None else lab.nearest_step(s["run"], step)
    s["step"], s["at"], s["at_run"] = ("" if step == steps[-1] else str(step)), "", ""
    params, cfg = lab.checkpoint(s["run"], step)
    L, H = cfg["n_layer"], cfg["n_head"]
    off = _pairs(s["off"], L, H)
    s["off"] = _off_text(off)
    ablate = [(l - 1, h - 1) for l, h in off]
    s["text"] = s["text"][:MAX_TYPED]
    text, rejected = lab.split_text(s["text"])
    room = min(WRITE_ON, lab.MAX_CHARS - len(text), MAX_TYPED - len(s["text"]))
    if s["write"] and text and room > 0:
        more = lab.write_on(params, cfg, text, room, lab.seed_of(s["text"] + s["step"]), ablate)
        s["text"] += more[len(text) :]
        text, rejected = lab.split_text(s["text"])
    s["write"] = ""
    cut = len(text) > lab.MAX_CHARS
    text = text[: lab.MAX_CHARS]
    sel = whole(s["sel"], 9)
    if sel is None or sel >= len(text):
        s["sel"], sel = "", max(len(text) - 1, 0)
    else:
        s["sel"] = str(sel)
    measured = lab.measured(s["run"], step)  # the evaluation's record of this checkpoint
    lh = _pairs(s["lh"], L, H)
    if lh:
        layer, head = lh[0]
        s["lh"] = f"{layer}.{head}"
    else:
        s["lh"] = ""
        induction = measured["induction"][L - 1]
        layer, head = L, 1 + max(range(H), key=lambda h: induction[h])
    seed = whole(s["copy"], 9) or 0
    s["copy"] = str(seed)
    view = {
        "step": step,
        "steps": steps,
        "measured": measured,
        "params": params,
        "cfg": cfg,
        "off": off,
        "ablate": ablate,
        "text": text,
        "rejected": rejected,
        "cut": cut,
        "sel": sel,
        "layer": layer,
        "head": head,
        "seed": seed,
    }
    return s, view


def render(state=None, fid="char-model"):
    """-> {"html": section 1, "slots": the other sections, "state", "error", "summary"}."""
    s, v = normalise(state)
    if not v["text"]:
        why = "Type at least one character the model knows: a to z, space, full stop, comma or apostrophe."
        wait = f'<p class="mh-note">{why}</p>'
        return {
            "html": _predict(s, v, None, fid),
            "slots": {name: wait for name in SECTIONS},
            "state": s,
            "summary": why,
            "error": None,
        }
    r = lab.look(
        v["params"], v["cfg"], v["text"], v["sel"], v["layer"] - 1, v["head"] - 1, v["ablate"]
    )
    demo = lab.copying_demo(v["params"], v["cfg"], v["seed"], v["ablate"])
    best = int(r["probs"].argmax())
    summary = (
        f"After {q(v['text'][-1])} the model ({RUN_NAMES[s['run']]}, step {v['step']:,}) expects "
        f"{q(cm.VOCAB[best])} with {100 * r['probs'][best]:.1f}%."
    )
    slots = {
        "numbers": _numbers(v, r),
        "scores": _scores(v, r),
        "weights": _weights(v, r),
        "residual": _residual(v, r),
        "anatomy": _anatomy(v, r),
        "heads": _heads(s, v, r),
        "copying": _copying(s, v, demo),
        "drum": _drum(s, v),
        "ablate": _ablate(s, v, demo),
    }
    assert set(slots) == set(SECTIONS)
    return {
        "html": _predict(s, v, r, fid),
        "slots": slots,
        "state": s,
        "error": None,
        "summary": summary,
    }


# ---------------------------------------------------------------- 1. live prediction


def run_story(run):
    """How a run was trained and what it measured, in a sentence or two, from its manifest and evaluation."""
    m, ev = lab.manifest(run), lab.evaluation()["runs"][run]
    r, c, end = m["recipe"], m["config"], ev["checkpoints"][-1]
    if r["repeat_share"] or r["nonsense_share"]:
        data = (
            f"Austen's novels, but {r['repeat_share']:.0%} of its training stretches were a passage repeated "
            f"over and over and {r['nonsense_share']:.0%} were repeated nonsense"
        )
    else:
        data = "Austen's novels only"
    when = lab.when_copying_appears(run)
    if when:
        a, b = when
        how = "suddenly, within" if b["step"] - a["step"] <= SUDDEN else "over"
        copies = (
            f"It learned to copy {how} {b['step'] - a['step']:,} steps: {100 * a['copying']:.1f}% of repeated "
            f"nonsense at step {a['step']:,}, {100 * b['copying']:.1f}% at step {b['step']:,}, "
            f"{100 * end['copying']:.1f}% at the end."
        )
    else:
        copies = (
            f"It never learned to copy: {100 * end['copying']:.1f}% of repeated nonsense at the end, "
            "about what guessing letters would score."
        )
    return (
        f"{ev['n_params']:,} parameters ({c['n_layer']} layers, {c['d_model']} numbers per character), "
        f"trained for {r['steps']:,} steps at learning rate {r['lr']:g} on {data}. "
        f"On held-out text it ends at {end['valid_bits']:.2f} bits per character. {copies}"
    )


def _predict(s, v, r, fid):
    """Section 1: the model switch, its story and size, the text box and the bars (r is None without text)."""
    cfg, p = v["cfg"], v["params"]
    runs = "".join(
        state_button("run", run, RUN_NAMES[run], run == s["run"], fk=f"run-{run}")
        for run in lab.RUNS
    )
    g3 = param_count.GPT3
    head = (
        f'<p class="cm-size"><strong>{cfg["n_layer"]} layers × {cfg["n_head"]} heads · {cfg["d_model"]} numbers per '
        f"character · {cm.n_params(p):,} parameters</strong> (counted in the weights you are running). "
        f"GPT-3: {g3['n_layer']} layers × {g3['n_head']} heads · {g3['d_model']:,} numbers per token · about "
        f"{param_count.gpt3_billions()} billion parameters.</p>"
    )
    rejected = ""
    if v["rejected"]:
        chars = ", ".join(dict.fromkeys(q(c) for _, c in v["rejected"]))
        rejected = (
            f'<p class="mh-why cm-rejected" role="status">Not among the model\'s {len(cm.VOCAB)} characters, so left out: '
            f"{esc(chars)}. It knows a to z, space, full stop, comma and apostrophe: no capitals, digits or other signs.</p>"
        )
    if v["cut"]:
        rejected += f'<p class="mh-why" role="status">The model reads the first {lab.MAX_CHARS} characters: the length it was trained on.</p>'
    full = len(v["text"]) >= lab.MAX_CHARS
    form = (
        f'<form class="mh-sentence cm-text" data-state-form="live">'
        f'<label for="{esc(fid)}-text">Text</label>'
        f'<input type="text" id="{esc(fid)}-text" name="text" data-fk="text" value="{esc(s["text"])}" maxlength="{MAX_TYPED}" '
        f'autocomplete="off" autocapitalize="none" spellcheck="false">'
        f'<button type="button"{attrs(data_key="write", data_value="1", data_fk="write", disabled=full)}>Write on</button></form>'
    )
    top = (
        f'<div class="mh-pick" role="group" aria-label="Model" data-roving>{runs}</div>'
        f'<p class="cm-story">{esc(run_story(s["run"]))}</p>{head}{form}{rejected}'
    )
    if r is None:
        return top
    best = int(r["probs"].argmax())
    expects = (
        f'<p class="mh-out cm-next" role="status">After {esc(q(v["text"][-1]))} it expects '
        f"<strong>{esc(q(cm.VOCAB[best]))}</strong> ({100 * r['probs'][best]:.1f}%)."
        + (f" Heads pulled out: {esc(_names(v['off']))}." if v["off"] else "")
        + "</p>"
    )
    return top + expects + scroll(draw.bars(r["probs"], cm.VOCAB), "Next-character probabilities")


def scroll(html, label):
    """A box that scrolls sideways on a narrow screen; focusable, so the keyboard can scroll it too."""
    return (
        f'<div class="cm-scroll" tabindex="0" role="region" aria-label="{esc(label)}">{html}</div>'
    )


def _names(off):
    return ", ".join(f"L{l}H{h}" for l, h in off)


# ---------------------------------------------------------------- 2-5. inside the selected character


def _tape(v, slot, label):
    """The reader's text as buttons: choose a character to select it in every section.
    Built once per render (six sections show it), then named for each section."""
    if "tape" not in v:
        v["tape"] = "".join(
            state_button(
                "sel",
                str(i),
                draw.show_char(c),
                i == v["sel"],
                fk=f"@@-c{i}",
                cls="mh-word cm-ch",
                aria_label=f"character {i + 1}, {said(c)}",
            )
            for i, c in enumerate(v["text"])
        )
    named = v["tape"].replace('data-fk="@@-', f'data-fk="{slot}-')
    return f'<div class="mh-words cm-tape" role="group" aria-label="{esc(label)}" data-roving>{named}</div>'


def _picked(v):
    return f"{q(v['text'][v['sel']])} (character {v['sel'] + 1})"


def _numbers(v, r):
    t = v["sel"]
    return (
        _tape(v, "numbers", "Choose a character")
        + f"<p>{esc(_picked(v))}: its embedding, the position code for place {t + 1}, and their sum, "
        f"{v['cfg']['d_model']} numbers each. Blue and a tick up is positive, orange and a tick down negative.</p>"
        + '<dl class="cm-strips">'
        + f"<dt>embedding of {esc(q(v['text'][t]))}</dt><dd>{draw.strip(r['embed'], 'embedding')}</dd>"
        + f"<dt>position {t + 1}</dt><dd>{draw.strip(r['pos'], 'position code')}</dd>"
        + f"<dt>sum: what layer 1 reads</dt><dd>{draw.strip(r['x0'], 'sum')}</dd></dl>"
    )


def _head_picker(v, slot):
    L, H = v["cfg"]["n_layer"], v["cfg"]["n_head"]
    buttons = "".join(
        state_button(
            "lh", f"{l}.{h}", f"L{l}H{h}", (l, h) == (v["layer"], v["head"]), fk=f"{slot}-h{l}.{h}"
        )
        for l in range(1, L + 1)
        for h in range(1, H + 1)
    )
    return f'<div class="mh-pick cm-heads-pick" role="group" aria-label="Layer and head" data-roving>{buttons}</div>'


def _row_table(v, slot, caption, values, cells):
    """The characters up to the selected one as columns, then the rows of numbers; later ones shuttered."""
    t, T = v["sel"], len(v["text"])
    head = "".join(
        f'<th scope="col"{attrs(class_="sel" if j == t else None)}>{shown(c)}</th>'
        for j, c in enumerate(v["text"])
    )
    body = []
    for name, row in values:
        tds = "".join(cells(j, x) for j, x in enumerate(row))
        if t + 1 < T:
            tds += f'<td class="shutter" colspan="{T - t - 1}">not written yet</td>'
        body.append(f'<tr><th scope="row">{esc(name)}</th>{tds}</tr>')
    return scroll(
        f'<table class="cm-row"><caption>{esc(caption)}</caption><thead><tr><td></td>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>",
        caption,
    )


def _scores(v, r):
    K, scores = v["cfg"]["d_head"], r["scores"]
    top = int(scores.argmax())
    cell = lambda j, x: (
        f"<td{attrs(class_='top' if j == top else None)}>{num(x)}{' ▲' if j == top else ''}</td>"
    )  # noqa: E731
    return (
        _head_picker(v, "scores")
        + _tape(v, "scores", "Choose a character")
        + f"<p>Layer {v['layer']}, head {v['head']}: the query of {esc(_picked(v))} against the key of every "
        f"character up to it. Score = q·k / √{K}. The highest (▲) is {esc(q(v['text'][top]))} at place {top + 1}, "
        f"{num(scores[top])}.</p>"
        + _row_table(
            v,
            "scores",
            f"Scores q·k/√{K} of L{v['layer']}H{v['head']} for {_picked(v)}",
            [("q·k/√" + str(K), scores)],
            cell,
        )
        + f'<dl class="cm-strips"><dt>query of {esc(q(v["text"][v["sel"]]))}</dt><dd>{draw.strip(r["q"], "query")}</dd>'
        f"<dt>key of {esc(q(v['text'][top]))}</dt><dd>{draw.strip(r['k'][top], 'key')}</dd></dl>"
    )


def _weights(v, r):
    w = r["weights"]
    shares = tenths(w)
    cell = lambda j, x: (
        f"<td{attrs(class_='w ' + level(float(w[j])), data_w=repr(float(w[j])))}>{pct(int(x))}</td>"
    )  # noqa: E731
    top = int(w.argmax())
    return (
        _tape(v, "weights", "Choose a character")
        + f"<p>Softmax turns the scores into weights that add to {pct(int(shares.sum()))}: "
        f"{esc(q(v['text'][top]))} at place {top + 1} gets the most, {pct(int(shares[top]))}. "
        f"The characters after {esc(_picked(v))} are behind the shutter: the model cannot see them.</p>"
        + _row_table(
            v,
            "weights",
            f"Weights of L{v['layer']}H{v['head']} for {_picked(v)}, adding to 100%",
            [("weight", shares)],
            cell,
        )
    )


def _residual(v, r):
    w, vals = r["weights"], r["v"]
    shares = tenths(w)  # as the weights table shows them
    order = [int(j) for j in w.argsort()[::-1][:3]]
    terms = " + ".join(f"{pct(int(shares[j]))} × value of {esc(q(v['text'][j]))}" for j in order)
    lines = "".join(
        f"<dt>{pct(int(shares[j]))} × value of {esc(q(v['text'][j]))} (place {j + 1})</dt>"
        f"<dd>{draw.strip(w[j] * vals[j], 'weighted value')}</dd>"
        for j in order
    )
    return (
        _tape(v, "residual", "Choose a character")
        + f"<p>L{v['layer']}H{v['head']} brings back Σ weight × value: here mostly {terms}. "
        f"Its output matrix turns that into {v['cfg']['d_model']} numbers added to {esc(_picked(v))}'s stream.</p>"
        + f'<dl class="cm-strips">{lines}<dt>what L{v["layer"]}H{v["head"]} adds to the stream</dt>'
        f"<dd>{draw.strip(r['head_out'], 'head output')}</dd></dl>"
        + "<p>The stream starts as embedding + position, and every head and MLP adds a vector to it. "
        "The length of each addition (the square root of the sum of its numbers squared):</p>"
        + scroll(
            draw.lengths(r["parts"], "Lengths of what each part adds to the stream"),
            "Lengths of the additions",
        )
        + f"<p>Their sum is the stream that the final norm and the read-out turn into the prediction "
        f"(length {num(draw.length(r['final']))}). "
        "A pulled-out head adds nothing.</p>"
    )


def _anatomy(v, r):
    cfg = v["cfg"]
    rows = "".join(
        f"<dt>layer {l + 1} MLP, {cfg['d_mlp']} neurons</dt><dd>{draw.needles(r['act'][l], f'layer {l + 1} MLP neurons')}</dd>"
        for l in range(cfg["n_layer"])
    )
    return (
        draw.architecture(cfg, ANCHORS)
        + _tape(v, "anatomy", "Choose a character")
        + f"<p>Each MLP widens the stream of {esc(_picked(v))} to {cfg['d_mlp']} neurons, applies GELU and "
        f"narrows it back. Up is a positive output, down a negative one.</p>"
        + f'<dl class="cm-strips">{rows}</dl>'
    )


def _heads(s, v, r):
    labels = lab.labels(s["run"], v["step"])
    T = len(v["text"])
    first = max(0, T - WINDOW)
    items = []
    for layer, head, name, nums in labels:
        att = r["att"][layer - 1, head - 1, first:, first:]
        numbers = (
            f"previous {nums['previous']:.2f} · two back {nums['two_back']:.2f} · itself {nums['itself']:.2f} · "
            f"spaces {nums['spaces']:.2f} · copying {nums['induction']:.2f}"
        )
        off = (layer, head) in v["off"]
        pic = draw.grid(att, first, v["sel"], f"L{layer}H{head} on the last {T - first} characters")
        items.append(
            f"<li{attrs(class_='cm-head' + (' is-off' if off else ''))}>"
            f"{state_button('lh', f'{layer}.{head}', f'L{layer}H{head}', (layer, head) == (v['layer'], v['head']), fk=f'heads-h{layer}.{head}')}"
            f'<strong class="cm-label">{esc(name)}{" (pulled out)" if off else ""}</strong>{pic}'
            f"<small>{numbers}</small></li>"
        )
    span = f"the last {WINDOW} of your {T} characters" if first else f"your {T} characters"
    row = (
        f"the outlined row is {_picked(v)}"
        if v["sel"] >= first
        else f"{_picked(v)} comes before them, so no row is outlined"
    )
    return (
        f"<p>Each picture is one head on {span}: a row for each character looking, darker is more "
        f"attention; {esc(row)}. The labels and numbers are what the evaluation "
        f"measured for step {v['step']:,} on held-out text (mean weight on the previous character, two back, "
        f"itself, spaces) and on repeated nonsense (copying: weight on what came next last time). "
        f"Choose a head to open it above.</p>"
        + _tape(v, "heads", "Choose a character")
        + f'<ul class="cm-heads" aria-label="The {len(labels)} heads" data-roving>{"".join(items)}</ul>'
    )


# ---------------------------------------------------------------- 8-10. copying, training, ablation


def _copying(s, v, demo):
    text, src, T = demo["text"], demo["source"], len(demo["text"])
    L = v["cfg"]["n_layer"]
    looks = demo["to_source"]
    best = max(range(len(looks)), key=lambda h: looks[h])
    chars = "".join(
        f"<span{attrs(class_='src' if i == src else ('now' if i == T - 1 else None))}>{esc(draw.show_char(c))}</span>"
        for i, c in enumerate(text)
    )
    marks = "".join(
        f"<li{attrs(class_='ok' if ch == got else 'miss')}>{esc(q(ch))}: {'✓' if ch == got else '✗ ' + esc(q(got))}</li>"
        for _, ch, got in demo["checks"]
    )
    heads = " · ".join(f"L{L}H{h + 1} {100 * a:.1f}%" for h, a in enumerate(looks))
    end = v["measured"]
    return (
        f'<p class="cm-pair"><span aria-hidden="true">{chars}</span><span class="sr">{esc(text)}</span></p>'
        f'<p class="mh-out">After the second {esc(q(text[-1]))} the letter that came next last time is '
        f"{esc(q(demo['want']))}: the model gives it <strong>{100 * demo['p_want']:.1f}%</strong>"
        f" and its top guess is {esc(q(demo['guess']))}. From that {esc(q(text[-1]))}, layer {L}'s heads put this much "
        f"weight on the earlier {esc(q(demo['want']))}: {heads}; the most is L{L}H{best + 1}.</p>"
        f"<p>Read along the repeat: the model's top guess at each character after the first of the second copy, "
        f'{demo["n_right"]} of {len(demo["checks"])} right here.</p><ul class="cm-checks">{marks}</ul>'
        f"<p>The evaluation measured this on many stretches of repeated nonsense: at step {v['step']:,} this model "
        f"copies <strong>{100 * end['copying']:.1f}%</strong> of the repeated characters right"
        + (" (with every head in; pulling heads out is measured below)" if v["off"] else "")
        + ".</p>"
        f'<button type="button"{attrs(data_key="copy", data_value=str(v["seed"] + 1), data_fk="copy-new")}>A new nonsense pair</button>'
    )


def _drum(s, v):
    steps, step = v["steps"], v["step"]
    i = steps.index(step)
    points = lab.evaluation()["runs"][s["run"]]["checkpoints"]
    now = v["measured"]
    when = lab.when_copying_appears(s["run"])
    jumps = ""
    if when:
        a, b = when
        jumps = (
            '<div class="mh-pick" role="group" aria-label="Jump to" data-roving>'
            + state_button(
                "step",
                str(a["step"]),
                f"Before: step {a['step']:,}",
                step == a["step"],
                fk="drum-before",
            )
            + state_button(
                "step",
                str(b["step"]),
                f"After: step {b['step']:,}",
                step == b["step"],
                fk="drum-after",
            )
            + state_button(
                "step",
                str(steps[-1]),
                f"The end: step {steps[-1]:,}",
                step == steps[-1],
                fk="drum-end",
            )
            + "</div>"
        )
    return (
        f'<form class="cm-drum" data-state-form="live"><label for="drum-at">Training step '
        f"<strong>{step:,}</strong> of {steps[-1]:,} (checkpoint {i + 1} of {len(steps)})</label>"
        f'<input type="range" id="drum-at" name="at" data-fk="drum" min="0" max="{len(steps) - 1}" value="{i}" '
        f'aria-valuetext="step {step:,}"><input type="hidden" name="at_run" value="{esc(s["run"])}"></form>{jumps}'
        f'<p class="cm-busy" data-busy hidden><progress aria-label="Loading"></progress> Loading the weights of that step…</p>'
        f'<p class="mh-out">At step {step:,}: {now["valid_bits"]:.2f} bits per character on held-out '
        f"text, {100 * now['copying']:.1f}% of repeated nonsense copied. Every figure on this page now shows "
        f"the model as it was then.</p>"
        + scroll(draw.plot(points, step, steps[-1]), "Training plot")
        + '<p class="cm-legend"><span>solid, circle: held-out bits per character (left scale, lower is better)</span> '
        "<span>dashed, square: repeated nonsense copied (right scale)</span></p>"
    )


def _ablate(s, v, demo):
    L, H = v["cfg"]["n_layer"], v["cfg"]["n_head"]
    off = set(v["off"])
    buttons = []
    for l in range(1, L + 1):
        for h in range(1, H + 1):
            after = off ^ {(l, h)}
            buttons.append(
                f'<button type="button"{attrs(data_key="off", data_value=_off_text(after), data_fk=f"off-{l}.{h}", aria_pressed=str((l, h) in off).lower(), tabindex="0" if (l, h) == (1, 1) else "-1", class_="cm-toggle")}>'
                f"L{l}H{h}</button>"
            )
    reset = f'<button type="button"{attrs(data_key="off", data_value="", data_fk="off-none", disabled=not off)}>Put every head back</button>'
    ev = lab.evaluation()["runs"][s["run"]]
    ab = ev["ablation"]

    def row(key, name, picked=False):
        m = ab[key]
        return (
            f'<tr{attrs(class_="sel" if picked else None)}><th scope="row">{name} out</th>'
            f"<td>{100 * m['copying']:.1f}%</td><td>{m['valid_bits']:.3f}</td></tr>"
        )

    rows = [
        row(f"L{l}H{h}", f"L{l}H{h}", (l, h) in off)
        for l in range(1, L + 1)
        for h in range(1, H + 1)
    ]
    rows += [row(f"layer{l}", f"all of layer {l}") for l in range(1, L + 1)]
    final = ab["none"]
    live = (
        f"With {esc(_names(v['off']))} out, the copying demo gives {esc(q(demo['want']))} {100 * demo['p_want']:.1f}% "
        f"and gets {demo['n_right']} of {len(demo['checks'])} right."
        if off
        else f"With every head in, the copying demo gives {esc(q(demo['want']))} {100 * demo['p_want']:.1f}%."
    )
    return (
        f'<div class="cm-toggles" role="group" aria-label="Pull heads out: a pressed head is out" data-roving>{"".join(buttons)}</div>'
        f'{reset}<p class="mh-out">{live} The prediction at the top of the page uses the same heads.</p>'
        f'<table class="mh-matrix cm-ablation"><caption>Measured by the evaluation at step {ev["final_step"]:,} '
        f"(every head in: {100 * final['copying']:.1f}% copied, {final['valid_bits']:.3f} bits per character)</caption>"
        f'<thead><tr><th scope="col">pulled out</th><th scope="col">copying</th><th scope="col">held-out bits</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
