"""The same submission gets the same grade under any load, on any worker (issue 27).

One Gradescope-style export per training module (07, 09 and 13), each holding that module's
complete notebook, is regraded twice with ``tito regrade --dry-run``:

1. quietly, on a local Dask cluster of two workers (``--scheduler local:2``);
2. beside busy processes: the regrade and every grading child it starts pinned (``taskset``)
   to one CPU that three busy loops share, grading two submissions at once (``--jobs 2``),
   with the exports now holding the quiet run's results as their old ones (what Gradescope's
   export holds after a grading on a quiet machine).

The loaded run must report no change, and every results.json must equal the quiet one field by
field apart from :data:`autograder.harness.publish.RUN_FACTS` (wall and CPU seconds, the
sandbox's uid): scores, statuses, every output, every milestone metric, the steps trained.

Lean but real: a copy of course.yml in which every module has closed (graded on the reference
of the earlier modules, as at the end of term), each training milestone has one seed slot and a
short fixed training (how long a run trains changes the CI time, not whether the run is
deterministic; thresholds low enough that the short training passes), and the hidden cases
have 2 variants instead of 64 (a regrade computes the reference's values for every variant).
The hidden suites, the public tests, the sandbox, the per-submission variants, the training in
the child and the scoring in the parent are the real ones.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from lean_training import LEAN_TRAINING, lean_milestones

from autograder.harness.publish import RUN_FACTS, without_run_facts
from coursebuild.release import dump_notebook
from coursebuild.samples import build_notebook
from coursekit import paths
from coursekit.course import load_course

MODULES = ("07_training", "09_spatial", "13_transformers")
BUSY_LOOPS = 3


def _lean_course(out: Path) -> Path:
    data = yaml.safe_load((paths.REPO_ROOT / "course.yml").read_text(encoding="utf-8"))
    data["course"]["grading"]["variants"] = 2
    for m in data["modules"]:  # three years earlier: every module has closed
        for key in ("release", "due"):
            when = dt.datetime.strptime(m[key], "%Y-%m-%d %H:%M")
            m[key] = when.replace(year=when.year - 3).strftime("%Y-%m-%d %H:%M")
    out.write_text(yaml.safe_dump(lean_milestones(data), sort_keys=False), encoding="utf-8")
    return out


def _write_export(root: Path, module: Any, notebook: str,
                  old: dict[str, Any] | None) -> None:
    """``root/<module>/assignment_<id>_export/`` with one submission of ``notebook``; ``old``:
    the results.json Gradescope's export holds for it (None: never graded)."""
    export = root / module.name / f"assignment_{7000 + module.number}_export"
    sub = export / "submission_1"
    sub.mkdir(parents=True)
    (sub / f"{module.name}.ipynb").write_text(notebook, encoding="utf-8")
    record: dict[str, Any] = {
        ":submitters": [{":name": "Ada Lovelace", ":sid": "S1001",
                         ":email": "alovelace@example.edu"}],
        ":created_at": "2024-01-01 12:00:00.000000000 -05:00",
        ":assignment": {":title": f"Module {module.number:02d} · {module.title}"},
        ":score": None if old is None else old["score"], ":results": old}
    text = yaml.safe_dump({"submission_1": record}, sort_keys=True, allow_unicode=True)
    text = re.sub(r"(:created_at: )'([^']*)'", r"\1\2", text)
    (export / "submission_metadata.yml").write_text(text, encoding="utf-8")


def _results(out: Path) -> dict[str, dict[str, Any]]:
    found = {}
    for path in out.rglob("results.json"):
        results = json.loads(path.read_text(encoding="utf-8"))
        found[results["extra_data"]["module"]] = results
    return found


def _differences(a: Any, b: Any, where: str = "") -> list[str]:
    """Every path at which two JSON values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b), key=str)
                for d in (_differences(a.get(k), b.get(k), f"{where}.{k}") if k in a and k in b
                          else [f"{where}.{k}: only in {'first' if k in a else 'second'}"])]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True))
                for d in _differences(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where}: {json.dumps(a)[:200]} != {json.dumps(b)[:200]}"]


def _busy(cpu: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen(["taskset", "-c", str(cpu), sys.executable, "-c",
                              "while True: pass"]) for _ in range(BUSY_LOOPS)]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from staff.regrade.core import regrade

    tmp = tmp_path_factory.mktemp("under-load")
    course_file = _lean_course(tmp / "course.yml")
    course = load_course(course_file)
    modules = [course.module(name) for name in MODULES]
    notebooks = {m.name: dump_notebook(build_notebook(m, "full")) for m in modules}

    quiet_exports = tmp / "exports-quiet"
    for m in modules:
        _write_export(quiet_exports, m, notebooks[m.name], None)
    regrade(export=[quiet_exports / m.name for m in modules], course=course_file,
            out=tmp / "quiet", dry_run=True, scheduler="local:2")
    quiet = _results(tmp / "quiet")

    loaded_exports = tmp / "exports-loaded"
    for m in modules:
        _write_export(loaded_exports, m, notebooks[m.name], quiet[m.name])
    cpu = min(os.sched_getaffinity(0))
    busy = _busy(cpu)
    try:
        t0 = time.monotonic()
        proc = subprocess.run(
            ["taskset", "-c", str(cpu), sys.executable, "-m", "tito.cli", "--course",
             str(course_file), "regrade", *(str(loaded_exports / m.name) for m in modules),
             "--dry-run", "-o",
             str(tmp / "loaded"), "--jobs", "2"],
            capture_output=True, text=True, timeout=1200,
            env=dict(os.environ, COLUMNS="200", OPENBLAS_NUM_THREADS="1"))
        wall = time.monotonic() - t0
        still_busy = all(p.poll() is None for p in busy)
    finally:
        for p in busy:
            p.kill()
            p.wait()
    return {"quiet": quiet, "loaded": _results(tmp / "loaded"), "proc": proc, "wall": wall,
            "still_busy": still_busy, "course": course, "course_file": course_file,
            "report": json.loads((tmp / "loaded" / "regrade_report.json").read_text())
            if (tmp / "loaded" / "regrade_report.json").is_file() else None}


def test_the_quiet_run_grades_every_training_module_for_real(runs: dict[str, Any]) -> None:
    """Full marks with every milestone trained and measured: the comparison below is between
    two real gradings, not two empty ones."""
    course = runs["course"]
    assert sorted(runs["quiet"]) == sorted(MODULES)
    for name, results in runs["quiet"].items():
        module = course.module(name)
        unsubmitted = sum(ms.points for ms in course.milestones_graded_with(module.number)
                          if ms.weights)  # cnn_cifar_1998: no weights were uploaded
        assert results["score"] == results["extra_data"]["max_score"] - unsubmitted, name
        assert results["score"] > module.points, name
        assert "grader_errors" not in results["extra_data"], results["extra_data"]
        for mid, ms in results["extra_data"]["milestones"].items():
            if mid not in LEAN_TRAINING:
                continue  # cnn_cifar_1998: submitted weights, nothing trained
            assert ms["passed"] and ms["steps"] == ms["total_steps"], (mid, ms)
            assert ms["work"] == LEAN_TRAINING[mid] and all(v is not None
                                                            for v in ms["values"].values())


def test_a_regrade_under_load_shows_no_change(runs: dict[str, Any]) -> None:
    proc = runs["proc"]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert runs["still_busy"], "a busy loop ended early: the run was not under load"
    summary = " ".join(proc.stdout.split())
    assert f"{len(MODULES)} submission(s): 0 down, 0 up, {len(MODULES)} unchanged" in summary, \
        summary[-1500:]
    assert "0 test change(s)" in summary
    rows = runs["report"]["submissions"]
    assert sorted(r["module"] for r in rows) == sorted(MODULES)
    assert all(r["outcome"] == "scored" and r["delta"] == 0 and not r["changed_tests"]
               for r in rows), rows


@pytest.mark.parametrize("module", MODULES)
def test_results_are_identical_quiet_on_dask_and_loaded_with_jobs(
        runs: dict[str, Any], module: str) -> None:
    quiet, loaded = runs["quiet"][module], runs["loaded"][module]
    diff = _differences(without_run_facts(quiet), without_run_facts(loaded))
    assert diff == [], f"{module} graded differently under load: {diff[:20]}"
    for mid, ms in loaded["extra_data"]["milestones"].items():
        if mid in LEAN_TRAINING:  # the CPU seconds are recorded, and only they may differ
            assert all(c is not None and c >= 0 for c in ms["cpu_s"]), ms


def test_run_facts_name_only_timing_and_the_sandbox_uid() -> None:
    """What the comparison ignores is short and says why: nothing a score depends on (the
    moment of grading is ignored; which modules it found closed is compared)."""
    assert RUN_FACTS == (("execution_time",), ("extra_data", "run", "elapsed_s"),
                         ("extra_data", "sandbox"), ("extra_data", "milestones", "*", "cpu_s"),
                         ("extra_data", "schedule", "decided_at"))
    sample = {"score": 1.0, "execution_time": 3.0, "extra_data": {
        "run": {"elapsed_s": 2.0, "launches": 1}, "sandbox": ["euid=123"],
        "milestones": {"a": {"cpu_s": [1.0], "values": {"0": 0.5}}},
        "schedule": {"decided_at": "2027-02-01T10:00:00+00:00", "clock": "machine"}}}
    assert without_run_facts(sample) == {"score": 1.0, "extra_data": {
        "run": {"launches": 1}, "milestones": {"a": {"values": {"0": 0.5}}},
        "schedule": {"clock": "machine"}}}
    assert sample["execution_time"] == 3.0  # a copy: the results themselves are untouched
    assert _differences({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]}) == [".a[1].b: 2 != 3"]
    assert _differences({"a": 1}, {}) == [".a: only in first"]


#: The script that runs each milestone, and its arguments (cnn_fashion_1998 runs cnn_1998's
#: code path on other data: left out to save CI time).
SCRIPTS = {"xor_1969": ("xor_1969", ()), "mlp_1986": ("mlp_1986", ()),
           "cnn_1998": ("cnn_1998", ()),
           "transformer_reversal_2017": ("transformer_2017", ("--task", "reversal")),
           "transformer_2017": ("transformer_2017", ("--task", "kjv"))}


@pytest.mark.parametrize("mid", sorted(SCRIPTS))
def test_the_students_script_prints_the_graders_accuracy_for_the_same_seeds(
        runs: dict[str, Any], mid: str, tmp_path: Path) -> None:
    """The milestone script, run with the graded slot's training seed and task variant (as
    results.json records them for staff), trains the same fixed work and prints the metric the
    grader measured, to the last digit and the same count, with its steps and CPU seconds."""
    graded = next(r["extra_data"]["milestones"][mid] for r in runs["quiet"].values()
                  if mid in r["extra_data"]["milestones"])
    (seed,), (variant,) = graded["train_seeds"], graded["data_seeds"]
    script, args = SCRIPTS[mid]
    proc = subprocess.run(
        [sys.executable, str(paths.REPO_ROOT / "milestones" / f"{script}.py"), "--package",
         "tinytorch_ref", "--quiet", "--plot", str(tmp_path / "curve.png"), *args,
         "--seed", str(seed), "--variant", str(variant)],
        capture_output=True, text=True, timeout=600, cwd=paths.REPO_ROOT,
        env=dict(os.environ, TITO_COURSE=str(runs["course_file"]), COLUMNS="300"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = next(ln for ln in proc.stdout.splitlines()
                if f"seed {seed} on variant {variant}:" in ln)
    printed = re.search(r"(\d\.\d{4}) \((\d+)/(\d+)\); ([\d,]+) of ([\d,]+) steps in "
                        r"([\d.]+) CPU-s", line)
    assert printed, line
    value, right, n = printed.group(1), int(printed.group(2)), int(printed.group(3))
    assert right / n == graded["values"]["0"], (line, graded["values"])
    assert f"{value} ({right}/{n})" in next(t["output"] for r in runs["quiet"].values()
                                            for t in r["tests"] if f"· {mid} ·" in t["name"])
    steps = [int(g.replace(",", "")) for g in printed.group(4, 5)]
    assert steps == [graded["total_steps"][0]] * 2


def test_a_seed_stopped_at_its_cap_fails_and_says_how_far_it_got(tmp_path: Path) -> None:
    """CPU time is only a cap, and hitting it is a result of its own: with mlp_1986's cap cut
    far below what its fixed training needs, every seed is stopped and fails with the steps it
    did out of its work, instead of being scored on a model trained for less. (300 epochs,
    13,500 steps, take about 5 CPU seconds here: no machine does them in 0.1; how many it
    does, if any, is the one figure that depends on its speed.)"""
    from autograder.harness.core import grade_module

    data = yaml.safe_load(_lean_course(tmp_path / "lean.yml").read_text(encoding="utf-8"))
    for ms in data["milestones"]:
        if ms["id"] == "mlp_1986":
            ms.update(training={"epochs": 300, "batch_size": 32}, time_budget_s=0.1)
    (tmp_path / "capped.yml").write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    course = load_course(tmp_path / "capped.yml")
    module = course.module("07_training")
    notebook = tmp_path / f"{module.name}.ipynb"
    notebook.write_text(dump_notebook(build_notebook(module, "full")), encoding="utf-8")
    results = grade_module(course=course, module=module, submission=notebook,
                           out=tmp_path / "results.json")
    test = next(t for t in results["tests"] if "· mlp_1986 ·" in t["name"])
    extra = results["extra_data"]["milestones"]["mlp_1986"]
    assert test["score"] == 0 and test["status"] == "failed"
    done = re.search(r"seed 0: your training (did ([\d,]+)|did not finish one) of (its )?"
                     r"13,500 steps in the 0.1 CPU-s this milestone allows per seed, and was "
                     r"stopped", test["output"])
    assert done, test["output"]
    steps = int(done.group(2).replace(",", "")) if done.group(2) else 0
    assert extra["values"] == {"0": None} and extra["total_steps"] == [13500]
    assert (extra["steps"][0] or 0) == steps < 13500 and extra["cap_s"] == 0.1
    assert "grader_errors" not in results["extra_data"]
    xor = next(t for t in results["tests"] if "· xor_1969 ·" in t["name"])
    assert xor["status"] == "passed"  # the other milestone of the module is unaffected
