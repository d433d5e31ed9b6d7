"""The model in a reader's own GGUF file: its shape from the metadata, its tensors checked
against what its architecture needs, then the forward.

    llama  SmolLM2, Llama-3.2-style, TinyLlama: RMSNorm, rotary positions (base and, where the
           file has it, the rope_freqs tensor of Llama 3's scaling), grouped-query attention,
           SwiGLU; the query and key rows are in llama.cpp's interleaved order, put back
    qwen2  llama plus biases on the queries, keys and values; rows as the model had them
    gpt2   LayerNorm, learned positions, one fused query-key-value matrix, GELU (gpt2.py)

A file whose architecture, shape or tensors the forward would not read right is refused with
FileError, saying why and what would work; nothing is guessed. `load(data)` gives a model
with `forward(ids)` -> (attention (layers, heads, T, T), logits (T, V)) and `step(ids,
cache)`, which reads tokens after those a cache holds and extends it, giving those rows of
what `forward` gives for the whole text.

How the weights are held, `load(data, keeps=...)`, as the model card (toymodels/models/card.py)
chooses for the page's memory:

    "float32"  every matrix turned into float32 once and kept: the quickest forward, four bytes
               a weight (with keep=False, each layer's are made again whenever it runs)
    "blocks"   the file's blocks kept as they are, the forward turning one layer into float32
               when it reaches it and letting it go after; the token embedding and the output
               matrix stay blocks too (Rows): the text's rows are read, and the logits are
               made a CHUNK of vocabulary rows at a time. The maps are the float32 way's to
               the bit and the logits to float32 rounding (their products made in pieces),
               for the file's bytes and one layer in float32 at a time, paid for by
               dequantising every layer again at every step.
    Plan(n, rows)  mixed (card.Plan, what the card plans for a file between the two): the first
               n layers made float32 once and kept (`Layers`), the others made from their
               blocks whenever the forward reaches them; with `rows`, the embedding and
               output matrix kept as Rows. The same maps to the bit and logits to float32
               rounding. "float32" is Plan(layers, False), "blocks" Plan(0, True).
"""

import numpy as np

from .. import gguf, quants
from ..card import EMBEDDING, Plan, plan_name
from ..smollm2.llama import Cache, Llama, dot, rmsnorm
from .gpt2 import GPT2, layernorm

KEEPS = ("float32", "blocks")
CHUNK = 4096  # vocabulary rows of a blocks-kept output matrix in float32 at once

ARCHITECTURES = ("llama", "qwen2", "gpt2")
NORM = ("attn_norm.weight", "ffn_norm.weight")
LLAMA_LAYER = (
    NORM
    + tuple(
        f"{n}.weight" for n in ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up")
    )
    + ("ffn_down.weight",)
)
QKV_BIAS = ("attn_q.bias", "attn_k.bias", "attn_v.bias")
GPT2_LAYER = tuple(
    f"{n}.{part}"
    for n in ("attn_norm", "attn_qkv", "attn_output", "ffn_norm", "ffn_up", "ffn_down")
    for part in ("weight", "bias")
)


class FileError(gguf.GGUFError):
    """A GGUF file this forward cannot run, with the reason and what would work."""


class Steps:
    """What a model of a file gives beyond the forward: a KV cache read a piece at a time."""

    def new_cache(self):
        return Cache(self.n_layer)

    def step(self, ids, cache):
        """Token ids read after the P tokens CACHE holds (CACHE then holds P+T) -> (attention
        (layers, heads, T, P+T), logits (T, V)): the rows the forward of the whole text gives
        for these tokens."""
        return self.forward(ids, cache=cache)


class Rows:
    """A (rows, cols) matrix kept as the file's blocks: indexing dequantises only the rows
    asked for (an int, or an array of ints: the result has its shape plus cols), `chunks`
    yields the whole matrix a CHUNK of rows at a time."""

    ndim, dtype = 2, np.dtype(np.float32)

    def __init__(self, kind, shape, raw):
        self.kind, self.shape, self.raw = kind, tuple(shape), raw

    def __getitem__(self, ids):
        ids = np.asarray(ids, dtype=np.int64)
        got = quants.rows(self.raw, self.kind, self.shape, ids.reshape(-1))
        return got.reshape(*ids.shape, self.shape[1])

    def chunks(self, n=None):
        n = n or CHUNK
        for start in range(0, self.shape[0], n):
            yield self[np.arange(start, min(start + n, self.shape[0]))]


class Layers:
    """A model's layers for the forward (`model.layers[i]`): the first N made once and kept,
    the others made from the file's blocks (`model.layer(i)`) each time they are asked for."""

    def __init__(self, model, n):
        self.make = model.layer
        self.kept = [model.layer(i) for i in range(n)]
        self.n_layer = model.n_layer

    def __len__(self):
        return self.n_layer

    def __getitem__(self, i):
        if not 0 <= i < self.n_layer:
            raise IndexError(i)
        return self.kept[i] if i < len(self.kept) else self.make(i)


def plan_of(keeps, n_layer):
    """KEEPS ("float32", "blocks" or a Plan) as a Plan for a model of N_LAYER layers."""
    if isinstance(keeps, str):
        if keeps not in KEEPS:
            raise ValueError(f"keeps is one of {KEEPS} or a Plan, not {keeps!r}")
        return Plan(n_layer, False) if keeps == "float32" else Plan(0, True)
    n, rows = keeps
    if not 0 <= n <= n_layer:
        raise ValueError(f"a plan keeps 0 to {n_layer} layers in float32, not {n}")
    return Plan(int(n), bool(rows))


def build(arch, cfg, tensor, plan, keep=True):
    """The model of architecture ARCH and config CFG from TENSOR(name) (float32, or a Rows for
    the embedding and output under a plan with rows), its layers held as PLAN says (with every
    layer in float32, `keep` as for Llama)."""
    Model = GPT2File if arch == "gpt2" else LlamaFile
    every = plan.layers == cfg["n_layer"]
    model = Model(cfg, tensor, keep=keep and every)
    if plan.layers and not every:
        model.layers = Layers(model, plan.layers)
    model.arch, model.config = arch, cfg
    model.plan, model.keeps = plan, plan_name(plan, cfg["n_layer"])
    return model


def blocks_logits(h, out):
    """The final normed residual stream h (T, d) times OUT.T, OUT a Rows: (T, V) float32."""
    return np.concatenate([dot(h, rows.T) for rows in out.chunks()], -1).astype(np.float32)


class LlamaFile(Steps, Llama):
    """A llama or qwen2 file's model."""

    def logits(self, x):
        if not isinstance(self.out, Rows):
            return super().logits(x)
        return blocks_logits(rmsnorm(x, self.norm, self.eps), self.out)


class GPT2File(Steps, GPT2):
    """A gpt2 file's model."""

    def logits(self, x):
        if not isinstance(self.out, Rows):
            return super().logits(x)
        return blocks_logits(layernorm(x, *self.norm, self.eps), self.out)


def need(fields, key):
    if key not in fields:
        raise FileError(f"the file's metadata has no {key}: it is not a complete model file")
    return fields[key]


def whole(fields, key, default=None):
    """An integer field (a list, one value per layer, is refused: this forward has one shape)."""
    value = need(fields, key) if default is None else fields.get(key, default)
    if isinstance(value, list):
        raise FileError(f"{key} differs from layer to layer; this forward needs one value")
    return int(value)


def config(fields, names):
    """The architecture and shape a file's metadata FIELDS describe, its tensors' NAMES checked
    against them -> (architecture, config for the forward)."""
    arch = fields.get("general.architecture")
    if arch not in ARCHITECTURES:
        raise FileError(
            f"the file holds a {arch!r} model; this page runs {', '.join(ARCHITECTURES)} "
            "(SmolLM2, Llama 3.2, TinyLlama, Qwen2 and Qwen2.5, GPT-2)"
        )
    n_layer = whole(fields, f"{arch}.block_count")
    n_head = whole(fields, f"{arch}.attention.head_count")
    d = whole(fields, f"{arch}.embedding_length")
    cfg = {"n_layer": n_layer, "n_head": n_head, "d": d, "tied": "output.weight" not in names}
    if arch == "gpt2":
        cfg["eps"] = float(need(fields, "gpt2.attention.layer_norm_epsilon"))
        cfg["n_ctx"] = whole(fields, "gpt2.context_length")
        layer, top = GPT2_LAYER, {"position_embd.weight", "output_norm.weight", "output_norm.bias"}
    else:
        hs = whole(fields, f"{arch}.attention.key_length", d // n_head)
        rot = whole(fields, f"{arch}.rope.dimension_count", hs)
        if rot != hs:
            raise FileError(
                f"rotary positions turn {rot} of each head's {hs} dimensions; "
                "this forward turns them all"
            )
        scaling = fields.get(f"{arch}.rope.scaling.type", "none")
        if scaling != "none":
            raise FileError(
                f"rotary scaling {scaling!r}: this forward reads unscaled files "
                "and Llama 3's rope_freqs"
            )
        cfg |= {
            "n_kv": whole(fields, f"{arch}.attention.head_count_kv", n_head),
            "hs": hs,
            "eps": float(need(fields, f"{arch}.attention.layer_norm_rms_epsilon")),
            "base": float(fields.get(f"{arch}.rope.freq_base", 10000.0)),
            "qkv_bias": "blk.0.attn_q.bias" in names,
            "unpermute": arch == "llama",
        }
        if n_head % cfg["n_kv"]:
            raise FileError(f"{n_head} heads do not share {cfg['n_kv']} key-value groups evenly")
        layer = LLAMA_LAYER + (QKV_BIAS if cfg["qkv_bias"] else ())
        top = {"output_norm.weight"} | ({"rope_freqs.weight"} & names)
    wanted = {"token_embd.weight"} | top | ({"output.weight"} & names)
    wanted |= {f"blk.{i}.{n}" for i in range(n_layer) for n in layer}
    missing, extra = sorted(wanted - names), sorted(names - wanted)
    if missing:
        raise FileError(
            f"the file lacks {len(missing)} tensor{'s' * (len(missing) > 1)} a {arch} model "
            f"needs, such as {missing[0]}: it is cut short or not a whole model"
        )
    if extra:
        raise FileError(
            f"the file has tensors a {arch} model of this forward has not, such as "
            f"{extra[0]}: it is a variant this page does not run"
        )
    return arch, cfg


def load(data, keep=True, keeps="float32"):
    """The model in the GGUF file's bytes DATA, its weights held as KEEPS says ("float32",
    "blocks" or a Plan, see the module; with every layer in float32, `keep` as for Llama): a
    LlamaFile or GPT2File, with `.arch`, `.config`, `.plan` and `.keeps` (the plan's name).
    Raises gguf.GGUFError (FileError among them) for a file it cannot run."""
    reader = gguf.Reader(data, quants.nbytes)
    raw = reader.tensors
    arch, cfg = config(reader.fields, set(raw))
    plan = plan_of(keeps, cfg["n_layer"])

    def tensor(name):
        kind, shape, blocks = raw[name]
        if plan.rows and name in EMBEDDING:
            return Rows(kind, shape, blocks)
        return quants.dequantize(blocks, kind, shape)

    if "rope_freqs.weight" in raw:
        cfg["freq_factors"] = tensor("rope_freqs.weight")
    return build(arch, cfg, tensor, plan, keep)
