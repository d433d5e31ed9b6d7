"""`python build.py questions`: every *Check yourself* and every *Guess first* with choices, as
the quiz banks of LMSs import them: Moodle GIFT, Moodle XML, and QTI 2.1 items in an IMS
content package.

The questions are read by the page's own renderer (sitebuild/pipeline/pages.py), so each item holds
what the page shows: the same question, choices, right answers and feedback, under the id the page
gives its block (`SLUG.check-1`, the id SCORM's interactions report, templates/static/lms.js).
A guess without choices asks for free text the page does not grade and is left out; a guess
whose choices name no answer is exported with every choice counted right, as the page counts
any guess.

Maths is MathML in QTI, as on the page. GIFT is plain text, so there each formula is its TeX
source between \\( and \\), which Moodle's MathJax filter draws; Moodle XML carries HTML, whose
MathML Moodle's HTML cleaner removes, so it gets the TeX too. Each item links back to its
question on the site and to the figure it follows, under the --base-url the teacher passes,
since the site is self-hosted: without one the items carry no link.
"""

import html
import posixpath
import re
import zipfile
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit
from xml.etree import ElementTree as ET

from ..pipeline.build import environment, load_chapters
from ..pipeline.chapters import reading_path, suggest
from ..pipeline.classbank import GUESS_RIGHT, GUESS_TOLD, feedback_html
from ..pipeline.markup import TOKENS, Prose
from ..pipeline.pages import ChapterRenderer

QTI = "http://www.imsglobal.org/xsd/imsqti_v2p1"
MATHML = "http://www.w3.org/1998/Math/MathML"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
CP = "http://www.imsglobal.org/xsd/imscp_v1p1"
QTI_XSD = "http://www.imsglobal.org/xsd/qti/qtiv2p1/imsqti_v2p1p1.xsd"
MANIFEST = "imsmanifest.xml"
# the elements of a chapter's prose that QTI 2.1's XHTML subset has too; any other is a span
QTI_INLINE = {"a", "abbr", "br", "code", "em", "kbd", "small", "strong", "sub", "sup", "span"}
QTI_BLOCK = {"p", "ul", "ol", "li", "pre", "blockquote", "div"}  # in an explanation's feedback
GIFT_SPECIAL = re.compile(r"([\\~=#{}:])")


class QuestionsError(Exception):
    """Something the teacher asked for cannot be done: an unknown chapter, a bad base URL."""


@dataclass
class Text:
    """One piece of a question as HTML (maths as MathML) and as plain text (maths as TeX)."""

    html: str
    plain: str
    tex: list = field(default_factory=list)  # each formula's TeX, in order

    def tex_html(self, page=None):
        """The HTML with each formula as its TeX source between \\( and \\); links made
        absolute against PAGE (the chapter's address), or dropped without one."""
        return _Rewriter(self.html, self.tex, html_out=True, page=page).out


@dataclass
class Choice:
    text: Text
    correct: bool
    feedback: Text


@dataclass
class Question:
    chapter: str  # slug
    title: str  # the chapter's title
    block: str  # the page's id of the block: check-1, guess-2
    kind: str  # "check" or "guess"
    path: str  # chapters/NAME.md
    line: int
    prompt: Text
    choices: list
    general: Text | None = None  # a guess's explanation, shown whatever the guess
    graded: bool = True  # False for a guess naming no answer: every choice counts
    figure: str | None = None  # the id of the figure the question follows, if any

    @property
    def id(self):
        """The question's id, as SCORM's interactions give it: SLUG.BLOCK."""
        return f"{self.chapter}.{self.block}"


# --- reading the chapters' questions --------------------------------------------------------


def collect(root, only=None):
    """Every question of the readers' path (or of the chapters whose slugs ONLY lists, in the
    path or not), in reading order."""
    root = Path(root)
    chapters = load_chapters(root)
    slugs = [c.meta["slug"] for c in chapters]
    for slug in only or ():
        if slug not in slugs:
            raise QuestionsError(
                f"no chapter '{slug}'{suggest(slug, slugs)}; the chapters are {', '.join(slugs)}"
            )
    chosen = (
        reading_path(chapters)[0] if not only else [c for c in chapters if c.meta["slug"] in only]
    )
    env = environment(root)
    return [q for ch in chosen for q in chapter_questions(ch, env, root)]


def chapter_questions(ch, env, root):
    """A chapter's questions, in page order, numbered as its page numbers them: its check and
    guess blocks rendered by the page's renderer (no figure is drawn, no cell run)."""
    renderer = ChapterRenderer(ch, env, root)
    figure, out = None, []
    for b in renderer.walk(ch.body):
        if b.name == "figure":
            figure = b.args
        if b.name not in ("check", "guess"):
            continue
        getattr(renderer, "_" + b.name)(b)
        q = renderer.questions[-1]
        made = _check(ch, q, renderer) if q["kind"] == "check" else _guess(ch, q)
        if made:
            made.figure = figure
            out.append(made)
    return out


def _tex_of(rel, source, line):
    """The TeX of each formula of SOURCE, in order, as the renderer reads them."""
    held = Prose(rel)._values(source, line)
    return [
        (m.group("block") or m.group("inline")).strip()
        for m in TOKENS.finditer(held)
        if m.group("block") or m.group("inline")
    ]


def _piece(ch, html_text, source, line):
    tex = _tex_of(ch.path, source, line)
    return Text(str(html_text), _Rewriter(str(html_text), tex).out.strip(), tex)


def _base(ch, q):
    return {
        "chapter": ch.meta["slug"],
        "title": ch.meta["title"],
        "block": q["id"],
        "kind": q["kind"],
        "path": ch.path,
        "line": q["block"].line,
        "prompt": _piece(ch, q["question"], q["block"].args, q["block"].line),
    }


def _check(ch, q, renderer):
    choices = []
    for o in q["options"]:
        feedback = _piece(ch, feedback_html(o, renderer.macros), o["feedback_source"], o["line"])
        choices.append(
            Choice(_piece(ch, o["text"], o["source"], o["line"]), o["correct"], feedback)
        )
    return Question(**_base(ch, q), choices=choices)


def _guess(ch, q):
    if not q["choices"]:
        return None
    b, answer = q["block"], q["answer"]
    line = next(n for n, t in b.lines if t.strip().startswith("- "))
    texts = [_piece(ch, c["html"], c["source"], line + i) for i, c in enumerate(q["choices"])]
    choices = []
    for i, text in enumerate(texts):
        if answer is None:
            feedback = Text("", "")
        elif i == answer:
            feedback = Text(html.escape(GUESS_RIGHT), GUESS_RIGHT)
        else:
            told, right = GUESS_TOLD.format(""), texts[answer]
            feedback = Text(html.escape(told) + right.html, told + right.plain, right.tex)
        choices.append(Choice(text, answer is None or i == answer, feedback))
    split = next(i for i, (_, t) in enumerate(b.lines) if t.strip() == "---")
    body = b.lines[split + 1 :]
    general = _piece(ch, q["explanation"], "\n".join(t for _, t in body), body[0][0])
    return Question(**_base(ch, q), choices=choices, general=general, graded=answer is not None)


class _Rewriter(HTMLParser):
    """HTML -> plain text (HTML_OUT false) or HTML (true), each <math> replaced by the next TeX
    of TEX between \\( and \\)."""

    def __init__(self, text, tex, html_out=False, page=None):
        super().__init__(convert_charrefs=True)
        self.tex, self.html_out, self.depth, self.parts = list(tex), html_out, 0, []
        self.page, self.links = page, []  # whether each open <a> was kept
        self.feed(text)
        self.close()
        self.out = "".join(self.parts)

    def handle_starttag(self, tag, attrs):
        if tag == "math":
            if self.depth == 0:
                formula = self.tex.pop(0) if self.tex else ""
                wrapped = f"\\({formula}\\)"
                self.parts.append(html.escape(wrapped, quote=False) if self.html_out else wrapped)
            self.depth += 1
        elif self.html_out and not self.depth and tag == "a":
            href = absolute(dict(attrs).get("href") or "", self.page)
            self.links.append(href is not None)
            if href is not None:
                self.parts.append(f'<a href="{html.escape(href)}">')
        elif self.html_out and not self.depth:
            self.parts.append(self.get_starttag_text())

    def handle_startendtag(self, tag, attrs):
        if self.html_out and not self.depth:
            self.parts.append(self.get_starttag_text())

    def handle_endtag(self, tag):
        if tag == "math":
            self.depth -= 1
        elif self.html_out and not self.depth and (tag != "a" or (self.links and self.links.pop())):
            self.parts.append(f"</{tag}>")

    def handle_data(self, data):
        if self.depth:
            return
        if self.html_out:
            self.parts.append(html.escape(data, quote=False))
        else:
            self.parts.append(re.sub(r"\s+", " ", data))


# --- links back to the site -----------------------------------------------------------------


def base_url(url):
    """The site's address as the teacher gives it, ending in '/'; only http and https."""
    if url is None:
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise QuestionsError(
            f"--base-url {url!r} is not the address of the site: give the http(s) address its "
            "home page is served at, e.g. --base-url https://school.example/many-heads/"
        )
    return url if url.endswith("/") else url + "/"


def absolute(href, page):
    """HREF, a link of a chapter's page, as an address outside the site: as it is with a scheme
    (https:, mailto:), else against PAGE, the chapter's address; None without PAGE."""
    if urlsplit(href).scheme:
        return href
    return None if page is None else urljoin(page, href)


def page_url(q, base):
    """The address of Q's chapter under BASE, or None."""
    return f"{base}{q.chapter}.html" if base else None


def links(q, base):
    """[(what, URL)]: the question on its page, and the figure it follows."""
    if not base:
        return []
    out = [("The question on the page", f"{base}{q.chapter}.html#{q.block}")]
    if q.figure:
        out.append(("The figure", f"{base}{q.chapter}.html#{q.figure}"))
    return out


# --- GIFT -----------------------------------------------------------------------------------


def category(q):
    """The quiz bank's category of Q's chapter, under the course's: its title on one line, a /
    (which would open a subcategory) written as -."""
    title = re.sub(r"\s+", " ", q.title).strip().replace("/", "-")
    return f"$course$/Many Heads/{title}"


def gift_escape(text):
    """Plain text as GIFT reads it: its special characters ~ = # { } : and \\ escaped, on one
    line."""
    return GIFT_SPECIAL.sub(r"\\\1", re.sub(r"\s+", " ", text).strip())


def gift(questions, base=None):
    """The questions as Moodle GIFT, plain text, one category per chapter."""
    out, chapter = [], None
    for q in questions:
        if q.chapter != chapter:
            chapter = q.chapter
            out.append(f"$CATEGORY: {category(q)}\n")
        stem = q.prompt.plain + "".join(f" ({what}: {url})" for what, url in links(q, base))
        lines = [f"// {q.id}", f"::{gift_escape(q.id)}::[plain]{gift_escape(stem)} {{"]
        for c in q.choices:
            mark = "=" if c.correct else "~"
            if not q.graded:
                mark = "~%100%"
            said = f" #{gift_escape(c.feedback.plain)}" if c.feedback.plain else ""
            lines.append(f"{mark}{gift_escape(c.text.plain)}{said}")
        if q.general:
            lines.append(f"####{gift_escape(q.general.plain)}")
        lines.append("}\n")
        out.append("\n".join(lines))
    return "\n".join(out)


# --- Moodle XML -----------------------------------------------------------------------------


def _moodle_text(parent, tag, content, fmt="html"):
    el = ET.SubElement(parent, tag, {"format": fmt} if fmt else {})
    ET.SubElement(el, "text").text = content
    return el


def _link_html(q, base):
    found = links(q, base)
    if not found:
        return ""
    items = " · ".join(
        f'<a href="{html.escape(url)}">{html.escape(what)}</a>' for what, url in found
    )
    return f"<p>{items}</p>"


def moodle_xml(questions, base=None):
    """The questions as Moodle XML: a category per chapter, then a single-answer multichoice
    question per block, as Moodle's importer (question/format/xml) reads it."""
    quiz = ET.Element("quiz")
    chapter = None
    for q in questions:
        if q.chapter != chapter:
            chapter = q.chapter
            cat = ET.SubElement(quiz, "question", type="category")
            _moodle_text(cat, "category", category(q), fmt=None)
        el = ET.SubElement(quiz, "question", type="multichoice")
        _moodle_text(el, "name", q.id, fmt=None)
        page = page_url(q, base)
        _moodle_text(el, "questiontext", f"<p>{q.prompt.tex_html(page)}</p>{_link_html(q, base)}")
        _moodle_text(el, "generalfeedback", q.general.tex_html(page) if q.general else "")
        ET.SubElement(el, "defaultgrade").text = "1"
        ET.SubElement(el, "penalty").text = "0"
        ET.SubElement(el, "hidden").text = "0"
        ET.SubElement(el, "idnumber").text = q.id
        ET.SubElement(el, "single").text = "true"
        ET.SubElement(el, "shuffleanswers").text = "false"  # the page's order: no shuffling
        ET.SubElement(el, "answernumbering").text = "abc"
        ET.SubElement(el, "showstandardinstruction").text = "0"
        for tag in ("correctfeedback", "partiallycorrectfeedback", "incorrectfeedback"):
            _moodle_text(el, tag, "")
        for c in q.choices:
            answer = ET.SubElement(
                el, "answer", fraction="100" if c.correct else "0", format="html"
            )
            ET.SubElement(answer, "text").text = c.text.tex_html(page)
            _moodle_text(answer, "feedback", c.feedback.tex_html(page))
    ET.indent(quiz)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(quiz, encoding="unicode")


# --- QTI 2.1 --------------------------------------------------------------------------------


def qti_id(q):
    """The question's id as a QTI identifier (an XML name: a letter first)."""
    return q.id if re.match(r"[A-Za-z_]", q.id) else f"q-{q.id}"


class _QtiBuilder(HTMLParser):
    """A chapter's HTML -> QTI 2.1 content appended to PARENT: XHTML elements in QTI's
    namespace (those QTI lacks as <span>), MathML in its own, links made absolute against PAGE
    (the chapter's address; without one, a link into the site keeps its words only)."""

    def __init__(self, parent, text, page):
        super().__init__(convert_charrefs=True)
        self.stack, self.page = [parent], page
        self.feed(text)
        self.close()

    def _add(self, tag, attrs):
        top = self.stack[-1]
        in_math = top.tag.startswith(f"{{{MATHML}}}")
        if tag == "math" or in_math:
            kept = {k: v or "" for k, v in attrs if k != "xmlns"}
            el = ET.SubElement(top, f"{{{MATHML}}}{tag}", kept)
        else:
            name = tag if tag in QTI_INLINE or tag in QTI_BLOCK else "span"
            keep = {}
            if name == "a":
                href = absolute(dict(attrs).get("href") or "", self.page)
                if href is None:
                    name = "span"
                else:
                    keep["href"] = href
            if name == "abbr" and dict(attrs).get("title"):
                keep["title"] = dict(attrs)["title"]
            el = ET.SubElement(top, f"{{{QTI}}}{name}", keep)
        return el

    def handle_starttag(self, tag, attrs):
        el = self._add(tag, attrs)
        if tag not in ("br", "img", "hr", "wbr"):
            self.stack.append(el)

    def handle_startendtag(self, tag, attrs):
        self._add(tag, attrs)

    def handle_endtag(self, tag):
        if len(self.stack) > 1 and self.stack[-1].tag.rsplit("}", 1)[-1] in (tag, "span"):
            self.stack.pop()

    def handle_data(self, data):
        top = self.stack[-1]
        if len(top):
            top[-1].tail = (top[-1].tail or "") + data
        else:
            top.text = (top.text or "") + data


def _qti(parent, tag, **attrs):
    return ET.SubElement(parent, f"{{{QTI}}}{tag}", attrs)


def qti_item(q, base=None):
    """One question as a QTI 2.1 assessmentItem (XML text): a single-choice choiceInteraction
    scored by the rules of a standard template (match_correct; map_response for a guess where
    any choice counts), with each choice's feedback as modal feedback keyed by the choice."""
    ET.register_namespace("", QTI)
    ET.register_namespace("m", MATHML)
    ET.register_namespace("xsi", XSI)
    item = ET.Element(
        f"{{{QTI}}}assessmentItem",
        {
            f"{{{XSI}}}schemaLocation": f"{QTI} {QTI_XSD}",
            "identifier": qti_id(q),
            "title": f"{q.title}: {q.prompt.plain}"[:200],
            "adaptive": "false",
            "timeDependent": "false",
        },
    )
    ids = [f"choice-{i}" for i in range(len(q.choices))]
    response = _qti(
        item, "responseDeclaration", identifier="RESPONSE", cardinality="single",
        baseType="identifier",
    )  # fmt: skip
    if q.graded:
        correct = _qti(response, "correctResponse")
        for i, c in zip(ids, q.choices, strict=True):
            if c.correct:
                _qti(correct, "value").text = i
    else:
        mapping = _qti(response, "mapping", defaultValue="0")
        for i in ids:
            _qti(mapping, "mapEntry", mapKey=i, mappedValue="1")
    score = _qti(
        item, "outcomeDeclaration", identifier="SCORE", cardinality="single", baseType="float"
    )
    _qti(_qti(score, "defaultValue"), "value").text = "0"
    _qti(
        item,
        "outcomeDeclaration",
        identifier="FEEDBACK",
        cardinality="single",
        baseType="identifier",
    )
    body = _qti(item, "itemBody")
    interaction = _qti(
        body, "choiceInteraction", responseIdentifier="RESPONSE", shuffle="false",
        maxChoices="1", minChoices="1",
    )  # fmt: skip
    page = page_url(q, base)
    _QtiBuilder(_qti(interaction, "prompt"), q.prompt.html, page)
    for i, c in zip(ids, q.choices, strict=True):
        _QtiBuilder(
            _qti(interaction, "simpleChoice", identifier=i, fixed="true"), c.text.html, page
        )
    found = links(q, base)
    if found:
        p = _qti(body, "p")
        for k, (what, url) in enumerate(found):
            a = _qti(p, "a", href=url)
            a.text = what
            if k < len(found) - 1:
                a.tail = " · "
    _template_rules(_qti(item, "responseProcessing"), q.graded)
    for i, c in zip(ids, q.choices, strict=True):
        fb = _qti(
            item, "modalFeedback", outcomeIdentifier="FEEDBACK", showHide="show", identifier=i
        )
        _QtiBuilder(_qti(fb, "p"), c.feedback.html, page)
        if q.general:
            _QtiBuilder(_qti(fb, "div"), q.general.html, page)
    ET.indent(item)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(item, encoding="unicode")


def _template_rules(processing, graded):
    """The standard template's rules written out, then FEEDBACK set to the choice, for its
    feedback. No template is named: a player that knows it (Citolab's qti-components does) runs
    the template's rules in place of the item's, and would show no feedback."""
    cond = _qti(processing, "responseCondition")
    first = _qti(cond, "responseIf")
    if graded:
        match = _qti(first, "match")
        _qti(match, "variable", identifier="RESPONSE")
        _qti(match, "correct", identifier="RESPONSE")
        _qti(
            _qti(first, "setOutcomeValue", identifier="SCORE"), "baseValue", baseType="float"
        ).text = "1"
        other = _qti(cond, "responseElse")
        _qti(
            _qti(other, "setOutcomeValue", identifier="SCORE"), "baseValue", baseType="float"
        ).text = "0"
    else:
        _qti(_qti(first, "isNull"), "variable", identifier="RESPONSE")
        _qti(
            _qti(first, "setOutcomeValue", identifier="SCORE"), "baseValue", baseType="float"
        ).text = "0"
        other = _qti(cond, "responseElse")
        _qti(
            _qti(other, "setOutcomeValue", identifier="SCORE"), "mapResponse", identifier="RESPONSE"
        )
    _qti(
        _qti(processing, "setOutcomeValue", identifier="FEEDBACK"),
        "variable",
        identifier="RESPONSE",
    )


def qti_manifest(questions):
    """imsmanifest.xml of the package: every item a resource of type imsqti_item_xmlv2p1."""
    ET.register_namespace("", CP)
    ET.register_namespace("xsi", XSI)
    manifest = ET.Element(
        f"{{{CP}}}manifest",
        {
            "identifier": "manyheads-questions",
            f"{{{XSI}}}schemaLocation": (
                f"{CP} http://www.imsglobal.org/xsd/qti/qtiv2p1/qtiv2p1_imscpv1p2_v1p0.xsd"
            ),
        },
    )
    meta = ET.SubElement(manifest, f"{{{CP}}}metadata")
    ET.SubElement(meta, f"{{{CP}}}schema").text = "QTIv2.1 Package"
    ET.SubElement(meta, f"{{{CP}}}schemaversion").text = "1.0.0"
    ET.SubElement(manifest, f"{{{CP}}}organizations")
    resources = ET.SubElement(manifest, f"{{{CP}}}resources")
    for q in questions:
        href = item_path(q)
        res = ET.SubElement(
            resources,
            f"{{{CP}}}resource",
            identifier=f"res-{qti_id(q)}",
            type="imsqti_item_xmlv2p1",
            href=href,
        )
        ET.SubElement(res, f"{{{CP}}}file", href=href)
    ET.indent(manifest)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(manifest, encoding="unicode")


def item_path(q):
    return posixpath.join("items", f"{qti_id(q)}.xml")


def write_qti(questions, target, base=None):
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(MANIFEST, qti_manifest(questions))
        for q in questions:
            z.writestr(item_path(q), qti_item(q, base))
    return target


# --- the command ------------------------------------------------------------------------------


def write_all(root, dest, only=None, base=None):
    """Write NAME.gift, NAME.xml and NAME-qti21.zip into DEST (NAME: manyheads-questions, or
    manyheads-SLUG-questions for one chapter); -> (their paths, the questions)."""
    base = base_url(base)
    questions = collect(root, only)
    name = f"manyheads-{only[0]}-questions" if only and len(only) == 1 else "manyheads-questions"
    dest = Path(dest)
    paths = [dest / f"{name}.gift", dest / f"{name}.xml", dest / f"{name}-qti21.zip"]
    paths[0].write_text(gift(questions, base), "utf-8")
    paths[1].write_text(moodle_xml(questions, base), "utf-8")
    write_qti(questions, paths[2], base)
    return paths, questions
