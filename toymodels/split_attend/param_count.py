"""How many weights multi-head attention has: 4·d_model² + 4·d_model, whatever the number of
heads."""

from ..many_heads.sizes import GPT2_SMALL, GPT3
from ..page.figure import merge, result
from ..page.html import esc, symbols

GPT2_HEADS = GPT2_SMALL["n_head"]
GPT2_LAYERS = GPT2_SMALL["n_layer"]
GPT2_D_HEAD = GPT2_SMALL["d_model"] // GPT2_SMALL["n_head"]
GPT3_D_HEAD = GPT3["d_model"] // GPT3["n_head"]


def attention_params(d_model, n_head):
    """Weights and biases of one multi-head attention layer; the heads must split d_model
    exactly."""
    if n_head < 1 or d_model < 1:
        raise ValueError("d_model and the number of heads must be at least 1")
    if d_model % n_head:
        raise ValueError(
            f"{n_head} heads cannot split {d_model} numbers evenly: each head would get "
            f"{d_model / n_head:.4g} numbers, and a head's queries and keys need a whole number"
        )
    weights = (
        4 * d_model * d_model
    )  # W_Q, W_K, W_V, W_O: each d_model × d_model, however many heads
    biases = 4 * d_model
    return {
        "d_head": d_model // n_head,
        "weights": weights,
        "biases": biases,
        "total": weights + biases,
    }


def gpt2_params(size=GPT2_SMALL):
    """Every parameter of a GPT-2: embeddings, then per layer attention, MLP and two LayerNorms,
    then a final LayerNorm."""
    d = size["d_model"]
    per_layer = attention_params(d, size["n_head"])["total"] + (8 * d * d + 5 * d) + 4 * d
    return size["vocab"] * d + size["context"] * d + size["n_layer"] * per_layer + 2 * d


def gpt2_attention_total(size=GPT2_SMALL):
    return size["n_layer"] * attention_params(size["d_model"], size["n_head"])["total"]


def gpt2_attention_share(size=GPT2_SMALL):
    return f"{100 * gpt2_attention_total(size) / gpt2_params(size):.1f}%"


def gpt2_attention_millions(size=GPT2_SMALL):
    return f"{gpt2_attention_total(size) / 1e6:.1f}"


def gpt2_millions(size=GPT2_SMALL):
    return f"{gpt2_params(size) / 1e6:.0f}"


DEFAULTS = {"d_model": str(GPT2_SMALL["d_model"]), "heads": str(GPT2_SMALL["n_head"])}


def _form(state, fid):
    fid = esc(fid)
    return (
        f'<form class="mh-sentence" data-state-form>'
        f'<label for="{fid}-d">d_model</label><input type="number" min="1" max="100000" '
        f'id="{fid}-d" name="d_model" data-fk="d" value="{esc(state["d_model"])}">'
        f'<label for="{fid}-h">heads h</label><input type="number" min="1" max="1000" '
        f'id="{fid}-h" name="heads" data-fk="h" value="{esc(state["heads"])}">'
        '<button type="submit" data-fk="go">Count</button></form>'
    )


def render(state=None, fid="params"):
    """The calculator: d_model and h in, the parameter count (or why it cannot work) out."""
    state = merge(DEFAULTS, state, strip=True)
    form = _form(state, fid)
    try:
        d_model, heads = int(state["d_model"]), int(state["heads"])
        if d_model > 100_000 or heads > 1000:
            raise ValueError("keep d_model up to 100,000 and heads up to 1,000")
        count = attention_params(d_model, heads)
    except ValueError as err:
        reason = (
            str(err)
            if "invalid literal" not in str(err)
            else "d_model and heads must be whole numbers"
        )
        why = f'<p class="mh-why" role="status">This cannot work: {esc(reason)}.</p>'
        return result(form + why, state, summary=reason)
    width = f"{d_model:,}"
    rows = "".join(
        f'<tr><th scope="row">{symbols(name)}</th>'
        f"<td>{width} × {width}</td><td>{d_model * d_model:,}</td></tr>"
        for name in ("W_Q", "W_K", "W_V", "W_O")
    )
    weights, biases, total = count["weights"], count["biases"], count["total"]
    header = "".join(f'<th scope="col">{name}</th>' for name in ("matrix", "shape", "numbers"))
    html = (
        form + f'<p class="mh-out" role="status">{heads} heads of {count["d_head"]:,} numbers. '
        f"Weights: 4 · {width}² = {weights:,}; biases: 4 · {width} = {biases:,}; "
        f"one layer: {weights:,} + {biases:,} = <strong>{total:,}</strong>. "
        "Change h: the count stays the same, only the width of each head changes.</p>"
        f'<table class="mh-matrix"><thead><tr>{header}</tr></thead><tbody>{rows}</tbody></table>'
    )
    summary = f"{total:,} parameters per attention layer for d_model {width} and {heads} heads."
    return result(html, state, summary=summary)


def gpt3_billions(size=GPT3):
    """GPT-3's parameter count in whole billions, as the prose writes it: "175"."""
    return f"{gpt2_params(size) / 1e9:.0f}"


PROSE_VALUES = (
    "GPT2_HEADS",
    "GPT2_LAYERS",
    "GPT2_D_HEAD",
    "GPT3_D_HEAD",
    "gpt2_attention_share",
    "gpt2_attention_millions",
    "gpt2_millions",
    "gpt3_billions",
)
