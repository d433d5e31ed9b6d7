// Live figures: each <figure data-figure="toymodels.mod:render"> keeps a state, sends it to
// Python on every reader action, and swaps in the HTML Python returns. Elements marked
// data-key/data-value set one state field; a form marked data-state-form sets its fields.
// The state lives in the URL as ?FIGURE.FIELD=value, so a link reopens the same view.
// A text box in a live form answers as the reader types (not in the middle of an input
// method's composition), and the box itself is kept across redraws, with its caret and undo.
// An answer slower than BUSY_MS marks the figure busy and shows the [data-busy] notes
// (e.g. "Loading the weights…") of the part of the page the action came from.
// When Python raises, the figure says so and the console gets the traceback, for authors.
// Each visit to a figure is a step in the browser's history (its first change pushes a step, the
// next ones replace it), so Back undoes a figure's changes in one press; a link holding a
// figure's state opens the page at that figure. A tap never moves the tapped control (the page
// keeps it where it was, whatever changed above it); what it changed out of sight is said in a
// line under the control, with a button that goes there.
// Python's answer goes in by changing only what differs (morphdom): a tap that moves a mark
// leaves the rest of the figure, its layout and paint, as they were, and the reader's focus,
// caret and undo stay where they are.
// Where an answer comes from (Python's kept answers, the build's, answers worked out ahead of the
// reader, taps kept until Python is ready) is answers.js's job; this module draws them. An area
// whose markup is the one it was last drawn from is left as it is, and an answer worked out ahead
// comes with its markup parsed, so a tap only compares and moves nodes. What the reader cannot
// see yet waits until after the tap's paint: a slot far from the view (one the browser is not
// drawing) and the URL (history.pushState is 2 ms).

import { Answers, makeLane } from "./answers.js";
import { moveFocus } from "./keys.js";
import morphdom from "./morphdom.js";
import { loadPrerendered, prerendered, prerenderedNow } from "./prerendered.js";
import { clean } from "./sanitize.js";

const figures = new Map();
const BUSY_MS = 150;
const TYPED = "input[type=text], input[type=search], textarea";

// work that can wait for a gap between frames: it runs when the page is idle with ROOM
// milliseconds to spare before its next frame (ROOM_MS: so that it holds up no paint; 0: any idle
// moment), or after WAIT milliseconds in any case; it is handed the idle deadline (null when its
// time ran out)
const ROOM_MS = 4;
function inGap(f, room = ROOM_MS, wait = 1000) {
  if (!window.requestIdleCallback) return setTimeout(() => f(null), 0);
  const until = performance.now() + wait;
  const go = (idle) => {
    const left = until - performance.now();
    if (left <= 0) f(null);
    else if (idle.timeRemaining() >= room) f(idle);
    else requestIdleCallback(go, { timeout: Math.max(1, left) });
  };
  requestIdleCallback(go, { timeout: wait });
}

// What a redraw leaves until after its paint, done in order in the gaps between frames: the
// parts of the page the browser is not drawing yet (far from the view), then the URL. What needs
// it all done (a download reads the state from the URL; printing) calls writeURLNow()
const jobs = [];
function later(job) {
  jobs.push(job);
  if (jobs.length === 1) inGap(runJobs);
}
function runJobs(idle) {
  do jobs.shift()?.();
  while (jobs.length && idle && idle.timeRemaining() >= ROOM_MS);
  if (jobs.length) inGap(runJobs);
}
export function writeURLNow() {
  while (jobs.length) jobs.shift()();
}

// answers ahead go to Python one at a time for the whole page, so a tap waits behind one at most
const lane = makeLane();

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
function writeURLState(push = false) {
  const params = new URLSearchParams(location.search);
  for (const fig of figures.values()) {
    const prefix = `${fig.id}.`;
    const shown = (key) => Object.hasOwn(fig.state, key) && fig.state[key] !== fig.initial[key];
    for (const name of [...params.keys()]) {
      if (name.startsWith(prefix) && !shown(name.slice(prefix.length))) params.delete(name);
    }
    for (const [key, value] of Object.entries(fig.state)) {
      if (shown(key)) params.set(prefix + key, value);
    }
  }
  const query = params.toString();
  const url = `${location.pathname}${query ? `?${query}` : ""}${location.hash}`;
  const last = step ? step.url : `${location.pathname}${location.search}${location.hash}`;
  if (url === last) return;
  if (step && !push) { // the step not written yet takes it
    step.url = url;
    return;
  }
  const mine = { url, push, epoch };
  step = mine;
  later(() => {
    if (step === mine) step = null;
    if (mine.epoch !== epoch) return; // Back or Forward came first
    if (mine.push) history.pushState({ mh: true }, "", mine.url);
    else history.replaceState(history.state, "", mine.url);
    document.dispatchEvent(new Event("mh:url"));
  });
}

// history.pushState takes 1.5-2 ms of the main thread, a tenth of a frame: the URLs of redraws are
// written after their paint, one step at a time, in order (each is still its own step in
// history), and a "mh:url" event says so. STEP is the last one not written yet; Back or Forward
// moves on the EPOCH, and the steps not written by then are dropped
let step = null;
let epoch = 0;
// History holds one step per figure visit: the first change to a figure since the reader last
// changed another one (or went Back or Forward) pushes a step, and the changes after it replace
// that step while the reader stays with the figure. The URL always holds the state on screen, and
// Back leaves a figure in one press, however many taps it had
let visiting = null;

// the state fields a control sets: its data-key and data-value, or every field of one that sets
// several (a step, data-set="angle=Puff&length=1"; a choice that resets another field)
function stepState(el) {
  if (el.dataset.set) return Object.fromEntries(new URLSearchParams(el.dataset.set));
  return { [el.dataset.key]: el.dataset.value };
}

// A step list in use and its figure on the screen together: the list is docked (sticky, compact)
// at the screen's edge on the figure's far side while the figure is in view, and the figure (the
// part of it the step changed nearest the list: the figure itself or one of its slots; see
// LiveFigure.showStep) is brought into the room left, its top first where it does not fit
const docked = new WeakMap(); // list -> the observer that undocks it
function showWithSteps(figure, list) {
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

// the heading of the section a slot stands in, to name it in a note
function sectionOf(slot) {
  for (let el = slot.previousElementSibling; el; el = el.previousElementSibling) {
    if (/^H[2-4]$/.test(el.tagName)) return el.textContent.trim();
  }
  return "Its view";
}

// whether the browser is skipping a slot's content (content-visibility: auto, far from the view)
const skipped = (slot) =>
  slot.firstElementChild?.checkVisibility?.({ contentVisibilityAuto: true }) === false;

const inView = (el) => {
  const r = el.getBoundingClientRect();
  return r.bottom > 0 && r.top < innerHeight && r.height > 0;
};
const smooth = () => (matchMedia("(prefers-reduced-motion: reduce)").matches ? "auto" : "smooth");

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
      parse: (result) => this.parseAnswer(result),
    });
    this.marked = []; // controls shown as pending
    this.lastStep = null; // the "How it works" step tapped last, while no other control is used
    this.stepList = null; // its list, until the step is drawn (showStep)
    this.stepShows = new WeakMap(); // a step list -> the part of the figure its last step changed
    this.status = el.querySelector("[data-fig-status]");
    this.slots = [...document.querySelectorAll(`[data-slot-of="${CSS.escape(this.id)}"]`)];
    this.areas = [el, ...this.slots]; // a slot's controls drive its figure too
    this.owed = new Map(); // slot -> {html, nodes}: markup drawn once the slot nears the view
    for (const slot of this.slots) {
      slot.addEventListener("contentvisibilityautostatechange", (e) => {
        if (!e.skipped) this.payOwed(slot);
      });
    }
    // a printed page shows the pre-rendered figure, whatever the reader did on screen
    const copy = (area) => [...area.childNodes].map((n) => n.cloneNode(true));
    const printable = (area) => ({ area, first: copy(area) });
    this.printables = [el.querySelector("[data-body]"), ...this.slots].map(printable);
    for (const area of this.areas) {
      area.addEventListener("click", (e) => this.onClick(e));
      area.addEventListener("submit", (e) => this.onSubmit(e));
      area.addEventListener("change", (e) => this.onChange(e));
      area.addEventListener("input", (e) => this.onInput(e));
      area.addEventListener("compositionend", (e) => this.onInput(e));
      area.addEventListener("keydown", (e) => this.onKey(e));
    }
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
    const fromURL = readURLState(this.id);
    const taps = this.answers.takeTaps();
    if (taps) {
      const { patch, origin, control } = taps;
      await this.set({ ...fromURL, ...patch }, origin, { control, history: "push" });
    } else if (Object.keys(fromURL).length) {
      await this.set(fromURL, this.el, { history: "replace" });
    } else {
      this.markSteps();
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
    if (el) this.pendingAt(el);
    const kept = "Your choice is kept: it is drawn as soon as the interactive version has loaded.";
    this.say(kept, true);
  }

  // marks EL (a tapped control) as waiting for Python; draw() and off() clear every mark
  pendingAt(el) {
    for (const old of this.marked) if (old !== el) old.classList.remove("mh-pending");
    this.marked = [el];
    el.classList.add("mh-pending");
  }

  unmark() {
    for (const el of this.marked) el.classList.remove("mh-pending");
    this.marked = [];
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
      this.answers.warm(first).then((ok) => ok && this.lookAhead(this.firstControl()));
    }, { rootMargin: "100% 0px" });
    for (const area of this.areas) near.observe(area);
  }

  // before the reader's first action, the likeliest: the figure's first control (a row of words,
  // of models, of texts), as if the reader had just used it
  firstControl() {
    const first = this.el.querySelector("[data-body] [data-key][data-value]");
    const field = first?.dataset.key;
    return first && field in this.state ? [field, String(this.state[field])] : null;
  }

  // the values FIELD takes on the page's controls that set it (the figure's, its slots', then
  // the steps outside it), in that order, each once
  offered(field) {
    const values = [];
    for (const a of [...this.areas, document]) {
      const selector =
        a === document ? `[data-target="${CSS.escape(this.id)}"]` : "[data-key][data-value]";
      for (const el of a.querySelectorAll(selector)) {
        const v = el.dataset.value;
        const usable = el.dataset.key === field && v !== undefined && !el.disabled;
        if (usable && !values.includes(v)) values.push(v);
      }
    }
    return values;
  }

  // Python works out the answers beside the state now drawn (answers.js), while the page is in
  // view and no tap waits; FIRST as in Answers.askAhead
  lookAhead(first = null) {
    if (!this.live || this.pending || document.hidden) return;
    this.answers.askAhead(this.state, (field) => this.offered(field), first);
  }

  // the markup of an answer worked out ahead, parsed, less what its area already shows (morph
  // leaves that area alone)
  parseAnswer(result) {
    const areas = [this.el.querySelector("[data-body]"), ...this.slots];
    const shown = new Set(areas.map((area) => drawnFrom.get(area)));
    const fresh = [result.html, ...Object.values(result.slots)].filter((html) => !shown.has(html));
    return new Map(fresh.map((html) => [html, fragment(html)]));
  }

  // Back or Forward: the figure takes the state its URL now holds
  restore() {
    const want = { ...this.initial, ...readURLState(this.id) };
    const same = (k) => String(this.state[k] ?? "") === String(want[k]);
    if (Object.keys(want).every(same)) return false;
    this.set(want, this.el, { history: "replace" });
    return true;
  }

  // "How it works" steps that put this figure into its current state show it: the step tapped
  // last, until another control is used (Python may have written its values its own way, an
  // angle for "Puff"), or a step whose fields are the state's
  markSteps() {
    for (const b of document.querySelectorAll(`[data-target="${CSS.escape(this.id)}"][data-key]`)) {
      const same = Object.entries(stepState(b)).every(([k, v]) => String(this.state[k]) === v);
      if (this.lastStep ? b === this.lastStep : same) b.setAttribute("aria-current", "step");
      else b.removeAttribute("aria-current");
    }
  }

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

  off() {
    this.el.classList.add("is-off");
    this.isOff = true;
    this.unmark();
    if (this.answers.takeTaps()) {
      this.say("The interactive version could not start, so this figure stays in its first state.");
    }
  }

  // what the reader acted on, to find it again in the redrawn markup: a button by its key and
  // value, a form by its place among the area's forms
  control(el, area) {
    if (el.dataset.fk) return `[data-fk="${CSS.escape(el.dataset.fk)}"]`;
    if (el.matches("[data-key]")) {
      const { key, value } = el.dataset;
      return `[data-key="${CSS.escape(key)}"][data-value="${CSS.escape(value)}"]`;
    }
    const form = el.closest("form");
    return form ? { form: [...area.querySelectorAll("form")].indexOf(form) } : null;
  }

  onClick(e) {
    const target = e.target.closest("[data-key]");
    const area = e.currentTarget;
    if (!target || !area.contains(target)) return;
    const patch = stepState(target); // data-set: a choice that resets fields of another's
    this.set(patch, area, { control: this.control(target, area), at: target });
  }

  onSubmit(e) {
    const form = e.target.closest("[data-state-form]");
    if (!form) return;
    e.preventDefault();
    const area = e.currentTarget;
    const patch = Object.fromEntries(new FormData(form));
    this.set(patch, area, { control: this.control(form, area), at: e.submitter || form });
  }

  onChange(e) {
    const form = e.target.closest('[data-state-form="live"]');
    if (!form || e.target.matches(TYPED)) return;
    const area = e.currentTarget;
    const patch = Object.fromEntries(new FormData(form));
    this.set(patch, area, { control: this.control(form, area), at: e.target });
  }

  // typing makes one history step per burst of typing in one box, not one per key
  onInput(e) {
    const form = e.target.closest('[data-state-form="live"]');
    if (!form || !e.target.matches(TYPED) || e.isComposing) return;
    const same = this.typingIn === e.target.dataset.fk;
    this.typingIn = e.target.dataset.fk;
    const area = e.currentTarget;
    const patch = Object.fromEntries(new FormData(form));
    const control = this.control(form, area);
    const history = same ? "replace" : "push";
    this.set(patch, area, { control, typing: true, history, at: e.target });
  }

  busy(on, origin) {
    for (const area of this.areas) {
      if (on) area.setAttribute("aria-busy", "true");
      else area.removeAttribute("aria-busy");
      const notes = area.querySelectorAll("[data-busy]");
      for (const note of notes) note.hidden = !(on && area === origin);
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
    const focus = this.focusNow();
    this.state = result.state;
    this.unmark();
    const tapped = act.typing ? null : this.controlIn(act.control, origin);
    const tappedAt = tapped?.getBoundingClientRect().top;
    performance.mark("mh:swap");
    const changes = this.swap(result, origin, parsed, act);
    this.refocus(focus);
    // the tapped control stays where the reader's finger is, whatever changed above it
    const movedTo = tapped && this.controlIn(act.control, origin)?.getBoundingClientRect().top;
    const moved = tapped && movedTo - tappedAt;
    if (moved && Math.abs(moved) >= 1) scrollBy(0, moved);
    performance.mark("mh:swapped");
    const push = act.how === "push" && visiting !== this.id;
    if (act.how === "push") visiting = this.id;
    writeURLState(push);
    performance.mark("mh:url");
    this.markSteps();
    this.showStep(changes);
    this.showWritten(typedBefore, focus?.typing ?? null);
    if (act.control) this.showEffects(changes, origin, act);
    this.el.dispatchEvent(new CustomEvent("mh:drawn", { bubbles: true }));
    performance.mark("mh:drawn"); // bench/run.py reads these marks to say where a tap's time goes
  }

  // the reader's focus in this figure, to put back after a redraw: {key, typing (the text box
  // typed in), caret}, or null
  focusNow() {
    const active = document.activeElement;
    const key = active && this.areas.some((a) => a.contains(active)) && active.dataset.fk;
    if (!key) return null;
    const typing = active.matches(TYPED) ? active : null;
    return { key, typing, caret: typing ? [typing.selectionStart, typing.selectionEnd] : null };
  }

  refocus(focus) {
    if (!focus) return;
    for (const area of this.areas) {
      const el = area.querySelector(`[data-fk="${CSS.escape(focus.key)}"]`);
      if (el && document.activeElement !== el) el.focus();
      if (el && focus.caret && el.matches(TYPED)) el.setSelectionRange(...focus.caret);
    }
  }

  // RESULT's markup into the figure, its summary and its slots (a slot out of sight later).
  // -> area -> the parts that changed: every one in ORIGIN, the area the action came from;
  // elsewhere, whether any did. Sets ACT.newSummary: whether the summary changed.
  swap(result, origin, parsed, act) {
    const away = this.slots.filter((slot) => slot !== origin && skipped(slot)); // before any change
    const body = this.el.querySelector("[data-body]");
    const changes = new Map([[this.el, morph(body, result.html, origin === this.el, parsed)]]);
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

  // A text box that the figure wrote on ("Write on") shows its end, and what was written
  showWritten(typedBefore, typing) {
    for (const box of this.el.querySelectorAll(TYPED)) {
      const old = typedBefore.get(box.dataset.fk);
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

  // the part of this figure (itself or a slot; among AREAS) nearest EL on the page
  nearest(el, areas = this.areas) {
    const at = el.getBoundingClientRect().top;
    const far = (a) => Math.abs(a.getBoundingClientRect().top - at);
    return areas.reduce((a, b) => (far(b) < far(a) ? b : a));
  }

  // A step tapped in a "How it works" list, now drawn, brings into view what it changed (the
  // part nearest the list among those that changed: a slot beside the list that every step
  // leaves as it was is not it), with the list docked beside it; a step that changed nothing
  // (tapped again) shows what the list's last step did; a step drawn once the reader has left
  // its list (kept until Python was ready) moves nothing. CHANGES: swap()'s
  showStep(changes) {
    const list = this.stepList;
    this.stepList = null;
    if (!list?.isConnected || !inView(list)) return;
    const shown = (a) => a.getClientRects().length; // not in a closed "Go deeper"
    const changed = this.areas.filter((a) => changes.get(a)?.length && shown(a));
    if (changed.length) this.stepShows.set(list, this.nearest(list, changed));
    showWithSteps(this.stepShows.get(list) || this.nearest(list), list);
  }

  // the control the reader acted on, in AREA as it is now
  controlIn(control, area) {
    if (!control) return null;
    if (typeof control === "string") return area.querySelector(control);
    return area.querySelectorAll("form")[control.form] || null;
  }

  // What the reader's action changed out of sight is said beside the control, with a button that
  // goes there; the page itself never scrolls on a tap (the tapped control stays where it was)
  showEffects(changes, origin, act) {
    const at = this.controlIn(act.control, origin);
    if (!at) return;
    const changed = this.areas.filter((a) => a !== origin && changes.get(a).length);
    // a slot's control that changed its figure (or another slot) out of sight says so beside it;
    // the figure's own controls do not: its slots are the prose's companions, read in their turn
    const away = origin === this.el ? [] : changed.filter((a) => !inView(a));
    if (!away.length) {
      // in the control's own area: the parts that changed, less the control's own group
      // (asked lazily: a map's every cell can change, and each question is a layout check)
      if (act.typing || !inView(at)) return;
      const group = at.closest("[role=group], ul, ol, form, fieldset, table") || at;
      const apart = (p) => p.isConnected && !p.contains(group) && !group.contains(p);
      const parts = changes.get(origin).filter(apart);
      const part = parts.some(inView) ? null : parts.find((p) => p.getClientRects().length);
      if (part) this.sayWhere(at, part, "What this changed is {where}.");
      return;
    }
    // the figure when what it says changed (its summary: the news), else the part nearest the
    // control; the figure's summary is repeated only when it changed
    const far = (a) => Math.abs(a.getBoundingClientRect().top - at.getBoundingClientRect().top);
    const closer = (a, b) => (far(b) < far(a) ? b : a);
    const target = act.newSummary && away.includes(this.el) ? this.el : away.reduce(closer);
    if (target === this.el) {
      const caption = this.el.querySelector("figcaption")?.textContent;
      const name = caption?.split("·")[0].trim() || "The figure";
      const now = this.el.querySelector("[data-summary]").textContent;
      const news = act.newSummary ? `now: ${now}` : "changed too.";
      this.sayWhere(at, target, `${name} ({where}) ${news}`);
    } else this.sayWhere(at, target, `“${sectionOf(target)}” ({where}) changed too.`);
  }

  // a note after AT's group, TEXT with {where} made "above" or "below", and a button that
  // scrolls to TARGET
  sayWhere(at, target, text) {
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
    this.areas.forEach((a) => a.querySelectorAll(".mh-effect").forEach((n) => n.remove()));
    // after the control's group; a cell's, after its table (and the box it scrolls in), never
    // in the table's row, which it would widen
    let place = at.closest("form, [role=group], .mh-pick, fieldset, table") || at;
    const box = place.parentElement;
    if (place.matches("table") && box.childElementCount === 1) {
      if (/auto|scroll/.test(getComputedStyle(box).overflowX)) place = box;
    }
    place.after(note);
  }
}

export function setupFigures() {
  for (const el of document.querySelectorAll("figure[data-figure]")) {
    figures.set(el.id, new LiveFigure(el));
  }
  // a form in Python's markup never submits, in a live figure or not: it would reload the page
  // (the sanitizer drops any action) and lose the reader's place; a form marked data-state-form
  // sets its figure's state instead (LiveFigure.onSubmit)
  document.addEventListener("submit", (e) => {
    if (e.target.closest(".mh-figure, [data-slot-of]")) e.preventDefault();
  });
  // a link holding a figure's state opens the page at that figure by the browser's own anchor
  // scroll, templates/early.js having named the figure as its place: no scroll here (it came
  // 0.15-1.3 s after the page showed, undoing a reader's scroll or tap meanwhile)
  // Back and Forward move between the states the reader made
  window.addEventListener("popstate", () => {
    epoch++; // the URL Back or Forward came to wins over a redraw's not yet written
    step = null;
    visiting = null;
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
    figures.forEach((f) => f.printView(true));
  });
  window.addEventListener("afterprint", () => figures.forEach((f) => f.printView(false)));
  return {
    count: figures.size,
    connect: (python) => figures.forEach((f) => f.connect(python)),
    start: () => Promise.all([...figures.values()].map((f) => f.start())),
    off: () => figures.forEach((f) => f.off()),
  };
}
