// "Train it yourself" (chapter "One character at a time"): the buttons of the section marked
// data-trainer. Train starts a run (or resumes a paused one) and then asks Python for one short
// slice of training after another (as long as Python's train_live.MAX_MS says), showing the
// plot, the heads and the numbers the slices return; Pause stops asking (the model stays in the
// worker); Reset drops the model. Each slice is a separate call, so the worker answers the
// page's other figures between two slices.
// Once there is a model, "Use it in the figure above" hands a snapshot of it to the chapter's
// figure (a mh:set patch choosing the model "yours"); Pause and Reset make the figure redraw, so
// it offers the reader's model, or withdraws it.
// No maths here: Python (toymodels/one_character/train_live.py) trains, measures and draws.

import { fragment } from "./morph.js";

const MODULE = "toymodels.one_character.train_live";
const FIGURE = 'figure[data-figure="toymodels.one_character.figure:render"]';
const SHOW_MS = 250;

export function setupTrainer(python) {
  const box = document.querySelector("[data-trainer]");
  if (box) new Trainer(python, box).listen();
}

// The line offering the reader's model to the figure: made here rather than by the build, so
// the page without JavaScript stays as it was. -> [the line, its text, its button]
function offerLine(box) {
  const yours = document.createElement("p");
  yours.className = "mh-train-yours";
  yours.dataset.trainYours = "";
  yours.setAttribute("aria-live", "off"); // it changes every slice; milestones go to `say`
  const text = document.createElement("span");
  const use = document.createElement("button");
  use.type = "button";
  use.dataset.train = "use";
  use.textContent = "Use it in the figure above";
  yours.append(text, " ", use);
  yours.hidden = true;
  box.querySelector(".mh-train-controls").after(yours);
  return [yours, text, use];
}

class Trainer {
  constructor(python, box) {
    this.python = python;
    this.box = box;
    this.form = box.querySelector("[data-train-recipe]");
    this.buttons = Object.fromEntries(
      [...box.querySelectorAll("[data-train]")].map((b) => [b.dataset.train, b]),
    );
    this.plot = box.querySelector("[data-train-plot]");
    this.heads = box.querySelector("[data-train-heads]");
    this.stats = box.querySelector("[data-train-stats]");
    this.said = box.querySelector("[data-train-say]");
    this.built = [...this.plot.childNodes].map((n) => n.cloneNode(true)); // the build's, for Reset
    this.builtStats = this.stats.textContent;
    this.running = false; // asking for slices
    this.started = false; // a model is in the worker
    this.loop = null;
    this.figure = document.querySelector(FIGURE);
    [this.yours, this.yoursText, this.use] = offerLine(box);
    this.due = null; // what is not shown yet: the last slice's numbers, the last plot drawn
    this.shownAt = 0;
  }

  listen() {
    this.buttons.train.addEventListener("click", () => this.train());
    this.buttons.pause.addEventListener("click", () => this.pause());
    this.buttons.reset.addEventListener("click", () => this.reset());
    this.use.addEventListener("click", () => this.useIt());
    this.form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.train();
    });
    addEventListener("pagehide", () => {
      this.running = false; // leaving the page ends training
    });
    this.box.classList.add("is-live");
    this.mark();
  }

  // the figure draws again from its state: it offers the reader's model, or withdraws it
  refigure(patch = {}) {
    if (this.figure) this.figure.dispatchEvent(new CustomEvent("mh:set", { detail: patch }));
  }

  recipe() {
    return Object.fromEntries(new FormData(this.form));
  }

  mark() {
    const { running, started, buttons } = this;
    this.box.dataset.trainState = running ? "training" : started ? "paused" : "idle";
    buttons.train.disabled = running;
    buttons.train.textContent = started && !running ? "Resume" : "Train";
    buttons.pause.disabled = !running;
    buttons.reset.disabled = !started;
    this.use.disabled = !started || !this.figure;
    this.yours.hidden = !started || !this.figure;
    for (const field of this.form.elements) field.disabled = started; // a new recipe needs Reset
  }

  // while training, the plot and the numbers are redrawn at most every SHOW_MS (each redraw
  // takes the page's time from a tap elsewhere); a pause or a reset shows the last slice at once
  show(out, now = false) {
    if (out) {
      if (out.error) throw new Error(out.error);
      if (out.say) this.said.textContent = out.say; // milestones are announced when they come
      this.due = { ...out, plot: out.plot || this.due?.plot }; // plot null: no step ended in it
    }
    const due = this.due;
    if (!due || (!now && this.running && performance.now() - this.shownAt < SHOW_MS)) return;
    if (due.plot) this.plot.replaceChildren(fragment(due.plot));
    this.stats.textContent = due.stats;
    this.yoursText.textContent = due.offer;
    this.due = null;
    this.shownAt = performance.now();
  }

  // the heads are drawn in a call of their own, so a tap elsewhere can go before it
  async drawHeads(out) {
    if (!out.heads_due) return;
    const drawn = await this.python.call(`${MODULE}:heads`, []);
    if (this.started && !drawn.error) this.heads.replaceChildren(fragment(drawn.heads));
  }

  async run() {
    let resumed = true;
    while (this.running) {
      const out = await this.python.call(`${MODULE}:work`, [null, resumed]);
      resumed = false;
      if (!this.started) return; // reset while this slice ran
      this.show(out);
      await this.drawHeads(out);
    }
  }

  // a new run: the trainer's modules, one a call, so a tap elsewhere can go between them; then
  // its first slice
  async begin() {
    const python = this.python;
    while ((await python.call("toymodels.page.warm:load", [MODULE])).left > 0);
    const first = await python.call(`${MODULE}:start`, [this.recipe()]);
    this.show(first, true);
    this.started = true;
    await this.drawHeads(first);
    this.mark();
  }

  // the start of a run and its slices, as one promise: Pause and Reset wait for it to end
  async trainLoop() {
    try {
      await this.python.ready;
      if (!this.started) await this.begin();
      if (this.running) this.said.textContent = "Training.";
      await this.run();
    } catch (err) {
      this.running = false;
      this.stats.textContent = `Training stopped: ${err.message}`;
      this.mark();
    }
  }

  train() {
    if (this.running) return;
    this.running = true;
    this.mark();
    this.loop = this.trainLoop();
  }

  async pause() {
    this.running = false;
    this.buttons.pause.disabled = true;
    await this.loop; // the slice under way ends, then nothing more is asked
    this.show(null, true);
    this.mark();
    this.said.textContent = `Paused. Train resumes where it stopped. ${this.yoursText.textContent}`;
    this.refigure();
  }

  async useIt() {
    this.use.disabled = true;
    try {
      const out = await this.python.call(`${MODULE}:pick`, [false]);
      if (out.error) throw new Error(out.error);
      // the rest of its measurements one short call at a time: other figures go between them
      while ((await this.python.call(`${MODULE}:pick_more`, [])).left > 0);
      this.yoursText.textContent = out.said;
      this.said.textContent = out.said;
      this.refigure({ model: out.model });
      this.figure.scrollIntoView({ block: "start" });
    } catch (err) {
      this.yoursText.textContent = `The figure could not take the model: ${err.message}`;
    } finally {
      this.mark();
    }
  }

  async reset() {
    this.running = false;
    await this.loop;
    this.started = false;
    await this.python.call(`${MODULE}:reset`, []);
    this.plot.replaceChildren(...this.built.map((n) => n.cloneNode(true)));
    this.heads.replaceChildren();
    this.stats.textContent = this.builtStats;
    this.said.textContent = "The model is gone. Train starts a new one.";
    this.yoursText.textContent = "";
    this.mark();
    const offered = this.figure?.querySelector('[data-key="model"][data-value="yours"]');
    if (offered) this.refigure();
  }
}
