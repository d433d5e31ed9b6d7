// What a reader's action changed where they are not looking, said beside the control: a tap
// never moves the tapped control (figures.js keeps it where it was, whatever changed above it),
// and the page never scrolls on a tap; what it changed out of sight is said in a line under the
// control, with a button that goes there. A text box the figure wrote on says what it wrote.

import { TYPED } from "./controls.js";

// whether EL is on the screen now (at least in part)
export const inView = (el) => {
  const r = el.getBoundingClientRect();
  return r.bottom > 0 && r.top < innerHeight && r.height > 0;
};

const smooth = () => (matchMedia("(prefers-reduced-motion: reduce)").matches ? "auto" : "smooth");

// the heading of the section a slot stands in, to name it in a note
function sectionOf(slot) {
  for (let el = slot.previousElementSibling; el; el = el.previousElementSibling) {
    if (/^H[2-4]$/.test(el.tagName)) return el.textContent.trim();
  }
  return "Its view";
}

// The note for the control AT (as redrawn) of FIGURE ({el, areas}: the figure and its slots),
// acted on in ORIGIN (an area) as ACT says ({typing, newSummary}); CHANGES: area -> the parts
// that changed (morph.js's swap())
export function showEffects(figure, at, changes, origin, act) {
  const changed = figure.areas.filter((a) => a !== origin && changes.get(a).length);
  // a slot's control that changed its figure (or another slot) out of sight says so beside it;
  // the figure's own controls do not: its slots are the prose's companions, read in their turn
  const away = origin === figure.el ? [] : changed.filter((a) => !inView(a));
  if (!away.length) {
    // in the control's own area: the parts that changed, less the control's own group
    // (asked lazily: a map's every cell can change, and each question is a layout check)
    if (act.typing || !inView(at)) return;
    const group = at.closest("[role=group], ul, ol, form, fieldset, table") || at;
    const apart = (p) => p.isConnected && !p.contains(group) && !group.contains(p);
    const parts = changes.get(origin).filter(apart);
    const part = parts.some(inView) ? null : parts.find((p) => p.getClientRects().length);
    if (part) sayWhere(figure, at, part, "What this changed is {where}.");
    return;
  }
  // the figure when what it says changed (its summary: the news), else the part nearest the
  // control; the figure's summary is repeated only when it changed
  const far = (a) => Math.abs(a.getBoundingClientRect().top - at.getBoundingClientRect().top);
  const closer = (a, b) => (far(b) < far(a) ? b : a);
  const target = act.newSummary && away.includes(figure.el) ? figure.el : away.reduce(closer);
  if (target === figure.el) {
    const caption = figure.el.querySelector("figcaption")?.textContent;
    const name = caption?.split("·")[0].trim() || "The figure";
    const now = figure.el.querySelector("[data-summary]").textContent;
    const news = act.newSummary ? `now: ${now}` : "changed too.";
    sayWhere(figure, at, target, `${name} ({where}) ${news}`);
  } else sayWhere(figure, at, target, `“${sectionOf(target)}” ({where}) changed too.`);
}

// a note after AT's group, TEXT with {where} made "above" or "below", and a button that
// scrolls to TARGET; the figure's last such note goes
function sayWhere(figure, at, target, text) {
  const note = document.createElement("p");
  note.className = "mh-effect";
  note.setAttribute("role", "status");
  const where = target.getBoundingClientRect().top < 0 ? "above" : "below";
  note.append(`${text.replace("{where}", where)} `);
  const go = document.createElement("button");
  go.type = "button";
  go.className = "mh-effect-go";
  go.textContent = where === "above" ? "Show it ↑" : "Show it ↓";
  go.addEventListener("click", () => {
    const block = target.offsetHeight > innerHeight ? "start" : "nearest";
    target.scrollIntoView({ block, behavior: smooth() });
  });
  note.append(go);
  figure.areas.forEach((a) => a.querySelectorAll(".mh-effect").forEach((n) => n.remove()));
  // after the control's group; a cell's, after its table (and the box it scrolls in), never
  // in the table's row, which it would widen
  let place = at.closest("form, [role=group], .mh-pick, fieldset, table") || at;
  const box = place.parentElement;
  if (place.matches("table") && box.childElementCount === 1) {
    if (/auto|scroll/.test(getComputedStyle(box).overflowX)) place = box;
  }
  place.after(note);
}

// A text box in EL that the figure wrote on ("Write on") shows its end, and what was written.
// BEFORE: each box's text before the redraw, by its data-fk; TYPING: the box the reader typed in
export function showWritten(el, before, typing) {
  for (const box of el.querySelectorAll(TYPED)) {
    const old = before.get(box.dataset.fk);
    if (box === typing || old === undefined) continue;
    if (box.value.length <= old.length || !box.value.startsWith(old)) continue;
    box.scrollLeft = box.scrollWidth;
    const note = document.createElement("p");
    note.className = "mh-wrote";
    note.setAttribute("role", "status");
    note.textContent = `Written on: “${box.value.slice(old.length)}”`;
    (box.closest("form") || box).after(note);
  }
}
