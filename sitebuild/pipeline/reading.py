"""How long a chapter takes to read, from its word count, for the home page's path.

The count is the prose a reader reads: paragraphs, headings, captions, questions, answers,
feedback, hints and recaps. Code (fenced blocks, live cells, an exercise's starting code) and
what a figure draws are left out, a formula counts as one word, and so does a value
{{ toymodels.… }} or a piece of `code`. The time assumes WORDS_PER_MINUTE, a steady pace for
explanatory prose read with care; trying the figures and exercises takes as long as the reader
likes, and is not counted.
"""

import math
import re

from .chapters import Block

WORDS_PER_MINUTE = 200
WORD = re.compile(r"[A-Za-z0-9\u00c0-\u024f]+(?:['’.,:-][A-Za-z0-9\u00c0-\u024f]+)*")
FENCED = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
ONE_WORD = re.compile(
    r"\$\$.+?\$\$"  # a displayed formula
    r"|(?<![\\$])\$[^$\n]+\$"  # an inline formula
    r"|`[^`\n]+`"  # inline code
    r"|\{\{.*?\}\}"  # a value from toymodels/
)
LINK_TARGET = re.compile(r"\]\([^)]*\)|\{[#.][^}]*\}")  # a link's address, an attribute list
STEP = re.compile(r"^\s*\d+\.\s+\{\w+=[\w-]+\}")  # a steps block's '1. {step=qk}'
CHECK = re.compile(r"^\s*- \[[ x]\]")


def words(text):
    """Words in one piece of chapter Markdown."""
    text = FENCED.sub(" ", text)
    text = LINK_TARGET.sub("]", text)
    text = ONE_WORD.sub(" x ", text)
    return len(WORD.findall(text))


def _block_words(b):
    """Words a reader reads in one block."""
    if b.name in ("cell", "slot"):
        return 0
    if b.name == "figure":
        caption = next((t for _, t in b.lines if t.strip().startswith("caption:")), "")
        return words(caption.split(":", 1)[1] if caption else "")
    if b.name == "exercise":
        split = next((i for i, (_, t) in enumerate(b.lines) if t.strip() == "---"), len(b.lines))
        hints = [t.split(":", 1)[1] for _, t in b.lines[:split] if t.strip().startswith("hint:")]
        return words(b.args) + sum(words(h) for h in hints)
    body = "\n".join(STEP.sub("", CHECK.sub("", t)) for _, t in b.lines if t.strip() != "---")
    return words(b.args) + words(body) + prose_words(b.children)


def prose_words(pieces):
    """Words a reader reads in a chapter's body (Chapter.body) or in a block's children."""
    return sum(_block_words(p) if isinstance(p, Block) else words(p[1]) for p in pieces)


def minutes(n_words):
    """Reading time at WORDS_PER_MINUTE, to the nearest whole minute (halves up), at least one."""
    return max(1, math.floor(n_words / WORDS_PER_MINUTE + 0.5))
