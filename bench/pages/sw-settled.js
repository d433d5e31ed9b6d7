// Whether the page's service worker is settled: no newer version of it still installing or
// waiting (serve's every build is a new one), so that a save is not timed against its install
async () => {
  const registration = await navigator.serviceWorker.getRegistration();
  return !registration || (!registration.installing && !registration.waiting);
};
