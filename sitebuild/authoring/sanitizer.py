"""The rules of `templates/static/sanitize.js`, read from it, for Python's markup the build puts
into pages itself: a figure's first view in its chapter and its embed page, which no sanitizer
sees, and the build's stored answers, which `build.py check` reads.

The page lets Python's markup in unchanged only when every element and attribute is on the
kit's list (`onTheList` there); anything else DOMPurify changes. So the build refuses what
the page would change, read as a browser parses it (sitebuild/pipeline/markup.py), and markup in a
`<select>` that html5lib and Chromium read differently (markup.in_select).
"""

import functools
import json
import re
from pathlib import Path

from ..pipeline.markup import in_select, parsed

SANITIZER = Path(__file__).resolve().parents[2] / "templates" / "static" / "sanitize.js"
# the namespaces sanitize.js allows, as html5lib names them before "}": HTML's goes unnamed
NAMESPACES = ("", "{http://www.w3.org/2000/svg")
LISTS = {
    "TAGS": r"^export const TAGS = (\[.*?\]);",
    "ATTRIBUTES": r"^export const ATTRIBUTES = (\[.*?\]);",
    "FIELDS": r"^const FIELDS = new Set\((\[.*?\])\);",
    "CSS_VALUED": r"^const CSS_VALUED = new Set\((\[.*?\])\);",
}
PATTERNS = {
    "PLAIN_CSS": r"^const PLAIN_CSS = /(.*)/;$",
    "DATA_OR_ARIA": r"^const DATA_OR_ARIA = /(.*)/;$",
}


@functools.cache
def rules():
    """{name: set of names or compiled pattern} for each list and pattern of sanitize.js that
    its check `onTheList` reads (the patterns' \\w as JavaScript's: ASCII)."""
    code = SANITIZER.read_text(encoding="utf-8")
    found = {}
    for name, pattern in LISTS.items():
        listed = re.search(pattern, code, re.S | re.M).group(1)
        found[name] = set(json.loads(re.sub(r",\s*\]$", "]", listed)))
    for name, pattern in PATTERNS.items():
        found[name] = re.compile(re.search(pattern, code, re.M).group(1), re.ASCII)
    return found


def refused(html, select=True):
    """(line or None, what is wrong) for everything in Python's markup HTML that the page's
    sanitizer would drop or change (none for markup of the figure kit) and, with SELECT, for
    markup in a <select> other than its options (markup.in_select)."""
    root, errors = parsed(html)
    out = [
        (
            line,
            f"{what} inside a <select>, which browsers read differently; a <select> holds "
            "only <option> and <optgroup>",
        )
        for line, what in (in_select(errors) if select else [])
    ]
    kit = rules()
    for el in root.iter():
        if not isinstance(el.tag, str) or el.tag == "DOCUMENT_FRAGMENT":
            continue
        space, _, tag = el.tag.rpartition("}")
        tag = tag.lower()
        if tag not in kit["TAGS"] or space not in NAMESPACES:
            out.append((None, f"<{tag}>, an element the figure kit does not make"))
            continue
        for name, value in el.attrib.items():
            why = _attribute(tag, name, value, kit)
            if why:
                out.append((None, f"<{tag} {_name(name)}={value!r}>, {why}"))
    return out


def _attribute(tag, name, value, kit):
    """Why the page's sanitizer drops the attribute NAME=VALUE of TAG, or None."""
    name = _name(name)
    if name not in kit["ATTRIBUTES"] and not kit["DATA_OR_ARIA"].match(name):
        return "an attribute the figure kit does not write"
    if name == "href" and not value.strip().startswith("#"):
        return "a link out of the figure (an href starts with #)"
    if name == "name" and tag not in kit["FIELDS"]:
        return "a name on what is not a form control"
    if name in kit["CSS_VALUED"] and not kit["PLAIN_CSS"].match(value):
        return "a value with a quote, colon, slash or escape (it could name a file in url())"
    return None


def _name(attribute):
    """An attribute's name as the page reads it: lower case, with its prefix (xlink:href)."""
    space, _, name = attribute.rpartition("}")
    prefix = {
        "{http://www.w3.org/1999/xlink": "xlink:",
        "{http://www.w3.org/XML/1998/namespace": "xml:",
    }
    return (prefix.get(space, "") + name).lower()
