// Live code cells: the author's code becomes an editable box; Run sends it to Python
// (toymodels.page.cells.run, the function the build ran) and shows what came back as text.
// Cells share one namespace per page, so running a cell first runs the cells above it
// that have not run yet. Edits and solved exercises are kept in localStorage.

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
  let busy = false;

  function show(cell, result) {
    const out = cell.querySelector("[data-output]");
    out.replaceChildren();
    if (result.stdout) out.append(pre("stdout", result.stdout));
    if (result.value !== null && result.value !== undefined) out.append(pre("value", result.value));
    if (result.error) out.append(pre("error", result.error));
    if (!out.childElementCount) out.append(pre("quiet", "(ran, printed nothing)"));
    const verdict = cell.querySelector("[data-verdict]");
    if (verdict && result.check) {
      verdict.textContent = result.check.ok ? result.check.message : `Not yet: ${result.check.message}`;
      verdict.className = `mh-verdict ${result.check.ok ? "right" : "wrong"}`;
      if (result.check.ok) save(`exercise:${cell.id}`, "solved");
      record(cell.id, {
        kind: "exercise",
        question: cell.querySelector(".mh-question").textContent.trim(),
        answer: cell.querySelector("textarea").value,
        correct: result.check.ok,
      });
    }
  }

  async function runOne(cell) {
    const code = cell.querySelector("textarea").value;
    const result = await python.call("toymodels.page.cells:run", [code, cell.dataset.ns, cell.dataset.cellCheck || null]);
    ran.add(cell);
    show(cell, result);
    return result;
  }

  function setBusy(cell, on) {
    busy = on;
    for (const c of cells) c.querySelector("[data-run]").disabled = on;
    cell.querySelector("[data-stop]").hidden = !on;
    if (on) cell.querySelector("[data-output]").replaceChildren(pre("quiet", "Running…"));
  }

  async function run(cell) {
    if (busy) return;
    setBusy(cell, true);
    try {
      await python.ready;
      for (const earlier of cells.slice(0, cells.indexOf(cell))) {
        if (ran.has(earlier)) continue;
        const result = await runOne(earlier);
        if (result.error) {
          cell.querySelector("[data-output]").replaceChildren(pre("error", `An earlier cell (${earlier.id}) failed, so this one did not run. Fix it first.`));
          return;
        }
      }
      await runOne(cell);
    } catch (err) {
      if (err.message !== "Python was stopped") cell.querySelector("[data-output]").replaceChildren(pre("error", err.message));
    } finally {
      setBusy(cell, false);
    }
  }

  async function stop(cell) {
    ran.clear();
    cell.querySelector("[data-output]").replaceChildren(pre("quiet", "Stopped. Python is restarting, so the cells' variables are gone; the next Run runs the cells above it again first."));
    await python.restart();
  }

  for (const cell of cells) {
    const original = cell.querySelector("[data-original]").content.textContent;
    const box = document.createElement("textarea");
    box.className = "mh-editor-code";
    box.spellcheck = false;
    box.value = load(`cell:${cell.id}`) ?? original;
    box.rows = Math.max(3, box.value.split("\n").length + 1);
    box.setAttribute("aria-label", `Python code of ${cell.id}`);
    cell.querySelector("[data-code]").replaceWith(box);
    cell.querySelector("[data-cell-bar]").hidden = false;
    cell.querySelector("[data-run]").disabled = true;
    box.addEventListener("input", () => save(`cell:${cell.id}`, box.value === original ? undefined : box.value));
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
      save(`cell:${cell.id}`, undefined);
      box.focus();
    });
    const verdict = cell.querySelector("[data-verdict]");
    if (verdict && load(`exercise:${cell.id}`) === "solved") {
      verdict.textContent = "You solved this exercise earlier. Run it again to see the check.";
      verdict.className = "mh-verdict right";
    }
  }
  python.ready.then(() => cells.forEach((c) => { c.querySelector("[data-run]").disabled = false; }), () => {});
}
