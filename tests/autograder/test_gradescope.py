"""The Gradescope zip, unpacked into a simulated container and driven by its own scripts."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autograder.gradescope import build_zip
from autograder.milestones.grading import UNTRAINED
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


def _run(root: Path, python: str = sys.executable, now: str | None = None) -> dict:
    """run_autograder as Gradescope starts it (no arguments), or simulating the date ``now``."""
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_PYTHON": python}
    args = [] if now is None else ["--now", now]
    proc = subprocess.run(["bash", str(root / "source" / "run_autograder"), *args], env=env,
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
            "autograder/suites/01_mini/suite.py", "coursekit/export.py", "coursekit/markers.py",
            "coursekit/__init__.py", "reference/__init__.py",
            "public_tests/checks.py"} <= names
    assert "reference/mini.py" not in names, "the graded module's solution must not ship"
    assert "released stub" in later, "later modules ship as stubs, not solutions"
    assert req.startswith("numpy==")
    assert course["module"]["points"] == 5
    assert modes["run_autograder"] == 0o755 and modes["setup.sh"] == 0o755
    assert subprocess.run(["bash", "-n", str(REPO / "autograder/gradescope/templates/setup.sh")]
                          ).returncode == 0


def test_zip_carries_the_suite_but_not_the_buggy_catalogue_beside_it(tmp_path):
    """The plausible bugs (``autograder/suites/NN_slug/bugs.py``, a course asset) stay home:
    the zip takes only ``suite.py`` from the suite's folder."""
    folder = tmp_path / "suites" / "01_mini"
    folder.mkdir(parents=True)
    (folder / "suite.py").write_bytes(SUITE.read_bytes())
    (folder / "bugs.py").write_text('SLUG = "mini"\nBUGS = {"x": [("a", "b")]}\n')
    out = build_zip(MINI, tmp_path / "z.zip", suite_path=folder / "suite.py", reference=REF,
                    public_tests=PUBLIC, stubs=STUBS)
    with zipfile.ZipFile(out) as zf:
        names = zf.namelist()
    assert "autograder/suites/01_mini/suite.py" in names
    assert [n for n in names if n.startswith("autograder/suites/")] == [
        "autograder/suites/01_mini/suite.py"]
    assert not [n for n in names if n.endswith("bugs.py")]


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
    from coursekit import paths
    from coursekit.course import load_course

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
        assert paths.bugs_catalogue(module.name).is_file()
        assert not [n for n in zf.namelist() if n.endswith("bugs.py")], "a course asset"


def _full_notebooks(course, upto: int) -> dict[str, bytes]:
    from coursebuild.samples import earlier_full_notebooks

    return {name: text.encode() for name, text in
            earlier_full_notebooks(course, course.module(f"{upto:02d}")).items()}


def test_module_07_zip_grades_its_milestones_in_the_container(tmp_path):
    """Module 07's zip carries the XOR and MLP milestones: trained in the sandbox, scored by
    k of n seeds in the parent from the zip's own data (test labels never reach the child).
    Graded after modules 01-06 closed, it grades them on their reference."""

    from coursebuild.release import dump_notebook
    from coursebuild.samples import build_notebook
    from coursekit import paths
    from coursekit.course import load_course

    course = load_course()
    module = course.module("07")
    after = "2027-07-01T00:00:00+00:00"
    zip_path = build_zip(module, tmp_path / "07_training.zip", course=course)
    with zipfile.ZipFile(zip_path) as zf:
        names = zf.namelist()
        tensor = zf.read("reference/tensor.py").decode()
        course_json = json.loads(zf.read("course.json"))
    assert "autograder/milestones/providers/xor_1969.py" in names
    assert "tinytorch_data/digits_8x8/digits.csv.gz" in names and "course.yml" in names
    # the packages milestone grading imports by name, beside autograder/ in the zip's source
    assert {"tinytorch_milestones/__init__.py", "tinytorch_milestones/recipes.py",
            "tinytorch_data/__init__.py", "tinytorch_data/loaders.py"} <= set(names)
    assert "reference/training.py" not in names
    assert tensor == (paths.REFERENCE / "tensor.py").read_text(encoding="utf-8")
    assert "reference_modules" not in course_json, "decided at grading time, not at build"
    full = dump_notebook(build_notebook(module, "full")).encode()
    res = _run(_container(tmp_path / "full", zip_path, full, "07_training.ipynb"), now=after)
    check_results_schema(res)
    ms = [t for t in res["tests"] if any(g.startswith("milestone:") for g in t["tags"])]
    assert {t["tags"][-1] for t in ms} == {"milestone:xor_1969", "milestone:mlp_1986"}
    assert all(t["score"] == t["max_score"] == 10 for t in ms), [t["output"] for t in ms]
    assert res["score"] == module.points + 20
    mlp = res["extra_data"]["milestones"]["mlp_1986"]
    assert mlp["seeds"] == [0, 1, 2] and len(set(mlp["train_seeds"])) == 3
    # two of three seeds passed: the third could not change the verdict and was not trained
    for t in ms:
        got = res["extra_data"]["milestones"][t["tags"][-1].split(":")[1]]
        assert got["untrained"] == [2] and got["passing"] == 2, got
        assert got["values"]["2"] is None and got["steps"][2] is got["cpu_s"][2] is None
        assert None not in (got["values"]["0"], got["values"]["1"], got["cpu_s"][1])
        assert f"seed 2: {UNTRAINED}" in t["output"], t["output"]
    early = res["extra_data"]["earlier_modules"]
    assert len(early) == 6 and all(v["from"] == "reference" for v in early.values())
    assert res["extra_data"]["schedule"]["decided_at"] == after
    stub = (paths.RELEASE / module.name / f"{module.name}.ipynb").read_bytes()
    res2 = _run(_container(tmp_path / "stub", zip_path, stub, "07_training.ipynb"), now=after)
    assert res2["score"] == 0
    assert all(t["score"] == 0 for t in res2["tests"]
               if any(g.startswith("milestone:") for g in t["tags"]))


def test_module_20_zip_grades_the_olympics_and_publishes_a_leaderboard(tmp_path):
    """The capstone's zip carries the data and course.yml its event needs, and module 19's
    report schema extracted from the reference for the parent; the parent measures the
    submitted model, checks its benchmark report, shows the checked report in the event's
    test and writes Gradescope's leaderboard; an untouched release gets neither. Graded after
    modules 01-19 closed, it grades them on their reference.

    The zip's goldens bank holds 2 variants instead of course.yml's 64 (a copy of course.yml,
    which the zip carries): each variant of the capstone trains its own baseline, 25 CPU-s for
    64, and tests/autograder/test_goldens_banks.py computes and checks every variant already;
    nothing here depends on how many variants the bank has (issue 31 item 7)."""

    import yaml

    from autograder.milestones.report_schema import SOURCE, ZIP_PATH, extract
    from coursebuild.release import dump_notebook
    from coursebuild.samples import build_notebook
    from coursekit import paths
    from coursekit.course import load_course

    data = yaml.safe_load((paths.REPO_ROOT / "course.yml").read_text(encoding="utf-8"))
    data["course"]["grading"]["variants"] = 2
    (tmp_path / "course.yml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    course = load_course(tmp_path / "course.yml")
    module = course.module(20)
    after = "2027-07-01T00:00:00+00:00"
    zip_path = build_zip(module, tmp_path / "20_capstone.zip", course=course)
    with zipfile.ZipFile(zip_path) as zf:
        names = zf.namelist()
        schema = zf.read(ZIP_PATH).decode()
    assert "tinytorch_data/digits_8x8/digits.csv.gz" in names and "course.yml" in names
    assert "reference/capstone.py" not in names
    assert schema == extract(SOURCE.read_text(encoding="utf-8"), SOURCE.name)
    full = dump_notebook(build_notebook(module, "full")).encode()
    res = _run(_container(tmp_path / "full", zip_path, full, "20_capstone.ipynb"), now=after)
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
    res2 = _run(_container(tmp_path / "stub", zip_path, stub, "20_capstone.ipynb"), now=after)
    assert res2["score"] == 0 and "leaderboard" not in res2
    event2 = next(t for t in res2["tests"] if t["name"].endswith("olympics_event"))
    assert "extra_data" not in event2 and "benchmark report" not in event2["output"]


def test_one_zip_grades_the_term_deciding_open_modules_at_grading_time(tmp_path):
    """Issue 34 item 1: one module-03 zip, built once (today, before the term), grades the
    same notebook before module 01 is due, in its late window, after it closed while module 02
    is still open, and after both closed: each earlier module comes from the student's upload
    or the release stub while open and from the course's reference once closed, decided from
    the close times the zip carries and the grading time, and every run says so in
    results.json. The zip carries every earlier reference, but the sandbox sees only the
    package built for the run: an open module's reference never reaches it."""
    from coursebuild.release import dump_notebook
    from coursebuild.samples import build_notebook
    from coursekit import paths
    from coursekit.course import load_course

    course = load_course()
    module = course.module("03")
    zip_path = build_zip(module, tmp_path / "03_layers.zip", course=course)
    with zipfile.ZipFile(zip_path) as zf:
        for slug in ("tensor", "activations"):
            assert zf.read(f"reference/{slug}.py").decode() == (
                paths.REFERENCE / f"{slug}.py").read_text(encoding="utf-8")
            assert zf.read(f"stubs/{slug}.py").decode() == (
                paths.RELEASE / "tinytorch" / f"{slug}.py").read_text(encoding="utf-8")
        assert "reference/layers.py" not in zf.namelist()
        # the graded module's release stub ships for the trusted twin that times baselines
        assert zf.read("stubs/layers.py").decode() == (
            paths.RELEASE / "tinytorch" / "layers.py").read_text(encoding="utf-8")
    full = dump_notebook(build_notebook(module, "full")).encode()
    closes = {m: course.closes_at(course.module(m)) for m in ("01", "02")}
    assert closes["01"] < closes["02"]
    dates = {  # (01, 02) as each date finds them
        "before 01 is due": ("2027-01-20T12:00:00+00:00", "open", "open"),
        "01 late, not closed": ("2027-01-30T12:00:00+00:00", "open", "open"),
        "01 closed, 02 open": ("2027-02-06T12:00:00+00:00", "closed", "open"),
        "both closed": ("2027-02-22T12:00:00+00:00", "closed", "closed"),
    }
    alone, uploaded = {}, {}
    for label, (when, m1, m2) in dates.items():
        t = dt.datetime.fromisoformat(when)
        assert (t >= closes["01"], t >= closes["02"]) == (m1 == "closed", m2 == "closed"), label
        key = label.replace(" ", "_").replace(",", "")
        alone[label] = _run(_container(tmp_path / f"a_{key}", zip_path, full, "03_layers.ipynb"),
                            now=when)
        uploaded[label] = _run(_container(tmp_path / f"u_{key}", zip_path, full,
                                          "03_layers.ipynb", extra=_full_notebooks(course, 3)),
                               now=when)
    for label, (when, m1, m2) in dates.items():
        for res, own in ((alone[label], "stub"), (uploaded[label], "yours")):
            check_results_schema(res)
            extra = res["extra_data"]
            assert extra["schedule"]["decided_at"] == when
            assert extra["schedule"]["clock"] == "given by the grading command"
            early = extra["earlier_modules"]
            want = {"01_tensor": "reference" if m1 == "closed" else own,
                    "02_activations": "reference" if m2 == "closed" else own}
            assert {k: v["from"] for k, v in early.items()} == want, label
            sub = next(t for t in res["tests"] if t["name"].endswith("submission"))
            for name, source in want.items():
                n = name[:2]
                assert early[name].get("closes") or early[name].get("closed"), (label, name)
                if source == "reference":
                    line = next(x for x in sub["output"].splitlines() if "no longer accept" in x)
                    assert n in line.split("no longer")[0], (label, line)
                elif source == "stub":
                    assert early[name]["why"] == f"you did not upload {name}.ipynb with this " \
                                                 "notebook"
                    # one paragraph names every stub and why (docs/grading.md)
                    assert f"{name} (you did not upload {name}.ipynb" in sub["output"], \
                        sub["output"]
                else:
                    out = sub["output"]
                    assert "graded with your own " in out and f"{name}.ipynb" in out, out
        assert uploaded[label]["score"] == module.points, label
    assert alone["both closed"]["score"] == module.points
    for label in ("before 01 is due", "01 late, not closed", "01 closed, 02 open"):
        assert alone[label]["score"] < module.points, label  # the open stubs cost points
    # the same module source (one variant) and the same zip: only the grading time moved it
    key = {r["extra_data"]["variant"]["key"] for r in [*alone.values(), *uploaded.values()]}
    assert len(key) == 1


def test_the_grading_clock_decides_when_no_time_is_given(tmp_path):
    """Gradescope passes no --now: the container's clock decides, recorded as such; the
    submission's metadata time (which it could not choose anyway) is recorded, not used."""
    from coursekit.course import load_course

    course = load_course()
    module = course.module("02")
    zip_path = build_zip(module, tmp_path / "02.zip", course=course)
    nb = notebook_bytes("x = 1\n")
    res = _run(_container(tmp_path / "c", zip_path, nb, "02_activations.ipynb"))
    sched = res["extra_data"]["schedule"]
    assert sched["clock"] == "grading machine's clock"
    decided = dt.datetime.fromisoformat(sched["decided_at"])
    assert abs((decided - dt.datetime.now(dt.timezone.utc)).total_seconds()) < 600
    closed = decided >= course.closes_at(course.module("01"))
    assert res["extra_data"]["earlier_modules"]["01_tensor"]["from"] == (
        "reference" if closed else "stub")
    bad = _run(_container(tmp_path / "bad", zip_path, nb, "02_activations.ipynb"),
               now="2027-02-22 12:00")
    assert bad["score"] == 0 and "UTC offset" in bad["extra_data"]["grader_error"]
