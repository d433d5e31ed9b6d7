"""The shape of multi-head attention as an SVG drawn at build time:
X -> head 1 … head h -> concat -> W_O."""

from ..page.figure import result
from ..page.html import esc

W, H = 640, 250
SAYS = (
    "X goes to every head at once; the heads’ outputs are concatenated and multiplied by W_O, "
    "giving the same shape as X."
)


def _box(x, y, w, h, label, cls="box", sub=""):
    middle = x + w / 2
    text = (
        f'<text x="{middle}" y="{y + h / 2 + (-4 if sub else 5)}" text-anchor="middle">'
        f"{esc(label)}</text>"
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


def svg(heads=("head 1", "head 2", "…", "head h")):
    parts = [
        '<defs><marker id="mh-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" class="arrowhead"/>'
        "</marker></defs>"
    ]
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
    return (
        f'<svg class="mh-diagram" viewBox="0 0 {W} {H}" role="img" '
        f'aria-labelledby="mh-diagram-title"><title id="mh-diagram-title">{esc(SAYS)}</title>'
        + "".join(parts)
        + "</svg>"
    )


def render(state=None, fid="diagram"):
    return result(svg(), {}, summary=SAYS)
