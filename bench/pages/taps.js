// N taps on every live figure of the page, each PAUSE ms after the last one painted (0: at once):
// {figure id: [{ms: tap to paint, python: the worker's answer, draw: the page's redraw}]}
async ([n, pause]) => {
  // every live figure of the page, scrolled into view: its word buttons where it has them, else
  // its other state buttons (steps, presets, models); not "Write on", which runs the model once
  // per character written, timed on its own. figures.js's marks say where each tap's time went.
  const out = {};
  for (const fig of document.querySelectorAll("figure[data-figure]")) {
    const buttons = fig.querySelector(".mh-word")
      ? ".mh-word"
      : "button[data-key]:not([disabled]):not([data-key=write])";
    const words = () => [...fig.querySelectorAll(buttons)];
    if (!words().length) continue;
    fig.scrollIntoView({ block: "start" });
    const taps = [];
    for (let i = 0; i < n; i++) {
      const target = words()[i % words().length];
      performance.clearMarks();
      const ms = await timeToPaint(fig, () => target.click());
      const at = (name) => performance.getEntriesByName(name)[0]?.startTime ?? NaN;
      const python = at("mh:answer") - at("mh:call");
      taps.push({ ms, python, draw: at("mh:drawn") - at("mh:answer") });
      if (pause) await new Promise((r) => setTimeout(r, pause));
    }
    out[fig.id] = taps;
  }
  return out;
}
