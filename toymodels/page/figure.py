"""The figure contract, written once: what every figure's `render(state, fid)` takes and returns.

A figure module declares DEFAULTS, the fields of its state with their starting values (all
strings), and, if it ever renamed a field, ALIASES: {old name: new name}, so that a link
shared before the rename still opens the same view. `render` starts with `merge`, which also
puts back the default of a field whose value is not among its CHOICES (below):

    state = merge(DEFAULTS, state, ALIASES, choices=CHOICES)

A figure that reads its state in more than one function (render, download_tables) reads it
once, in `normalise(state)`, which returns a `Normalised`: the state checked, an error for the
reader or None, and what reading it found, by name. `render` ends with `result(html, state,
...)`, or `failure(state, error)` when the state cannot be drawn. A drawing that is a piece
of longer work says `more=True`: the page draws it and calls render again with the state it
returned (templates/static/figures.js). `check` holds a figure's answer to the contract; the
build calls it on every figure it pre-renders, and tests/test_figures.py on every figure with
hostile states.

Two optional declarations name the states the build draws besides the chapter's (each with
the other fields at their defaults; sitebuild/pipeline/figures.py), so a figure that fails when the
reader taps stops the build instead: CHOICES, {field: tuple of values}, which steps blocks may
set too, and WORD_FIELD, the field whose controls pick a word (a token, a character) of the
sentence, whose every value the figure drawn with its DEFAULTS offers is drawn.
"""

from collections.abc import Mapping

KEYS = ("html", "slots", "state", "error", "summary")  # and "more" (True) for a piece


def merge(defaults, state, aliases=None, *, choices=None, strip=False):
    """The reader's state over DEFAULTS: every default field, as a string, in DEFAULTS' order.

    STATE may hold anything (it comes from the address bar): a field named in ALIASES is read
    under its new name, None counts as not given, any other field is dropped, and every value
    becomes a string (stripped if STRIP). A field of CHOICES, {field: its values}, whose value
    is not one of them, exactly as written, gets its default back. Checking the other values
    is the figure's own work: leave out of CHOICES a field whose values are not a closed list,
    such as a slider's (kit.read_number reads it), or the figure snaps it back.

    Given both, a field's old name wins over its new one: the page writes only new names, so
    an old one comes from a link shared before the rename and asks for that view, while the
    new one beside it is the page's starting state, which the page sends along with it.
    """
    given = state if isinstance(state, Mapping) else {}
    renamed = aliases or {}
    merged = dict(defaults)
    for key in sorted(given, key=lambda key: key in renamed):  # old names last, so they win
        name = renamed.get(key, key) if isinstance(key, str) else None
        text = _text(given[key]) if name in defaults else None
        if text is not None:
            merged[name] = text.strip() if strip else text
    for key, allowed in (choices or {}).items():
        if merged[key] not in allowed:
            merged[key] = defaults[key]
    return merged


class Normalised:
    """What a figure's `normalise(state)` returns, the same shape for every figure: `.state`, the
    reader's state with every field checked (what `result` sends back and the address keeps);
    `.error`, a message for the reader when the state cannot be drawn, else None; and whatever
    reading the state found on the way, by name (`.words`, `.entry`, `.view` …), so that render
    and the figure's other functions use it without reading the state again:

        return Normalised(state, words=words)              # in normalise
        read = normalise(state)                            # in render
        if read.error:
            return failure(read.state, read.error)
    """

    def __init__(self, state, error=None, **found):
        self.state, self.error = state, error
        vars(self).update(found)

    def __repr__(self):
        found = ", ".join(f"{key}={value!r}" for key, value in vars(self).items())
        return f"Normalised({found})"


def _text(value):
    """A value as the string a URL would hold; None for None and for what has no string."""
    if value is None:
        return None
    try:
        return str(value)
    except Exception:  # e.g. an int of more than 4,300 digits, which str() refuses
        return None


def result(html, state, *, slots=None, summary="", more=False):
    """What a figure returns when it drew: its HTML, the state it drew, the slots' HTML and a
    one-line summary in plain text (the page escapes it). MORE: the drawing is a piece of
    longer work (a long forward computed a few layers at a time, a text written on token by
    token): the page draws it, then calls render again with the state it returned, unless the
    reader acted meanwhile (templates/static/figures.js)."""
    out = {
        "html": html,
        "slots": dict(slots or {}),
        "state": state,
        "error": None,
        "summary": summary,
    }
    if more:
        out["more"] = True
    return out


def failure(state, error):
    """What a figure returns when the state cannot be drawn: a message for the reader, who can
    fix it (a sentence that is too long); the page keeps the figure as it was."""
    return {"html": None, "slots": {}, "state": state, "error": error, "summary": ""}


def _strings(value):
    return isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )


def problems(answer):
    """What is wrong with a figure's answer, as phrases; [] when it keeps the contract."""
    if not isinstance(answer, dict):
        return [f"a {type(answer).__name__}, not a dict"]
    if answer.get("more", True) is not True:
        return ["a 'more' that is not True (leave it out when the drawing is whole)"]
    if set(answer) - {"more"} != set(KEYS):
        missing = ", ".join(k for k in KEYS if k not in answer)
        extra = ", ".join(sorted(map(str, set(answer) - set(KEYS) - {"more"})))
        return [
            "a dict whose keys are not html, slots, state, error, summary"
            + (f" (missing {missing})" if missing else "")
            + (f" (unexpected {extra})" if extra else "")
        ]
    out = []
    error = answer["error"]
    if error is not None and not (isinstance(error, str) and error):
        out.append("an error that is neither None nor a message")
    if not (isinstance(answer["html"], str) or (answer["html"] is None and error)):
        out.append("html that is not a str (only a failure, with an error, has html None)")
    if not _strings(answer["slots"]):
        out.append("slots that are not a dict of str names to str HTML")
    if not _strings(answer["state"]):
        out.append("a state that is not a dict of str fields to str values")
    if not isinstance(answer["summary"], str):
        out.append("a summary that is not a str")
    elif error is None and not answer["summary"].strip():
        out.append(
            "an empty summary (what screen readers hear: one line on what the figure shows now)"
        )
    return out


def check(answer):
    """ANSWER if it keeps the contract, else ValueError saying what it returned."""
    found = problems(answer)
    if found:
        raise ValueError("; ".join(found))
    return answer
