// Live figures: each <figure data-figure="toymodels.mod:render"> keeps a state, sends it to
// Python on every reader action, and draws the HTML Python returns. Its parts, a module each:
// what the reader's events set (controls.js), where an answer comes from (answers.js, whose
// header holds the rules of the answer store), Python's markup going in (morph.js), the state in
// the URL and history (urlstate.js), what is left until after a tap's paint (idle.js), the
// "How it works" step lists (steplists.js) and the notes of what a tap changed out of sight
// (effects.js). This module is the figure: its state, and a tap from the reader's action to its
// answer on the page.
// An answer slower than BUSY_MS marks the figure busy and shows the [data-busy] notes (e.g.
// "Loading the weights…") of the part of the page the action came from. When Python raises,
// the figure says so and the console gets the traceback, for authors. A link holding a
// figure's state opens the page at that figure. A tap never moves the tapped control (the page
// keeps it where it was, whatever changed above it).

import { Answers, makeLane } from "./answers.js";
import {
  controlIn,
  firstControl,
  focusNow,
  listen,
  offered,
  PendingMark,
  refocus,
  stepState,
  TYPED,
} from "./controls.js";
import { inView, showEffects, showWritten } from "./effects.js";
import { finish, inGap, later } from "./idle.js";
import { Areas } from "./morph.js";
import { loadPrerendered, prerendered, prerenderedNow } from "./prerendered.js";
import { markSteps, showStep } from "./steplists.js";
import { URLState } from "./urlstate.js";

const figures = new Map();
const BUSY_MS = 150;

// answers ahead go to Python one at a time for the whole page, so a tap waits behind one at most
const lane = makeLane();

const address = new URLState({
  location: window.location,
  history: window.history,
  figures: () => figures.values(),
  later,
  written: () => document.dispatchEvent(new Event("mh:url")),
});

// Every redraw's URL and far slot written now (idle.js's finish()): a download reads the state
// from the URL, an embed snippet too
export const writeURLNow = finish;

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
    this.answers = new Answers({
      fid: this.id,
      fn: this.fn,
      lane,
      idle: inGap,
      build: { now: (s) => prerenderedNow(this.id, s), later: (s) => prerendered(this.id, s) },
      parse: (result) => this.drawn.parse(result),
    });
    this.marked = new PendingMark(); // the tapped control kept until Python is ready
    this.lastStep = null; // the "How it works" step tapped last, while no other control is used
    this.stepList = null; // its list, until the step is drawn (showStep)
    this.status = el.querySelector("[data-fig-status]");
    this.slots = [...document.querySelectorAll(`[data-slot-of="${CSS.escape(this.id)}"]`)];
    this.areas = [el, ...this.slots]; // a slot's controls drive its figure too
    this.drawn = new Areas(el, this.slots);
    this.typingIn = null; // the text box typed in last (controls.js)
    for (const area of this.areas) listen(area, this);
    // e.g. ownmodel.js, once a model is in
    el.addEventListener("mh:set", (e) => this.set(e.detail || {}));
  }

  connect(python) {
    this.python = python;
    this.answers.python = python;
  }

  // QUIET: said to screen readers only, so that the figure's controls do not move
  say(text, quiet = false) {
    this.status.textContent = text;
    this.status.hidden = !text;
    this.status.classList.toggle("mh-quiet", quiet);
  }

  // Python is ready: the figure is live, carries out the taps kept before, or takes the state
  // its URL holds, and has Python warm up for it
  async start() {
    this.live = true;
    this.el.classList.add("is-live");
    const fromURL = address.read(this.id);
    const taps = this.answers.takeTaps();
    if (taps) {
      const { patch, origin, control } = taps;
      await this.set({ ...fromURL, ...patch }, origin, { control, history: "push" });
    } else if (Object.keys(fromURL).length) {
      await this.set(fromURL, this.el, { history: "replace" });
    } else {
      markSteps(this.id, this.state, this.lastStep);
    }
    this.warm(this.state);
  }

  // Before Python is ready a tap is drawn from the build's answer for its state if there is one
  // (the URL keeps the state, so start() has Python redraw it). Otherwise it is kept, with any
  // taps after it, and carried out as soon as the figure is live: the tapped control shows it is
  // pending (in place, so nothing moves) and screen readers are told, until it is drawn.
  async setEarly(patch, origin, { control, typing, how, at }) {
    const answer = await this.answers.tapBeforePython(patch, { origin, control }, () => this.state);
    if (!answer) return; // a later tap's, or start() carries the taps out
    if (answer !== "kept") {
      this.act = { control, typing, how };
      this.origin = origin;
      this.say("");
      this.draw(answer);
      return;
    }
    const el = at || (typeof control === "string" ? origin.querySelector(control) : null);
    if (el) this.marked.mark(el);
    const kept = "Your choice is kept: it is drawn as soon as the interactive version has loaded.";
    this.say(kept, true);
  }

  // A figure's first answer from Python loads its code and data (110-330 ms of Python on the
  // bench's machine, against under 20 ms for the next). It is asked once Python is ready and the
  // figure or one of its slots comes within a screen of the view, as a browser loads a lazy image
  // (a figure the reader never reaches fetches no data), for the state already shown, in the lane
  // of answers ahead (a tap waits behind one answer at most), so the reader's first tap does not
  // pay it. FIRST, the state shown once the figure is live, is asked for even if the reader has
  // moved on, so that a tap back to it is drawn at once; then the next state along the figure's
  // first control
  warm(first) {
    const near = new IntersectionObserver((seen) => {
      if (!seen.some((s) => s.isIntersecting)) return;
      near.disconnect();
      const next = () => this.lookAhead(firstControl(this.el, this.state));
      this.answers.warm(first).then((ok) => ok && next());
    }, { rootMargin: "100% 0px" });
    for (const area of this.areas) near.observe(area);
  }

  // Python works out the answers beside the state now drawn (answers.js), while the page is in
  // view and no tap waits; FIRST as in Answers.askAhead
  lookAhead(first = null) {
    if (!this.live || this.pending || document.hidden) return;
    this.answers.askAhead(this.state, (field) => offered(this.id, this.areas, field), first);
  }

  // Back or Forward: the figure takes the state its URL now holds
  restore() {
    const want = { ...this.initial, ...address.read(this.id) };
    const same = (k) => String(this.state[k] ?? "") === String(want[k]);
    if (Object.keys(want).every(same)) return false;
    this.set(want, this.el, { history: "replace" });
    return true;
  }

  off() {
    this.el.classList.add("is-off");
    this.isOff = true;
    this.marked.clear();
    if (this.answers.takeTaps()) {
      this.say("The interactive version could not start, so this figure stays in its first state.");
    }
  }

  busy(on, origin) {
    for (const area of this.areas) {
      if (on) area.setAttribute("aria-busy", "true");
      else area.removeAttribute("aria-busy");
      const notes = area.querySelectorAll("[data-busy]");
      for (const note of notes) note.hidden = !(on && area === origin);
    }
  }

  // The reader set the fields PATCH from ORIGIN (the figure or a slot): CONTROL, to find the
  // control again in the redrawn markup; TYPING, typed in a text box; HISTORY, "push" for a new
  // step in history or "replace"; AT, the element acted on
  async set(patch, origin = this.el, options = {}) {
    const { control = null, typing = false, history: how = "push", at = null } = options;
    if (this.isOff) return; // Python could not start: the page says the figures stay as built
    this.lastStep = at?.matches("[data-target]") ? at : null; // the step list's own mark
    this.stepList = this.lastStep?.closest(".mh-howto") || null; // shown with its change, drawn
    if (!this.live) return this.setEarly(patch, origin, { control, typing, how, at });
    if (!typing) this.typingIn = null;
    this.answers.acted(patch);
    this.act = { control, typing, how };
    // actions made while Python is still answering build on each other, not on the drawn state,
    // and only the newest is sent when Python is free: a held arrow key queues no backlog
    this.pending = { ...(this.pending || this.state), ...patch };
    this.origin = origin;
    if (!this.running) await this.answerTaps();
  }

  // Answers the reader's actions, one answer at a time, until none waits; an answer slower than
  // BUSY_MS marks the figure busy meanwhile
  async answerTaps() {
    this.running = true;
    let shown = false;
    const slow = setTimeout(() => {
      shown = true;
      this.busy(true, this.origin);
    }, BUSY_MS);
    try {
      while (this.pending) await this.answerNext();
    } finally {
      clearTimeout(slow);
      if (shown) this.busy(false);
      this.running = false;
    }
  }

  // The answer for the state pending now, drawn unless the reader acted again meanwhile (then
  // the next round sends that instead)
  async answerNext() {
    const sent = this.pending;
    let answer;
    try {
      await this.python.ready; // after a restart, the new worker must finish booting
      performance.mark("mh:call");
      const again = sent === this.more; // the next piece: Python's, never a kept answer
      answer = await (again ? this.answers.fresh(sent) : this.answers.answerFor(sent));
      performance.mark("mh:answer");
    } catch (err) {
      this.failed(err, sent);
      return;
    }
    if (this.pending !== sent) return;
    this.pending = null;
    const { result, parsed } = answer;
    if (result.error) {
      this.say(result.error);
      return;
    }
    this.say("");
    this.state = result.state;
    if (result.more) this.pending = this.more = result.state; // a piece: ask on (unless a tap)
    this.lookAhead();
    this.draw(result, parsed);
  }

  // Python raised for the state SENT: the reader sees the message (unless they have acted since);
  // the author, in the console, the whole Python traceback
  failed(err, sent) {
    if (err.traceback) {
      const figure = `Figure #${this.id} (${this.fn})`;
      console.error(`${figure} failed with the state ${JSON.stringify(sent)}:\n${err.traceback}`);
    }
    if (this.pending !== sent) return;
    this.pending = null;
    this.say(`The figure's Python code failed: ${err.message}`);
  }

  // Python's answer RESULT on the page, for the reader's last action (this.act, from
  // this.origin); PARSED: its markup parsed ahead (answers.js)
  draw(result, parsed = null) {
    const act = this.act || { how: "replace" };
    this.act = null;
    const origin = this.origin;
    const typed = [...this.el.querySelectorAll(TYPED)];
    const typedBefore = new Map(typed.map((t) => [t.dataset.fk, t.value]));
    const focus = focusNow(this.areas);
    this.state = result.state;
    this.marked.clear();
    const tapped = act.typing ? null : controlIn(act.control, origin);
    const tappedAt = tapped?.getBoundingClientRect().top;
    performance.mark("mh:swap");
    const changes = this.drawn.swap(result, origin, parsed, act);
    refocus(this.areas, focus);
    // the tapped control stays where the reader's finger is, whatever changed above it
    const movedTo = tapped && controlIn(act.control, origin)?.getBoundingClientRect().top;
    const moved = tapped && movedTo - tappedAt;
    if (moved && Math.abs(moved) >= 1) scrollBy(0, moved);
    performance.mark("mh:swapped");
    address.drawn(this.id, act.how);
    performance.mark("mh:url");
    markSteps(this.id, this.state, this.lastStep);
    showStep(this.stepList, changes, this.areas);
    this.stepList = null;
    showWritten(this.el, typedBefore, focus?.typing ?? null);
    const at = act.control && controlIn(act.control, origin);
    if (at) showEffects(this, at, changes, origin, act);
    this.el.dispatchEvent(new CustomEvent("mh:drawn", { bubbles: true }));
    performance.mark("mh:drawn"); // bench/run.py reads these marks to say where a tap's time goes
  }
}

export function setupFigures() {
  for (const el of document.querySelectorAll("figure[data-figure]")) {
    figures.set(el.id, new LiveFigure(el));
  }
  // a form in Python's markup never submits, in a live figure or not: it would reload the page
  // (the sanitizer drops any action) and lose the reader's place; a form marked data-state-form
  // sets its figure's state instead (controls.js)
  document.addEventListener("submit", (e) => {
    if (e.target.closest(".mh-figure, [data-slot-of]")) e.preventDefault();
  });
  // a link holding a figure's state opens the page at that figure by the browser's own anchor
  // scroll, templates/early.js having named the figure as its place: no scroll here (it came
  // 0.15-1.3 s after the page showed, undoing a reader's scroll or tap meanwhile)
  // Back and Forward move between the states the reader made
  window.addEventListener("popstate", () => {
    address.moved();
    for (const fig of figures.values()) {
      if (fig.live && fig.restore() && !inView(fig.el)) fig.el.scrollIntoView({ block: "nearest" });
    }
  });
  if (figures.size) loadPrerendered();
  // "How it works" steps and other controls outside a figure name it with data-target
  document.addEventListener("click", (e) => {
    const target = e.target.closest("[data-target][data-key]");
    const fig = target && figures.get(target.dataset.target);
    if (!fig) return;
    fig.set(stepState(target), fig.el, { at: target });
    // a step list's figure is shown once the step is drawn, where it changed (showStep)
    if (!target.closest(".mh-howto")) fig.el.scrollIntoView({ block: "nearest" });
  });
  window.addEventListener("beforeprint", () => {
    writeURLNow(); // every part drawn as it is now, to be put back after printing
    figures.forEach((f) => f.drawn.printView(true));
  });
  window.addEventListener("afterprint", () => figures.forEach((f) => f.drawn.printView(false)));
  return {
    count: figures.size,
    connect: (python) => figures.forEach((f) => f.connect(python)),
    start: () => Promise.all([...figures.values()].map((f) => f.start())),
    off: () => figures.forEach((f) => f.off()),
  };
}
