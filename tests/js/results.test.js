// The results file's name (templates/static/results.js), in Node: the student's name in it, and
// in a course package the chapter's, whose answers alone the file holds there.

import assert from "node:assert/strict";
import { test } from "node:test";

// the page the module reads: a chapter of a SCORM package (its <meta name="mh-lms">), or not
let lms = false;
globalThis.location = { pathname: "/course/sco/real-heads.html" };
globalThis.document = { querySelector: (s) => (lms && s === 'meta[name="mh-lms"]' ? {} : null) };
const { fileName } = await import("../../templates/static/results.js");

test("on the site, one file for every chapter, named for the student", () => {
  lms = false;
  assert.equal(fileName("Ada Lovelace"), "many-heads-results-ada-lovelace.csv");
  assert.equal(fileName(""), "many-heads-results.csv");
});

test("in a course package, the file is named by its chapter too", () => {
  lms = true;
  assert.equal(fileName("Ada Lovelace"), "many-heads-real-heads-results-ada-lovelace.csv");
  assert.equal(fileName(""), "many-heads-real-heads-results.csv");
});
