// The reader's own model file (.gguf), beside "Load SmolLM2" in every figure that runs a real
// causal model (toymodels/models/causal.py draws the choice): the File the reader chose goes to
// the Python worker as it is (a postMessage of the File: it is never fetched, never uploaded, and
// the page reads none of it). Python reads its header first (toymodels/models/ownfile.py: a
// refused file gets the reason and what would work, nothing past the header read), then its
// tensors a slice each, a few per call, while this line shows the card and the progress; once
// the model is built every figure that offers the choice draws again, on the reader's model.
// "Back to SmolLM2" drops it. No maths here: Python does all of it.

const CARD = "toymodels.models.ownfile:open_card";
const STEP = "toymodels.models.ownfile:load_step";
const CLOSE = "toymodels.models.ownfile:close";
const boxes = () => document.querySelectorAll("[data-ownfile]");

// every figure showing the choice draws again (its model changed)
function redraw() {
  const figures = new Set();
  for (const box of boxes()) figures.add(box.closest("figure[data-figure]"));
  for (const figure of figures) figure?.dispatchEvent(new CustomEvent("mh:set", { detail: {} }));
}

export function setupOwnFile(python) {
  let state = { text: "", bar: null, busy: false };

  // the state in every choice on the page (a figure's redraw puts Python's empty one back)
  const paint = () => {
    for (const box of boxes()) {
      const status = box.querySelector("[data-ownfile-status]");
      const bar = box.querySelector("[data-ownfile-progress]");
      const input = box.querySelector("[data-ownfile-input]");
      if (status && status.textContent !== state.text) status.textContent = state.text;
      if (bar && bar.hidden !== !state.bar) bar.hidden = !state.bar;
      if (bar && state.bar) [bar.max, bar.value] = [state.bar[1], state.bar[0]];
      if (input && input.disabled !== state.busy) input.disabled = state.busy;
    }
  };
  const show = (change) => {
    state = { ...state, ...change };
    paint();
  };

  async function open(file) {
    show({ text: "Reading the file’s header…", bar: null, busy: true });
    try {
      await python.ready;
      await python.putFile(file);
      const card = await python.call(CARD, [file.size]);
      if (!card.ok) {
        show({ text: card.message, bar: null, busy: false });
        return;
      }
      const about = card.lines.join(" ");
      show({ text: `${about} Reading its weights…`, bar: [0, card.of] });
      for (;;) {
        const s = await python.call(STEP, []);
        const text = `${about} Reading its weights: ${s.done} of ${s.of} tensors.`;
        show({ text, bar: [s.done, s.of] });
        if (s.ready) break;
      }
      show({ text: "", bar: null, busy: false });
      redraw();
    } catch (err) {
      const why = String(err?.message || err).replace(/^\w+Error: /, "");
      show({ text: `The file could not be read: ${why}`, bar: null, busy: false });
    }
  }

  document.addEventListener("change", (e) => {
    const input = e.target.closest?.("[data-ownfile-input]");
    const file = input?.files?.[0];
    if (!file || state.busy) return;
    input.value = ""; // the same file chosen again (after a refusal, or Back) reads again
    open(file);
  });
  document.addEventListener("click", async (e) => {
    const button = e.target.closest?.("[data-ownfile-close]");
    if (!button) return;
    button.disabled = true;
    await python.call(CLOSE, []);
    redraw();
  });
  new MutationObserver(paint).observe(document.body, { childList: true, subtree: true });
}
