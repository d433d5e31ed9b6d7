// "Your results": what this reader answered in the chapter's check-yourself blocks and
// exercises, kept in this browser only, shown as a table and downloadable as CSV for a teacher.

import { entries, save } from "./storage.js";

const COLUMNS = ["chapter", "block", "kind", "question", "answer", "result", "time"];

export function record(id, result) {
  save(`result:${id}`, JSON.stringify({ ...result, time: new Date().toISOString() }));
  render();
}

function rows() {
  const chapter = document.querySelector("h1")?.textContent.trim() ?? "";
  return entries("result:").map(([id, json]) => {
    try {
      const r = JSON.parse(json);
      return { chapter, block: id, kind: r.kind, question: r.question, answer: r.answer, result: r.correct ? "correct" : "not yet", time: r.time };
    } catch {
      return null;
    }
  }).filter(Boolean).sort((a, b) => a.block.localeCompare(b.block, undefined, { numeric: true }));
}

// One CSV field, as OWASP advises against formula injection: a leading = + - @ tab or return
// gets a ' so that a spreadsheet shows it as text, and every field is quoted, so that a
// spreadsheet splitting on semicolons or tabs (as many locales do) does not start a new cell,
// perhaps a formula, inside an answer such as x;=1+1.
function cell(value) {
  let text = String(value ?? "");
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return `"${text.replace(/"/g, '""')}"`;
}

export function csv(list = rows()) {
  return [COLUMNS.map(cell).join(","), ...list.map((r) => COLUMNS.map((c) => cell(r[c])).join(","))].join("\r\n") + "\r\n";
}

function render() {
  const section = document.querySelector("[data-results]");
  if (!section) return;
  const list = rows();
  const body = section.querySelector("tbody");
  body.replaceChildren(...list.map((r) => {
    const tr = document.createElement("tr");
    for (const key of ["question", "answer", "result"]) {
      const td = document.createElement("td");
      td.textContent = r[key];
      tr.append(td);
    }
    return tr;
  }));
  section.querySelector("[data-results-empty]").hidden = list.length > 0;
  section.querySelector("[data-results-table]").hidden = list.length === 0;
  section.querySelector("[data-results-download]").disabled = list.length === 0;
}

export function setupResults() {
  const section = document.querySelector("[data-results]");
  if (!section || !document.querySelector("[data-check], .mh-exercise")) return;
  section.hidden = false;
  section.querySelector("[data-results-download]").addEventListener("click", () => {
    const slug = location.pathname.split("/").pop().replace(/\.html$/, "") || "chapter";
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([csv()], { type: "text/csv" }));
    link.download = `many-heads-${slug}-results.csv`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 1000);
  });
  section.querySelector("[data-results-clear]").addEventListener("click", () => {
    for (const [id] of entries("result:")) save(`result:${id}`, undefined);
    render();
  });
  render();
}
