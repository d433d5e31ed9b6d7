"""A distribution as bars: a table with a bar per row on screen, and an SVG chart.

The table (`bars`) holds the numbers, so screen readers and the download read them; its bars
are decoration (aria-hidden). The chart (`bars_svg`) is one image, named by its largest bars in
words; the download keeps it as drawn, in the same colours.
"""

from ..html import attrs, esc, pct, tenths
from .tables import exact_total, rounding_note


def bar(share, width=100):
    """A share in [0, 1] as a horizontal bar WIDTH pixels long at 100%: decoration beside the
    number it shows."""
    return (
        f'<svg class="mh-bar" viewBox="0 0 {width} 10" width="{width}" height="10"'
        f' aria-hidden="true"><rect class="mh-bar-bg" x="0" y="0" width="{width}" height="10"/>'
        f'<rect class="mh-bar-fill" x="0" y="0" width="{width * share:.1f}" height="10"/></svg>'
    )


def bars(labels, shares, *, caption, column="Share"):
    """A distribution over LABELS as a table: a row per label with its share (rounded to the
    nearest tenth of a point, as shares_table does, with the exact total) and its bar."""
    shown = tenths(shares)
    rows = "".join(
        f'<tr><th scope="row">{esc(label)}</th><td>{pct(t)}</td><td>{bar(float(p))}</td></tr>'
        for label, t, p in zip(labels, shown, shares, strict=True)
    )
    return (
        f'<table class="mh-matrix mh-dist"><caption>{esc(caption)}</caption>'
        f'<thead><tr><td></td><th scope="col">{esc(column)}</th><td></td></tr></thead>'
        f'<tbody>{rows}</tbody><tfoot><tr><th scope="row">Total</th>'
        f"<td>{pct(exact_total(shares))}</td><td></td></tr></tfoot></table>"
        + rounding_note([shown])
    )


def bars_svg(labels, shares, *, title, top=5, keys=None):
    """A distribution as an SVG column chart, a column per label, the TOP largest labelled with
    their percentage; named "TITLE: “a” 40.0%, …" for screen readers. KEYS, if given, go into
    each bar's data-ch (what a test or the page may read back)."""
    w, h, base, n = 22, 150, 118, len(labels)
    best = sorted(range(n), key=lambda i: -shares[i])[:top]
    body = [f'<line class="axis" x1="0" y1="{base}" x2="{w * n}" y2="{base}"/>']
    for i, label in enumerate(labels):
        p = float(shares[i])
        bh = p * (base - 18)
        x = i * w
        rect = attrs(
            class_="bar top" if i in best else "bar",
            x=x + 3,
            y=f"{base - bh:.2f}",
            width=w - 6,
            height=f"{bh:.2f}",
            data_ch=None if keys is None else keys[i],
            data_p=repr(p),
        )
        body.append(f"<rect{rect}><title>{esc(label)}: {100 * p:.1f}%</title></rect>")
        body.append(f'<text class="tick" x="{x + w / 2}" y="{base + 16}">{esc(label)}</text>')
        if i in best:
            body.append(
                f'<text class="val" x="{x + w / 2}" y="{base - bh - 4:.2f}">{100 * p:.0f}%</text>'
            )
    said = ", ".join(f"“{labels[i]}” {100 * shares[i]:.1f}%" for i in best)
    markup = attrs(
        class_="mh-svg mh-bars",
        viewBox=f"0 0 {w * n} {h}",
        role="img",
        aria_label=f"{title}: {said}",
    )
    return f'<svg{markup} width="{w * n}" height="{h}">{"".join(body)}</svg>'


def scatter_svg(xs, ys, *, x_range, y_range, x_label, y_label, title, x_ticks, y_ticks):
    """Points (xs[i], ys[i]) as an SVG scatter plot, 420 × 300 px: axes over X_RANGE and
    Y_RANGE (low, high), a line at y = 0 when it is in range, ticks at (value, text) of
    X_TICKS and Y_TICKS, the axes named X_LABEL and Y_LABEL, and TITLE for screen readers (the
    points are too many to read out: say in TITLE what they show). Points outside the ranges
    are drawn on their edge."""
    W, H, left, bottom, top, right = 420, 300, 48, 40, 10, 12
    (x0, x1), (y0, y1) = x_range, y_range

    def px(x):
        return left + (min(max(float(x), x0), x1) - x0) / (x1 - x0) * (W - left - right)

    def py(y):
        return H - bottom - (min(max(float(y), y0), y1) - y0) / (y1 - y0) * (H - top - bottom)

    body = [
        f'<rect class="frame" x="{left}" y="{top}" width="{W - left - right}" '
        f'height="{H - top - bottom}"/>'
    ]
    if y0 < 0 < y1:
        body.append(
            f'<line class="axis" x1="{left}" y1="{py(0):.1f}" x2="{W - right}" y2="{py(0):.1f}"/>'
        )
    for v, text in x_ticks:
        body.append(f'<text class="tick" x="{px(v):.1f}" y="{H - bottom + 14}">{esc(text)}</text>')
    for v, text in y_ticks:
        body.append(f'<text class="end" x="{left - 4}" y="{py(v) + 4:.1f}">{esc(text)}</text>')
    body.append(
        f'<text class="tick" x="{(left + W - right) / 2}" y="{H - 6}">{esc(x_label)}</text>'
    )
    body.append(
        f'<text class="tick" transform="translate(12 {(top + H - bottom) / 2}) rotate(-90)">'
        f"{esc(y_label)}</text>"
    )
    dots = "".join(
        f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2.2"/>' for x, y in zip(xs, ys, strict=True)
    )
    body.append(f'<g class="dot">{dots}</g>')
    markup = attrs(class_="mh-svg mh-scatter", viewBox=f"0 0 {W} {H}", role="img", aria_label=title)
    return f'<svg{markup} width="{W}" height="{H}">{"".join(body)}</svg>'
