// The figures' states in the page's address and history. It touches no DOM: the location, the
// history, the idle scheduler's later() and what says a URL is written are handed in, so
// `node --test` runs it (tests/js/urlstate.test.js).
//
// The URL holds each figure's current state, as Python normalised it, as ?FIGURE.FIELD=value,
// and nothing else: every FIGURE.* parameter that is not one of its fields now differing from
// the starting state goes (a field's old name from a link shared before it was renamed, junk
// typed into the address bar, a field back at its start), then those fields are written, in
// place if already there.
// History holds one step per figure visit: the first change to a figure since the reader last
// changed another one (or went Back or Forward) pushes a step, and the changes after it replace
// that step while the reader stays with the figure. The URL always holds the state on screen,
// and Back leaves a figure in one press, however many taps it had.
// history.pushState takes 1.5-2 ms of the main thread, a tenth of a frame: the URLs of redraws
// are written after their paint (later), one step at a time, in order (each is still its own
// step in history), and `written` says so each time.

export class URLState {
  #step = null; // the last URL not written yet: {url, push, epoch}
  #epoch = 0; // Back or Forward moves it on, and the steps not written by then are dropped
  #visiting = null; // the figure the reader is changing now, in the step pushed for it

  // LOCATION, HISTORY: the page's (window.location, window.history). FIGURES(): every figure,
  // each {id, state, initial}. LATER(job): job runs after the paint. WRITTEN(): a URL is written
  constructor({ location, history, figures, later, written = () => {} }) {
    Object.assign(this, { location, history, figures, later, written });
  }

  // the fields of figure FID that the URL holds
  read(fid) {
    const out = {};
    for (const [key, value] of new URLSearchParams(this.location.search)) {
      if (key.startsWith(`${fid}.`)) out[key.slice(fid.length + 1)] = value;
    }
    return out;
  }

  // Figure FID was drawn for a reader's action made as HOW ("push": a step of its own unless the
  // reader is still with this figure; "replace"): every figure's state goes into the URL. An
  // action that changed no state (a model loaded, a control already chosen) is no visit: the
  // next change pushes its step, so that Back still comes back to the page before it
  drawn(fid, how) {
    const push = how === "push" && this.#visiting !== fid;
    if (this.write(push) && how === "push") this.#visiting = fid;
  }

  // the URL of every figure's state, as a new step in history (PUSH) or in place of the last;
  // -> whether it differs from the URL written or on its way
  write(push = false) {
    const { pathname, search, hash } = this.location;
    const params = new URLSearchParams(search);
    for (const fig of this.figures()) {
      const prefix = `${fig.id}.`;
      const shown = (key) => Object.hasOwn(fig.state, key) && fig.state[key] !== fig.initial[key];
      for (const name of [...params.keys()]) {
        if (name.startsWith(prefix) && !shown(name.slice(prefix.length))) params.delete(name);
      }
      for (const [key, value] of Object.entries(fig.state)) {
        if (shown(key)) params.set(prefix + key, value);
      }
    }
    const query = params.toString();
    const url = `${pathname}${query ? `?${query}` : ""}${hash}`;
    const step = this.#step;
    if (url === (step ? step.url : `${pathname}${search}${hash}`)) return false;
    if (step && !push) { // the step not written yet takes it
      step.url = url;
      return true;
    }
    const mine = { url, push, epoch: this.#epoch };
    this.#step = mine;
    this.later(() => {
      if (this.#step === mine) this.#step = null;
      if (mine.epoch !== this.#epoch) return; // Back or Forward came first
      if (mine.push) this.history.pushState({ mh: true }, "", mine.url);
      else this.history.replaceState(this.history.state, "", mine.url);
      this.written();
    });
    return true;
  }

  // Back or Forward: the URL it came to wins over a redraw's not yet written, and the next
  // change to any figure is a step of its own
  moved() {
    this.#epoch++;
    this.#step = null;
    this.#visiting = null;
  }
}
