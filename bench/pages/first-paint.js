// What observe.js saw on a first visit: the first painted element, Python ready, every long task
() => ({
  figure: Math.min(...window.__bench.element),
  ready: performance.getEntriesByName("mh-python-ready")[0].startTime,
  longtasks: window.__bench.longtasks,
})
