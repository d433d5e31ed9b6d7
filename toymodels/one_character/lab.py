"""Every number the chapter "One character at a time" shows, from the shipped character model.

What: the checkpoints and measurements of toymodels/charmodel's runs, and one function,
`look`, that runs the model on the reader's text and hands back plain numbers for each
figure: the next-character probabilities, the selected character's embedding and position
code, one head's scores and weights, what each layer adds to its residual stream, the MLP's
neurons, every head's attention, and the copying demo. The same file runs at build time
(pre-rendered figures, tests) and in the browser under Pyodide, where checkpoints are fetched
on first use (toymodels.page.data) and kept in a small cache so moving the drum back is instant.

Why here and not in the figure: the tests check these numbers against independent
calculations, and the benchmark times `look` on its own.
"""

import json
import math
import zlib

import numpy as np

from ..models.charmodel import copy_test
from ..models.charmodel import model as cm
from ..page import data
from ..page.recent import Recent

RUNS = (
    "reference-induction",
    "reference",
    "reference-repeats",
    "induction",
)  # the order the page offers them
DEFAULT_RUN = "reference-induction"
# what each model is, as the page names it (a button capitalises it): the size and training
# recipe come from a published explainer; "reference" is that recipe, trained here
RUN_NAMES = {
    "reference-induction": "with repeats",
    "reference": "trained as published",
    "reference-repeats": "with repeats, slower",
    "induction": "twice as wide",
}
PUBLISHED_JUMP = (1000, 1500)  # steps between which the published explainer saw copying form
N_NOVELS = 6  # Jane Austen's novels in the corpus (toymodels.training.corpus.NOVELS; tested)
MAX_CHARS = cm.MAX_CHARS  # the length of every training stretch: the model never saw more
HABITS = ("previous", "two_back", "itself", "spaces")
HABIT_AT = 0.30  # a head is labelled by a habit that gets at least this share on held-out text,
SHARP = 1.5  # … and this many times the next habit's share; else it looks at a blur of them
RECENT_AT = 0.60  # the share on the last three characters (previous, two back, itself) of a blur
SPACES_AT = (
    0.40  # spaces are common, so a head "on spaces" needs more than an even spread gives them
)
INDUCTION_AT = copy_test.INDUCTION_AT  # a head at least this good "copies what came next"
COPY_DEFAULT = "qzxv kplw qzxv kp"

_KEEP = 8
_checkpoints = Recent(_KEEP)  # (run, step) -> (params, cfg); the last few used
_passes = Recent(_KEEP)  # (what, id(params), text, ablate) -> (params, the forward pass)
_meta = {}


def manifest(run):
    """RUN's manifest.json (its recipe, config and training log), for the build's prose; the
    page reads the same recipe, config and steps from evaluation(), already loaded, where
    this would be one more request each time the reader picks another model."""
    if ("manifest", run) not in _meta:
        _meta["manifest", run] = json.loads(data.read_text(f"charmodel/{run}/manifest.json"))
    return _meta["manifest", run]


def evaluation():
    if "evaluation" not in _meta:
        _meta["evaluation"] = cm.evaluation()
    return _meta["evaluation"]


def steps(run):
    return [c["step"] for c in evaluation()["runs"][run]["checkpoints"]]


def nearest_step(run, step):
    """The shipped checkpoint closest to STEP (ties go to the earlier one)."""
    return min(steps(run), key=lambda s: (abs(s - step), s))


def checkpoint(run, step):
    """(params, cfg) of one shipped checkpoint, read once and kept while it is among the last
    used."""
    return _checkpoints.keep((run, int(step)), lambda: cm.load(run, step)[:2])


def measured(run, step):
    """The evaluation's record of this checkpoint: valid_bits, copying, induction[l][h], habits."""
    return next(c for c in evaluation()["runs"][run]["checkpoints"] if c["step"] == step)


def split_text(text):
    """-> (the characters the model knows, [(position, character) it does not])."""
    keep = "".join(c for c in text if c in cm.STOI)
    return keep, [(i, c) for i, c in enumerate(text) if c not in cm.STOI]


def head_label(rec, induction):
    """The habit the evaluation measured for one head, as (short name, the numbers behind it)."""
    numbers = {h: rec[h] for h in HABITS}
    recent = sorted(("previous", "two_back", "itself"), key=lambda h: -rec[h])
    best, runner_up = recent[0], recent[1]
    if induction >= INDUCTION_AT:
        name = "copies what came next"
    elif rec["spaces"] >= SPACES_AT and rec["spaces"] > rec[best]:
        name = "looks at spaces"
    elif rec[best] >= HABIT_AT and rec[best] >= SHARP * rec[runner_up]:
        name = {"previous": "previous character", "two_back": "two back", "itself": "itself"}[best]
    elif sum(rec[h] for h in recent) >= RECENT_AT:
        name = "last few characters"
    else:
        name = "spread wide"
    return name, dict(numbers, induction=induction)


def labels(run, step):
    """[(layer, head, name, numbers)] for the eight heads of a checkpoint, layer and head
    1-based."""
    return labels_of(measured(run, step))


def labels_of(rec):
    """[(layer, head, name, numbers)] for every head of a measured model (REC: its induction
    scores and habits, as measure.py takes them)."""
    return [
        (h["layer"], h["head"], *head_label(h, rec["induction"][h["layer"] - 1][h["head"] - 1]))
        for h in rec["habits"]
    ]


def when_copying_appears(run):
    """(the last checkpoint copying under 25%, the first after it at 75% or more), or None if it
    never did."""
    ck = evaluation()["runs"][run]["checkpoints"]
    end = next((i for i, c in enumerate(ck) if c["copying"] >= 0.75), None)
    if end is None:
        return None
    start = max((i for i in range(end) if ck[i]["copying"] < 0.25), default=None)
    return None if start is None else (ck[start], ck[end])


def nonsense_pair(seed):
    """Two made-up words, then the same again but cut short: (text, the letter that should come
    next).

    Seed 0 is the chapter's own example. Letters are never repeated inside a pair, so the
    last character has exactly one earlier occurrence to copy from.
    """
    if seed == 0:
        return COPY_DEFAULT, "l"
    rng = np.random.default_rng(seed)
    letters = rng.permutation(list("abcdefghijklmnopqrstuvwxyz"))
    n1, n2 = rng.integers(3, 6, size=2)
    first = (
        "".join(letters[:n1]) + " " + "".join(letters[n1 : n1 + n2]) + " "
    )  # the pair, then a space
    k = int(rng.integers(n1 + 2, n1 + n2))  # cut inside the second word, past its first letter
    return first + first[:k], first[k]


def copy_targets(text):
    """(period, [(i, expected)]) for a text that repeats with its shortest period: the prediction
    made at i - 1 should be text[i]; the first character of the repeat cannot be inferred."""
    period = next(
        p for p in range(1, len(text)) if all(text[i] == text[i - p] for i in range(p, len(text)))
    )
    return period, [(i, text[i]) for i in range(period + 1, len(text))]


def kept_forward(what, params, cfg, text, ablate=()):
    """cm.forward over TEXT with every intermediate, of the kind WHAT ("look" or "demo"); the last
    _KEEP passes are kept: a tap on another character or head reads the pass already made, and so
    does a reader going back to a model or a text just left (0.1 MB a pass for 17 characters,
    2.6 MB for the longest text the box takes). Params are never changed in place (checkpoints and
    the reader's snapshot are copies), so the same object is the same model; an entry holds its
    params, so their id stays theirs while it is kept."""
    key = (what, id(params), text, tuple(map(tuple, ablate)))
    made = _passes.keep(
        key, lambda: (params, cm.forward(params, cfg, cm.encode(text), ablate=ablate, keep=True))
    )
    return made[1]


def copying_demo(params, cfg, seed, ablate=()):
    """The model on a nonsense pair: p(next = the letter it should copy), and each layer-2 head's
    look back."""
    text, want = nonsense_pair(seed)
    logits, c = kept_forward("demo", params, cfg, text, ablate)  # (T, V)
    probs = cm.softmax(logits.astype(np.float64))  # (T, V)
    period, targets = copy_targets(text + want)
    T = len(text)
    source = T - period  # where the letter to copy sits in the first copy
    att = c[f"h{cfg['n_layer'] - 1}.att"]  # (H, T, T) last layer
    right = [(i, ch, cm.VOCAB[int(probs[i - 1].argmax())]) for i, ch in targets]
    return {
        "text": text,
        "want": want,
        "source": source,
        "p_want": float(probs[-1, cm.STOI[want]]),
        "guess": cm.VOCAB[int(probs[-1].argmax())],
        "to_source": [float(a) for a in att[:, -1, source]],
        "checks": right,
        "n_right": sum(ch == got for _, ch, got in right),
    }


def write_on(params, cfg, text, n, seed, ablate=(), max_chars=MAX_CHARS):
    """TEXT followed by up to N characters drawn one at a time from the model's own
    probabilities, never past MAX_CHARS."""
    rng = np.random.default_rng(seed)
    ids = list(cm.encode(text))
    for _ in range(min(n, max_chars - len(ids))):
        logits, _ = cm.forward(params, cfg, np.array(ids), ablate=ablate)  # (T, V)
        p = cm.softmax(logits[-1].astype(np.float64))  # (V,)
        ids.append(int(rng.choice(len(p), p=p / p.sum())))
    return cm.decode(ids)


def seed_of(text):
    return zlib.crc32(text.encode("utf-8"))


def look(params, cfg, text, sel, layer, head, ablate=()):
    """Everything the chapter draws for TEXT, selected character SEL, and head (LAYER, HEAD),
    0-based.

    probs (V,) the next character after the whole text; embed/pos/x0 (D,) of character SEL;
    q (K,), k (SEL+1, K), scores and weights (SEL+1,) of the chosen head for SEL; head_out (D,)
    what that head adds to SEL's stream; parts: [(name, vector (D,))] everything added to SEL's
    stream, in order, whose sum is `final`; act (L, M) the MLP neurons; att (L, H, T, T).
    """
    idx = cm.encode(text)  # (T,)
    logits, c = kept_forward("look", params, cfg, text, ablate)  # (T, V)
    D, K, L = cfg["d_model"], cfg["d_head"], cfg["n_layer"]
    pos = cm.position_code(len(idx), D, cfg["pos_base"], np.float32)[sel]  # (D,)
    embed = params["wte"][idx[sel]]  # (D,)
    q = c[f"h{layer}.q"][head, sel]  # (K,)
    k = c[f"h{layer}.k"][head, : sel + 1]  # (SEL+1, K)
    parts = [("characters and positions", c["embed"][sel])]
    for block in range(L):
        heads_out = c[f"h{block}.head_out"][:, sel]  # (H, D)
        parts += [(f"layer {block + 1} head {h + 1}", heads_out[h]) for h in range(len(heads_out))]
        mlp_out = c[f"h{block}.resid_post"][sel] - c[f"h{block}.resid_mid"][sel]  # (D,)
        parts.append((f"layer {block + 1} MLP", mlp_out))
    return {
        "probs": cm.softmax(logits[-1].astype(np.float64)),  # (V,)
        "embed": embed,
        "pos": pos,
        "x0": c["embed"][sel],  # (D,) each
        "q": q,
        "k": k,
        "scores": (k @ q) / math.sqrt(K),  # (SEL+1,)
        "weights": c[f"h{layer}.att"][head, sel, : sel + 1],  # (SEL+1,)
        "v": c[f"h{layer}.v"][head, : sel + 1],  # (SEL+1, K)
        "head_out": c[f"h{layer}.head_out"][head, sel],  # (D,)
        "parts": parts,
        "final": c["resid_final"][sel],  # (D,)
        "act": np.stack([c[f"h{block}.act"][sel] for block in range(L)]),  # (L, M)
        "att": np.stack([c[f"h{block}.att"] for block in range(L)]),  # (L, H, T, T)
    }


PROSE_VALUES = ("HABIT_AT", "INDUCTION_AT", "RECENT_AT", "SHARP", "SPACES_AT", "MAX_CHARS")
