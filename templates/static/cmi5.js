// Inside an LMS by cmi5: a chapter built as a cmi5 package (its page carries <meta name="mh-lms"
// content="cmi5">) is launched with the cmi5 launch parameters in its address (endpoint, fetch,
// actor, registration, activityId) and reports through @xapi/cmi5 (npm, pinned; ./xapi-cmi5.js):
// "initialized"; one "answered" per try at a question, with its id (the one SCORM's
// interactions give it, lms.js), the response, right or wrong and the time it took; once every
// "Check yourself" and exercise has an answer, "passed" or "failed" against the LMS's mastery
// score (if it sets one) and "completed", with the score SCORM reports (lms.js: the share of
// them right at the first try); "terminated" when the page goes. The answers are kept in the
// LRS's state API as SCORM keeps its suspend data, so a returning student finds them.
//
// Statements go out in order, one at a time; one the LRS refuses stays first in line and is
// sent again later (each carries its id, so a second copy is the same statement), so no answer
// is lost while the page is open. Launch parameters that are not what cmi5 sends (no https or
// http address, an actor that is not an agent, more than LIMIT characters) start no session:
// one line says so and the chapter works as on the site. Nothing here becomes markup.
//
// Like lms.js this module runs before main.js, which waits for `self.mhLmsReady` (the answers
// the LRS kept are restored before the blocks read them), at most WAIT ms.

import Cmi5 from "./xapi-cmi5.js";
import { attemptsOf } from "./attempts.js";
import {
  LETTERS, blocks, choicesOf, decode, encode, oneLine, progress, question, questionId,
  restore, resultsForLMS, slug,
} from "./lms.js";
import { keepInMemory, loadShared, saveShared } from "./storage.js";

export const LIMIT = 4096; // the most characters a launch parameter may hold
export const STATE = "https://w3id.org/xapi/manyheads/state"; // our state document's id
const SUSPEND = 64000; // as SCORM 2004's suspend data
const WAIT = 10000;
const RETRY = [1000, 2000, 5000, 10000, 30000]; // then every 30 s

// {params} from the address's query when it holds cmi5's launch parameters, {problem} when they
// are there but unusable, null when the page was not launched by cmi5.
export function launchParameters(search) {
  const q = new URLSearchParams(search);
  const names = ["endpoint", "fetch", "actor", "registration", "activityId"];
  if (!names.some((n) => q.has(n))) return null;
  const v = Object.fromEntries(names.map((n) => [n, q.get(n) ?? ""]));
  const bad = names.find((n) => !v[n] || v[n].length > LIMIT);
  if (bad) return { problem: `the launch parameter "${bad}" is missing or too long` };
  for (const n of ["endpoint", "fetch"]) {
    let url = null;
    try {
      url = new URL(v[n]);
    } catch {
      // not an address
    }
    if (!url || !["https:", "http:"].includes(url.protocol)) {
      return { problem: `the launch parameter "${n}" is not a web address` };
    }
  }
  let actor = null;
  try {
    actor = JSON.parse(v.actor);
  } catch {
    // not JSON
  }
  const account = actor?.account;
  if (!account || typeof account.homePage !== "string" || typeof account.name !== "string") {
    return { problem: 'the launch parameter "actor" is not an agent with an account' };
  }
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v.registration)) {
    return { problem: 'the launch parameter "registration" is not a UUID' };
  }
  if (!/^[a-z][a-z0-9+.-]*:[^\s<>"{}|\\^`]+$/i.test(v.activityId)) {
    return { problem: 'the launch parameter "activityId" is not an IRI' };
  }
  return { params: { ...v, actor } };
}

// The statement's fields for one try at question B: [response, correct responses, choices].
function interaction(b, attempt) {
  const choices = choicesOf(b);
  if (b.kind === "exercise") return { type: "long-fill-in", response: String(attempt.answer) };
  if (choices.length && Number.isInteger(attempt.choice) && LETTERS[attempt.choice]) {
    const isRight = (o) => o.querySelector("[data-feedback].right");
    const right = b.kind === "check" ? choices.findIndex(isRight) : -1;
    return {
      type: "choice",
      response: LETTERS[attempt.choice],
      correct: LETTERS[right],
      choices: choices.map((c, i) => ({
        id: LETTERS[i],
        description: { en: oneLine(c.textContent.trim().replace(/\s+/g, " "), 250) },
      })),
    };
  }
  return { type: "fill-in", response: String(attempt.answer ?? "") };
}

// One line for the student (none: the line goes), as text.
function say(text) {
  const line = document.querySelector("[data-lms-status]");
  if (!line) return;
  line.textContent = text ?? "";
  line.hidden = !text;
}

class Session {
  constructor(params) {
    this.cmi5 = new Cmi5(params);
    this.params = params;
    this.outbox = [];
    this.sent = new Set();
    this.completed = false;
    this.stateKnown = false;
    this.retries = 0;
    // every statement the library makes goes into the outbox, in order, and out from there
    this.cmi5.sendXapiStatement = (statement, options) => {
      const t = options?.transform;
      this.outbox.push(typeof t === "function" ? t(statement) : statement);
      return this.flush();
    };
  }

  // One line: what the LMS did not do; the answers are sent later unless the session is off.
  problem(what, off = false) {
    say(`Your LMS did not ${what}. The chapter still works; your answers are kept on ` +
      (off ? "this page." : "this page and sent when the LMS takes them."));
  }

  // Sends the outbox, first to last, one at a time; on a refusal, stops and tries again later.
  flush() {
    if (this.flushing) return this.flushing;
    clearTimeout(this.timer);
    this.flushing = (async () => {
      while (this.outbox.length) {
        try {
          await Cmi5.prototype.sendXapiStatement.call(this.cmi5, this.outbox[0]);
        } catch (e) {
          if (e?.response?.status !== 409) {  // 409: the LRS has it already
            this.later("record your answers");
            return;
          }
        }
        this.outbox.shift();
      }
      if (this.stateDirty) await this.saveState();
      if (!this.outbox.length && !this.stateDirty) {
        this.retries = 0;
        say(null); // all sent: the line about a refusal goes
      }
    })().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  later(what) {
    this.problem(what);
    const wait = RETRY[Math.min(this.retries++, RETRY.length - 1)];
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.flush(), wait);
  }

  stateParams() {
    const p = this.params;
    const where = { agent: p.actor, activityId: p.activityId, registration: p.registration };
    return { ...where, stateId: STATE };
  }

  async readState() {
    try {
      const got = (await this.cmi5.xapi.getState(this.stateParams())).data;
      this.stateKnown = true;
      return got && typeof got === "object" ? got : {};
    } catch (e) {
      this.stateKnown = e?.response?.status === 404; // none yet: a first launch
      if (!this.stateKnown) this.problem("give back your earlier answers");
      return {};
    }
  }

  document() {
    return { suspend: encode(blocks(), SUSPEND), completed: this.completed };
  }

  // The answers as they stand, into the state document; never over a document not read.
  async saveState() {
    if (!this.stateKnown) return;
    this.stateDirty = false;
    try {
      await this.cmi5.xapi.setState({ ...this.stateParams(), state: this.document() });
    } catch {
      this.stateDirty = true;
      this.later("save your progress");
    }
  }

  // An "answered" for every try not sent yet; completion once every graded question has one.
  answered() {
    const start = this.cmi5.getInitializedDate?.() ?? new Date();
    for (const b of blocks()) {
      const tries = attemptsOf(b.id);
      tries.forEach((attempt, n) => {
        const key = `${b.id}#${n}`;
        if (attempt.earlier || this.sent.has(key)) return;
        this.sent.add(key);
        const when = new Date(attempt.time);
        const end = Number.isNaN(when.getTime()) ? new Date() : when;
        const before = n ? new Date(tries[n - 1].time) : start;
        const begin = Number.isNaN(before.getTime()) || before > end ? start : before;
        const it = interaction(b, attempt);
        const limit = it.type === "long-fill-in" ? 4000 : 250;
        const definition = {
          type: "http://adlnet.gov/expapi/activities/cmi.interaction",
          interactionType: it.type,
          name: { en: oneLine(question(b).replace(/\s+/g, " "), 250) || questionId(b) },
          ...(it.correct ? { correctResponsesPattern: [it.correct] } : {}),
          ...(it.choices ? { choices: it.choices } : {}),
        };
        const success = attempt.correct === true || attempt.correct === false
          ? attempt.correct : undefined;
        this.cmi5.interaction(
          encodeURIComponent(slug()), encodeURIComponent(questionId(b)),
          oneLine(it.response, limit), definition, success, { start: begin, end },
        );
      });
    }
    this.moveOn();
    this.stateDirty = true;
    this.flush();
  }

  // "passed" or "failed" (when the LMS gives a mastery score) and "completed", once.
  moveOn() {
    const p = progress();
    const data = this.cmi5.getLaunchData() || {};
    if (this.completed || !p.complete || data.launchMode !== "Normal") return;
    this.completed = true;
    const score = { scaled: Number((p.score / 100).toFixed(4)), raw: p.score, min: 0, max: 100 };
    const mastery = Number(data.masteryScore);
    const withScore = { transform: (s) => ({ ...s, result: { ...s.result, score } }) };
    if (data.masteryScore != null && Number.isFinite(mastery)) {
      if (score.scaled >= mastery) this.cmi5.pass(score);
      else this.cmi5.fail(score);
      this.cmi5.complete();
    } else {
      this.cmi5.complete(withScore);
    }
  }

  // The page goes: "terminated" after what is left, sent so that it outlives the page (the
  // library's requests would be cancelled with it), the answers with them.
  finish() {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.timer);
    this.cmi5.sendXapiStatement = (s) => this.outbox.push(s);
    this.cmi5.terminate();
    const xapi = this.cmi5.xapi;
    const send = (url, method, body) =>
      fetch(url, { method, keepalive: true, headers: xapi.headers, body: JSON.stringify(body) })
        .catch(() => {});
    send(xapi.generateURL("statements", {}), "POST", this.outbox);
    if (this.stateKnown) send(xapi.generateURL("activities/state", this.stateParams()), "PUT",
      this.document());
  }
}

async function start(found, late) {
  keepInMemory();
  resultsForLMS();
  if (found.problem) {
    say(`This chapter cannot report to your LMS: ${found.problem}. ` +
      "The chapter still works; your answers are kept on this page.");
    return null;
  }
  let session;
  try {
    session = new Session(found.params);
    await session.cmi5.initialize();
  } catch {
    session?.problem("start this session", true);
    return null;
  }
  // a session started ends when the page goes, even before its answers are read back
  window.addEventListener("pagehide", () => session.finish());
  const kept = await session.readState();
  try {
    if (late()) {
      // the chapter started without the answers kept: they stay as they are in the LRS
      session.stateKnown = false;
      session.problem("give back your earlier answers in time");
    } else {
      restore(decode(kept.suspend, SUSPEND));
    }
  } catch {
    // a state document the page cannot read: the chapter starts afresh
  }
  session.completed = kept.completed === true;
  for (const b of blocks()) attemptsOf(b.id).forEach((_, n) => session.sent.add(`${b.id}#${n}`));
  const name = session.params.actor.name;
  if (typeof name === "string" && name && !loadShared("student")) {
    saveShared("student", name.slice(0, 200));
  }
  document.addEventListener("mh:answered", () => session.answered());
  return session;
}

export function connect(search = location.search) {
  const found = launchParameters(search);
  if (!found) return null; // not launched by cmi5: the page is the site's own
  let gaveUp = false;
  const wait = new Promise((done) => setTimeout(done, WAIT)).then(() => {
    gaveUp = true;
  });
  const started = start(found, () => gaveUp);
  self.mhLmsReady = Promise.race([started, wait]);
  return started;
}

const meta = document.querySelector('meta[name="mh-lms"]');
if (meta?.content === "cmi5") connect();
