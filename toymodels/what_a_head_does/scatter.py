"""Figure "Looking against doing": every head of every kept pair as a point, its attention
from the last token to the word that differs (across) against the share of the logit
difference patching it at that same last token recovers (up; the patch at every position
also counts what the head does at other tokens, which this attention cannot see), with the
rank correlations of the two, for all the kept pairs or one family of them.

State: family ("all" or a family of heads.FAMILIES). Heads near zero on both measures (under
NEAR either way) are counted, not drawn: they are most of them, and all in one spot.
"""

import numpy as np

from ..page import kit
from ..page.html import count_words, esc, head_name, num
from . import heads as wh
from .attribution import spearman

DEFAULTS = {"family": "all"}
CHOICES = {"family": ("all",) + tuple(f for f, _ in wh.FAMILIES)}
NEAR = 0.05  # attention and |share recovered| both under this: not drawn
NAMES = {"all": "every kept pair"} | {f: label.lower() for f, label in wh.FAMILIES}


def points(family):
    """(attention, patching at the last token) over every head of the family's kept pairs,
    each flat (n,)."""
    kept = wh.kept()
    fam = {p["id"]: p["family"] for p in wh.all_pairs()}
    ns = [n for n, pid in enumerate(kept) if family == "all" or fam[pid] == family]
    a = wh.arrays()
    return a["att_clean"][ns].ravel(), a["patch_token"][ns].ravel(), len(ns)


def correlations(family):
    """Spearman's rank correlation of attention with patching, and with its size."""
    att, patch, _ = points(family)
    return spearman(att, patch), spearman(att, np.abs(patch))


def render(state=None, fid="what-scatter"):
    state = kit.merge(DEFAULTS, state, choices=CHOICES)
    family = state["family"]
    att, patch, n_pairs = points(family)
    rho, rho_size = correlations(family)
    drawn = (att >= NEAR) | (np.abs(patch) >= NEAR)
    hidden = int((~drawn).sum())
    said = (
        f"Attention to the word that differs against the share patching at the last token "
        f"recovers, every head "
        f"of {count_words(n_pairs, 'pair')} ({NAMES[family]}): rank correlation {num(rho)}, "
        f"{num(rho_size)} against the size of the share; {hidden:,} of {att.size:,} points "
        f"(a head in a pair) are under {100 * NEAR:g}% on both and not drawn."
    )
    picture = kit.scatter_svg(
        att[drawn],
        patch[drawn],
        x_range=(0, 1),
        y_range=(-0.6, 0.7),
        x_label="attention from the last token to the word that differs",
        y_label="share recovered, patched at the last token",
        title=said,
        x_ticks=[(x, f"{100 * x:.0f}%") for x in (0, 0.25, 0.5, 0.75, 1)],
        y_ticks=[(-0.5, "−50%"), (0, "0%"), (0.5, "+50%")],
    )
    options = [(f, "All pairs" if f == "all" else dict(wh.FAMILIES)[f]) for f in CHOICES["family"]]
    html = (
        kit.controls(kit.choices("family", options, family, label="Pairs shown"))
        + f'<div class="hc-scroll">{picture}</div>'
        + f'<p class="mh-summary">{esc(said)}</p>'
    )
    return kit.result(html, state, summary=said)


def download_tables(state, fid="what-scatter"):
    """The numbers behind the picture, for the download's CSV (toymodels.page.download): the
    rank correlations the summary gives, and every point, drawn or not (a head in a kept pair):
    its attention to the word that differs and the share patching it recovers, in percent."""
    family = kit.merge(DEFAULTS, state, choices=CHOICES)["family"]
    att, patch, _ = points(family)
    rho, rho_size = correlations(family)
    kept = wh.kept()
    fam = {p["id"]: p["family"] for p in wh.all_pairs()}
    pairs = [pid for pid in kept if family == "all" or fam[pid] == family]
    layers, heads = wh.arrays()["patch"].shape[1:]
    labels = [
        f"{pid} {head_name(layer + 1, h + 1)}"
        for pid in pairs
        for layer in range(layers)
        for h in range(heads)
    ]
    return [
        {
            "caption": f"Rank correlation of attention with patching, {NAMES[family]}",
            "columns": ["with the share recovered", "with its size"],
            "rows": [("Spearman", [num(rho), num(rho_size)])],
        },
        {
            "caption": f"Each head of {count_words(len(pairs), 'pair')} ({NAMES[family]})",
            "columns": ["attention", "share recovered"],
            "rows": [
                (label, [f"{num(100 * a, 1)}%", f"{num(100 * p, 1)}%"])
                for label, a, p in zip(labels, att, patch, strict=True)
            ],
        },
    ]
