// A figure's answer store: every answer the page can draw without a fresh call to Python, and
// the work that gets them ahead of the reader. figures.js draws; this module decides where an
// answer comes from. It touches no DOM: Python (pyclient.js's handle), the idle scheduler, the
// build's answers (prerendered.js) and the parser of markup are handed in, so `node --test`
// runs it (tests/js/answers.test.js). The rules of the answer store are written here, and
// only here (docs/performance.md says why they are what they are).
//
// answerFor(state) gives, the first that there is:
// - an answer worked out ahead whose markup is parsed already (it draws quickest);
// - Python's answer kept from before (the last HELD_CHARS characters of them), while what Python
//   holds is unchanged (pyclient.js's generation: a reader's model put in, a training step, a
//   code cell move it on);
// - the build's answer (prerendered.js), until Python takes over this figure (its first answer
//   for it is in, the figure's code and data loaded) and while Python holds nothing the reader
//   changed;
// - an answer still being worked out ahead, waited for;
// - else Python's answer, asked now and kept.
// Answers ahead (askAhead): Python works out, one at a time for the whole page (a lane), the
// states of the AHEAD controls beside the one just used (the next word, the word before, the
// step after): the first at once, while the page draws the answer, the others once the reader
// pauses (PAUSE_MS) and the page is idle. The work stops at the reader's next action or when
// anything else asks Python, and goes only to states not answered yet. A field whose answers
// took Python more than SLOW_MS and SLOWER times the answer to the tap before, twice in a row,
// is not worked out ahead: it would hold up a tap on another control too long (once may be the
// machine busy for a moment). An answer worked out ahead has its markup parsed (`parse`) in a
// gap between frames.
// warm(state): a figure's first answer loads its code and data; the page asks it ahead of the
// reader's first tap, in the lane, and then the next state along the figure's first control.
// Taps before Python is ready (tapBeforePython): merged, the newest value of a field winning;
// drawn from the build's answer when it has one, else kept until Python is ready (takeTaps).

import { key } from "./prerendered.js";

const AHEAD = 4;
const PAUSE_MS = 150;
const HELD_CHARS = 4_000_000; // a figure's answers kept (about 8 MB), the oldest dropped first
const SLOW_MS = 50;
const SLOWER = 3;

const asleep = (ms) => new Promise((done) => setTimeout(done, ms));

// The page's one lane to Python for work ahead: jobs run one at a time, in order, so a tap waits
// behind one at most. A job given to an idle lane starts at once (its message to Python is
// posted before the caller goes on); a job that throws rejects its own turn only.
export function makeLane() {
  let lane = Promise.resolve();
  let inLine = 0;
  return (job) => {
    const turn = inLine ? lane.then(job) : new Promise((started) => started(job()));
    inLine++;
    lane = turn.catch(() => {}).finally(() => {
      inLine--;
    });
    return turn;
  };
}

export class Answers {
  // pyclient.js's handle ({generation, call}), set once the page starts Python
  python = null;
  #kept = new Map(); // key(state) -> {generation, result, chars}: Python's answers, oldest first
  #keptChars = 0;
  #taken = false; // whether Python has answered for this figure: it has taken over from the build
  #ahead = new Map(); // key(state) -> {generation, state, answer, timing, parsed}
  #slow = new Set(); // fields whose answers are too slow to work out ahead
  #slowOnce = new Set(); // fields whose last answer ahead was slow
  #took = 0; // Python's milliseconds for the answer drawn last
  #acts = 0; // the reader's actions so far: work ahead stops at the next one
  #used = null; // [field, value] of the control the reader used last
  #drawnIn = null; // the generation of the answer drawn last
  #taps = null; // {patch, ...how}: taps before Python that the build could not draw

  // FID, FN: the figure and its render function, as Python is called with them. LANE: the
  // page's makeLane(). IDLE(f, room): runs f in a gap between frames (room: the milliseconds
  // to spare; 0, any idle moment). BUILD: the build's answers, {now(state), later(state)}: null
  // for a state it did not draw (now: also while its file is on its way). PARSE(result): the
  // markup of an answer worked out ahead, parsed (html -> nodes). SLEEP(ms): a promise. `limit`,
  // the characters of answers kept, may be lowered after.
  constructor({ fid, fn, lane, idle, build, parse = () => null, sleep = asleep }) {
    Object.assign(this, { fid, fn, lane, idle, build, parse, sleep, limit: HELD_CHARS });
  }

  // The reader acted (PATCH: the fields set): work ahead for the last state stops
  acted(patch) {
    this.#acts++;
    const keys = Object.keys(patch);
    this.#used = keys.length === 1 ? [keys[0], String(patch[keys[0]])] : null;
  }

  // -> {result, parsed}: the answer for STATE (see the top of this file) and, for an answer
  // worked out ahead, its markup parsed (a Map html -> nodes, each used once) or null. Rejects
  // with Python's error (a PythonError with its traceback).
  async answerFor(state) {
    const python = this.python;
    const generation = python.generation;
    const ahead = this.#aheadFor(state);
    let result = ahead?.parsed ? null : this.#drawable(state);
    if (!result) {
      const timing = ahead?.timing || {};
      result = await (ahead?.answer || this.#call(python, state, timing));
      if (!ahead) this.record(state, generation, result); // work ahead keeps its own
      this.#took = timing.ms ?? 0;
    }
    const parsed = ahead?.parsed ?? null;
    if (ahead) ahead.parsed = null;
    this.#drawnIn = generation;
    return { result, parsed };
  }

  // Python's answer RESULT for STATE, given in GENERATION, kept for the next tap on that state
  // (and on the state Python normalised it to)
  record(state, generation, result) {
    if (!result || result.error || result.more) return; // `more`: a piece, asked again
    this.#taken = true;
    const slots = Object.values(result.slots);
    const chars = result.html.length + slots.reduce((n, html) => n + html.length, 0);
    for (const k of new Set([key(state), key(result.state)])) {
      this.#keptChars -= this.#kept.get(k)?.chars ?? 0;
      this.#kept.delete(k);
      this.#kept.set(k, { generation, result, chars });
      this.#keptChars += chars;
    }
    for (const [k, old] of this.#kept) {
      if (this.#keptChars <= this.limit) break;
      this.#kept.delete(k);
      this.#keptChars -= old.chars;
    }
  }

  // Python's answer for STATE asked ahead of the reader, in the lane: the figure's first answer
  // loads its code and data. Not asked if Python's generation moved on since, or the answer is
  // in or on its way. -> whether an answer came (then askAhead(..., first) may follow)
  async warm(state) {
    const python = this.python;
    const generation = python.generation;
    const answer = await this.lane(() => {
      if (python.generation !== generation || this.#said(state) || this.#aheadFor(state)) {
        return null;
      }
      return this.#call(python, state, {}).then((result) => {
        this.record(state, generation, result);
        return result;
      }, () => null); // a tap on it says what went wrong
    });
    return Boolean(answer && !answer.error);
  }

  // The states one tap away from STATE along USED ([field, value], the control used last): the
  // field's other values OFFERED(field) on the page (in the page's order), nearest to VALUE
  // first, the next before the one before. None for a field too slow to work out ahead.
  nextStates(state, used, offered) {
    if (!used || this.#slow.has(used[0])) return [];
    const [field, value] = used;
    const values = offered(field);
    const at = values.indexOf(value);
    const around = (_, d) => [values[at + d + 1], values[at - d - 1]];
    const order = at < 0 ? values : values.flatMap(around);
    return order
      .filter((v) => v !== undefined && v !== String(state[field]))
      .map((v) => ({ ...state, [field]: v }));
  }

  // Python's answers for the states next to STATE (nextStates), worked out one at a time, the
  // AHEAD nearest not answered yet. Called as an answer is about to be drawn, so the first goes
  // to Python while the page draws and paints. With FIRST (a control, [field, value]), before
  // the reader's first action and once the figure's first answer is in: only the next state
  // along it, once the page is idle (the data it may fetch is one model's or one text's, not a
  // whole row's).
  async askAhead(state, offered, first = null) {
    const python = this.python;
    const generation = python.generation;
    const acts = this.#acts;
    if (first ? acts || this.#drawnIn !== null : generation !== this.#drawnIn) return;
    const used = first || this.#used;
    const wanted = this.#wantAhead(state, used, offered, first ? 1 : AHEAD, generation);
    const stale = () =>
      this.#ahead !== wanted || this.#acts !== acts || python.generation !== generation;
    const field = used?.[0];
    let now = !first;
    for (const [k, entry] of wanted) {
      if (entry.answer) continue;
      // the likeliest next state at once; the others once the reader has paused and the page is
      // idle (a reader tapping on does not find Python busy with a state they passed by, nor the
      // likeliest next one waiting behind it)
      if (!now) await this.#pause();
      now = false;
      const went = await this.lane(() => {
        if (stale() || this.#slow.has(field)) return false;
        return this.#workOut(python, wanted, k, entry, field);
      });
      if (!went) return;
    }
  }

  // A tap before Python is ready, PATCH (with HOW, what the figure needs to redraw it), merged
  // with the taps before it: the newest value of a field wins. SHOWN() is the state the figure
  // shows. -> the build's answer to draw for the taps so far; "kept" when the build has none
  // (the taps wait for takeTaps()); or null, when a later tap or Python takes them over.
  async tapBeforePython(patch, how, shown) {
    this.#taps = { ...how, patch: { ...this.#taps?.patch, ...patch } };
    const wanted = { ...shown(), ...this.#taps.patch };
    const answer = await this.build.later(wanted);
    if (!this.#taps) return null; // Python is ready: it answers the taps kept
    if (!answer) return "kept";
    if (key(wanted) !== key({ ...shown(), ...this.#taps.patch })) return null; // a later tap's
    this.#taps = null;
    return answer;
  }

  // The taps kept before Python was ready, {patch, ...how}, or null; they are the caller's now
  takeTaps() {
    const taps = this.#taps;
    this.#taps = null;
    return taps;
  }

  // Python's answer for STATE, asked now: the next piece of longer work (kept once whole)
  async fresh(state) {
    const generation = this.python.generation;
    const result = await this.#call(this.python, state, {});
    this.record(state, generation, result);
    return { result, parsed: null };
  }

  #call(python, state, timing) {
    return python.call(this.fn, [state, this.fid], { pure: true, timing });
  }

  // Python's answer for STATE, if one is kept from the generation Python is in
  #said(state) {
    const kept = this.#kept.get(key(state));
    return kept?.generation === this.python.generation ? kept.result : null;
  }

  // the answer for STATE there is without asking Python: Python's, or the build's until Python
  // takes over this figure while Python holds nothing the reader changed
  #drawable(state) {
    const said = this.#said(state);
    return said || this.#taken || this.python.generation ? said : this.build.now(state);
  }

  // the entry worked out ahead for STATE (asked, maybe not in yet), if still good
  #aheadFor(state) {
    const entry = this.#ahead.get(key(state));
    return entry?.answer && entry.generation === this.python.generation ? entry : null;
  }

  // the COUNT states next to STATE not answered yet, as the new work ahead: an entry already
  // asked in this GENERATION is kept with its answer
  #wantAhead(state, used, offered, count, generation) {
    const wanted = new Map();
    const next = this.nextStates(state, used, offered).filter((s) => !this.#said(s));
    for (const s of next.slice(0, count)) {
      const k = key(s);
      const old = this.#ahead.get(k);
      const fresh = { generation, state: s, answer: null, timing: {}, parsed: null };
      wanted.set(k, old?.generation === generation ? old : fresh);
    }
    this.#ahead = wanted;
    return wanted;
  }

  // after PAUSE_MS, the next idle moment
  async #pause() {
    await this.sleep(PAUSE_MS);
    await new Promise((done) => this.idle(done, 0));
  }

  // Python's answer for ENTRY (key K of WANTED), asked now and kept; -> whether it came. Its
  // markup is parsed once the page is idle; how long it took says whether FIELD is slow.
  async #workOut(python, wanted, k, entry, field) {
    entry.answer = this.#call(python, entry.state, entry.timing);
    entry.answer.catch(() => wanted.delete(k)); // a tap on it asks Python itself, and says why
    const ok = await entry.answer.then((result) => {
      this.record(entry.state, entry.generation, result);
      return true;
    }, () => false);
    if (ok) this.idle(() => this.#parseAhead(entry));
    this.#timed(field, entry.timing.ms);
    return ok;
  }

  // the slow-field rule: MS, Python's time for an answer ahead along FIELD, against the tap's
  #timed(field, ms) {
    if (ms <= Math.max(SLOW_MS, SLOWER * this.#took)) this.#slowOnce.delete(field);
    else if (this.#slowOnce.has(field)) this.#slow.add(field);
    else this.#slowOnce.add(field);
  }

  // the markup of an answer worked out ahead, parsed, unless it is no longer wanted
  async #parseAhead(entry) {
    const result = await entry.answer;
    if (entry.parsed || result.error || ![...this.#ahead.values()].includes(entry)) return;
    entry.parsed = this.parse(result);
  }
}
