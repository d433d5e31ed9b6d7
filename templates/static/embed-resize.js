// Optional, for a course page that embeds Many Heads figures: add this script once and every
// embedded figure's <iframe> takes the height its content reports, so no scrollbars appear.
window.addEventListener("message", (event) => {
  const data = event.data;
  if (!data || data.type !== "manyheads:height" || typeof data.height !== "number") return;
  for (const frame of document.querySelectorAll("iframe")) {
    if (frame.contentWindow === event.source) frame.style.height = `${Math.ceil(data.height) + 2}px`;
  }
});
