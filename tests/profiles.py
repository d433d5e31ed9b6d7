"""Warm browser profiles for test pages: a page's Python starts without compiling Pyodide again.

Chromium keeps the machine code it compiled for a page's WebAssembly (Pyodide's runtime, compiled
as it streams in) in its profile's code cache, beside the HTTP cache; a new browser context
(Playwright's `new_context`) is off the record and has neither, so each test's page compiled the
10 MB runtime again: about 2 of the 6 processor-seconds a Python start took (bench/RESULTS.md).

So the test pages (conftest's `new_page` and `ready_page`) are pages of persistent profiles, one
Chromium each, kept for the pytest process and lent to one page at a time: a profile's options
are the page's context options less its viewport, which is set on the page. When a page is given
back, its profile's pages are closed, its routes taken off, and every origin it reached is wiped
of cookies and every kind of storage (local storage, IndexedDB, Cache Storage, service
workers...). Each page starts, as in a new context, with no storage of its own and none another
page can touch; only the HTTP cache and the code cache are warm, as on a reader's second visit.
The tests' servers send `Cache-Control: no-cache`, so a page still asks them for every file
(answered 304 when it has not changed): a test sees the same requests, and a file changed on the
server is fetched again. A profile whose borrower failed, or that a test closed, is closed.

A new profile starts with a copy of the caches of the one that keeps the most compiled code, so
that its first page is as quick as its next ones."""

import contextlib
import shutil
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from sitebuild.serving.loopback import CHROMIUM_ARGS, HEADLESS_SHELL

DEFAULT_VIEWPORT = {"width": 1280, "height": 720}  # Playwright's, for a context that names none
CACHES = ("Default/Cache", "Default/Code Cache")  # in a profile's folder: HTTP, compiled code


class Profile:
    """One persistent Chromium profile, who it is lent to and the origins its pages reached."""

    def __init__(self, playwright, folder, key, options, relay, seed=None):
        """A profile in FOLDER (new); SEED: a profile whose caches this one starts with (copied:
        each Chromium has its own), so that even its first page finds Pyodide compiled."""
        self.key, self.folder = key, tempfile.mkdtemp(prefix="profile-", dir=folder)
        for cache in CACHES if seed else ():
            try:
                shutil.copytree(Path(seed.folder) / cache, Path(self.folder) / cache)
            except (OSError, shutil.Error):  # none yet, or a file going as it was copied
                shutil.rmtree(Path(self.folder) / cache, ignore_errors=True)
        self.context = playwright.chromium.launch_persistent_context(
            self.folder, executable_path=HEADLESS_SHELL, args=CHROMIUM_ARGS, **options
        )
        self.keeper = self.context.pages[0]  # the profile's first page, kept open and blank
        self.cdp = self.context.new_cdp_session(self.keeper)
        self.origins, self.owner, self.closed = set(), None, False
        self.context.on("close", lambda _: setattr(self, "closed", True))
        self.context.on("request", self._reached)
        self.relay = relay(self.context)

    def _reached(self, request):
        parts = urlsplit(request.url)
        if parts.scheme in ("http", "https"):
            self.origins.add(f"{parts.scheme}://{parts.netloc}")

    def compiled(self):
        """How much compiled code the profile keeps (bytes)."""
        size = 0
        for file in Path(self.folder, CACHES[1]).rglob("*"):
            with contextlib.suppress(OSError):  # gone as it was counted
                size += file.stat().st_size
        return size

    def pages(self):
        return [page for page in self.context.pages if page is not self.keeper]

    def lend(self, watch, owner, viewport):
        self.owner = owner
        self.relay.hold(watch)
        page = self.context.new_page()
        page.profile = self
        if viewport:
            page.set_viewport_size(viewport)
        return page

    def wipe(self):
        """Close the borrower's pages, take off its routes and wipe the storage of the origins
        they reached: the profile is then as a new context would be, caches aside."""
        for page in self.pages():
            page.close()
        self.context.unroute_all(behavior="ignoreErrors")
        self.context.clear_cookies()
        self.context.clear_permissions()
        self.context.set_offline(False)
        for origin in sorted(self.origins):
            self.cdp.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"})
        self.origins.clear()

    def close(self):
        if not self.closed:
            self.context.close()
        shutil.rmtree(self.folder, ignore_errors=True)


class Profiles:
    """The warm profiles of one pytest process."""

    def __init__(self, playwright, relay, folder):
        """RELAY(context): what passes the context's events to the watch of the test that holds
        the page (Relay, tests/support/watch.py); FOLDER: where the profiles' folders go."""
        self.playwright, self.relay, self.folder, self.kept = playwright, relay, folder, []

    def lend(self, watch, owner, options):
        """A page with no storage in a profile with OPTIONS (context options), lent to OWNER (an
        object of the borrower's own) and watched by WATCH."""
        options = dict(options)
        viewport = options.pop("viewport", DEFAULT_VIEWPORT)
        if viewport is None:  # the page takes the window's size: a profile's option
            options["no_viewport"] = True
        key = repr(sorted(options.items()))
        for profile in [p for p in self.kept if p.closed]:
            self.kept.remove(profile)
            profile.close()
        free = [p for p in self.kept if p.key == key and p.owner is None]
        # a profile whose pages its owner closed: wiped, it serves the owner's next page
        done = [p for p in self.kept if p.key == key and p.owner is owner and not p.pages()]
        if done and not free:
            done[0].wipe()
            free = done
        if not free:
            seed = max(self.kept, key=Profile.compiled, default=None)
            free = [Profile(self.playwright, self.folder, key, options, self.relay, seed)]
            self.kept.append(free[0])
        return free[0], free[0].lend(watch, owner, viewport)

    def give_back(self, profile, test, failed):
        """TEST (its id) is done with PROFILE (and FAILED, or not): wipe the profile for the
        next page, or close it if the test failed or closed it."""
        if profile not in self.kept:
            return
        if not failed and not profile.closed:
            try:
                profile.wipe()
                profile.relay.release(test)
                profile.owner = None
                return
            except Exception:
                self.kept.remove(profile)
                profile.close()
                raise
        self.kept.remove(profile)
        profile.relay.release(test)
        profile.close()

    def close(self):
        for profile in self.kept:
            profile.close()
        self.kept.clear()
