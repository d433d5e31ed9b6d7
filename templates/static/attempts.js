// Every answer a reader gives on a page, in order, with its time: "Check yourself" choices,
// exercise runs and "Guess first" guesses. Kept in storage (storage.js) under
// "attempts:BLOCK" as a JSON list of {kind, chapter, question, answer, choice, correct, time};
// `correct` is true or false for checks and exercises and null for a guess. The first attempt
// of a block is its first try, which is what a score counts (lms.js). "Your results"
// (results.js) shows them all; a new attempt is announced as the event "mh:answered".

import { entries, load, save, siteEntries } from "./storage.js";

function parse(json) {
  try {
    const list = JSON.parse(json);
    return Array.isArray(list) ? list.filter((a) => a && typeof a === "object") : [];
  } catch {
    return [];
  }
}

// A block's attempts; an answer kept by an earlier version of the site (the last one only,
// under "result:BLOCK") counts as one attempt.
export function attemptsOf(id) {
  const kept = load(`attempts:${id}`);
  if (kept !== null) return parse(kept);
  const old = load(`result:${id}`);
  return old === null ? [] : parse(`[${old}]`);
}

export function setAttempts(id, list) {
  save(`attempts:${id}`, list.length ? JSON.stringify(list) : undefined);
  save(`result:${id}`, undefined);
}

export function chapterTitle() {
  return document.querySelector("h1")?.textContent.trim() ?? "";
}

export function addAttempt(id, attempt) {
  const list = attemptsOf(id);
  list.push({ chapter: chapterTitle(), ...attempt, time: new Date().toISOString() });
  setAttempts(id, list);
  document.dispatchEvent(new CustomEvent("mh:answered", { detail: { id } }));
}

// [block, attempts] for every block of this page with an attempt.
export function pageAttempts() {
  const ids = new Set([...entries("attempts:"), ...entries("result:")].map(([id]) => id));
  return [...ids].map((id) => [id, attemptsOf(id)]).filter(([, list]) => list.length);
}

// {page, block, attempts} for every block of every chapter of this site with an attempt.
export function siteAttempts() {
  const found = new Map();
  for (const [name, wrap] of [["result:", (j) => `[${j}]`], ["attempts:", (j) => j]]) {
    for (const [page, block, json] of siteEntries(name)) {
      found.set(`${page}\u0000${block}`, { page, block, attempts: parse(wrap(json)) });
    }
  }
  return [...found.values()].filter((e) => e.attempts.length);
}

// Every attempt of this page gone; "mh:cleared" tells the blocks to take their verdicts back.
export function clearPage() {
  for (const [id] of [...entries("attempts:"), ...entries("result:")]) setAttempts(id, []);
  document.dispatchEvent(new CustomEvent("mh:cleared"));
  document.dispatchEvent(new CustomEvent("mh:answered", { detail: { id: null } }));
}
