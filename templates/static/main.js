// Entry point of every chapter page: wires up the blocks, then starts Python in a
// worker and hands the figures to it. Without this script the page is still whole.

import { setupBlocks } from "./blocks.js";
import { setupCells } from "./cells.js";
import { setupDownloads } from "./downloads.js";
import { setupEmbed } from "./embed.js";
import { setupResults } from "./results.js";
import { setupFigures } from "./figures.js";
import { keepForOffline } from "./offline.js";
import { setupOwnFile } from "./ownfile.js";
import { setupOwnModel } from "./ownmodel.js";
import { setupScrollers } from "./scrollers.js";
import { startPython } from "./pyclient.js";

// loaded async (templates/_head.html), so as not to hold up the parsed page and the browser's
// scroll to a link's place: what follows needs the whole page
if (document.readyState === "loading") {
  await new Promise((parsed) => document.addEventListener("DOMContentLoaded", parsed));
}
// in a cmi5 package, the answers the LRS kept, restored before the blocks read them (cmi5.js)
await self.mhLmsReady;
document.documentElement.classList.add("js");
setupBlocks();
setupEmbed();
setupResults();
setupScrollers();
// the class summary's own script, on its page only (class.html)
if (document.querySelector("[data-class]")) import("./class.js");

const figures = setupFigures();
const bar = document.querySelector("[data-pystatus]");

// TEXT, and SHORT in its place where a phone's header has no room for it (site.css)
function status(text, value, short = text) {
  if (!bar) return;
  bar.hidden = false;
  bar.querySelector("[data-pystatus-text]").textContent = text;
  const brief = bar.querySelector("[data-pystatus-short]");
  if (brief) brief.textContent = short;
  const progress = bar.querySelector("[data-pystatus-bar]");
  if (value === undefined) progress.hidden = true;
  else progress.value = value;
}

// each live figure's own note on its frame (blocks.html, site.css): the header's note scrolls away
// with the header, so a reader down at a figure sees Python's progress there. Not a live region:
// the header's note tells screen readers, once a step
const figureNotes = document.querySelectorAll("[data-fig-loading]");
function atFigures(text, value, failed = false) {
  for (const note of figureNotes) {
    note.hidden = !text;
    note.classList.toggle("is-off", failed);
    note.querySelector("[data-fig-loading-text]").textContent = text;
    const progress = note.querySelector("progress");
    progress.hidden = value === undefined;
    if (value !== undefined) progress.value = value;
  }
}

// Python's progress, STEP of STEPS (LABEL loading), in the header and at every figure
function loading(step, steps, label) {
  const text = `Loading ${label} (${step} of ${steps})…`;
  status(text, step - 1, `Loading, ${step} of ${steps}…`);
  atFigures(text, step - 1);
}

const cellCount = document.querySelectorAll("[data-cell]").length;
if (figures.count || cellCount) {
  const meta = (name) =>
    new URL(document.querySelector(`meta[name="${name}"]`).content, document.baseURI);
  const python = startPython({
    pyodideURL: meta("mh-pyodide"),
    bytecodeURL: meta("mh-bytecode"),
    pyURL: new URL("../py/", import.meta.url),
    onProgress: loading,
  });
  figures.connect(python);
  // taps on the figures made before this script ran, kept by templates/early.js
  for (const el of self.mhEarlyTaps?.() || []) {
    if (el.isConnected) el.dispatchEvent(new MouseEvent("click", { bubbles: true }));
  }
  setupCells(python);
  setupDownloads(python);
  const ownModel = setupOwnModel(python);
  setupOwnFile(python);
  if (document.querySelector("[data-trainer]")) {
    // only where the section is
    import("./trainer.js").then(({ setupTrainer }) => setupTrainer(python));
  }
  loading(1, 3, "the Python runtime");
  python.ready.then(
    async () => {
      await ownModel.restore();
      await figures.start();
      ownModel.started();
      performance.mark("mh-python-ready");
      keepForOffline(python);
      status(figures.count ? "Interactive figures are ready." : "Python is ready: run the cells.");
      bar?.classList.add("is-done"); // said to screen readers, then gone from the screen
      atFigures("");
      document.documentElement.classList.add("py-ready");
    },
    (err) => {
      status(`Interaction is off: ${err.message}. The figures show their first state.`);
      bar.classList.add("is-off");
      atFigures("Interaction is off: Python did not load.", undefined, true);
      figures.off();
    },
  );
} else {
  keepForOffline(null); // nothing to compete with: keep the page now
}
