// In every page's <head>, allowed by its hash (sitebuild/pipeline/policy.py): a figure's control
// tapped before main.js runs is kept, and main.js hands the taps to the figures (mhEarlyTaps).
// A link holding a figure's state (?FIGURE.FIELD=…) and naming no place is given that figure's
// id as its place, before the page is read: the browser's own anchor scroll opens the page there
// as soon as it is parsed, not a script's jump later (not in an embed or a course package).
(function () {
  var page = document.documentElement;
  var linked = /(?:^\?|&)([\w-]+)\.[\w-]+=/.exec(location.search);
  var framed = page.classList.contains("embedded") || page.hasAttribute("data-lms");
  if (linked && !location.hash && !framed) {
    history.replaceState(history.state, "", location.pathname + location.search + "#" + linked[1]);
  }
  var taps = [];
  var keep = function (e) {
    var at = e.target.closest && e.target.closest("[data-key]");
    if (at && at.closest("figure[data-figure], [data-slot-of], [data-target]")) taps.push(at);
  };
  document.addEventListener("click", keep, true);
  self.mhEarlyTaps = function () {
    document.removeEventListener("click", keep, true);
    return taps;
  };
})();
