// On a cold load, as soon as the first figure's controls are there: a tap on its first control of
// FIELD (any: null), timed from the page's first paint (ms) and from the tap (tap_ms) to the next
// paint after the answer is drawn, with whether Python was ready by then (the build's answers
// draw the first taps before it is)
async (field) => {
  const fig = document.querySelector("figure[data-figure]");
  const paint = await new Promise((r) => {
    const seen = performance.getEntriesByName("first-contentful-paint");
    if (seen.length) return r(seen[0].startTime);
    new PerformanceObserver((l, o) => { o.disconnect(); r(l.getEntries()[0].startTime); })
      .observe({ type: "paint", buffered: true });
  });
  const state = JSON.parse(fig.dataset.state);
  const button = [...fig.querySelectorAll("[data-body] [data-key][data-value]")]
    .find((b) => !b.disabled && state[b.dataset.key] !== b.dataset.value
      && (field === null || b.dataset.key === field));
  const tapped = performance.now();
  await timeToPaint(fig, () => button.click());
  return {
    ms: performance.now() - paint,
    tap_ms: performance.now() - tapped,
    python_ready: document.documentElement.classList.contains("py-ready"),
  };
}
