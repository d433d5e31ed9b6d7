// On figure ID: optionally one action FIRST (the view to measure, timed on its own), then N taps
// on its buttons WHAT (never the one shown), each timed from the click to the next paint (ms)
async ([id, first, n, what]) => {
  const fig = document.getElementById(id);
  const switched = first ? await timeToPaint(fig, () => fig.querySelector(first).click()) : null;
  const bytes = fig.querySelector("[data-body]").innerHTML.length;
  const times = [];
  for (let i = 0; i < n; i++) {
    const words = [...fig.querySelectorAll(what)];  // redrawn with each answer
    const pressed = words.findIndex((w) => w.matches("[aria-pressed=true], .open"));
    const target = words[(pressed + 1 + 7 * (i % 3)) % words.length];  // never the one shown
    times.push(await timeToPaint(fig, () => target.click()));
  }
  return { switched, bytes, times, elements: fig.querySelectorAll("*").length };
}
