"""`python build.py new "Title"`: a chapter skeleton that builds, with the next free order
number."""

import re

from .build import load_chapters
from .chapters import APPENDIX_ORDER, AuthorError


def new_chapter(root, title):
    """A chapter skeleton that builds, with the next free order number."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "chapter"
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
    path.write_text(
        NEW_CHAPTER.format(title=title.replace('"', "'"), slug=slug, order=order), encoding="utf-8"
    )
    return path


NEW_CHAPTER = """+++
title = "{title}"
slug = "{slug}"
order = {order}
series = "Chapter {order} · Multi-head attention"
summary = "One sentence for the home page: what the reader will understand after this chapter."
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
