"""Figure "Why SmolLM2's heads look there": for a head of SmolLM2 measured by the export (an
induction head, the previous-token head, the sink head), the components that lift its target
most on each side of the score, and the knockout table: its attention to the target before,
after taking the top key-side component out of the keys, and after the two controls.

Everything comes from the export (exported.py); nothing is computed from the model here.
"""

from ..page import kit
from ..page.html import count_words, esc, num
from . import exported as ex

DEFAULTS = {"head": ""}
MOVED = 0.9  # "one component explains it" when its knockout moves this share of the cases


def percent(x):
    return f"{num(100 * x, 1)}%"


def options():
    """The heads as buttons: name and kind."""
    return [(ex.slug(h["name"]), f"{h['name']} ({h['kind']})") for h in ex.heads()]


def verdict(h):
    """One sentence on whether one component explains where H looks."""
    top = h["top_counts"][0][0]
    moved = percent(h["moved_share"])
    if h["moved_share"] >= MOVED:
        return (
            f"One component explains it: taking {top} out of the keys takes at least half of "
            f"the attention away in {moved} of the cases, and a random earlier head or a "
            f"random direction as long barely moves it."
        )
    return (
        f"No single component explains it: {top} lifts the target most, yet taking it out of "
        f"the keys takes half of the attention away in only {moved} of the cases."
    )


def knockout_table(h):
    """The knockout table of head H: attention to the target, medians over the cases."""
    top = h["top_counts"][0][0]
    rows = [
        ("Before", h["before"]),
        (f"Without its top key-side component, {ex.top_said(h)}", h["after"]),
        ("Without a random earlier head (median)", h["control_after"]),
        (f"Without a random direction as long as {top}", h["random_after"]),
    ]
    return kit.matrix(
        f"{h['name']}: attention to its target, median of {h['cases']} cases",
        [r for r, _ in rows],
        ["Attention (%)"],
        [[100 * v] for _, v in rows],
        places=1,
    )


def lifts(h, side):
    """The components of one side as a table: name, mean lift."""
    rows = h[f"{side}_top"]
    return kit.matrix(
        f"{'Key' if side == 'key' else 'Query'} side of {h['name']}: the largest mean lifts",
        [n for n, _ in rows],
        ["Lift"],
        [[v] for _, v in rows],
    )


def render(state=None, fid="why-smollm2"):
    """State in; the figure's html, slots, state, error and summary out."""
    state = kit.merge(DEFAULTS, state)  # the export's heads are read when drawing, not before
    h = ex.head(state["head"])
    state["head"] = ex.slug(h["name"])
    kind, target = ex.TARGETS[h["kind"]]
    texts = count_words(len(h["texts"]), "text")
    said = (
        f"{h['name']}, {kind}, looks at {target}: {percent(h['before'])} of its attention "
        f"(median of {h['cases']} cases on {texts}); without its top key-side component "
        f"{ex.top_said(h)} in the keys, {percent(h['after'])}. {verdict(h)}"
    )
    html = (
        kit.controls(kit.choices("head", options(), state["head"], label="Head"))
        + knockout_table(h)
        + lifts(h, "key")
        + lifts(h, "query")
        + f'<p class="mh-summary">{esc(said)}</p>'
    )
    return kit.result(html, state, summary=said)
