"""Figure "Real heads": every layer and head of a pretrained model, read from the exported maps.

State: model, sentence (ids from the index), layer (1-based), token ("SENTENCE:INDEX" of
the highlighted row), head ("" or the enlarged head of this layer, 1-based),
view ("layer" or "model") and pick ("L.H", a one-shot request from the model
view: show layer L and enlarge head H). The build pre-renders the defaults;
the browser calls this same function under Pyodide, which fetches a sentence's
JSON on first use (toymodels.page.data).
"""

import numpy as np

from ..page.html import attrs, esc, level, pct, state_button, whole
from . import maps as rh

DEFAULTS = {
    "model": "",
    "sentence": "",
    "layer": "1",
    "token": "",
    "head": "",
    "view": "layer",
    "pick": "",
}
VIEWS = (("layer", "One layer"), ("model", "All heads"))
SHORT = {
    "previous": "prev",
    "next": "next",
    "self": "self",
    "sink": "sink",
    "broad": "broad",
    "other": "other",
}


def q(word):
    return f"“{word}”"


def _tenths(p):
    return int(round(float(p) * 1000))


def normalise(state):
    """Fill in defaults and clamp every field to what the data has; -> (state, model entry, sentence data)."""
    s = {**DEFAULTS, **{k: str(v) for k, v in (state or {}).items() if k in DEFAULTS}}
    models = rh.index()["models"]
    m = next((x for x in models if x["id"] == s["model"]), models[0])
    s["model"] = m["id"]
    ids = [x["id"] for x in m["sentences"]]
    if s["sentence"] not in ids:
        s["sentence"] = ids[0]
    d = rh.sentence(m["id"], s["sentence"])
    L, H = m["layers"], m["heads"]
    if s["pick"]:
        layer, _, head = s["pick"].partition(".")
        if 1 <= (whole(layer, 4) or 0) <= L and 1 <= (whole(head, 4) or 0) <= H:
            s["layer"], s["head"], s["view"] = layer, head, "layer"
        s["pick"] = ""
    if not 1 <= (whole(s["layer"], 4) or 0) <= L:
        s["layer"] = DEFAULTS["layer"]
    if not 1 <= (whole(s["head"], 4) or 0) <= H:
        s["head"] = ""
    if s["view"] not in dict(VIEWS):
        s["view"] = DEFAULTS["view"]
    toks = d["tokens"]
    sid, _, i = s["token"].rpartition(":")
    if not (sid == s["sentence"] and whole(i, 4) is not None and whole(i, 4) < len(toks)):
        i = str(len(toks) - 1 - toks[::-1].index("it") if "it" in toks else min(1, len(toks) - 1))
    s["token"] = f"{s['sentence']}:{i}"
    return s, m, d


def token_index(s):
    return int(s["token"].rpartition(":")[2])


def render(state=None, fid="real-heads"):
    """-> {"html", "slots": {"counts"}, "state", "error", "summary"}."""
    s, m, d = normalise(state)
    labels, per = rh.head_labels(d)
    layer, sel = int(s["layer"]) - 1, token_index(s)
    head = int(s["head"]) - 1 if s["head"] else None
    parts = [_controls(s, m, fid), _tokens(d, s["sentence"], sel)]
    if s["view"] == "model":
        parts.append(_model_view(d, m, labels, per, sel))
        summary = (
            f"{m['name']} on {q(d['text'])}, all {m['layers'] * m['heads']} heads. "
            + " ".join(_count_line(m, l, c) for l, c in enumerate(rh.counts(labels)))
        )
    else:
        parts.append(
            f'<p class="rh-layer-counts">{esc(_count_line(m, layer, rh.counts(labels)[layer]))}</p>'
        )
        parts.append(_layer_view(d, m, labels, per, layer, sel, head, fid))
        if head is not None:
            parts.append(_enlarged(d, s["sentence"], labels, per, layer, head, sel))
        summary = (
            f"{m['name']} on {q(d['text'])}, layer {layer + 1} of {m['layers']}. "
            + _count_line(m, layer, rh.counts(labels)[layer])
        )
    parts.append(_legend(d["causal"]))
    return {
        "html": "".join(parts),
        "slots": {"counts": counts_table(m, labels)},
        "state": s,
        "error": None,
        "summary": summary,
    }


def _controls(s, m, fid):
    models = rh.index()["models"]
    out = ['<div class="mh-controls rh-controls">']
    if len(models) > 1:
        out.append(
            '<div class="rh-row"><span class="rh-what" aria-hidden="true">Model</span>'
            '<div class="mh-pick" role="group" aria-label="Model" data-roving>'
            + "".join(
                state_button("model", x["id"], x["name"], x["id"] == s["model"]) for x in models
            )
            + "</div></div>"
        )
    out.append(
        '<div class="rh-row"><span class="rh-what" aria-hidden="true">Sentence</span>'
        '<div class="rh-sentences" role="group" aria-label="Sentence" data-roving>'
        + "".join(
            state_button(
                "sentence", x["id"], x["text"], x["id"] == s["sentence"], fk=f"s-{x['id']}"
            )
            for x in m["sentences"]
        )
        + "</div></div>"
    )
    layer = int(s["layer"])
    steps = "".join(
        state_button(
            "layer", str(n), str(n), str(n) == s["layer"], cls="rh-step", aria_label=f"Layer {n}"
        )
        for n in range(1, m["layers"] + 1)
    )
    back = (
        f'<button type="button"{attrs(class_="rh-nudge", data_key="layer", data_value=str(max(1, layer - 1)), data_fk="layer-down", disabled=layer == 1)}>'
        '<span aria-hidden="true">◀</span><span class="sr">Previous layer</span></button>'
    )
    fwd = (
        f'<button type="button"{attrs(class_="rh-nudge", data_key="layer", data_value=str(min(m["layers"], layer + 1)), data_fk="layer-up", disabled=layer == m["layers"])}>'
        '<span aria-hidden="true">▶</span><span class="sr">Next layer</span></button>'
    )
    out.append(
        f'<div class="rh-row rh-slider"><span class="rh-what" id="{esc(fid)}-layer">Layer</span>{back}'
        f'<div class="rh-track" role="group" aria-labelledby="{esc(fid)}-layer" data-roving>{steps}</div>{fwd}'
        f'<span class="rh-of">of {m["layers"]}</span></div>'
    )
    out.append(
        '<div class="rh-row"><span class="rh-what" aria-hidden="true">View</span>'
        '<div class="mh-pick" role="group" aria-label="View" data-roving>'
        + "".join(
            state_button(
                "view",
                v,
                t if v == "layer" else f"All {m['layers'] * m['heads']} heads",
                v == s["view"],
            )
            for v, t in VIEWS
        )
        + "</div></div>"
    )
    out.append("</div>")
    return "".join(out)


def _tokens(d, sid, sel):
    buttons = "".join(
        state_button(
            "token",
            f"{sid}:{i}",
            t,
            i == sel,
            fk=f"t{i}",
            cls="mh-word rh-token" + (" rh-special" if i in d["sinks"] and not d["causal"] else ""),
        )
        for i, t in enumerate(d["tokens"])
    )
    return (
        f'<div class="mh-words rh-tokens" role="group" aria-label="Tokens: choose one to highlight its row in every head" data-roving>'
        f"{buttons}</div>"
    )


def _count_line(m, layer, c):
    parts = [f"{n} {rh.NAMES[k]}" for k, n in c.items() if n]
    return f"Layer {layer + 1}: " + ", ".join(parts) + "."


def _thumb(A, sel, causal):
    """A head's map as a small picture: spans styled as a table, one colour class per cell."""
    T = A.shape[0]
    rows = []
    for i in range(T):
        cells = "".join(
            '<i class="masked"></i>' if causal and j > i else f'<i class="{level(A[i, j])}"></i>'
            for j in range(T)
        )
        rows.append(f"<span{attrs(class_='sel' if i == sel else None)}>{cells}</span>")
    return f'<span class="rh-thumb" aria-hidden="true">{"".join(rows)}</span>'


def _layer_view(d, m, labels, per, layer, sel, head, fid):
    items = []
    for h in range(m["heads"]):
        lab = labels[layer][h]
        sid = f"{fid}-sum-{h + 1}"
        text = rh.summary(d, layer, h, lab, per[layer][h])
        items.append(
            f"<li{attrs(class_='rh-head' + (' is-open' if h == head else ''), data_head=str(h + 1), data_label=lab)}>"
            f'<button type="button"{attrs(class_="rh-pickhead", data_key="head", data_value="" if h == head else str(h + 1), data_fk=f"head-{h + 1}", aria_pressed=str(h == head).lower(), aria_describedby=sid)}>'
            f'<span class="rh-name">Head {rh.head_name(layer, h)}</span> <span class="rh-tag rh-{lab}">{esc(rh.NAMES[lab])}</span>'
            f"{_thumb(d['att'][layer, h], sel, d['causal'])}</button>"
            f'<p class="rh-sum" id="{esc(sid)}">{esc(text)}</p></li>'
        )
    return (
        f'<ol class="rh-heads" aria-label="The {m["heads"]} heads of layer {layer + 1}; choose one to enlarge it">'
        f"{''.join(items)}</ol>"
    )


def _enlarged(d, sid, labels, per, layer, head, sel):
    A, toks, T = d["att"][layer, head], d["tokens"], len(d["tokens"])
    lab = labels[layer][head]
    name = f"Head {rh.head_name(layer, head)}"
    cols = "".join(f'<th scope="col"><span>{esc(t)}</span></th>' for t in toks)
    rows = []
    for i in range(T):
        cells = []
        for j in range(T):
            if d["causal"] and j > i:
                tip, cls = f"{q(toks[i])} cannot see {q(toks[j])}: masked", "c masked"
            else:
                tip, cls = (
                    f"{q(toks[i])} → {q(toks[j])}: {pct(_tenths(A[i, j]))}",
                    f"c {level(A[i, j])}",
                )
            cells.append(
                f"<td{attrs(class_=cls, tabindex='0' if (i, j) == (sel, 0) else '-1', data_fk=f'big-{i}-{j}', data_key='token', data_value=f'{sid}:{i}')}>"
                f'<span class="tip">{esc(tip)}</span></td>'
            )
        rows.append(
            f'<tr{attrs(class_="sel" if i == sel else None)}><th scope="row">{esc(toks[i])}</th>{"".join(cells)}</tr>'
        )
    row = A[sel]
    top = [j for j in np.argsort(-row, kind="stable")[:3] if row[j] > 0]
    looks = ", ".join(f"{q(toks[j])} {pct(_tenths(row[j]))}" for j in top)
    return (
        f'<section class="rh-big" aria-label="{esc(name)}, enlarged">'
        f'<div class="rh-big-head"><h4 class="mh-head-title">{esc(name)} · {esc(rh.NAMES[lab])}</h4>'
        f'<button type="button"{attrs(data_key="head", data_value="", data_fk="close")}>Close</button></div>'
        f'<p class="rh-sum">{esc(rh.summary(d, layer, head, lab, per[layer][head]))}</p>'
        f'<p class="rh-looks">{esc(q(toks[sel]))} looks most at {esc(looks)}.</p>'
        f'<div class="rh-scroll"><table class="mh-grid rh-grid" data-roving="grid">'
        f'<caption class="sr">{esc(name)}: a row is a token looking, a column a token looked at; '
        f"darker cells get more of the row’s attention</caption>"
        f"<thead><tr><td></td>{cols}</tr></thead><tbody>{''.join(rows)}</tbody></table></div></section>"
    )


def _model_view(d, m, labels, per, sel):
    rows = []
    c = rh.counts(labels)
    for l in range(m["layers"]):
        cells = []  # one button per head: its picture, its label, and its summary for screen readers
        for h in range(m["heads"]):
            lab = labels[l][h]
            text = rh.summary(d, l, h, lab, per[l][h])
            cells.append(
                f'<td><button type="button"{attrs(class_="rh-mini", data_key="pick", data_value=f"{l + 1}.{h + 1}", data_fk=f"pick-{l + 1}-{h + 1}", data_label=lab, tabindex="0" if (l, h) == (0, 0) else "-1")}>'
                f'{_thumb(d["att"][l, h], sel, d["causal"])}<span class="rh-tag rh-{lab}" aria-hidden="true">{esc(SHORT[lab])}</span>'
                f'<span class="sr">{esc(text)} Show it enlarged.</span></button></td>'
            )
        rows.append(f'<tr><th scope="row">Layer {l + 1}</th>{"".join(cells)}</tr>')
    head_cols = "".join(
        f'<th scope="col"><span class="sr">Head </span>{h + 1}</th>' for h in range(m["heads"])
    )
    lines = "".join(f"<li>{esc(_count_line(m, l, c[l]))}</li>" for l in range(m["layers"]))
    return (
        f'<div class="rh-scroll rh-modelwrap"><table class="rh-model" data-roving>'
        f'<caption class="sr">All {m["layers"] * m["heads"]} heads, one row per layer; choose a head to enlarge it</caption>'
        f"<thead><tr><td></td>{head_cols}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
        f'<ul class="rh-layer-lines">{lines}</ul>'
    )


def _legend(causal):
    swatches = "".join(f'<span class="sw l{k}"></span>' for k in range(1, 10))
    masked = '<span class="sw masked"></span><span>masked (a later token)</span>' if causal else ""
    return f'<p class="mh-legend" aria-hidden="true"><span>0%</span>{swatches}<span>100%</span>{masked}</p>'


def counts_table(m, labels):
    """Head labels per layer for the sentence shown, one column per label."""
    c = rh.counts(labels)
    cols = "".join(f'<th scope="col">{esc(rh.NAMES[k])}</th>' for k in rh.LABELS)
    rows = "".join(
        f'<tr><th scope="row">Layer {l + 1}</th>{"".join(f"<td>{row[k]}</td>" for k in rh.LABELS)}</tr>'
        for l, row in enumerate(c)
    )
    total = "".join(f"<td>{sum(row[k] for row in c)}</td>" for k in rh.LABELS)
    return (
        f'<table class="mh-shares rh-counts"><caption>Head labels per layer, {esc(m["name"])}, this sentence</caption>'
        f'<thead><tr><th scope="col">Layer</th>{cols}</tr></thead><tbody>{rows}</tbody>'
        f'<tfoot><tr><th scope="row">All</th>{total}</tr></tfoot></table>'
    )
