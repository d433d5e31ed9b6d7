"""The tokenizer a GGUF file's metadata describes, for a byte-level BPE vocabulary
("tokenizer.ggml.model" = "gpt2": GPT-2, Llama 3, Qwen2, SmolLM2): SmolLM2's BPE
(toymodels/models/smollm2/bpe.py) with the pre-tokenizer the file names in
"tokenizer.ggml.pre", each as transformers builds it from a GGUF file:

    gpt-2, default  GPT-2's pattern
    smollm          every number character alone, then GPT-2's pattern (SmolLM2's own)
    llama-bpe, …    Llama 3's: letters with one leading non-letter, numbers in threes, …
    qwen2, …        Llama 3's with every number character alone

Control tokens (token type 3, such as <|endoftext|>) are matched whole in the text, as
transformers' added tokens are. A file naming another pre-tokenizer or vocabulary type is
refused: its text would be split in a way this one does not know.
"""

import re

from ..smollm2 import bpe
from .model import FileError

CONTROL = 3  # llama.cpp's token type of a control token
# Llama 3's pattern, and Qwen2's (numbers one character at a time), with Python's classes:
# L letters, N numbers, S Unicode White_Space (what \s is to the reference's regex engine)
LLAMA3 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n{L}{N}]?[{L}]+|[{N}]{{1,3}}"
    r"| ?[^{S}{L}{N}]+[\r\n]*|[{S}]*[\r\n]+|[{S}]+(?![^{S}])|[{S}]+"
)
QWEN2 = LLAMA3.replace("[{N}]{{1,3}}", "[{N}]")
PATTERNS = {
    "llama3": LLAMA3,
    "llama-v3": LLAMA3,
    "llama-bpe": LLAMA3,
    "smaug-bpe": LLAMA3,
    "dbrx": LLAMA3,
    "qwen2": QWEN2,
    "deepseek-r1-qwen": QWEN2,
}
GPT2 = ("gpt-2", "default")
SMOLLM = ("smollm",)


class Tokenizer(bpe.BPE):
    """A byte-level BPE with the pre-tokenizer `pre` names (see the module) and the control
    tokens `control` matched whole."""

    def __init__(self, tokens, merges, pre, control=(), classes=None):
        super().__init__(tokens, merges, classes)
        self.pre = pre
        letters, numbers = classes or bpe.unicode_classes()
        L, N = bpe._body(tuple(map(tuple, letters))), bpe._body(tuple(map(tuple, numbers)))
        self.pattern = (
            re.compile(PATTERNS[pre].format(L=L, N=N, S=bpe.SPACE)) if pre in PATTERNS else None
        )
        self.control = (
            re.compile("|".join(re.escape(t) for t in sorted(control, key=len, reverse=True)))
            if control
            else None
        )

    def pieces(self, text):
        """The pre-tokenizer: TEXT as pieces, each merged separately."""
        if self.pattern is not None:
            return self.pattern.findall(text)
        if self.pre in SMOLLM:
            return bpe.split(text, self.classes)
        return bpe.patterns(self.classes)[1].findall(text)

    def encode(self, text):
        """TEXT -> token ids."""
        ids, at = [], 0
        for m in self.control.finditer(text) if self.control else ():
            ids += self._encode(text[at : m.start()]) + [self.ids[m.group()]]
            at = m.end()
        return ids + self._encode(text[at:])

    def _encode(self, text):
        ids = []
        for piece in self.pieces(text):
            spelled = "".join(self.spell[b] for b in piece.encode("utf-8"))
            ids += [self.ids[s] for s in self.merge(spelled)]
        return ids


def tokenizer(fields, classes=None):
    """The tokenizer of a GGUF file's metadata FIELDS ({key: value}); `classes`: the letter and
    number code point ranges (bpe.py), else this Python's unicodedata's."""
    kind = fields.get("tokenizer.ggml.model")
    if kind != "gpt2":
        raise FileError(
            f"the file's vocabulary is of type {kind!r}; this page reads byte-level BPE ('gpt2': "
            "GPT-2, Llama 3, Qwen2, SmolLM2)"
        )
    pre = fields.get("tokenizer.ggml.pre", "default")
    if pre not in PATTERNS and pre not in GPT2 + SMOLLM:
        known = ", ".join(sorted(set(PATTERNS) | set(GPT2 + SMOLLM)))
        raise FileError(
            f"the file splits text with the pre-tokenizer {pre!r}; this page knows {known}"
        )
    tokens = fields["tokenizer.ggml.tokens"]
    types = fields.get("tokenizer.ggml.token_type") or ()
    # a control token spelled outside the byte alphabet is not one the text can hold
    alphabet = set(bpe.byte_alphabet().values())
    control = [
        t for t, k in zip(tokens, types, strict=False) if k == CONTROL and set(t) <= alphabet
    ]
    return Tokenizer(tokens, fields.get("tokenizer.ggml.merges", []), pre, control, classes)
