// "How it works" step lists (templates/blocks.html's steps block): the step that shows a
// figure's current state, and the list docked beside its figure. A step list in use and its
// figure are on the screen together: the list is docked (sticky, compact) at the screen's edge
// on the figure's far side while the figure is in view, and the figure (the part of it the step
// changed nearest the list: the figure itself or one of its slots) is brought into the room
// left, its top first where it does not fit.

import { stepState } from "./controls.js";
import { inView } from "./effects.js";

// The steps that put figure FID into STATE show it (aria-current): LAST, the step tapped last,
// until another control is used (Python may have written its values its own way, an angle for
// "Puff"), or else a step whose fields are the state's
export function markSteps(fid, state, last) {
  for (const b of document.querySelectorAll(`[data-target="${CSS.escape(fid)}"][data-key]`)) {
    const same = Object.entries(stepState(b)).every(([k, v]) => String(state[k]) === v);
    if (last ? b === last : same) b.setAttribute("aria-current", "step");
    else b.removeAttribute("aria-current");
  }
}

// the part of a figure (itself or a slot; among AREAS) nearest EL on the page
export function nearest(el, areas) {
  const at = el.getBoundingClientRect().top;
  const far = (a) => Math.abs(a.getBoundingClientRect().top - at);
  return areas.reduce((a, b) => (far(b) < far(a) ? b : a));
}

const shows = new WeakMap(); // a step list -> the part of its figure its last step changed

// A step tapped in LIST, now drawn, brings into view what it changed (CHANGES, area -> the parts
// that changed, as morph.js's swap() says; the area nearest the list among those that changed: a
// slot beside the list that every step leaves as it was is not it), with the list docked beside
// it; a step that changed nothing (tapped again) shows what the list's last step did; a step
// drawn once the reader has left its list (kept until Python was ready) moves nothing. AREAS: the
// figure and its slots
export function showStep(list, changes, areas) {
  if (!list?.isConnected || !inView(list)) return;
  const shown = (a) => a.getClientRects().length; // not in a closed "Go deeper"
  const changed = areas.filter((a) => changes.get(a)?.length && shown(a));
  if (changed.length) shows.set(list, nearest(list, changed));
  dock(shows.get(list) || nearest(list, areas), list);
}

const docked = new WeakMap(); // list -> the observer that undocks it

// LIST docked beside FIGURE (an area of the figure), FIGURE scrolled into the room left
function dock(figure, list) {
  const after = figure.compareDocumentPosition(list) & Node.DOCUMENT_POSITION_FOLLOWING;
  list.classList.add("is-docked", after ? "at-bottom" : "at-top");
  if (!docked.has(list)) {
    const away = new IntersectionObserver(([seen]) => {
      if (seen.isIntersecting) return;
      list.classList.remove("is-docked", "at-bottom", "at-top");
      away.disconnect();
      docked.delete(list);
    });
    docked.set(list, away);
    requestAnimationFrame(() => away.observe(figure)); // once the figure is where it goes
  }
  const band = list.getBoundingClientRect().height;
  const room = innerHeight - band;
  const r = figure.getBoundingClientRect();
  const top = after ? 0 : band; // where the room starts
  let dy = 0;
  if (r.height > room || r.top < top) dy = r.top - top;
  else if (r.bottom > top + room) dy = r.bottom - (top + room);
  // at once: the list undocks when its figure is out of view
  if (Math.abs(dy) >= 1) scrollBy(0, dy);
}
