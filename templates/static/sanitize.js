// Python's markup is data: whatever a figure's render returns (or a worker answers) reaches the
// page only as the elements and attributes the figure kit emits (toymodels/page/kit/,
// toymodels/page/html.py), kept by DOMPurify (npm, pinned by the build) configured to the
// allow-list below. Everything else is dropped before the markup is morphed in: scripts, <meta>
// (a refresh navigates the page away), <base>, <iframe>, <style>, <use>, <img>, every on*
// attribute, style=, form actions, links anywhere but within the page, and any url() but one to
// a part of the same markup (an SVG marker).
// sitebuild/authoring/sanitizer.py reads the lists and patterns onTheList checks, by their names:
// the markup the build puts in pages itself, and its stored answers, must pass them.

import DOMPurify from "./purify.js";

// the kit's elements: HTML, then SVG (lower case, as DOMPurify compares them)
export const TAGS = [
  "a", "abbr", "b", "br", "button", "caption", "code", "dd", "div", "dl", "dt", "em", "fieldset",
  "form", "h3", "h4", "h5", "i", "input", "kbd", "label", "legend", "li", "meter", "noscript",
  "ol", "optgroup", "option", "output", "p", "pre", "progress", "q", "s", "section", "select",
  "small", "span", "strong", "sub", "sup", "table", "tbody", "td", "textarea", "tfoot", "th",
  "thead", "tr", "u", "ul",
  "svg", "g", "defs", "marker", "rect", "circle", "ellipse", "line", "path", "polygon",
  "polyline", "text", "tspan", "title", "desc",
];

// the kit's attributes, besides every data-* and aria-* one
export const ATTRIBUTES = [
  "class", "id", "role", "hidden", "tabindex", "title", "lang", "dir", "href",
  "for", "name", "type", "value", "min", "max", "step", "low", "high", "optimum", "maxlength",
  "minlength", "placeholder", "spellcheck", "autocomplete", "autocapitalize", "inputmode",
  "disabled", "selected", "checked", "readonly", "required", "multiple", "size", "rows", "cols",
  "wrap", "scope", "colspan", "rowspan", "headers", "label",
  "viewbox", "width", "height", "x", "y", "x1", "x2", "y1", "y2", "cx", "cy", "r", "rx", "ry",
  "dx", "dy", "d", "points", "transform", "text-anchor", "dominant-baseline", "font-size",
  "stroke-width", "fill", "stroke", "opacity", "fill-opacity", "stroke-opacity",
  "stroke-dasharray", "refx", "refy", "markerwidth", "markerheight", "markerunits", "orient",
  "marker-start", "marker-mid", "marker-end", "preserveaspectratio", "xmlns",
];

// DOMPurify's guard against clobbering (SANITIZE_DOM) would drop the kit's own name="length"
// (a form's property); instead, only form controls may carry a name, and a control's name
// reaches no property of the document, only of its form, which the page reads through
// FormData. Its guard against markup that changes when written out and read again
// (SAFE_FOR_XML) drops a <noscript>'s text; the nodes go into the page as they are, never
// written out. The configuration is set once: given to each call, it is parsed each time.
const FIELDS = new Set(["input", "select", "textarea", "button", "output", "fieldset"]);
const purify = DOMPurify(window);
purify.setConfig({
  ALLOWED_TAGS: TAGS,
  ALLOWED_ATTR: ATTRIBUTES,
  ALLOW_DATA_ATTR: true,
  ALLOW_ARIA_ATTR: true,
  SANITIZE_DOM: false,
  SAFE_FOR_XML: false,
  RETURN_DOM_FRAGMENT: true,
});

// a link goes only to a part of the page. SVG's presentation attributes are CSS: their values
// may hold no quote, colon, slash or escape, so that a url() there can name only a part of the
// markup (url(#arrow)), never a file
const CSS_VALUED = new Set([
  "fill", "stroke", "opacity", "fill-opacity", "stroke-opacity", "stroke-width", "stroke-dasharray",
  "font-size", "text-anchor", "dominant-baseline", "transform", "marker-start", "marker-mid",
  "marker-end",
]);
const PLAIN_CSS = /^[\w\s.,%#()+-]*$/;
// the rules above for one attribute (lower-case NAME, VALUE) of ELEMENT, beyond its name
function valueAllowed(element, name, value) {
  if (name === "href") return value.trim().startsWith("#");
  if (name === "name") return FIELDS.has(element.localName);
  return !CSS_VALUED.has(name) || PLAIN_CSS.test(value);
}
purify.addHook("uponSanitizeAttribute", (node, data) => {
  const name = data.attrName;
  // " " stays " ", untrimmed
  if (name.startsWith("data-")) data.attrValue = node.getAttribute(name);
  if (!valueAllowed(node, name, data.attrValue)) data.keepAttr = false;
});

// Whether every element and attribute of the parsed nodes is on the allow-list already, as the
// kit's own markup always is: then DOMPurify would change nothing, and its walk (about ten times
// the parse: bench/sanitize.py) is spared. Anything else goes through DOMPurify.
const TAG_SET = new Set(TAGS);
const ATTRIBUTE_SET = new Set(ATTRIBUTES);
const NAMESPACES = new Set(["http://www.w3.org/1999/xhtml", "http://www.w3.org/2000/svg"]);
const DATA_OR_ARIA = /^(data-[-\w.\u00B7-\uFFFF]+|aria-[-\w]+)$/;
function onTheList(nodes) {
  const walk = document.createTreeWalker(nodes, NodeFilter.SHOW_ELEMENT);
  for (let el = walk.nextNode(); el; el = walk.nextNode()) {
    if (!TAG_SET.has(el.localName) || !NAMESPACES.has(el.namespaceURI)) return false;
    for (const { name, value } of el.attributes) {
      const lower = name.toLowerCase();
      const listed = ATTRIBUTE_SET.has(lower) || DATA_OR_ARIA.test(lower);
      if (!listed || !valueAllowed(el, lower, value)) return false;
    }
  }
  return true;
}

// Python's markup -> a fragment holding only what the kit emits. The markup is parsed as the
// page parses it, in a <template> (inert: nothing in it runs or loads), so that a <noscript>
// holds text as on the page; then, unless it holds only what the list allows, DOMPurify walks a
// copy of the nodes
export function clean(html) {
  const template = document.createElement("template");
  template.innerHTML = html;
  return onTheList(template.content) ? template.content : purify.sanitize(template.content);
}
