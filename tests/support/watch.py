"""What a test's pages must not do: log a console error, throw an uncaught error, or request
anything from another origin (less the errors the test declared), and the relay that passes a
shared page's events to the test that holds it."""

import re

OWN_ORIGINS = ("http://127.0.0.1:", "data:", "blob:")


class Watch:
    """What the pages of one test do that the test must not let pass: console errors, uncaught
    errors (from the pages, their frames and workers) and requests to other origins; less the
    errors the test declared with expect()."""

    def __init__(self):
        self.errors, self.foreign, self.expected = [], [], []

    def attach(self, context):
        context.on("console", self._console)
        context.on("weberror", self._weberror)
        context.on("request", self._request)

    def _weberror(self, error):
        self.errors.append(f"uncaught: {error.error}")

    def _console(self, message):
        if message.type in ("error", "assert"):
            url = message.location.get("url")
            self.errors.append(f"{message.text} ({url})" if url else message.text)

    def _request(self, request):
        if not request.url.startswith(OWN_ORIGINS):
            self.foreign.append(request.url)

    def expect(self, *patterns):
        """Declare errors the test provokes on purpose, as regular expressions."""
        self.expected += [re.compile(p) for p in patterns]
        return self

    def problems(self):
        """Everything wrong so far, in words; empty when the pages behaved as declared."""
        unexpected = [e for e in self.errors if not any(p.search(e) for p in self.expected)]
        stale = [p.pattern for p in self.expected if not any(p.search(e) for e in self.errors)]
        return (
            [f"unexpected error: {e}" for e in unexpected]
            + [f"request to another origin: {u}" for u in self.foreign]
            + [f"declared error that never happened: {p!r}" for p in stale]
        )


class Relay:
    """A shared page's context's events, passed to the watch of the test that holds the page;
    while no test holds it, to a watch of its own, so that nothing the page does is lost."""

    def __init__(self, context):
        self.release(None)
        context.on("console", lambda message: self.watch._console(message))
        context.on("weberror", lambda error: self.watch._weberror(error))
        context.on("request", lambda request: self.watch._request(request))

    def hold(self, watch):
        self.watch = watch

    def release(self, test):
        """No test holds the page now; TEST (its id) was the last that did."""
        self.watch, self.after = Watch(), test
