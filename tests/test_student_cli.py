"""The student's `tito` (issue 11): start, test, export, status, milestone, submit, in a copy
of the student release, with a module filled in from the solution (the sample class's full
notebook) and left as released."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from coursekit import paths

FULL = paths.SAMPLES / "class_01_tensor" / "s1001_full" / "01_tensor.ipynb"


@pytest.fixture()
def student(tmp_path: Path) -> Path:
    root = tmp_path / "student"
    shutil.copytree(paths.RELEASE, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def tito(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "tito_student.py", *args], cwd=root,
                          capture_output=True, text=True, timeout=600,
                          env={"PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg",
                               "OPENBLAS_NUM_THREADS": "1", "HOME": str(root)})


def test_every_verb_has_help_with_an_example(student):
    for verb in (["module", "start"], ["module", "test"], ["module", "export"],
                 ["milestone", "run"], ["status"], ["submit"]):
        out = tito(student, *verb, "--help")
        assert out.returncode == 0 and "Example: tito " in out.stdout, verb


def test_a_week_on_module_01(student):
    started = tito(student, "module", "start", "01")
    assert started.returncode == 0 and "jupyter lab work/01_tensor/01_tensor.ipynb" in started.stdout
    untouched = tito(student, "module", "test", "01")
    assert untouched.returncode == 1 and "0 of" in untouched.stdout
    assert "implement Tensor" in untouched.stdout
    shutil.copy(FULL, student / "work" / "01_tensor" / "01_tensor.ipynb")
    tested = tito(student, "module", "test", "01")
    assert tested.returncode == 0, tested.stdout + tested.stderr
    n = tested.stdout.strip().splitlines()[-1]
    assert n.startswith("01_tensor: ") and " public checks pass" in n
    exported = tito(student, "module", "export", "01")
    assert exported.returncode == 0 and "imports cleanly" in exported.stdout
    assert "implement Tensor" not in (student / "tinytorch" / "tensor.py").read_text()
    status = tito(student, "status")
    line = next(ln for ln in status.stdout.splitlines() if ln.startswith("01_tensor"))
    assert "started, done (exported, no stubs left)" in line and "days left" in line
    assert "next: finish 02_activations" in status.stdout
    locked = tito(student, "milestone", "run", "perceptron_1957")
    assert locked.returncode == 2 and "02_activations still has stubs" in locked.stderr
    submitted = tito(student, "submit", "01")
    assert submitted.returncode == 0 and "upload submit/01_tensor.zip" in submitted.stdout
    with zipfile.ZipFile(student / "submit" / "01_tensor.zip") as zf:
        assert zf.namelist() == ["01_tensor.ipynb"]
        assert zf.read("01_tensor.ipynb") == FULL.read_bytes()


def test_errors_say_what_to_do(student):
    bad = tito(student, "module", "start", "99")
    assert bad.returncode == 2 and bad.stderr.startswith("tito: unknown or unreleased module")
    again = tito(student, "module", "start", "01")
    again = tito(student, "module", "start", "01")
    assert again.returncode == 0 and "never overwritten" in again.stdout
    unknown = tito(student, "milestone", "run", "moon_landing_1969")
    assert unknown.returncode == 2 and "unlocked:" in unknown.stderr


def test_submit_09_carries_the_cifar_weights_the_milestone_script_wrote(student):
    """cnn_cifar_1998 is scored from build/milestones/cnn_cifar_1998.npz: submit adds it."""
    assert tito(student, "module", "start", "09").returncode == 0
    missing = tito(student, "submit", "09")
    assert missing.returncode == 0
    assert "cnn_cifar_1998.npz not found" in " ".join(missing.stdout.split())
    weights = student / "build" / "milestones" / "cnn_cifar_1998.npz"
    weights.parent.mkdir(parents=True)
    weights.write_bytes(b"PK weights")
    submitted = tito(student, "submit", "09")
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    with zipfile.ZipFile(student / "submit" / "09_spatial.zip") as zf:
        assert "cnn_cifar_1998.npz" in zf.namelist() and "09_spatial.ipynb" in zf.namelist()
        assert zf.read("cnn_cifar_1998.npz") == b"PK weights"
