// The idle scheduler (templates/static/idle.js), in Node: when work left for a gap between
// frames runs, with a stand-in requestIdleCallback whose idle moments the test hands out and a
// clock it moves. The page's use of it is tested in the browser (tests/test_reader_layout.py:
// a tap's URL is pushed only after the frame that painted it).

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { inGap, makeScheduler, ROOM_MS } from "../../templates/static/idle.js";

// A scheduler on a stand-in browser: `asked` holds each idle callback waiting, with its timeout;
// `idle(ms)` gives the oldest one an idle moment with MS to spare, less what the work in it
// takes; `clock` is the time now, moved on by `work(ms)`
function browser() {
  const page = { clock: 0, asked: [], soon: [] };
  page.scheduler = makeScheduler({
    idleCallback: () => (f, { timeout }) => page.asked.push({ f, timeout }),
    now: () => page.clock,
    soon: (f) => page.soon.push(f),
  });
  page.idle = (ms) => {
    const start = page.clock;
    page.asked.shift().f({ timeRemaining: () => Math.max(0, ms - (page.clock - start)) });
  };
  page.work = (ms) => {
    page.clock += ms;
  };
  return page;
}

describe("work for a gap between frames", () => {
  test("runs in an idle moment with the room asked for, not in a shorter one", () => {
    const page = browser();
    const ran = [];
    page.scheduler.inGap((deadline) => ran.push(deadline.timeRemaining()), 4, 1000);
    assert.deepEqual(page.asked.map((a) => a.timeout), [1000]);
    page.clock = 300;
    page.idle(3.9); // a moment too short: asked again, for the time left
    assert.deepEqual(ran, []);
    assert.deepEqual(page.asked.map((a) => a.timeout), [700]);
    page.idle(4);
    assert.deepEqual(ran, [4]);
    assert.equal(page.asked.length, 0);
  });

  test("runs without a deadline once its wait is over, idle or not", () => {
    const page = browser();
    const ran = [];
    page.scheduler.inGap((deadline) => ran.push(deadline), 4, 1000);
    page.clock = 999.5;
    page.idle(0);
    assert.deepEqual(page.asked.map((a) => a.timeout), [1]); // never a timeout under 1 ms
    page.clock = 1000; // the browser's timeout ran out: a callback with no time to spare
    page.idle(0);
    assert.deepEqual(ran, [null]);
  });

  test("room 0 takes any idle moment", () => {
    const page = browser();
    const ran = [];
    page.scheduler.inGap(() => ran.push("ran"), 0);
    page.idle(0);
    assert.deepEqual(ran, ["ran"]);
  });

  test("a browser without requestIdleCallback runs it after the current task", () => {
    const soon = [];
    const { inGap } = makeScheduler({ idleCallback: () => undefined, soon: (f) => soon.push(f) });
    const ran = [];
    inGap((deadline) => ran.push(deadline));
    assert.deepEqual(ran, []);
    soon.shift()();
    assert.deepEqual(ran, [null]);
  });

  // a page may replace it after the module loaded: test_answers_ahead.py holds the page busy so
  test("the page's scheduler asks the requestIdleCallback the page has now", () => {
    const asked = [];
    globalThis.requestIdleCallback = () => asked.push("first");
    inGap(() => {});
    globalThis.requestIdleCallback = () => asked.push("second");
    inGap(() => {});
    delete globalThis.requestIdleCallback;
    assert.deepEqual(asked, ["first", "second"]);
  });
});

describe("what a redraw leaves until after its paint", () => {
  test("jobs run in order, one a gap while the gaps are short", () => {
    const page = browser();
    const ran = [];
    const job = (name) => () => {
      ran.push(name);
      page.work(1);
    };
    for (const name of ["slot", "url", "next url"]) page.scheduler.later(job(name));
    assert.equal(page.asked.length, 1); // one idle callback for the queue, not one per job
    assert.deepEqual(ran, []);
    page.idle(ROOM_MS); // room for one: after it, less than ROOM_MS is left
    assert.deepEqual(ran, ["slot"]);
    page.clock = 2000;
    page.idle(0); // its wait over: one job, no more
    assert.deepEqual(ran, ["slot", "url"]);
    page.idle(ROOM_MS);
    assert.deepEqual(ran, ["slot", "url", "next url"]);
    assert.equal(page.asked.length, 0); // nothing left: no callback asked
  });

  test("a long gap runs as many jobs as it has room for", () => {
    const page = browser();
    const ran = [];
    const job = (name) => () => {
      ran.push(name);
      page.work(3);
    };
    for (const name of ["a", "b", "c", "d"]) page.scheduler.later(job(name));
    page.idle(10);
    assert.deepEqual(ran, ["a", "b", "c"]); // 10, 7 and 4 ms left before each: ROOM_MS is 4
    assert.equal(page.asked.length, 1);
  });

  test("finish() runs every job left, now, and the idle moment after finds none", () => {
    const page = browser();
    const ran = [];
    page.scheduler.later(() => ran.push("slot"));
    page.scheduler.later(() => ran.push("url"));
    page.scheduler.finish();
    assert.deepEqual(ran, ["slot", "url"]);
    page.idle(50);
    assert.deepEqual(ran, ["slot", "url"]);
    assert.equal(page.asked.length, 0);
    page.scheduler.later(() => ran.push("again")); // a new queue asks for a gap of its own
    assert.equal(page.asked.length, 1);
  });
});
