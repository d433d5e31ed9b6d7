"""Chapter 2's models: split and concatenate, the two hand-made heads, the parameter count,
live cells."""

import numpy as np
import pytest

from toymodels.page import cells
from toymodels.split_attend import model as sa
from toymodels.split_attend import param_count
from toymodels.split_attend.figure import FIELDS, _field, render


def test_split_is_a_regrouping_and_concat_undoes_it():
    rng = np.random.default_rng(1)
    for T, d, h in ((6, 4, 2), (5, 12, 3), (1, 8, 8)):
        M = rng.normal(size=(T, d))
        parts = sa.split(M, h)
        assert parts.shape == (h, T, d // h)
        for head in range(h):  # head i holds columns i·d_head … (i+1)·d_head − 1, unchanged
            np.testing.assert_array_equal(
                parts[head], M[:, head * (d // h) : (head + 1) * (d // h)]
            )
        np.testing.assert_array_equal(sa.concat(parts), M)


def test_designed_heads():
    words = sa.SENTENCE.split()
    f = sa.forward(words)
    assert words[int(np.argmax(f["weights"][0, 4]))] == "cat" and f["weights"][0, 4, 1] > 0.9
    assert (np.argmax(f["weights"][1], axis=1) == 0).all() and (f["weights"][1, :, 0] > 0.9).all()
    np.testing.assert_allclose(f["weights"].sum(-1), 1)
    assert f["Q"].shape == f["C"].shape == f["Y"].shape == (6, 4) and f["q"].shape == (2, 6, 2)


def test_attention_matches_a_loop_per_head():
    words = sa.SENTENCE.split()
    f = sa.forward(words)
    for h in range(2):
        q, k = f["Q"][:, 2 * h : 2 * h + 2], f["K"][:, 2 * h : 2 * h + 2]
        for i in range(6):
            s = [q[i] @ k[j] / np.sqrt(2) for j in range(i + 1)]
            e = np.exp(np.array(s) - max(s))
            np.testing.assert_allclose(f["weights"][h, i, : i + 1], e / e.sum(), atol=1e-12)


@pytest.mark.parametrize("d_model,h", [(4, 2), (12, 3), (64, 8), (768, 12), (10, 1)])
def test_parameter_formula_against_real_arrays(d_model, h):
    rng = np.random.default_rng(0)
    d_head = d_model // h
    arrays = [
        rng.normal(size=(d_model, d_head)) for _ in range(3 * h)
    ]  # W_Q, W_K, W_V of every head
    arrays += [rng.normal(size=(d_model,)) for _ in range(3)]  # their biases, all heads together
    arrays += [
        rng.normal(size=(h * d_head, d_model)),
        rng.normal(size=(d_model,)),
    ]  # W_O and its bias
    p = param_count.attention_params(d_model, h)
    assert p["total"] == sum(a.size for a in arrays)
    assert p["weights"] == 4 * d_model**2 and p["biases"] == 4 * d_model


def test_gpt2_small_counts():
    d, L = 768, 12
    shapes = (
        [(50257, d), (1024, d)]
        + L
        * [
            (2 * d,),
            (d, 3 * d),
            (3 * d,),
            (d, d),
            (d,),
            (2 * d,),
            (d, 4 * d),
            (4 * d,),
            (4 * d, d),
            (d,),
        ]
        + [(2 * d,)]
    )
    assert param_count.gpt2_params() == sum(int(np.prod(s)) for s in shapes) == 124_439_808
    assert param_count.attention_params(768, 12)["total"] == 2_359_296 + 3_072 == 2_362_368
    assert (
        param_count.gpt2_attention_millions() == "28.3"
        and param_count.gpt2_attention_share() == "22.8%"
    )


def test_calculator_explains_an_uneven_split():
    out = param_count.render({"d_model": "768", "heads": "5"})
    assert (
        "This cannot work: 5 heads cannot split 768 numbers evenly: each head would get 153.6 "
        "numbers" in out["html"]
    )
    assert "2,362,368" in param_count.render({"d_model": "768", "heads": "3"})["html"]


def test_editing_weights_and_presets():
    designed = sa.PRESETS["designed"]
    state = {
        _field(h, m, r, c): str(designed[h][0 if m == "q" else 1][r][c]) for h, m, r, c in FIELDS
    }
    out = render(state)
    assert out["state"]["preset"] == "custom" and out["error"] is None
    assert (
        render({"preset": "custom", "weights": out["state"]["weights"]})["summary"]
        == render({})["summary"]
    )
    assert (
        render({**state, "q1_00": "abc"})["error"]
        == "Each weight must be a number, such as 1.5 or −2."
    )
    assert render({**state, "q1_00": "99"})["error"] == "Keep each weight between −20 and 20."
    assert render({"preset": "custom", "weights": "1,2"})["state"]["preset"] == "designed"


def test_cells_share_a_namespace_and_report_errors():
    cells.forget("t")
    assert cells.run("a = 2\nprint('hi')\na * 21", "t") == {
        "stdout": "hi\n",
        "value": "42",
        "error": None,
        "line": None,
        "check": None,
    }
    assert cells.run("a + 1", "t")["value"] == "3"
    bad = cells.run("x = 1\nundefined_name", "t")
    assert bad["line"] == 2 and bad["error"].endswith(
        "NameError: name 'undefined_name' is not defined\n"
    )
    assert 'File "<cell>", line 2' in bad["error"] and "cells.py" not in bad["error"]
    cells.forget("t")
    assert "NameError" in cells.run("a", "t")["error"]


def test_exercise_check():
    cells.forget("t")
    setup = (
        "X = np.array([[2., 0.], [1., 2.], [2., 0.]])\n"
        "def attention(X, W_Q, W_K):\n"
        "    s = (X @ W_Q) @ (X @ W_K).T / np.sqrt(2)\n"
        "    s[np.triu_indices(3, k=1)] = -np.inf\n"
        "    w = np.exp(s - s.max(1, keepdims=True))\n"
        "    return w / w.sum(1, keepdims=True)\n"
    )
    cells.run(setup, "t")
    wrong = cells.run(
        "w2 = attention(X, np.eye(2), np.eye(2))",
        "t",
        "toymodels.split_attend.model:check_head2_first",
    )
    assert wrong["check"]["ok"] is False and wrong["check"]["message"].startswith("Token 1 gives")
    right = cells.run(
        "w2 = attention(X, np.array([[5., 0.], [5., 0.]]), np.array([[1., 0.], [0., -1.]]))",
        "t",
        "toymodels.split_attend.model:check_head2_first",
    )
    assert right["check"]["ok"] is True and right["check"]["message"].startswith(
        "Correct: token 1 gives 100% to token 0."
    )
