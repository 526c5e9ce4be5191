"""Shared fixtures, the hermetic test environment, and the test tiers.

Hermetic: every test process (the pytest-xdist workers too) gets its own temporary HOME with
IPython, Jupyter and Matplotlib state below it, so two runs of the suite on one machine (two
clones, two workers) share no files through the user's home; it lies in the run's own
temporary folder (tests/run_folder.py) and goes with it.

Tiers (markers, see ``TIERS``): a test is put in a slow tier by where it lives, so the tests
a new module adds to these files and folders are tiered without anyone listing them. The
fast tier (``make test-fast``) is everything else; ``make test`` runs every tier.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# Property tests are derandomized: the same examples every run, so CI (and any score built on
# them) is reproducible. HYPOTHESIS_PROFILE=explore searches more widely on a developer's box.
# No example database: nothing is written to .hypothesis/ and no run depends on another's.
# No verdict depends on the machine's speed: no deadline, and no "too slow" health check (a
# busy machine made input generation "slow" and failed a correct test).
_UNTIMED = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("grading", derandomize=True, max_examples=60, print_blob=True,
                          database=None, **_UNTIMED)
settings.register_profile("explore", max_examples=1000, **_UNTIMED)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "grading"))

TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

import impact  # noqa: E402 - from tests/, on the path from here
import run_folder  # noqa: E402

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")


# One temporary folder per run, removed at its end (and after a killed run, by the next):
# tests/run_folder.py. Everything below tempfile's folder lands in it from here on.
run_folder.enter()

_HOME = Path(tempfile.mkdtemp(prefix="tt-test-home-"))  # removed with the run's folder
os.environ.update({
    "HOME": str(_HOME), "IPYTHONDIR": str(_HOME / ".ipython"),
    "JUPYTER_RUNTIME_DIR": str(_HOME / "jupyter-runtime"),
    "MPLCONFIGDIR": str(_HOME / "matplotlib"), "XDG_CACHE_HOME": str(_HOME / ".cache"),
})

#: tier -> node-id prefixes (relative to tests/). Everything else is the fast tier.
TIERS: dict[str, tuple[str, ...]] = {
    "mutation": ("autograder/test_mutation.py::test_every_module_suite_kills",),
    "parity": ("parity/",),
    "milestone": ("milestones/test_training.py", "milestones/test_scripts.py",
                  "milestones/test_transformer.py::test_recipes_alone_train",
                  "milestones/test_transformer.py::test_training_is_reproducible",
                  "milestones/test_transformer.py::test_reference_passes",
                  "milestones/test_transformer.py::test_plausible_bug",
                  "milestones/test_transformer.py::test_script",
                  "milestones/test_mlperf.py::test_trainer_measures",
                  "milestones/test_mlperf.py::test_reference_passes",
                  "milestones/test_mlperf.py::test_plausible_bug",
                  "milestones/test_mlperf.py::test_script",
                  "milestones/test_cifar.py::test_script_t", "milestones/test_cifar.py::test_script_w",
                  "milestones/test_cifar.py::test_weights_fail"),
    "notebook": ("test_student_notebooks.py",),
    "student": ("test_student_week.py",),
    "grading": ("test_demo.py", "test_sample_class.py", "test_roles.py", "autograder/test_adversarial",
                "autograder/test_gradescope.py", "autograder/test_cifar_grading.py::test_gradescope",
                "autograder/test_goldens_banks.py", "autograder/test_course_side.py",
                "autograder/test_grade_command.py", "autograder/test_under_load.py",
                "regrade/"),
    "authoring": ("test_module_new.py",
                  "test_tiers.py::test_right_after_make_setup_pytest_collects_without_torch",
                  "test_authoring.py::test_every_stub_has_a_public_check_of_its_own"),
    "alternatives": ("test_alternatives.py",),
}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--tier", choices=("all", "fast", "slow", "affected"), default="all",
                     help="fast: only tests in no slow tier (TIERS in tests/conftest.py); "
                          "slow: only the slow tiers; affected: the fast tier and the slow "
                          "tests whose inputs changed since .ci/proven (tests/impact.py); "
                          "all (default): everything")


def _affected_scope(config: pytest.Config) -> "impact.Scope":
    """``--tier=affected``'s scope, decided once by the controlling process (an xdist worker
    gets it from there, so every worker collects the same tests)."""
    scope = getattr(config, "_tt_scope", None)
    if scope is None:
        workerinput = getattr(config, "workerinput", None)
        if workerinput is not None:
            if "tt_scope" not in workerinput:
                raise pytest.UsageError("--tier=affected: the worker got no scope from the "
                                        "controller (tests/conftest.py pytest_configure_node)")
            scope = impact.Scope.from_json(workerinput["tt_scope"])
        else:
            try:
                modules, _ = _course_names(config)
            except Exception as exc:  # a broken course.yml: every test runs (and says so)
                scope = impact.Scope(True, f"course.yml unreadable ({exc}): every test runs")
            else:
                scope = impact.scope(TESTS.parent, modules)
        config._tt_scope = scope  # type: ignore[attr-defined]
    return scope


def _course_names(config: pytest.Config) -> tuple[dict[str, int], dict[str, int]]:
    """course.yml's module and milestone names (:func:`impact.course_names`), read once."""
    names = getattr(config, "_tt_course_names", None)
    if names is None:
        from coursekit.course import load_course

        names = config._tt_course_names = impact.course_names(load_course())  # type: ignore[attr-defined]
    return names


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """(pytest-xdist) hand the controller's ``--tier=affected`` scope to each worker."""
    if node.config.getoption("--tier") == "affected":
        node.workerinput["tt_scope"] = _affected_scope(node.config).to_json()


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Say what ``--tier=affected`` kept and why, at the end of the run (CI's log), and
    which parity files were not collected because PyTorch is not installed."""
    if config.getoption("--tier") == "affected":
        terminalreporter.write_line(f"--tier=affected: {_affected_scope(config).reason}")
    left = getattr(config, "_tt_no_torch", [])
    if left:
        terminalreporter.write_line(
            f"PyTorch is not installed (make setup, not make setup-dev): the {len(left)} "
            "parity test file(s) were not collected; `make test` installs it and runs them",
            yellow=True)


def _torch_missing() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("torch") is None
    except (ImportError, ValueError):
        return True


_NO_TORCH = _torch_missing()


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Without PyTorch (``make setup`` installs none: it is an instructor-CI extra), the
    parity tier cannot even be imported: leave its files out of collection, so ``pytest -k
    ...`` works right after ``make setup``, and say so at the end. A file named on the command
    line is still collected (and fails, saying torch is missing)."""
    if not _NO_TORCH or collection_path.suffix != ".py":
        return None
    try:
        rel = collection_path.resolve().relative_to(TESTS).as_posix()
    except ValueError:
        return None
    if not rel.startswith(TIERS["parity"]) or not rel.split("/")[-1].startswith("test_"):
        return None
    named = {Path(str(a).split("::")[0]).resolve() for a in config.args}
    if collection_path.resolve() in named:
        return None
    left = getattr(config, "_tt_no_torch", None)
    if left is None:
        left = config._tt_no_torch = []  # type: ignore[attr-defined]
    left.append(rel)
    return True


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    want = config.getoption("--tier")
    scope = _affected_scope(config) if want == "affected" else None
    named: tuple[dict[str, int], dict[str, int]] = ({}, {})
    if scope is not None and not scope.everything:
        named = _course_names(config)
    keep: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    used: set[str] = set()
    for item in items:
        rel = Path(str(item.path)).resolve().relative_to(TESTS).as_posix()
        node = rel + item.nodeid[item.nodeid.index("::"):] if "::" in item.nodeid else rel
        tiers = [tier for tier, prefixes in TIERS.items() if node.startswith(prefixes)]
        used.update(p for prefixes in TIERS.values() for p in prefixes if node.startswith(p))
        for tier in tiers:
            item.add_marker(getattr(pytest.mark, tier))
        if scope is not None:
            if not scope.keeps("tests/" + rel, tiers, impact.modules_named(item.nodeid, *named)):
                dropped.append(item)
                continue
        elif want != "all" and bool(tiers) != (want == "slow"):
            dropped.append(item)
            continue
        keep.append(item)
    stale = [p for prefixes in TIERS.values() for p in prefixes if p not in used
             and not (_NO_TORCH and p in TIERS["parity"])]  # (left out: pytest_ignore_collect)
    if config.args_source == pytest.Config.ArgsSource.TESTPATHS:
        # the whole suite was collected: a prefix matching nothing is a renamed test or file.
        # The list is kept for tests/test_tiers.py, which in such a run (an xdist worker's too)
        # reads it instead of collecting the whole suite again.
        config._tt_stale_tiers = stale  # type: ignore[attr-defined]
        if stale and not hasattr(config, "workerinput"):
            # (not in an xdist worker: a worker that stops at collection reads as a crash with
            # no message; tests/test_tiers.py fails there instead)
            raise pytest.UsageError(f"tests/conftest.py TIERS: no test matches {stale}")
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


_SHARED = re.compile(r"""scope=["'](module|session)["']|xdist_group""")


def _shares_state(module_path: str) -> bool:
    """A test file whose tests share something costly or on disk: a module- or session-scoped
    fixture of its own (built once per worker) or an explicit ``xdist_group`` mark."""
    path = TESTS.parent / module_path
    try:
        return bool(_SHARED.search(path.read_text(encoding="utf-8")))
    except OSError:
        return False


def _in_slow_tier(nodeid: str) -> bool:
    """Whether a test (its node id from the repository root) is in one of the slow TIERS."""
    rel = nodeid.removeprefix("tests/")
    return any(rel.startswith(prefixes) for prefixes in TIERS.values())


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` (what ``make test`` uses): every test is its own unit of work, except
    that the tests of a file that shares state (:func:`_shares_state`) go to one worker
    together, and the slow tiers' units are served first (``tests/xdist_groups.py``)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist_groups import FileGroups  # noqa: PLC0415 - only in a parallel run

    def scope(nodeid: str) -> str:
        module = nodeid.split("::", 1)[0]
        return module if _shares_state(module) else nodeid

    return FileGroups(config, scope=scope, slow=_in_slow_tier)


@pytest.fixture(scope="session")
def course():
    from coursekit.course import load_course

    return load_course()
