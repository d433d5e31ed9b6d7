"""`pytest -p tests.cost`: what each test module costs the machine, in a table at the end of the
run: its processor time (the test process's and everything it started: Playwright's driver,
Chromium, a build) and how many times a page's Python started (the runtime fetched from a test's
server). A run here is bound by the processors, not by the workers: it lasts about its processor
time over the number of CPUs, so this says where its time goes better than --durations, whose
seconds grow with what the other workers do (docs/testing.md).

Processor time is read from /proc (Linux) for the test's process and its descendants, living or
reaped; a process that leaves the tree (one its parent never waits for) takes its time with it,
so a step that comes out negative counts as nothing."""

import collections
import os

import pytest

TICK = os.sysconf("SC_CLK_TCK")
RUNTIME = "pyodide.asm.wasm"  # a page's worker fetches it (a HEAD, then a GET) once a start
START = pytest.StashKey[tuple]()
_fetched = [0]  # GETs of the runtime from the servers of this process (serve_dir's)
_table = collections.defaultdict(lambda: [0.0, 0, 0])  # module -> [seconds, starts, tests]


def tree_seconds(root=None):
    """Processor seconds of process ROOT (this one) and all its descendants, each with the time
    of the children it has reaped."""
    children, spent = collections.defaultdict(list), {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:  # it ended meanwhile
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # after the command, which may hold spaces
        children[int(fields[1])].append(int(name))
        spent[int(name)] = sum(map(int, fields[11:15]))  # utime stime cutime cstime
    total, todo = 0, [root or os.getpid()]
    while todo:
        pid = todo.pop()
        total += spent.get(pid, 0)
        todo += children.get(pid, [])
    return total / TICK


def pytest_configure(config):
    from sitebuild.serving import serve

    plain = serve.Handler.send_head

    def send_head(handler):
        if handler.command == "GET" and handler.path.split("?")[0].endswith(RUNTIME):
            _fetched[0] += 1
        return plain(handler)

    serve.Handler.send_head = send_head


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    item.stash[START] = (tree_seconds(), _fetched[0])  # before its fixtures are made
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Each test's processor time and Python starts, from the start of its setup to the end of
    its teardown, go with its teardown's report (to the run's main process under xdist)."""
    report = yield
    if call.when == "teardown" and START in item.stash:
        seconds, fetched = item.stash[START]
        report.user_properties += [
            ("cost_seconds", max(0.0, tree_seconds() - seconds)),
            ("cost_starts", _fetched[0] - fetched),
        ]
    return report


def pytest_runtest_logreport(report):
    props = dict(report.user_properties)
    if report.when == "teardown" and "cost_seconds" in props:
        row = _table[report.nodeid.split("::")[0]]
        row[0] += props["cost_seconds"]
        row[1] += props["cost_starts"]
        row[2] += 1


def pytest_terminal_summary(terminalreporter):
    if not _table:
        return
    write = terminalreporter.write_line
    terminalreporter.section("processor time and Python starts per module (tests/cost.py)")
    write(f"{'processor s':>12} {'starts':>7} {'tests':>6}  module")
    for module, (seconds, starts, tests) in sorted(_table.items(), key=lambda kv: -kv[1][0]):
        write(f"{seconds:12.1f} {starts:7d} {tests:6d}  {module}")
    seconds, starts, tests = (sum(row[i] for row in _table.values()) for i in range(3))
    write(f"{seconds:12.1f} {starts:7d} {tests:6d}  in all, on {os.cpu_count()} CPUs")
