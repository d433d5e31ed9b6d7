// Optional, for a course page that embeds Many Heads figures: add this script once and every
// embedded figure's <iframe> takes the height its content reports, so no scrollbars appear.
// Only frames that show a page of the Many Heads site this script came from may resize
// themselves, and only by a message from that very frame and that site's origin: another
// frame on the course page (an advert, a video) cannot resize anything.
(() => {
  if (!document.currentScript?.src) return; // copied inline: no site to trust frames of
  const site = new URL("../", document.currentScript.src);

  function fromSite(frame) {
    const src = new URL(frame.getAttribute("src") || "about:blank", document.baseURI);
    return src.origin === site.origin && src.pathname.startsWith(site.pathname);
  }

  window.addEventListener("message", (event) => {
    const data = event.data;
    if (event.origin !== site.origin) return;
    if (!data || data.type !== "manyheads:height" || typeof data.height !== "number") return;
    for (const frame of document.querySelectorAll("iframe")) {
      if (frame.contentWindow === event.source && fromSite(frame)) {
        frame.style.height = `${Math.ceil(data.height) + 2}px`;
      }
    }
  });
})();
