# gpuplan — `make serve` starts the service, `make test` runs every check. Both create .venv when missing.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# `make serve` passes --host/--port/--db only when HOST, PORT or DB is given (make HOST=0.0.0.0 serve);
# otherwise GPUPLAN_HOST, GPUPLAN_PORT and GPUPLAN_DB apply, then the defaults (127.0.0.1, 8000, var/gpuplan.duckdb).
HOST ?=
PORT ?=
DB ?=
VENV := .venv
BIN := $(VENV)/bin
# Reinstall when pyproject.toml changes. `make serve` installs what serving needs; the checks add the
# test extras (pytest, mypy, ruff, Playwright, schemathesis ...) on top.
SUM := $(shell cksum pyproject.toml | cut -d' ' -f1)
SERVE_STAMP := $(VENV)/.installed-serve-$(SUM)
STAMP := $(VENV)/.installed-test-$(SUM)

# The first interpreter that is Python >= 3.12 (plain python3 may be 3.11; pyenv reads .python-version).
PYTHON ?= $(shell for p in python3.13 python3.12 python3 python; do \
	if command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; \
	then command -v $$p; break; fi; done)

.PHONY: help serve test lint typecheck unit browser bench accuracy clean

help:
	@echo "make serve   set up .venv and start the API (GPUPLAN_HOST, GPUPLAN_PORT, GPUPLAN_DB; or make HOST=… PORT=… DB=… serve)"
	@echo "make test    set up .venv with test extras; run ruff, mypy --strict and pytest"
	@echo "make bench   run the performance benchmarks in tests/perf"
	@echo "make accuracy print the throughput and memory models' accuracy tables (slow)"

$(VENV)/bin/python:
	@if [ -z "$(PYTHON)" ]; then \
		echo "error: gpuplan needs Python >= 3.12 and none was found (tried python3.13, python3.12, python3, python)." >&2; \
		echo "Install Python 3.12 (e.g. 'pyenv install 3.12') or run: make PYTHON=/path/to/python3.12 ..." >&2; \
		exit 1; fi
	@echo "creating $(VENV) with $(PYTHON) ($$($(PYTHON) --version))"
	$(PYTHON) -m venv $(VENV)

$(SERVE_STAMP): $(VENV)/bin/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	rm -f $(VENV)/.installed-*
	touch $(SERVE_STAMP)

$(STAMP): $(SERVE_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

serve: $(SERVE_STAMP)
	@echo "gpuplan: the CLI is $(BIN)/gpuplan (or 'source $(BIN)/activate' to type gpuplan); while this"
	@echo "gpuplan: server holds the database, CLI commands ask it (GPUPLAN_HOST:GPUPLAN_PORT, or --url)"
	$(BIN)/gpuplan serve $(if $(HOST),--host $(HOST)) $(if $(PORT),--port $(PORT)) $(if $(DB),--db $(DB))

lint: $(STAMP)
	$(BIN)/ruff check service pricing solver tests
	$(BIN)/ruff format --check service pricing solver tests

typecheck: $(STAMP)
	$(BIN)/mypy --strict service pricing solver

# The web pages are tested in headless Chromium: Debian's package (a browser download by Playwright
# itself does not work on these machines). Installed when missing; a failure to install is an error.
CHROMIUM ?= /usr/bin/chromium
browser:
	@if [ ! -x "$(CHROMIUM)" ]; then \
		echo "installing Debian's chromium for the browser tests"; \
		if [ "$$(id -u)" = 0 ]; then apt-get install -y chromium >/dev/null || { apt-get update >/dev/null && apt-get install -y chromium >/dev/null; }; \
		else sudo apt-get install -y chromium >/dev/null; fi; \
	fi
	@test -x "$(CHROMIUM)" || { echo "error: no Chromium at $(CHROMIUM) (set CHROMIUM=/path/to/chromium)" >&2; exit 1; }

unit: $(STAMP) browser
	GPUPLAN_CHROMIUM=$(CHROMIUM) $(BIN)/pytest

test: lint typecheck unit

bench: $(STAMP)
	$(BIN)/pytest tests/perf -m perf -p no:cacheprovider -s

accuracy: $(STAMP)
	$(BIN)/pytest tests/solver/throughput/test_accuracy.py tests/solver/memory/test_peak.py tests/solver/engine/test_accuracy.py -m "accuracy or not accuracy" -p no:cacheprovider -s -q

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
