"""The state of a figure, checked, and the line that says what the figure shows.

Most heads on this site look at a sentence the reader typed and one word of it: `read_sentence`
checks both (and any CHOICES), so that a figure's `render` starts from a state it can draw. A
slider's field holds a number on its scale: `read_number` reads it, and `number_text` writes a
number as the field and the slider's label hold it.
"""

import re
from decimal import ROUND_HALF_UP, Decimal

from ..figure import merge
from ..html import esc, whole

NUMBER = re.compile(r"-?[0-9]{1,9}(?:\.[0-9]{1,20})?")  # what a slider sends: "0.35", "-2"


def read_sentence(state, defaults, choices=None, *, max_words=8):
    """The reader's STATE over DEFAULTS (which hold "sentence" and "word"), every field checked:
    -> (state, words, error). The sentence is split at spaces; more than MAX_WORDS words, or
    none, is an error for the reader to fix. A field of CHOICES outside its choices, or a word
    that is not a whole number inside the sentence, falls back to its default (or the last
    word)."""
    state = merge(defaults, state, choices=choices)
    words = state["sentence"].split()
    state["sentence"] = " ".join(words)
    if not words:
        return state, words, "Type a sentence with at least one word."
    if len(words) > max_words:
        return state, words, f"Use at most {max_words} words; this sentence has {len(words)}."
    i = whole(state["word"], 3)
    if i is None or i >= len(words) or str(i) != state["word"]:
        state["word"] = str(min(whole(defaults["word"], 3) or 0, len(words) - 1))
    return state, words, None


def summary_line(text):
    """The figure's summary under it, for the eye (the page gives it to screen readers too)."""
    return f'<p class="mh-summary">{esc(text)}</p>'


def read_number(text, *, low, high, step, default):
    """A slider's field -> (its number, its text): a decimal number from LOW to HIGH, put on
    the nearest step from LOW (0.1, 0.05, 1 …) and written with as many decimals as STEP has
    ("0.35", never "0.35000000000000003"); anything else (an address may hold anything) is
    DEFAULT's. Decimal arithmetic, so 0.1 + 0.2 is 0.3 on the way."""
    low, high, step = (Decimal(str(x)) for x in (low, high, step))
    text = str(text).strip()
    x = Decimal(text) if NUMBER.fullmatch(text) else None
    if x is None or not low <= x <= high:
        x = Decimal(str(default))
    x = low + ((x - low) / step).to_integral_value(ROUND_HALF_UP) * step
    x = min(x, high)
    return float(x), number_text(x, step)


def number_text(x, step):
    """X as a slider's field holds it: as many decimals as STEP ("0.05": two), a plain minus
    sign, and never "-0"."""
    text = f"{Decimal(str(x)):.{decimals(step)}f}"
    return text[1:] if text.startswith("-") and Decimal(text) == 0 else text


def decimals(step):
    """How many decimals a number on a scale of STEP shows: 1 -> 0, 0.1 -> 1, 0.05 -> 2."""
    return max(0, -Decimal(str(step)).normalize().as_tuple().exponent)
