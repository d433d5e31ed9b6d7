"""How many weights multi-head attention has: 4·d_model² + 4·d_model, whatever the number of heads."""

from ..page.html import esc

GPT2_SMALL = {
    "name": "GPT-2 small",
    "vocab": 50257,
    "context": 1024,
    "d_model": 768,
    "n_head": 12,
    "n_layer": 12,
}
GPT3 = {
    "name": "GPT-3",
    "vocab": 50257,
    "context": 2048,
    "d_model": 12288,
    "n_head": 96,
    "n_layer": 96,
}
GPT2_HEADS = GPT2_SMALL["n_head"]
GPT2_LAYERS = GPT2_SMALL["n_layer"]
GPT2_D_HEAD = GPT2_SMALL["d_model"] // GPT2_SMALL["n_head"]


def attention_params(d_model, n_head):
    """Weights and biases of one multi-head attention layer; the heads must split d_model exactly."""
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


def gpt2_params(c=GPT2_SMALL):
    """Every parameter of a GPT-2: embeddings, then per layer attention, MLP and two LayerNorms, then a final LayerNorm."""
    d = c["d_model"]
    per_layer = attention_params(d, c["n_head"])["total"] + (8 * d * d + 5 * d) + 4 * d
    return c["vocab"] * d + c["context"] * d + c["n_layer"] * per_layer + 2 * d


def gpt2_attention_total(c=GPT2_SMALL):
    return c["n_layer"] * attention_params(c["d_model"], c["n_head"])["total"]


def gpt2_attention_share(c=GPT2_SMALL):
    return f"{100 * gpt2_attention_total(c) / gpt2_params(c):.1f}%"


def gpt2_attention_millions(c=GPT2_SMALL):
    return f"{gpt2_attention_total(c) / 1e6:.1f}"


def gpt2_millions(c=GPT2_SMALL):
    return f"{gpt2_params(c) / 1e6:.0f}"


DEFAULTS = {"d_model": str(GPT2_SMALL["d_model"]), "heads": str(GPT2_SMALL["n_head"])}


def render(state=None, fid="params"):
    """The calculator: d_model and h in, the parameter count (or why it cannot work) out."""
    s = {**DEFAULTS, **{k: str(v).strip() for k, v in (state or {}).items() if k in DEFAULTS}}
    form = (
        f'<form class="mh-sentence" data-state-form>'
        f'<label for="{esc(fid)}-d">d_model</label><input type="number" min="1" max="100000" id="{esc(fid)}-d" name="d_model" data-fk="d" value="{esc(s["d_model"])}">'
        f'<label for="{esc(fid)}-h">heads h</label><input type="number" min="1" max="1000" id="{esc(fid)}-h" name="heads" data-fk="h" value="{esc(s["heads"])}">'
        '<button type="submit" data-fk="go">Count</button></form>'
    )
    try:
        d, h = int(s["d_model"]), int(s["heads"])
        if d > 100_000 or h > 1000:
            raise ValueError("keep d_model up to 100,000 and heads up to 1,000")
        p = attention_params(d, h)
    except ValueError as e:
        reason = (
            str(e) if "invalid literal" not in str(e) else "d_model and heads must be whole numbers"
        )
        return {
            "html": form + f'<p class="mh-why" role="status">This cannot work: {esc(reason)}.</p>',
            "slots": {},
            "state": s,
            "error": None,
            "summary": reason,
        }
    rows = "".join(
        f'<tr><th scope="row">{name}</th><td>{d:,} × {d:,}</td><td>{d * d:,}</td></tr>'
        for name in ("W_Q", "W_K", "W_V", "W_O")
    )
    html = (
        form + f'<p class="mh-out" role="status">{h} heads of {p["d_head"]:,} numbers. '
        f"Weights: 4 · {d:,}² = {p['weights']:,}; biases: 4 · {d:,} = {p['biases']:,}; "
        f"one layer: {p['weights']:,} + {p['biases']:,} = <strong>{p['total']:,}</strong>. "
        "Change h: the count stays the same, only the width of each head changes.</p>"
        f'<table class="mh-matrix"><thead><tr><th scope="col">matrix</th><th scope="col">shape</th><th scope="col">numbers</th></tr></thead><tbody>{rows}</tbody></table>'
    )
    return {
        "html": html,
        "slots": {},
        "state": s,
        "error": None,
        "summary": f"{p['total']:,} parameters per attention layer for d_model {d:,} and {h} heads.",
    }


def gpt3_billions(c=GPT3):
    """GPT-3's parameter count in whole billions, as the prose writes it: "175"."""
    return f"{gpt2_params(c) / 1e9:.0f}"
