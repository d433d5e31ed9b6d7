"""The reader's own model, as the chapter's figure uses it: a snapshot of "Train it yourself".

What: take(run) copies the weights of the run training in this Python worker (train_live.py)
at the moment the reader picks it, measures them the way the build's evaluation measures the
shipped checkpoints (measure.py: copying and each head's induction score on the trainer's own
repeated nonsense, each head's habits on random words that never repeat, copying with each head
and each layer pulled out) and keeps them; get() hands the snapshot to figure.py
(get_or_take() first takes one if the reader chose the model in the figure), drop() forgets
it (Reset). The snapshot stays as it was when picked while the run trains on, so the figure
never changes under the reader; picking again takes a new one.

Why a snapshot of its own: the figure redraws from its state alone, and a model that moved
between two taps would make a tap's answer depend on when it came.
"""

from . import measure
from . import model as cm
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


def take(run, *, ctx, periods, seed, copy_set):
    """Snapshot RUN (train_live's run) now, measured -> the snapshot."""
    global _snapshot
    params = {k: v.copy() for k, v in run["params"].items()}
    cfg, recipe = dict(run["cfg"]), dict(run["recipe"])
    x, ps = copy_set
    copying, induction = measure.copying(params, cfg, x, ps, return_att=True)
    L, H = cfg["n_layer"], cfg["n_head"]

    def without(heads):  # as the evaluation's ablation table: copying with HEADS pulled out
        return {"copying": round(measure.copying(params, cfg, x, ps, ablate=heads), 4)}

    ablation = {"none": {"copying": round(copying, 4)}}
    for layer in range(L):
        for h in range(H):
            ablation[f"L{layer + 1}H{h + 1}"] = without([(layer, h)])
        ablation[f"layer{layer + 1}"] = without([(layer, h) for h in range(H)])
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
        "ablation": ablation,
    }
    return _snapshot


def get():
    """The snapshot the reader picked, or None (a new tab, or after Reset)."""
    return _snapshot


def training_step():
    """The step of the run in this worker's trainer, or None if there is none."""
    from . import train_live  # it imports this module

    return train_live.current_step()


def get_or_take():
    """The snapshot; if none was picked but the trainer has a run, one taken from it now."""
    if _snapshot is None and training_step() is not None:
        from . import train_live

        train_live.pick()
    return _snapshot


def drop():
    global _snapshot
    _snapshot = None
