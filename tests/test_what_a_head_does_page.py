"""Chapter "What a head does": its figure and its values against the export's own files
(heads.npz and index.json, read here without toymodels' reader), every state the figure
declares, the chapter as built, and the page in Chromium: a reader picks another pair, taps a
head, and reads that head's three numbers."""

import html
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import open_ready, url_with

from toymodels.page.figure import check
from toymodels.page.html import count_words, head_name
from toymodels.what_a_head_does import figure as fig
from toymodels.what_a_head_does import scatter
from toymodels.what_a_head_does import values as v

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "toymodels" / "data" / "what_a_head_does"
CHAPTER = "what-a-head-does.html"


# ---- the export, read by hand -------------------------------------------------------------------


def raw_index():
    return json.loads((DATA / "index.json").read_text(encoding="utf-8"))


def raw(pid):
    """A kept pair's entry and its (layers, heads) arrays, from the files themselves."""
    index = raw_index()
    n = index["kept"].index(pid)
    with np.load(io.BytesIO((DATA / "heads.npz").read_bytes())) as z:
        arrays = {k: z[k][n].astype(float) for k in z.files}
    entry = next(p for p in index["pairs"] if p["id"] == pid)
    return entry, arrays


def raw_all(key):
    with np.load(io.BytesIO((DATA / "heads.npz").read_bytes())) as z:
        return z[key].astype(float)


def pct(x):
    """A share as the figure writes it, by hand: a tenth of a point under 10%."""
    x = 100 * x
    text = f"{x:.1f}" if abs(round(x, 1)) < 10 else f"{x:.0f}"
    text = text.lstrip("-") if float(text) == 0 else text
    return text.replace("-", "−") + "%"


def signed(x):
    text = f"{x:.2f}"
    text = text.lstrip("-") if float(text) == 0 else text
    return text.replace("-", "−") if text.startswith("-") or float(text) == 0 else "+" + text


def mean_ranks(x):
    """Ranks from 1, tied values sharing the mean of their ranks: sorted, then each run of
    equal values given the middle of its positions."""
    x = np.ravel(x)
    order = np.argsort(x, kind="mergesort")
    ranks = np.empty(len(x))
    start = 0
    for end in range(1, len(x) + 1):
        if end == len(x) or x[order[end]] != x[order[start]]:
            ranks[order[start:end]] = (start + end + 1) / 2
            start = end
    return ranks


def rank_corr(a, b):
    """Spearman's correlation by hand: the Pearson correlation of the (mean) ranks."""
    return float(np.corrcoef(mean_ranks(a), mean_ranks(b))[0, 1])


def cells(markup, key):
    """{(layer, head) 1-based: its aria-label} of one map of the figure's markup."""
    found = re.findall(rf'data-fk="{key}-(\d+)-(\d+)"[^>]*aria-label="([^"]+)"', markup)
    return {(int(L), int(H)): html.unescape(said) for L, H, said in found}


# ---- the figure ----------------------------------------------------------------------------------


@pytest.mark.parametrize("pid", ["ioi1", "repeat6", "gender2", "pronoun8"])
def test_every_cell_names_the_exported_numbers(pid):
    entry, a = raw(pid)
    r = check(fig.render({"pair": pid}))
    layers, heads = a["patch"].shape
    att, dla, patch = (cells(r["html"], k) for k in ("att", "dla", "patch"))
    assert len(att) == len(dla) == len(patch) == layers * heads == 270
    for L in range(layers):
        for H in range(heads):
            name = head_name(L + 1, H + 1)
            assert att[L + 1, H + 1] == f"{name}: attention {pct(a['att_clean'][L, H])}"
            assert dla[L + 1, H + 1] == f"{name}: attribution {signed(a['dla_clean'][L, H])}"
            assert patch[L + 1, H + 1] == f"{name}: patching recovers {pct(a['patch'][L, H])}"
    # without a head chosen, the head whose patching recovers most is opened
    L, H = np.unravel_index(int(np.argmax(a["patch"])), a["patch"].shape)
    assert r["state"] == {"pair": pid, "head": f"L{L + 1}H{H + 1}", "patch": "every"}
    assert f'data-fk="patch-{L + 1}-{H + 1}" tabindex="0"' in r["html"]
    # the two texts, each with the model's logit difference
    assert signed(entry["ld_clean"]) in r["html"] and signed(entry["ld_corrupt"]) in r["html"]


@pytest.mark.parametrize(
    "shown, array, said",
    [
        ("token", "patch_token", "patching recovers"),
        ("word", "patch_word", "patching recovers"),
        ("noise", "noise", "noising loses"),
    ],
)
def test_the_third_map_shows_the_patch_chosen(shown, array, said):
    """Where the output is put back, or noising: the map's cells and title, and the head it
    opens, are that array's."""
    entry, a = raw("ioi8")
    r = check(fig.render({"pair": "ioi8", "patch": shown}))
    patch = cells(r["html"], "patch")
    for (L, H), text in patch.items():
        assert text == f"{head_name(L, H)}: {said} {pct(a[array][L - 1, H - 1])}"
    assert len(patch) == 270
    L, H = np.unravel_index(int(np.argmax(a[array])), a[array].shape)
    assert r["state"]["head"] == f"L{L + 1}H{H + 1}"
    title = {"token": "at the last token only", "word": "at the changed word only"}
    assert title.get(shown, "Noising at every position: share lost") in r["html"]
    assert re.search(rf'data-key="patch" data-value="{shown}"[^>]*aria-pressed="true"', r["html"])


def test_each_pair_says_whether_its_answer_flips():
    """The pair's table says whether the answer flips; the pairs kept only because the
    difference moves are marked on their buttons (and only they)."""
    index = raw_index()
    kept = [p for p in index["pairs"] if p["kept"]]
    still = [p for p in kept if not (p["ld_clean"] > 0 > p["ld_corrupt"])]
    assert 0 < len(still) < len(kept)
    r = check(fig.render({}))
    buttons = dict(
        re.findall(r'data-key="pair" data-value="([^"]+)"[^>]*>([^<]+)</button>', r["html"])
    )
    for p in kept:
        assert buttons[p["id"]].endswith("(answer kept)") == (p in still), p["id"]
    for p in kept:
        text = html.unescape(check(fig.render({"pair": p["id"]}))["html"])
        a, b = p["a"].strip(), p["b"].strip()
        if p in still:
            same = a if p["ld_clean"] > 0 else b
            move = f"{p['ld_clean'] - p['ld_corrupt']:.2f}"
            assert (
                f"The answer does not flip: the model prefers “{same}” after both texts. The "
                f"pair is kept because the logit difference moves {move} towards “{b}”."
            ) in text
        else:
            assert (
                f"The answer flips: the model prefers “{a}” after the clean text, “{b}” after "
                "the corrupted one."
            ) in text


def test_the_opened_head_lists_its_numbers_in_both_texts():
    entry, a = raw("ioi3")
    r = check(fig.render({"pair": "ioi3", "head": "L21H1"}))
    facts = re.findall(r"<li>(.*?)</li>", r["html"])
    said = [html.unescape(f) for f in facts]
    w0 = "".join(entry["pieces"][0][i] for i in entry["differ"]).strip()
    w1 = "".join(entry["pieces"][1][i] for i in entry["differ"]).strip()
    assert said == [
        f"Attention from the last token to “{w0}”: {pct(a['att_clean'][20, 0])} "
        f"(in the corrupted text, to “{w1}”: {pct(a['att_corrupt'][20, 0])}).",
        f"Direct logit attribution: {signed(a['dla_clean'][20, 0])} towards "
        f"“{entry['a'].strip()}” (in the corrupted text: {signed(a['dla_corrupt'][20, 0])}).",
        "Patched from the clean run into the corrupted one, it recovers "
        f"{pct(a['patch'][20, 0])} of the logit difference at every position, "
        f"{pct(a['patch_token'][20, 0])} at the last token only and "
        f"{pct(a['patch_word'][20, 0])} at “{w0}” only.",
        "Noised, its output from the corrupted run put into the clean one (every position), "
        f"the model loses {pct(a['noise'][20, 0])} of it.",
    ]
    assert r["summary"].endswith(" ".join(said))


def test_every_kept_pair_is_offered_once_by_family():
    r = check(fig.render({}))
    offered = re.findall(r'data-key="pair" data-value="([^"]+)"', r["html"])
    assert sorted(offered) == sorted(raw_index()["kept"])
    labels = re.findall(r'data-key="pair"[^>]*>([^<]+)</button>', r["html"])
    assert len(set(labels)) == len(labels)  # no two buttons read the same


def test_every_state_draws_and_junk_falls_back():
    for pid in fig.CHOICES["pair"]:
        for head in ("", "L1H1", "L30H9", "l24 h4"):
            r = check(fig.render({"pair": pid, "head": head}))
            assert r["error"] is None and r["summary"].strip()
            assert r["state"]["pair"] == pid
    assert check(fig.render({"head": "l24 h4"}))["state"]["head"] == "L24H4"
    for junk in ("", "99", "-1", "L0H0", "L31H1", "L1H10", "<b>", "1e3", "ioi6", "pronoun1"):
        r = check(fig.render(dict.fromkeys(fig.DEFAULTS, junk)))
        assert r["error"] is None and "<b>" not in r["html"]
        assert r["state"]["pair"] == "ioi1" and fig.read_head(r["state"]["head"])


def test_the_colour_scales():
    assert fig.signed_level(0.04, 1.0) == fig.signed_level(-0.04, 1.0) == "l0"
    assert fig.signed_level(0.3, 1.0) == "l5"
    assert fig.signed_level(-0.3, 1.0) == "neg2"
    assert fig.signed_level(-0.8, 1.0) == fig.signed_level(-5, 1.0) == "neg4"
    assert fig.signed_level(0.8, 1.0) == fig.signed_level(5, 1.0) == "l9"
    assert fig.signed_level(0.1, 0.5) == "l3"


@pytest.mark.parametrize("family", scatter.CHOICES["family"])
def test_the_scatter_draws_every_head_away_from_zero_and_its_correlations(family):
    index = raw_index()
    fam = {p["id"]: p["family"] for p in index["pairs"]}
    ns = [n for n, pid in enumerate(index["kept"]) if family in ("all", fam[pid])]
    att, patch = raw_all("att_clean")[ns].ravel(), raw_all("patch_token")[ns].ravel()
    away = (att >= 0.05) | (np.abs(patch) >= 0.05)
    r = check(scatter.render({"family": family}))
    assert r["state"] == {"family": family}
    assert r["html"].count("<circle ") == away.sum() > 0
    summary = r["summary"]
    rho = f"{rank_corr(att, patch):.2f}".replace("-", "−").replace("−0.00", "0.00")
    assert f"rank correlation {rho}, {rank_corr(att, np.abs(patch)):.2f} against" in summary
    assert f"{(~away).sum():,} of {att.size:,} points" in summary
    # the first point drawn sits where its numbers say (x across 0..1, y from −0.6 to 0.7)
    x, y = (float(c) for c in re.search(r'<circle cx="([^"]+)" cy="([^"]+)"', r["html"]).groups())
    i = int(np.flatnonzero(away)[0])
    assert x == pytest.approx(48 + att[i] * (420 - 48 - 12), abs=0.06)
    assert y == pytest.approx(300 - 40 - (patch[i] + 0.6) / 1.3 * (300 - 10 - 40), abs=0.06)
    assert check(scatter.render({"family": "<b>"}))["state"] == {"family": "all"}


# ---- the values the prose quotes -----------------------------------------------------------------


def test_values_count_the_pairs_kept():
    pairs = raw_index()["pairs"]
    kept = [p for p in pairs if p["kept"]]
    assert (v.n_pairs(), v.n_kept()) == (len(pairs), len(kept)) == (58, 25)
    for family in ("pronoun", "gender", "ioi", "repeat"):
        mine = [p for p in pairs if p["family"] == family]
        total = getattr(v, f"{family}_total")()
        assert total == len(mine)
        n = sum(p["kept"] for p in mine)
        got = getattr(v, f"{family}_kept")()
        assert got == (count_words(n) if family in ("pronoun", "gender") else n), family
    assert v.pronoun_kept() == "two" and v.pronoun_total() == 20


def test_values_read_the_example_and_the_rank_correlations():
    entry, a = raw("ioi1")
    assert v.ex_clean() == entry["clean"] and v.ex_ld_clean() == signed(entry["ld_clean"])
    L, H = np.unravel_index(int(np.argmax(a["patch"])), a["patch"].shape)
    assert v.ex_top_head() == head_name(L + 1, H + 1)
    assert v.ex_top_patch() == pct(a["patch"][L, H])
    L, H = np.unravel_index(int(np.argmax(a["att_clean"])), a["att_clean"].shape)
    assert v.ex_looker_head() == head_name(L + 1, H + 1)
    # the prose: neither patch brings the answer back, and noising costs little
    assert abs(a["patch"][L, H]) < 0.05 and abs(a["patch_token"][L, H]) < 0.05
    assert v.ex_looker_token() == pct(a["patch_token"][L, H])
    assert v.ex_looker_noise() == pct(a["noise"][L, H]) and abs(a["noise"][L, H]) < 0.05
    att, token, patch = raw_all("att_clean"), raw_all("patch_token"), raw_all("patch")
    assert v.rho_attention_token() == f"{rank_corr(att, token):.2f}"
    assert v.rho_attention_token_size() == f"{rank_corr(att, np.abs(token)):.2f}"
    assert v.rho_attention_every() == f"{rank_corr(att, patch):.2f}"
    # the prose: by size they agree better than signed, and at the same token better than
    # with the patch at every position
    assert rank_corr(att, np.abs(token)) > rank_corr(att, token) > rank_corr(att, patch)
    assert raw_index()["spearman"]["all"]["attention"] == pytest.approx(
        rank_corr(att, patch), abs=1e-3
    )


def test_looking_and_mattering_by_hand():
    """The shares of heads that move the difference, looking or not, and the heads the top
    ten by attention and by patching share, against plain numpy over the files."""
    att, token = raw_all("att_clean"), raw_all("patch_token")
    moves = np.abs(token) >= 0.1
    looking, blind = moves[att >= 0.5].mean(), moves[att < 0.05].mean()
    assert v.looking_moves_pct() == pct(looking) and v.blind_moves_pct() == pct(blind)
    assert v.looking_vs_blind() == f"{looking / blind:.0f}" and looking / blind > 10
    shared = []
    for n in range(len(att)):
        by_att = set(np.argsort(att[n].ravel())[::-1][:10])
        by_patch = set(np.argsort(np.abs(token[n]).ravel())[::-1][:10])
        shared.append(len(by_att & by_patch))
    assert v.top_shared() == f"{np.mean(shared):.1f}"
    assert v.top_chance() == f"{10 * 10 / 270:.2f}" == "0.37"
    assert np.mean(shared) > 5 * 0.37  # "far more often than not" against chance
    assert v.top_n() == "ten"


def test_direct_attribution_like_with_like_by_hand():
    """The change of each head's attribution between the texts over the change of the logit
    difference, against patching: rank correlations, over the late layers, Pearson's."""
    index = raw_index()
    kept = [next(p for p in index["pairs"] if p["id"] == pid) for pid in index["kept"]]
    gap = np.array([p["ld_clean"] - p["ld_corrupt"] for p in kept])
    ddla = (raw_all("dla_clean") - raw_all("dla_corrupt")) / gap[:, None, None]
    patch = raw_all("patch")
    assert v.rho_ddla() == f"{rank_corr(ddla, patch):.2f}"
    assert v.rho_ddla_size() == f"{rank_corr(np.abs(ddla), np.abs(patch)):.2f}"
    late = slice(24, None)  # layers 25 to 30
    assert v.late_layers() == "25–30"
    assert v.rho_ddla_late() == f"{rank_corr(ddla[:, late], patch[:, late]):.2f}"
    x, y = ddla[:, late].ravel(), patch[:, late].ravel()
    r = ((x - x.mean()) * (y - y.mean())).sum() / np.sqrt(
        ((x - x.mean()) ** 2).sum() * ((y - y.mean()) ** 2).sum()
    )
    assert v.pearson_ddla_late() == f"{r:.2f}"
    # "agrees well for the late heads": better there than over every layer
    assert rank_corr(ddla[:, late], patch[:, late]) > rank_corr(ddla, patch) + 0.2
    shared = [
        len(
            set(np.argsort(np.abs(ddla[n]).ravel())[::-1][:10])
            & set(np.argsort(np.abs(patch[n]).ravel())[::-1][:10])
        )
        for n in range(len(kept))
    ]
    assert v.top_shared_ddla() == f"{np.mean(shared):.1f}"


def test_the_prose_claims_stay_true_of_the_export():
    att, patch, dla = raw_all("att_clean"), raw_all("patch"), raw_all("dla_clean")
    token = raw_all("patch_token")
    looks = att >= 0.5
    assert v.n_looking() == looks.sum()
    assert v.n_looking_matters() == (looks & (token >= 0.1)).sum()
    assert v.n_looking_nothing() == (looks & (np.abs(token) < 0.05)).sum()
    # the head that works against the answer: negative on average, and in its attribution
    mean = patch.mean(0)
    L, H = np.unravel_index(int(np.argmin(mean)), mean.shape)
    assert v.neg_head() == head_name(L + 1, H + 1) and mean[L, H] < 0 and dla.mean(0)[L, H] < 0
    assert v.neg_pairs() == (patch[:, L, H] <= -0.1).sum()
    index = raw_index()
    family = {p["id"]: p["family"] for p in index["pairs"]}
    ioi = [n for n, pid in enumerate(index["kept"]) if family[pid] == "ioi"]
    repeat = [n for n, pid in enumerate(index["kept"]) if family[pid] == "repeat"]
    worst = sorted(patch[repeat, L, H])[:3]
    assert v.neg_repeat() == f"{pct(worst[0])}, {pct(worst[1])} and {pct(worst[2])}"
    # "it reads the answer and writes against it": where it gives the answer half its
    # attention, its direct attribution is negative in every pair
    reads = raw_all("att_answer")[:, L, H] >= 0.5
    assert v.neg_reads_pairs() == count_words(reads.sum()) and reads.sum() >= 5
    assert (dla[reads, L, H] < 0).all()
    assert v.neg_reads_against() == f"all {count_words(reads.sum())}"
    assert v.neg_reads_dla() == signed(dla[reads, L, H].mean())
    # the head that acts only through later layers barely looks and writes nearly nothing;
    # patched at the last token it recovers nothing, at the changed name what it does at all
    assert float(v.indirect_att().rstrip("%")) < 5
    assert abs(float(v.indirect_dla().replace("−", "-"))) < 0.1
    L, H = (int(x) - 1 for x in re.fullmatch(r"L(\d+)\xa0H(\d+)", v.indirect_head()).groups())
    for key, name in (
        ("patch_token", "token"),
        ("patch_word", "word"),
        ("patch", "every"),
        ("att_induct", "induct"),
    ):
        values = raw_all(key)[ioi, L, H]
        low, high = pct(values.min()), pct(values.max())
        said = getattr(v, f"indirect_{name}_range")()
        assert said == (low if low == high else f"{low} to {high}"), name
    assert np.abs(raw_all("patch_token")[ioi, L, H]).max() < 0.01
    assert raw_all("att_induct")[ioi, L, H].min() > 0.5
    # the head that matters without looking reads its own token
    entry, a = raw("ioi1")
    blind = np.where(a["att_clean"] < 0.05, a["patch"], -np.inf)
    L, H = np.unravel_index(int(np.argmax(blind)), blind.shape)
    assert v.ex_blind_self() == pct(a["att_self"][L, H]) and a["att_self"][L, H] > 0.5
    assert v.ex_blind_answer() == pct(a["att_answer"][L, H])
    for name in v.PROSE_VALUES:
        assert str(getattr(v, name)()), name


def test_the_pairs_that_flip_by_hand():
    index = raw_index()
    kept = [p for p in index["pairs"] if p["kept"]]
    flips = [p for p in kept if p["ld_clean"] > 0 > p["ld_corrupt"]]
    assert v.n_flips() == len(flips) and v.n_no_flip() == count_words(len(kept) - len(flips))
    weak = [
        p
        for p in index["pairs"]
        if p["family"] in ("pronoun", "gender")
        and "ld_clean" in p
        and p["ld_clean"] > 0 > p["ld_corrupt"]
    ]
    said = "the model never changes its answer" if not weak else f"in {count_words(len(weak))}"
    assert said in v.weak_flips()


# ---- the chapter ---------------------------------------------------------------------------------


def test_the_built_chapter_quotes_the_values(site):
    page = (site / CHAPTER).read_text(encoding="utf-8")
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", page)).split())
    assert "{{" not in text
    assert f"{v.pronoun_kept()} of {v.pronoun_total()} are kept" in text
    assert f"{v.n_kept()} of {v.n_pairs()} in all" in text
    assert f"over layers {v.late_layers()} alone it is {v.rho_ddla_late()}" in text
    assert f"in {v.n_flips()} of the {v.n_kept()} pairs kept here changes the answer" in text
    assert "Figure 1" in text and 'id="what-head"' in page


# ---- the page ------------------------------------------------------------------------------------


@pytest.mark.browser
def test_a_reader_picks_a_pair_and_taps_a_head(page, base_url):
    open_ready(page, base_url + CHAPTER)
    opened = page.locator("#what-head .hc-opened")
    assert opened.locator("h3").inner_text() == v.ex_top_head()
    page.locator("#what-head [data-key='pair'][data-value='repeat3']").click()
    page.wait_for_selector(
        "#what-head [data-key='pair'][data-value='repeat3'][aria-pressed='true']"
    )
    entry, a = raw("repeat3")
    assert "Clarke" in page.locator("#what-head .wh-texts").inner_text()
    page.locator("#what-head [data-fk='patch-30-2']").click()
    page.wait_for_selector("#what-head [data-fk='patch-30-2'].open")
    assert opened.locator("h3").inner_text() == head_name(30, 2)
    facts = opened.locator("li").all_inner_texts()
    assert facts[0].startswith(
        f"Attention from the last token to “Clarke”: {pct(a['att_clean'][29, 1])}"
    )
    assert facts[1].startswith(f"Direct logit attribution: {signed(a['dla_clean'][29, 1])}")
    assert pct(a["patch"][29, 1]) in facts[2]
    # the same head is opened in all three maps, and the address keeps the view
    assert page.locator("#what-head td.open").count() == 3
    url_with(page, "what-head.pair=repeat3", "what-head.head=L30H2")
    # keys: the arrow keys move the opened head inside a map, Enter opens it
    page.locator("#what-head [data-fk='patch-30-2']").focus()
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Enter")
    page.wait_for_selector("#what-head [data-fk='patch-29-2'].open")
    assert opened.locator("h3").inner_text() == head_name(29, 2)


def test_a_missing_export_names_the_command_that_writes_it(monkeypatch):
    """An author without the export is told the exporter's own name, as the export CLI takes it."""
    from toymodels.what_a_head_does import heads

    def missing(rel):
        raise FileNotFoundError(f"toymodels/data/{rel} is missing")

    monkeypatch.setattr(heads.data, "read_bytes", missing)
    with pytest.raises(heads.data.MissingData) as e:
        heads._read("index.json")
    command = re.search(r"run `python -m toymodels\.export (\w+)`", str(e.value))
    assert command, str(e.value)
    makefile = (Path(__file__).resolve().parent.parent / "Makefile").read_text()
    assert f"-m toymodels.export {command.group(1)}\n" in makefile, command.group(1)
