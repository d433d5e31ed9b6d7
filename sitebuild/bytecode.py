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


def _key():
    """What the bytecode is made from: the pinned runtime, AHEAD and the two scripts."""
    h = hashlib.sha256(json.dumps([assets.PUBLISHED_SHA256, AHEAD]).encode())
    for name in SCRIPTS:
        h.update((HERE / name).read_bytes())
    return h.hexdigest()[:16]


def bytecode_dir():
    """The folder in the download cache holding FILES for the current pins, made on first use
    (about 5 s; one build at a time makes it, the others wait and take it)."""
    out = assets.cache_dir() / f"bytecode-{_key()}"
    stamp = out / ".made"
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / ".bytecode.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.exists():
            return out
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
        (tmp / ".made").write_text(json.dumps({f: assets.sha256(tmp / f) for f in FILES}))
        shutil.rmtree(out, ignore_errors=True)
        tmp.rename(out)
    return out


def copy_bytecode(site):
    """SITE/bytecode/HASH/ holding FILES, each checked against what was made; -> that folder's
    path from the site's top."""
    src = bytecode_dir()
    made = json.loads((src / ".made").read_text())
    folder = "bytecode/" + hashlib.sha256("".join(made[f] for f in FILES).encode()).hexdigest()[:12]
    (site / folder).mkdir(parents=True)
    for name in FILES:
        assets._copy(src / name, site / folder / name)
        assets.check(f"{site / folder / name}", assets.sha256(site / folder / name), made[name])
    return folder + "/"
