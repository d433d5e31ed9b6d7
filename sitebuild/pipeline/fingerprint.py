"""Content-addressed names: every file a page loads is named by a hash of its bytes, so a page
and every file it loads come from one build.

A service worker, a proxy or a browser cache may still hold an older build's file; under a
name that carries its content's hash it can never pass for another build's file. Pages keep
their names (readers link to them). Content-addressed are the scripts, styles and icon in
static/ (static/main.3f2a9c1b0e1d.js; a script names the modules it imports by their hashed
names, so its hash covers every module it reaches), the Python the browser runs (one folder
py/HASH/ with files.json, the .py files and data.json) and every data file
(py/data/…/NAME.HASH.EXT, which Python finds through data.json).

The plain names static/*.js and py/ stay as entry points for pages outside the site: a course
page loads static/embed-resize.js, the benchmark static/pyclient.js. No page of the site
loads them.
"""

import hashlib
import json
import re
import shutil

HASH_LENGTH = 12
SIBLING = re.compile(r"""(["'])\./([\w.-]+)\1""")  # "./blocks.js": a module beside this one
PYTHON_FOLDER = re.compile(r"""(["'])\.\./py/\1""")  # "../py/": main.js's URL of the Python


def digest(data):
    """The short content hash that goes into a name (48 bits: no two files of a site collide)."""
    return hashlib.sha256(data).hexdigest()[:HASH_LENGTH]


def hashed_name(name, data):
    """main.js -> main.3f2a9c1b0e1d.js"""
    stem, _, ext = name.rpartition(".")
    return f"{stem}.{digest(data)}.{ext}"


def static_files(static, python_url):
    """Write a content-addressed copy of every file in `static` and return {name: its path from
    the site's top}. Scripts name their sibling modules by hashed names and the Python by
    `python_url` (this build's py/HASH/ instead of "../py/"). The plain-named scripts stay;
    the plain styles and icon go, since nothing loads them."""
    names, rewritten = {}, 0
    for name in _dependency_order(static):
        path = static / name
        data = path.read_bytes()
        if path.suffix == ".js":
            text, n = PYTHON_FOLDER.subn(rf"\g<1>{python_url}\g<1>", data.decode("utf-8"))
            rewritten += n
            data = _name_siblings(text, names).encode("utf-8")
        target = hashed_name(name, data)
        (static / target).write_bytes(data)
        names[name] = f"static/{target}"
        if path.suffix != ".js":
            path.unlink()
    if not rewritten:
        raise RuntimeError(
            'no script in templates/static/ names the Python folder as "../py/"; '
            "sitebuild/pipeline/fingerprint.py replaces that literal with this build's py/HASH/"
        )
    return names


def _name_siblings(text, names):
    """Replace each "./NAME" of a file already hashed by "./NAME.HASH.EXT"."""
    return SIBLING.sub(
        lambda m: f"{m[1]}./{names[m[2]].removeprefix('static/')}{m[1]}" if m[2] in names else m[0],
        text,
    )


def _dependency_order(static):
    """The files of `static`, each after the modules it names; a cycle cannot be hashed."""
    files = sorted(p.name for p in static.iterdir() if p.is_file())
    needs = {
        name: sorted(
            {m[2] for m in SIBLING.finditer((static / name).read_text("utf-8"))} & set(files)
        )
        if name.endswith(".js")
        else []
        for name in files
    }
    order, state = [], {}

    def visit(name, path):
        if state.get(name) == "done":
            return
        if state.get(name) == "open":
            raise RuntimeError(
                f"templates/static/ modules import each other in a cycle: {' -> '.join(path)}; "
                "content-addressed names need an order"
            )
        state[name] = "open"
        for dep in needs[name]:
            visit(dep, [*path, dep])
        state[name] = "done"
        order.append(name)

    for name in files:
        visit(name, [name])
    return order


def python_folder(py, data_dir):
    """Beside the plain py/ (files.json and the .py files), write every data file of `data_dir`
    under a hashed name in py/data/, data.json naming them, and py/HASH/: the same files.json,
    .py files and data.json in one folder named by a hash of them all. Returns "py/HASH/" and
    the data files' paths from the site's top."""
    names, data_paths = {}, []
    for path in sorted(p for p in data_dir.rglob("*") if p.is_file()) if data_dir.is_dir() else []:
        rel = path.relative_to(data_dir)
        target = py / "data" / rel.parent / hashed_name(rel.name, path.read_bytes())
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        names[rel.as_posix()] = target.relative_to(py).as_posix()
        data_paths.append(target.relative_to(py.parent).as_posix())
    (py / "data.json").write_text(json.dumps(names, indent=1))
    files = json.loads((py / "files.json").read_text())
    whole = hashlib.sha256()
    for name in ["files.json", "data.json", *(f["path"] for f in files)]:
        whole.update(name.encode() + b"\0" + (py / name).read_bytes())
    folder = py / whole.hexdigest()[:HASH_LENGTH]
    for f in files:
        (folder / f["path"]).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(py / f["path"], folder / f["path"])
    shutil.copyfile(py / "files.json", folder / "files.json")
    (folder / "data.json").write_text(
        json.dumps({rel: f"../{target}" for rel, target in names.items()}, indent=1)
    )
    return f"py/{folder.name}/", data_paths
