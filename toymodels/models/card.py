"""The model card of a reader's own GGUF file, read from its header alone, before any heavy
work: what the model is, whether the page can run it, and the memory it will take. Shipped
(numpy and the stdlib), so the worker reads the card from the reader's disk; nothing past the
header and the tensor infos is read, so a file the page cannot run is refused at once.

    card.read(source, *, file_size=None, budget_mb=BUDGET_MB) -> Card

`source` is what the caller can read of the file: bytes-like (a prefix of the file or all of
it) or a binary file object with `.read(n)` (in the page, the worker's reader of the chosen
File). From a file object the header is read in growing pieces, never more than the header
and tensor infos end at, and never more than MAX_HEADER bytes. `file_size` is the whole
file's size where known (File.size in the page): a file shorter than its tensors need is then
refused as truncated; without it the tensors' data is not checked (the forward checks each
tensor when it reads it). `budget_mb` is the memory the page may give the weights.

A Card has:

    architecture   "llama", "qwen2" or "gpt2" (ARCHITECTURES)
    name           general.name, or "" when the file has none
    parameters     the weights' count (every tensor's elements)
    layers, heads, kv_heads, width, vocabulary, context
                   block count, attention heads, key/value heads (the groups of grouped-query
                   attention: heads // kv_heads queries share a key and value), embedding
                   width, vocabulary size, context length
    quants         {block type: tensor count}, e.g. {"Q4_K": 96, "Q6_K": 13, "F32": 49}
    tensors        {name: Tensor(kind, shape, start, nbytes)}: shape rows first (numpy's
                   order, the fastest axis last), start an absolute offset in the file, so
                   the forward reads one tensor's bytes on demand and hands them to
                   quants.dequantize(raw, kind, shape)
    fields         {key: value} the header's metadata (arrays as lists; the tokenizer is here)
    data_start, data_end
                   the byte the tensors' data begins at and the byte the file must reach
    float32_bytes  the weights in float32 (parameters * 4)
    blocks_bytes   the weights as the file holds them (the tensors' data)
    layer_bytes    the largest layer (blk.N.*) in float32
    quantised_bytes
                   blocks_bytes + layer_bytes: blocks kept, one layer dequantised at a time
    budget_bytes   the budget the card was read against
    keeps          "float32" when float32_bytes fits the budget, else "blocks" (then
                   quantised_bytes fits it; a file that fits neither is refused)
    memory_bytes   what `keeps` costs: float32_bytes or quantised_bytes
    lines()        the card as short sentences for the page, e.g. "30 layers × 9 heads"

Refusals raise a subclass of Refused (a ValueError) whose str() is the reader-facing message:
the reason, then what would work. Each has `.reason`, a short machine-readable code:

    NotGGUF               "not-gguf"       the file does not start with "GGUF"
    UnsupportedVersion    "version"        GGUF version other than 2 or 3
    Corrupt               "corrupt"        lengths past the end, absurd counts or sizes, a
                                           value of a type GGUF does not define
    Truncated (Corrupt)   "truncated"      the file ends before its header, or before its
                                           tensors' data when file_size says so
    UnknownArchitecture   "architecture"   general.architecture not in ARCHITECTURES
    UnsupportedQuant      "quant"          a tensor's block type quants.py does not read (named,
                                           with the ones it reads)
    TooLarge              "memory"         neither float32 nor blocks fit the budget (both
                                           numbers stated)
"""

from collections import namedtuple

ARCHITECTURES = ("llama", "qwen2", "gpt2")
BUDGET_MB = 1536  # the worker's memory for the largest model the page accepts (about 500M)
MAX_HEADER = 256 * 2**20  # no real header comes near (a 150k-token vocabulary is ~10 MB)

Tensor = namedtuple("Tensor", "kind shape start nbytes")


class Refused(ValueError):
    """A file the page will not run; str() is the reader-facing message."""

    reason = "refused"


class NotGGUF(Refused):
    reason = "not-gguf"


class UnsupportedVersion(Refused):
    reason = "version"


class Corrupt(Refused):
    reason = "corrupt"


class Truncated(Corrupt):
    reason = "truncated"


class UnknownArchitecture(Refused):
    reason = "architecture"


class UnsupportedQuant(Refused):
    reason = "quant"


class TooLarge(Refused):
    reason = "memory"


def read(source, *, file_size=None, budget_mb=BUDGET_MB):
    """The Card of the GGUF file `source` (see the module's docstring), or a Refused."""
    raise NotImplementedError
