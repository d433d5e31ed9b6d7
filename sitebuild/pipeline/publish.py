"""Publishing a build: site/ is replaced by a wholly written new folder in one step, under a lock.

At every instant site/ holds a whole build, the old one or the new one: the new folder is
written beside it (site.new-XXXX) and exchanged with it by one rename (renameat2's
RENAME_EXCHANGE on Linux, renamex_np's RENAME_SWAP on macOS). site/ stays a real folder, so a
deployer copies it with cp, rsync or scp as before. A build killed at any point leaves site/
whole and at most a site.new-XXXX folder, which the next build deletes. A lock (fcntl, on the
folder holding site/) makes a second build there wait for the first.

Where the file system cannot exchange two folders, site/ is moved aside (site.old-XXXX) and
the new folder moved in: two renames, and a build killed between them leaves the old build in
site.old-XXXX, which the next build puts back before anything else.
"""

import contextlib
import ctypes
import errno
import fcntl
import os
import shutil
import sys
import tempfile
from pathlib import Path

AT_FDCWD = -100
RENAME_EXCHANGE = 2  # linux/fs.h
RENAME_SWAP = 2  # macOS sys/stdio.h
UNSUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV}


@contextlib.contextmanager
def locked(site):
    """Hold a lock on the folder that holds `site` while the block runs, so that a second build
    there waits, saying so. The lock is on the folder itself: no lock file is left beside."""
    fd = os.open(site.parent, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(
                f"another build in {site.parent} is running; waiting for it to finish",
                file=sys.stderr,
                flush=True,
            )
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock, also when the process is killed


def new_folder(site):
    """An empty folder beside `site` for the next build, readable like any published folder.
    Call it holding the lock: it first clears what killed builds left behind."""
    _recover(site)
    for stale in site.parent.glob(f"{site.name}.new-*"):
        _remove(stale)
    tmp = Path(tempfile.mkdtemp(prefix=f"{site.name}.new-", dir=site.parent))
    tmp.chmod(0o755)  # mkdtemp makes it private; a web server must read the published folder
    return tmp


def publish(tmp, site):
    """Put the finished build `tmp` at `site` in one step and delete the old build."""
    if not os.path.lexists(site):
        os.rename(tmp, site)  # nothing to replace: one rename is atomic
        return
    try:
        _exchange(tmp, site)
    except OSError as e:
        if e.errno not in UNSUPPORTED:
            raise
        old = Path(tempfile.mkdtemp(prefix=f"{site.name}.old-", dir=site.parent))
        os.rename(site, old / "site")
        os.rename(tmp, site)
        tmp = old
    _remove(tmp)


def _remove(path):
    """Delete a folder of ours, or the link that stood at site/ before the exchange."""
    if path.is_symlink():
        path.unlink()
    else:
        shutil.rmtree(path, ignore_errors=True)


def _exchange(a, b):
    """Swap the folders at paths a and b in one rename: each path holds a folder throughout."""
    libc = ctypes.CDLL(None, use_errno=True)
    paths = (os.fsencode(a), os.fsencode(b))
    if hasattr(libc, "renameat2"):
        done = libc.renameat2(AT_FDCWD, paths[0], AT_FDCWD, paths[1], RENAME_EXCHANGE)
    elif hasattr(libc, "renamex_np"):
        done = libc.renamex_np(paths[0], paths[1], RENAME_SWAP)
    else:
        raise OSError(errno.ENOSYS, "this system cannot exchange two folders in one rename")
    if done != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), str(a), None, str(b))


def _recover(site):
    """A build killed between the two renames of the fallback left no site/: put the old one
    back, then clear every site.old-XXXX."""
    for old in sorted(site.parent.glob(f"{site.name}.old-*")):
        if not os.path.lexists(site) and (old / "site").is_dir():
            os.rename(old / "site", site)
        _remove(old)
