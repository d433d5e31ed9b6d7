// The answer store (templates/static/answers.js), in Node: which answers a figure draws without
// asking Python again, what it asks ahead of the reader and when. Python, the idle scheduler
// and the build's answers are stand-ins whose every call is recorded; the page's drawing and
// events are tested in the browser (tests/test_answers_ahead.py, test_kept_taps.py).

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { Answers, makeLane } from "../../templates/static/answers.js";

const WORDS = ["0", "1", "2", "3", "4", "5", "6", "7"]; // the word buttons, in the page's order
const FN = "toymodels.many_heads.figure:render";
const FID = "three-heads";

// all that is due now has run: the microtasks (Python's stand-in answers through them)
const settle = () => new Promise((done) => setImmediate(done));

// What Python's render returns for STATE: a pure function of it, so a drawn answer can be
// compared with Python's own
function render(state) {
  return { state: { ...state }, html: `<p>${JSON.stringify(state)}</p>`, slots: {}, summary: "" };
}

// A stand-in for pyclient.js's handle. `sent`: every state the figure's render was sent, in
// order. A call that is not pure moves the generation on, as in pyclient.js. `ms(state)`: the
// milliseconds Python "took"; `fail(state)`: whether it raises; with `held`, answers wait
// until release() answers those asked so far (else they come at once, in a microtask).
function python({ ms = () => 10, fail = () => false, held = false } = {}) {
  const py = {
    generation: 0,
    ready: Promise.resolve(),
    sent: [],
    waiting: [],
    call(fn, [state, fid], { pure = false, timing = null } = {}) {
      if (!pure) py.generation++;
      if (fn !== FN || fid !== FID) return Promise.resolve(null); // another call (a CSV, a cell)
      py.sent.push(state);
      const answer = () => {
        if (timing) timing.ms = ms(state);
        return fail(state) ? Promise.reject(new Error("ValueError: no")) : render(state);
      };
      if (!py.held) return Promise.resolve().then(answer);
      return new Promise((done) => py.waiting.push(() => done(answer())));
    },
    release() {
      py.waiting.splice(0).forEach((go) => go());
    },
    words: () => py.sent.map((s) => s.word),
  };
  py.held = held;
  return py;
}

// A figure's store with stand-ins. `idle.due`: the work waiting for the page to be idle;
// `idle.now()` runs it (and what it leaves for the next idle moment) as an idle page would.
// `paused`: the reader pauses between taps (else the pause before work ahead never ends).
function figure({ py = python(), build = {}, paused = true, lane = makeLane() } = {}) {
  const due = [];
  const idle = {
    due,
    async now() {
      await settle();
      while (due.length) {
        due.shift()({ timeRemaining: () => 50 });
        await settle();
      }
    },
  };
  const parsed = [];
  const answers = new Answers({
    fid: FID,
    fn: FN,
    lane,
    idle: (f) => due.push(f),
    build: { now: (s) => build[s.word] ?? null, later: async (s) => build[s.word] ?? null },
    parse: (result) => {
      parsed.push(result.state.word);
      return new Map([[result.html, `nodes of ${result.html}`]]);
    },
    sleep: () => (paused ? Promise.resolve() : new Promise(() => {})),
  });
  answers.python = py;
  const fig = { answers, py, idle, parsed, state: { word: "7", head: "all" } };
  // as figures.js does for a tap: the answer, drawn; then the work ahead beside it
  fig.tap = async (word) => {
    answers.acted({ word });
    const answer = await answers.answerFor({ ...fig.state, word });
    fig.state = answer.result.state;
    fig.ahead = answers.askAhead(fig.state, () => WORDS);
    return answer;
  };
  // the tap, then every answer ahead in, parsed once the page is idle
  fig.tapAndWait = async (word) => {
    const answer = await fig.tap(word);
    await settle();
    await idle.now();
    await fig.ahead;
    await idle.now();
    return answer;
  };
  return fig;
}

describe("answers worked out ahead", () => {
  // test_answers_ahead.py: test_the_next_word_is_drawn_from_the_answer_worked_out_ahead
  test("a tap on the next word is drawn from the answer worked out ahead", async () => {
    const fig = figure();
    await fig.answers.warm(fig.state); // the state shown, asked as the figure came near
    await fig.tapAndWait("2");
    // the tap's own call, then the four words beside it, after before before
    assert.deepEqual(fig.py.words(), ["7", "2", "3", "1", "4", "0"]);
    const { result, parsed } = await fig.tap("3");
    assert.deepEqual(result, render({ word: "3", head: "all" })); // exactly as Python draws it
    assert.equal(parsed.get(result.html), `nodes of ${result.html}`); // parsed ahead, when idle
    await settle();
    await fig.idle.now();
    await fig.ahead;
    // word 3 was sent once, before the tap; then the words nearest to it not answered yet
    assert.deepEqual(fig.py.words(), ["7", "2", "3", "1", "4", "0", "5", "6"]);
  });

  // test_the_next_word_goes_to_python_while_the_page_draws_and_the_others_once_it_is_idle
  test("the next word goes to Python at once, the others once the page is idle", async () => {
    const fig = figure();
    await fig.tap("2");
    // sent as askAhead was called, before figures.js draws the tap's answer
    assert.deepEqual(fig.py.words(), ["2", "3"]);
    await settle();
    // word 3 is in; its markup and the words before and further on wait for an idle moment
    assert.deepEqual(fig.parsed, []);
    assert.equal(fig.idle.due.length, 2);
    assert.deepEqual(fig.py.words(), ["2", "3"]);
    await fig.idle.now();
    await fig.ahead;
    await fig.idle.now();
    assert.deepEqual(fig.py.words(), ["2", "3", "1", "4", "0"]);
    assert.deepEqual(fig.parsed, ["3", "1", "4", "0"]);
  });

  // test_an_answer_worked_out_before_another_call_to_python_is_not_used
  test("an answer worked out before another call to Python is not used", async () => {
    const fig = figure();
    await fig.tapAndWait("2");
    await fig.py.call("toymodels.many_heads.figure:csv", [{}, FID]); // the numbers as CSV
    const { result, parsed } = await fig.tap("3");
    assert.equal(fig.py.words().filter((w) => w === "3").length, 2); // asked again at the tap
    assert.equal(parsed, null);
    assert.deepEqual(result, render({ word: "3", head: "all" }));
  });

  // test_one_slow_answer_ahead_does_not_stop_the_words_after_it
  test("one slow answer ahead does not stop the words after it", async () => {
    const fig = figure({ py: python({ ms: (s) => (s.word === "3" ? 10_000 : 10) }) });
    await fig.tapAndWait("2");
    assert.deepEqual(fig.py.words(), ["2", "3", "1", "4", "0"]);
    await fig.tapAndWait("5"); // the field is still worked out ahead
    assert.deepEqual(fig.py.words().slice(5), ["5", "6", "7"]);
  });

  // test_two_slow_answers_ahead_in_a_row_stop_working_out_that_field
  test("two slow answers ahead in a row stop working out that field", async () => {
    const slow = new Set(["3", "1"]);
    const fig = figure({ py: python({ ms: (s) => (slow.has(s.word) ? 10_000 : 10) }) });
    await fig.tapAndWait("2");
    // once the second slow answer is in, nothing more is sent for the word field
    assert.deepEqual(fig.py.words(), ["2", "3", "1"]);
    const { result } = await fig.tapAndWait("4"); // asked at the tap, and no neighbours after it
    assert.deepEqual(fig.py.words(), ["2", "3", "1", "4"]);
    assert.deepEqual(result, render({ word: "4", head: "all" }));
  });

  test("a slow answer, then a quick one, then a slow one does not stop the field", async () => {
    const slow = new Set(["3", "4"]);
    const fig = figure({ py: python({ ms: (s) => (slow.has(s.word) ? 10_000 : 10) }) });
    await fig.tapAndWait("2");
    assert.deepEqual(fig.py.words(), ["2", "3", "1", "4", "0"]);
  });

  test("an answer ahead within three times the tap's is not slow", async () => {
    // the tap took 100 ms: answers ahead of 250 ms are as expected on this machine
    const fig = figure({ py: python({ ms: (s) => (s.word === "2" ? 100 : 250) }) });
    await fig.tapAndWait("2");
    await fig.tapAndWait("5");
    assert.deepEqual(fig.py.words(), ["2", "3", "1", "4", "0", "5", "6", "7"]);
  });

  // test_a_reader_tapping_on_finds_python_with_only_the_next_word
  test("a reader tapping on finds Python with only the next word", async () => {
    const fig = figure({ paused: false }); // each tap within the pause of the last
    await fig.answers.warm(fig.state);
    for (const word of ["1", "2", "3", "4"]) {
      await fig.tap(word);
      await settle();
      await fig.idle.now();
    }
    // word 1 asked at its tap, then each next one ahead (and drawn from it)
    assert.deepEqual(fig.py.words(), ["7", "1", "2", "3", "4", "5"]);
  });

  test("once the reader pauses, the others beside the last word not answered yet", async () => {
    const fig = figure();
    await fig.answers.warm(fig.state);
    for (const word of ["1", "2", "3"]) await fig.tap(word);
    await fig.tapAndWait("4");
    assert.deepEqual(fig.py.words().slice(-3), ["5", "6", "0"]); // 7: the word shown at first
  });

  test("the reader's next action stops the work ahead for the last one", async () => {
    const fig = figure();
    await fig.tap("2");
    await settle(); // word 3 is in; 1, 4 and 0 wait for the reader to pause
    fig.answers.acted({ word: "6" });
    await fig.idle.now();
    await fig.ahead;
    assert.deepEqual(fig.py.words(), ["2", "3"]);
  });

  test("a tap on a word still being worked out waits for that answer", async () => {
    const fig = figure({ py: python({ held: true }) });
    const first = fig.tap("2");
    fig.py.release();
    await first;
    assert.deepEqual(fig.py.words(), ["2", "3"]); // word 3, asked ahead, is not in yet
    const tap = fig.tap("3");
    await settle();
    assert.equal(fig.py.waiting.length, 1);
    fig.py.release();
    const { result } = await tap;
    assert.deepEqual(fig.py.words(), ["2", "3"]);
    assert.deepEqual(result, render({ word: "3", head: "all" }));
  });

  test("an answer ahead that failed is asked again at the tap, which says why", async () => {
    let failing = true;
    const fig = figure({ py: python({ fail: (s) => failing && s.word === "3" }) });
    await fig.tapAndWait("2");
    await assert.rejects(fig.answers.answerFor({ ...fig.state, word: "3" }), /ValueError/);
    failing = false;
    const { result } = await fig.tap("3");
    assert.deepEqual(result, render({ word: "3", head: "all" }));
    assert.equal(fig.py.words().filter((w) => w === "3").length, 3);
  });

  test("the figures of a page share one lane: one answer ahead at a time", async () => {
    const lane = makeLane();
    const py = python({ held: true });
    const one = figure({ py, lane });
    const two = figure({ py, lane });
    const tap = one.tap("2");
    py.release();
    await tap;
    assert.deepEqual(py.words(), ["2", "3"]); // word 3 of the first figure, asked ahead
    const warmed = two.answers.warm({ word: "0", head: "2" });
    await settle();
    assert.deepEqual(py.words(), ["2", "3"]); // the second figure waits for the lane
    py.release(); // word 3 is in: the lane is free
    await settle();
    assert.deepEqual(py.sent.at(-1), { word: "0", head: "2" });
    py.release();
    assert.equal(await warmed, true);
  });
});

describe("answers kept", () => {
  // test_a_word_answered_before_is_drawn_again_without_asking_python
  test("a word answered before is drawn again without asking Python", async () => {
    const fig = figure();
    await fig.answers.warm(fig.state);
    await fig.tapAndWait("2");
    await fig.tapAndWait("6"); // not beside word 2: asked at the tap, then word 5 (7 is in)
    assert.deepEqual(fig.py.words().slice(-2), ["6", "5"]);
    const { result } = await fig.tap("2");
    assert.deepEqual(result, render({ word: "2", head: "all" }));
    assert.equal(fig.py.words().filter((w) => w === "2").length, 1);
    // another call to Python may change what Python holds: the answers kept are not drawn again
    await fig.py.call("toymodels.many_heads.figure:csv", [{}, FID]);
    await fig.tap("6");
    assert.equal(fig.py.words().filter((w) => w === "6").length, 2);
  });

  test("an answer is kept under the state asked and the state Python made of it", async () => {
    const fig = figure();
    const py = fig.py;
    const call = py.call;
    py.call = (fn, [state, fid], options) =>
      call(fn, [state, fid], options).then((r) => r && { ...r, state: { ...r.state, head: "1" } });
    await fig.answers.answerFor({ word: "2", head: "x" });
    await fig.answers.answerFor({ word: "2", head: "1" });
    await fig.answers.answerFor({ word: "2", head: "x" });
    assert.equal(py.sent.length, 1);
  });

  test("the answers kept are the newest, up to the limit of characters", async () => {
    const fig = figure();
    const size = render({ word: "0", head: "all" }).html.length;
    fig.answers.limit = 3 * size;
    for (const word of ["0", "1", "2", "3", "0"]) {
      await fig.answers.answerFor({ ...fig.state, word });
    }
    // four answers: the oldest, word 0's, was dropped; asked again, it is the newest kept
    assert.deepEqual(fig.py.words(), ["0", "1", "2", "3", "0"]);
    await fig.answers.answerFor({ ...fig.state, word: "2" });
    await fig.answers.answerFor({ ...fig.state, word: "1" });
    assert.deepEqual(fig.py.words(), ["0", "1", "2", "3", "0", "1"]);
  });

  test("an error Python returns is drawn but not kept", async () => {
    const fig = figure();
    const call = fig.py.call;
    fig.py.call = (...args) => call(...args).then(() => ({ error: "That word is not there." }));
    const { result } = await fig.answers.answerFor({ word: "9" });
    assert.equal(result.error, "That word is not there.");
    await fig.answers.answerFor({ word: "9" });
    assert.equal(fig.py.sent.length, 2);
  });
});

describe("warming up", () => {
  // test_a_state_from_the_address_is_asked_for_once
  test("a state Python has answered is not asked again as the figure comes near", async () => {
    const fig = figure();
    await fig.tapAndWait("3"); // the state from the address, drawn once Python is ready
    assert.equal(await fig.answers.warm(fig.state), false);
    assert.deepEqual(fig.py.words(), ["3", "4", "2", "5", "1"]);
  });

  // test_python_is_asked_for_the_state_shown_once_the_figure_comes_near_then_the_next_one
  test("the state shown, then only the next one along the first control, once idle", async () => {
    const fig = figure();
    const shown = fig.state;
    assert.equal(await fig.answers.warm(shown), true);
    assert.deepEqual(fig.py.sent, [shown]);
    const ahead = fig.answers.askAhead(shown, () => ["all", "1", "2"], ["head", "all"]);
    await settle();
    assert.deepEqual(fig.py.sent, [shown]); // nothing before the page is idle
    await fig.idle.now();
    await ahead;
    assert.deepEqual(fig.py.sent, [shown, { ...shown, head: "1" }]);
    // a tap on it is drawn from that answer, exactly as Python draws that state
    fig.answers.acted({ head: "1" });
    const { result } = await fig.answers.answerFor({ ...shown, head: "1" });
    assert.deepEqual(result, render({ ...shown, head: "1" }));
    assert.equal(fig.py.sent.length, 2);
  });

  test("after the reader's first action, the first control is not worked out ahead", async () => {
    const fig = figure();
    await fig.answers.warm(fig.state);
    fig.answers.acted({ word: "2" });
    const ahead = fig.answers.askAhead(fig.state, () => ["all", "1", "2"], ["head", "all"]);
    await fig.idle.now();
    await ahead;
    assert.deepEqual(fig.py.sent, [fig.state]);
  });

  test("a figure whose turn comes after another call to Python asks nothing", async () => {
    const fig = figure();
    let free;
    fig.answers.lane(() => new Promise((done) => (free = done))); // the lane is busy
    const warmed = fig.answers.warm(fig.state);
    await fig.py.call("toymodels.cells:run", [{}, FID]); // a reader's code cell
    free();
    assert.equal(await warmed, false);
    assert.deepEqual(fig.py.sent, []);
  });
});

describe("the build's answers", () => {
  const build = { 3: render({ word: "3", head: "all" }), 5: render({ word: "5", head: "all" }) };

  test("until Python's first answer is in, a state the build drew is drawn", async () => {
    const fig = figure({ build });
    const { result } = await fig.answers.answerFor({ ...fig.state, word: "3" });
    assert.equal(result, build[3]);
    assert.deepEqual(fig.py.sent, []);
    await fig.answers.answerFor({ ...fig.state, word: "4" }); // one the build did not draw
    await fig.answers.answerFor({ ...fig.state, word: "5" }); // Python has taken over
    assert.deepEqual(fig.py.words(), ["4", "5"]);
  });

  test("once anything but a drawing asked Python, the build's answers are not drawn", async () => {
    const fig = figure({ build });
    await fig.py.call("toymodels.cells:run", [{}, FID]); // a reader's code cell
    await fig.answers.answerFor({ ...fig.state, word: "3" });
    assert.deepEqual(fig.py.words(), ["3"]);
  });

  test("a tap before Python on a state the build drew is drawn from it", async () => {
    const fig = figure({ build });
    const how = { origin: "figure" };
    assert.equal(await fig.answers.tapBeforePython({ word: "3" }, how, () => fig.state), build[3]);
    assert.equal(fig.answers.takeTaps(), null); // nothing left for Python
  });

  // test_kept_taps.py: test_a_tap_the_build_did_not_draw_is_kept_and_drawn_once_python_is_ready
  test("taps before Python the build did not draw are kept, the newest winning", async () => {
    const fig = figure({ build });
    const shown = () => fig.state;
    const first = fig.answers.tapBeforePython({ word: "6" }, { control: "six" }, shown);
    const second = fig.answers.tapBeforePython({ word: "4" }, { control: "four" }, shown);
    assert.equal(await first, "kept");
    assert.equal(await second, "kept");
    assert.deepEqual(fig.answers.takeTaps(), { control: "four", patch: { word: "4" } });
  });

  test("a tap the build drew, after a kept one, is drawn; nothing is kept then", async () => {
    const fig = figure({ build });
    const shown = () => fig.state;
    const first = fig.answers.tapBeforePython({ word: "6" }, {}, shown);
    const second = fig.answers.tapBeforePython({ word: "5" }, {}, shown);
    assert.equal(await first, "kept"); // marked pending until the next is drawn
    assert.equal(await second, build[5]);
    assert.equal(fig.answers.takeTaps(), null);
  });

  test("taps setting different fields before Python are all carried out", async () => {
    const fig = figure();
    const shown = () => fig.state;
    fig.answers.tapBeforePython({ word: "6" }, {}, shown);
    fig.answers.tapBeforePython({ head: "2" }, { control: "head" }, shown);
    const { patch } = fig.answers.takeTaps();
    assert.deepEqual(patch, { word: "6", head: "2" });
  });

  test("a tap before Python that Python becomes ready for is left to Python", async () => {
    const fig = figure();
    const tap = fig.answers.tapBeforePython({ word: "6" }, {}, () => fig.state);
    assert.deepEqual(fig.answers.takeTaps().patch, { word: "6" }); // start() takes it
    assert.equal(await tap, null);
  });
});

describe("the states next to a tap", () => {
  const store = figure().answers;
  const state = { word: "2", head: "all" };
  const words = (states) => states.map((s) => s.word);

  test("are the field's other values, nearest first, the next before the one before", () => {
    assert.deepEqual(words(store.nextStates(state, ["word", "2"], () => WORDS)), [
      "3", "1", "4", "0", "5", "6", "7",
    ]);
  });

  test("leave out the value the state holds, and keep the other fields", () => {
    // Python wrote the value its own way ("2" drawn where "02" was tapped)
    const next = store.nextStates(state, ["word", "02"], () => ["0", "02", "2", "3"]);
    assert.deepEqual(next, [{ word: "0", head: "all" }, { word: "3", head: "all" }]);
  });

  test("are none without a control used last", () => {
    assert.deepEqual(store.nextStates(state, null, () => WORDS), []);
  });
});

describe("the lane", () => {
  test("runs a job at once when idle, and the next after it", async () => {
    const lane = makeLane();
    const ran = [];
    let finish;
    const one = lane(() => new Promise((done) => {
      ran.push("one");
      finish = done;
    }));
    assert.deepEqual(ran, ["one"]); // started before lane() returned
    const two = lane(() => ran.push("two"));
    await settle();
    assert.deepEqual(ran, ["one"]);
    finish();
    await Promise.all([one, two]);
    assert.deepEqual(ran, ["one", "two"]);
  });

  test("a job that throws rejects its own turn only", async () => {
    const lane = makeLane();
    const bad = lane(() => {
      throw new Error("no");
    });
    await assert.rejects(bad, /no/);
    assert.equal(await lane(() => "next"), "next");
  });
});

describe("a piece of longer work (an answer that says more)", () => {
  // figures.js draws it, then asks fresh() for the next piece: never a kept answer
  test("is not kept, and fresh() asks Python each time", async () => {
    const py = python();
    const fig = figure({ py });
    let pieces = 0;
    const plain = py.call.bind(py);
    py.call = (fn, args, options) =>
      plain(fn, args, options).then((r) => r && { ...r, more: ++pieces < 3 });
    const state = { word: "2", head: "all" };
    const first = await fig.answers.answerFor(state);
    assert.equal(first.result.more, true);
    const second = await fig.answers.answerFor(state); // not kept: Python is asked again
    assert.equal(second.result.more, true);
    const third = await fig.answers.fresh(state);
    assert.equal(third.result.more, false);
    assert.equal(third.parsed, null);
    assert.deepEqual(py.words(), ["2", "2", "2"]);
    const kept = await fig.answers.answerFor(state); // the whole answer is kept
    assert.equal(kept.result.more, false);
    assert.deepEqual(py.words(), ["2", "2", "2"]);
  });
});
