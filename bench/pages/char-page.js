// On "One character at a time": "Write on" five times, then a 64-character TEXT and N taps on its
// characters, then the drum over the checkpoints STEPS fetched for the first time and again (kept
// by Python), each timed from the action to the next paint (ms)
async ([text, n, steps]) => {
  const fig = document.getElementById("char-model");
  const type = (value) => {  // the box is redrawn with each answer: find it anew every time
    const box = document.getElementById("char-model-text");
    box.value = value;
    box.dispatchEvent(new Event("input", { bubbles: true }));
  };
  const write = [];
  for (let i = 0; i < 5; i++) {
    await timeToPaint(fig, () => type(text.slice(0, 20 + i)));
    write.push(await timeToPaint(fig, () => fig.querySelector("[data-key=write]").click()));
  }
  await timeToPaint(fig, () => type(text));
  const taps = [];
  for (let i = 0; i < n; i++) {
    const tape = [...document.querySelectorAll('[data-slot="numbers"] .cm-ch')];
    taps.push(await timeToPaint(fig, () => tape[(i * 7) % tape.length].click()));
  }
  const drum = (i) => {
    const d = document.getElementById("drum-at");
    d.value = String(i);
    d.dispatchEvent(new Event("change", { bubbles: true }));
  };
  const fresh = [], again = [];
  for (const list of [fresh, again]) {
    for (const i of steps) list.push(await timeToPaint(fig, () => drum(i)));
  }
  return { taps, fresh, again, write };
}
