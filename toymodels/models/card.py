"""The model card of a reader's own GGUF file, read from its header alone, before any heavy
work: what the model is, whether the page can run it, and the memory it will take. Shipped
(numpy and the stdlib), so the worker reads the card from the reader's disk; nothing past the
header and the tensor infos is read, so a file the page cannot run is refused at once.

    card.read(source, *, file_size=None, budget_mb=PLAN_MB) -> Card

`source` is what the caller can read of the file: bytes-like (a prefix of the file or all of
it) or a binary file object with `.read(n)` (in the page, the worker's reader of the chosen
File). From a file object the header is read in pieces of gguf.PIECE bytes (1 MB) until the
tensor infos end, so at most a piece past them, and never more than MAX_HEADER bytes.
`file_size` is the whole file's size where known (File.size in the page): a file shorter than
its tensors need is then refused as truncated; without it the tensors' data is not checked
(the forward checks each tensor when it reads it). `budget_mb` is the memory the page may give
the weights.

A Card has:

    architecture   "llama", "qwen2" or "gpt2" (ARCHITECTURES)
    name           general.name (its first 200 characters), or "" when the file has none
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
    base_bytes     the worker's memory before any model (BASE_MB: Pyodide, numpy, the site)
    work_bytes     the working memory under the plan: a layer being made float32 (its
                   tensors and the fused matrices made of them: once the layer while the model
                   is built, twice at every step for a layer kept as blocks), TOKENS tokens'
                   logits and a copy, and the header as Python objects (HEADER_OBJECTS times
                   its bytes: the fields and the tokenizer, made before any weight is read)
    budget_bytes   the budget the card was read against: the worker's whole memory
    plan           Plan(layers, rows): the first `layers` layers kept in float32, the others
                   kept as the file's blocks and dequantised whenever the forward reaches
                   them; with `rows`, the token embedding and output matrix kept as blocks too,
                   read a few rows (or a chunk of the vocabulary) at a time. The most layers in
                   float32 that fit the budget, the embedding as rows only if nothing fits
                   without; a file that fits no plan is refused
    keeps          the plan's name: "float32" (every weight in float32), "blocks" (no layer
                   in float32) or "mixed"
    memory_bytes   what the plan costs the worker: base, working memory and the weights as kept
    float32_memory_bytes, quantised_bytes
                   the same for every weight in float32, and for the least plan (no layer in
                   float32, the embedding as rows where that takes less): the two numbers a
                   refusal states
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
    TooLarge              "memory"         not even the least plan fits the budget (it and
                                           all in float32 stated)
"""

from collections import Counter, namedtuple

from . import gguf, quants

ARCHITECTURES = ("llama", "qwen2", "gpt2")
BUDGET_MB = 1536  # the worker's whole memory for the largest model the page accepts (about 500M)
# Pyodide's heap grows by up to 96 MiB at a time (Emscripten's geometric step, capped), so a
# plan short by a few MiB costs a whole step: the page plans to the budget less one step
GROWTH_MB = 96
PLAN_MB = BUDGET_MB - GROWTH_MB
BASE_MB = 128  # the worker's memory before any model: Pyodide, numpy, the site's modules
TOKENS = 64  # the most tokens the page reads at once (smollm2.live.MAX_TOKENS)
# the header's fields and the tokenizer made of them, as Python objects, in bytes a header byte
# (SmolLM2's vocabulary: 1.7 MB of header, 24 MB of objects in CPython)
HEADER_OBJECTS = 14
CHUNK = 4096  # vocabulary rows made float32 at once for logits from rows (gguffile.model.CHUNK)
MB = 2**20
SMALL = 100_000  # parameters: fewer are counted one by one on the card, more in millions
EMBEDDING = ("token_embd.weight", "output.weight")  # kept as rows under a plan with `rows`
MAX_HEADER = gguf.MAX_HEADER
# the most a real small model has of each; more is a damaged or hostile header
LIMITS = {"layers": 1024, "heads": 1024, "width": 2**17, "context": 2**24, "vocabulary": 2**22}

Tensor = namedtuple("Tensor", "kind shape start nbytes")
Plan = namedtuple("Plan", "layers rows")


def plan_name(plan, layers):
    """A plan's name for a model of LAYERS layers: "float32" (every weight in float32),
    "blocks" (no layer in float32) or "mixed"."""
    if plan == (layers, False):
        return "float32"
    return "mixed" if plan.layers else "blocks"


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


FAMILIES = "Llama (llama: SmolLM2, Llama 3.2, TinyLlama), Qwen2 (qwen2) or GPT-2 (gpt2)"
READS = ", ".join(quants.TYPES)


def read(source, *, file_size=None, budget_mb=PLAN_MB):
    """The Card of the GGUF file `source` (see the module's docstring), or a Refused."""

    def early(key, value):  # an unknown family is refused before its tokenizer is read
        if key == "general.architecture":
            _architecture(value)

    try:
        head = gguf.Header(source, file_size, on_field=early)
    except gguf.GGUFError as e:
        raise _refusal(e) from None
    return Card(head, file_size, budget_mb)


def _refusal(e):
    if e.reason == "not-gguf":
        return NotGGUF(
            "This is not a GGUF model file: it does not start with the letters GGUF. Choose a "
            ".gguf file, such as one from a model's GGUF release or made by llama.cpp's "
            "convert_hf_to_gguf.py."
        )
    if e.reason == "version":
        return UnsupportedVersion(
            f"This file is in a GGUF format this page does not read ({e}). Files written by "
            "llama.cpp or the gguf package since 2023 (GGUF version 3) work."
        )
    if e.reason == "truncated":
        return Truncated(
            f"This file is cut short or damaged: {e}. Download it again; a complete file works."
        )
    return Corrupt(f"This file's header is damaged: {e}. Download it again, or choose another.")


def _architecture(value):
    if value not in ARCHITECTURES:
        raise UnknownArchitecture(
            f"This model's architecture is {str(value)[:80]!r}, which this page cannot run. It "
            f"runs {FAMILIES} models: a GGUF file of one of those works."
        )
    return value


class Card:
    """What a GGUF header says of its model (the module's docstring lists the attributes)."""

    def __init__(self, head, file_size, budget_mb):
        f = head.fields
        self.fields = f
        if "general.architecture" not in f:
            raise Corrupt(
                "This file's header does not say which architecture the model has "
                f"(general.architecture). The page runs {FAMILIES} models."
            )
        arch = self.architecture = _architecture(f["general.architecture"])
        name = f.get("general.name", "")
        self.name = name[:200] if isinstance(name, str) else ""  # the file's text, shown
        self.layers = self._number(f"{arch}.block_count", "layers")
        self.heads = self._number(f"{arch}.attention.head_count", "heads")
        kv = f"{arch}.attention.head_count_kv"
        self.kv_heads = self._number(kv, "heads") if kv in f else self.heads
        if self.heads % self.kv_heads:
            raise Corrupt(
                f"This file's header is damaged: {self.heads} heads cannot share "
                f"{self.kv_heads} key/value groups evenly. Download it again, or choose another."
            )
        self.width = self._number(f"{arch}.embedding_length", "width")
        self.context = self._number(f"{arch}.context_length", "context")
        self.tensors, kinds = {}, Counter()
        for name_, kind, shape, offset in head.tensors:
            kinds[kind] += 1
            start = head.data_start + offset
            size = quants.nbytes(kind, shape) if kind in quants.TYPES else 0
            self.tensors[name_] = Tensor(kind, shape, start, size)
        self.quants = dict(kinds.most_common())
        self._check_types()
        self.vocabulary = self._vocabulary()
        self.data_start = head.data_start
        self.data_end = max((t.start + t.nbytes for t in self.tensors.values()), default=0)
        self.data_end = max(self.data_end, head.data_start)
        if file_size is not None and file_size < self.data_end:
            raise Truncated(
                f"This file is cut short: its tensors need {self.data_end:,} bytes, the file "
                f"has {file_size:,}. Download it again; a complete file works."
            )
        self.parameters = sum(_count(t.shape) for t in self.tensors.values())
        self.float32_bytes = 4 * self.parameters
        self.blocks_bytes = sum(t.nbytes for t in self.tensors.values())
        layers = [[0, 0] for _ in range(self.layers)]  # [float32, blocks] bytes per layer
        embedding, other = [0, 0], 0
        for tname, t in self.tensors.items():
            f32 = 4 * _count(t.shape)
            parts = tname.split(".")
            if tname.startswith("blk.") and parts[1].isdigit() and int(parts[1]) < self.layers:
                layers[int(parts[1])][0] += f32
                layers[int(parts[1])][1] += t.nbytes
            elif tname in EMBEDDING:
                embedding[0] += f32
                embedding[1] += t.nbytes
            else:
                other += f32
        self.layer_bytes = max((f for f, _ in layers), default=0)
        self.base_bytes = BASE_MB * MB
        work = (
            2 * 4 * TOKENS * self.vocabulary  # TOKENS tokens' logits, and a copy
            + HEADER_OBJECTS * head.data_start  # the fields and the tokenizer made of them
        )
        fixed = self.base_bytes + work + other
        # kept as rows: the blocks, and a chunk of the vocabulary in float32 at a time
        as_rows = embedding[1] + 4 * min(CHUNK, self.vocabulary) * self.width
        # a layer made float32 holds its tensors and the fused matrices made of them: once as
        # the model is built (then the tensors are let go), twice at every step for a layer
        # kept as blocks
        made = (self.layer_bytes, 2 * self.layer_bytes)
        self.float32_memory_bytes = fixed + made[0] + embedding[0] + sum(f for f, _ in layers)
        least = fixed + made[1] + min(as_rows, embedding[0]) + sum(b for _, b in layers)
        self.quantised_bytes = least
        self.budget_bytes = int(budget_mb * MB)
        for rows in (False, True):
            if not rows and self.float32_memory_bytes <= self.budget_bytes:
                self.plan, self.memory_bytes = Plan(self.layers, False), self.float32_memory_bytes
                break
            total = fixed + made[1] + (as_rows if rows else embedding[0])
            total += sum(b for _, b in layers)
            if total > self.budget_bytes or (rows and as_rows >= embedding[0]):
                continue  # rows only where nothing else fits, and only if they take less
            n = 0  # layers in float32, the first ones, while the budget holds them
            while n < self.layers:
                more = layers[n][0] - layers[n][1] - (made[1] - made[0]) * (n + 1 == self.layers)
                if total + more > self.budget_bytes:
                    break
                total += more
                n += 1
            self.plan, self.memory_bytes = Plan(n, rows), total
            break
        else:
            raise TooLarge(
                f"This model is too large for the memory this page can use here "
                f"({_mb(self.budget_bytes)}): it needs {_mb(self.quantised_bytes)} with its "
                "weights kept as the file's blocks, one layer at a time in float32, and "
                f"{_mb(self.float32_memory_bytes)} with them in float32. A smaller model (up to "
                "about 500 million parameters) or a smaller quantisation, such as Q4_K_M, "
                "works; so may a browser on a computer with more memory."
            )
        self.keeps = plan_name(self.plan, self.layers)
        every = self.plan.layers == self.layers
        self.work_bytes = work + made[0 if every else 1]

    def _number(self, key, what):
        """A positive whole number from the header, within what a small model has."""
        value = self.fields.get(key)
        if value is None:
            raise Corrupt(
                f"This file's header lacks {key}, which every {self.architecture} model "
                "file has. Download it again, or choose another."
            )
        if type(value) is not int or not 1 <= value <= LIMITS[what]:
            raise Corrupt(
                f"This file's header is damaged: {key} is {str(value)[:40]}, not a number "
                f"from 1 to {LIMITS[what]:,}. Download it again, or choose another."
            )
        return value

    def _check_types(self):
        other = {k: n for k, n in self.quants.items() if k not in quants.TYPES}
        if other:
            held = ", ".join(f"{k} ({n} tensor{'s' * (n > 1)})" for k, n in other.items())
            raise UnsupportedQuant(
                f"This file stores weights as {held}, which this page cannot read. It reads "
                f"{READS}: a Q4_K_M, Q5_K_M, Q6_K or Q8_0 file of the same model works."
            )

    def _vocabulary(self):
        tokens = self.fields.get("tokenizer.ggml.tokens")
        if isinstance(tokens, list) and tokens:
            n = len(tokens)
        elif "token_embd.weight" in self.tensors:
            n = self.tensors["token_embd.weight"].shape[0]
        else:
            raise Corrupt(
                "This file has neither a vocabulary (tokenizer.ggml.tokens) nor a token "
                "embedding (token_embd.weight). Download it again, or choose another."
            )
        if n > LIMITS["vocabulary"]:
            raise Corrupt(f"This file's header is damaged: a vocabulary of {n:,} tokens.")
        return n

    def lines(self):
        """The card as short plain-text sentences for the page (the model's name is the
        file's text: the page escapes it like any reader input)."""
        groups = self.heads // self.kv_heads
        share = (
            f"{self.kv_heads} key/value groups ({groups} heads share each)"
            if groups > 1
            else "a key and value per head"
        )
        kinds = ", ".join(f"{k} ({n})" for k, n in self.quants.items())
        own = f"the page's own {_mb(self.base_bytes + self.work_bytes)} included"
        rows = ", the embedding read a few rows at a time" if self.plan.rows else ""
        if self.keeps == "float32":
            memory = (
                f"Memory: {_mb(self.memory_bytes)}, {own}: the weights in float32 (the file's "
                f"blocks with a layer at a time would take {_mb(self.quantised_bytes)})."
            )
        elif self.keeps == "mixed":
            n, rest = self.plan.layers, self.layers - self.plan.layers
            memory = (
                f"Memory: {_mb(self.memory_bytes)} of the {_mb(self.budget_bytes)} this page "
                f"can use, {own}: {n} of the {self.layers} layers kept in float32, the other "
                f"{rest} as the file's blocks, each dequantised again at every step{rows} (all "
                f"in float32 would take {_mb(self.float32_memory_bytes)})."
            )
        else:
            memory = (
                f"Memory: {_mb(self.memory_bytes)}, {own}: the file's blocks kept with one layer "
                f"at a time in float32{rows} (all in float32 would take "
                f"{_mb(self.float32_memory_bytes)}, over the {_mb(self.budget_bytes)} this page "
                "can use); each layer is dequantised again at every step."
            )
        return [
            f"{self.name or 'An unnamed model'}: {self.architecture} architecture.",
            (
                f"{self.parameters / 1e6:,.1f} million parameters."
                if self.parameters >= SMALL
                else f"{self.parameters:,} parameters."  # not "0.0 million"
            ),
            f"{self.layers} layers × {self.heads} heads, {share}.",
            f"{self.width} wide; a vocabulary of {self.vocabulary:,} tokens; a context of "
            f"{self.context:,} tokens.",
            f"Weights stored as {kinds} (tensors of each type).",
            memory,
        ]


def _count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _mb(n):
    return f"{n / MB:,.1f} MB" if n < 10 * MB else f"{n / MB:,.0f} MB"
