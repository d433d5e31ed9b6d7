"""What the character model learned, per shipped checkpoint, into
toymodels/data/charmodel/evaluation.json.

    python -m toymodels.training.evaluate  # every run under toymodels/data/charmodel/
    python -m toymodels.training.evaluate --runs reference

For every checkpoint of a run:
  valid_bits  held-out loss in bits per character: mean over every position of 1,000 stretches of
              64 characters evenly spaced through the validation text (the last 5% of each novel);
  copying     in-context copying: 200 stretches of 64 characters of repeated random nonsense
              (random letters in words of 1-7 letters; the nonsense, of a period P drawn from
              16..32, repeats until the stretch is full; seed 2017, a stream the trainer never
              uses). The score is the share of characters of the repeats (positions P+1 … 63; the
              first character of the second copy cannot be inferred) whose most likely prediction
              is right;
  induction   per head, mean attention from a character in the repeats to the character just after
              its earlier occurrence (one period back, plus one): the induction-head signature;
  habits      per head on held-out text (query positions 2…63 of 200 stretches): mean attention
              weight on the previous character, on two back, on itself, and on spaces.
For the last checkpoint also: copying with each head pulled out in turn (its output set to zero),
with all of layer 1 and all of layer 2 pulled out, and the held-out bits with each head pulled out.
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np

from toymodels.models.charmodel import model as cm
from toymodels.models.charmodel.copy_test import copy_set
from toymodels.one_character import measure

from . import SHIP


def copying(params, cfg, n=200, ctx=64, ablate=(), batch=100, return_att=False):
    x, ps = copy_set(n, ctx)
    return measure.copying(params, cfg, x, ps, ablate, batch, return_att)


def valid_stretches(valid, n, ctx):
    starts = np.linspace(0, len(valid) - ctx - 1, n).astype(int)
    return np.stack([valid[s : s + ctx + 1] for s in starts])  # (n, ctx+1)


def valid_bits(params, cfg, valid, n=1000, ctx=64, ablate=(), batch=250):
    xy = valid_stretches(valid, n, ctx)
    tot = 0.0
    for s in range(0, n, batch):
        logits, _ = cm.forward(params, cfg, xy[s : s + batch, :-1], ablate=ablate)  # (b, T, V)
        lp = logits - logits.max(-1, keepdims=True)
        lp = lp - np.log(np.exp(lp).sum(-1, keepdims=True))  # (b, T, V) log-probs
        tgt = xy[s : s + batch, 1:]
        tot += -np.take_along_axis(lp, tgt[..., None], -1).sum()
    return float(tot / (n * ctx) / np.log(2))


def habits(params, cfg, valid, n=200, ctx=64):
    return measure.habits(params, cfg, valid_stretches(valid, n, ctx)[:, :-1])


def evaluate_run(run, valid, ship=SHIP, steps=None, log=print):
    manifest = json.loads((ship / run / "manifest.json").read_text())
    steps = steps or manifest["steps"]
    rows = []
    for step in steps:
        params, cfg, _ = cm.load_npz((ship / run / cm.checkpoint_name(step)).read_bytes())
        cp, ind = copying(params, cfg, return_att=True)
        hb = habits(params, cfg, valid)
        row = {
            "step": step,
            "valid_bits": round(valid_bits(params, cfg, valid), 4),
            "copying": round(cp, 4),
            "induction": [[round(float(v), 4) for v in layer] for layer in ind],
            "habits": hb,
        }
        rows.append(row)
        log(
            f"{run} step {step}: {row['valid_bits']:.3f} bits/char, copying {cp:.1%}, "
            f"max induction score {ind.max():.2f}"
        )

    # params, cfg: the last checkpoint, left by the loop
    def without(ab):
        return {
            "copying": round(copying(params, cfg, ablate=ab), 4),
            "valid_bits": round(valid_bits(params, cfg, valid, ablate=ab), 4),
        }

    L, H = cfg["n_layer"], cfg["n_head"]
    ablation = {"none": {"copying": rows[-1]["copying"], "valid_bits": rows[-1]["valid_bits"]}}
    for layer in range(L):
        for h in range(H):
            ablation[f"L{layer + 1}H{h + 1}"] = without([(layer, h)])
        ablation[f"layer{layer + 1}"] = without([(layer, h) for h in range(H)])
    log(
        f"{run} ablations at step {steps[-1]}: "
        + ", ".join(f"{k} {v['copying']:.1%}" for k, v in ablation.items())
    )
    return {
        "config": cfg,
        "recipe": manifest.get("recipe"),
        "n_params": cm.n_params(params),
        "train_seconds": manifest.get("seconds"),
        "checkpoints": rows,
        "final_step": steps[-1],
        "ablation": ablation,
    }


def summary(run, r):
    """One Markdown table row: recipe -> held-out bits, copying over training, head habits at the
    end."""
    rec, cfg = r["recipe"] or {}, r["config"]
    levers = ", ".join(f"{k} {rec[k]}" for k in ("repeat_share", "nonsense_share") if rec.get(k))
    for k, default in (("init_std", 0.02), ("lr_floor", 0.1)):
        if rec.get(k, default) != default:
            levers = ", ".join(x for x in (levers, f"{k} {rec[k]}") if x)
    shape = f"D{cfg['d_model']} {cfg['n_head']}x{cfg['d_head']}, {r['n_params']:,d} p."
    recipe = (
        f"{shape}; {rec.get('steps')} x {rec.get('batch')}x{rec.get('ctx')}, lr {rec.get('lr')}"
        + (f"; {levers}" if levers else "")
    )
    rows = r["checkpoints"]
    copy = " ".join(
        f"{c['step']}:{c['copying']:.0%}" for c in rows if c["step"] % 1000 == 0 or c is rows[-1]
    )
    last = rows[-1]
    best = max((h for h in last["habits"] if h["layer"] == 1), key=lambda h: h["previous"])
    ind = np.array(last["induction"])
    layer, h = np.unravel_index(ind.argmax(), ind.shape)
    habits = (
        f"L1 most on previous: L1H{best['head']} {best['previous']:.2f}; "
        f"best induction score: L{layer + 1}H{h + 1} {ind.max():.2f}"
    )
    abl = r["ablation"]
    worst = {
        k: min((n for n in abl if n.startswith(f"L{k}H")), key=lambda n: abl[n]["copying"])
        for k in (1, 2)
    }
    ablated = ", ".join(f"{worst[k]} out {abl[worst[k]]['copying']:.0%}" for k in (1, 2))
    return (
        f"| {run} | {recipe} | {last['valid_bits']:.3f} | {copy} | {habits} | "
        f"{ablated}, layer 2 out {abl['layer2']['copying']:.0%} |"
    )


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--runs", nargs="*", help="default: every folder under toymodels/data/charmodel/"
    )
    p.add_argument("--ship-dir", default=str(SHIP))
    p.add_argument("--out", default=None, help="default: SHIP_DIR/evaluation.json")
    p.add_argument(
        "--every",
        type=int,
        default=0,
        help="only checkpoints at multiples of this step (and the last)",
    )
    a = p.parse_args(argv)
    ship = Path(a.ship_dir)
    from .corpus import load_split

    _, valid = load_split()
    runs = a.runs or sorted(d.name for d in ship.iterdir() if (d / "manifest.json").exists())
    out = Path(a.out) if a.out else ship / "evaluation.json"
    result = json.loads(out.read_text()) if out.exists() else {}
    result.setdefault("runs", {})
    result["about"] = __doc__.split("\n\n", 2)[2].strip()
    t0 = time.time()
    for run in runs:
        steps = None
        if a.every:
            steps = json.loads((ship / run / "manifest.json").read_text())["steps"]
            steps = [s for s in steps if s % a.every == 0 or s == steps[-1]]
        result["runs"][run] = evaluate_run(run, valid, ship, steps=steps)
    out.write_text(json.dumps(result, indent=1))
    print(f"wrote {out} in {time.time() - t0:.0f} s")
    for run in runs:
        print(summary(run, result["runs"][run]))


if __name__ == "__main__":
    main()
