"""Lanes: a looping submission's tests in several children side by side give the same grade.

The course here has a 2 CPU-s per-test timeout (the looping tests must time out in reasonable
time: the looper spends the limit on each of its four looping tests, in every grading); every
other test of these submissions takes milliseconds of CPU, and the limit is CPU time, so no
verdict depends on speed or load. ``--jobs`` workers take the slowest expected submission first.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from autograder.harness.core import grade_module
from coursekit.course import load_course
from coursekit.paths import REPO_ROOT
from staff.regrade.core import regrade
from staff.regrade.pool import LocalRunner
from staff.regrade.run import lanes_for
from staff.synthetic import synth_export

TIMEOUT = 2


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Any:
    data = yaml.safe_load((REPO_ROOT / "course.yml").read_text(encoding="utf-8"))
    data["course"]["grading"]["test_timeout_s"] = TIMEOUT
    path = tmp_path_factory.mktemp("course") / "course.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return load_course(path)


def _tests(results: dict[str, Any]) -> list[tuple[str, str, float]]:
    return [(t["name"], t["status"], t["score"]) for t in results["tests"]]


def test_lanes_for() -> None:
    assert [lanes_for(k) for k in (0, 1, 2, 3, 7)] == [1, 2, 3, 4, 4]


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
    assert results["extra_data"]["lanes"] == 4 and row.timed_out >= 1
    other = next(r for r in report.rows if r.submission_id != loop.submission_id)
    assert other.new_score == 50.0
    assert "lanes" not in json.loads((tmp_path / "out" / other.results).read_text())[
        "extra_data"]


def test_idle_workers_take_the_slowest_expected_submission_first() -> None:
    """One worker: the first task starts at once; the rest wait and are graded highest
    priority (longest expected) first, whatever the order they were sent in. The tasks are
    refused by the worker at once (an unknown task format), so their answers come back in the
    order they were graded."""
    runner = LocalRunner(1, ())
    try:
        handles = {p: runner.submit({"format": "none", "key": f"p{p}"}, priority=p)
                   for p in (1.0, 3.0, 40.0, 2.0, 25.0)}
        finished: list[float] = []
        end = time.monotonic() + 120  # a hang guard, never a verdict
        while len(finished) < len(handles) and time.monotonic() < end:
            runner.wait(0.05)
            finished += [p for p, h in handles.items() if runner.done(h) and p not in finished]
        assert finished == [1.0, 40.0, 25.0, 3.0, 2.0]
        outcome = runner.result(handles[40.0])
        assert "task format 'none'" in outcome["error"]
        assert outcome["worker"].rsplit(":", 1)[1] != str(os.getpid())  # not this process
    finally:
        runner.close()


def test_a_worker_that_dies_fails_its_task_alone_and_is_replaced() -> None:
    runner = LocalRunner(1, ())
    try:
        victim = runner.workers[0].proc
        os.kill(victim.pid, signal.SIGKILL)  # (the OOM killer, say)
        victim.wait()
        handle = runner.submit({"format": "none", "key": "a"}, priority=1.0)
        end = time.monotonic() + 120
        while not runner.done(handle) and time.monotonic() < end:
            runner.wait(0.05)
        assert "regrade worker" in runner.result(handle)["error"]
        assert runner.workers[0].proc.pid != victim.pid  # replaced
        again = runner.submit({"format": "none", "key": "b"}, priority=1.0)
        while not runner.done(again) and time.monotonic() < end:
            runner.wait(0.05)
        assert "task format" in runner.result(again)["error"]
    finally:
        runner.close()


class _Recorder:
    """A runner that grades nothing: it records what was sent, in order, and fails each task
    as a course-side error (so nothing is recorded as a score)."""

    sent: list[tuple[str, float]] = []

    def __init__(self, jobs: int, hide: tuple[str, ...]) -> None:
        self.handles: list[dict[str, Any]] = []

    def slots(self) -> int:
        return 1

    def check(self, modules: list[dict[str, Any]], graders: list[str]) -> None:
        pass

    def submit(self, payload: dict[str, Any], *, priority: float) -> int:
        _Recorder.sent.append((payload["key"], priority))
        return len(_Recorder.sent)

    def wait(self, timeout: float) -> None:
        pass

    def done(self, handle: int) -> bool:
        return True

    def result(self, handle: int) -> dict[str, Any]:
        return {"error": "not graded (recorder)"}

    def abort(self, handles: list[Any]) -> int:
        return 0

    def close(self) -> None:
        pass


def test_a_regrade_sends_the_longest_expected_submission_first(
        tmp_path: Path, course: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The looping submission (its old results show timeouts) is third in the export and
    first sent; the rest follow longest expected first (old execution time)."""
    from staff.regrade import pool

    made = synth_export(module="01", n=6, out=tmp_path / "export.zip", seed=5, looping=1,
                        mix={"correct": 0.5, "buggy": 0.5}, course=course)
    loop = next(r for r in made.records if r.kind == "looping")
    assert made.records[0].kind != "looping"
    _Recorder.sent = []
    monkeypatch.setattr(pool, "LocalRunner", _Recorder)
    report = regrade(export=made.path, out=tmp_path / "out", course=course, jobs=2)
    keys = [k for k, _ in _Recorder.sent]
    assert keys[0] == f"submission_{loop.submission_id}"
    assert sorted(keys) == sorted(r.key for r in report.rows) and len(keys) == 6
    costs = [p for _, p in _Recorder.sent]
    assert costs == sorted(costs, reverse=True) and costs[0] >= 3 * TIMEOUT  # three timeouts
    assert all(not r.graded for r in report.rows)


def test_scheduling_and_lanes_change_no_verdict(
        tmp_path: Path, course: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same export graded as scheduled (longest expected first, the looper in lanes) and
    in export order in one child each: the same tests, statuses and scores per submission."""
    from staff.regrade import run

    made = synth_export(module="01", n=4, out=tmp_path / "export.zip", seed=5, looping=1,
                        mix={"correct": 0.5, "buggy": 0.5}, course=course)

    def graded(out: Path) -> dict[str, Any]:
        report = regrade(export=made.path, out=out, course=course, jobs=2)
        assert all(r.graded for r in report.rows)
        return {r.key: (r.new_score, _tests(json.loads((out / r.results).read_text())))
                for r in report.rows}

    scheduled = graded(tmp_path / "scheduled")
    monkeypatch.setattr(run, "estimate", lambda *_a, **_k: 1.0)
    monkeypatch.setattr(run, "lanes_for", lambda _n: 1)
    plain = graded(tmp_path / "plain")
    assert scheduled == plain
    assert any(s < 50 for s, _ in plain.values())  # the looper's timeouts cost points
