"""Chapter "Heads that copy": its values against computations made here from the export's own
files (the .npz maps and index.json, read without toymodels' reader), its four figures over
their states, and the page in Chromium: a token lights its row in every head, the sink switch
changes the shares shown, pulling heads out gives the stored run's accuracy, keys work."""

import io
import json
import re
import time
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest
from conftest import open_ready, url_with
from support import tinygguf

from toymodels.heads_that_copy import copying, gqa
from toymodels.heads_that_copy import figure as layer_fig
from toymodels.heads_that_copy import heads as hc
from toymodels.heads_that_copy import map as map_fig
from toymodels.heads_that_copy import values as v
from toymodels.models import ownfile
from toymodels.page import data, download, kit
from toymodels.page.figure import check
from toymodels.page.html import count_words, head_name

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "toymodels" / "data" / "smollm2"
CHAPTER = "heads-that-copy.html"
FIGURES = (layer_fig, map_fig, copying, gqa)


# ---- the export, read by hand -------------------------------------------------------------------


def raw_index():
    return json.loads((DATA / "index.json").read_text(encoding="utf-8"))


def raw_maps(tid):
    """(layers, heads, T, T) from the .npz, unpacked here row by row (thousandths, stored as
    their low bytes then their high bytes)."""
    entry = next(t for t in raw_index()["texts"] if t["id"] == tid)
    with np.load(io.BytesIO((DATA / entry["file"]).read_bytes())) as z:
        low, high = z["att"].astype(float)
        tri = (low + 256 * high) / raw_index()["scale"]
    T = len(entry["ids"])
    out = np.zeros(tri.shape[:2] + (T, T))
    k = 0
    for i in range(T):
        out[:, :, i, : i + 1] = tri[:, :, k : k + i + 1]
        k += i + 1
    return out


def test_hiding_the_first_token_shares_each_row_out_again():
    att = raw_maps("cat")
    shown = layer_fig.maps(hc.text("cat"), 13, hide=True)
    assert shown.shape == (9, 10, 10)
    for h in range(9):
        for i in range(1, 11):
            row = att[13, h, i, 1 : i + 1]
            if row.sum() == 0:
                assert not shown[h, i - 1].any()
                continue
            assert shown[h, i - 1].sum() == pytest.approx(1)
            assert shown[h, i - 1, :i] == pytest.approx(row / row.sum())
    # a row that gave everything to the first token has nothing left, and stays 0
    assert not hc.hide_first(np.array([[1.0, 0], [1.0, 0]])).any()


def test_the_map_finds_the_strongest_induction_head_by_hand():
    runs = [t for t in raw_index()["texts"] if "period" in t]
    scores = []
    for run in runs:
        att, P, s = raw_maps(run["id"]), run["period"], run["start"]
        rows = range(s + P, s + 2 * P)  # the second copy, after the first token
        scores.append(np.mean([att[:, :, i, i - P + 1] for i in rows], axis=0))
    score = np.mean(scores, axis=0)
    layer, head = np.unravel_index(int(np.argmax(score)), score.shape)
    name = head_name(layer + 1, head + 1)
    assert v.top_induction_head() == name
    assert v.top_induction_score() == f"{100 * score[layer, head]:.0f}%"
    r = check(map_fig.render({}))
    assert r["state"]["head"] == f"L{layer + 1}H{head + 1}"
    star = re.findall(r'<td class="l\d top[^"]*"[^>]*data-value="([^"]+)"', r["html"])
    assert star == [f"L{layer + 1}H{head + 1}"]
    assert f"the strongest is {name}" in r["summary"]
    # every score's strongest head is the independent argmax too
    for measure in ("previous", "sink"):
        ranked = hc.ranked(hc.scores()[measure], 1)[0]
        assert ranked == np.unravel_index(int(np.argmax(hc.scores()[measure])), (30, 9))


def test_a_figure_reads_only_the_maps_it_draws(monkeypatch):
    """A state fetches the maps of the text it draws and no other (in the browser each is a
    request): the measures come stored with index.json, the copying runs need no maps."""
    read = []
    real = data.read_bytes
    monkeypatch.setattr(data, "read_bytes", lambda rel: read.append(rel) or real(rel))
    index = ["smollm2/index.json"]
    for figure, state, files in [
        (copying, {}, index),
        (copying, {"text": "repeat4", "out": "i11111"}, index),
        (gqa, {}, index + ["smollm2/repeat1.npz"]),
        (map_fig, {}, index + ["smollm2/repeat1.npz"]),
        (layer_fig, {"text": "elinor", "layer": "14"}, index + ["smollm2/elinor.npz"]),
    ]:
        hc._cache.clear()
        read.clear()
        assert check(figure.render(state))["error"] is None
        assert read == files, (figure.__name__, state)
    hc._cache.clear()
    every = hc.scores_of([hc.text(t["id"]) for t in hc.texts()])
    stored = hc.scores()
    assert sorted(stored) == sorted(every)
    for measure, values in every.items():
        assert np.allclose(stored[measure], values, rtol=0, atol=1e-12), measure


def test_sink_numbers_by_hand():
    texts = raw_index()["texts"]
    sink = np.mean([raw_maps(t["id"])[..., 2:, 0].mean(-1) for t in texts], axis=0)
    assert v.sink_mean() == f"{100 * sink.mean():.0f}%"
    assert v.n_sinky_layers() == str(int((sink.mean(-1) >= v.SINKY).sum()))


def count_right(cond, runs):
    right = total = 0
    for run in runs:
        P, ids, top1 = run["period"], run["ids"], cond["top1"][run["id"]]
        for i in range(run["start"] + P, run["start"] + 2 * P - 1):
            right += top1[i] == ids[i + 1]
            total += 1
    return right, total


def test_copying_accuracy_is_the_stored_guesses_counted():
    index = raw_index()
    runs = [t for t in index["texts"] if "period" in t]
    conds = {c["id"]: c for c in index["copying"]["conditions"]}
    for cid, cond in conds.items():
        right, total = count_right(cond, runs)
        assert hc.accuracy(cond["heads"]) == (right, total), cid
        r = check(copying.render({"out": cid}))
        assert f"<strong>{right} of {total}</strong>" in r["html"], cid
        assert f"right {right} of {total} times" in r["summary"]
    assert v.copy_none() == "{} of {}".format(*count_right(conds["none"], runs))
    assert v.copy_without_control() == "{} of {}".format(*count_right(conds["control"], runs))
    top = hc.condition([tuple(index["copying"]["induction_heads"][0])])
    assert v.copy_without_top() == "{} of {}".format(*count_right(top, runs))
    # one run at a time: the mean and the range the chapter quotes
    per = [count_right(conds["none"], [run])[0] for run in runs]
    total = count_right(conds["none"], runs[:1])[1]
    assert len(runs) >= 10
    assert v.copy_none_per_run() == (
        f"{np.mean(per):.1f} of {total} a run, from {min(per)} to {max(per)}"
    )


def test_the_plain_text_control_values_read_the_stored_losses():
    plain = raw_index()["copying"]["plain"]
    ind = hc.condition(raw_index()["copying"]["induction_heads"])["id"]
    loss = {c: {t: n / 1000 for t, n in d.items()} for c, d in plain["loss"].items()}
    assert v.plain_loss_none() == f"{np.mean(list(loss['none'].values())):.2f}"
    assert v.plain_loss_previous() == f"{np.mean(list(loss['previous'].values())):.2f}"
    assert v.plain_loss_induction() == f"{np.mean(list(loss[ind].values())):.2f}"
    assert v.glass_loss_previous() == f"{loss['previous']['glass']:.2f}"
    assert v.elinor_loss_induction() == f"{loss[ind]['elinor']:.2f}"


def test_the_random_heads_cost_what_the_stored_runs_say():
    index = raw_index()
    runs = [t for t in index["texts"] if "period" in t]
    conds = index["copying"]["conditions"]
    ind = sorted(map(tuple, index["copying"]["induction_heads"]))
    induction = next(c for c in conds if sorted(map(tuple, c["heads"])) == ind)
    right = {c["id"]: count_right(c, runs)[0] for c in conds}
    lost = right["none"] - right["control"]
    assert 0 < lost < right["none"] - right[induction["id"]]
    assert v.control_lost() == f"{lost} of {right['none']}"
    assert v.induction_lost() == str(right["none"] - right[induction["id"]])
    # on the curated texts the random heads cost more than the induction heads, as rounded
    loss = index["copying"]["plain"]["loss"]
    control, induction_loss = (
        round(np.mean(list(loss[c].values())) / 1000, 2) for c in ("control", induction["id"])
    )
    assert control > induction_loss
    assert v.control_against_induction_plain() == "more than"
    # the texts that open with the runs' first token, counted from the export's ids
    curated = [t for t in index["texts"] if "period" not in t]
    n = sum(t["ids"][0] == runs[0]["ids"][0] for t in curated)
    assert 0 < n < len(curated)
    assert v.texts_opening_first() == f"{count_words(n)} of the {count_words(len(curated))}"


def test_the_opened_head_says_how_many_random_tokens_are_said_twice():
    run = next(t for t in raw_index()["texts"] if "period" in t)
    P = run["period"]
    assert len(run["ids"]) == run["start"] + 2 * P  # the first token, then P tokens twice
    html = check(map_fig.render({}))["html"]
    assert f"On “The” and {P} random tokens said twice (seed {run['seed']})" in html
    assert f"on {P} random tokens said twice: an induction head lights a stripe {P - 1}" in html
    assert f" {2 * P} random tokens" not in html


def test_the_chapter_says_what_the_random_heads_cost(site):
    text = re.sub(r"<[^>]+>", "", (site / CHAPTER).read_text(encoding="utf-8"))
    text = " ".join(text.split())
    assert "as it was" not in text and "people preferred" not in text
    lost, kept = v.control_lost(), v.copy_without_control()
    assert f"costs copying {lost} right guesses, the induction heads {v.induction_lost()}." in text
    assert f"random heads cost it {lost} right guesses" in text  # the recap
    assert f"cost {lost} right guesses, against {v.induction_lost()} for the induction" in text
    assert f"the model is still right {kept} times" in text
    assert (
        f"cost the plain texts {v.control_against_induction_plain()} the induction heads do "
        f"({v.plain_loss_control()} against {v.plain_loss_induction()} nats)" in text
    )
    assert f"a plain “The” in {v.texts_opening_first()} texts here" in text


def test_the_induction_switches_toggle_stored_runs():
    ind = copying.induction_heads()
    none = hc.condition([])
    assert copying.toggled(none, ind[0]) == hc.condition([ind[0]])["id"]
    one = hc.condition([ind[0]])
    assert copying.toggled(one, ind[0]) == "none"
    both = copying.toggled(one, ind[3])
    assert sorted(tuple(h) for h in hc.condition([ind[0], ind[3]])["heads"]) == sorted(
        tuple(h) for h in next(c for c in hc.conditions() if c["id"] == both)["heads"]
    )
    # from a run of other heads, a switch starts from nothing pulled out
    assert (
        copying.toggled(hc.condition(hc.index()["copying"]["control_heads"]), ind[1])
        == (hc.condition([ind[1]])["id"])
    )


def test_grouped_query_heads_share_by_h_over_3():
    assert [hc.kv_head(h) for h in range(9)] == [h // 3 for h in range(9)]
    for h in range(9):
        assert hc.siblings(h) == [3 * (h // 3) + k for k in range(3)]
    r = check(layer_fig.render({"layer": "19"}))
    groups = re.findall(r'<section class="hc-group".*?</section>', r["html"], re.S)
    assert len(groups) == 3
    for g, html in enumerate(groups):
        assert re.findall(r'data-head="(\d)"', html) == [str(3 * g + k + 1) for k in range(3)]
    r = check(gqa.render({"head": "8", "layer": "19"}))
    assert r["summary"].startswith("L19\u00a0H8 shares its keys and values with L19\u00a0H7 and")
    # the whole diagram (nine query heads, three key/value heads), and for a narrow screen the
    # chosen head's group alone, which a download leaves out
    whole, group = re.findall(r"<svg[^>]*hc-gqa.*?</svg>", r["html"], re.S)
    assert "mh-wide-only" in whole and "mh-narrow-only" in group
    assert whole.count('class="q on"') == 3 and whole.count('class="kv on"') == 1
    assert whole.count('class="q"') == 6 and whole.count('class="kv"') == 2
    assert re.findall(r">(H\d|K, V \d)</text>", group) == ["H7", "H8", "H9", "K, V 3"]
    assert group.count(" on") == 7  # three wires, three query heads, one key/value head
    assert 'width="156"' in group  # three boxes of 44 px and their gaps: on a phone's screen
    model = "toymodels.heads_that_copy.gqa:render"
    svg = download.files(model, {"head": "8", "layer": "19"}, "copy-gqa", "Figure 3", "x")["svg"]
    assert svg.count(">K, V ") == 3 and svg.count(">H7<") == 1


def test_the_ten_runs_of_random_tokens_are_one_text_button_and_a_row_of_seeds():
    def pressed(html, cls):
        group = re.search(f'<div class="mh-pick {cls}".*?</div>', html, re.S)
        if not group:
            return None
        found = re.findall(r'data-value="([^"]+)"[^>]*aria-pressed="(\w+)"', group[0])
        return [v for v, on in found if on == "true"], [v for v, _ in found]

    html = layer_fig.render({"text": "cat"})["html"]
    on, values = pressed(html, "hc-texts")
    assert on == ["cat"] and values[0] == "own" and values[-1] == "repeat1" and len(values) == 8
    assert pressed(html, "hc-seed") is None
    html = layer_fig.render({"text": "repeat7"})["html"]
    on, values = pressed(html, "hc-texts")
    assert on == ["repeat7"] and values[-1] == "repeat7"
    on, values = pressed(html, "hc-seed")
    assert on == ["repeat7"] and values == [f"repeat{n}" for n in range(1, 11)]
    # every button of the figure keeps a focus key of its own
    keys = re.findall(r'data-fk="([^"]+)"', html)
    assert len(keys) == len(set(keys))


def marked_rows(html):
    """The row each of the figure's maps marks, counted in the map (None: no mark)."""
    out = []
    for svg in re.findall(r"<svg[^>]*hc-map.*?</svg>", html, re.S):
        m = re.search(r'<rect class="rowmark" x="0" y="(\d+)" width="\d+" height="(\d+)"', svg)
        out.append(None if m is None else int(m.group(1)) // int(m.group(2)))
    return out


def test_a_token_marks_its_row_in_every_head_as_the_kit_draws_it():
    entry = hc.text("elinor")
    for token in (5, 20, 43):
        for sink, first in (("show", 0), ("hide", 1)):
            state = {"text": "elinor", "layer": "3", "token": str(token), "sink": sink}
            r = check(layer_fig.render(state))
            assert marked_rows(r["html"]) == [token - first] * 9
            said = hc.shown(entry["pieces"][token])
            assert f"the row of “{said}” is marked in all 9 heads" in r["summary"]
    # each map is what the kit draws, and a tap on another token moves only its mark
    shares = layer_fig.maps(entry, 2, True)[4]
    cell = max(3, min(7, 150 // len(shares)))
    drawn = kit.heatmap_svg(
        shares, label="\0", selected=20, first=1, cell=cell, cls="mh-mini hc-map"
    )
    state = {"text": "elinor", "layer": "3", "sink": "hide"}
    maps = [
        re.findall(r"<svg[^>]*hc-map.*?</svg>", layer_fig.render({**state, "token": t})["html"])
        for t in ("20", "43")
    ]
    unnamed = lambda svg: re.sub(r'aria-label="[^"]*"', "", svg)  # noqa: E731
    assert unnamed(maps[0][4]) == unnamed(drawn)
    unmark = lambda svg: unnamed(re.sub(r'<rect class="rowmark"[^>]*/>', "", svg))  # noqa: E731
    unmarked = [[unmark(m) for m in ms] for ms in maps]
    assert unmarked[0] == unmarked[1] and maps[0] != maps[1]


def test_the_sink_switch_changes_the_shares_in_words():
    shown = check(layer_fig.render({"layer": "14"}))
    hidden = check(layer_fig.render({"layer": "14", "sink": "hide"}))
    rows = [re.findall(r'<span class="hc-row">(.*?)</span>', r["html"]) for r in (shown, hidden)]
    assert rows[0] != rows[1]
    assert any("“The”" in row for row in rows[0]) and not any("“The”" in row for row in rows[1])
    assert "divided by their sum" in hidden["html"] and "first token hidden" in hidden["summary"]
    # the top share of a hidden row is the hand-made renormalised share, in tenths
    att = raw_maps("cat")[13, 8, 7, 1:8]
    top = int(np.argmax(att))
    want = kit.share(att / att.sum(), top)
    assert f"“it” → “{hc.shown(hc.text('cat')['pieces'][top + 1])}” {want}" in rows[1][8]


def test_every_declared_state_keeps_the_contract():
    for module in FIGURES:
        tries = [{}] + [{k: x} for k, xs in getattr(module, "CHOICES", {}).items() for x in xs]
        first = check(module.render({}))
        word = getattr(module, "WORD_FIELD", None)
        if word:
            values = re.findall(rf'data-key="{word}" data-value="([^"]+)"', first["html"])
            assert values, module.__name__
            tries += [{word: x} for x in values]
        for state in tries:
            r = check(module.render(state))
            assert r["error"] is None and r["summary"].strip(), (module.__name__, state)
            assert set(r["state"]) == set(module.DEFAULTS)
        for junk in ("", "99", "-1", "L0H0", "<b>", "1e3", "none+"):
            r = check(module.render(dict.fromkeys(module.DEFAULTS, junk)))
            assert r["error"] is None and "<b>" not in r["html"]


def test_prose_values_read_the_export():
    assert (
        v.n_heads_total() == 270 == raw_index()["model"]["layers"] * raw_index()["model"]["heads"]
    )
    assert v.kv_numbers_per_token() == f"{2 * 30 * 3 * 64:,}"
    for name in v.PROSE_VALUES:
        assert str(getattr(v, name)()), name


# ---- the page ------------------------------------------------------------------------------------


def rowmarks(page, fid="copy-layer"):
    return page.evaluate(
        """(fid) => [...document.querySelectorAll(`#${fid} svg.hc-map`)].map((svg) => {
            const r = svg.querySelector('rect.rowmark');
            return r ? Math.round(r.getAttribute('y') / r.getAttribute('height')) : null; })""",
        fid,
    )


@pytest.mark.browser
def test_without_javascript_the_chapter_is_complete(new_page, base_url):
    page = new_page(java_script_enabled=False)
    page.goto(base_url + CHAPTER)
    it = layer_fig.default_token(hc.text("cat"))
    assert rowmarks(page) == [it] * 9
    assert page.locator("#copy-map .hc-all td[data-value]").count() == 270
    top = hc.strongest("induction", 1)[0]
    score = hc.scores()["induction"][top]
    name = page.locator(f"#copy-map [data-fk='m-{top[0] + 1}-{top[1] + 1}']").get_attribute(
        "aria-label"
    )  # a head's cell says its name and score to a screen reader
    assert name == f"{head_name(top[0] + 1, top[1] + 1)}: {100 * score:.0f}%, the strongest"
    assert page.locator("#copy-out .hc-copy button").count() == 24
    right, total = hc.accuracy()
    assert f"{right} of {total}" in page.locator("#copy-out .hc-acc").inner_text()
    prose = page.locator("article").inner_text().replace("\n", " ")
    assert f"The strongest induction head is {v.top_induction_head()}, with" in prose
    assert "{{" not in prose


@pytest.mark.browser
def test_a_token_tap_lights_its_row_in_every_head(page, base_url):
    fetched = []
    page.on("request", lambda r: fetched.append(r.url))
    open_ready(page, base_url + CHAPTER)
    # the build's answers come a figure at a time, as each nears the screen: Figure 1's (in
    # view), not the last figure's (nine screens down), until the reader scrolls to it
    answers = [u.split("/prerendered/")[1] for u in fetched if "/prerendered/" in u]
    assert [a for a in answers if a.startswith("heads-that-copy.copy-layer.")], answers
    assert not [a for a in answers if a.startswith("heads-that-copy.copy-out.")], answers
    pieces = hc.text("cat")["pieces"]
    times = []
    for i in (1, 4, 9, 2):
        t = time.perf_counter()
        page.locator(f"#copy-layer [data-fk='t{i}']").click()
        page.wait_for_selector(f"#copy-layer [data-fk='t{i}'][aria-pressed='true']")
        times.append(time.perf_counter() - t)
        assert rowmarks(page) == [i] * 9
        summary = page.locator("#copy-layer [data-summary]").text_content()
        assert f"the row of “{hc.shown(pieces[i])}” is marked in all 9 heads" in summary
    print("token tap to paint (s):", [round(x, 3) for x in times])
    # the sink switch: the shares in words change to the renormalised ones Python gives
    before = page.locator("#copy-layer .hc-row").all_inner_texts()
    page.locator("#copy-layer [data-key='sink'][data-value='hide']").click()
    page.wait_for_selector("#copy-layer [data-key='sink'][data-value='hide'][aria-pressed='true']")
    after = page.locator("#copy-layer .hc-row").all_inner_texts()
    want = check(layer_fig.render({"layer": "14", "token": "2", "sink": "hide"}))["html"]
    assert after != before
    assert after == [
        re.sub("&[a-z#0-9]+;", lambda m: {"&quot;": '"', "&#x27;": "'"}.get(m[0], m[0]), x)
        for x in re.findall(r'<span class="hc-row">(.*?)</span>', want)
    ]
    assert rowmarks(page) == [1] * 9  # the row of token 2, in a map without the first token
    url_with(page, "copy-layer.sink=hide")
    with page.expect_request("**/prerendered/heads-that-copy.copy-out.*.json"):
        page.locator("#copy-out").scroll_into_view_if_needed()


@pytest.mark.browser
def test_pulling_heads_out_gives_the_stored_accuracy(page, base_url):
    open_ready(page, base_url + CHAPTER)
    acc = page.locator("#copy-out .hc-acc strong")
    top = copying.induction_heads()[0]
    page.locator("#copy-out [data-fk='ind-0']").click()
    right, total = hc.accuracy([top])
    page.wait_for_selector(f"#copy-out .hc-acc strong:text-is('{right} of {total}')")
    assert page.locator("#copy-out [data-fk='ind-0']").get_attribute("aria-pressed") == "true"
    # keys: the next switch by arrow, Enter pulls it out too
    page.locator("#copy-out [data-fk='ind-0']").focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    both = hc.accuracy([top, copying.induction_heads()[1]])
    page.wait_for_selector(f"#copy-out .hc-acc strong:text-is('{both[0]} of {both[1]}')")
    assert page.evaluate("document.activeElement.dataset.fk") == "ind-1"
    # a set of other heads, and back to nothing
    page.locator("#copy-out [data-fk='out-control']").click()
    c = hc.accuracy(hc.index()["copying"]["control_heads"])
    page.wait_for_selector(f"#copy-out .hc-acc strong:text-is('{c[0]} of {c[1]}')")
    page.locator("#copy-out [data-fk='out-none']").click()
    n = hc.accuracy()
    page.wait_for_selector(f"#copy-out .hc-acc strong:text-is('{n[0]} of {n[1]}')")
    assert acc.count() == 1


@pytest.mark.browser
def test_keyboard_walks_the_tokens_the_layers_and_the_map(page, base_url):
    open_ready(page, base_url + CHAPTER)
    it = layer_fig.default_token(hc.text("cat"))
    page.locator(f"#copy-layer [data-fk='t{it}']").focus()
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("Enter")
    page.wait_for_selector(f"#copy-layer [data-fk='t{it - 1}'][aria-pressed='true']")
    assert page.evaluate("document.activeElement.dataset.fk") == f"t{it - 1}"
    assert rowmarks(page) == [it - 1] * 9
    # the layer: the slider by arrow key, then the ▶ button
    page.locator("#copy-layer [data-fk='layer']").focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_selector("#copy-layer .hc-name:text-is('L15\u00a0H1')")
    page.locator("#copy-layer [data-fk='layer-up']").press("Enter")
    page.wait_for_selector("#copy-layer .hc-name:text-is('L16\u00a0H1')")
    # the map of every head: arrows move across heads, Enter opens one
    page.locator("#copy-map [data-key='score'][data-value='previous']").click()
    page.wait_for_selector(
        "#copy-map [data-key='score'][data-value='previous'][aria-pressed='true']"
    )
    opened = map_fig.read_head(
        page.locator("#copy-map td[tabindex='0']").get_attribute("data-value")
    )
    page.locator("#copy-map td[tabindex='0']").focus()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    L, H = opened[0] + 2, opened[1] + 1
    page.wait_for_selector(f"#copy-map .hc-opened h3:text-is('L{L}\u00a0H{H}')")
    assert page.evaluate("document.activeElement.dataset.fk") == f"m-{L}-{H}"
    # a tap opens the strongest induction head, marked ★
    page.locator("#copy-map [data-key='score'][data-value='induction']").click()
    top = hc.strongest("induction", 1)[0]
    page.locator(f"#copy-map [data-fk='m-{top[0] + 1}-{top[1] + 1}']").click()
    page.wait_for_selector(f"#copy-map .hc-opened h3:text-is('{v.top_induction_head()}')")
    assert "top" in page.locator(
        f"#copy-map [data-fk='m-{top[0] + 1}-{top[1] + 1}']"
    ).get_attribute("class")


@pytest.mark.browser
def test_in_chromium_a_readers_own_model_file_runs_the_figure_and_never_leaves(
    new_page, base_url, tmp_path
):
    """A phone's width: a text file renamed .gguf is refused with the reason; a tiny llama's
    GGUF file (tests/support/tinygguf.py) shows its card and checks, then Figure 1's maps and
    guesses on it, as CPython draws them from the same file; Back to SmolLM2 offers the file
    again. Every request the page and its worker make is a GET or HEAD to the test's server,
    with no body: the file is never sent."""
    pytest.importorskip("gguf", reason="the file is written with the gguf package")
    tiny = tinygguf.write_llama(tmp_path / "tiny.gguf")
    renamed = tmp_path / "notes.gguf"
    renamed.write_text("Some notes, not a model.\n", "utf-8")
    own = "The cat sat on the mat. The cat"
    page = new_page(viewport={"width": 360, "height": 800})
    requests = []
    page.on("request", lambda r: requests.append(r))
    open_ready(page, f"{base_url}{CHAPTER}?copy-layer.text=own&copy-layer.own={quote(own)}")
    pick = page.get_by_label("Open a model file (.gguf)").first
    assert pick.get_attribute("type") == "file"
    box = page.locator("#copy-layer [data-ownfile]")
    assert box.bounding_box()["width"] <= 360
    pick.set_input_files(str(renamed))
    page.wait_for_selector(
        "#copy-layer [data-ownfile-status]:has-text('This is not a GGUF model file')"
    )
    page.locator("#copy-layer [data-ownfile-input]").set_input_files(str(tiny))
    page.wait_for_selector("#copy-layer .mh-ownfile-card", timeout=60_000)
    checks = page.locator("#copy-layer .mh-ownfile-checks li")
    assert checks.evaluate_all("els => els.map(e => e.className)") == ["pass", "pass"]
    page.wait_for_selector("#copy-layer .hc-guesses li", timeout=60_000)
    summary = page.locator("#copy-layer [data-summary]").text_content()
    token = "#copy-layer [data-key='token'][aria-pressed='true']"
    marked = page.locator(token).get_attribute("data-value")
    ownfile.open_source(ownfile.PathSource(tiny))  # CPython's answer from the same file
    try:
        while not ownfile.load_step()["ready"]:
            pass
        want = check(layer_fig.render({"text": "own", "own": own, "token": marked}))
        while want.get("more"):
            want = check(layer_fig.render(want["state"]))
        card = ownfile.card_lines()
    finally:
        ownfile.close()
    assert page.locator("#copy-layer .mh-ownfile-card li").all_inner_texts() == card
    assert summary == want["summary"] and summary.startswith("Layer 2 of 2 on your text")
    assert page.locator("#copy-layer .hc-head svg").count() == 4
    guesses = page.locator("#copy-layer .hc-guesses li").all_inner_texts()
    wanted = re.findall(r"</meter> ([0-9.]+%)</li>", want["html"])
    assert [g.split()[-1] for g in guesses] == wanted and len(wanted) == 5
    page.locator("#copy-layer [data-ownfile-close]").click()
    page.wait_for_selector("#copy-layer [data-own-load]")  # SmolLM2's load button again
    assert page.locator("#copy-layer [data-ownfile-input]").count() == 1
    assert any(r.url.endswith("/python.zip") for r in requests)  # the worker's are watched too
    sent = [(r.method, r.url) for r in requests if r.method not in ("GET", "HEAD") or r.post_data]
    assert not sent, sent
    elsewhere = [r.url for r in requests if not r.url.startswith((base_url, "data:", "blob:"))]
    assert not elsewhere, elsewhere
