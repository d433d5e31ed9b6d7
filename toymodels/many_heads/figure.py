"""Figure "Three heads, three kinds of link": state in, HTML out.

The build calls `render` once with the defaults to pre-render the page; the
browser calls the same function under Pyodide each time the reader acts.
Slots are pieces of the same state shown elsewhere on the page (the shares
table, the worked numbers in "Go deeper").
"""

import numpy as np

from ..page import kit
from ..page.figure import failure, merge, result
from ..page.html import attrs, esc, num, pct, quoted, tenths_rows, whole
from ..page.kit import matrix
from . import model as heads

DEFAULTS = {
    "sentence": "Puff found a shiny key and kept it.",
    "word": "",
    "head": "all",
    "step": "softmax",
}
STEPS = (
    ("qk", "Queries and keys"),
    ("scores", "Scores"),
    ("mask", "Mask"),
    ("softmax", "Softmax"),
    ("values", "Weighted values"),
    ("concat", "Concatenate"),
    ("output", "Mix with Wᴼ"),
)
CHOICES = {"head": ("all", "1", "2", "3"), "step": tuple(s for s, _ in STEPS)}
WORD_FIELD = "word"
READS = (
    "position only: its query and key are clock hands turning {turn} radians a word, "
    "so a word's query points at the key one word back",
    "the features “action” and “doer”: an action seeks the doer before it, and a doer the action",
    "the features “pronoun” and “thing”: a pronoun seeks the thing it may stand for",
)


def head_label(head):
    return f"Head {head + 1} · {heads.HEAD_NAMES[head]}"


def normalise(state):
    """Fill in defaults and clamp every field; -> kit.Normalised, with .words."""
    state = merge(DEFAULTS, state, choices=CHOICES)
    state["sentence"] = " ".join(state["sentence"].split())[:400]
    words = heads.split_words(state["sentence"])
    error = None
    if not words:
        error = "Type a sentence with at least one word."
    elif len(words) > heads.MAX_WORDS:
        error = (
            f"A sentence here can have at most {heads.MAX_WORDS} words; "
            f"this one has {len(words)}. Shorten it and press Update."
        )
    lower = [word.lower() for word in words]
    default_word = len(words) - 1 - lower[::-1].index("it") if "it" in lower else len(words) - 1
    word = whole(state["word"], 3)
    state["word"] = state["word"] if word is not None and word < len(words) else str(default_word)
    return kit.Normalised(state, error, words=words)


def render(state=None, fid="three-heads"):
    """-> the figure's html, its slots "shares" and "math", state, error and summary."""
    read = normalise(state)
    if read.error:
        return failure(read.state, read.error)
    state, words = read.state, read.words
    run = heads.multi_head(words)
    # every row's shares in tenths of a point, rounded once for the grids, the table and the sums
    run["tenths"] = [tenths_rows(run["weights"][head]) for head in range(heads.N_HEAD)]
    selected, step = int(state["word"]), state["step"]
    shown = range(heads.N_HEAD) if state["head"] == "all" else [int(state["head"]) - 1]
    summary = " ".join(_head_summary(run, words, head, selected) for head in range(heads.N_HEAD))
    parts = [
        _controls(state, fid),
        _word_buttons(words, selected),
        _unknown_note(run["unknown"]),
    ]
    if step in ("concat", "output"):
        parts.append(_mixing(run, words, selected, step))
    else:
        panels = [
            _head_panel(run, words, head, selected, step, hidden=head not in shown)
            for head in range(heads.N_HEAD)
        ]
        parts.append(f'<div class="mh-heads">{"".join(panels)}</div>')
        if step in ("softmax", "mask"):
            parts.append(kit.legend())
    slots = {
        "shares": shares_table(run, words, selected),
        "math": _worked(run, words, selected),
    }
    return result("".join(parts), state, slots=slots, summary=summary)


def _head_choice(value):
    return "All heads" if value == "all" else f"Head {value}"


def _controls(state, fid):
    heads_shown = [(value, _head_choice(value)) for value in CHOICES["head"]]
    return kit.controls(
        kit.sentence_form(
            fid, state["sentence"], maxlength=400, help=f"Up to {heads.MAX_WORDS} words."
        ),
        kit.choices("head", heads_shown, state["head"], label="Heads shown"),
        kit.step_list(STEPS, state["step"], label="Step of the computation"),
    )


def _word_buttons(words, selected):
    label = "Words: choose one to follow its row in every head"
    return kit.token_buttons(words, selected, label=label)


def _unknown_note(unknown):
    if not unknown:
        return ""
    listed = ", ".join(quoted(word) for word in dict.fromkeys(unknown))
    return (
        f'<p class="mh-note">Heads 2 and 3 did not know {esc(listed)}. '
        "They give a word they do not know no features, so it neither seeks nor attracts.</p>"
    )


def _head_summary(run, words, head, selected):
    row = run["weights"][head, selected, : selected + 1]
    top = int(np.argmax(row))
    if np.ptp(row) < 1e-9:
        return (
            f"{head_label(head)}: {quoted(words[selected])} spreads its attention evenly over the "
            f"{selected + 1} word{'s' if selected else ''} it can see."
        )
    return (
        f"{head_label(head)}: {quoted(words[selected])} looks most at {quoted(words[top])} "
        f"({pct(run['tenths'][head][selected][top])})."
    )


def _head_panel(run, words, head, selected, step, hidden):
    label = head_label(head)
    title = f'<h3 class="mh-head-title">{esc(label)}</h3>'
    reads = f'<p class="mh-reads">Reads {esc(READS[head].format(turn=heads.TURN))}.</p>'
    if step == "qk":
        body = matrix(
            f"{label}: query and key lists",
            words,
            ("q₁", "q₂", "k₁", "k₂"),
            np.concatenate([run["q"][head], run["k"][head]], axis=1),
            fk=f"qk{head}",
            selected=selected,
        )
    elif step == "values":
        out = run["out"][head, selected]
        values = matrix(
            f"{label}: value lists",
            words,
            ("v₁", "v₂"),
            run["v"][head],
            fk=f"v{head}",
            selected=selected,
        )
        body = (
            values + f'<p class="mh-out">Output for {esc(quoted(words[selected]))} = '
            f"Σ share × value = [{num(out[0])}, {num(out[1])}]</p>"
        )
    else:
        body = _grid(run, words, head, selected, step)
    summary = f'<p class="mh-summary">{esc(_head_summary(run, words, head, selected))}</p>'
    section = attrs(class_="mh-head", data_head=str(head + 1), hidden=hidden)
    return f"<section{section}>{title}{reads}{body}{summary}</section>"


def _grid(run, words, head, selected, step):
    """The T×T grid of one head: shares (softmax), scores, or scores with the mask applied."""
    return kit.attention_grid(
        words,
        name=head_label(head),
        shares=run["weights"][head],
        scores=run["scores"][head],
        view=step,
        selected=selected,
        fk=f"g{head}",
        rounded=run["tenths"][head],
    )


def _mixing(run, words, selected, step):
    cols = [f"h{head + 1}·{d + 1}" for head in range(heads.N_HEAD) for d in range(heads.D_HEAD)]
    if step == "concat":
        concat = matrix(
            "Concatenated head outputs (T × 6)",
            words,
            cols,
            run["concat"],
            fk="concat",
            selected=selected,
        )
        return (
            f'<div class="mh-mix">{concat}<p class="mh-out">Each head’s two numbers are set side '
            "by side: no arithmetic, just a reshape.</p></div>"
        )
    dims = [f"y{d + 1}" for d in range(heads.D_MODEL)]
    output = matrix(
        "Output = concatenation × Wᴼ (T × 6)", words, dims, run["y"], fk="y", selected=selected
    )
    mixing = matrix(
        "Wᴼ (6 × 6), fixed here, learned in a real model", cols, dims, run["WO"], fk="wo"
    )
    return f'<div class="mh-mix">{output}{mixing}</div>'


def shares_table(run, words, selected):
    """The reader's selected word: its share of attention for every word, one column per head."""
    columns = [(head_label(h), run["weights"][h, selected]) for h in range(heads.N_HEAD)]
    caption = f"Shares for {quoted(words[selected])} in each head"
    return kit.shares_table(words, columns, caption=caption, seen=selected + 1, selected=selected)


def _worked(run, words, selected):
    """Go deeper: the scores behind each share for the selected word."""
    cols = "".join(
        f'<th scope="col">Head {head + 1} score</th><th scope="col">Head {head + 1} share</th>'
        for head in range(heads.N_HEAD)
    )
    rows = []
    for j in range(selected + 1):
        cells = "".join(
            f"<td>{num(run['scores'][head, selected, j])}</td>"
            f"<td>{pct(run['tenths'][head][selected][j])}</td>"
            for head in range(heads.N_HEAD)
        )
        rows.append(f'<tr><th scope="row">{esc(words[j])}</th>{cells}</tr>')
    caption = f"Scores q·k / √{heads.D_HEAD} and shares for {esc(quoted(words[selected]))}"
    return (
        f'<table class="mh-worked"><caption>{caption}</caption>'
        f'<thead><tr><th scope="col">Word</th>{cols}</tr></thead><tbody>{"".join(rows)}</tbody>'
        "</table>"
    )
