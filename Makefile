# Thin targets over the tito CLI. Every target sets up what it needs itself.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TITO := $(VENV)/bin/tito
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1
export MPLBACKEND ?= Agg

.PHONY: setup setup-dev demo test lint release autograder gradebook sync lock clean

setup: $(VENV)/.installed

$(VENV)/.installed: requirements.txt requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip setuptools wheel
	$(PY) -m pip install -q -r requirements.txt -c requirements.lock
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	touch $@

# Instructor CI extras: PyTorch (CPU build, pinned exactly) for the parity suite only.
setup-dev: $(VENV)/.installed-dev

$(VENV)/.installed-dev: $(VENV)/.installed
	$(PY) -m pip install -q torch==2.13.0
	touch $@

demo: setup
	$(TITO) demo

test: setup-dev
	$(PY) -m pytest -q

lint: setup
	$(VENV)/bin/ruff check tito autograder gradebook tinytorch_ref tests datasets milestones bench
	$(VENV)/bin/mypy
	for s in autograder/suites/*/suite.py; do $(VENV)/bin/mypy "$$s" || exit 1; done

sync: setup
	$(TITO) sync

release: setup
	$(TITO) release --all

autograder: setup
	$(TITO) autograder --all

gradebook: setup
	$(TITO) gradebook build

lock: setup
	$(PY) -m pip freeze --exclude-editable | sed '1i # Full pinned environment (pip freeze). Regenerate with: make lock' > requirements.lock

clean:
	rm -rf build .pytest_cache
