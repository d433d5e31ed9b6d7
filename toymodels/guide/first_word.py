"""The author guide's worked example: one causal "first-word" head, from state to HTML.

Every word's query asks the same question, "are you the first word?", and only the
first word's key answers yes. The build calls `render` once to pre-render the guide;
the reader's browser calls the same function under Pyodide on every tap.
"""

import numpy as np

from ..page.figure import failure, merge, result
from ..page.html import attrs, esc, level, num, state_button

SENTENCE = "The cat sat on the mat"
MAX_WORDS = 8
D_HEAD = 2
STRENGTH = 4.0
DEFAULTS = {"sentence": SENTENCE, "word": "3", "view": "softmax"}
CHOICES = {"view": ("scores", "mask", "softmax")}
WORD_FIELD = "word"  # the build draws the figure for each word of the default sentence


def first_word_head(n, strength=STRENGTH):
    """Scores, masked scores and shares for n words: three (n, n) arrays."""
    X = np.zeros((n, 2))
    X[:, 1] = 1.0  # feature 2: a constant 1 for every word
    X[0, 0] = 1.0  # feature 1: "I am the first word"
    W_Q = np.array([[0.0, 0.0], [strength, 0.0]])  # each query: [strength, 0]
    W_K = np.array([[1.0, 0.0], [0.0, 0.0]])  # key: [1, 0] if first, else 0
    Q, K = X @ W_Q, X @ W_K
    scores = Q @ K.T / np.sqrt(D_HEAD)
    seen = np.tril(np.ones((n, n), dtype=bool))  # itself and earlier words
    masked = np.where(seen, scores, -np.inf)
    e = np.exp(masked - masked.max(axis=1, keepdims=True))  # exp(-inf) = 0
    return scores, masked, e / e.sum(axis=1, keepdims=True)


def normalise(state):
    """Fill in defaults, check every field; -> (state, words, error)."""
    state = merge(DEFAULTS, state)  # every field of DEFAULTS, as a string; nothing else
    words = state["sentence"].split()
    state["sentence"] = " ".join(words)
    if not words:
        return state, words, "Type a sentence with at least one word."
    if len(words) > MAX_WORDS:
        return state, words, f"Use at most {MAX_WORDS} words; this sentence has {len(words)}."
    if state["view"] not in CHOICES["view"]:
        state["view"] = DEFAULTS["view"]
    if state["word"] not in [str(j) for j in range(len(words))]:
        state["word"] = str(min(int(DEFAULTS["word"]), len(words) - 1))
    return state, words, None


def summary(words, w, i):
    """One sentence on what word i does: the figure's text alternative."""
    if i == 0:
        return f"“{words[0]}” can see only itself, so it gives itself 100%."
    others = "the one other word" if i == 1 else f"each of the other {i} words"
    return (
        f"“{words[i]}” gives {100 * w[i, 0]:.1f}% of its attention to the first word, "
        f"“{words[0]}”, and {100 * w[i, 1]:.1f}% to {others} it can see."
    )


def render(state=None, fid="first-word"):
    """State in; the figure's html, slots, state, error and summary out."""
    state, words, error = normalise(state)
    if error:
        return failure(state, error)
    scores, _, w = first_word_head(len(words))
    i = int(state["word"])
    text = summary(words, w, i)
    html = (
        _form(state, fid)
        + _word_buttons(words, i)
        + _grid(words, scores, w, i, state["view"])
        + f'<p class="mh-summary">{esc(text)}</p>'
    )
    return result(html, state, slots={"row": _row(words, w, i)}, summary=text)


def _form(state, fid):
    return (
        '<div class="mh-controls"><form class="mh-sentence" data-state-form>'
        f'<label for="{esc(fid)}-sentence">Sentence</label>'
        f'<input type="text" name="sentence" id="{esc(fid)}-sentence" data-fk="sentence"'
        f' value="{esc(state["sentence"])}" maxlength="200" autocomplete="off">'
        '<button type="submit" data-fk="update">Update</button></form></div>'
    )


def _word_buttons(words, i):
    buttons = [
        state_button("word", str(j), word, j == i, fk=f"w{j}", cls="mh-word")
        for j, word in enumerate(words)
    ]
    return (
        '<div class="mh-words" role="group" aria-label="Choose a word"'
        f" data-roving>{''.join(buttons)}</div>"
    )


def _grid(words, scores, w, chosen, view):
    """Row i is word i looking back, column j a word it looks at; a tap on a row chooses it."""
    head = "".join(f'<th scope="col"><span>{esc(word)}</span></th>' for word in words)
    rows = []
    for i, word in enumerate(words):
        cells = []
        for j in range(len(words)):
            if j > i and view != "scores":
                cls, text, tip = "c masked", "", "masked"
            elif view == "softmax":
                cls, text, tip = f"c {level(w[i, j])}", "", f"{100 * w[i, j]:.1f}%"
            else:
                cls, text = "c num" + (" future" if j > i else ""), num(scores[i, j], 1)
                tip = "score " + num(scores[i, j])
            tab = "0" if (i, j) == (chosen, 0) else "-1"
            cells.append(
                f'<td class="{cls}" tabindex="{tab}" data-fk="g{i}-{j}">{text}'
                f'<span class="tip">{esc(word)} → {esc(words[j])}: {tip}</span></td>'
            )
        row = attrs(class_="sel" if i == chosen else None, data_key="word", data_value=str(i))
        rows.append(f'<tr{row}><th scope="row">{esc(word)}</th>{"".join(cells)}</tr>')
    label = {"scores": "scores", "mask": "scores after the mask", "softmax": "shares of attention"}
    return (
        '<table class="mh-grid" data-roving="grid">'
        f'<caption class="sr">First-word head, {label[view]}</caption>'
        f"<thead><tr><td></td>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _row(words, w, i):
    """Slot "row": the chosen word's shares as a table, elsewhere on the page."""
    rows = "".join(
        f'<tr><th scope="row">{esc(words[j])}</th><td>{100 * w[i, j]:.1f}%</td></tr>'
        for j in range(i + 1)
    )
    return (
        f'<table class="mh-shares"><caption>Shares for “{esc(words[i])}”</caption>'
        f'<tbody>{rows}</tbody><tfoot><tr><th scope="row">Total</th>'
        f"<td>{100 * w[i, : i + 1].sum():.1f}%</td></tr></tfoot></table>"
    )


def check_strength(env):
    """Exercise: the last word must give the first word at least 90%."""
    w = env.get("w")
    if not isinstance(w, np.ndarray) or w.ndim != 2 or w.shape[0] != w.shape[1] or w.shape[0] < 2:
        return False, "Run the cell so that w holds the head's shares, one row per word."
    if not np.allclose(w.sum(axis=1), 1):
        return False, "Each row of w should add up to 1; compute w with first_word_head."
    last = w[-1, 0]
    if last < 0.9:
        return False, (
            f"The last word gives the first word {100 * last:.1f}%; "
            "raise the strength until it reaches 90%."
        )
    return True, (
        f"Right: the last word now gives the first word {100 * last:.1f}%. The other words all "
        "score 0, so the first word wins only by how far its score rises above theirs."
    )


PROSE_VALUES = ("MAX_WORDS",)
