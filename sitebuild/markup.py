"""Markdown to HTML for chapter prose: Python-Markdown, TeX maths to MathML, and
{{ toymodels.… }} values.

Maths is converted at build time, so pages need no maths JavaScript. A value
macro such as {{ toymodels.many_heads.model.D_HEAD }} puts a number computed by code into
prose, so no number in the text has to be typed by hand.
"""

import importlib
import re

import markdown
from latex2mathml.converter import convert as tex_to_mathml

from .chapters import AuthorError

TOKENS = re.compile(
    r"(?P<code>^(?P<f>```|~~~).*?^(?P=f)|`[^`\n]+`)"
    r"|(?P<dollar>\\\$)"
    r"|\$\$(?P<block>.+?)\$\$"
    r"|(?<![\w$])\$(?P<inline>[^\s$](?:[^$\n]*?[^\s$])?)\$(?![\w$])",
    re.M | re.S,
)
VALUES = re.compile(
    r"(?P<code>^(?P<f>```|~~~).*?^(?P=f)|`[^`\n]+`)|\{\{\s*(?P<value>[\w.]+)\s*\}\}", re.M | re.S
)
HOLD = "MHHELD{}X"  # letters only: Markdown and SmartyPants leave it alone
HELD = re.compile(r"(<p>)?MHHELD(\d+)X(</p>)?")


def value(name):
    """'toymodels.many_heads.model.D_HEAD' -> its value as text; raises LookupError with what
    went wrong."""
    module, _, attr = name.rpartition(".")
    if not module.startswith("toymodels"):
        raise LookupError(
            "values come from toymodels/, e.g. {{ toymodels.many_heads.model.D_HEAD }}; "
            f"got '{name}'"
        )
    try:
        v = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as e:
        raise LookupError(f"no value '{name}': {e}") from None
    v = v() if callable(v) else v
    return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)


class Prose:
    """One Markdown converter for a chapter, so heading ids stay unique across its pieces."""

    def __init__(self, rel):
        self.rel = rel
        self.md = markdown.Markdown(
            extensions=["extra", "toc", "sane_lists", "smarty"], output_format="html"
        )

    def _values(self, text, line):
        """Replace {{ toymodels.… }} with the value, outside code, before maths is read."""

        def sub(m):
            if m.group("value") is None:
                return m.group(0)
            try:
                return value(m.group("value")).replace("&", "&amp;").replace("<", "&lt;")
            except LookupError as e:
                raise AuthorError(self.rel, line + text.count("\n", 0, m.start()), str(e)) from None

        return VALUES.sub(sub, text)

    def _hold(self, text, line):
        text = self._values(text, line)
        held = []

        def sub(m):
            if m.group("code") is not None:
                return m.group(0)
            at = line + text.count("\n", 0, m.start())
            try:
                if m.group("dollar"):
                    out = "&#36;"
                else:
                    tex = m.group("block") or m.group("inline")
                    out = tex_to_mathml(
                        tex.strip(), display="block" if m.group("block") else "inline"
                    )
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
        """Markdown that may hold paragraphs, lists, headings -> HTML."""
        text, held = self._hold(text, line)
        self.md.reset()
        html = self.md.convert(text)
        html = html.replace(
            "<pre>", '<pre tabindex="0">'
        )  # a code block that scrolls sideways must take focus
        return HELD.sub(
            lambda m: (m.group(1) or "") + held[int(m.group(2))] + (m.group(3) or ""), html
        )

    def inline(self, text, line):
        """One line of Markdown (a caption, a choice) -> HTML without the wrapping <p>."""
        html = self.block(text, line)
        if html.startswith("<p>") and html.endswith("</p>") and html.count("<p>") == 1:
            html = html[3:-4]
        return html
