"""`python build.py scorm --cmi5`: every chapter as a cmi5 course package, beside SCORM's.

A cmi5 package is a zip with `cmi5.xml` (the course structure) at its root and the files the
course needs: the same chapter pages, static files, Python with each chapter's own data and
Pyodide as a SCORM package carries (sitebuild/lms/scorm.py), built with `lms="cmi5"`, so the page
loads static/cmi5.js, which reports through the pinned @xapi/cmi5 client to the LRS the LMS
names in the launch address. One assignable unit (AU) per chapter, in reading order:

- launchMethod "AnyWindow": the page works in a frame or a window of its own, and never needs
  to navigate away (the LMS's returnURL is not followed);
- moveOn "CompletedOrPassed": the AU is done once the page sends "completed" (every "Check
  yourself" and exercise answered, as SCORM's "completed") or "passed";
- masteryScore, if the teacher gives one (`--mastery`, 0 to 1): the page sends "passed" when
  the score, SCORM's (the share right at the first try), reaches it, else "failed". Without one
  the page sends the score with "completed" only, as SCORM does.

The page's policy allows requests to its own origin, the LMS's, where an LMS serves the AU and
its LRS alike; `--lrs ORIGIN` adds exactly one origin for an LRS elsewhere (docs/security.md).
The AU ids are IRIs stable across builds (urn:x-manyheads:au:SLUG), so an LMS reading a new
build's package matches its AUs to the old one's.
"""

import re
import tempfile
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

from ..pipeline import archive
from ..pipeline.build import build
from .needs import data_paths
from .scorm import PackageError, _check_page, own_data, selection, shared_files

NS = "https://w3id.org/xapi/profiles/cmi5/v1/CourseStructure.xsd"
COURSE = "cmi5.xml"
LAUNCH = "AnyWindow"
MOVE_ON = "CompletedOrPassed"
MOVE_ONS = ("Passed", "Completed", "CompletedAndPassed", "CompletedOrPassed", "NotApplicable")


def package_name(name):
    """manyheads-NAME-cmi5.zip"""
    return f"manyheads-{name}-cmi5.zip"


def au_id(slug):
    return f"urn:x-manyheads:au:{slug}"


def lrs_origin(url):
    """The origin of URL (https://lrs.example/xapi/ -> https://lrs.example); PackageError for
    anything but an http(s) origin."""
    parts = urlsplit(url or "")
    if parts.scheme not in ("https", "http") or not re.fullmatch(r"[\w.-]+(:\d+)?", parts.netloc):
        raise PackageError(f"--lrs {url!r} is not a web address such as https://lrs.example.org")
    return f"{parts.scheme}://{parts.netloc.lower()}"


def write_packages(root, dest, together=False, only=None, mastery=None, lrs=None, reuse=None):
    """Build the chapters for cmi5 and write one package per chapter (or, TOGETHER, one course
    of them all) into DEST, each checked before it is kept; ONLY, MASTERY (0-1) and LRS (an
    origin) as the module says, REUSE as build's. Returns the packages' paths."""
    if mastery is not None and not 0 <= mastery <= 1:
        raise PackageError(f"--mastery {mastery} is not a score from 0 to 1, such as 0.8")
    lrs = lrs and lrs_origin(lrs)
    root, dest = Path(root), Path(dest)
    loaded, every, chapters, groups = selection(root, only, together)
    written = []
    with tempfile.TemporaryDirectory(prefix="cmi5.") as tmp:
        built = None if only is None else [ch["slug"] for ch in chapters]
        site = build(root, Path(tmp) / "site", lms="cmi5", only=built, lrs=lrs, reuse=reuse)
        needs = {ch.meta["slug"]: data_paths(ch, root) for ch in loaded}
        shared = shared_files(site, every)
        for name, members in groups:
            target = dest / package_name(name)
            needed = {p for ch in members for p in needs[ch["slug"]]}
            mine = own_data(shared, needed, {ch["slug"] for ch in members})
            write_package(site, members, mine, target, name, mastery)
            problems = check_package(target)
            if problems:
                target.unlink()
                raise PackageError(f"{target.name}: " + "; ".join(problems))
            written.append(target)
    return written


def write_package(site, chapters, shared, target, name, mastery=None):
    """One zip: cmi5.xml first, then the chapters' pages and the shared files."""
    tmp = target.with_suffix(".tmp")
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(COURSE, course_xml(chapters, name, mastery))
        for path in [f"{ch['slug']}.html" for ch in chapters] + shared:
            archive.add(z, site / path, path)
    tmp.replace(target)
    return target


def _text(parent, tag, text):
    el = ET.SubElement(parent, f"{{{NS}}}{tag}")
    ET.SubElement(el, f"{{{NS}}}langstring", lang="en").text = text
    return el


def course_xml(chapters, name, mastery=None):
    """cmi5.xml: the course, then one AU per chapter, in this order."""
    ET.register_namespace("", NS)
    root = ET.Element(f"{{{NS}}}courseStructure")
    course = ET.SubElement(root, f"{{{NS}}}course", id=f"urn:x-manyheads:course:{name}")
    _text(course, "title", chapters[0]["title"] if len(chapters) == 1 else "Many Heads")
    _text(course, "description", "How transformers attend: multi-head attention, explained.")
    for ch in chapters:
        attrs = {"id": au_id(ch["slug"]), "moveOn": MOVE_ON, "launchMethod": LAUNCH}
        if mastery is not None:
            attrs["masteryScore"] = f"{mastery:g}"
        au = ET.SubElement(root, f"{{{NS}}}au", attrs)
        _text(au, "title", ch["title"])
        _text(au, "description", ch.get("summary") or ch["title"])
        ET.SubElement(au, f"{{{NS}}}url").text = f"{ch['slug']}.html"
    ET.indent(root, space=" ")
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def check_package(path):
    """What is wrong with the cmi5 package at PATH, in words; [] when an LMS can import it:
    cmi5.xml at the root, well-formed, in cmi5's namespace, with a course that has an id and a
    title, and AUs each with a unique IRI id, a title, a description, a relative launch URL
    to a page of the zip, the moveOn and launchMethod cmi5 knows and a masteryScore from 0 to
    1; and pages that load only files of the zip, by relative URLs."""
    with zipfile.ZipFile(path) as z:
        names = {n for n in z.namelist() if not n.endswith("/")}
        if COURSE not in names:
            return [f"no {COURSE} at the root of the zip"]
        try:
            root = ET.fromstring(z.read(COURSE))
        except ET.ParseError as e:
            return [f"{COURSE} is not well-formed XML: {e}"]
        problems = _check_course(root, names)
        for name in sorted(n for n in names if n.endswith(".html")):
            problems += _check_page(name, z.read(name).decode("utf-8"), names)
    return problems


def _check_course(root, names):
    if root.tag != f"{{{NS}}}courseStructure":
        return [f"the root element is {root.tag}, not a cmi5 courseStructure"]
    problems = []
    course = root.find(f"{{{NS}}}course")
    if course is None or not course.get("id") or course.find(f"{{{NS}}}title") is None:
        problems.append("the course has no id or no title")
    aus = list(root.iter(f"{{{NS}}}au"))
    if not aus:
        problems.append("the course has no AU")
    ids = [au.get("id") for au in aus]
    for dup in sorted({i for i in ids if i and ids.count(i) > 1}):
        problems.append(f"AU id {dup!r} is used twice")
    for au in aus:
        who = au.get("id") or "an AU"
        if not re.fullmatch(r"[a-z][a-z0-9+.-]*:\S+", au.get("id") or "", re.I):
            problems.append(f"{who}: its id is not an IRI")
        for tag in ("title", "description"):
            if au.find(f"{{{NS}}}{tag}/{{{NS}}}langstring") is None:
                problems.append(f"{who} has no {tag}")
        url = (au.findtext(f"{{{NS}}}url") or "").strip()
        if not url or "://" in url or url.startswith("/") or url.split("?")[0] not in names:
            problems.append(f"{who}: its url {url!r} is not a page of the zip")
        if au.get("moveOn") not in MOVE_ONS:
            problems.append(f"{who}: moveOn {au.get('moveOn')!r} is not one cmi5 knows")
        if au.get("launchMethod") not in ("AnyWindow", "OwnWindow"):
            problems.append(f"{who}: launchMethod {au.get('launchMethod')!r} is not one cmi5 knows")
        score = au.get("masteryScore")
        if score is not None and not (re.fullmatch(r"[01]?(\.\d+)?", score) and float(score) <= 1):
            problems.append(f"{who}: masteryScore {score!r} is not a decimal from 0 to 1")
    return problems
