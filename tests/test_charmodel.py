"""The character model (toymodels/models/charmodel/model.py), its trainer, corpus reader and
evaluation (toymodels/training/)."""

import gzip
import json
import re
import shutil

import numpy as np
import pytest

from toymodels.models.charmodel import model as cm
from toymodels.one_character import lab
from toymodels.training import corpus, evaluate, train

SHIP = train.SHIP
REF_TEXT = "it is a truth universally acknowledged, that a single man in possession"


@pytest.fixture(scope="module")
def ref_params():
    return train.init_params(cm.REFERENCE, seed=3)


@pytest.fixture(scope="module")
def novels_dir():
    return corpus.fetch()  # idempotent: fetches r-cran-janeaustenr into the cache on first use


def tiny_args(tmp_path, *extra):
    return train.parser().parse_args(
        [
            "--run",
            "tiny",
            "--ship-dir",
            str(tmp_path / "ship"),
            "--state-dir",
            str(tmp_path / "state"),
            "--no-progress",
            "--eval-every",
            "0",
            *extra,
        ]
    )


# ---------------------------------------------------------------- the model


def test_parameter_count_from_saved_weights():
    params, cfg, meta = cm.load(
        "reference"
    )  # the shipped last checkpoint, through toymodels.page.data
    assert cm.n_params(params) == 27_166
    assert cfg == cm.REFERENCE
    assert {n: p.shape for n, p in params.items()} == cm.param_shapes(cfg)
    assert meta["step"] == json.loads((SHIP / "reference/manifest.json").read_text())["steps"][-1]


def test_param_shapes_add_up():
    assert sum(int(np.prod(s)) for s in cm.param_shapes(cm.REFERENCE).values()) == 27_166


def test_vocabulary_round_trip():
    assert len(cm.VOCAB) == 30 and len(set(cm.VOCAB)) == 30
    assert cm.decode(cm.encode(REF_TEXT)) == REF_TEXT
    with pytest.raises(ValueError, match="'Q'"):
        cm.encode("Quite")


def test_shapes_of_every_intermediate(ref_params):
    x = cm.encode(REF_TEXT[:20])
    logits, c = cm.forward(ref_params, cm.REFERENCE, x, keep=True)
    T = 20
    assert logits.shape == (T, 30)
    for layer in range(2):
        assert c[f"h{layer}.att"].shape == (4, T, T)
        for n in "qkv":
            assert c[f"h{layer}.{n}"].shape == (4, T, 8)
        assert c[f"h{layer}.head_out"].shape == (4, T, 32)
        for n in ("resid_pre", "resid_mid", "resid_post"):
            assert c[f"h{layer}.{n}"].shape == (T, 32)
        assert c[f"h{layer}.pre"].shape == c[f"h{layer}.act"].shape == (T, 128)
        np.testing.assert_allclose(c[f"h{layer}.att"].sum(-1), 1, rtol=1e-5)
        # the residual stream after attention is the one before plus the heads' outputs
        np.testing.assert_allclose(
            c[f"h{layer}.resid_pre"] + c[f"h{layer}.head_out"].sum(0),
            c[f"h{layer}.resid_mid"],
            rtol=1e-4,
            atol=1e-4,
        )
    batch, _ = cm.forward(ref_params, cm.REFERENCE, np.stack([x, x[::-1]]))
    assert batch.shape == (2, T, 30)
    np.testing.assert_allclose(batch[0], logits, rtol=1e-5, atol=1e-5)


def test_causal_mask(ref_params):
    x = cm.encode(REF_TEXT[:40])
    base, c = cm.forward(ref_params, cm.REFERENCE, x, keep=True)
    assert np.all(np.triu(c["h0.att"][0], 1) == 0)
    for t in (5, 17, 39):
        y = x.copy()
        y[t] = (y[t] + 7) % 30
        changed, _ = cm.forward(ref_params, cm.REFERENCE, y)
        assert np.array_equal(changed[:t], base[:t])  # exactly: no earlier prediction moves
        assert not np.allclose(changed[t], base[t])


def test_ablation_silences_one_head(ref_params):
    x = cm.encode(REF_TEXT[:30])
    base, _ = cm.forward(ref_params, cm.REFERENCE, x)
    cut, c = cm.forward(ref_params, cm.REFERENCE, x, ablate=[(1, 2)], keep=True)
    assert np.all(c["h1.head_out"][2] == 0) and np.any(c["h1.head_out"][1] != 0)
    assert np.array_equal(
        c["h0.att"], cm.forward(ref_params, cm.REFERENCE, x, keep=True)[1]["h0.att"]
    )
    assert not np.allclose(cut, base)


def test_position_code_is_the_2017_sinusoid():
    pe = cm.position_code(10, 32)
    assert pe[3, 0] == pytest.approx(np.sin(3)) and pe[3, 1] == pytest.approx(np.cos(3))
    assert pe[7, 2] == pytest.approx(np.sin(7 / 10000 ** (2 / 32)))


def test_checkpoint_round_trip_in_float16(ref_params, tmp_path):
    cm.save_checkpoint(tmp_path / "c.npz", ref_params, cm.REFERENCE, 42)
    params, cfg, meta = cm.load_npz((tmp_path / "c.npz").read_bytes())
    assert meta["step"] == 42 and cfg == cm.REFERENCE
    for n, p in ref_params.items():
        np.testing.assert_allclose(params[n], p, rtol=1e-3, atol=1e-4)


def test_shipped_checkpoints_are_float16_and_small():
    files = [p for p in SHIP.rglob("*.npz")]
    assert files
    assert sum(p.stat().st_size for p in files) < 20_000_000
    with np.load(files[0]) as z:
        assert all(z[n].dtype == np.float16 for n in z.files if n != "__meta__")


# ---------------------------------------------------------------- the backward pass


@pytest.mark.parametrize(
    "cfg", [cm.REFERENCE, dict(cm.REFERENCE, d_model=12, n_head=3, d_head=5, d_mlp=20)]
)
def test_gradients_match_finite_differences(cfg):
    params = train.init_params(cfg, seed=1, emb_std=1.0, std=0.3, dtype=np.float64)
    rng = np.random.default_rng(0)
    idx, tgt = rng.integers(0, 30, (2, 7)), rng.integers(0, 30, (2, 7))
    _, grads = train.loss_and_grads(params, cfg, idx, tgt)
    kinds = {}
    for name in params:  # every parameter kind, in every layer
        for _ in range(2):
            i = tuple(int(rng.integers(0, s)) for s in params[name].shape)
            if name == "wte":
                i = (int(idx[0, 0]),) + i[1:]
            old, eps = params[name][i], 1e-6
            params[name][i] = old + eps
            up, _ = train.loss_and_grads(params, cfg, idx, tgt, need_grads=False)
            params[name][i] = old - eps
            down, _ = train.loss_and_grads(params, cfg, idx, tgt, need_grads=False)
            params[name][i] = old
            numeric = (up - down) / (2 * eps)
            assert grads[name][i] == pytest.approx(numeric, rel=1e-4, abs=1e-8), name
            kinds[re.sub(r"^h\d+\.", "", name)] = True
    assert set(kinds) == {
        "wte",
        "ln1.g",
        "ln1.b",
        "wq",
        "wk",
        "wv",
        "wo",
        "ln2.g",
        "ln2.b",
        "w1",
        "b1",
        "w2",
        "b2",
        "lnf.g",
        "lnf.b",
        "head.w",
        "head.b",
    }


# ---------------------------------------------------------------- the corpus


def test_corpus_reader_on_the_real_package(novels_dir):
    novels = corpus.read_novels(novels_dir)
    assert list(novels) == [
        "Sense & Sensibility",
        "Pride & Prejudice",
        "Mansfield Park",
        "Emma",
        "Northanger Abbey",
        "Persuasion",
    ]
    assert {t: len(lines) for t, lines in novels.items()} == {
        "Sense & Sensibility": 12624,
        "Pride & Prejudice": 13030,
        "Mansfield Park": 15349,
        "Emma": 16235,
        "Northanger Abbey": 7856,
        "Persuasion": 8328,
    }
    assert novels["Emma"][14].startswith("Emma Woodhouse, handsome, clever, and rich")
    texts = {t: corpus.normalise("\n".join(lines)) for t, lines in novels.items()}
    assert {t: len(s) for t, s in texts.items()} == {
        "Sense & Sensibility": 663_399,
        "Pride & Prejudice": 677_232,
        "Mansfield Park": 875_978,
        "Emma": 871_650,
        "Northanger Abbey": 429_409,
        "Persuasion": 461_240,
    }
    assert (
        "it is a truth universally acknowledged, that a single man in possession"
        in texts["Pride & Prejudice"]
    )
    tr, va = corpus.split(texts)
    assert set(tr + va) <= set(cm.VOCAB)
    assert 0.045 < len(va) / (len(tr) + len(va)) < 0.055


def test_normalisation_rules():
    assert (
        corpus.normalise("“Oh!” said she—“Why; I’m _sure_ of it: 1811.”\n\n  Café")
        == "oh. said she why, i'm sure of it,. cafe"
    )


def test_missing_corpus_is_a_clear_error(tmp_path):
    with pytest.raises(corpus.CorpusError, match="missing.*python -m toymodels.training.corpus"):
        corpus.read_novels(tmp_path)


def test_damaged_corpus_is_a_clear_error(novels_dir, tmp_path):
    for f in ("Rdata.rdb", "Rdata.rdx"):
        shutil.copy(novels_dir / f, tmp_path / f)
    (tmp_path / "Rdata.rdx").write_bytes(b"not gzip at all")
    with pytest.raises(corpus.CorpusError, match="Rdata.rdx is damaged"):
        corpus.read_novels(tmp_path)
    (tmp_path / "Rdata.rdx").write_bytes(gzip.compress(b"X\nnot R"))
    with pytest.raises(corpus.CorpusError, match="Rdata.rdx is damaged"):
        corpus.read_novels(tmp_path)
    shutil.copy(novels_dir / "Rdata.rdx", tmp_path / "Rdata.rdx")
    blob = (novels_dir / "Rdata.rdb").read_bytes()
    (tmp_path / "Rdata.rdb").write_bytes(blob[: len(blob) // 2])
    with pytest.raises(corpus.CorpusError, match="Rdata.rdb is damaged"):
        corpus.read_novels(tmp_path)
    (tmp_path / "Rdata.rdb").write_bytes(blob[:100] + bytes(200) + blob[300:])
    with pytest.raises(corpus.CorpusError, match="Rdata.rdb is damaged"):
        corpus.read_novels(tmp_path)


# ---------------------------------------------------------------- training and evaluation


@pytest.fixture(scope="module")
def split(novels_dir):
    return corpus.load_split(novels_dir)


def test_short_training_lowers_the_loss(split, tmp_path):
    tr, va = split
    a = tiny_args(
        tmp_path,
        "--steps",
        "40",
        "--batch",
        "16",
        "--ctx",
        "32",
        "--lr",
        "1e-2",
        "--warmup",
        "5",
        "--ckpt-every",
        "20",
    )
    start = train.init_params(train.config_of(a), a.seed, a.emb_std, a.init_std)
    params = train.train(a, tr, va, log=lambda *_: None)
    x, y = train.get_batch(va, 0, 99, 32, 32)
    before, _ = train.loss_and_grads(start, train.config_of(a), x, y, need_grads=False)
    after, _ = train.loss_and_grads(params, train.config_of(a), x, y, need_grads=False)
    assert after < before - 0.5
    manifest = json.loads((tmp_path / "ship" / "tiny" / "manifest.json").read_text())
    assert manifest["steps"] == [0, 20, 40] and manifest["n_params"] == 27_166


def test_training_is_seeded_and_resumable(split, tmp_path):
    tr, _ = split
    common = [
        "--batch",
        "4",
        "--ctx",
        "16",
        "--steps",
        "12",
        "--state-every",
        "6",
        "--d-model",
        "16",
        "--d-head",
        "4",
        "--repeat-share",
        "0.3",
        "--nonsense-share",
        "0.3",
    ]
    whole = train.train(tiny_args(tmp_path / "a", *common), tr, None, log=lambda *_: None)
    train.train(tiny_args(tmp_path / "b", *common, "--stop-at", "7"), tr, None, log=lambda *_: None)
    resumed = train.train(tiny_args(tmp_path / "b", *common), tr, None, log=lambda *_: None)
    for n in whole:
        np.testing.assert_array_equal(whole[n], resumed[n])


def test_batches_hold_the_documented_repeats(split):
    tr, _ = split
    x, y = train.get_batch(tr, 5, 0, 64, 64, nonsense_share=1.0)
    assert np.array_equal(x[:, 1:], y[:, :-1])
    period = [next(p for p in range(8, 33) if np.array_equal(r[p:], r[:-p])) for r in x]
    assert min(period) >= 8 and max(period) <= 32 and len(set(period)) > 5


def test_copy_set_is_repeated_nonsense():
    x, ps = evaluate.copy_set(200)
    assert x.shape == (200, 64) and ps.min() >= 16 and ps.max() <= 32
    for row, p in zip(x, ps, strict=True):
        assert np.array_equal(row[p:], row[:-p])


def test_evaluation_on_a_tiny_model(split, tmp_path):
    tr, va = split
    a = tiny_args(
        tmp_path,
        "--steps",
        "10",
        "--batch",
        "8",
        "--ctx",
        "32",
        "--d-model",
        "16",
        "--d-head",
        "4",
        "--n-head",
        "2",
        "--ckpt-every",
        "5",
    )
    train.train(a, tr, va, log=lambda *_: None)
    out = evaluate.evaluate_run("tiny", va[:20000], tmp_path / "ship", log=lambda *_: None)
    assert [r["step"] for r in out["checkpoints"]] == [0, 5, 10]
    first, last = out["checkpoints"][0], out["checkpoints"][-1]
    assert last["valid_bits"] < first["valid_bits"] and first["valid_bits"] > np.log2(30) - 0.5
    assert 0 <= last["copying"] <= 1 and np.array(last["induction"]).shape == (2, 2)
    assert [(h["layer"], h["head"]) for h in last["habits"]] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    for h in last["habits"]:
        assert 0 <= h["previous"] + h["two_back"] + h["itself"] <= 1
    assert set(out["ablation"]) == {"none", "L1H1", "L1H2", "L2H1", "L2H2", "layer1", "layer2"}
    assert out["n_params"] == cm.n_params(train.init_params(train.config_of(a)))


def test_copying_score_of_a_perfect_copier():
    """An oracle that always predicts the character one period back scores 100%."""
    x, ps = evaluate.copy_set(20)
    right = sum((x[i, p + 1 :] == x[i, 1 : 64 - p]).all() for i, p in enumerate(ps))
    assert right == 20


def test_shipped_evaluation_matches_the_checkpoints():
    ev = json.loads((SHIP / "evaluation.json").read_text())
    folders = {p.parent.name for p in SHIP.glob("*/manifest.json")}
    assert set(ev["runs"]) == folders
    for run, r in ev["runs"].items():
        manifest = json.loads((SHIP / run / "manifest.json").read_text())
        # the page reads these from the evaluation, not from each run's manifest
        assert [c["step"] for c in r["checkpoints"]] == manifest["steps"] == lab.steps(run)
        assert (r["recipe"], r["config"]) == (manifest["recipe"], manifest["config"])
    assert ev["runs"]["reference"]["n_params"] == 27_166


def test_shipped_models_tell_the_story():
    """The reference run never learned to copy; the runs with repeats did, through their
    induction heads."""
    ref, ref_cfg, _ = cm.load("reference")
    ind, ind_cfg, _ = cm.load("induction")
    rep, rep_cfg, _ = cm.load("reference-repeats")
    assert cm.n_params(rep) == 27_166 and rep_cfg == cm.REFERENCE
    assert evaluate.copying(ref, ref_cfg, n=40) < 0.1
    assert evaluate.copying(rep, rep_cfg, n=40) > 0.85
    assert evaluate.copying(rep, rep_cfg, n=40, ablate=[(1, 0)]) < 0.3  # its induction head, L2H1
    before, cfg, _ = cm.load("reference-induction", 800)  # the sudden change at the reference size
    after, _, _ = cm.load("reference-induction", 1300)
    assert evaluate.copying(before, cfg, n=40) < 0.3 < 0.8 < evaluate.copying(after, cfg, n=40)
    assert evaluate.copying(ind, ind_cfg, n=40) > 0.9
    assert evaluate.copying(ind, ind_cfg, n=40, ablate=[(1, 3)]) < 0.6
    text = "the same thing again and the same thing again"
    assert (
        cm.predict(ind, ind_cfg, text)[27:-1] == text[28:]
    )  # the second copy, after its first letter
