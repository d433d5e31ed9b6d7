"""The reader's own model in the chapter's figure ("Pause keeps the model; the reader
can then use it in the chapter's other sections"): a snapshot of the run in the worker
(toymodels/one_character/yours.py) becomes one more model choice of figure "char-model", which
then does with it what it does with a shipped model; without one (a new tab, after Reset) the
figure shows the default model and says why. The shipped models' head labels and the reader's
come from one measuring code (measure.py), which the build's evaluation calls too."""

import math
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import open_ready, url_with

from toymodels.models.charmodel import model as cm
from toymodels.one_character import figure, lab, measure, yours
from toymodels.one_character import train_live as tl
from toymodels.training import evaluate

CHAPTER = "one-character.html"


@pytest.fixture
def trained():
    """A run of STEPS steps in this process's trainer, picked for the figure; reset after."""
    tl.start({"seed": 4})
    tl.train(tl._run, 30)
    tl.pick()
    yield tl._run
    tl.reset()


def test_shipped_measuring_code_imports_nothing_build_only():
    for mod in (measure, yours):
        text = Path(mod.__file__).read_text()
        assert not re.search(r"^\s*(from|import)\s+[\w.]*(training|export|sitebuild)", text, re.M)


def test_the_evaluation_measures_with_the_shipped_code():
    assert "measure.copying(" in Path(evaluate.__file__).read_text()
    assert "measure.habits(" in Path(evaluate.__file__).read_text()
    run = lab.DEFAULT_RUN
    step = lab.steps(run)[-1]
    params, cfg = lab.checkpoint(run, step)
    copying, induction = evaluate.copying(params, cfg, return_att=True)
    stored = lab.measured(run, step)
    assert round(copying, 4) == stored["copying"]
    np.testing.assert_allclose(induction, stored["induction"], atol=2e-4)


def test_without_a_trained_model_the_figure_is_as_before_and_a_link_to_yours_says_why():
    tl.reset()
    plain = figure.render({})
    assert 'data-value="yours"' not in plain["html"] and "Yours" not in plain["html"]
    linked = figure.render({"model": "yours"})
    assert linked["state"] == plain["state"]  # the default model
    assert "lived in the tab that trained it" in linked["html"]
    assert (
        linked["html"].replace(
            f'<p class="mh-why cm-no-model" role="status">{figure.esc(yours.NO_MODEL)}</p>', ""
        )
        == plain["html"]
    )


def test_the_figure_runs_the_picked_model_like_a_shipped_one(trained):
    snap = yours.get()
    assert snap["step"] == 30 and snap["params"] is not trained["params"]
    state = {"model": "yours", "text": "qzxv kplw qzxv kp", "character": "3", "pulled_out": "2.1"}
    r = figure.render(state)
    assert r["state"]["model"] == "yours" and r["state"]["pulled_out"] == "2.1"
    assert re.search(r'data-value="yours"[^>]*aria-pressed="true"', r["html"])
    assert "Yours (step 30)" in r["html"]
    # the prediction, by hand from the same weights with layer 2's head 1 pulled out
    logits, _ = cm.forward(snap["params"], snap["cfg"], cm.encode(state["text"]), ablate=[(1, 0)])
    p = cm.softmax(logits[-1].astype(np.float64))
    best = int(p.argmax())
    assert f"expects {figure.quoted_char(cm.VOCAB[best])} with {100 * p[best]:.1f}%" in r["summary"]
    # labels from the shared rules on the snapshot's own measurements
    names = [name for _, _, name, _ in lab.labels_of(snap["measured"])]
    for name in names:
        assert figure.esc(name) in r["slots"]["heads"]
    assert "random words that never repeat" in r["slots"]["heads"]
    assert "no saved checkpoints" in r["slots"]["drum"]
    assert "held-out bits" not in r["slots"]["ablate"]
    assert f"{100 * snap['ablation']['L2H1']['copying']:.1f}%" in r["slots"]["ablate"]
    # picked in short calls, as the page does, the model measures the same
    assert tl.pick(whole=False)["step"] == 30 and yours._snapshot["todo"]
    calls = 0
    while tl.pick_more()["left"]:
        calls += 1
    assert calls == len(snap["ablation"]) - 2 and yours.get()["ablation"] == snap["ablation"]
    # more training does not change the picked snapshot
    tl.train(trained, 5)
    assert figure.render(state)["html"] == r["html"]


def test_the_readers_text_is_cut_at_the_length_the_model_trained_on(trained):
    r = figure.render({"model": "yours", "text": "abc " * 20})
    assert f"The model reads the first {tl.CTX} characters" in r["html"]
    r = figure.render({"model": "yours", "text": "abc", "write": "1"})
    assert len(r["state"]["text"]) <= tl.CTX


@pytest.mark.parametrize("width", [16, 64])
def test_every_width_works_in_the_figure(width):
    tl.start({"width": width})
    tl.train(tl._run, 2)
    tl.pick()
    try:
        r = figure.render({"model": "yours", "pulled_out": "1.4"})
        assert f"{width} numbers per character" in r["html"]
        assert r["state"]["pulled_out"] == "1.4"
    finally:
        tl.reset()


def test_reset_withdraws_the_model(trained):
    assert "Yours (step 30)" in figure.render({})["html"]
    tl.reset()
    r = figure.render({"model": "yours"})
    assert r["state"]["model"] == lab.DEFAULT_RUN and "lived in the tab" in r["html"]
    assert "Yours" not in figure.render({})["html"]


# ---- in Chromium -------------------------------------------------------------------------------


def _pressed_model(page):
    return page.get_attribute("#char-model [data-key=model][aria-pressed=true]", "data-value")


@pytest.mark.browser
def test_train_pause_use_it_in_the_figure_then_reset(page, base_url):
    open_ready(page, f"{base_url}{CHAPTER}#train")
    trainer = page.locator("#train-it [data-trainer]")
    trainer.get_by_role("button", name="Train").click()
    # the heads come with the new run's first view (before it, the plot is the build's run)
    trainer.locator("[data-train-heads] .mh-train-head").first.wait_for(timeout=60_000)
    step_now = "Number(document.querySelector('#train-it .mh-train-plotbox').dataset.step)"
    page.wait_for_function(f"() => {step_now} >= 30", timeout=90_000)
    trainer.get_by_role("button", name="Pause").click()
    page.wait_for_function(
        "() => document.querySelector('#train-it [data-trainer]').dataset.trainState === 'paused'"
    )
    step = int(page.get_attribute("#train-it .mh-train-plotbox", "data-step"))
    assert "can now be used in the chapter's figure above" in trainer.inner_text()
    # Pause made the figure offer the model; the button picks it and goes there
    page.wait_for_selector("#char-model [data-key=model][data-value=yours]")
    trainer.get_by_role("button", name="Use it in the figure above").click()
    page.wait_for_function(
        "() => document.querySelector('#char-model [data-key=model][aria-pressed=true]')"
        "?.dataset.value === 'yours'"
    )
    assert f"Yours (step {step:,})" in page.inner_text(
        "#char-model [data-key=model][data-value=yours]"
    )
    url_with(page, "char-model.model=yours")
    # the same weights in CPython: training is a function of the seed and the step
    run = tl.train(tl.new_run({}), step)
    params, cfg = run["params"], run["cfg"]
    text = figure.DEFAULTS["text"]
    page.click("[data-slot=numbers] [data-fk='numbers-c3']")
    page.wait_for_function(
        "() => document.querySelector(\"[data-slot=numbers] [data-fk='numbers-c3']\")"
        "?.getAttribute('aria-pressed') === 'true'"
    )
    assert "(character 4)" in page.inner_text("[data-slot=numbers]")
    assert f"{cfg['d_model']} numbers each" in page.inner_text("[data-slot=numbers]")
    page.click("[data-fk='off-2.1']")
    page.wait_for_function(
        "() => document.querySelector(\"[data-fk='off-2.1']\")?.getAttribute('aria-pressed')"
        " === 'true'"
    )
    logits, _ = cm.forward(params, cfg, cm.encode(text), ablate=[(1, 0)])
    p = cm.softmax(logits[-1].astype(np.float64))
    best = int(p.argmax())
    said = page.inner_text("#char-model .cm-next")
    assert figure.quoted_char(cm.VOCAB[best]) in said
    shown = float(re.search(r"\(([\d.]+)%\)", said).group(1))
    assert math.isclose(shown, 100 * p[best], abs_tol=0.15)
    demo = lab.copying_demo(params, cfg, 0, [(1, 0)])
    got = page.inner_text("[data-slot=copying] .mh-out")
    shown = float(re.search(r"gives it ([\d.]+)%", got).group(1))
    assert math.isclose(shown, 100 * demo["p_want"], abs_tol=0.15)
    assert "no saved checkpoints" in page.inner_text("[data-slot=drum]")
    # every head drawn, labelled by the shared rules from the same measurements in CPython
    x, ps = run["copy_set"]
    _, induction = measure.copying(params, cfg, x, ps, return_att=True)
    habits = measure.habits(
        params, cfg, yours.habit_text(len(ps), tl.CTX, tl.PERIODS, tl.EVAL_SEED)
    )
    rec = {"induction": induction.tolist(), "habits": habits}
    heads = page.locator("[data-slot=heads] .cm-head")
    assert heads.count() == cfg["n_layer"] * cfg["n_head"]
    for i, (_, _, name, _) in enumerate(lab.labels_of(rec)):
        assert heads.nth(i).locator(".cm-label").text_content().startswith(name)
    # Reset while the figure shows it: back to the default model, and the figure says why
    trainer.get_by_role("button", name="Reset").click()
    page.wait_for_selector("#char-model .cm-no-model")
    assert _pressed_model(page) == lab.DEFAULT_RUN
    assert "lived in the tab that trained it" in page.inner_text("#char-model .cm-no-model")
    assert page.locator("#char-model [data-key=model][data-value=yours]").count() == 0


@pytest.mark.browser
def test_a_link_to_the_readers_model_in_a_new_tab_shows_the_default_and_says_why(page, base_url):
    open_ready(page, f"{base_url}{CHAPTER}?char-model.model=yours")
    page.wait_for_selector("#char-model .cm-no-model")
    assert "lived in the tab that trained it" in page.inner_text("#char-model .cm-no-model")
    assert _pressed_model(page) == lab.DEFAULT_RUN
    url_with(page, without=["char-model.model"])
