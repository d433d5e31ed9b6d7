"""Chapters rendered by an earlier build, reused by the next while nothing they depend on changed:
what lets `build.py serve` rebuild a one-chapter edit in a fraction of a whole build.

Rendering the chapters (running their figures, cells and first taps) is most of a build. A
chapter's rendering depends on its own file, on the meta of the chapter after it (its recap
links there) and on the code and templates: every file of templates/, of the toymodels
package (every folder of it, data included) and of sitebuild/. So a rendered chapter is kept
under a key of all that (each file by its path, size and modification time), and a build
given the folder (`build.py build --reuse DIR`, which serve passes) renders only the chapters
whose key changed; any doubt, such as an edited template or model, renders them all. Every
other step of the build runs as always, so the home page, the neighbours' links, the link
check and the service worker stay whole. A chapter renders the same for the site and for an
LMS, so SCORM and cmi5 packages take a folder too. Serve uses it, and the test suite for its
builds of the project's own chapters; `build.py build` alone always renders every chapter.
Builds in several processes may share a folder: each file is written whole, then renamed.
"""

import dataclasses
import hashlib
import json
import os
import pickle
import sys
from pathlib import Path

import toymodels

SITEBUILD = Path(__file__).resolve().parents[1]


def key(chapter, following, code):
    """What CHAPTER's rendering depends on, as a hash; CODE is `code(root)`."""
    h = hashlib.sha256()
    h.update(json.dumps([sys.version, chapter.path, following], default=str).encode())
    h.update(chapter.source.encode("utf-8"))
    h.update(code.encode())
    return h.hexdigest()


def code(root):
    """A hash of every file of templates/, toymodels/ and sitebuild/: real path, size and
    modification time (read once a build: it walks the folders). By real path, so that a
    project whose folders link to another's shares its renderings."""
    return hashlib.sha256(_code(root)).hexdigest()


def _code(root):
    folders = [Path(root) / "templates", Path(root) / "toymodels", SITEBUILD]
    folders += [Path(p) for p in toymodels.__path__]
    seen = []
    for folder in folders:
        for top, dirs, files in os.walk(os.path.realpath(folder), followlinks=True):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                stat = os.stat(os.path.join(top, name))
                seen.append(f"{top}/{name}\0{stat.st_size}\0{stat.st_mtime_ns}")
    return "\n".join(seen).encode()


def load(folder, chapter, k):
    """(the Page, its warnings) kept for CHAPTER under key K, or None. The Page is given the
    chapter read by this build, which the build's other steps compare by identity."""
    kept = _held.get(_file(folder, chapter))
    if kept is None or kept["key"] != k:
        try:
            kept = pickle.loads(_file(folder, chapter).read_bytes())
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError):
            return None
    if kept.get("key") != k:
        return None
    _held[_file(folder, chapter)] = kept
    return dataclasses.replace(kept["page"], chapter=chapter), kept["notes"]


# what this process stored or loaded last, by file: a process that builds again (serve's
# builder) takes its chapters from memory instead of unpickling megabytes
_held = {}


def store(folder, chapter, k, page, notes):
    """Keep PAGE and its NOTES (warnings) for CHAPTER under key K."""
    path = _file(folder, chapter)
    _held[path] = {"key": k, "page": page, "notes": notes}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(pickle.dumps({"key": k, "page": page, "notes": notes}))
    tmp.replace(path)


def _file(folder, chapter):
    return Path(folder) / (hashlib.sha256(chapter.path.encode()).hexdigest()[:16] + ".pickle")
