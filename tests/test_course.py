"""course.yml: the schema accepts the real file and rejects bad ones with one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from coursekit.course import CourseError, load_course
from coursekit.paths import REPO_ROOT

RAW = yaml.safe_load((REPO_ROOT / "course.yml").read_text())


def _write(tmp_path: Path, data: dict) -> Path:
    p = tmp_path / "course.yml"
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    return p


def test_real_course_loads_with_20_modules_9_milestone_entries_2_tracks(course):
    assert [m.number for m in course.modules] == list(range(1, 21))
    # six historical milestones; the 1998 CNN is graded on three tasks (digits, Fashion-MNIST,
    # CIFAR-10 from submitted weights) and the 2017 transformer on two (reversal, KJV)
    assert [m.id for m in course.milestones] == [
        "perceptron_1957", "xor_1969", "mlp_1986", "cnn_1998", "cnn_fashion_1998",
        "cnn_cifar_1998", "transformer_reversal_2017", "transformer_2017", "mlperf_2018"]
    assert len({m.year for m in course.milestones}) == 6
    assert {t.id for t in course.tracks} == {"foundation", "full"}
    assert course.track("foundation").modules == list(range(1, 8))
    assert course.module(20).category == "capstone"


@pytest.mark.parametrize("ref", ["01", "1", "01_tensor", "tensor", 1])
def test_module_lookup_accepts_every_spelling(course, ref):
    assert course.module(ref).name == "01_tensor"


def test_unknown_module_lists_choices(course):
    with pytest.raises(CourseError, match="unknown module 'tensors'.*01_tensor"):
        course.module("tensors")


def _mutate(path: list, value):
    import copy

    data = copy.deepcopy(RAW)
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return data


@pytest.mark.parametrize("path,value,expected", [
    (["milestones", 0, "threshold"], "high", "milestones[0].threshold"),
    (["modules", 3, "points"], -5, "modules[3].points"),
    (["modules", 2, "tier"], "advanced", "modules[2].tier: unknown tier 'advanced'"),
    (["modules", 1, "due"], "next week", "modules[1].due"),
    (["modules", 1, "slug"], "tensor", "duplicate slug 'tensor'"),
    (["tracks", 0, "weights", "modules"], 0.9, "tracks[0].weights: sum to"),
    (["grading", "letters"], {"A": 90, "B": 95, "F": 0}, "grading.letters"),
    (["milestones", 1, "min_passing_seeds"], 9, "min_passing_seeds is larger"),
    (["course", "timezone"], "Mars/Olympus", "course.timezone: unknown time zone"),
    (["milestones", 2, "requires"], [1, 2, 42], "milestones[2].requires: unknown module 42"),
    (["milestones", 2, "time_budget_s"], 600, "graded with module 7 add up to 660 CPU s"),
    (["tracks", 0, "id"], "Foundation Track", "tracks[0].id: String should match pattern"),
    (["milestones", 2, "training"], None, "milestones[2]: training: required"),
    (["milestones", 2, "training"], {"epochs": 3, "steps": 9}, "milestones[2].training: give either epochs or steps"),
    (["milestones", 2, "training", "batch_size"], 0, "milestones[2].training.batch_size"),
])
def test_invalid_course_gives_one_line_naming_the_field(tmp_path, path, value, expected):
    p = _write(tmp_path, _mutate(path, value))
    with pytest.raises(CourseError) as err:
        load_course(p)
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith("course.yml: ")
    assert expected in msg


def test_unknown_field_is_rejected(tmp_path):
    data = _mutate(["course", "graading"], {})
    with pytest.raises(CourseError, match="course.graading: Extra inputs are not permitted"):
        load_course(_write(tmp_path, data))


def test_yaml_syntax_error_names_the_line(tmp_path):
    p = tmp_path / "course.yml"
    p.write_text("course:\n  name: [unclosed\n")
    with pytest.raises(CourseError, match=r"course.yml: line \d+"):
        load_course(p)


def test_cli_stops_with_one_line_and_exit_2_on_bad_course(tmp_path):
    p = _write(tmp_path, _mutate(["modules", 0, "points"], "lots"))
    proc = subprocess.run([sys.executable, "-m", "tito.cli", "--course", str(p), "course", "check"],
                          capture_output=True, text=True, cwd=REPO_ROOT)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "modules[0].points" in lines[0]


def test_cli_course_check_summarises(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "tito.cli", "course", "check"],
                          capture_output=True, text=True, cwd=REPO_ROOT)
    assert proc.returncode == 0, proc.stderr
    n = len(load_course().milestones)
    assert "20 modules (built: 01-" in proc.stdout and f"{n} milestones" in proc.stdout


def test_grade_with_a_broken_course_still_writes_results_json(tmp_path):
    import json

    p = _write(tmp_path, _mutate(["modules", 0, "points"], "lots"))
    out = tmp_path / "results.json"
    proc = subprocess.run([sys.executable, "-m", "tito.cli", "--course", str(p), "grade", "01",
                           "nb.ipynb", "-o", str(out)], capture_output=True, text=True,
                          cwd=REPO_ROOT)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    res = json.loads(out.read_text())
    assert res["score"] == 0 and res["tests"][0]["status"] == "failed"
    assert "modules[0].points" in res["output"]


def test_a_drop_that_empties_a_category_is_a_check_problem(tmp_path):
    """``drop_lowest: 25`` (issue 34): the policy would quietly count one item; course check
    names the category, the track, its item count and the largest sensible value."""
    from staff.check import _drop_problems

    data = _mutate(["grading", "categories", 0, "drop_lowest"], 25)
    problems = _drop_problems(load_course(_write(tmp_path, data)))
    assert problems == [
        "course.yml: grading.categories[0].drop_lowest: 25 would drop every item of 'modules' "
        "in track foundation (7 item(s)); at most 6",
        "course.yml: grading.categories[0].drop_lowest: 25 would drop every item of 'modules' "
        "in track full (19 item(s)); at most 18"]
    assert _drop_problems(load_course(_write(tmp_path, _mutate(
        ["grading", "categories", 0, "drop_lowest"], 6)))) == []  # one module still counts
    assert _drop_problems(load_course(REPO_ROOT / "course.yml")) == []


def test_a_misspelt_track_id_is_a_check_problem(tmp_path):
    """A track id the rosters do not know (issue 34): the sample term's roster and the
    gradebook store's roster put students on 'foundation'."""
    from gradebook import api
    from staff.check import _roster_track_problems

    store = tmp_path / "gb.sqlite"
    api.roster(REPO_ROOT / "samples" / "term" / "roster.csv", store=store)
    data = _mutate(["tracks", 0, "id"], "foundaton")
    data["course"]["gradebook_store"] = str(store)
    problems = _roster_track_problems(load_course(_write(tmp_path, data)))
    assert [p.split(" puts ")[0] for p in problems] == [
        "course.yml: tracks: samples/term/roster.csv", f"course.yml: tracks: the gradebook "
        f"store {store}"]
    assert all("12 student(s) on track 'foundation'" in p and "misspelt" in p
               for p in problems)
    ok = _mutate(["course", "gradebook_store"], str(store))
    assert _roster_track_problems(load_course(_write(tmp_path, ok))) == []
