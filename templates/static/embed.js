// The Embed button of every figure: shows and copies an <iframe> snippet that opens the figure
// alone (embed/CHAPTER/FIGURE.html) in the state on screen, plus the optional resize script.

import { writeURLNow } from "./figures.js";

function snippet(button) {
  const figure = button.closest("figure");
  const url = new URL(button.dataset.embed, document.baseURI);
  const params = new URLSearchParams();
  writeURLNow();
  for (const [key, value] of new URLSearchParams(location.search)) {
    if (key.startsWith(`${figure.id}.`)) params.set(key, value);
  }
  url.search = params.toString();
  const title = figure.querySelector("figcaption").textContent.trim().replace(/"/g, "&quot;");
  const resize = new URL("static/embed-resize.js", new URL("../../", url));
  const src = url.href.replace(/"/g, "%22");
  const frame = `src="${src}" title="${title}" width="100%" height="640" loading="lazy"`;
  return `<iframe ${frame}></iframe>\n<script src="${resize.href}" async></script>`;
}

function element(tag, props = {}, text = "") {
  const el = Object.assign(document.createElement(tag), props);
  if (text) el.textContent = text;
  return el;
}

export function setupEmbed() {
  if (document.documentElement.classList.contains("embedded")) return;
  if (document.querySelector('meta[name="mh-lms"]')) return; // a SCORM package has no embed pages
  for (const button of document.querySelectorAll("[data-embed]")) {
    const panel = button.closest("figure").querySelector("[data-embed-panel]");
    button.hidden = false;
    button.addEventListener("click", async () => {
      const open = button.getAttribute("aria-expanded") === "true";
      button.setAttribute("aria-expanded", String(!open));
      panel.hidden = open;
      if (open) return;
      const code = snippet(button);
      const box = element("textarea", { readOnly: true, rows: 3, className: "mh-snippet" });
      box.value = code;
      box.setAttribute("aria-label", "Embed code for this figure");
      const status = element("p", { className: "mh-help" });
      status.setAttribute("role", "status");
      panel.replaceChildren(
        element("p", {}, "Paste this into a course page. The figure opens in the state you see " +
          "now; the script is optional and sizes the frame to fit."),
        box, status);
      try {
        await navigator.clipboard.writeText(code);
        status.textContent = "Copied to the clipboard.";
      } catch {
        box.select();
        status.textContent = "Select the code and copy it (Ctrl+C or ⌘+C).";
      }
    });
  }
}
