"""autograder.milestones.data: the course packages the trusted parent imports on first use."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from autograder.milestones import data


def _in_threads(load, n: int = 4) -> list[object]:
    got: list[object] = []

    def one() -> None:
        got.append(getattr(load(), "total_steps", None))

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return got


def test_threads_importing_one_course_module_all_get_it_whole(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    """Gradings run in threads (--jobs): a thread that finds the module being imported must
    never get it half executed (a regrade under load saw a milestone's recipes module without
    its functions, and the milestone went pending). The module takes 0.3 s to run: the
    threads that come later wait for it."""
    pkg = tmp_path / "tt_slow_course"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "recipes.py").write_text("import time\ntime.sleep(0.3)\ntotal_steps = 7\n",
                                    encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("tt_slow_course", "tt_slow_course.recipes"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    assert _in_threads(lambda: data.course_module("tt_slow_course.recipes")) == [7, 7, 7, 7]


def test_the_recipes_imported_afresh_in_threads_are_whole(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """The real recipes, not yet imported, asked for by four gradings at once."""
    for name in [n for n in sys.modules if n.split(".")[0] == "tinytorch_milestones"]:
        monkeypatch.delitem(sys.modules, name)
    got = _in_threads(data.recipes)
    assert len(got) == 4 and all(callable(f) for f in got), got
    assert data.recipes().__name__ == "tinytorch_milestones.recipes"
    assert data.loaders().__name__ == "tinytorch_data.loaders"
