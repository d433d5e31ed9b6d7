"""Figures at build time: import the module a figure block names, draw it with the chapter's
state and with every state the module declares, and check each answer with the contract.

A module declares the states the build tries (see toymodels/page/figure.py): its DEFAULTS
alone, each value of each field in CHOICES, and, if it names a WORD_FIELD, each value of that
field the figure drawn with its DEFAULTS offers as a control (every word of the default
sentence), each with the other fields at their defaults. So a figure that breaks when the
reader taps a step or a word stops the build instead of the reader's page. It then draws the
figure with a reader's text in each field, which must come back escaped. Each module is tried
once per process.

Every call is held to what the browser needs of it: it keeps the contract, it draws the
chapter's state the same way twice (into markup that holds only what the page's sanitizer
keeps, sitebuild/authoring/sanitizer.py), its markup carries no inline style or script, it is
stopped after FIGURE_SECONDS, and a state that takes more than SLOW_SECONDS of processor time
is noted as a warning (sitebuild/authoring/limits.py), as is a warning it sets off (numpy's
overflow, say), at the author's line, and markup over its budget (sitebuild/authoring/budgets.py);
it imports and reads only what the reader's browser has (sitebuild/authoring/browser.py). A slider
whose field CHOICES lists must agree with it: each number drawn as written, and a value of its scale
outside CHOICES still drawn. The chapter's own `state:` may name only the module's fields, with
values the figure draws as written.

Whatever goes wrong is an AuthorError at the line to fix (sitebuild/authoring/blame.py): a syntax
error's own line, the innermost line of the chapter's package that raised (with the kit's line
beyond it), the line a figure that ran too long was stopped at, the module's `def render` for
an answer that breaks a rule, or the declaration a refused state came from; the message names
the chapter's figure block and the state, as JSON that render(STATE, FID) takes.
"""

import json
import re
import time
from decimal import Decimal
from pathlib import Path

import toymodels
from toymodels import BUILD_ONLY
from toymodels.page import figure as contract

from ..authoring import blame, browser, budgets, limits, sanitizer
from . import prerender
from .chapters import AuthorError, suggest
from .markup import tags

MODEL = re.compile(r"^(toymodels(?:\.\w+)+):(\w+)$")
CONTRACT = (
    "a figure returns toymodels.page.figure.result(html, state, slots=..., summary=...) "
    "or failure(state, error)"
)
_tried = {}  # model -> (module, render, notes): its declared states all drew, so each is tried once


def figure_modules(root):
    """toymodels modules that define a render function: what a figure block may name."""
    return sorted(
        {
            "toymodels." + ".".join(p.relative_to(package).with_suffix("").parts) + ":render"
            for package in _folders(root)
            for p in package.rglob("*.py")
            if p.relative_to(package).parts[0] not in BUILD_ONLY
            and "\ndef render(" in p.read_text(encoding="utf-8")
        }
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


def call_figure(rel, line, model, fid, state, root, *, own=(), state_line=None, notes=None):
    """Draw the figure MODEL with the chapter's STATE (written at STATE_LINE, else LINE), then
    with every state its module declares and with a reader's text in each field; -> (module,
    the answer for STATE, a Drawing that draws more states the same way). OWN names the
    chapter's packages, searched first for a name misspelt; each slow state is added to NOTES
    as (file, line, message), once. Raises AuthorError."""
    block = (rel, line)
    notes = [] if notes is None else notes
    module, fn = _load(block, model, root, own, notes)
    drawing = Drawing(block, model, module, fn, fid, notes)
    before = len(drawing.notes)
    with limits.backstop(limits.BACKSTOP_SECONDS):
        answer = drawing.draw(state, "from the chapter")
        if answer["error"]:
            raise AuthorError(rel, line, f"figure '{model}' rejected its state: {answer['error']}")
        authored_state(drawing, state, answer, (rel, state_line or line))
        drawing.same(state, answer, "from the chapter")
        drawing.kit_only(answer, state, "from the chapter")
        if _tried.get(model, (None, None))[:2] != (module, fn):
            _try_declared(drawing, module)
            _probe(drawing, module)
            _tried[model] = (module, fn, drawing.notes[before:])
        else:
            drawing.notes += [n for n in _tried[model][2] if n not in drawing.notes]
    return module, answer, drawing


def _load(block, model, root, own=(), notes=None):
    """The module and render function MODEL names, imported; an AuthorError if it cannot be.
    OWN (packages, "two_back") are searched first for the name the author meant; each warning
    the import set off is added to NOTES."""
    rel, line = block
    name, func = shipped(rel, line, model, "model")

    def known():  # only read when the author named something that is not there
        figures = figure_modules(root)
        mine = _own(name, own, root)
        first = [f for f in figures if f.split(".")[1] in mine]
        listed = first + [f for f in figures if f not in first]
        return f"{suggest(model, figures, first)}; figures are {', '.join(listed)}"

    if func != "render":
        raise AuthorError(
            rel,
            line,
            f"unknown figure '{model}': a figure's model is a module's render function, "
            f"not '{func}'{known()}",
        )
    try:
        with browser.traced():
            module = blame.import_module(name, rel, line, notes)
    except ModuleNotFoundError:
        raise AuthorError(
            rel, line, f"unknown figure '{model}': there is no {name.replace('.', '/')}.py{known()}"
        ) from None
    fn = getattr(module, func, None)
    if not callable(fn):
        raise AuthorError(
            rel, line, f"unknown figure '{model}': {name} has no function '{func}'{known()}"
        )
    browser.refuse_imports(name, rel, line)
    return module, fn


def _own(name, own, root):
    """The packages an author most likely meant, for a module NAME that does not load: its own
    package, those its chapter names (OWN), and those no chapter names yet (a package just
    made, or renamed)."""
    named = set()
    for path in (root / "chapters").glob("*.md"):
        named |= set(re.findall(r"toymodels\.(\w+)", path.read_text(encoding="utf-8")))
    made = {p.name for folder in _folders(root) for p in folder.iterdir() if p.is_dir()}
    return {name.split(".")[1], *own} | (made - named - set(BUILD_ONLY))


def _folders(root):
    """The folders of the toymodels package: the project's, and any the package was extended
    by (toymodels.__path__)."""
    folders = [root / "toymodels"]
    for extra in map(Path, toymodels.__path__):
        if all(extra.resolve() != f.resolve() for f in folders):
            folders.append(extra)
    return [f for f in folders if f.is_dir()]


class Drawing:
    """One figure block's calls of its render, each kept to the contract and the site's rules:
    stopped after FIGURE_SECONDS (reported at the line it was running), timed (a state over
    SLOW_SECONDS of processor time is noted), and its markup free of inline style and script.
    `notes` holds (file, line, message) of each slow state."""

    def __init__(self, block, model, module, fn, fid, notes):
        self.block, self.model, self.module, self.fn, self.fid = block, model, module, fn, fid
        self.package = blame.package_of(model.split(":")[0])
        self.notes = notes

    def draw(self, state, why):
        """FN's answer for STATE, kept to the contract; an AuthorError, at the line to fix, if
        it raises, runs too long or returns something else. WHY says where the state came
        from."""
        answer, took = self._call(state, why)
        found = contract.problems(answer)
        if found:
            at, figure = self.site(blame.defined_at(self.fn))
            raise AuthorError(
                *at, f"{figure} returned {'; '.join(found)}, {_given(state, why)}; {CONTRACT}"
            )
        if took > limits.SLOW_SECONDS:
            at, figure = self.site(blame.defined_at(self.fn))
            self._note(
                (
                    *at,
                    f"{figure} took {took:.2f} s of processor time to draw, "
                    f"{_given(state, why)}: more than the {limits.SLOW_SECONDS} s a state may "
                    "take, and the reader's Python (Pyodide) takes several times as long on a "
                    "tap; make render faster (compute once and keep what every state needs)",
                )
            )
        self._big(answer, state, why)
        self._inline(answer, state, why)
        return answer

    def _big(self, answer, state, why):
        """A note, once per figure block, when an answer's markup is over its budget."""
        n = budgets.markup_bytes(answer)
        if n <= budgets.FIGURE_BYTES or getattr(self, "noted_big", False):
            return
        self.noted_big = True
        at, figure = self.site(blame.defined_at(self.fn))
        self._note(
            (
                *at,
                f"{figure} wrote {budgets.size(n)} of markup, {_given(state, why)}: more than "
                f"the {budgets.size(budgets.FIGURE_BYTES)} a figure's markup may hold, since "
                "its page carries it, Python sends it on every tap and the build prepares "
                f"first taps only within {budgets.size(prerender.RAW_BUDGET)} of answers per "
                "figure; draw less (fewer rows, fewer digits)",
            )
        )

    def _call(self, state, why):
        """(FN's answer for STATE, the processor time it took), within FIGURE_SECONDS; each
        warning it sets off (numpy's overflow, division by zero, nan) is noted at its line."""
        limits.tick()
        took = time.process_time()
        try:
            with (
                limits.time_limit(limits.FIGURE_SECONDS),
                blame.warnings_caught(self.package) as warned,
                browser.traced(),
            ):
                answer = self.fn(dict(state), self.fid)
        except limits.Overrun as e:
            at, figure = self.site(blame.blamed(e, self.package)[0])
            raise AuthorError(
                *at,
                f"{figure} was still drawing after {limits.FIGURE_SECONDS} s, "
                f"{_given(state, why)}, and was stopped here (an endless loop?); a figure must "
                "draw a state in well under a second, since the page calls it on every tap; "
                f"{self._render(state)} in Python shows where it is slow",
            ) from None
        except Exception as e:
            own, inner = blame.blamed(e, self.package)
            at, figure = self.site(own)
            raise AuthorError(
                *at,
                f"{figure} raised {blame.exception_text(e)}{blame.reached(inner)}, "
                f"{_given(state, why)}; {self._render(state)} in Python shows the whole "
                "traceback",
            ) from None
        took = time.process_time() - took
        for at, what in warned:
            where, figure = self.site(at)
            if any(n[:2] == tuple(where) and f"({what})" in n[2] for n in self.notes):
                continue  # said once, for the first state that set it off
            self._note(
                (
                    *where,
                    f"{figure} set off a warning ({what}), {_given(state, why)}; "
                    f"{blame.NUMPY_WARNS}",
                )
            )
        return answer, took

    def _render(self, state):
        return f"render({_json(state)}, {_json(self.fid)})"

    def _note(self, note):
        if note not in self.notes:
            self.notes.append(note)

    def same(self, state, answer, why):
        """Draw STATE again: the answer must be ANSWER, as the page keeps and reuses answers."""
        again = self.draw(state, why)
        if again == answer:
            return
        part = next(k for k in contract.KEYS if again[k] != answer[k])
        first, second = (_json(a[part]) for a in (answer, again))
        at = next((i for i, (x, y) in enumerate(zip(first, second, strict=False)) if x != y), None)
        at = min(len(first), len(second)) if at is None else at
        where, figure = self.site(blame.defined_at(self.fn))
        raise AuthorError(
            *where,
            f"{figure} drew the state {_json(state)} ({why}) twice and gave two answers: its "
            f"{part} is …{first[max(0, at - 20) : at + 20]}… once and "
            f"…{second[max(0, at - 20) : at + 20]}… the next time; a figure must give the same "
            "answer for the same state, since the page keeps and reuses answers: seed any "
            "randomness (numpy.random.default_rng(0)) and change no value another call reads",
        )

    def _inline(self, answer, state, why):
        """No style="…" or on…="…" in the answer's markup: the pages' policy ignores both."""
        for markup in (answer["html"] or "", *answer["slots"].values()):
            if "style" not in markup.lower() and not HANDLER.search(markup):
                continue
            for tag, attributes, _ in tags(markup):
                for name, _ in attributes:
                    if name == "style" or name.startswith("on"):
                        at, figure = self.site(blame.defined_at(self.fn))
                        raise AuthorError(
                            *at,
                            f"{figure} wrote <{tag} {name}=…>, {_given(state, why)}; the pages' "
                            "security policy ignores inline styles and scripts: use the classes of "
                            "templates/styles/site.css (toymodels.page.html.level for a share's "
                            "colour) and the data-key attributes the page reads",
                        )

    def kit_only(self, answer, state, why):
        """The answer's markup holds only what the page's sanitizer lets through unchanged
        (sitebuild/authoring/sanitizer.py): the build puts this answer into the chapter and its
        embed page itself, where no sanitizer sees it."""
        for markup in (answer["html"] or "", *answer["slots"].values()):
            for line, what in sanitizer.refused(markup):
                at, figure = self.site(blame.defined_at(self.fn))
                where = f" (line {line} of its markup)" if line else ""
                raise AuthorError(
                    *at,
                    f"{figure} wrote {what}{where}, {_given(state, why)}; the page's sanitizer "
                    "(templates/static/sanitize.js) keeps only what the figure kit makes, so "
                    "build the figure from toymodels/page/kit/ and toymodels.page.html",
                )

    def site(self, at):
        """Where to report a mistake (AT in toymodels/, else the chapter's block) and how to
        name the figure there."""
        if at is None:
            return self.block, f"figure '{self.model}'"
        return at, f"figure '{self.model}' ({self.block[0]}:{self.block[1]})"


NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")  # a value of CHOICES that a slider could send
# what may be a handler attribute: markup that holds one, or "style", is read as tags
HANDLER = re.compile(r"\son[a-z]+\s*=", re.I)
# markup a reader may type into any field (the address bar holds any): it must come back escaped
PROBE = '"\'><mh-probe data-mh-probe="1">'


def authored_state(drawing, state, answer, at):
    """The chapter's `state:` (at AT) holds only fields the figure declares, each with a value
    it draws as written: a field misspelt, or a value outside CHOICES or that the figure
    replaced by another, is the author's mistake (a reader's address is put right quietly)."""
    module, model = drawing.module, drawing.model
    fields = getattr(module, "DEFAULTS", None)
    fields = fields if isinstance(fields, dict) else {}
    aliases = getattr(module, "ALIASES", None) or {}
    choices = getattr(module, "CHOICES", None)
    choices = choices if isinstance(choices, dict) else {}
    for key, value in state.items():
        if key in aliases and aliases[key] in fields:
            raise AuthorError(
                *at, f"'{key}' is the old name of the field '{aliases[key]}'; write {aliases[key]}"
            )
        if key not in fields:
            listed = ", ".join(fields) or "none: it takes no state"
            raise AuthorError(
                *at,
                f"figure '{model}' has no field '{key}'{suggest(str(key), fields)}; "
                f"its fields are {listed}",
            )
        if value is None:
            continue
        written = contract.merge({key: ""}, {key: value})[key]
        if key in choices and written not in choices[key]:
            raise AuthorError(
                *at,
                f"figure '{model}' has no {key} {_json(written)}; {key} is one of "
                f"{', '.join(choices[key])}",
            )
        drawn = answer["state"].get(key)
        if drawn != written:
            word = getattr(module, "WORD_FIELD", None)
            offered = _offered(answer, key) if key == word else []
            allowed = f"; {key} is one of {', '.join(offered)}" if offered else ""
            raise AuthorError(
                *at,
                f"figure '{model}' does not draw {key} {_json(written)}: it drew "
                f"{key} {_json(drawn)} instead{allowed}; write a value it draws as written",
            )


def _try_declared(drawing, module):
    """Draw the figure with its DEFAULTS, each value of CHOICES and each word of WORD_FIELD;
    each must draw (a refusal is a mistake too: the module declared the state)."""
    block = drawing.block
    fields = getattr(module, "DEFAULTS", None)
    fields = fields if isinstance(fields, dict) else {}
    choices = _choices(block, module, fields)
    drawn = drawing.draw({}, "its DEFAULTS")
    _refused(drawing, drawn, {}, "DEFAULTS", "its DEFAULTS")
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
    answers = {}  # (field, value of CHOICES) -> the answer
    for state, name, why in tries:
        answer = drawing.draw(state, why)
        _refused(drawing, answer, state, name, why)
        if name == "CHOICES":
            answers[next(iter(state.items()))] = answer
    _sliders(drawing, drawn, choices, answers)


def _sliders(drawing, drawn, choices, answers):
    """A slider whose field CHOICES lists (so that steps can set it) and the CHOICES agree: each
    number of CHOICES draws as written, since a step sets exactly that text and the page marks
    the step the reader is on by comparing it with the state drawn ("12.0" where the slider's
    field holds "12.0", not "12"); and the slider still draws every value it sends: a figure
    that reads its state against those CHOICES (read_sentence does) throws the others away, and
    the slider snaps back to its default on every move. One value of the slider's scale outside
    CHOICES is tried. ANSWERS holds the answer for each value of CHOICES."""
    for _, named, _ in [t for m in (drawn["html"], *drawn["slots"].values()) for t in tags(m)]:
        named = dict(named)
        key = named.get("name")
        if named.get("type") != "range" or key not in choices:
            continue
        try:
            low, high, step = (Decimal(named[k]) for k in ("min", "max", "step"))
        except (KeyError, ArithmeticError, TypeError):
            continue
        if step <= 0:
            continue
        block = drawing.block
        for value in choices[key]:
            got = answers[key, value]["state"].get(key)
            if NUMBER.fullmatch(value) and got != value:
                raise AuthorError(
                    *_declared(block, drawing.module, "CHOICES"),
                    f"figure '{drawing.model}' ({block[0]}:{block[1]}) draws the choice {key} "
                    f"{_json(value)} of its slider as {key} {_json(got)}; write each number of "
                    "CHOICES as the slider's field holds it (kit.number_text(x, step) writes it: "
                    f"{_json(got)} here), since a step sets exactly the text written",
                )
        sent = None
        for n in range(min(int((high - low) / step) + 1, 1000)):
            text = _sent(low + n * step)
            if text not in choices[key]:
                sent = text
                break
        if sent is None:
            continue
        state = {key: sent}
        why = "a value its slider sends"
        answer = drawing.draw(state, why)
        got = answer["state"].get(key)
        try:
            moved = abs(Decimal(str(got)) - Decimal(sent)) <= step / 2
        except ArithmeticError:
            moved = False
        if not answer["error"] and moved:
            continue
        raise AuthorError(
            *_declared(block, drawing.module, "CHOICES"),
            f"figure '{drawing.model}' ({block[0]}:{block[1]}) has a slider for '{key}', which "
            f"CHOICES lists as {', '.join(choices[key])}; moved to {sent}, it drew "
            + (f"the error {_json(answer['error'])}" if answer["error"] else f"{key} {_json(got)}")
            + f" ({_given(state, why)}): a slider sends every value of its scale, so read its "
            "field with kit.read_number rather than against CHOICES (give read_sentence only "
            "the choices of the fields that are not sliders)",
        )


def _sent(x):
    """The number X as a range input's value is sent: 0.25, 4 (not 4.0), -2."""
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text


def _probe(drawing, module):
    """Draw the figure with markup a reader may type (PROBE) in each field in turn, after the
    field's default: whatever it answers, the markup must come back escaped."""
    fields = getattr(module, "DEFAULTS", None)
    for key, default in (fields if isinstance(fields, dict) else {}).items():
        # after the default text, so that a sentence is still one the figure draws and shows
        state = {key: f"{default} {PROBE}".strip()}
        answer = drawing.draw(state, "a reader's text, as the address bar may hold it")
        for markup in (answer["html"] or "", *answer["slots"].values()):
            if "<mh-probe" in markup or 'data-mh-probe="1"' in markup:
                at, figure = drawing.site(blame.defined_at(drawing.fn))
                raise AuthorError(
                    *at,
                    f"{figure} wrote a reader's text into its markup unescaped, given the state "
                    f"{_json(state)} (a reader's text, as the address bar may hold it): the "
                    f"markup holds {'<mh-probe' if '<mh-probe' in markup else 'data-mh-probe'} "
                    "as a tag; pass every text through toymodels.page.html.esc (the kit's pieces "
                    "do) and build attributes with toymodels.page.html.attrs",
                )


def _refused(drawing, answer, state, name, why):
    if answer["error"]:
        block = drawing.block
        raise AuthorError(
            *_declared(block, drawing.module, name),
            f"figure '{drawing.model}' ({block[0]}:{block[1]}) refused the state {_json(state)} "
            f"({why}), saying {_json(answer['error'])}; every state the module declares must "
            "draw, so fix render or this declaration",
        )


def _given(state, why):
    return f"given the state {_json(state)} ({why})"


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
