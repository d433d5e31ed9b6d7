"""Reading a chapter: TOML front matter between '+++' lines, then Markdown with ':::' blocks.

Every mistake an author can make is an AuthorError naming the file and line,
worded so the author knows what to change.
"""

import difflib
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

FRONT_FIELDS = {
    "title": str,
    "slug": str,
    "order": int,
    "series": str,
    "summary": str,
    "sources": list,
}
SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
# pages the build writes itself (SLUG.html would replace them)
RESERVED_SLUGS = ("index", "training-results", "class")
OPEN = re.compile(r"^:::\s*([A-Za-z][\w-]*)\s*(.*?)\s*$")
CLOSE = re.compile(r"^:::\s*$")
FENCE = re.compile(r"^(```|~~~)")

# block name -> (what its opening line takes, whether other blocks may sit inside it)
BLOCKS = {
    "figure": ("a figure id such as three-heads", False),
    "slot": ("a figure id and a slot name, such as three-heads shares", False),
    "guess": ("the question", False),
    "check": ("the question", False),
    "steps": ("the id of the figure the steps drive", False),
    "deeper": ("a title", True),
    "note": ("an optional title", True),
    "cards": ("", True),
    "exercise": ("the task, e.g. Make head 2 attend only to the first token", False),
    "recap": ("one sentence on what the next chapter adds", False),
    "cell": ("", False),  # written as a fenced block ```python live, not with ':::'
}
LIVE_CELL = re.compile(r"^```python\s+live\b\s*(.*)$")
MAX_BYTES = 1_000_000  # a chapter file; larger ones slow Markdown down beyond reason
MAX_DEPTH = 8  # blocks inside blocks
FIGURE_FIELDS = {"model": True, "caption": True, "alt": True, "state": False, "live": False}
APPENDIX_ORDER = 90  # chapters from this order up are appendices, outside the readers' path
OPTIONAL_ARGS = ("note", "cards", "recap")  # blocks whose opening line may stop at the name


class AuthorError(Exception):
    """A mistake in a chapter: str() is 'chapters/NAME.md:LINE: message'."""

    def __init__(self, path, line, message):
        super().__init__(f"{path}:{line}: {message}")
        self.path, self.line, self.message = path, line, message


def suggest(word, options, first=()):
    """' (did you mean 'X'?)' for the option closest to WORD, or ''. FIRST, some of OPTIONS,
    are searched before the rest: the names of the author's own package, say."""
    for pool in (list(first), list(options)):
        close = difflib.get_close_matches(word, pool, n=1, cutoff=0.5)
        if close:
            return f" (did you mean '{close[0]}'?)"
    return ""


@dataclass
class Block:
    name: str
    args: str
    line: int  # line of the opening ':::'
    lines: list = field(default_factory=list)  # (line number, text) of the body
    children: list = field(
        default_factory=list
    )  # for blocks that hold Markdown: str pieces and Blocks


@dataclass
class Chapter:
    path: str
    meta: dict
    meta_lines: dict  # field -> line number
    body: list  # Markdown pieces as (first line, text) and Blocks
    source: str = ""  # the file's text, for finding where something was written


def read(path, root):
    """Parse one chapter file; raises AuthorError."""
    rel = Path(path).absolute().relative_to(Path(root).absolute()).as_posix()
    text = _text(rel, Path(path))
    lines = text.split("\n")
    if not lines or lines[0].strip() != "+++":
        raise AuthorError(
            rel,
            1,
            "a chapter starts with front matter: a line '+++', TOML fields "
            "(title, slug, order, series, summary, sources), and another '+++'",
        )
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "+++")
    except StopIteration:
        raise AuthorError(
            rel,
            1,
            "front matter opened with '+++' is never closed; add a line '+++' after its last field",
        ) from None
    meta, meta_lines = _front_matter(rel, lines[1:end])
    body = _blocks(rel, lines, end + 1)
    return Chapter(rel, meta, meta_lines, body, text)


def _text(rel, path):
    """The chapter's text: a UTF-8 file (a byte-order mark is allowed) inside chapters/,
    small enough to read quickly."""
    if path.is_symlink():
        raise AuthorError(
            rel, 1, "this chapter is a symbolic link; a chapter must be a file in chapters/"
        )
    if not path.is_file():
        raise AuthorError(
            rel,
            1,
            "this chapter is not a file (a folder?); a chapter is a file NAME.md in chapters/",
        )
    data = path.read_bytes()
    if len(data) > MAX_BYTES:
        raise AuthorError(
            rel,
            1,
            f"this chapter has {len(data):,} bytes, more than the {MAX_BYTES:,} a chapter may "
            "have; split it into chapters",
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise AuthorError(
            rel,
            line,
            f"this file is not UTF-8 text (byte 0x{data[e.start]:02x} cannot be read); "
            "save it as UTF-8",
        ) from None


def _front_matter(rel, lines):
    try:
        meta = tomllib.loads("\n".join(lines))
    except RecursionError:
        raise AuthorError(
            rel, 2, "front matter nests tables or lists too deeply; it holds only flat fields"
        ) from None
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column \d+\)", str(e))
        line = int(m.group(1)) + 1 if m else 2
        reason = re.sub(r"\s*\(at (line|end of document).*\)", "", str(e))
        raise AuthorError(
            rel, line, f"front matter is not valid TOML: {reason}{_hint(lines, line)}"
        ) from None
    meta_lines = {}
    for i, text in enumerate(lines):
        m = re.match(r"\s*([A-Za-z_][\w-]*)\s*=", text)
        if m and m.group(1) not in meta_lines:
            meta_lines[m.group(1)] = i + 2
    for key in meta:
        if key not in FRONT_FIELDS:
            raise AuthorError(
                rel,
                meta_lines.get(key, 2),
                f"unknown front matter field '{key}'{suggest(key, FRONT_FIELDS)}; "
                f"the fields are {', '.join(FRONT_FIELDS)}",
            )
    for key, kind in FRONT_FIELDS.items():
        if key not in meta:
            raise AuthorError(
                rel, 1, f"front matter is missing '{key}'; add a line such as {_example(key)}"
            )
        value, line = meta[key], meta_lines.get(key, 2)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise AuthorError(rel, line, f"'{key}' must be {_kind(kind)}, e.g. {_example(key)}")
    if not SLUG.fullmatch(meta["slug"]):
        raise AuthorError(
            rel,
            meta_lines["slug"],
            f"slug '{meta['slug']}' must be lower-case letters, digits and "
            'single hyphens, e.g. slug = "many-heads"',
        )
    if meta["slug"] in RESERVED_SLUGS:
        raise AuthorError(
            rel,
            meta_lines["slug"],
            f"slug '{meta['slug']}' is the name of a page the build writes itself "
            f'({meta["slug"]}.html); choose another, e.g. slug = "many-heads"',
        )
    if meta["order"] < 1:
        raise AuthorError(
            rel, meta_lines["order"], "order must be 1 or more: it places the chapter in the list"
        )
    if not meta["sources"] or not all(isinstance(s, str) and s.strip() for s in meta["sources"]):
        raise AuthorError(
            rel,
            meta_lines["sources"],
            "sources must be a non-empty list of strings, one per work cited",
        )
    return meta, meta_lines


def _hint(lines, line):
    """How to fix a TOML error at LINE of the file: where a value is unquoted text, quote it
    (TOML takes single quotes too, but the chapters use double quotes)."""
    text = lines[line - 2] if 2 <= line < len(lines) + 2 else ""
    m = re.match(r"\s*[A-Za-z_][\w-]*\s*=\s*(\S.*)", text)
    value = m.group(1) if m else ""
    if value and not re.match(r"[\"'\[{]|[+-]?[\d.]|(true|false|inf|nan)\b", value):
        return '; put text in double quotes, e.g. title = "My chapter"'
    return ""


def _kind(kind):
    return {str: "a string in quotes", int: "a whole number", list: "a list of strings"}[kind]


def _example(key):
    return {
        "title": 'title = "Many heads looking at once"',
        "slug": 'slug = "many-heads"',
        "order": "order = 1",
        "series": 'series = "Chapter 1 · Attention"',
        "summary": 'summary = "One sentence on what the reader learns."',
        "sources": 'sources = ["Vaswani et al. (2017). Attention is all you need."]',
    }[key]


def _blocks(rel, lines, start):
    """Split the body into Markdown pieces and Blocks, nesting where a block allows it."""
    root = Block("", "", start, children=[])
    stack = [root]
    md, md_start, fence = [], start + 1, None

    def flush():
        nonlocal md
        if md and any(t.strip() for t in md):
            stack[-1].children.append((md_start, "\n".join(md)))
        md = []

    def keep(n, text, holds_md):
        nonlocal md_start
        if not holds_md:
            stack[-1].lines.append((n, text))
            return
        if not md:
            md_start = n
        md.append(text)

    for idx in range(start, len(lines)):
        n, text = idx + 1, lines[idx]
        top = stack[-1]
        holds_md = top is root or BLOCKS[top.name][1]
        if fence:
            if text.lstrip().startswith(fence):
                fence = None
            keep(n, text, holds_md)
            continue
        if top.name == "cell":
            if text.strip() == "```":
                stack.pop()
            else:
                top.lines.append((n, text))
            continue
        live = LIVE_CELL.match(text)
        if live and holds_md:
            flush()
            block = Block("cell", live.group(1), n)
            top.children.append(block)
            stack.append(block)
            continue
        opened, closed = OPEN.match(text), CLOSE.match(text)
        if opened and opened.group(1) == "cell":
            raise AuthorError(
                rel,
                n,
                "a live cell is written as a fenced block opened with ```python live, "
                "not with ':::'",
            )
        if opened:
            name, args = opened.groups()
            if name not in BLOCKS:
                names = [b for b in BLOCKS if b != "cell"]
                raise AuthorError(
                    rel,
                    n,
                    f"unknown block '{name}'{suggest(name, names)}; "
                    f"the blocks are {', '.join(names)}",
                )
            if not holds_md:
                raise AuthorError(
                    rel,
                    n,
                    f"a '{name}' block cannot sit inside '{top.name}' (opened at line {top.line}); "
                    f"close '{top.name}' with ':::' first",
                )
            if name == "recap" and top is not root:
                raise AuthorError(
                    rel,
                    n,
                    f"a recap ends the chapter, so it cannot sit inside '{top.name}' "
                    f"(opened at line {top.line}); close '{top.name}' with ':::' first",
                )
            if not args and name not in OPTIONAL_ARGS:
                raise AuthorError(rel, n, f"'::: {name}' needs {BLOCKS[name][0]} on the same line")
            flush()
            if len(stack) > MAX_DEPTH:
                raise AuthorError(
                    rel,
                    n,
                    f"blocks nest more than {MAX_DEPTH} deep here; close some with ':::' first",
                )
            block = Block(name, args, n)
            top.children.append(block)
            stack.append(block)
        elif closed:
            if top is root:
                raise AuthorError(
                    rel, n, "':::' closes a block, but no block is open here; remove it"
                )
            flush()
            stack.pop()
        else:
            if FENCE.match(text.lstrip()):
                fence = FENCE.match(text.lstrip()).group(1)
            keep(n, text, holds_md)
    if len(stack) > 1:
        b = stack[-1]
        if b.name == "cell":
            raise AuthorError(
                rel,
                b.line,
                "live cell opened here with ```python live is never closed; "
                "add a line ``` after its code",
            )
        raise AuthorError(
            rel,
            b.line,
            f"block '{b.name}' opened here is never closed; add a line ':::' after its content",
        )
    flush()
    _recap_last(rel, root.children)
    return root.children


def _recap_last(rel, pieces):
    """A chapter has at most one recap, and nothing follows it."""
    recaps = [i for i, p in enumerate(pieces) if isinstance(p, Block) and p.name == "recap"]
    if len(recaps) > 1:
        raise AuthorError(
            rel,
            pieces[recaps[1]].line,
            f"a chapter has one recap; the first is at line {pieces[recaps[0]].line}",
        )
    if recaps and recaps[0] < len(pieces) - 1:
        after = pieces[recaps[0] + 1]
        if isinstance(after, Block):
            line = after.line
        else:  # a Markdown piece may start with blank lines: name the line of its first words
            first, text = after
            line = first + next(i for i, t in enumerate(text.split("\n")) if t.strip())
        raise AuthorError(
            rel,
            pieces[recaps[0]].line,
            f"a recap ends the chapter, but line {line} comes after it; "
            "move the recap below everything else",
        )


def reading_path(chapters):
    """(the chapters readers walk through in order, the appendices) of chapters sorted by order."""
    path = [c for c in chapters if c.meta["order"] < APPENDIX_ORDER]
    return path, [c for c in chapters if c.meta["order"] >= APPENDIX_ORDER]


def fields(rel, block, spec):
    """'name: value' lines of a block -> dict, checked against spec {name: required}."""
    out, where = {}, {}
    for n, text in block.lines:
        if not text.strip():
            continue
        m = re.match(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$", text)
        if not m:
            raise AuthorError(
                rel,
                n,
                f"in a '{block.name}' block each line is 'field: value'; got {text.strip()!r}",
            )
        key, value = m.groups()
        if key not in spec:
            raise AuthorError(
                rel,
                n,
                f"unknown {block.name} field '{key}'{suggest(key, spec)}; "
                f"the fields are {', '.join(spec)}",
            )
        if key in out:
            raise AuthorError(rel, n, f"field '{key}' is given twice (first at line {where[key]})")
        out[key], where[key] = value.strip(), n
    for key, required in spec.items():
        if required and not out.get(key):
            raise AuthorError(rel, block.line, f"'{block.name}' block needs a field '{key}: …'")
    return out, where
