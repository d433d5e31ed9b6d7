"""The author guide's live examples of the figure kit: one small figure per component.

Each `::: figure` block of the guide's section "The figure kit" names this `render` with a
state whose "part" says which component it shows; the rest of the state is that component's
own, so every example is live: its buttons, rows and sliders change it as on any page.
"""

from ..page import kit
from .first_word import first_word_head

PARTS = ("sentence", "tokens", "choices", "steps", "grid", "shares", "bars", "matrix")
PARTS += ("slider", "legend", "svg")
DEFAULTS = {"part": "grid", "sentence": "The cat sat on the mat", "word": "3", "view": "softmax"}
DEFAULTS["strength"] = "4"
CHOICES = {"part": PARTS, "view": ("scores", "mask", "softmax")}
WORD_FIELD = "word"
VIEWS = (("scores", "Scores"), ("mask", "Mask"), ("softmax", "Softmax"))


def render(state=None, fid="kit"):
    """The component named by state["part"], over the first-word head of the sentence."""
    state, words, error = kit.read_sentence(state, DEFAULTS, CHOICES)
    if error:
        return kit.failure(state, error)
    strength = kit.whole(state["strength"], 1)
    state["strength"] = str(strength if strength is not None else 4)
    scores, _, w = first_word_head(len(words), float(state["strength"]))
    i, view, part = int(state["word"]), state["view"], state["part"]
    html = {
        "sentence": lambda: kit.controls(kit.sentence_form(fid, state["sentence"], help="Words.")),
        "tokens": lambda: kit.token_buttons(words, i),
        "choices": lambda: kit.choices("view", VIEWS, view, label="View"),
        "steps": lambda: kit.step_list(VIEWS, view, key="view"),
        "grid": lambda: kit.attention_grid(words, shares=w, scores=scores, view=view, selected=i),
        "shares": lambda: kit.shares_table(
            words, [("Share", w[i])], seen=i + 1, selected=i, caption=f"Shares for {words[i]}"
        ),
        "bars": lambda: kit.bars(words[: i + 1], w[i, : i + 1], caption=f"{words[i]} looks at"),
        "matrix": lambda: kit.matrix("Scores", words, words, scores, shape=True, selected=i),
        "slider": lambda: kit.slider(
            fid,
            "strength",
            state["strength"],
            label="Strength",
            low=0,
            high=9,
            step=1,
            said=f"strength {state['strength']}",
            shown=state["strength"],
        ),
        "legend": lambda: kit.legend(),
        "svg": lambda: (
            kit.heatmap_svg(w, label="Shares of the first-word head", selected=i)
            + kit.bars_svg(words[: i + 1], w[i, : i + 1], title=f"{words[i]} looks at")
        ),
    }[part]()
    text = f"{part}: “{words[i]}” gives {kit.share(w[i, : i + 1], 0)} to the first word."
    return kit.result(html, state, summary=text)
