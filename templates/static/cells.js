// Live code cells: the author's code becomes an editable box; Run sends it to Python
// (toymodels.page.cells.run, the function the build ran) and shows what came back as text.
// Cells share one namespace per page, so running a cell first runs the cells above it
// that have not run yet; the reader is told which, and a cell that was stopped (an endless
// loop) is never re-run unasked: the reader chooses to skip it or to edit it first. Edits and
// solved exercises are kept in localStorage.
//
// Only the cell whose Run the reader pressed is graded: an exercise above it that runs because
// this cell needs its variables is not checked, shows no verdict and records no attempt, so
// the score (the first tries, lms.js) is the same whatever order the cells are run in. What is
// run, and graded, is each cell's code as it was when Run was pressed.

import { record } from "./results.js";
import { load, save } from "./storage.js";

function pre(cls, text) {
  const el = document.createElement("pre");
  el.className = cls;
  el.textContent = text;
  el.tabIndex = 0; // long lines scroll sideways; keyboard users must reach them
  return el;
}

export function setupCells(python) {
  const cells = new Cells(python, [...document.querySelectorAll("[data-cell]")]);
  for (const cell of cells.list) {
    const box = editor(cell, cells);
    cell.querySelector("[data-run]").addEventListener("click", () => cells.run(cell));
    cell.querySelector("[data-stop]").addEventListener("click", () => cells.stop(cell));
    cell.querySelector("[data-reset]").addEventListener("click", () => box.reset());
    setupVerdict(cell);
  }
  python.ready.then(() => cells.enable(), () => {});
}

const STARTING = "Python is still starting: this cell runs as soon as it is ready…";
const KEPT = "Your code, kept from your last visit: press Run to see what it gives.";
// the last line of a traceback: what went wrong ("NameError: name 'x' is not defined")
const reason = (error) => error.trim().split("\n").at(-1);

// what the cell shows below its code
const showIn = (cell, ...nodes) => cell.querySelector("[data-output]").replaceChildren(...nodes);
const isNothing = (value) => value === null || value === undefined;

// What a run gave back, below the cell. GRADED: the reader pressed this cell's Run (a cell run
// for a later one is never graded): an exercise's verdict is shown and its attempt recorded.
function show(cell, result, code, graded) {
  showIn(cell);
  const out = cell.querySelector("[data-output]");
  if (!graded && cell.dataset.cellCheck) {
    out.append(pre("quiet", "Ran because a cell below needs its variables; not checked. " +
      "Press Run here to check your answer."));
  }
  if (result.stdout) out.append(pre("stdout", result.stdout));
  if (!isNothing(result.value)) out.append(pre("value", result.value));
  if (result.error) out.append(pre("error", result.error));
  if (!result.stdout && !result.error && isNothing(result.value)) {
    out.append(pre("quiet", "(ran, printed nothing)"));
  }
  const verdict = cell.querySelector("[data-verdict]");
  if (graded && verdict && result.check?.fault) { // the page's check failed: no attempt to record
    verdict.textContent = result.check.message;
    verdict.className = "mh-verdict wrong";
  } else if (graded && verdict && result.check) {
    const { ok, message } = result.check;
    verdict.textContent = ok ? message : `Not yet: ${message}`;
    verdict.className = `mh-verdict ${ok ? "right" : "wrong"}`;
    if (ok) save(`exercise:${cell.id}`, "solved");
    record(cell.id, {
      kind: "exercise",
      question: cell.querySelector(".mh-question").textContent.trim(),
      answer: code,
      correct: ok,
    });
  }
}

// The page's cells and what Python has run of them
class Cells {
  constructor(python, list) {
    this.python = python;
    this.list = list;
    this.ran = new Set();
    this.stopped = new Set(); // cells stopped while running: not re-run unless the reader says so
    this.skipped = new Set(); // cells the reader chose to leave out of the run
    this.busy = false;
    this.current = null; // the cell Python is running now
    this.checking = null; // the cell whose exercise check Python is running now
    this.ready = false; // Python has started
  }

  name(c) {
    return `cell ${this.list.indexOf(c) + 1}`;
  }

  enable() {
    this.ready = true;
    this.list.forEach((c) => {
      c.querySelector("[data-run]").disabled = false;
    });
  }

  // The reader's code, then (a separate call, so that Stop knows which was running) the
  // exercise's check of what it left
  async runOne(cell, code, graded) {
    this.current = cell;
    const check = graded ? cell.dataset.cellCheck || null : null;
    const args = [code, cell.dataset.ns, null];
    const result = await this.python.call("toymodels.page.cells:run", args);
    this.ran.add(cell);
    if (check && !result.error) {
      this.checking = cell;
      showIn(cell, pre("quiet", "Your code ran; the exercise's check is running…"));
      result.check = await this.python.call("toymodels.page.cells:verdict", [check, args[1]]);
      this.checking = null;
    }
    show(cell, result, code, graded);
    return result;
  }

  setBusy(cell, on, first = []) {
    this.busy = on;
    for (const c of this.list) c.querySelector("[data-run]").disabled = on;
    cell.querySelector("[data-stop]").hidden = !on;
    const names = first.map((c) => this.name(c)).join(", ");
    const what = !this.ready ? STARTING : first.length
      ? `Running ${names} (above, not run yet), then this cell…`
      : "Running…";
    if (on) showIn(cell, pre("quiet", what));
  }

  // A cell above that was stopped is not run again unasked: the reader skips it or edits it
  askAbout(cell, hung) {
    const names = hung.map((c) => this.name(c)).join(", ");
    const note = document.createElement("div");
    note.className = "mh-cell-note";
    note.setAttribute("role", "status");
    const p = document.createElement("p");
    p.textContent = `This cell runs after the cells above it, and ${names} was stopped while it ` +
      "ran (it may never end). Run this cell without it, or edit it first?";
    const button = (textContent) =>
      Object.assign(document.createElement("button"), { type: "button", textContent });
    const skip = button(`Skip ${names} and run`);
    skip.addEventListener("click", () => {
      hung.forEach((c) => {
        this.stopped.delete(c);
        this.skipped.add(c);
      });
      this.run(cell);
    });
    const edit = button(`Edit ${this.name(hung[0])}`);
    edit.addEventListener("click", () => {
      const box = hung[0].querySelector("textarea");
      hung[0].scrollIntoView({ block: "center" });
      box.focus();
    });
    note.append(p, skip, edit);
    showIn(cell, note);
  }

  // CELL run, after the cells above it not run yet, each with its code as Run was pressed
  async run(cell) {
    if (this.busy) return;
    const before = this.list.slice(0, this.list.indexOf(cell));
    const above = before.filter((c) => !this.ran.has(c) && !this.skipped.has(c));
    const hung = above.filter((c) => this.stopped.has(c));
    if (hung.length) {
      this.askAbout(cell, hung);
      return;
    }
    this.stopped.delete(cell); // the reader runs this one on purpose
    const code = new Map([...above, cell].map((c) => [c, c.querySelector("textarea").value]));
    this.setBusy(cell, true, above);
    try {
      const starting = !this.ready; // meanwhile the cell says so
      await this.python.ready; // after a restart too: the new worker must finish booting
      if (starting) this.setBusy(cell, true, above);
      for (const earlier of above) {
        if (this.ran.has(earlier)) continue;
        const result = await this.runOne(earlier, code.get(earlier), false);
        if (result.error) {
          const why = `An earlier cell, ${this.name(earlier)}, failed ` +
            `(${reason(result.error)}), so this one did not run. Fix it first.`;
          showIn(cell, pre("error", why));
          return;
        }
      }
      await this.runOne(cell, code.get(cell), true);
    } catch (err) {
      if (err.restarted) {
        this.ran.clear(); // a new Python: every cell runs again
        this.skipped.clear();
      }
      if (err.message !== "Python was stopped") showIn(cell, pre("error", err.message));
    } finally {
      this.current = null;
      this.setBusy(cell, false);
    }
  }

  async stop(cell) {
    this.ran.clear();
    this.skipped.clear();
    const hung = this.current || cell;
    const restarting = "Python is restarting, so the variables of every cell are gone.";
    if (this.checking === hung) { // the reader's code had finished: the page's check had not
      this.checking = null;
      showIn(cell, pre("quiet", "Stopped while the exercise's check was running (your code " +
        "itself had finished). A function of yours that the check calls may never end; if " +
        `none does, the mistake is in the page's check, not in your code. ${restarting}`));
      await this.python.restart();
      return;
    }
    this.stopped.add(hung);
    const which = hung === cell ? "this cell" : `${this.name(hung)} (above), which was running,`;
    showIn(cell, pre("quiet", `Stopped. ${restarting} Running a cell again first runs the ` +
      `cells above it, but ${which} will not be run again unless you run it yourself (edit it ` +
      "first if it never ends)."));
    await this.python.restart();
  }
}

// The cell's code as an editable box, its edits kept; Ctrl+Enter runs it. -> the box, with
// reset() (back to the author's code)
function editor(cell, cells) {
  const original = cell.querySelector("[data-original]").content.textContent;
  const box = document.createElement("textarea");
  box.className = "mh-editor-code";
  box.spellcheck = false;
  box.wrap = "off"; // long lines scroll sideways; wrapping would scramble Python's indentation
  box.value = load(`cell:${cell.id}`) ?? original;
  const fit = () => {
    box.rows = Math.max(3, box.value.split("\n").length + 1);
  };
  fit();
  box.setAttribute("aria-label", `Python code of ${cells.name(cell)}`);
  cell.querySelector("[data-code]").replaceWith(box);
  // the cell's number, as the messages name it ("cell 2 was stopped")
  const bar = cell.querySelector("[data-cell-bar]");
  const number = Object.assign(document.createElement("span"), { className: "mh-cell-name" });
  number.textContent = `Cell ${cells.list.indexOf(cell) + 1}`;
  bar.prepend(number, " ");
  bar.hidden = false;
  // the build's output is the author's code's: not what the reader's kept code gives
  if (box.value !== original) showIn(cell, pre("quiet", KEPT));
  box.addEventListener("input", () => {
    fit();
    cells.stopped.delete(cell); // edited: the reader may run it again
    save(`cell:${cell.id}`, box.value === original ? undefined : box.value);
  });
  box.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      cells.run(cell);
    }
  });
  box.reset = () => {
    box.value = original;
    fit();
    cells.stopped.delete(cell);
    save(`cell:${cell.id}`, undefined);
    box.focus();
  };
  return box;
}

// An exercise solved before says so; cleared results take its verdict back (the code stays)
function setupVerdict(cell) {
  const verdict = cell.querySelector("[data-verdict]");
  document.addEventListener("mh:cleared", () => {
    save(`exercise:${cell.id}`, undefined);
    if (!verdict) return;
    verdict.textContent = "";
    verdict.className = "mh-verdict";
  });
  if (verdict && load(`exercise:${cell.id}`) === "solved") {
    verdict.textContent = "You solved this exercise earlier. Run it again to see the check.";
    verdict.className = "mh-verdict right";
  }
}
