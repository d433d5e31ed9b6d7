// Optional, for a course page that embeds Many Heads figures: add this script once and every
// embedded figure's <iframe> takes the height its content reports, so no scrollbars appear.
// It declares nothing global, so a page may include it once per figure.
window.addEventListener("message", (event) => {
  const data = event.data;
  if (!data || data.type !== "manyheads:height" || typeof data.height !== "number") return;
  // the frame's height set so that its viewport is exactly the content's height, whether the
  // course page's style measures boxes with their borders (box-sizing: border-box) or without
  const fit = (frame, height) => {
    const style = getComputedStyle(frame);
    const edges = style.boxSizing === "border-box"
      ? ["borderTopWidth", "borderBottomWidth", "paddingTop", "paddingBottom"].reduce((n, k) => n + (parseFloat(style[k]) || 0), 0)
      : 0;
    frame.style.height = `${Math.ceil(height + edges)}px`;
  };
  for (const frame of document.querySelectorAll("iframe")) {
    if (frame.contentWindow === event.source) fit(frame, data.height);
  }
});
