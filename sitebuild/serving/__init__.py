"""`build.py serve` (serve.py): serving site/, rebuilding it on a save and reloading the open
page (reload.py); and the loopback server and Chromium the tests and the bench share
(loopback.py)."""
