// Inside an embedded figure (embed/CHAPTER/FIGURE.html): tells the parent page how tall the
// content is, whenever it changes (Python arriving, a redraw), so the parent can size its
// <iframe> without scrollbars; and keeps the "back to the chapter" link on the current state.

const frame = window.parent !== window;

function report() {
  if (frame) window.parent.postMessage({ type: "manyheads:height", height: document.documentElement.scrollHeight }, "*");
}

function backLink() {
  const back = document.querySelector("[data-back]");
  if (back) back.search = location.search;
}

new ResizeObserver(report).observe(document.body);
document.addEventListener("mh:drawn", () => { report(); backLink(); });
window.addEventListener("load", report);
report();
