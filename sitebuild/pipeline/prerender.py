"""First taps before Python: each live figure's answers for the states one tap away from its
default view, drawn by the build with the same `render(state, fid)` the browser calls.

A reader taps before Pyodide has started (it takes seconds, more on a phone). Every control
the default view offers (each `data-key`/`data-value` pair in the figure's HTML and slots, and
the "How it works" steps that name it with `data-target`) sets one field, so the state after
one tap is the default state with that field changed: the build draws each one, and the page
(static/prerendered.js) shows that answer at once through the same swap Python's answers use.
The default state is kept too, so tapping back to it answers as well.

Kept small: a figure's answers go only while they stay within BUDGET bytes compressed (as a
host sends JSON) and RAW_BUDGET bytes as they are (as the offline zip holds them). Every kind of
control gets its nearest values first: the states are taken one field at a time in turn (a
word, then a head, then a step, then the next word...), each field's values nearest to the
shown one first, so a reader's first tap of any kind is likely drawn at once; a tap on a state
left out is kept by the page and drawn as soon as Python answers (static/figures.js). A figure's
answers ship as a JSON file of their own (prerendered/SLUG.FIGURE.HASH.json), fetched once the
page is up and the figure is within a screen of the view, never on the way to the first
figure's paint.
"""

import json
import zlib
from html.parser import HTMLParser
from urllib.parse import parse_qsl

from ..authoring.limits import BACKSTOP_SECONDS, backstop

BUDGET = 110_000  # bytes of a figure's answers, gzip-compressed
RAW_BUDGET = 1_300_000  # the same, uncompressed
MISSES = 3  # states over budget in a row after which a figure's others are not tried


def key(state):
    """The name of a state in the file: its fields sorted, as JSON. prerendered.js builds the
    same from the state it is about to send (every value is a string, figure.merge)."""
    return json.dumps(sorted((k, str(v)) for k, v in state.items()), separators=(",", ":"))


class _Controls(HTMLParser):
    """(key, value) of every element with data-key and data-value, in document order, or
    (None, data-set) for a step that sets several fields; with TARGET, only those that name
    that figure with data-target."""

    def __init__(self, target=None):
        super().__init__(convert_charrefs=True)
        self.target, self.found = target, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-key" in a and "data-value" in a and a.get("data-target") == self.target:
            pair = (
                (None, a["data-set"])
                if a.get("data-set")
                else (a["data-key"], a["data-value"] or "")
            )
            if pair not in self.found:
                self.found.append(pair)


def controls(html, target=None):
    parser = _Controls(target)
    parser.feed(html)
    parser.close()
    return parser.found


def neighbours(fig, page_html=""):
    """The states one tap from FIG's default view, without the default itself: one field at a
    time in turn (in the order the page first offers each), each field's values nearest to the
    shown one first, the next before the previous."""
    state = fig.result["state"]
    html = fig.result["html"] + "".join((fig.result.get("slots") or {}).values())
    pairs = controls(html) + [p for p in controls(page_html, fig.fid) if p not in controls(html)]
    values = {}  # field -> its values in the page's order
    for k, v in pairs:
        if (k is None or k in state) and v not in values.setdefault(k, []):
            values[k].append(v)
    rows = []
    for k, vs in values.items():
        if k is None:  # steps that set several fields, in the page's order
            rows.append([{**state, **dict(parse_qsl(v))} for v in vs])
            continue
        at = vs.index(str(state[k])) if str(state[k]) in vs else -1
        near = _nearest(vs, at)
        rows.append([{**state, k: v} for v in near if v != str(state[k])])
    out = []
    for turn in range(max(map(len, rows), default=0)):
        for row in rows:
            if turn < len(row) and row[turn] != state and row[turn] not in out:
                out.append(row[turn])
    return out


def _nearest(values, at):
    """VALUES ordered by their distance from index AT (all of them, in order, when AT < 0)."""
    if at < 0:
        return list(values)
    out = []
    for d in range(1, len(values)):
        out += [values[i] for i in (at + d, at - d) if 0 <= i < len(values)]
    return out


def answers(fig, page_html=""):
    """{key(state): the answer} for FIG's default and its neighbours within the budgets, and
    (bytes kept compressed, states left out). Each answer is exactly what render returns, drawn
    as the build draws every figure (fig.draw: timed, and stopped if it runs too long)."""
    kept, raw, left_out, misses = {}, 0, 0, 0
    packed = zlib.compressobj(6, zlib.DEFLATED, 31)  # gzip, as a host sends it
    size = 0
    states = [fig.result["state"], *neighbours(fig, page_html)]
    for n, state in enumerate(states):
        if misses >= MISSES:
            left_out += len(states) - n
            break
        result = fig.draw(dict(state))
        text = json.dumps(result, separators=(",", ":")).encode()
        trial = packed.copy()
        grown = len(trial.compress(text)) + len(trial.flush(zlib.Z_SYNC_FLUSH))
        if result.get("error") or raw + len(text) > RAW_BUDGET or size + grown > BUDGET:
            left_out += 1
            misses += 1
            continue
        misses = 0
        size += len(packed.compress(text)) + len(packed.flush(zlib.Z_SYNC_FLUSH))
        raw += len(text)
        kept[key(state)] = result
    return kept, (size, left_out)


def page_answers(figures, page_html):
    """{fid: {key: answer}} for the live figures of a page, and {fid: (bytes, skipped)}."""
    out, report = {}, {}
    with backstop(BACKSTOP_SECONDS):
        for fid, fig in figures.items():
            if fig.live:
                out[fid], report[fid] = answers(fig, page_html)
    return out, report
