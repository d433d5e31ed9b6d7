"""Sizes of well-known transformers, and the head width each implies: d_head = d_model / h.

The published sizes are stated here once, in the first chapter that shows them; later
chapters import them (split_attend.param_count counts GPT-2's and GPT-3's parameters,
one_character.kv_cache sizes their caches).
"""

from ..page.figure import result
from ..page.html import esc
from . import model as heads

# name, who published it, vocabulary, context (tokens), d_model, heads per layer, layers
TRANSFORMER_BASE = {
    "name": "Transformer base",
    "cited": "Vaswani et al. 2017",
    "d_model": 512,
    "n_head": 8,
    "n_layer": 6,
}
GPT2_SMALL = {
    "name": "GPT-2 small",
    "cited": "Radford et al. 2019",
    "vocab": 50257,
    "context": 1024,
    "d_model": 768,
    "n_head": 12,
    "n_layer": 12,
}
GPT3 = {
    "name": "GPT-3",
    "cited": "Brown et al. 2020",
    "vocab": 50257,
    "context": 2048,
    "d_model": 12288,
    "n_head": 96,
    "n_layer": 96,
}

# the table's rows: name, d_model, heads per layer, layers
CONFIGS = (
    ("This page's toy", heads.D_MODEL, heads.N_HEAD, 1),
    *(
        (f"{size['name']} ({size['cited']})", size["d_model"], size["n_head"], size["n_layer"])
        for size in (TRANSFORMER_BASE, GPT2_SMALL)
    ),
)


def d_head(d_model, n_head):
    """Numbers each head gets; the split must be exact."""
    if d_model % n_head:
        raise ValueError(f"{n_head} heads cannot split {d_model} numbers evenly")
    return d_model // n_head


def render(state=None, fid="d-head"):
    """A static table: d_model ÷ h = d_head for each configuration."""
    rows = "".join(
        f'<tr><th scope="row">{esc(name)}</th><td>{d_model}</td><td>{n_head}</td>'
        f"<td>{d_model} ÷ {n_head} = {d_head(d_model, n_head)}</td></tr>"
        for name, d_model, n_head, _ in CONFIGS
    )
    header = "".join(
        f'<th scope="col">{name}</th>' for name in ("Model", "d_model", "Heads h", "d_head")
    )
    html = (
        f'<table class="mh-configs"><thead><tr>{header}</tr></thead><tbody>{rows}</tbody></table>'
    )
    summary = "; ".join(
        f"{name}: {d_model} ÷ {n_head} = {d_head(d_model, n_head)} numbers a head"
        for name, d_model, n_head, _ in CONFIGS
    )
    return result(html, {}, summary=summary + ".")
