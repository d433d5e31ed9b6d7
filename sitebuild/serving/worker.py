"""serve's builder: a long-lived process that builds the site each time serve asks.

`build.py serve` starts it (sitebuild/serving/serve.py) and asks for a build with a line on its
standard input; it answers "ok" or "failed" on the file descriptor it was given, once what the
build said (its warnings, or the author's error) is on its standard output, which serve reads.
Between builds it keeps the build pipeline and the chapters' modules imported and what the last
good build wrote (pipeline/build.py's Memory), so that a chapter's edit is built in a fraction
of a second. serve starts a fresh one when anything but a chapter changed (an edited module
must be imported anew), and stops it when a build overruns or a newer change makes it moot:
SIGTERM prints where it was (faulthandler) for serve to name the author's line. It ends when
serve does (its standard input closes), even in the middle of a build.
"""

import argparse
import faulthandler
import os
import queue
import signal
import sys
import threading
import traceback
from pathlib import Path

from ..fetched.assets import AssetError
from ..pipeline.build import DiskFull, Memory, build, disk_full
from ..pipeline.chapters import AuthorError


def main(argv=None):
    ap = argparse.ArgumentParser(description="serve's builder (sitebuild/serving/worker.py)")
    ap.add_argument("--root", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--reuse", type=Path, required=True)
    ap.add_argument("--answer-fd", type=int, required=True)
    ap.add_argument("--pyodide-cdn", action="store_true")
    args = ap.parse_args(argv)
    faulthandler.register(signal.SIGTERM, chain=True)
    answers = os.fdopen(args.answer_fd, "w", buffering=1)
    asked = queue.Queue()
    threading.Thread(target=_listen, args=(asked,), daemon=True).start()
    memory = Memory()
    while True:
        asked.get()
        ok = build_once(args.root, args.out, args.pyodide_cdn, args.reuse, memory)
        sys.stdout.flush()
        sys.stderr.flush()
        answers.write("ok\n" if ok else "failed\n")


def _listen(asked):
    """Each line serve writes asks for a build; the end of the input (serve ended) ends this
    process at once, whatever it is doing. The signals the build's limits use (SIGALRM) are
    left to the main thread, which builds, as in `build.py build`."""
    signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
    for line in sys.stdin:
        asked.put(line)
    os._exit(0)


def build_once(root, out, cdn, reuse, memory):
    """One build, saying what `build.py build` says; -> whether it built."""
    notes = []
    try:
        site = build(root, out, cdn, notes=notes, reuse=reuse, memory=memory)
    except AuthorError as e:
        print(e, file=sys.stderr)
        return False
    except AssetError as e:
        print(f"error: {e}", file=sys.stderr)
        return False
    except DiskFull as e:
        print(f"build.py: {e}", file=sys.stderr)
        return False
    except OSError as e:
        full = disk_full(e, out)
        print(f"build.py: {full}" if full else traceback.format_exc(), file=sys.stderr)
        return False
    except Exception:
        traceback.print_exc()
        return False
    for path, line, message in notes:
        print(f"{path}:{line}: warning: {message}", file=sys.stderr)
    print(f"built {site}")
    return True


if __name__ == "__main__":
    sys.exit(main())
