"""The figure contract (toymodels/page/figure.py), held for every figure module at once: what a
render returns, reader text always escaped, any state from the address bar normalised, and
links with a field's old name opening the same view as its new one."""

import importlib
import math
import re
import sys
import types
from html.parser import HTMLParser
from pathlib import Path

import pytest

from sitebuild.pipeline.chapters import AuthorError
from sitebuild.pipeline.pages import call_figure
from toymodels import BUILD_ONLY
from toymodels.page import figure as contract

ROOT = Path(__file__).resolve().parent.parent


def figure_modules():
    """Every shipped toymodels module that defines render: what a figure block may name."""
    names = []
    for path in sorted((ROOT / "toymodels").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[1] in BUILD_ONLY or parts[-1] == "__init__":
            continue
        name = ".".join(parts)
        if callable(getattr(importlib.import_module(name), "render", None)):
            names.append(name)
    return names


FIGURES = figure_modules()


@pytest.fixture(params=FIGURES)
def figure(request):
    return importlib.import_module(request.param)


def declared(module):
    """The fields a figure declares: its DEFAULTS (a static figure has none)."""
    return dict(getattr(module, "DEFAULTS", {}))


def test_every_figure_the_chapters_name_is_found():
    named = set()
    for path in (ROOT / "chapters").glob("*.md"):
        named |= set(re.findall(r"^model:\s*(toymodels[\w.]+):render\s*$", path.read_text(), re.M))
    assert named and named <= set(FIGURES)
    assert not [name for name in FIGURES if name.split(".")[1] in BUILD_ONLY]


def test_defaults_keep_the_contract(figure):
    for state in ({}, None):
        result = contract.check(figure.render(state, "fig"))
        assert result["error"] is None and isinstance(result["html"], str)
        assert result["state"] == figure.render({}, "fig")["state"]
        assert set(result["state"]) == set(declared(figure))


def test_a_figure_whose_reader_picks_a_word_names_its_word_field(figure):
    """The build draws each word of the default sentence only for a figure that names the field
    in WORD_FIELD (sitebuild/pipeline/figures.py), so every figure with word buttons must name
    it."""
    drawn = figure.render({}, "fig")
    markup = drawn["html"] + "".join(drawn["slots"].values())
    picked = set(re.findall(r'data-key="(word|token|character)"', markup))
    named = getattr(figure, "WORD_FIELD", None)
    assert picked <= {named}, (picked, named)  # word buttons, so WORD_FIELD names their field
    if named:
        assert f'data-key="{named}"' in markup  # and the field it names has buttons


# ---------------------------------------------------------------- reader text is escaped

PAYLOADS = ("<img src=x onerror=alert(1)>", "\"'><script>alert(1)</script>")


class Markup(HTMLParser):
    """The tags and attribute names in a piece of HTML, as a browser would read them."""

    def __init__(self, html):
        super().__init__(convert_charrefs=True)
        self.tags, self.attributes = set(), set()
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attributes |= {name for name, _ in attrs}

    handle_startendtag = handle_starttag


def assert_no_injected_markup(result):
    for html in [result["html"] or "", *result["slots"].values()]:
        assert "<img" not in html and "<script" not in html.lower()
        found = Markup(html)
        assert not found.tags & {"img", "script"}
        assert not [name for name in found.attributes if name.startswith("on")], found.attributes


def hostile_states(module):
    fields = [*declared(module), *getattr(module, "ALIASES", {})]
    for payload in PAYLOADS:
        yield dict.fromkeys(fields, payload)  # every field at once
        yield from ({field: payload} for field in fields)  # one at a time: the rest stay valid
        yield {payload: payload}  # as a field name


def test_reader_text_is_escaped(figure):
    for state in hostile_states(figure):
        result = contract.check(figure.render(state, "fig"))
        assert_no_injected_markup(result)
    for payload in PAYLOADS:  # the figure id, an author's, goes into ids and labels
        assert_no_injected_markup(contract.check(figure.render({}, payload)))


def test_controls_set_only_declared_fields(figure):
    """Every data-key sets, and every form input sends, a field the figure declares (the
    split-attend editor's inputs fold into one field: EDITS)."""
    allowed = set(declared(figure)) | set(getattr(figure, "EDITS", ()))
    result = figure.render({}, "fig")
    for html in [result["html"], *result["slots"].values()]:
        keys = set(re.findall(r'data-key="([^"]*)"', html))
        names = set(re.findall(r'<(?:input|select|textarea)\b[^>]*\bname="([^"]*)"', html))
        assert keys | names <= allowed, (keys | names) - allowed


# ---------------------------------------------------------------- any state is normalised

BIG = "9" * 5000
JUNK_VALUES = (
    12345,
    -1,
    1.5,
    math.nan,
    math.inf,
    True,
    None,
    [1, 2],
    {"a": 1},
    BIG,
    10**5000,  # str() refuses an int this long
    "nan",
    "NaN",
    "-inf",
    "1e309",
    "-0",
    " 3 ",
    "",
    "__proto__",
    "²",
    "٣",
    "1.2.3",
    ",,,",
    "\x00\n\t",
)
JUNK_STATES = (
    None,
    {},
    [],
    [("word", "1")],
    "word=1",
    42,
    {"__proto__": {"polluted": "yes"}, "constructor": "x", "prototype": "y"},
    {"nope": "1", "": "", "x.y": "z"},
    {1: "x", None: "y", (1, 2): "z"},
)


def assert_normalised(module, result):
    contract.check(result)
    assert set(result["state"]) == set(declared(module))
    assert all(isinstance(v, str) for v in result["state"].values())


@pytest.mark.parametrize("state", JUNK_STATES, ids=repr)
def test_junk_states_are_normalised(figure, state):
    assert_normalised(figure, figure.render(state, "fig"))


def test_junk_values_in_every_field_are_normalised(figure):
    fields = [*declared(figure), *getattr(figure, "ALIASES", {})]
    for value in JUNK_VALUES:
        assert_normalised(figure, figure.render(dict.fromkeys(fields, value), "fig"))
        for field in fields:
            assert_normalised(figure, figure.render({field: value}, "fig"))


# ---------------------------------------------------------------- old names, same view

# states that change the view, written with the fields' new names
RENAMED = {
    "toymodels.one_character.figure": [
        {"character": "3", "head": "1.2", "pulled_out": "2.3", "nonsense": "5"},
        {"model": "reference", "text": "the cat sat. the ca"},
        {"drum": "3", "drum_model": "reference-induction"},
    ],
    "toymodels.real_heads.figure": [{"view": "model", "enlarge": "4.11"}],
    "toymodels.split_attend.figure": [
        {"step": "mix", "output_cell": "2,1"},
        {"preset": "custom", "weights": ",".join(["1.5"] * 32)},
    ],
}


def test_every_figure_with_aliases_has_examples():
    with_aliases = {
        name for name in FIGURES if getattr(importlib.import_module(name), "ALIASES", None)
    }
    assert with_aliases == set(RENAMED)


def test_aliases_name_declared_fields(figure):
    aliases = getattr(figure, "ALIASES", {})
    assert set(aliases.values()) <= set(declared(figure))
    assert not set(aliases) & set(declared(figure))


@pytest.mark.parametrize(
    "name, state", [(name, state) for name, states in RENAMED.items() for state in states]
)
def test_old_field_names_give_the_same_view(name, state):
    module = importlib.import_module(name)
    old = {new: old for old, new in module.ALIASES.items()}
    new_view = module.render(state, "fig")
    start = module.render({}, "fig")
    assert new_view != start  # the example does change the view
    link = {old.get(k, k): v for k, v in state.items()}
    assert module.render(link, "fig") == new_view
    # as the page sends a link's fields: on top of its starting state, written with new names
    assert module.render({**start["state"], **link}, "fig") == new_view


# ---------------------------------------------------------------- the contract itself


def test_merge():
    defaults = {"word": "3", "view": "softmax"}
    assert contract.merge(defaults, None) == defaults
    assert contract.merge(defaults, {"word": 5, "x": "1"}) == {"word": "5", "view": "softmax"}
    assert contract.merge(defaults, {"w": "4"}, {"w": "word"})["word"] == "4"
    assert contract.merge(defaults, {"w": "4", "word": "5"}, {"w": "word"})["word"] == "4"
    assert contract.merge(defaults, {"word": None, "view": 10**5000}) == defaults
    assert contract.merge(defaults, {"word": " 7 "}, strip=True)["word"] == "7"
    assert list(contract.merge(defaults, {"view": "x", "word": "y"})) == ["word", "view"]
    assert contract.merge(defaults, ["word", "view"]) == defaults


def test_merge_puts_back_the_default_of_a_value_outside_its_choices():
    """CHOICES are compared as written: a slider's field listed as the slider writes it ("12.0",
    kit.number_text) is kept, and another spelling of the number is not one of them."""
    defaults = {"view": "softmax", "strength": "4.0", "layer": "", "word": "3"}
    choices = {"view": ("scores", "softmax"), "strength": ("4.0", "12.0"), "layer": ("1", "2")}
    given = {"view": "scores", "strength": "12.0", "layer": "2", "word": "9"}
    assert contract.merge(defaults, given, choices=choices) == given
    assert contract.merge(defaults, {"strength": 12.0}, choices=choices)["strength"] == "12.0"
    for strength in ("12", "12.00", "12.0 ", "twelve", "", None, 10**5000):
        merged = contract.merge(defaults, {"strength": strength}, choices=choices)
        assert merged["strength"] == "4.0", strength
    assert contract.merge(defaults, {"strength": " 12.0 "}, choices=choices, strip=True) == {
        **defaults,
        "strength": "12.0",
    }
    wrong = {"view": "Scores", "layer": "3", "word": "nine"}  # word has no choices: kept
    assert contract.merge(defaults, wrong, choices=choices) == {**defaults, "word": "nine"}
    renamed = {"v": "view"}
    assert contract.merge(defaults, {"v": "scores"}, renamed, choices=choices)["view"] == "scores"
    assert contract.merge(defaults, {"v": "mask"}, renamed, choices=choices)["view"] == "softmax"
    assert contract.merge(defaults, {"view": "mask"})["view"] == "mask"  # no choices, no clamp


NORMALISERS = [
    name for name in FIGURES if callable(getattr(importlib.import_module(name), "normalise", None))
]


def test_the_figures_that_read_their_state_once_are_found():
    assert len(NORMALISERS) >= 10, NORMALISERS


@pytest.mark.parametrize("name", NORMALISERS)
def test_every_normalise_returns_one_shape(name):
    """A Normalised: the checked state (every declared field, a string), an error that is None
    or the reader's message, which render then gives, and what was found, by name."""
    module = importlib.import_module(name)
    fields = declared(module)
    for state in (*JUNK_STATES, dict.fromkeys(fields, ""), dict.fromkeys(fields, "x")):
        read = module.normalise(state)
        assert isinstance(read, contract.Normalised), type(read)
        assert set(read.state) == set(fields)
        assert all(isinstance(v, str) for v in read.state.values())
        assert read.error is None or (isinstance(read.error, str) and read.error)
        assert module.render(state, "fig")["error"] == read.error, state


def test_result_and_failure_keep_the_contract():
    drew = contract.result("<p>hi</p>", {"word": "1"}, slots={"row": "<p/>"}, summary="Hi.")
    assert contract.check(drew) == {
        "html": "<p>hi</p>",
        "slots": {"row": "<p/>"},
        "state": {"word": "1"},
        "error": None,
        "summary": "Hi.",
    }
    failed = contract.check(contract.failure({"word": "1"}, "Type a word."))
    assert failed["html"] is None and failed["error"] == "Type a word."


GOOD = {"html": "<p/>", "slots": {}, "state": {}, "error": None, "summary": "A paragraph."}


@pytest.mark.parametrize(
    "answer, why",
    [
        ("<p/>", "a str, not a dict"),
        ({"html": "<p/>"}, "missing slots, state, error, summary"),
        ({**GOOD, "extra": 1}, "unexpected extra"),
        ({**GOOD, "html": None}, "html that is not a str"),
        ({**GOOD, "html": b"<p/>"}, "html that is not a str"),
        ({**GOOD, "slots": {"row": None}}, "slots that are not a dict of str"),
        ({**GOOD, "slots": [("row", "<p/>")]}, "slots that are not a dict of str"),
        ({**GOOD, "state": {"word": 3}}, "a state that is not a dict of str fields to str values"),
        ({**GOOD, "summary": None}, "a summary that is not a str"),
        ({**GOOD, "summary": ""}, "an empty summary (what screen readers hear"),
        ({**GOOD, "summary": " \n"}, "an empty summary (what screen readers hear"),
        ({**GOOD, "error": ""}, "an error that is neither None nor a message"),
    ],
)
def test_check_says_what_is_wrong(answer, why):
    contract.check(GOOD)
    with pytest.raises(ValueError, match=re.escape(why)):
        contract.check(answer)


def test_the_build_stops_on_a_figure_that_breaks_the_contract(monkeypatch):
    module = types.ModuleType("toymodels.broken_figure")
    module.render = lambda state, fid: {"html": "<p/>", "state": {"word": 3}}
    monkeypatch.setitem(sys.modules, module.__name__, module)
    with pytest.raises(AuthorError) as caught:
        call_figure("chapters/a.md", 13, "toymodels.broken_figure:render", "fig", {}, ROOT)
    assert str(caught.value) == (
        "chapters/a.md:13: figure 'toymodels.broken_figure:render' returned a dict whose keys "
        "are not html, slots, state, error, summary (missing slots, error, summary), given the "
        "state {} (from the chapter); a figure returns toymodels.page.figure.result(html, state, "
        "slots=..., summary=...) or failure(state, error)"
    )
    module.render = lambda state, fid: contract.result("<p/>", {"word": 3})
    with pytest.raises(AuthorError, match=r"^chapters/a\.md:13: .* returned a state that is not"):
        call_figure("chapters/a.md", 13, "toymodels.broken_figure:render", "fig", {}, ROOT)
