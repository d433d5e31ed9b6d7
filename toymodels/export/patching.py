"""Export "What a head does" (toymodels/data/what_a_head_does/): on SmolLM2-135M-Instruct,
for every curated pair (pairs.py) the model's logit differences, and for the pairs it keeps,
per head (layers, heads):

    patch        activation patching: the corrupted text run with that one head's output
                 (y before the output projection, at every position) taken from the clean
                 run; the share of the difference it brings back,
                 (LD_patched - LD_corrupt) / (LD_clean - LD_corrupt)
    att_clean    the attention from the last position to the word that differs (the
    att_corrupt  positions where the two texts' tokens differ, summed), in each text
    dla_clean    the head's direct logit attribution (what_a_head_does/attribution.py) to
    dla_corrupt  logit[a] - logit[b] at the last position, in each text

and how the heads' rank by attention agrees with their rank by patching (Spearman's rank
correlation, per pair and over every pair's heads at once). A patch reruns only the layers
from the patched one up: the corrupted run's residual stream entering each layer is kept,
and the nine heads of a layer are patched in one batch.
"""

import json
import time
from pathlib import Path

import numpy as np

from ..what_a_head_does import attribution as at
from . import pairs as curated
from .llama import Llama, tokenizer
from .smollm2 import write_npz

DIR = "what_a_head_does"
OUT = Path(__file__).resolve().parent.parent / "data" / DIR
ARRAYS = ("patch", "att_clean", "att_corrupt", "dla_clean", "dla_corrupt")
DIGITS = 4  # logit differences in the index: to 1e-4 (the float32 forward's own noise ~1e-5)


def one_token(bpe, word):
    ids = bpe.encode(word)
    if len(ids) != 1:
        raise ValueError(
            f"toymodels/export/pairs.py: the candidate {word!r} is {len(ids)} tokens; "
            "pick a word the tokenizer keeps whole"
        )
    return ids[0]


def measure(m, bpe, pid, family, clean, corrupt, a, b):
    """One pair's entry (ids, pieces, candidates, logit differences, kept or why not) and the
    two traces (None where the token counts differ)."""
    entry = {"id": pid, "family": family, "clean": clean, "corrupt": corrupt, "a": a, "b": b}
    ids, bad = bpe.encode(clean), bpe.encode(corrupt)
    ia, ib = one_token(bpe, a), one_token(bpe, b)
    entry |= {"ids_clean": ids, "ids_corrupt": bad, "token_a": ia, "token_b": ib}
    if len(ids) != len(bad):
        return entry | {"kept": False, "why": "token counts differ"}, None
    entry["pieces"] = [[bpe.decode([i]) for i in t] for t in (ids, bad)]
    entry["differ"] = [n for n, (i, j) in enumerate(zip(ids, bad, strict=True)) if i != j]
    tc, tk = at.Trace(m, ids), at.Trace(m, bad)
    ld = [at.logit_diff(m, t.x[-1, -1], ia, ib) for t in (tc, tk)]
    kept, why = curated.keep(*ld)
    entry |= {"ld_clean": round(ld[0], DIGITS), "ld_corrupt": round(ld[1], DIGITS)}
    return entry | {"kept": kept, "why": why}, (tc, tk, ld)


def patch_heads(m, clean, corrupt, a, b, heads=None):
    """(layers, H) float64: the share of logit[a] - logit[b] that patching each head's clean
    output into the corrupted run recovers (nan for heads not in `heads`; default all).
    `clean`, `corrupt`: attribution.Trace of the two texts. The heads of one layer are
    patched together as a batch of variants, one head each."""
    ld_clean = at.logit_diff(m, clean.x[-1, -1], a, b)
    ld_bad = at.logit_diff(m, corrupt.x[-1, -1], a, b)
    out = np.full((m.n_layer, m.n_head), np.nan)
    todo = {}
    for L, h in heads if heads is not None else np.ndindex(m.n_layer, m.n_head):
        todo.setdefault(int(L), []).append(int(h))
    for L, hs in sorted(todo.items()):
        x = np.repeat(corrupt.x[L][None], len(hs), 0)  # (B, T, d): one variant per head

        def swap(i, y, L=L, hs=hs):
            if i == L:  # y (B, H, T, hs): variant n takes head hs[n]'s clean output
                y[np.arange(len(hs)), hs] = clean.y[L, hs]

        for step in m.run(corrupt.ids, tap=swap, start=L, x=x):
            x = step[2]  # (B, T, d): the last one leaves the model
        for n, h in enumerate(hs):
            out[L, h] = (at.logit_diff(m, x[n, -1], a, b) - ld_bad) / (ld_clean - ld_bad)
    return out


def to_word(trace, differ):
    """(layers, H): each head's attention from the last position to the differing tokens."""
    return trace.maps[:, :, -1, differ].sum(-1)


def rho(x, y):
    return round(at.spearman(x, y), 3)


def agreement(kept, arrays):
    """Spearman's rank correlation over heads of patching with attention to the word and with
    direct attribution: per pair, per family (the family's heads pooled) and overall."""
    patch, att, dla = (np.stack(arrays[k]) for k in ("patch", "att_clean", "dla_clean"))
    per = {
        e["id"]: {"attention": rho(att[n], patch[n]), "dla": rho(dla[n], patch[n])}
        for n, e in enumerate(kept)
    }
    groups = {"all": list(range(len(kept)))}
    for n, e in enumerate(kept):
        groups.setdefault(e["family"], []).append(n)
    pooled = {
        g: {
            "pairs": len(ns),
            "attention": rho(att[ns], patch[ns]),
            "attention_abs": rho(att[ns], np.abs(patch[ns])),
            "dla": rho(dla[ns], patch[ns]),
            "mean_per_pair_attention": round(
                float(np.mean([per[kept[n]["id"]]["attention"] for n in ns])), 3
            ),
        }
        for g, ns in groups.items()
    }
    return per, pooled


def export(out=OUT, model=None, log=print, pairs=None):
    m = model or Llama()
    bpe = tokenizer(m.reader)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    entries, kept, arrays = [], [], {k: [] for k in ARRAYS}
    start = time.perf_counter()
    for pair in pairs or curated.candidates():
        entry, runs = measure(m, bpe, *pair)
        entries.append(entry)
        if not entry["kept"]:
            log(f"{entry['id']}: dropped, {entry['why']}")
            continue
        tc, tk, _ = runs
        t0 = time.perf_counter()
        a, b = entry["token_a"], entry["token_b"]
        arrays["patch"].append(patch_heads(m, tc, tk, a, b))
        arrays["att_clean"].append(to_word(tc, entry["differ"]))
        arrays["att_corrupt"].append(to_word(tk, entry["differ"]))
        arrays["dla_clean"].append(at.attribute(tc, -1, a, b)["heads"])
        arrays["dla_corrupt"].append(at.attribute(tk, -1, a, b)["heads"])
        kept.append(entry)
        dt = time.perf_counter() - t0
        log(f"{entry['id']}: {len(entry['ids_clean'])} tokens, patched in {dt:.1f} s")
    per, pooled = agreement(kept, arrays)
    for e in kept:
        e["spearman"] = per[e["id"]]
    write_npz(
        out / "heads.npz",
        **{k: np.stack(v).astype(np.float32) for k, v in arrays.items()},
    )
    index = {
        "v": 1,
        "model": "smollm2",
        "file": "heads.npz",
        "arrays": list(ARRAYS),
        "kept": [e["id"] for e in kept],
        "keep_rule": {"flip_min": curated.FLIP_MIN, "move_min": curated.MOVE_MIN},
        "spearman": pooled,
        "pairs": entries,
    }
    (out / "index.json").write_text(
        json.dumps(index, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8"
    )
    log(f"{len(kept)} of {len(entries)} pairs kept in {time.perf_counter() - start:.0f} s")
    return index
