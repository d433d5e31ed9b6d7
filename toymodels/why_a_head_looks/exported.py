"""SmolLM2's heads measured with the split and the knockout, as the export wrote them
(toymodels/export/why_look.py -> toymodels/data/why_a_head_looks/smollm2.json): read once,
for Figures 2 and 4 and the prose.

Each head: its kind ("induction", "previous", "sink") and where it looks (TARGETS), the cases
measured, the attention to the target before and after taking the top key-side component out
of the keys (medians), the controls (a random earlier head, a random direction as long as the
component), the share of cases where the top component takes at least half of the attention
away, the largest mean lifts on each side, and every earlier head's K-composition score beside
its measured key-side lift.
"""

import json

from ..page.data import read_bytes
from ..page.html import head_name

FILE = "why_a_head_looks/smollm2.json"
TARGETS = {  # kind -> (what the head is called, the key it looks at)
    "induction": ("an induction head", "the token after the earlier copy of the query's token"),
    "previous": ("a previous-token head", "the token just before the query"),
    "sink": ("a first-token (sink) head", "the first token"),
}
_cache = {}


def data():
    """The whole export, parsed once."""
    if "data" not in _cache:
        _cache["data"] = json.loads(read_bytes(FILE).decode("utf-8"))
    return _cache["data"]


def heads():
    """The heads measured, in the export's order (the induction heads first)."""
    return data()["heads"]


def slug(name):
    """A head's name as a state value: 'L19 H7' -> 'L19H7'."""
    return name.replace("\u00a0", "")


def head(value):
    """The head whose slug is VALUE, else the first."""
    return next((h for h in heads() if slug(h["name"]) == value), heads()[0])


def earlier(h):
    """The names of every head before H's layer, in the order of its "k" and "lift"."""
    per = len(h["k"]) // h["layer"]
    return [head_name(m + 1, a + 1) for m in range(h["layer"]) for a in range(per)]


def top_said(h):
    """H's top key-side component and how often it tops a case: 'L17 H1 (in 99 of 100
    cases)'."""
    name, n = h["top_counts"][0]
    return name if n == h["cases"] else f"{name} (the top in {n:,} of {h['cases']:,} cases)"
