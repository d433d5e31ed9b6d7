// Registered before the page's own scripts run (an init script): one observer for painted
// elements, long tasks and marks. It is handed its entries in the order they were recorded, so
// once it has seen the mark "mh-bench-settled", made after Python is ready, it has seen every
// earlier long task.
window.__bench = { element: [], longtasks: [], settled: false };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if (e.entryType === "element") window.__bench.element.push(e.renderTime || e.loadTime);
    else if (e.entryType === "longtask") window.__bench.longtasks.push([e.startTime, e.duration]);
    else if (e.name === "mh-bench-settled") window.__bench.settled = true;
  }
}).observe({ entryTypes: ["element", "longtask", "mark"] });
