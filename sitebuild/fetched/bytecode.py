"""Bytecode compiled ahead for the reader's Python. Pyodide's standard library and numpy come as
source, and every start compiled each module it imports: most of the time a chapter's Python
takes to be ready (bench/RESULTS.md). So the build compiles, once per machine and pins, inside the
pinned Pyodide itself (Node runs it: bytecode.mjs, bytecode_in_pyodide.py), the modules a start
imports: Pyodide's own, and those of AHEAD with theirs. The site serves them from
bytecode/HASH/, named by their content so that a reader's copy survives the site's updates
(static/pyruntime.js loads them); the standard library's source zip is then left out of the
site's pyodide/."""

import fcntl
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

from . import assets

# the standard-library and numpy modules the site's Python imports (tests/test_layout.py checks
# that every import of the shipped Python is here); what they import comes with them
AHEAD = (
    "ast", "collections", "collections.abc", "contextlib", "csv", "dataclasses", "decimal",
    "functools", "hashlib", "html", "html.parser", "importlib", "importlib.util", "inspect", "io",
    "itertools", "json", "linecache", "math", "numpy", "numpy.random", "os", "pathlib", "re",
    "struct", "sys", "textwrap", "time", "traceback", "unicodedata", "urllib.parse",
    "xml.etree.ElementTree", "zlib",
)  # fmt: skip
FILES = ("python_stdlib.zip", "numpy.zip")
HERE = Path(__file__).parent
SCRIPTS = ("bytecode.mjs", "bytecode_in_pyodide.py")
# what compiling ahead makes of the runtime's pins, AHEAD and SCRIPTS (the same inputs make the
# same bytes): the files in the cache are checked against these at every build, never against
# a record in the cache, which whoever can change the cache can rewrite too. A change to those
# inputs makes other files: the build then names their hashes, to be put here.
MADE_SHA256 = {
    "python_stdlib.zip": "91f7f4f2266fc3b24f6e031261b39d871b59935c39f1257cc1d6bce9beb75c78",
    "numpy.zip": "32eae53d2f3e27c0c323bdc760678a9b6df0f137dacf927b174fffc80728f31a",
}


def _key():
    """What the bytecode is made from: the pinned runtime, AHEAD and the two scripts."""
    h = hashlib.sha256(json.dumps([assets.PUBLISHED_SHA256, AHEAD]).encode())
    for name in SCRIPTS:
        h.update((HERE / name).read_bytes())
    return h.hexdigest()[:16]


def _as_pinned(folder):
    """Whether FOLDER holds FILES as MADE_SHA256 pins them."""
    return all(
        (folder / name).is_file() and assets.sha256(folder / name) == pinned
        for name, pinned in MADE_SHA256.items()
    )


def bytecode_dir():
    """The folder in the download cache holding FILES for the current pins, made on first use
    (about 5 s; one build at a time makes it, the others wait and take it), and made again when
    its files are not the ones MADE_SHA256 pins (changed after they were made)."""
    out = assets.cache_dir() / f"bytecode-{_key()}"
    stamp = out / ".made"  # written last: the folder is whole
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / ".bytecode.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.exists():
            if _as_pinned(out):
                return out
            print(
                f"build.py: {out} is not the bytecode sitebuild/fetched/bytecode.py pins; "
                "compiling again",
                file=sys.stderr,
            )
        runtime = assets.runtime_dir()
        for name, pinned in assets.PUBLISHED_SHA256.items():  # what is compiled is the pinned
            assets.check(f"{runtime / name}", assets.sha256(runtime / name), pinned)
        tmp = out.with_name(out.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        command = ["node", str(HERE / "bytecode.mjs"), str(runtime), str(tmp), *AHEAD]
        try:
            subprocess.run(command, check=True, capture_output=True, text=True)
        except FileNotFoundError:
            raise assets.AssetError("compiling Python ahead needs Node: install nodejs") from None
        except subprocess.CalledProcessError as e:
            raise assets.AssetError(
                f"compiling Python ahead failed ({' '.join(command)}):\n{e.stderr.strip()}"
            ) from None
        made = {f: assets.sha256(tmp / f) if (tmp / f).is_file() else None for f in FILES}
        if made != MADE_SHA256:
            shutil.rmtree(tmp, ignore_errors=True)
            raise assets.AssetError(
                f"compiling Python ahead made {json.dumps(made)}, not the files "
                "sitebuild/fetched/bytecode.py pins in MADE_SHA256; after a change to AHEAD, "
                f"{' or '.join(SCRIPTS)} or the runtime's pins, put these hashes there"
            )
        (tmp / ".made").write_text(json.dumps(made))
        shutil.rmtree(out, ignore_errors=True)
        tmp.rename(out)
    return out


def copy_bytecode(site):
    """SITE/bytecode/HASH/ holding FILES, each checked against MADE_SHA256; -> that folder's
    path from the site's top."""
    src = bytecode_dir()
    joined = "".join(MADE_SHA256[f] for f in FILES)
    folder = "bytecode/" + hashlib.sha256(joined.encode()).hexdigest()[:12]
    (site / folder).mkdir(parents=True)
    for name in FILES:
        assets.copy_file(src / name, site / folder / name)
        assets.check(
            f"{site / folder / name}", assets.sha256(site / folder / name), MADE_SHA256[name]
        )
    return folder + "/"
