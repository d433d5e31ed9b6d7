"""`python build.py scorm`: every chapter as a SCORM package that an LMS imports and grades.

A package is a zip with `imsmanifest.xml` at its root and everything the chapter needs inside:
the chapter's page (built for an LMS: no home page, embeds, service worker or links between
chapters; see `build(..., lms=VERSION)`), the static files, the shipped Python with the data
that chapter's Python reads (sitebuild/lms/needs.py), and Pyodide, all under relative URLs and
under the site's own security policy. The page's templates/static/lms.js finds the LMS's API
and reports to it.

SCORM 1.2 (`manyheads-CHAPTER-scorm12.zip`) and SCORM 2004 4th edition
(`manyheads-CHAPTER-scorm2004.zip`) are written the same way; with `together`, one package
(`manyheads-all-scorm12.zip`) holds every chapter as its own SCO, in reading order. Each SCO is
a resource holding its page and depending on one shared asset resource with everything else,
so the manifest lists every file of the zip once. `check_package` reads a written zip back and
lists what an LMS would refuse; the build runs it on every package it writes.
"""

import posixpath
import re
import tempfile
import xml.etree.ElementTree as ET
import zipfile
from html.parser import HTMLParser
from pathlib import Path

from ..pipeline import archive
from ..pipeline.build import build, load_chapters
from ..pipeline.chapters import APPENDIX_ORDER, suggest
from .needs import data_paths

XSI = "http://www.w3.org/2001/XMLSchema-instance"
IMSSS = "http://www.imsglobal.org/xsd/imsss"
EDITIONS = {
    "1.2": {
        "tag": "scorm12",
        "cp": "http://www.imsproject.org/xsd/imscp_rootv1p1p2",
        "adlcp": "http://www.adlnet.org/xsd/adlcp_rootv1p2",
        "schemaversion": "1.2",
        "scormtype": "scormtype",
        "locations": (
            "http://www.imsproject.org/xsd/imscp_rootv1p1p2 imscp_rootv1p1p2.xsd "
            "http://www.imsglobal.org/xsd/imsmd_rootv1p2p1 imsmd_rootv1p2p1.xsd "
            "http://www.adlnet.org/xsd/adlcp_rootv1p2 adlcp_rootv1p2.xsd"
        ),
    },
    "2004": {
        "tag": "scorm2004",
        "cp": "http://www.imsglobal.org/xsd/imscp_v1p1",
        "adlcp": "http://www.adlnet.org/xsd/adlcp_v1p3",
        "schemaversion": "2004 4th Edition",
        "scormtype": "scormType",
        "locations": (
            "http://www.imsglobal.org/xsd/imscp_v1p1 imscp_v1p1.xsd "
            "http://www.adlnet.org/xsd/adlcp_v1p3 adlcp_v1p3.xsd "
            "http://www.adlnet.org/xsd/adlseq_v1p3 adlseq_v1p3.xsd "
            "http://www.adlnet.org/xsd/adlnav_v1p3 adlnav_v1p3.xsd "
            "http://www.imsglobal.org/xsd/imsss imsss_v1p0.xsd"
        ),
    },
}
MANIFEST = "imsmanifest.xml"
SHARED = "shared"


class PackageError(Exception):
    """A package the build wrote breaks a rule an LMS holds it to."""


def package_name(name, version):
    """manyheads-NAME-scorm12.zip / manyheads-NAME-scorm2004.zip"""
    return f"manyheads-{name}-{EDITIONS[version]['tag']}.zip"


def write_packages(root, dest, version="1.2", together=False, only=None, reuse=None):
    """Build the chapters for an LMS and write one package per chapter (or, TOGETHER, one for
    them all) into DEST; each is checked before it is kept. The chapters are those of the
    readers' path (no appendix: the author guide is for authors); ONLY, a list of slugs, names
    the chapters to package instead; REUSE, a folder of chapters rendered before, as build's.
    Returns the packages' paths."""
    if version not in EDITIONS:
        raise ValueError(f"SCORM version must be one of {', '.join(EDITIONS)}, got {version!r}")
    root, dest = Path(root), Path(dest)
    loaded, every, chapters, groups = selection(root, only, together)
    written = []
    with tempfile.TemporaryDirectory(prefix="scorm.") as tmp:
        built = None if only is None else [ch["slug"] for ch in chapters]
        site = build(root, Path(tmp) / "site", lms=version, only=built, reuse=reuse)
        # after the build, which records what each figure read (sitebuild/authoring/browser.py)
        needs = {ch.meta["slug"]: data_paths(ch, root) for ch in loaded}
        shared = shared_files(site, every)
        for name, members in groups:
            target = dest / package_name(name, version)
            needed = {p for ch in members for p in needs[ch["slug"]]}
            mine = own_data(shared, needed, {ch["slug"] for ch in members})
            write_package(site, members, mine, version, target, name)
            problems = check_package(target, version)
            if problems:
                target.unlink()
                raise PackageError(f"{target.name}: " + "; ".join(problems))
            written.append(target)
    return written


def selection(root, only=None, together=False):
    """What a run packages, for SCORM and cmi5 alike: (the chapters of ROOT loaded, every
    chapter's front matter, those chosen (ONLY's slugs, each checked, or the readers' path),
    [(package name, its chapters)]: one package each, or TOGETHER one "all")."""
    loaded = load_chapters(root)
    every = [ch.meta for ch in loaded]
    slugs = [ch["slug"] for ch in every]
    for slug in only or ():
        if slug not in slugs:
            raise PackageError(
                f"no chapter '{slug}'{suggest(slug, slugs)}; the chapters are {', '.join(slugs)}"
            )
    chapters = chosen(every, only)
    groups = [("all", chapters)] if together else [(ch["slug"], [ch]) for ch in chapters]
    return loaded, every, chapters, groups


def chosen(every, only=None):
    """The chapters (front matter) of EVERY to package: the readers' path, or those ONLY names;
    an appendix (the author guide) only when named."""
    if only is None:
        return [ch for ch in every if ch["order"] < APPENDIX_ORDER]
    return [ch for ch in every if ch["slug"] in only]


def shared_files(site, chapters):
    """Every file of the LMS build but the chapters' pages, as zip paths: what each SCO needs."""
    pages = {f"{ch['slug']}.html" for ch in chapters}
    files = (p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file())
    return sorted(f for f in files if f not in pages)


def own_data(shared, needed, slugs):
    """SHARED without other chapters' data: the data files (py/data/…) that are not NEEDED
    (sitebuild/lms/needs.py: a folder, "smollm2", all of whose files are; or one file,
    "smollm2/live.json"), and the build's answers (prerendered/SLUG.FIGURE.HASH.json) of chapters
    not in SLUGS."""
    kept = []
    for f in shared:
        answers = re.fullmatch(r"prerendered/([^.]+)\.[^.]+\.[0-9a-f]+\.json", f)
        if answers and answers[1] not in slugs:
            continue
        # its name in toymodels/data/, less the content hash the site's copy carries
        path = re.sub(r"\.[0-9a-f]{12}(\.[^./]+)$", r"\1", f.removeprefix("py/data/"))
        if f.startswith("py/data/") and path not in needed and path.split("/")[0] not in needed:
            continue
        kept.append(f)
    return kept


def write_package(site, chapters, shared, version, target, name):
    """One zip: the manifest first, then the chapters' pages and the shared files."""
    manifest = manifest_xml(chapters, shared, version, name)
    tmp = target.with_suffix(".tmp")
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(MANIFEST, manifest)
        for path in [f"{ch['slug']}.html" for ch in chapters] + shared:
            archive.add(z, site / path, path)
    tmp.replace(target)
    return target


def _el(parent, tag, text=None, **attrs):
    el = ET.SubElement(parent, tag, {k: v for k, v in attrs.items() if v is not None})
    el.text = text
    return el


def manifest_xml(chapters, shared, version, name):
    """imsmanifest.xml for CHAPTERS (one SCO each, in this order) over the SHARED files."""
    ed = EDITIONS[version]
    cp, adlcp = ed["cp"], ed["adlcp"]
    ET.register_namespace("", cp)
    ET.register_namespace("adlcp", adlcp)
    ET.register_namespace("xsi", XSI)
    ET.register_namespace("imsss", IMSSS)
    root = ET.Element(
        f"{{{cp}}}manifest",
        {"identifier": f"manyheads-{name}-{ed['tag']}", "version": "1.0"},
    )
    root.set(f"{{{XSI}}}schemaLocation", ed["locations"])
    meta = _el(root, f"{{{cp}}}metadata")
    _el(meta, f"{{{cp}}}schema", "ADL SCORM")
    _el(meta, f"{{{cp}}}schemaversion", ed["schemaversion"])
    orgs = _el(root, f"{{{cp}}}organizations", default="manyheads")
    org = _el(orgs, f"{{{cp}}}organization", identifier="manyheads")
    _el(org, f"{{{cp}}}title", chapters[0]["title"] if len(chapters) == 1 else "Many Heads")
    for ch in chapters:
        item = _el(
            org,
            f"{{{cp}}}item",
            identifier=f"item-{ch['slug']}",
            identifierref=f"sco-{ch['slug']}",
            isvisible="true",
        )
        _el(item, f"{{{cp}}}title", ch["title"])
    if version == "2004" and len(chapters) > 1:
        # the learner may pick any chapter and go on to the next one, in reading order
        seq = _el(org, f"{{{IMSSS}}}sequencing")
        _el(seq, f"{{{IMSSS}}}controlMode", choice="true", flow="true")
    resources = _el(root, f"{{{cp}}}resources")
    for ch in chapters:
        page = f"{ch['slug']}.html"
        res = _el(
            resources,
            f"{{{cp}}}resource",
            identifier=f"sco-{ch['slug']}",
            type="webcontent",
            href=page,
        )
        res.set(f"{{{adlcp}}}{ed['scormtype']}", "sco")
        _el(res, f"{{{cp}}}file", href=page)
        _el(res, f"{{{cp}}}dependency", identifierref=SHARED)
    res = _el(resources, f"{{{cp}}}resource", identifier=SHARED, type="webcontent")
    res.set(f"{{{adlcp}}}{ed['scormtype']}", "asset")
    for path in shared:
        _el(res, f"{{{cp}}}file", href=path)
    ET.indent(root, space=" ")
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def check_package(path, version=None):
    """What is wrong with the package at PATH, in words; [] when an LMS can import it: a
    well-formed manifest at the root, with the namespaces, schema and schema version of its
    edition (VERSION, if given), an organization whose items name SCO resources, a launch page
    for each SCO, every file it lists in the zip and every file of the zip listed, and pages
    that load only files of the zip, by relative URLs."""
    with zipfile.ZipFile(path) as z:
        names = {n for n in z.namelist() if not n.endswith("/")}
        if MANIFEST not in names:
            return [f"no {MANIFEST} at the root of the zip"]
        try:
            root = ET.fromstring(z.read(MANIFEST))
        except ET.ParseError as e:
            return [f"{MANIFEST} is not well-formed XML: {e}"]
        problems = _check_manifest(root, names, version)
        for name in sorted(n for n in names if n.endswith(".html")):
            problems += _check_page(name, z.read(name).decode("utf-8"), names)
    return problems


def _edition(root):
    """The edition whose content-packaging namespace the manifest's root element is in."""
    for version, ed in EDITIONS.items():
        if root.tag == f"{{{ed['cp']}}}manifest":
            return version, ed
    return None, None


def _check_manifest(root, names, version):
    found, ed = _edition(root)
    if found is None:
        return [f"the root element is {root.tag}, not a SCORM 1.2 or 2004 manifest"]
    problems = []
    if version and found != version:
        problems.append(f"the manifest is SCORM {found}, expected {version}")
    cp, adlcp = ed["cp"], ed["adlcp"]

    def text(path):
        el = root.find(path)
        return el.text.strip() if el is not None and el.text else None

    if text(f"{{{cp}}}metadata/{{{cp}}}schema") != "ADL SCORM":
        problems.append("metadata/schema is not 'ADL SCORM'")
    if text(f"{{{cp}}}metadata/{{{cp}}}schemaversion") != ed["schemaversion"]:
        problems.append(f"metadata/schemaversion is not '{ed['schemaversion']}'")
    if not root.get("identifier"):
        problems.append("the manifest has no identifier")
    ids = [el.get("identifier") for el in root.iter() if el.get("identifier") is not None]
    for dup in sorted({i for i in ids if ids.count(i) > 1}):
        problems.append(f"identifier {dup!r} is used twice")
    for bad in sorted(i for i in ids if not re.fullmatch(r"[A-Za-z_][\w.-]*", i)):
        problems.append(f"identifier {bad!r} is not an XML ID")
    resources = {r.get("identifier"): r for r in root.iter(f"{{{cp}}}resource")}
    problems += _check_organizations(root, cp, adlcp, ed["scormtype"], resources)
    listed = set()
    for res in resources.values():
        for f in res.findall(f"{{{cp}}}file"):
            listed.add(f.get("href"))
        for dep in res.findall(f"{{{cp}}}dependency"):
            if dep.get("identifierref") not in resources:
                problems.append(f"a dependency names no resource: {dep.get('identifierref')!r}")
    for missing in sorted(listed - names):
        problems.append(f"the manifest lists {missing}, which is not in the zip")
    for unlisted in sorted(names - listed - {MANIFEST}):
        problems.append(f"{unlisted} is in the zip but not in the manifest")
    return problems


def _check_organizations(root, cp, adlcp, scormtype, resources):
    """The default organization exists, has a title and items, and each item names a SCO
    resource whose launch page is one of its files."""
    orgs = root.find(f"{{{cp}}}organizations")
    if orgs is None:
        return ["the manifest has no organizations"]
    org = next(
        (
            o
            for o in orgs.findall(f"{{{cp}}}organization")
            if o.get("identifier") == orgs.get("default")
        ),
        None,
    )
    if org is None:
        return ["organizations/@default names no organization"]
    problems = [] if org.find(f"{{{cp}}}title") is not None else ["the organization has no title"]
    items = list(org.iter(f"{{{cp}}}item"))
    if not items:
        problems.append("the organization has no items")
    for item in items:
        res = resources.get(item.get("identifierref"))
        if item.find(f"{{{cp}}}title") is None:
            problems.append(f"item {item.get('identifier')} has no title")
        if res is None:
            problems.append(f"item {item.get('identifier')} names no resource")
        elif res.get(f"{{{adlcp}}}{scormtype}") != "sco" or not res.get("href"):
            problems.append(f"item {item.get('identifier')} names no SCO with a launch page")
        elif res.get("href") not in {f.get("href") for f in res.findall(f"{{{cp}}}file")}:
            problems.append(f"resource {res.get('identifier')} does not list its launch page")
    return problems


class _Refs(HTMLParser):
    """Every URL a page loads or links to: (attribute, value)."""

    def __init__(self):
        super().__init__()
        self.refs = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("src", "href") and value is not None:
                self.refs.append((tag, value))


def _check_page(name, html, names):
    """A page of the package loads only files of the zip, by relative URLs; its links inside
    the package lead to files of the zip (links to other sites are the prose's)."""
    parser = _Refs()
    parser.feed(html)
    problems = []
    for tag, url in parser.refs:
        absolute = re.match(r"^[a-z][a-z0-9+.-]*:", url, re.I) or url.startswith("//")
        if absolute or url.startswith("/"):
            if tag != "a" or url.startswith("/"):
                problems.append(f"{name} loads {url}, which is not a relative URL")
            continue
        path = url.split("#")[0].split("?")[0]
        if path and posixpath.normpath(posixpath.join(posixpath.dirname(name), path)) not in names:
            problems.append(f"{name} refers to {url}, which is not in the package")
    return problems
