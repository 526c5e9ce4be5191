"""Regrade tests compare scores across runs, so a grading run must never hit a timeout. Grading
deadlines are CPU seconds (a busy machine does not stop a case early), and these tests grade
under a course whose per-test limit is generous besides; the scores do not depend on the limits
otherwise. ``TITO_COURSE`` is set while a regrade test module runs, never for the rest of the
session (under pytest-xdist that would make other tests depend on which worker ran them).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from coursekit.paths import REPO_ROOT


@pytest.fixture(scope="session")
def _generous_course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = yaml.safe_load((REPO_ROOT / "course.yml").read_text(encoding="utf-8"))
    data["course"]["grading"]["test_timeout_s"] = 60
    path: Path = tmp_path_factory.mktemp("course") / "course.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(autouse=True, scope="module")
def _generous_timeouts(_generous_course: Path) -> Iterator[None]:
    """Module scope: set before the modules' own module-scoped regrade fixtures run."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TITO_COURSE", str(_generous_course))
        yield
