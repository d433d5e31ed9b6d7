"""The shape of multi-head attention as an SVG drawn at build time:
X -> head 1 … head h -> concat -> W^O.

Drawn twice: left to right for a wide column, and top to bottom for a phone's (site.css shows
one), so its labels are never shrunk below a legible size."""

from ..page.figure import result
from ..page.html import MATRIX_NAME, esc, spoken

W, H = 640, 250
SAYS = spoken(
    "X goes to every head at once; the heads’ outputs are concatenated and multiplied by W_O, "
    "giving the same shape as X."
)
# W_O raised as the maths writes it (W^O); it ends its label, so the raised baseline ends too
RAISED = r'W<tspan dy="-6" font-size="75%">\1</tspan>'


def _label(text):
    return MATRIX_NAME.sub(RAISED, esc(text))


def _box(x, y, w, h, label, cls="box", sub=""):
    middle = x + w / 2
    text = (
        f'<text x="{middle}" y="{y + h / 2 + (-4 if sub else 5)}" text-anchor="middle">'
        f"{_label(label)}</text>"
    )
    if sub:
        text += (
            f'<text class="sub" x="{middle}" y="{y + h / 2 + 14}" text-anchor="middle">'
            f"{esc(sub)}</text>"
        )
    return f'<rect class="{cls}" x="{x}" y="{y}" width="{w}" height="{h}" rx="6"/>{text}'


def _arrow(x1, y1, x2, y2):
    return (
        f'<line class="arrow" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" marker-end="url(#mh-arrow)"/>'
    )


ARROWHEAD = (
    '<defs><marker id="{id}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
    'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" class="arrowhead"/>'
    "</marker></defs>"
)


def _svg(cls, w, h, title_id, parts):
    return (
        f'<svg class="mh-diagram {cls}" viewBox="0 0 {w} {h}" role="img" '
        f'aria-labelledby="{title_id}"><title id="{title_id}">{esc(SAYS)}</title>'
        + "".join(parts)
        + "</svg>"
    )


def svg(heads=("head 1", "head 2", "…", "head h")):
    parts = [ARROWHEAD.format(id="mh-arrow")]
    parts.append(_box(10, 100, 90, 50, "X", sub="T × d_model"))
    gap = (H - 20) / len(heads)
    for i, name in enumerate(heads):
        y = 10 + i * gap + (gap - 40) / 2
        if name == "…":
            parts.append(f'<text x="235" y="{y + 25}" text-anchor="middle" class="dots">⋮</text>')
            continue
        parts.append(
            _box(170, y, 130, 40, name, cls=f"box head{min(i + 1, 2)}", sub="T × d_model/h")
        )
        parts.append(_arrow(100, 125, 168, y + 20))
        parts.append(_arrow(300, y + 20, 378, 125))
    parts.append(_box(380, 100, 100, 50, "concat", sub="T × d_model"))
    parts.append(_arrow(480, 125, 518, 125))
    parts.append(_box(520, 100, 110, 50, "· W_O", sub="T × d_model"))
    return _svg("mh-diagram-wide", W, H, "mh-diagram-title", parts) + tall(heads)


def tall(heads):
    """The same diagram top to bottom, 340 wide: X over the heads, which a line on the left feeds
    and a line on the right gathers into concat, then W^O."""
    w, top, step = 340, 90, 50
    parts = [ARROWHEAD.format(id="mh-arrow-tall")]
    parts.append(_box(95, 10, 150, 50, "X", sub="T × d_model"))
    parts.append('<line class="arrow" x1="95" y1="35" x2="40" y2="35"/>')
    bottom = top + (len(heads) - 1) * step + 20
    parts.append(f'<line class="arrow" x1="40" y1="35" x2="40" y2="{bottom}"/>')
    parts.append(f'<line class="arrow" x1="300" y1="{top + 20}" x2="300" y2="{bottom + 40}"/>')
    for i, name in enumerate(heads):
        y = top + i * step
        if name == "…":
            parts.append(f'<text x="170" y="{y + 28}" text-anchor="middle" class="dots">⋮</text>')
            continue
        parts.append(
            _box(95, y, 150, 40, name, cls=f"box head{min(i + 1, 2)}", sub="T × d_model/h")
        )
        parts.append(
            f'<line class="arrow" x1="40" y1="{y + 20}" x2="93" y2="{y + 20}" '
            'marker-end="url(#mh-arrow-tall)"/>'
        )
        parts.append(f'<line class="arrow" x1="245" y1="{y + 20}" x2="300" y2="{y + 20}"/>')
    concat = bottom + 60
    parts.append(
        f'<line class="arrow" x1="300" y1="{bottom + 40}" x2="247" y2="{concat + 25}" '
        'marker-end="url(#mh-arrow-tall)"/>'
    )
    parts.append(_box(95, concat, 150, 50, "concat", sub="T × d_model"))
    parts.append(
        f'<line class="arrow" x1="170" y1="{concat + 50}" x2="170" y2="{concat + 78}" '
        'marker-end="url(#mh-arrow-tall)"/>'
    )
    parts.append(_box(95, concat + 80, 150, 50, "· W_O", sub="T × d_model"))
    return _svg("mh-diagram-tall", w, concat + 140, "mh-diagram-tall-title", parts)


def render(state=None, fid="diagram"):
    return result(svg(), {}, summary=SAYS)
