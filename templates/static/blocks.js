// "Guess first" and "Check yourself": plain page behaviour, no Python. A guess is kept in
// localStorage so a reader who comes back finds it, and the explanation stays shut until
// the reader has committed to one. Guesses and checked answers are recorded as attempts
// ("Your results"); a reader who comes back finds their last checked answer with its feedback.

import { attemptsOf } from "./attempts.js";
import { record } from "./results.js";
import { load, save } from "./storage.js";

function setupGuess(section) {
  const form = section.querySelector("[data-guess-form]");
  const explain = section.querySelector("[data-explain]");
  const yours = section.querySelector("[data-your-guess]");
  const key = section.id;
  const show = (text) => {
    yours.textContent = `Your guess: ${text}`;
    yours.hidden = false;
    form.hidden = true;
    explain.hidden = false;
    explain.open = true;
  };
  form.hidden = false;
  explain.hidden = true;
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const data = new FormData(form).get("guess");
    const choice = form.querySelector(`input[name="guess"][value="${CSS.escape(String(data))}"]`);
    const text = choice ? choice.closest("label").textContent.trim() : String(data).trim();
    if (!text) return;
    save(key, text);
    show(text);
    record(section.id, {
      kind: "guess first",
      question: section.querySelector(".mh-question").textContent.trim(),
      answer: text,
      choice: choice ? Number(choice.value) : null,
      correct: null,
    });
    explain.querySelector("summary").focus();
  });
  const saved = load(key);
  if (saved) show(saved);
}

function setupCheck(section) {
  const form = section.querySelector("[data-check-form]");
  section.querySelector("[data-answer-key]").remove();
  const button = form.querySelector("[data-check-button]");
  button.hidden = false;
  form.addEventListener("change", () => {
    for (const p of form.querySelectorAll("[data-feedback]")) p.hidden = true;
  });
  const showFeedback = (chosen) => {
    for (const p of form.querySelectorAll("[data-feedback]")) p.hidden = true;
    const feedback = chosen.closest(".mh-option").querySelector("[data-feedback]");
    feedback.hidden = false;
    return feedback;
  };
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const chosen = form.querySelector('input[name="answer"]:checked');
    if (!chosen) return;
    const feedback = showFeedback(chosen);
    feedback.setAttribute("role", "status");
    record(section.id, {
      kind: "check yourself",
      question: form.querySelector("legend").textContent.trim(),
      answer: chosen.closest("label").textContent.trim(),
      choice: Number(chosen.value),
      correct: feedback.classList.contains("right"),
    });
  });
  restoreCheck(form, attemptsOf(section.id).at(-1), showFeedback);
}

// The last answer checked, chosen again with its feedback shown.
function restoreCheck(form, last, showFeedback) {
  if (!last || !Number.isInteger(last.choice)) return;
  const input = form.querySelectorAll('input[name="answer"]')[last.choice];
  if (!input) return;
  input.checked = true;
  showFeedback(input);
}

export function setupBlocks() {
  document.querySelectorAll("[data-guess]").forEach(setupGuess);
  document.querySelectorAll("[data-check]").forEach(setupCheck);
}
