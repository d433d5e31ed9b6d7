"""One training step of the character model: loss, hand-written backward pass, Adam.

What: the maths of training toymodels/models/charmodel/model.py, in numpy only. init_params()
draws the starting weights, loss_and_grads() runs the forward pass (model.forward, keeping
what the backward pass needs) and then the backward pass by hand (loss_and_grads_parts() is the
same in parts the page can stop between), adam() clips the gradient
and takes one Adam step in place, lr_at() is the warm-up + cosine schedule, and
nonsense_batch() makes training stretches of random letter-words, some of them repeated.

Why here, shipped: the reader trains a model in the browser (toymodels/one_character/
train_live.py runs it in slices under Pyodide) with this very file, and the command-line
trainer (toymodels/training/train.py, build-only) imports it too, so there is one trainer,
not two. Nothing here reads the novels; that stays in toymodels/training/corpus.py.

Shapes: B batch, T characters, D model width, H heads, K head size, M MLP width, V = 30.
"""

import math

import numpy as np
import numpy.random  # noqa: F401 (numpy imports it at first use: here it comes with this module)

from ..models.charmodel import model as cm
from ..models.charmodel.copy_test import nonsense, tile
from ..models.charmodel.model import finish
from ..page.linalg import matmul

# ---------------------------------------------------------------- initialisation


def init_params(cfg, seed=0, emb_std=1.0, std=0.02, dtype=np.float32):
    """Embeddings N(0, emb_std) (comparable in size to the position code), LayerNorm gains 1,
    biases 0, the two projections into the residual stream (wo, w2) N(0, std/sqrt(2L)) and
    every other matrix N(0, std)."""
    rng = np.random.default_rng(seed)
    out_std = std / math.sqrt(2 * cfg["n_layer"])
    params = {}
    for name, shape in cm.param_shapes(cfg).items():
        last = name.split(".")[-1]
        if name == "wte":
            a = rng.normal(0, emb_std, shape)
        elif last == "g":
            a = np.ones(shape)
        elif last in ("b", "b1", "b2"):
            a = np.zeros(shape)
        elif last in ("wo", "w2"):
            a = rng.normal(0, out_std, shape)
        else:
            a = rng.normal(0, std, shape)
        params[name] = a.astype(dtype)
    return params


# ---------------------------------------------------------------- loss and backward pass


def loss_and_grads(params, cfg, idx, targets, need_grads=True):
    """Mean cross-entropy (nats) of predicting targets (B, T) from idx (B, T), and d loss / d every
    parameter (None without NEED_GRADS)."""
    if not need_grads:
        logits, _ = cm.forward(params, cfg, idx)  # (B, T, V)
        return _loss(logits, targets)[0], None
    return finish(loss_and_grads_parts(params, cfg, idx, targets))


def _loss(logits, targets):
    """Mean cross-entropy of logits (B, T, V) against targets (B, T) -> (loss, probs)."""
    B, T, V = logits.shape
    probs = cm.softmax(logits)  # (B, T, V)
    p_right = probs.reshape(-1, V)[np.arange(B * T), targets.reshape(-1)]  # (B*T,)
    return float(-np.log(np.maximum(p_right, 1e-30)).mean()), probs


def loss_and_grads_parts(params, cfg, idx, targets):
    """loss_and_grads() in parts: a generator that pauses (yields) after each layer's forward
    pass (model.forward_parts) and each layer's backward pass, and returns (loss, grads). A step
    takes longer in Pyodide than the page's slice of training (train_live.py), which can end
    between two parts; the parts read PARAMS and change nothing."""
    logits, c = yield from cm.forward_parts(params, cfg, idx, keep="train")  # (B, T, V)
    B, T, V = logits.shape
    loss, probs = _loss(logits, targets)
    flat_t = targets.reshape(-1)  # (B*T,)
    yield
    D, H, K = cfg["d_model"], cfg["n_head"], cfg["d_head"]
    g = {}
    dlogits = probs.reshape(-1, V).copy()  # (B*T, V)
    dlogits[np.arange(B * T), flat_t] -= 1.0
    dlogits /= B * T
    hf = c["lnf"].reshape(-1, D)  # (B*T, D)
    g["head.w"] = matmul(hf.T, dlogits)  # (D, V)
    g["head.b"] = dlogits.sum(0)  # (V,)
    dhf = matmul(dlogits, params["head.w"].T).reshape(B, T, D)  # (B, T, D)
    dx, g["lnf.g"], g["lnf.b"] = ln_backward(
        dhf, c["xhatf"], c["rstdf"], params["lnf.g"]
    )  # (B, T, D)
    scale = 1.0 / math.sqrt(K)

    def merge(a):  # (B, H, T, K) -> (B*T, H*K)
        return a.transpose(0, 2, 1, 3).reshape(B * T, H * K)

    for layer in reversed(range(cfg["n_layer"])):
        P, C = layer_entries(params, layer), layer_entries(c, layer)
        # MLP: x_out = x_mid + gelu(ln2(x_mid) @ w1 + b1) @ w2 + b2
        dflat = dx.reshape(-1, D)  # (B*T, D)
        act = C("act").reshape(B * T, -1)  # (B*T, M)
        g[f"h{layer}.w2"] = matmul(act.T, dflat)  # (M, D)
        g[f"h{layer}.b2"] = dflat.sum(0)  # (D,)
        dact = matmul(dflat, P("w2").T)  # (B*T, M)
        dpre = dact * gelu_grad(C("pre").reshape(B * T, -1))  # (B*T, M)
        g[f"h{layer}.w1"] = matmul(C("ln2").reshape(B * T, D).T, dpre)  # (D, M)
        g[f"h{layer}.b1"] = dpre.sum(0)  # (M,)
        dh2 = matmul(dpre, P("w1").T).reshape(B, T, D)  # (B, T, D)
        dmid, g[f"h{layer}.ln2.g"], g[f"h{layer}.ln2.b"] = ln_backward(
            dh2, C("xhat2"), C("rstd2"), P("ln2.g")
        )
        dx = dx + dmid  # (B, T, D) d loss / d x_mid
        # attention: x_mid = x + merge(softmax(q k^T / sqrt(K)) v) @ wo
        dflat = dx.reshape(-1, D)  # (B*T, D)
        g[f"h{layer}.wo"] = matmul(C("y").reshape(B * T, H * K).T, dflat)  # (H*K, D)
        dy = matmul(dflat, P("wo").T).reshape(B, T, H, K).transpose(0, 2, 1, 3)  # (B, H, T, K)
        att, q, k, v = C("att"), C("q"), C("k"), C("v")  # (B, H, T, T), (B, H, T, K) x3
        datt = dy @ v.transpose(0, 1, 3, 2)  # (B, H, T, T)
        dv = att.transpose(0, 1, 3, 2) @ dy  # (B, H, T, K)
        ds = att * (datt - (datt * att).sum(-1, keepdims=True))  # (B, H, T, T) softmax backward
        ds *= scale  # masked entries have att = 0
        dq = ds @ k  # (B, H, T, K)
        dk = ds.transpose(0, 1, 3, 2) @ q  # (B, H, T, K)
        dq, dk, dv = merge(dq), merge(dk), merge(dv)  # (B*T, H*K) each
        h1 = C("ln1").reshape(B * T, D)  # (B*T, D)
        g[f"h{layer}.wq"], g[f"h{layer}.wk"], g[f"h{layer}.wv"] = (
            matmul(h1.T, dq),
            matmul(h1.T, dk),
            matmul(h1.T, dv),
        )  # (D, H*K) each
        dh1 = matmul(dq, P("wq").T) + matmul(dk, P("wk").T) + matmul(dv, P("wv").T)  # (B*T, D)
        dres, g[f"h{layer}.ln1.g"], g[f"h{layer}.ln1.b"] = ln_backward(
            dh1.reshape(B, T, D), C("xhat1"), C("rstd1"), P("ln1.g")
        )
        dx = dx + dres  # (B, T, D) d loss / d x_pre
        if layer:
            yield
    gwte = np.zeros_like(params["wte"])  # (V, D)
    np.add.at(gwte, idx.reshape(-1), dx.reshape(-1, D))
    g["wte"] = gwte
    return loss, g


def layer_entries(store, layer):
    """One layer's entries of STORE, looked up by their name inside the layer: for layer 1,
    get("w2") is store["h1.w2"]."""
    return lambda name: store[f"h{layer}.{name}"]


def ln_backward(dy, xhat, rstd, gain):
    """d/dx, d/dgain, d/dbias of y = xhat * gain + bias, xhat = (x - mean) * rstd."""
    D = xhat.shape[-1]
    dgain = (dy * xhat).reshape(-1, D).sum(0)  # (D,)
    dbias = dy.reshape(-1, D).sum(0)  # (D,)
    dxhat = dy * gain  # (..., D)
    dx = rstd * (
        dxhat - dxhat.mean(-1, keepdims=True) - xhat * (dxhat * xhat).mean(-1, keepdims=True)
    )
    return dx, dgain, dbias


def gelu_grad(x):
    """d gelu(x) / dx for the tanh approximation model.gelu uses."""
    x2 = x * x
    t = np.tanh(cm.GELU_C * x * (1.0 + 0.044715 * x2))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * cm.GELU_C * (1 + 3 * 0.044715 * x2)


# ---------------------------------------------------------------- optimiser


def adam_state(params):
    """Adam's first and second moments, zero, one array per parameter."""
    return {n: np.zeros_like(p) for n, p in params.items()}, {
        n: np.zeros_like(p) for n, p in params.items()
    }


def adam(params, g, m, v, step, lr, b1=0.9, b2=0.99, clip=1.0, eps=1e-8):
    """One Adam step (no weight decay) in place on PARAMS, M and V, with the gradient G first
    scaled down so that its norm is at most CLIP (0: no clipping). STEP counts from 0.
    Returns the gradient's norm before clipping."""
    norm = math.sqrt(sum(float((x.astype(np.float64) ** 2).sum()) for x in g.values()))
    scale = min(1.0, clip / (norm + 1e-12)) if clip else 1.0
    bc1, bc2 = 1 - b1 ** (step + 1), 1 - b2 ** (step + 1)
    for n in params:
        gn = g[n] * scale
        m[n] = b1 * m[n] + (1 - b1) * gn
        v[n] = b2 * v[n] + (1 - b2) * gn * gn
        params[n] -= (lr * (m[n] / bc1) / (np.sqrt(v[n] / bc2) + eps)).astype(params[n].dtype)
    return norm


def lr_at(step, lr, warmup, steps, floor):
    """Linear warm-up over WARMUP steps to LR, then a cosine decay to FLOOR x LR at STEPS."""
    if step < warmup:
        return lr * (step + 1) / warmup
    frac = (step - warmup) / max(1, steps - warmup)
    return lr * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * min(1.0, frac))))


# ---------------------------------------------------------------- text made on the spot


def nonsense_batch(seed, step, batch, ctx, repeat_share, periods):
    """(idx, targets), each (batch, ctx) int: stretches of random letter-words, a function of
    (seed, step) only. A share REPEAT_SHARE of the stretches is one piece of nonsense of a
    period drawn from PERIODS repeated until the stretch is full; the others never repeat (a
    fresh piece as long as the stretch). On the repeats only copying lowers the loss: the
    letters are random, so spelling cannot predict them."""
    rng = np.random.default_rng([seed, step, 2])
    x = np.empty((batch, ctx + 1), dtype=np.int64)  # (batch, ctx+1)
    for i in range(batch):
        if rng.random() < repeat_share:
            x[i] = tile(nonsense(rng, periods), ctx + 1)
        else:
            x[i] = nonsense(rng, (ctx + 1, ctx + 1))
    return x[:, :-1], x[:, 1:]


def copy_score(params, cfg, x, periods):
    """Share of the repeats' characters (positions P+1 … T-1 of each stretch of x (n, T),
    P its period) whose most likely prediction is right: how well the model copies."""
    return finish(copy_score_parts(params, cfg, x, periods))


def copy_score_parts(params, cfg, x, periods, rows=16):
    """copy_score() in parts (a generator; see loss_and_grads_parts): ROWS stretches at a time,
    a layer at a time; the counts add up exactly."""
    T = x.shape[1]
    right = 0
    for i in range(0, len(x), rows):
        if i:
            yield
        logits, _ = yield from cm.forward_parts(params, cfg, x[i : i + rows])
        pred = logits.argmax(-1)  # (rows, T)
        right += sum(
            int((pred[j, P : T - 1] == x[i + j, P + 1 :]).sum())
            for j, P in enumerate(periods[i : i + rows])
        )
    return right / int(sum(T - 1 - P for P in periods))
