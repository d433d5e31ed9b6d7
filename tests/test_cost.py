"""tests/cost.py (`pytest -p tests.cost`): each module's processor time from the start of each
test's setup, its child processes' included (living or reaped), and its Python starts, counted
by the GETs of the runtime its servers answered, in one process or in pytest-xdist's workers."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

BUSY = r"""
import subprocess, sys, urllib.request
import pytest
from sitebuild.serving.loopback import serve_dir

SPIN = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.2: pass"
LIVING = []  # the child left alive, and the pipe it waits on, kept until this process ends


@pytest.fixture
def spun():
    subprocess.run([sys.executable, "-c", SPIN], check=True)  # ended and reaped, in the setup


def test_a_start_and_a_second_in_two_children(spun, tmp_path):
    (tmp_path / "pyodide.asm.wasm").write_bytes(b"\0asm")
    server = serve_dir(tmp_path)
    url = f"http://127.0.0.1:{server.server_port}/pyodide.asm.wasm"
    urllib.request.urlopen(urllib.request.Request(url, method="HEAD")).read()
    urllib.request.urlopen(url).read()
    urllib.request.urlopen(url + "?v=2").read()
    server.shutdown()
    # it lives on past the test until its stdin closes, when this process ends, however long
    # the run takes
    alive = subprocess.Popen(
        [sys.executable, "-c", SPIN + "\nprint(flush=True)\nimport sys\nsys.stdin.read()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    alive.stdout.readline()  # its spin done
    LIVING.append(alive)
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_each_module_gets_its_processor_time_and_python_starts(tmp_path, workers):
    (tmp_path / "test_busy.py").write_text(BUSY)
    (tmp_path / "test_idle.py").write_text("def test_nothing():\n    pass\n")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.cost", "-p", "no:cacheprovider", *workers],
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=600,  # against a hang only: the run needs about 2 processor-seconds
    )
    assert run.returncode == 0, run.stdout + run.stderr
    rows = {
        m[4]: (float(m[1]), int(m[2]), int(m[3]))
        for m in re.finditer(r"^\s+([\d.]+)\s+(\d+)\s+(\d+)  (\S.*)$", run.stdout, re.M)
    }
    busy, idle = rows["test_busy.py"], rows["test_idle.py"]
    total = rows[f"in all, on {os.cpu_count()} CPUs"]
    # both children's processor time (one spent in the setup), whatever the load; two GETs of
    # the runtime (the HEAD before a start is no start)
    assert busy[0] >= 0.38 and busy[1:] == (2, 1), run.stdout
    assert idle[0] < 0.2 and idle[1:] == (0, 1), run.stdout
    assert total[1:] == (2, 2), run.stdout
