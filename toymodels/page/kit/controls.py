"""Controls: what the reader taps, types or drags to change a figure's state.

Every control sets state fields through attributes that templates/static/figures.js reads
(data-key/data-value on a button, data-state-form on a form), so a figure needs no script of
its own. A group of buttons is one Tab stop (data-roving: arrow keys move inside it, the
pressed button is the stop) and is named for screen readers (role="group", aria-label);
every focusable element has a data-fk, so focus returns to it after a redraw.
"""

from urllib.parse import quote

from ..html import attrs, esc, num, state_button
from .state import decimals


def controls(*parts):
    """Controls that need Python to work: hidden until the page's Python is ready."""
    return f'<div class="mh-controls">{"".join(parts)}</div>'


def own_model_attrs(cls, files, warm, memory_mb):
    """The attributes of a form whose model templates/static/ownmodel.js fetches when the
    reader asks: FILES ({file, bytes, sha256} each, in the site's models/), the Python function
    WARM ("module:function") called once they are in the worker, and the MB its memory must be
    able to grow to before any byte is fetched."""
    return attrs(
        class_=cls,
        data_state_form="",
        data_own_files=" ".join(f["file"] for f in files),
        data_own_bytes=" ".join(str(f["bytes"]) for f in files),
        data_own_sha256=" ".join(f["sha256"] for f in files),
        data_own_warm=warm,
        data_own_memory=str(memory_mb),
    )


def text_box(fid, name, value, **extra):
    """A text box for state[NAME]: '<input …>' with the id FID-NAME (for its label) and the
    focus key NAME, holding VALUE; no autocomplete nor spell check (a reader types text for a
    model, not prose to correct). EXTRA: more attributes (placeholder, maxlength, …)."""
    box = attrs(
        type="text",
        id=f"{fid}-{name}",
        name=name,
        value=value,
        data_fk=name,
        autocomplete="off",
        spellcheck="false",
        **extra,
    )
    return f"<input{box}>"


def sentence_form(fid, text, *, name="sentence", label="Sentence", maxlength=200, help=None):
    """A text box and an Update button; on submit the box's text becomes state[NAME].
    FID makes the box's id unique on the page; HELP is a line under it, read with the box."""
    fid = esc(fid)
    described = f' aria-describedby="{fid}-{name}-help"' if help else ""
    note = f'<span class="mh-help" id="{fid}-{name}-help">{esc(help)}</span>' if help else ""
    return (
        f'<form class="mh-sentence" data-state-form><label for="{fid}-{name}">{esc(label)}</label>'
        f'<input type="text" name="{name}" id="{fid}-{name}" data-fk="{name}"'
        f' value="{esc(text)}" maxlength="{maxlength}" autocomplete="off"'
        f' spellcheck="false"{described}>'
        f'<button type="submit" data-fk="update">Update</button>{note}</form>'
    )


def choices(key, options, current, *, label, cls="mh-pick", fk=None, resets=(), **button):
    """A named group of toggle buttons, one per (value, text) of OPTIONS, that set state[KEY];
    the one equal to CURRENT is pressed. FK(value) names each button's focus key. RESETS: fields
    each button also sets back to "" (their default), e.g. a token index that belongs to the
    text the reader leaves."""

    def sets(value):
        if not resets:
            return None
        return "&".join([f"{key}={quote(value, safe='')}", *(f"{r}=" for r in resets)])

    buttons = "".join(
        state_button(
            key,
            value,
            text,
            value == current,
            fk=fk(value) if fk else None,
            data_set=sets(value),
            **button,
        )
        for value, text in options
    )
    return f'<div class="{cls}" role="group" aria-label="{esc(label)}" data-roving>{buttons}</div>'


def token_buttons(
    tokens,
    selected,
    *,
    key="word",
    label="Choose a word",
    value=str,
    fk="w",
    cls=None,
    group="",
    names=None,
    pieces=False,
):
    """The sentence as buttons, one per token: tapping token i sets state[KEY] = VALUE(i), its
    focus key is FK + i. CLS(i) adds classes to token i's button, GROUP to the group; NAMES(i)
    names it for screen readers where its text says too little ("character 3, space" for '␣').
    PIECES: the tokens are a tokenizer's pieces, parts of words as often as words (a download
    draws them apart, toymodels/page/download/)."""
    buttons = "".join(
        state_button(
            key,
            value(i),
            token,
            i == selected,
            fk=f"{fk}{i}",
            cls="mh-word" + (f" {cls(i)}" if cls else ""),
            aria_label=names(i) if names else None,
        )
        for i, token in enumerate(tokens)
    )
    return (
        f'<div class="mh-words{group and " " + group}{" mh-pieces" if pieces else ""}" role="group"'
        f' aria-label="{esc(label)}"'
        f" data-roving>{buttons}</div>"
    )


def step_list(steps, current, *, key="step", label="Step"):
    """Numbered steps of a computation, (value, title) each: "1. Scores", "2. Mask" …; the
    step shown is pressed. A chapter's `::: steps` block drives the same field."""
    options = [(value, f"{i}. {title}") for i, (value, title) in enumerate(steps, 1)]
    return choices(key, options, current, label=label, cls="mh-steps")


def slider(
    fid,
    name,
    value,
    *,
    label,
    low,
    high,
    step,
    said=None,
    shown=None,
    sends=None,
    cls="mh-slider",
):
    """A range input that sets state[NAME] as it moves (a live form), from LOW to HIGH in
    steps of STEP (1, 0.1, 0.05 …); VALUE is the field's text (kit.read_number writes it).
    SHOWN is the value as the page prints it beside the slider, by default with STEP's
    decimals and a real minus sign ("−0.35"); SAID as a screen reader speaks it (by default
    SHOWN). SENDS, {field: value}, are sent along with it: which cell of a matrix the value is
    for, say (kit.weight_editor)."""
    box = f"{esc(fid)}-{name}"
    shown = num(float(value), decimals(step)) if shown is None else shown
    said = shown if said is None else said
    hidden = "".join(
        f'<input type="hidden" name="{esc(k)}" value="{esc(v)}">' for k, v in (sends or {}).items()
    )
    return (
        f'<form class="{cls}" data-state-form="live">'
        f'<label for="{box}">{esc(label)}</label>'
        f'<input type="range" id="{box}" name="{name}" data-fk="{name}" min="{low}"'
        f' max="{high}" step="{step}" value="{esc(value)}" aria-valuetext="{esc(said)}">'
        f'<output for="{box}">{esc(shown)}</output>{hidden}</form>'
    )
