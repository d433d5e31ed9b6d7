"""Figures at build time: import the module a figure block names, draw it with the chapter's
state and with every state the module declares, and check each answer with the contract.

A module declares the states the build tries (see toymodels/page/figure.py): its DEFAULTS
alone, each value of each field in CHOICES, and, if it names a WORD_FIELD, each value of that
field the figure drawn with its DEFAULTS offers as a control (every word of the default
sentence), each with the other fields at their defaults. So a figure that breaks when the
reader taps a step or a word stops the build instead of the reader's page. Each module is tried
once per process.

Whatever goes wrong is an AuthorError at the line to fix (sitebuild/blame.py): a syntax
error's own line, the innermost line of toymodels/ that raised, the module's `def render` for
an answer that breaks the contract, or the declaration a refused state came from; the message
names the chapter's figure block and the state, as JSON that render(STATE, FID) takes.
"""

import json
import re

from toymodels import BUILD_ONLY
from toymodels.page import figure as contract

from . import blame
from .chapters import AuthorError, suggest
from .markup import tags

MODEL = re.compile(r"^(toymodels(?:\.\w+)+):(\w+)$")
CONTRACT = (
    "a figure returns toymodels.page.figure.result(html, state, slots=..., summary=...) "
    "or failure(state, error)"
)
_tried = {}  # model -> (module, render) whose declared states all drew, so each is tried once


def figure_modules(root):
    """toymodels modules that define a render function: what a figure block may name."""
    package = root / "toymodels"
    return sorted(
        "toymodels." + ".".join(p.relative_to(package).with_suffix("").parts) + ":render"
        for p in package.rglob("*.py")
        if p.relative_to(package).parts[0] not in BUILD_ONLY
        and "\ndef render(" in p.read_text(encoding="utf-8")
    )


def shipped(rel, line, spec, what):
    """'toymodels.MODULE:FUNCTION' -> (module name, function name), for a function the browser
    will call too: a build-only package (toymodels.BUILD_ONLY) is refused before it is
    imported, since importing a module runs it."""
    m = MODEL.match(spec)
    if not m:
        raise AuthorError(
            rel, line, f"{what} must look like toymodels.MODULE:FUNCTION, got '{spec}'"
        )
    name, func = m.groups()
    package = name.split(".")[1]
    if package in BUILD_ONLY:
        raise AuthorError(
            rel,
            line,
            f"{what} '{spec}' is in toymodels/{package}/, which is build-only and never reaches "
            "the browser; name a function of a chapter's package",
        )
    return name, func


def call_figure(rel, line, model, fid, state, root):
    """Draw the figure MODEL with the chapter's STATE, then with every state its module
    declares; -> (module, the answer for STATE). Raises AuthorError."""
    block = (rel, line)
    module, fn = _load(block, model, root)
    answer = _draw(block, model, fn, state, fid, "from the chapter")
    if answer["error"]:
        raise AuthorError(rel, line, f"figure '{model}' rejected its state: {answer['error']}")
    if _tried.get(model) != (module, fn):
        _try_declared(block, model, module, fn, fid)
        _tried[model] = (module, fn)
    return module, answer


def _load(block, model, root):
    """The module and render function MODEL names, imported; an AuthorError if it cannot be."""
    rel, line = block
    name, func = shipped(rel, line, model, "model")

    def known():  # only read when the author named something that is not there
        figures = figure_modules(root)
        return f"{suggest(model, figures)}; figures are {', '.join(figures)}"

    if func != "render":
        raise AuthorError(
            rel,
            line,
            f"unknown figure '{model}': a figure's model is a module's render function, "
            f"not '{func}'{known()}",
        )
    try:
        module = blame.import_module(name, rel, line)
    except ModuleNotFoundError:
        raise AuthorError(
            rel, line, f"unknown figure '{model}': there is no {name.replace('.', '/')}.py{known()}"
        ) from None
    fn = getattr(module, func, None)
    if not callable(fn):
        raise AuthorError(
            rel, line, f"unknown figure '{model}': {name} has no function '{func}'{known()}"
        )
    return module, fn


def _draw(block, model, fn, state, fid, why):
    """FN's answer for STATE, kept to the contract; an AuthorError, at the line to fix, if it
    raises or returns something else. WHY says where the state came from."""
    given = f"given the state {_json(state)} ({why})"
    try:
        answer = fn(state, fid)
    except Exception as e:
        at, figure = _site(block, model, blame.raised_at(e))
        call = f"render({_json(state)}, {_json(fid)})"
        raise AuthorError(
            *at,
            f"{figure} raised {blame.exception_text(e)}, {given}; {call} in Python shows the "
            "whole traceback",
        ) from None
    found = contract.problems(answer)
    if found:
        at, figure = _site(block, model, blame.defined_at(fn))
        raise AuthorError(*at, f"{figure} returned {'; '.join(found)}, {given}; {CONTRACT}")
    return answer


def _site(block, model, at):
    """Where to report a figure's mistake (AT in toymodels/, else the chapter's block) and
    how to name the figure there."""
    if at is None:
        return block, f"figure '{model}'"
    return at, f"figure '{model}' ({block[0]}:{block[1]})"


def _try_declared(block, model, module, fn, fid):
    """Draw the figure with its DEFAULTS, each value of CHOICES and each word of WORD_FIELD;
    each must draw (a refusal is a mistake too: the module declared the state)."""
    fields = getattr(module, "DEFAULTS", None)
    fields = fields if isinstance(fields, dict) else {}
    choices = _choices(block, module, fields)
    drawn = _draw(block, model, fn, {}, fid, "its DEFAULTS")
    _refused(block, model, module, drawn, {}, "DEFAULTS", "its DEFAULTS")
    tries = [
        ({key: value}, "CHOICES", "one of its CHOICES")
        for key, values in choices.items()
        for value in values
    ]
    word = _word_field(block, module, fields)
    if word:
        words = _offered(drawn, word)
        if not words:
            raise AuthorError(
                *_declared(block, module, "WORD_FIELD"),
                f"WORD_FIELD names '{word}', but the figure drawn with its DEFAULTS has no "
                f'control data-key="{word}"; name the field its word buttons set',
            )
        tries += [({word: value}, "WORD_FIELD", "a word of its WORD_FIELD") for value in words]
    for state, name, why in tries:
        answer = _draw(block, model, fn, state, fid, why)
        _refused(block, model, module, answer, state, name, why)


def _refused(block, model, module, answer, state, name, why):
    if answer["error"]:
        raise AuthorError(
            *_declared(block, module, name),
            f"figure '{model}' ({block[0]}:{block[1]}) refused the state {_json(state)} ({why}), "
            f"saying {_json(answer['error'])}; every state the module declares must draw, so fix "
            "render or this declaration",
        )


def _json(value):
    """VALUE as JSON, as Python would take it back: render({"word": "5"}, "two-back")."""
    return json.dumps(value, ensure_ascii=False)


def _declared(block, module, name):
    """The line that assigns NAME in MODULE, else the chapter's block."""
    return blame.assigned_at(module, name) or block


def _choices(block, module, fields):
    """CHOICES, checked: {field of DEFAULTS: tuple of strings}."""
    choices = getattr(module, "CHOICES", {})
    example = 'e.g. CHOICES = {"view": ("scores", "softmax")}'
    if not isinstance(choices, dict) or not all(
        isinstance(values, (tuple, list)) and values and all(isinstance(v, str) for v in values)
        for values in choices.values()
    ):
        raise AuthorError(
            *_declared(block, module, "CHOICES"),
            f"CHOICES must map each field to a tuple of its values as strings, {example}",
        )
    for key in choices:
        if key not in fields:
            raise AuthorError(
                *_declared(block, module, "CHOICES"),
                f"CHOICES names '{key}', which is not a field of DEFAULTS{suggest(key, fields)}; "
                f"the fields are {', '.join(fields) or 'none'}",
            )
    return choices


def _word_field(block, module, fields):
    """WORD_FIELD, checked: None or a field of DEFAULTS."""
    word = getattr(module, "WORD_FIELD", None)
    if word is not None and word not in fields:
        raise AuthorError(
            *_declared(block, module, "WORD_FIELD"),
            f"WORD_FIELD names '{word}', which is not a field of DEFAULTS"
            f"{suggest(str(word), fields)}; the fields are {', '.join(fields) or 'none'}",
        )
    return word


def _offered(answer, field):
    """The values of FIELD the answer's controls set (data-key=FIELD data-value=VALUE), in the
    order they appear, each once."""
    values = {}
    for markup in (answer["html"], *answer["slots"].values()):
        for _, attributes, _ in tags(markup):
            named = dict(attributes)
            if named.get("data-key") == field and named.get("data-value") is not None:
                values.setdefault(named["data-value"], None)
    return list(values)
