"""`python build.py zip`: the built site as one archive, Pyodide inside, for a classroom
without internet."""

import zipfile
from pathlib import Path


def zip_site(site, target):
    """One archive of the built site, Pyodide included, for a classroom without internet."""
    tmp = target.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for p in sorted(site.rglob("*")):
            if p.is_file():
                z.write(p, Path("manyheads") / p.relative_to(site))
    tmp.replace(target)
    return target
