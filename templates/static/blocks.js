// "Guess first" and "Check yourself": plain page behaviour, no Python. A guess is kept in
// localStorage so a reader who comes back finds it, and the explanation stays shut until
// the reader has committed to one. Guesses and checked answers are recorded as attempts
// ("Your results"); a reader who comes back finds their last checked answer with its feedback.
// Clearing the results ("mh:cleared") takes both back.

import { attemptsOf } from "./attempts.js";
import { record } from "./results.js";
import { load, save } from "./storage.js";

// a choice's text, as the reader reads it
const labelOf = (input) => input.closest("label").textContent.trim();

function setupGuess(section) {
  const guess = new Guess(section);
  guess.form.hidden = false;
  guess.explain.hidden = true;
  guess.form.addEventListener("submit", (e) => {
    e.preventDefault();
    guess.commit();
  });
  // Results cleared: the guess is forgotten and the question asked afresh
  document.addEventListener("mh:cleared", () => guess.forget());
  const saved = load(guess.key);
  if (saved) guess.show(saved);
}

// A "Guess first" block: its form (choices, or a text box), the reader's guess and the
// explanation, shut until the reader has committed to a guess
class Guess {
  constructor(section) {
    this.section = section;
    this.key = section.id;
    this.form = section.querySelector("[data-guess-form]");
    this.explain = section.querySelector("[data-explain]");
    this.yours = section.querySelector("[data-your-guess]");
    this.answerLine = section.querySelector("[data-guess-answer]");
    this.answer = section.dataset.answer === undefined ? null : Number(section.dataset.answer);
    this.choices = [...this.form.querySelectorAll('input[name="guess"]')];
  }

  // the reader's guess, kept, shown and recorded as an attempt
  commit() {
    const data = new FormData(this.form).get("guess");
    const value = CSS.escape(String(data));
    const choice = this.form.querySelector(`input[name="guess"][value="${value}"]`);
    const text = choice ? labelOf(choice) : String(data).trim();
    if (!text) return;
    save(this.key, text);
    this.show(text);
    record(this.section.id, {
      kind: "guess first",
      question: this.section.querySelector(".mh-question").textContent.trim(),
      answer: text,
      choice: choice ? Number(choice.value) : null,
      correct: null,
    });
    this.explain.querySelector("summary").focus();
  }

  // A committed guess TEXT stays on screen, with the explanation open: with choices, the
  // reader's is marked and so is the answer (if the block names one); the choices can no
  // longer be changed
  show(text) {
    const mine = this.choices.find((c) => labelOf(c) === text);
    this.yours.hidden = false;
    this.yours.textContent = `Your guess: ${text}`;
    this.explain.hidden = false;
    this.explain.open = true;
    if (this.choices.length && mine) this.markChoices(mine);
    else this.showTyped();
  }

  // a guess typed (or no longer among the choices): the form goes, the answer is said
  showTyped() {
    const { answerLine, choices, answer } = this;
    this.form.hidden = true;
    if (answerLine && choices[answer]) {
      answerLine.textContent = `The answer: ${labelOf(choices[answer])}`;
      answerLine.hidden = false;
    }
  }

  // the choice MINE marked as the reader's, and the answer as the answer
  markChoices(mine) {
    const { answerLine, choices, answer } = this;
    this.form.classList.add("is-committed");
    for (const c of choices) {
      c.checked = c === mine;
      c.disabled = true;
      c.closest("label").classList.toggle("is-yours", c === mine);
      const isAnswer = answer !== null && Number(c.value) === answer;
      c.closest("label").classList.toggle("is-answer", isAnswer);
    }
    this.form.querySelector('button[type="submit"]').hidden = true;
    if (answerLine) {
      const right = Number(mine.value) === answer;
      const told = `The answer: ${labelOf(choices[answer])}`;
      answerLine.textContent = right ? "That is the answer." : told;
      answerLine.classList.toggle("right", right);
      answerLine.hidden = false;
    }
  }

  // the guess forgotten, the question asked afresh
  forget() {
    const { form, yours, explain, answerLine } = this;
    save(this.key, undefined);
    form.reset();
    form.hidden = false;
    form.classList.remove("is-committed");
    for (const c of this.choices) {
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
  }
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
