"""`build.py questions`: every Check yourself and Guess first as Moodle GIFT, Moodle XML and
QTI 2.1, checked against the built pages.

GIFT is read by gift-pegjs 1.0.2, the GIFT parser on npm (fetched pinned into the cache like the
other test tools, never shipped), run with node; Moodle XML is read for what Moodle's importer
(question/format/xml) takes from a multichoice question; the QTI package for what QTI 2.1 and an
IMS content package require of a single-choice item. What each must say is read from the built
pages themselves: their questions, choices, right answers and feedback.

The QTI package is also played, in one browser test: Citolab's converter (PyPI's
citolab-qti-convert 0.2.0, with lxml) upgrades it to QTI 3, which keeps everything the items say,
and Citolab's player (npm's @citolab/qti-components 7.27.4, tests/harness/qti.html) plays each
kind of item, answered right and wrong: it must score each answer as the page grades it and show
the feedback the page shows. Both are fetched pinned into the cache, never shipped."""

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import html5lib
import pytest
from conftest import open_before_python
from test_build import project

from sitebuild.fetched import assets
from sitebuild.lms.questions import MATHML, QTI, QTI_BLOCK, QuestionsError, base_url, write_all
from sitebuild.pipeline.build import load_chapters
from sitebuild.pipeline.chapters import reading_path
from sitebuild.serving.loopback import QuietServer
from sitebuild.serving.serve import Handler

ROOT = Path(__file__).resolve().parent.parent
HARNESS = Path(__file__).resolve().parent / "harness"
QTI3 = "{http://www.imsglobal.org/xsd/imsqtiasi_v3p0}"
CP3 = "{http://www.imsglobal.org/xsd/qti/qtiv3p0/imscp_v1p1}"  # QTI 3's own
BASE = "https://school.example/many-heads/"
CP = "{http://www.imsglobal.org/xsd/imscp_v1p1}"
Q = f"{{{QTI}}}"
MATH = "§"  # a formula, wherever it stands: MathML on the page, TeX in GIFT
# the elements a QTI 2.1 item of ours may hold, by where they may stand (the XSD's content
# models for a choiceInteraction item, as far as these items use them)
QTI_INLINE = {"a", "abbr", "br", "code", "em", "kbd", "small", "strong", "sub", "sup", "span"}
QTI_ITEM = {
    "assessmentItem",
    "responseDeclaration",
    "correctResponse",
    "mapping",
    "mapEntry",
    "value",
    "outcomeDeclaration",
    "defaultValue",
    "itemBody",
    "choiceInteraction",
    "prompt",
    "simpleChoice",
    "p",
    "div",
    "responseProcessing",
    "responseCondition",
    "responseIf",
    "responseElse",
    "match",
    "variable",
    "correct",
    "isNull",
    "setOutcomeValue",
    "baseValue",
    "mapResponse",
    "modalFeedback",
    *QTI_INLINE,
    *QTI_BLOCK,
}
HOSTILE = """+++
title = "Hostile <b>& \\"friends\\"/\\nfoes"
slug = "hostile"
order = 1
series = "Chapter 1 · Tests"
summary = "Text that markup and GIFT must keep as text."
sources = ["Someone (2020). A paper."]
+++

::: check Is `<script>alert(1)</script>` & `~=#{}:\\` text, with $a < b$?
- [x] Yes: `</p><img src=x onerror=alert(1)>` stays ~ = # { } : \\ text.
  Right. It is shown as written: {=x} #1 ~2.
- [ ] No & 1 < 2 > 0.
  Not quite. `:: title ::` is text too; see [below](#later) and [all chapters](index.html).
:::

::: guess Guess `{~a =b}`?
- A :: B
- C # D
---
Any guess is fine: nothing here is `<b>`bold`</b>`.
:::
"""


def text(el, skip=()):
    """An element's text as a reader sees it, each formula as MATH, spaces collapsed."""
    out = []

    def walk(e):
        tag = e.tag.rsplit("}", 1)[-1] if isinstance(e.tag, str) else ""
        if tag == "math":
            out.append(MATH)
        elif tag not in skip:
            out.append(e.text or "")
            for child in e:
                walk(child)
        if e is not el:
            out.append(e.tail or "")

    walk(el)
    return re.sub(r"\s+", " ", "".join(out)).strip()


def tex_free(plain):
    """Exported plain text with each \\(TeX\\) as MATH."""
    return re.sub(r"\s+", " ", re.sub(r"\\\(.*?\\\)", MATH, plain)).strip()


def on_the_pages(site):
    """{SLUG.BLOCK: what the page shows} for every check, and every guess with choices, of the
    readers' path, read from the built pages."""
    found = {}
    for ch in reading_path(load_chapters(ROOT))[0]:
        slug = ch.meta["slug"]
        page = (site / f"{slug}.html").read_text("utf-8")
        doc = html5lib.parse(page, namespaceHTMLElements=False)
        for sec in doc.iter("section"):
            if "data-check" in sec.attrib:
                options = [o for o in sec.iter("div") if o.get("class") == "mh-option"]
                found[f"{slug}.{sec.get('id')}"] = {
                    "question": text(sec.find(".//legend")),
                    "choices": [text(o.find(".//label/span")) for o in options],
                    "right": ["right" in o.find(".//p").get("class").split() for o in options],
                    "feedback": [text(o.find(".//p")) for o in options],
                }
            elif "data-guess" in sec.attrib and sec.find(".//input[@type='radio']") is not None:
                labels = [lab for lab in sec.iter("label") if lab.find("input") is not None]
                answer = sec.get("data-answer")
                explain = next(d for d in sec.iter("details") if "data-explain" in d.attrib)
                found[f"{slug}.{sec.get('id')}"] = {
                    "question": text(sec.find(".//p[@class='mh-question']")),
                    "choices": [text(lab.find("span")) for lab in labels],
                    "right": [str(i) == answer for i in range(len(labels))],
                    "explanation": text(explain, skip=("summary",)),
                }
    return found


def parse_gift(node, gift_text):
    """gift-pegjs's reading of GIFT_TEXT: its list of questions and categories."""
    script = (
        "const p = require(process.argv[1]);"
        "process.stdout.write(JSON.stringify(p.parse(require('fs').readFileSync(0, 'utf8'))))"
    )
    run = subprocess.run(
        [node, "-e", script, str(assets.gift_parser())],
        input=gift_text,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("questions")
    paths, questions = write_all(ROOT, out, None, BASE)
    return {p.suffix: p for p in paths}, questions


@pytest.fixture(scope="module")
def pages(site):
    return on_the_pages(site)


def qti_items(path):
    """{identifier: item root} of the package, and its manifest's root."""
    with zipfile.ZipFile(path) as z:
        manifest = ET.fromstring(z.read("imsmanifest.xml"))
        items = {}
        for name in z.namelist():
            if name.startswith("items/"):
                items[name] = ET.fromstring(z.read(name))
    return manifest, items


def test_every_question_of_the_path_is_exported_once_in_each_format(exported, pages, node):
    paths, _ = exported
    assert len(pages) >= 10  # the path's chapters ask at least this many
    read = parse_gift(node, paths[".gift"].read_text("utf-8"))
    gift_ids = [q["title"] for q in read if q["type"] != "Category"]
    moodle = ET.parse(paths[".xml"]).getroot()
    moodle_ids = [q.findtext("idnumber") for q in moodle if q.get("type") == "multichoice"]
    manifest, items = qti_items(paths[".zip"])
    qti_ids = [item.get("identifier") for item in items.values()]
    for ids in (gift_ids, moodle_ids, qti_ids):
        assert sorted(ids) == sorted(pages), ids


def test_gift_as_gift_pegjs_reads_it_says_what_the_page_says(exported, pages, node):
    paths, _ = exported
    read = parse_gift(node, paths[".gift"].read_text("utf-8"))
    categories = [q["title"] for q in read if q["type"] == "Category"]
    assert "$course$/Many Heads/Many heads looking at once" in categories
    for q in (q for q in read if q["type"] != "Category"):
        page = pages[q["title"]]
        assert q["type"] == "MC", q["title"]
        assert q["stem"]["format"] == "plain"
        block = q["title"].split(".", 1)[1]
        link = f"(The question on the page: {BASE}{q['title'].split('.')[0]}.html#{block})"
        assert link in q["stem"]["text"]
        assert tex_free(q["stem"]["text"]).startswith(page["question"] + " (The question")
        assert [tex_free(c["text"]["text"]) for c in q["choices"]] == page["choices"]
        assert [c["isCorrect"] for c in q["choices"]] == page["right"], q["title"]
        if "feedback" in page:
            assert [tex_free(c["feedback"]["text"]) for c in q["choices"]] == page["feedback"]
        else:  # a guess: the page names the answer after any guess, then explains
            answer = page["choices"][page["right"].index(True)]
            said = [tex_free(c["feedback"]["text"]) for c in q["choices"]]
            assert said == [
                "That is the answer." if right else f"The answer: {answer}"
                for right in page["right"]
            ]
            assert tex_free(q["globalFeedback"]["text"]) == page["explanation"]


def test_gift_keeps_the_tex_of_each_formula_as_plain_text(exported, node):
    paths, _ = exported
    read = parse_gift(node, paths[".gift"].read_text("utf-8"))
    check = next(q for q in read if q["title"] == "one-head.check-1")
    assert check["choices"][0]["feedback"]["text"] == (
        "Right. Row \\(i\\) is word \\(i\\) asking; any column \\(j > i\\) is a word that "
        "comes later."
    )


def test_moodle_xml_holds_what_moodles_importer_reads(exported, pages):
    paths, _ = exported
    quiz = ET.parse(paths[".xml"]).getroot()
    assert quiz.tag == "quiz"
    current = None
    for q in quiz:
        assert q.tag == "question"
        if q.get("type") == "category":
            current = q.findtext("category/text")
            continue
        assert q.get("type") == "multichoice"
        assert current and current.startswith("$course$/Many Heads/")
        qid = q.findtext("idnumber")
        page = pages[qid]
        assert q.findtext("name/text") == qid
        assert q.find("questiontext").get("format") == "html"
        body = html5lib.parseFragment(q.findtext("questiontext/text"), namespaceHTMLElements=False)
        assert tex_free(text(body.find("p"))) == page["question"]
        link = body.find("p[2]/a")
        assert link.get("href").startswith(f"{BASE}{qid.split('.')[0]}.html#")
        assert q.findtext("single") == "true"
        assert q.findtext("shuffleanswers") == "false"
        assert q.findtext("defaultgrade") == "1"
        assert q.findtext("answernumbering") == "abc"
        answers = q.findall("answer")
        assert [a.get("fraction") for a in answers] == [
            "100" if right else "0" for right in page["right"]
        ]
        for a, choice in zip(answers, page["choices"], strict=True):
            assert a.get("format") == "html"
            shown = html5lib.parseFragment(a.findtext("text"), namespaceHTMLElements=False)
            assert tex_free(text(shown)) == choice
            assert a.find("feedback").get("format") == "html"
            assert a.findtext("feedback/text")
        if "feedback" in page:
            feedback = [a.findtext("feedback/text") for a in answers]
            shown = [html5lib.parseFragment(f, namespaceHTMLElements=False) for f in feedback]
            assert [tex_free(text(s)) for s in shown] == page["feedback"]
        else:
            general = q.findtext("generalfeedback/text")
            shown = html5lib.parseFragment(general, namespaceHTMLElements=False)
            assert tex_free(text(shown)) == page["explanation"]


def test_qti_package_is_a_content_package_of_valid_choice_items(exported, pages):
    paths, _ = exported
    manifest, items = qti_items(paths[".zip"])
    assert manifest.tag == f"{CP}manifest"
    assert manifest.findtext(f"{CP}metadata/{CP}schema") == "QTIv2.1 Package"
    resources = manifest.findall(f"{CP}resources/{CP}resource")
    assert sorted(r.get("href") for r in resources) == sorted(items)
    for r in resources:
        assert r.get("type") == "imsqti_item_xmlv2p1"
        assert [f.get("href") for f in r.findall(f"{CP}file")] == [r.get("href")]
        item = items[r.get("href")]
        page = pages[item.get("identifier")]
        assert item.tag == f"{Q}assessmentItem"
        assert item.get("adaptive") == "false" and item.get("timeDependent") == "false"
        for el in item.iter():
            ns, _, tag = el.tag[1:].partition("}")
            assert ns == MATHML or (ns == QTI and tag in QTI_ITEM), el.tag
        # the XSD's sequences: declarations, the body, its processing, then the feedback
        children = " ".join(el.tag.rsplit("}", 1)[-1] for el in item) + " "
        assert re.fullmatch(
            r"responseDeclaration (outcomeDeclaration )+itemBody responseProcessing "
            r"(modalFeedback )+",
            children,
        ), children
        [response] = item.findall(f"{Q}responseDeclaration")
        assert response.attrib == {
            "identifier": "RESPONSE",
            "cardinality": "single",
            "baseType": "identifier",
        }
        [interaction] = item.findall(f"{Q}itemBody/{Q}choiceInteraction")
        assert interaction.get("responseIdentifier") == "RESPONSE"
        assert interaction.get("maxChoices") == "1"
        assert text(interaction.find(f"{Q}prompt")) == page["question"]
        choices = interaction.findall(f"{Q}simpleChoice")
        assert [el.tag for el in interaction] == [f"{Q}prompt"] + [f"{Q}simpleChoice"] * len(
            choices
        )
        assert [text(c) for c in choices] == page["choices"]
        ids = [c.get("identifier") for c in choices]
        right = [i for i, r in zip(ids, page["right"], strict=True) if r]
        assert [v.text for v in response.findall(f"{Q}correctResponse/{Q}value")] == right
        # match_correct's rules, with no template named that a player would run instead
        processing = item.find(f"{Q}responseProcessing")
        assert processing.attrib == {}
        assert processing.find(f".//{Q}match/{Q}correct").get("identifier") == "RESPONSE"
        outcomes = {o.get("identifier"): o.attrib for o in item.findall(f"{Q}outcomeDeclaration")}
        assert outcomes["SCORE"]["baseType"] == "float"
        feedback = item.findall(f"{Q}modalFeedback")
        assert [f.get("identifier") for f in feedback] == ids
        assert all(f.get("outcomeIdentifier") == "FEEDBACK" for f in feedback)
        if "feedback" in page:
            assert [text(f) for f in feedback] == page["feedback"]


def test_qti_items_carry_the_pages_maths_as_mathml(exported):
    paths, _ = exported
    _, items = qti_items(paths[".zip"])
    item = items["items/one-head.check-1.xml"]
    first = item.findall(f"{Q}modalFeedback")[0]
    maths = first.findall(f".//{{{MATHML}}}math")
    assert ["".join("".join(m.itertext()).split()) for m in maths] == ["i", "i", "j>i"]


def test_hostile_text_stays_text_in_every_format(tmp_path, node):
    root = project(tmp_path, {"01-hostile.md": HOSTILE})
    paths, questions = write_all(root, tmp_path, ["hostile"], BASE)
    assert [p.name for p in paths] == [
        "manyheads-hostile-questions.gift",
        "manyheads-hostile-questions.xml",
        "manyheads-hostile-questions-qti21.zip",
    ]
    everything = parse_gift(node, paths[0].read_text("utf-8"))
    assert [q["title"] for q in everything if q["type"] == "Category"] == [
        '$course$/Many Heads/Hostile <b>& "friends"- foes'
    ]
    check, guess = [q for q in everything if q["type"] == "MC"]
    assert check["title"] == "hostile.check-1"
    assert check["stem"]["text"].startswith(
        "Is <script>alert(1)</script> & ~=#{}:\\ text, with \\(a < b\\)? (The question"
    )
    assert check["choices"][0]["text"]["text"] == (
        "Yes: </p><img src=x onerror=alert(1)> stays ~ = # { } : \\ text."
    )
    assert check["choices"][0]["feedback"]["text"] == "Right. It is shown as written: {=x} #1 ~2."
    assert check["choices"][1]["text"]["text"] == "No & 1 < 2 > 0."
    assert check["choices"][1]["feedback"]["text"] == (
        "Not quite. :: title :: is text too; see below and all chapters."
    )
    assert guess["stem"]["text"].startswith("Guess {~a =b}?")
    # a guess naming no answer: every choice counts, as on the page
    assert [(c["text"]["text"], c["weight"]) for c in guess["choices"]] == [
        ("A :: B", 100),
        ("C # D", 100),
    ]
    assert guess["globalFeedback"]["text"] == "Any guess is fine: nothing here is <b>bold</b>."

    quiz = ET.parse(paths[1]).getroot()
    body = quiz.find("question[@type='multichoice']/questiontext/text").text
    shown = html5lib.parseFragment(body, namespaceHTMLElements=False)
    assert [e.tag for e in shown.iter()][1:3] == ["p", "code"]
    assert shown.find("p/code").text == "<script>alert(1)</script>"
    assert not shown.findall(".//script") and not shown.findall(".//img")
    assert "\\(a &lt; b\\)" in body
    # a link of the page's, made absolute: the chapter's own anchor, another page of the site
    feedback = quiz.findall("question[@type='multichoice']/answer/feedback/text")[1].text
    links = html5lib.parseFragment(feedback, namespaceHTMLElements=False).findall(".//a")
    assert [a.get("href") for a in links] == [f"{BASE}hostile.html#later", f"{BASE}index.html"]
    assert quiz.find("question/category/text").text == (
        '$course$/Many Heads/Hostile <b>& "friends"- foes'
    )

    manifest, items = qti_items(paths[2])
    item = items["items/hostile.check-1.xml"]
    tags = {el.tag.rsplit("}", 1)[-1] for el in item.iter()}
    assert not tags & {"script", "img", "b"}
    codes = [c.text for c in item.iter(f"{Q}code")]
    assert codes[:3] == [
        "<script>alert(1)</script>",
        "~=#{}:\\",
        "</p><img src=x onerror=alert(1)>",
    ]
    hrefs = [a.get("href") for a in item.iter(f"{Q}a")]
    assert hrefs[-2:] == [f"{BASE}hostile.html#later", f"{BASE}index.html"]
    mapped = items["items/hostile.guess-1.xml"]
    rules = mapped.find(f"{Q}responseProcessing")
    assert rules.attrib == {} and rules.find(f".//{Q}mapResponse").get("identifier") == "RESPONSE"
    entries = mapped.findall(f"{Q}responseDeclaration/{Q}mapping/{Q}mapEntry")
    assert [e.get("mappedValue") for e in entries] == ["1", "1"]


def test_a_guess_without_choices_is_left_out_and_the_count_says_so(tmp_path):
    free = HOSTILE.replace("- A :: B\n- C # D\n", "")
    root = project(tmp_path, {"01-hostile.md": free})
    done = subprocess.run(
        [sys.executable, str(ROOT / "build.py"), "questions", "--root", str(root)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "1 questions, without links back: no --base-url"
    assert (root / "manyheads-questions.gift").read_text("utf-8").count("::hostile.") == 1
    moodle = (root / "manyheads-questions.xml").read_text("utf-8")
    assert "see below and all chapters." in moodle and "href" not in moodle  # no site to go to
    command = [sys.executable, str(ROOT / "build.py"), "questions", "--root", str(root)]
    done = subprocess.run([*command, "--chapter", "hostil"], capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr == (
        "error: no chapter 'hostil' (did you mean 'hostile'?); the chapters are hostile\n"
    )


@pytest.mark.parametrize(
    "url", ["javascript:alert(1)", "ftp://school.example/", "school.example/mh/", "https://x/?a=1"]
)
def test_a_base_url_that_is_not_a_sites_address_is_refused(url):
    with pytest.raises(QuestionsError, match=r"^--base-url .* is not the address of the site"):
        base_url(url)
    assert base_url("http://127.0.0.1:8000/mh") == "http://127.0.0.1:8000/mh/"


# --- QTI 2.1 upgraded to QTI 3 and played ---------------------------------------------------


def upgrade(package, out):
    """The QTI 2.1 PACKAGE as Citolab's qti-convert upgrades it to QTI 3, written to OUT."""
    run = subprocess.run(
        [sys.executable, "-m", "qti_convert.cli", "upgrade", str(package), str(out)],
        env={**os.environ, "PYTHONPATH": str(assets.qti_converter_dir())},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0 and not run.stderr, run.stderr
    return out


@pytest.fixture(scope="module")
def qti3(exported, tmp_path_factory):
    paths, _ = exported
    return upgrade(paths[".zip"], tmp_path_factory.mktemp("qti3") / "qti3.zip")


def maths(el):
    """Each formula under EL as its elements' names, attributes and words, in order."""
    return [
        [(m.tag, sorted(m.attrib.items()), (m.text or "").strip()) for m in math.iter()]
        for math in el.iter(f"{{{MATHML}}}math")
    ]


def qti3_path(path):
    """A path of QTI 2.1 names as QTI 3 names its elements: itemBody is qti-item-body."""
    kebab = functools.partial(re.sub, r"[A-Z]", lambda m: "-" + m[0].lower())
    return "/".join(f"{QTI3}qti-{kebab(step)}" for step in path.split("/"))


def test_qti3_upgrade_keeps_every_item_and_all_it_says(exported, qti3):
    """Citolab's converter drops nothing of ours: every item, its question, choices, right
    answer, per-choice feedback (with a guess's explanation) and formulas."""
    paths, _ = exported
    _, before = qti_items(paths[".zip"])
    manifest, after = qti_items(qti3)
    resources = manifest.findall(f"{CP3}resources/{CP3}resource")
    assert sorted(r.get("href") for r in resources) == sorted(before) == sorted(after)
    assert {r.get("type") for r in resources} == {"imsqti_item_xmlv3p0"}
    for href, old in before.items():
        new = after[href]
        assert new.tag == f"{QTI3}qti-assessment-item"
        assert new.get("identifier") == old.get("identifier")
        for path in (
            "itemBody/choiceInteraction/prompt",
            "itemBody/choiceInteraction/simpleChoice",
            "responseDeclaration/correctResponse/value",
            "modalFeedback",
        ):
            olds = old.findall("/".join(Q + step for step in path.split("/")))
            news = new.findall(qti3_path(path))
            assert olds and [text(e) for e in news] == [text(e) for e in olds], (href, path)
            assert [maths(e) for e in news] == [maths(e) for e in olds], (href, path)
        assert [f.get("identifier") for f in new.findall(f"{QTI3}qti-modal-feedback")] == [
            f.get("identifier") for f in old.findall(f"{Q}modalFeedback")
        ]


class PlayerHandler(Handler):
    """The site's server, under the policy of an LMS's delivery page rather than the site's: the
    player's templates set style attributes."""

    csp = "default-src 'self'; style-src 'self' 'unsafe-inline'"


@pytest.fixture(scope="module")
def player(qti3, tmp_path_factory):
    """The address of a QTI 3 delivery page (tests/harness/qti.html) serving the path's upgraded
    package under pkg/ and the hostile chapter's, whose guess names no answer, under hostile/."""
    where = tmp_path_factory.mktemp("player")
    for name in ("qti.html", "qti.js"):
        shutil.copy(HARNESS / name, where / name)
    (where / "harness.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"/>')
    for name in (*assets.QTI_COMPONENTS_FILES, "LICENSE.md"):
        shutil.copy(assets.qti_player_dir() / name, where / name)
    with zipfile.ZipFile(qti3) as z:
        z.extractall(where / "pkg")
    hostile = tmp_path_factory.mktemp("hostile")
    paths, _ = write_all(project(hostile, {"01-hostile.md": HOSTILE}), hostile, ["hostile"], BASE)
    with zipfile.ZipFile(upgrade(paths[2], hostile / "qti3.zip")) as z:
        z.extractall(where / "hostile")
    server = QuietServer(("127.0.0.1", 0), functools.partial(PlayerHandler, directory=str(where)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/qti.html"
    server.shutdown()


# the words of an element, each formula as [its characters] (the player shows a formula's
# elements as plain text where the page lays out MathML), a <summary> left out
SAID_JS = """(el) => {
  const copy = el.cloneNode(true);
  copy.querySelectorAll("summary").forEach((s) => s.remove());
  for (const m of copy.querySelectorAll("math")) {
    m.replaceWith(`[${m.textContent.replace(/\\s+/g, "")}]`);
  }
  return copy.textContent.replace(/\\s+/g, " ").trim();
}"""


def on_the_page(page, block, choice):
    """What the page says of CHOICE (its index) in BLOCK once answered: (right?, what it shows)."""
    section = page.locator(f"#{block}")
    if block.startswith("check"):
        section.locator("input[name=answer]").nth(choice).check()
        section.get_by_role("button", name="Check").click()
        said = section.locator("[data-feedback]:visible")
        return "right" in said.get_attribute("class").split(), said.evaluate(SAID_JS)
    section.locator("input[name=guess]").nth(choice).check()
    section.get_by_role("button", name="Commit my guess").click()
    verdict = section.locator("[data-guess-answer]")
    shown = verdict.evaluate(SAID_JS) + " " + section.locator("[data-explain]").evaluate(SAID_JS)
    right = "right" in verdict.get_attribute("class").split()
    page.evaluate("localStorage.clear()")  # a guess is committed once: forget it for the next
    page.reload()
    page.wait_for_selector("html.js")
    return right, shown


@pytest.mark.browser
def test_a_qti_player_scores_each_kind_of_item_as_the_page_grades_it(page, base_url, player):
    """Each kind of item the export writes, upgraded to QTI 3 and played by Citolab's player:
    answered right and wrong, the score the player reports is the page's verdict on the same
    answer, and the feedback it shows is what the page shows."""

    def play(href, choice):
        page.goto(player)
        page.wait_for_selector("html.ready")
        page.evaluate("(href) => harness.show(href)", href)
        page.locator("qti-simple-choice").nth(choice).click()
        result = page.evaluate("harness.score()")
        assert result["response"] == f"choice-{choice}"
        shown = [
            page.locator(f'qti-modal-feedback[identifier="{i}"]').evaluate(SAID_JS)
            for i in result["feedback"]
        ]
        return float(result["score"]), shown

    open_before_python(page, base_url + "many-heads.html")
    # a check and a guess naming its answer (match_correct), each right (1) and wrong (2, 0)
    cases = [("check-1", 1), ("check-1", 2), ("guess-1", 1), ("guess-1", 0)]
    verdicts = {case: on_the_page(page, *case) for case in cases}
    assert [right for right, _ in verdicts.values()] == [True, False, True, False]
    for (block, choice), (right, shown) in verdicts.items():
        score, feedback = play(f"pkg/items/many-heads.{block}.xml", choice)
        assert score == (1.0 if right else 0.0), (block, choice)
        assert feedback == [shown], (block, choice)
    # a guess naming no answer (map_response): any choice counts, as on the page
    for choice in (0, 1):
        score, feedback = play("hostile/items/hostile.guess-1.xml", choice)
        assert score == 1.0
        assert feedback == ["Any guess is fine: nothing here is <b>bold</b>."]
