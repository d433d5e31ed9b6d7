"""Train it yourself (chapter "One character at a time", toymodels/one_character/train_live.py):
the training step is one shipped file the command-line trainer imports too; the reader's run
pauses, resumes bit for bit and resets; the same code trains the same numbers in Chromium
(Pyodide) as in CPython; the section is usable by keyboard and screen reader, and the page keeps
answering while it trains."""

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import open_ready, with_own_python

from toymodels.one_character import train_live as tl
from toymodels.one_character import trainstep
from toymodels.training import train

CHAPTER = "one-character.html"


# ---- in CPython --------------------------------------------------------------------------------


def test_the_command_line_trainer_takes_the_shipped_step():
    assert train.loss_and_grads is trainstep.loss_and_grads
    assert train.init_params is trainstep.init_params
    src = Path(train.__file__).read_text()
    assert "trainstep.adam(" in src and "def ln_backward" not in src  # one trainer, not two


def test_the_shipped_step_imports_nothing_build_only():
    for mod in (trainstep, tl):
        text = Path(mod.__file__).read_text()
        assert not re.search(r"^\s*(from|import)\s+[\w.]*(training|export|sitebuild)", text, re.M)


WARM_PROBE = """
import json, sys
from toymodels.page import warm
target = "toymodels.one_character.train_live"
calls = []
while True:
    before = set(sys.modules)
    left = warm.load(target)["left"]
    calls.append(sorted(set(sys.modules) - before))
    if not left:
        break
print(json.dumps({"calls": calls, "again": warm.load(target), "order": warm.order(target)}))
"""


MODULES = ("trainstep", "yours", "measure", "draw")


def test_the_trainer_is_imported_a_module_a_call():
    """trainer.js imports the trainer with page/warm.py before its first call to it: each call
    reads one file or imports one module (with what Python must import alongside it), the
    trainer itself last."""
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-c", WARM_PROBE], cwd=root, capture_output=True, text=True, check=True
    )
    got = json.loads(out.stdout)
    calls, order = got["calls"], got["order"]
    assert got["again"] == {"left": 0}
    assert order[-1] == "toymodels.one_character.train_live"
    assert calls[-1] == ["toymodels.one_character.train_live"]  # its imports came before it
    for name in ("models.charmodel.model", *(f"one_character.{m}" for m in MODULES)):
        name = f"toymodels.{name}"
        assert order.index(name) < len(order) - 1
        assert sum(name in c for c in calls) == 1  # imported once, in a call before the last
    assert "numpy.random" in order  # trainstep imports it at the top, so it gets its own call
    # a call reads one file (and imports nothing) or imports one of its modules
    ours = ("toymodels.one_character.", "toymodels.models.")
    assert all(sum(m.startswith(ours) for m in c) <= 1 for c in calls)
    assert sum(bool(c) for c in calls) >= 8


def test_the_recipe_is_held_to_its_choices():
    assert tl.recipe_of({}) == {k: v[0] for k, v in tl.OPTIONS.items()} | {"seed": 0}
    odd = tl.recipe_of({"share": "0.3", "lr": "1", "width": "40", "seed": "-3"})
    assert odd["share"] == 0.25 and odd["lr"] == max(tl.OPTIONS["lr"]) and odd["width"] == 32
    assert 0 <= odd["seed"] < tl.SEEDS
    assert tl.recipe_of({"share": "junk", "seed": "x"})["share"] == tl.OPTIONS["share"][0]


def test_pausing_and_resuming_in_slices_gives_the_losses_of_one_uninterrupted_run():
    whole = tl.train(tl.new_run({"seed": 5}), 60)
    tl.start({"seed": 5})
    got = []
    while len(got) < 60:  # 1-ms slices: one part of a step each
        out = tl.work(max_ms=1, resumed=len(got) % 2 == 0)
        got += out["losses"]
    assert got == [round(x, 6) for x in whole["losses"]]
    assert tl._run["copying"] == whole["copying"]  # measured at steps 0, 25 and 50
    assert all(np.array_equal(tl._run["params"][n], whole["params"][n]) for n in whole["params"])
    tl.reset()


def test_a_slice_stops_after_its_time_and_reset_frees_the_model():
    first = tl.start({})
    assert first["step"] == 0 and first["copying"] == [] and "not measured yet" in first["stats"]
    n_layer = tl.config_of(tl.recipe_of({}))["n_layer"]
    measuring = tl.EVAL_N // 16 * n_layer  # step 0's copying: 16 stretches, a layer, a part
    parts = []
    out = {"step": 0}
    while out["step"] == 0:  # 1-ms slices: one part each
        out = tl.work(max_ms=1)
        parts.append(out)
    assert all(p["copying"] == [] and p["plot"] is not None for p in parts[: measuring - 1])
    assert parts[measuring - 1]["copying"] == [[0, round(tl._run["copying"][0][1], 4)]]
    assert all(p["losses"] == [] for p in parts[:-1])
    # then the forward and the backward pass through each layer, and Adam
    assert len(parts) == measuring + 2 * n_layer + 1
    assert out["losses"] and out["plot"] is not None
    assert tl.work(max_ms=1)["plot"] is None  # a slice that ends no step leaves the plot be
    assert tl.size_of() == 3 * 4 * out["params"]  # weights and two moments, float32
    assert tl.reset() == {"reset": True, "size": 0}
    assert tl._run is None and tl.size_of() == 0
    assert "error" in tl.work()


def test_the_plot_carries_the_trainer_log_and_marks_half():
    run = tl.train(tl.new_run({}), 2 * tl.EVAL_EVERY)
    run["half"] = tl.EVAL_EVERY  # as if copying had passed half there
    html = tl.plot(run)
    assert f'data-step="{run["step"]}"' in html
    assert f'data-loss="{run["losses"][-1]:.6f}"' in html
    assert f'data-copying="{run["copying"][-1][1]:.4f}"' in html
    assert 'class="half"' in html and f"at step {tl.EVAL_EVERY}" in html


def test_the_plotted_loss_is_the_mean_of_each_bin_of_steps():
    losses = list(np.random.default_rng(0).random(450) * 3)
    got = tl._smoothed(losses, n=200)
    assert len(got) == 200 and got[-1][0] == 450
    lo = 0
    for hi, bits in got:  # each bin: the steps after the previous bin's last, up to hi
        assert bits == pytest.approx(np.mean(losses[lo:hi]) / np.log(2), rel=1e-12)
        assert hi - lo in (2, 3)
        lo = hi
    assert tl._smoothed(losses[:5]) == [(i + 1, x / np.log(2)) for i, x in enumerate(losses[:5])]


def test_progress_is_said_at_milestones_only():
    run = tl.new_run({})
    run["step"] = tl.SAY_EVERY - 1
    run["losses"] = [1.0]
    run["copying"] = [(0, 0.01)]
    assert tl.said(run, tl.SAY_EVERY - 2, 1) is None
    run["step"] = tl.SAY_EVERY
    assert tl.said(run, tl.SAY_EVERY - 1, 1).startswith(f"Step {tl.SAY_EVERY:,}")
    # copying passes half in a measurement that comes a slice after its step ended
    run["copying"].append((run["step"], 0.6))
    run["half"] = run["step"]
    assert "passed 50% at step" in tl.said(run, run["step"], 1)
    assert tl.said(run, run["step"], 2) is None  # said once


def test_the_heads_are_drawn_with_their_two_scores():
    run = tl.new_run({})
    html = tl.heads_html(run)
    cfg = run["cfg"]
    assert html.count('class="mh-train-head"') == cfg["n_layer"] * cfg["n_head"]
    prev, ind = tl.head_scores(np.eye(6, k=-1) + np.eye(6) * (np.arange(6) == 0)[:, None], 3)
    assert prev == 1.0 and ind == 0.0


def test_the_stored_curve_is_what_the_code_trains():
    saved = tl.stored_curve()
    assert saved["recipe"] == tl.recipe_of()
    again = tl.curve(steps=2 * tl.EVAL_EVERY)
    # float32 products round differently on another CPU's BLAS (the file was made on another
    # machine): the same run to within a few units of float32 precision
    n = len(again["losses"])
    assert np.allclose(saved["losses"][:n], again["losses"], rtol=1e-5, atol=0)
    assert [s for s, _ in saved["copying"][:3]] == [s for s, _ in again["copying"]]
    assert np.allclose([c for _, c in saved["copying"][:3]], [c for _, c in again["copying"]])
    if saved["half"] is not None:
        first = next(s for s, c in saved["copying"] if c > tl.HALF)
        assert saved["half"] == first


def test_the_figure_without_javascript_says_training_needs_it():
    r = tl.render({}, "train-it")
    assert "Training needs JavaScript" in r["html"]
    assert "mh-train-plotbox" in r["html"] and "data-trainer" in r["html"]
    for name in ("train", "pause", "reset"):
        assert f'<button type="button" data-train="{name}"' in r["html"]


# ---- in Chromium -------------------------------------------------------------------------------

IN_WORKER = with_own_python("""async ([recipe, n]) => {
  return JSON.stringify(await py.call("toymodels.one_character.train_live:log", [recipe, n]));
}""")


@pytest.mark.browser
def test_the_browser_trains_the_same_numbers_as_cpython(page, base_url):
    page.goto(f"{base_url}index.html")
    recipe, n = {"seed": 3}, 30
    browser = json.loads(page.evaluate(IN_WORKER, [recipe, n]))
    here = tl.log(recipe, n)
    assert len(browser["losses"]) == n
    np.testing.assert_allclose(browser["losses"], here["losses"], rtol=1e-4)
    np.testing.assert_allclose(
        [c for _, c in browser["copying"]], [c for _, c in here["copying"]], atol=1 / 200
    )


def _plot_numbers(page):
    box = page.locator("#train-it .mh-train-plotbox")
    keys = ("step", "loss", "copying", "copying-step", "half")
    return {k: box.get_attribute(f"data-{k}") for k in keys}


@pytest.mark.browser
def test_train_pause_resume_reset_from_the_keyboard_while_the_page_answers(page, base_url):
    open_ready(page, f"{base_url}{CHAPTER}#train")
    fig = page.locator("#train-it")
    train_b = fig.get_by_role("button", name="Train")
    assert fig.locator(".mh-train-nojs").is_hidden()
    assert fig.locator("[data-train-say]").get_attribute("aria-live") == "polite"
    train_b.focus()
    page.keyboard.press("Enter")
    # the heads appear with the new run's first view (before it, the plot is the build's run)
    fig.locator("[data-train-heads] .mh-train-head").first.wait_for(timeout=60_000)
    page.wait_for_function(
        "() => Number(document.querySelector('#train-it .mh-train-plotbox').dataset.step) >= 30",
        timeout=60_000,
    )
    # another figure is answered between two slices while training goes on
    page.click("#kv-cache [data-fk='preset-gpt3']")
    page.wait_for_selector("#kv-cache .mh-out:has-text('2,359,296')")
    assert fig.locator("[data-trainer]").get_attribute("data-train-state") == "training"
    fig.get_by_role("button", name="Pause").focus()
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('#train-it [data-trainer]').dataset.trainState === 'paused'"
    )
    paused = _plot_numbers(page)
    assert fig.get_by_role("button", name="Resume").is_enabled()
    # the plot's numbers are the trainer's: CPython trains the same steps to the same loss
    here = tl.log({}, int(paused["step"]))
    assert float(paused["loss"]) == pytest.approx(here["losses"][-1], rel=1e-4, abs=1e-6)
    copied = dict(here["copying"])[int(paused["copying-step"])]  # the measurement shown
    assert float(paused["copying"]) == pytest.approx(copied, abs=1 / 200)
    # paused means paused: after another round trip through the worker, nothing has moved
    page.click("#kv-cache [data-fk='preset-this']")
    page.wait_for_function(
        "() => !document.querySelector('#kv-cache .mh-out').textContent.includes('2,359,296')"
    )
    assert _plot_numbers(page) == paused
    fig.get_by_role("button", name="Resume").click()
    step_now = "Number(document.querySelector('#train-it .mh-train-plotbox').dataset.step)"
    page.wait_for_function(f"() => {step_now} > {paused['step']}")
    fig.get_by_role("button", name="Reset").click()
    page.wait_for_function(
        "() => document.querySelector('#train-it [data-trainer]').dataset.trainState === 'idle'"
    )
    assert "gone" in fig.locator("[data-train-say]").inner_text()
    assert fig.locator("select[name=share]").is_enabled()
    # Pause pressed while the run is still starting waits for it: a model at its first steps
    train_b.click()
    fig.get_by_role("button", name="Pause").click()
    page.wait_for_function(
        "() => document.querySelector('#train-it [data-trainer]').dataset.trainState === 'paused'"
    )
    assert fig.locator("[data-train-stats]").inner_text().startswith("Step ")
    assert fig.locator("[data-train-heads] .mh-train-head").count() == 8
    assert fig.get_by_role("button", name="Reset").is_enabled()
    page.wait_for_selector("#char-model [data-key=model][data-value=yours]")  # offered
