"""cmi5 packages: the course structure as an LMS reads it, and sessions against a small LRS.

The LRS here is the LMS's side of cmi5 on the loopback, in a thread: it launches the AU (its
address with the cmi5 launch parameters: endpoint, a one-use fetch URL, actor, registration,
activityId), answers the fetch URL with an auth token, keeps LMS.LaunchData (a context
template with a session id, launchMode Normal, moveOn, masteryScore) and the AU's own state
documents, and records every statement the page sends, with the session it came in. Every
statement is validated by @learninglocker/xapi-validation 3.0.0 (npm, pinned like the other
test tools, run by node), and held to the cmi5 rules that are cheap to check: the order of each
session's statements, the registration, the context template, and one "completed".
"""

import json
import re
import subprocess
import sys
import threading
import uuid
import xml.etree.ElementTree as ET
import zipfile
from http import HTTPStatus
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from conftest import hold_python, wait_until
from test_build import GOOD, project
from test_scorm import ANSWER_EVERYTHING_SCORE, GUIDE, SOLVED

from sitebuild.fetched import assets
from sitebuild.lms import cmi5
from sitebuild.serving.loopback import QuietServer
from sitebuild.serving.serve import Handler

ROOT = Path(__file__).resolve().parent.parent
VERBS = "http://adlnet.gov/expapi/verbs/"
SESSION = "https://w3id.org/xapi/cmi5/context/extensions/sessionid"
CMI5 = "https://w3id.org/xapi/cmi5/context/categories/cmi5"
MOVE_ON = "https://w3id.org/xapi/cmi5/context/categories/moveon"
MASTERY = 0.5
ACTOR = {"objectType": "Agent", "account": {"homePage": "https://lms.example", "name": "ada"}}


@pytest.fixture(scope="module")
def package(tmp_path_factory, rendered):
    """The author guide (a guess, a check and an exercise) as a cmi5 package, mastery 0.5."""
    out = tmp_path_factory.mktemp("cmi5")
    (path,) = cmi5.write_packages(ROOT, out, only=[GUIDE], mastery=MASTERY, reuse=rendered)
    return path


def test_the_package_is_one_an_lms_imports(package):
    assert package.name == f"manyheads-{GUIDE}-cmi5.zip"
    assert cmi5.check_package(package) == []
    with zipfile.ZipFile(package) as z:
        names = set(z.namelist())
        course = z.read("cmi5.xml").decode()
        page = z.read(f"{GUIDE}.html").decode()
    ns = {"c": cmi5.NS}
    root = ET.fromstring(course)
    (au,) = root.findall("c:au", ns)
    assert au.attrib == {
        "id": f"urn:x-manyheads:au:{GUIDE}",
        "moveOn": "CompletedOrPassed",
        "launchMethod": "AnyWindow",
        "masteryScore": "0.5",
    }
    assert au.findtext("c:url", namespaces=ns) == f"{GUIDE}.html"
    assert root.find("c:course/c:title/c:langstring", ns).text == "Writing a chapter"
    # the chapter's page as SCORM's carries it, reporting through the pinned client
    assert '<meta name="mh-lms" content="cmi5">' in page
    assert re.search(r'src="static/cmi5\.[0-9a-f]{12}\.js"', page)
    client = [n for n in names if re.fullmatch(r"static/xapi-cmi5\.[0-9a-f]{12}\.js", n)]
    with zipfile.ZipFile(package) as z:
        assert z.read(client[0]).decode() == assets.cmi5_script()
    for needed in ("pyodide/pyodide.asm.wasm", "py/files.json", "static/lms.js"):
        assert needed in names
    assert "connect-src &#39;self&#39;;" in page  # no origin but the LMS's by default


def test_the_package_check_finds_what_an_lms_would_refuse(package, tmp_path):
    with zipfile.ZipFile(package) as z:
        course = z.read("cmi5.xml")
    broken = {
        b'moveOn="CompletedOrPassed"': b'moveOn="Whenever"',
        f"<url>{GUIDE}.html".encode(): b"<url>https://cdn.example/x.html",
        b'masteryScore="0.5"': b'masteryScore="5"',
    }
    target = tmp_path / "broken.zip"
    with zipfile.ZipFile(package) as src, zipfile.ZipFile(target, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name == "cmi5.xml":
                for old, new in broken.items():
                    data = data.replace(old, new)
            dst.writestr(name, data)
    who = f"urn:x-manyheads:au:{GUIDE}"
    assert cmi5.check_package(target) == [
        f"{who}: its url 'https://cdn.example/x.html' is not a page of the zip",
        f"{who}: moveOn 'Whenever' is not one cmi5 knows",
        f"{who}: masteryScore '5' is not a decimal from 0 to 1",
    ]
    assert course.count(b"<au ") == 1


def test_build_py_scorm_cmi5_writes_one_course_and_names_an_lrs_elsewhere(tmp_path):
    second = GOOD.replace('slug = "test"', 'slug = "second"').replace("order = 1", "order = 2")
    root = project(tmp_path, {"01-a.md": GOOD, "02-b.md": second})
    command = [sys.executable, str(ROOT / "build.py"), "scorm", "--cmi5", "--root", str(root)]
    done = subprocess.run(
        [*command, "--all", "--lrs", "https://LRS.example/xapi/"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    target = root / "manyheads-all-cmi5.zip"
    assert f"wrote {target}" in done.stdout
    assert cmi5.check_package(target) == []
    with zipfile.ZipFile(target) as z:
        course = z.read("cmi5.xml").decode()
        page = z.read("second.html").decode()
    assert re.findall(r'<au id="([^"]+)"', course) == [
        "urn:x-manyheads:au:test",
        "urn:x-manyheads:au:second",
    ]
    assert "masteryScore" not in course  # none given: the LMS's, or none
    # that origin, for connections only
    assert "connect-src &#39;self&#39; https://lrs.example;" in page
    assert page.count("lrs.example") == 1
    for bad, said in (
        (["--mastery", "80"], "error: --mastery 80.0 is not a score from 0 to 1, such as 0.8\n"),
        (
            ["--lrs", "javascript:alert(1)"],
            "error: --lrs 'javascript:alert(1)' is not a web address such as "
            "https://lrs.example.org\n",
        ),
    ):
        done = subprocess.run([*command, *bad], capture_output=True, text=True)
        assert (done.returncode, done.stderr) == (1, said)


# --- the LRS ----------------------------------------------------------------------------------


class LRS:
    """The LMS's side of cmi5 for one registration: launches, tokens, state and statements."""

    def __init__(self, folder, activity):
        self.activity = activity
        self.registration = str(uuid.uuid4())
        self.tokens, self.fetches = {}, {}  # token -> session id; fetch id -> token (or used)
        self.states, self.statements = {}, []  # statements: (session id, statement)
        self.read = []  # the ids of the state documents asked for, in order
        self.stall = None  # an Event: until it is set, the page's reads of its answers wait
        self.refuse = self.refused = 0
        self.lock = threading.Lock()
        lrs = self

        class Serve(Handler):
            def do_GET(self):
                if self.path.startswith("/xapi/"):
                    return lrs.answer(self, "GET")
                return super().do_GET()

            def do_POST(self):
                return lrs.answer(self, "POST")

            def do_PUT(self):
                return lrs.answer(self, "PUT")

        self.server = QuietServer(("127.0.0.1", 0), lambda *a: Serve(*a, directory=str(folder)))
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.server_port}/"

    def launch(self, page=f"{GUIDE}.html", **hostile):
        """The AU's launch address for a new session, as the LMS opens it."""
        session, fetch, token = (str(uuid.uuid4()) for _ in range(3))
        with self.lock:
            self.fetches[fetch], self.tokens[token] = token, session
            self.states[self.key("LMS.LaunchData")] = {
                "contextTemplate": {
                    "contextActivities": {"grouping": [{"id": self.activity}]},
                    "extensions": {SESSION: session},
                },
                "launchMode": "Normal",
                "moveOn": "CompletedOrPassed",
                "masteryScore": MASTERY,
            }
        query = {
            "endpoint": f"{self.base}xapi/",
            "fetch": f"{self.base}fetch/{fetch}",
            "actor": json.dumps(ACTOR),
            "registration": self.registration,
            "activityId": self.activity,
            **hostile,
        }
        return f"{self.base}pkg/{page}?{urlencode(query)}"

    def key(self, state, activity=None, agent=None, registration=None):
        return (
            activity or self.activity,
            json.dumps(agent or ACTOR, sort_keys=True),
            registration or self.registration,
            state,
        )

    def answer(self, req, method):
        url = urlsplit(req.path)
        size = int(req.headers.get("Content-Length") or 0)
        body = req.rfile.read(size) if size else b""
        if method == "POST" and url.path.startswith("/fetch/"):
            with self.lock:
                token = self.fetches.pop(url.path.removeprefix("/fetch/"), None)
            reply = {"auth-token": token} if token else {"error-code": "1", "error-text": "used"}
            return self.send(req, HTTPStatus.OK, reply)
        auth = req.headers.get("Authorization", "").removeprefix("Basic ")
        version = req.headers.get("X-Experience-API-Version", "")
        if auth not in self.tokens or not version.startswith("1.0"):
            return self.send(req, HTTPStatus.UNAUTHORIZED, {"error": "no token"})
        q = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path == "/xapi/activities/state":
            key = self.key(
                q["stateId"], q["activityId"], json.loads(q["agent"]), q.get("registration")
            )
            if method == "GET":
                with self.lock:
                    self.read.append(q["stateId"])
                if self.stall is not None and q["stateId"] == cmi5_state_id():
                    self.stall.wait(60)
                if key not in self.states:
                    return self.send(req, HTTPStatus.NOT_FOUND, {})
                return self.send(req, HTTPStatus.OK, self.states[key])
            with self.lock:
                self.states[key] = json.loads(body)
            return self.send(req, HTTPStatus.NO_CONTENT, None)
        if url.path == "/xapi/agents/profile":
            return self.send(req, HTTPStatus.OK, {"languagePreference": "en"})
        if url.path == "/xapi/statements" and method == "POST":
            with self.lock:
                if self.refuse:
                    self.refuse -= 1
                    self.refused += 1
                    return self.send(req, HTTPStatus.SERVICE_UNAVAILABLE, {"error": "busy"})
                got = json.loads(body)
                got = got if isinstance(got, list) else [got]
                known = {s["id"] for _, s in self.statements}
                for statement in got:
                    if statement.get("id") not in known:
                        self.statements.append((self.tokens[auth], statement))
            return self.send(req, HTTPStatus.OK, [s.get("id") for s in got])
        return self.send(req, HTTPStatus.NOT_FOUND, {})

    @staticmethod
    def send(req, status, data):
        body = b"" if data is None else json.dumps(data).encode()
        req.send_response(status)
        req.send_header("Content-Type", "application/json")
        req.send_header("Content-Length", str(len(body)))
        req.end_headers()
        req.wfile.write(body)

    def verbs(self):
        with self.lock:
            return [s["verb"]["id"].removeprefix(VERBS) for _, s in self.statements]

    def state(self):
        with self.lock:
            return self.states.get(self.key(cmi5_state_id()))


def cmi5_state_id():
    """The id of the page's state document, as static/cmi5.js names it."""
    text = (ROOT / "templates" / "static" / "cmi5.js").read_text()
    return re.search(r'export const STATE = "([^"]+)"', text)[1]


@pytest.fixture
def lrs(package, tmp_path):
    with zipfile.ZipFile(package) as z:
        z.extractall(tmp_path / "pkg")
    server = LRS(tmp_path, cmi5.au_id(GUIDE))
    yield server
    server.server.shutdown()


def invalid_statements(node, statements):
    """[(n, warnings)] for every statement the xAPI validator finds fault with."""
    script = (
        "const v = require('@learninglocker/xapi-validation').default;"
        "const all = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "console.log(JSON.stringify(all.map((s, n) => [n, v(s).map((w) =>"
        " `${w.path.join('.')}: ${w.constructor.name}`)]).filter(([, w]) => w.length)));"
    )
    done = subprocess.run(
        [node, "-e", script],
        input=json.dumps(statements),
        capture_output=True,
        text=True,
        cwd=assets.xapi_validator_dir(),
        check=True,
    )
    return json.loads(done.stdout)


def wait_verbs(lrs, count, verb=None):
    wait_until(
        lambda: len([v for v in lrs.verbs() if verb in (None, v)]) >= count,
        60,
        f"the LRS never had {count} {verb or 'statements'}: {lrs.verbs()}",
    )


@pytest.mark.browser
@pytest.mark.expect_errors(r"status of 404", r"status of 503")
def test_a_session_reports_every_try_resumes_and_scores_as_scorm(node, new_page, lrs):
    """The guide in two sessions: the guess and a wrong try at the check; the LMS launches it
    again (a new session): the answers come back from the state API, the check right (while the
    LRS refuses twice: nothing is lost), the exercise solved, the page left. What the LRS holds
    is every try, in order, valid xAPI, with SCORM's score for the same path."""
    page = new_page()
    release = hold_python(page)  # the first session runs no code
    page.goto(lrs.launch())
    page.locator("html.js").wait_for()
    guess = page.locator("#guess-1")
    guess.get_by_text("About 77%.").click()
    guess.get_by_role("button", name="Commit my guess").click()
    check = page.locator("#check-1")
    check.get_by_text("The page builds, and the figure has no description.").click()
    check.get_by_role("button", name="Check").click()
    wait_until(lambda: "|c1.1.00." in (lrs.state() or {}).get("suspend", ""), 60, "no state kept")
    release()
    page.goto(lrs.launch())  # the LMS's second launch: the first session's page goes
    page.locator("html.py-ready").wait_for(timeout=90_000)
    wait_verbs(lrs, 1, "terminated")
    check = page.locator("#check-1")
    assert check.get_by_label("The page builds, and the figure has no description.").is_checked()
    assert page.locator("#guess-1 [data-your-guess]").inner_text() == "Your guess: About 77%."
    lrs.refuse = 2
    check.get_by_text("The build stops and names the line of the block.").click()
    check.get_by_role("button", name="Check").click()
    page.locator("[data-lms-status]").wait_for()  # said while the LRS refuses
    exercise = page.locator("#exercise-1")
    exercise.locator("textarea").fill(SOLVED)
    exercise.get_by_role("button", name="Run").click()
    exercise.locator(".mh-verdict.right").wait_for(timeout=60_000)
    wait_verbs(lrs, 1, "completed")
    page.locator("[data-lms-status]").wait_for(state="hidden")  # all sent: the line goes
    page.goto("about:blank")
    wait_verbs(lrs, 2, "terminated")

    sessions = {}
    for session, statement in lrs.statements:
        sessions.setdefault(session, []).append(statement)
    first, second = sessions.values()
    verbs = [[s["verb"]["id"].removeprefix(VERBS) for s in ss] for ss in (first, second)]
    assert verbs == [
        ["initialized", "answered", "answered", "terminated"],
        ["initialized", "answered", "answered", "passed", "completed", "terminated"],
    ]
    assert lrs.refused == 2
    everything = first + second
    assert invalid_statements(node, everything) == []
    for session, statements in sessions.items():
        for s in statements:
            context = s["context"]
            assert context["registration"] == lrs.registration
            assert context["extensions"][SESSION] == session  # the template, kept
            assert {"id": lrs.activity} in context["contextActivities"]["grouping"]
            assert s["actor"] == ACTOR
            if s["verb"]["id"] != VERBS + "answered":  # cmi5 defined statements
                assert s["object"]["id"] == lrs.activity
                assert {"id": CMI5} in context["contextActivities"]["category"]
            if s["verb"]["id"] in (VERBS + "passed", VERBS + "completed"):
                assert {"id": MOVE_ON} in context["contextActivities"]["category"]
    answers = [s for s in everything if s["verb"]["id"] == VERBS + "answered"]
    question = f"{lrs.activity}/test/{GUIDE}/question/{GUIDE}."
    assert [
        (
            s["object"]["id"].removeprefix(question),
            s["result"]["response"],
            s["result"].get("success"),
        )
        for s in answers
    ] == [
        ("guess-1", "b", None),
        ("check-1", "b", False),
        ("check-1", "a", True),
        ("exercise-1", SOLVED.replace("\n", " \u21b5 "), True),
    ]
    for s in answers:
        assert re.fullmatch(r"P(\d+D)?T(\d+H)?(\d+M)?([\d.]+S)?", s["result"]["duration"])
    assert answers[1]["object"]["definition"]["correctResponsesPattern"] == ["a"]
    (passed,) = [s for s in everything if s["verb"]["id"] == VERBS + "passed"]
    scaled = ANSWER_EVERYTHING_SCORE / 100  # what SCORM 1.2 records for this path
    assert passed["result"]["score"] == {
        "scaled": scaled,
        "raw": ANSWER_EVERYTHING_SCORE,
        "min": 0,
        "max": 100,
    }
    assert passed["result"]["success"] is True
    assert (
        passed["context"]["extensions"][
            "https://w3id.org/xapi/cmi5/context/extensions/masteryscore"
        ]
        == MASTERY
    )
    state = lrs.state()
    assert state["completed"] is True
    assert "c1.2.01.0,1" in state["suspend"].split("|")  # as SCORM's suspend data records it


@pytest.mark.browser
@pytest.mark.expect_errors(
    r"Connecting to 'http://127\.0\.0\.1:9/fetch' violates .*\"connect-src 'self'\"",
    r"status of 401",  # the fetch URL used already: no token, refused
)
def test_hostile_launch_parameters_leave_the_chapter_working(new_page, lrs):
    """Launch addresses an LMS would never send, and one an attacker might: each starts no
    session (one line says why, as text) and the chapter works as on the site. The one good
    launch, left while it still reads its answers back, ends its session all the same."""
    elsewhere = "http://127.0.0.1:9/"  # another origin: the page's policy refuses it
    replayed = lrs.launch()
    cases = [
        ({"endpoint": "javascript:alert(1)//"}, 'the launch parameter "endpoint" is not a web'),
        ({"fetch": "data:text/html,<b>x</b>"}, 'the launch parameter "fetch" is not a web'),
        ({"actor": json.dumps({"name": "x" * 5000})}, '"actor" is missing or too long'),
        ({"actor": '{"mbox": "mailto:a@b.c"}'}, '"actor" is not an agent with an account'),
        ({"registration": "<img src=x onerror=alert(1)>"}, '"registration" is not a UUID'),
        ({"activityId": "x" * 5000}, '"activityId" is missing or too long'),
        ({"endpoint": elsewhere, "fetch": elsewhere + "fetch"}, "did not start this session"),
        (None, "did not start this session"),  # a fetch URL used already: no token
    ]
    page = new_page()
    hold_python(page)
    lrs.stall = threading.Event()
    page.goto(replayed)
    # its session started (it reads the answers kept, after "initialized"), then the page goes
    wait_until(lambda: cmi5_state_id() in lrs.read, 60, "the launch never read its answers")
    for query, said in cases:
        page.goto(lrs.launch(**query) if query else replayed)
        lrs.stall.set()  # the answers kept come back to a page gone
        page.locator("html.js").wait_for()
        line = page.locator("[data-lms-status]")
        line.wait_for()
        assert said in line.inner_text()
        assert line.locator("*").count() == 0  # text only
        check = page.locator("#check-1")
        check.get_by_text("The build stops and names the line of the block.").click()
        check.get_by_role("button", name="Check").click()
        assert check.locator(".mh-feedback.right").is_visible()
        assert page.locator("[data-results] tbody tr").count() == 1
    # the one good launch's session only: nothing else reached the LRS
    wait_until(lambda: "terminated" in lrs.verbs(), 60, "the good launch's session never ended")
    assert lrs.verbs() == ["initialized", "terminated"]
