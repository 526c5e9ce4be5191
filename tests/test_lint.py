"""The lint gate (STYLE item 14): ruff and mypy, run from this interpreter's environment."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# Both mypy tests use the repository's .mypy_cache: one pytest-xdist worker runs them in turn.
pytestmark = pytest.mark.xdist_group("mypy-cache")

REPO = Path(__file__).resolve().parent.parent
RUFF_PATHS = ["tito", "autograder", "gradebook", "staff", "tinytorch_ref", "tests", "tinytorch_data",
              "tinytorch_milestones", "milestones", "bench"]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=1800, check=False)


def test_ruff_clean() -> None:
    proc = _run("ruff", "check", *RUFF_PATHS)
    assert proc.returncode == 0, f"ruff check failed:\n{proc.stdout}{proc.stderr}"


def test_mypy_clean() -> None:
    """The packages, as configured by [tool.mypy] in pyproject.toml."""
    proc = _run("mypy")
    assert proc.returncode == 0, f"mypy failed:\n{proc.stdout}{proc.stderr}"


def test_mypy_suites_clean(tmp_path: Path) -> None:
    """Each hidden suite as a module of its own. They all define a module named ``suite``, so
    each is checked as a copy named after its folder (``suite_01_tensor``...), all in one mypy
    run: the standard library's, NumPy's and the harness's types are loaded once, not once a
    suite."""
    suites = sorted((REPO / "autograder" / "suites").glob("*/suite.py"))
    assert suites, "no hidden suites found"
    copies = {}
    for suite in suites:
        copy = tmp_path / f"suite_{suite.parent.name}.py"
        shutil.copyfile(suite, copy)
        copies[str(copy)] = str(suite.relative_to(REPO))
    proc = _run("mypy", *copies)
    report = proc.stdout + proc.stderr
    for copy, suite in copies.items():
        report = report.replace(copy, suite)
    assert proc.returncode == 0, f"mypy failed on hidden suites:\n{report}"
    assert f"no issues found in {len(suites)} source files" in proc.stdout, report
