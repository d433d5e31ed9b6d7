"""bench/RESULTS.md: the bench's latest measurements, written by the bench, never by hand.

Each part of the bench (the chapters, the character model in Pyodide, the dense maps, the
reader's own sentence, training, a clean clone's CI) writes its own section, headed by when it
ran, on which commit and machine, and the load average before and after it. A run rewrites the
sections of the parts it measured and keeps the others, so a partial run (`python bench/run.py
live`) updates its own section alone. Older runs are in git's history: `git log -p
bench/RESULTS.md`. Only the standard library, so that `bench/ci.py` runs without the venv.
"""

import datetime
import os
import platform
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PATH = ROOT / "bench" / "RESULTS.md"
# every section, in the order the file holds them: its key and its title
SECTIONS = {
    "chapters": "Chapters: loads and taps (`python bench/run.py chapters`)",
    "firstvisit": "A first visit's downloads (`python bench/run.py firstvisit`)",
    "pyodide": "The character model in Pyodide (`python bench/run.py pyodide`)",
    "ratio": "CPython to Pyodide (`python bench/run.py ratio`)",
    "dense": "Dense maps (`python bench/run.py dense`, or `python bench/allheads.py`)",
    "live": "Your own sentence in all-MiniLM-L6-v2 (`python bench/run.py live`)",
    "smollm2": "Your own text in SmolLM2-135M-Instruct (`python bench/run.py smollm2`)",
    "whathead": "Your own pair in SmolLM2, What a head does (`python bench/run.py whathead`)",
    "ownfile": "Your own GGUF file (`python bench/run.py ownfile`)",
    "why": "Why a head looks there, your own text in SmolLM2 (`python bench/run.py why`)",
    "train": "Train it yourself (`python bench/run.py train`)",
    "serve": "A chapter's edit under `build.py serve` (`python bench/run.py serve`)",
    "ci": "A clean clone's CI, `bash .ci/run` (`make ci-time`)",
    # no part writes this one: measurements once quoted in docs/ and code, kept as they were
    "history": "Earlier measurements, once quoted in docs/ and the code",
}
MARK = "<!-- bench section: {} -->"
HEAD = """# Bench results

Written by the bench (`make bench`, `python bench/run.py [PART …]`, `make ci-time`), never by
hand: each section is the latest run of its part, with its date, commit, machine and load
average. Older runs are in git's history (`git log -p bench/RESULTS.md`); what the numbers mean
and the targets they are held to are in docs/performance.md. The last section, which no part
writes, keeps the measurements docs/ and the code once quoted, as they were.
"""


def load_average():
    """The load average over 1, 5 and 15 minutes."""
    return [round(x, 2) for x in os.getloadavg()]


def commit(root=ROOT):
    """HEAD's short hash, and whether the work tree differs from it (tracked files only)."""
    git = ["git", "-C", str(root)]
    try:
        head = subprocess.run(
            [*git, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        changed = subprocess.run(
            [*git, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head} with uncommitted changes" if changed else head


def machine():
    return f"{platform.platform()}, {os.cpu_count()} CPUs"


def busy(before, after, cpus=None):
    """A sentence when the machine was busy (a 1- or 5-minute load average above its CPU count,
    before or after), else ''."""
    cpus = cpus or os.cpu_count()
    worst = max(before[0], after[0], before[1], after[1])
    if worst <= cpus:
        return ""
    return (
        f"**The machine was busy**: load average up to {worst:.1f} on {cpus} CPUs; timings are "
        "slower than on an idle machine."
    )


def heading(before, after, when=None, at=None, on=None, extra=""):
    """The line under a section's title: when (UTC), commit AT, machine ON (and EXTRA, such as
    the browser), the load average BEFORE and AFTER the part ran, and whether that was busy."""
    when = when or datetime.datetime.now(datetime.UTC)
    line = (
        f"Run {when:%Y-%m-%d %H:%M} UTC on commit {at or commit()}, {on or machine()}"
        + (f", {extra}" if extra else "")
        + ". Load average (1, 5, 15 min): "
        + f"{' '.join(map(str, before))} before, {' '.join(map(str, after))} after."
    )
    note = busy(before, after)
    return line + (f" {note}" if note else "")


def sections(text):
    """RESULTS.md's text -> {key: the section's text, its mark included}."""
    found = {}
    parts = re.split(r"^(?=<!-- bench section: [\w-]+ -->$)", text, flags=re.M)
    for part in parts:
        m = re.match(r"<!-- bench section: ([\w-]+) -->$", part, flags=re.M)
        if m:
            found[m[1]] = part.rstrip() + "\n"
    return found


def write(key, body, before, after, path=PATH, **meta):
    """Put the section KEY (BODY, markdown, under its title and heading line) into PATH, keeping
    every other section as it was; -> the section's text. META goes to heading()."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    found = sections(text)
    section = (
        f"{MARK.format(key)}\n## {SECTIONS[key]}\n\n"
        f"{heading(before, after, **meta)}\n\n{body.strip()}\n"
    )
    found[key] = section
    ordered = [found[k] for k in SECTIONS if k in found]
    ordered += [v for k, v in found.items() if k not in SECTIONS]
    path.write_text(HEAD + "\n" + "\n".join(ordered), encoding="utf-8")
    return section
