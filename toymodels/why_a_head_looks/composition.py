"""Figure "What the weights say": for a later head of SmolLM2 measured by the export, every
earlier head's K-composition score from the weights alone (Elhage et al. 2021; smollm2.py's
k_composition) against its measured key-side lift on the texts, with Spearman's rank
correlation of the two and the heads each ranks first.

Everything comes from the export (exported.py).
"""

from ..page import kit
from ..page.html import count_words, esc, num
from . import exported as ex
from .circuit import options

DEFAULTS = {"head": ""}
TOP = 5  # heads listed by each measure


def ranked(values, names, n=TOP):
    """The N names with the largest values, largest first (ties: the earlier head)."""
    order = sorted(range(len(values)), key=lambda i: (-values[i], i))[:n]
    return [names[i] for i in order]


def render(state=None, fid="why-weights"):
    """State in; the figure's html, slots, state, error and summary out."""
    state = kit.merge(DEFAULTS, state)  # the export's heads are read when drawing, not before
    h = ex.head(state["head"])
    state["head"] = ex.slug(h["name"])
    names, k, lift = ex.earlier(h), h["k"], h["lift"]
    by_k, by_lift = ranked(k, names), ranked(lift, names)
    both = [n for n in by_k if n in by_lift]
    shared = count_words(len(both), "head", start=True)
    said = (
        f"{h['name']}: {count_words(len(names), 'earlier head')}. Rank correlation of the "
        f"K-composition score with the measured key-side lift: {num(h['rank'])}. By the "
        f"weights, first {', '.join(by_k[:3])}; by the measure, first {', '.join(by_lift[:3])}."
        f" {shared} of each top {TOP} agree. Random weights of these shapes score "
        f"{num(ex.data()['k_random'], 3)}."
    )
    hi_k, lo_l, hi_l = max(k), min(lift), max(lift)
    picture = kit.scatter_svg(
        k,
        lift,
        x_range=(0, hi_k * 1.05),
        y_range=(min(lo_l, 0) - 0.5, hi_l + 0.5),
        x_label="K-composition score, from the weights",
        y_label="key-side lift, measured",
        title=said,
        x_ticks=[(x, num(x)) for x in (0, hi_k / 2, hi_k)],
        y_ticks=[(y, num(y, 1)) for y in (0, hi_l / 2, hi_l)],
    )
    at = {n: names.index(n) for n in {*by_k, *by_lift}}  # ties: the earlier head, as ranked()
    rows = sorted(at, key=lambda n: (-k[at[n]], at[n]))
    table = kit.matrix(
        f"Earlier heads of {h['name']} that either measure ranks in its top {TOP}",
        rows,
        ["K-composition", "Key-side lift"],
        [[k[names.index(n)], lift[names.index(n)]] for n in rows],
        places=3,
    )
    html = (
        kit.controls(kit.choices("head", options(), state["head"], label="Later head"))
        + f'<div class="hc-scroll">{picture}</div>'
        + table
        + f'<p class="mh-summary">{esc(said)}</p>'
    )
    return kit.result(html, state, summary=said)
