// The class summary page (class.html): the teacher's files are read here with FileReader and
// summed up by classsummary.js; nothing is sent anywhere. Everything a file holds reaches the
// page as text (textContent), never as markup.

import { MAX_BYTES, progressText, summarise, summaryCSV } from "./classsummary.js";

const root = document.querySelector("[data-class]");
const bank = JSON.parse(root?.dataset.classBank ?? "[]");
let files = []; // {name, size, text} in the order given

function readText(file) {
  if (file.size > MAX_BYTES) return Promise.resolve({ name: file.name, size: file.size, text: "" });
  return new Promise((resolve) => {
    const reader = new FileReader();
    const done = (text) => resolve({ name: file.name, size: file.size, text });
    reader.onload = () => done(String(reader.result));
    reader.onerror = () => done("\u0000"); // unreadable: reported as not CSV
    reader.readAsText(file, "utf-8");
  });
}

function cells(tr, texts) {
  for (const text of texts) {
    const td = document.createElement("td");
    td.textContent = text;
    tr.append(td);
  }
  return tr;
}

function show(summary) {
  const skippedBox = root.querySelector("[data-class-skipped-box]");
  const list = root.querySelector("[data-class-skipped]");
  list.replaceChildren(...summary.skipped.map(({ name, problem }) => {
    const li = document.createElement("li");
    const strong = document.createElement("strong");
    strong.textContent = name;
    li.append(strong, ` ${problem}.`);
    return li;
  }));
  skippedBox.hidden = summary.skipped.length === 0;
  const box = root.querySelector("[data-class-summary]");
  box.hidden = summary.read.length === 0;
  const n = summary.read.length;
  root.querySelector("[data-class-count]").textContent =
    `${n} ${n === 1 ? "student" : "students"}: ${summary.read.map((f) => f.student).join(", ")}.`;
  root.querySelector("[data-class-questions] tbody").replaceChildren(
    ...summary.questions.map((q) => cells(document.createElement("tr"), [
      q.chapter,
      q.question,
      String(q.answered),
      q.firstRight === null ? "(not graded)" : String(q.firstRight),
      q.wrong ? `${q.wrong.answer} (${q.wrong.count}×)` : "",
      q.wrong?.feedback ?? "",
      q.medianTries === null ? "" : String(q.medianTries),
    ])),
  );
  root.querySelector("[data-class-students] tbody").replaceChildren(
    ...summary.students.map((s) => {
      const tr = document.createElement("tr");
      const th = document.createElement("th");
      th.scope = "row";
      th.textContent = s.student;
      tr.append(th);
      return cells(tr, [...s.chapters.map(progressText), progressText(s.path)]);
    }),
  );
  return summary;
}

let last = null;

async function add(list) {
  const read = await Promise.all([...list].map(readText));
  files = [...files, ...read];
  last = show(summarise(files, bank));
}

function download() {
  if (!last) return;
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([summaryCSV(last, bank)], { type: "text/csv" }));
  link.download = "many-heads-class-summary.csv";
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

if (root) {
  const drop = root.querySelector("[data-class-drop]");
  const input = root.querySelector("[data-class-files]");
  drop.hidden = false;
  input.addEventListener("change", () => {
    add(input.files).then(() => (input.value = ""));
  });
  drop.addEventListener("dragover", (e) => {
    e.preventDefault();
    drop.classList.add("is-over");
  });
  drop.addEventListener("dragleave", () => drop.classList.remove("is-over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("is-over");
    add(e.dataTransfer.files);
  });
  root.querySelector("[data-class-download]").addEventListener("click", download);
  root.querySelector("[data-class-print]").addEventListener("click", () => window.print());
  root.querySelector("[data-class-clear]").addEventListener("click", () => {
    files = [];
    last = show(summarise([], bank));
    input.focus();
  });
}
