"""The toy heads against independent calculations written straight from the chapter's
definitions."""

import math

import numpy as np
import pytest

from toymodels.many_heads import model as heads
from toymodels.many_heads import sizes as model_configs
from toymodels.many_heads.figure import render
from toymodels.page.html import tenths, tenths_rows

SENTENCE = "Puff found a shiny key and kept it."
FEATURES = {  # what the chapter says each word is, written out by hand
    "puff": {"doer"},
    "found": {"action"},
    "key": {"thing"},
    "kept": {"action"},
    "it": {"pronoun"},
}


def reference_weights(words):
    """Softmax rows from the chapter's formulas with Python floats and loops, no matrices."""

    def feats(w):
        return FEATURES.get(w.lower(), set())

    def score(h, i, j):
        if h == 0:
            return 6.9**2 * math.cos(0.35 * (i - 1 - j)) / math.sqrt(2)
        a, b = heads.HEAD_FEATURES[h]
        fi, fj = feats(words[i]), feats(words[j])
        qi = [2.5 * (a in fi), 2.5 * (b in fi)]
        kj = [2.5 * (b in fj), 2.5 * (a in fj)]
        return (qi[0] * kj[0] + qi[1] * kj[1]) / math.sqrt(2)

    out = np.zeros((3, len(words), len(words)))
    for h in range(3):
        for i in range(len(words)):
            e = [math.exp(score(h, i, j)) for j in range(i + 1)]
            for j in range(i + 1):
                out[h, i, j] = e[j] / sum(e)
    return out


def test_weights_match_the_chapter_formulas():
    words = heads.split_words(SENTENCE)
    assert words == ["Puff", "found", "a", "shiny", "key", "and", "kept", "it"]
    np.testing.assert_allclose(
        heads.multi_head(words)["weights"], reference_weights(words), atol=1e-12
    )


@pytest.mark.parametrize(
    "sentence",
    [
        SENTENCE,
        "The cat sat on the mat and it was happy",
        " ".join(["word"] * heads.MAX_WORDS),
        "it",
    ],
)
def test_rows_sum_to_one_and_masked_cells_are_exactly_zero(sentence):
    w = heads.multi_head(heads.split_words(sentence))["weights"]
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, atol=1e-12)
    T = w.shape[1]
    future = np.triu(np.ones((T, T), dtype=bool), k=1)
    assert (w[:, future] == 0.0).all()


def test_head_one_looks_at_the_previous_word():
    words = [f"w{i}" for i in range(heads.MAX_WORDS)]
    w = heads.multi_head(words)["weights"][0]
    for i in range(1, len(words)):
        assert np.argmax(w[i]) == i - 1, i


def test_head_one_stays_a_previous_word_head_at_the_longest_sentence():
    """At the longest sentence the figure accepts, every row still gives most of its attention
    to the previous word: the clock hand must not come round and match a word a turn back."""
    words = ["word"] * heads.MAX_WORDS
    assert render({"sentence": " ".join(words)})["error"] is None
    assert render({"sentence": " ".join(words + ["word"])})["error"]
    w = heads.multi_head(words)["weights"][0]
    for i in range(1, len(words)):
        assert w[i, i - 1] > 0.75, (i, w[i].round(2))
        assert np.delete(w[i], i - 1).max() < 0.15, (i, w[i].round(2))


def test_shares_for_it():
    words = heads.split_words(SENTENCE)
    w = heads.multi_head(words)["weights"][:, words.index("it")]
    assert words[np.argmax(w[0])] == "kept"
    np.testing.assert_allclose(w[1], 1 / 8)  # "it" has neither action nor doer: even spread
    assert words[np.argmax(w[2])] == "key" and w[2, words.index("key")] > 0.9
    kept_to_puff = heads.multi_head(words)["weights"][1, words.index("kept"), 0]
    assert kept_to_puff > 0.9


def test_unknown_words_are_reported_and_featureless():
    m = heads.multi_head(["Zorp", "kept", "it"])
    assert m["unknown"] == ["Zorp"]
    assert (m["X"][0, 2:] == 0).all()


@pytest.mark.parametrize("seed", range(20))
def test_tenths_round_each_share_to_the_nearest(seed):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(rng.integers(1, 17)) * 0.3)
    t = tenths(p)
    assert np.all(np.abs(t - p * 1000) <= 0.5 + 1e-9), (t, p * 1000)
    assert abs(t.sum() - 1000) <= len(p) / 2


def test_equal_shares_show_alike():
    """Shares bent to add up to 100.0% (largest remainder) showed a sixth as 16.6% beside
    16.7%; each is rounded on its own, and tables state the total apart (kit.shares_table)."""
    assert list(tenths([1 / 3] * 3)) == [333, 333, 333]
    assert list(tenths([1 / 6] * 6)) == [167] * 6
    assert list(tenths([1 / 16] * 16)) == [63] * 16  # halves up: 6.25% shows as 6.3%


@pytest.mark.parametrize("seed", range(10))
def test_a_whole_map_rounded_at_once_is_each_row_rounded(seed):
    rng = np.random.default_rng(seed)
    T = int(rng.integers(1, 25))
    shares = np.tril(rng.dirichlet(np.ones(T) * 0.5, size=T))
    if seed % 3 == 0:  # ties: every row an even split, whose remainders are all equal
        shares = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
    if seed == 1:  # a reader's softmax gone wrong in one row
        shares[T // 2, 0] = np.nan
    with np.errstate(invalid="ignore", over="ignore"):  # what tenths makes of a NaN row
        assert tenths_rows(shares) == [tenths(shares[i, : i + 1]).tolist() for i in range(T)]


def test_d_head_table():
    assert model_configs.d_head(6, 3) == 2
    assert model_configs.d_head(512, 8) == 64
    assert model_configs.d_head(768, 12) == 64
    with pytest.raises(ValueError, match="3 heads cannot split 10 numbers evenly"):
        model_configs.d_head(10, 3)
    html = model_configs.render()["html"]
    assert "512 ÷ 8 = 64" in html and "768 ÷ 12 = 64" in html and "6 ÷ 3 = 2" in html


def test_figure_escapes_reader_text():
    out = render({"sentence": '<img src=x onerror="alert(1)"> it'})
    assert (
        "<img" not in out["html"]
        and "&lt;img src=x onerror=&quot;alert(1)&quot;&gt; it" in out["html"]
    )


def test_figure_rejects_long_and_empty_sentences():
    long = " ".join(["word"] * 17)
    assert render({"sentence": long})["error"] == (
        "A sentence here can have at most 16 words; this one has 17. Shorten it and press Update."
    )
    assert render({"sentence": " ... "})["error"] == "Type a sentence with at least one word."


def test_figure_state_is_normalised():
    s = render({"word": "99", "head": "7", "step": "nope", "extra": "x"})["state"]
    assert s == {"sentence": SENTENCE, "word": "7", "head": "all", "step": "softmax"}
    assert render({"word": "2", "head": "3"})["state"]["word"] == "2"


def test_shares_table_columns_add_to_100():
    out = render({"word": "4"})["slots"]["shares"]
    assert out.count("<td>100.0%</td>") == 3
    assert out.count('class="masked"') == 3 * 3  # three later words, one cell each per head


def test_figure_state_rejects_unicode_digits():
    assert render({"word": "²"})["state"]["word"] == "7"
    from toymodels.split_attend.figure import render as render_split

    assert render_split({"step": "mix", "output_cell": "²,1"})["state"]["output_cell"] == ""
