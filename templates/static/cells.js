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
  const cells = [...document.querySelectorAll("[data-cell]")];
  const ran = new Set();
  const stopped = new Set(); // cells stopped while running: not re-run unless the reader says so
  const skipped = new Set(); // cells the reader chose to leave out of the run
  let busy = false;
  const name = (c) => `cell ${cells.indexOf(c) + 1}`;

  // GRADED: the reader pressed this cell's Run (a cell run for a later one is never graded).
  function show(cell, result, code, graded) {
    const out = cell.querySelector("[data-output]");
    out.replaceChildren();
    if (!graded && cell.dataset.cellCheck) out.append(pre("quiet", "Ran because a cell below needs its variables; not checked. Press Run here to check your answer."));
    if (result.stdout) out.append(pre("stdout", result.stdout));
    if (result.value !== null && result.value !== undefined) out.append(pre("value", result.value));
    if (result.error) out.append(pre("error", result.error));
    if (!result.stdout && !result.error && (result.value === null || result.value === undefined)) out.append(pre("quiet", "(ran, printed nothing)"));
    const verdict = cell.querySelector("[data-verdict]");
    if (graded && verdict && result.check) {
      verdict.textContent = result.check.ok ? result.check.message : `Not yet: ${result.check.message}`;
      verdict.className = `mh-verdict ${result.check.ok ? "right" : "wrong"}`;
      if (result.check.ok) save(`exercise:${cell.id}`, "solved");
      record(cell.id, {
        kind: "exercise",
        question: cell.querySelector(".mh-question").textContent.trim(),
        answer: code,
        correct: result.check.ok,
      });
    }
  }

  let current = null; // the cell Python is running now
  async function runOne(cell, code, graded) {
    current = cell;
    const check = graded ? cell.dataset.cellCheck || null : null;
    const result = await python.call("toymodels.page.cells:run", [code, cell.dataset.ns, check]);
    ran.add(cell);
    show(cell, result, code, graded);
    return result;
  }

  function setBusy(cell, on, first = []) {
    busy = on;
    for (const c of cells) c.querySelector("[data-run]").disabled = on;
    cell.querySelector("[data-stop]").hidden = !on;
    const what = first.length ? `Running ${first.map(name).join(", ")} (above, not run yet), then this cell…` : "Running…";
    if (on) cell.querySelector("[data-output]").replaceChildren(pre("quiet", what));
  }

  // A cell above that was stopped is not run again unasked: the reader skips it or edits it
  function askAbout(cell, hung) {
    const note = document.createElement("div");
    note.className = "mh-cell-note";
    note.setAttribute("role", "status");
    const p = document.createElement("p");
    p.textContent = `This cell runs after the cells above it, and ${hung.map(name).join(", ")} was stopped while it ran (it may never end). Run this cell without it, or edit it first?`;
    const skip = Object.assign(document.createElement("button"), { type: "button", textContent: `Skip ${hung.map(name).join(", ")} and run` });
    skip.addEventListener("click", () => {
      hung.forEach((c) => { stopped.delete(c); skipped.add(c); });
      run(cell);
    });
    const edit = Object.assign(document.createElement("button"), { type: "button", textContent: `Edit ${name(hung[0])}` });
    edit.addEventListener("click", () => {
      const box = hung[0].querySelector("textarea");
      hung[0].scrollIntoView({ block: "center" });
      box.focus();
    });
    note.append(p, skip, edit);
    cell.querySelector("[data-output]").replaceChildren(note);
  }

  async function run(cell) {
    if (busy) return;
    const above = cells.slice(0, cells.indexOf(cell)).filter((c) => !ran.has(c) && !skipped.has(c));
    const hung = above.filter((c) => stopped.has(c));
    if (hung.length) {
      askAbout(cell, hung);
      return;
    }
    stopped.delete(cell); // the reader runs this one on purpose
    const code = new Map([...above, cell].map((c) => [c, c.querySelector("textarea").value])); // as Run was pressed
    setBusy(cell, true, above);
    try {
      await python.ready;
      for (const earlier of above) {
        if (ran.has(earlier)) continue;
        const result = await runOne(earlier, code.get(earlier), false);
        if (result.error) {
          cell.querySelector("[data-output]").replaceChildren(pre("error", `An earlier cell (${earlier.id}) failed, so this one did not run. Fix it first.`));
          return;
        }
      }
      await runOne(cell, code.get(cell), true);
    } catch (err) {
      if (err.message !== "Python was stopped") cell.querySelector("[data-output]").replaceChildren(pre("error", err.message));
    } finally {
      current = null;
      setBusy(cell, false);
    }
  }

  async function stop(cell) {
    ran.clear();
    skipped.clear();
    const hung = current || cell;
    stopped.add(hung);
    const which = hung === cell ? "this cell" : `${name(hung)} (above), which was running,`;
    cell.querySelector("[data-output]").replaceChildren(pre("quiet", `Stopped. Python is restarting, so the variables of every cell are gone. Running a cell again first runs the cells above it, but ${which} will not be run again unless you run it yourself (edit it first if it never ends).`));
    await python.restart();
  }

  for (const cell of cells) {
    const original = cell.querySelector("[data-original]").content.textContent;
    const box = document.createElement("textarea");
    box.className = "mh-editor-code";
    box.spellcheck = false;
    box.wrap = "off"; // long lines scroll sideways; wrapping would scramble Python's indentation
    box.value = load(`cell:${cell.id}`) ?? original;
    const fit = () => { box.rows = Math.max(3, box.value.split("\n").length + 1); };
    fit();
    box.setAttribute("aria-label", `Python code of ${cell.id}`);
    cell.querySelector("[data-code]").replaceWith(box);
    cell.querySelector("[data-cell-bar]").hidden = false;
    cell.querySelector("[data-run]").disabled = true;
    box.addEventListener("input", () => {
      fit();
      stopped.delete(cell); // edited: the reader may run it again
      save(`cell:${cell.id}`, box.value === original ? undefined : box.value);
    });
    box.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        run(cell);
      }
    });
    cell.querySelector("[data-run]").addEventListener("click", () => run(cell));
    cell.querySelector("[data-stop]").addEventListener("click", () => stop(cell));
    cell.querySelector("[data-reset]").addEventListener("click", () => {
      box.value = original;
      fit();
      stopped.delete(cell);
      save(`cell:${cell.id}`, undefined);
      box.focus();
    });
    const verdict = cell.querySelector("[data-verdict]");
    document.addEventListener("mh:cleared", () => { // results cleared: no verdict stays; the code does
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
  python.ready.then(() => cells.forEach((c) => { c.querySelector("[data-run]").disabled = false; }), () => {});
}
