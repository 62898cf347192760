# Two commands do all the set-up: `make serve` and `make test`. Both create .venv on
# first use and install the pinned versions from constraints.txt.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: serve test lint build record check compare bundle import device-record figures notebook bench clean

# The packages depend on pyproject.toml's [project] and [build-system] tables only: an edit of
# the recorder's targets or lessons must not reinstall everything. DEPS is rewritten only
# when those tables change, so its date moves only then.
DEPS := $(VENV)/.project-deps

$(DEPS): pyproject.toml
	@mkdir -p $(VENV)
	@$(PYTHON) -c 'import json, pathlib, sys, tomllib; p = tomllib.loads(pathlib.Path("pyproject.toml").read_text()); new = json.dumps([p.get("project"), p.get("build-system")], sort_keys=True); f = pathlib.Path(sys.argv[1]); f.exists() and f.read_text() == new or f.write_text(new)' $@

$(STAMP): $(DEPS) constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed: run make PYTHON=python3.11 ...")'
	@# Every snippet runs in a bubblewrap sandbox: installed here where that is possible (root).
	@command -v bwrap >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
		apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null; } || \
		echo "bubblewrap is not installed: snippets will not run until it is (sudo apt-get install bubblewrap)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[lesson,docs,test]'
	@touch $(STAMP)

# The preview never stops on a problem: a broken claim, or a missing or stale recording, is a
# box on its page (the strict build and the tests still fail on it); it rebuilds when a page,
# a snippet, a recording or the configuration changes.
serve: $(STAMP)  ## preview the site on http://127.0.0.1:8000, rebuilding on every save
	$(BIN)/mkdocs serve --dirty --no-strict --dev-addr 127.0.0.1:8000 -w snippets -w recordings -w pyproject.toml

test: lint  ## lint, format and types, then the whole suite: pages, claims, recordings, recorder, site
	$(BIN)/python -m pytest -n auto --dist loadfile $(PYTEST_ARGS)

# What the tools can catch, they catch before the tests run: ruff (lint and format) over the
# engine, scripts, tests and snippets; mypy over the same. The snippets are checked on their
# own (scripts, not a package) and, being plain scripts for readers, without annotations:
# mypy still checks every call in them, but an empty list needs no declared type there.
lint: $(STAMP)  ## ruff check, ruff format --check and mypy, with zero findings
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/mypy --disable-error-code var-annotated snippets/*/*.py

build: $(STAMP)  ## the site into site/, failing on any warning
	$(BIN)/mkdocs build --strict

# TARGET=NAME records one kind of machine, SNIPPETS=... those snippets, FORCE=1 re-records
# fresh ones too; then everything made from the recordings is redrawn, so one command
# leaves the tree ready for `make test`.
record: $(STAMP)  ## record what is missing or stale on this machine, then redraw the notebook and figures
	$(BIN)/python scripts/record_runs.py $(if $(TARGET),--target $(TARGET)) $(if $(FORCE),--force) $(SNIPPETS)
	$(BIN)/python scripts/make_notebook.py
	$(BIN)/python scripts/make_figures.py

check: $(STAMP)  ## list missing, stale and failed recordings without running anything
	$(BIN)/python scripts/record_runs.py --check

# A reader's own machine beside the recorded ones: SNIPPETS=... those snippets only, TARGET=NAME
# the kind to run as (default: the first of [tool.recorded] auto this machine is).
compare: $(STAMP)  ## run the snippets here and print this machine's verdicts and timings beside the recorded ones; writes nothing
	$(BIN)/python scripts/record_runs.py --compare $(if $(TARGET),--target $(TARGET)) $(SNIPPETS)

# A reader's machine, sent as one file: every snippet on every kind this machine is, recorded
# in a scratch folder (recordings/ untouched) into bundles/<kinds>-<machine>-<date>.json.
bundle: $(STAMP)  ## record every snippet on every kind this machine is into one file in bundles/, to send
	@scratch=$$(mktemp -d) && trap 'rm -rf "$$scratch"' EXIT && \
		$(BIN)/python scripts/record_runs.py --out "$$scratch" --bundle bundles/

# BUNDLES=FILE... as untrusted input: the recorder's --import, then a line per recording
# (the pages' claims in each of its runs, its verdicts) and the strict build.
import: $(STAMP)  ## import BUNDLES=... into recordings/ and say what each recording shows
	$(BIN)/python scripts/review_bundles.py $(BUNDLES)

# On a lent GPU machine, with the image's own python3 and torch (no .venv, no install): every
# kind it is (CUDA and its host CPU's kinds), every snippet, into one bundle in $(OUT), what
# renews most first, within 420 s by the stored durations so that one 10-minute call holds it.
OUT ?= bundles
# The lent image may lack bubblewrap and reaches no network: there, and only there, the runs go
# unsandboxed; what runs is the working tree sent with the call.
device-record:  ## on a lent GPU machine: record every kind it is into one bundle in OUT=
	@scratch=$$(mktemp -d) && trap 'rm -rf "$$scratch"' EXIT && \
		python3 scripts/record_runs.py --force --out "$$scratch" --bundle "$(OUT)/" --budget 420 \
		$$(command -v bwrap >/dev/null || echo --allow-unsandboxed)

figures: $(STAMP)  ## redraw docs/figures/ from the recordings
	$(BIN)/python scripts/make_figures.py

notebook: $(STAMP)  ## regenerate docs/lesson.ipynb from the pages and recordings
	$(BIN)/python scripts/make_notebook.py

LIGHTHOUSE_VERSION := 12.2.3

# BEFORE=REF measures that commit too, in a column beside today's.
bench: $(STAMP)  ## measure the speed and reading goals (medians of 3 runs); see docs/contributing.md
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[bench]'
	@test -x .cache/npm/node_modules/.bin/lighthouse || ! command -v npm >/dev/null || \
		npm install --prefix .cache/npm --no-audit --no-fund --silent --save-exact lighthouse@$(LIGHTHOUSE_VERSION)
	$(BIN)/python scripts/bench.py $(if $(BEFORE),--before $(BEFORE))

clean:
	rm -rf site .pytest_cache .cache
