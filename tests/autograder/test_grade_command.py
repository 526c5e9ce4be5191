"""``tito grade NN notebook.ipynb`` grades what Gradescope would (issue 34 item 7).

On Gradescope a student uploads module 02 with their 01_tensor.ipynb, and while module 01 is
open the autograder grades module 02 with it; a TA who downloads the submission and grades the
notebook gets the same score: the earlier notebooks beside it are used, and the lines after
the score say where each earlier module came from, or why the release stub was used.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from coursekit.course import load_course
from coursekit.paths import REPO_ROOT

OPEN = "2027-01-28 12:00"     # module 01 due, still open for late work
CLOSED = "2027-03-28 12:00"   # module 01 closed


def _tito(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tito.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=900,
                          env={**__import__("os").environ, "PYTHONPATH": str(REPO_ROOT)})


def test_tito_grade_uses_the_earlier_notebooks_beside_the_one_it_grades(tmp_path: Path) -> None:
    from coursebuild.release import dump_notebook
    from coursebuild.samples import build_notebook, earlier_full_notebooks

    course = load_course()
    module = course.module("02")
    full = dump_notebook(build_notebook(module, "full"))
    upload = tmp_path / "upload"
    alone = tmp_path / "alone"
    for folder in (upload, alone):
        folder.mkdir()
        (folder / f"{module.name}.ipynb").write_text(full)
    for name, text in earlier_full_notebooks(course, module).items():
        (upload / name).write_text(text)

    beside = _tito("grade", "02", str(upload / f"{module.name}.ipynb"), "--as-of", OPEN,
                   "-o", str(tmp_path / "beside.json"), cwd=tmp_path)
    assert beside.returncode == 0, beside.stderr
    lines = beside.stdout.strip().splitlines()
    assert lines[0].startswith(f"{module.name}.ipynb: {module.points:g} / {module.points:g}")
    assert lines[1].startswith("01_tensor: the student's own 01_tensor.ipynb (open until ")
    res = json.loads((tmp_path / "beside.json").read_text())
    assert res["extra_data"]["earlier_modules"]["01_tensor"]["from"] == "yours"

    solo = _tito("grade", "02", str(alone / f"{module.name}.ipynb"), "--as-of", OPEN,
                 "-o", str(tmp_path / "alone.json"), cwd=tmp_path)
    assert solo.returncode == 0, solo.stderr
    first, why = solo.stdout.strip().splitlines()
    assert float(first.split(": ")[1].split(" / ")[0]) < module.points
    assert why.startswith("01_tensor: its release stub, because you did not upload "
                          "01_tensor.ipynb") and "beside the notebook" in why

    later = _tito("grade", "02", str(alone / f"{module.name}.ipynb"), "--as-of", CLOSED,
                  "-o", str(tmp_path / "later.json"), cwd=tmp_path)
    assert later.returncode == 0, later.stderr
    assert later.stdout.strip().splitlines()[1:] == [
        "earlier modules on the course's reference (closed): 01_tensor"]
    assert json.loads((tmp_path / "later.json").read_text())["score"] == module.points
