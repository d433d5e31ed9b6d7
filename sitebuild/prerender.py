"""First taps before Python: each live figure's answers for the states one tap away from its
default view, drawn by the build with the same `render(state, fid)` the browser calls.

A reader taps before Pyodide has started (it takes seconds, more on a phone). Every control
the default view offers (each `data-key`/`data-value` pair in the figure's HTML and slots, and
the "How it works" steps that name it with `data-target`) sets one field, so the state after
one tap is the default state with that field changed: the build draws each one, and the page
(static/prerendered.js) shows that answer at once through the same swap Python's answers use.
The default state is kept too, so tapping back to it answers as well.

Kept small: a figure's answers go only while their HTML stays within BUDGET bytes in total
(states in the order the page offers them; one over budget is skipped, the rest still tried),
and a page's answers ship as one JSON file of their own (prerendered/SLUG.HASH.json), fetched
after the page is up, never on the way to the first figure's paint.
"""

import json
from html.parser import HTMLParser

BUDGET = 200_000  # bytes of answers per figure, raw (about a tenth of that compressed)


def key(state):
    """The name of a state in the file: its fields sorted, as JSON. prerendered.js builds the
    same from the state it is about to send (every value is a string, figure.merge)."""
    return json.dumps(sorted((k, str(v)) for k, v in state.items()), separators=(",", ":"))


class _Controls(HTMLParser):
    """(key, value) of every element with data-key and data-value, in document order; with
    TARGET, only those that name that figure with data-target."""

    def __init__(self, target=None):
        super().__init__(convert_charrefs=True)
        self.target, self.found = target, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-key" in a and "data-value" in a and a.get("data-target") == self.target:
            pair = (a["data-key"], a["data-value"] or "")
            if pair not in self.found:
                self.found.append(pair)


def controls(html, target=None):
    parser = _Controls(target)
    parser.feed(html)
    parser.close()
    return parser.found


def neighbours(fig, page_html=""):
    """The states one tap from FIG's default view, without the default itself."""
    state = fig.result["state"]
    html = fig.result["html"] + "".join((fig.result.get("slots") or {}).values())
    pairs = controls(html) + [p for p in controls(page_html, fig.fid) if p not in controls(html)]
    out = []
    for k, v in pairs:
        s = {**state, k: v}
        if s != state and s not in out:
            out.append(s)
    return out


def answers(fig, page_html=""):
    """{key(state): the answer} for FIG's default and its neighbours within BUDGET, and
    (bytes kept, states skipped). Each answer is exactly what render returns, JSON-ready."""
    render = getattr(fig.module, fig.model.split(":")[1])
    kept, used, skipped = {}, 0, 0
    for state in [fig.result["state"], *neighbours(fig, page_html)]:
        result = render(dict(state), fig.fid)
        size = len(json.dumps(result))
        if result.get("error") or used + size > BUDGET:
            skipped += 1
            continue
        kept[key(state)] = result
        used += size
    return kept, (used, skipped)


def page_answers(figures, page_html):
    """{fid: {key: answer}} for the live figures of a page, and {fid: (bytes, skipped)}."""
    out, report = {}, {}
    for fid, fig in figures.items():
        if fig.live:
            out[fid], report[fid] = answers(fig, page_html)
    return out, report
