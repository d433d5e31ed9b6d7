"""Train it yourself (chapter "One character at a time", toymodels/one_character/train_live.py):
the training step is one shipped file the command-line trainer imports too; the reader's run
pauses, resumes bit for bit and resets; the same code trains the same numbers in Chromium
(Pyodide) as in CPython; the section is usable by keyboard and screen reader, and the page keeps
answering while it trains."""

import json
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import open_ready

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
    tl.start({})
    out = tl.work(max_ms=1)  # one part: the first layer's forward pass, which changes nothing
    assert out["step"] == 0 and out["losses"] == [] and out["plot"] is not None
    parts = 1
    while out["step"] == 0:
        out = tl.work(max_ms=1)
        parts += 1
    # the forward and the backward pass through each layer, then Adam
    assert parts == 2 * tl.config_of(tl.recipe_of({}))["n_layer"] + 1
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


def test_progress_is_said_at_milestones_only():
    run = tl.new_run({})
    run["step"] = tl.SAY_EVERY - 1
    run["losses"] = [1.0]
    assert tl.said(run, tl.SAY_EVERY - 2) is None
    run["step"] = tl.SAY_EVERY
    assert tl.said(run, tl.SAY_EVERY - 1).startswith(f"Step {tl.SAY_EVERY:,}")
    run["half"] = run["step"]
    assert "passed 50% at step" in tl.said(run, run["step"] - 1)


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

IN_WORKER = """async ([recipe, n]) => {
  const { startPython } = await import(new URL("static/pyclient.js", location.href).href);
  const py = startPython({
    pyodideURL: new URL("pyodide/", location.href), pyURL: new URL("py/", location.href),
  });
  await py.ready;
  return JSON.stringify(await py.call("toymodels.one_character.train_live:log", [recipe, n]));
}"""


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
    return {k: box.get_attribute(f"data-{k}") for k in ("step", "loss", "copying", "half")}


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
    assert float(paused["copying"]) == pytest.approx(here["copying"][-1][1], abs=1 / 200)
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
