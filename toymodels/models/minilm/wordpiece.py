"""BERT's WordPiece tokenizer, from vocab.txt alone (uncased: lower-case, accents stripped).

The same steps as BERT's reference BasicTokenizer + WordpieceTokenizer: clean the
text, put spaces around CJK characters, lower-case and strip accents, split on
white space and punctuation, then cut each word greedily into the longest pieces
the vocabulary has ("##" marks a piece that continues a word).
"""

import re
import unicodedata
from pathlib import Path


def load_vocab(path):
    """vocab.txt -> {piece: id}, one piece per line in id order."""
    lines = Path(path).read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return {piece: i for i, piece in enumerate(lines)}


def _is_control(ch):
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch).startswith("C")


def _is_space(ch):
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def _is_punct(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp):
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2B73F
        or 0x2B740 <= cp <= 0x2B81F
        or 0x2B820 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


def basic_words(text, lowercase=True):
    """Text -> words and punctuation marks, BERT's BasicTokenizer."""
    out = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD or _is_control(ch):
            continue
        if _is_cjk(cp):
            out.append(f" {ch} ")
        else:
            out.append(" " if _is_space(ch) else ch)
    words = []
    for word in "".join(out).split():
        if lowercase:
            word = "".join(
                c
                for c in unicodedata.normalize("NFD", word.lower())
                if unicodedata.category(c) != "Mn"
            )
        current = ""
        for ch in word:
            if _is_punct(ch):
                if current:
                    words.append(current)
                words.append(ch)
                current = ""
            else:
                current += ch
        if current:
            words.append(current)
    return words


class WordPiece:
    """tokenize(text) -> pieces with [CLS] … [SEP]; encode(text) -> (pieces, ids)."""

    def __init__(self, vocab, unk="[UNK]", cls="[CLS]", sep="[SEP]", max_chars=100, lowercase=True):
        self.vocab = load_vocab(vocab) if isinstance(vocab, (str, Path)) else dict(vocab)
        self.unk, self.cls, self.sep, self.max_chars, self.lowercase = (
            unk,
            cls,
            sep,
            max_chars,
            lowercase,
        )
        for special in (unk, cls, sep):
            if special not in self.vocab:
                raise ValueError(f"the vocabulary has no {special}")
        specials = sorted({unk, cls, sep, "[PAD]", "[MASK]"} & set(self.vocab), key=len)
        self._specials = re.compile("(" + "|".join(map(re.escape, specials[::-1])) + ")")

    def word_pieces(self, word):
        if len(word) > self.max_chars:
            return [self.unk]
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    break
                end -= 1
            else:
                return [self.unk]
            pieces.append(piece)
            start = end
        return pieces

    def tokenize(self, text):
        """[CLS], the pieces, [SEP]. A special token written in the text ("[UNK]", "[MASK]",
        as is, case and all) stays one token, as Hugging Face's tokenizer keeps it."""
        pieces = [self.cls]
        for i, part in enumerate(self._specials.split(text)):
            if i % 2:
                pieces.append(part)
                continue
            for word in basic_words(part, self.lowercase):
                pieces.extend(self.word_pieces(word))
        return pieces + [self.sep]

    def encode(self, text):
        pieces = self.tokenize(text)
        return pieces, [self.vocab[p] for p in pieces]
