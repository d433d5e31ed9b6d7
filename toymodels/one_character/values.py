"""Numbers the prose of "One character at a time" quotes, read from the shipped evaluation.

Each is a function without arguments, so a chapter can write
{{ toymodels.one_character.values.NAME }} and the number on the page is the one the evaluation
measured, never typed in.
"""

import math

import numpy as np

from ..models.charmodel import copy_test
from ..models.charmodel import model as cm
from ..page.html import capital, count_words, head_name
from ..page.prose import public_functions
from . import lab

SHOWN = lab.DEFAULT_RUN
BREAKS = 0.5  # a head "breaks" the model when its removal costs this share of the way to uniform


def _end(run):
    return lab.evaluation()["runs"][run]["checkpoints"][-1]


def _pct(x, places=0):
    return f"{100 * x:.{places}f}%"


def reference_copying():
    return _pct(_end("reference")["copying"], 1)


def shown_params():
    return f"{lab.evaluation()['runs'][SHOWN]['n_params']:,}"


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


def mlp_factor():
    return _times(lab.cm.REFERENCE["d_mlp"] // lab.cm.REFERENCE["d_model"])


def _final_labels(run=SHOWN):
    return lab.labels(run, lab.steps(run)[-1])


# each habit as the prose says what a head with it does, in the order the prose lists them
HABIT_PHRASES = {
    "copies what came next": "copy what came next last time",
    "previous character": "look at the previous character",
    "two back": "look two characters back",
    "itself": "look at itself",
    "last few characters": "look at a blur of the last few characters",
    "looks at spaces": "look at spaces",
    "spread wide": "spread their weight wide",
}


def heads_title():
    """'Eight heads, five habits': the heads of the model shown first, and how many different
    habits the evaluation found among them."""
    labels = _final_labels()
    n_habits = len({name for _, _, name, _ in labels})
    return f"{count_words(len(labels), 'head', start=True)}, {count_words(n_habits, 'habit')}"


def heads_habits():
    """What the heads of the model shown first do, grouped by habit, largest group first:
    'two copy what came next last time (L2 H1 and L2 H3); …; and one looks at itself (L2 H4)'."""
    groups = {}
    for layer, head, name, _ in _final_labels():
        groups.setdefault(name, []).append(head_name(layer, head))
    order = sorted(groups, key=lambda name: (-len(groups[name]), list(HABIT_PHRASES).index(name)))
    parts = []
    for name in order:
        heads, phrase = groups[name], HABIT_PHRASES[name]
        if len(heads) == 1:  # the verb agrees with one head: 'looks', 'spreads'
            verb, _, rest = phrase.partition(" ")
            phrase = (verb[:-1] + "ies" if verb.endswith("y") else verb + "s") + " " + rest
        listed = heads[0] if len(heads) == 1 else ", ".join(heads[:-1]) + " and " + heads[-1]
        parts.append(f"{count_words(len(heads))} {phrase} ({listed})")
    return "; ".join(parts[:-1]) + "; and " + parts[-1] if len(parts) > 1 else parts[0]


def n_habits():
    return count_words(len({name for _, _, name, _ in _final_labels()}))


def n_heads_all():
    return count_words(len(_final_labels()))


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


def _named(key):
    """An evaluation key 'L1H2' -> the site's name for that head, 'L1 H2'."""
    layer, _, head = key[1:].partition("H")
    return head_name(int(layer), int(head))


def _breaks(key):
    """Whether pulling out head KEY breaks the model: its held-out bits a character go more than
    BREAKS of the way from the whole model's to a uniform guess's. Such a head's copying cost
    says little about copying, since the model then guesses badly everywhere."""
    ab = lab.evaluation()["runs"][SHOWN]["ablation"]
    whole, uniform = ab["none"]["valid_bits"], math.log2(len(cm.VOCAB))
    return ab[key]["valid_bits"] - whole > BREAKS * (uniform - whole)


def _feeder():
    """The layer-1 head, not the sharpest previous-character one and not one whose removal
    breaks the model, whose removal costs copying most."""
    _, first, sharp = _feeders()
    return next(k for k in first if k not in sharp and not _breaks(k))


def _said(key):
    ab = _feeders()[0]
    return f"{_named(key)} ({_pct(ab[key]['copying'], 1)})"


def _bits(key):
    return f"{_feeders()[0][key]['valid_bits']:.2f}"


def layer1_feeder():
    """The layer-1 head copying needs most, with copying without it: 'L1 H1 (59.9%)'."""
    return _said(_feeder())


def layer1_sharp():
    _, _, sharp = _feeders()
    return _said(sharp[0]) if sharp else "none"


def layer1_pair_bits():
    """Held-out bits a character without the feeder and without the sharpest previous-character
    head, in that order: '3.06 and 3.00'."""
    return f"{_bits(_feeder())} and {_bits(_feeders()[2][0])}"


def whole_bits():
    """Held-out bits a character of the model shown first, every head in (the evaluation's)."""
    return _bits("none")


def layer1_broken():
    """The layer-1 heads whose removal breaks the model, with their bits: 'L1 H4 (4.11 bits a
    character)'."""
    broken = [k for k in _feeders()[1] if _breaks(k)]
    return " and ".join(f"{_named(k)} ({_bits(k)} bits a character)" for k in broken)


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
    return _named(_ablations()[0][0])


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


# ---------------------------------------------------------------- the model's shape and story


def _config(run=SHOWN):
    return lab.manifest(run)["config"]


def n_layers():
    return _config()["n_layer"]


def n_heads():
    return _config()["n_head"]


def d_model():
    return _config()["d_model"]


def n_novels():
    return count_words(lab.N_NOVELS)


def _run_name(run):
    return lab.RUN_NAMES[run]


def published_from():
    return f"{lab.PUBLISHED_JUMP[0]:,}"


def published_to():
    return f"{lab.PUBLISHED_JUMP[1]:,}"


def reference_steps():
    return f"{lab.manifest('reference')['recipe']['steps']:,}"


def reference_batch():
    return lab.manifest("reference")["recipe"]["batch"]


def _recipe(run):
    """How RUN differs from the published recipe, in words: 'learning rate 0.01 instead of
    0.003; …'; the published recipe itself: 'the published size and recipe, on the novels
    alone'."""
    m, ref = lab.manifest(run), lab.manifest("reference")
    out = []
    if m["config"]["d_model"] != ref["config"]["d_model"]:
        out.append(
            f"{m['config']['d_model']} numbers per character instead of {ref['config']['d_model']}"
        )
    r = m["recipe"]
    if r["repeat_share"] or r["nonsense_share"]:
        out.append(
            f"{_pct(r['repeat_share'])} of its training stretches a passage repeated over and "
            f"over and {_pct(r['nonsense_share'])} repeated nonsense"
        )
    if r["lr"] != ref["recipe"]["lr"]:
        out.append(f"learning rate {r['lr']:g} instead of {ref['recipe']['lr']:g}")
    if r["steps"] != ref["recipe"]["steps"]:
        out.append(f"{r['steps']:,} steps instead of {ref['recipe']['steps']:,}")
    return "; ".join(out) if out else "the published size and recipe, on the novels alone"


def _outcome(run):
    end = _end(run)
    when = lab.when_copying_appears(run)
    if when is None:
        return (
            f"never learned to copy ({_pct(end['copying'], 1)}) and scores "
            f"{end['valid_bits']:.2f} bits per character"
        )
    return (
        f"learned to copy ({_pct(end['copying'], 1)}) and scores {end['valid_bits']:.2f} bits "
        "per character"
    )


def _described(run):
    return f"{_recipe(run)}. It {_outcome(run)}"


def story_reference():
    return _described("reference")


def story_shown():
    return _described(SHOWN)


def story_slower():
    return _described("reference-repeats")


def story_wide():
    return _described("induction")


# ---------------------------------------------------------------- the measures, defined


def copy_stretches():
    return copy_test.N_STRETCHES


def copy_shortest():
    return copy_test.PERIODS[0]


def copy_longest():
    return copy_test.PERIODS[1]


def n_letters():
    return copy_test.N_LETTERS


def uniform_bits():
    """Bits per character of a model that spreads its bets evenly over the vocabulary."""
    return f"{math.log2(len(cm.VOCAB)):.2f}"


def _reference_guesses():
    """On the copying test, the published recipe's (trained as published) top guesses: (share
    of its guesses that are a space, share of the real spaces it gets right)."""
    if "guesses" not in _cache:
        x, periods = copy_test.copy_set()
        params, cfg = lab.checkpoint("reference", lab.steps("reference")[-1])
        logits, _ = cm.forward(params, cfg, x)  # (n, T, V)
        guess = logits.argmax(-1)[:, :-1]  # (n, T-1): the guess for character t+1
        want = x[:, 1:]
        mask = np.arange(1, x.shape[1])[None, :] > periods[:, None]  # the repeats, P+1 … T-1
        space = cm.STOI[" "]
        bets = float(((guess == space) & mask).sum() / mask.sum())
        caught = float(((guess == want) & (want == space) & mask).sum())
        _cache["guesses"] = (bets, caught / float(((want == space) & mask).sum()))
    return _cache["guesses"]


_cache = {}


def reference_space_bets():
    return _pct(_reference_guesses()[0])


def reference_spaces_caught():
    return _pct(_reference_guesses()[1])


def title_reference():
    return capital(_run_name("reference"))


def title_shown():
    return capital(_run_name(SHOWN))


def title_slower():
    return capital(_run_name("reference-repeats"))


def title_wide():
    return capital(_run_name("induction"))


def concat_width():
    """The numbers the heads' outputs make side by side: n_head × d_head (= d_model here)."""
    return _config()["n_head"] * _config()["d_head"]


# ---------------------------------------------------------------- "Train it yourself"


def _live():
    from . import train_live

    return train_live


def train_batch():
    """Stretches per step of the reader's own training run."""
    return _live().BATCH


def train_ctx():
    """Characters per stretch of the reader's own training run."""
    return _live().CTX


def train_params():
    """Parameters of the default recipe's model."""
    live = _live()
    return f"{cm.n_params(live.ts.init_params(live.config_of(live.recipe_of()))):,}"


def train_share():
    return _pct(_live().recipe_of()["share"])


def train_eval_every():
    return _live().EVAL_EVERY


def train_eval_n():
    return _live().EVAL_N


def train_heads_every():
    return _live().HEADS_EVERY


def train_slice_ms():
    return _live().MAX_MS


def train_curve_steps():
    return f"{_live().stored_curve()['steps']:,}"


def train_curve_half():
    """The step at which the stored default run's copying first passed half (or a phrase)."""
    half = _live().stored_curve()["half"]
    return "not within the run" if half is None else f"{half:,}"


def train_browser_sps():
    """Steps per second the browser managed on the machine this site was built on."""
    return f"{_live().BROWSER_SPS:g}"


def train_browser_minutes():
    """Minutes the default recipe takes in that browser until copying passes half."""
    live = _live()
    half = live.stored_curve()["half"] or live.stored_curve()["steps"]
    return f"{half / live.BROWSER_SPS / 60:.0f}"


def train_period_short():
    return _live().PERIODS[0]


def train_period_long():
    return _live().PERIODS[1]


PROSE_VALUES = public_functions(globals())  # every public function above
