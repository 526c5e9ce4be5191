"""Milestones in the student release (issue 11 items 7 and 8): a script names the modules it
needs that are still stubs *before* training (directly and through the student CLI), and
nothing a student runs offers the staff's reference package or staff commands."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from coursekit import paths
from coursekit.course import load_course

COURSE = load_course()


@pytest.fixture()
def release(tmp_path: Path) -> Path:
    root = tmp_path / "student"
    shutil.copytree(paths.RELEASE, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=root, capture_output=True, text=True,
                          timeout=300, env={"PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg",
                                            "OPENBLAS_NUM_THREADS": "1", "HOME": str(root)})


def _finish(root: Path, *, except_: int) -> None:
    """Every module the reference has, as if exported, except module ``except_``."""
    for m in COURSE.modules:
        ref = paths.REFERENCE / f"{m.slug}.py"
        if ref.exists() and m.number != except_:
            shutil.copy(ref, root / "tinytorch" / f"{m.slug}.py")


def test_script_names_stub_modules_before_training(release):
    proc = _run(release, "milestones/xor_1969.py", "--quiet")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1
    assert line.startswith("xor_1969 needs modules 01, 02, 03, 04, 05, 06, 07; still stubs")
    assert "module 01: " in line and "module 05: " in line and "python export.py NN" in line
    assert "seed" not in proc.stdout  # nothing trained


def test_only_the_unfinished_module_is_named(release):
    _finish(release, except_=5)
    proc = _run(release, "milestones/perceptron_1957.py", "--quiet")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "still stubs in tinytorch — module 05: " in proc.stderr
    assert "module 01" not in proc.stderr.split("still stubs")[1]
    cli = _run(release, "tito_student.py", "milestone", "run", "perceptron_1957")
    assert cli.returncode == 2 and "05_autograd still has stubs" in cli.stderr


def test_finished_package_passes_the_check(release):
    _finish(release, except_=0)
    sys.path.insert(0, str(release / "milestones"))
    try:
        import importlib

        runner = importlib.import_module("_runner")
        assert runner.stubs_in(importlib.import_module("tinytorch_ref")) == {}
    finally:
        sys.path.remove(str(release / "milestones"))
        sys.modules.pop("_runner", None)


def test_stub_pattern_reads_multiline_stubs():
    sys.path.insert(0, str(paths.REPO_ROOT / "milestones"))
    try:
        from _runner import _STUB
    finally:
        sys.path.remove(str(paths.REPO_ROOT / "milestones"))
    text = ("raise NotImplementedError(  # STUB\n    'module 09: implement Conv2d.forward "
            "(see its docstring)')\nraise NotImplementedError(\"module 02: implement relu\")")
    assert _STUB.findall(text) == [("09", "Conv2d.forward"), ("02", "relu")]


def test_no_staff_leftovers_in_what_students_run(release):
    help_ = _run(release, "milestones/xor_1969.py", "--help")
    assert help_.returncode == 0 and "--package" not in help_.stdout
    assert "tinytorch_ref" not in help_.stdout
    (release / "tinytorch" / "__init__.py").write_text("raise ImportError('broken on purpose')\n")
    broken = _run(release, "milestones/xor_1969.py")
    assert "python export.py NN" in broken.stderr and "tito export" not in broken.stderr
    assert "tinytorch_ref" not in broken.stderr
    for script in sorted((release / "milestones").glob("*.py")):
        doc = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) or ""
        assert "tinytorch_ref" not in doc, f"{script.name}: its docstring offers tinytorch_ref"
    init = (paths.RELEASE / "tinytorch" / "__init__.py").read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(init)) or ""
    assert doc.startswith("tinytorch — your framework") and "reference" not in doc
    assert "tinytorch_ref" not in init
