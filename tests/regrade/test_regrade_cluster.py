"""Beyond one machine (issue 32 item 4): ``tito regrade --scheduler tls://...`` against a Dask
scheduler and two workers started as separate processes (``dask scheduler``, ``dask worker``,
as docs/regrade.md says), TLS on loopback with certificates of a course CA.

The cluster's results are those of ``--jobs 2`` on this machine, graded by the two worker
processes. A worker whose grading files differ from the regrade's (a stale commit, another
suite: here its fingerprint is changed by a ``--preload`` script) is refused before any task
is sent, in one line naming it. The worker check itself (:func:`worker_problem`) is tested on
plain data for every reason it refuses.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from tls_files import credentials, scheduler, start, stop, tls_flags

from staff.regrade.core import regrade
from staff.regrade.dask import DaskRunner, Target
from staff.regrade.task import PAYLOAD_FORMAT, grader_fingerprint, worker_problem
from staff.synthetic import synth_export
from tito.cli import cli

NO_LOOP = {"correct": 0.6, "buggy": 0.4}
STALE = """
import staff.regrade.task as task
task._files_fingerprint = lambda name: "0" * 64  # grading files of another commit
"""


def _workers(address: str, files: dict[str, Path], folder: Path, n: int,
             **kw: Any) -> list[Any]:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    return [start(["worker", address, "--nthreads", "1", "--nworkers", "1", "--memory-limit",
                   "0", "--no-dashboard", "--host", "127.0.0.1", *tls_flags(files, "worker"),
                   *kw.get("extra", [])], folder / f"worker{i}.log", env=env)
            for i in range(n)]


def _wait_for_workers(target: Target, n: int) -> None:
    runner = DaskRunner(target)
    try:
        runner.client.wait_for_workers(n, timeout=240)  # a hang guard
    finally:
        runner.close()


def test_a_scheduler_and_two_workers_started_apart_regrade_as_jobs_does(tmp_path: Path) -> None:
    files = credentials(tmp_path / "tls")
    made = synth_export(module="01", n=4, out=tmp_path / "export.zip", seed=9, mix=NO_LOOP)
    procs = []
    try:
        sched, address = scheduler(tmp_path, files)
        procs.append(sched)
        procs += _workers(address, files, tmp_path, 2)
        target = Target(address, str(files["ca.pem"]), str(files["ta.pem"]),
                        str(files["ta.key"]))
        _wait_for_workers(target, 2)
        local = regrade(export=made.path, out=tmp_path / "local", jobs=2)
        remote = regrade(export=made.path, out=tmp_path / "remote", scheduler=target)
        assert [r.to_json() for r in remote.rows] == [r.to_json() for r in local.rows]
        assert all(r.graded for r in remote.rows)
        runs = [json.loads(p.read_text()) for p in (tmp_path / "remote").rglob("regrade.json")]
        graders = {int(r["worker"].rsplit(":", 1)[1]) for r in runs}
        mine = {p.pid for p in procs}  # the workers' processes are below their nannies
        assert os.getpid() not in graders and not graders & mine and len(graders) <= 2

        # a stale worker joins: refused before anything is graded, in one line
        procs += _workers(address, files, tmp_path, 1, extra=["--preload",
                                                              str(_stale(tmp_path))])
        _wait_for_workers(target, 3)
        res = CliRunner().invoke(cli, [
            "regrade", str(made.path), "--module", "01", "-o", str(tmp_path / "stale"),
            "--dry-run", "--scheduler", address, "--tls-ca-file", str(files["ca.pem"]),
            "--tls-cert", str(files["ta.pem"]), "--tls-key", str(files["ta.key"])])
        lines = [ln for ln in res.output.splitlines() if ln.strip()]
        assert res.exit_code == 2 and len(lines) == 1, res.output
        assert lines[0].startswith("tito: worker tls://127.0.0.1:"), lines[0]
        assert "grading files or course facts for 01_tensor differ" in lines[0]
        assert not list((tmp_path / "stale").rglob("results.json"))
    finally:
        stop(procs)


def _stale(folder: Path) -> Path:
    path = folder / "stale_worker.py"
    path.write_text(STALE, encoding="utf-8")
    return path


def test_the_worker_check_names_each_reason() -> None:
    from autograder.harness.limits import module_snapshot
    from coursekit.course import load_course

    course = load_course()
    snap = module_snapshot(course, course.module("01"))
    mine = grader_fingerprint(snap)
    good = {"format": PAYLOAD_FORMAT, "graders": [mine], "namespaces": True, "refuse": None,
            "basic": False}

    def why(facts: Any, here: bool = True) -> str | None:
        return worker_problem(facts, [snap], [mine], here)

    assert why(good) is None
    assert "same repository commit" in str(why({**good, "graders": ["x" * 64]}))
    assert "01_tensor" in str(why({**good, "graders": ["x" * 64]}))
    assert "task format 0" in str(why({**good, "format": 0}))
    assert "cannot sandbox student code: no root" in str(why({**good, "refuse": "no root\nx"}))
    assert "no namespaces" in str(why({**good, "namespaces": False}))
    assert why({**good, "namespaces": False}, here=False) is None  # no weaker than here
    assert why({**good, "namespaces": False, "basic": True}) is None  # the owner's choice
    assert "cannot run the worker check (ModuleNotFoundError" in str(
        why(ModuleNotFoundError("staff")))
