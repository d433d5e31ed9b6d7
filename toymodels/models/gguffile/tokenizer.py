"""The tokenizer a GGUF file's metadata describes, for a byte-level BPE vocabulary
("tokenizer.ggml.model" = "gpt2": GPT-2, Llama 3, Qwen2, SmolLM2): SmolLM2's BPE
(toymodels/models/smollm2/bpe.py) with the pre-tokenizer the file names in
"tokenizer.ggml.pre", each as transformers builds it from a GGUF file:

    gpt-2, default  GPT-2's pattern
    smollm          every number character alone, then GPT-2's pattern (SmolLM2's own)
    llama-bpe, …    Llama 3's: letters with one leading non-letter, numbers in threes, …
    qwen2, …        Llama 3's with every number character alone

A SentencePiece vocabulary ("tokenizer.ggml.model" = "llama": Llama 2, TinyLlama) is read as
transformers reads it from a GGUF file (SentencePiece below), which differs from llama.cpp in
one place: a text that starts with a space gets no "▁" of its own.

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
        L, N = (
            bpe.class_body(tuple(map(tuple, letters))),
            bpe.class_body(tuple(map(tuple, numbers))),
        )
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


class SentencePiece(bpe.BPE):
    """A SentencePiece vocabulary ("tokenizer.ggml.model" = "llama": Llama 2, TinyLlama) as
    transformers reads it from a GGUF file: spaces spelled "▁", one "▁" put before a text that
    does not start with one, merges ranked by the score of the token they make (the file's own
    merges where it has them), and each character the vocabulary lacks spelled as its UTF-8
    bytes' tokens <0xE4>. Control tokens are matched whole."""

    SPACE = "\u2581"

    def __init__(self, tokens, scores, merges, control=()):
        self.tokens = list(tokens)
        self.ids = {}
        for i, t in enumerate(self.tokens):
            self.ids.setdefault(t, i)
        if not merges:
            merges = [" ".join(m) for m in derived_merges(self.tokens, scores)]
        self.rank = {tuple(m.split(" ")): r for r, m in enumerate(merges)}
        self.unk = self.ids.get("<unk>", 0)
        self._cache = {}
        self.control = (
            re.compile("|".join(re.escape(t) for t in sorted(control, key=len, reverse=True)))
            if control
            else None
        )

    def encode(self, text):
        """TEXT -> token ids (no BOS: the caller adds it where the file asks for one)."""
        ids, at = [], 0
        for m in self.control.finditer(text) if self.control else ():
            ids += self._encode(text[at : m.start()], at == 0) + [self.ids[m.group()]]
            at = m.end()
        return ids + self._encode(text[at:], at == 0)

    def _encode(self, text, first):
        if not text:
            return []
        text = text.replace(" ", self.SPACE)
        if first and not text.startswith(self.SPACE):
            text = self.SPACE + text
        ids = []
        for sym in self.merge(text):
            if sym in self.ids:
                ids.append(self.ids[sym])
            else:
                ids += [self.ids.get(f"<0x{b:02X}>", self.unk) for b in sym.encode("utf-8")]
        return ids

    def piece_bytes(self, i):
        t = self.tokens[i]
        if len(t) == 6 and t.startswith("<0x") and t.endswith(">"):
            return bytes([int(t[3:5], 16)])
        return t.replace(self.SPACE, " ").encode("utf-8")

    def decode(self, ids):
        text = b"".join(self.piece_bytes(i) for i in ids).decode("utf-8", errors="replace")
        return text[1:] if text.startswith(" ") else text


def derived_merges(tokens, scores):
    """The merges a vocabulary with scores implies, best first, as transformers derives them
    (tokenization_utils_base.generate_merges): each token cut in two where both halves are
    tokens, ranked by the whole token's score, then the longer left half, then the longer right
    half; a token's own cuts in the order of their halves' ids."""
    vocab, score = {}, {}
    for i, (t, s) in enumerate(zip(tokens, scores, strict=True)):
        vocab.setdefault(t, i)
        score[t] = s  # a repeated token: its last score, first place (a dict's)
    out = []
    for whole, s in score.items():
        cuts = [(whole[:n], whole[n:], s) for n in range(1, len(whole))]
        cuts = [c for c in cuts if c[0] in vocab and c[1] in vocab]
        out += sorted(cuts, key=lambda c: (vocab[c[0]], vocab[c[1]]))
    out.sort(key=lambda c: (c[2], len(c[0]), len(c[1])), reverse=True)
    return [(a, b) for a, b, _ in out]


def check(fields):
    """Raise FileError where a GGUF file's metadata FIELDS name a vocabulary `tokenizer` cannot
    read, without building it (a page judges a file before any heavy work)."""
    if not isinstance(fields.get("tokenizer.ggml.tokens"), list):
        raise FileError(
            "the file has no vocabulary (tokenizer.ggml.tokens): text cannot be read into its "
            "tokens"
        )
    kind = fields.get("tokenizer.ggml.model")
    if kind == "llama":
        return
    if kind != "gpt2":
        raise FileError(
            f"the file's vocabulary is of type {kind!r}; this page reads byte-level BPE ('gpt2': "
            "GPT-2, Llama 3, Qwen2, SmolLM2) and SentencePiece ('llama': Llama 2, TinyLlama)"
        )
    pre = fields.get("tokenizer.ggml.pre", "default")
    if pre not in PATTERNS and pre not in GPT2 + SMOLLM:
        known = ", ".join(sorted(set(PATTERNS) | set(GPT2 + SMOLLM)))
        raise FileError(
            f"the file splits text with the pre-tokenizer {pre!r}; this page knows {known}"
        )


def tokenizer(fields, classes=None):
    """The tokenizer of a GGUF file's metadata FIELDS ({key: value}); `classes`: the letter and
    number code point ranges (bpe.py), else this Python's unicodedata's. Raises FileError for a
    vocabulary it cannot read (check)."""
    check(fields)
    kind = fields.get("tokenizer.ggml.model")
    tokens = fields["tokenizer.ggml.tokens"]
    types = fields.get("tokenizer.ggml.token_type") or ()
    if kind == "llama":
        control = [t for t, k in zip(tokens, types, strict=False) if k == CONTROL]
        scores = fields.get("tokenizer.ggml.scores") or [0.0] * len(tokens)
        return with_bos(
            SentencePiece(tokens, scores, fields.get("tokenizer.ggml.merges"), control), fields
        )
    pre = fields.get("tokenizer.ggml.pre", "default")
    # a control token spelled outside the byte alphabet is not one the text can hold
    alphabet = set(bpe.byte_alphabet().values())
    control = [
        t for t, k in zip(tokens, types, strict=False) if k == CONTROL and set(t) <= alphabet
    ]
    return with_bos(
        Tokenizer(tokens, fields.get("tokenizer.ggml.merges", []), pre, control, classes), fields
    )


def with_bos(tok, fields):
    """TOK with `bos`, the id the model reads first where the file asks for one (its
    add_bos_token, true by default for a SentencePiece vocabulary, as transformers takes it),
    else None; `for_model(text)` gives the ids the model reads."""
    sentencepiece = fields.get("tokenizer.ggml.model") == "llama"
    wanted = fields.get("tokenizer.ggml.add_bos_token", sentencepiece)
    bos = fields.get("tokenizer.ggml.bos_token_id")
    tok.bos = int(bos) if wanted and bos is not None else None
    return tok


def for_model(tok, text):
    """TEXT as the ids the model reads: the file's BOS first where it asks for one."""
    return ([tok.bos] if tok.bos is not None else []) + tok.encode(text)
