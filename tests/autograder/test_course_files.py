"""autograder.milestones.data: the course files the trusted parent imports by path."""

from __future__ import annotations

import threading
from pathlib import Path

from autograder.milestones.data import load_file


def test_threads_importing_one_course_file_all_get_it_whole(tmp_path: Path) -> None:
    """Gradings run in threads (--jobs): a thread that finds the module registered must never
    get it half executed (a regrade under load saw a milestone's recipes module without its
    functions, and the milestone went pending)."""
    slow = tmp_path / "slow_recipes.py"
    slow.write_text("import time\ntime.sleep(0.3)\ntotal_steps = 7\n", encoding="utf-8")
    got: list[object] = []

    def load() -> None:
        got.append(getattr(load_file(slow, "_tt_test_slow_recipes"), "total_steps", None))

    threads = [threading.Thread(target=load) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [7, 7, 7, 7]
