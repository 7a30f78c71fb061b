# Two commands on a fresh machine (README, Quick start):
#   make run    the main job: caishen simulate $(RUN_ARGS) (rerun: it resumes, or prints the finished summary)
#   make test   the tests: python -m pytest $(PYTEST_ARGS)
# Each creates $(VENV) with $(PYTHON) -m venv when it is missing and installs the package into it (editable:
# `make run` the package, `make test` with the [dev] extra), again only when pyproject.toml changed.
# People who manage their own environment use the long form of the README instead.

PYTHON ?= python3
VENV ?= .venv
RUN_ARGS ?= --rules kaihua --games 100000 --seed 7 --out runs/k1
PYTEST_ARGS ?=
BIN := $(VENV)/bin

.PHONY: run test

run: $(VENV)/.installed
	$(BIN)/caishen simulate $(RUN_ARGS)

test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest $(PYTEST_ARGS)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e ".[dev]"
	touch $@
