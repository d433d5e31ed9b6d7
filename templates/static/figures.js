// Live figures: each <figure data-figure="toymodels.mod:render"> keeps a state, sends it to
// Python on every reader action, and swaps in the HTML Python returns. Elements marked
// data-key/data-value set one state field; a form marked data-state-form sets its fields.
// The state lives in the URL as ?FIGURE.FIELD=value, so a link reopens the same view.
// A text box in a live form answers as the reader types (not in the middle of an input
// method's composition), and the box itself is kept across redraws, with its caret and undo.
// An answer slower than BUSY_MS marks the figure busy and shows the [data-busy] notes
// (e.g. "Loading the weights…") of the part of the page the action came from.
// When Python raises, the figure says so and the console gets the traceback, for authors.

import { moveFocus } from "./keys.js";
import { loadPrerendered, prerendered } from "./prerendered.js";

const figures = new Map();
const BUSY_MS = 150;
const TYPED = "input[type=text], input[type=search], textarea";

function readURLState(fid) {
  const out = {};
  for (const [key, value] of new URLSearchParams(location.search)) {
    if (key.startsWith(`${fid}.`)) out[key.slice(fid.length + 1)] = value;
  }
  return out;
}

// The URL holds each figure's current state, as Python normalised it, and nothing else: every
// FIGURE.* parameter that is not one of its fields now differing from the starting state goes
// (a field's old name from a link shared before it was renamed, junk typed into the address
// bar, a field back at its start), then those fields are written, in place if already there.
function writeURLState() {
  const params = new URLSearchParams(location.search);
  for (const fig of figures.values()) {
    const prefix = `${fig.id}.`;
    const shown = (key) => Object.hasOwn(fig.state, key) && fig.state[key] !== fig.initial[key];
    for (const name of [...params.keys()]) {
      if (name.startsWith(prefix) && !shown(name.slice(prefix.length))) params.delete(name);
    }
    for (const [key, value] of Object.entries(fig.state)) if (shown(key)) params.set(prefix + key, value);
  }
  const query = params.toString();
  history.replaceState(history.state, "", `${location.pathname}${query ? `?${query}` : ""}${location.hash}`);
}

function fragment(html) {
  const template = document.createElement("template");
  template.innerHTML = html; // Python built this markup and escaped every piece of reader text in it
  return template.content;
}

class LiveFigure {
  constructor(el) {
    this.el = el;
    this.id = el.id;
    this.fn = el.dataset.figure;
    this.python = null;
    this.initial = JSON.parse(el.dataset.state);
    this.state = { ...this.initial };
    this.live = false;
    this.pending = null; // the state to send next, merged from every action since the last answer
    this.running = false;
    this.status = el.querySelector("[data-fig-status]");
    this.slots = [...document.querySelectorAll(`[data-slot-of="${CSS.escape(this.id)}"]`)];
    this.areas = [el, ...this.slots]; // a slot's controls drive its figure too
    // a printed page shows the pre-rendered figure, whatever the reader did on screen
    this.printables = [el.querySelector("[data-body]"), ...this.slots].map((area) => ({ area, first: [...area.childNodes].map((n) => n.cloneNode(true)) }));
    for (const area of this.areas) {
      area.addEventListener("click", (e) => this.onClick(e));
      area.addEventListener("submit", (e) => this.onSubmit(e));
      area.addEventListener("change", (e) => this.onChange(e));
      area.addEventListener("input", (e) => this.onInput(e));
      area.addEventListener("compositionend", (e) => this.onInput(e));
      area.addEventListener("keydown", (e) => this.onKey(e));
    }
    el.addEventListener("mh:set", (e) => this.set(e.detail || {})); // e.g. ownmodel.js, once a model is in

  }

  say(text) {
    this.status.textContent = text;
    this.status.hidden = !text;
  }

  async start() {
    this.live = true;
    this.el.classList.add("is-live");
    const fromURL = readURLState(this.id);
    if (Object.keys(fromURL).length) await this.set(fromURL);
  }

  printView(on) {
    for (const p of this.printables) {
      if (on) {
        p.now = [...p.area.childNodes];
        p.area.replaceChildren(...p.first.map((n) => n.cloneNode(true)));
      } else if (p.now) {
        p.area.replaceChildren(...p.now);
        p.now = null;
      }
    }
  }

  off() {
    this.el.classList.add("is-off");
  }

  onClick(e) {
    const target = e.target.closest("[data-key]");
    if (target && e.currentTarget.contains(target)) this.set({ [target.dataset.key]: target.dataset.value }, e.currentTarget);
  }

  onSubmit(e) {
    const form = e.target.closest("[data-state-form]");
    if (!form) return;
    e.preventDefault();
    this.set(Object.fromEntries(new FormData(form)), e.currentTarget);
  }

  onChange(e) {
    const form = e.target.closest('[data-state-form="live"]');
    if (form && !e.target.matches(TYPED)) this.set(Object.fromEntries(new FormData(form)), e.currentTarget);
  }

  onInput(e) {
    const form = e.target.closest('[data-state-form="live"]');
    if (form && e.target.matches(TYPED) && !e.isComposing) this.set(Object.fromEntries(new FormData(form)), e.currentTarget);
  }

  busy(on, origin) {
    for (const area of this.areas) {
      if (on) area.setAttribute("aria-busy", "true");
      else area.removeAttribute("aria-busy");
      for (const note of area.querySelectorAll("[data-busy]")) note.hidden = !(on && area === origin);
    }
  }

  onKey(e) {
    if (moveFocus(e)) return;
    const cell = e.target.closest("td[data-fk]");
    if (cell && cell.closest("[data-key]") && (e.key === "Enter" || e.key === " ")) {
      e.preventDefault();
      cell.click();
    }
  }

  async set(patch, origin = this.el) {
    if (!this.live) {
      // before Python: the build's answer for this state if it has one (the URL keeps the
      // state, so start() has Python redraw it), else a note
      const wanted = { ...this.state, ...patch };
      const answer = await prerendered(this.id, wanted);
      if (this.live) return this.set(patch, origin);
      if (answer) {
        this.say("");
        this.draw(answer);
      }
      else this.say("The interactive version is still loading; this figure shows its first state.");
      return;
    }
    // actions made while Python is still answering build on each other, not on the drawn state,
    // and only the newest is sent when Python is free: a held arrow key queues no backlog
    this.pending = { ...(this.pending || this.state), ...patch };
    this.origin = origin;
    if (this.running) return;
    this.running = true;
    let shown = false;
    const slow = setTimeout(() => { shown = true; this.busy(true, this.origin); }, BUSY_MS);
    try {
      while (this.pending) {
        const sent = this.pending;
        let result;
        try {
          await this.python.ready; // after a restart, the new worker must finish booting
          result = await this.python.call(this.fn, [sent, this.id]);
        } catch (err) {
          // the reader sees the message; the author, in the console, the whole Python traceback
          if (err.traceback) console.error(`Figure #${this.id} (${this.fn}) failed with the state ${JSON.stringify(sent)}:\n${err.traceback}`);
          if (this.pending === sent) {
            this.pending = null;
            this.say(`The figure's Python code failed: ${err.message}`);
          }
          continue;
        }
        if (this.pending !== sent) continue; // the reader acted again meanwhile: send that instead
        this.pending = null;
        if (result.error) {
          this.say(result.error);
          continue;
        }
        this.say("");
        this.draw(result);
      }
    } finally {
      clearTimeout(slow);
      if (shown) this.busy(false);
      this.running = false;
    }
  }

  draw(result) {
    const active = document.activeElement;
    const focusKey = active && this.areas.some((a) => a.contains(active)) ? active.dataset.fk : undefined;
    const typing = focusKey && active.matches(TYPED) ? active : null;
    const caret = typing ? [typing.selectionStart, typing.selectionEnd] : null;
    const swap = (area, html) => {
      const parts = fragment(html);
      const twin = typing && parts.querySelector(`[data-fk="${CSS.escape(focusKey)}"]`);
      if (twin && twin.value === typing.value) twin.replaceWith(typing); // the reader's own box stays
      area.replaceChildren(parts);
    };
    this.state = result.state;
    swap(this.el.querySelector("[data-body]"), result.html);
    this.el.querySelector("[data-summary]").textContent = result.summary;
    for (const slot of this.slots) {
      const html = result.slots[slot.dataset.slot];
      if (html !== undefined) swap(slot, html);
    }
    if (focusKey) {
      for (const area of this.areas) {
        const el = area.querySelector(`[data-fk="${CSS.escape(focusKey)}"]`);
        if (el && document.activeElement !== el) el.focus();
        if (el && caret && el.matches(TYPED)) el.setSelectionRange(...caret);
      }
    }
    writeURLState();
    this.el.dispatchEvent(new CustomEvent("mh:drawn", { bubbles: true }));
  }
}

export function setupFigures() {
  for (const el of document.querySelectorAll("figure[data-figure]")) figures.set(el.id, new LiveFigure(el));
  if (figures.size) loadPrerendered();
  // "How it works" steps and other controls outside a figure name it with data-target
  document.addEventListener("click", (e) => {
    const target = e.target.closest("[data-target][data-key]");
    const fig = target && figures.get(target.dataset.target);
    if (!fig) return;
    fig.set({ [target.dataset.key]: target.dataset.value });
    fig.el.scrollIntoView({ block: "nearest" });
  });
  window.addEventListener("beforeprint", () => figures.forEach((f) => f.printView(true)));
  window.addEventListener("afterprint", () => figures.forEach((f) => f.printView(false)));
  return {
    count: figures.size,
    connect: (python) => figures.forEach((f) => { f.python = python; }),
    start: () => Promise.all([...figures.values()].map((f) => f.start())),
    off: () => figures.forEach((f) => f.off()),
  };
}
