// N taps on the KV-cache figure's presets, each timed (ms) until its answer shows: before Train and
// while the chapter's run trains
async (n) => {
  const fig = document.querySelector("#kv-cache");
  const out = () => fig.querySelector(".mh-out")?.textContent;
  const times = [];
  for (let i = 0; i < n; i++) {
    const before = out();
    const t = performance.now();
    fig.querySelector(`[data-fk='${i % 2 ? "preset-gpt3" : "preset-gpt2"}']`).click();
    while (out() === before) await new Promise((r) => requestAnimationFrame(r));
    times.push(performance.now() - t);
  }
  return times;
}
