// build.py serve adds this script to the pages it sends (sitebuild/serving/reload.py), never to a
// built site: reload the page once serve has built a newer site than the one the page came from. It
// is served as /__serve/reload.js?build=N, and asks /__serve/build which build is served now.
const here = new URL(import.meta.url);
const built = here.searchParams.get("build");
const served = new URL("build", here);

async function poll() {
  try {
    const answer = await fetch(served, { cache: "no-store" });
    if (answer.ok && (await answer.text()).trim() !== built) {
      location.reload();
      return;
    }
  } catch {
    // serve is stopped or busy: ask again
  }
  setTimeout(poll, 150);
}

poll();
