// Inside an LMS: a chapter built as a SCORM package (its page carries <meta name="mh-lms"
// content="1.2|2004">) finds the LMS's API the way the standards say (the object `API` for
// SCORM 1.2, `API_1484_11` for 2004, searched up the parent frames, then from the opener) and
// reports to it: the session's start; "incomplete", then "completed" once every "Check
// yourself" and exercise has an answer; the score, the share of them answered right at the
// first try (0-100); each question as an interaction (its first try); the answers, as suspend
// data, so a returning student finds them (data it cannot read is passed over); the session's
// time; and a clean finish when the page goes. An error from the LMS is shown in one
// line and the chapter goes on working. Outside an LMS, or on the site itself, it does nothing.
//
// This module runs before main.js (its <script> comes first), so the answers the LMS kept are
// in storage before the blocks read them. Storage stays in memory inside an LMS: a computer a
// class shares never mixes two students' answers.

import { attemptsOf, chapterTitle, setAttempts } from "./attempts.js";
import { keepInMemory, load, loadShared, save, saveShared } from "./storage.js";

const EDITIONS = {
  "1.2": {
    api: "API",
    initialize: "LMSInitialize",
    terminate: "LMSFinish",
    getValue: "LMSGetValue",
    setValue: "LMSSetValue",
    commit: "LMSCommit",
    lastError: "LMSGetLastError",
    errorString: "LMSGetErrorString",
    status: "cmi.core.lesson_status",
    score: "cmi.core.score",
    scaled: null,
    progress: null,
    suspend: "cmi.suspend_data",
    sessionTime: "cmi.core.session_time",
    exit: "cmi.core.exit",
    name: "cmi.core.student_name",
    limit: 4096, // CMIString4096
    unset: [], // error codes that only mean "no value yet"
    duration: (ms) => timespan12(ms),
    // cmi.interactions.n: the learner's response (CMIFeedback, 255 characters), the time of day
    // (CMITime), "wrong" for a wrong answer, no description; code as a one-line fill-in
    response: "student_response",
    when: "time",
    wrong: "wrong",
    description: null,
    codeType: "fill-in",
    codeLimit: 255,
    textLimit: 255,
    at: (iso) => timeOfDay12(iso),
  },
  "2004": {
    api: "API_1484_11",
    initialize: "Initialize",
    terminate: "Terminate",
    getValue: "GetValue",
    setValue: "SetValue",
    commit: "Commit",
    lastError: "GetLastError",
    errorString: "GetErrorString",
    status: "cmi.completion_status",
    score: "cmi.score",
    scaled: "cmi.score.scaled",
    progress: "cmi.progress_measure",
    suspend: "cmi.suspend_data",
    sessionTime: "cmi.session_time",
    exit: "cmi.exit",
    name: "cmi.learner_name",
    limit: 64000, // characterstring SPM 64000 in the 4th edition
    unset: ["403"], // Data Model Element Value Not Initialized
    duration: (ms) => interval2004(ms),
    // cmi.interactions.n: learner_response, a timestamp (time(second,10,0)), "incorrect", a
    // description (localized_string_type SPM 250); code as a long-fill-in (SPM 4000)
    response: "learner_response",
    when: "timestamp",
    wrong: "incorrect",
    description: "description",
    codeType: "long-fill-in",
    codeLimit: 4000,
    textLimit: 250,
    at: (iso) => timestamp2004(iso),
  },
};

// --- finding the API ----------------------------------------------------------------------

// The API object in WIN or one of its parents, nearest first; a frame of another origin is
// passed over (reading it throws), and the search gives up after 500 frames, as ADL's does.
function scan(win, name) {
  for (let hops = 0; win && hops < 500; hops++) {
    try {
      if (win[name]) return win[name];
    } catch {
      // another origin: the API cannot be there for us
    }
    let parent = null;
    try {
      parent = win.parent;
    } catch {
      return null;
    }
    if (!parent || parent === win) return null;
    win = parent;
  }
  return null;
}

export function findAPI(name, win = window) {
  let api = scan(win, name);
  for (const opener of [() => win.opener, () => win.top.opener]) {
    if (api) break;
    try {
      const w = opener();
      if (w) api = scan(w, name);
    } catch {
      // an opener of another origin
    }
  }
  return api;
}

// --- values as each standard writes them ------------------------------------------------------

// SCORM 1.2 CMITimespan: HHHH:MM:SS.SS (two to four digits of hours).
export function timespan12(ms) {
  const cs = Math.min(Math.round(ms / 10), 9999 * 360000 + 359999);
  const h = Math.floor(cs / 360000);
  const m = Math.floor((cs % 360000) / 6000);
  const s = (cs % 6000) / 100;
  const pad = (n, w) => String(n).padStart(w, "0");
  return `${pad(h, 2)}:${pad(m, 2)}:${s.toFixed(2).padStart(5, "0")}`;
}

// SCORM 2004 timeinterval (second,10,2): an ISO 8601 duration such as PT1H2M3.45S.
export function interval2004(ms) {
  const cs = Math.round(ms / 10);
  const h = Math.floor(cs / 360000);
  const m = Math.floor((cs % 360000) / 6000);
  const s = (cs % 6000) / 100;
  const seconds = s || !(h || m) ? `${Number(s.toFixed(2))}S` : "";
  return `PT${h ? `${h}H` : ""}${m ? `${m}M` : ""}${seconds}`;
}

// SCORM 1.2 CMITime, a time of day HH:MM:SS, in the learner's own time zone; null if ISO is
// no time.
export function timeOfDay12(iso) {
  const t = new Date(iso);
  if (!iso || Number.isNaN(t.getTime())) return null;
  const two = (n) => String(n).padStart(2, "0");
  return [t.getHours(), t.getMinutes(), t.getSeconds()].map(two).join(":");
}

// SCORM 2004 time(second,10,0): YYYY-MM-DDThh:mm:ss.sZ (ISO 8601, in UTC); null if ISO is no
// time.
export function timestamp2004(iso) {
  const t = new Date(iso);
  if (!iso || Number.isNaN(t.getTime())) return null;
  return t.toISOString().replace(/(\.\d)\d*Z$/, "$1Z");
}

// --- the chapter's answers -------------------------------------------------------------------

// Every block a student answers, in page order: {id, kind, el}. Checks and exercises are graded.
export function blocks(root = document) {
  return [...root.querySelectorAll("[data-check], [data-guess], .mh-exercise")].map((el) => ({
    id: el.id,
    el,
    kind: el.matches("[data-check]") ? "check" : el.matches("[data-guess]") ? "guess" : "exercise",
  }));
}

export function progress(list = blocks()) {
  const graded = list.filter((b) => b.kind !== "guess");
  const firsts = graded.map((b) => attemptsOf(b.id)[0]);
  const answered = firsts.filter(Boolean).length;
  const right = firsts.filter((a) => a && a.correct === true).length;
  return {
    total: graded.length,
    answered,
    right,
    complete: answered === graded.length,
    score: graded.length ? Math.round((100 * right) / graded.length) : 100,
  };
}

// --- each question as an LMS interaction ----------------------------------------------------
//
// One interaction per question, at a fixed index: the page's questions in page order are
// cmi.interactions.0, 1, … (each written with its id and type as the session starts, since an
// LMS takes them only in order), so index n is the same question for every student, as LMS
// reports that tabulate interactions by index (Moodle's) expect, and an LMS reading them by id
// finds one record per question. Each holds the question's first try, the one the score counts,
// so the report agrees with the score; every try is in "Your results" and its CSV. A first try
// restored from suspend data was written in its own session and is not written again.

export const LETTERS = "abcdefghijklmnopqrstuvwxyz"; // choice n as 1.2's CMIFeedback writes it

// TEXT on one line within LIMIT characters: runtimes such as scorm-again refuse a response of
// several lines, and 2004 reads a leading "{" as a language tag.
export function oneLine(text, limit) {
  let t = String(text ?? "").replace(/\r\n?|\n/g, " \u21b5 ").replace(/^\{/, " {");
  if (t.length > limit) t = `${t.slice(0, limit - 1).replace(/[\ud800-\udbff]$/, "")}\u2026`;
  return t;
}

export const slug = () =>
  decodeURIComponent(location.pathname.split("/").pop().replace(/\.html$/, "")) || "chapter";

// A question's id, the same in every build and every standard: the chapter, then the block
// ("many-heads.check-1"), in printable ASCII within 255 characters.
export const questionId = (b) =>
  `${slug()}.${b.id}`.replace(/[^\u0021-\u007e]/g, "_").slice(0, 255);

// [element, value] pairs for every question of LIST, as edition ED writes them.
export function interactions(list, ed) {
  const out = [];
  list.forEach((b, n) => {
    const el = `cmi.interactions.${n}`;
    const choices = choicesOf(b);
    const type = b.kind === "exercise" ? ed.codeType : choices.length ? "choice" : "fill-in";
    out.push([`${el}.id`, questionId(b)], [`${el}.type`, type]);
    if (ed.description) {
      out.push([`${el}.description`, oneLine(question(b).replace(/\s+/g, " "), ed.textLimit)]);
    }
    const isRight = (o) => o.querySelector("[data-feedback].right");
    const right = b.kind === "check" ? choices.findIndex(isRight) : -1;
    if (LETTERS[right]) out.push([`${el}.correct_responses.0.pattern`, LETTERS[right]]);
    const first = attemptsOf(b.id)[0];
    const time = first && !first.earlier ? ed.at(first.time) : null;
    if (!time) return;
    const limit = type === ed.codeType ? ed.codeLimit : ed.textLimit;
    const response = type === "choice" ? LETTERS[first.choice] : oneLine(first.answer, limit);
    if (response === undefined) return;
    const result =
      first.correct === true ? "correct" : first.correct === false ? ed.wrong : "neutral";
    out.push([`${el}.${ed.response}`, response], [`${el}.result`, result]);
    out.push([`${el}.${ed.when}`, time]);
  });
  return out;
}

const original = (b) => b.el.querySelector("[data-original]")?.content.textContent ?? "";
export const options = (b) => [...b.el.querySelectorAll(".mh-option")];
// a question's choices: a check's options, a guess's choices; none for an exercise
export function choicesOf(b) {
  if (b.kind === "check") return options(b);
  return b.kind === "guess" ? [...b.el.querySelectorAll(".mh-choice")] : [];
}
export const question = (b) =>
  (b.el.querySelector("legend, .mh-question")?.textContent ?? "").trim();

// A short hash of a starting code, so an edit kept for one version of an exercise is not
// applied to another.
function hash(text) {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return (h >>> 0).toString(36).slice(0, 4);
}

// The reader's code as an edit of the starting code: the lengths of the common start and end,
// and what lies between. Most edits touch a line or two, so this is short.
export function diff(from, to) {
  let p = 0;
  while (p < from.length && p < to.length && from[p] === to[p]) p++;
  let s = 0;
  const sameEnd = () => from[from.length - 1 - s] === to[to.length - 1 - s];
  while (s < from.length - p && s < to.length - p && sameEnd()) s++;
  return { p, s, middle: to.slice(p, to.length - s) };
}

export function patch(from, { p, s, middle }) {
  return from.slice(0, p) + middle + from.slice(from.length - s);
}

const escape = (text) => text.replace(/%/g, "%25").replace(/\|/g, "%7C");
const unescape = (text) => text.replace(/%7C/g, "|").replace(/%25/g, "%");
const flag = (a) => (a && a.correct === true ? "1" : a && a.correct === false ? "0" : "-");

// Suspend data, compact: "m1" then one record per answered block, joined by "|":
//   ID.N.FL.ANSWER   ID: c1, g2, e1 (check-1, guess-2, exercise-1); N: attempts, base 36;
//   FL: first and last try, 1 right, 0 not yet, - a guess; ANSWER: for a check the chosen
//   options, last and first ("2,0"); for a guess #INDEX of its choice or ~TEXT; for an exercise
//   HASH,P,S,MIDDLE, its code as an edit of the starting code (empty: the starting code).
// Within LIMIT characters: every record's short part first, then the texts and code in page
// order as long as they fit (a guess's text may be cut short; code that does not fit is left
// out, and the exercise then keeps its result but shows its starting code).
export function encode(list = blocks(), limit = 4096) {
  const records = [];
  for (const b of list) {
    const tries = attemptsOf(b.id);
    if (!tries.length) continue;
    const id = `${b.kind[0]}${b.id.split("-").pop()}`;
    const n = Math.min(tries.length, MAX_TRIES).toString(36);
    const head = `${id}.${n}.${flag(tries[0])}${flag(tries.at(-1))}.`;
    records.push({ b, head, ...answerOf(b, tries) });
  }
  const always = records.reduce((n, r) => n + 1 + r.head.length + r.short.length, 0);
  let room = limit - "m1".length - always;
  const out = ["m1"];
  for (const r of records) {
    let long = r.long;
    if (long && long.length > room && r.cut) long = r.cut(room);
    if (!long || long.length > room) long = "";
    room -= long.length;
    if (room < 0) break; // more blocks than the limit holds: the rest are not kept
    out.push(r.head + r.short + long);
  }
  return out.join("|");
}

// {short, long, cut}: the part of a block's answer that is always kept, the part kept if there
// is room, and how to shorten the long part to N characters (for a guess's text).
function answerOf(b, tries) {
  const last = tries.at(-1);
  if (b.kind === "check") {
    const index = (a) => (Number.isInteger(a?.choice) ? a.choice : "");
    return { short: `${index(last)},${index(tries[0])}`, long: "" };
  }
  if (b.kind === "guess") {
    if (Number.isInteger(last.choice)) return { short: `#${last.choice}`, long: "" };
    const text = String(last.answer ?? "");
    // the longest start of the text that "~" and its escapes hold within N characters, in one
    // pass (escaping ever shorter starts until one fitted took minutes for a text of "|"s),
    // never half of a character
    const cut = (n) => {
      let size = 1;
      let end = 0;
      for (; end < text.length; end++) {
        const width = text[end] === "%" || text[end] === "|" ? 3 : 1;
        if (size + width > n) break;
        size += width;
      }
      if (/[\ud800-\udbff]/.test(text[end - 1] ?? "")) end--;
      return end > 0 ? `~${escape(text.slice(0, end))}` : "";
    };
    return { short: "", long: `~${escape(text)}`, cut };
  }
  const start = original(b);
  const code = load(`cell:${b.id}`) ?? (typeof last.answer === "string" ? last.answer : start);
  if (code === start) return { short: "", long: "" };
  const d = diff(start, code);
  const long = `${hash(start)},${d.p.toString(36)},${d.s.toString(36)},${escape(d.middle)}`;
  return { short: "", long };
}

// More tries at one question than suspend data records (and than anyone makes): a larger count
// is not a count but damage, and restoring that many placeholders would stop the page.
export const MAX_TRIES = 999;

// The most suspend data read: the most any edition lets a package write (SCORM 2004's
// 64,000 characters; 1.2 reads its own 4,096), and all that encode writes.
export const MAX_SUSPEND = EDITIONS["2004"].limit;

// {id: {kind, n, first, last, answer}} from suspend data; what it cannot read (a record of
// another shape, a count beyond MAX_TRIES) is passed over, and so is whatever lies beyond
// LIMIT characters (never written by encode, which keeps within the edition's limit): what is
// read, and kept, is at most LIMIT characters, in time linear in them.
export function decode(text, limit = MAX_SUSPEND) {
  const out = {};
  const kinds = { c: "check", g: "guess", e: "exercise" };
  const all = String(text || "");
  const parts = all.slice(0, limit).split("|");
  if (all.length > limit && all[limit] !== "|") parts.pop(); // the record the limit cuts
  if (parts[0] !== "m1") return out;
  for (const record of parts.slice(1)) {
    const m = /^([cge])(\d{1,6})\.([0-9a-z]{1,2})\.([01-])([01-])\.(.*)$/s.exec(record);
    if (!m || !(parseInt(m[3], 36) >= 1 && parseInt(m[3], 36) <= MAX_TRIES)) continue;
    const value = (c) => (c === "1" ? true : c === "0" ? false : null);
    const kind = kinds[m[1]];
    out[`${kind}-${m[2]}`] = {
      kind, n: parseInt(m[3], 36), first: value(m[4]), last: value(m[5]), answer: m[6],
    };
  }
  return out;
}

// Puts what suspend data holds back into storage, as the blocks read it: attempts (the first
// and the last try; the ones between, whose answers were not kept, as placeholders), a guess's
// text, an exercise's code and its "solved" mark.
export function restore(kept, list = blocks()) {
  for (const b of list) {
    const r = kept[b.id];
    if (!r || r.kind !== b.kind || !(r.n > 0 && r.n <= MAX_TRIES)) continue;
    try {
      restoreOne(b, r);
    } catch {
      // a record the page cannot read back is passed over, as decode passes over its shape
    }
  }
}

function restoreOne(b, r) {
  const kind = { check: "check yourself", guess: "guess first", exercise: "exercise" }[b.kind];
  const base = { kind, chapter: chapterTitle(), question: question(b), time: "", earlier: true };
  const lastAndFirst = restoreAnswers(b, r);
  if (!lastAndFirst) return;
  const [last, first] = lastAndFirst;
  const tries = [{ ...base, ...first, correct: r.first }];
  for (let i = 1; i < r.n - 1; i++) tries.push({ ...base, answer: "", correct: null });
  if (r.n > 1) tries.push({ ...base, ...last, correct: r.last });
  setAttempts(b.id, tries);
}

// [last, first] answers ({answer, choice}) of one block from its record, saving what the block
// itself shows (a guess's text, an exercise's code); null when the record does not fit the page.
function restoreAnswers(b, r) {
  if (b.kind === "check") {
    const labels = options(b).map((o) => o.querySelector("label").textContent.trim());
    const [last, first] = r.answer.split(",").map((n) => (n === "" ? null : Number(n)));
    const one = (i) => {
      const known = Number.isInteger(i) && i >= 0 && i < labels.length;
      return known ? { answer: labels[i], choice: i } : { answer: "" };
    };
    return [one(last), one(first)];
  }
  if (b.kind === "guess") {
    const choices = [...b.el.querySelectorAll(".mh-choice")].map((c) => c.textContent.trim());
    let guess = null;
    const index = /^#\d{1,3}$/.test(r.answer) ? Number(r.answer.slice(1)) : -1;
    if (index >= 0 && index < choices.length) guess = { answer: choices[index], choice: index };
    else if (r.answer.startsWith("~")) guess = { answer: unescape(r.answer.slice(1)) };
    if (!guess) return null;
    save(b.id, guess.answer);
    return [guess, guess];
  }
  const start = original(b);
  let code = start;
  const m = /^([0-9a-z]{1,4}),([0-9a-z]+),([0-9a-z]+),(.*)$/s.exec(r.answer);
  if (m && m[1] === hash(start)) {
    code = patch(start, { p: parseInt(m[2], 36), s: parseInt(m[3], 36), middle: unescape(m[4]) });
  }
  if (code !== start) save(`cell:${b.id}`, code);
  if (r.first || r.last) save(`exercise:${b.id}`, "solved");
  return [{ answer: code }, { answer: r.n > 1 ? "" : code }];
}

// --- the session -----------------------------------------------------------------------------

class Session {
  constructor(api, edition) {
    this.api = api;
    this.ed = edition;
    this.started = Date.now();
    this.open = false;
    this.said = document.querySelector("[data-lms-status]");
    this.sent = {};
  }

  call(method, ...args) {
    try {
      return String(this.api[method](...args));
    } catch {
      return null;
    }
  }

  // The LMS's own words for its last error, for the one line the student sees.
  problem(what) {
    const code = this.call(this.ed.lastError) ?? "";
    const text = code ? this.call(this.ed.errorString, code) : null;
    const detail = code && code !== "0" ? ` (error ${code}${text ? `: ${text}` : ""})` : "";
    this.say(`Your LMS did not ${what}${detail}. ` +
      "The chapter still works; your answers are kept on this page.");
  }

  say(text) {
    if (!this.said) return;
    this.said.textContent = text;
    this.said.hidden = false;
  }

  start() {
    this.open = this.call(this.ed.initialize, "") === "true";
    if (!this.open) this.problem("start this session");
    return this.open;
  }

  get(element) {
    const value = this.call(this.ed.getValue, element) ?? "";
    const code = this.call(this.ed.lastError);
    if (code && code !== "0" && !this.ed.unset.includes(code)) this.problem(`give back ${element}`);
    return value;
  }

  // Sets ELEMENT when its value changed since the last time; false (and one line said) when the
  // LMS refused it.
  set(element, value, quiet = false) {
    const text = String(value);
    if (this.sent[element] === text) return true;
    if (this.call(this.ed.setValue, element, text) !== "true") {
      if (!quiet) this.problem(`record ${element}`);
      return false;
    }
    this.sent[element] = text;
    return true;
  }

  commit() {
    if (this.call(this.ed.commit, "") !== "true") this.problem("save your progress");
  }

  // Completion, score and answers, as they stand now, then a commit.
  report() {
    if (!this.open) return;
    const p = progress();
    const ed = this.ed;
    let ok = this.set(ed.status, p.complete ? "completed" : "incomplete");
    if (p.answered) {
      ok = ok && this.set(`${ed.score}.min`, 0) && this.set(`${ed.score}.max`, 100);
      ok = ok && this.set(`${ed.score}.raw`, p.score);
      if (ed.scaled) ok = ok && this.set(ed.scaled, Number((p.score / 100).toFixed(4)));
    }
    if (ed.progress && p.total) {
      ok = ok && this.set(ed.progress, Number((p.answered / p.total).toFixed(4)));
    }
    ok = ok && this.set(ed.suspend, encode(blocks(), ed.limit));
    if (!ok) return;
    this.interact();
    this.commit();
  }

  // Each question as an interaction. SCORM 1.2 makes interactions optional: an LMS without them
  // ("401", not implemented) is left alone; any other refusal is said, and interactions stop
  // for the session (one refused would leave the next index out of order).
  interact() {
    if (this.noInteractions) return;
    for (const [element, value] of interactions(blocks(), this.ed)) {
      if (this.set(element, value, true)) continue;
      this.noInteractions = true;
      const code = this.call(this.ed.lastError);
      if (code !== "401") this.problem(`record ${element}`);
      return;
    }
  }

  finish() {
    if (!this.open) return;
    this.report();
    this.set(this.ed.sessionTime, this.ed.duration(Date.now() - this.started));
    this.set(this.ed.exit, "suspend"); // the next launch resumes with these answers
    this.commit();
    this.open = false;
    if (this.call(this.ed.terminate, "") !== "true") this.problem("close this session");
  }
}

// "Your results" inside an LMS: what the LMS keeps cannot be cleared here (the first tries make
// the score), and the file holds this chapter only, the one the LMS opened.
export function resultsForLMS() {
  const section = document.querySelector("[data-results]");
  if (!section) return;
  section.querySelector("[data-results-clear]")?.remove();
  section.querySelector("[data-results-confirm]")?.remove();
  const where = section.querySelector("[data-results-where]");
  if (where) {
    where.textContent = "Your LMS keeps them, with your first tries, which make your score.";
  }
  const download = section.querySelector("[data-results-download]");
  if (download) download.textContent = "Download as CSV";
}

export function connect(version) {
  const edition = EDITIONS[version];
  const api = edition && findAPI(edition.api);
  if (!api) return null; // not in an LMS: the page is the site's own
  const session = new Session(api, edition);
  if (!session.start()) return session;
  keepInMemory();
  resultsForLMS();
  try {
    restore(decode(session.get(edition.suspend), edition.limit));
  } catch {
    // suspend data the page cannot read is ignored: the chapter starts afresh
  }
  const name = session.get(edition.name);
  if (name && !loadShared("student")) saveShared("student", name);
  session.report();
  document.addEventListener("mh:answered", () => session.report());
  window.addEventListener("pagehide", () => session.finish());
  return session;
}

const meta = document.querySelector('meta[name="mh-lms"]');
if (meta) connect(meta.content);
