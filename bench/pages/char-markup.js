// Characters of markup "One character at a time" draws: its figure and every one of its slots
() =>
  [
    document.querySelector("#char-model [data-body]"),
    ...document.querySelectorAll('[data-slot-of="char-model"]'),
  ].reduce((n, el) => n + el.innerHTML.length, 0)
