"""Lanes: a looping submission's tests in several children side by side give the same grade.

The course here has a 5 s per-test timeout (the looping tests must time out in reasonable
time); every other test of these submissions takes milliseconds, so no verdict depends on
speed. While lanes compute, ``--jobs`` starts no other submission beside them.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from autograder.harness import clock
from autograder.harness.core import grade_module
from coursekit.course import load_course
from coursekit.paths import REPO_ROOT
from staff.regrade import task as regrade_task
from staff.regrade.core import regrade
from staff.regrade.run import LocalRunner, lanes_for
from staff.synthetic import synth_export


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Any:
    data = yaml.safe_load((REPO_ROOT / "course.yml").read_text(encoding="utf-8"))
    data["course"]["grading"]["test_timeout_s"] = 5
    path = tmp_path_factory.mktemp("course") / "course.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return load_course(path)


def _tests(results: dict[str, Any]) -> list[tuple[str, str, float]]:
    return [(t["name"], t["status"], t["score"]) for t in results["tests"]]


def test_lanes_for() -> None:
    assert [lanes_for(k) for k in (0, 1, 2, 3, 7)] == [1, 1, 2, 3, 3]


def test_a_looping_submission_grades_the_same_in_lanes(tmp_path: Path, course: Any) -> None:
    made = synth_export(module="01", n=1, out=tmp_path / "export", seed=5, looping=1,
                        course=course, as_zip=False)
    folder = next((tmp_path / "export").rglob("submission_*"))
    mod = course.module("01")
    one = grade_module(course=course, module=mod, submission=folder, out=tmp_path / "a.json")
    three = grade_module(course=course, module=mod, submission=folder,
                         out=tmp_path / "b.json", lanes=3)
    assert made.records[0].kind == "looping"
    assert _tests(three) == _tests(one)
    timed = [t for t in three["tests"] if "Timed out" in t["output"]]
    assert timed and three["score"] == one["score"] < 50
    assert three["extra_data"]["lanes"] == 3 and "lanes" not in one["extra_data"]


def test_regrade_grades_a_submission_that_timed_out_before_in_lanes(
        tmp_path: Path, course: Any) -> None:
    made = synth_export(module="01", n=2, out=tmp_path / "export.zip", seed=5, looping=1,
                        mix={"correct": 1.0}, course=course)
    report = regrade(export=made.path, out=tmp_path / "out", course=course, jobs=2)
    loop = next(r for r in made.records if r.kind == "looping")
    row = next(r for r in report.rows if r.submission_id == loop.submission_id)
    results = json.loads((tmp_path / "out" / row.results).read_text())
    assert results["extra_data"]["lanes"] == 3 and row.timed_out >= 1
    other = next(r for r in report.rows if r.submission_id != loop.submission_id)
    assert other.new_score == 50.0
    assert "lanes" not in json.loads((tmp_path / "out" / other.results).read_text())[
        "extra_data"]


def test_a_thread_starts_another_submission_only_while_fewer_than_jobs_children_compute(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``--jobs 2`` while two children compute (a looping submission's lanes): the next
    submission waits, and starts as soon as one of them ends."""
    started = threading.Event()

    def grade(payload: dict[str, Any], *, hide: tuple[str, ...] = ()) -> dict[str, Any]:
        started.set()
        return {"results": {"key": payload["key"]}}

    monkeypatch.setattr(regrade_task, "grade_payload", grade)
    lanes = [clock.Deadline(os.getpid(), time.monotonic() + 600) for _ in range(2)]
    runner = LocalRunner(2, ())
    try:
        for d in lanes:
            d.watch()  # computing until a sample says otherwise (none is taken here)
        handle = runner.submit({"key": "s1"}, priority=1.0)
        assert not started.wait(1.0), "a submission started beside two computing children"
        lanes[0].unwatch()
        assert started.wait(60)
        assert runner.result(handle) == {"results": {"key": "s1"}}
    finally:
        for d in lanes:
            d.unwatch()
        runner.close()
