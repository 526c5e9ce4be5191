"""The benchmarks' measuring tools (bench/benchlib.py, bench/grading_cpu.py) measure what they say.

Timing is never asserted (no verdict depends on how fast a busy machine is): these tests check
that a run's CPU figure covers processes nobody waits for, that the grading guard builds the
notebook it claims to grade and decides from its figures as documented.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys

from coursekit import paths
from coursekit.course import load_course

BENCH = paths.REPO_ROOT / "bench"


def _load(name: str):
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


benchlib = _load("benchlib")
grading_cpu = _load("grading_cpu")

#: A child that starts a grandchild burning ~0.6 s of CPU and exits at once without waiting:
#: the grandchild is reparented to init, so getrusage(RUSAGE_CHILDREN) never sees its time.
_ORPHAN = (
    "import subprocess, sys\n"
    "subprocess.Popen([sys.executable, '-c', 'import time\\n"
    "t = time.process_time()\\nwhile time.process_time() - t < 0.6: pass'])\n"
)


def _cgroup_available() -> bool:
    group = benchlib.CpuGroup("tt-test-probe")
    try:
        return group.path is not None
    finally:
        group.remove()


def test_a_run_counts_the_cpu_of_a_grandchild_nobody_waits_for():
    usage = benchlib.run([sys.executable, "-c", _ORPHAN], prefix="tt-test-orphan")
    assert usage.returncode == 0, usage.stderr.decode(errors="replace")
    assert usage.complete == _cgroup_available(), (
        "a run says its CPU figure is complete exactly when it had a cgroup (root)")
    if usage.complete:
        assert usage.cpu_s >= 0.55, (
            f"the orphaned grandchild's 0.6 s of CPU must be counted, got {usage.cpu_s:.2f} s")
    else:  # without a cgroup only waited-for children count: the figure says it is partial
        assert usage.cpu_s < 0.55


def test_a_run_leaves_no_cgroup_behind():
    before = {p.name for base, _ in benchlib.MOUNTS if base.is_dir()
              for p in base.glob("tt-test-left-*")}
    benchlib.run([sys.executable, "-c", "pass"], prefix="tt-test-left")
    after = {p.name for base, _ in benchlib.MOUNTS if base.is_dir()
             for p in base.glob("tt-test-left-*")}
    assert after == before


def test_closed_course_moves_every_window_a_year_back(tmp_path):
    import datetime as dt

    course = load_course(benchlib.closed_course(tmp_path))
    real = load_course()

    def days(a: str, b: str) -> int:
        fmt = "%Y-%m-%d %H:%M"
        return (dt.datetime.strptime(a, fmt) - dt.datetime.strptime(b, fmt)).days

    for closed, open_ in zip(course.modules, real.modules, strict=True):
        assert days(open_.due, closed.due) in (365, 366)
        assert days(open_.release, closed.release) in (365, 366)


def test_alternative_notebook_exports_exactly_the_alternative(tmp_path):
    from alternatives import build_alternative

    from autograder.harness.package import export_submission

    course = load_course()
    module = course.module("01")
    alt = sorted((grading_cpu.ALTERNATIVES / module.name).glob("*.py"))[0]
    nb = tmp_path / f"{module.name}.ipynb"
    nb.write_text(json.dumps(grading_cpu.alternative_notebook(module, alt)), encoding="utf-8")
    source = export_submission(nb, slug=module.slug, number=module.number, title=module.title)
    body = [ln for ln in build_alternative(alt).splitlines() if ln.strip()]
    assert all(ln in source for ln in body), (
        f"the exported module must hold every line of {alt.name} put on the release")


def _run(module: str, impl: str, cpu: float, score: float = 50.0,
         complete: bool = True):
    return grading_cpu.Run(module, impl, cpu, 2 * cpu, score, 50.0, complete)


def test_guard_passes_runs_within_the_budget():
    runs = [[_run("01_tensor", "reference", 1.0)], [_run("01_tensor", "helpers", 59.0)]]
    assert grading_cpu.verdicts(runs, 60.0) == []


def test_guard_fails_a_median_over_the_budget_and_names_it():
    runs = [[_run("09_spatial", "gather", c) for c in (55.0, 61.0, 70.0)]]
    problems = grading_cpu.verdicts(runs, 60.0)
    assert problems == ["09_spatial (gather): 61.0 CPU-s, over the budget of 60"]


def test_guard_fails_an_alternative_that_scores_less_than_the_reference():
    runs = [[_run("03_layers", "reference", 1.0, score=50.0)],
            [_run("03_layers", "tables", 1.0, score=48.0)]]
    assert grading_cpu.verdicts(runs, 60.0) == [
        "03_layers (tables): scored 48, the reference 50"]


def test_guard_fails_a_reference_that_did_not_grade_and_an_incomplete_figure():
    runs = [[_run("05_autograd", "reference", 1.0, score=0.0, complete=False)]]
    problems = grading_cpu.verdicts(runs, 60.0)
    assert len(problems) == 2
    assert "no cgroup" in problems[0] and "scored 0" in problems[1]


def test_guard_reads_its_budget_from_course_yml():
    assert load_course().course.grading.cpu_budget_s == 60
    assert os.path.basename(grading_cpu.TITO) == "tito"
