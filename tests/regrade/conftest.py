"""Regrade tests compare scores across runs, so a grading run must never hit a timeout because
the machine is busy (CI shares two cores). They grade under a course whose per-test timeout is
generous; the scores do not depend on the limits otherwise."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tito.paths import REPO_ROOT


@pytest.fixture(autouse=True, scope="session")
def _generous_timeouts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    data = yaml.safe_load((REPO_ROOT / "course.yml").read_text(encoding="utf-8"))
    data["course"]["grading"]["test_timeout_s"] = 60
    path: Path = tmp_path_factory.mktemp("course") / "course.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    mp = pytest.MonkeyPatch()
    mp.setenv("TITO_COURSE", str(path))
    yield
    mp.undo()
