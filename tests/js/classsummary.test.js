// The class summary's logic (templates/static/classsummary.js), in Node: students' "Your
// results" files as results.js writes them (its own csv()), read against a bank of two
// chapters, summed up per question and per student; and every kind of file that must be left
// out, each with the reason the teacher is shown.

import assert from "node:assert/strict";
import { test } from "node:test";

import { COLUMNS, csv } from "../../templates/static/results.js";
import {
  MAX_BYTES, parseCSV, readFile, summarise, summaryCSV,
} from "../../templates/static/classsummary.js";

const BANK = [
  {
    slug: "one-head",
    title: "One head, from scratch",
    questions: [
      { id: "guess-1", kind: "guess", question: "Twice as long?", choices: ["Nothing", "Bigger",
        "Doubles"], right: [false, true, false], feedback: ["The answer: Bigger",
        "That is the answer.", "The answer: Bigger"] },
      { id: "check-1", kind: "check", question: "Which cells?", choices: ["Above", "On",
        "Below"], right: [true, false, false], feedback: ["Right. Later words.",
        "Not quite. A word may look at itself.", "Not quite. Backwards."] },
      { id: "exercise-1", kind: "exercise", question: "Make it attend." },
    ],
  },
  {
    slug: "many-heads",
    title: "Many heads looking at once",
    questions: [
      { id: "check-1", kind: "check", question: "Previous word?", choices: ["Nouns", "Order"],
        right: [false, true], feedback: ["Not quite. Far back.", "Right. Phrases."] },
    ],
  },
];

// one attempt as results.js's csv() takes it
const row = (student, chapter, block, attempt, answer, result, kind = "check yourself") => ({
  student, chapter, block, kind, question: "?", attempt, answer, result,
  time: "2026-12-07T09:00:00.000Z",
});
const file = (name, rows) => {
  const text = csv(rows);
  return { name, size: text.length, text };
};
const T1 = "One head, from scratch";
const T2 = "Many heads looking at once";

const ADA = file("many-heads-results-ada.csv", [
  row("Ada", T1, "guess-1", 1, "Doubles", "guess", "guess first"),
  row("Ada", T1, "check-1", 1, "Below", "not yet"),
  row("Ada", T1, "check-1", 2, "On", "not yet"),
  row("Ada", T1, "check-1", 3, "Above", "correct"),
  row("Ada", T1, "exercise-1", 1, "x = 1", "correct", "exercise"),
  row("Ada", T2, "check-1", 1, "Order", "correct"),
]);
const BOB = file("many-heads-results-bob.csv", [
  row("Bob", T1, "guess-1", 1, "Bigger", "guess", "guess first"),
  row("Bob", T1, "check-1", 1, "Below", "not yet"),
  row("Bob", T1, "check-1", 2, "Above", "correct"),
]);
const CY = file("many-heads-results-cy.csv", [row("Cy", "one-head", "check-1", 1, "Above",
  "correct")]);

test("two students: per question, answered, right first, most chosen wrong, median tries", () => {
  const s = summarise([ADA, BOB, CY], BANK);
  assert.deepEqual(s.skipped, []);
  assert.deepEqual(s.read.map((f) => f.student), ["Ada", "Bob", "Cy"]);
  const [guess, check, exercise, other] = s.questions;
  assert.deepEqual(guess, {
    chapter: T1, id: "one-head.guess-1", kind: "guess", question: "Twice as long?",
    answered: 2, firstRight: 1, medianTries: 1,
    wrong: { answer: "Doubles", count: 1, feedback: "The answer: Bigger" },
  });
  assert.equal(check.answered, 3);
  assert.equal(check.firstRight, 1); // Cy, whose file names the chapter by its slug
  assert.deepEqual(check.wrong, { answer: "Below", count: 2, feedback: "Not quite. Backwards." });
  assert.equal(check.medianTries, 2); // 3, 2, 1
  assert.equal(exercise.answered, 1);
  assert.equal(exercise.wrong, null);
  assert.equal(other.answered, 1);
  assert.equal(other.firstRight, 1);
  assert.equal(other.medianTries, 1);
  assert.deepEqual(s.students[0].chapters, [
    { slug: "one-head", answered: 2, right: 1, total: 2 },
    { slug: "many-heads", answered: 1, right: 1, total: 1 },
  ]);
  assert.deepEqual(s.students[0].path, { answered: 3, right: 2, total: 3 });
  assert.deepEqual(s.students[1].path, { answered: 1, right: 0, total: 3 });
});

test("an even count of students takes the mean of the middle two tries", () => {
  const s = summarise([ADA, BOB], BANK);
  assert.equal(s.questions[1].medianTries, 2.5);
});

test("every kind of file that cannot be one student's results here is left out by name", () => {
  const header = `${COLUMNS.map((c) => `"${c}"`).join(",")}\r\n`;
  const files = [
    ADA,
    { name: "big.csv", size: MAX_BYTES + 1, text: "" },
    { name: "notes.txt", size: 9, text: 'a,"b\nc' },
    { name: "grades.csv", size: 20, text: "name,grade\r\nAda,20\r\n" },
    { name: "short.csv", size: 40, text: `${header}"Ada","x"\r\n` },
    file("other-course.csv", [row("Dee", "Photosynthesis", "check-1", 1, "A", "correct")]),
    { ...ADA, name: "ada-again.csv" },
    file("ada-renamed.csv", [row("ada", T1, "check-1", 1, "Above", "correct")]),
    file("two.csv", [row("Eve", T1, "check-1", 1, "A", "correct"),
      row("Fay", T1, "check-1", 1, "A", "correct")]),
    { name: "empty.csv", size: header.length, text: header },
  ];
  const s = summarise(files, BANK);
  assert.deepEqual(s.read.map((f) => f.name), ["many-heads-results-ada.csv"]);
  assert.deepEqual(s.skipped, [
    { name: "big.csv", problem: "is 10.0 MB, more than the 10 MB a results file may have" },
    { name: "notes.txt", problem: "is not a CSV file: row 1 opens a quote it never closes" },
    { name: "grades.csv", problem: 'does not have the columns of a "Your results" file ' +
      "(student, chapter, block, kind, question, attempt, answer, result, time)" },
    { name: "short.csv", problem: "row 2 has 2 fields, not 9" },
    { name: "other-course.csv",
      problem: "is from another course: no chapter of this site (it has Photosynthesis)" },
    { name: "ada-again.csv", problem: "is the same file as many-heads-results-ada.csv" },
    { name: "ada-renamed.csv",
      problem: "holds the answers of ada, already read from many-heads-results-ada.csv" },
    { name: "two.csv",
      problem: "holds the answers of several students (Eve, Fay); each file is one student's" },
    { name: "empty.csv", problem: "holds no answers" },
  ]);
});

test("a file of 10 MB exactly is read; one byte more is not", () => {
  const at = { ...ADA, size: MAX_BYTES };
  assert.equal(readFile(at, BANK).student, "Ada");
  assert.match(readFile({ ...ADA, size: MAX_BYTES + 1 }, BANK).problem, /more than the 10 MB/);
});

test("answers guarded against formula injection are read back, and guarded again going out", () => {
  const evil = file("evil.csv", [
    row("=HYPERLINK(\"http://x\")", T1, "check-1", 1, "=1+1", "not yet"),
    row("=HYPERLINK(\"http://x\")", T1, "check-1", 2, "-2", "not yet"),
    row("=HYPERLINK(\"http://x\")", T1, "check-1", 3, "=1+1", "not yet"),
  ]);
  assert.match(evil.text, /"'=1\+1"/); // results.js guarded it
  const s = summarise([evil], BANK);
  assert.equal(s.read[0].student, '=HYPERLINK("http://x")');
  assert.deepEqual(s.questions[1].wrong, { answer: "=1+1", count: 2, feedback: "" });
  const out = summaryCSV(s, BANK);
  const rows = parseCSV(out);
  const fields = rows.flat();
  assert.ok(fields.includes("'=1+1"));
  assert.ok(fields.includes("'=HYPERLINK(\"http://x\")"));
  assert.ok(!fields.some((f) => /^[=+\-@\t\r]/.test(f)), "a field a spreadsheet runs");
});

test("the summary's CSV holds the questions' table, then the students'", () => {
  const rows = parseCSV(summaryCSV(summarise([ADA, BOB], BANK), BANK));
  assert.deepEqual(rows[0].slice(0, 5),
    ["chapter", "question id", "kind", "question", "answered"]);
  assert.deepEqual(rows[2], [T1, "one-head.check-1", "check", "Which cells?", "2", "0", "Below",
    "2", "Not quite. Backwards.", "2.5"]);
  assert.deepEqual(rows[5], [""]);
  assert.deepEqual(rows[6], ["student", "file", T1, T2, "the path"]);
  assert.deepEqual(rows[7], ["Ada", "many-heads-results-ada.csv", "2 of 2, 1 right first",
    "1 of 1, 1 right first", "3 of 3, 2 right first"]);
});

test("a chapter asking nothing graded says so rather than 0 of 0", () => {
  const bank = [...BANK, { slug: "split", title: "Split", questions: [
    { id: "guess-1", kind: "guess", question: "?", choices: ["a"], right: [false],
      feedback: [""] }] }];
  const s = summarise([ADA], bank);
  assert.equal(s.questions.at(-1).firstRight, null); // a guess naming no answer
  assert.equal(s.questions[3].firstRight, 1);
  assert.equal(summarise([BOB], bank).questions[3].firstRight, 0); // asked, none answered
  const rows = parseCSV(summaryCSV(s, bank));
  assert.deepEqual(rows.at(-1).slice(-2), ["nothing graded", "3 of 3, 2 right first"]);
});

test("CSV: quotes, commas and line breaks inside fields; a byte-order mark; LF endings", () => {
  assert.deepEqual(parseCSV('\ufeff"a,b","c""d"\n"e\r\nf",g\n'), [["a,b", 'c"d'], ["e\r\nf", "g"]]);
  assert.deepEqual(parseCSV("x,,y"), [["x", "", "y"]]);
  assert.throws(() => parseCSV('"a"b'), /text after a closing quote/);
});
