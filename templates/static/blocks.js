// "Guess first" and "Check yourself": plain page behaviour, no Python. A guess is kept in
// localStorage so a reader who comes back finds it, and the explanation stays shut until
// the reader has committed to one. Guesses and checked answers are recorded as attempts
// ("Your results"); a reader who comes back finds their last checked answer with its feedback.
// Clearing the results ("mh:cleared") takes both back.

import { attemptsOf } from "./attempts.js";
import { record } from "./results.js";
import { load, save } from "./storage.js";

function setupGuess(section) {
  const form = section.querySelector("[data-guess-form]");
  const explain = section.querySelector("[data-explain]");
  const yours = section.querySelector("[data-your-guess]");
  const answerLine = section.querySelector("[data-guess-answer]");
  const answer = section.dataset.answer === undefined ? null : Number(section.dataset.answer);
  const key = section.id;
  const choices = [...form.querySelectorAll('input[name="guess"]')];
  const labelOf = (input) => input.closest("label").textContent.trim();
  // A committed guess stays on screen: with choices, the reader's is marked and so is the
  // answer (if the block names one); the choices can no longer be changed
  const show = (text) => {
    const mine = choices.find((c) => labelOf(c) === text);
    yours.hidden = false;
    explain.hidden = false;
    explain.open = true;
    if (!choices.length || !mine) {
      yours.textContent = `Your guess: ${text}`;
      form.hidden = true;
      if (answerLine && choices[answer]) {
        answerLine.textContent = `The answer: ${labelOf(choices[answer])}`;
        answerLine.hidden = false;
      }
      return;
    }
    form.classList.add("is-committed");
    for (const c of choices) {
      c.checked = c === mine;
      c.disabled = true;
      c.closest("label").classList.toggle("is-yours", c === mine);
      const isAnswer = answer !== null && Number(c.value) === answer;
      c.closest("label").classList.toggle("is-answer", isAnswer);
    }
    form.querySelector('button[type="submit"]').hidden = true;
    yours.textContent = `Your guess: ${text}`;
    if (answerLine) {
      const right = Number(mine.value) === answer;
      const told = `The answer: ${labelOf(choices[answer])}`;
      answerLine.textContent = right ? "That is the answer." : told;
      answerLine.classList.toggle("right", right);
      answerLine.hidden = false;
    }
  };
  form.hidden = false;
  explain.hidden = true;
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const data = new FormData(form).get("guess");
    const choice = form.querySelector(`input[name="guess"][value="${CSS.escape(String(data))}"]`);
    const text = choice ? labelOf(choice) : String(data).trim();
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
  // Results cleared: the guess is forgotten and the question asked afresh
  document.addEventListener("mh:cleared", () => {
    save(key, undefined);
    form.reset();
    form.hidden = false;
    form.classList.remove("is-committed");
    for (const c of choices) {
      c.disabled = false;
      c.closest("label").classList.remove("is-yours", "is-answer");
    }
    form.querySelector('button[type="submit"]').hidden = false;
    yours.hidden = true;
    yours.textContent = "";
    explain.open = false;
    explain.hidden = true;
    if (answerLine) {
      answerLine.hidden = true;
      answerLine.classList.remove("right");
    }
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
  document.addEventListener("mh:cleared", () => {
    form.reset();
    for (const p of form.querySelectorAll("[data-feedback]")) p.hidden = true;
  });
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
