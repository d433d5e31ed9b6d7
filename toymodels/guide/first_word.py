"""The author guide's worked example: a causal "first-word" head, composed from the kit."""

import numpy as np

from ..page import kit

SENTENCE, MAX_WORDS, STRENGTH = "The cat sat on the mat", 8, 4.0
DEFAULTS = {"sentence": SENTENCE, "word": "3", "view": "softmax"}
CHOICES = {"view": ("scores", "mask", "softmax")}
WORD_FIELD = "word"  # the build draws the figure for each word of the default sentence
PROSE_VALUES = ("MAX_WORDS",)


def first_word_head(n, strength=STRENGTH, W_Q=None):
    """Scores, masked scores and shares for n words: three (n, n) arrays. Every word's query
    asks "are you the first word?", and only the first word's key says yes."""
    X = np.zeros((n, 2))
    X[:, 1] = 1.0  # feature 2: a constant 1 for every word
    X[0, 0] = 1.0  # feature 1: "I am the first word"
    W_Q = np.array([[0.0, 0.0], [strength, 0.0]]) if W_Q is None else W_Q  # [strength, 0]
    W_K = np.array([[1.0, 0.0], [0.0, 0.0]])  # key: [1, 0] if first, else 0
    scores = (X @ W_Q) @ (X @ W_K).T / np.sqrt(2)  # divided by √d_head, d_head = 2
    masked = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, -np.inf)  # no later words
    e = np.exp(masked - masked.max(axis=1, keepdims=True))  # exp(-inf) = 0
    return scores, masked, e / e.sum(axis=1, keepdims=True)


def render(state=None, fid="first-word"):
    """State in; the figure's html, slots, state, error and summary out."""
    state, words, error = kit.read_sentence(state, DEFAULTS, CHOICES, max_words=MAX_WORDS)
    if error:
        return kit.failure(state, error)
    scores, _, w = first_word_head(len(words))
    i, view = int(state["word"]), state["view"]
    text = f"“{words[i]}” gives {kit.share(w[i, : i + 1], 0)} of its attention to the first word."
    grid = kit.attention_grid(words, shares=w, scores=scores, view=view, selected=i)
    form = kit.controls(kit.sentence_form(fid, state["sentence"]))
    html = form + kit.token_buttons(words, i) + grid + kit.summary_line(text)
    row = kit.shares_table(words, [("Share", w[i])], seen=i + 1, caption=f"Shares for {words[i]}")
    return kit.result(html, state, slots={"row": row}, summary=text)
