// "Your results": every answer this reader gave in the chapter's check-yourself blocks, guesses
// and exercises, each try with its time (attempts.js), kept in this browser only. The page shows
// this chapter's; the CSV for a teacher holds every chapter's, with the student's name in the
// file and in its name. Clearing a chapter's results asks first, takes every verdict off the
// page, and is refused in a frame of another site.

import { addAttempt, chapterTitle, clearPage, pageAttempts, siteAttempts } from "./attempts.js";
import { loadShared, saveShared } from "./storage.js";

export const COLUMNS = [
  "student", "chapter", "block", "kind", "question", "attempt", "answer", "result", "time",
];

export function record(id, result) {
  addAttempt(id, result);
  render();
}

const byBlock = (a, b) =>
  a.block.localeCompare(b.block, undefined, { numeric: true }) || a.attempt - b.attempt;

function verdict(a) {
  if (a.correct === true) return "correct";
  if (a.correct === false) return "not yet";
  return a.kind === "guess first" ? "guess" : "";
}

function row(a, i, block, chapter) {
  return {
    chapter: a.chapter || chapter,
    block,
    attempt: i + 1,
    kind: a.kind,
    question: a.question,
    answer: a.answer,
    result: verdict(a),
    time: a.time,
    earlier: a.earlier,
  };
}

// This chapter's attempts, block by block, each block's tries in order.
function rows() {
  const blockRows = ([id, list]) => list.map((a, i) => row(a, i, id, chapterTitle()));
  return pageAttempts().flatMap(blockRows).sort(byBlock);
}

// Every chapter's attempts, the chapters in reading order (the build lists them on the page).
function siteRows() {
  const order = (document.querySelector("[data-results]")?.dataset.chapters ?? "").split(" ");
  const place = (page) => {
    const i = order.indexOf(page.replace(/\.html$/, ""));
    return i < 0 ? order.length : i;
  };
  const student = studentName();
  const chapterOf = (page) => page.replace(/\.html$/, "");
  const blockRows = ({ page, block, attempts }) =>
    attempts.map((a, i) => ({ ...row(a, i, block, chapterOf(page)), page, student }));
  return siteAttempts()
    .flatMap(blockRows)
    .sort((a, b) => place(a.page) - place(b.page) || a.page.localeCompare(b.page) || byBlock(a, b));
}

export function studentName() {
  return (loadShared("student") ?? "").trim();
}

// One CSV field, as OWASP advises against formula injection: a leading = + - @ tab or return
// gets a ' so that a spreadsheet shows it as text, and every field is quoted, so that a
// spreadsheet splitting on semicolons or tabs (as many locales do) does not start a new cell,
// perhaps a formula, inside an answer such as x;=1+1.
export function cell(value) {
  let text = String(value ?? "");
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return `"${text.replace(/"/g, '""')}"`;
}

export function csv(list = siteRows()) {
  const line = (r) => COLUMNS.map((c) => cell(r[c])).join(",");
  return [COLUMNS.map(cell).join(","), ...list.map(line)].join("\r\n") + "\r\n";
}

// the chapter of a course package's page (its answers alone are in its file), or ""
function packaged() {
  if (!document.querySelector('meta[name="mh-lms"]')) return "";
  return location.pathname.split("/").pop().replace(/\.html$/, "");
}

// many-heads-results-ada-lovelace.csv: the student's name as letters and digits of any script,
// joined by hyphens, so every student's file has its own name; in a course package, named by
// its chapter too (many-heads-real-heads-results-ada-lovelace.csv), one file per chapter.
export function fileName(name = studentName(), chapter = packaged()) {
  const words = name.normalize("NFKC").toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const part = words.join("-").slice(0, 60).replace(/-+$/, "");
  return `many-heads-${chapter ? `${chapter}-` : ""}results${part ? `-${part}` : ""}.csv`;
}

function shownTime(a) {
  if (a.earlier || !a.time) return "an earlier visit";
  const date = new Date(a.time);
  return Number.isNaN(date.getTime()) ? String(a.time) : date.toLocaleString();
}

// An attempt's row; an exercise's code goes in a row of its own below it, across the table, in
// a monospace block that scrolls sideways rather than wrap (wrapping scrambles Python).
function rowsOf(r) {
  const tr = document.createElement("tr");
  const code = r.kind === "exercise";
  const answer = code ? "Your code, below" : r.answer;
  for (const text of [r.question, String(r.attempt), answer, r.result, shownTime(r)]) {
    const td = document.createElement("td");
    td.textContent = text;
    tr.append(td);
  }
  if (!code) return [tr];
  const below = document.createElement("tr");
  below.className = "mh-results-code-row";
  const td = document.createElement("td");
  td.colSpan = 5;
  const pre = document.createElement("pre");
  pre.className = "mh-results-code";
  pre.tabIndex = 0; // long lines scroll sideways; keyboard users must reach them
  pre.setAttribute("aria-label", `Your code, try ${r.attempt}`);
  pre.textContent = r.answer ?? "";
  td.append(pre);
  below.append(td);
  return [tr, below];
}

function render() {
  const section = document.querySelector("[data-results]");
  if (!section) return;
  const list = rows();
  const body = section.querySelector("tbody");
  // not replaceChildren(...rows): thousands of rows overflow the stack
  const all = document.createDocumentFragment();
  for (const r of list) all.append(...rowsOf(r));
  body.replaceChildren(all);
  section.querySelector("[data-results-empty]").hidden = list.length > 0;
  section.querySelector("[data-results-table]").hidden = list.length === 0;
  section.querySelector("[data-results-download]").disabled = siteAttempts().length === 0;
  const clear = section.querySelector("[data-results-clear]");
  if (clear) clear.disabled = list.length === 0;
}

function download() {
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([csv()], { type: "text/csv" }));
  link.download = fileName();
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

// In a frame of another site, a page could lay its own buttons over ours and have the reader
// click "Clear" and "Yes" blind (clickjacking): there the chapter does not clear, and offers
// to open itself on its own. Framed by a page of this same site, it clears as usual.
export function framedByAnotherSite(win = window) {
  if (win.top === win) return false;
  try {
    return win.top.location.origin !== win.location.origin;
  } catch {
    return true; // another origin's frame cannot be read
  }
}

// "Clear this chapter's results…" opens a question naming what would go; only "Yes" clears.
function setupClear(section) {
  const button = section.querySelector("[data-results-clear]");
  const confirm = section.querySelector("[data-results-confirm]");
  if (!button || !confirm) return;
  if (framedByAnotherSite()) {
    const note = document.createElement("p");
    note.className = "mh-help";
    note.dataset.resultsFramed = "";
    const link = Object.assign(document.createElement("a"), {
      href: location.href,
      target: "_blank",
      rel: "noopener",
      textContent: "open this chapter on its own",
    });
    const why = "This chapter is shown inside another site's page, so it cannot clear your " +
      "results here: ";
    note.append(why, link, " to clear them.");
    button.replaceWith(note);
    confirm.remove();
    return;
  }
  const close = (focus) => {
    confirm.hidden = true;
    button.setAttribute("aria-expanded", "false");
    focus.focus();
  };
  button.addEventListener("click", () => {
    const n = rows().length;
    confirm.querySelector("[data-results-confirm-text]").textContent =
      `Clear your ${n} ${n === 1 ? "answer" : "answers"} to this chapter from this browser? ` +
      "They cannot be brought back; download them first if your teacher needs them.";
    confirm.hidden = false;
    button.setAttribute("aria-expanded", "true");
    confirm.querySelector("[data-results-clear-no]").focus();
  });
  confirm.querySelector("[data-results-clear-no]").addEventListener("click", () => close(button));
  confirm.querySelector("[data-results-clear-yes]").addEventListener("click", () => {
    if (confirm.hidden || framedByAnotherSite()) return; // only the question on screen clears
    clearPage(); // the blocks take back their verdicts ("mh:cleared")
    render();
    close(section.querySelector("[data-results-download]"));
  });
}

function setupName(section) {
  const box = section.querySelector("[data-results-name]");
  box.value = studentName();
  box.addEventListener("input", () => {
    saveShared("student", box.value.trim() ? box.value : undefined);
  });
}

export function setupResults() {
  const section = document.querySelector("[data-results]");
  if (!section || !document.querySelector("[data-check], [data-guess], .mh-exercise")) return;
  section.hidden = false;
  section.querySelector("[data-results-download]").addEventListener("click", download);
  setupName(section);
  setupClear(section);
  render();
}
