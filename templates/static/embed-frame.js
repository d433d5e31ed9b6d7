// Inside an embedded figure (embed/CHAPTER/FIGURE.html): tells the parent page how tall the
// content is, whenever it changes (Python arriving, a redraw), so the parent can size its
// <iframe> without scrollbars; and keeps the "back to the chapter" link on the current state.

const frame = window.parent !== window;

// The height of the content itself. Not the document's scrollHeight: that is never less than
// the frame's own height, so a frame sized by it could grow but never shrink.
export function contentHeight() {
  return Math.ceil(document.documentElement.getBoundingClientRect().height);
}

function report() {
  if (frame) window.parent.postMessage({ type: "manyheads:height", height: contentHeight() }, "*");
}

function backLink() {
  const back = document.querySelector("[data-back]");
  if (back) back.search = location.search;
}

new ResizeObserver(report).observe(document.body);
document.addEventListener("mh:drawn", report);
document.addEventListener("mh:url", backLink); // figures.js writes a redraw's URL after its paint
window.addEventListener("load", report);
report();
