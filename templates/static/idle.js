// The idle scheduler: work that can wait for a gap between frames, so that it holds up no paint.
// It touches no DOM: the browser's requestIdleCallback and clock are handed in (the page's
// own by default), so `node --test` runs it (tests/js/idle.test.js).
//
// inGap(f, room, wait): f runs when the page is idle with ROOM milliseconds to spare before its
// next frame (ROOM_MS; 0: any idle moment), or after WAIT milliseconds in any case; it is handed
// the idle deadline (null when its time ran out). A browser without requestIdleCallback runs f
// after the current task.
// later(job): what a redraw leaves until after its paint, done in order, one job a gap (more
// while the gap has ROOM_MS to spare): the parts of the page the browser is not drawing yet
// (far from the view), then the URL (figures.js). finish(): every job left, now, for what needs
// them all done (a download reads the state from the URL; printing).

export const ROOM_MS = 4;

// IDLE_CALLBACK() -> the browser's requestIdleCallback, or undefined where there is none: looked
// up at each use, as the page may replace it (tests/test_answers_ahead.py holds the page busy)
export function makeScheduler({
  idleCallback = () => globalThis.requestIdleCallback,
  now = () => performance.now(),
  soon = (f) => setTimeout(f, 0),
} = {}) {
  const requestIdle = (f, options) => idleCallback().call(globalThis, f, options);
  function inGap(f, room = ROOM_MS, wait = 1000) {
    if (!idleCallback()) return soon(() => f(null));
    const until = now() + wait;
    const go = (idle) => {
      const left = until - now();
      if (left <= 0) f(null);
      else if (idle.timeRemaining() >= room) f(idle);
      else requestIdle(go, { timeout: Math.max(1, left) });
    };
    requestIdle(go, { timeout: wait });
  }

  const jobs = [];
  function later(job) {
    jobs.push(job);
    if (jobs.length === 1) inGap(runJobs);
  }
  function runJobs(idle) {
    do jobs.shift()?.();
    while (jobs.length && idle && idle.timeRemaining() >= ROOM_MS);
    if (jobs.length) inGap(runJobs);
  }
  function finish() {
    while (jobs.length) jobs.shift()();
  }
  return { inGap, later, finish };
}

// the page's one scheduler
export const { inGap, later, finish } = makeScheduler();
