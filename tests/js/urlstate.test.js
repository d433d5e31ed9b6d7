// The figures' states in the address and history (templates/static/urlstate.js), in Node: what
// the URL holds after a redraw, which redraws push a step in history and which replace it, and
// what Back or Forward drops. The location and history are stand-ins recording every step; the
// page's Back and Forward are tested in the browser (tests/test_reader_layout.py).

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { URLState } from "../../templates/static/urlstate.js";

// A page at URL (a path, a query and a hash) with FIGURES ({id: starting state}). `steps`: the
// history, one URL per step; `page.paint()` runs what was left until after the paint
function page(url, figures) {
  const location = { pathname: "", search: "", hash: "" };
  const go = (to) => {
    const at = new URL(to, "https://example.org");
    Object.assign(location, { pathname: at.pathname, search: at.search, hash: at.hash });
  };
  go(url);
  const steps = [url];
  const history = {
    state: null,
    pushState(state, _, to) {
      steps.push(to);
      go(to);
    },
    replaceState(state, _, to) {
      steps[steps.length - 1] = to;
      go(to);
    },
  };
  const figs = Object.entries(figures).map(([id, initial]) => ({ id, initial, state: initial }));
  const jobs = [];
  const p = { location, steps, jobs, written: 0 };
  p.urls = new URLState({
    location,
    history,
    figures: () => figs,
    later: (job) => jobs.push(job),
    written: () => p.written++,
  });
  p.fig = Object.fromEntries(figs.map((f) => [f.id, f]));
  // figure FID drawn in STATE for an action made as HOW
  p.draw = (fid, state, how = "push") => {
    p.fig[fid].state = { ...p.fig[fid].initial, ...state };
    p.urls.drawn(fid, how);
  };
  p.paint = () => jobs.splice(0).forEach((job) => job());
  p.back = () => {
    steps.pop();
    go(steps.at(-1));
    p.urls.moved();
  };
  return p;
}

const HEADS = { word: "7", head: "all" };

describe("the URL holds the state on screen", () => {
  test("only the fields that differ from the starting state, written after the paint", () => {
    const p = page("/many-heads.html#three-heads", { "three-heads": HEADS });
    p.draw("three-heads", { word: "2" });
    assert.deepEqual(p.steps, ["/many-heads.html#three-heads"]); // not before the paint
    p.paint();
    const drawn = "/many-heads.html?three-heads.word=2#three-heads";
    assert.deepEqual(p.steps, ["/many-heads.html#three-heads", drawn]);
    assert.equal(p.written, 1);
    p.draw("three-heads", { word: "7" }); // back at the start: the field goes
    p.paint();
    assert.equal(p.steps.at(-1), "/many-heads.html#three-heads");
  });

  test("the figure's stale fields go, other parameters and figures stay, in place", () => {
    const url = "/c.html?a.old=1&x=y&a.word=3&b.word=1&a.junk=%3Cb%3E";
    const p = page(url, { a: HEADS, b: HEADS });
    p.fig.b.state = { ...HEADS, word: "1" }; // as the URL says, drawn from it
    p.draw("a", { word: "4" });
    p.paint();
    assert.equal(p.steps.at(-1), "/c.html?x=y&a.word=4&b.word=1");
  });

  test("a redraw that changes nothing in the URL writes nothing", () => {
    const p = page("/c.html?a.word=3", { a: HEADS });
    p.fig.a.state = { ...HEADS, word: "3" };
    p.urls.write(true);
    assert.deepEqual(p.jobs, []);
  });
});

describe("one step in history per figure visit", () => {
  test("a figure's first change pushes a step, the next ones replace it", () => {
    const p = page("/c.html", { a: HEADS, b: HEADS });
    for (const word of ["1", "2", "3"]) {
      p.draw("a", { word });
      p.paint();
    }
    p.draw("b", { head: "2" }); // another figure: a step of its own
    p.paint();
    p.draw("a", { word: "4" }); // back to the first: a visit again
    p.paint();
    assert.deepEqual(p.steps, [
      "/c.html",
      "/c.html?a.word=3",
      "/c.html?a.word=3&b.head=2",
      "/c.html?a.word=4&b.head=2",
    ]);
  });

  test("an action that changes no state is no visit: the first change after it pushes", () => {
    const p = page("/c.html", { a: HEADS });
    p.draw("a", {}); // e.g. a model loaded into the figure, its state as it was
    p.paint();
    p.draw("a", { word: "1" });
    p.paint();
    p.draw("a", { word: "2" });
    p.paint();
    assert.deepEqual(p.steps, ["/c.html", "/c.html?a.word=2"]);
  });

  test("taps drawn before the paint are each their own step, in order", () => {
    const p = page("/c.html", { a: HEADS, b: HEADS });
    p.draw("a", { word: "1" });
    p.draw("a", { word: "2" }); // the same visit: takes the step not written yet
    p.draw("b", { head: "0" });
    assert.equal(p.jobs.length, 2);
    p.paint();
    assert.deepEqual(p.steps, ["/c.html", "/c.html?a.word=2", "/c.html?a.word=2&b.head=0"]);
    assert.equal(p.written, 2);
  });

  test("a redraw made as a replacement never pushes", () => {
    const p = page("/c.html?a.word=5", { a: HEADS });
    p.draw("a", { word: "5" }, "replace"); // e.g. the state a link held, taken on
    p.draw("a", { word: "6" }, "replace");
    p.paint();
    assert.deepEqual(p.steps, ["/c.html?a.word=6"]);
  });

  test("Back drops the steps not written yet, and the next change is a visit again", () => {
    const p = page("/c.html", { a: HEADS });
    p.draw("a", { word: "1" });
    p.paint();
    p.draw("a", { word: "2" }); // the same visit, not written yet
    p.back();
    p.paint(); // written after Back: dropped, the URL Back came to wins
    assert.deepEqual(p.steps, ["/c.html"]);
    assert.equal(p.written, 1);
    p.fig.a.state = HEADS; // as the figure restores it
    p.draw("a", { word: "3" });
    p.paint();
    assert.deepEqual(p.steps, ["/c.html", "/c.html?a.word=3"]);
  });

  test("read() gives a figure's fields from the URL, without its prefix", () => {
    const p = page("/c.html?a.word=3&ab.word=1&a.head=2&x=1", { a: HEADS });
    assert.deepEqual(p.urls.read("a"), { word: "3", head: "2" });
    assert.deepEqual(p.urls.read("b"), {});
  });
});
