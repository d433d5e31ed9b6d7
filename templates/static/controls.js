// A figure's controls: what the reader's events set (elements marked data-key/data-value set one
// state field; a form marked data-state-form sets its fields), the control acted on and the
// reader's focus found again in redrawn markup, and the values the page's controls offer.
// A text box in a live form answers as the reader types (not in the middle of an input
// method's composition), one history step per burst of typing in one box, not one per key.

import { moveFocus } from "./keys.js";

export const TYPED = "input[type=text], input[type=search], textarea";

// the state fields a control sets: its data-key and data-value, or every field of one that sets
// several (a step, data-set="angle=Puff&length=1"; a choice that resets another field)
export function stepState(el) {
  if (el.dataset.set) return Object.fromEntries(new URLSearchParams(el.dataset.set));
  return { [el.dataset.key]: el.dataset.value };
}

// what the reader acted on, to find it again in the redrawn markup: a button by its key and
// value, a form by its place among AREA's forms
function control(el, area) {
  if (el.dataset.fk) return `[data-fk="${CSS.escape(el.dataset.fk)}"]`;
  if (el.matches("[data-key]")) {
    const { key, value } = el.dataset;
    return `[data-key="${CSS.escape(key)}"][data-value="${CSS.escape(value)}"]`;
  }
  const form = el.closest("form");
  return form ? { form: [...area.querySelectorAll("form")].indexOf(form) } : null;
}

// the control the reader acted on (control()'s), in AREA as it is now
export function controlIn(control, area) {
  if (!control) return null;
  if (typeof control === "string") return area.querySelector(control);
  return area.querySelectorAll("form")[control.form] || null;
}

// The reader's events in AREA (the figure or a slot) become FIGURE.set(patch, area, options)
// (LiveFigure.set); FIGURE.typingIn: the text box typed in last, by its data-fk
export function listen(area, figure) {
  const live = (e) => e.target.closest('[data-state-form="live"]');
  const formSets = (form, at, more = {}) => {
    const patch = Object.fromEntries(new FormData(form));
    figure.set(patch, area, { control: control(form, area), at, ...more });
  };
  area.addEventListener("click", (e) => {
    const target = e.target.closest("[data-key]");
    if (!target || !area.contains(target)) return;
    const patch = stepState(target); // data-set: a choice that resets fields of another's
    figure.set(patch, area, { control: control(target, area), at: target });
  });
  area.addEventListener("submit", (e) => {
    const form = e.target.closest("[data-state-form]");
    if (!form) return;
    e.preventDefault();
    formSets(form, e.submitter || form);
  });
  area.addEventListener("change", (e) => {
    const form = live(e);
    if (form && !e.target.matches(TYPED)) formSets(form, e.target);
  });
  const typed = (e) => {
    const form = live(e);
    if (!form || !e.target.matches(TYPED) || e.isComposing) return;
    const same = figure.typingIn === e.target.dataset.fk;
    figure.typingIn = e.target.dataset.fk;
    formSets(form, e.target, { typing: true, history: same ? "replace" : "push" });
  };
  area.addEventListener("input", typed);
  area.addEventListener("compositionend", typed);
  area.addEventListener("keydown", (e) => {
    if (moveFocus(e)) return;
    const cell = e.target.closest("td[data-fk]");
    if (cell && cell.closest("[data-key]") && (e.key === "Enter" || e.key === " ")) {
      e.preventDefault();
      cell.click();
    }
  });
}

// The tapped control marked as waiting for Python (while it is not ready), one at a time
export class PendingMark {
  #marked = null;

  mark(el) {
    this.clear();
    this.#marked = el;
    el.classList.add("mh-pending");
  }

  clear() {
    this.#marked?.classList.remove("mh-pending");
    this.#marked = null;
  }
}

// the reader's focus in AREAS (a figure's), to put back after a redraw: {key, typing (the text
// box typed in), caret}, or null
export function focusNow(areas) {
  const active = document.activeElement;
  const key = active && areas.some((a) => a.contains(active)) && active.dataset.fk;
  if (!key) return null;
  const typing = active.matches(TYPED) ? active : null;
  return { key, typing, caret: typing ? [typing.selectionStart, typing.selectionEnd] : null };
}

export function refocus(areas, focus) {
  if (!focus) return;
  for (const area of areas) {
    const el = area.querySelector(`[data-fk="${CSS.escape(focus.key)}"]`);
    if (el && document.activeElement !== el) el.focus();
    if (el && focus.caret && el.matches(TYPED)) el.setSelectionRange(...focus.caret);
  }
}

// the values FIELD takes on the page's controls that set it (figure FID's AREAS', then the steps
// outside it), in that order, each once
export function offered(fid, areas, field) {
  const values = [];
  for (const a of [...areas, document]) {
    const selector =
      a === document ? `[data-target="${CSS.escape(fid)}"]` : "[data-key][data-value]";
    for (const el of a.querySelectorAll(selector)) {
      const v = el.dataset.value;
      const usable = el.dataset.key === field && v !== undefined && !el.disabled;
      if (usable && !values.includes(v)) values.push(v);
    }
  }
  return values;
}

// before the reader's first action, the likeliest: the first control of figure EL's body (a row
// of words, of models, of texts), as [field, its value in STATE], as if the reader had just used it
export function firstControl(el, state) {
  const first = el.querySelector("[data-body] [data-key][data-value]");
  const field = first?.dataset.key;
  return first && field in state ? [field, String(state[field])] : null;
}
