// Python's markup into a figure's areas (its body and its slots) by changing only what differs
// (morphdom): a tap that moves a mark leaves the rest of the figure, its layout and paint, as
// they were, and the reader's focus, caret and undo stay where they are. An area whose markup is
// the one it was last drawn from is left as it is, and an answer worked out ahead comes with its
// markup parsed (answers.js), so a tap only compares and moves nodes. A slot the browser is not
// drawing (far from the view) waits until after the tap's paint (idle.js). A printed page shows
// the pre-rendered figure, whatever the reader did on screen.

import { TYPED } from "./controls.js";
import { later } from "./idle.js";
import morphdom from "./morphdom.js";
import { clean } from "./sanitize.js";

// classes the page puts on Python's markup (scrollers.js): a redraw keeps them
const PAGE_CLASSES = ["mh-more-left", "mh-more-right", "mh-scrolls", "mh-wide-math"];
const ownText = (el) =>
  [...el.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.data).join("");

// whether `el` itself (its attributes, its own text, how many children) differs from `to`
function differs(el, to) {
  if (el.attributes.length !== to.attributes.length) return true;
  if (el.childNodes.length !== to.childNodes.length) return true;
  for (const { name, value } of to.attributes) if (el.getAttribute(name) !== value) return true;
  return ownText(el) !== ownText(to);
}

// the markup each area was last made from: an area given the same markup again is left as it is
const drawnFrom = new WeakMap();

// Make `area`'s content Python's markup `html`, changing only what differs. Returns the parts
// that changed: each element whose own attributes or text changed, and each one added; with
// `every` false, only the first (the caller only asks whether anything changed).
// `parsed` holds markup already parsed (html -> fragment); a fragment is used once.
function morph(area, html, every = true, parsed = null) {
  // the notes of the last action go
  area.querySelectorAll(".mh-effect, .mh-wrote").forEach((n) => n.remove());
  if (drawnFrom.get(area) === html) return [];
  drawnFrom.set(area, html);
  const to = area.cloneNode(false);
  const nodes = parsed?.get(html);
  parsed?.delete(html);
  to.append(nodes || fragment(html));
  const changed = [];
  const added = new Set();
  morphdom(area, to, {
    childrenOnly: true,
    // a text box is found again by its key, wherever it moved: the reader's own box stays
    getNodeKey: (node) => node.id || (node.matches?.(TYPED) ? node.dataset.fk : undefined),
    onBeforeElUpdated(el, next) {
      for (const c of PAGE_CLASSES) if (el.classList.contains(c)) next.classList.add(c);
      if (el.isEqualNode(next)) return false;
      if ((every || !changed.length) && differs(el, next)) changed.push(el);
      return true;
    },
    onNodeAdded(node) {
      if (node.nodeType === Node.ELEMENT_NODE && !added.has(node.parentNode)) changed.push(node);
      added.add(node);
    },
  });
  return changed;
}

// Python's markup -> nodes, keeping only the elements and attributes the figure kit emits
// (sanitize.js): a live cell that changes a figure's render, or the worker's answers, cannot
// put a <meta> refresh, a script or a handler into the page
export function fragment(html) {
  return clean(html);
}

// whether the browser is skipping a slot's content (content-visibility: auto, far from the view)
const skipped = (slot) =>
  slot.firstElementChild?.checkVisibility?.({ contentVisibilityAuto: true }) === false;

// A figure EL's areas: its body, its summary and its SLOTS
export class Areas {
  constructor(el, slots) {
    this.el = el;
    this.body = el.querySelector("[data-body]");
    this.slots = slots;
    this.owed = new Map(); // slot -> {html, nodes}: markup drawn once the slot nears the view
    for (const slot of slots) {
      slot.addEventListener("contentvisibilityautostatechange", (e) => {
        if (!e.skipped) this.payOwed(slot);
      });
    }
    const copy = (area) => [...area.childNodes].map((n) => n.cloneNode(true));
    this.printables = [this.body, ...slots].map((area) => ({ area, first: copy(area) }));
  }

  // RESULT's markup into the figure, its summary and its slots (a slot out of sight later).
  // -> area -> the parts that changed: every one in ORIGIN, the area the action came from;
  // elsewhere, whether any did. Sets ACT.newSummary: whether the summary changed. PARSED: the
  // markup parsed ahead (parse())
  swap(result, origin, parsed, act) {
    const away = this.slots.filter((slot) => slot !== origin && skipped(slot)); // before any change
    const changes = new Map([[this.el, morph(this.body, result.html, origin === this.el, parsed)]]);
    const said = this.el.querySelector("[data-summary]");
    act.newSummary = said.textContent !== result.summary;
    said.textContent = result.summary;
    for (const slot of this.slots) {
      const html = result.slots[slot.dataset.slot];
      if (html === undefined) changes.set(slot, []);
      else if (away.includes(slot)) changes.set(slot, this.owe(slot, html, parsed));
      else {
        this.owed.delete(slot);
        changes.set(slot, morph(slot, html, origin === slot, parsed));
      }
    }
    return changes;
  }

  // A slot the browser is not drawing (content-visibility: auto, far from the view) is redrawn
  // after the paint, in a gap between frames, or as soon as it nears the view; returns whether
  // it will change
  owe(slot, html, parsed) {
    const nodes = parsed?.get(html);
    parsed?.delete(html);
    if (drawnFrom.get(slot) === html) { // back to what it shows
      this.owed.delete(slot);
      return [];
    }
    if (!this.owed.has(slot)) later(() => this.payOwed(slot)); // which draws the newest owed
    this.owed.set(slot, { html, nodes });
    return [slot];
  }

  payOwed(slot) {
    const owed = this.owed.get(slot);
    if (!owed) return;
    this.owed.delete(slot);
    morph(slot, owed.html, false, owed.nodes && new Map([[owed.html, owed.nodes]]));
    slot.dispatchEvent(new CustomEvent("mh:slotdrawn", { bubbles: true })); // scrollers.js
  }

  // the markup of an answer worked out ahead, parsed, less what its area already shows (morph
  // leaves that area alone)
  parse(result) {
    const shown = new Set([this.body, ...this.slots].map((area) => drawnFrom.get(area)));
    const fresh = [result.html, ...Object.values(result.slots)].filter((html) => !shown.has(html));
    return new Map(fresh.map((html) => [html, fragment(html)]));
  }

  // ON: the areas as the build drew them, for printing; off: as they were on screen
  printView(on) {
    for (const p of this.printables) {
      drawnFrom.delete(p.area);
      if (on) {
        p.now = [...p.area.childNodes];
        p.area.replaceChildren(...p.first.map((n) => n.cloneNode(true)));
      } else if (p.now) {
        p.area.replaceChildren(...p.now);
        p.now = null;
      }
    }
  }
}
