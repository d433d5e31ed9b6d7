"""Numbers the prose of "One character at a time" quotes, read from the shipped evaluation.

Each is a function without arguments, so a chapter can write
{{ toymodels.one_character.values.NAME }} and the number on the page is the one the evaluation
measured, never typed in.
"""

from ..page.html import count_words
from ..page.prose import public_functions
from . import copy_test, lab

SHOWN = lab.DEFAULT_RUN


def _end(run):
    return lab.evaluation()["runs"][run]["checkpoints"][-1]


def _pct(x, places=0):
    return f"{100 * x:.{places}f}%"


def reference_copying():
    return _pct(_end("reference")["copying"], 1)


def reference_bits():
    return f"{_end('reference')['valid_bits']:.2f}"


def shown_copying():
    return _pct(_end(SHOWN)["copying"], 1)


def shown_bits():
    return f"{_end(SHOWN)['valid_bits']:.2f}"


def shown_params():
    return f"{lab.evaluation()['runs'][SHOWN]['n_params']:,}"


def shown_lr():
    return f"{lab.manifest(SHOWN)['recipe']['lr']:g}"


def reference_lr():
    return f"{lab.manifest('reference')['recipe']['lr']:g}"


def shown_repeat_share():
    return _pct(lab.manifest(SHOWN)["recipe"]["repeat_share"])


def shown_nonsense_share():
    return _pct(lab.manifest(SHOWN)["recipe"]["nonsense_share"])


def shown_not_plain():
    """How much of the shown model's training text was repeats and nonsense, to start a sentence:
    'Half'."""
    recipe = lab.manifest(SHOWN)["recipe"]
    share = recipe["repeat_share"] + recipe["nonsense_share"]
    return "Half" if share == 0.5 else _pct(share)


def _jump():
    """(the last checkpoint before copying appears, the first after it) of the model shown first."""
    return lab.when_copying_appears(SHOWN)


def _copied_at(c):
    return f"{_pct(c['copying'], 1)} at step {c['step']:,}"


def jump_before():
    return _copied_at(_jump()[0])


def jump_after():
    return _copied_at(_jump()[1])


def jump_steps():
    a, b = _jump()
    return f"{b['step'] - a['step']:,}"


def jump_bits():
    """What the loss on held-out prose does while copying appears, with its numbers."""
    a, b = _jump()
    change = b["valid_bits"] - a["valid_bits"]
    way = (
        "barely moves"
        if abs(change) < 0.02
        else ("gets slightly worse" if change > 0 else "improves a little")
    )
    return (
        f"{way}: {a['valid_bits']:.2f} bits per character at step {a['step']:,}, "
        f"{b['valid_bits']:.2f} at step {b['step']:,}"
    )


def n_models():
    return count_words(len(lab.RUNS))


def _reference_size():
    return sum(lab.manifest(run)["config"] == lab.cm.REFERENCE for run in lab.RUNS)


def n_reference_size():
    """How many of the shipped models have the reference size."""
    return count_words(_reference_size())


def n_other_size():
    """How many of the shipped models do not: the wide one."""
    return count_words(len(lab.RUNS) - _reference_size())


def n_copiers():
    return count_words(sum(lab.when_copying_appears(run) is not None for run in lab.RUNS))


def wide_factor():
    """How many times wider the wide model's stream is than the reference size's."""
    return _times(lab.manifest("induction")["config"]["d_model"] // lab.cm.REFERENCE["d_model"])


def mlp_factor():
    return _times(lab.cm.REFERENCE["d_mlp"] // lab.cm.REFERENCE["d_model"])


def heads_title():
    """'Eight heads, eight jobs': one job per head of the reference size."""
    n = count_words(lab.cm.REFERENCE["n_layer"] * lab.cm.REFERENCE["n_head"])
    return f"{n.capitalize()} heads, {n} jobs"


def _times(n):
    return {2: "twice", 3: "three times"}.get(n, f"{count_words(n)} times")


def _feeders():
    """Layer-1 heads whose removal costs copying most, and the sharpest previous-character head of
    layer 1."""
    ab = lab.evaluation()["runs"][SHOWN]["ablation"]
    final = lab.steps(SHOWN)[-1]
    labels = {(layer, head): name for layer, head, name, _ in lab.labels(SHOWN, final)}
    first = sorted((k for k in ab if k.startswith("L1H")), key=lambda k: ab[k]["copying"])
    sharp = [k for k in first if labels[(1, int(k[3:]))] == "previous character"]
    return ab, first, sharp


def layer1_feeders():
    ab, first, sharp = _feeders()
    worst = [k for k in first[:2] if k not in sharp]
    return " or ".join(f"{k} ({_pct(ab[k]['copying'], 1)})" for k in worst)


def layer1_sharp():
    ab, first, sharp = _feeders()
    return f"{sharp[0]} ({_pct(ab[sharp[0]]['copying'], 1)})" if sharp else "none"


def vocab_size():
    return len(lab.cm.VOCAB)


def context():
    return lab.MAX_CHARS


def d_head():
    return lab.manifest(SHOWN)["config"]["d_head"]


def wide_d_head():
    return lab.manifest("induction")["config"]["d_head"]


def _ablations():
    ab = lab.evaluation()["runs"][SHOWN]["ablation"]
    return sorted(
        ((k, v) for k, v in ab.items() if k.startswith("L")), key=lambda kv: kv[1]["copying"]
    )


def worst_head():
    return _ablations()[0][0]


def worst_head_copying():
    return _pct(_ablations()[0][1]["copying"], 1)


def layer1_out_copying():
    return _pct(lab.evaluation()["runs"][SHOWN]["ablation"]["layer1"]["copying"], 1)


def layer2_out_copying():
    return _pct(lab.evaluation()["runs"][SHOWN]["ablation"]["layer2"]["copying"], 1)


def spaces_only():
    """What always guessing a space scores on the copying test: the floor a model that cannot copy
    sits near."""
    x, periods = copy_test.copy_set()
    right = sum(int((x[i, P + 1 :] == lab.cm.STOI[" "]).sum()) for i, P in enumerate(periods))
    total = sum(x.shape[1] - 1 - int(P) for P in periods)
    return _pct(right / total, 1)


PROSE_VALUES = public_functions(globals())  # every public function above
