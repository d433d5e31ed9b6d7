// build.py serve adds this script to the pages it sends (sitebuild/serving/reload.py), never to a
// built site: reload the page once serve has built a newer site than the one the page came from. It
// is served as /__serve/reload.js?build=N, and asks /__serve/build?seen=N which build is served
// now; serve holds that question until a newer build is served (or a while has passed), and says
// in a header whether it held it: one it answered at once is asked again a little later.
const here = new URL(import.meta.url);
const built = here.searchParams.get("build");
const served = new URL(`build?seen=${encodeURIComponent(built)}`, here);

async function poll() {
  let later = 400;
  try {
    const answer = await fetch(served, { cache: "no-store" });
    if (answer.ok && (await answer.text()).trim() !== built) {
      location.reload();
      return;
    }
    if (answer.ok && answer.headers.get("X-Serve-Held") === "yes") later = 0;
  } catch {
    // serve is stopped or busy: ask again
  }
  setTimeout(poll, later);
}

poll();
