"""The student's `python export.py NN` (issue 11 item 9): it imports what it wrote and names a
provided definition that went missing, instead of exporting "successfully" what the grader
then cannot import."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from coursebuild.release import built_modules, dump_notebook
from coursekit import paths
from coursekit.course import load_course

MODULE = built_modules(load_course())[0]


@pytest.fixture()
def release(tmp_path: Path) -> Path:
    root = tmp_path / "student"
    shutil.copytree(paths.RELEASE, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _export(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "export.py", f"{MODULE.number:02d}"], cwd=root,
                          capture_output=True, text=True, timeout=120)


def _edit_notebook(root: Path, edit) -> None:
    path = root / MODULE.name / f"{MODULE.name}.ipynb"
    nb = json.loads(path.read_text(encoding="utf-8"))
    edit([c for c in nb["cells"] if c["cell_type"] == "code"])
    path.write_text(dump_notebook(nb), encoding="utf-8")


def test_untouched_release_exports_and_imports(release):
    proc = _export(release)
    assert proc.returncode == 0, proc.stderr
    assert "imports cleanly" in proc.stdout


def test_a_cell_that_lost_its_export_line_is_named(release):
    target = release / "tinytorch" / f"{MODULE.slug}.py"
    before = target.read_text(encoding="utf-8")

    def drop_first_export_line(cells):
        for cell in cells:
            src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            if src.startswith("#| export") and "class " in src:
                cell["source"] = src.split("\n", 1)[1]
                return
        raise AssertionError("no export cell with a class")

    _edit_notebook(release, drop_first_export_line)
    proc = _export(release)
    assert proc.returncode == 2
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1
    assert "the export no longer defines" in line and "#| export" in line
    assert target.read_text(encoding="utf-8") == before  # nothing written


def test_an_export_that_does_not_import_is_reported(release):
    def break_import(cells):
        for cell in cells:
            src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            if src.startswith("#| export"):
                cell["source"] = src + "\n\nraise RuntimeError('left over from debugging')\n"
                return

    _edit_notebook(release, break_import)
    proc = _export(release)
    assert proc.returncode == 2
    assert "does not import: RuntimeError: left over from debugging" in proc.stderr
