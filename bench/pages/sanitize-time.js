// Each piece of markup PIECES parsed as the page parsed it before (a <template>) and as it does
// now (clean() of static/sanitize.js, imported from URL): the median ms of REPEAT runs of each
async ([url, pieces, repeat]) => {
  const { clean } = await import(url);
  const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
  const timed = (f) => {
    const runs = [];
    for (let i = 0; i < repeat; i++) {
      const t = performance.now();
      f();
      runs.push(performance.now() - t);
    }
    return median(runs);
  };
  return pieces.map((html) => ({
    chars: html.length,
    template: timed(() => {
      const t = document.createElement("template");
      t.innerHTML = html;
      return t.content;
    }),
    clean: timed(() => clean(html)),
  }));
}
