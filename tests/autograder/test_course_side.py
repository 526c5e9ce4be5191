"""A course-side failure is never a student's 0, end to end (DESIGN invariant 12; issue 34
item 4): module 09 graded by ``tito grade`` without the CIFAR-10 test data, then ingested.

``tito grade`` writes results.json whose CIFAR milestone test is pending, and exits 1 with one
line naming what is missing and how to install it; ``gradebook ingest`` records the milestone
as pending (no score), ``gradebook check`` lists it and exits 1, and the grade does not count
it as 0.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import yaml
from lean_training import lean_milestones

from coursekit import paths
from coursekit.course import load_course

CIFAR = "milestone:cnn_cifar_1998"


def _untrained_weights() -> bytes:
    """Well-formed weights (every shape right) that nobody trained: they are read, so the
    grader gets as far as the test data."""
    from autograder.milestones.data import recipes

    buf = io.BytesIO()
    np.savez(buf, **{k: np.zeros(v, np.float32) for k, v in recipes().cifar_shapes().items()})
    return buf.getvalue()


def _tito(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tito.cli", *args], capture_output=True,
                          text=True, env=env, timeout=900)


def test_a_run_without_the_cifar_data_records_nothing_as_zero(tmp_path: Path) -> None:
    from coursebuild.release import dump_notebook
    from coursebuild.samples import build_notebook

    course = load_course()
    module = course.module("09")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / f"{module.name}.ipynb").write_text(dump_notebook(build_notebook(module, "full")))
    (sub / "cnn_cifar_1998.npz").write_bytes(_untrained_weights())
    (sub / "submission_metadata.json").write_text(json.dumps({
        "id": 77, "created_at": "2027-03-20T10:00:00-04:00",
        "users": [{"email": "ada@uni.edu", "name": "Ada", "sid": "S1"}]}))
    empty = tmp_path / "grader-data"
    empty.mkdir()
    env = {**os.environ, "TINYTORCH_GRADER_DATA": str(empty), "OPENBLAS_NUM_THREADS": "1"}
    out = sub / "results.json"
    # module 09's two trained milestones lean (what is pending does not depend on how long
    # they train, only that they are scored): course.yml's training took 20 of this test's 27 s
    lean = tmp_path / "course.yml"
    lean.write_text(yaml.safe_dump(lean_milestones(yaml.safe_load(
        (paths.REPO_ROOT / "course.yml").read_text(encoding="utf-8"))), sort_keys=False),
        encoding="utf-8")
    graded = _tito("--course", str(lean), "grade", "09", str(sub / f"{module.name}.ipynb"),
                   "-o", str(out), "--as-of", "2027-06-01", env=env)
    assert graded.returncode == 1, graded.stdout + graded.stderr
    [line] = graded.stderr.strip().splitlines()
    assert line.startswith("tito: pending, not a score: 1 test(s)")
    assert "cnn_cifar_1998" in line and "fetch_data" in line
    res = json.loads(out.read_text())
    [cifar] = [t for t in res["tests"] if CIFAR in t["tags"]]
    assert "pending" in cifar["tags"] and cifar["output"].startswith("Not scored yet")
    others = [t for t in res["tests"] if t["max_score"] > 0 and t is not cifar]
    assert all("pending" not in t["tags"] for t in others)
    assert sum(t["score"] for t in others) == module.points + 10, "the rest is scored"

    store = tmp_path / "gb.sqlite"
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section,Email\n"
                      '"Lovelace, Ada",1,S1,ada,LEC 001,ada@uni.edu\n')
    assert _tito("gradebook", "roster", str(roster), "--store", str(store),
                 env=env).returncode == 0
    ingest = _tito("gradebook", "ingest", str(out), "--store", str(store), env=env)
    assert ingest.returncode == 0, ingest.stderr
    assert "1 pending" in ingest.stdout and "cnn_cifar_1998" in ingest.stdout
    import sqlite3

    with sqlite3.connect(store) as conn:
        rows = conn.execute("SELECT kind, score FROM events WHERE item = ?", (CIFAR,)).fetchall()
    assert rows == [("pending", None)], "recorded as pending, never as 0"
    check = _tito("gradebook", "check", "--store", str(store), "--as-of", "final", env=env)
    assert check.returncode == 1
    assert [x for x in check.stdout.splitlines()
            if x.startswith("error:") and ": pending: S1 milestone:cnn_cifar_1998" in x]
