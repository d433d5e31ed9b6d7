"""Figure "Three heads, three kinds of link": state in, HTML out.

The build calls `render` once with the defaults to pre-render the page; the
browser calls the same function under Pyodide each time the reader acts.
Slots are pieces of the same state shown elsewhere on the page (the shares
table, the worked numbers in "Go deeper").
"""

import numpy as np

from ..page.html import attrs, esc, level, matrix, num, pct, state_button, tenths, whole
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
READS = (
    "position only: its query and key are clock hands turning {turn} radians a word, "
    "so a word's query points at the key one word back",
    "the features “action” and “doer”: an action seeks the doer before it, and a doer the action",
    "the features “pronoun” and “thing”: a pronoun seeks the thing it may stand for",
)


def head_label(h):
    return f"Head {h + 1} · {heads.HEAD_NAMES[h]}"


def q(word):
    return f"“{word}”"


def normalise(state):
    """Fill in defaults and clamp every field; -> (state, words, error or None)."""
    s = {**DEFAULTS, **{k: str(v) for k, v in (state or {}).items() if k in DEFAULTS}}
    s["sentence"] = " ".join(s["sentence"].split())[:400]
    words = heads.split_words(s["sentence"])
    error = None
    if not words:
        error = "Type a sentence with at least one word."
    elif len(words) > heads.MAX_WORDS:
        error = (
            f"A sentence here can have at most {heads.MAX_WORDS} words; "
            f"this one has {len(words)}. Shorten it and press Update."
        )
    for key, allowed in CHOICES.items():
        if s[key] not in allowed:
            s[key] = DEFAULTS[key]
    lower = [w.lower() for w in words]
    default_word = len(words) - 1 - lower[::-1].index("it") if "it" in lower else len(words) - 1
    w = whole(s["word"], 3)
    s["word"] = s["word"] if w is not None and w < len(words) else str(default_word)
    return s, words, error


def render(state=None, fid="three-heads"):
    """-> {"html", "slots": {"shares", "math"}, "state", "error", "summary"} for the figure."""
    s, words, error = normalise(state)
    if error:
        return {"html": None, "slots": {}, "state": s, "error": error, "summary": ""}
    m = heads.multi_head(words)
    # every row's shares in tenths of a point, rounded once for the grids, the table and the sums
    m["tenths"] = [
        [tenths(m["weights"][h, i, : i + 1]) for i in range(len(words))]
        for h in range(heads.N_HEAD)
    ]
    sel, step = int(s["word"]), s["step"]
    shown = range(heads.N_HEAD) if s["head"] == "all" else [int(s["head"]) - 1]
    summary = " ".join(_head_summary(m, words, h, sel) for h in range(heads.N_HEAD))
    parts = [
        _controls(s, fid),
        _word_buttons(words, sel),
        _unknown_note(m["unknown"]),
    ]
    if step in ("concat", "output"):
        parts.append(_mixing(m, words, sel, step))
    else:
        panels = [
            _head_panel(m, words, h, sel, step, hidden=h not in shown) for h in range(heads.N_HEAD)
        ]
        parts.append(f'<div class="mh-heads">{"".join(panels)}</div>')
        if step in ("softmax", "mask"):
            parts.append(_legend())
    return {
        "html": "".join(parts),
        "slots": {"shares": shares_table(m, words, sel), "math": _worked(m, words, sel)},
        "state": s,
        "error": None,
        "summary": summary,
    }


def _controls(s, fid):
    pick = "".join(
        state_button("head", v, "All heads" if v == "all" else f"Head {v}", v == s["head"])
        for v in CHOICES["head"]
    )
    steps = "".join(
        state_button("step", k, f"{i}. {label}", k == s["step"])
        for i, (k, label) in enumerate(STEPS, 1)
    )
    return (
        '<div class="mh-controls">'
        f'<form class="mh-sentence" data-state-form><label for="{esc(fid)}-sentence">Sentence</label>'
        f'<input type="text" name="sentence" id="{esc(fid)}-sentence" data-fk="sentence" value="{esc(s["sentence"])}"'
        f' maxlength="400" autocomplete="off" spellcheck="false" aria-describedby="{esc(fid)}-sentence-help">'
        f'<button type="submit" data-fk="update">Update</button>'
        f'<span class="mh-help" id="{esc(fid)}-sentence-help">Up to {heads.MAX_WORDS} words.</span></form>'
        f'<div class="mh-pick" role="group" aria-label="Heads shown" data-roving>{pick}</div>'
        f'<div class="mh-steps" role="group" aria-label="Step of the computation" data-roving>{steps}</div>'
        "</div>"
    )


def _word_buttons(words, sel):
    buttons = "".join(
        state_button("word", str(i), w, i == sel, fk=f"w{i}", cls="mh-word")
        for i, w in enumerate(words)
    )
    return (
        f'<div class="mh-words" role="group" aria-label="Words: choose one to follow its row in every head" data-roving>'
        f"{buttons}</div>"
    )


def _unknown_note(unknown):
    if not unknown:
        return ""
    listed = ", ".join(q(w) for w in dict.fromkeys(unknown))
    return (
        f'<p class="mh-note">Heads 2 and 3 did not know {esc(listed)}. '
        "They give a word they do not know no features, so it neither seeks nor attracts.</p>"
    )


def _head_summary(m, words, h, sel):
    w = m["weights"][h, sel, : sel + 1]
    top = int(np.argmax(w))
    if np.ptp(w) < 1e-9:
        return (
            f"{head_label(h)}: {q(words[sel])} spreads its attention evenly over the "
            f"{sel + 1} word{'s' if sel else ''} it can see."
        )
    return (
        f"{head_label(h)}: {q(words[sel])} looks most at {q(words[top])} "
        f"({pct(m['tenths'][h][sel][top])})."
    )


def _head_panel(m, words, h, sel, step, hidden):
    title = f'<h3 class="mh-head-title">{esc(head_label(h))}</h3>'
    reads = f'<p class="mh-reads">Reads {esc(READS[h].format(turn=heads.TURN))}.</p>'
    if step == "qk":
        body = matrix(
            f"{head_label(h)}: query and key lists",
            words,
            ("q₁", "q₂", "k₁", "k₂"),
            np.concatenate([m["q"][h], m["k"][h]], axis=1),
            fk=f"qk{h}",
            sel=sel,
        )
    elif step == "values":
        out = m["out"][h, sel]
        body = (
            matrix(
                f"{head_label(h)}: value lists", words, ("v₁", "v₂"), m["v"][h], fk=f"v{h}", sel=sel
            )
            + f'<p class="mh-out">Output for {esc(q(words[sel]))} = Σ share × value = '
            f"[{num(out[0])}, {num(out[1])}]</p>"
        )
    else:
        body = _grid(m, words, h, sel, step)
    summary = f'<p class="mh-summary">{esc(_head_summary(m, words, h, sel))}</p>'
    return f"<section{attrs(class_='mh-head', data_head=str(h + 1), hidden=hidden)}>{title}{reads}{body}{summary}</section>"


def _grid(m, words, h, sel, step):
    """The T×T grid of one head: shares (softmax), scores, or scores with the mask applied."""
    T = len(words)
    label = {
        "softmax": "share of attention",
        "scores": "score q·k/√2 before the mask",
        "mask": "score after the mask",
    }[step]
    quoted = [esc(q(w)) for w in words]  # escaped once: the grid repeats every word T times
    cols = "".join(f'<th scope="col"><span>{esc(w)}</span></th>' for w in words)
    rows = []
    for i in range(T):
        shares = m["tenths"][h][i]
        cells = []
        for j in range(T):
            seen = j <= i
            if step == "softmax" or (step == "mask" and not seen):
                if seen:
                    tip, cls, text = (
                        f"{quoted[i]} → {quoted[j]}: {pct(shares[j])}",
                        f"c {level(m['weights'][h, i, j])}",
                        "",
                    )
                else:
                    tip, cls, text = f"{quoted[i]} cannot see {quoted[j]}: masked", "c masked", ""
            else:
                score = m["scores"][h, i, j]
                tip = f"{quoted[i]} → {quoted[j]}: score {num(score)}" + (
                    "" if seen else " (later word)"
                )
                cls, text = "c num" + ("" if seen else " future"), num(score, 1)
            tabindex = "0" if (i, j) == (sel, 0) else "-1"
            cells.append(
                f'<td class="{cls}" tabindex="{tabindex}" data-fk="g{h}-{i}-{j}">{text}<span class="tip">{tip}</span></td>'
            )
        # a tap anywhere in a row selects that row's word
        rows.append(
            f"<tr{attrs(class_='sel' if i == sel else None, data_key='word', data_value=str(i))}>"
            f'<th scope="row">{esc(words[i])}</th>{"".join(cells)}</tr>'
        )
    return (
        f'<table class="mh-grid" data-roving="grid">'
        f'<caption class="sr">{esc(head_label(h))}, {esc(label)}: a row is a word looking back, '
        f"a column a word it can see</caption>"
        f"<thead><tr><td></td>{cols}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _legend():
    swatches = "".join(f'<span class="sw l{k}"></span>' for k in range(1, 10))
    return (
        '<p class="mh-legend" aria-hidden="true"><span>0%</span>'
        f'{swatches}<span>100%</span><span class="sw masked"></span><span>masked (a later word)</span></p>'
    )


def _mixing(m, words, sel, step):
    cols = [f"h{h + 1}·{d + 1}" for h in range(heads.N_HEAD) for d in range(heads.D_HEAD)]
    if step == "concat":
        return (
            '<div class="mh-mix">'
            + matrix(
                "Concatenated head outputs (T × 6)", words, cols, m["concat"], fk="concat", sel=sel
            )
            + '<p class="mh-out">Each head’s two numbers are set side by side: no arithmetic, just a reshape.</p></div>'
        )
    dims = [f"y{d + 1}" for d in range(heads.D_MODEL)]
    return (
        '<div class="mh-mix">'
        + matrix("Output = concatenation × Wᴼ (T × 6)", words, dims, m["y"], fk="y", sel=sel)
        + matrix("Wᴼ (6 × 6), fixed here, learned in a real model", cols, dims, m["WO"], fk="wo")
        + "</div>"
    )


def shares_table(m, words, sel):
    """The reader's selected word: its share of attention for every word, one column per head."""
    visible = [m["tenths"][h][sel] for h in range(heads.N_HEAD)]
    head_cols = "".join(f'<th scope="col">{esc(head_label(h))}</th>' for h in range(heads.N_HEAD))
    rows = []
    for j, w in enumerate(words):
        cells = "".join(
            f"<td>{pct(visible[h][j])}</td>"
            if j <= sel
            else '<td class="masked">–<span class="sr"> masked</span></td>'
            for h in range(heads.N_HEAD)
        )
        rows.append(
            f'<tr{attrs(class_="sel" if j == sel else None)}><th scope="row">{esc(w)}</th>{cells}</tr>'
        )
    totals = "".join(f"<td>{pct(int(v.sum()))}</td>" for v in visible)
    return (
        f'<table class="mh-shares"><caption>Shares for {esc(q(words[sel]))} in each head</caption>'
        f'<thead><tr><th scope="col">Word</th>{head_cols}</tr></thead>'
        f'<tbody>{"".join(rows)}</tbody><tfoot><tr><th scope="row">Total</th>{totals}</tr></tfoot></table>'
    )


def _worked(m, words, sel):
    """Go deeper: the scores behind each share for the selected word."""
    cols = "".join(
        f'<th scope="col">Head {h + 1} score</th><th scope="col">Head {h + 1} share</th>'
        for h in range(heads.N_HEAD)
    )
    rows = []
    for j in range(sel + 1):
        cells = "".join(
            f"<td>{num(m['scores'][h, sel, j])}</td><td>{pct(m['tenths'][h][sel][j])}</td>"
            for h in range(heads.N_HEAD)
        )
        rows.append(f'<tr><th scope="row">{esc(words[j])}</th>{cells}</tr>')
    return (
        f'<table class="mh-worked"><caption>Scores q·k / √{heads.D_HEAD} and shares for {esc(q(words[sel]))}</caption>'
        f'<thead><tr><th scope="col">Word</th>{cols}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )
