"""The attack corpus against every real graded module (issue 4: "the corpus passes for every
graded module"), not only the stand-in module of test_adversarial.py.

Each attack is one extra ``#| export`` cell appended to a real submission of the module — the
finished solution or the untouched release — so it runs when the grader imports the
student's module, exactly where a student would put it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import pytest
import yaml

from coursebuild.release import available_modules
from coursekit import paths
from coursekit.course import load_course
from tests.autograder.conftest import attacked_submission

COURSE = load_course()
MODULES = [m for m in available_modules(COURSE) if (paths.SUITES / m.name / "suite.py").exists()]

FORGE = '''
import json, os, pathlib
fake = {"score": 999, "tests": [{"name": "all", "score": 999, "max_score": 999}]}
for target in [pathlib.Path.cwd() / "results.json", pathlib.Path("RESULTS"),
               pathlib.Path(os.environ.get("OUT", "/tmp/results.json"))]:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(fake))
    except OSError:
        pass
print("all tests passed: 999/999")
os._exit(0)
'''

READ_HIDDEN = '''
import os
_found = []
for _root in ("REPO", "OUTDIR"):  # the places the grader promises to hide
    for _dir, _subs, _files in os.walk(_root):
        for _f in _files:
            if _f in ("suite.py", "goldens.json") or _f.endswith(".npz"):
                try:
                    _found.append(open(os.path.join(_dir, _f), errors="replace").read())
                except OSError:
                    pass
        if len(_found) > 50:
            break
print("\\n".join(_found)[:20000])
'''

PATCH_NUMPY = '''
import numpy as _np
_np.allclose = lambda *a, **k: True
_np.isclose = lambda a, b, *x, **k: _np.ones(_np.broadcast(a, b).shape, dtype=bool)
_np.array_equal = lambda *a, **k: True
'''

ESCAPE = '''
import subprocess
subprocess.Popen(["setsid", "sh", "-c", "sleep 300 # MARKER"], stdin=subprocess.DEVNULL,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
'''


def _notebook(module, kind: str, attack: str, tmp_path):
    """A submission folder: the module's notebook with the attack, and (as students upload
    them while earlier modules are open) the finished notebooks of the earlier modules."""
    return attacked_submission(COURSE, module, attack, tmp_path / "submission", kind=kind)


def _grade(module, notebook, tmp_path, *, milestones: bool = True) -> dict:
    """``tito grade`` as staff run it. ``milestones=False`` grades with a copy of course.yml
    without the milestones graded with this module: the attacks below are about the sandbox
    and the suite, and training a CNN or a GPT twice per module would only add minutes (the
    milestones' own attacks are in tests/milestones and test_adversarial.py)."""
    out = tmp_path / "out" / "results.json"
    course_args: list[str] = []
    if not milestones:
        data = yaml.safe_load((paths.REPO_ROOT / "course.yml").read_text(encoding="utf-8"))
        data["milestones"] = [m for m in data.get("milestones", [])
                              if m["graded_with"] != module.number]
        kept = {m["id"] for m in data["milestones"]}
        for outcome in data.get("outcomes", []):  # they may name only milestones that exist
            outcome["milestones"] = [i for i in outcome.get("milestones", []) if i in kept]
        lean = tmp_path / "course-without-milestones.yml"
        lean.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        course_args = ["--course", str(lean)]
    proc = subprocess.run([sys.executable, "-m", "tito.cli", *course_args, "grade", module.name,
                           str(notebook), "-o", str(out)], capture_output=True, text=True,
                          cwd=paths.REPO_ROOT, timeout=1800)
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def _max(module) -> float:
    return module.points + sum(ms.points for ms in COURSE.milestones_graded_with(module.number))


@pytest.mark.parametrize("module", MODULES, ids=[m.name for m in MODULES])
def test_forged_results_then_exit_scores_zero(module, tmp_path):
    forge = FORGE.replace("RESULTS", str(tmp_path / "out" / "results.json"))
    res = _grade(module, _notebook(module, "full", forge, tmp_path), tmp_path)
    assert res["score"] == 0
    assert sum(t["max_score"] for t in res["tests"]) == _max(module)
    assert "999" not in json.dumps(res["tests"])
    assert "could not be imported" in res["output"] or "ended" in res["output"]


@pytest.mark.parametrize("module", MODULES, ids=[m.name for m in MODULES])
def test_reading_hidden_files_finds_nothing_and_leaks_nothing(module, tmp_path):
    attack = READ_HIDDEN.replace("REPO", str(paths.REPO_ROOT)).replace(
        "OUTDIR", str(tmp_path / "out"))
    res = _grade(module, _notebook(module, "full", attack, tmp_path), tmp_path,
                 milestones=False)
    assert res["score"] == module.points, [t["output"][:200] for t in res["tests"]
                                          if t["status"] == "failed"]
    text = json.dumps(res)
    suite_src = (paths.SUITES / module.name / "suite.py").read_text(encoding="utf-8")
    secret = [ln.strip() for ln in suite_src.splitlines()
              if len(ln.strip()) >= 30 and not ln.strip().startswith(("@", "#", '"', "hint="))]
    leaked = [ln for ln in secret if ln in text]
    assert leaked == [], f"hidden suite lines reached results.json: {leaked[:3]}"


@pytest.mark.parametrize("module", MODULES, ids=[m.name for m in MODULES])
def test_patching_numpy_comparisons_does_not_pass_the_stub(module, tmp_path):
    res = _grade(module, _notebook(module, "untouched", PATCH_NUMPY, tmp_path), tmp_path)
    assert res["score"] == 0


@pytest.mark.parametrize("module", MODULES, ids=[m.name for m in MODULES])
def test_processes_that_escape_the_session_are_killed(module, tmp_path):
    marker = f"tt-escape-{uuid.uuid4().hex[:12]}"
    res = _grade(module, _notebook(module, "full", ESCAPE.replace("MARKER", marker), tmp_path),
                 tmp_path, milestones=False)
    assert res["score"] == module.points
    left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    assert left.stdout.strip() == "", f"processes outlived grading: {left.stdout}"
