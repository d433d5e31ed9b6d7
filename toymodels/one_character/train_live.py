"""Train it yourself: the reader trains a small character model in the browser, in slices.

What: one training run per Python worker, driven by templates/static/trainer.js (which first
imports this module a module a call, page/warm.py). start(recipe) makes a fresh model from the
reader's recipe (seed, share of repeated nonsense, learning rate, width); work(max_ms) trains
in parts of a step (step_parts(): before the first step the untrained model's copying
measurement, then each layer's forward and backward pass, Adam, and the copying measurement due
every EVAL_EVERY steps, also in parts; the same step the command-line trainer takes,
trainstep.py) until the next part would end past about MAX_MS (at least one part), and returns
what the page shows: every new loss, the new copying scores, steps per second, the plot, a
milestone line for screen readers, and whether the heads are due to be drawn again (every
HEADS_EVERY steps); heads() then draws every head's attention on one repeated stretch of
nonsense, in a call of its own; pick() hands a snapshot of the model to the chapter's figure
(yours.py), where the reader types to it and pulls its heads out like a shipped model's;
reset() drops the model and the snapshot. Pausing is the page not calling work(): the model,
Adam's moments, the step and the part under way stay here, and since a step's batch depends
only on (seed, step) a paused run goes on exactly as if never paused. render() is the chapter's
figure without JavaScript: the curve of the default recipe, computed by curve() with this file
and kept in toymodels/data/charmodel/live-curve.json.

Why slices, and parts: the worker answers one call at a time, so a call that trained for a
minute would hold up every other figure on the page; a call of a few tens of milliseconds lets
a tap elsewhere be answered between two slices. In Pyodide a whole step of the default recipe
takes about 60 ms on this project's 2-core machine, more when it is busy (bench/RESULTS.md),
so a slice that had to finish its step would make a tap wait for all of it. Its parts take
10-15 ms each on an idle core, 20-80 ms while the page competes for the 2 cores.

The training text is made on the spot (trainstep.nonsense_batch): random letter-words, a share
of the stretches repeated. Nothing can predict the repeated letters but copying, which is why
this model learns to copy fast, where plain prose did not teach the chapter's reference model.
"""

import functools
import math
import time

import numpy as np

from ..models.charmodel import model as cm
from ..models.charmodel.copy_test import nonsense, tile
from ..page import data, kit
from ..page.html import attrs, esc
from . import trainstep as ts
from . import yours
from .draw import svg

# the recipe's choices the reader has, the first of each the default
OPTIONS = {
    "share": (1.0, 0.5, 0.25, 0.0),  # share of the stretches that are repeated nonsense
    "lr": (3e-3, 1e-2, 1e-3),  # Adam's learning rate after warm-up
    "width": (32, 16, 64),  # numbers per character (d_model); 4 heads of width/4 in 2 layers
}
SEEDS = 1000  # seeds 0 … SEEDS-1
# the figure's state is the recipe its controls show (the reader's run lives in the worker)
DEFAULTS = {"share": "1.0", "lr": "0.003", "width": "32", "seed": "0"}
CTX = 32  # characters per training stretch
BATCH = 16  # stretches per step
WARMUP = 50  # steps of linear warm-up, then the learning rate stays put
PERIODS = (CTX // 4, CTX // 2)  # the repeated nonsense's shortest and longest period
EVAL_EVERY = 25  # steps between two measurements of copying
EVAL_N = 32  # stretches in the copying measurement
EVAL_SEED = 2017  # … drawn from a stream training never uses (training's is [seed, step, 2])
HEADS_EVERY = 200  # steps between two drawings of the heads' attention
SAY_EVERY = 250  # steps between two progress lines for screen readers
MAX_MS = 20  # a slice stops before it would take longer than this
HALF = 0.5  # the copying score marked on the plot
# steps per second of the default recipe in Pyodide 0.27.7 in Chromium on this project's 2-core
# machine shared with other jobs: the median of the sessions of `python bench/run.py train`
# recorded in toymodels/training/RESULTS.md
BROWSER_SPS = 10

_run = None  # the run in progress in this worker, or None


def recipe_of(recipe=None):
    """The recipe with defaults filled in and every field one of its choices."""
    recipe = dict(recipe) if isinstance(recipe, dict) else {}
    out = {}
    for key, options in OPTIONS.items():
        try:
            value = float(recipe.get(key, options[0]))
        except (TypeError, ValueError, OverflowError):
            value = options[0]
        if not math.isfinite(value):
            value = options[0]
        out[key] = min(options, key=lambda o: abs(o - value))  # the nearest choice
    try:
        out["seed"] = int(recipe.get("seed", 0)) % SEEDS
    except (TypeError, ValueError, OverflowError):
        out["seed"] = 0
    out["width"] = int(out["width"])
    return out


def config_of(recipe):
    D = recipe["width"]
    return dict(cm.REFERENCE, d_model=D, d_head=D // 4, d_mlp=4 * D)


@functools.cache
def copy_set():
    """(x (EVAL_N, CTX), periods): repeated nonsense of the training's periods, fixed (made
    once per worker, read-only)."""
    rng = np.random.default_rng(EVAL_SEED)
    pieces = [nonsense(rng, PERIODS) for _ in range(EVAL_N)]
    x = np.stack([tile(p, CTX) for p in pieces])
    x.setflags(write=False)
    return x, tuple(len(p) for p in pieces)


def shown_stretch():
    """The one repeated stretch whose attention the page draws: the copy set's first."""
    x, periods = copy_set()
    return x[0], periods[0]


def new_run(recipe):
    """A fresh model, its Adam moments, and an empty log (the untrained model's copying is
    measured by the first step's first parts, step_parts())."""
    recipe = recipe_of(recipe)
    cfg = config_of(recipe)
    params = ts.init_params(cfg, recipe["seed"])
    m, v = ts.adam_state(params)
    return {
        "recipe": recipe,
        "cfg": cfg,
        "params": params,
        "m": m,
        "v": v,
        "step": 0,
        "losses": [],  # nats per character, one per step taken
        "copying": [],  # (step, score), from step 0 on
        "half": None,  # the first step whose copying passed HALF
        "copy_set": copy_set(),
        "clock": None,  # (time, step) when this stretch of work began: for steps per second
        "parts": None,  # the step under way (step_parts), between two slices
    }


def step_parts(run):
    """One training step on RUN in parts, a generator the page's slices stop between (work()):
    each layer's forward and backward pass (trainstep.loss_and_grads_parts); then Adam, which
    alone changes the weights, in the same part as the step's entry in the log, so that between
    two parts the weights are always those of the step the log has reached (pick() can take
    them at any time); then, every EVAL_EVERY steps, the copying measurement, 16 stretches and
    a layer a part, logged when it is whole. A fresh run's first step begins with the
    untrained model's measurement, logged as step 0's."""
    r, step = run["recipe"], run["step"]
    if not run["copying"]:
        yield from measure_parts(run)
        yield
    idx, tgt = ts.nonsense_batch(r["seed"], step, BATCH, CTX, r["share"], PERIODS)
    loss, g = yield from ts.loss_and_grads_parts(run["params"], run["cfg"], idx, tgt)
    yield
    lr = ts.lr_at(step, r["lr"], WARMUP, 1, 1.0)  # constant after warm-up
    ts.adam(run["params"], g, run["m"], run["v"], step, lr)
    run["losses"].append(loss)
    run["step"] = step + 1
    if run["step"] % EVAL_EVERY == 0:
        yield
        yield from measure_parts(run)


def measure_parts(run):
    """The copying of RUN's model at its step, in parts, into its log (and the step where it
    first passed HALF)."""
    score = yield from ts.copy_score_parts(run["params"], run["cfg"], *run["copy_set"])
    run["copying"].append((run["step"], score))
    if run["half"] is None and score > HALF and run["step"] > 0:
        run["half"] = run["step"]


def advance(run):
    """One whole training step on RUN, with its measurement if one falls due."""
    cm.finish(step_parts(run))


def train(run, n):
    """N steps at once (the command line's and the tests' way; the page uses work(), which
    takes the same parts in slices)."""
    for _ in range(n):
        advance(run)
    return run


def log(recipe, n):
    """The losses and copying measurements of N steps of a fresh run of RECIPE (for comparing
    the browser's training with CPython's; the page's own run is untouched)."""
    run = train(new_run(recipe), n)
    return {
        "losses": [round(x, 6) for x in run["losses"]],
        "copying": [[s, round(c, 4)] for s, c in run["copying"]],
    }


def speed(recipe=None, n=50):
    """Steps per second of N steps of RECIPE after one warm-up step (bench/run.py asks both
    CPython and the browser), and the memory they hold."""
    run = train(new_run(recipe), 1)
    t = time.perf_counter()
    train(run, n)
    sps = n / (time.perf_counter() - t)
    global _run
    held, _run = _run, run
    try:
        mem = memory()
    finally:
        _run = held
    return {"sps": round(sps, 2), "n": n, "memory": mem}


# ---------------------------------------------------------------- what the page calls


def start(recipe=None):
    """A new run from RECIPE (the old one, if any, is dropped) -> the page's view of step 0."""
    global _run
    _run = new_run(recipe)
    return view(_run, since=0, measured=0, redraw=True)


def work(max_ms=None, resumed=False):
    """Train for at most about MAX_MS milliseconds (MAX_MS when None), at least one part of a
    step -> the page's view.

    RESUMED: the reader just pressed Train again, so the steps-per-second clock restarts
    (a pause is not training time)."""
    run = _run
    if run is None:
        return {"error": "There is no model: press Train to start one."}
    max_ms = max_ms or MAX_MS
    now = time.perf_counter()
    if resumed or run["clock"] is None:
        run["clock"] = (now, run["step"])
    since, measured, longest = run["step"], len(run["copying"]), 0.0
    while True:  # one part of a step at a time
        t = time.perf_counter()
        if run["parts"] is None:
            run["parts"] = step_parts(run)
        try:
            next(run["parts"])
        except StopIteration:
            run["parts"] = None
        longest = max(longest, time.perf_counter() - t)
        if (time.perf_counter() - now + longest) * 1000 > max_ms:
            break
    redraw = run["step"] // HEADS_EVERY > since // HEADS_EVERY
    return view(run, since, measured, redraw)


def heads():
    """The heads' attention now, drawn in a call of its own (the page asks when a view says
    heads_due), so a tap elsewhere on the page is answered before it."""
    if _run is None:
        return {"error": "There is no model: press Train to start one."}
    return {"step": _run["step"], "heads": heads_html(_run)}


def current_step():
    """The step of the run in progress, or None if there is none."""
    return None if _run is None else _run["step"]


def pick(whole=True):
    """The model as it is now becomes the reader's model in the chapter's figure (yours.py keeps
    a snapshot: more training does not change it until the reader picks again). The page passes
    WHOLE false and then calls pick_more() until it says none are left, so that no call holds
    the worker long."""
    if _run is None:
        return {"error": "There is no model: press Train to start one."}
    snap = yours.take(
        _run, ctx=CTX, periods=PERIODS, seed=EVAL_SEED, copy_set=_run["copy_set"], whole=whole
    )
    said = (
        f"The figure above now runs your model as it was at step {snap['step']:,}. It keeps "
        "that model while this one trains on: press the button again to bring later training in."
    )
    return {"step": snap["step"], "model": yours.NAME, "said": said}


def pick_more():
    """One more of the picked model's measurements -> {"left": how many remain}."""
    return {"left": yours.measure_one()}


def reset():
    """Drop the run: its model and Adam's moments are freed, and the snapshot picked from it."""
    global _run
    _run = None
    yours.drop()
    return {"reset": True, "size": 0}


def size_of(run=None):
    """Bytes held by the model's weights and Adam's two moments."""
    run = run or _run
    if run is None:
        return 0
    return int(sum(a.nbytes for part in ("params", "m", "v") for a in run[part].values()))


def memory():
    """Bytes of the run's weights and moments, and under Pyodide the size of its whole
    WebAssembly memory (the Python heap, numpy's arrays and the interpreter)."""
    out = {"run": size_of(), "wasm": None}
    try:
        import pyodide_js  # only under Pyodide

        out["wasm"] = int(pyodide_js._module.HEAPU8.length)
    except ImportError:
        pass
    return out


def view(run, since, measured, redraw=False):
    """What the page shows after a slice: the steps' new losses (from step SINCE), the new
    copying measurements (from the MEASURED-th), steps per second, the plot, whether the heads
    are due to be drawn again (REDRAW), a line to announce."""
    step = run["step"]
    sps = None
    if run["clock"] is not None:
        t0, s0 = run["clock"]
        if step > s0:
            sps = round((step - s0) / max(time.perf_counter() - t0, 1e-9), 1)
    out = {
        "step": step,
        "losses": [round(x, 6) for x in run["losses"][since:]],
        "copying": [[s, round(c, 4)] for s, c in run["copying"][measured:]],
        "half": run["half"],
        "sps": sps,
        "plot": plot(run) if step > since or len(run["copying"]) > measured or step == 0 else None,
        "say": said(run, since, measured),
        "stats": f"Step {step:,}"
        + ("" if sps is None else f" · {sps:g} steps per second")
        + f" · {status_line(run)}",
        "recipe": run["recipe"],
        "params": cm.n_params(run["params"]),
        "size": size_of(run),
    }
    out["heads_due"] = bool(redraw)
    out["offer"] = (
        f"Your model at step {step:,} can now be used in the chapter's figure above, like the "
        "models that come with the page: type to it, look inside its heads, pull them out."
    )
    return out


def said(run, since, measured):
    """A line for screen readers at milestones only: every SAY_EVERY steps, and when copying
    first passes HALF (in a measurement made since the MEASURED-th); None between them."""
    step, half = run["step"], run["half"]
    if half is not None and any(s == half for s, _ in run["copying"][measured:]):
        return f"Step {step:,}: copying passed {HALF:.0%} at step {half:,}."
    if step // SAY_EVERY > since // SAY_EVERY:
        return f"Step {step:,}: {status_line(run)}"
    return None


def status_line(run):
    loss = run["losses"][-1] if run["losses"] else None
    bits = "" if loss is None else f"loss {loss / math.log(2):.2f} bits per character, "
    if not run["copying"]:
        return f"{bits}copying not measured yet."
    s, c = run["copying"][-1]
    return f"{bits}copying {c:.0%} (measured at step {s:,})."


# ---------------------------------------------------------------- drawings


def _smoothed(losses, n=200):
    """(step, mean loss in bits) over at most N equal bins of the steps taken."""
    if not losses:
        return []
    a = np.asarray(losses) / math.log(2)  # (S,) bits
    edges = np.unique(np.linspace(0, len(a), min(n, len(a)) + 1).astype(int))  # (bins+1,)
    means = np.add.reduceat(a, edges[:-1]) / np.diff(edges)  # (bins,) one numpy call, not a loop
    return list(zip(edges[1:].tolist(), means.tolist(), strict=True))


def plot(run, width=560, height=200):
    """Loss in bits per character (solid, mean over bins of steps) and copying (dashed) so far,
    with a line at the step where copying first passed HALF. The newest numbers are in data-
    attributes, so a test can hold them against the trainer's log."""
    step, copying, half = run["step"], run["copying"], run["half"]
    last = max(500, int(math.ceil(step / 500)) * 500)
    left, right, top, bottom = 44, 48, 12, 30
    iw, ih = width - left - right, height - top - bottom
    top_bits = math.ceil(math.log2(cm.REFERENCE["vocab"]))

    def x(s):
        return left + iw * s / last

    def yb(b):  # bits 0 … top_bits
        return top + ih * (1 - min(b, top_bits) / top_bits)

    def yc(c):  # copying 0 … 100%
        return top + ih * (1.0 - c)

    body = [f'<path class="frame" d="M{left} {top} V{top + ih} H{left + iw} V{top}"/>']
    for b in range(0, top_bits + 1):
        body.append(f'<text class="tick end" x="{left - 5}" y="{yb(b) + 4:.1f}">{b}</text>')
    for c in (0, 0.5, 1):
        at = f'x="{left + iw + 5}" y="{yc(c) + 4:.1f}"'
        body.append(f'<text class="tick start" {at}>{int(c * 100)}%</text>')
    tick = 500 if last <= 3000 else 1000 if last <= 10000 else 5000
    for s in range(0, last + 1, tick):
        body.append(f'<text class="tick" x="{x(s):.1f}" y="{top + ih + 16}">{s:,}</text>')
    if half is not None:
        body.append(
            f'<line class="half" x1="{x(half):.1f}" y1="{top}" x2="{x(half):.1f}" '
            f'y2="{top + ih}"/><text class="tick start" x="{x(half) + 4:.1f}" y="{top + 12}">'
            f"{HALF:.0%} at step {half:,}</text>"
        )
    bits = " ".join(f"{x(s):.1f},{yb(b):.1f}" for s, b in _smoothed(run["losses"]))
    copy = " ".join(f"{x(s):.1f},{yc(c):.1f}" for s, c in copying)
    if bits:
        body.append(f'<polyline class="line bits" points="{bits}"/>')
    if copy:
        body.append(f'<polyline class="line copy" points="{copy}"/>')
    loss = run["losses"][-1] if run["losses"] else None
    label = f"Training so far, step {step:,}: " + status_line(run)
    if half is not None:
        label += f" Copying passed {HALF:.0%} at step {half:,}."
    figure = svg(width, height, label, "".join(body), "mh-svg mh-plot mh-train-plot")
    marks = attrs(
        class_="mh-train-plotbox",
        data_step=step,
        data_loss="" if loss is None else f"{loss:.6f}",
        data_copying=f"{copying[-1][1]:.4f}" if copying else "",
        data_copying_step=copying[-1][0] if copying else "",
        data_half="" if half is None else half,
    )
    return f"<div{marks}>{figure}</div>"


def head_scores(att, period):
    """(previous, induction) of one head's attention (T, T) on a stretch of PERIOD: mean weight
    on the character just before, and on the character after the same one a period back."""
    T = att.shape[0]
    t = np.arange(period, T)  # queries inside the repeats
    return float(att[t, t - 1].mean()), float(att[t, t - period + 1].mean())


def heads_html(run):
    """Every head's attention on the shown stretch, with its two scores in words."""
    x, period = shown_stretch()
    _, c = cm.forward(run["params"], run["cfg"], x, keep=True)
    cfg, step = run["cfg"], run["step"]
    text = cm.decode(x).replace(" ", "·")
    rows = []
    for layer in range(cfg["n_layer"]):
        cells = []
        for head in range(cfg["n_head"]):
            att = c[f"h{layer}.att"][head]  # (T, T)
            prev, ind = head_scores(att, period)
            name = f"Layer {layer + 1}, head {head + 1}"
            label = (
                f"{name} at step {step:,}: {prev:.0%} of its weight on the previous character, "
                f"{ind:.0%} on what came next last time."
            )
            pic = kit.heatmap_svg(att, label=label, cell=4)
            scores = attrs(data_previous=f"{prev:.3f}", data_induction=f"{ind:.3f}")
            cells.append(
                f'<div class="mh-train-head"{scores}>'
                f"{pic}<p><b>L{layer + 1}H{head + 1}</b> previous {prev:.0%}, "
                f"next-last-time {ind:.0%}</p></div>"
            )
        rows.append(f'<div class="mh-train-heads-row">{"".join(cells)}</div>')
    caption = (
        f"Attention at step {step:,} on <q>{esc(text)}</q> (a piece of nonsense "
        f"{period} characters long, repeated; · is a space). Each square's row is a character "
        "looking back, each column a character it looks at; darker is more weight."
    )
    return f'<div class="mh-train-heads" data-step="{step}"><p>{caption}</p>{"".join(rows)}</div>'


# ---------------------------------------------------------------- without JavaScript


CURVE = "charmodel/live-curve.json"  # the default recipe's curve, written by curve()
CURVE_STEPS = 3000


def curve(steps=CURVE_STEPS, recipe=None):
    """The default recipe trained STEPS steps: its log, for the figure without JavaScript
    (toymodels/training/live_curve.py writes it to CURVE)."""
    run = train(new_run(recipe), steps)
    return {
        "recipe": run["recipe"],
        "steps": steps,
        "losses": [round(x, 6) for x in run["losses"]],
        "copying": [[s, round(c, 4)] for s, c in run["copying"]],
        "half": run["half"],
    }


def stored_curve():
    import json

    return json.loads(data.read_text(CURVE))


def render(state=None, fid="train-it"):
    """The section before JavaScript: the stored curve of the default recipe, and the
    controls (shown only with JavaScript, by the page's own style rules)."""
    from ..page.figure import result

    recipe = recipe_of(state)
    state = {key: str(recipe[key]) for key in DEFAULTS}
    saved = stored_curve()
    run = {
        "step": saved["steps"],
        "losses": saved["losses"],
        "copying": [tuple(c) for c in saved["copying"]],
        "half": saved["half"],
    }
    r = saved["recipe"]
    half = saved["half"]
    when = (
        f"copying passed {HALF:.0%} at step {half:,}"
        if half is not None
        else f"copying had not passed {HALF:.0%}"
    )
    summary = (
        f"A model of width {r['width']} trained {saved['steps']:,} steps at learning rate "
        f"{r['lr']:g} on text {r['share']:.0%} repeated nonsense (seed {r['seed']}): {when}."
    )
    html = (
        f'<div class="mh-trainer" data-trainer id="{esc(fid)}-trainer">'
        f"{controls(recipe)}"
        '<p class="mh-train-nojs">Training needs JavaScript (it runs Python in your browser).</p>'
        f"<div data-train-plot>{plot(run)}</div>"
        '<p class="mh-train-legend">Solid line: the loss in bits per character (left scale, '
        "mean over a few steps). Dashed line: copying (right scale). Across: training steps.</p>"
        '<p class="mh-train-stats" data-train-stats aria-live="off">Shown: the same training, '
        f"run by the same code when this page was built. {esc(summary)}</p>"
        '<p class="sr" data-train-say role="status" aria-live="polite"></p>'
        "<div data-train-heads></div>"
        "</div>"
    )
    return result(html, state, summary=summary)


def controls(recipe):
    """The buttons and the recipe's choices (hidden without JavaScript: they would do nothing)."""

    def select(key, label, fmt):
        options = "".join(
            f'<option value="{o}"{" selected" if o == recipe[key] else ""}>{esc(fmt(o))}</option>'
            for o in OPTIONS[key]
        )
        return f'<label>{label} <select name="{key}">{options}</select></label>'

    return (
        '<div class="mh-controls mh-train-controls">'
        '<form class="mh-train-recipe" data-train-recipe>'
        f"{select('share', 'Repeated nonsense', lambda o: f'{o:.0%} of stretches')}"
        f"{select('lr', 'Learning rate', lambda o: f'{o:g}')}"
        f"{select('width', 'Width', lambda o: f'{o} numbers per character')}"
        f'<label>Seed <input name="seed" type="number" min="0" max="{SEEDS - 1}" '
        f'value="{recipe["seed"]}" inputmode="numeric"></label>'
        "</form>"
        '<div class="mh-train-buttons">'
        '<button type="button" data-train="train">Train</button> '
        '<button type="button" data-train="pause" disabled>Pause</button> '
        '<button type="button" data-train="reset" disabled>Reset</button>'
        "</div></div>"
    )
