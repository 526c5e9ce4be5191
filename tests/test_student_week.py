"""One student's whole week for module 05, through the student CLI, in a fresh virtual
environment made from the student release's ``requirements.txt`` (issue 11, "done when").

The student has modules 01-04 done (filled in from the solution and exported, as in earlier
weeks). This week: ``tito module start 05``, fill in the notebook (from the solution), ``tito
module test 05``, ``tito module export 05``, ``tito milestone run`` (locked until module 06,
which it names; then, with 06 done too, the perceptron trains and passes), ``tito status``,
``tito submit 05``. The zip the student uploads is graded by the Gradescope zip ``tito
autograder 05`` builds, unpacked into a simulated ``/autograder`` root under ``tmp_path``
and driven by its own ``run_autograder``: full marks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from coursebuild.release import dump_notebook
from coursebuild.samples import build_notebook
from coursekit import paths
from coursekit.course import load_course

COURSE = load_course()
WEEK = COURSE.module("05")
REPO = Path(__file__).resolve().parents[1]


def _check(proc: subprocess.CompletedProcess[str], code: int = 0) -> str:
    assert proc.returncode == code, (proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:])
    return proc.stdout


def _fill_in(root: Path, number: str) -> None:
    """What a student who finished writes: the release notebook with the solution's code."""
    module = COURSE.module(number)
    path = root / "work" / module.name / f"{module.name}.ipynb"
    assert path.is_file(), f"{path} was not created by `tito module start {number}`"
    path.write_text(dump_notebook(build_notebook(module, "full")), encoding="utf-8")


def test_a_students_week_on_module_05(tmp_path):
    root = tmp_path / "student"
    shutil.copytree(paths.RELEASE, root, ignore=shutil.ignore_patterns("__pycache__", "work",
                                                                        "submit"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items()
           if k.startswith("PIP_") or k in ("PATH", "HOME", "XDG_CACHE_HOME", "LANG")}
    env.update({"MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1", "PYTHONNOUSERSITE": "1"})
    # --no-compile: what the student's pip would byte-compile up front (Jupyter, matplotlib,
    # otter: ~14 CPU-s) Python compiles on first import in this venv instead; nothing else differs
    install = subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-compile", "-r",
                              "requirements.txt"],
                             cwd=root, env=env, capture_output=True, text=True, timeout=1800)
    _check(install)
    _check(subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "-e", "."],
                          cwd=root, env=env, capture_output=True, text=True, timeout=600))
    # the student's environment has no course repository, no reference, no PyTorch
    probe = subprocess.run([str(py), "-c", "import importlib.util as u; print([n for n in "
                            "('tito', 'coursekit', 'coursebuild', 'tinytorch_ref', 'torch') "
                            "if u.find_spec(n)])"],
                           cwd=tmp_path, env=env, capture_output=True, text=True)
    assert _check(probe).strip() == "[]"
    tito_bin = venv / "bin" / "tito"
    env["PATH"] = f"{venv / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}"

    def tito(*args: str, code: int = 0) -> str:
        return _check(subprocess.run([str(tito_bin), *args], cwd=root, env=env,
                                     capture_output=True, text=True, timeout=1800), code)

    for earlier in ("01", "02", "03", "04"):  # the weeks before: done and exported
        tito("module", "start", earlier)
        _fill_in(root, earlier)
        assert "imports cleanly" in tito("module", "export", earlier)

    started = tito("module", "start", "05")
    assert "jupyter lab work/05_autograd/05_autograd.ipynb" in started
    untouched = tito("module", "test", "05", code=1)
    assert "implement " in untouched and "public checks pass" in untouched
    _fill_in(root, "05")
    tested = tito("module", "test", "05")
    last = tested.strip().splitlines()[-1]
    passed, _, total = last.split(": ", 1)[1].split(" public")[0].partition(" of ")
    assert passed == total and int(total) > 0, tested
    assert "FAIL" not in tested
    exported = tito("module", "export", "05")
    assert "imports cleanly" in exported and "still to write" not in exported

    stderr = subprocess.run([str(tito_bin), "milestone", "run", "perceptron_1957"], cwd=root,
                            env=env, capture_output=True, text=True, timeout=600)
    assert stderr.returncode == 2 and "06_optimizers still has stubs" in stderr.stderr
    script = subprocess.run([str(py), "milestones/perceptron_1957.py", "--quiet"], cwd=root,
                            env=env, capture_output=True, text=True, timeout=600)
    assert script.returncode == 2 and "still stubs in tinytorch — module 06" in script.stderr
    assert "module 05" not in script.stderr  # this week's module is done
    tito("module", "start", "06")  # a look ahead: with 06 done too, the milestone trains
    _fill_in(root, "06")
    tito("module", "export", "06")
    ran = tito("milestone", "run", "perceptron_1957", "--seed", "0", "--quiet",
               "--plot", str(tmp_path / "curve.png"))
    assert "PASSED" in ran and (tmp_path / "curve.png").is_file()
    shutil.rmtree(root / "work" / "06_optimizers")  # back to this week: 06 not started
    shutil.copy(paths.RELEASE / "tinytorch" / "optimizers.py",
                root / "tinytorch" / "optimizers.py")

    status = tito("status")
    row = next(ln for ln in status.splitlines() if ln.startswith("05_autograd"))
    assert "started, done (exported, no stubs left)" in row
    assert "next: finish 06_optimizers" in status

    submitted = tito("submit", "05")
    assert "upload submit/05_autograd.zip" in submitted
    upload = root / "submit" / "05_autograd.zip"
    with zipfile.ZipFile(upload) as zf:
        names = sorted(zf.namelist())
        assert names == [f"{m}.ipynb" for m in ("01_tensor", "02_activations", "03_layers",
                                                  "04_losses", "05_autograd")]

    # Gradescope: the staff's zip, unpacked into a simulated /autograder, grades the upload
    gs_zip = tmp_path / "05_autograd_gradescope.zip"
    _check(subprocess.run([str(REPO / ".venv" / "bin" / "tito"), "autograder", "05", "-o",
                           str(gs_zip)], cwd=REPO, capture_output=True, text=True,
                          timeout=900))
    ag = tmp_path / "autograder"
    for d in ("source", "submission", "results"):
        (ag / d).mkdir(parents=True)
    with zipfile.ZipFile(gs_zip) as zf:
        zf.extractall(ag / "source")
        for info in zf.infolist():  # zipfile drops permissions; Gradescope keeps them
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                os.chmod(ag / "source" / info.filename, mode)
    with zipfile.ZipFile(upload) as zf:  # Gradescope unpacks an uploaded zip
        zf.extractall(ag / "submission")
    due = COURSE.local_time(WEEK.due)
    (ag / "submission_metadata.json").write_text(json.dumps({
        "id": 5005, "created_at": (due.replace(hour=12, minute=0)).isoformat(),
        "assignment": {"title": WEEK.name, "due_date": due.isoformat()},
        "users": [{"email": "s@uni.edu", "id": 1, "name": "S"}]}), encoding="utf-8")
    graded = subprocess.run(["bash", str(ag / "source" / "run_autograder")],
                            env={**os.environ, "AUTOGRADER_ROOT": str(ag),
                                 "AUTOGRADER_PYTHON": sys.executable},
                            capture_output=True, text=True, timeout=1800)
    assert graded.returncode == 0, graded.stderr[-2000:]
    res = json.loads((ag / "results" / "results.json").read_text(encoding="utf-8"))
    failed = [(t["name"], t.get("output", "")[:200]) for t in res["tests"]
              if t.get("status") == "failed"]
    assert res["score"] == WEEK.points, failed
