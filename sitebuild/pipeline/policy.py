"""The Content-Security-Policy every page carries: its own origin only, 'wasm-unsafe-eval',
the least WebAssembly needs (without it Pyodide never starts), and the one inline <style> and
the one inline <script> every page holds, each allowed by its hash (sitebuild/pipeline/styles.py,
templates/early.js: a few lines that keep a tap made before the page's own script runs, for
it runs as soon as the <head> is read) and no other inline script or style.

Pages carry it in a <meta> tag so it holds on any static host; `build.py serve` and the
tests also send it as a header. The Python worker is started from a blob: URL (a one-line
module importing static/worker.js), so it inherits the page's policy, the <meta> one
included, on a host that sends no headers too: a worker started from its own http(s) URL
would take its policy from its own response instead. Hence worker-src allows blob:, which
lets only the site's own scripts (no other script runs on a page) start a worker, and every
such worker is held to this same policy.

Framing is the one rule a <meta> policy cannot carry (browsers ignore frame-ancestors there):
a host that sends headers adds it (`framing`), and `build.py serve` does. Chapter pages may
be framed only by the site itself, so that no other page can show one invisibly and steer the
reader's clicks; embed/ pages exist to be framed by course pages, by EMBED_ANCESTORS.
"""

from pathlib import Path

from . import styles

ROOT = Path(__file__).resolve().parents[2]


def early_script(root=ROOT):
    """The text of the <script> in every page's <head> (templates/early.js)."""
    return (Path(root) / "templates" / "early.js").read_text("utf-8")


def content_security_policy(pyodide_url="pyodide/", css=None, script=None, lrs=None):
    """The policy as one header value for pages whose <style> holds CSS and whose inline
    <script> holds SCRIPT (by default, this checkout's templates/styles/ and early.js); a CDN
    runtime adds that one origin for scripts and fetches. LRS, an origin, is the one a cmi5
    package's pages may also send statements to (sitebuild/lms/cmi5.py): connect-src only."""
    css = styles.text() if css is None else css
    script = early_script() if script is None else script
    extra = ""
    if "://" in pyodide_url:
        origin = "/".join(pyodide_url.split("/")[:3])
        extra = f" {origin}"
    return "; ".join(
        [
            "default-src 'self'",
            f"script-src 'self' 'wasm-unsafe-eval' {styles.source(script)}{extra}",
            "worker-src 'self' blob:",
            f"connect-src 'self'{extra}{f' {lrs}' if lrs else ''}",
            "img-src 'self'",
            f"style-src 'self' {styles.source(css)}",
            "font-src 'self'",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
        ]
    )


# who may frame the embed/ pages: any page (a course site, an LMS); a deployer who knows the
# course sites' origins names them instead (README, "Deploying")
EMBED_ANCESTORS = "*"


def framing(path):
    """The frame-ancestors rule for the page at URL path PATH (under any sub-path)."""
    embed = "/embed/" in "/" + path.split("?", 1)[0].split("#", 1)[0].lstrip("/")
    return "frame-ancestors " + (EMBED_ANCESTORS if embed else "'self'")
