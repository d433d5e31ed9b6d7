"""What a character model learned, measured per head: copying, the induction score, habits.

What: copying(params, cfg, x, periods) is the share of a repeated stretch's characters the
model predicts right (the first of each repeat cannot be inferred), with each head's induction
score (mean weight from a character in the repeats to the one just after its earlier
occurrence) if asked; habits(params, cfg, x) is each head's mean weight on the previous
character, two back, itself and spaces.

Why shipped: the build's evaluation (toymodels/training/evaluate.py) measures the shipped
checkpoints with these functions, and the browser measures the reader's own model ("Train it
yourself") with the same ones, so both get their head labels (lab.head_label) from one
calculation.
"""

import numpy as np

from ..models.charmodel import model as cm


def copying(params, cfg, x, periods, ablate=(), batch=100, return_att=False):
    """Share of the repeats' characters of x (n, T) predicted right, P the period of each
    stretch (positions P+1 … T-1); with RETURN_ATT also (L, H) induction scores."""
    n, ctx = x.shape
    right = total = 0
    ind = np.zeros((cfg["n_layer"], cfg["n_head"]))
    for s in range(0, n, batch):
        xb, pb = x[s : s + batch], periods[s : s + batch]
        logits, c = cm.forward(params, cfg, xb, ablate=ablate, keep=return_att)  # (b, T, V)
        pred = logits.argmax(-1)  # (b, T)
        for i, P in enumerate(pb):
            right += int((pred[i, P : ctx - 1] == xb[i, P + 1 :]).sum())  # predicting P+1 … ctx-1
            total += ctx - 1 - P
            if return_att:
                t = np.arange(P, ctx)  # queries in the repeats
                for layer in range(cfg["n_layer"]):
                    ind[layer] += c[f"h{layer}.att"][i][:, t, t - P + 1].mean(-1)  # (H,)
    if return_att:
        return right / total, ind / n
    return right / total


def habits(params, cfg, x):
    """[{layer, head, previous, two_back, itself, spaces}] per head, 1-based, on x (n, T):
    mean weight over query positions 2 … T-1."""
    _, c = cm.forward(params, cfg, x, keep=True)
    t = np.arange(2, x.shape[1])
    space = x == cm.STOI[" "]  # (n, T)
    out = []
    for layer in range(cfg["n_layer"]):
        att = c[f"h{layer}.att"]  # (n, H, T, T)
        for h in range(cfg["n_head"]):
            a = att[:, h]  # (n, T, T)
            out.append(
                {
                    "layer": layer + 1,
                    "head": h + 1,
                    "previous": round(float(a[:, t, t - 1].mean()), 4),
                    "two_back": round(float(a[:, t, t - 2].mean()), 4),
                    "itself": round(float(a[:, t, t].mean()), 4),
                    "spaces": round(float((a[:, t, :] * space[:, None, :]).sum(-1).mean()), 4),
                }
            )
    return out
