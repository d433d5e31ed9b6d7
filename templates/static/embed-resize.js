// Optional, for a course page that embeds Many Heads figures: add this script once and every
// embedded figure's <iframe> takes the height its content reports, so no scrollbars appear.
// Only frames that show a page of the Many Heads site this script came from may resize
// themselves, and only by a message from that very frame and that site's origin: another
// frame on the course page (an advert, a video) cannot resize anything. It declares nothing
// global, so a page may include it once per figure.
(() => {
  if (!document.currentScript?.src) return; // copied inline: no site to trust frames of
  const site = new URL("../", document.currentScript.src);

  function fromSite(frame) {
    const src = new URL(frame.getAttribute("src") || "about:blank", document.baseURI);
    return src.origin === site.origin && src.pathname.startsWith(site.pathname);
  }

  // the frame's height set so that its viewport is exactly the content's height, whether the
  // course page's style measures boxes with their borders (box-sizing: border-box) or without
  function fit(frame, height) {
    const style = getComputedStyle(frame);
    const sides = ["borderTopWidth", "borderBottomWidth", "paddingTop", "paddingBottom"];
    const edges = style.boxSizing === "border-box"
      ? sides.reduce((n, k) => n + (parseFloat(style[k]) || 0), 0)
      : 0;
    frame.style.height = `${Math.ceil(height + edges)}px`;
  }

  window.addEventListener("message", (event) => {
    const data = event.data;
    if (event.origin !== site.origin) return;
    if (!data || data.type !== "manyheads:height" || typeof data.height !== "number") return;
    for (const frame of document.querySelectorAll("iframe")) {
      if (frame.contentWindow === event.source && fromSite(frame)) fit(frame, data.height);
    }
  });
})();
