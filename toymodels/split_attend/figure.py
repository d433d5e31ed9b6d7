"""Figure "Split, attend, concatenate, mix": a five-step stepper over real matrices, and
a slot where the reader edits both heads' W_Q and W_K (or picks a preset)."""

import re

import numpy as np

from ..page.html import attrs, esc, level, num, pct, state_button, tenths
from . import model as sa

STEPS = (
    ("project", "Project"),
    ("split", "Split"),
    ("attend", "Attend"),
    ("concat", "Concatenate"),
    ("mix", "Mix"),
)
PRESET_NAMES = {
    "designed": "As designed",
    "swapped": "Heads swapped",
    "zeros": "All zeros",
    "custom": "Your numbers",
}
DEFAULTS = {"step": "attend", "preset": "designed", "w": "", "cell": ""}
CHOICES = {"step": tuple(k for k, _ in STEPS), "preset": tuple(PRESET_NAMES)}
FIELDS = [
    (h, m, r, c)
    for h in range(sa.N_HEAD)
    for m in "qk"
    for r in range(sa.D_MODEL)
    for c in range(sa.D_HEAD)
]
LIMIT = 20.0


def _field(h, m, r, c):
    return f"{m}{h + 1}_{r}{c}"


def _flat(heads):
    return [float(heads[h][0 if m == "q" else 1][r][c]) for h, m, r, c in FIELDS]


def _unflat(values):
    heads = [
        [np.zeros((sa.D_MODEL, sa.D_HEAD)), np.zeros((sa.D_MODEL, sa.D_HEAD))]
        for _ in range(sa.N_HEAD)
    ]
    for (h, m, r, c), v in zip(FIELDS, values):
        heads[h][0 if m == "q" else 1][r, c] = v
    return heads


def normalise(state):
    """-> (state, heads, error). Edited fields (q1_00 …) fold into one compact 'w' field."""
    state = dict(state or {})
    s = {**DEFAULTS, **{k: str(v) for k, v in state.items() if k in DEFAULTS}}
    error = None
    edited = [_field(*f) for f in FIELDS if _field(*f) in state]
    if edited:
        try:
            values = [float(state.get(name, "0") or 0) for name in (_field(*f) for f in FIELDS)]
        except ValueError:
            return s, None, "Each weight must be a number, such as 1.5 or −2."
        if any(not np.isfinite(v) or abs(v) > LIMIT for v in values):
            return s, None, f"Keep each weight between −{LIMIT:g} and {LIMIT:g}."
        s["w"], s["preset"] = ",".join(f"{v:g}" for v in values), "custom"
    for key, allowed in CHOICES.items():
        if s[key] not in allowed:
            s[key] = DEFAULTS[key]
    if s["preset"] == "custom":
        try:
            values = [float(x) for x in s["w"].split(",")]
            assert len(values) == len(FIELDS) and all(
                np.isfinite(v) and abs(v) <= LIMIT for v in values
            )
        except (ValueError, AssertionError):
            s["preset"], s["w"] = "designed", ""
    if s["preset"] != "custom":
        s["w"] = ""
        heads = sa.PRESETS[s["preset"]]
    else:
        heads = _unflat(values)
    return s, heads, error


def render(state=None, fid="split-attend"):
    s, heads, error = normalise(state)
    if error:
        return {"html": None, "slots": {}, "state": s, "error": error, "summary": ""}
    words = sa.SENTENCE.split()
    f = sa.forward(words, heads)
    T = len(words)
    cell = (
        tuple(int(x) for x in s["cell"].split(","))
        if re.fullmatch(r"[0-9]{1,2},[0-9]{1,2}", s["cell"])
        else None
    )
    if cell and not (cell[0] < T and cell[1] < sa.D_MODEL):
        cell = None
    s["cell"] = f"{cell[0]},{cell[1]}" if cell else ""
    body = {
        "project": _project,
        "split": _split,
        "attend": _attend,
        "concat": _concat,
        "mix": _mix,
    }[s["step"]](f, words, cell)
    stepper = "".join(
        state_button("step", k, f"{i}. {label}", k == s["step"])
        for i, (k, label) in enumerate(STEPS, 1)
    )
    last_the = T - 1 - [w.lower() for w in words][::-1].index("the")
    w1 = f["weights"][0, last_the]
    summary = (
        f"Head 1 sends the last “the” {pct(tenths(w1[: last_the + 1])[int(np.argmax(w1))])} to "
        f"“{words[int(np.argmax(w1))]}”; head 2 sends “mat” {pct(tenths(f['weights'][1, -1])[0])} to “The”."
    )
    html = (
        f'<div class="mh-steps" role="group" aria-label="Step" data-roving>{stepper}</div>'
        f'<div class="mh-stage">{body}</div>'
    )
    return {
        "html": html,
        "slots": {"edit": _editor(s, heads)},
        "state": s,
        "error": None,
        "summary": summary,
    }


def _table(
    caption,
    rows,
    cols,
    M,
    *,
    shape=True,
    col_class=None,
    row_sel=None,
    col_sel=None,
    key=None,
    fk=None,
):
    """A numeric matrix with its shape in the caption; optional head colouring and highlight."""
    head = "".join(
        f'<th scope="col"{attrs(class_=col_class(j) if col_class else None)}>{esc(c)}</th>'
        for j, c in enumerate(cols)
    )
    body = []
    for i, label in enumerate(rows):
        cells = []
        for j in range(M.shape[1]):
            cls = " ".join(
                filter(
                    None,
                    [
                        col_class(j) if col_class else None,
                        "hl"
                        if (row_sel == i and (col_sel is None or col_sel == j))
                        or (row_sel is None and col_sel == j)
                        else None,
                    ],
                )
            )
            if key:
                cells.append(
                    f"<td{attrs(class_=cls or None, tabindex='-1' if (i, j) != (0, 0) else '0', data_fk=f'{fk}-{i}-{j}', data_key=key, data_value=f'{i},{j}')}>{num(M[i, j])}</td>"
                )
            else:
                cells.append(f"<td{attrs(class_=cls or None)}>{num(M[i, j])}</td>")
        body.append(f'<tr><th scope="row">{esc(label)}</th>{"".join(cells)}</tr>')
    cap = (
        f'{esc(caption)} <span class="shape">({M.shape[0]} × {M.shape[1]})</span>'
        if shape
        else esc(caption)
    )
    return (
        f"<table{attrs(class_='mh-matrix', data_roving='grid' if key else None)}><caption>{cap}</caption>"
        f"<thead><tr><td></td>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def _by_head(j):
    return f"head{j // sa.D_HEAD + 1}"


DIMS = [f"d{j + 1}" for j in range(sa.D_MODEL)]


def _project(f, words, cell):
    return (
        '<p class="mh-out">Each word’s four numbers are multiplied by three 4 × 4 matrices. '
        'The result is still four numbers per word; nothing is split yet.</p><div class="mh-mix">'
        + _table("Q = X · W_Q", words, DIMS, f["Q"], col_class=_by_head)
        + _table("K = X · W_K", words, DIMS, f["K"], col_class=_by_head)
        + _table("V = X · W_V", words, DIMS, f["V"], col_class=_by_head)
        + "</div>"
    )


def _split(f, words, cell):
    T = len(words)
    parts = "".join(
        _table(
            f"q for head {h + 1}",
            words,
            ("1", "2"),
            f["q"][h],
            col_class=lambda j, h=h: f"head{h + 1}",
        )
        for h in range(sa.N_HEAD)
    )
    return (
        f'<p class="mh-out">Q ({T} × {sa.D_MODEL}) is reshaped to ({T} × {sa.N_HEAD} × {sa.D_HEAD}) and transposed to '
        f"({sa.N_HEAD} × {T} × {sa.D_HEAD}): the same numbers, regrouped so that each head gets its own "
        f"{sa.D_HEAD} columns. No arithmetic happens. K and V are split the same way.</p>"
        f'<div class="mh-mix">{_table("Q", words, DIMS, f["Q"], col_class=_by_head)}{parts}</div>'
    )


def _attend(f, words, cell):
    grids = []
    for h in range(sa.N_HEAD):
        rows = []
        for i in range(len(words)):
            shares = tenths(f["weights"][h, i, : i + 1])
            cells = "".join(
                f'<td class="c {level(f["weights"][h, i, j])}"><span class="tip">“{esc(words[i])}” → “{esc(words[j])}”: {pct(shares[j])}</span></td>'
                if j <= i
                else f'<td class="c masked"><span class="tip">“{esc(words[i])}” cannot see “{esc(words[j])}”</span></td>'
                for j in range(len(words))
            )
            rows.append(f'<tr><th scope="row">{esc(words[i])}</th>{cells}</tr>')
        cols = "".join(f'<th scope="col"><span>{esc(w)}</span></th>' for w in words)
        grids.append(
            f'<section class="mh-head"><h3 class="mh-head-title">Head {h + 1}</h3>'
            f'<table class="mh-grid" data-head="{h + 1}"><caption class="sr">Head {h + 1}: softmax(q·kᵀ / √{sa.D_HEAD}) with the causal mask</caption>'
            f"<thead><tr><td></td>{cols}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
            + _table(
                f"Head {h + 1} output = weights · v",
                words,
                ("1", "2"),
                f["out"][h],
                col_class=lambda j, h=h: f"head{h + 1}",
            )
            + "</section>"
        )
    return (
        f'<p class="mh-out">In each head separately: scores q·kᵀ / √{sa.D_HEAD}, the causal mask, a softmax per row, '
        "then a weighted sum of the values.</p>"
        f'<div class="mh-heads">{"".join(grids)}</div>'
    )


def _concat(f, words, cell):
    return (
        '<p class="mh-out">The two heads’ outputs are set side by side again: a transpose and a reshape back to '
        f"{len(words)} × {sa.D_MODEL}, the inverse of the split.</p>"
        + _table("Concatenated heads C", words, DIMS, f["C"], col_class=_by_head)
    )


def _mix(f, words, cell):
    t, c = cell if cell else (None, None)
    if cell:
        C, WO = f["C"], f["WO"]
        terms = " + ".join(f"{num(C[t, j])}×{num(WO[j, c])}" for j in range(sa.D_MODEL))
        note = (
            f'<p class="mh-out" role="status">Output (“{esc(words[t])}”, d{c + 1}) = row “{esc(words[t])}” of C · '
            f"column d{c + 1} of W_O: {terms} = {num(f['Y'][t, c])}. "
            "Its first two terms come from head 1, the last two from head 2.</p>"
        )
    else:
        note = '<p class="mh-out">Choose a cell of the output to see which numbers of which head fed it.</p>'

    return (
        note
        + '<div class="mh-mix">'
        + _table(
            "Output Y = C · W_O", words, DIMS, f["Y"], row_sel=t, col_sel=c, key="cell", fk="y"
        )
        + _table("C", words, DIMS, f["C"], col_class=_by_head, row_sel=t)
        + _table("W_O", DIMS, DIMS, f["WO"], col_sel=c)
        + "</div>"
    )


def _editor(s, heads):
    presets = "".join(
        state_button("preset", k, name, k == s["preset"])
        for k, name in PRESET_NAMES.items()
        if k != "custom"
    )
    panels = []
    for h in range(sa.N_HEAD):
        tables = []
        for m, label in (("q", "W_Q"), ("k", "W_K")):
            M = heads[h][0 if m == "q" else 1]
            rows = "".join(
                f'<tr><th scope="row">{sa.FEATURES[r]}</th>'
                + "".join(
                    f'<td><input type="number" step="0.5" min="-{LIMIT:g}" max="{LIMIT:g}" name="{_field(h, m, r, c)}" '
                    f'data-fk="{_field(h, m, r, c)}" value="{float(M[r][c]):g}" aria-label="Head {h + 1} {label} row {sa.FEATURES[r]} column {c + 1}"></td>'
                    for c in range(sa.D_HEAD)
                )
                + "</tr>"
                for r in range(sa.D_MODEL)
            )
            tables.append(
                f'<table class="mh-matrix mh-weights"><caption>Head {h + 1}: {label} (4 × 2)</caption>'
                f'<thead><tr><td></td><th scope="col">1</th><th scope="col">2</th></tr></thead><tbody>{rows}</tbody></table>'
            )
        panels.append(
            f'<fieldset class="mh-head head{h + 1}"><legend>Head {h + 1}</legend>{"".join(tables)}</fieldset>'
        )
    return (
        f'<div class="mh-pick" role="group" aria-label="Presets" data-roving>{presets}</div>'
        f'<form class="mh-editor" data-state-form="live"><div class="mh-heads">{"".join(panels)}</div>'
        '<p class="mh-help">Change a number and press Tab or Enter: both grids and the output recompute. '
        f'Now showing: {esc(PRESET_NAMES[s["preset"]])}.</p><button type="submit" data-fk="apply">Apply</button></form>'
    )
