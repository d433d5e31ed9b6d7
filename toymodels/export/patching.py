"""Export "What a head does" (toymodels/data/what_a_head_does/): on SmolLM2-135M-Instruct,
for every curated pair (pairs.py) the model's logit differences, and for the pairs it keeps,
per head (layers, heads):

    patch        activation patching (what_a_head_does/patching.py), denoising: the corrupted
                 text run with that one head's output (y before the output projection, at
                 every position) taken from the clean run; the share of the difference it
                 brings back, (LD_patched - LD_corrupt) / (LD_clean - LD_corrupt)
    patch_token  the same with the output replaced at the last position only (the token
    patch_word   whose attention att_clean reads), or at the changed word's tokens only
    noise        noising: the clean run with that head's output taken from the corrupted run
                 (every position); the share of the difference it loses,
                 (LD_clean - LD_patched) / (LD_clean - LD_corrupt)
    att_clean    the attention from the last position to the word that differs (the
    att_corrupt  positions where the two texts' tokens differ, summed), in each text
    att_answer   in the clean text, from the last position to every token that is a
    att_self     (the answer's token), and to the last position itself
    att_induct   in the clean text, from the changed word's (first) position to the tokens
                 just after each earlier occurrence of that word's token: what an induction
                 head reads (0 where the word did not occur before)
    dla_clean    the head's direct logit attribution (what_a_head_does/attribution.py) to
    dla_corrupt  logit[a] - logit[b] at the last position, in each text

and how the heads' rank by attention agrees with their rank by patching (Spearman's rank
correlation, per pair and over every pair's heads at once). A patch reruns only the layers
from the patched one up: the patched run's residual stream entering each layer is kept,
and the nine heads of a layer are patched in one batch. The arrays of LATER are stored as
float16 (a share to about 0.1% of the difference, finer than the page shows), to keep the
file small; the first five stay float32, as they were first written.
"""

import json
import time
from pathlib import Path

import numpy as np

from ..what_a_head_does import attribution as at
from ..what_a_head_does import patching as wp
from . import pairs as curated
from .llama import Llama, tokenizer
from .smollm2 import write_npz

DIR = "what_a_head_does"
OUT = Path(__file__).resolve().parent.parent / "data" / DIR
ARRAYS = ("patch", "att_clean", "att_corrupt", "dla_clean", "dla_corrupt")
LATER = ("patch_token", "patch_word", "noise", "att_answer", "att_self", "att_induct")
# each patched array: (way, where) of what_a_head_does/patching.py
PATCHES = {
    "patch": ("denoise", "every"),
    "patch_token": ("denoise", "token"),
    "patch_word": ("denoise", "word"),
    "noise": ("noise", "every"),
}
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


def patch_heads(m, clean, corrupt, a, b, heads=None, way="denoise", where="every"):
    """(layers, H) float64: for each head, the share of logit[a] - logit[b] (at the last
    position) that patching it recovers (WAY "denoise": its clean output into the corrupted
    run) or loses ("noise": its corrupted output into the clean run), the output replaced at
    WHERE (what_a_head_does/patching.positions); nan for heads not in `heads` (default all).
    `clean`, `corrupt`: attribution.Trace of the two texts. The heads of one layer are
    patched together as a batch of variants, one head each."""
    ld_clean = at.logit_diff(m, clean.x[-1, -1], a, b)
    ld_bad = at.logit_diff(m, corrupt.x[-1, -1], a, b)
    base, source = (corrupt, clean) if way == "denoise" else (clean, corrupt)
    differ = [n for n, (i, j) in enumerate(zip(clean.ids, corrupt.ids, strict=True)) if i != j]
    pos = wp.positions(where, len(clean.ids) - 1, differ)
    out = np.full((m.n_layer, m.n_head), np.nan)
    todo = {}
    for L, h in heads if heads is not None else np.ndindex(m.n_layer, m.n_head):
        todo.setdefault(int(L), []).append(int(h))
    for L, hs in sorted(todo.items()):
        x = np.repeat(base.x[L][None], len(hs), 0)  # (B, T, d): one variant per head

        def swap(i, y, L=L, hs=hs):
            if i == L:  # y (B, H, T, hs): variant n takes head hs[n]'s other output at pos
                for n, h in enumerate(hs):
                    y[n, h, pos] = source.y[L, h, pos]

        for step in m.run(base.ids, tap=swap, start=L, x=x):
            x = step[2]  # (B, T, d): the last one leaves the model
        for n, h in enumerate(hs):
            ld = at.logit_diff(m, x[n, -1], a, b)
            out[L, h] = wp.share(ld, ld_clean, ld_bad, way)
    return out


def to_word(trace, differ):
    """(layers, H): each head's attention from the last position to the differing tokens."""
    return trace.maps[:, :, -1, differ].sum(-1)


def to_token(trace, token):
    """(layers, H): each head's attention from the last position to every occurrence of the
    token id TOKEN (0 where there is none)."""
    at_ = [n for n, i in enumerate(trace.ids) if i == token]
    return trace.maps[:, :, -1, at_].sum(-1)


def induction(trace, d):
    """(layers, H): each head's attention from position D to the positions just after each
    earlier occurrence of D's token (0 where there is none)."""
    after = [n + 1 for n in range(d) if trace.ids[n] == trace.ids[d]]
    return trace.maps[:, :, d, after].sum(-1)


def rho(x, y):
    return round(at.spearman(x, y), 3)


def agreement(kept, arrays):
    """Spearman's rank correlation over heads of patching (at every position, and at the last
    token: attention_token) with attention to the word and with direct attribution: per pair,
    per family (the family's heads pooled) and overall."""
    patch, att, dla, token = (
        np.stack(arrays[k]) for k in ("patch", "att_clean", "dla_clean", "patch_token")
    )
    per = {
        e["id"]: {
            "attention": rho(att[n], patch[n]),
            "attention_token": rho(att[n], token[n]),
            "dla": rho(dla[n], patch[n]),
        }
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
            "attention_token": rho(att[ns], token[ns]),
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
    entries, kept, arrays = [], [], {k: [] for k in ARRAYS + LATER}
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
        for key, (way, where) in PATCHES.items():
            arrays[key].append(patch_heads(m, tc, tk, a, b, way=way, where=where))
        arrays["att_clean"].append(to_word(tc, entry["differ"]))
        arrays["att_corrupt"].append(to_word(tk, entry["differ"]))
        arrays["dla_clean"].append(at.attribute(tc, -1, a, b)["heads"])
        arrays["dla_corrupt"].append(at.attribute(tk, -1, a, b)["heads"])
        arrays["att_answer"].append(to_token(tc, a))
        arrays["att_self"].append(tc.maps[:, :, -1, -1])
        arrays["att_induct"].append(induction(tc, entry["differ"][0]))
        kept.append(entry)
        dt = time.perf_counter() - t0
        log(f"{entry['id']}: {len(entry['ids_clean'])} tokens, patched in {dt:.1f} s")
    per, pooled = agreement(kept, arrays)
    for e in kept:
        e["spearman"] = per[e["id"]]
    write_npz(
        out / "heads.npz",
        **{
            k: np.stack(v).astype(np.float16 if k in LATER else np.float32)
            for k, v in arrays.items()
        },
    )
    index = {
        "v": 1,
        "model": "smollm2",
        "file": "heads.npz",
        "arrays": list(ARRAYS + LATER),
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
