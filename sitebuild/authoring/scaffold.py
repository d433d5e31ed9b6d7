"""`python build.py new "Title" [--figure] [--after SLUG]`: a chapter skeleton that builds,
with the next free order number (or placed right after SLUG's chapter); with --figure also a
package toymodels/SLUG/ whose figure.py is a working head built from the figure kit
(toymodels/page/kit), for the author to change."""

import json
import re

from ..pipeline.build import load_chapters
from ..pipeline.chapters import APPENDIX_ORDER, AuthorError, Block, suggest


def new_chapter(root, title, figure=False, after=None, changed=None):
    """A chapter skeleton that builds, with the next free order number (and with FIGURE, a
    figure module of its own, shown in the chapter) -> (its path, the path of the chapter
    before it if that chapter's recap was given a first lead-in sentence to rewrite, or None).

    The path's last chapter ends with a recap and no sentence after it; once a chapter follows,
    its recap must say what that chapter adds, so it gets one to rewrite, and the skeleton
    builds at once.

    AFTER, a slug, places the chapter right after that one instead (see `_Placement`); CHANGED, a
    list, then receives one line for each other chapter changed."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "chapter"
    if len(slug) > MAX_SLUG:  # a file name holds 255 bytes; a slug is a short name
        slug = slug[: MAX_SLUG + 1].rsplit("-", 1)[0] if "-" in slug[:MAX_SLUG] else slug[:MAX_SLUG]
    chapters = load_chapters(root)
    if any(c.meta["slug"] == slug for c in chapters):
        raise AuthorError(
            f"chapters/ (new '{title}')",
            1,
            f"a chapter with slug '{slug}' exists already; choose another title",
        )
    # orders from 90 up are kept for appendices such as the author guide
    order = (
        max((c.meta["order"] for c in chapters if c.meta["order"] < APPENDIX_ORDER), default=0) + 1
    )
    placed = _Placement(root, chapters, after, title) if after else None
    order = placed.order if placed else order
    path = root / "chapters" / f"{order:02d}-{slug}.md"
    text = NEW_CHAPTER.format(title=toml_string(title), slug=slug, order=order, summary=SUMMARY)
    if figure:
        package = "ch_" + slug.replace("-", "_") if slug[0].isdigit() else slug.replace("-", "_")
        where = root / "toymodels" / package
        if where.exists():
            raise AuthorError(
                f"toymodels/{package}/ (new '{title}')",
                1,
                f"toymodels/{package}/ exists already; choose another title",
            )
        where.mkdir()
        (where / "__init__.py").write_text("", encoding="utf-8")
        (where / "figure.py").write_text(NEW_FIGURE, encoding="utf-8")
        block = NEW_FIGURE_BLOCK.format(package=package)
        text = text.replace("\n::: recap", block + "\n::: recap", 1)
    if placed:
        return path, placed.write(path, text, changed if changed is not None else [])
    path.write_text(text, encoding="utf-8")
    return path, _lead_in(root, chapters, order, title)


class _Placement:
    """Where `new --after SLUG` puts a chapter: order SLUG's + 1, the chapters from there on
    (up to the first free order) one order later, each `series = "Chapter N · …"` that names
    its order renumbered with it; SLUG's recap sentence (what its next chapter adds) moves to
    the new chapter's recap, which that chapter now follows, and SLUG's recap gets the lead-in
    for the author to rewrite. Checked before anything is written."""

    def __init__(self, root, chapters, after, title):
        self.root, self.title = root, title
        found = [c for c in chapters if c.meta["slug"] == after]
        path_slugs = [c.meta["slug"] for c in chapters if c.meta["order"] < APPENDIX_ORDER]
        where = f"chapters/ (new --after {after})"
        if not found:
            raise AuthorError(
                where,
                1,
                f"no chapter has the slug '{after}'{suggest(after, path_slugs)}; the chapters "
                f"on the readers' path are {', '.join(path_slugs) or 'none'}",
            )
        self.after = found[0]
        if self.after.meta["order"] >= APPENDIX_ORDER:
            raise AuthorError(
                where,
                1,
                f"'{after}' is an appendix (order {APPENDIX_ORDER} or more), outside the readers' "
                "path; place a chapter after one of " + ", ".join(path_slugs),
            )
        self.order = self.after.meta["order"] + 1
        taken = {c.meta["order"]: c for c in chapters}
        self.moved, n = [], self.order
        while n in taken and n < APPENDIX_ORDER:  # the run of orders up to the first free one
            self.moved.append(taken[n])
            n += 1
        if n >= APPENDIX_ORDER:
            raise AuthorError(
                where,
                1,
                f"the chapters after '{after}' would reach order {APPENDIX_ORDER}, where the "
                "appendices start; renumber them with gaps first",
            )

    def write(self, path, text, changed):
        """Write the new chapter's TEXT to PATH and change the others; -> SLUG's path."""
        for c in reversed(self.moved):
            old = c.meta["order"]
            file = self.root / c.path
            lines = file.read_text(encoding="utf-8").split("\n")
            at = c.meta_lines["order"] - 1
            lines[at] = re.sub(r"\d+", str(old + 1), lines[at], count=1)
            what = f"order {old} -> {old + 1}"
            at = c.meta_lines["series"] - 1
            series = re.sub(rf"\bChapter {old}\b", f"Chapter {old + 1}", lines[at], count=1)
            if series != lines[at]:
                lines[at], what = series, what + f", series 'Chapter {old}' -> 'Chapter {old + 1}'"
            file.write_text("\n".join(lines), encoding="utf-8")
            changed.insert(0, f"{c.path}: {what}")  # said in reading order
        last = self.root / self.after.path
        lines = last.read_text(encoding="utf-8").split("\n")
        recap = next(
            (b for b in self.after.body if isinstance(b, Block) and b.name == "recap"), None
        )
        if recap and recap.args:
            text = text.replace("\n::: recap\n", f"\n::: recap {recap.args}\n", 1)
            changed.append(
                f"{path.relative_to(self.root).as_posix()}: its recap leads on with the "
                f"sentence {self.after.path}'s had"
            )
        path.write_text(text, encoding="utf-8")
        if not recap:
            return None
        said = re.sub(r"\s+", " ", self.title).replace("\\", "\\\\")  # Markdown: a \ stays a \
        lines[recap.line - 1] = f"::: recap Next, {said}: {LEAD_IN}."
        last.write_text("\n".join(lines), encoding="utf-8")
        return last


def toml_string(text):
    """TEXT as a TOML basic string, backslashes and quotes included (JSON's escapes are TOML's,
    but for DEL, which TOML wants escaped too)."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007F")


def _lead_in(root, chapters, order, title):
    """Give the recap of the chapter before ORDER the sentence it now needs; -> its path."""
    before = [c for c in chapters if c.meta["order"] < order]
    if not before:
        return None
    last = root / max(before, key=lambda c: c.meta["order"]).path
    text = last.read_text(encoding="utf-8")
    if "\n::: recap\n" not in text:
        return None
    sentence = f"Next, {as_typed(title)}: {LEAD_IN}."
    last.write_text(text.replace("\n::: recap\n", f"\n::: recap {sentence}\n", 1), "utf-8")
    return last


# what a chapter's prose reads as more than text: Markdown (code, emphasis, links, escapes),
# raw HTML, {{ values }}, $maths$, and the dashes and ellipses of its typography
MARKUP = re.compile(r"[\\`*_{}\[\]<>&$]|-{2,}|\.{3,}")


def as_typed(title):
    """TITLE for a line of a chapter's prose, shown as typed but for its quotes, curled as all
    prose's are: on one line, each character the prose would read as markup written as a
    character reference, which Markdown, the values and the maths leave alone and the page
    shows as that character."""
    said = re.sub(r"\s+", " ", title).strip()
    return MARKUP.sub(lambda m: "".join(f"&#{ord(c)};" for c in m.group(0)), said)


NEW_FIGURE_BLOCK = """
::: figure head
model: toymodels.{package}.figure:render
caption: Figure 1 · A previous-word head. Choose a word, or tap a row, to follow it.
alt: An attention grid in which every word looks mostly at the word before it.
:::

::: steps head
1. {{view=scores}} **Scores.** Every query meets every key.
2. {{view=mask}} **Mask.** Later words are hidden.
3. {{view=softmax}} **Softmax.** Each row becomes shares that add up to 100%.
:::
"""

NEW_FIGURE = '''"""A previous-word head: every word looks at the word before it. Change the model,
keep the render: it composes the figure kit's pieces (see the author guide, "The figure kit")."""

import numpy as np

from ..page import kit

SENTENCE, MAX_WORDS, STRENGTH = "The cat sat on the mat", 8, 4.0
DEFAULTS = {"sentence": SENTENCE, "word": "3", "view": "softmax"}
CHOICES = {"view": ("scores", "mask", "softmax")}
WORD_FIELD = "word"  # the build draws the figure for each word of the default sentence


def head(n, strength=STRENGTH):
    """Scores and shares for n words: word i scores STRENGTH on word i - 1, 0 elsewhere."""
    scores = strength * np.eye(n, k=-1)
    masked = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, -np.inf)  # no later words
    e = np.exp(masked - masked.max(axis=1, keepdims=True))  # exp(-inf) = 0
    return scores, e / e.sum(axis=1, keepdims=True)


def render(state=None, fid="head"):
    """State in; the figure's html, slots, state, error and summary out."""
    state, words, error = kit.read_sentence(state, DEFAULTS, CHOICES, max_words=MAX_WORDS)
    if error:
        return kit.failure(state, error)
    scores, w = head(len(words))
    i, before = int(state["word"]), int(state["word"]) - 1
    said = f"the word before it, “{words[before]}”" if i else "itself: no word comes before it"
    text = f"“{words[i]}” gives {kit.share(w[i, : i + 1], max(before, 0))} to {said}."
    grid = kit.attention_grid(words, shares=w, scores=scores, view=state["view"], selected=i)
    form = kit.controls(kit.sentence_form(fid, state["sentence"]))
    html = form + kit.token_buttons(words, i) + grid + kit.legend() + kit.summary_line(text)
    row = kit.shares_table(words, [("Share", w[i])], seen=i + 1, caption=f"Shares for {words[i]}")
    return kit.result(html, state, slots={"row": row}, summary=text)
'''


def placeholders(text):
    """(line, message) for each text of `new`'s skeleton left in a chapter's TEXT: the author
    has yet to write it (`check --strict` fails on each)."""
    found = []
    for n, line in enumerate(text.split("\n"), 1):
        said = line.strip()
        for placeholder, what in PLACEHOLDERS:
            if said == placeholder or (placeholder == SUMMARY and SUMMARY in said):
                found.append((n, f"'{placeholder}' is still what `build.py new` wrote: {what}"))
        if said.startswith("::: recap Next, ") and said.endswith(f": {LEAD_IN}."):
            found.append(
                (
                    n,
                    "this recap still holds the sentence `build.py new` wrote when it added the "
                    "chapter that follows; say in one sentence what that chapter adds",
                )
            )
    return found


LEAD_IN = "rewrite this line to say what it adds"  # new's sentence in the last recap, ends it
SUMMARY = "One sentence for the home page: what the reader will understand after this chapter."
# the texts of the skeleton the author replaces, and what to write instead
PLACEHOLDERS = (
    (SUMMARY, "write one sentence on what the reader will understand after this chapter"),
    (
        "Open with the question this chapter answers, in two or three sentences.",
        "open with the question this chapter answers",
    ),
    ("::: note How to continue", "remove this note, written for you, not for readers"),
    ("## A first section", "name the section for what it explains"),
    (
        "Prose, maths such as $d_\\text{head} = d_\\text{model} / h$, and figures go here.",
        "write the section",
    ),
    ("- Three or four lines: what the reader now knows,", "write what the reader now knows"),
    ("- one idea each,", "write what the reader now knows"),
    ("- in words the reader learnt in this chapter.", "write what the reader now knows"),
)
MAX_SLUG = 60
NEW_CHAPTER = """+++
title = {title}
slug = "{slug}"
order = {order}
series = "Chapter {order} · Multi-head attention"
summary = "{summary}"
sources = [
  "Vaswani, A. et al. (2017). *Attention Is All You Need.* NeurIPS.",
]
+++

Open with the question this chapter answers, in two or three sentences.

::: note How to continue
Every block is described in the author guide. A figure names a function in `toymodels/`;
`python build.py check` reports anything that needs fixing.
:::

## A first section

Prose, maths such as $d_\\text{{head}} = d_\\text{{model}} / h$, and figures go here.

::: recap
- Three or four lines: what the reader now knows,
- one idea each,
- in words the reader learnt in this chapter.
:::
"""
