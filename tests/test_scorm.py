"""SCORM packages: the manifest of each edition, and sessions against a real LMS runtime.

The packages are checked as an LMS reads them (sitebuild.lms.scorm.check_package, and the manifest
read here directly). The sessions run in tests/harness/scorm.html: scorm-again 3.4.3, a
maintained implementation of the LMS side of SCORM 1.2 and 2004 (fetched pinned into the cache
like axe-core, never shipped), installed as the API of the parent page, with the package's
launch page, read from its manifest, in a frame. Every call the page makes is recorded.
"""

import html
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest
from conftest import hold_python, serve_dir
from playwright.sync_api import expect
from test_build import GOOD, project

from sitebuild.fetched import assets
from sitebuild.lms import scorm
from sitebuild.lms.needs import data_paths
from sitebuild.lms.scorm import EDITIONS, check_package, write_packages
from sitebuild.pipeline.build import load_chapters
from sitebuild.pipeline.chapters import APPENDIX_ORDER
from sitebuild.pipeline.policy import content_security_policy

ROOT = Path(__file__).resolve().parent.parent
HARNESS = Path(__file__).resolve().parent / "harness"
GUIDE = "author-guide"  # a guess, a check and an exercise: every kind of answer
STATUS = {"1.2": "cmi.core.lesson_status", "2004": "cmi.completion_status"}
SCORE = {"1.2": "cmi.core.score.raw", "2004": "cmi.score.raw"}
TIME = {"1.2": "cmi.core.session_time", "2004": "cmi.session_time"}
EXIT = {"1.2": "cmi.core.exit", "2004": "cmi.exit"}
ENTRY = {"1.2": "cmi.core.entry", "2004": "cmi.entry"}
FINISH = {"1.2": "LMSFinish", "2004": "Terminate"}
START = {"1.2": "LMSInitialize", "2004": "Initialize"}
# the guide's exercise, solved: a strength of 8 gives "The" 98%
SOLVED = (
    "strength = 8.0   # change this\n"
    "scores, masked, w = first_word_head(6, strength)\n"
    "w[-1].round(3)"
)


@pytest.fixture(scope="session")
def packages(tmp_path_factory, rendered):
    """{version: {name: zip}}: every chapter as a SCORM 1.2 package, the author guide as a 2004
    one, and all chapters together as one 2004 package."""
    out = tmp_path_factory.mktemp("scorm")
    every = [c.meta["slug"] for c in load_chapters(ROOT)]
    made = {
        # the path's chapters and, named (an appendix is packaged only when named), the guide
        "1.2": write_packages(ROOT, out, "1.2", only=every, reuse=rendered),
        "2004": write_packages(ROOT, out, "2004", only=[GUIDE], reuse=rendered)
        + write_packages(ROOT, out, "2004", together=True, reuse=rendered),
    }
    return {v: {p.name: p for p in found} for v, found in made.items()}


def manifest(path):
    with zipfile.ZipFile(path) as z:
        return ET.fromstring(z.read("imsmanifest.xml")), set(z.namelist())


@pytest.mark.parametrize("version", ["1.2", "2004"])
def test_every_package_is_one_an_lms_imports(packages, version):
    chapters = [ch.meta for ch in load_chapters(ROOT)]
    for name, path in packages[version].items():
        assert check_package(path, version) == [], name
        root, names = manifest(path)
        ed = EDITIONS[version]
        cp, adlcp = f"{{{ed['cp']}}}", f"{{{ed['adlcp']}}}"
        assert root.tag == f"{cp}manifest"
        assert root.find(f"{cp}metadata/{cp}schema").text == "ADL SCORM"
        assert root.find(f"{cp}metadata/{cp}schemaversion").text == ed["schemaversion"]
        resources = {r.get("identifier"): r for r in root.iter(f"{cp}resource")}
        scos = [resources[item.get("identifierref")].get("href") for item in root.iter(f"{cp}item")]
        # the readers' path: the author guide, an appendix, is packaged only when named
        expected = [f"{c['slug']}.html" for c in chapters if c["order"] < APPENDIX_ORDER]
        assert scos == (expected if "-all-" in name else [name.split("-scorm")[0][10:] + ".html"])
        for res in resources.values():
            kind = res.get(f"{adlcp}{ed['scormtype']}")
            assert kind == ("sco" if res.get("href") else "asset")
        listed = {f.get("href") for f in root.iter(f"{cp}file")}
        assert listed == names - {"imsmanifest.xml"}
        # everything the chapter needs is inside: the runtime, numpy, the models and their data
        for needed in ("pyodide/pyodide.asm.wasm", "py/files.json", "static/lms.js"):
            assert needed in names
        assert not {n for n in names if n.startswith("embed/") or n in ("sw.js", "index.html")}


def test_the_author_guide_is_packaged_only_when_named(packages):
    """`make scorm` packaged the author guide, and --all listed it as an activity."""
    every = [ch.meta for ch in load_chapters(ROOT)]
    path = sorted(ch["slug"] for ch in every if ch["order"] < 90)
    assert sorted(ch["slug"] for ch in scorm.chosen(every)) == path
    assert [ch["slug"] for ch in scorm.chosen(every, [GUIDE])] == [GUIDE]
    assert "manyheads-author-guide-scorm2004.zip" in packages["2004"]


def test_the_package_sizes_docs_teachers_states_hold(packages):
    """docs/teachers.md gives the range of a chapter package's size (it said "about 23 MB" of
    packages from 11 to 25 MB); every chapter's package is inside it."""
    said = (ROOT / "docs" / "teachers.md").read_text("utf-8")
    low, high = map(int, re.search(r"from about (\d+) MB to (\d+) MB", said).groups())
    sizes = {n: p.stat().st_size / 1e6 for n, p in packages["1.2"].items()}
    assert all(low - 0.5 <= mb < high + 0.5 for mb in sizes.values()), sizes
    # and it says how large they are: its ends within 2 MB of the smallest and the largest
    assert min(sizes.values()) - low < 2 and high - max(sizes.values()) < 2, sizes


def test_a_chapter_package_carries_the_security_policy_and_no_links_out(packages):
    path = packages["1.2"]["manyheads-many-heads-scorm12.zip"]
    with zipfile.ZipFile(path) as z:
        page = z.read("many-heads.html").decode()
    policy = f'<meta http-equiv="Content-Security-Policy" content="{content_security_policy()}">'
    assert policy in html.unescape(page)
    assert '<meta name="mh-lms" content="1.2">' in page
    assert 'href="index.html"' not in page and 'rel="next"' not in page


def rewrite(path, tmp_path, change):
    """A copy of the package at PATH with CHANGE(names -> {name: bytes}) applied."""
    target = tmp_path / path.name
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(target, "w") as dst:
        files = {n: src.read(n) for n in src.namelist()}
        for name, data in change(files).items():
            dst.writestr(name, data)
    return target


BROKEN = [
    (
        "a file the manifest lists is missing",
        lambda f: {k: v for k, v in f.items() if k != "static/pyclient.js"},
        "the manifest lists static/pyclient.js, which is not in the zip",
    ),
    (
        "a file of the zip is not listed",
        lambda f: {**f, "notes.txt": b"x"},
        "notes.txt is in the zip but not in the manifest",
    ),
    (
        "the manifest is not XML",
        lambda f: {**f, "imsmanifest.xml": f["imsmanifest.xml"][:-20]},
        "imsmanifest.xml is not well-formed XML",
    ),
    (
        "another edition's schema version",
        lambda f: {
            **f,
            "imsmanifest.xml": f["imsmanifest.xml"].replace(
                b"<schemaversion>1.2<", b"<schemaversion>1.3<"
            ),
        },
        "metadata/schemaversion is not '1.2'",
    ),
    (
        "a page loads from another origin",
        lambda f: {
            **f,
            "many-heads.html": re.sub(
                rb'src="static/main[.\w]*\.js"',
                b'src="https://cdn.example/main.js"',
                f["many-heads.html"],
            ),
        },
        "many-heads.html loads https://cdn.example/main.js, which is not a relative URL",
    ),
    (
        "no manifest",
        lambda f: {k: v for k, v in f.items() if k != "imsmanifest.xml"},
        "no imsmanifest.xml at the root of the zip",
    ),
]


@pytest.mark.parametrize("name,change,problem", BROKEN, ids=[b[0] for b in BROKEN])
def test_the_package_check_finds_what_an_lms_would_refuse(
    packages, tmp_path, name, change, problem
):
    broken = rewrite(packages["1.2"]["manyheads-many-heads-scorm12.zip"], tmp_path, change)
    problems = check_package(broken, "1.2")
    assert any(p.startswith(problem) for p in problems), problems


def test_build_py_scorm_writes_the_packages(tmp_path):
    root = project(tmp_path, {"01-a.md": GOOD})
    for args, name in (
        ([], "manyheads-test-scorm12.zip"),
        (["--scorm", "2004", "--all"], "manyheads-all-scorm2004.zip"),
    ):
        done = subprocess.run(
            [sys.executable, str(ROOT / "build.py"), "scorm", *args, "--root", str(root)],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        assert f"wrote {root / name}" in done.stdout
        assert check_package(root / name) == []


def test_build_py_scorm_packages_one_chapter_when_asked(tmp_path):
    second = GOOD.replace('slug = "test"', 'slug = "second"').replace("order = 1", "order = 2")
    root = project(tmp_path, {"01-a.md": GOOD, "02-b.md": second})
    command = [sys.executable, str(ROOT / "build.py"), "scorm", "--root", str(root)]
    done = subprocess.run([*command, "--chapter", "second"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in root.glob("*.zip")) == ["manyheads-second-scorm12.zip"]
    assert check_package(root / "manyheads-second-scorm12.zip") == []
    with zipfile.ZipFile(root / "manyheads-second-scorm12.zip") as z:
        assert "second.html" in z.namelist() and "test.html" not in z.namelist()
    done = subprocess.run([*command, "--chapter", "secnd"], capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr == (
        "error: no chapter 'secnd' (did you mean 'second'?); the chapters are test, second\n"
    )


# the data folders of toymodels/data/ each chapter's figures read in the browser
DATA = {"real-heads": ["realheads"], "one-character": ["charmodel"]}
DATA["heads-that-copy"] = ["smollm2"]
DATA["what-a-head-does"] = ["smollm2", "what_a_head_does"]
DATA["why-a-head-looks-there"] = ["charmodel", "smollm2", "why_a_head_looks"]
# the files of another chapter's folder a chapter reads, alone (ch. 7 carried ch. 6's
# 16 curated maps); in every other folder it carries, every file
SMOLLM2_LIVE = ["py/data/smollm2/certificate.json", "py/data/smollm2/live.json"]
ALONE = {
    "what-a-head-does": {"smollm2": SMOLLM2_LIVE},
    "why-a-head-looks-there": {"smollm2": SMOLLM2_LIVE},
}


def data_in(path):
    """{top-level data folder: files} and the build's answers (prerendered/) in a package."""
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
    folders = {}
    for name in names:
        if name.startswith("py/data/"):
            folders.setdefault(name.split("/")[2], []).append(name)
    return folders, sorted(n for n in names if n.startswith("prerendered/"))


def test_each_chapter_package_carries_only_its_own_data(packages):
    """Every package carried all 16 MB of data of every chapter: now a chapter's package holds
    the folders of toymodels/data/ its Python reads and its own answers, and one package of
    them all holds all of them."""
    path = [c for c in load_chapters(ROOT) if c.meta["order"] < APPENDIX_ORDER]
    for chapter in path:
        slug = chapter.meta["slug"]
        folders, answers = data_in(packages["1.2"][f"manyheads-{slug}-scorm12.zip"])
        assert sorted(folders) == DATA.get(slug, []), slug
        for folder, files in folders.items():  # the whole folder: a reader may tap any state
            if folder in ALONE.get(slug, {}):
                plain = [re.sub(r"\.[0-9a-f]{12}(\.\w+)$", r"\1", f) for f in files]
                assert sorted(plain) == ALONE[slug][folder], (slug, files)
                continue
            assert len(files) == len(list((ROOT / "toymodels" / "data" / folder).rglob("*.*")))
        assert all(a.startswith(f"prerendered/{slug}.") for a in answers) and answers, slug
    folders, answers = data_in(packages["2004"]["manyheads-all-scorm2004.zip"])
    assert sorted(folders) == sorted({f for fs in DATA.values() for f in fs})
    slugs = {chapter.meta["slug"] for chapter in path}
    assert {a.removeprefix("prerendered/").split(".")[0] for a in answers} == slugs


TRACE = """
import importlib
import sys
from pathlib import Path
from sitebuild.pipeline import build, figures, pages, prerender
from sitebuild.pipeline.pages import ChapterRenderer
from toymodels.page import cells, data

read, inside = set(), []
def traced(run):
    def call(*args, **kwargs):
        inside.append(1)
        try:
            return run(*args, **kwargs)
        finally:
            inside.pop()
    return call
def read_bytes(rel, _read=data.read_bytes):
    if inside:
        read.add(rel)
    return _read(rel)
data.read_bytes = read_bytes
figures.Drawing.draw = traced(figures.Drawing.draw)
cells.run = traced(cells.run)
# the build runs cells in a child Python (sitebuild/pipeline/cellrunner.py): here in this one
class InProcess:
    def __init__(self, replay=None):
        pass
    def run(self, code, ns, check, seconds):
        return cells.run(code, ns, check)
    def call(self, name, args, seconds):
        module, _, function = name.partition(":")
        return getattr(importlib.import_module(module), function)(*args)
    def close(self):
        pass
pages.CellProcess = InProcess
root = Path(sys.argv[1])
chapters = build.load_chapters(root)
chapter = next(c for c in chapters if c.meta["slug"] == sys.argv[2])
renderer = ChapterRenderer(chapter, build.environment(root), root)
body = renderer.render()
prerender.page_answers(renderer.figures, str(body))
print(" ".join(sorted(read)))
"""


@pytest.mark.parametrize("slug", [c.meta["slug"] for c in load_chapters(ROOT)])
def test_a_chapter_package_holds_every_data_folder_its_figures_and_cells_read(slug):
    """What a chapter's figures and cells read while the build draws them (every state it
    declares, and those one tap away), each chapter in a Python of its own so that no other
    chapter's reads are kept: all of it is in the chapter's package (sitebuild/lms/needs.py)."""
    done = subprocess.run(
        [sys.executable, "-c", TRACE, str(ROOT), slug],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    read = done.stdout.split()
    chapter = next(c for c in load_chapters(ROOT) if c.meta["slug"] == slug)
    needed = data_paths(chapter, ROOT)
    missing = [r for r in read if r not in needed and r.split("/")[0] not in needed]
    assert not missing, (missing, slug)
    assert sorted({r.split("/")[0] for r in read}) == DATA.get(slug, [])


# --- sessions against scorm-again ---------------------------------------------------------------


@pytest.fixture(scope="session")
def lms(packages, tmp_path_factory):
    """lms(version, chapter): the harness's address, serving CHAPTER's package of VERSION (the
    author guide's unless named)."""
    runtime = assets.scorm_again_dir()
    servers, urls = [], {}

    def serve(version, chapter=GUIDE):
        if (version, chapter) not in urls:
            where = tmp_path_factory.mktemp(f"lms{version}")
            for name in ("scorm.html", "scorm.js"):
                shutil.copy(HARNESS / name, where / name)
            (where / "harness.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"/>')
            for name in assets.SCORM_AGAIN_FILES:
                shutil.copy(runtime / name, where / name)
            tag = EDITIONS[version]["tag"]
            with zipfile.ZipFile(packages[version][f"manyheads-{chapter}-{tag}.zip"]) as z:
                z.extractall(where / "pkg")
            servers.append(serve_dir(where))
            urls[version, chapter] = f"http://127.0.0.1:{servers[-1].server_port}/"
        return urls[version, chapter]

    yield serve
    for server in servers:
        server.shutdown()


def launch(page, url, version, python=True, **options):
    """Open the harness, start a session of VERSION and wait until the chapter is ready: with
    Python ready, or (PYTHON false) with Python held back, the page's own behaviour wired up.
    What the LMS is told needs no Python (checks, guesses, what is kept and restored, an
    exercise's kept verdict), and a test that runs no code is spared Python's start (about 5 s
    of processor time)."""
    if not python:
        hold_python(page)
    page.goto(url + "scorm.html")
    page.evaluate("(o) => harness.start(o)", {"version": version, **options})
    frame = page.frame_locator("#sco")
    if python:
        frame.locator("html.py-ready").wait_for(timeout=90_000)
    else:  # lms.js, then main.js, which marks the page html.js and wires its blocks at once
        frame.locator("html.js").wait_for()
        assert frame.locator("html.py-ready").count() == 0
    return frame


def held(page, version):
    return page.evaluate("(v) => harness.held(v)", version)


def calls(page):
    return page.evaluate("harness.calls")


# what SCORM records for answer_everything's path: one of two graded answers (the check, the
# exercise) right at the first try; tests/test_cmi5.py holds cmi5 to the same
ANSWER_EVERYTHING_SCORE = 50


def answer_everything(frame):
    """The guide's guess, its check (wrong, then right) and its exercise (right at once)."""
    guess = frame.locator("#guess-1")
    guess.get_by_text("About 77%.").click()
    guess.get_by_role("button", name="Commit my guess").click()
    check = frame.locator("#check-1")
    check.get_by_text("The page builds, and the figure has no description.").click()
    check.get_by_role("button", name="Check").click()
    check.locator(".mh-feedback.wrong").wait_for()
    check.get_by_text("The build stops and names the line of the block.").click()
    check.get_by_role("button", name="Check").click()
    exercise = frame.locator("#exercise-1")
    exercise.locator("textarea").fill(SOLVED)
    exercise.get_by_role("button", name="Run").click()
    exercise.locator(".mh-verdict.right").wait_for(timeout=60_000)


@pytest.mark.browser
@pytest.mark.parametrize("version", ["1.2", "2004"])
def test_an_lms_records_completion_score_answers_and_time(page, lms, version):
    frame = launch(page, lms(version), version)
    assert held(page, version)[STATUS[version]] == "incomplete"
    # the first tries make the score: inside an LMS they cannot be cleared
    assert frame.locator("[data-results-clear]").count() == 0
    answer_everything(frame)
    page.wait_for_function(
        "([v, key]) => harness.held(v)[key] === 'completed'", arg=[version, STATUS[version]]
    )
    now = held(page, version)
    # one of two graded answers was right at the first try: the check took two
    assert now[SCORE[version]] == str(ANSWER_EVERYTHING_SCORE) == "50"
    if version == "2004":
        assert (now["cmi.score.scaled"], now["cmi.progress_measure"]) == ("0.5", "1")
    suspend = now["cmi.suspend_data"]
    assert suspend.startswith("m1|") and len(suspend) <= 4096
    assert "c1.2.01.0,1" in suspend.split("|"), suspend  # two tries: wrong, then right
    page.evaluate("harness.leave()")
    page.wait_for_function("(m) => harness.calls.some(([name]) => name === m)", arg=FINISH[version])
    log = calls(page)
    assert log[0] == [START[version], [""], "true"]
    assert log[-1] == [FINISH[version], [""], "true"]
    sets = {args[0]: args[1] for name, args, result in log if name.endswith("SetValue")}
    pattern = r"\d{2,4}:\d{2}:\d{2}(\.\d{1,2})?" if version == "1.2" else r"PT(\d+H)?(\d+M)?[\d.]+S"
    assert re.fullmatch(pattern, sets[TIME[version]]), sets[TIME[version]]
    assert sets[EXIT[version]] == "suspend"
    assert all(result == "true" for name, _, result in log if name.endswith("SetValue"))


@pytest.mark.browser
@pytest.mark.parametrize("version", ["1.2", "2004"])
def test_a_returning_student_finds_the_answers(new_page, lms, version):
    first = new_page()
    frame = launch(first, lms(version), version)
    answer_everything(frame)
    first.wait_for_function(
        "([v, key]) => harness.held(v)[key] === 'completed'", arg=[version, STATUS[version]]
    )
    first.evaluate("harness.leave()")
    first.wait_for_function(
        "(m) => harness.calls.some(([name]) => name === m)", arg=FINISH[version]
    )
    kept = held(first, version)
    data = {
        "cmi.suspend_data": kept["cmi.suspend_data"],
        STATUS[version]: kept[STATUS[version]],
        SCORE[version]: kept[SCORE[version]],
        ENTRY[version]: "resume",
    }
    # another browser: nothing of the first visit is in its storage
    again = new_page()
    frame = launch(again, lms(version), version, python=False, data=data)
    check = frame.locator("#check-1")
    assert check.get_by_label("The build stops and names the line of the block.").is_checked()
    assert check.locator(".mh-feedback.right").is_visible()
    assert frame.locator("#guess-1 [data-your-guess]").inner_text() == "Your guess: About 77%."
    assert frame.locator("#exercise-1 textarea").input_value() == SOLVED
    assert "solved this exercise" in frame.locator("#exercise-1 .mh-verdict").inner_text()
    # the first tries are kept, so the score stays what it was
    again.wait_for_function(
        "([v, key]) => harness.calls.some(([m, a]) => m.endsWith('SetValue') && a[0] === key)",
        arg=[version, STATUS[version]],
    )
    assert held(again, version)[STATUS[version]] == "completed"
    assert held(again, version)[SCORE[version]] == "50"
    assert frame.locator("[data-lms-status]").is_hidden()


@pytest.mark.browser
@pytest.mark.parametrize("version", ["1.2", "2004"])
def test_an_lms_that_refuses_values_gets_one_line_and_the_chapter_works(page, lms, version):
    frame = launch(page, lms(version), version, python=False, refuse=True)
    line = frame.locator("[data-lms-status]")
    line.wait_for()
    code = "101" if version == "1.2" else "351"
    text = line.inner_text()
    assert f"error {code}" in text and "\n" not in text.strip(), text
    assert text.startswith("Your LMS did not record")
    check = frame.locator("#check-1")
    check.get_by_text("The build stops and names the line of the block.").click()
    check.get_by_role("button", name="Check").click()
    assert check.locator(".mh-feedback.right").is_visible()
    assert frame.locator("[data-results] tbody tr").count() == 1
    # one line, however many values the LMS refuses
    assert frame.locator("[data-lms-status]").count() == 1


@pytest.mark.browser
def test_without_an_lms_the_package_is_the_site(page, packages, tmp_path):
    with zipfile.ZipFile(packages["1.2"]["manyheads-many-heads-scorm12.zip"]) as z:
        z.extractall(tmp_path / "pkg")
    server = serve_dir(tmp_path / "pkg")
    try:
        url = f"http://127.0.0.1:{server.server_port}/many-heads.html"
        page.goto(url)
        page.wait_for_selector("html.py-ready", timeout=90_000)
        page.get_by_role("button", name="kept", exact=True).click()
        page.wait_for_selector(".mh-shares caption:has-text('“kept”')")
        check = page.locator(".mh-check")
        check.get_by_text("Keeping track of local order").click()
        check.get_by_role("button", name="Check").click()
        assert page.locator("[data-lms-status]").is_hidden()
        # answers stay in this browser, as on the site
        page.reload()
        page.wait_for_selector("[data-results]:not([hidden]) tbody tr")
        assert check.get_by_label("Keeping track of local order", exact=False).is_checked()
        row = page.locator("[data-results] tbody tr").first.locator("td").all_inner_texts()
        assert row[1:4] == [
            "1",
            "Keeping track of local order: which word came right before, to build phrases such as "
            "“shiny key”.",
            "correct",
        ], row
        assert page.locator("[data-lms-status]").is_hidden()
        assert page.evaluate("Object.keys(localStorage).some((k) => k.includes(':attempts:'))")
        assert page.get_by_role("button", name="Clear this chapter's results…").is_visible()
        assert page.get_by_role("button", name="Download all chapters as CSV").is_visible()
    finally:
        server.shutdown()


ANSWER_KINDS = ("data-check ", "data-guess ", 'class="mh-cell mh-exercise"')


def answers_asked(package):
    """How many answers a chapter's package asks for: its checks, guesses and exercises."""
    with zipfile.ZipFile(package) as z:
        (page,) = [n for n in z.namelist() if n.endswith(".html")]
        text = z.read(page).decode()
    return sum(text.count(kind) for kind in ANSWER_KINDS), page.removesuffix(".html")


@pytest.mark.browser
def test_suspend_data_holds_every_answer_of_the_chapter_that_asks_most(new_page, packages, lms):
    """The chapter with the most checks, guesses and exercises, every one answered at length:
    each check tried 30 times, each guess committed, each exercise run with code longer than
    the whole limit. Every block keeps its record within 4,096 characters, and a returning
    student finds every answer that fits."""
    counts = sorted(answers_asked(p) for name, p in packages["1.2"].items() if "-all-" not in name)
    most, slug = counts[-1]
    assert most >= 5, counts  # today chapter "One head": 2 checks, 1 guess, 2 exercises
    page = new_page()
    frame = launch(page, lms("1.2", slug), "1.2")
    ids = []
    for guess in frame.locator("[data-guess]").all():
        ids.append("g" + guess.get_attribute("id").split("-")[-1])
        guess.locator("input[name=guess]").last.check()
        guess.get_by_role("button", name="Commit my guess").click()
    for check in frame.locator("[data-check]").all():
        ids.append("c" + check.get_attribute("id").split("-")[-1])
        check.locator("input").first.check()
        for _ in range(30):
            check.get_by_role("button", name="Check").click()
    codes = {}  # the first exercise's code is longer than the limit; the others' fit
    for n, exercise in enumerate(frame.locator(".mh-exercise").all()):
        ids.append("e" + exercise.get_attribute("id").split("-")[-1])
        code = exercise.locator("textarea").input_value()
        code += "\n# " + "a long comment | with 100% of the separators " * (20 if n else 100)
        codes[exercise.get_attribute("id")] = code
        exercise.locator("textarea").fill(code)
        exercise.get_by_role("button", name="Run").click()
        exercise.locator(".mh-verdict.right, .mh-verdict.wrong").wait_for(timeout=60_000)
    assert len(ids) == most
    page.wait_for_function(
        "(ids) => { const s = harness.held('1.2')['cmi.suspend_data'] || '';"
        " return ids.every((id) => s.includes('|' + id + '.')); }",
        arg=ids,
    )
    suspend = held(page, "1.2")["cmi.suspend_data"]
    (first, *others) = codes
    assert len(codes[first]) > 4096 and len(suspend) <= 4096, len(suspend)
    assert len(suspend) <= 4096, len(suspend)
    records = suspend.split("|")[1:]
    assert sorted(r.split(".")[0] for r in records) == sorted(ids), records
    assert all(r.split(".")[1] == "u" for r in records if r[0] == "c"), records  # 30 tries
    page.evaluate("harness.leave()")
    page.wait_for_function("() => harness.calls.some(([name]) => name === 'LMSFinish')")
    again = new_page()
    frame = launch(again, lms("1.2", slug), "1.2", python=False, data={"cmi.suspend_data": suspend})
    for guess in frame.locator("[data-guess]").all():
        assert guess.locator("[data-your-guess]").is_visible()
    for check in frame.locator("[data-check]").all():
        assert check.locator("input").first.is_checked()
        assert check.locator(".mh-feedback:visible").count() == 1
    assert frame.locator(f"#{first} textarea").input_value() != codes[first]  # left out
    for id in others:
        assert frame.locator(f"#{id} textarea").input_value() == codes[id]
    rows = frame.locator("[data-results] tbody tr:not(.mh-results-code-row)")
    asked = frame.locator("[data-guess]").count(), frame.locator("[data-check]").count()
    assert rows.count() == asked[0] + 30 * asked[1] + len(codes)


def test_the_guide_holds_every_kind_of_answer(site):
    """The sessions above and the test below run the guide, which holds one answer of every kind
    (a guess, a check, an exercise); the chapter that asks most is filled by the test above."""
    text = (site / f"{GUIDE}.html").read_text()
    for kind in ("data-check ", "data-guess ", 'class="mh-cell mh-exercise"'):
        assert kind in text, kind


@pytest.mark.browser
def test_suspend_data_stays_within_scorm_12s_limit_when_every_answer_is_long(new_page, lms):
    """Every answer of the longest chapter, each as long as a student can make it: many tries
    at the check and code far beyond 4,096 characters. The record stays within the limit; code
    that cannot fit is left out (the exercise keeps its result), code that can is kept."""
    page = new_page()
    frame = launch(page, lms("1.2"), "1.2")
    answer_everything(frame)
    check = frame.locator("#check-1")
    for _ in range(40):
        check.get_by_role("button", name="Check").click()
    exercise = frame.locator("#exercise-1")
    huge = SOLVED + "\n# " + "a very long comment | with 100% of the separators " * 120
    exercise.locator("textarea").fill(huge)
    exercise.get_by_role("button", name="Run").click()
    page.wait_for_function(
        "() => harness.held('1.2')['cmi.suspend_data'].includes('|c1.16.01.0,1|')"
        " && harness.held('1.2')['cmi.suspend_data'].includes('e1.2.11')"
    )
    suspend = held(page, "1.2")["cmi.suspend_data"]
    assert len(huge) > 4096 and len(suspend) <= 4096, len(suspend)
    assert suspend.split("|")[-1] == "e1.2.11.", suspend  # the code did not fit: left out
    long = SOLVED + "\n# " + "a long comment | with 100% of the separators " * 70
    exercise.locator("textarea").fill(long)
    exercise.get_by_role("button", name="Run").click()
    page.wait_for_function("() => harness.held('1.2')['cmi.suspend_data'].includes('e1.3.11')")
    suspend = held(page, "1.2")["cmi.suspend_data"]
    assert 3000 < len(suspend) <= 4096, len(suspend)
    page.evaluate("harness.leave()")
    page.wait_for_function("() => harness.calls.some(([name]) => name === 'LMSFinish')")
    again = new_page()
    frame = launch(again, lms("1.2"), "1.2", python=False, data={"cmi.suspend_data": suspend})
    assert frame.locator("#exercise-1 textarea").input_value() == long
    rows = frame.locator("[data-results] tbody tr:not(.mh-results-code-row)")
    assert rows.count() == 1 + 42 + 3  # the guess, every try at the check, three runs


@pytest.mark.browser
def test_a_package_offers_no_own_sentence_since_it_leaves_the_model_out(page, packages, lms):
    """Real heads' own-sentence box loads a 42 MB model the packages do not carry: inside an
    LMS the box is not shown, and nothing in the package is the model."""
    with zipfile.ZipFile(packages["1.2"]["manyheads-real-heads-scorm12.zip"]) as z:
        assert not [n for n in z.namelist() if n.startswith("models/")]
    frame = launch(page, lms("1.2", "real-heads"), "1.2")
    assert frame.locator(".rh-own").count() == 1
    assert frame.locator(".rh-own").is_hidden()
    assert frame.locator("[data-own-load]").count() == 0


@pytest.mark.browser
def test_a_package_offers_no_own_text_in_smollm2_since_it_leaves_the_model_out(page, packages, lms):
    """Heads that copy's "Your own text" loads SmolLM2's 98 MB, which the packages do not carry:
    inside an LMS neither figure offers it, and Figure 1 says so."""
    with zipfile.ZipFile(packages["1.2"]["manyheads-heads-that-copy-scorm12.zip"]) as z:
        assert not [n for n in z.namelist() if n.startswith("models/")]
    frame = launch(page, lms("1.2", "heads-that-copy"), "1.2")
    own = frame.locator("[data-key='text'][data-value='own']")
    assert own.count() == 2  # Figure 1's text choice and Figure 2's
    for i in range(2):
        assert own.nth(i).is_hidden()
    assert frame.locator("[data-own-load]").count() == 0
    # the prose asks the reader to choose "Your own text": Figure 1 says why it is not there
    note = frame.locator("#copy-layer .hc-lms-note")
    assert note.is_visible() and "leaves the live model out" in note.inner_text()


@pytest.mark.browser
def test_times_are_written_as_each_standard_says(page, lms):
    frame = launch(page, lms("1.2"), "1.2", python=False)
    values = frame.locator("html").evaluate(
        """async () => {
          // the module the page runs (content-addressed), not a second copy under the plain name
          const m = await import(document.querySelector("script[src*='lms.']").src);
          const ms = [0, 3723450, 59994, 36000000000 * 2];
          return [ms.map(m.timespan12), ms.map(m.interval2004)];
        }"""
    )
    assert values == [
        ["00:00:00.00", "01:02:03.45", "00:00:59.99", "9999:59:59.99"],
        ["PT0S", "PT1H2M3.45S", "PT59.99S", "PT20000H"],
    ]


# --- grading: what runs unasked is not graded; each question as an interaction; damaged data ----

ONE_HEAD = "one-head"
SOFTMAX_SOLVED = (
    "def softmax(scores):\n"
    "    e = np.exp(scores - scores.max(axis=-1, keepdims=True))\n"
    "    return e / e.sum(axis=-1, keepdims=True)\n"
)


def run_cell(frame, cell, done="[data-output] pre"):
    """Press Run on CELL (an id), wait until the run is over, then until DONE shows in it."""
    box = frame.locator(f"#{cell}")
    box.get_by_role("button", name="Run").click()
    expect(box.locator("[data-output]")).not_to_contain_text("Running", timeout=90_000)
    expect(box.get_by_role("button", name="Run")).to_be_enabled(timeout=90_000)
    box.locator(done).first.wait_for()


@pytest.mark.browser
@pytest.mark.parametrize("whole_head_first", [True, False], ids=["whole-head-first", "in-order"])
def test_the_score_is_the_same_whatever_order_the_cells_run_in(new_page, lms, whole_head_first):
    """ "One head": the student solves the first exercise and leaves the second as it is. Run in
    order, that is one right first try of four graded questions (two checks, two exercises):
    25. Running "The whole head" first runs both exercises above it, which must neither count as
    first tries nor complete anything: the score is 25 too, and nothing is complete before the
    exercises were run by the student."""
    page = new_page()
    frame = launch(page, lms("1.2", ONE_HEAD), "1.2")
    if whole_head_first:
        run_cell(frame, "cell-3", "[data-output] pre.value")
        for exercise in ("exercise-1", "exercise-2"):
            assert frame.locator(f"#{exercise} [data-verdict]").inner_text() == ""
        assert frame.locator("[data-results] tbody tr").count() == 0
    frame.locator("#exercise-1 textarea").fill(SOFTMAX_SOLVED)
    run_cell(frame, "exercise-1", ".mh-verdict.right")
    run_cell(frame, "exercise-2", ".mh-verdict.wrong")
    page.wait_for_function("() => harness.held('1.2')['cmi.core.score.raw'] === '25'")
    for check in frame.locator("[data-check]").all():
        check.locator("input").first.check()
        check.get_by_role("button", name="Check").click()
    page.wait_for_function("() => harness.held('1.2')['cmi.core.lesson_status'] === 'completed'")
    sets = [a for m, a, _ in calls(page) if m == "LMSSetValue"]
    statuses = [v for k, v in sets if k == "cmi.core.lesson_status"]
    assert statuses == ["incomplete", "completed"], statuses
    scores = [v for k, v in sets if k == "cmi.core.score.raw"]
    assert scores[0] == "25", scores  # the first score sent is the solved exercise's
    rows = [
        r.locator("td").nth(1).inner_text()
        for r in frame.locator("[data-results] tbody tr:not(.mh-results-code-row)").all()
    ]
    assert rows == ["1"] * 4, rows  # one try each: two exercises, two checks


def wait_sent(page, element):
    """Wait until the page has set ELEMENT."""
    page.wait_for_function(
        "(e) => harness.calls.some(([m, a]) => m.endsWith('SetValue') && a[0] === e)", arg=element
    )


def interaction_values(page):
    """The last value the page set for each cmi.interactions element, all accepted."""
    log = [(a, r) for m, a, r in calls(page) if m.endswith("SetValue")]
    assert all(r == "true" for _, r in log), [(a, r) for a, r in log if r != "true"]
    return {a[0]: a[1] for a, _ in log if a[0].startswith("cmi.interactions.")}


@pytest.mark.browser
@pytest.mark.parametrize("version", ["1.2", "2004"])
def test_each_question_reaches_the_lms_as_an_interaction(page, lms, version):
    """One interaction per question, in page order (the guide's guess, check, exercise), each
    holding the first try, the one the score counts, in the edition's formats; the runtime
    (scorm-again) accepts every value."""
    frame = launch(page, lms(version), version)
    # every question has its record, at its index, before it is answered
    wait_sent(page, "cmi.interactions.2.type")
    answer_everything(frame)
    wait_sent(page, "cmi.interactions.2.result")
    got = interaction_values(page)
    response = "student_response" if version == "1.2" else "learner_response"
    wrong = "wrong" if version == "1.2" else "incorrect"
    code = "fill-in" if version == "1.2" else "long-fill-in"
    expected = {
        "0": {"id": f"{GUIDE}.guess-1", "type": "choice", response: "b", "result": "neutral"},
        "1": {
            "id": f"{GUIDE}.check-1",
            "type": "choice",
            "correct_responses.0.pattern": "a",
            response: "b",  # the first try: wrong
            "result": wrong,
        },
        "2": {
            "id": f"{GUIDE}.exercise-1",
            "type": code,
            response: SOLVED.replace("\n", " \u21b5 "),
            "result": "correct",
        },
    }
    for n, values in expected.items():
        for key, value in values.items():
            assert got[f"cmi.interactions.{n}.{key}"] == value, (n, key)
    assert not [k for k in got if re.match(r"cmi\.interactions\.[3-9]", k)]
    when = "time" if version == "1.2" else "timestamp"
    stamps = [got[f"cmi.interactions.{n}.{when}"] for n in range(3)]
    pattern = r"\d{2}:\d{2}:\d{2}" if version == "1.2" else r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\dZ"
    assert all(re.fullmatch(pattern, s) for s in stamps), stamps
    if version == "2004":
        assert (
            got["cmi.interactions.1.description"] == "A figure block has no alt line. What happens?"
        )
        # the LMS reads them back as written
        read = page.evaluate(
            "() => [0, 1, 2].map((n) =>"
            " harness.api.GetValue(`cmi.interactions.${n}.learner_response`))"
        )
        assert read == ["b", "b", SOLVED.replace("\n", " \u21b5 ")]
        assert page.evaluate("() => harness.api.GetValue('cmi.interactions._count')") == "3"


@pytest.mark.browser
def test_code_longer_than_scorm_12_allows_is_cut_to_255(page, lms):
    frame = launch(page, lms("1.2"), "1.2")
    long = SOLVED + "\n# " + "x" * 400
    frame.locator("#exercise-1 textarea").fill(long)
    run_cell(frame, "exercise-1", ".mh-verdict.right")
    wait_sent(page, "cmi.interactions.2.student_response")
    sent = interaction_values(page)["cmi.interactions.2.student_response"]
    assert len(sent) == 255 and sent.endswith("\u2026"), len(sent)
    assert sent.startswith(SOLVED.replace("\n", " \u21b5 "))


DAMAGED = [
    "m1|c1.zzzz.01.0,1",  # 1,679,615 tries: once a stack overflow in results.js
    "m1|c1.zzzzzz.01.0,1",  # 2,176,782,335 tries: once a crashed tab
    "m1|c1.0.11.0,1",
    "m1|c1.1.11.99999999999999999999,-1",
    "m1|g1.1.--.#1.5",
    "m1|g1.2.--.#99999999999999999999",
    "m1|e1.2.11.zzzz,zzzzzzzzzzzzz,zzzzzzzzzzzzz,%7",
    "m1|||c|c1|c1.|c1.1|c1.1.1",
    "m2|c1.1.11.0,0",
    "\u0000\ud800|{}",
]


@pytest.mark.browser
@pytest.mark.parametrize("suspend", DAMAGED)
def test_damaged_suspend_data_is_ignored(new_page, lms, suspend):
    """Suspend data the page did not write (or an LMS damaged) is passed over: the chapter
    starts, its questions unanswered as far as the damage goes, and works."""
    page = new_page()
    frame = launch(page, lms("1.2"), "1.2", python=False, data={"cmi.suspend_data": suspend})
    rows = frame.locator("[data-results] tbody tr:not(.mh-results-code-row)")
    assert rows.count() <= 2, rows.count()
    check = frame.locator("#check-1")
    check.get_by_text("The build stops and names the line of the block.").click()
    check.get_by_role("button", name="Check").click()
    assert check.locator(".mh-feedback.right").is_visible()
    frame.locator("[data-results] tbody tr").first.wait_for()
    page.wait_for_function("() => (harness.held('1.2')['cmi.suspend_data'] || '').includes('|c1.')")
