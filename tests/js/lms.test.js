// SCORM suspend data (templates/static/lms.js), in Node: a chapter's start with suspend data
// of 1 MB and 5 MB reads only what the edition lets a package write, restores
// the records within it, and writes back suspend data within the limit; a guess of 200,000
// "|" is cut to fit in one pass. The page is a stand-in of two blocks (a check and a guess),
// the LMS one of SCORM 1.2's API whose every value is kept; the browser side is tested in
// tests/test_scorm.py.

import assert from "node:assert/strict";
import { test } from "node:test";

// what lms.js, attempts.js and storage.js read of the page, before they are imported
const option = (label, right) => ({
  querySelector: (s) => (s === "label" ? { textContent: label } : right ? {} : null),
});
const block = (id, kind, options = []) => ({
  id,
  matches: (selector) => selector === `[data-${kind}]`,
  querySelector: (s) => (s === "legend, .mh-question" ? { textContent: `${id}?` } : null),
  querySelectorAll: (s) => (s === ".mh-option" ? options : []),
});
const PAGE = [block("check-1", "check", [option("A", true), option("B", false)]),
  block("guess-2", "guess")];
globalThis.location = { pathname: "/course/a.html" };
globalThis.document = {
  querySelector: () => null,
  querySelectorAll: (s) => (s.includes("[data-guess]") ? PAGE : []),
  addEventListener() {},
};
globalThis.window = { addEventListener() {} };

const lms = await import("../../templates/static/lms.js");
const { attemptsOf, setAttempts } = await import("../../templates/static/attempts.js");
const { load } = await import("../../templates/static/storage.js");

// SCORM 1.2's API, holding DATA; -> the values it holds after the chapter started
function start(data) {
  window.API = {
    LMSInitialize: () => "true",
    LMSGetValue: (element) => data[element] ?? "",
    LMSSetValue: (element, value) => {
      data[element] = value;
      return "true";
    },
    LMSCommit: () => "true",
    LMSFinish: () => "true",
    LMSGetLastError: () => "0",
    LMSGetErrorString: () => "",
  };
  lms.connect("1.2");
  return data;
}

for (const size of [1_000_000, 5_000_000]) {
  test(`a start with ${size.toLocaleString("en")} characters of suspend data`, () => {
    const long = `m1|c1.2.01.0,1|g2.1.--.~${"x".repeat(size)}`;
    const held = start({ "cmi.suspend_data": long });
    // the check is restored: two tries, wrong (B) then right (A)
    const tries = attemptsOf("check-1");
    assert.deepEqual(tries.map((t) => [t.answer, t.correct]), [["B", false], ["A", true]]);
    // the guess lies beyond SCORM 1.2's 4,096 characters: passed over, nothing of it kept
    assert.equal(load("guess-2"), null);
    assert.deepEqual(attemptsOf("guess-2"), []);
    assert.equal(held["cmi.suspend_data"], "m1|c1.2.01.0,1");
  });
}

test("decode keeps what lies within the limit, whole records only", () => {
  const records = ["m1", "c1.1.11.0,0", `g2.1.--.~${"%7C".repeat(30)}`, "c3.1.00.1,1"];
  const text = records.join("|");
  const at = (n) => Object.keys(lms.decode(`${text}|${"y".repeat(5_000_000)}`, n));
  assert.deepEqual(at(text.length), ["check-1", "guess-2", "check-3"]); // the cut on a "|"
  assert.deepEqual(at(text.length - 1), ["check-1", "guess-2"]); // the cut inside check-3
  assert.equal(lms.decode(text)["guess-2"].answer, `~${"%7C".repeat(30)}`);
  const huge = lms.decode(`m1|g2.1.--.~${"z".repeat(5_000_000)}|c1.1.11.0,0`);
  assert.deepEqual(huge, {}); // nothing read beyond MAX_SUSPEND, and no record cut short
  const kept = lms.decode(`m1|g2.1.--.~${"z".repeat(lms.MAX_SUSPEND - 12)}`)["guess-2"].answer;
  assert.equal(kept.length, lms.MAX_SUSPEND - 11);
});

test("a guess of 200,000 '|' is cut to fit in one pass", () => {
  setAttempts("guess-2", [{ answer: "|".repeat(200_000), correct: null }]);
  const replace = String.prototype.replace;
  let calls = 0;
  String.prototype.replace = function counted(...args) {
    calls += 1;
    return replace.apply(this, args);
  };
  let text;
  try {
    text = lms.encode([{ id: "guess-2", kind: "guess", el: PAGE[1] }], 64000); // SCORM 2004's
  } finally {
    String.prototype.replace = replace;
  }
  // "m1|g2.1.--.~", then as many escaped "|" ("%7C") as the 64,000 characters hold
  const fit = Math.floor((64000 - "m1|g2.1.--.~".length) / 3);
  assert.equal(text, `m1|g2.1.--.~${"%7C".repeat(fit)}`);
  assert.ok(calls < 10, `${calls} replacements: the text was escaped again and again`);
});
