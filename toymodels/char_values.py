"""Numbers the prose of "One character at a time" quotes, read from the shipped evaluation.

Each is a function without arguments, so a chapter can write {{ toymodels.char_values.NAME }}
and the number on the page is the one the evaluation measured, never typed in.
"""
from . import char_lab as lab

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


def _jump():
    """(the last checkpoint before copying appears, the first after it) of the model shown first."""
    return lab.when_copying_appears(SHOWN)


def _copied_at(c):
    return f"{_pct(c['copying'])} at step {c['step']:,}"


def jump_before():
    return _copied_at(_jump()[0])


def jump_after():
    return _copied_at(_jump()[1])


def jump_steps():
    a, b = _jump()
    return f"{b['step'] - a['step']:,}"


def jump_bits():
    """Held-out bits per character before and after copying appears."""
    a, b = _jump()
    return f"{a['valid_bits']:.2f} bits per character at step {a['step']:,} and {b['valid_bits']:.2f} at step {b['step']:,}"


def vocab_size():
    return len(lab.cm.VOCAB)


def context():
    return lab.MAX_CHARS


def d_head():
    return lab.manifest(SHOWN)["config"]["d_head"]


def wide_d_head():
    return lab.manifest("induction")["config"]["d_head"]


def _ablations(run=SHOWN):
    ab = lab.evaluation()["runs"][run]["ablation"]
    return sorted(((k, v) for k, v in ab.items() if k.startswith("L")), key=lambda kv: kv[1]["copying"])


def worst_head():
    return _ablations()[0][0]


def worst_head_copying():
    return _pct(_ablations()[0][1]["copying"], 1)


def layer1_out_copying():
    return _pct(lab.evaluation()["runs"][SHOWN]["ablation"]["layer1"]["copying"], 1)


def layer2_out_copying():
    return _pct(lab.evaluation()["runs"][SHOWN]["ablation"]["layer2"]["copying"], 1)


def spaces_only():
    """What always guessing a space scores on the copying test: the floor a model that cannot copy sits near."""
    from toymodels import charmodel as cm
    from toymodels.training.evaluate import copy_set   # build time only: the trainer is not shipped
    x, periods = copy_set()
    right = sum(int((x[i, P + 1:] == cm.STOI[" "]).sum()) for i, P in enumerate(periods))
    total = sum(x.shape[1] - 1 - int(P) for P in periods)
    return _pct(right / total, 1)
