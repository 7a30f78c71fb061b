# Two commands on a fresh machine (README, Quick start):
#   make run    the main job: caishen simulate $(RUN_ARGS) (rerun: it resumes, or prints the finished summary)
#   make test   the tests: python -m pytest $(PYTEST_ARGS)
#   make lint   ruff check . (pyproject.toml's [tool.ruff]; .ci/run runs it before the tests)
# and the documentation site (mkdocs.yml), built strictly into $(SITE_DIR) (offline; .ci/run builds it):
#   make docs   mkdocs build --strict, after installing the [dev] and [docs] extras
# Each creates $(VENV) with $(PYTHON) -m venv when it is missing and installs the package into it (editable:
# `make run` the package, `make test` with the [dev] extra), again only when pyproject.toml changed.
# People who manage their own environment use the long form of the README instead.

PYTHON ?= python3
VENV ?= .venv
RUN_ARGS ?= --rules kaihua --games 100000 --seed 7 --out runs/k1
PYTEST_ARGS ?=
SITE_DIR ?= site
BIN := $(VENV)/bin

.PHONY: run test lint docs

run: $(VENV)/.installed
	$(BIN)/caishen simulate $(RUN_ARGS)

test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(VENV)/.installed-dev
	$(BIN)/python -m ruff check .

docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict --site-dir $(SITE_DIR)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e ".[dev]"
	touch $@

$(VENV)/.installed-docs: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e ".[dev,docs]"
	touch $@ $(VENV)/.installed-dev
