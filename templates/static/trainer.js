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

import { fragment } from "./figures.js";

const MODULE = "toymodels.one_character.train_live";
const FIGURE = 'figure[data-figure="toymodels.one_character.figure:render"]';
const SHOW_MS = 250;

export function setupTrainer(python) {
  const box = document.querySelector("[data-trainer]");
  if (!box) return;
  const form = box.querySelector("[data-train-recipe]");
  const buttons = Object.fromEntries([...box.querySelectorAll("[data-train]")].map((b) => [b.dataset.train, b]));
  const plot = box.querySelector("[data-train-plot]");
  const heads = box.querySelector("[data-train-heads]");
  const stats = box.querySelector("[data-train-stats]");
  const say = box.querySelector("[data-train-say]");
  const built = [...plot.childNodes].map((n) => n.cloneNode(true)); // the build's run, for Reset
  const builtStats = stats.textContent;
  let running = false; // asking for slices
  let started = false; // a model is in the worker
  let loop = null;
  const figure = document.querySelector(FIGURE);
  // made here rather than by the build: the page without JavaScript stays as it was
  const yours = document.createElement("p");
  yours.className = "mh-train-yours";
  yours.dataset.trainYours = "";
  yours.setAttribute("aria-live", "off"); // it changes every slice; milestones go to `say`
  const yoursText = document.createElement("span");
  const use = document.createElement("button");
  use.type = "button";
  use.dataset.train = "use";
  use.textContent = "Use it in the figure above";
  yours.append(yoursText, " ", use);
  yours.hidden = true;
  box.querySelector(".mh-train-controls").after(yours);

  // the figure draws again from its state: it offers the reader's model, or withdraws it
  function refigure(patch = {}) {
    if (figure) figure.dispatchEvent(new CustomEvent("mh:set", { detail: patch }));
  }

  function recipe() {
    return Object.fromEntries(new FormData(form));
  }

  function mark() {
    box.dataset.trainState = running ? "training" : started ? "paused" : "idle";
    buttons.train.disabled = running;
    buttons.train.textContent = started && !running ? "Resume" : "Train";
    buttons.pause.disabled = !running;
    buttons.reset.disabled = !started;
    use.disabled = !started || !figure;
    yours.hidden = !started || !figure;
    for (const field of form.elements) field.disabled = started; // a new recipe needs Reset
  }

  // while training, the plot and the numbers are redrawn at most every SHOW_MS (each redraw
  // takes the page's time from a tap elsewhere); a pause or a reset shows the last slice at once
  let due = null; // what is not shown yet: the last slice's numbers, the last plot drawn
  let shownAt = 0;
  function show(out, now = false) {
    if (out) {
      if (out.error) throw new Error(out.error);
      if (out.say) say.textContent = out.say; // milestones are announced when they come
      due = { ...out, plot: out.plot || due?.plot }; // plot null: no step ended in the slice
    }
    if (!due || (!now && running && performance.now() - shownAt < SHOW_MS)) return;
    if (due.plot) plot.replaceChildren(fragment(due.plot));
    stats.textContent = due.stats;
    yoursText.textContent = due.offer;
    due = null;
    shownAt = performance.now();
  }

  // the heads are drawn in a call of their own, so a tap elsewhere can go before it
  async function drawHeads(out) {
    if (!out.heads_due) return;
    const drawn = await python.call(`${MODULE}:heads`, []);
    if (started && !drawn.error) heads.replaceChildren(fragment(drawn.heads));
  }

  async function run() {
    let resumed = true;
    while (running) {
      const out = await python.call(`${MODULE}:work`, [null, resumed]);
      resumed = false;
      if (!started) return; // reset while this slice ran
      show(out);
      await drawHeads(out);
    }
  }

  // the start of a run and its slices, as one promise: Pause and Reset wait for it to end
  async function trainLoop() {
    try {
      await python.ready;
      if (!started) {
        // the trainer's modules, one a call, so a tap elsewhere can go between them
        while ((await python.call("toymodels.page.warm:load", [MODULE])).left > 0);
        const first = await python.call(`${MODULE}:start`, [recipe()]);
        show(first, true);
        started = true;
        await drawHeads(first);
        mark();
      }
      if (running) say.textContent = "Training.";
      await run();
    } catch (err) {
      running = false;
      stats.textContent = `Training stopped: ${err.message}`;
      mark();
    }
  }

  function train() {
    if (running) return;
    running = true;
    mark();
    loop = trainLoop();
  }

  async function pause() {
    running = false;
    buttons.pause.disabled = true;
    await loop; // the slice under way ends, then nothing more is asked
    show(null, true);
    mark();
    say.textContent = `Paused. Train resumes where it stopped. ${yoursText.textContent}`;
    refigure();
  }

  async function useIt() {
    use.disabled = true;
    try {
      const out = await python.call(`${MODULE}:pick`, [false]);
      if (out.error) throw new Error(out.error);
      // the rest of its measurements one short call at a time: other figures go between them
      while ((await python.call(`${MODULE}:pick_more`, [])).left > 0);
      yoursText.textContent = out.said;
      say.textContent = out.said;
      refigure({ model: out.model });
      figure.scrollIntoView({ block: "start" });
    } catch (err) {
      yoursText.textContent = `The figure could not take the model: ${err.message}`;
    } finally {
      mark();
    }
  }

  async function reset() {
    running = false;
    await loop;
    started = false;
    await python.call(`${MODULE}:reset`, []);
    plot.replaceChildren(...built.map((n) => n.cloneNode(true)));
    heads.replaceChildren();
    stats.textContent = builtStats;
    say.textContent = "The model is gone. Train starts a new one.";
    yoursText.textContent = "";
    mark();
    if (figure && figure.querySelector('[data-key="model"][data-value="yours"]')) refigure();
  }

  buttons.train.addEventListener("click", train);
  buttons.pause.addEventListener("click", pause);
  buttons.reset.addEventListener("click", reset);
  use.addEventListener("click", useIt);
  form.addEventListener("submit", (e) => { e.preventDefault(); train(); });
  addEventListener("pagehide", () => { running = false; }); // leaving the page ends training
  box.classList.add("is-live");
  mark();
}
