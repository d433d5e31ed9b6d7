"""The path's questions as the class summary (class.html) needs them, and the words the page
gives as feedback, which the quiz-bank export (sitebuild/lms/questions.py) gives too."""

import re
from html.parser import HTMLParser

# the page's words for a checked answer (templates/blocks.html) and a guess (blocks.js)
RIGHT, WRONG = "Right.", "Not quite."
GUESS_RIGHT, GUESS_TOLD = "That is the answer.", "The answer: {}"


def feedback_html(o, macros):
    """A check option's feedback as the page gives it (templates/blocks.html)."""
    verdict = RIGHT if o["correct"] else WRONG
    return f"<strong>{verdict}</strong> {str(macros.verdictless(o)).strip()}"


class _TextContent(HTMLParser):
    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.parts = []
        self.feed(str(text))
        self.close()

    def handle_data(self, data):
        self.parts.append(data)


def text_content(markup):
    """HTML -> its text as a browser's textContent reads it, spaces collapsed and trimmed: how
    "Your results" writes a question and a choice (templates/static/blocks.js)."""
    return re.sub(r"\s+", " ", "".join(_TextContent(markup).parts)).strip()


def class_bank(pages, macros):
    """The path's questions as class.html needs them to read students' results files: per
    chapter (slug, title), each check, guess and exercise in page order with its block id, its
    text, and for a choice question its choices, which are right, and the feedback each gets,
    all as the page's text."""
    out = []
    for page in pages:
        found = []
        for q in page.questions:
            entry = {"id": q["id"], "kind": q["kind"], "question": text_content(q["question"])}
            if q["kind"] == "check":
                options = q["options"]
                entry["choices"] = [text_content(o["text"]) for o in options]
                entry["right"] = [o["correct"] for o in options]
                entry["feedback"] = [text_content(feedback_html(o, macros)) for o in options]
            elif q["kind"] == "guess":
                choices = [text_content(c["html"]) for c in q["choices"]]
                answer = q["answer"]
                entry["choices"] = choices
                entry["right"] = [i == answer for i in range(len(choices))]
                entry["feedback"] = [
                    "" if answer is None
                    else GUESS_RIGHT if i == answer
                    else GUESS_TOLD.format(choices[answer])
                    for i in range(len(choices))
                ]  # fmt: skip
            found.append(entry)
        out.append({"slug": page.chapter.meta["slug"], "title": page.chapter.meta["title"],
                    "questions": found})  # fmt: skip
    return out
