// Once Python is ready, the first live figure scrolled to and given SETTLE ms (a reader reading
// it): a tap on its first control not already drawn, to the paint after it (ms)
async (settle) => {
  const fig = document.querySelector("figure[data-figure]");
  fig.scrollIntoView({ block: "start" });
  await new Promise((r) => setTimeout(r, settle));
  const state = JSON.parse(fig.dataset.state);
  const button = [...fig.querySelectorAll("[data-body] [data-key][data-value]")]
    .find((b) => !b.disabled && state[b.dataset.key] !== b.dataset.value);
  return await timeToPaint(fig, () => button.click());
}
