"""`tito module new` (issue 12 item 8): a scaffolded module passes every pipeline check.

Works in a copy of the repository (never the checkout under test): scaffold a module that
course.yml does not list yet, sync, release, `course check`, then the module's contract,
authoring, notebook, doctest and scaffold tests and its mutation gate, all in that copy.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from coursekit.paths import REPO_ROOT

NUMBER, SLUG = 21, "worked_example"
NAME = f"{NUMBER:02d}_{SLUG}"


def _copy_repo(dest: Path) -> Path:
    """The repository's files (tracked ones when it is a git checkout) under ``dest``."""
    if (REPO_ROOT / ".git").exists():
        files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO_ROOT, capture_output=True,
                               check=True).stdout.decode().split("\0")
        for rel in filter(None, files):
            src = REPO_ROOT / rel
            if src.is_file():
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / rel)
    else:
        shutil.copytree(REPO_ROOT, dest, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(".venv", "build", "__pycache__"))
    return dest


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory: pytest.TempPathFactory):
    root = _copy_repo(tmp_path_factory.mktemp("repo"))
    # the copy's bytecode (and pytest's rewritten tests) written beside it, even where the
    # caller's environment says not to write bytecode: the commands below would each compile
    # the course's packages again
    env = {**os.environ, "PYTHONPATH": str(root), "OPENBLAS_NUM_THREADS": "1"}
    env.pop("TITO_COURSE", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)

    def tito(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tito.cli", *args], cwd=root, env=env,
                              capture_output=True, text=True, timeout=900)

    made = tito("module", "new", str(NUMBER), SLUG, "--title", "A worked example")
    assert made.returncode == 0, made.stderr
    for args in (["sync"], ["release", str(NUMBER)]):
        proc = tito(*args)
        assert proc.returncode == 0, proc.stderr
    return root, env, tito


def test_scaffold_writes_the_module_and_its_course_entry(scaffolded):
    root, _, tito = scaffolded
    for rel in (f"solutions/{NAME}/{NAME}.py", f"autograder/suites/{NAME}/suite.py",
                f"autograder/suites/{NAME}/bugs.py", f"student_release/{NAME}/{NAME}.ipynb"):
        assert (root / rel).is_file(), rel
    assert f"slug: {SLUG}" in (root / "course.yml").read_text(encoding="utf-8")
    check = tito("course", "check")
    assert check.returncode == 0, check.stderr
    assert f"{NUMBER:02d}" in check.stdout.split("built:")[1].split(";")[0]


def test_scaffold_passes_the_module_checks(scaffolded):
    root, env, _ = scaffolded
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         "tests/test_module_contract.py", "tests/test_authoring.py",
         "tests/test_student_notebooks.py", "tests/test_doctests.py", "tests/test_scaffolds.py",
         "-k", NAME], cwd=root, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout


def test_scaffold_builds_its_autograder_zip(scaffolded):
    """``tito autograder NN`` right after the scaffold: every case's expected value differs
    across the 64 variants (the build refuses a case a constant answer could pass)."""
    root, _, tito = scaffolded
    proc = tito("autograder", str(NUMBER), "-o", str(root / "build" / f"{NAME}.zip"))
    assert proc.returncode == 0, proc.stderr
    assert (root / "build" / f"{NAME}.zip").is_file()


def test_publish_runs_the_course_checks_first(scaffolded):
    """Issue 34: publishing a module that `course check` rejects is refused, one line per
    problem, nothing written; a module with a solution but no suite is not held back
    silently; before its release the same problem is a note, not a refusal."""
    import yaml

    root, _, tito = scaffolded
    course = yaml.safe_load((root / "course.yml").read_text(encoding="utf-8"))
    entry = next(m for m in course["modules"] if m["number"] == NUMBER)
    after, before = entry["release"], course["modules"][-2]["release"]
    buggy = root / "autograder" / "suites" / NAME / "bugs.py"
    suite = root / "autograder" / "suites" / NAME / "suite.py"
    saved = buggy.read_bytes(), suite.read_bytes()
    student = root.parent / "student-repo"
    try:
        buggy.unlink()
        refused = tito("publish", "--to", str(student), "--as-of", after)
        assert refused.returncode == 1
        lines = refused.stderr.strip().splitlines()
        assert lines[0] == (f"tito: autograder/suites/{NAME}/bugs.py: missing (at least five "
                            "plausible bugs the hidden suite must catch)")
        assert "nothing was published" in lines[-1] and len(lines) == 2
        assert not student.exists()
        early = tito("publish", "--to", str(student), "--as-of", before)
        assert early.returncode == 0, early.stderr
        assert f"note: not released yet, fix before it is: autograder/suites/{NAME}/bugs.py" \
            in early.stdout
        buggy.write_bytes(saved[0])
        suite.unlink()
        half = tito("publish", "--to", str(student), "--as-of", after)
        assert half.returncode == 1
        assert (f"tito: {NAME}: half built: autograder/suites/{NAME}/suite.py is missing"
                in half.stderr.splitlines())
    finally:
        buggy.write_bytes(saved[0])
        suite.write_bytes(saved[1])
    ok = tito("publish", "--to", str(student), "--as-of", after)
    assert ok.returncode == 0, ok.stderr
    assert (student / NAME / f"{NAME}.ipynb").is_file()


def test_scaffold_suite_kills_its_mutants(scaffolded):
    _, _, tito = scaffolded
    proc = tito("suite-strength", str(NUMBER))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "(100.0%)" in proc.stdout


def test_scaffold_never_overwrites_and_checks_the_slug(scaffolded):
    _, _, tito = scaffolded
    again = tito("module", "new", str(NUMBER), SLUG)
    assert again.returncode == 2 and "already exists" in again.stderr
    other = tito("module", "new", "3", "convolutions")
    assert other.returncode == 2 and "declared as 03_layers" in other.stderr
    bad = tito("module", "new", "22", "Bad-Slug")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
