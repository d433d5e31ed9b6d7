"""A redraw changes only what differs (static/morph.js with morphdom): after each tap the
figure's markup is exactly what CPython's render returns for the state in the URL, as if it
had been swapped whole, while the parts that did not change are the same nodes as before; the
build ships morphdom as the pinned file."""

import re

from conftest import open_ready, settled

from sitebuild.fetched import assets
from toymodels.real_heads import figure as real_heads

# the figure's state as the page holds it (its first state, then the URL), and its drawn body
# without the page's own marks (scrollers.js's classes), beside Python's markup parsed the way
# the page parses an answer
SEEN = """([fid, html]) => {
  const fig = document.getElementById(fid);
  const state = JSON.parse(fig.dataset.state);
  for (const [k, v] of new URLSearchParams(location.search)) {
    if (k.startsWith(fid + ".")) state[k.slice(fid.length + 1)] = v;
  }
  const body = fig.querySelector("[data-body]").cloneNode(true);
  for (const el of [body, ...body.querySelectorAll("*")]) {
    el.classList.remove("mh-more-left", "mh-more-right");
    if (el.getAttribute("class") === "") el.removeAttribute("class");
  }
  let same = null;
  if (html !== null) {
    const t = document.createElement("template");
    t.innerHTML = html;
    same = body.innerHTML === t.innerHTML;
  }
  return { state, same };
}"""


def drawn_as_python_says(page, fid, render):
    """The page's state, after checking that its figure's markup is CPython's for that state
    (call it once the page has drawn the answer to the last action)."""
    settled(page)  # the URL is written after the paint: write it now
    state = page.evaluate(SEEN, [fid, None])["state"]
    assert page.evaluate(SEEN, [fid, render(state, fid)["html"]])["same"], state
    return state


def test_each_redraw_is_pythons_markup_and_keeps_what_did_not_change(page, base_url):
    open_ready(page, base_url + "real-heads.html")
    fid = "real-heads"
    page.click(f'#{fid} [data-key="view"][data-value="model"]')
    page.wait_for_selector(f'#{fid} [data-key="view"][data-value="model"][aria-pressed=true]')
    state = drawn_as_python_says(page, fid, real_heads.render)
    assert state["view"] == "model"
    page.evaluate("""() => {
      const fig = document.getElementById("real-heads");
      window.kept = [fig.querySelector(".rh-sheet"), fig.querySelector(".rh-sheet-over")];
      window.mark = fig.querySelector(".rh-sheet path.rowmark").getAttribute("d");
    }""")
    value = page.locator(f"#{fid} .mh-word[aria-pressed=false]").nth(2).get_attribute("data-value")
    word = page.locator(f'#{fid} .mh-word[data-value="{value}"]')
    word.click()
    page.wait_for_function(
        """() => document.querySelector("#real-heads .rh-sheet path.rowmark")
                   .getAttribute("d") !== window.mark"""
    )
    tapped = drawn_as_python_says(page, fid, real_heads.render)
    assert tapped["token"] != state["token"]
    # the 72 maps' picture and the heads' buttons over it are the nodes drawn before the tap
    assert page.evaluate("""() => {
      const fig = document.getElementById("real-heads");
      return window.kept[0] === fig.querySelector(".rh-sheet")
        && window.kept[1] === fig.querySelector(".rh-sheet-over");
    }""")
    assert word.get_attribute("aria-pressed") == "true"
    # bigger changes: a layer of the next sentence, then back to every head
    page.click(f'#{fid} [data-key="sentence"][data-value="puff"]')
    page.wait_for_selector(f'#{fid} [data-key="sentence"][data-value="puff"][aria-pressed=true]')
    page.click(f'#{fid} [data-key="view"][data-value="layer"]')
    page.wait_for_selector(f'#{fid} [data-key="view"][data-value="layer"][aria-pressed=true]')
    page.click(f'#{fid} [data-key="layer"][data-value="4"]')
    page.wait_for_selector(f'#{fid} [data-key="layer"][data-value="4"][aria-pressed=true]')
    state = drawn_as_python_says(page, fid, real_heads.render)
    assert (state["sentence"], state["view"], state["layer"]) == ("puff", "layer", "4")
    page.click(f'#{fid} [data-key="view"][data-value="model"]')
    page.wait_for_selector(f'#{fid} [data-key="view"][data-value="model"][aria-pressed=true]')
    assert drawn_as_python_says(page, fid, real_heads.render)["view"] == "model"


def test_the_build_ships_the_pinned_morphdom(site):
    shipped = list((site / "static").glob("morphdom.*.js"))
    assert len(shipped) == 1
    code = shipped[0].read_text("utf-8")
    body = code[code.index("*/\n") + 3 :]
    assert assets.sha256(body.encode("utf-8")) == assets.MORPHDOM_ESM_SHA256
    assert code.startswith("/*! morphdom@2.7.8 from npm") and "The MIT License (MIT)" in code
    morph = next(p for p in (site / "static").glob("morph.*.js"))
    assert re.search(rf'from "\./{re.escape(shipped[0].name)}"', morph.read_text("utf-8"))
