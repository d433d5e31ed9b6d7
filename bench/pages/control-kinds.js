// The fields the first live figure's own controls set, in order (a word, a head, a step)
() => [...new Set([...document.querySelector("figure[data-figure]")
  .querySelectorAll("[data-body] [data-key][data-value]")].map((b) => b.dataset.key))]
