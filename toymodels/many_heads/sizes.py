"""Sizes of well-known transformers, and the head width each implies: d_head = d_model / h."""

from ..page.html import esc
from . import model as heads

# name, d_model, heads per layer, layers
CONFIGS = (
    ("This page's toy", heads.D_MODEL, heads.N_HEAD, 1),
    ("Transformer base (Vaswani et al. 2017)", 512, 8, 6),
    ("GPT-2 small (Radford et al. 2019)", 768, 12, 12),
)


def d_head(d_model, n_head):
    """Numbers each head gets; the split must be exact."""
    if d_model % n_head:
        raise ValueError(f"{n_head} heads cannot split {d_model} numbers evenly")
    return d_model // n_head


def render(state=None, fid="d-head"):
    """A static table: d_model ÷ h = d_head for each configuration."""
    rows = "".join(
        f'<tr><th scope="row">{esc(name)}</th><td>{dm}</td><td>{h}</td><td>{dm} ÷ {h} = {d_head(dm, h)}</td></tr>'
        for name, dm, h, _ in CONFIGS
    )
    html = (
        '<table class="mh-configs"><thead><tr><th scope="col">Model</th><th scope="col">d_model</th>'
        f'<th scope="col">Heads h</th><th scope="col">d_head</th></tr></thead><tbody>{rows}</tbody></table>'
    )
    return {"html": html, "slots": {}, "state": {}, "error": None, "summary": ""}
