"""Every page's styles, written into its <head> as one <style> instead of linked stylesheets.

A linked stylesheet holds a page's first paint until it has arrived: one more round trip after
the page itself on a reader's network, and 30–60 ms of a 160–200 ms first paint even from the
loopback (bench/RESULTS.md). Inline, the page paints as soon as its first figure is parsed.
The policy (sitebuild/pipeline/policy.py) allows this one <style> by the hash of its text and
no other.
"""

import base64
import hashlib
from pathlib import Path

from .chapters import AuthorError

ROOT = Path(__file__).resolve().parents[2]
# the files of templates/styles/, in their cascade order: a later rule wins a tie
CASCADE = (
    "site.css",
    "realheads.css",
    "charmodel.css",
    "onehead.css",
    "copyheads.css",
    "whathead.css",
    "class.css",
)


def text(root=ROOT):
    """The <style> element's text: the files of templates/styles/ one after another, in their
    cascade order. A file missing from CASCADE stops the build (nothing would apply it)."""
    folder = Path(root) / "templates" / "styles"
    stray = sorted({p.name for p in folder.glob("*.css")} - set(CASCADE))
    if stray:
        raise AuthorError(
            f"templates/styles/{stray[0]}",
            1,
            "is not in any page: add its name to CASCADE in sitebuild/pipeline/styles.py, after "
            "the files whose rules it may override",
        )
    return "".join((folder / name).read_text("utf-8") for name in CASCADE)


def source(text):
    """The policy's source expression that allows exactly the <style> (or <script>) holding
    TEXT."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode()}'"
