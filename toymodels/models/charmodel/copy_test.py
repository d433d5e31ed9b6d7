"""The copying test's text: random nonsense repeated, where only copying predicts the repeat.

Shipped, because the chapter quotes what always guessing a space scores on this test;
the trainer (toymodels/training/) mixes the same nonsense into its training stretches and
the evaluation measures copying on `copy_set()`.
"""

import numpy as np

from . import model as cm

COPY_SEED = 2017
N_STRETCHES = 200  # stretches in the test
PERIODS = (16, 32)  # the shortest and longest piece of nonsense that repeats
N_LETTERS = 26  # the nonsense draws its letters from a to z
# a head whose mean attention to "what came next last time" on this test is at least this much
# copies what came next: an induction head
INDUCTION_AT = 0.30


def nonsense(rng, period_range=PERIODS, word_range=(1, 7)):
    """Random nonsense of a length drawn from PERIOD_RANGE: random letters, words of random
    length."""
    n = int(rng.integers(period_range[0], period_range[1] + 1))
    out = []
    while len(out) < n:
        out.extend(
            rng.integers(0, N_LETTERS, int(rng.integers(word_range[0], word_range[1] + 1))).tolist()
        )
        out.append(cm.STOI[" "])
    return np.array(out[:n], dtype=np.int64)


def tile(seq, length):
    return np.resize(seq, length)  # seq, seq, seq … cut to LENGTH


def copy_set(n=N_STRETCHES, ctx=64, seed=COPY_SEED):
    """(x (n, ctx) int, periods (n,)) of repeated random nonsense."""
    rng = np.random.default_rng(seed)
    xs, ps = [], []
    for _ in range(n):
        seq = nonsense(rng, PERIODS)
        xs.append(tile(seq, ctx))
        ps.append(len(seq))
    return np.stack(xs), np.array(ps)


def induction_heads(evaluation, run):
    """The (layer, head) pairs, 0-based, whose induction score at RUN's last checkpoint in
    EVALUATION (charmodel/evaluation.json) is at least INDUCTION_AT."""
    scores = evaluation["runs"][run]["checkpoints"][-1]["induction"]  # (L, H)
    return [(m, h) for m, row in enumerate(scores) for h, s in enumerate(row) if s >= INDUCTION_AT]
