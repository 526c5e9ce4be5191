"""`tito grade` on the bundled sample class: the scores and messages issue 2 promises.

Graded through the CLI, exactly as a TA or the demo does, with a course file whose per-test
limit is 3 s so the infinite loop costs seconds, not minutes. The limit is CPU seconds, so the
scores are the same on an idle machine and a busy one.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from coursebuild.samples import STUDENTS
from coursekit import paths

CLASS = paths.SAMPLES / "class_01_tensor"


@pytest.fixture(scope="module")
def fast_course(tmp_path_factory) -> Path:
    data = yaml.safe_load((paths.REPO_ROOT / "course.yml").read_text())
    data["course"]["grading"]["test_timeout_s"] = 3
    p = tmp_path_factory.mktemp("course") / "course.yml"
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    return p


@pytest.fixture(scope="module")
def graded(fast_course, tmp_path_factory) -> dict[str, dict]:
    out = tmp_path_factory.mktemp("results")
    results = {}
    for s in STUDENTS:
        target = out / f"{s.folder}.json"
        proc = subprocess.run(
            [sys.executable, "-m", "tito.cli", "--course", str(fast_course), "grade", "01",
             str(CLASS / s.folder / "01_tensor.ipynb"), "-o", str(target),
             "--metadata", str(CLASS / s.folder / "submission_metadata.json")],
            capture_output=True, text=True, cwd=paths.REPO_ROOT, timeout=1800)
        assert proc.returncode == 0, proc.stderr
        results[s.kind] = json.loads(target.read_text())
    return results


def _valid(r: dict) -> None:
    assert isinstance(r["score"], (int, float))
    assert r["execution_time"] >= 0
    assert r["tests"], "results.json must list tests"
    for t in r["tests"]:
        assert {"name", "score", "max_score", "status", "visibility", "output"} <= set(t)
        assert t["status"] in ("passed", "failed")
        assert t["visibility"] in ("hidden", "after_due_date", "after_published", "visible")
    extra = r["extra_data"]
    assert extra["suite_version"] and extra["module"] == "01_tensor"
    assert "numpy" in extra["packages"]


def test_every_result_is_valid_gradescope_json(graded):
    for r in graded.values():
        _valid(r)


def test_full_solution_scores_100_percent(graded):
    assert graded["full"]["score"] == 50


def test_untouched_release_scores_zero_and_says_what_to_do(graded):
    r = graded["untouched"]
    assert r["score"] == 0
    assert any("module 01: implement" in t["output"] for t in r["tests"])


def test_partial_answer_gets_partial_credit(graded):
    r = graded["partial"]
    assert r["score"] == 37
    failed = {t["name"].split(" · ")[-1] for t in r["tests"] if t["status"] == "failed"}
    assert "matmul_batched" in failed and "sum_over_dims" in failed
    assert "memory_footprint_in_bytes" not in failed


def test_syntax_error_gets_zero_and_names_cell_and_line(graded):
    r = graded["syntax_error"]
    assert r["score"] == 0
    nb = json.loads((CLASS / "s1004_syntax" / "01_tensor.ipynb").read_text())
    where = [(c, n) for c, cell in enumerate(nb["cells"], 1)
             for n, ln in enumerate("".join(cell["source"]).splitlines(), 1)
             if ln.strip() == "def numel(self) -> int"]
    assert where, "the syntax-error sample lost its broken line"
    assert f"cell {where[0][0]}, line {where[0][1]}" in r["output"]


def test_infinite_loop_times_out_only_the_cases_that_loop(graded):
    r = graded["infinite_loop"]
    assert r["score"] == 45  # the three matmul cases (5 points) time out
    timed_out = [t for t in r["tests"] if "Timed out" in t["output"]]
    assert timed_out and all("matmul" in t["name"] for t in timed_out)


def test_hard_exit_gets_zero_with_a_reason(graded):
    r = graded["hard_exit"]
    assert r["score"] == 0
    assert "os._exit" in r["output"] or "exit" in r["output"]


def test_late_submission_is_graded_on_its_merits(graded):
    # lateness is the gradebook's job (course.yml late policy); the grader records the time
    assert graded["late"]["score"] == 50


def test_hidden_expected_values_never_reach_feedback(graded):
    text = json.dumps(graded["partial"])
    assert "def matmul_batched" not in text and "suite.py" not in text


def test_sample_class_is_in_sync_with_the_release(tmp_path):
    from coursebuild.samples import write_samples
    from coursekit.course import load_course

    course = load_course()
    write_samples(course, course.module(1), out_root=tmp_path)
    for s in STUDENTS:
        for name in ("01_tensor.ipynb", "submission_metadata.json"):
            built = (tmp_path / "class_01_tensor" / s.folder / name).read_text()
            assert built == (CLASS / s.folder / name).read_text(), (
                f"samples/class_01_tensor/{s.folder}/{name} is stale: run `tito samples 01`")
