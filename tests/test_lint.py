"""The lint gate (STYLE item 14): ruff and mypy, run from this interpreter's environment."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# Both mypy tests use the repository's .mypy_cache: one pytest-xdist worker runs them in turn.
pytestmark = pytest.mark.xdist_group("mypy-cache")

REPO = Path(__file__).resolve().parent.parent
RUFF_PATHS = ["tito", "autograder", "gradebook", "tinytorch_ref", "tests", "datasets", "milestones",
              "bench"]


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


def test_mypy_suites_clean() -> None:
    """Each hidden suite on its own: they all define a module named ``suite``."""
    suites = sorted((REPO / "autograder" / "suites").glob("*/suite.py"))
    assert suites, "no hidden suites found"
    failures = []
    for suite in suites:
        proc = _run("mypy", str(suite.relative_to(REPO)))
        if proc.returncode != 0:
            failures.append(f"{suite.parent.name}:\n{proc.stdout}{proc.stderr}")
    assert not failures, "mypy failed on hidden suites:\n" + "\n".join(failures)
