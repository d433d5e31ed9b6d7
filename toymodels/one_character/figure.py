"""Figure "One character at a time": the trained character model, live, cut open, ablated and
replayed.

The figure itself is the live prediction (section 1); its slots are the chapter's other
sections, so one state drives them all and lives in the URL:
  model       which shipped model (lab.RUNS), or "yours": the reader's own, trained in this tab
              ("Train it yourself", yours.py); without one the figure shows the default and
              says why
  step        its checkpoint ("" = the last)
  text        what the reader typed (kept as typed)
  character   the selected character ("" = the last)
  head        the head of sections 3-5, "L.H" ("" = the last layer's strongest copier)
  pulled_out  heads pulled out, "L.H,L.H"
  nonsense    the nonsense pair's seed (0 = the chapter's)
  drum, drum_model, write   one-shot requests: the drum's position (an index into
              drum_model's checkpoints), write on (any value).
Links shared before the fields had these names use run, sel, lh, off, copy, at and at_run
(ALIASES). The build pre-renders the defaults; the browser calls this same function under
Pyodide.
"""

from dataclasses import dataclass

from ..many_heads.sizes import GPT3
from ..models.charmodel import model as cm
from ..page import kit
from ..page.figure import merge, result
from ..page.html import (
    attrs,
    capital,
    esc,
    head_name,
    level,
    num,
    pct,
    quoted,
    state_button,
    tenths,
    whole,
)
from ..split_attend import param_count
from . import draw, lab, train_live, yours

DEFAULTS = {
    "model": lab.DEFAULT_RUN,
    "step": "",
    "text": "the queen. the qu",
    "character": "",
    "head": "",
    "pulled_out": "",
    "nonsense": "0",
    "drum": "",
    "drum_model": "",
    "write": "",
}
ALIASES = {  # the names of links shared before
    "run": "model",
    "sel": "character",
    "lh": "head",
    "off": "pulled_out",
    "copy": "nonsense",
    "at": "drum",
    "at_run": "drum_model",
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
RUN_NAMES = lab.RUN_NAMES  # what each model is: "with repeats", "twice as wide", …
CHOICES = {"model": lab.RUNS}
WORD_FIELD = "character"


def _pairs(text, L, H):
    """'2.3,1.1' -> [(1, 1), (2, 3)]: the (layer, head) pairs named, 1-based, that exist."""
    out = set()
    for part in str(text).split(","):
        layer, _, head = part.partition(".")
        if 1 <= (whole(layer, 9) or 0) <= L and 1 <= (whole(head, 9) or 0) <= H:
            out.add((int(layer), int(head)))
    return sorted(out)


def _pairs_text(pairs):
    return ",".join(f"{layer}.{head}" for layer, head in sorted(pairs))


def quoted_char(ch):
    """A character in curly quotes, a space shown as '␣'."""
    return quoted(draw.show_char(ch))


SPOKEN = {" ": "space", ".": "full stop", ",": "comma", "'": "apostrophe"}


def said(ch):
    """A character as a screen reader should say it: '␣' would be read as 'open box'."""
    return SPOKEN.get(ch, ch)


def shown(ch):
    """A character as markup: what the eye needs, and its name for a screen reader."""
    if ch not in SPOKEN:
        return esc(ch)
    return (
        f'<span aria-hidden="true">{esc(draw.show_char(ch))}</span>'
        f'<span class="sr">{SPOKEN[ch]}</span>'
    )


def _snapshot_or_take():
    """The reader's snapshot; if none was picked but the trainer has a run, one taken now."""
    if yours.get() is None and train_live.current_step() is not None:
        train_live.pick()
    return yours.get()


@dataclass(frozen=True)
class View:
    """What one normalised state shows: the model at its checkpoint and the reader's text,
    read once by normalise() and passed to every section of the figure."""

    step: int  # the checkpoint shown
    steps: list  # every checkpoint of the model (one for the reader's own)
    measured: dict  # the evaluation's record of that checkpoint (lab.measured)
    params: dict  # the weights (model.py's names -> arrays)
    cfg: dict  # n_layer, n_head, d_model, ...
    pulled_out: list  # heads pulled out, (layer, head) from 1
    ablate: list  # the same from 0, as the model takes them
    text: str  # the characters the model reads, at most max_chars
    rejected: list  # (index, character) the model does not know, left out
    cut: bool  # the text was longer than max_chars
    selected: int  # the selected character's index in text
    layer: int  # the head of sections 3-5: its layer, from 1
    head: int  # and its head, from 1
    seed: int  # the nonsense pair's seed
    snap: dict | None  # the reader's own model, when it is the one shown
    note: str  # why the figure shows another model than asked for ("" if none)
    max_chars: int  # the longest text this model reads


def normalise(state):
    """Defaults filled in, one-shots carried out, every field clamped -> kit.Normalised, with
    .view: what the state shows (View)."""
    state = merge(DEFAULTS, state, ALIASES)
    snap, note = None, ""
    if state["model"] == yours.NAME:
        snap = _snapshot_or_take()
        if snap is None:
            state["model"], note = DEFAULTS["model"], yours.NO_MODEL
    elif state["model"] not in lab.RUNS:
        state["model"] = DEFAULTS["model"]
    run = state["model"]
    if snap:  # one model, no checkpoints
        steps = [snap["step"]]
        step = snap["step"]
        state["step"] = ""
        params, cfg = snap["params"], snap["cfg"]
    else:
        steps = lab.steps(run)
        drum = whole(state["drum"], 9)
        if drum is not None and drum < len(steps) and state["drum_model"] == run:
            state["step"] = str(steps[drum])  # a drum move made for another model is void
        step = whole(state["step"], 9)
        step = steps[-1] if step is None else lab.nearest_step(run, step)
        state["step"] = "" if step == steps[-1] else str(step)
        params, cfg = lab.checkpoint(run, step)
    state["drum"], state["drum_model"] = "", ""
    max_chars = snap["max_chars"] if snap else lab.MAX_CHARS
    L, H = cfg["n_layer"], cfg["n_head"]
    pulled_out = _pairs(state["pulled_out"], L, H)
    state["pulled_out"] = _pairs_text(pulled_out)
    ablate = [(layer - 1, head - 1) for layer, head in pulled_out]
    state["text"] = state["text"][:MAX_TYPED]
    text, rejected = lab.split_text(state["text"])
    room = min(WRITE_ON, max_chars - len(text), MAX_TYPED - len(state["text"]))
    if state["write"] and text and room > 0:
        seed = lab.seed_of(state["text"] + state["step"])
        more = lab.write_on(params, cfg, text, room, seed, ablate, max_chars)
        state["text"] += more[len(text) :]
        text, rejected = lab.split_text(state["text"])
    state["write"] = ""
    cut = len(text) > max_chars
    text = text[:max_chars]
    selected = whole(state["character"], 9)
    if selected is None or selected >= len(text):
        state["character"], selected = "", max(len(text) - 1, 0)
    else:
        state["character"] = str(selected)
    # the evaluation's record of this checkpoint, or the reader's model's, taken when picked
    measured = snap["measured"] if snap else lab.measured(run, step)
    chosen = _pairs(state["head"], L, H)
    if chosen:
        layer, head = chosen[0]
        state["head"] = f"{layer}.{head}"
    else:
        state["head"] = ""
        induction = measured["induction"][L - 1]
        layer, head = L, 1 + max(range(H), key=lambda h: induction[h])
    seed = whole(state["nonsense"], 9) or 0
    state["nonsense"] = str(seed)
    view = View(
        step=step,
        steps=steps,
        measured=measured,
        params=params,
        cfg=cfg,
        pulled_out=pulled_out,
        ablate=ablate,
        text=text,
        rejected=rejected,
        cut=cut,
        selected=selected,
        layer=layer,
        head=head,
        seed=seed,
        snap=snap,
        note=note,
        max_chars=max_chars,
    )
    return kit.Normalised(state, view=view)


def render(state=None, fid="char-model"):
    """-> the figure's html (section 1), its slots (the other sections), state, error (always
    None) and summary."""
    read = normalise(state)
    state, view = read.state, read.view
    if not view.text:
        why = (
            "Type at least one character the model knows: "
            "a to z, space, full stop, comma or apostrophe."
        )
        wait = f'<p class="mh-note">{why}</p>'
        slots = {name: wait for name in SECTIONS}
        return result(_predict(state, view, None, fid), state, slots=slots, summary=why)
    look = lab.look(
        view.params,
        view.cfg,
        view.text,
        view.selected,
        view.layer - 1,
        view.head - 1,
        view.ablate,
    )
    demo = lab.copying_demo(view.params, view.cfg, view.seed, view.ablate)
    best = int(look["probs"].argmax())
    summary = (
        f"After {quoted_char(view.text[-1])} the model ({_run_name(state, view)}, "
        f"step {view.step:,}) expects {quoted_char(cm.VOCAB[best])} "
        f"with {100 * look['probs'][best]:.1f}%."
    )
    slots = {
        "numbers": _numbers(view, look),
        "scores": _scores(view, look),
        "weights": _weights(view, look),
        "residual": _residual(view, look),
        "anatomy": _anatomy(view, look),
        "heads": _heads(state, view, look),
        "copying": _copying(view, demo),
        "drum": _drum(state, view),
        "ablate": _ablate(state, view, demo),
    }
    assert set(slots) == set(SECTIONS)
    return result(_predict(state, view, look, fid), state, slots=slots, summary=summary)


# ------------------------------------------------------------ 1. live prediction


def _run_name(state, view):
    return "yours" if view.snap else RUN_NAMES[state["model"]]


def your_story(snap):
    """How the reader's model was trained and what it measured when picked."""
    r, cfg, m = snap["recipe"], snap["cfg"], snap["measured"]
    return (
        f"Your model: {snap['n_params']:,} parameters ({cfg['n_layer']} layers, "
        f"{cfg['d_model']} numbers per character), trained in this tab for {snap['step']:,} "
        f"steps at learning rate {r['lr']:g} on random letter-words, {r['share']:.0%} of the "
        f"stretches repeated nonsense (seed {r['seed']}). When you picked it, it copied "
        f"{100 * m['copying']:.1f}% of the trainer's {snap['n_copy']} stretches of repeated "
        f"nonsense. The figure keeps it as it was then: more training changes it only when you "
        "pick it again in \u2018Train it yourself\u2019."
    )


def run_story(run):
    """How a run was trained and what it measured, in a sentence or two, from its evaluation."""
    evaluation = lab.evaluation()["runs"][run]
    recipe, config, end = evaluation["recipe"], evaluation["config"], evaluation["checkpoints"][-1]
    if recipe["repeat_share"] or recipe["nonsense_share"]:
        data = (
            f"Austen's novels, but {recipe['repeat_share']:.0%} of its training stretches were a "
            f"passage repeated over and over and {recipe['nonsense_share']:.0%} were repeated "
            "nonsense"
        )
    else:
        data = "Austen's novels only"
    when = lab.when_copying_appears(run)
    if when:
        before, after = when
        took = after["step"] - before["step"]
        how = "suddenly, within" if took <= SUDDEN else "over"
        copies = (
            f"It learned to copy {how} {took:,} steps: "
            f"{100 * before['copying']:.1f}% of repeated nonsense at step {before['step']:,}, "
            f"{100 * after['copying']:.1f}% at step {after['step']:,}, "
            f"{100 * end['copying']:.1f}% at the end."
        )
    else:
        copies = (
            f"It never learned to copy: {100 * end['copying']:.1f}% of repeated nonsense at the "
            "end, about what guessing letters would score."
        )
    return (
        f"{evaluation['n_params']:,} parameters ({config['n_layer']} layers, "
        f"{config['d_model']} numbers per character), trained for {recipe['steps']:,} steps at "
        f"learning rate {recipe['lr']:g} on {data}. On held-out text it ends at "
        f"{end['valid_bits']:.2f} bits per character. {copies}"
    )


def _size(view):
    """The model's size in the weights running, beside GPT-3's."""
    cfg = view.cfg
    return (
        f'<p class="cm-size"><strong>{cfg["n_layer"]} layers × {cfg["n_head"]} heads · '
        f"{cfg['d_model']} numbers per character · {cm.n_params(view.params):,} parameters"
        "</strong> (counted in the weights you are running). "
        f"GPT-3: {GPT3['n_layer']} layers × {GPT3['n_head']} heads · {GPT3['d_model']:,} "
        f"numbers per token · about {param_count.gpt3_billions()} billion parameters.</p>"
    )


def _predict(state, view, look, fid):
    """Section 1: the model switch, its story and size, the text box and the bars (look is None
    without text)."""
    fid = esc(fid)
    runs = [(run, capital(RUN_NAMES[run])) for run in lab.RUNS]
    snap = view.snap or yours.get()
    offered = snap["step"] if snap else train_live.current_step()
    if offered is not None:  # the reader's model, once the trainer has one
        runs.append((yours.NAME, f"Yours (step {offered:,})"))
    story = your_story(view.snap) if view.snap else run_story(state["model"])
    note = f'<p class="mh-why cm-no-model" role="status">{esc(view.note)}</p>' if view.note else ""
    rejected = ""
    if view.rejected:
        chars = ", ".join(dict.fromkeys(quoted_char(c) for _, c in view.rejected))
        rejected = (
            '<p class="mh-why cm-rejected" role="status">'
            f"Not among the model's {len(cm.VOCAB)} characters, so left out: {esc(chars)}. "
            "It knows a to z, space, full stop, comma and apostrophe: "
            "no capitals, digits or other signs.</p>"
        )
    if view.cut:
        rejected += (
            f'<p class="mh-why" role="status">The model reads the first {view.max_chars} '
            "characters: the length it was trained on.</p>"
        )
    full = len(view.text) >= view.max_chars
    write = attrs(data_key="write", data_value="1", data_fk="write", disabled=full)
    form = (
        f'<form class="mh-sentence cm-text" data-state-form="live">'
        f'<label for="{fid}-text">Text</label>'
        f'<input type="text" id="{fid}-text" name="text" data-fk="text" '
        f'value="{esc(state["text"])}" maxlength="{MAX_TYPED}" '
        f'autocomplete="off" autocapitalize="none" spellcheck="false">'
        f'<button type="button"{write}>Write on</button></form>'
    )
    top = (
        kit.choices("model", runs, state["model"], label="Model", fk=lambda run: f"run-{run}")
        + note
        + f'<p class="cm-story">{esc(story)}</p>'
        + f"{_size(view)}{form}{rejected}"
    )
    if look is None:
        return top
    best = int(look["probs"].argmax())
    pulled_out = view.pulled_out
    expects = (
        f'<p class="mh-out cm-next" role="status">After {esc(quoted_char(view.text[-1]))} '
        f"it expects <strong>{esc(quoted_char(cm.VOCAB[best]))}</strong> "
        f"({100 * look['probs'][best]:.1f}%)."
        + (f" Heads pulled out: {esc(_names(pulled_out))}." if pulled_out else "")
        + "</p>"
    )
    bars = draw.bars(look["probs"], cm.VOCAB)
    return top + expects + scroll(bars, "Next-character probabilities")


def scroll(html, label):
    """A box that scrolls sideways on a narrow screen; focusable, so the keyboard can scroll it
    too."""
    return (
        f'<div class="cm-scroll" tabindex="0" role="region" aria-label="{esc(label)}">{html}</div>'
    )


def _names(pairs):
    return ", ".join(head_name(layer, head) for layer, head in pairs)


# ------------------------------------------------------------ 2-5. inside the selected character


_tapes = {}  # (text, slot, label) -> the tape with no character pressed, for the last texts
KEEP_TAPES = 4 * 6


def _tape(view, slot, label):
    """The reader's text as buttons: choose a character to select it in every section. Drawn
    once per text and slot and kept; a tap only moves the pressed button, byte for byte what
    kit.token_buttons draws with that character selected."""
    text, i = view.text, view.selected
    key = (text, slot, label)
    if key not in _tapes:
        if len(_tapes) >= KEEP_TAPES:
            _tapes.pop(next(iter(_tapes)))
        _tapes[key] = kit.token_buttons(
            [draw.show_char(c) for c in text],
            None,
            key="character",
            label=label,
            fk=f"{slot}-c",
            cls=lambda i: "cm-ch",
            group="cm-tape",
            names=lambda i: f"character {i + 1}, {said(text[i])}",
        )
    if i is None:
        return _tapes[key]
    at = f'data-fk="{slot}-c{i}" aria-pressed='
    return _tapes[key].replace(f'{at}"false" tabindex="-1"', f'{at}"true" tabindex="0"', 1)


def _picked(view):
    return f"{quoted_char(view.text[view.selected])} (character {view.selected + 1})"


def _numbers(view, look):
    at = view.selected
    return (
        _tape(view, "numbers", "Choose a character")
        + f"<p>{esc(_picked(view))}: its embedding, the position code for place {at + 1}, "
        f"and their sum, {view.cfg['d_model']} numbers each. Blue and a tick up is positive, "
        "orange and a tick down negative.</p>"
        + '<dl class="cm-strips">'
        + f"<dt>embedding of {esc(quoted_char(view.text[at]))}</dt>"
        f"<dd>{draw.strip(look['embed'], 'embedding')}</dd>"
        + f"<dt>position {at + 1}</dt><dd>{draw.strip(look['pos'], 'position code')}</dd>"
        + f"<dt>sum: what layer 1 reads</dt><dd>{draw.strip(look['x0'], 'sum')}</dd></dl>"
    )


def _head_button(view, slot, layer, head):
    """A button that opens head (LAYER, HEAD) in sections 3-5."""
    return state_button(
        "head",
        f"{layer}.{head}",
        head_name(layer, head),
        (layer, head) == (view.layer, view.head),
        fk=f"{slot}-h{layer}.{head}",
    )


def _head_picker(view, slot):
    """Every head as a button, to open it in sections 3-5."""
    L, H = view.cfg["n_layer"], view.cfg["n_head"]
    heads = [
        (f"{layer}.{head}", head_name(layer, head))
        for layer in range(1, L + 1)
        for head in range(1, H + 1)
    ]
    return kit.choices(
        "head",
        heads,
        f"{view.layer}.{view.head}",
        label="Layer and head",
        cls="mh-pick cm-heads-pick",
        fk=lambda value: f"{slot}-h{value}",
    )


def _row_table(view, caption, values, cells):
    """One number per character up to the selected one, later ones shuttered. Each character is a
    row (its character, then its numbers), and the rows stand side by side and wrap like words
    (charmodel.css): the table fits any width, and never scrolls sideways."""
    at, text = view.selected, view.text
    head = "".join(f'<th scope="col">{esc(name)}</th>' for name, _ in values)
    body = []
    for j, c in enumerate(text):
        if j <= at:
            tds = "".join(cells(j, row[j]) for _, row in values)
        else:
            tds = '<td class="shutter"><span class="sr">not written yet</span></td>' * len(values)
        body.append(
            f'<tr{attrs(class_="sel" if j == at else None)}><th scope="row">{shown(c)}</th>'
            f"{tds}</tr>"
        )
    return (
        f'<table class="cm-row"><caption>{esc(caption)}</caption>'
        f'<thead><tr><th scope="col">character</th>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def _head_name(view):
    return head_name(view.layer, view.head)


def _scores(view, look):
    K, scores = view.cfg["d_head"], look["scores"]
    top = int(scores.argmax())

    def cell(j, x):
        mark = " ▲" if j == top else ""
        return f"<td{attrs(class_='top' if j == top else None)}>{num(x)}{mark}</td>"

    text = view.text
    return (
        _head_picker(view, "scores")
        + _tape(view, "scores", "Choose a character")
        + f"<p>Layer {view.layer}, head {view.head}: the query of {esc(_picked(view))} "
        f"against the key of every character up to it. Score = q·k / √{K}. "
        f"The highest (▲) is {esc(quoted_char(text[top]))} at place {top + 1}, "
        f"{num(scores[top])}.</p>"
        + _row_table(
            view,
            f"Scores q·k/√{K} of {_head_name(view)} for {_picked(view)}",
            [("q·k/√" + str(K), scores)],
            cell,
        )
        + f'<dl class="cm-strips"><dt>query of {esc(quoted_char(text[view.selected]))}</dt>'
        f"<dd>{draw.strip(look['q'], 'query')}</dd>"
        f"<dt>key of {esc(quoted_char(text[top]))}</dt>"
        f"<dd>{draw.strip(look['k'][top], 'key')}</dd></dl>"
    )


def _weights(view, look):
    weights = look["weights"]
    shares = tenths(weights)

    def cell(j, x):
        weight = float(weights[j])
        return f"<td{attrs(class_='w ' + level(weight), data_w=repr(weight))}>{pct(int(x))}</td>"

    top = int(weights.argmax())
    return (
        _tape(view, "weights", "Choose a character")
        + "<p>Softmax turns the scores into weights that add to 100%: "
        f"{esc(quoted_char(view.text[top]))} at place {top + 1} gets the most, "
        f"{pct(int(shares[top]))}. The characters after {esc(_picked(view))} are behind the "
        "shutter: the model cannot see them.</p>"
        + _row_table(
            view,
            f"Weights of {_head_name(view)} for {_picked(view)}, adding to 100%",
            [("weight", shares)],
            cell,
        )
    )


def _residual(view, look):
    weights, values = look["weights"], look["v"]
    order = [int(j) for j in weights.argsort()[::-1][:3]]

    def share_of(j):  # as the weights table shows it
        return f"{kit.share(weights, j)} × value of {esc(quoted_char(view.text[j]))}"

    terms = " + ".join(share_of(j) for j in order)
    lines = "".join(
        f"<dt>{share_of(j)} (place {j + 1})</dt>"
        f"<dd>{draw.strip(weights[j] * values[j], 'weighted value')}</dd>"
        for j in order
    )
    name = _head_name(view)
    lengths = draw.lengths(look["parts"], "Lengths of what each part adds to the stream")
    return (
        _tape(view, "residual", "Choose a character")
        + f"<p>{name} brings back Σ weight × value: here mostly {terms}. "
        f"Its output matrix turns that into {view.cfg['d_model']} numbers added to "
        f"{esc(_picked(view))}'s stream.</p>"
        + f'<dl class="cm-strips">{lines}<dt>what {name} adds to the stream</dt>'
        f"<dd>{draw.strip(look['head_out'], 'head output')}</dd></dl>"
        + "<p>The stream starts as embedding + position, and every head and MLP adds a vector "
        "to it. The length of each addition (the square root of the sum of its numbers "
        "squared):</p>"
        + scroll(lengths, "Lengths of the additions")
        + "<p>Their sum is the stream that the final norm and the read-out turn into the "
        f"prediction (length {num(draw.length(look['final']))}). "
        "A pulled-out head adds nothing.</p>"
    )


def _anatomy(view, look):
    cfg = view.cfg
    rows = "".join(
        f"<dt>layer {layer + 1} MLP, {cfg['d_mlp']} neurons</dt>"
        f"<dd>{draw.needles(look['act'][layer], f'layer {layer + 1} MLP neurons')}</dd>"
        for layer in range(cfg["n_layer"])
    )
    return (
        draw.architecture(cfg, ANCHORS)
        + _tape(view, "anatomy", "Choose a character")
        + f"<p>Each MLP widens the stream of {esc(_picked(view))} to {cfg['d_mlp']} neurons, "
        "applies GELU and narrows it back. Up is a positive output, down a negative one.</p>"
        + f'<dl class="cm-strips">{rows}</dl>'
    )


def _heads(state, view, look):
    labels = lab.labels_of(view.measured)
    T = len(view.text)
    first = max(0, T - WINDOW)
    items = []
    for layer, head, name, nums in labels:
        att = look["att"][layer - 1, head - 1, first:, first:]
        numbers = (
            f"previous {nums['previous']:.2f} · two back {nums['two_back']:.2f} · "
            f"itself {nums['itself']:.2f} · spaces {nums['spaces']:.2f} · "
            f"copying {nums['induction']:.2f}"
        )
        out = (layer, head) in view.pulled_out
        label = f"{head_name(layer, head)} on the last {T - first} characters"
        picture = draw.grid(att, first, view.selected, label)
        items.append(
            f"<li{attrs(class_='cm-head' + (' is-off' if out else ''))}>"
            f"{_head_button(view, 'heads', layer, head)}"
            f'<strong class="cm-label">{esc(name)}{" (pulled out)" if out else ""}</strong>'
            f"{picture}<small>{numbers}</small></li>"
        )
    span = f"the last {WINDOW} of your {T} characters" if first else f"your {T} characters"
    row = (
        f"the outlined row is {_picked(view)}"
        if view.selected >= first
        else f"{_picked(view)} comes before them, so no row is outlined"
    )
    where = (
        f"measured on your model when you picked it (step {view.step:,}), on "
        f"{view.snap['n_copy']} stretches of random words that never repeat"
        if view.snap
        else f"the evaluation measured for step {view.step:,} on held-out text"
    )
    return (
        f"<p>Each picture is one head on {span}: a row for each character looking, darker is "
        f"more attention; {esc(row)}. The labels and numbers are what {where} (mean weight on "
        "the previous character, two back, itself, spaces) and on repeated nonsense (copying: "
        "weight on what came next last time). Choose a head to open it above.</p>"
        + _tape(view, "heads", "Choose a character")
        + f'<ul class="cm-heads" aria-label="The {len(labels)} heads" data-roving>'
        f"{''.join(items)}</ul>"
    )


# ------------------------------------------------------------ 8-10. copying, training, ablation


def _copying(view, demo):
    text, source, T = demo["text"], demo["source"], len(demo["text"])
    L = view.cfg["n_layer"]
    looks = demo["to_source"]
    best = max(range(len(looks)), key=lambda h: looks[h])

    def char(i, c):
        cls = "src" if i == source else ("now" if i == T - 1 else None)
        return f"<span{attrs(class_=cls)}>{esc(draw.show_char(c))}</span>"

    def mark(ch, got):
        right = ch == got
        verdict = "✓" if right else "✗ " + esc(quoted_char(got))
        return (
            f"<li{attrs(class_='ok' if right else 'miss')}>{esc(quoted_char(ch))}: {verdict}</li>"
        )

    chars = "".join(char(i, c) for i, c in enumerate(text))
    marks = "".join(mark(ch, got) for _, ch, got in demo["checks"])
    heads = " · ".join(
        f"{head_name(L, head + 1)} {100 * share:.1f}%" for head, share in enumerate(looks)
    )
    end = view.measured
    last, want = esc(quoted_char(text[-1])), esc(quoted_char(demo["want"]))
    new_pair = attrs(data_key="nonsense", data_value=str(view.seed + 1), data_fk="copy-new")
    return (
        f'<p class="cm-pair"><span aria-hidden="true">{chars}</span>'
        f'<span class="sr">{esc(text)}</span></p>'
        f'<p class="mh-out">After the second {last} the letter that came next last time is '
        f"{want}: the model gives it <strong>{100 * demo['p_want']:.1f}%</strong>"
        f" and its top guess is {esc(quoted_char(demo['guess']))}. From that {last}, "
        f"layer {L}'s heads put this much weight on the earlier {want}: {heads}; "
        f"the most is {head_name(L, best + 1)}.</p>"
        "<p>Read along the repeat: the model's top guess at each character after the first of "
        f"the second copy, {demo['n_right']} of {len(demo['checks'])} right here.</p>"
        f'<ul class="cm-checks">{marks}</ul>'
        + (
            f"<p>Measured when you picked it, on the trainer's {view.snap['n_copy']} stretches "
            "of repeated nonsense: at step "
            if view.snap
            else "<p>The evaluation measured this on many stretches of repeated nonsense: at step "
        )
        + f"{view.step:,} this model copies <strong>{100 * end['copying']:.1f}%</strong> "
        "of the repeated characters right"
        + (" (with every head in; pulling heads out is measured below)" if view.pulled_out else "")
        + ".</p>"
        f'<button type="button"{new_pair}>A new nonsense pair</button>'
    )


def _drum(state, view):
    if view.snap:
        return (
            '<p class="mh-note cm-drum-yours">Your model has no saved checkpoints to step '
            f"through: it is the model at step {view.step:,}, as you picked it. The checkpoints "
            "replay the training of the shipped models; choose one of them above to use it. "
            "Your own training's curve is in \u2018Train it yourself\u2019 below.</p>"
        )
    steps, step = view.steps, view.step
    i = steps.index(step)
    points = lab.evaluation()["runs"][state["model"]]["checkpoints"]
    now = view.measured
    when = lab.when_copying_appears(state["model"])
    jumps = ""
    if when:
        before, after = when
        moments = (
            (str(before["step"]), "Before", "drum-before"),
            (str(after["step"]), "After", "drum-after"),
            (str(steps[-1]), "The end", "drum-end"),
        )
        keys = {to: fk for to, _, fk in moments}
        options = [(to, f"{said}: step {int(to):,}") for to, said, _ in moments]
        jumps = kit.choices("step", options, str(step), label="Jump to", fk=keys.get)
    plot = draw.plot(points, step, steps[-1])
    return (
        f'<form class="cm-drum" data-state-form="live"><label for="drum-at">Training step '
        f"<strong>{step:,}</strong> of {steps[-1]:,} (checkpoint {i + 1} of {len(steps)})</label>"
        f'<input type="range" id="drum-at" name="drum" data-fk="drum" min="0" '
        f'max="{len(steps) - 1}" value="{i}" aria-valuetext="step {step:,}">'
        f'<input type="hidden" name="drum_model" value="{esc(state["model"])}"></form>{jumps}'
        '<p class="cm-busy" data-busy hidden><progress aria-label="Loading"></progress> '
        "Loading the weights of that step…</p>"
        f'<p class="mh-out">At step {step:,}: {now["valid_bits"]:.2f} bits per character on '
        f"held-out text, {100 * now['copying']:.1f}% of repeated nonsense copied. "
        "Every figure on this page now shows the model as it was then.</p>"
        + scroll(plot, "Training plot")
        + '<p class="cm-legend"><span>solid, circle: held-out bits per character '
        "(left scale, lower is better)</span> "
        "<span>dashed, square: repeated nonsense copied (right scale)</span></p>"
    )


def _toggle(layer, head, pulled_out):
    """A button that pulls head (LAYER, HEAD) out, or puts it back."""
    markup = attrs(
        data_key="pulled_out",
        data_value=_pairs_text(pulled_out ^ {(layer, head)}),
        data_fk=f"off-{layer}.{head}",
        aria_pressed=str((layer, head) in pulled_out).lower(),
        tabindex="0" if (layer, head) == (1, 1) else "-1",
        class_="cm-toggle",
    )
    return f'<button type="button"{markup}>{head_name(layer, head)}</button>'


def _ablate(state, view, demo):
    L, H = view.cfg["n_layer"], view.cfg["n_head"]
    pulled_out = set(view.pulled_out)
    every = [(layer, head) for layer in range(1, L + 1) for head in range(1, H + 1)]
    buttons = "".join(_toggle(layer, head, pulled_out) for layer, head in every)
    back = attrs(data_key="pulled_out", data_value="", data_fk="off-none", disabled=not pulled_out)
    reset = f'<button type="button"{back}>Put every head back</button>'
    snap = view.snap
    if snap:
        ablation, columns = snap["ablation"], ("pulled out", "copying")
    else:
        evaluation = lab.evaluation()["runs"][state["model"]]
        ablation, columns = evaluation["ablation"], ("pulled out", "copying", "held-out bits")

    def row(key, name, picked=False):
        measured = ablation[key]
        bits = "" if snap else f"<td>{measured['valid_bits']:.3f}</td>"
        return (
            f'<tr{attrs(class_="sel" if picked else None)}><th scope="row">{name} out</th>'
            f"<td>{100 * measured['copying']:.1f}%</td>{bits}</tr>"
        )

    rows = [
        row(f"L{layer}H{head}", head_name(layer, head), (layer, head) in pulled_out)
        for layer, head in every
    ]
    rows += [row(f"layer{layer}", f"all of layer {layer}") for layer in range(1, L + 1)]
    final = ablation["none"]
    want, p_want = esc(quoted_char(demo["want"])), f"{100 * demo['p_want']:.1f}%"
    live = (
        f"With {esc(_names(view.pulled_out))} out, the copying demo gives {want} {p_want} "
        f"and gets {demo['n_right']} of {len(demo['checks'])} right."
        if pulled_out
        else f"With every head in, the copying demo gives {want} {p_want}."
    )
    header = "".join(f'<th scope="col">{name}</th>' for name in columns)
    caption = (
        f"Measured when you picked your model, at step {snap['step']:,}, on the trainer's "
        f"repeated nonsense (every head in: {100 * final['copying']:.1f}% copied)"
        if snap
        else f"Measured by the evaluation at step {evaluation['final_step']:,} (every head in: "
        f"{100 * final['copying']:.1f}% copied, {final['valid_bits']:.3f} bits per character)"
    )
    return (
        '<div class="cm-toggles" role="group" aria-label="Pull heads out: a pressed head is out"'
        f" data-roving>{buttons}</div>"
        f'{reset}<p class="mh-out">{live} The prediction at the top of the page uses the same '
        "heads.</p>"
        f'<table class="mh-matrix cm-ablation"><caption>{caption}</caption>'
        f"<thead><tr>{header}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )
