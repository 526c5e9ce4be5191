"""Course-side failures are pending, never a 0 (DESIGN invariant 12; issue 34 item 4).

A results.json test tagged ``pending`` (the autograder could not score it: missing test data,
a broken reference) makes its item a ``pending`` event with no score; a results.json whose
``extra_data.grader_error`` says the run failed makes every item of its module pending.
``check`` lists each pending item, the policy does not count it, and a later real score
replaces it.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from gradebook import api
from gradebook.errors import GradebookError
from tests.gradebook.test_gradebook_ingest import ROSTER, submission, write

MODULE = "09_spatial"
CIFAR = "milestone:cnn_cifar_1998"


@pytest.fixture()
def store(tmp_path: Path, gb_course) -> Path:
    path = tmp_path / "gb.sqlite"
    api.roster(write(tmp_path / "roster.csv", ROSTER), store=path, course=gb_course)
    return path


def nine(*, cifar: str = "pending", cifar_score: float = 0.0, extra: dict | None = None
         ) -> dict:
    """Module 09's results: 60 suite points passed, the two trained CNN milestones passed,
    and the CIFAR milestone ``passed``, ``failed`` (the student's weights) or ``pending``."""
    tags = [f"module:{MODULE}"]
    tests = [{"name": f"{MODULE} · all", "score": 60.0, "max_score": 60.0, "status": "passed",
              "tags": [*tags, "hidden"]}]
    for ms in ("cnn_1998", "cnn_fashion_1998"):
        tests.append({"name": f"milestone · {ms}", "score": 5.0, "max_score": 5.0,
                      "status": "passed", "tags": [*tags, f"milestone:{ms}"]})
    cifar_test = {"name": "milestone · cnn_cifar_1998 · CIFAR", "score": cifar_score,
                  "max_score": 10.0, "status": "passed" if cifar_score else "failed",
                  "tags": [*tags, CIFAR]}
    pending = []
    if cifar == "pending":
        cifar_test["tags"].append("pending")
        pending = [{"test": cifar_test["name"],
                    "why": "milestone cnn_cifar_1998: test_batch.bin is not installed"}]
    tests.append(cifar_test)
    data = {"module": MODULE, "suite_version": "v1", "pending": pending}
    data.update(extra or {})
    return {"score": sum(t["score"] for t in tests), "tests": tests, "extra_data": data}


def events(store: Path) -> list[tuple]:
    with sqlite3.connect(store) as conn:
        return conn.execute("SELECT kind, item, score FROM events ORDER BY id").fetchall()


def check_lines(store: Path, course) -> list[str]:
    return [str(p) for p in api.check(store=store, course=course, as_of="final")]


def counted(store: Path, course) -> dict[str, float]:
    built = api.build(store=store, course=course, as_of="final")
    rows = built.result.scores[built.result.scores["student"] == "S1"]
    return dict(zip(rows["item"], rows["raw_points"], strict=True))


def test_a_missing_data_milestone_is_pending_not_zero(tmp_path, store, gb_course):
    rep = api.ingest([submission(tmp_path / "a", nine())], store=store, course=gb_course)
    assert [(p["item"], p["kept"]) for p in rep.pending] == [(CIFAR, None)]
    assert "not installed" in rep.pending[0]["why"]
    recorded = events(store)
    assert ("pending", CIFAR, None) in recorded
    assert ("results_json", MODULE, 60.0) in recorded
    assert not [e for e in recorded if e[1] == CIFAR and e[2] is not None], "never a 0"
    lines = check_lines(store, gb_course)
    mine = [x for x in lines if ": pending: " in x and "cnn_cifar_1998" in x]
    assert len(mine) == 1 and mine[0].startswith("error:"), lines
    assert "not 0" in mine[0] and "regrade" in mine[0]
    points = counted(store, gb_course)
    assert CIFAR not in points, "a pending item does not count (as 0 or otherwise)"
    assert points[MODULE] > 0


def test_a_later_score_replaces_the_pending_item(tmp_path, store, gb_course):
    api.ingest([submission(tmp_path / "a", nine())], store=store, course=gb_course)
    fixed = api.ingest([submission(tmp_path / "b", nine(cifar="passed", cifar_score=10.0))],
                       store=store, course=gb_course)
    assert not fixed.pending and not fixed.regrades  # a first score, not a change of one
    assert events(store)[-1] == ("results_json", CIFAR, 10.0)
    assert not [x for x in check_lines(store, gb_course) if ": pending: " in x]
    assert counted(store, gb_course)[CIFAR] == 10.0


def test_a_pending_regrade_keeps_the_score_that_was_recorded(tmp_path, store, gb_course):
    api.ingest([submission(tmp_path / "a", nine(cifar="failed", cifar_score=0.0))],
               store=store, course=gb_course)
    again = api.ingest([submission(tmp_path / "b", nine())], store=store, course=gb_course)
    assert [(p["item"], p["kept"]) for p in again.pending] == [(CIFAR, 0.0)]
    lines = [x for x in check_lines(store, gb_course) if ": pending: " in x]
    assert len(lines) == 1 and lines[0].startswith("warning:") and "still counts" in lines[0]
    assert counted(store, gb_course)[CIFAR] == 0.0  # the student's own earlier 0 stays


def test_a_failed_run_makes_every_item_of_the_module_pending(tmp_path, store, gb_course):
    failed = {"score": 0.0, "tests": [{"name": f"{MODULE} · autograder", "score": 0,
                                       "max_score": 0, "status": "failed",
                                       "tags": [f"module:{MODULE}", "grader-error"]}],
              "extra_data": {"module": MODULE, "grader_error": "internal error: KeyError"}}
    rep = api.ingest([submission(tmp_path / "a", failed)], store=store, course=gb_course)
    items = {MODULE, "milestone:cnn_1998", "milestone:cnn_fashion_1998", CIFAR}
    assert {p["item"] for p in rep.pending} == items
    assert {e for e in events(store)} == {("pending", i, None) for i in items}
    assert all("KeyError" in p["why"] for p in rep.pending)


def test_older_results_with_grader_errors_are_pending_too(tmp_path, store, gb_course):
    old = nine(cifar="failed", extra={"grader_errors": ["milestone cnn_cifar_1998: missing"]})
    del old["extra_data"]["pending"]  # an older harness: no pending list, no pending tags
    api.ingest([submission(tmp_path / "a", old)], store=store, course=gb_course)
    assert {e[0] for e in events(store)} == {"pending"}


def test_feedback_only_grader_errors_do_not_hold_a_score(tmp_path, store, gb_course):
    res = nine(cifar="passed", cifar_score=10.0,
               extra={"grader_errors": ["leaderboard: malformed entries dropped"]})
    rep = api.ingest([submission(tmp_path / "a", res)], store=store, course=gb_course)
    assert not rep.pending and {e[0] for e in events(store)} == {"results_json"}


def test_ingesting_the_same_pending_result_twice_changes_nothing(tmp_path, store, gb_course):
    f = submission(tmp_path / "a", nine())
    api.ingest([f], store=store, course=gb_course)
    copy = submission(tmp_path / "b", json.loads(f.read_text()) | {"execution_time": 2.0})
    again = api.ingest([copy], store=store, course=gb_course)
    assert again.added == 0 and not again.pending


def test_results_without_a_module_say_to_pass_module(tmp_path, store, gb_course):
    bare = {"score": 5.0, "tests": [{"name": "t", "score": 5.0, "max_score": 5.0}],
            "extra_data": {}}
    with pytest.raises(GradebookError, match="pass --module"):
        api.ingest([submission(tmp_path / "a", bare)], store=store, course=gb_course)
    rep = api.ingest([submission(tmp_path / "b", bare)], store=store, course=gb_course,
                     module="01")
    assert rep.added == 1
