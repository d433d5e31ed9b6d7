"""Chapters to HTML: prose through Markdown, blocks through templates/blocks.html, figures
through toymodels/."""

import functools
import importlib
import json
import re
from dataclasses import dataclass

from markupsafe import Markup

from toymodels.page import cells

from ..authoring import blame, browser, limits
from ..authoring.limits import CELL_SECONDS, Overrun
from .cellrunner import CellEnded, CellProcess, CellStopped
from .chapters import APPENDIX_ORDER, FIGURE_FIELDS, AuthorError, Block, fields, suggest
from .figures import MODEL, call_figure, shipped
from .markup import Prose

FIG_ID = re.compile(r"^[a-z][a-z0-9-]*$")
UNKNOWN = object()  # a chapter rendered on its own: which chapter follows it is not known
RECAP_LINES = (3, 4)  # a recap says what the reader now knows in three or four lines


@dataclass
class Figure:
    fid: str
    model: str
    module: object
    live: bool
    result: dict
    draw: object = None  # state -> the answer, drawn as the build draws (figures.Drawing)
    drawing: object = None  # that figures.Drawing


class ChapterRenderer:
    """Renders one parsed chapter; figures are called first so slots and steps can refer to them."""

    def __init__(self, chapter, env, root, following=UNKNOWN, notes=None, replay=None):
        self.ch, self.rel, self.root = chapter, chapter.path, root
        self.replay = replay  # the cells' answers of the last render (cellrunner.Replay)
        self.following = following  # the next chapter's meta on the readers' path, or None
        self.macros = env.get_template("blocks.html").module
        # (file, line, message) of each warning, such as a figure slow to draw
        self.notes = [] if notes is None else notes
        self.prose = Prose(self.rel, self.notes)
        self.figures = {}
        self.figure_html = {}  # fid -> the figure's markup, for its embed page
        self.counts = {}
        # each check, guess and exercise as rendered, in page order: for the quiz-bank export
        # (sitebuild/lms/questions.py) and the class summary (sitebuild/pipeline/classbank.py)
        self.questions = []

    def render(self):
        self.ns = self.ch.meta["slug"]
        self.cells = CellProcess(self.replay)  # the page's live cells, in a Python of their own
        try:
            for block in self.walk(self.ch.body):
                if block.name == "figure":
                    self._figure(block)
            return Markup(self._pieces(self.ch.body))
        finally:
            self.cells.close()

    def walk(self, pieces):
        """Every block among PIECES, those inside another block too, in the page's order."""
        for p in pieces:
            if isinstance(p, Block):
                yield p
                yield from self.walk(p.children)

    def _pieces(self, pieces):
        out = []
        for p in pieces:
            if isinstance(p, Block):
                out.append(
                    getattr(self, "_" + p.name)(p) if p.name != "figure" else self._figure_html(p)
                )
            else:
                out.append(self.prose.block(p[1], p[0]))
        return "\n".join(out)

    def _id(self, kind):
        self.counts[kind] = self.counts.get(kind, 0) + 1
        return f"{kind}-{self.counts[kind]}"

    def _figure(self, b):
        fid = b.args
        if not FIG_ID.match(fid):
            raise AuthorError(
                self.rel,
                b.line,
                f"figure id '{fid}' must be lower-case letters, digits and hyphens",
            )
        if fid in self.figures:
            raise AuthorError(
                self.rel,
                b.line,
                f"figure id '{fid}' is used twice on this page; give each figure its own id",
            )
        f, where = fields(self.rel, b, FIGURE_FIELDS)
        state = {}
        if f.get("state"):
            try:
                state = json.loads(f["state"])
                assert isinstance(state, dict)
            except (ValueError, AssertionError):
                raise AuthorError(
                    self.rel,
                    where["state"],
                    'state must be a JSON object, e.g. state: {"word": "3"}',
                ) from None
        live = f.get("live", "yes")
        if live not in ("yes", "no"):
            raise AuthorError(self.rel, where["live"], f"live must be yes or no, got '{live}'")
        module, result, drawing = call_figure(
            self.rel,
            where["model"],
            f["model"],
            fid,
            state,
            self.root,
            own=self._packages(),
            state_line=where.get("state"),
            notes=self.notes,
        )
        draw = functools.partial(drawing.draw, why="one tap from the figure's first view")
        self.figures[fid] = Figure(fid, f["model"], module, live == "yes", result, draw, drawing)
        b.fields, b.where = f, where

    def _packages(self):
        """The packages of toymodels/ this chapter names, and the one `build.py new` makes for
        its slug: where a name the author misspelt most likely points."""
        named = set(re.findall(r"toymodels\.(\w+)", self.ch.source))
        return named | {self.ch.meta["slug"].replace("-", "_")}

    def _figure_html(self, b):
        fig = self.figures[b.args]
        html = self.macros.figure(
            fig.fid,
            Markup(self.prose.inline(b.fields["caption"], b.where["caption"])),
            b.fields["alt"],
            {"html": Markup(fig.result["html"]), "summary": fig.result.get("summary", "")},
            fig.model,
            fig.result.get("state", {}),
            fig.live,
            f"embed/{self.ch.meta['slug']}/{fig.fid}.html",
        )
        self.figure_html[fig.fid] = html
        return html

    def _target(self, b, fid):
        fig = self.figures.get(fid)
        if fig is None:
            raise AuthorError(
                self.rel,
                b.line,
                f"no figure '{fid}' on this page{suggest(fid, self.figures)}; "
                f"figures here: {', '.join(self.figures) or 'none'}",
            )
        return fig

    def _slot(self, b):
        parts = b.args.split()
        if len(parts) != 2:
            raise AuthorError(
                self.rel,
                b.line,
                "'::: slot' takes a figure id and a slot name, e.g. '::: slot three-heads shares'",
            )
        fig = self._target(b, parts[0])
        slots = fig.result.get("slots", {})
        if parts[1] not in slots:
            raise AuthorError(
                self.rel,
                b.line,
                f"figure '{fig.fid}' has no slot '{parts[1]}'{suggest(parts[1], slots)}; "
                f"its slots are {', '.join(slots) or 'none'}",
            )
        return self.macros.slot(fig.fid, parts[1], Markup(slots[parts[1]]))

    def _steps(self, b):
        fig = self._target(b, b.args)
        choices = getattr(fig.module, "CHOICES", {})
        items, current = [], None
        for n, text in b.lines:
            m = re.match(r"^\d+\.\s+\{([^}]*)\}\s*(.*)$", text)
            pairs = [p.split("=", 1) for p in m[1].split()] if m else []
            if m and (not pairs or any(len(p) != 2 for p in pairs)):
                raise AuthorError(
                    self.rel,
                    n,
                    "a step sets fields as {field=value}, or several as {field=value other=value}",
                )
            if m:
                for key, val in pairs:
                    if key not in choices or val not in choices[key]:
                        raise AuthorError(self.rel, n, self._no_step(fig, choices, key, val))
                (key, val), rest = pairs[0], m[2]
                # every field the step sets, for a step that sets more than one
                many = "&".join(f"{k}={v}" for k, v in pairs) if len(pairs) > 1 else None
                current = {"key": key, "value": val, "set": many, "lines": [rest], "line": n}
                items.append(current)
            elif text.strip() and current and text.startswith((" ", "\t")):
                current["lines"].append(text.strip())
            elif text.strip():
                raise AuthorError(
                    self.rel,
                    n,
                    "each step is '1. {step=NAME} what happens', continued on indented lines",
                )
        if not items:
            raise AuthorError(
                self.rel, b.line, "a steps block needs at least one '1. {step=NAME} …' line"
            )
        for it in items:
            it["html"] = Markup(self.prose.inline(" ".join(it["lines"]), it["line"]))
        return self.macros.steps(fig.fid, items)

    @staticmethod
    def _no_step(fig, choices, key, val):
        """What is wrong with a step's KEY=VAL: a field the figure does not have (misspelt?),
        one its steps cannot set (not in CHOICES), or a value outside its CHOICES."""
        allowed = "; ".join(f"{k}: {', '.join(v)}" for k, v in choices.items())
        fields = getattr(fig.module, "DEFAULTS", {})
        if key not in fields:
            return (
                f"figure '{fig.fid}' has no field '{key}'{suggest(key, fields)}; its steps "
                f"set {allowed or 'nothing: its module declares no CHOICES'}"
            )
        if key not in choices:
            return (
                f"figure '{fig.fid}' has no state {key}={val}: a step sets only a field of the "
                f"module's CHOICES; it takes {allowed or 'none'}"
            )
        return f"figure '{fig.fid}' has no state {key}={val}; it takes {allowed}"

    def _guess(self, b):
        split = next((i for i, (_, t) in enumerate(b.lines) if t.strip() == "---"), None)
        if split is None:
            raise AuthorError(
                self.rel,
                b.line,
                "a guess block needs a line '---' before its explanation "
                "(choices, if any, go above it as '- choice' lines)",
            )
        choices, answer = [], None
        for n, text in b.lines[:split]:
            if text.strip().startswith("- "):
                choice = text.strip()[2:]
                if choice.startswith("[x] "):  # the answer, shown beside the reader's guess
                    if answer is not None:
                        raise AuthorError(
                            self.rel,
                            n,
                            f"a guess has one answer, and choice {answer + 1} is already "
                            "marked '[x]'; remove one of the marks (a check block takes "
                            "several right options)",
                        )
                    answer, choice = len(choices), choice[4:]
                choices.append(Markup(self.prose.inline(choice, n)))
            elif text.strip():
                raise AuthorError(
                    self.rel,
                    n,
                    "above '---' a guess block holds only choices, each a line '- choice'",
                )
        body = b.lines[split + 1 :]
        if not any(t.strip() for _, t in body):
            raise AuthorError(
                self.rel, b.line, "a guess block needs an explanation below its '---' line"
            )
        explanation = self.prose.block("\n".join(t for _, t in body), body[0][0])
        gid, question = self._id("guess"), Markup(self.prose.inline(b.args, b.line))
        sources = [t.strip()[2:].removeprefix("[x] ") for _, t in b.lines[:split] if t.strip()]
        self.questions.append(
            {
                "id": gid,
                "kind": "guess",
                "block": b,
                "question": question,
                "choices": [
                    {"html": c, "source": s, "correct": i == answer}
                    for i, (c, s) in enumerate(zip(choices, sources, strict=True))
                ],
                "answer": answer,
                "explanation": Markup(explanation),
            }
        )
        return self.macros.guess(gid, question, choices, Markup(explanation), answer)

    def _check(self, b):
        options = []
        for n, text in b.lines:
            m = re.match(r"^- \[( |x)\]\s+(.+)$", text)
            if m:
                options.append(
                    {"correct": m.group(1) == "x", "text": m.group(2), "feedback": [], "line": n}
                )
            elif text.strip() and options and text.startswith((" ", "\t")):
                options[-1]["feedback"].append(text.strip())
            elif text.strip():
                raise AuthorError(
                    self.rel,
                    n,
                    "a check block holds options '- [ ] wrong' or '- [x] right', "
                    "each followed by indented feedback lines",
                )
        if len(options) < 2 or not any(o["correct"] for o in options):
            raise AuthorError(
                self.rel,
                b.line,
                "a check block needs at least two options and one marked right with '- [x]'",
            )
        for o in options:
            if not o["feedback"]:
                raise AuthorError(
                    self.rel,
                    o["line"],
                    "this option has no feedback; add an indented line below it saying why",
                )
            o["source"], o["feedback_source"] = o["text"], " ".join(o["feedback"])
            o["text"] = Markup(self.prose.inline(o["text"], o["line"]))
            o["feedback"] = Markup(self.prose.inline(" ".join(o["feedback"]), o["line"] + 1))
        cid, question = self._id("check"), Markup(self.prose.inline(b.args, b.line))
        self.questions.append(
            {"id": cid, "kind": "check", "block": b, "question": question, "options": options}
        )
        return self.macros.check(cid, question, options)

    def _deeper(self, b):
        return self.macros.deeper(
            Markup(self.prose.inline(b.args, b.line)), Markup(self._pieces(b.children))
        )

    def _note(self, b):
        title = Markup(self.prose.inline(b.args, b.line)) if b.args else ""
        return self.macros.note(title, Markup(self._pieces(b.children)))

    def _cards(self, b):
        return Markup(f'<div class="mh-cards">{self._pieces(b.children)}</div>')

    def _run(self, b, code, first_line, check=None, ns=None, what="this live cell"):
        """Run a cell with CPython at build time, in the page's namespace (or NS), in the page's
        own child process (sitebuild/pipeline/cellrunner.py); its error is the author's, reported as
        WHAT's. The reader's browser must have what it imports, and what the code of toymodels/
        it calls reads (sitebuild/authoring/browser.py, traced in the child)."""
        browser.refuse_cell_imports(code, self.rel, first_line)
        try:
            result = self.cells.run(code, ns or self.ns, check, CELL_SECONDS)
        except CellStopped:
            raise AuthorError(
                self.rel,
                first_line,
                f"{what} ran for more than {CELL_SECONDS} s at build time (an endless "
                "loop?); a cell must finish quickly, since the build runs every cell",
            ) from None
        except CellEnded as e:
            raise AuthorError(
                self.rel,
                first_line,
                f"{what} ended the Python that runs the page's cells ({e}); a cell may "
                "not end or kill its process (os._exit, os.kill, …), since the build runs every "
                "cell",
            ) from None
        if result["error"]:
            last = result["error"].strip().splitlines()[-1]
            line = first_line + (result["line"] or 1) - 1
            raise AuthorError(
                self.rel, line, f"{what} raised {last}; fix the code or its earlier cells"
            )
        return result

    def _cell(self, b):
        code = "\n".join(t for _, t in b.lines).strip("\n")
        if not code:
            raise AuthorError(
                self.rel,
                b.line,
                "this live cell is empty; put Python between ```python live and ```",
            )
        first = next(n for n, t in b.lines if t.strip())
        result = self._run(b, code, first)
        return self.macros.cell(self._id("cell"), code, result, None, self.ns)

    def _exercise(self, b):
        split = next((i for i, (_, t) in enumerate(b.lines) if t.strip() == "---"), None)
        if split is None:
            raise AuthorError(
                self.rel,
                b.line,
                "an exercise needs 'check:' and 'hint:' lines, a line '---', "
                "then the starting code",
            )
        check, hints = None, []
        for n, text in b.lines[:split]:
            m = re.match(r"^(check|hint)\s*:\s*(.+)$", text.strip())
            if not m and text.strip():
                raise AuthorError(
                    self.rel,
                    n,
                    "an exercise holds 'check: toymodels.MODULE:FUNCTION' and 'hint: …' lines "
                    f"above '---'; got {text.strip()!r}",
                )
            if m and m.group(1) == "check":
                check, check_line = m.group(2), n
            elif m:
                hints.append(Markup(self.prose.inline(m.group(2), n)))
        if not check:
            raise AuthorError(
                self.rel, b.line, "an exercise needs a line 'check: toymodels.MODULE:FUNCTION'"
            )
        fn = None
        if MODEL.match(check):
            module, func = shipped(self.rel, check_line, check, "check")
            try:
                imported = blame.import_module(module, self.rel, check_line, self.notes)
                fn = getattr(imported, func, None)
            except ImportError:
                fn = None
            browser.refuse_imports(module, self.rel, check_line)
        if not callable(fn):
            raise AuthorError(
                self.rel,
                check_line,
                f"unknown check '{check}': "
                "name a function in toymodels/ as toymodels.MODULE:FUNCTION",
            )
        code_lines = b.lines[split + 1 :]
        # an optional solution, for the build alone, below a second line '---'
        second = next((i for i, (_, t) in enumerate(code_lines) if t.strip() == "---"), None)
        if second is not None:
            solution, at_second = code_lines[second + 1 :], code_lines[second][0]
            code_lines = code_lines[:second]
        code = "\n".join(t for _, t in code_lines).strip("\n")
        if not code:
            raise AuthorError(
                self.rel, b.line, "an exercise needs starting code below its '---' line"
            )
        first = next(n for n, t in code_lines if t.strip())
        before = f"{self.ns}#before"  # what a reader's code runs after
        self._in_child("copy_namespace", self.ns, before)
        result = self._run(b, code, first)
        self._try_check(check, check_line, "the starting code's")
        if second is not None:
            self._solution(b, solution, check, check_line, before, at_second)
        self._in_child("forget_namespace", before)
        exercise = {
            "task": Markup(self.prose.inline(b.args, b.line)),
            "check": check,
            "hints": hints,
        }
        eid = self._id("exercise")
        self.questions.append(
            {"id": eid, "kind": "exercise", "block": b, "question": exercise["task"]}
        )
        return self.macros.cell(eid, code, result, exercise, self.ns)

    def _solution(self, b, lines, check, at, before, split_line):
        """Run the exercise's solution (LINES, below its second '---' at SPLIT_LINE) where a
        reader's code would run, after the cells above (BEFORE, the page's variables then), in
        a namespace of its own, which the page's later cells never see; its check must pass
        it."""
        code = "\n".join(t for _, t in lines).strip("\n")
        if not code:
            raise AuthorError(
                self.rel,
                split_line,
                "an exercise's solution goes below this second '---' line; write it there, or "
                "remove the line",
            )
        ns = f"{self.ns}#solution"
        self._in_child("copy_namespace", before, ns)
        first = next(n for n, t in lines if t.strip())
        self._run(b, code, first, ns=ns, what="this exercise's solution")
        ok, message = self._try_check(check, at, "the solution's", ns)
        self._in_child("forget_namespace", ns)
        if not ok:
            raise AuthorError(
                self.rel,
                first,
                f"the check '{check}' ({self.rel}:{at}) does not pass this exercise's own "
                f"solution: it says {message!r}; fix the check or the solution",
            )

    def _in_child(self, name, *args, seconds=10):
        """NAME(*ARGS), a function of this module, called in the page's cell process."""
        try:
            return self.cells.call(f"{__name__}:{name}", args, seconds)
        except (CellStopped, CellEnded) as e:
            raise RuntimeError(f"the Python for live cells failed in {name} ({e})") from None

    def _try_check(self, check, at, whose, ns=None):
        """Run the exercise's CHECK (named at line AT) on the variables WHOSE code left in the
        page's namespace (or NS), in the page's cell process where those variables are, as a
        reader's Run does (exercise_verdict). -> the verdict."""
        given = f"the check '{check}' ({self.rel}:{at}), given {whose} variables,"
        try:
            said = self.cells.call(
                f"{__name__}:exercise_verdict",
                [check, ns or self.ns, limits.FIGURE_SECONDS],
                limits.BACKSTOP_SECONDS + 5,
            )
        except CellStopped:
            raise AuthorError(
                self.rel,
                at,
                f"{given} was still running after {limits.BACKSTOP_SECONDS} s (an endless loop?)",
            ) from None
        except CellEnded as e:
            raise AuthorError(
                self.rel,
                at,
                f"{given} ended the Python that runs the page's cells ({e})",
            ) from None
        here = (self.rel, at)  # where a fault that names no line of toymodels/ is
        if "error" in said:
            place, what = said["error"]
            raise AuthorError(*(place or here), f"{given} {what}")
        warned = [(place and tuple(place), what) for place, what in said["warned"]]
        for note in blame.warning_notes(warned, given, here):
            if note not in self.notes:
                self.notes.append(note)
        return said["verdict"]

    def _recap(self, b):
        """What the reader now knows, and a link to the next chapter with what it adds."""
        if self.ch.meta["order"] >= APPENDIX_ORDER:
            raise AuthorError(
                self.rel,
                b.line,
                f"this chapter is an appendix (order {APPENDIX_ORDER} or more), outside the "
                "readers' path, so it has no recap; remove the block or give it a smaller order",
            )
        items = []
        for n, text in b.lines:
            if text.startswith("- "):
                items.append([n, text[2:].strip()])
            elif text.strip() and items and text.startswith((" ", "\t")):
                items[-1][1] += " " + text.strip()
            elif text.strip():
                raise AuthorError(
                    self.rel,
                    n,
                    "a recap holds lines '- what the reader now knows', "
                    "continued on indented lines",
                )
        if len(items) not in RECAP_LINES:
            raise AuthorError(
                self.rel,
                b.line,
                f"a recap holds three or four lines '- what the reader now knows', one idea "
                f"each; this one has {len(items)}",
            )
        following, sentence = self.following, b.args
        if following is not UNKNOWN:
            if following and not sentence:
                raise AuthorError(
                    self.rel,
                    b.line,
                    f"this recap leads to the next chapter, '{following['title']}': add one "
                    "sentence on what it adds after '::: recap', e.g. "
                    "'::: recap It takes the heads apart one matrix at a time.'",
                )
            if not following and sentence:
                raise AuthorError(
                    self.rel,
                    b.line,
                    "this is the last chapter of the path, so no next chapter follows: "
                    "remove the sentence after '::: recap' (or add the chapter it announces)",
                )
        return self.macros.recap(
            [Markup(self.prose.inline(text, n)) for n, text in items],
            following if following is not UNKNOWN else None,
            Markup(self.prose.inline(sentence, b.line)) if sentence else "",
        )


def _short(value):
    """VALUE's repr, cut to one short line for a message."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "…"


# What the page's cell process (sitebuild/pipeline/cellrunner.py) runs for the build, where the
# cells' variables are.


def copy_namespace(src, dst):
    """The namespace DST starts as a copy of SRC (or afresh, as a page's first cell finds it)."""
    if src in cells.NAMESPACES:
        cells.NAMESPACES[dst] = dict(cells.NAMESPACES[src])
    else:
        cells.forget(dst)


def forget_namespace(ns):
    cells.forget(ns)


def exercise_verdict(check, ns, seconds):
    """The exercise's CHECK ("toymodels.MODULE:FUNCTION") run on the variables left in
    namespace NS, as a reader's Run does: it must return a verdict, (passed, message), within
    the per-call limit (limits.FIGURE_SECONDS), since a check that raises or never returns
    leaves the reader with no verdict; SECONDS is the build's limit. -> {"verdict": [passed,
    message], "warned": [[place, "Category: message"], …]} (each warning the check set off,
    numpy's) or {"error": [place, what is wrong]}, for the build to name the check and the
    exercise's line before what is wrong (ChapterRenderer._try_check). A place is the (file,
    line) of toymodels/ to fix, or None for the exercise's line. The exercise's line is not
    asked, so that the answer stays the same when lines are added or removed above the
    exercise, and serve's builder gives it again without running the check
    (cellrunner.Replay)."""
    module, _, func = check.partition(":")
    with blame.warnings_caught(module):  # the build's own Python noted its import's
        fn = getattr(importlib.import_module(module), func)
    try:
        with (
            limits.backstop(limits.BACKSTOP_SECONDS),
            limits.time_limit(seconds),
            blame.warnings_caught(blame.package_of(module)) as warned,
        ):
            verdict = fn(dict(cells.NAMESPACES.get(ns, {})))
    except (Exception, Overrun) as e:
        own, inner = blame.blamed(e, blame.package_of(module))
        if isinstance(e, Overrun):
            what = f"was still running after {seconds} s, and was stopped here (an endless loop?)"
        else:
            what = f"raised {blame.exception_text(e)}{blame.reached(inner)}"
        return {
            "error": [
                own or blame.defined_at(fn),
                f"{what}; a check gives every reader's code a verdict quickly: return "
                "(False, 'what to change') where the variables are not what it needs",
            ]
        }
    if not (isinstance(verdict, tuple) and len(verdict) == 2 and isinstance(verdict[1], str)):
        return {
            "error": [
                blame.defined_at(fn),
                f"returned {type(verdict).__name__} {_short(verdict)}; a check returns "
                "(passed, message), e.g. return False, 'Make each row of w add up to 1.'",
            ]
        }
    fallback = blame.defined_at(fn)
    return {
        "verdict": [bool(verdict[0]), verdict[1]],
        "warned": [[at or fallback, said] for at, said in warned],
    }
