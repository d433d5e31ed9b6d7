"""The state of a sentence figure, checked, and the line that says what the figure shows.

Most heads on this site look at a sentence the reader typed and one word of it: `read_sentence`
checks both (and any CHOICES), so that a figure's `render` starts from a state it can draw.
"""

from ..figure import merge
from ..html import esc, whole


def read_sentence(state, defaults, choices=None, *, max_words=8):
    """The reader's STATE over DEFAULTS (which hold "sentence" and "word"), every field checked:
    -> (state, words, error). The sentence is split at spaces; more than MAX_WORDS words, or
    none, is an error for the reader to fix. A field of CHOICES outside its choices, or a word
    that is not a whole number inside the sentence, falls back to its default (or the last
    word)."""
    state = merge(defaults, state)
    words = state["sentence"].split()
    state["sentence"] = " ".join(words)
    for key, allowed in (choices or {}).items():
        if state[key] not in allowed:
            state[key] = defaults[key]
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
