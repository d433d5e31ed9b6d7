// Optional, for a course page that embeds Many Heads figures: add this script once and every
// embedded figure's <iframe> takes the height its content reports, so no scrollbars appear.
// Only a frame showing a figure of the Many Heads site this script came from (its embed/ folder)
// may resize itself, and only by a message from that very frame's window and that site's
// origin: another frame on the course page (an advert, a video) cannot resize anything. What
// a frame shows is read from the frame itself where the course page may read it (a course on
// the site's own origin: a frame whose src names a figure but that shows another page of the
// origin, or its srcdoc, is refused); elsewhere the browser tells only its origin, so its src
// must name a figure and the message come from the site's origin. It declares nothing
// global, so a page may include it once per figure.
(() => {
  if (!document.currentScript?.src) return; // copied inline: no site to trust frames of
  const site = new URL("../", document.currentScript.src);
  const figures = new URL("embed/", site);

  const isFigure = (url) => url.origin === figures.origin &&
    url.pathname.startsWith(figures.pathname);

  // whether FRAME shows a figure of the site: its own address where this page may read it,
  // else its src (the message's origin is checked as well)
  function showsFigure(frame) {
    let shown = null;
    try {
      shown = new URL(frame.contentWindow.location.href);
    } catch {
      // another origin's document: only its origin is known, from the message
    }
    if (shown) return isFigure(shown);
    return isFigure(new URL(frame.getAttribute("src") || "about:blank", document.baseURI));
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
    if (event.origin !== site.origin || !event.source) return;
    if (!data || data.type !== "manyheads:height") return;
    if (!Number.isFinite(data.height) || data.height < 0) return;
    for (const frame of document.querySelectorAll("iframe")) {
      if (frame.contentWindow === event.source && showsFigure(frame)) fit(frame, data.height);
    }
  });
})();
