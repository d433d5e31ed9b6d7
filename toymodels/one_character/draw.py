"""SVG pictures for the chapter "One character at a time", from plain numbers.

What: probability bars, colour strips of a vector, the MLP's neurons as needles, small
attention grids, the training plot and the model's block diagram. Each returns one
<svg role="img"> with an aria-label that says what it shows in words; colours are classes
(site CSS), so light and dark themes and print all work, and every picture also encodes
its numbers by shape or position, never by colour alone.
"""

from ..page import kit
from ..page.html import attrs, esc, num


def svg(width, height, label, body, cls="mh-svg", role="img"):
    return (
        f"<svg{attrs(class_=cls, viewBox=f'0 0 {width} {height}', role=role, aria_label=label)}"
        f' width="{width}" height="{height}">{body}</svg>'
    )


def show_char(ch):
    return {" ": "␣"}.get(ch, ch)


def bars(probs, vocab, top=5):
    """The next-character distribution: a column per character, the TOP largest labelled."""
    shown = [show_char(ch) for ch in vocab]
    return kit.bars_svg(shown, probs, title="Next character", top=top, keys=vocab)


def strip(values, label):
    """A vector as a row of cells coloured by size and sign, over a lane of bars up (positive) or
    down (negative)."""
    values = [float(v) for v in values]
    n = len(values)
    cw = max(7, 448 // n)
    ch, lane = 16, 24  # colour row, then the bar lane with its baseline in the middle
    mid = ch + lane / 2
    scale = max(abs(v) for v in values) or 1.0
    # a cell's class by size and sign (z, p1 … p5, n1 … n5) and one <path> per class, written out:
    # nine strips a tap, 48 cells each
    cells, ticks, z = {}, [], scale / 10
    for i, v in enumerate(values):
        x = i * cw
        c = "z" if abs(v) < z else f"{'p' if v > 0 else 'n'}{min(5, 1 + int(abs(v) / scale * 5))}"
        cells.setdefault(c, []).append(f"M{x} 0h{cw}v{ch}h{-cw}z")
        t = round(v / scale * (lane / 2 - 1), 1)
        ticks.append(f"M{x + 1} {mid:g}h{cw - 2}v{-t:g}h{2 - cw}z")
    body = (
        f'<line class="axis" x1="0" y1="{mid}" x2="{n * cw}" y2="{mid}"/>'
        + "".join(f'<path class="{c}" d="{"".join(d)}"/>' for c, d in cells.items())
        + f'<path class="tickbar" d="{"".join(ticks)}"/>'
    )
    return svg(
        n * cw,
        ch + lane,
        f"{label}: {n} numbers from {num(min(values))} to {num(max(values))}",
        body,
        "mh-svg mh-strip",
    )


def needles(act, label):
    """One neuron per needle: up for a positive output, down for a negative one."""
    n, gap, h = len(act), 3, 64
    mid = h * 0.7  # GELU's outputs are large when positive, small when negative
    scale = max(float(abs(act).max()), 1e-6)
    up, down = [], []
    for i, a in enumerate(act):
        a = float(a)
        (up if a > 0 else down).append(
            f"M{i * gap + 1.5:g} {mid:g}V{mid - a / scale * (mid - 2):.1f}"
        )
    body = (
        f'<line class="axis" x1="0" y1="{mid}" x2="{n * gap}" y2="{mid}"/>'
        f'<path class="needle pos" d="{"".join(up)}"/>'
        f'<path class="needle neg" d="{"".join(down)}"/>'
    )
    on = int((act > 0.5).sum())
    return svg(
        n * gap,
        h,
        f"{label}: {on} of {n} neurons above 0.5, the largest {num(float(act.max()))}",
        body,
        "mh-svg mh-needles",
    )


def grid(att, first, sel, label, cell=7):
    """One head's attention over characters FIRST … FIRST+W-1 (att is W×W), row SEL outlined."""
    return kit.heatmap_svg(att, label=label, selected=sel, first=first, cell=cell)


def plot(points, step, last, width=560, height=200):
    """Held-out bits (solid) and copying (dashed) over training, with the current step marked."""
    left, right, top, bottom = 44, 48, 12, 30
    iw, ih = width - left - right, height - top - bottom

    def x(s):
        return left + iw * s / last

    def yb(b):  # bits 1.5 … 5 upwards
        return top + ih * (5.0 - b) / 3.5

    def yc(c):  # copying 0 … 100%
        return top + ih * (1.0 - c)

    bits = " ".join(f"{x(p['step']):.1f},{yb(p['valid_bits']):.1f}" for p in points)
    copy = " ".join(f"{x(p['step']):.1f},{yc(p['copying']):.1f}" for p in points)
    body = [f'<path class="frame" d="M{left} {top} V{top + ih} H{left + iw} V{top}"/>']
    for b in (2, 3, 4, 5):
        body.append(f'<text class="tick end" x="{left - 5}" y="{yb(b) + 4:.1f}">{b}</text>')
    for c in (0, 0.5, 1):
        at = f'x="{left + iw + 5}" y="{yc(c) + 4:.1f}"'
        body.append(f'<text class="tick start" {at}>{int(c * 100)}%</text>')
    for s in range(0, last + 1, 1000 if last <= 10000 else 3000):
        body.append(f'<text class="tick" x="{x(s):.1f}" y="{top + ih + 16}">{s:,}</text>')
    body += [
        f'<polyline class="line bits" points="{bits}"/>',
        f'<polyline class="line copy" points="{copy}"/>',
    ]
    now = next(p for p in points if p["step"] == step)
    body += [
        f'<line class="now" x1="{x(step):.1f}" y1="{top}" x2="{x(step):.1f}" y2="{top + ih}"/>',
        f'<circle class="dot bits" cx="{x(step):.1f}" cy="{yb(now["valid_bits"]):.1f}" r="4"/>',
        f'<rect class="dot copy" x="{x(step) - 4:.1f}" y="{yc(now["copying"]) - 4:.1f}" '
        'width="8" height="8"/>',
    ]
    label = (
        f"Training: held-out bits per character fall from {points[0]['valid_bits']:.2f} to "
        f"{points[-1]['valid_bits']:.2f}; copying goes from {100 * points[0]['copying']:.0f}% to "
        f"{100 * points[-1]['copying']:.0f}%. Marked: step {step:,}, {now['valid_bits']:.2f} bits, "
        f"{100 * now['copying']:.1f}% copied."
    )
    return svg(width, height, label, "".join(body), "mh-svg mh-plot")


def architecture(cfg, anchors):
    """The blocks in order, top to bottom; each block is a link to the section that opens it."""
    D, H, M, L, V = cfg["d_model"], cfg["n_head"], cfg["d_mlp"], cfg["n_layer"], cfg["vocab"]
    rows = [
        ("in", f"text: one character at a time ({V} possible)", None),
        ("embed", f"embedding + position: {D} numbers", anchors["embed"]),
    ]
    for layer in range(1, L + 1):
        rows.append(
            (
                "attn",
                f"layer {layer}: norm → attention, {H} heads of {cfg['d_head']}  (+)",
                anchors["attention"],
            )
        )
        rows.append(("mlp", f"layer {layer}: norm → MLP {D} → {M} → {D}  (+)", anchors["mlp"]))
    rows += [
        ("norm", "final norm", anchors["residual"]),
        ("out", f"read-out: {V} scores → probabilities", anchors["predict"]),
    ]
    w, bh, gap = 400, 30, 12
    bottom = len(rows) * (bh + gap) - gap - bh / 2
    body = [f'<line class="stream" x1="20" y1="{bh / 2}" x2="20" y2="{bottom}"/>']
    for i, (kind, text, href) in enumerate(rows):
        y = i * (bh + gap)
        box = (
            f'<rect class="box {kind}" x="40" y="{y}" width="{w - 40}" height="{bh}" rx="4"/>'
            f'<text class="label" x="52" y="{y + 20}">{esc(text)}</text>'
        )
        body.append(f'<a href="#{esc(href)}">{box}</a>' if href else box)
        body.append(f'<circle class="join" cx="20" cy="{y + bh / 2}" r="4"/>')
    label = (
        f"The model in order: embedding and position, then {L} layers of attention and MLP each "
        "adding to the residual stream, a final norm and the read-out."
    )
    return svg(
        w, len(rows) * (bh + gap) - gap, label, "".join(body), "mh-svg mh-arch", role="group"
    )  # its links stay links


def length(v):
    """A vector's length: the square root of the sum of its numbers squared."""
    return float((v.astype(float) ** 2).sum() ** 0.5)


def lengths(parts, label):
    """Horizontal bars: the length of each vector added to the residual stream."""
    names = [n for n, _ in parts]
    sizes = [length(v) for _, v in parts]
    w, bh, lw = 520, 18, 170
    top = max(sizes) or 1.0
    body = []
    for i, (name, size) in enumerate(zip(names, sizes, strict=True)):
        y = i * (bh + 4)
        bw = (w - lw - 50) * size / top
        body.append(
            f'<text class="label end" x="{lw - 6}" y="{y + 13}">{esc(name)}</text>'
            f'<rect class="len" x="{lw}" y="{y}" width="{bw:.1f}" height="{bh}"/>'
            f'<text class="val start" x="{lw + bw + 4:.1f}" y="{y + 13}">{num(size)}</text>'
        )
    return svg(w, len(parts) * (bh + 4), label, "".join(body), "mh-svg mh-lengths")
