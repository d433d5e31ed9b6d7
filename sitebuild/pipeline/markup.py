"""Markdown to HTML for chapter prose: Python-Markdown, TeX maths to MathML, and
{{ toymodels.… }} values.

Maths is converted at build time, so pages need no maths JavaScript. A value
macro such as {{ toymodels.many_heads.model.D_HEAD }} puts a number computed by code into
prose, so no number in the text has to be typed by hand.
"""

import functools
import importlib
import inspect
import math
import numbers
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import html5lib
import markdown
import numpy
from latex2mathml.converter import convert_to_element

from toymodels import BUILD_ONLY

from ..authoring import blame, browser, limits
from ..authoring.limits import MARKDOWN_SECONDS, Overrun, time_limit
from .chapters import AuthorError, suggest

TOKENS = re.compile(
    r"(?P<code>^(?P<f>```|~~~).*?^(?P=f)|`[^`\n]+`)"
    r"|(?P<dollar>\\\$)"
    r"|\$\$(?P<block>.+?)\$\$"
    r"|(?<![\w$])\$(?P<inline>[^\s$](?:[^$\n]*?[^\s$])?)\$(?![\w$])"
    r"|(?P<lone>\$)",  # a dollar none of the above reads: maths never closed, or a price
    re.M | re.S,
)
VALUES = re.compile(
    r"(?P<code>^(?P<f>```|~~~).*?^(?P=f)|`[^`\n]+`)|\{\{\s*(?P<value>[\w.]+)\s*\}\}"
    r"|(?P<unread>(?<!\\)\{[{%])",  # Jinja's syntax, which a chapter does not run
    re.M | re.S,
)
FLOAT_DIGITS = 6  # significant digits a float value for prose may have
HOLD = "MHHELD{}X"  # letters only: Markdown and SmartyPants leave it alone
HELD = re.compile(r"(<p>)?MHHELD(\d+)X(</p>)?")


def value(name, rel="?", line=1, notes=None):
    """'toymodels.many_heads.model.D_HEAD' -> its value as text; raises LookupError with what
    went wrong. Only what a module lists in PROSE_VALUES can be read (toymodels/page/prose.py).
    A module that fails to import is an AuthorError at its own line, naming REL:LINE. Each
    warning the module's import or the value's function set off (numpy's) is added to NOTES
    as (file, line, message), at the author's line."""
    module, _, attr = name.rpartition(".")
    if not module.startswith("toymodels"):
        raise LookupError(
            "values come from toymodels/, e.g. {{ toymodels.many_heads.model.D_HEAD }}; "
            f"got '{name}'"
        )
    package = (module.split(".") + [""])[1]
    if package in BUILD_ONLY:
        raise LookupError(
            f"no value '{name}': toymodels/{package}/ is build-only; prose reads "
            "the values of a chapter's package"
        )
    try:
        with browser.traced(refuse=False):
            imported = blame.import_module(module, rel, line, notes)
    except ImportError as e:
        raise LookupError(f"no value '{name}': {e}") from None
    listed = getattr(imported, "PROSE_VALUES", ())
    if attr not in listed:
        path = blame.relative(getattr(imported, "__file__", None)) or module
        if listed:
            offer = f"; it lists {', '.join(listed)}"
        elif attr.startswith("_"):  # no value to offer for prose
            offer = "; it lists none"
        else:
            offer = (
                f'; {path} lists none: add a line PROSE_VALUES = ("{attr}",) to it, naming '
                "every value of the module that prose may read"
            )
        raise LookupError(
            f"no value '{name}': prose reads only the values a module lists in "
            f"PROSE_VALUES{suggest(attr, listed)}{offer}"
        )
    v = getattr(importlib.import_module(module), attr, None)
    if v is None:
        raise LookupError(f"no value '{name}': {module} lists '{attr}' but does not define it")
    if callable(v):
        needed = [
            p.name
            for p in inspect.signature(v).parameters.values()
            if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        if needed:
            raise LookupError(
                f"'{name}' needs arguments ({', '.join(needed)}); a value for prose takes none"
            )
        fn = v
        try:
            with blame.warnings_caught(blame.package_of(module)) as warned:
                v = blame.limited(fn)
        except (Exception, Overrun) as e:
            own, inner = blame.blamed(e, blame.package_of(module))
            if isinstance(e, Overrun):
                what = (
                    f"was still running after {limits.FIGURE_SECONDS} s, and was stopped here (an "
                    "endless loop?); a value for prose must be quick to compute"
                )
            else:
                what = f"raised {blame.exception_text(e)}{blame.reached(inner)}"
            where = own or blame.defined_at(fn) or (rel, line)
            raise AuthorError(
                *where, f"the value '{name}' (needed by {rel}:{line}) {what}"
            ) from None
        said = f"the value '{name}' (needed by {rel}:{line})"
        for note in blame.warning_notes(warned, said, blame.defined_at(fn) or (rel, line)):
            if notes is not None and note not in notes:
                notes.append(note)
    return _shown(name, v)


def _shown(name, v):
    """A value as prose shows it: a whole number with thousands separators, text as it is, a
    float only as short as the author meant (a numpy mean prints 17 digits otherwise)."""
    if isinstance(v, numbers.Integral) and not isinstance(v, (bool, numpy.bool_)):
        return f"{int(v):,}"
    if isinstance(v, numbers.Real) and not isinstance(v, (bool, numpy.bool_)):
        shown = str(v)  # numpy's own shortest digits for a float32 or float16
        number = float(shown)
        if not math.isfinite(number) or float(f"{number:.{FLOAT_DIGITS}g}") != number:
            raise LookupError(
                f"'{name}' gave the number {shown}, which prose would print with every digit; "
                f'return it rounded, as text, e.g. f"{{x:.2f}}" (a float is shown as it is '
                f"only with at most {FLOAT_DIGITS} significant digits)"
            )
    return str(v)


class Prose:
    """One Markdown converter for a chapter, so heading ids stay unique across its pieces."""

    def __init__(self, rel, notes=None):
        self.rel = rel
        self.notes = notes  # where a value's warnings are noted (value), if anywhere
        self.md = markdown.Markdown(
            extensions=["extra", "toc", "sane_lists", "smarty"], output_format="html"
        )

    def _values(self, text, line):
        """Replace {{ toymodels.… }} with the value, outside code, before maths is read."""

        def sub(m):
            at = line + text.count("\n", 0, m.start())
            if m.group("unread"):
                raise AuthorError(
                    self.rel,
                    at,
                    f"'{m.group('unread')}' here is not read: a chapter puts a value into prose as "
                    "{{ toymodels.MODULE.NAME }}, closed with '}}' on the same line, and runs no "
                    "other template syntax; write \\{ for a brace, or put it in a code span",
                )
            if m.group("value") is None:
                return m.group(0)
            try:
                found = value(m.group("value"), self.rel, at, self.notes)
                return found.replace("&", "&amp;").replace("<", "&lt;")
            except LookupError as e:
                raise AuthorError(self.rel, at, str(e)) from None

        return VALUES.sub(sub, text)

    def _hold(self, text, line):
        text = self._values(text, line)
        held = []

        def sub(m):
            if m.group("code") is not None:
                return m.group(0)
            at = line + text.count("\n", 0, m.start())
            if m.group("lone"):
                raise AuthorError(
                    self.rel,
                    at,
                    "a '$' here opens no maths: TeX goes between $…$ (no space inside either "
                    "dollar) or $$…$$; write \\$ for a plain dollar sign",
                )
            try:
                if m.group("dollar"):
                    out = "&#36;"
                else:
                    tex = m.group("block") or m.group("inline")
                    out = mathml(tex.strip(), display="block" if m.group("block") else "inline")
                    unknown = re.search(r">(\\[A-Za-z]+)<", out)
                    if unknown:
                        raise ValueError(f"unknown TeX command {unknown.group(1)}")
            except Exception as e:  # latex2mathml raises many kinds, some with no message
                reason = str(e) if isinstance(e, ValueError) and str(e) else type(e).__name__
                raise AuthorError(
                    self.rel,
                    at,
                    f"cannot read the TeX {m.group(0)!r}: {reason}; "
                    "write \\$ for a plain dollar sign",
                ) from None
            held.append(out)
            return HOLD.format(len(held) - 1)

        return TOKENS.sub(sub, text), held

    def block(self, text, line):
        """Markdown that may hold paragraphs, lists, headings -> HTML. The rules of what a
        chapter's HTML may hold are checked on the source (`_raw_html`) and on the result with
        its maths put back (`_as_parsed`, `_links`), so that TeX adds nothing but MathML."""
        source = text
        text, held = self._hold(text, line)
        self.md.reset()
        try:
            with time_limit(MARKDOWN_SECONDS):
                html = self.md.convert(text)
        except Overrun:
            raise AuthorError(
                self.rel,
                line,
                f"Markdown took more than {MARKDOWN_SECONDS} s to read the text from this line; "
                "look for a long run of [ or ` and write it as code or with \\ before each one",
            ) from None
        self._raw_html(text, line)
        html = HELD.sub(
            lambda m: (m.group(1) or "") + held[int(m.group(2))] + (m.group(3) or ""), html
        )
        self._as_parsed(html, source, line)
        self._links(html, source, line)
        # a code block that scrolls sideways must take focus
        return html.replace("<pre>", '<pre tabindex="0">')

    def inline(self, text, line):
        """One line of Markdown (a caption, a choice) -> HTML without the wrapping <p>."""
        html = self.block(text, line)
        if html.startswith("<p>") and html.endswith("</p>") and html.count("<p>") == 1:
            html = html[3:-4]
        return html

    def _raw_html(self, text, line):
        """HTML the author wrote into Markdown may use only RAW_HTML's tags and attributes."""
        prose = CODE_OR_AUTOLINK.sub(lambda m: "\n" * m.group(0).count("\n"), text)
        for tag, attributes, at in tags(prose):
            if tag not in RAW_HTML:
                raise AuthorError(
                    self.rel,
                    line + at - 1,
                    f"raw HTML <{tag}> is not allowed in a chapter; write Markdown or a block, "
                    f"or use one of the tags the author guide lists: {', '.join(sorted(RAW_HTML))}",
                )
            for name, _ in attributes:
                if name not in RAW_HTML[tag]:
                    allowed = ", ".join(RAW_HTML[tag]) or "none"
                    raise AuthorError(
                        self.rel,
                        line + at - 1,
                        f"raw HTML <{tag}> may not carry the attribute '{name}' "
                        f"(its attributes: {allowed})",
                    )

    def _as_parsed(self, html, text, line):
        """What Markdown made of the piece, its maths put back, read as a browser reads it (a
        comment such as `<!-->` ends at once, and an escaped backtick starts no code), may hold
        only PROSE_HTML's elements and attributes, and MATHML's: `_raw_html` reads the source,
        this the result."""
        for tag, attributes in elements(html):
            if tag not in PROSE_HTML and tag not in MATHML:
                raise AuthorError(
                    self.rel,
                    _line_of(text, f"<{tag}", line),
                    f"<{tag}> is not allowed in a chapter (a browser reads one in this piece's "
                    "HTML); write Markdown or a block, or use one of the tags the author guide "
                    f"lists: {', '.join(sorted(RAW_HTML))}",
                )
            maths = tag not in PROSE_HTML
            for name, value in attributes.items():
                allowed = name in PROSE_ATTRIBUTES or name in (
                    MATHML_ATTRIBUTES if maths else PROSE_HTML[tag]
                )
                if name == "style":
                    allowed = allowed and TABLE_ALIGN.match(value)
                if name.startswith("on") or not allowed:
                    how = (
                        f"TeX's \\{name} included"
                        if maths
                        else "an attribute list such as {: name=…} included"
                    )
                    raise AuthorError(
                        self.rel,
                        _line_of(text, name, line),
                        f"<{tag}> may not carry the attribute '{name}' in a chapter ({how}); a "
                        "chapter's HTML runs no script and loads nothing",
                    )

    def _links(self, html, text, line):
        """Links (a maths' \\href too) and images lead to web pages (http, https), mail, or this
        site: no javascript: or data: address."""
        for tag, attributes in elements(html):
            for name, value in attributes.items():
                if (name == "href" or (tag, name) == ("img", "src")) and not SAFE_URL.match(
                    value or ""
                ):
                    at = line + text.count("\n", 0, max(text.find(value or ""), 0))
                    raise AuthorError(
                        self.rel,
                        at,
                        f"the address '{value}' is not allowed: a link leads to https://…, "
                        "mailto:… or a page of this site",
                    )


# what an author may write as raw HTML in Markdown: tag -> its allowed attributes
RAW_HTML = {
    "abbr": ("title",),
    "br": (),
    "kbd": (),
    "mark": (),
    "small": (),
    "sub": (),
    "sup": (),
}
# what Markdown (with its extensions extra, toc, sane_lists, smarty) and RAW_HTML make of a
# chapter's prose: tag -> its attributes, besides PROSE_ATTRIBUTES'
PROSE_HTML = {
    **RAW_HTML,
    **dict.fromkeys(
        [
            "p",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "em",
            "strong",
            "code",
            "pre",
            "blockquote",
            "ul",
            "li",
            "hr",
            "dl",
            "dt",
            "dd",
            "table",
            "thead",
            "tbody",
            "tfoot",
            "tr",
            "th",
            "td",
            "sup",
            "div",
            "span",
            "del",
            "ins",
        ],
        (),
    ),
    "a": ("href",),
    "img": ("src", "alt"),
    "ol": ("start",),
    "th": ("style", "align"),
    "td": ("style", "align"),
}
PROSE_ATTRIBUTES = ("id", "class", "title")
# what latex2mathml makes of TeX: MathML's elements, and the attributes any of them may carry
# (not \style's style="…": the pages' policy ignores it)
MATHML = {
    "math",
    "menclose",
    "mfrac",
    "mi",
    "mn",
    "mo",
    "mover",
    "mpadded",
    "mphantom",
    "mroot",
    "mrow",
    "mspace",
    "msqrt",
    "mstyle",
    "msub",
    "msubsup",
    "msup",
    "mtable",
    "mtd",
    "mtext",
    "mtr",
    "munder",
    "munderover",
    "none",
}
MATHML_ATTRIBUTES = (
    "xmlns",
    "display",
    "mathvariant",
    "displaystyle",
    "scriptlevel",
    "stretchy",
    "fence",
    "largeop",
    "movablelimits",
    "form",
    "lspace",
    "rspace",
    "accent",
    "accentunder",
    "minsize",
    "maxsize",
    "symmetric",
    "columnalign",
    "columnlines",
    "rowlines",
    "columnspacing",
    "rowspacing",
    "linethickness",
    "width",
    "height",
    "depth",
    "voffset",
    "notation",
    "mathcolor",
    "mathbackground",
    "mathsize",
    "href",
)
TABLE_ALIGN = re.compile(r"^text-align: (left|right|center);$")
CODE_OR_AUTOLINK = re.compile(
    r"^(```|~~~).*?^\1|`[^`\n]+`|<(?:https?|mailto):[^>\s]*>", re.M | re.S
)
SAFE_URL = re.compile(r"^(?:https?:|mailto:|[^:]*$|[^:/?#]*[/?#])", re.I)


# a character latex2mathml writes into its tree as a reference, e.g. &#x0003C; for <
REFERENCE = re.compile(r"&#x([0-9A-Fa-f]+);")


def mathml(tex, display="inline"):
    """TeX -> MathML markup. latex2mathml's own `convert` writes the text of \\text{…} (and of
    \\mbox, \\textbf, …) and of attributes (\\color, \\href) as raw markup; here its tree
    is written out by ElementTree, which escapes every text and attribute, once the references
    latex2mathml put into the tree are read as the characters they stand for."""
    math = convert_to_element(tex, display=display)

    def char(m):
        return chr(int(m.group(1), 16))

    for el in math.iter():
        el.text = el.text and REFERENCE.sub(char, el.text)
        el.tail = el.tail and REFERENCE.sub(char, el.tail)
        for name, value in el.attrib.items():
            el.set(name, REFERENCE.sub(char, value))
    return ET.tostring(math, encoding="unicode")


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, attrs, self.getpos()[0]))

    def handle_startendtag(self, tag, attrs):
        self.found.append((tag, attrs, self.getpos()[0]))

    def handle_decl(self, decl):
        self.found.append(("!" + decl.split()[0].lower(), [], self.getpos()[0]))

    def handle_pi(self, data):
        self.found.append(("?", [], self.getpos()[0]))


def tags(html):
    """(tag, [(attribute, value)], line) for every start tag of HTML, parsed as a browser
    would read the attributes (quoted either way, or not at all)."""
    parser = _Tags()
    parser.feed(html)
    parser.close()
    return parser.found


def parsed(html, document=False):
    """HTML parsed as a browser parses it (by html5lib, which follows the HTML standard's
    parser: comments, raw text, foreign content), a document or else a fragment: -> (its root,
    an ElementTree element with tags and attributes named {namespace}name but for HTML's, and
    the parser's errors, each ((line, column), code, details)). The last few are kept, since
    checks of one markup parse it one after the other: callers read the tree, never change it."""
    return _parsed(html, bool(document))


@functools.lru_cache(maxsize=16)
def _parsed(html, document):
    parser = html5lib.HTMLParser(tree=html5lib.getTreeBuilder("etree"), namespaceHTMLElements=False)
    root = parser.parse(html) if document else parser.parseFragment(html)
    return root, parser.errors


def elements(html, document=False, text=False, root=None):
    """(tag, {attribute: value}) for every element of HTML (or of ROOT, as `parsed` made it),
    parsed as a browser parses it, a fragment unless DOCUMENT; with TEXT, (tag, attributes, the
    element's own first text). Tags and attribute names are lower case, xlink:href so named."""
    root = parsed(html, document)[0] if root is None else root
    for el in root.iter():
        if isinstance(el.tag, str) and el.tag != "DOCUMENT_FRAGMENT":
            found = _local(el.tag), {_attribute(k): v for k, v in el.attrib.items()}
            yield (*found, el.text or "") if text else found


# what html5lib says of markup in a <select> it did not keep, by the code of its parse error
IN_SELECT = {
    "unexpected-start-tag-in-select": "<{name}>",
    "unexpected-table-element-start-tag-in-select-in-table": "<{name}>",
    "unexpected-end-tag-in-select": "</{name}>",
    "unexpected-table-element-end-tag-in-select-in-table": "</{name}>",
    "unexpected-input-in-select": "an <input>, <keygen> or <textarea>",
    "unexpected-select-in-select": "another <select>",
    "eof-in-select": "the end of the markup (no </select>)",
}


def in_select(errors):
    """(line, what) for each piece of markup in a <select> other than <option> and <optgroup>
    and their text, from the ERRORS of `parsed`. html5lib 1.1 follows the HTML standard of
    2020, which drops any other tag there; Chromium, which the site targets, keeps them since
    its customizable <select> (a <meta> refresh or an <img> included), so the checks would not
    see what the reader's browser does: such markup is refused, not read."""
    return [
        (at[0], IN_SELECT[code].format(name=(details or {}).get("name", "?")))
        for at, code, details in errors
        if code in IN_SELECT
    ]


XLINK = "{http://www.w3.org/1999/xlink}"


def _local(name):
    return name.rpartition("}")[2].lower()


def _attribute(name):
    return "xlink:" + name[len(XLINK) :] if name.startswith(XLINK) else _local(name)


def _line_of(text, what, line):
    """The line of TEXT (which starts at LINE) where WHAT first appears, any case; else LINE."""
    at = text.lower().find(what.lower())
    return line + text.count("\n", 0, at) if at >= 0 else line
