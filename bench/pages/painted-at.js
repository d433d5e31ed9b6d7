// When the page in view was first painted, on the wall clock, in ms: its first contentful paint,
// or, without one, the end of its DOMContentLoaded
() => {
  const paint = performance.getEntriesByName("first-contentful-paint")[0];
  const nav = performance.getEntriesByType("navigation")[0];
  return performance.timeOrigin + (paint ? paint.startTime : nav.domContentLoadedEventEnd);
};
