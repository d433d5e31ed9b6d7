// Boxes that scroll sideways (a wide map or table, a formula, code, a row of buttons): a faded
// edge shows there is more that way, and a map's selected column (the selected word's own, or a
// marked header), or a row's pressed button, is scrolled into the box's visible part whenever the
// box is drawn or resized.
// A block the browser has not laid out yet (content-visibility: the character model's sections,
// charmodel.css) is left alone until it comes near the screen: reading its boxes would lay it out.

const SCROLLERS = [
  ".mh-head", ".mh-slot", ".rh-scroll", ".cm-scroll", ".cm-strips", "math[display=block]", "pre",
  ".mh-pick", ".mh-steps", ".mh-words", ".rh-sentences", ".mh-body > table", ".mh-stage > table",
  ".mh-scrolls",
].join(", ");
const EDGE = 1;
const TEXT_BLOCKS = "p, li, dd, dt, td, th, summary, figcaption, blockquote, div";
const laidOut = (el) => el.checkVisibility({ contentVisibilityAuto: true });

function mark(box) {
  const more = box.scrollWidth - box.clientWidth > EDGE;
  box.classList.toggle("mh-more-left", more && box.scrollLeft > EDGE);
  const right = box.scrollLeft + box.clientWidth < box.scrollWidth - EDGE;
  box.classList.toggle("mh-more-right", more && right);
}

// the selected column: a header marked .sel, or in a map the cell of the selected row that is
// that row's own word (the map's diagonal); only the box's own, never one in a box inside it
// (a slot holding a table in a box of its own would be scrolled away from its text)
const own = (box, el) => (el && el.parentElement.closest(SCROLLERS) === box ? el : null);
function selectedCell(box) {
  const marked = own(box, box.querySelector("thead th.sel, td.sel"));
  if (marked) return marked;
  const row = own(box, box.querySelector("tbody tr.sel"));
  if (!row) return null;
  const i = [...row.parentElement.children].indexOf(row);
  return row.querySelectorAll("td")[i] || null;
}

// in a row of buttons (tokens, heads, choices), the pressed one: brought into view only when it
// is wholly out of it, since a button the reader taps is in view, and a tap never moves it
const pressed = (box) => box.querySelector(":scope > [aria-pressed=true]");

function reveal(box) {
  if (box.scrollWidth - box.clientWidth <= EDGE) return;
  const button = pressed(box);
  const cell = button || selectedCell(box);
  if (!cell) return;
  const b = box.getBoundingClientRect();
  const c = cell.getBoundingClientRect();
  if (button && c.right > b.left && c.left < b.right) return;
  const room = Math.min(48, Math.max(0, (b.width - c.width) / 2));
  if (c.left < b.left + room) box.scrollLeft -= b.left + room - c.left;
  else if (c.right > b.right - room) box.scrollLeft += c.right - (b.right - room);
}

export function setupScrollers() {
  const seen = new WeakSet();
  const resized = new ResizeObserver((entries) => entries.forEach((e) => {
    reveal(e.target);
    mark(e.target);
  }));
  // a formula in a line of text wider than the text's column scrolls in a box of its own
  const fitMath = (root) => {
    for (const m of root.querySelectorAll("math:not([display=block])")) {
      if (m.closest("button, a, .mh-figure .mh-controls") || !laidOut(m)) continue;
      m.classList.remove("mh-scrolls", "mh-wide-math");
      const block = m.parentElement.closest(TEXT_BLOCKS);
      const box = block && block.getBoundingClientRect();
      const wider = box && box.width && m.getBoundingClientRect().right > box.right + 1;
      if (wider) m.classList.add("mh-scrolls", "mh-wide-math");
    }
  };
  let width = innerWidth;
  addEventListener("resize", () => {
    if (innerWidth === width) return;
    width = innerWidth;
    refresh(document);
  });
  // every box in ROOTS, and each root that is a box itself
  const scan = (...roots) => {
    for (const root of roots) {
      const itself = root.matches?.(SCROLLERS) ? [root] : [];
      for (const box of [...itself, ...root.querySelectorAll(SCROLLERS)]) {
        if (!seen.has(box)) {
          seen.add(box);
          resized.observe(box);
        }
        if (!laidOut(box)) continue;
        reveal(box);
        mark(box);
      }
    }
  };
  // a part of the page laid out afresh: its formulas and its boxes
  const refresh = (root) => {
    fitMath(root);
    scan(root);
  };
  const scrolled = (e) => {
    if (e.target instanceof Element && e.target.matches(SCROLLERS)) mark(e.target);
  };
  document.addEventListener("scroll", scrolled, { capture: true, passive: true });
  // a redraw changes only its figure and the figure's slots elsewhere in the page
  const slotsOf = (fig) => document.querySelectorAll(`[data-slot-of="${CSS.escape(fig.id)}"]`);
  document.addEventListener("mh:drawn", (e) => scan(e.target, ...slotsOf(e.target)));
  // a slot far from the view, redrawn later
  document.addEventListener("mh:slotdrawn", (e) => scan(e.target));
  document.addEventListener("toggle", (e) => refresh(e.target), true); // a "Go deeper" opened
  const near = (e) => {
    if (!e.skipped) refresh(e.target);
  };
  document.addEventListener("contentvisibilityautostatechange", near, true);
  refresh(document);
}
