"""`make ci-time`: how long CI takes on a clean clone of HEAD, into bench/RESULTS.md.

Clones this repository at HEAD (committed work only: what CI sees) into a temporary folder, runs
`bash .ci/run` there as CI does (it sets up everything itself: the venv and its tiers, Pyodide,
Chromium, the corpus; then ruff, the check and pytest), and writes into RESULTS.md's section
"ci" the minutes it took, the tests passed and failed (pytest's last summary line, with
pytest's own time), the exit status, the commit and the load average before and after. The
run's output goes to the terminal as it comes. It takes half an hour or more.

Only the standard library, so it runs with the system's python3 before any venv exists.
"""

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# run as `python3 bench/ci.py`: Python puts bench/ on the path, not the project's root
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import results

# pytest's last line: "==== 3 failed, 958 passed, 2 skipped in 1196.23s (0:19:56) ====", the
# bars missing under -q; the counts in pytest's order, each kind once
SUMMARY = re.compile(
    r"^=*\s*(?P<counts>\d+ [a-z]+(?:, \d+ [a-z]+)*) in (?P<seconds>[\d.]+)s\b.*?=*\s*$", re.M
)
KINDS = {"error": "errors", "warning": "warnings"}  # pytest writes "1 error", "2 errors"


def summary(output):
    """pytest's last summary line in OUTPUT -> {"passed": n, "failed": n, …, "seconds": s}
    (every kind it names, plural; passed and failed always), or None when there is none."""
    found = list(SUMMARY.finditer(output))
    if not found:
        return None
    last = found[-1]
    counts = {"passed": 0, "failed": 0}
    for n, kind in re.findall(r"(\d+) ([a-z]+)", last["counts"]):
        counts[KINDS.get(kind, kind)] = int(n)
    counts["seconds"] = float(last["seconds"])
    return counts


def markdown(status, minutes, tests):
    """The section's body: the outcome, the minutes, and the tests as pytest counted them."""
    outcome = "passed" if status == 0 else f"failed (exit status {status})"
    line = f"`bash .ci/run` on a clean clone: **{outcome}** in {minutes:.1f} minutes"
    if tests is None:
        return line + "; pytest printed no summary (it did not run, or did not finish).\n"
    singular = {plural: one for one, plural in KINDS.items()}
    kinds = ", ".join(
        f"{n} {singular.get(k, k) if n == 1 else k}" for k, n in tests.items() if k != "seconds"
    )
    return (
        f"{line}, of which pytest {tests['seconds'] / 60:.1f} minutes ({tests['seconds']:.0f} s): "
        f"{kinds}.\n"
    )


def clone(root, into):
    """A clone of ROOT's HEAD commit in INTO, its work tree checked out; -> the commit."""
    head = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(root), str(into)], check=True)
    subprocess.run(["git", "-C", str(into), "checkout", "--quiet", "--detach", head], check=True)
    return head


def run(root=results.ROOT, path=results.PATH, keep=False):
    """Clone ROOT at HEAD, time `bash .ci/run` in the clone, write the section into PATH; ->
    (the exit status, the section)."""
    folder = Path(tempfile.mkdtemp(prefix="manyheads-ci-"))
    try:
        head = clone(root, folder / "repo")
        before = results.load_average()
        start = time.monotonic()
        process = subprocess.Popen(
            ["bash", ".ci/run"],
            cwd=folder / "repo",
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
        )
        lines = []
        for line in process.stdout:
            sys.stdout.write(line)
            lines.append(line)
        status = process.wait()
        minutes = (time.monotonic() - start) / 60
        after = results.load_average()
    finally:
        if keep:
            print(f"the clone is kept in {folder / 'repo'}", file=sys.stderr)
        else:
            shutil.rmtree(folder, ignore_errors=True)
    body = markdown(status, minutes, summary("".join(lines)))
    return status, results.write("ci", body, before, after, path, at=head[:12])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the clone, to look into it")
    args = parser.parse_args(argv)
    status, section = run(keep=args.keep)
    print(section)
    return status


if __name__ == "__main__":
    sys.exit(main())
