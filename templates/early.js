// In every page's <head>, allowed by its hash (sitebuild/policy.py): a figure's control tapped
// before main.js runs is kept, and main.js hands the taps to the figures (mhEarlyTaps).
(function () {
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
