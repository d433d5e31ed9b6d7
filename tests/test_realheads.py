"""Chapter "Real heads": the numpy exporter against the reference libraries, the label rules on
hand-made maps, the GPT-2 path on a tiny random checkpoint, the figure, and the chapter in
Chromium."""

import html
import json
import re
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import open_ready, url_with

from sitebuild.pipeline import build as site_build
from sitebuild.pipeline.chapters import AuthorError
from toymodels.export import cli
from toymodels.export.forward import GPT2, Bert
from toymodels.models.minilm.wordpiece import WordPiece
from toymodels.page import data
from toymodels.real_heads import figure as fig
from toymodels.real_heads import maps as rh
from toymodels.real_heads import values as rv

ROOT = Path(__file__).resolve().parent.parent

CHAPTER = "real-heads.html"
TRICKY = [
    "Café déjà vu: naïve coöperation, ÉCOLE!",
    "Emoji 🙂 and CJK 漢字 and a tab\there.",
    "Supercalifragilisticexpialidocious antidisestablishmentarianism",
    "x" * 120 + " end",
    "Numbers 3.14159, $5 and 100% — dashes…",
]


def minilm_folder():
    try:
        return cli.minilm_folder()
    except FileNotFoundError as e:
        pytest.skip(f"{e}: the checks against the model's own files need it")


@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip(
        "safetensors", reason="the safetensors package reads the weights (pip install safetensors)"
    )
    folder = minilm_folder()
    return folder, Bert(folder), WordPiece(folder / "vocab.txt")


@pytest.fixture
def fresh_cache():
    rh._cache.clear()
    rv._cache.clear()
    yield
    rh._cache.clear()
    rv._cache.clear()


# ---- the exporter ------------------------------------------------------------------------------


def test_wordpiece_matches_tokenizers(minilm):
    tokenizers = pytest.importorskip(
        "tokenizers",
        reason="the tokenizers package is not installed; "
        "pip install tokenizers to compare WordPiece with it",
    )
    folder, _, wp = minilm
    tk = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    tk.no_padding()  # the shipped tokenizer.json pads every input to 128 tokens
    tk.no_truncation()
    for _, text in cli.SENTENCES + tuple((None, t) for t in TRICKY):
        want = tk.encode(text)
        assert wp.encode(text) == (want.tokens, want.ids), text


def test_numpy_forward_matches_transformers(minilm):
    torch = pytest.importorskip(
        "torch",
        reason="PyTorch is not installed (pip install torch==2.13.0); "
        "the numpy BERT forward was not compared with transformers",
    )
    transformers = pytest.importorskip(
        "transformers",
        reason="transformers is not installed; the numpy BERT forward was not compared with it",
    )
    folder, bert, wp = minilm
    ref = transformers.BertModel.from_pretrained(str(folder), attn_implementation="eager").eval()
    worst = 0.0
    for _, text in cli.SENTENCES:
        _, ids = wp.encode(text)
        ours = bert.attentions(ids)
        with torch.no_grad():
            theirs = np.stack(
                [a[0].numpy() for a in ref(torch.tensor([ids]), output_attentions=True).attentions]
            )
        assert ours.shape == theirs.shape == (6, 12, len(ids), len(ids))
        worst = max(worst, float(np.abs(ours - theirs).max()))
    print(f"largest difference from transformers' BertModel over every map: {worst:.2e}")
    assert worst < 1e-4


def test_committed_json_is_this_exporter_output(minilm, fresh_cache):
    _, bert, wp = minilm
    m = rh.model("minilm")
    assert [(s["id"], s["text"]) for s in m["sentences"]] == list(cli.SENTENCES)
    assert (m["layers"], m["heads"], m["kind"]) == (6, 12, "encoder")
    for sid, text in cli.SENTENCES:
        d = rh.sentence("minilm", sid)
        tokens, ids = wp.encode(text)
        assert d["tokens"] == tokens and d["sinks"] == [0, len(tokens) - 1] and d["causal"] is False
        assert np.abs(d["att"] - bert.attentions(ids)).max() <= 0.5 / cli.SCALE + 1e-9
        raw = data.read_text(f"realheads/minilm/{sid}.json")
        assert (
            raw == json.dumps(json.loads(raw), ensure_ascii=False, separators=(",", ":")) + "\n"
        )  # compact
        assert re.fullmatch(
            r"[\d,\[\]]+", raw[raw.index('"att":') + 6 : -2]
        )  # whole thousandths only


def test_export_writes_files_and_index(minilm, tmp_path):
    folder, _, _ = minilm
    idx = cli.export_minilm(folder, tmp_path, sentences=cli.SENTENCES[:2])
    assert [s["id"] for s in idx["models"][0]["sentences"]] == ["cat", "puff"]
    d = json.loads((tmp_path / "minilm" / "puff.json").read_text())
    att = np.array(d["att"])
    assert att.shape == (6, 12, 11, 11) and att.dtype.kind == "i"
    assert np.all(np.abs(att.sum(-1) - 1000) <= 6)  # rounded rows still add up to about 100%


# ---- label rules on hand-made maps -------------------------------------------------------------


def one_hot(T, cols):
    """Rows of a T x T map with all weight on cols[i] (None: uniform)."""
    A = np.zeros((T, T))
    for i, j in enumerate(cols):
        if j is None:
            A[i] = 1 / T
        else:
            A[i, j] = 1
    return A


def label(A, sinks=(0, 5), causal=False):
    m = rh.measures(A, list(sinks), causal)
    return rh.label_of({k: float(v) for k, v in m.items()})


def test_label_rules_on_hand_made_maps():
    T = 6  # [CLS] w1 w2 w3 w4 [SEP]
    assert label(one_hot(T, [0, 0, 1, 2, 3, 4])) == "previous"
    assert label(one_hot(T, [1, 2, 3, 4, 5, 5])) == "next"
    assert label(one_hot(T, range(T))) == "self"
    assert label(one_hot(T, [0] * T)) == "sink"
    assert label(one_hot(T, [5] * T)) == "sink"
    assert label(one_hot(T, [None] * T)) == "broad"
    assert label(one_hot(T, [2] * T)) == "other"  # everything on one word: no habit named here
    # [CLS] and [SEP] rows do not count: their weight is ignored
    assert label(one_hot(T, [3, 0, 1, 2, 3, 2])) == "previous"
    # just over and just under half
    A = np.zeros((T, T))
    for i in range(1, 5):
        A[i, i - 1], A[i, i + 2 if i <= 2 else i - 2] = 0.51, 0.49  # the rest on a token two away
    assert label(A) == "previous"
    A[1:5] = 1 - A[1:5] - (A[1:5] == 0)  # swap the two shares
    assert (
        abs(float(rh.measures(A, [0, 5], False)["previous"]) - 0.49) < 1e-12
        and label(A) != "previous"
    )
    # token 1's previous token is [CLS]: it counts for both, and the larger mean wins
    assert label(one_hot(T, [0] * T)) == "sink"
    # a causal model: row 0 sees only itself and is skipped; the sink is the first token
    C = np.tril(np.ones((T, T)))
    C /= C.sum(1, keepdims=True)
    assert label(C, sinks=(0,), causal=True) == "broad"
    assert label(one_hot(T, [0, 0, 1, 2, 3, 4]), sinks=(0,), causal=True) == "previous"
    assert label(one_hot(T, [0] * T), sinks=(0,), causal=True) == "sink"
    with pytest.raises(ValueError):
        rh.measures(np.eye(2), [0, 1], False)


def test_summary_reads_like_a_sentence():
    T = 6
    A = np.full((T, T), 0.03 / (T - 1))
    for i in range(T):
        A[i, i - 1] = 0.97  # row 0 wraps round to [SEP]; its row is not counted
    d = {
        "tokens": ["[CLS]", "the", "cat", "sat", ".", "[SEP]"],
        "sinks": [0, 5],
        "causal": False,
        "att": np.zeros((4, 11, T, T)),
    }
    d["att"][3, 10] = A
    labels, per = rh.head_labels(d)
    assert labels[3][10] == "previous"
    assert rh.summary(d, 3, 10, labels[3][10], per[3][10]) == (
        "L4\u00a0H11 · previous token: on average 97% of a token’s attention goes to the token "
        "before it."
    )
    d["att"][0, 0] = one_hot(T, [0, 5, 0, 5, 0, 5])
    assert rh.summary(d, 0, 0, *[x[0][0] for x in rh.head_labels(d)]) == (
        "L1\u00a0H1 · sink: on average 100% of a token’s attention rests on [CLS] and [SEP]."
    )
    d["att"][0, 1] = one_hot(T, [2] * T)
    assert rh.summary(d, 0, 1, *[x[0][1] for x in rh.head_labels(d)]) == (
        "L1\u00a0H2 · other: no single habit; 0% on [CLS] and [SEP]. Its strongest link: “the” → "
        "“cat”, 100%."
    )
    causal = {**d, "sinks": [0], "causal": True, "att": np.zeros((1, 1, T, T))}
    causal["att"][0, 0] = one_hot(T, [0] * T)
    assert rh.summary(causal, 0, 0, *[x[0][0] for x in rh.head_labels(causal)]) == (
        "L1\u00a0H1 · sink: on average 100% of a token’s attention rests on “[CLS]”, the first "
        "token."
    )


# ---- GPT-2 on a tiny random checkpoint ---------------------------------------------------------


def tiny_gpt2(folder, seed=0):
    """A GPT-2-shaped checkpoint with random weights and a byte-level BPE trained on the curated
    sentences."""
    tokenizers = pytest.importorskip(
        "tokenizers", reason="the tokenizers package reads GPT-2's BPE"
    )
    st = pytest.importorskip(
        "safetensors.numpy", reason="the safetensors package writes the checkpoint"
    )
    from tokenizers import decoders, models, pre_tokenizers, trainers

    folder.mkdir(parents=True, exist_ok=True)
    tk = tokenizers.Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    tk.train_from_iterator(
        [t for _, t in cli.SENTENCES],
        trainers.BpeTrainer(
            vocab_size=320,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            special_tokens=["<|endoftext|>"],
        ),
    )
    tk.save(str(folder / "tokenizer.json"))
    V, D, L, H, P = tk.get_vocab_size(), 16, 2, 4, 64
    rng = np.random.default_rng(seed)
    r = lambda *shape, s=0.6: (rng.standard_normal(shape) * s).astype(np.float32)  # noqa: E731
    w = {
        "wte.weight": r(V, D),
        "wpe.weight": r(P, D),
        "ln_f.weight": 1 + r(D, s=0.1),
        "ln_f.bias": r(D, s=0.1),
    }
    for i in range(L):
        w |= {
            f"h.{i}.ln_1.weight": 1 + r(D, s=0.1),
            f"h.{i}.ln_1.bias": r(D, s=0.1),
            f"h.{i}.attn.c_attn.weight": r(D, 3 * D),
            f"h.{i}.attn.c_attn.bias": r(3 * D, s=0.1),
            f"h.{i}.attn.c_proj.weight": r(D, D),
            f"h.{i}.attn.c_proj.bias": r(D, s=0.1),
            f"h.{i}.ln_2.weight": 1 + r(D, s=0.1),
            f"h.{i}.ln_2.bias": r(D, s=0.1),
            f"h.{i}.mlp.c_fc.weight": r(D, 4 * D),
            f"h.{i}.mlp.c_fc.bias": r(4 * D, s=0.1),
            f"h.{i}.mlp.c_proj.weight": r(4 * D, D),
            f"h.{i}.mlp.c_proj.bias": r(D, s=0.1),
        }
    st.save_file(w, str(folder / "model.safetensors"), metadata={"format": "pt"})
    (folder / "config.json").write_text(
        json.dumps(
            {
                "model_type": "gpt2",
                "architectures": ["GPT2LMHeadModel"],
                "vocab_size": V,
                "n_embd": D,
                "n_layer": L,
                "n_head": H,
                "n_positions": P,
                "n_ctx": P,
                "n_inner": None,
                "layer_norm_epsilon": 1e-5,
                "activation_function": "gelu_new",
                "bos_token_id": 0,
                "eos_token_id": 0,
            }
        )
    )
    return folder


@pytest.fixture(scope="module")
def gpt2_export(tmp_path_factory):
    folder = tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2"))
    out = tmp_path_factory.mktemp("realheads")
    if (
        data.HERE / rh.DIR / "index.json"
    ).exists():  # beside the committed MiniLM data, as an author would
        shutil.copytree(data.HERE / rh.DIR, out, dirs_exist_ok=True)
    assert cli.main(["gpt2", "--from", str(folder), "--out", str(out), "--name", "tiny GPT-2"]) == 0
    return folder, out


def test_gpt2_export_is_causal_and_readable(gpt2_export):
    folder, out = gpt2_export
    idx = json.loads((out / "index.json").read_text())
    g = next(m for m in idx["models"] if m["id"] == "gpt2")
    assert (g["kind"], g["layers"], g["heads"], g["name"]) == ("decoder", 2, 4, "tiny GPT-2")
    assert idx["models"][0]["id"] == "minilm" or len(idx["models"]) == 1
    tk = cli.gpt2_tokenizer(folder)
    for s in g["sentences"]:
        d = json.loads((out / s["file"]).read_text())
        att = np.array(d["att"]) / d["scale"]
        T = len(d["tokens"])
        assert d["causal"] is True and d["sinks"] == [0] and len(tk.encode(s["text"]).ids) == T
        assert np.all(att[..., np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] == 0)
        assert np.allclose(att.sum(-1), 1, atol=T * 0.0005 + 1e-9)
        assert "".join(d["tokens"]).replace("␣", "") == s["text"].replace(
            " ", ""
        )  # a bare space shows as ␣
        labels, _ = rh.head_labels({**d, "att": att})
        assert all(lab in rh.LABELS and lab != "next" for row in labels for lab in row)


def test_gpt2_forward_matches_transformers(gpt2_export):
    torch = pytest.importorskip(
        "torch",
        reason="PyTorch is not installed (pip install torch==2.13.0); "
        "the numpy GPT-2 forward was not compared with transformers",
    )
    transformers = pytest.importorskip(
        "transformers",
        reason="transformers is not installed; the numpy GPT-2 forward was not compared with it",
    )
    folder, _ = gpt2_export
    ref = transformers.GPT2Model.from_pretrained(str(folder), attn_implementation="eager").eval()
    ours_model, tk = GPT2(folder), cli.gpt2_tokenizer(folder)
    for _, text in cli.SENTENCES:
        ids = tk.encode(text).ids
        with torch.no_grad():
            theirs = np.stack(
                [a[0].numpy() for a in ref(torch.tensor([ids]), output_attentions=True).attentions]
            )
        assert np.abs(ours_model.attentions(ids) - theirs).max() < 1e-4


def test_figure_offers_gpt2_when_exported(gpt2_export, monkeypatch, fresh_cache):
    _, out = gpt2_export
    monkeypatch.setattr(data, "HERE", out.parent / "_data")
    (out.parent / "_data").mkdir(exist_ok=True)
    link = out.parent / "_data" / rh.DIR
    if not link.exists():
        link.symlink_to(out)
    r = fig.render({"model": "gpt2", "sentence": "cat", "layer": "2", "head": "3"})
    assert r["state"]["model"] == "gpt2" and r["error"] is None
    assert 'data-key="model" data-value="gpt2"' in r["html"]
    assert 'class="masked"' in r["html"] and "c masked" in r["html"]  # the causal mask is drawn
    assert "masked (a later token)" in r["html"]


def test_cli_reports_bad_input(tmp_path, capsys):
    with pytest.raises(SystemExit):
        cli.main(["gpt2"])
    assert "needs --from FOLDER" in capsys.readouterr().err
    assert cli.main(["gpt2", "--from", str(tmp_path / "nowhere"), "--out", str(tmp_path)]) == 1
    assert "config.json is missing" in capsys.readouterr().err


# ---- the figure and the prose numbers ----------------------------------------------------------


def test_figure_defaults_and_state(fresh_cache):
    r = fig.render({})
    s = r["state"]
    assert (s["model"], s["sentence"], s["layer"], s["head"], s["view"]) == (
        "minilm",
        "cat",
        "1",
        "",
        "layer",
    )
    d = rh.sentence("minilm", "cat")
    assert s["token"] == f"cat:{d['tokens'].index('it')}"
    assert (
        r["html"].count('class="rh-pickhead"') == 12 and r["html"].count('<p class="rh-sum"') == 12
    )
    labels, per = rh.head_labels(d)
    for h in range(12):
        assert f'data-head="{h + 1}" data-label="{labels[0][h]}"' in r["html"]
        assert fig.esc(rh.summary(d, 0, h, labels[0][h], per[0][h])) in r["html"]
    assert "style=" not in r["html"] and "<script" not in r["html"]
    # the model view's enlarge opens that layer with the head enlarged, then clears itself
    r = fig.render({"view": "model", "enlarge": "4.11", "sentence": "puff"})
    assert (r["state"]["layer"], r["state"]["head"], r["state"]["view"], r["state"]["enlarge"]) == (
        "4",
        "11",
        "layer",
        "",
    )
    assert 'class="rh-big"' in r["html"]
    # heads are named "L4 H11" everywhere; the model view asks for "L4H11", and links shared
    # before, which wrote "4.11", open the same head
    assert 'data-key="enlarge" data-value="L4H11"' in fig.render({"view": "model"})["html"]
    for asked in ("L4H11", "L4 H11", "l4h11", "4.11"):
        r = fig.render({"view": "model", "enlarge": asked, "sentence": "puff"})
        assert (r["state"]["layer"], r["state"]["head"], r["state"]["enlarge"]) == ("4", "11", "")
        assert '<h4 class="mh-head-title">L4\u00a0H11 · ' in r["html"]
    for junk in ("L7H1", "4.13", "L4H", "H4L1", "4.11.2", "L٤H1"):
        r = fig.render({"view": "model", "enlarge": junk})
        assert (r["state"]["view"], r["state"]["enlarge"]) == ("model", ""), junk
    # a token from another sentence does not carry over; nonsense falls back to defaults
    r = fig.render(
        {
            "sentence": "keys",
            "token": "cat:8",
            "layer": "9",
            "head": "<b>",
            "view": "x",
            "model": "?",
        }
    )
    assert r["state"] == {
        **r["state"],
        "model": "minilm",
        "token": "keys:1",
        "layer": "1",
        "head": "",
        "view": "layer",
    }
    assert "<b>" not in r["html"]
    r = fig.render({"layer": "²", "head": "٣", "token": "cat:²", "enlarge": "².1"})
    assert (r["state"]["layer"], r["state"]["head"], r["state"]["token"]) == ("1", "", "cat:8")
    m = fig.render({"view": "model"})["html"]
    assert m.count('class="rh-mini"') == 72 and m.count('<span class="sr">L1\u00a0H') == 12


def test_prose_numbers_come_from_the_data(fresh_cache):
    labels, per = rv.overall()
    flat = [lab for row in labels for lab in row]
    words = {0: "no", 1: "one", 2: "two", 3: "three"}
    assert rv.n_sink_heads() == words.get(flat.count("sink"), str(flat.count("sink")))
    assert rv.n_heads_total() == 72 and rv.n_sentences() == len(cli.SENTENCES)
    assert (
        rv.sink_share_all() == f"{round(100 * np.mean([m['sink'] for row in per for m in row]))}%"
    )
    layer, h, share = rv._link("cat", "it", "cat")
    d = rh.sentence("minilm", "cat")
    assert share == d["att"][:, :, d["tokens"].index("it"), d["tokens"].index("cat")].max()
    assert rv.it_cat_head() == f"L{layer + 1}\u00a0H{h + 1}"
    # a clause that names the previous-token heads agrees in number with how many there are
    found = rv.previous_heads_found()
    if flat.count("previous") == 1:
        assert found.startswith("in one head of the 72, ") and "strongest" not in found
    # the induction head's target: the token after the earlier copy, measured, not assumed
    assert rv.induction_share().endswith("%") and rv.induction_head().startswith("L")


def test_the_copy_measure_pairs_each_repeat_with_its_last_earlier_occurrence(site, fresh_cache):
    d = rh.sentence(rv.model()["id"], "fox")
    toks = d["tokens"]
    pairs = []
    for i, token in enumerate(toks):
        earlier = [j for j in range(i) if toks[j] == token]
        if earlier and token not in ("[CLS]", "[SEP]", ",", "."):
            pairs.append((i, earlier[-1]))
    second = toks.index("quick", toks.index("quick") + 1)
    # not every pair is second copy -> first copy: a "the" of the second copy meets a later "the"
    assert any(j >= second - 1 for _, j in pairs) and any(i < second - 1 for i, _ in pairs)
    share = np.mean([d["att"][:, :, i, j] for i, j in pairs], axis=0)
    layer, head = np.unravel_index(int(np.argmax(share)), share.shape)
    assert rv.copy_head() == f"L{layer + 1}\u00a0H{head + 1}"
    assert rv.copy_share() == f"{round(100 * share.max())}%"
    text = " ".join(
        html.unescape(re.sub(r"<[^>]+>", "", (site / "real-heads.html").read_text())).split()
    )
    assert (
        f"gives on average {rv.copy_share()} of its attention to its last earlier occurrence"
        in text
    )
    assert "in the first copy" not in text


def test_build_stops_clearly_without_data_and_never_exports(tmp_path, monkeypatch, fresh_cache):
    """Rendering only reads: missing data is an error naming `make export`, never an export run."""
    monkeypatch.setattr(data, "HERE", tmp_path / "empty")

    def no_export(*args, **kwargs):
        raise AssertionError("the build started an export")

    monkeypatch.setattr(cli, "export_minilm", no_export)
    root = tmp_path / "proj"
    (root / "chapters").mkdir(parents=True)
    for name in ("templates", "toymodels"):
        (root / name).symlink_to(ROOT / name)
    (root / "chapters" / "a.md").write_text(
        '+++\ntitle = "T"\nslug = "t"\norder = 1\nseries = "S"\nsummary = "S."\nsources = ["A '
        'source."]\n+++\n\n'
        "::: figure real-heads\nmodel: toymodels.real_heads.figure:render\ncaption: C.\nalt: "
        "A.\n:::\n"
    )
    with pytest.raises(AuthorError) as e:
        site_build.build(root, tmp_path / "site")
    assert re.fullmatch(
        r"toymodels/real_heads/maps\.py:\d+: figure 'toymodels\.real_heads\.figure:render' "
        r"\(chapters/a\.md:11\) raised MissingData: toymodels/data/realheads/index\.json is "
        r"missing; run `make export` to write the real-heads data \(in toymodels/page/data\.py:"
        r"\d+, called from this line\), given the state \{\} \(from "
        r"the chapter\); render\(\{\}, \"real-heads\"\) in Python shows the whole traceback",
        str(e.value),
    ), str(e.value)
    assert not (tmp_path / "site").exists()


# ---- the chapter in Chromium -------------------------------------------------------------------


def thumb_rows(page):
    """For each head shown: the index of its highlighted row."""
    return page.evaluate("""[...document.querySelectorAll("#real-heads .rh-pickhead .rh-thumb")]
        .map((t) => { const row = t.querySelector(".rowmark");
          return row ? row.y.baseVal.value / row.height.baseVal.value : -1; })""")


def heads_shown(page):
    return page.evaluate("""[...document.querySelectorAll('#real-heads .rh-head')].map(
        li => [li.querySelector('.rh-name').textContent, li.dataset.label])""")


def want_heads(sid, layer):
    labels, _ = rh.head_labels(rh.sentence("minilm", sid))
    return [[f"L{layer}\u00a0H{h + 1}", labels[layer - 1][h]] for h in range(12)]


@pytest.mark.browser
def test_without_javascript_layer_one_is_complete(new_page, base_url):
    page = new_page(java_script_enabled=False)
    page.goto(base_url + CHAPTER)
    assert heads_shown(page) == want_heads("cat", 1)
    assert thumb_rows(page) == [rh.sentence("minilm", "cat")["tokens"].index("it")] * 12
    assert page.locator("#real-heads .rh-sum").count() == 12
    labels, _ = rh.head_labels(rh.sentence("minilm", "cat"))
    totals = [str(sum(c[k] for c in rh.counts(labels))) for k in rh.LABELS]
    assert page.locator(".rh-counts tfoot td").all_inner_texts() == totals
    prose = page.locator("article").inner_text()
    assert f"{rv.it_cat_head()} sends {rv.it_cat_share()} of" in prose.replace("\n", " ")


@pytest.mark.browser
def test_layer_slider_by_pointer_and_keys(new_page, base_url):
    page = new_page(viewport={"width": 1200, "height": 500})
    requests = []
    page.on(
        "request",
        lambda r: (
            "/realheads/" in r.url
            and requests.append(re.sub(r"\.[0-9a-f]{12}(?=\.\w+$)", "", r.url).rsplit("/", 2)[-2:])
        ),
    )
    open_ready(page, base_url + CHAPTER)
    assert page.locator("#real-heads").evaluate("(f) => f.getBoundingClientRect().top") > 2 * 500
    assert requests == []  # nothing fetched while the figure is more than a screen away
    # once the reader comes near, the data of the sentence shown is fetched; then, once the page
    # is idle, the next sentence's (the figure's first control, worked out ahead), and no other's
    with page.expect_request(lambda r: "/minilm/cat." in r.url):
        page.locator("#real-heads").scroll_into_view_if_needed()
    with page.expect_request(lambda r: "/minilm/puff." in r.url):
        pass
    assert ["realheads", "index.json"] in requests
    assert [r for r in requests if r[0] == "minilm"] == [
        ["minilm", "cat.json"],
        ["minilm", "puff.json"],
    ]
    t = time.time()
    page.locator("#real-heads [data-fk='layer-3']").click()
    page.wait_for_selector("#real-heads .rh-layer-counts:has-text('Layer 3:')")
    print(f"first layer switch: {time.time() - t:.2f} s")
    assert heads_shown(page) == want_heads("cat", 3)
    assert page.locator("#real-heads [data-fk='layer-3']").get_attribute("aria-pressed") == "true"
    assert ["minilm", "cat.json"] in requests and ["realheads", "index.json"] in requests
    # keys: arrows move along the slider, Enter chooses; focus survives the redraw
    page.keyboard.press("ArrowRight")
    t = time.time()
    page.keyboard.press("Enter")
    page.wait_for_selector("#real-heads .rh-layer-counts:has-text('Layer 4:')")
    print(f"layer switch: {time.time() - t:.2f} s")
    assert page.evaluate("document.activeElement.dataset.fk") == "layer-4"
    assert heads_shown(page) == want_heads("cat", 4)
    page.locator("#real-heads [data-fk='layer-up']").click()
    page.wait_for_selector("#real-heads .rh-layer-counts:has-text('Layer 5:')")
    url_with(page, "real-heads.layer=5")


@pytest.mark.browser
def test_token_tap_highlights_rows_everywhere(page, base_url):
    open_ready(page, base_url + CHAPTER)
    d = rh.sentence("minilm", "cat")
    cat = d["tokens"].index("cat")
    page.locator("#real-heads .rh-token", has_text=re.compile("^cat$")).click()
    page.wait_for_selector(f"#real-heads [data-fk='t{cat}'][aria-pressed='true']")
    assert thumb_rows(page) == [cat] * 12
    # enlarge a head: its grid marks the same row, and Enter on a cell picks that row (keyboard too)
    page.locator("#real-heads [data-fk='head-12']").click()
    page.wait_for_selector("#real-heads .rh-big")
    assert page.locator("#real-heads .rh-grid tr.sel th").inner_text() == "cat"
    assert page.locator("#real-heads .rh-looks").inner_text().startswith("“cat” looks most at")
    page.locator(f"#real-heads [data-fk='big-{cat}-0']").focus()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    page.wait_for_selector(f"#real-heads [data-fk='t{cat + 1}'][aria-pressed='true']")
    assert page.evaluate("document.activeElement.dataset.fk") == f"big-{cat + 1}-0"
    assert thumb_rows(page) == [cat + 1] * 12
    # the token row by keyboard
    page.locator(f"#real-heads [data-fk='t{cat + 1}']").focus()
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("Enter")
    page.wait_for_selector(f"#real-heads [data-fk='t{cat}'][aria-pressed='true']")
    assert thumb_rows(page) == [cat] * 12
    # another sentence loads on demand; the model view leads back to one head
    page.locator("#real-heads [data-fk='s-puff']").click()
    page.wait_for_selector("#real-heads .rh-token:text-is('puff')")
    page.locator("#real-heads [data-fk='view-model']").click()
    page.wait_for_selector("#real-heads .rh-mini")
    assert page.locator("#real-heads .rh-mini").count() == 72
    page.locator("#real-heads [data-fk='pick-2-9']").click()
    page.wait_for_selector("#real-heads .rh-big h4:has-text('L2\u00a0H9')")
    assert heads_shown(page) == want_heads("puff", 2)


# ---- the thumbnails in the download --------------------------------------------------------


def _shade(p):
    """The colour class number of a share, by hand: 0 only for exactly nothing, then nine
    equal bands (1 + int(9p), at most 9)."""
    return 0 if p <= 0 else min(9, 1 + int(p * 9))


def _rect_cells(d):
    """A path's rectangles "M x y h w v h h -w z" -> the (row, column) of every cell in them
    (7 units a cell); the path holds nothing else."""
    rects = re.findall(r"M(\d+) (\d+)h(\d+)v(\d+)h-\3z", d)
    assert "".join(f"M{x} {y}h{w}v{h}h-{w}z" for x, y, w, h in rects) == d
    return [
        (int(y) // 7 + a, int(x) // 7 + b)
        for x, y, w, h in rects
        for a in range(int(h) // 7)
        for b in range(int(w) // 7)
    ]


def _thumb_cells(svg):
    """{(row, column): shade} read back from a thumbnail's SVG: the l1 layer beneath covers
    every visible cell, each other class's path lists its rectangles of cells."""
    ns = "{http://www.w3.org/2000/svg}"
    cells = {}
    for path in svg.iter(f"{ns}path"):
        cls = path.get("class")
        if re.fullmatch(r"l\d", cls) and cls != "l1":
            for i, j in _rect_cells(path.get("d")):
                assert (i, j) not in cells  # drawn once
                cells[(i, j)] = int(cls[1:])
    row = svg.find(f"{ns}rect[@class='rowmark']")
    return cells, None if row is None else int(row.get("y")) // 7


def _sheet_cells(svg, n, layers, heads):
    """{(layer, head): (cells, marked row)} read back from the model view's one picture: each
    map sits in a box one cell wider than the map and some cells taller (read from the
    picture's size), row by row; its cells are read as _thumb_cells reads a thumbnail's."""
    ns = "{http://www.w3.org/2000/svg}"
    width, height = (int(v) for v in svg.get("viewBox").split()[2:])
    bw, bh = width // heads, height // layers
    assert bw == (n + 1) * 7 and bh % 7 == 0 and bh > n * 7
    out = {(layer, h): ({}, None) for layer in range(layers) for h in range(heads)}

    def where(x, y):
        (layer, y), (h, x) = divmod(y, bh), divmod(x, bw)
        assert x % 7 == 0 and y % 7 == 0 and x < n * 7 and y < n * 7  # inside a map
        return (layer, h), y // 7, x // 7

    for path in svg.iter(f"{ns}path"):
        cls, d = path.get("class"), path.get("d")
        if cls == "rowmark":
            for x, y in re.findall(r"M(\d+) (\d+)h\d+v7h-\d+z", d):
                at, i, j = where(int(x), int(y))
                assert j == 0 and out[at][1] is None
                out[at] = (out[at][0], i)
        elif re.fullmatch(r"l\d", cls) and cls != "l1":
            for row, column in _rect_cells(d):
                at, i, j = where(7 * column, 7 * row)
                assert (i, j) not in out[at][0]  # drawn once
                out[at][0][(i, j)] = int(cls[1:])
    return out


@pytest.mark.parametrize(
    "state, heads",
    [({"view": "model", "sentence": "scientist", "token": "scientist:4"}, 72), ({}, 12)],
)
def test_the_downloaded_csv_holds_each_heads_row_of_the_chosen_token_and_its_label(state, heads):
    import csv
    import io

    from toymodels.page.download import files

    got = files("toymodels.real_heads.figure:render", state, "real-heads", "Real heads", "x")
    drawn = fig.render(state)
    assert "<table" not in drawn["html"]  # the maps stay one picture on the page
    sid, _, i = drawn["state"]["token"].rpartition(":")
    selected = int(i)
    entry = next(s for s in rh.index()["models"][0]["sentences"] if s["id"] == sid)
    export = json.loads(data.read_text(f"realheads/{entry['file']}"))
    att = np.asarray(export["att"]) / export["scale"]  # (layers, heads, T, T), independently read
    tokens = export["tokens"]
    lines = list(csv.reader(io.StringIO(got["csv"])))
    rows = [dict(zip(lines[3], line, strict=True)) for line in lines[4:]]
    shares = [r for r in rows if r["table"].startswith(f"Where “{tokens[selected]}”")]
    said = [r for r in rows if r["table"].startswith("Each head's label and summary")]
    # the heads the view shows: every head, or the first layer's
    want = [(lay, h) for lay in range(att.shape[0]) for h in range(att.shape[1])][:heads]
    names = [f"L{lay + 1}\u00a0H{h + 1}" for lay, h in want]
    T = len(tokens)
    assert [r["row"] for r in shares] == [n for n in names for _ in range(T)]
    assert [r["column"] for r in shares] == tokens * len(want)
    for k, (lay, h) in enumerate(want):
        got_row = [float(r["value"].rstrip("%")) / 100 for r in shares[k * T : (k + 1) * T]]
        assert np.allclose(got_row, att[lay, h, selected], atol=5e-4 + 1e-9), names[k]
    # each head's label and summary, as the view's buttons and summaries say them
    on_screen = fig.render({**state, "view": "model"})["html"]
    for lay, h in want:
        name = f"L{lay + 1}\u00a0H{h + 1}"
        label = re.search(rf'data-fk="pick-{lay + 1}-{h + 1}" data-label="(\w+)"', on_screen)
        summary = re.search(
            rf'<span class="sr">({name} · [^<]*) Show it enlarged\.</span>', on_screen
        )
        mine = {r["column"]: r for r in said if r["row"] == name}
        assert mine["label"]["text"] == rh.NAMES[label.group(1)]
        assert mine["summary"]["text"] == html.unescape(summary.group(1))
        assert mine["label"]["value"] == mine["summary"]["value"] == ""
    assert len(said) == 2 * len(want)


@pytest.mark.parametrize("state", [{}, {"view": "model"}, {"layer": "3", "token": "cat:2"}])
def test_the_download_carries_every_heads_map_in_the_shades_of_the_screen(state):
    import xml.etree.ElementTree as ET

    from toymodels.page.download import files
    from toymodels.real_heads import figure as rf

    got = files("toymodels.real_heads.figure:render", state, "real-heads", "Real heads", "x")
    drawn = rf.render(state)
    model = rh.index()["models"][0]
    data = rh.sentence(model["id"], drawn["state"]["sentence"])
    selected = int(drawn["state"]["token"].rpartition(":")[2])
    layers = range(model["layers"]) if drawn["state"]["view"] == "model" else [0]
    if "layer" in state:
        layers = [int(state["layer"]) - 1]
    want = [data["att"][layer, h] for layer in layers for h in range(model["heads"])]
    ns = "{http://www.w3.org/2000/svg}"
    thumbs = [
        s for s in ET.fromstring(got["svg"]).iter(f"{ns}svg") if "rh-thumb" in s.get("class", "")
    ]
    T = len(data["tokens"])
    if drawn["state"]["view"] == "model":  # one picture of every map
        assert len(thumbs) == 1 and drawn["html"].count("<svg") == 1
        sheet = _sheet_cells(thumbs[0], T, model["layers"], model["heads"])
        read = [sheet[(layer, h)] for layer in layers for h in range(model["heads"])]
    else:
        assert len(thumbs) == len(want) == drawn["html"].count('class="mh-svg rh-thumb"')
        read = [_thumb_cells(svg) for svg in thumbs]
    for (cells, row), A in zip(read, want, strict=True):
        assert row == selected
        for i in range(T):
            for j in range(T):
                visible = not data["causal"] or j <= i
                shade = _shade(float(A[i, j]))
                if visible and shade != 1:
                    assert cells.pop((i, j)) == shade, (i, j)
        assert cells == {}  # nothing drawn where the map has no cell of that shade
