"""The subset of CSS a picture of a figure carries: the rules of the page's style sheet that
style its own SVG pictures, only the properties an SVG draws with, and its variables written
out as the light page has them (a picture that leaves the site cannot count on a viewer that
knows CSS variables)."""

import re
import xml.etree.ElementTree as ET

SVG_NS = "http://www.w3.org/2000/svg"
LIGHT = {"--fg": "#1b1e23", "--muted": "#5a6270", "--line": "#d5d9e0", "--panel": "#f3f5f8"}
LIGHT |= {"--accent": "#0b5cad", "--bg": "#fdfdfc", "--l1": "#f7fbff", "--l2": "#deebf7"}
LIGHT |= {"--l3": "#c6dbef", "--l4": "#9ecae1", "--l5": "#6baed6", "--l6": "#4292c6"}
LIGHT |= {"--l7": "#2171b5", "--l8": "#08519c", "--l9": "#08306b"}
LIGHT |= {"--neg1": "#fdd0a2", "--neg2": "#fdae6b", "--neg3": "#e6550d", "--neg4": "#a63603"}
# the properties of the page's style sheet that an SVG document draws with
SVG_PROPERTIES = {
    "fill",
    "fill-opacity",
    "stroke",
    "stroke-width",
    "stroke-dasharray",
    "stroke-linecap",
    "stroke-linejoin",
    "stroke-opacity",
    "opacity",
    "color",
    "font-size",
    "font-weight",
    "font-style",
    "font-family",
    "font-variant-numeric",
    "text-anchor",
    "dominant-baseline",
    "paint-order",
    "letter-spacing",
    "text-decoration",
    "visibility",
    "overflow",
}
RULE = re.compile(r"([^{}@;]+)\{([^{}]*)\}")
COMPOUND = re.compile(r"([a-zA-Z][\w-]*|\*)?((?:\.[\w-]+)*)")
VAR = re.compile(r"var\(\s*(--[\w-]+)\s*(?:,\s*([^()]*))?\)")


def _top_rules(css):
    """(selectors, declarations) of each rule outside at-rules (@media: the dark theme, narrow
    screens and print are not the picture's; it is the light page on a wide screen)."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    out, i, depth, start = [], 0, 0, 0
    for i, ch in enumerate(css):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                block = css[start : i + 1].strip()
                if not block.startswith("@") and (m := RULE.fullmatch(block)):
                    out.append((m.group(1).strip(), m.group(2)))
                start = i + 1
        elif ch == ";" and depth == 0:
            start = i + 1  # an @import or @charset: nothing of the picture's
    return out


def _declarations(body):
    for decl in body.split(";"):
        name, _, val = decl.partition(":")
        if val.strip():
            yield name.strip().lower(), val.strip()


def _matches(chain, compounds):
    """Does the element at the end of CHAIN [(tag, classes)…] match the selector's
    COMPOUNDS [(tag, classes)…] (descendant combinators only)?"""
    *ancestors, last = compounds
    if not _compound(chain[-1], last):
        return False
    i = len(chain) - 2
    for c in reversed(ancestors):
        while i >= 0 and not _compound(chain[i], c):
            i -= 1
        if i < 0:
            return False
        i -= 1
    return True


def _compound(element, compound):
    tag, classes = element
    want_tag, want = compound
    return (want_tag in (None, "*", tag)) and want <= classes


def _parsed(selector):
    """A selector's compounds [(tag or None, {classes})], or None for one this file cannot
    match (pseudo-classes, attributes, ids, sibling combinators: states of the page)."""
    if re.search(r"[:\[#+~]", selector):
        return None
    out = []
    for part in selector.replace(">", " ").split():
        m = COMPOUND.fullmatch(part)
        if not m or not part:
            return None
        out.append((m.group(1).lower() if m.group(1) else None, set(m.group(2).split(".")) - {""}))
    return out or None


def _resolver(rules):
    """A function that writes out the variables in a CSS value as the light page has them."""
    names = dict(LIGHT)
    for _, decls in rules:
        names.update((k, v) for k, v in _declarations(decls) if k.startswith("--"))

    def resolved(text):
        for _ in range(8):
            text, n = VAR.subn(lambda m: names.get(m.group(1), m.group(2) or ""), text)
            if not n:
                break
        return text

    return resolved


def colours(markup, resolved):
    """MARKUP with the variables in its style attributes written out by RESOLVED (layout.INK)."""
    return re.sub(r'style="[^"]*"', lambda m: resolved(m.group(0)), markup)


def styles_for(body, css):
    """The rules of the page's style sheet CSS that style an element of BODY (SVG markup), with
    only the properties an SVG draws with, its variables replaced by the light theme's values:
    the picture looks as on the page, and carries nothing else of the page's."""
    rules = _top_rules(css)
    resolved = _resolver(rules)

    root = ET.fromstring(f'<svg xmlns="{SVG_NS}">{body}</svg>')
    ends = {}  # a tag or class -> the chains of the elements that have it

    def walk(el, chain):
        here = chain + ((el.tag.split("}")[-1], frozenset((el.get("class") or "").split())),)
        for key in (here[-1][0], *(f".{c}" for c in here[-1][1])):
            ends.setdefault(key, set()).add(here)
        for child in el:
            walk(child, here)

    walk(root, ())
    everything = set().union(*ends.values())
    out = []
    for selectors, decls in rules:
        props = [f"{k}:{resolved(v)}" for k, v in _declarations(decls) if k in SVG_PROPERTIES]
        keep = []
        for selector in selectors.split(",") if props else ():
            compounds = _parsed(selector.strip())
            if not compounds:
                continue
            tag, classes = compounds[-1]
            key = f".{min(classes)}" if classes else tag
            candidates = everything if key in (None, "*") else ends.get(key, ())
            if any(_matches(chain, compounds) for chain in candidates):
                keep.append(selector.strip())
        if keep:
            out.append(f"{','.join(keep)}{{{';'.join(props)}}}")
    return "".join(out)


def resolver(css):
    """What `_resolver` makes of the page's style sheet CSS: a function that writes out the
    variables in a CSS value as the light page has them."""
    return _resolver(_top_rules(css))
