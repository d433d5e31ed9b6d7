"""Byte-level BPE (GPT-2 style) from a GGUF file's own vocabulary and merges, as llama.cpp
reads SmolLM2's ("tokenizer.ggml.pre" = "smollm"):

1. split the text into pieces: every number character alone, then GPT-2's pattern
   's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+
2. spell each piece's UTF-8 bytes in GPT-2's byte alphabet (a space is "Ġ");
3. merge adjacent symbols, always the pair with the lowest merge rank first, until none is left;
4. look each symbol up in the vocabulary.

No BOS is added (the file says add_bos_token false). Python's `re` has no \\p{..}, so the
letter and number classes are given as code point ranges: the site's tokenizer file carries
them (made at build time, so the browser's Python need not walk all of Unicode, and both runs
split alike whatever their Unicode version); without them they are built from unicodedata.

Shipped: the build's export of "Heads that copy" and the reader's own text in the browser use
this one tokenizer.
"""

import itertools
import re
import sys
import unicodedata
from functools import lru_cache

# Unicode White_Space (what \s means in the reference's regex engine; Python's \s also takes
# the separators U+001C..U+001F, which White_Space does not)
SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"


def char_ranges(prefix, categories=None):
    """[(first, last)] code points whose category starts with `prefix` ("L" letters, "N"
    numbers), as unicodedata knows them. `categories`: every code point's category's first
    letter as one string (unicode_classes makes it once for both classes)."""
    first = categories if categories is not None else _first_letters()
    return [(m.start(), m.end() - 1) for m in re.finditer(f"{prefix}+", first)]


def _first_letters():
    """The first letter of every code point's category, one character each, in order, made
    once for both classes by C-level loops (map over the string of all code points): a
    reader's model file builds its tokenizer from these under Pyodide, where a Python loop over
    Unicode's 1.1 million code points, once a class, took half as long again."""
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    return "".join(map(unicodedata.category, every))[::2]  # every category is two letters


@lru_cache(maxsize=1)
def unicode_classes():
    """(letters, numbers) as ranges, from this Python's unicodedata."""
    first = _first_letters()
    return char_ranges("L", first), char_ranges("N", first)


def class_body(ranges):
    """A regex class body covering the ranges."""
    return "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
        for a, b in ranges
    )


@lru_cache(maxsize=4)
def _patterns(letters, numbers):
    L, N = class_body(letters), class_body(numbers)
    pieces = (
        rf"'s|'t|'re|'ve|'m|'ll|'d| ?[{L}]+| ?[{N}]+| ?[^{SPACE}{L}{N}]+"
        rf"|[{SPACE}]+(?![^{SPACE}])|[{SPACE}]+"
    )
    return re.compile(f"[{N}]"), re.compile(pieces)


def patterns(classes=None):
    """(number, pieces): one number character; GPT-2's pre-tokenizer pattern. `classes`:
    (letters, numbers) ranges, else unicodedata's."""
    letters, numbers = classes or unicode_classes()
    return _patterns(tuple(map(tuple, letters)), tuple(map(tuple, numbers)))


def byte_alphabet():
    """GPT-2's bytes -> printable characters (printable Latin-1 bytes stand for themselves)."""
    keep = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    extra = (b for b in range(256) if b not in keep)
    table = {b: chr(b) for b in keep}
    table.update({b: chr(256 + n) for n, b in enumerate(extra)})
    return table


def split(text, classes=None):
    """The pre-tokenizer: the text as pieces, each merged separately."""
    number, pieces = patterns(classes)
    out, at = [], 0
    for m in number.finditer(text):  # numbers alone, then GPT-2's pattern on what lies between
        out += pieces.findall(text[at : m.start()]) + [m.group()]
        at = m.end()
    return out + pieces.findall(text[at:])


def readable(data):
    """UTF-8 bytes as text, each byte that is not part of a whole character shown as <0xE4>
    (the notation of byte tokens in SentencePiece and llama.cpp vocabularies)."""
    out = []
    while data:
        try:
            out.append(data.decode("utf-8"))
            break
        except UnicodeDecodeError as e:
            out.append(data[: e.start].decode("utf-8"))
            out.append("".join(f"<0x{b:02X}>" for b in data[e.start : e.end]))
            data = data[e.end :]
    return "".join(out)


class BPE:
    """tokens: id -> spelled token; merges: "a b" in rank order; classes: (letters, numbers)
    code point ranges, else unicodedata's."""

    def __init__(self, tokens, merges, classes=None):
        self.classes = classes
        self.tokens = list(tokens)  # id -> spelled token
        self.ids = {t: i for i, t in enumerate(self.tokens)}
        self.rank = {tuple(m.split(" ")): r for r, m in enumerate(merges)}
        self.spell = byte_alphabet()
        self.unspell = {c: b for b, c in self.spell.items()}
        self._cache = {}

    def merge(self, word):
        """One spelled piece -> its symbols after all merges."""
        if word in self._cache:
            return self._cache[word]
        sym = list(word)
        while len(sym) > 1:
            never = len(self.rank)
            r, n = min((self.rank.get(p, never), n) for n, p in enumerate(itertools.pairwise(sym)))
            if r == never:
                break
            a, b = sym[n], sym[n + 1]
            out, i = [], 0
            while i < len(sym):  # merge every (a, b) left to right, as GPT-2 does
                if i + 1 < len(sym) and sym[i] == a and sym[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(sym[i])
                    i += 1
            sym = out
        self._cache[word] = sym
        return sym

    def encode(self, text):
        """text -> token ids."""
        ids = []
        for piece in split(text, self.classes):
            spelled = "".join(self.spell[b] for b in piece.encode("utf-8"))
            ids += [self.ids[s] for s in self.merge(spelled)]
        return ids

    def piece_bytes(self, i):
        return bytes(self.unspell[c] for c in self.tokens[i])

    def shown(self, i):
        """Token I as a reader sees it: its text, each byte of a character it holds only part
        of shown as <0xE4> (decoding alone would give "�")."""
        return readable(self.piece_bytes(i))

    def unfinished(self, ids):
        """The bytes at the end of the text of IDS that begin a character it does not finish
        (at most 3: a character is at most 4 bytes)."""
        data = b"".join(self.piece_bytes(i) for i in ids[-4:])
        for k in range(min(3, len(data)), 0, -1):
            try:
                data[-k:].decode("utf-8")
            except UnicodeDecodeError as e:
                if e.start == 0 and e.reason == "unexpected end of data":
                    return data[-k:]
        return b""

    def next_shown(self, ids, i):
        """Token I as it would go on the text of IDS (a guess for the next token): when the
        text ends in part of a character and I finishes it, the text they make together (the
        whole character and what I holds after it), else shown(I)."""
        head = self.unfinished(ids)
        whole = readable(head + self.piece_bytes(i))
        return whole if head and not whole.startswith("<0x") else self.shown(i)

    def decode(self, ids):
        return b"".join(self.piece_bytes(i) for i in ids).decode("utf-8", errors="replace")
