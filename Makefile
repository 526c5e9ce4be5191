# Thin targets over the tito CLI. Every target sets up what it needs itself.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TITO := $(VENV)/bin/tito
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1
export MPLBACKEND ?= Agg

.PHONY: setup setup-dev bytecode demo test test-all test-affected prove test-fast test-slow test-serial test-stress lint release \
	autograder gradebook sync lock clean fuzz fuzz-long bench

# Tests run in parallel (pytest-xdist, one worker per core; TEST_WORKERS=3 to override).
# Tiers are defined in tests/conftest.py (TIERS); docs/testing.md describes them.
TEST_WORKERS ?= auto
PYTEST_PAR := $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadgroup

setup: $(VENV)/.installed bytecode

# Bytecode for the repository's own packages (every top-level folder with an __init__.py) and
# the milestone scripts, written beside their sources. Where PYTHONDONTWRITEBYTECODE is set (as
# on the machines this course is developed and tested on) no process writes it, so every `tito`
# command and every grading child compiled them again: 0.26 of a module-01 grading's 1.79 CPU-s.
# Up to date this takes 0.1 s; Python ignores a .pyc whose source changed since it was written.
# The reference and the release's stubs get the checked-hash bytecode a grading puts in the
# package it builds (autograder.harness.package.write_trusted_bytecode), which it then reuses
# instead of compiling them again in every grading process (0.2 of a module-05 grading's 1.5
# CPU-s); Python imports them as usual.
PACKAGES := $(patsubst %/__init__.py,%,$(wildcard */__init__.py))
bytecode: $(VENV)/.installed
	@$(PY) -m compileall -q $(filter-out tinytorch_ref,$(PACKAGES)) milestones
	@$(PY) -m autograder.harness.package tinytorch_ref student_release/tinytorch

# pyproject.toml lists the direct dependencies (and the test/dev extras); requirements.lock
# pins every package exactly, so every machine gets the same versions.
$(VENV)/.installed: requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip setuptools wheel
	$(PY) -m pip install -q -c requirements.lock --no-build-isolation -e '.[test,dev]'
	touch $@

# Instructor CI extras: PyTorch (CPU build, pinned exactly) for the parity suite only, and the
# Dask extra (tito regrade --scheduler) its tests use.
setup-dev: $(VENV)/.installed-dev bytecode

# PyTorch without pip's byte-compiling of its thousands of modules (~13 CPU-s, 25 s of a CI run),
# then bytecode for just what `import torch` loads, written by one import (~2.5 s; an import
# without it costs 2.5 CPU-s instead of 1.2, and PYTHONDONTWRITEBYTECODE, where set, would keep
# every later import from writing it). Nothing sandboxed imports torch.
$(VENV)/.installed-dev: $(VENV)/.installed
	$(PY) -m pip install -q --no-compile torch==2.13.0
	env -u PYTHONDONTWRITEBYTECODE $(PY) -c "import torch"
	$(PY) -m pip install -q -c requirements.lock --no-build-isolation -e '.[test,dev,dask]'
	touch $@

demo: setup
	$(TITO) demo

# What CI runs (.ci/run): every tier, whatever changed. Slowest tests listed at the end.
test: setup-dev
	$(PYTEST_PAR) --durations=25 --durations-min=1

# The same as `make test` (its name before `make test` ran every tier).
test-all: test

# A quick local check: the fast and parity tiers whole, and of the other slow tiers the tests
# whose inputs changed since the last commit proven on every tier (.ci/proven; tests/impact.py
# says how, docs/testing.md why).
test-affected: setup-dev
	$(PYTEST_PAR) --tier=affected --durations=25 --durations-min=1

# Every tier in a clean clone of HEAD (bash .ci/run); on a pass, HEAD goes into .ci/proven
# (commit it): from then on `make test-affected` runs only what later changes need.
prove:
	bash .ci/prove

# What every change needs: none of the slow tiers (TIERS in tests/conftest.py).
test-fast: setup-dev
	$(PYTEST_PAR) --tier=fast --durations=10

# Only the slow tiers.
test-slow: setup-dev
	$(PYTEST_PAR) --tier=slow --durations=25

# One process, in collection order (to compare, or to debug a parallel failure).
test-serial: setup-dev
	$(PY) -m pytest -q --durations=25 --durations-min=1

# Two clean clones of HEAD running `make test` at once (ROUNDS=5 for five rounds;
# STRESS_CMD='make test-affected' for the quick selection).
test-stress:
	bash .ci/stress

lint: setup
	$(VENV)/bin/ruff check coursekit coursebuild tito autograder gradebook staff tinytorch_ref tests tinytorch_data tinytorch_milestones milestones bench
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

# The differential fuzzer's long tier (tinytorch_ref against PyTorch; docs/conformance.md):
# every built module, or FUZZ_MODULES="09 13"; FUZZ_REPORT=file keeps the classes found so far.
FUZZ_CASES ?= 1000000
FUZZ_SEED ?= 0
FUZZ_JOBS ?= 2
FUZZ_MODULES ?=
FUZZ_REPORT ?= build/fuzz-long.txt
fuzz-long: setup-dev
	mkdir -p $(dir $(FUZZ_REPORT))
	PYTHONPATH=tests $(PY) -m fuzz --cases $(FUZZ_CASES) --seed $(FUZZ_SEED) --jobs $(FUZZ_JOBS) \
		--report $(FUZZ_REPORT) $(foreach m,$(FUZZ_MODULES),--module $(m))

fuzz: fuzz-long

# Framework speed: the same workloads in tinytorch_ref and PyTorch (docs/performance.md).
BENCH_RUNS ?= 3
bench: setup-dev
	$(PY) bench/framework.py --runs $(BENCH_RUNS)

lock: setup
	$(PY) -m pip freeze --exclude-editable | sed '1i # Full pinned environment (pip freeze). Regenerate with: make lock' > requirements.lock

clean:
	rm -rf build .pytest_cache
