"""Figure "Nine queries, three keys and values": grouped-query attention in SmolLM2. Each layer
has 9 query heads but only 3 key/value heads; query head h reads key/value head h // 3.

State: head (1 … 9, the query head chosen), layer (1-based; "" opens the layer of the
strongest induction head). The diagram shows which query heads share the chosen head's keys
and values; beside it, the three sharing heads' maps in that layer, on the first run of
random tokens said twice.
"""

from ..page import kit
from ..page.html import attrs, esc, head_name, pct, quoted, tenths_rows
from . import heads as hc

DEFAULTS = {"head": "", "layer": ""}
_model = hc.index()["model"]
CHOICES = {
    "head": tuple(str(h) for h in range(1, _model["heads"] + 1)),
    "layer": tuple(str(n) for n in range(1, _model["layers"] + 1)),
}


def normalise(state):
    """-> kit.Normalised: a head or layer not given, or not the model's, is the strongest
    induction head's."""
    state = kit.merge(DEFAULTS, state, choices=CHOICES)
    top = hc.strongest("induction", 1)[0]
    state["head"] = state["head"] or str(top[1] + 1)
    state["layer"] = state["layer"] or str(top[0] + 1)
    return kit.Normalised(state)


def diagram(head, heads, kv, *, group_only=False):
    """The wiring as SVG: a box per query head on top, a box per key/value head below, a wire
    from each query head to the key/value head it reads; HEAD's group drawn on (0-based).
    GROUP_ONLY draws HEAD's group alone (its query heads and the key/value head they read):
    what a phone shows, where the nine do not fit beside each other at a readable size."""
    w, gap, top, low = 44, 8, 8, 96
    group = heads // kv
    mine = hc.kv_head(head)
    first = mine * group
    shown = range(first, first + group) if group_only else range(heads)
    kvs = [mine] if group_only else range(kv)
    width = len(shown) * (w + gap)

    def left(h):  # the x of query head h's box
        return (h - shown[0]) * (w + gap)

    body = []
    for h in shown:
        k = h // group
        x = left(h) + w / 2
        kx = left(k * group + (group - 1) / 2) + w / 2
        on = " on" if k == mine else ""
        body.append(f'<line class="wire{on}" x1="{x:g}" y1="{top + 24}" x2="{kx:g}" y2="{low}"/>')
    for h in shown:
        on = " on" if hc.kv_head(h) == mine else ""
        x = left(h)
        body.append(f'<rect class="q{on}" x="{x}" y="{top}" width="{w}" height="24" rx="4"/>')
        body.append(f'<text x="{x + w / 2:g}" y="{top + 16}" text-anchor="middle">H{h + 1}</text>')
    for k in kvs:
        on = " on" if k == mine else ""
        x = left(k * group + (group - 1) / 2) - 20
        box = f'x="{x:g}" y="{low}" width="{w + 40}" height="26"'
        body.append(f'<rect class="kv{on}" {box} rx="4"/>')
        mid = f'x="{x + (w + 40) / 2:g}" y="{low + 17}"'
        body.append(f'<text {mid} text-anchor="middle">K, V {k + 1}</text>')
    label = (
        f"Query heads H{first + 1} to H{first + group} all read key/value head {mine + 1}."
        if group_only
        else f"Nine query heads above, three key/value heads below. Query heads H{first + 1} "
        f"to H{first + group} all read key/value head {mine + 1}."
    )
    markup = attrs(
        # the group alone on a narrow screen (site.css), never in a download
        class_="mh-svg hc-gqa mh-narrow-only" if group_only else "mh-svg hc-gqa mh-wide-only",
        viewBox=f"0 0 {width} {low + 30}",
        role="img",
        aria_label=label,
        width=str(width),
        height=str(low + 30),
    )
    return f"<svg{markup}>{''.join(body)}</svg>"


def render(state=None, fid="copy-gqa"):
    state = normalise(state).state
    head, layer = int(state["head"]) - 1, int(state["layer"]) - 1
    heads, kv, layers = _model["heads"], _model["kv_heads"], _model["layers"]
    sharing = hc.siblings(head)
    run = hc.text(hc.runs()[0]["id"])
    scores = hc.scores()
    options = [(str(h + 1), f"H{h + 1}") for h in range(heads)]
    steps = [
        (max(1, layer), "◀ Layer before", "layer-down"),
        (min(layers, layer + 2), "Layer after ▶", "layer-up"),
    ]
    nudges = "".join(
        '<button type="button"'
        + attrs(data_key="layer", data_value=str(to), data_fk=fk, disabled=to == layer + 1)
        + f">{esc(t)}</button>"
        for to, t, fk in steps
    )
    controls = kit.controls(
        kit.choices("head", options, state["head"], label="Query head", cls="mh-pick hc-gqa-pick"),
        f'<div class="hc-out"><span>Layer {layer + 1} of {layers}</span>{nudges}</div>',
    )
    maps = []
    for h in sharing:
        name = head_name(layer + 1, h + 1)
        said = (
            f"induction {100 * float(scores['induction'][layer, h]):.0f}%, "
            f"first token {100 * float(scores['sink'][layer, h]):.0f}%"
        )
        picture = kit.heatmap_svg(
            run["att"][layer, h], label=f"{name} on random tokens said twice", cell=3
        )
        maps.append(
            f'<li class="hc-head"><span class="hc-name">{esc(name)}</span>{picture}'
            f'<span class="hc-row">{esc(said)}</span></li>'
        )
    names = [head_name(layer + 1, h + 1) for h in sharing]
    line = (
        f"{names[sharing.index(head)]} shares its keys and values with "
        + " and ".join(n for h, n in zip(sharing, names, strict=True) if h != head)
        + f": all three read key/value head {hc.kv_head(head) + 1} of layer {layer + 1}. "
        "Each makes its own query, so each can look somewhere else."
    )
    html = (
        controls
        + diagram(head, heads, kv)
        + diagram(head, heads, kv, group_only=True)
        + f'<p class="hc-note">{esc(line)}</p>'
        + f'<ol class="hc-heads hc-gqa-heads">{"".join(maps)}</ol>'
        + kit.legend("masked (a later token)")
    )
    return kit.result(html, state, summary=line)


def download_tables(state, fid="copy-gqa"):
    """The numbers behind the figure, for the download's CSV (toymodels.page.download): the
    sharing heads' scores as the lines under their maps give them, and each head's map (every
    token's row, in tenths of a percent as the kit's grids show shares) on the run drawn."""
    state = normalise(state).state
    head, layer = int(state["head"]) - 1, int(state["layer"]) - 1
    sharing = hc.siblings(head)
    run = hc.text(hc.runs()[0]["id"])
    scores = hc.scores()
    names = [head_name(layer + 1, h + 1) for h in sharing]
    said = [quoted(hc.shown(p)) for p in run["pieces"]]
    tables = [
        {
            "caption": f"The query heads sharing key/value head {hc.kv_head(head) + 1} of layer "
            f"{layer + 1}: their scores on random tokens said twice",
            "columns": ["induction", "first token"],
            "rows": [
                (
                    name,
                    [
                        f"{100 * float(scores[kind][layer, h]):.0f}%"
                        for kind in ("induction", "sink")
                    ],
                )
                for h, name in zip(sharing, names, strict=True)
            ],
        }
    ]
    for h, name in zip(sharing, names, strict=True):
        rows = tenths_rows(run["att"][layer, h])
        tables.append(
            {
                "caption": f"{name}'s map on random tokens said twice (row: token looking)",
                "columns": said,
                "rows": [
                    (
                        f"{i} {said[i]}",
                        [
                            f"{said[i]} → {said[j]}: {pct(t)}"
                            if j <= i
                            else f"{said[i]} cannot see {said[j]}: masked"
                            for j, t in enumerate(row + [0] * (len(said) - len(row)))
                        ],
                    )
                    for i, row in enumerate(rows)
                ],
            }
        )
    return tables
