"""A tiny character-level transformer in numpy: 2 pre-LayerNorm blocks of 4 causal heads,
trained on Jane Austen.

What: the forward pass of the model that the chapter "One character at a time" shows,
in the style of nanoGPT's model.py but numpy only, so that the very same file runs at
build time in CPython and in the reader's browser under Pyodide. It reads a checkpoint
(float16 weights + the model's shape) through toymodels.page.data, predicts the next character
at every position, and hands back, on request, every intermediate the chapter draws:
attention weights per layer and head, q/k/v, each head's output, the residual stream after
each step, the MLP activations. Any head can be switched off (its output set to zero).

Why this shape: a reader can follow every number. Vocabulary of 30 characters
(a-z, space, full stop, comma, apostrophe); an embedding of D numbers per character
plus the fixed sinusoidal position code of Vaswani et al. (2017), no learned positions;
pre-LayerNorm blocks of H causal heads of size d_head (q, k, v and output projection
without biases) and an MLP D -> 4D -> D with GELU (tanh approximation); a final LayerNorm;
an untied read-out D -> 30 with bias. At the reference size (D=32, 2 layers, 4 heads of 8)
that is exactly 27,166 parameters. The training step (trainstep.py, shipped: the reader trains
a model in the browser with it, and toymodels/training/train.py imports it) reuses forward()
and its cache for its hand-written backward pass.

Shipped runs (toymodels/data/charmodel/RUN/step_NNNNN.npz, float16, one file per checkpoint,
listed in RUN/manifest.json; what each learned is in charmodel/evaluation.json, see
toymodels/training/RESULTS.md): "reference" (27,166 parameters, the reference recipe: never
learns to copy), "reference-induction" (the same size, learning rate 1e-2 and repeated passages
in the data: an induction head forms suddenly around steps 500-1,500), "reference-repeats" (the
same size and data at learning rate 3e-3 over 18,000 steps: forms one around steps 4,000-7,000)
and "induction" (D=64, 103,454 parameters, with repeats: forms them around steps 600-1,000).

Shapes: B batch, T characters, D model width, H heads, K head size, M MLP width, V = 30.
"""

import io
import json
import math

import numpy as np

from ...page.linalg import matmul

VOCAB = "abcdefghijklmnopqrstuvwxyz .,'"  # the 30 characters, index = position in this string
STOI = {c: i for i, c in enumerate(VOCAB)}
MAX_CHARS = 64  # the length of every training stretch: the model never saw more
REFERENCE = {
    "vocab": 30,
    "d_model": 32,
    "n_layer": 2,
    "n_head": 4,
    "d_head": 8,
    "d_mlp": 128,
    "pos_base": 10000.0,
}


def encode(text):
    """Characters -> int array (T,); raises ValueError naming the first character outside VOCAB."""
    bad = [c for c in text if c not in STOI]
    if bad:
        raise ValueError(
            f"character {bad[0]!r} is not in the model's 30-character vocabulary {VOCAB!r}"
        )
    return np.array([STOI[c] for c in text], dtype=np.int64)  # (T,)


def decode(ids):
    return "".join(VOCAB[int(i)] for i in ids)


def param_shapes(cfg):
    """Every parameter's name and shape, in a fixed order."""
    D, H, K, M, V = cfg["d_model"], cfg["n_head"], cfg["d_head"], cfg["d_mlp"], cfg["vocab"]
    shapes = {"wte": (V, D)}  # character embedding
    for layer in range(cfg["n_layer"]):
        shapes.update(
            {
                f"h{layer}.ln1.g": (D,),
                f"h{layer}.ln1.b": (D,),  # LayerNorm before attention
                f"h{layer}.wq": (D, H * K),
                f"h{layer}.wk": (D, H * K),
                f"h{layer}.wv": (D, H * K),  # no biases
                f"h{layer}.wo": (H * K, D),  # output projection, no bias
                f"h{layer}.ln2.g": (D,),
                f"h{layer}.ln2.b": (D,),  # LayerNorm before the MLP
                f"h{layer}.w1": (D, M),
                f"h{layer}.b1": (M,),
                f"h{layer}.w2": (M, D),
                f"h{layer}.b2": (D,),
            }
        )
    # final LN, read-out
    shapes.update({"lnf.g": (D,), "lnf.b": (D,), "head.w": (D, V), "head.b": (V,)})
    return shapes


def n_params(params):
    return int(sum(np.asarray(p).size for p in params.values()))


def position_code(T, D, base=10000.0, dtype=np.float64):
    """The 2017 sinusoids: PE[t, 2i] = sin(t / base^(2i/D)), PE[t, 2i+1] = cos(same)."""
    t = np.arange(T)[:, None]  # (T, 1)
    freq = base ** (-np.arange(0, D, 2) / D)  # (D/2,)
    pe = np.zeros((T, D))  # (T, D)
    pe[:, 0::2] = np.sin(t * freq)  # (T, D/2)
    pe[:, 1::2] = np.cos(t * freq)  # (T, D/2)
    return pe.astype(dtype)


def layernorm(x, g, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)  # (..., 1)
    rstd = 1.0 / np.sqrt(x.var(-1, keepdims=True) + eps)  # (..., 1)
    xhat = (x - mu) * rstd  # (..., D)
    return xhat * g + b, xhat, rstd  # (..., D)


GELU_C = math.sqrt(2.0 / math.pi)


def gelu(x):
    """GELU, tanh approximation (as in GPT-2)."""
    return (
        0.5 * x * (1.0 + np.tanh(GELU_C * x * (1.0 + 0.044715 * x * x)))
    )  # x*x, not x**3: much faster


def _weights_of(params, layer, dt):
    """name -> layer LAYER's parameter NAME as dtype DT (no copy when it already is)."""
    return lambda name: params[f"h{layer}.{name}"].astype(dt, copy=False)


def forward(params, cfg, idx, ablate=(), keep=False):
    """Logits (B, T, V) for int idx (B, T) or (T,), and a dict of intermediates (empty unless
    keep).

    ablate: (layer, head) pairs whose output is set to zero. keep=True returns every
    intermediate (for the chapter and for the trainer's backward pass): per layer (0-based),
    cache["h{layer}.att"] (B, H, T, T), q/k/v (B, H, T, K), "head_out" (B, H, T, D) each head's
    contribution to the residual stream, "resid_mid"/"resid_post" (B, T, D), MLP "pre"/"act"
    (B, T, M).
    """
    return finish(forward_parts(params, cfg, idx, ablate, keep))


def finish(parts):
    """Runs a generator of parts (forward_parts and the trainer's) to its end -> its value."""
    while True:
        try:
            next(parts)
        except StopIteration as done:
            return done.value


def forward_parts(params, cfg, idx, ablate=(), keep=False):
    """forward() in parts: a generator that pauses (yields) after each layer but the last and
    returns (logits, cache). The reader's training in the browser (train_live.py) stops
    between parts, so that a tap elsewhere on the page need not wait for a whole step."""
    idx = np.asarray(idx)
    squeeze = idx.ndim == 1
    if squeeze:
        idx = idx[None]  # (1, T)
    B, T = idx.shape
    D, H, K = cfg["d_model"], cfg["n_head"], cfg["d_head"]
    dt = params["wte"].dtype if params["wte"].dtype != np.float16 else np.float32
    c = {}
    mask = np.triu(np.ones((T, T), dtype=bool), 1)  # (T, T) True above the diagonal: the future
    x = params["wte"][idx].astype(dt) + position_code(T, D, cfg["pos_base"], dt)  # (B, T, D)
    if keep:
        c["idx"], c["embed"] = idx, x  # (B, T), (B, T, D)
    for layer in range(cfg["n_layer"]):
        p = _weights_of(params, layer, dt)
        h1, xhat1, rstd1 = layernorm(x, p("ln1.g"), p("ln1.b"))  # (B, T, D)
        q = matmul(h1, p("wq")).reshape(B, T, H, K).transpose(0, 2, 1, 3)  # (B, H, T, K)
        k = matmul(h1, p("wk")).reshape(B, T, H, K).transpose(0, 2, 1, 3)  # (B, H, T, K)
        v = matmul(h1, p("wv")).reshape(B, T, H, K).transpose(0, 2, 1, 3)  # (B, H, T, K)
        s = (q @ k.transpose(0, 1, 3, 2)) * (1.0 / math.sqrt(K))  # (B, H, T, T) scores
        s = np.where(mask, -np.inf, s)  # (B, H, T, T) no looking ahead
        s = s - s.max(-1, keepdims=True)  # (B, H, T, T)
        att = np.exp(s)  # (B, H, T, T)
        att /= att.sum(-1, keepdims=True)  # (B, H, T, T) rows sum to 1
        y = att @ v  # (B, H, T, K)
        for la, ha in ablate:
            if la == layer:
                y[:, ha] = 0.0  # (B, T, K) this head says nothing
        ym = y.transpose(0, 2, 1, 3).reshape(B, T, H * K)  # (B, T, H*K) heads side by side
        x_mid = x + matmul(ym, p("wo"))  # (B, T, D) residual after attention
        h2, xhat2, rstd2 = layernorm(x_mid, p("ln2.g"), p("ln2.b"))  # (B, T, D)
        pre = matmul(h2, p("w1")) + p("b1")  # (B, T, M)
        act = gelu(pre)  # (B, T, M)
        x_out = x_mid + matmul(act, p("w2")) + p("b2")  # (B, T, D) residual after the MLP
        if keep:
            wo = p("wo").reshape(H, K, D)  # (H, K, D)
            c.update(
                {
                    f"h{layer}.resid_pre": x,
                    f"h{layer}.ln1": h1,
                    f"h{layer}.xhat1": xhat1,
                    f"h{layer}.rstd1": rstd1,
                    f"h{layer}.q": q,
                    f"h{layer}.k": k,
                    f"h{layer}.v": v,
                    f"h{layer}.att": att,
                    f"h{layer}.y": ym,
                    f"h{layer}.resid_mid": x_mid,
                    f"h{layer}.ln2": h2,
                    f"h{layer}.xhat2": xhat2,
                    f"h{layer}.rstd2": rstd2,
                    f"h{layer}.pre": pre,
                    f"h{layer}.act": act,
                    f"h{layer}.resid_post": x_out,
                }
            )
            if keep != "train":  # the trainer does not need this one
                # (B, H, T, D) each head's share
                c[f"h{layer}.head_out"] = np.einsum("bhtk,hkd->bhtd", y, wo)
        x = x_out  # (B, T, D)
        if layer < cfg["n_layer"] - 1:
            yield
    # (B, T, D)
    hf, xhatf, rstdf = layernorm(x, params["lnf.g"].astype(dt), params["lnf.b"].astype(dt))
    logits = matmul(hf, params["head.w"].astype(dt)) + params["head.b"].astype(dt)  # (B, T, V)
    if keep:
        c.update({"resid_final": x, "lnf": hf, "xhatf": xhatf, "rstdf": rstdf})
    if squeeze:
        logits = logits[0]  # (T, V)
        c = (
            {n: (a[0] if isinstance(a, np.ndarray) and a.ndim > 1 else a) for n, a in c.items()}
            if keep
            else c
        )
    return logits, c


def softmax(logits):
    e = np.exp(logits - logits.max(-1, keepdims=True))  # (..., V)
    return e / e.sum(-1, keepdims=True)  # (..., V)


def save_checkpoint(path_or_file, params, cfg, step, dtype=np.float16, extra=None):
    """Write an .npz: every parameter (float16 by default), the config and the step as JSON."""
    meta = dict(extra or {}, config=cfg, step=int(step))
    arrays = {n: np.asarray(a).astype(dtype) for n, a in params.items()}
    np.savez_compressed(path_or_file, __meta__=np.array(json.dumps(meta)), **arrays)


def load_npz(data):
    """(params, cfg, meta) from the bytes of a checkpoint; float16 weights are widened to
    float32."""
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        meta = json.loads(str(z["__meta__"]))
        params = {n: z[n].astype(np.float32) for n in z.files if n != "__meta__"}
    cfg = meta["config"]
    missing = set(param_shapes(cfg)) - set(params)
    if missing:
        raise ValueError(f"checkpoint lacks {sorted(missing)}")
    return params, cfg, meta


def checkpoint_name(step):
    return f"step_{int(step):05d}.npz"


def checkpoint_path(run, step):
    return f"charmodel/{run}/{checkpoint_name(step)}"


def load(run="reference", step=None):
    """(params, cfg, meta) of one shipped checkpoint, read lazily via toymodels.page.data (works
    under Pyodide).

    step=None takes the run's last checkpoint, as listed in charmodel/RUN/manifest.json.
    """
    from ...page import data

    if step is None:
        step = json.loads(data.read_text(f"charmodel/{run}/manifest.json"))["steps"][-1]
    return load_npz(data.read_bytes(checkpoint_path(run, step)))


def evaluation():
    """The measurements of every shipped checkpoint (charmodel/evaluation.json), as a dict."""
    from ...page import data

    return json.loads(data.read_text("charmodel/evaluation.json"))


def predict(params, cfg, text, ablate=()):
    """The model's most likely next character after each prefix of TEXT, as a string."""
    logits, _ = forward(params, cfg, encode(text), ablate=ablate)  # (T, V)
    return decode(logits.argmax(-1))
