"""Figure "Move the query": one query on a plane of keys, its scores, shares and output.

The reader turns the query of "key" (its direction, in degrees) and stretches it (its
length), with two sliders or by aiming it at a key; the keys are the head's own, drawn
as arrows. Direction decides which key the query looks for; length decides how sharply:
every score is the query's length times how far the key reaches along its direction, so
a longer query spreads the scores apart and the softmax picks its favourite more firmly.

State, as words in the URL: angle (whole degrees; or the name of a key to aim at, or
"between" for the direction in which "found" and "Puff" score alike, which the page turns
into degrees) and length (0 to MAX_LENGTH, to two places).
"""

import re

import numpy as np

from ..page import kit
from ..page.figure import merge, result
from ..page.html import attrs, count_words, esc, num, quoted
from . import model as m
from .worked import percent

AIM = {word: round(angle) % 360 for word, angle in m.AIMS.items()}
AIM["between"] = round(m.BETWEEN) % 360
START = m.HEAD["Q"][m.QUERY_WORD]  # the worked example's query of "key"


def _length_text(x):
    """0.5 -> '0.5', 2.0 -> '2': a length as the URL and the page write it."""
    x = round(float(x), 2)
    return f"{x:g}" if x else "0"


DEFAULTS = {
    "angle": str(round(m.angle_of(START)) % 360),
    "length": _length_text(np.hypot(*START)),
}
CHOICES = {"angle": (*m.WORDS, "between"), "length": ("0", "1", "2", "4")}
NUMBER = re.compile(r"-?[0-9]{1,6}(?:\.[0-9]{1,6})?")

# the plane: SIZE pixels square, REACH units from the centre to each edge
SIZE, REACH = 320, m.MAX_LENGTH + 0.6
SCALE = SIZE / 2 / REACH
# the values' square: its corners hold the four values
VSIZE, VLOW, VHIGH = 200, -0.3, 1.3


def normalise(state):
    """Every field checked; an angle may be given as a key's name. -> kit.Normalised"""
    state = merge(DEFAULTS, state, strip=True)
    angle = state["angle"]
    named = {word.lower(): word for word in AIM}
    if angle.lower() in named:
        state["angle"] = str(AIM[named[angle.lower()]])
    elif NUMBER.fullmatch(angle):
        state["angle"] = str(round(float(angle)) % 360)
    else:
        state["angle"] = DEFAULTS["angle"]
    length = state["length"]
    if NUMBER.fullmatch(length):
        state["length"] = _length_text(min(max(float(length), 0.0), m.MAX_LENGTH))
    else:
        state["length"] = DEFAULTS["length"]
    return kit.Normalised(state)


def render(state=None, fid="move-query"):
    """State in; the figure's html, state and summary out. The values and the output they
    make are its slot "output", placed where the chapter has introduced values: the figure
    itself shows the query, the keys, the scores and the shares."""
    state = normalise(state).state
    angle, length = int(state["angle"]), float(state["length"])
    q = m.query(angle, length)
    seen = m.look(q, m.KEYS, m.VALUES)
    text = summary(angle, length, seen)
    html = (
        _controls(angle, length, fid)
        + '<div class="oh-row">'
        + _plane(q, angle, length, seen)
        + "</div>"
        + _table(q, seen)
        + f'<p class="mh-summary">{esc(text)}</p>'
    )
    out = seen["out"]
    output = (
        '<div class="oh-row">'
        + _values_square(out)
        + f'<p class="mh-out">Output = Σ share × value = [{num(out[0])}, {num(out[1])}]</p>'
        + "</div>"
        + f'<p class="mh-summary">{esc(text)}</p>'  # the shares, beside their output
    )
    return result(html, state, slots={"output": output}, summary=text)


def summary(angle, length, seen):
    """One sentence: where the query points and who gets what."""
    order = sorted(range(len(m.WORDS)), key=lambda j: -seen["shares"][j])
    given = ", ".join(f"{quoted(m.WORDS[j])} {percent(seen['shares'][j])}" for j in order)
    return (
        f"The query of {quoted(m.WORDS[m.QUERY_WORD])} points at {angle}° with length "
        f"{_length_text(length)}. Shares: {given}."
    )


# ---------------------------------------------------------------- controls


def _controls(angle, length, fid):
    direction = kit.slider(
        fid, "angle", angle, label="Direction", low=0, high=359, step=1,
        said=f"{angle} degrees", shown=f"{angle}°", cls="oh-slider",
    )  # fmt: skip
    length = _length_text(length)
    stretch = kit.slider(
        fid, "length", length, label="Length", low=0, high=f"{m.MAX_LENGTH:g}", step=0.25,
        said=f"length {length}", shown=length, cls="oh-slider",
    )  # fmt: skip
    aimed = [word for word in m.WORDS if AIM[word] == angle]
    buttons = []
    for j, word in enumerate(m.WORDS):
        on = word in aimed
        first = not aimed and j == 0  # with no key aimed at, the first is the Tab stop
        markup = attrs(
            type="button",
            data_key="angle",
            data_value=word,
            data_fk=f"aim-{j}",
            aria_pressed=str(on).lower(),
            tabindex="0" if on or first else "-1",
        )
        buttons.append(f"<button{markup}>{esc(quoted(word))}</button>")
    return (
        f'<div class="mh-controls"><div class="oh-sliders">{direction}{stretch}</div>'
        '<div class="mh-pick" role="group" aria-label="Aim the query at a key" data-roving>'
        f'<span class="oh-aim-label" aria-hidden="true">Aim at</span>{"".join(buttons)}</div>'
        "</div>"
    )


# ---------------------------------------------------------------- the plane of keys


def _svg(cls, size, label, parts):
    """One <svg role="img"> SIZE pixels square, its aria-label saying what it shows."""
    markup = attrs(
        class_=cls, viewBox=f"0 0 {size} {size}", role="img", aria_label=label, width=size
    )
    return f'<svg{markup} height="{size}">{"".join(parts)}</svg>'


def _line(cls, a, b):
    """A line between two points given in pixels."""
    ends = attrs(class_=cls, x1=f"{a[0]:.1f}", y1=f"{a[1]:.1f}", x2=f"{b[0]:.1f}", y2=f"{b[1]:.1f}")
    return f"<line{ends}/>"


def _xy(vector, centre=SIZE / 2, scale=SCALE):
    """Plane units -> SVG pixels (y grows upwards on the plane, downwards in SVG)."""
    return centre + scale * vector[0], centre - scale * vector[1]


def _arrow(tip, cls, width):
    """A line from the centre to TIP (plane units) with a filled head, as SVG markup."""
    x0, y0 = _xy((0.0, 0.0))
    x1, y1 = _xy(tip)
    dx, dy = x1 - x0, y1 - y0
    size = np.hypot(dx, dy)
    if size < 1e-9:
        return f"<circle{attrs(class_=cls + ' dot', cx=f'{x0:.1f}', cy=f'{y0:.1f}', r='4')}/>"
    ux, uy = dx / size, dy / size
    head = min(10.0, size * 0.6) + width
    bx, by = x1 - head * ux, y1 - head * uy  # the base of the head
    half = head * 0.45
    points = f"{x1:.1f},{y1:.1f} {bx - half * uy:.1f},{by + half * ux:.1f} "
    points += f"{bx + half * uy:.1f},{by - half * ux:.1f}"
    line = attrs(
        class_=cls,
        x1=f"{x0:.1f}",
        y1=f"{y0:.1f}",
        x2=f"{bx:.1f}",
        y2=f"{by:.1f}",
        stroke_width=f"{width:.1f}",
    )
    return f"<line{line}/><polygon{attrs(class_=cls + ' head', points=points)}/>"


def _label(tip, text, cls, gap=14.0):
    """Text just beyond TIP, on the far side from the centre."""
    x, y = _xy(tip)
    dx, dy = x - SIZE / 2, y - SIZE / 2
    size = np.hypot(dx, dy) or 1.0
    x, y = x + gap * dx / size, y + gap * dy / size + 4
    anchor = "middle" if abs(dx) < 0.3 * size else ("start" if dx > 0 else "end")
    markup = attrs(class_=cls, x=f"{x:.1f}", y=f"{y:.1f}", text_anchor=anchor)
    return f"<text{markup}>{esc(text)}</text>"


def _plane(q, angle, length, seen):
    c = SIZE / 2
    parts = [
        f'<circle class="oh-ring" cx="{c}" cy="{c}" r="{SCALE * r:.1f}"/>'
        for r in range(1, int(m.MAX_LENGTH) + 1)
    ]
    parts.append(_line("oh-axis", (0, c), (SIZE, c)))
    parts.append(_line("oh-axis", (c, 0), (c, SIZE)))
    if length > 0:  # the query's direction, across the plane, and each key's foot on it
        u = q / length
        parts.append(_line("oh-dir", _xy(-REACH * u), _xy(REACH * u)))
        for k in m.KEYS:  # a dotted drop from each key's tip to its foot on that direction
            parts.append(_line("oh-proj", _xy(k), _xy((k @ u) * u)))
    labels = []
    for j, (word, k) in enumerate(zip(m.WORDS, m.KEYS, strict=True)):
        parts.append(_arrow(k, "oh-key", 1.5 + 5 * float(seen["shares"][j])))
        text = f"{word} {percent(seen['shares'][j])}"
        reach = float(np.hypot(*k))
        if length > reach and abs((angle - m.AIMS[word] + 180) % 360 - 180) < 15:
            # the query runs on past this key's tip: name the key beside its tip instead
            side = np.array([k[1], -k[0]]) / reach
            labels.append(_label(k + side * 0.45, text, "oh-key-label", gap=0.0))
        else:
            labels.append(_label(k, text, "oh-key-label"))
    parts.append(_arrow(q, "oh-query", 3.5))
    # the query's name sits beside its tip, off the line where keys' names sit
    side = np.array([-q[1], q[0]]) / length if length > 0 else np.array([0.0, -1.0])
    labels.append(_label(q + side * 0.5, "query", "oh-query-label", gap=0.0))
    parts += labels  # names last, each on a halo, so no line crosses them
    keys = "; ".join(f"{quoted(word)} at {round(m.AIMS[word]) % 360}°" for word in m.WORDS)
    label = (
        f"A plane with {count_words(len(m.WORDS))} key arrows ({keys}) and the query arrow "
        f"at {angle}°, length {_length_text(length)}."
    )
    return _svg("oh-plane", SIZE, label, parts)


def _values_square(out):
    """The values as points on the corners of a square, and the output among them."""
    scale = VSIZE / (VHIGH - VLOW)

    def xy(v):
        return (v[0] - VLOW) * scale, VSIZE - (v[1] - VLOW) * scale

    (x0, y0), (x1, y1) = xy((0, 0)), xy((1, 1))
    parts = [
        f'<rect class="oh-square" x="{x0:.1f}" y="{y1:.1f}" width="{x1 - x0:.1f}"'
        f' height="{y0 - y1:.1f}"/>'
    ]
    for word, v in zip(m.WORDS, m.VALUES, strict=True):
        x, y = xy(v)
        below = v[1] < 0.5
        parts.append(f'<circle class="oh-val" cx="{x:.1f}" cy="{y:.1f}" r="4"/>')
        at = attrs(class_="oh-val-label", x=f"{x:.1f}", y=f"{y + (16 if below else -9):.1f}")
        parts.append(f"<text{at}>{esc(word)}</text>")
    x, y = xy(out)
    d = 7
    parts.append(
        f'<polygon class="oh-out" points="{x:.1f},{y - d:.1f} {x + d:.1f},{y:.1f} '
        f'{x:.1f},{y + d:.1f} {x - d:.1f},{y:.1f}"/>'
    )
    label = (
        f"The {count_words(len(m.WORDS))} values at the corners of a square and the output at "
        f"[{num(out[0])}, {num(out[1])}], a blend of them."
    )
    svg = _svg("oh-values", VSIZE, label, parts)
    return (
        f'<div class="oh-values-box">{svg}<p class="oh-legend">Dots: the values. '
        "Diamond: the output, the values blended by the shares.</p></div>"
    )


# ---------------------------------------------------------------- the numbers


def _table(q, seen):
    root = num(np.sqrt(m.D_HEAD))
    rows = []
    for j, word in enumerate(m.WORDS):
        k = m.KEYS[j]
        share = float(seen["shares"][j])
        bar = kit.bar(share)
        rows.append(
            f'<tr><th scope="row">{esc(word)}</th>'
            f"<td>[{num(k[0], 1)}, {num(k[1], 1)}]</td>"
            f"<td>{num(seen['dots'][j])}</td><td>{num(seen['scores'][j])}</td>"
            f'<td class="oh-share">{percent(share)}</td><td>{bar}</td></tr>'
        )
    return (
        '<table class="mh-matrix oh-table">'
        f"<caption>Query [{num(q[0])}, {num(q[1])}] against each key</caption>"
        '<thead><tr><td></td><th scope="col">key k</th><th scope="col">q · k</th>'
        f'<th scope="col">score = q · k ÷ {root}</th><th scope="col">share</th>'
        "<td></td></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody>"
        '<tfoot><tr><th scope="row">Total</th><td></td><td></td><td></td>'
        f'<td class="oh-share">{percent(seen["shares"].sum())}</td><td></td></tr></tfoot></table>'
    )
