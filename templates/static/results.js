// "Your results": what this reader answered in the chapter's check-yourself blocks and
// exercises, kept in this browser only, shown as a table and downloadable as CSV for a teacher.

import { addAttempt, chapterTitle, clearPage, pageAttempts } from "./attempts.js";

const COLUMNS = ["chapter", "block", "kind", "question", "answer", "result", "time"];

export function record(id, result) {
  addAttempt(id, result);
  render();
}

function rows() {
  const chapter = chapterTitle();
  const result = (a) => (a.correct === true ? "correct" : a.correct === false ? "not yet" : "guess");
  return pageAttempts()
    .flatMap(([id, list]) => list.map((a, i) => ({ chapter: a.chapter || chapter, block: id, attempt: i + 1, kind: a.kind, question: a.question, answer: a.answer, result: result(a), time: a.time })))
    .sort((a, b) => a.block.localeCompare(b.block, undefined, { numeric: true }) || a.attempt - b.attempt);
}

function cell(value) {
  let text = String(value ?? "");
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`; // a spreadsheet must not read an answer as a formula
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csv(list = rows()) {
  return [COLUMNS.join(","), ...list.map((r) => COLUMNS.map((c) => cell(r[c])).join(","))].join("\r\n") + "\r\n";
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
    clearPage();
    render();
  });
  render();
}
