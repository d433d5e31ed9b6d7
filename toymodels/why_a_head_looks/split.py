"""Why a head of the character model looks where it does: its score split exactly into what
each earlier part of the model wrote, checked by taking one part out.

The residual stream entering layer l at position t is a sum of components, each written by one
part of the model (toymodels/models/charmodel/model.py):

    x[t] = wte[id_t] + pe[t] + sum over layers m < l (sum over heads y_h[t] @ Wo[h] + mlp_m[t])

(the character's embedding, the fixed position code, each earlier head's output through its
slice Wo[h] of the output projection, each earlier MLP's output, its bias b2 included). Layer
l's head reads x through a LayerNorm, ln(x) = (x - mean(x)) * r * g + b with r =
1 / sqrt(var(x) + eps). The mean is linear in x, so x - mean(x) is the sum of the components'
own centred values; with r frozen at its value for that position, ln(x) is exactly

    ln(x) = sum over components c of (c - mean(c)) * r * g   +   b

and the norm's bias b is one more component, the same at every position. The query q_i and the
key k_j are linear in ln(x), so the score

    s[i, j] = q_i . k_j / sqrt(d_head) = sum over (a, b) of (read_a[i] @ Wq) . (read_b[j] @ Wk)
                                          / sqrt(d_head)

is exactly a sum over (query component a, key component b) pairs: `Split.pairs`. Freezing r is
exact for the split (r is what the forward used) but only an approximation of what would happen
if a component were gone, since r depends on every component: `Split.knockout` recomputes the
norm, so the split's story is checked against the model's own arithmetic.

`composition` measures, from the weights alone, how much a later head's query, key or value
reads what an earlier head writes (Elhage et al. 2021, "A Mathematical Framework for
Transformer Circuits").

`Components` holds what this split shares with SmolLM2's (smollm2.py): a model says how its
stream is made, what its norm does and how a head makes its query and keys; the pairs, each
side's totals and the knockout follow.

Shapes: C components, T characters, D model width, K head size, H heads.
"""

import math

import numpy as np

from ..models.charmodel import model as cm
from ..page.html import head_name
from ..page.linalg import matmul

CHARACTER, POSITION, NORM_BIAS = "character", "position", "norm bias"
QK_BIAS = "q/k\u00a0bias"  # a query and key projection's own bias (Qwen2's, GPT-2's)


def widen(params):
    """The checkpoint's weights as float64, so the split adds up to the score to ~1e-12."""
    return {n: np.asarray(a, dtype=np.float64) for n, a in params.items()}


def mlp_name(layer):
    """An MLP's name from its 1-based layer: 'MLP 1'."""
    return f"MLP\u00a0{layer}"


def _head_cols(cfg, head):
    K = cfg["d_head"]
    return slice(head * K, (head + 1) * K)


class Components:
    """What every model's split shares: one forward kept whole, the residual stream entering a
    layer as a sum of named components, a head's score split into (query component, key
    component) pairs, and the knockout. A model says how its stream is made (`parts`), what its
    norm does (`norm`, and `reads` with the scale frozen) and how a head turns what it reads
    into a query or keys (`query`, `key`, `scale`); layers and heads are 0-based."""

    scale = 1.0  # the score is q . k * scale

    def parts(self, layer):
        """(names, parts (C, T, D)): the components of the stream entering LAYER, in the order
        the model wrote them; parts.sum(0) is that stream."""
        raise NotImplementedError

    def reads(self, layer):
        """(names, reads (C', T, D)): what LAYER's attention reads of each component through
        its norm with the scale frozen (C' >= C: a norm's bias is one more); reads.sum(0) is
        the norm's output."""
        raise NotImplementedError

    def norm(self, layer, x):
        """LAYER's attention norm of the stream X (..., D), computed afresh."""
        raise NotImplementedError

    def query(self, layer, head, read, i):
        """HEAD's query (..., K) of READ (..., D), something read at position I."""
        raise NotImplementedError

    def key(self, layer, head, read):
        """HEAD's keys (..., n, K) of READ (..., n, D), read at positions 0..n-1."""
        raise NotImplementedError

    def stream(self, layer):
        """The stream entering LAYER (T, D)."""
        return self.parts(layer)[1].sum(0)

    def names(self, layer):
        """The names of the components entering LAYER, in `parts`' order."""
        return self.parts(layer)[0]

    def part(self, layer, name):
        """Component NAME of the stream entering LAYER (T, D), or a ValueError naming those
        that enter it."""
        names = self.names(layer)
        if name not in names:
            said = f"no component '{name}' enters layer {layer + 1}; these do: {', '.join(names)}"
            raise ValueError(said.replace("\u00a0", " "))
        return self._part(layer, names.index(name))

    def _part(self, layer, n):
        return self.parts(layer)[1][n]

    def bias(self, layer, head, i):
        """(the projection's bias's part of query I (K,), of keys 0..I (I+1, K)), each turned
        as the model turns its query and keys, or None for a model whose query and key
        projections have no bias (the default). A bias is added after the norm, so it is no
        part of the stream: one more component, QK_BIAS, the query's bias on the query side and
        the key's on the key side."""
        return None

    def _sides(self, layer, head, i):
        """(names, each component's part of query i (C'', K), of keys 0..i (C'', i+1, K)):
        the reads' projections, and the bias's last where the model has one."""
        names, reads = self.reads(layer)
        q = self.query(layer, head, reads[:, i], i)  # (C', K) each component's part of the query
        k = self.key(layer, head, reads[:, : i + 1])  # (C', i+1, K) … of every key
        b = self.bias(layer, head, i)
        if b is not None:
            names = names + [QK_BIAS]
            q = np.concatenate([q, b[0][None]])
            k = np.concatenate([k, b[1][None]])
        return names, q, k

    def pairs(self, layer, head, i):
        """(names, terms (C'', C'', i+1)): terms[a, b, j] is query component a's part of query
        i times key component b's part of key j, times the scale, for every key j <= i;
        terms.sum((0, 1)) is the head's score row s[i, :i+1]."""
        names, q, k = self._sides(layer, head, i)
        terms = matmul(q, k.reshape(-1, k.shape[-1]), transposed=True) * self.scale
        return names, terms.reshape(len(q), *k.shape[:2])  # (C'', C'', i+1)

    def totals(self, layer, head, i):
        """(names, query side (C'', i+1), key side (C'', i+1)): each component's total on each
        side of every score s[i, j <= i], the other side whole: pairs' terms summed over key
        components, and over query components, without making every pair. The last row asked
        is kept (read-only): a figure and the kit's score_split draw from the same totals, and
        a tap on another key of the same query costs no product."""
        kept = getattr(self, "_totals", None)
        if kept is not None and kept[0] == (layer, head, i):
            return kept[1]
        names, q, k = self._sides(layer, head, i)
        query_side = np.einsum("ak,jk->aj", q, k.sum(0)) * self.scale
        key_side = np.einsum("k,bjk->bj", q.sum(0), k) * self.scale
        query_side.flags.writeable = key_side.flags.writeable = False
        self._totals = ((layer, head, i), (tuple(names), query_side, key_side))
        return self._totals[1]

    def knockout(self, layer, head, i, name, side="keys"):
        """Head HEAD's attention row from query i (i+1,) with component NAME (or each of a
        tuple of names) taken out of the keys only (side="keys": x_j - c_j at every key
        j <= i) or of the query only ("queries": x_i - c_i); the norm is recomputed on the
        edited stream and nothing else changes (QK_BIAS, the projection's bias, is taken out
        of that side's projection). It shows the component's direct path into this head's
        pattern, not what it does through later layers."""
        taken = (name,) if isinstance(name, str) else tuple(name)
        gone = sum(self.part(layer, n)[: i + 1] for n in taken if n != QK_BIAS)  # (i+1, D)
        return self.without(layer, head, i, gone, side, bias=QK_BIAS not in taken)

    def without(self, layer, head, i, gone, side="keys", bias=True):
        """`knockout` of any vectors GONE (i+1, D), one per position up to i, such as a random
        direction as long as a component (the control for what the norm alone does); without
        BIAS, the projection's bias is left out of that side too."""
        x = self.stream(layer)[: i + 1]  # (i+1, D) the stream at the query and its keys
        xq, xk = (x, x - gone) if side == "keys" else (x - gone, x)
        q = self.query(layer, head, self.norm(layer, xq[i]), i)  # (K,)
        k = self.key(layer, head, self.norm(layer, xk))  # (i+1, K)
        b = self.bias(layer, head, i)
        if b is not None:
            q = q + b[0] if bias or side == "keys" else q
            k = k + b[1] if bias or side == "queries" else k
        s = k @ q * self.scale  # (i+1,)
        e = np.exp(s - s.max())
        return e / e.sum()  # (i+1,)


class Split(Components):
    """One forward of the character model on IDX (T,), kept whole, to split any head's scores.

    params: the checkpoint's weights (widened to float64 here)."""

    def __init__(self, params, cfg, idx):
        self.params, self.cfg = widen(params), cfg
        self.idx = np.asarray(idx, dtype=np.int64)  # (T,)
        _, self.cache = cm.forward(self.params, cfg, self.idx, keep=True)
        self.scale = 1 / math.sqrt(cfg["d_head"])
        self._parts = {}

    def parts(self, layer):
        if layer not in self._parts:
            p, c, cfg = self.params, self.cache, self.cfg
            T = len(self.idx)
            names = [CHARACTER, POSITION]
            parts = [p["wte"][self.idx], cm.position_code(T, cfg["d_model"], cfg["pos_base"])]
            for m in range(layer):
                for h in range(cfg["n_head"]):
                    names.append(head_name(m + 1, h + 1))
                    parts.append(c[f"h{m}.head_out"][h])  # (T, D) this head's write
                names.append(mlp_name(m + 1))
                parts.append(c[f"h{m}.act"] @ p[f"h{m}.w2"] + p[f"h{m}.b2"])  # (T, D)
            self._parts[layer] = (names, np.stack(parts))  # (C, T, D)
        return self._parts[layer]

    def reads(self, layer):
        """(names, reads (C+1, T, D)): through the LayerNorm with the scale frozen, the norm's
        bias last (the same at every position)."""
        names, parts = self.parts(layer)
        g = self.params[f"h{layer}.ln1.g"]  # (D,)
        b = self.params[f"h{layer}.ln1.b"]  # (D,)
        r = self.cache[f"h{layer}.rstd1"]  # (T, 1) the frozen scale
        centred = parts - parts.mean(-1, keepdims=True)  # (C, T, D) the mean is linear
        bias = np.broadcast_to(b, parts.shape[1:])[None]  # (1, T, D)
        return names + [NORM_BIAS], np.concatenate([centred * r * g, bias])  # (C+1, T, D)

    def norm(self, layer, x):
        p = self.params
        return cm.layernorm(x, p[f"h{layer}.ln1.g"], p[f"h{layer}.ln1.b"])[0]

    def query(self, layer, head, read, i):
        return read @ self.params[f"h{layer}.wq"][:, _head_cols(self.cfg, head)]

    def key(self, layer, head, read):
        return read @ self.params[f"h{layer}.wk"][:, _head_cols(self.cfg, head)]

    def attention(self, layer, head, i):
        """The forward's own attention row of head HEAD from query i (i+1,)."""
        return self.cache[f"h{layer}.att"][head, i, : i + 1]


def random_like(vectors, rng):
    """Random directions as long as VECTORS (n, D), row by row: what `Split.without` takes out
    as the control for a knockout, since taking out anything that long moves the norm and the
    score too."""
    r = rng.standard_normal(vectors.shape)  # (n, D)
    size = np.linalg.norm(vectors, axis=-1, keepdims=True) / np.linalg.norm(
        r, axis=-1, keepdims=True
    )
    return r * size  # (n, D)


def sides(names, terms, j):
    """Each component's total on each side of the score s[i, j]: (query side (C+1,) summed
    over key components, key side (C+1,) summed over query components)."""
    t = terms[:, :, j]  # (C+1, C+1)
    return t.sum(1), t.sum(0)


def top_pairs(names, terms, j, n=8):
    """The N pairs (query component, key component, term) with the largest |term| in s[i, j]."""
    t = terms[:, :, j]
    order = np.argsort(-np.abs(t), axis=None)[:n]
    return [
        (names[a], names[b], float(t[a, b]))
        for a, b in zip(*np.unravel_index(order, t.shape), strict=True)
    ]


# --- composition from the weights alone --------------------------------------------------


def _folded(params, layer, name, cols):
    """Layer LAYER's read weight NAME (wq, wk or wv) for one head (D, K), with its LayerNorm's
    centring and gain folded in: x -> (x - mean(x)) * g, then @ W. The norm's scale r is one
    number per position, which a ratio of norms cancels; its bias is left out (it reads
    nothing)."""
    p = params
    D = p["wte"].shape[1]
    centre = np.eye(D) - 1.0 / D  # (D, D) x @ centre = x - mean(x)
    return centre @ (p[f"h{layer}.ln1.g"][:, None] * p[f"h{layer}.{name}"][:, cols])  # (D, K)


def circuits(params, cfg, layer, head, fold_norm=True):
    """(W_QK, W_OV) of one head as D x D matrices acting on the residual stream, in the
    paper's convention (column vectors): the score is x_i^T W_QK x_j and the head writes
    W_OV x_j when it attends to j. FOLD_NORM folds the LayerNorm's centring and gain into the
    read weights; without it the norm is ignored, as the paper does."""
    p, cols = widen(params), _head_cols(cfg, head)
    if fold_norm:
        wq, wk, wv = (_folded(p, layer, n, cols) for n in ("wq", "wk", "wv"))
    else:
        wq, wk, wv = (p[f"h{layer}.{n}"][:, cols] for n in ("wq", "wk", "wv"))
    wo = p[f"h{layer}.wo"][cols]  # (K, D)
    return wq @ wk.T, (wv @ wo).T  # (D, D), (D, D)


def _ratio(a, b):
    return float(np.linalg.norm(a @ b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def composition(params, cfg, later, fold_norm=True):
    """How much each head of layer LATER (0-based) reads what each head of every earlier layer
    writes, from the weights: Elhage et al.'s (2021) scores, for earlier head A and later head B,

        K: |W_QK^B W_OV^A|_F / (|W_QK^B|_F |W_OV^A|_F)     (A's write read by B's keys)
        Q: |W_QK^B^T W_OV^A|_F / (|W_QK^B^T|_F |W_OV^A|_F) (… by B's queries)
        V: |W_OV^B W_OV^A|_F / (|W_OV^B|_F |W_OV^A|_F)     (… by B's values)

    -> {"earlier": [head names], "later": [head names], "K"/"Q"/"V": (H, n earlier) arrays}.
    The paper subtracts what random matrices of the same shapes score (`random_composition`)."""
    H = cfg["n_head"]
    earlier = [(m, a) for m in range(later) for a in range(H)]
    ov = {e: circuits(params, cfg, *e, fold_norm)[1] for e in earlier}
    out = {"earlier": [head_name(m + 1, a + 1) for m, a in earlier]}
    out["later"] = [head_name(later + 1, b + 1) for b in range(H)]
    scores = {kind: np.zeros((H, len(earlier))) for kind in "KQV"}
    for b in range(H):
        qk_b, ov_b = circuits(params, cfg, later, b, fold_norm)
        for n, e in enumerate(earlier):
            scores["K"][b, n] = _ratio(qk_b, ov[e])
            scores["Q"][b, n] = _ratio(qk_b.T, ov[e])
            scores["V"][b, n] = _ratio(ov_b, ov[e])
    return out | scores


def random_composition(d_model, d_head, n=200, seed=0):
    """What a K-composition score is for random Gaussian weights of the model's shapes (the mean
    over N draws): the level the paper subtracts, since any two low-rank matrices score some."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        wq, wk, wv, wo = (rng.standard_normal((d_model, d_head)) for _ in range(4))
        out.append(_ratio(wq @ wk.T, wo @ wv.T))
    return float(np.mean(out))
