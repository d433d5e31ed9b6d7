"""Accessibility (axe-core, keyboard, focus, motion), the security policy, and every figure's SVG
download, on every page of the built site. The chapters' pages with Python ready are opened
once, by the axe check, and borrowed by the downloads and the keyboard walk, in that order.

Every figure's SVG download stands alone: saved from the page as a reader saves it, then opened
by itself in Chromium (tests/support/svgalone.py), it looks like the figure on the page: no
large dark areas where the page has light fills, the page's words and the numbers of its tables
and pictures in it, every line of text inside the picture, and bars in the rows they belong
to. Its name says the chapter, the figure and its state, in safe characters."""

import base64
import contextlib
import hashlib
import re

import pytest
from conftest import ROOT, hold_python, open_ready
from playwright.sync_api import Error, expect
from support.svgalone import CONTROLS, NAME, PAGE_TEXT, alone, blank, download_svg, words

from sitebuild.fetched import assets
from sitebuild.pipeline import styles
from sitebuild.pipeline.policy import content_security_policy, framing

pytestmark = pytest.mark.browser

# its tests walk every page of the site, each worth several browser tests in the order
# workers take modules (conftest.py), which starts it early rather than last
SCHEDULE_WEIGHT = 40
SERIOUS = ("serious", "critical")


@pytest.fixture(scope="session")
def axe():
    return assets.axe_script()


def pages(site):
    return sorted(p.name for p in site.glob("*.html"))


def chapters(site):
    return [name for name in pages(site) if "data-figure=" in (site / name).read_text()]


# the rules that read colours: the dark scheme's styles set colours alone (custom properties
# under prefers-color-scheme), so in dark only these can find what light did not
COLOUR_RULES = ["color-contrast", "link-in-text-block"]
FIGURES = "figure[data-figure]"


def axe_violations(page, axe=None, rules=None, within=None):
    """The serious violations axe-core finds in the page as it is now (AXE: axe-core's script,
    to load first where the page has not loaded it), by every rule or those named in RULES, in
    the whole page or in the elements the selector WITHIN matches."""
    if axe:
        page.evaluate(axe)
    options = {"resultTypes": ["violations"]}
    if rules:
        options["runOnly"] = {"type": "rule", "values": rules}
    context = {"include": [within]} if within else None
    found = page.evaluate(
        "([context, options]) => axe.run(context ?? document, options)", [context, options]
    )["violations"]
    return [v for v in found if v["impact"] in SERIOUS]


def describe(violations):
    return "\n".join(
        f"{v['impact']}: {v['id']}: {v['help']}\n  "
        + "\n  ".join(
            n["html"][:160] + " -> " + n["failureSummary"].replace("\n", " ")
            for n in v["nodes"][:6]
        )
        for v in violations
    )


def schemes_checked(page, where, within=None):
    """AXE's serious violations in PAGE (or in what WITHIN selects) in light by every rule, then
    in dark by those that read colours (then the page's own scheme again), each described under
    WHERE."""
    problems = []
    for scheme, rules in (("light", None), ("dark", COLOUR_RULES)):
        page.emulate_media(color_scheme=scheme)
        found = axe_violations(page, rules=rules, within=within)
        if found:
            problems.append(f"{where}, {scheme}:\n{describe(found)}")
    page.emulate_media(color_scheme="null")
    return problems


def test_axe_finds_nothing_serious(new_page, ready_page, site, base_url, axe):
    """Every page in light and dark, before Python (held back) and, for a chapter, its figures
    after (Python redraws only them): its page with Python ready is the one the keyboard test
    below walks."""
    problems = []
    page = new_page(viewport={"width": 1200, "height": 900})  # one page visits each, held back
    hold_python(page)
    for name in pages(site):
        page.goto(base_url + name, wait_until="domcontentloaded")
        page.evaluate(axe)
        assert page.locator("html.py-ready").count() == 0, name  # still held back
        problems += schemes_checked(page, f"{name}, before Python")
        if name in chapters(site):
            ready = ready_page(name)
            if not ready.evaluate("'axe' in window"):
                ready.evaluate(axe)
            problems += schemes_checked(ready, f"{name}, after Python", FIGURES)
    assert not problems, "\n\n".join(problems)


CHAPTERS = sorted(re.sub(r"^\d+-", "", p.stem) for p in (ROOT / "chapters").glob("*.md"))
FOCUS = """() => { const el = document.activeElement; const s = getComputedStyle(el);
    return { inFigure: !!el.closest("figure[data-figure]"),
             inGroup: !!el.closest("figure [data-roving]"),
             tag: el.tagName, text: el.textContent.slice(0, 30),
             visible: s.outlineStyle !== "none" && parseFloat(s.outlineWidth) >= 2 }; }"""


def walk_into_figure_one(page, chapter):
    """Tab from the top of CHAPTER's page until a control group of Figure 1 has focus, every
    focus visible on the way; then an arrow and Enter there change the figure."""
    invisible, info = [], {}
    for _ in range(100):
        page.keyboard.press("Tab")
        info = page.evaluate(FOCUS)
        if not info["visible"]:
            invisible.append(info)
        if info["inGroup"]:
            break
    assert info["inGroup"], f"{chapter}: Tab never reached a control group of Figure 1"
    assert invisible == [], f"{chapter}: focus not visible on {invisible}"
    before = page.url
    page.keyboard.press("ArrowRight")
    assert page.evaluate(FOCUS)["visible"]
    page.keyboard.press("Enter")
    expect(page, f"{chapter}: arrow and Enter in Figure 1 changed nothing").not_to_have_url(before)


def every_svg_stands_alone(page, chapter, empty):
    """Each figure of CHAPTER's PAGE saved as SVG in the state it is in, drawn alone in the
    blank page EMPTY, looks as the figure does on the page."""
    figures = page.eval_on_selector_all(
        "figure[data-figure]:has([data-download])", "fs => fs.map((f) => f.id)"
    )
    assert figures, f"{chapter} offers no download"
    for fid in figures:
        figure = page.locator(f"#{fid}")
        shown = figure.evaluate(PAGE_TEXT)
        controls = figure.locator(CONTROLS)  # not in the picture: its state is written there
        shot = figure.screenshot(mask=[controls], mask_color="#ffffff")
        name, svg = download_svg(page, fid)
        figure.locator("[data-download]").click()  # the panel closed again
        got = alone(empty, svg, shot)
        where = f"{chapter}#{fid} ({name})"
        # the page's light fills stay light: no large dark areas the page does not have
        assert got["file"]["dark"] <= 2 * got["page"]["dark"] + 0.03, (where, got["file"]["dark"])
        # the colours of the page's picture are in the file's (ignoring a share under 1%)
        page_colours = {k for k, v in got["page"]["bins"].items() if v > 0.01}
        file_colours = {k for k, v in got["file"]["bins"].items() if v > 0.0005}
        assert page_colours <= file_colours, (where, page_colours - file_colours)
        # every word the figure shows, every number and label its tables and pictures hold
        in_file = " ".join(got["texts"])
        missing = sorted(set(words(shown["words"])) - set(words(got["texts"])))
        assert not missing, (where, missing)
        for text in shown["pictures"] + shown["cells"]:
            assert " ".join(text.split()) in in_file, (where, text)
        # and all of it inside the picture
        assert not got["outside"], (where, got["outside"])
        # named by the chapter, the figure's number (or id) and its state, in safe characters
        assert NAME.fullmatch(name) and len(name) <= 124, name
        assert re.match(rf"{chapter}-(figure-\d+|{fid})(-|\.svg$)", name), name


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_keyboard_reaches_figure_one_and_every_svg_download_stands_alone(
    chapter, ready_page, new_page, base_url
):
    """On the chapter's page the axe check opened with Python ready: the keyboard walk (its
    taps change the page's address, so the page is not lent again), then every figure's SVG."""
    page = ready_page(f"{chapter}.html", changes=True)
    walk_into_figure_one(page, chapter)
    page.wait_for_function("!document.querySelector('[aria-busy]')")  # Figure 1 drawn anew
    every_svg_stands_alone(page, chapter, blank(new_page, base_url))


def test_one_heads_bars_sit_in_their_rows_and_its_keys_are_whole(ready_page, new_page, base_url):
    page = ready_page("one-head.html", changes=True)  # its panel filled
    figure = page.locator("#move-query")
    keys = figure.locator("tbody td:nth-child(2)").all_inner_texts()
    name, svg = download_svg(page, "move-query")
    assert name == "one-head-figure-2-angle-0-length-2.svg"
    got = alone(blank(new_page, base_url), svg, figure.screenshot())
    assert len(keys) == 4 and all(k in got["texts"] for k in keys), (keys, got["texts"])
    # each bar beside its own row's word (the values' square, with the same words at its
    # corners, is drawn after the table)
    words = [(text, y) for text, y in got["rows"] if text in ("Puff", "found", "a", "key")]
    assert len(got["bars"]) == 4
    beside = [next((t for t, y in words if abs(y - bar) < 8), None) for bar in got["bars"]]
    assert beside == ["Puff", "found", "a", "key"], (words, got["bars"])


def test_reduced_motion_turns_transitions_off(new_page, base_url):
    durations = {}
    for motion in ("no-preference", "reduce"):
        page = new_page(reduced_motion=motion)
        page.goto(base_url + "many-heads.html")
        # a figure waiting for Python fades its body (a drawn answer itself never animates)
        durations[motion] = page.evaluate("""() => {
          const figure = document.querySelector("figure[data-figure]");
          figure.setAttribute("aria-busy", "true");
          return getComputedStyle(figure.querySelector(".mh-body")).transitionDuration;
        }""")
        page.close()
    assert durations == {"no-preference": "0.2s", "reduce": "0s"}


def test_every_page_carries_the_policy_and_integrity(site, base_url):
    import urllib.request

    policy = content_security_policy()
    assert "'unsafe-eval'" not in policy and "'unsafe-inline'" not in policy
    css = "".join((ROOT / "templates/styles" / name).read_text() for name in styles.CASCADE)
    allowed = base64.b64encode(hashlib.sha256(css.encode()).digest()).decode()
    assert f"style-src 'self' 'sha256-{allowed}';" in policy
    early = (ROOT / "templates/early.js").read_text()
    script = base64.b64encode(hashlib.sha256(early.encode()).digest()).decode()
    assert f"script-src 'self' 'wasm-unsafe-eval' 'sha256-{script}';" in policy
    for name in pages(site):
        html = (site / name).read_text()
        meta = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html)
        assert meta and meta.group(1).replace("&#39;", "'") == policy, name
        # one inline <script>, the one the policy allows by its hash: early.js, which keeps taps
        inline = re.findall(r"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", html, re.S)
        assert inline == [early], name
        assert not re.search(r"<[^>]+\s(?:style|on[a-z]+)=", html), name
        # one <style>, the one the policy allows by its hash: the styles, inline
        assert re.findall(r"<style>(.*?)</style>", html, re.S) == [css], name
        tags = re.findall(r'<script[^>]*\bsrc=[^>]*>|<link rel="stylesheet"[^>]*>', html)
        assert len(tags) == 2 and [p.name for p in (site / "static").glob("*.css")] == [
            re.search(r"static/(nojs\.\w+\.css)", html)[1]
        ], (name, tags)  # the stylesheet for a browser without scripts, and main.js
        for tag in tags:
            path = re.search(r'(?:src|href)="(static/[^"]+)"', tag).group(1)
            digest = base64.b64encode(hashlib.sha384((site / path).read_bytes()).digest()).decode()
            assert f'integrity="sha384-{digest}"' in tag, (name, tag)
    # the header is the same policy, and the framing rule a <meta> policy cannot carry
    with urllib.request.urlopen(base_url + "static/worker.js") as r:
        assert r.headers["Content-Security-Policy"] == f"{policy}; {framing('static/worker.js')}"


VIOLATIONS = """
    window.__violations = [];
    document.addEventListener("securitypolicyviolation",
        (e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
"""


# the refused script and style are reported on the console, as they should be
@pytest.mark.expect_errors(
    r"^Executing inline script violates the following Content Security Policy",
    r"^Applying inline style violates the following Content Security Policy",
)
def test_a_whole_session_breaks_no_rule_and_inline_script_is_refused(page, base_url):
    page.add_init_script(VIOLATIONS)
    open_ready(page, base_url + "many-heads.html")
    page.get_by_role("button", name="kept", exact=True).click()
    page.wait_for_selector(".mh-shares caption:has-text('“kept”')")
    page.locator(".mh-step-link", has_text="Scores.").click()
    page.wait_for_selector("#three-heads td.num")
    assert page.evaluate("window.__violations") == []
    with contextlib.suppress(Error):  # add_script_tag fails: the policy refuses the script
        page.add_script_tag(content="window.__inline = 1")
    assert page.evaluate("window.__inline") is None
    assert page.evaluate("window.__violations")[0].startswith("script-src-elem inline")
    # the page's own <style> is allowed by its hash, and no other
    with contextlib.suppress(Error):
        page.add_style_tag(content="body { color: rgb(255, 0, 0) }")
    assert page.evaluate("getComputedStyle(document.body).color") != "rgb(255, 0, 0)"
    refused = {v.split()[0] for v in page.evaluate("window.__violations")}
    assert refused == {"script-src-elem", "style-src-elem"}


def test_a_page_is_styled_before_any_other_file_comes(page, base_url):
    """The styles are in the page: its first paint waits for no stylesheet."""
    fetched = []
    page.on("request", lambda r: fetched.append(r.url))
    page.goto(base_url + "many-heads.html")
    figure = page.locator("figure[data-figure]").first
    assert figure.evaluate("f => getComputedStyle(f).borderTopStyle") == "solid"
    assert figure.evaluate("f => getComputedStyle(f).getPropertyValue('--accent')") != ""
    assert not [url for url in fetched if url.endswith(".css")]


def refused_wasm(message):
    return message.type == "warning" and re.search(
        r"CompileError: .*violates the following Content Security policy", message.text
    )


def test_without_wasm_unsafe_eval_python_gives_up_with_a_message(page, base_url):
    def strip(route):
        response = route.fetch()
        headers = {k: v.replace(" 'wasm-unsafe-eval'", "") for k, v in response.headers.items()}
        body = response.body()
        if "html" in headers.get("content-type", ""):
            body = body.replace(b" &#39;wasm-unsafe-eval&#39;", b"")
        route.fulfill(response=response, headers=headers, body=body)

    page.route("**/*", strip)
    page.clock.install()
    # the worker's runtime is refused by the policy (Pyodide warns, and then waits for ever);
    # only then does the test let the page's clock run past the 90 seconds it gives Python
    with page.context.expect_console_message(refused_wasm, timeout=90_000):
        page.goto(base_url + "many-heads.html")
    page.wait_for_selector("[data-pystatus-text]:has-text('Loading')")
    page.clock.fast_forward("02:00")
    page.wait_for_selector("[data-pystatus].is-off", timeout=10_000)
    assert page.locator("[data-pystatus-text]").inner_text() == (
        "Interaction is off: Python did not start within 90 seconds. The figures show their first "
        "state."
    )
    assert page.locator("#three-heads .mh-grid").count() == 3
