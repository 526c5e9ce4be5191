"""The Gradescope zip, unpacked into a simulated container and driven by its own scripts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autograder.gradescope import build_zip
from tests.autograder.conftest import (
    CORRECT,
    MINI,
    PUBLIC,
    REF,
    STUBS,
    SUITE,
    check_results_schema,
    notebook_bytes,
)

REPO = Path(__file__).resolve().parents[2]


def _container(tmp_path: Path, zip_path: Path, notebook: bytes, name: str,
               extra: dict[str, bytes] | None = None) -> Path:
    """An AUTOGRADER_ROOT with source/ (the zip), submission/, results/, metadata."""
    root = tmp_path / "autograder"
    (root / "source").mkdir(parents=True)
    (root / "submission").mkdir()
    (root / "results").mkdir()
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(root / "source")
        for info in zf.infolist():  # zipfile drops permissions; Gradescope keeps them
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                os.chmod(root / "source" / info.filename, mode)
    (root / "submission" / name).write_bytes(notebook)
    for fname, data in (extra or {}).items():
        (root / "submission" / fname).write_bytes(data)
    (root / "submission_metadata.json").write_text(json.dumps({
        "id": 123, "created_at": "2027-01-25T10:00:00Z",
        "assignment": {"title": name, "due_date": "2027-01-26T23:59:00-05:00"},
        "users": [{"email": "s@uni.edu", "id": 1, "name": "S"}]}))
    return root


def _run(root: Path, python: str = sys.executable) -> dict:
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_PYTHON": python}
    proc = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env,
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr
    res = json.loads((root / "results" / "results.json").read_text())
    return res


@pytest.fixture(scope="module")
def mini_zip(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("zip") / "01_mini.zip"
    return build_zip(MINI, out, suite_path=SUITE, reference=REF, public_tests=PUBLIC,
                     stubs=STUBS)


def test_zip_layout(mini_zip):
    with zipfile.ZipFile(mini_zip) as zf:
        names = set(zf.namelist())
        req = zf.read("requirements.txt").decode()
        course = json.loads(zf.read("course.json"))
        later = zf.read("reference/later.py").decode()
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in zf.infolist()}
    assert {"setup.sh", "run_autograder", "requirements.txt", "course.json", "goldens.json",
            "manifest.json", "autograder/suite.py", "autograder/harness/core.py",
            "autograder/harness/child.py", "autograder/gradescope/run.py",
            "autograder/suites/01_mini/suite.py", "tito/export.py", "reference/__init__.py",
            "public_tests/checks.py"} <= names
    assert "reference/mini.py" not in names, "the graded module's solution must not ship"
    assert "released stub" in later, "later modules ship as stubs, not solutions"
    assert req.startswith("numpy==")
    assert course["module"]["points"] == 5
    assert modes["run_autograder"] == 0o755 and modes["setup.sh"] == 0o755
    assert subprocess.run(["bash", "-n", str(REPO / "autograder/gradescope/templates/setup.sh")]
                          ).returncode == 0


def test_zip_is_reproducible(mini_zip, tmp_path):
    again = build_zip(MINI, tmp_path / "again.zip", suite_path=SUITE, reference=REF,
                      public_tests=PUBLIC, stubs=STUBS)
    assert again.read_bytes() == mini_zip.read_bytes()


def test_container_grades_a_correct_submission(mini_zip, tmp_path):
    root = _container(tmp_path, mini_zip, notebook_bytes(CORRECT), "01_mini.ipynb")
    res = _run(root)
    check_results_schema(res)
    assert res["score"] == 5
    assert res["extra_data"]["expected_from"] == "goldens"
    assert res["extra_data"]["submission_metadata"]["id"] == 123
    assert any("public" in t["tags"] for t in res["tests"])


def test_container_grades_a_broken_submission(mini_zip, tmp_path):
    root = _container(tmp_path, mini_zip, b"{not json", "01_mini.ipynb")
    res = _run(root)
    check_results_schema(res)
    assert res["score"] == 0 and "not valid notebook JSON" in res["output"]


def test_container_without_python_still_writes_results(mini_zip, tmp_path):
    root = _container(tmp_path, mini_zip, notebook_bytes(CORRECT), "01_mini.ipynb")
    (root / "results" / "results.json").write_text('{"score": 99}')  # stale
    res = _run(root, python="/bin/false")
    assert res["score"] == 0 and "tell course staff" in res["output"]


def test_real_module_01_zip_end_to_end(tmp_path):
    """Module 01's own suite, goldens and release: the solution scores 100%, the release 0."""
    from tito import paths
    from tito.course import load_course

    course = load_course()
    module = course.module("01")
    if not (paths.SUITES / module.name / "suite.py").is_file():
        pytest.fail("module 01 has no hidden suite")
    zip_path = build_zip(module, tmp_path / "01_tensor.zip", course=course)
    solution = (paths.REFERENCE / "tensor.py").read_text(encoding="utf-8")
    root = _container(tmp_path / "good", zip_path, notebook_bytes(solution),
                      "01_tensor.ipynb")
    res = _run(root)
    check_results_schema(res)
    failed = [(t["name"], t["output"][:300]) for t in res["tests"] if t["status"] == "failed"]
    assert res["score"] == module.points, failed
    release = paths.RELEASE / module.name / f"{module.name}.ipynb"
    root2 = _container(tmp_path / "release", zip_path, release.read_bytes(), "01_tensor.ipynb")
    res2 = _run(root2)
    assert res2["score"] == 0
    with zipfile.ZipFile(zip_path) as zf:
        assert "reference/tensor.py" not in zf.namelist()


def _full_notebooks(course, upto: int) -> dict[str, bytes]:
    from tito.samples import earlier_full_notebooks

    return {name: text.encode() for name, text in
            earlier_full_notebooks(course, course.module(f"{upto:02d}")).items()}


def test_module_07_zip_grades_its_milestones_in_the_container(tmp_path):
    """Module 07's zip carries the XOR and MLP milestones: trained in the sandbox, scored by
    k of n seeds in the parent from the zip's own data (test labels never reach the child).
    Built after modules 01-06 closed, it grades them on their reference."""
    import datetime as dt

    from tito import paths
    from tito.course import load_course
    from tito.release import dump_notebook
    from tito.samples import build_notebook

    course = load_course()
    module = course.module("07")
    after = dt.datetime(2027, 7, 1, tzinfo=dt.timezone.utc)
    zip_path = build_zip(module, tmp_path / "07_training.zip", course=course, now=after)
    with zipfile.ZipFile(zip_path) as zf:
        names = zf.namelist()
        tensor = zf.read("reference/tensor.py").decode()
        course_json = json.loads(zf.read("course.json"))
    assert "autograder/milestones/providers/xor_1969.py" in names
    assert "datasets/digits_8x8/digits.csv.gz" in names and "course.yml" in names
    assert "reference/training.py" not in names
    assert tensor == (paths.REFERENCE / "tensor.py").read_text(encoding="utf-8")
    assert course_json["reference_modules"] == [m.slug for m in course.modules if m.number < 7]
    full = dump_notebook(build_notebook(module, "full")).encode()
    res = _run(_container(tmp_path / "full", zip_path, full, "07_training.ipynb"))
    check_results_schema(res)
    ms = [t for t in res["tests"] if any(g.startswith("milestone:") for g in t["tags"])]
    assert {t["tags"][-1] for t in ms} == {"milestone:xor_1969", "milestone:mlp_1986"}
    assert all(t["score"] == t["max_score"] == 10 for t in ms), [t["output"] for t in ms]
    assert res["score"] == module.points + 20
    mlp = res["extra_data"]["milestones"]["mlp_1986"]
    assert mlp["seeds"] == [0, 1, 2] and len(set(mlp["train_seeds"])) == 3
    early = res["extra_data"]["earlier_modules"]
    assert len(early) == 6 and all(v == {"from": "reference"} for v in early.values())
    stub = (paths.RELEASE / module.name / f"{module.name}.ipynb").read_bytes()
    res2 = _run(_container(tmp_path / "stub", zip_path, stub, "07_training.ipynb"))
    assert res2["score"] == 0
    assert all(t["score"] == 0 for t in res2["tests"]
               if any(g.startswith("milestone:") for g in t["tags"]))


def test_module_20_zip_grades_the_olympics_and_publishes_a_leaderboard(tmp_path):
    """The capstone's zip carries the data and course.yml its event needs, and module 19's
    report schema extracted from the reference for the parent; the parent measures the
    submitted model, checks its benchmark report, shows the checked report in the event's
    test and writes Gradescope's leaderboard; an untouched release gets neither. Built after
    modules 01-19 closed, it grades them on their reference."""
    import datetime as dt

    from autograder.milestones.report_schema import SOURCE, ZIP_PATH, extract
    from tito import paths
    from tito.course import load_course
    from tito.release import dump_notebook
    from tito.samples import build_notebook

    course = load_course()
    module = course.module(20)
    after = dt.datetime(2027, 7, 1, tzinfo=dt.timezone.utc)
    zip_path = build_zip(module, tmp_path / "20_capstone.zip", course=course, now=after)
    with zipfile.ZipFile(zip_path) as zf:
        names = zf.namelist()
        schema = zf.read(ZIP_PATH).decode()
    assert "datasets/digits_8x8/digits.csv.gz" in names and "course.yml" in names
    assert "reference/capstone.py" not in names
    assert schema == extract(SOURCE.read_text(encoding="utf-8"), SOURCE.name)
    full = dump_notebook(build_notebook(module, "full")).encode()
    res = _run(_container(tmp_path / "full", zip_path, full, "20_capstone.ipynb"))
    check_results_schema(res)
    assert res["score"] == module.points, [t["output"] for t in res["tests"] if t["score"] == 0]
    board = res["leaderboard"]
    assert [e["name"] for e in board] == ["Olympics score", "Accuracy (%)", "Speed-up",
                                          "Size (KB)", "GPT tokens/s", "GPT speed-up",
                                          "GPT size (KB)"]
    assert [e["order"] for e in board] == ["desc", "desc", "desc", "asc", "desc", "desc", "asc"]
    values = {e["name"]: e["value"] for e in board}
    # the default recipes beat doing nothing (a score of 1, a speed-up of 1), timed by the parent
    assert values["Olympics score"] > 1.4 and values["Accuracy (%)"] > 90
    assert values["GPT speed-up"] > 1.5 and values["GPT tokens/s"] > 0
    event = next(t for t in res["tests"] if t["name"].endswith("olympics_event"))
    report = event["extra_data"]["benchmark_report"]
    assert report["schema"] == "tinytorch-benchmark/1"
    assert [r["scenario"] for r in report["results"]] == ["SingleStream", "SingleStream"]
    assert "Your benchmark report (autograder sandbox" in event["output"]
    assert "grader_errors" not in res["extra_data"]
    stub = (paths.RELEASE / module.name / f"{module.name}.ipynb").read_bytes()
    res2 = _run(_container(tmp_path / "stub", zip_path, stub, "20_capstone.ipynb"))
    assert res2["score"] == 0 and "leaderboard" not in res2
    event2 = next(t for t in res2["tests"] if t["name"].endswith("olympics_event"))
    assert "extra_data" not in event2 and "benchmark report" not in event2["output"]


def test_open_modules_reference_never_ships_and_the_students_own_copy_is_used(tmp_path):
    """Built while modules 01-06 are still open for late work: their references stay out of
    the zip (release stubs instead); a student who uploads their earlier notebooks with this
    one is graded on them, and told so; one who does not gets the stubs, and told why."""
    import datetime as dt

    from tito import paths
    from tito.course import load_course
    from tito.release import dump_notebook
    from tito.samples import build_notebook

    course = load_course()
    module = course.module("03")
    before = dt.datetime(2027, 1, 20, tzinfo=dt.timezone.utc)  # module 01 is still open
    zip_path = build_zip(module, tmp_path / "03_layers.zip", course=course, now=before)
    with zipfile.ZipFile(zip_path) as zf:
        for slug in ("tensor", "activations"):
            shipped = zf.read(f"reference/{slug}.py").decode()
            assert shipped == (paths.RELEASE / "tinytorch" / f"{slug}.py").read_text(
                encoding="utf-8"), f"the open module {slug}'s reference was shipped"
            assert zf.read(f"stubs/{slug}.py").decode() == shipped
        assert json.loads(zf.read("course.json"))["reference_modules"] == []
    full = dump_notebook(build_notebook(module, "full")).encode()
    res = _run(_container(tmp_path / "with", zip_path, full, "03_layers.ipynb",
                          extra=_full_notebooks(course, 3)))
    assert res["score"] == module.points, [t["output"][:200] for t in res["tests"]
                                           if t["status"] == "failed"]
    early = res["extra_data"]["earlier_modules"]
    assert {k: v["from"] for k, v in early.items()} == {"01_tensor": "yours",
                                                        "02_activations": "yours"}
    sub = next(t for t in res["tests"] if t["name"].endswith("submission"))
    assert "still open for late work" in sub["output"] and "your own 01_tensor" in sub["output"]
    alone = _run(_container(tmp_path / "alone", zip_path, full, "03_layers.ipynb"))
    assert alone["score"] < module.points
    assert alone["extra_data"]["earlier_modules"]["01_tensor"]["from"] == "stub"
    sub = next(t for t in alone["tests"] if t["name"].endswith("submission"))
    assert "you did not upload 01_tensor.ipynb" in sub["output"]
