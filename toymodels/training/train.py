"""Train toymodels/models/charmodel/model.py in numpy (the step itself, hand-written backward
pass and Adam, is the shipped toymodels/one_character/trainstep.py, which the browser runs too),
fixed seed, resumable.

The reference run (27,166 parameters), then a search run:

    python -m toymodels.training.train
    python -m toymodels.training.train --run NAME --d-model 64 --repeat-share 0.5 …

Reference recipe (the defaults): 9,000 steps, each reading 48 stretches of 64 characters drawn
at random from the training part of the six novels; Adam (betas 0.9, 0.99, no weight decay)
at 3e-3 with 200 steps of linear warm-up and a cosine decay to a tenth; gradients clipped to
norm 1; seed 0. Embeddings start N(0, 1) (comparable in size to the sinusoidal position code),
the other matrices N(0, 0.02), the two projections into the residual stream (wo, w2)
N(0, 0.02/sqrt(2L)).

Levers for the induction-head search (all off in the reference recipe):
  --repeat-share P   a share P of the stretches hold a repeated passage: a stretch of the novels
                     of random length L in [ctx/8, ctx/2] followed by itself again (and again, until
                     the stretch is full), starting at a random place inside the stretch
                     (text before it is ordinary novel text).
  --nonsense-share P a share P of the stretches are repeated random nonsense, made like the
                     evaluation's (random letters, words of random length, varied period), but
                     from a different random stream.
Batches are a function of (seed, step) only, so a resumed run reads the same batches.

State for resuming (float32 weights + Adam moments) goes to runs/NAME/state.npz under the cache
folder (sitebuild.fetched.assets.cache_dir()/charmodel-runs); the shipped float16 checkpoints go to
toymodels/data/charmodel/NAME/step_NNNNN.npz at the steps --ckpt-every/--ckpt-dense pick,
listed in manifest.json.
"""

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from toymodels.models.charmodel import model as cm
from toymodels.models.charmodel.copy_test import nonsense, tile
from toymodels.one_character import trainstep
from toymodels.one_character.trainstep import (  # noqa: F401  (the trainer's names, as before)
    gelu_grad,
    init_params,
    layer_entries,
    ln_backward,
    loss_and_grads,
)

from . import SHIP

# ---------------------------------------------------------------- data


def get_batch(data, step, seed, batch, ctx, repeat_share=0.0, nonsense_share=0.0):
    """(idx, targets), each (batch, ctx); a function of (seed, step) only."""
    rng = np.random.default_rng([seed, step, 1])
    starts = rng.integers(0, len(data) - ctx - 1, batch)  # (batch,)
    x = np.stack([data[s : s + ctx + 1] for s in starts])  # (batch, ctx+1)
    kind = rng.random(batch)  # (batch,)
    for i in range(batch):
        if kind[i] < nonsense_share:
            x[i] = tile(nonsense(rng, (max(4, ctx // 8), ctx // 2)), ctx + 1)
        elif kind[i] < nonsense_share + repeat_share:
            L = int(rng.integers(max(4, ctx // 8), ctx // 2 + 1))
            at = int(rng.integers(0, ctx + 1 - 2 * L + 1))
            s = int(rng.integers(0, len(data) - L))
            x[i, at:] = tile(data[s : s + L], ctx + 1 - at)
    return x[:, :-1], x[:, 1:]


# ---------------------------------------------------------------- schedule, Adam, checkpoints


def lr_at(step, a):
    return trainstep.lr_at(step, a.lr, a.warmup, a.steps, a.lr_floor)


def ship_steps(a):
    """Steps whose float16 weights are shipped: every ckpt_every, every ckpt_dense_every inside
    ckpt_dense."""
    lo, hi = a.ckpt_dense
    steps = {0, a.steps}
    steps |= set(range(0, a.steps + 1, a.ckpt_every))
    steps |= set(range(lo, min(hi, a.steps) + 1, a.ckpt_dense_every))
    return sorted(steps)


def config_of(a):
    return {
        "vocab": 30,
        "d_model": a.d_model,
        "n_layer": a.n_layer,
        "n_head": a.n_head,
        "d_head": a.d_head,
        "d_mlp": a.d_mlp or 4 * a.d_model,
        "pos_base": a.pos_base,
    }


def recipe_of(a):
    keys = (
        "steps",
        "batch",
        "ctx",
        "lr",
        "lr_floor",
        "warmup",
        "beta2",
        "clip",
        "seed",
        "emb_std",
        "init_std",
        "repeat_share",
        "nonsense_share",
    )
    return {k: getattr(a, k) for k in keys}


def parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--run", default="reference", help="name: checkpoints go to toymodels/data/charmodel/RUN/"
    )
    p.add_argument("--steps", type=int, default=9000)
    p.add_argument("--batch", type=int, default=48)
    p.add_argument("--ctx", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument(
        "--lr-floor", type=float, default=0.1, help="final learning rate as a share of --lr"
    )
    p.add_argument("--warmup", type=int, default=200)
    p.add_argument("--beta2", type=float, default=0.99)
    p.add_argument("--clip", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--emb-std", type=float, default=1.0)
    p.add_argument("--init-std", type=float, default=0.02)
    p.add_argument("--d-model", type=int, default=32)
    p.add_argument("--n-layer", type=int, default=2)
    p.add_argument("--n-head", type=int, default=4)
    p.add_argument("--d-head", type=int, default=8)
    p.add_argument("--d-mlp", type=int, default=0, help="0 means 4 x d-model")
    p.add_argument("--pos-base", type=float, default=10000.0)
    p.add_argument("--repeat-share", type=float, default=0.0)
    p.add_argument("--nonsense-share", type=float, default=0.0)
    p.add_argument(
        "--ckpt-every", type=int, default=500, help="ship a float16 checkpoint this often"
    )
    p.add_argument(
        "--ckpt-dense",
        type=int,
        nargs=2,
        default=(0, 3000),
        metavar=("FROM", "TO"),
        help="… and every --ckpt-dense-every steps between these",
    )
    p.add_argument("--ckpt-dense-every", type=int, default=100)
    p.add_argument(
        "--state-every", type=int, default=250, help="save the resumable state this often"
    )
    p.add_argument(
        "--eval-every", type=int, default=500, help="print held-out loss and copying this often"
    )
    p.add_argument("--ship-dir", default=str(SHIP))
    p.add_argument("--state-dir", default=None, help="default: cache_dir()/charmodel-runs/RUN")
    p.add_argument("--fresh", action="store_true", help="ignore a saved state and start again")
    p.add_argument(
        "--stop-at",
        type=int,
        default=None,
        help="save the state and stop at this step (resume later)",
    )
    p.add_argument("--no-progress", action="store_true")
    return p


def state_dir_of(a):
    if a.state_dir:
        return Path(a.state_dir)
    from .corpus import cache_dir

    return cache_dir() / "charmodel-runs" / a.run


def save_state(path, params, m, v, step, a):
    arrays = {f"p:{n}": x for n, x in params.items()}
    arrays.update({f"m:{n}": x for n, x in m.items()})
    arrays.update({f"v:{n}": x for n, x in v.items()})
    meta = {"step": step, "config": config_of(a), "recipe": recipe_of(a)}
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, __meta__=np.array(json.dumps(meta)), **arrays)
    tmp.replace(path)


def load_state(path):
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["__meta__"]))

        def grab(pre):
            return {n[2:]: z[n] for n in z.files if n.startswith(pre)}

        return meta, grab("p:"), grab("m:"), grab("v:")


def progress(step, total, loss, speed, extra=""):
    width = 30
    done = int(width * step / total)
    sys.stderr.write(
        f"\r[{'#' * done}{'.' * (width - done)}] {step}/{total} loss {loss:.3f} "
        f"({loss / math.log(2):.3f} bits/char) {speed:.1f} steps/s {extra}   "
    )
    sys.stderr.flush()


def train(a, train_data=None, valid_data=None, log=print):
    """Run (or resume) the training A describes; returns the final float32 params."""
    cfg = config_of(a)
    if train_data is None:
        from .corpus import load_split

        train_data, valid_data = load_split()
    sdir = state_dir_of(a)
    sdir.mkdir(parents=True, exist_ok=True)
    ship = Path(a.ship_dir) / a.run
    state_path = sdir / "state.npz"
    to_ship = set(ship_steps(a))
    start = 0
    if state_path.exists() and not a.fresh:
        meta, params, m, v = load_state(state_path)
        if meta["config"] != cfg or meta["recipe"] != recipe_of(a):
            raise SystemExit(
                f"{state_path} was saved by another recipe ({meta['recipe']}, {meta['config']}); "
                f"use --fresh to start again or another --run name"
            )
        start = meta["step"]
        log(f"resuming {a.run} at step {start}")
    else:
        params = init_params(cfg, a.seed, a.emb_std, a.init_std)
        m, v = trainstep.adam_state(params)
    ship.mkdir(parents=True, exist_ok=True)
    manifest_path = ship / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() and start > 0 else {}
    manifest.update(
        {"run": a.run, "config": cfg, "recipe": recipe_of(a), "n_params": cm.n_params(params)}
    )
    manifest.setdefault("steps", [])
    manifest.setdefault("log", [])
    log(
        f"{a.run}: {cm.n_params(params):,d} parameters, "
        f"{a.steps} steps of {a.batch} x {a.ctx} characters"
    )
    b1, b2, eps = 0.9, a.beta2, 1e-8
    t0, t_last, ema = time.time(), time.time(), None
    for step in range(start, a.steps + 1):
        if step in to_ship and step not in manifest["steps"]:
            cm.save_checkpoint(
                ship / cm.checkpoint_name(step), params, cfg, step, extra={"run": a.run}
            )
            manifest["steps"] = sorted(set(manifest["steps"]) | {step})
            manifest["seconds"] = manifest.get("seconds", 0.0) + time.time() - t_last
            t_last = time.time()
            manifest_path.write_text(json.dumps(manifest, indent=1))
        if a.eval_every and step % a.eval_every == 0 and valid_data is not None:
            from .evaluate import copying, valid_bits

            vb = valid_bits(params, cfg, valid_data, n=32, ctx=a.ctx)
            cp = copying(params, cfg, n=50)
            log(f"\nstep {step}: held-out {vb:.3f} bits/char, copying {cp:.1%}")
            manifest["log"] = [e for e in manifest["log"] if e["step"] != step] + [
                {
                    "step": step,
                    "valid_bits": round(vb, 4),
                    "copying50": round(cp, 4),
                    "train_loss_ema": ema,
                }
            ]
            manifest_path.write_text(json.dumps(manifest, indent=1))
        if step == a.steps:
            break
        if a.stop_at is not None and step >= a.stop_at:
            save_state(state_path, params, m, v, step, a)
            log(f"\n{a.run}: stopped at step {step}; run again to resume")
            return params
        idx, tgt = get_batch(
            train_data, step, a.seed, a.batch, a.ctx, a.repeat_share, a.nonsense_share
        )
        loss, g = loss_and_grads(params, cfg, idx, tgt)
        trainstep.adam(params, g, m, v, step, lr_at(step, a), b1, b2, a.clip, eps)
        ema = loss if ema is None else 0.98 * ema + 0.02 * loss
        if (step + 1) % a.state_every == 0:
            save_state(state_path, params, m, v, step + 1, a)
        if not a.no_progress and (step % 10 == 0 or step + 1 == a.steps):
            progress(step + 1, a.steps, ema, (step + 1 - start) / (time.time() - t0))
    save_state(state_path, params, m, v, a.steps, a)
    manifest_path.write_text(json.dumps(manifest, indent=1))
    log(f"\n{a.run}: done in {time.time() - t0:.0f} s this session")
    return params


def main(argv=None):
    a = parser().parse_args(argv)
    train(a)


if __name__ == "__main__":
    main()
