"""The author guide's live examples of the figure kit: one small figure per component.

Each `::: figure` block of the guide's section "The figure kit" names this `render` with a
state whose "part" says which component it shows; the rest of the state is that component's
own, so every example is live: its buttons, rows and sliders change it as on any page.
"""

from ..page import kit
from .first_word import first_word_head

PARTS = ("sentence", "tokens", "choices", "steps", "grid", "shares", "bars", "matrix")
PARTS += ("slider", "weights", "legend", "svg")
DEFAULTS = {"part": "grid", "sentence": "The cat sat on the mat", "word": "3", "view": "softmax"}
DEFAULTS["strength"] = "4.0"
# the weights part: W_Q of the first-word head, one cell picked and its weight on a slider
DEFAULTS |= {"wq": "0.0,0.0;4.0,0.0", "cell": "1,0", "at": "", "weight": ""}
SCALE = {"low": -8, "high": 8, "step": 0.5}  # the weights' slider
CHOICES = {"part": PARTS, "view": ("scores", "mask", "softmax")}
WORD_FIELD = "word"
VIEWS = (("scores", "Scores"), ("mask", "Mask"), ("softmax", "Softmax"))
FEATURES = ("is the first word", "a constant 1")  # first_word_head's two features of a word


def render(state=None, fid="kit"):
    """The component named by state["part"], over the first-word head of the sentence."""
    state, words, error = kit.read_sentence(state, DEFAULTS, CHOICES)
    if error:
        return kit.failure(state, error)
    strength, state["strength"] = kit.read_number(
        state["strength"], low=0, high=9, step=0.5, default=4
    )
    W_Q, picked = kit.read_weights(state, DEFAULTS, field="wq", **SCALE)
    i, view, part = int(state["word"]), state["view"], state["part"]
    scores, _, w = first_word_head(len(words), strength, W_Q if part == "weights" else None)
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
            fid, "strength", state["strength"], label="Strength", low=0, high=9, step=0.5
        ),
        "weights": lambda: (
            kit.weight_editor(
                fid,
                W_Q,
                picked,
                FEATURES,
                ("query 1", "query 2"),
                caption="W_Q: a row per feature of a word, a column per number of its query",
                label="Weight",
                **SCALE,
            )
            + kit.attention_grid(words, shares=w, scores=scores, selected=i)
        ),
        "legend": lambda: kit.legend(),
        "svg": lambda: (
            kit.heatmap_svg(w, label="Shares of the first-word head", selected=i)
            + kit.bars_svg(words[: i + 1], w[i, : i + 1], title=f"{words[i]} looks at")
        ),
    }[part]()
    text = f"{part}: “{words[i]}” gives {kit.share(w[i, : i + 1], 0)} to the first word."
    return kit.result(html, state, summary=text)
