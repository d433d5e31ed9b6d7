// The class summary's logic, without a page (class.js shows it; tests/js/classsummary.test.js
// runs it in Node): students' "Your results" files (results.js writes them) read against the
// path's questions as the pages ask them (BANK: [{slug, title, questions: [{id, kind,
// question, choices, right, feedback}]}], written by the build), then summed up per question
// and per student. A file that cannot be one student's results of this course is left out
// with the reason, never fatal: too large, not CSV, other columns, another course, several
// students, or a file or student already read.

import { cell, COLUMNS } from "./results.js";

export const MAX_BYTES = 10 * 1024 * 1024;
const GRADED = new Set(["check", "exercise"]);

// RFC 4180 CSV -> rows of fields: quoted fields may hold commas, quotes ("") and line breaks;
// lines end in CRLF or LF. Throws an Error saying where the text stops being CSV.
export function parseCSV(text) {
  const rows = [];
  let row = [];
  let field = "";
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let quoted = false;
  let fresh = true; // at the start of a field
  for (; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c !== '"') field += c;
      else if (text[i + 1] === '"') {
        field += '"';
        i++;
      } else {
        quoted = false;
        const next = text[i + 1];
        if (next !== undefined && next !== "," && next !== "\r" && next !== "\n") {
          throw new Error(`row ${rows.length + 1} has text after a closing quote`);
        }
      }
    } else if (c === '"' && fresh) {
      quoted = true;
      fresh = false;
    } else if (c === ",") {
      row.push(field);
      field = "";
      fresh = true;
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
      fresh = true;
    } else if (c === '"') {
      throw new Error(`row ${rows.length + 1} has a quote inside a field not in quotes`);
    } else {
      field += c;
      fresh = false;
    }
  }
  if (quoted) throw new Error(`row ${rows.length + 1} opens a quote it never closes`);
  if (!fresh || field || row.length) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

// A field as the student's browser kept it: results.js puts a ' before a leading = + - @ tab
// or return (against formula injection), which is taken off again here.
const unguard = (text) => (/^'[=+\-@\t\r]/.test(text) ? text.slice(1) : text);
const squeeze = (text) => String(text ?? "").replace(/\s+/g, " ").trim();
const folded = (name) => squeeze(name).normalize("NFKC").toLowerCase();

function chaptersOf(bank) {
  const byName = new Map();
  for (const c of bank) {
    byName.set(c.slug, c);
    byName.set(squeeze(c.title), c);
  }
  return byName;
}

// FILE ({name, size, text}) read against BANK: {name, student, attempts} where each attempt is
// {chapter (slug), block, attempt (1, 2, …), answer, result}, or {name, problem}.
export function readFile(file, bank) {
  const { name } = file;
  const left = (problem) => ({ name, problem });
  if (file.size > MAX_BYTES) {
    const mb = (file.size / 1024 / 1024).toFixed(1);
    return left(`is ${mb} MB, more than the 10 MB a results file may have`);
  }
  let rows;
  try {
    rows = parseCSV(file.text);
  } catch (e) {
    return left(`is not a CSV file: ${e.message}`);
  }
  if (!rows.length || rows[0].join(",") !== COLUMNS.join(",")) {
    return left(`does not have the columns of a "Your results" file (${COLUMNS.join(", ")})`);
  }
  const body = rows.slice(1).filter((r) => !(r.length === 1 && r[0] === ""));
  const bad = body.findIndex((r) => r.length !== COLUMNS.length);
  if (bad >= 0) {
    return left(`row ${bad + 2} has ${body[bad].length} fields, not ${COLUMNS.length}`);
  }
  const records = body.map((r) => Object.fromEntries(COLUMNS.map((c, k) => [c, unguard(r[k])])));
  const chapters = chaptersOf(bank);
  const ours = records.filter((r) => chapters.has(squeeze(r.chapter)));
  if (records.length && !ours.length) {
    const theirs = [...new Set(records.map((r) => squeeze(r.chapter)))].slice(0, 3);
    return left(`is from another course: no chapter of this site (it has ${theirs.join(", ")})`);
  }
  if (!records.length) return left("holds no answers");
  const students = [...new Set(records.map((r) => squeeze(r.student)).filter(Boolean))];
  if (students.length > 1) {
    return left(`holds the answers of several students (${students.slice(0, 3).join(", ")}); ` +
      "each file is one student's");
  }
  const student = students[0] || name.replace(/\.csv$/i, "");
  const attempts = ours.map((r) => ({
    chapter: chapters.get(squeeze(r.chapter)).slug,
    block: r.block,
    attempt: Number(r.attempt) || 1,
    answer: r.answer,
    result: r.result,
  }));
  return { name, student, attempts };
}

const median = (values) => {
  if (!values.length) return null;
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

// Whether an attempt at Q (a bank question) was right: a check's or exercise's result, a
// guess naming the chapter's answer; null for a guess whose chapter names none.
function isRight(q, a) {
  if (GRADED.has(q.kind)) return a.result === "correct";
  const k = (q.right ?? []).indexOf(true);
  return k < 0 ? null : squeeze(a.answer) === squeeze(q.choices[k]);
}

// The most chosen wrong answer to Q among ATTEMPTS: {answer, count, feedback}, the choices'
// order breaking a tie; null if none was wrong. An exercise's wrong code is not tallied.
function mostWrong(q, attempts) {
  if (q.kind === "exercise") return null;
  const counts = new Map();
  for (const a of attempts) {
    if (isRight(q, a) !== false) continue;
    const text = squeeze(a.answer);
    counts.set(text, (counts.get(text) ?? 0) + 1);
  }
  const place = (text) => {
    const k = (q.choices ?? []).map(squeeze).indexOf(text);
    return k < 0 ? Infinity : k;
  };
  const [top] = [...counts].sort((x, y) => y[1] - x[1] || place(x[0]) - place(y[0]));
  if (!top) return null;
  const k = place(top[0]);
  return { answer: top[0], count: top[1], feedback: q.feedback?.[k] ?? "" };
}

// FILES ({name, size, text}, in the order given) summed up against BANK: {read: [{name,
// student}], skipped: [{name, problem}], questions: [...], students: [...]}.
export function summarise(files, bank) {
  const read = [];
  const skipped = [];
  const texts = new Map();
  const whose = new Map();
  for (const file of files) {
    const same = texts.get(file.text);
    if (same !== undefined && file.size <= MAX_BYTES) {
      skipped.push({ name: file.name, problem: `is the same file as ${same}` });
      continue;
    }
    const got = readFile(file, bank);
    if (got.problem) {
      skipped.push(got);
      continue;
    }
    const before = whose.get(folded(got.student));
    if (before) {
      skipped.push({
        name: file.name,
        problem: `holds the answers of ${got.student}, already read from ${before}`,
      });
      continue;
    }
    texts.set(file.text, file.name);
    whose.set(folded(got.student), file.name);
    read.push(got);
  }
  return { read, skipped, questions: perQuestion(read, bank), students: perStudent(read, bank) };
}

function triesOf(file, slug, block) {
  return file.attempts
    .filter((a) => a.chapter === slug && a.block === block)
    .sort((a, b) => a.attempt - b.attempt);
}

function perQuestion(read, bank) {
  return bank.flatMap((c) =>
    c.questions.map((q) => {
      const tries = read.map((f) => triesOf(f, c.slug, q.id)).filter((t) => t.length);
      const firsts = tries.map((t) => isRight(q, t[0]));
      const graded = GRADED.has(q.kind) || (q.right ?? []).includes(true);
      return {
        chapter: c.title,
        id: `${c.slug}.${q.id}`,
        kind: q.kind,
        question: q.question,
        answered: tries.length,
        firstRight: graded ? firsts.filter((r) => r).length : null,
        wrong: mostWrong(q, tries.flat()),
        medianTries: median(tries.map((t) => t.length)),
      };
    }),
  );
}

// Per student, per chapter: {answered, right, total} of its checks and exercises (a score
// counts them; a guess is not graded), then the same for the whole path.
function perStudent(read, bank) {
  return read.map((f) => {
    const chapters = bank.map((c) => {
      const graded = c.questions.filter((q) => GRADED.has(q.kind));
      const firsts = graded.map((q) => triesOf(f, c.slug, q.id)[0]).filter(Boolean);
      return {
        slug: c.slug,
        answered: firsts.length,
        right: firsts.filter((a) => a.result === "correct").length,
        total: graded.length,
      };
    });
    const sum = (key) => chapters.reduce((n, c) => n + c[key], 0);
    const path = { answered: sum("answered"), right: sum("right"), total: sum("total") };
    return { student: f.student, file: f.name, chapters, path };
  });
}

export const progressText = (p) =>
  p.total ? `${p.answered} of ${p.total}, ${p.right} right first` : "nothing graded";

// The summary as CSV, every field quoted and guarded against formula injection as "Your
// results" is: the questions' table, a blank line, then the students' table.
export function summaryCSV(summary, bank) {
  const line = (fields) => fields.map(cell).join(",");
  const questions = [
    line(["chapter", "question id", "kind", "question", "answered", "right at first try",
      "most chosen wrong answer", "times chosen", "its feedback", "median tries"]),
    ...summary.questions.map((q) => line([q.chapter, q.id, q.kind, q.question, q.answered,
      q.firstRight ?? "", q.wrong?.answer ?? "", q.wrong?.count ?? "", q.wrong?.feedback ?? "",
      q.medianTries ?? ""])),
  ];
  const students = [
    line(["student", "file", ...bank.map((c) => c.title), "the path"]),
    ...summary.students.map((s) => line([s.student, s.file,
      ...s.chapters.map(progressText), progressText(s.path)])),
  ];
  return [...questions, "", ...students].join("\r\n") + "\r\n";
}
