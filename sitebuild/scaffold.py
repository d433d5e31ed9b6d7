"""`python build.py new "Title" [--figure]`: a chapter skeleton that builds, with the next free
order number; with --figure also a package toymodels/SLUG/ whose figure.py is a working head
built from the figure kit (toymodels/page/kit), for the author to change."""

import json
import re

from .build import load_chapters
from .chapters import APPENDIX_ORDER, AuthorError


def new_chapter(root, title, figure=False):
    """A chapter skeleton that builds, with the next free order number (and with FIGURE, a
    figure module of its own, shown in the chapter) -> (its path, the path of the chapter
    before it if that chapter's recap was given a first lead-in sentence to rewrite, or None).

    The path's last chapter ends with a recap and no sentence after it; once a chapter follows,
    its recap must say what that chapter adds, so it gets one to rewrite, and the skeleton
    builds at once."""
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
    path.write_text(text, encoding="utf-8")
    return path, _lead_in(root, chapters, order, title)


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
