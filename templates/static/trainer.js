// "Train it yourself" (chapter "One character at a time"): the buttons of the section marked
// data-trainer. Train starts a run (or resumes a paused one) and then asks Python for one short
// slice of training after another, swapping in the plot, the heads and the numbers each slice
// returns; Pause stops asking (the model stays in the worker); Reset drops the model. Each slice
// is a separate call, so the worker answers the page's other figures between two slices.
// No maths here: Python (toymodels/one_character/train_live.py) trains, measures and draws.

const MODULE = "toymodels.one_character.train_live";
const SLICE_MS = 60;

function fragment(html) {
  const template = document.createElement("template");
  template.innerHTML = html; // Python drew this markup; it holds no reader text
  return template.content;
}

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

  function recipe() {
    return Object.fromEntries(new FormData(form));
  }

  function mark() {
    box.dataset.trainState = running ? "training" : started ? "paused" : "idle";
    buttons.train.disabled = running;
    buttons.train.textContent = started && !running ? "Resume" : "Train";
    buttons.pause.disabled = !running;
    buttons.reset.disabled = !started;
    for (const field of form.elements) field.disabled = started; // a new recipe needs Reset
  }

  function show(out) {
    if (out.error) throw new Error(out.error);
    plot.replaceChildren(fragment(out.plot));
    stats.textContent = out.stats;
    if (out.say) say.textContent = out.say;
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
      const out = await python.call(`${MODULE}:work`, [SLICE_MS, resumed]);
      resumed = false;
      if (!started) return; // reset while this slice ran
      show(out);
      await drawHeads(out);
    }
  }

  async function train() {
    if (running) return;
    running = true;
    mark();
    try {
      await python.ready;
      if (!started) {
        const first = await python.call(`${MODULE}:start`, [recipe()]);
        show(first);
        started = true;
        await drawHeads(first);
        mark();
      }
      say.textContent = "Training.";
      loop = run();
      await loop;
    } catch (err) {
      running = false;
      stats.textContent = `Training stopped: ${err.message}`;
      mark();
    }
  }

  async function pause() {
    running = false;
    buttons.pause.disabled = true;
    await loop; // the slice under way ends and is shown, then nothing more is asked
    mark();
    say.textContent = "Paused. Train resumes where it stopped.";
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
    mark();
  }

  buttons.train.addEventListener("click", train);
  buttons.pause.addEventListener("click", pause);
  buttons.reset.addEventListener("click", reset);
  form.addEventListener("submit", (e) => { e.preventDefault(); train(); });
  addEventListener("pagehide", () => { running = false; }); // leaving the page ends training
  box.classList.add("is-live");
  mark();
}
