// "Download" on every live figure: its picture as SVG and the numbers behind it as CSV. Both
// are made by Python (toymodels.page.download:files) from the figure's own render function in
// the state on screen, so the files hold exactly the numbers shown; this only saves them. The
// page's style sheet goes along, for Python to put the rules the picture uses into the SVG.
// Nothing is sent anywhere.

import { writeURLNow } from "./figures.js";

// The figure's state as on screen: its starting state, then what the URL holds (the page
// writes every changed field there, as Python normalised it).
function stateOf(figure) {
  writeURLNow();
  const state = JSON.parse(figure.dataset.state || "{}");
  for (const [key, value] of new URLSearchParams(location.search)) {
    if (key.startsWith(`${figure.id}.`)) state[key.slice(figure.id.length + 1)] = value;
  }
  return state;
}

function save(text, type, name) {
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([text], { type }));
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

function button(text, onClick) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = text;
  b.addEventListener("click", onClick);
  return b;
}

function panelFor(figure, python) {
  const status = document.createElement("p");
  status.className = "mh-help";
  status.setAttribute("role", "status");
  const fetchFiles = async (kind) => {
    status.textContent = "Drawing the file…";
    const source = new URL(location.href);
    source.hash = figure.id;
    const caption = figure.querySelector("figcaption").textContent.trim();
    const css = [...document.querySelectorAll("style")].map((s) => s.textContent).join("\n");
    try {
      const args = [figure.dataset.figure, stateOf(figure), figure.id, caption, source.href, css];
      const files = await python.call("toymodels.page.download:files", args);
      if (files.error) throw new Error(files.error);
      if (kind === "svg") save(files.svg, "image/svg+xml", `${files.name}.svg`);
      else save(files.csv, "text/csv", `${files.name}.csv`);
      status.textContent = `Saved ${files.name}.${kind}.`;
    } catch (err) {
      status.textContent = `The file could not be made: ${err.message}`;
    }
  };
  const intro = document.createElement("p");
  intro.textContent = "This figure as on screen now, for slides and worksheets:";
  const row = document.createElement("p");
  const svg = button("Picture (SVG)", () => fetchFiles("svg"));
  row.append(svg, " ", button("Numbers (CSV)", () => fetchFiles("csv")));
  return [intro, row, status];
}

export function setupDownloads(python) {
  const figures = [...document.querySelectorAll("figure[data-figure]")];
  python.ready.then(() => {
    for (const figure of figures) {
      const toggle = figure.querySelector("[data-download]");
      const panel = figure.querySelector("[data-download-panel]");
      if (!toggle || !panel) continue;
      toggle.hidden = false;
      toggle.addEventListener("click", () => {
        const open = toggle.getAttribute("aria-expanded") === "true";
        toggle.setAttribute("aria-expanded", String(!open));
        panel.hidden = open;
        if (!open && !panel.childElementCount) panel.replaceChildren(...panelFor(figure, python));
      });
    }
  }, () => {});
}
