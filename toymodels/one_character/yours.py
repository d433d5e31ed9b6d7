"""The reader's own model, as the chapter's figure uses it: a snapshot of "Train it yourself".

What: take(run) copies the weights of the run training in this Python worker (train_live.py)
at the moment the reader picks it, measures them the way the build's evaluation measures the
shipped checkpoints (measure.py: copying and each head's induction score on the trainer's own
repeated nonsense, each head's habits on random words that never repeat, copying with each head
and each layer pulled out, the last either at once or one row a call of measure_one()) and
keeps them; get() hands the snapshot to figure.py (which asks train_live.py to take one first
if the reader chose the model in the figure before picking it), drop() forgets it (Reset).
The snapshot stays as it was when picked while the run trains on, so the figure never changes
under the reader; picking again takes a new one.

Why a snapshot of its own: the figure redraws from its state alone, and a model that moved
between two taps would make a tap's answer depend on when it came.
"""

from ..models.charmodel import model as cm
from . import measure
from . import trainstep as ts

NAME = "yours"  # the figure's model choice for it
NO_MODEL = (
    "Your trained model lived in the tab that trained it; "
    "train one in \u2018Train it yourself\u2019 below."
)

_snapshot = None


def habit_text(n, ctx, periods, seed):
    """x (n, ctx): the reader's kind of text with nothing repeated (random words), drawn from a
    stream training never uses (training's seeds are below SEED)."""
    x, _ = ts.nonsense_batch(seed, 0, n, ctx, 0.0, periods)
    return x


def take(run, *, ctx, periods, seed, copy_set, whole=True):
    """Snapshot RUN (train_live's run) now, measured -> the snapshot. Unless WHOLE, the table of
    heads pulled out is left to measure_one(), one row a call (each is a pass over the copy
    set: all at once they would keep the worker from the rest of the page for a second)."""
    global _snapshot
    params = {k: v.copy() for k, v in run["params"].items()}
    cfg, recipe = dict(run["cfg"]), dict(run["recipe"])
    x, ps = copy_set
    copying, induction = measure.copying(params, cfg, x, ps, return_att=True)
    L, H = cfg["n_layer"], cfg["n_head"]
    todo = []  # (row of the ablation table, the heads it pulls out), as the evaluation's
    for layer in range(L):
        todo += [(f"L{layer + 1}H{h + 1}", [(layer, h)]) for h in range(H)]
        todo.append((f"layer{layer + 1}", [(layer, h) for h in range(H)]))
    step = run["step"]
    _snapshot = {
        "params": params,
        "cfg": cfg,
        "recipe": recipe,
        "step": step,
        "loss": run["losses"][-1] if run["losses"] else None,
        "n_params": cm.n_params(params),
        "max_chars": ctx,
        "n_copy": len(ps),
        "measured": {
            "step": step,
            "copying": round(copying, 4),
            "induction": [[round(float(v), 4) for v in row] for row in induction],
            "habits": measure.habits(params, cfg, habit_text(len(ps), ctx, periods, seed)),
        },
        "ablation": {"none": {"copying": round(copying, 4)}},
        "todo": todo,
        "copy_set": (x, ps),
    }
    while whole and measure_one():
        pass
    return _snapshot


def measure_one():
    """Measure one more row of the snapshot's ablation table -> how many are left."""
    snap = _snapshot
    if snap is None or not snap["todo"]:
        return 0
    key, heads = snap["todo"].pop(0)
    copying = measure.copying(snap["params"], snap["cfg"], *snap["copy_set"], ablate=heads)
    snap["ablation"][key] = {"copying": round(copying, 4)}
    return len(snap["todo"])


def get():
    """The snapshot the reader picked, measured in full, or None (a new tab, or after Reset)."""
    while measure_one():
        pass
    return _snapshot


def drop():
    global _snapshot
    _snapshot = None
