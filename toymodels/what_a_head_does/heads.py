"""The export of "What a head does", read: the curated pairs and, for each pair the model
resolves, three numbers for every head of SmolLM2-135M-Instruct (30 layers × 9 heads).

The export (toymodels/data/what_a_head_does/, written at build time by `python -m
toymodels.export patching`, toymodels/export/patching.py) holds index.json, every pair's texts,
tokens, the two candidate answers a and b and the model's logit differences
logit[a] - logit[b] after each text (the kept pairs listed in "kept"), and heads.npz, one
float32 array (kept pairs, layers, heads) per measure:

    att_clean, att_corrupt  attention from the last token to the tokens where the two texts
                            differ, in each text
    att_answer, att_self    in the clean text, attention from the last token to the answer
                            a's tokens, and to itself
    att_induct              in the clean text, attention from the changed word to the tokens
                            just after that word's earlier occurrences (an induction head's)
    dla_clean, dla_corrupt  direct logit attribution to logit[a] - logit[b] (attribution.py)
    patch                   activation patching (patching.py), denoising: the share of the
                            difference the corrupted run gets back when that one head's
                            output comes from the clean run, at every position
    patch_token, patch_word the same, the output put back at the last token only, or at the
                            changed word's tokens only
    noise                   noising: the share the clean run loses when that head's output
                            comes from the corrupted run, at every position

Read through toymodels.page.data, so the same code runs at build time and in the browser.
"""

import io
import json

import numpy as np

from ..page import data

DIR = "what_a_head_does"
ARRAYS = (
    "patch",
    "att_clean",
    "att_corrupt",
    "dla_clean",
    "dla_corrupt",
    "patch_token",
    "patch_word",
    "noise",
    "att_answer",
    "att_self",
    "att_induct",
)
# the families in the order the figure offers them: what each pair tests, in a few words
FAMILIES = (
    ("ioi", "Who gets it (indirect object)"),
    ("repeat", "A name said again"),
    ("gender", "She or he"),
    ("pronoun", "What “it” means"),
)
_cache = {}


def _read(rel):
    return data.read_exported(
        f"{DIR}/{rel}", "run `python -m toymodels.export patching` to write it"
    )


def index():
    """index.json: the pairs (kept or not, with their logit differences), the kept ids."""
    if "index" not in _cache:
        _cache["index"] = json.loads(_read("index.json").decode("utf-8"))
    return _cache["index"]


def arrays():
    """{measure: (kept pairs, layers, heads) float64}, in the order of index()['kept']."""
    if "arrays" not in _cache:
        with np.load(io.BytesIO(_read(index()["file"])), allow_pickle=False) as z:
            out = {k: z[k].astype(np.float64) for k in ARRAYS}
        n = len(index()["kept"])
        for k, a in out.items():
            if a.ndim != 3 or a.shape[0] != n:
                raise ValueError(f"{DIR}/heads.npz: {k} is {a.shape}, not ({n}, layers, heads)")
        _cache["arrays"] = out
    return _cache["arrays"]


def shape():
    """(layers, heads) of the model the export measured."""
    return arrays()["patch"].shape[1:]


def all_pairs():
    """Every curated pair's entry, kept or not, in the export's order."""
    return index()["pairs"]


def kept():
    """The ids of the pairs kept, in the export's order (the arrays' first axis)."""
    return list(index()["kept"])


def pair(pid):
    """One kept pair's entry with its (layers, heads) arrays (ARRAYS). KeyError for an id
    that is not a kept pair."""
    ids = index()["kept"]
    if pid not in ids:
        raise KeyError(f"the export kept no pair '{pid}'")
    n = ids.index(pid)
    entry = next(p for p in all_pairs() if p["id"] == pid)
    return dict(entry, **{k: a[n] for k, a in arrays().items()})


def by_family():
    """[(family, its label, [kept pair ids])] in FAMILIES' order, families with none left out."""
    ids = kept()
    family = {p["id"]: p["family"] for p in all_pairs()}
    out = []
    for f, label in FAMILIES:
        mine = [i for i in ids if family[i] == f]
        if mine:
            out.append((f, label, mine))
    return out


def family_counts():
    """{family: (kept, curated)}."""
    out = {f: [0, 0] for f, _ in FAMILIES}
    for p in all_pairs():
        out[p["family"]][1] += 1
        out[p["family"]][0] += bool(p["kept"])
    return {f: tuple(c) for f, c in out.items()}
