"""`python build.py zip`: the built site as one archive, Pyodide inside, for a classroom
without internet."""

import json
import re
import zipfile
from pathlib import Path

# what no name in an archive may hold: Windows reads \ as a folder and C: as a drive (a\..\x
# leaves the folder it is unpacked into), and a control character or <>"|?* cannot be a name
# there at all
UNSAFE_NAME = re.compile(r'[\\:<>"|?*\x00-\x1f\x7f]')


def unsafe_name(relpath):
    """Whether RELPATH (a path inside the site) would be unsafe as a name in a zip or SCORM
    package: a character above, or a part that is empty, '.', '..' or ends in a dot or space."""
    parts = Path(relpath).as_posix().split("/")
    return bool(UNSAFE_NAME.search(str(relpath))) or any(
        p in ("", ".", "..") or p.endswith((".", " ")) for p in parts
    )


# files compressed already (numpy's archives, zips, wheels, PNG): deflating them again gains
# 1-3% for about half the time an archive takes to write, so they are stored as they are
COMPRESSED = {".npz", ".zip", ".whl", ".png", ".gz"}


def add(z, path, name):
    """PATH into the open zip Z as NAME: stored where it is compressed already, else deflated."""
    stored = Path(path).suffix in COMPRESSED
    z.write(path, name, zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED)


def zip_site(site, target):
    """One archive of the built site, Pyodide and the readers' own models (models/) included,
    for a classroom without internet. The models are stored as they are: their quantised
    weights shrink by a few percent at most, for seconds of deflating 130 MB."""
    tmp = target.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for p in sorted(site.rglob("*")):
            if p.is_file():
                rel = p.relative_to(site)
                if unsafe_name(rel):
                    raise ValueError(f"{rel!r} is no safe name for an archive")
                if rel.parts[0] == "models":
                    z.write(p, Path("manyheads") / rel, zipfile.ZIP_STORED)
                else:
                    add(z, p, Path("manyheads") / rel)
    tmp.replace(target)
    return target


def python_zip(folder):
    """FOLDER/python.zip: the .py files FOLDER's files.json lists, as one archive that the
    worker fetches and Pyodide unpacks (static/pyruntime.js): one request for them all instead
    of one each, 62 round trips on a slow network. Fixed dates: the same files, the same bytes."""
    files = json.loads((folder / "files.json").read_text(encoding="utf-8"))
    with zipfile.ZipFile(folder / "python.zip", "w", zipfile.ZIP_DEFLATED) as z:
        for f in files:
            info = zipfile.ZipInfo(f["path"], date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, (folder / f["path"]).read_bytes())
