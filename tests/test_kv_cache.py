"""The KV-cache calculator (toymodels/one_character/kv_cache.py): cache sizes, score counts,
bad input."""

import pytest

from toymodels.models.charmodel import model as charmodel
from toymodels.one_character import kv_cache as kv
from toymodels.split_attend import param_count
from toymodels.training import train


def test_gpt3_preset_numbers():
    r = kv.render({"preset": "gpt3"})
    per_token = 2 * 96 * 12288
    assert per_token == 2_359_296 == kv.numbers_per_token(96, 12288)
    assert kv.cache_bytes(96, 12288, 2, 1) == 4_718_592
    assert kv.cache_bytes(96, 12288, 2, 2048) == per_token * 2 * 2048 == 9_663_676_416
    for text in ("2,359,296", "4,718,592", "9,663,676,416", "9.7 GB", "4.7 MB", "2,098,176"):
        assert text in r["html"]
    assert "9,663,676,416 bytes" in r["summary"] and r["error"] is None
    assert r["state"] == {
        "layers": "96",
        "d_model": "12288",
        "heads": "96",
        "tokens": "2048",
        "bytes": "2",
        "preset": "",
    }
    assert 'data-value="gpt3" data-fk="preset-gpt3" aria-pressed="true"' in r["html"]


def test_this_model_is_the_default_and_follows_charmodel():
    r = kv.render(None)
    c = charmodel.REFERENCE
    assert (c["n_layer"], c["d_model"]) == (2, 32)
    assert kv.numbers_per_token(c["n_layer"], c["d_model"]) == 2 * 2 * 32 == 128
    assert train.parser().parse_args([]).ctx == kv.CHAR_CONTEXT
    assert r["state"]["layers"] == "2" and r["state"]["bytes"] == "4"
    assert (
        "<td>128</td>" in r["html"] and "32,768 (32.8 kB)" in r["html"]
    )  # 128 × 4 × 64 = 32,768 bytes
    assert 'data-value="this" data-fk="preset-this" aria-pressed="true"' in r["html"]


def test_gpt2_preset():
    r = kv.render({"preset": "gpt2"})
    s = r["state"]
    assert (s["layers"], s["d_model"], s["heads"], s["tokens"], s["bytes"]) == (
        "12",
        "768",
        "12",
        "1024",
        "2",
    )
    # a key and a value of 768 in each of 12 layers, 2 bytes each, for 1,024 tokens
    assert "<td>18,432</td>" in r["html"] and "37,748,736 (37.7 MB)" in r["html"]


@pytest.mark.parametrize("n", [0, 1, 2, 7, 64])
def test_scores_per_head_brute_force(n):
    assert kv.scores_per_head(n) == sum(1 for i in range(n) for j in range(n) if j <= i)
    if n:  # token n against the n - 1 cached keys and its own, or every pair again
        assert kv.dot_products_new_token(n) == n
        assert kv.dot_products_new_token(n, cached=False) == sum(i + 1 for i in range(n))


def test_human_bytes():
    assert kv.human_bytes(512) == "512 bytes"
    assert kv.human_bytes(4_718_592) == "4.7 MB"
    assert kv.human_bytes(9_663_676_416) == "9.7 GB"


def test_heads_must_divide_d_model():
    r = kv.render({"preset": "gpt3", "heads": "100"})  # the preset wins: a one-shot fill
    assert r["state"]["heads"] == "96"
    r = kv.render({"d_model": "32", "heads": "5"})
    assert '<p class="mh-why" role="status">' in r["html"] and "6.4" in r["html"]
    assert r["state"]["heads"] == "5" and "cannot split" in r["summary"]


@pytest.mark.parametrize(
    "field,bad",
    [
        ("layers", "abc"),
        ("tokens", "-3"),
        ("tokens", "1e9"),
        ("d_model", "<script>"),
        ("layers", "0"),
        ("tokens", "2000000"),
        ("bytes", "3"),
    ],
)
def test_garbage_gives_a_message(field, bad):
    r = kv.render({field: bad})
    assert '<p class="mh-why" role="status">' in r["html"] and 'class="mh-out"' not in r["html"]
    assert r["state"][field] == bad and r["summary"] and r["error"] is None
    assert "<script>" not in r["html"]
    if bad == "<script>":
        assert "&lt;script&gt;" in r["html"]


def test_gpt3_billions():
    assert param_count.gpt3_billions() == "175"
    assert round(param_count.gpt2_params(param_count.GPT3) / 1e9) == 175


@pytest.mark.browser
def test_a_value_left_with_tab_is_computed_at_once(new_page, base_url):
    """A number changed and left with Tab recomputes the cache, as Enter or Compute do."""
    from conftest import open_ready, url_with

    page = open_ready(
        new_page(viewport={"width": 1280, "height": 900}), base_url + "one-character.html"
    )
    box = page.locator("#kv-cache input[name=tokens]")
    box.scroll_into_view_if_needed()
    box.fill("128")
    box.press("Tab")
    # 128 numbers a token (2 layers × 2 × 32), 4 bytes each, 128 tokens
    page.wait_for_function(
        """() => document.querySelector("#kv-cache [data-body]").textContent
            .includes("65,536")"""
    )
    url_with(page, "kv-cache.tokens=128")
