"""Regrades at scale (issue 13), a TA's bad day (issue 12 items 2 and 4) and regrade inputs
(issue 10): resumable runs, interrupts, pre-flight refusals, course-side failures, what a
sandbox can see, symlinks, private folders, hostile names, several exports, Dask.

Exports come from the synthetic generator (:mod:`staff.synthetic`). No verdict here
depends on speed: waits are hang guards, and a kill is timed by files on disk.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from autograder.harness import isolation
from staff.regrade import run as regrade_run
from staff.regrade.cli import regrade as regrade_cmd
from staff.regrade.core import regrade
from staff.synthetic import synth_export

NO_LOOP = {"correct": 0.5, "buggy": 0.3, "untouched": 0.1, "late": 0.1}
CLI = [sys.executable, "-c", "from tito.cli import main; main()", "regrade"]
HANG = 300  # seconds: a guard against a hung run, never a verdict


def _records(out: Path) -> list[Path]:
    try:  # the run writes while we look: only finished records, never a half-removed folder
        return sorted(out.glob("submission_*/regrade.json"))
    except OSError:
        return []


def _report(out: Path) -> tuple[str, str]:
    return ((out / "regrade_report.json").read_text(), (out / "regrade_report.csv").read_text())


def _start(args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(CLI + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def _wait_for(cond: Any, what: str) -> None:
    end = time.monotonic() + HANG
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"hang guard: {what}")
        time.sleep(0.05)


# ----------------------------------------------------------------------------- resumable
def test_killed_twice_finishes_with_the_uninterrupted_report(tmp_path: Path) -> None:
    made = synth_export(module="01", n=10, out=tmp_path / "export.zip", seed=3, mix=NO_LOOP)
    ref = tmp_path / "ref"
    done = subprocess.run(CLI + [str(made.path), "-o", str(ref), "-j", "2"],
                          capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    seen = []
    for stop_after in (3, 6):
        proc = _start([str(made.path), "-o", str(out), "-j", "2"])
        tree: list[int] = []
        try:
            _wait_for(lambda n=stop_after, p=proc: len(_records(out)) >= n
                      or p.poll() is not None, "records")
            proc.send_signal(signal.SIGSTOP)  # frozen: it starts nothing more
            tree = isolation.descendants(proc.pid)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=HANG)
        finally:
            for pid in isolation.descendants(proc.pid) + tree:  # what SIGKILL orphaned
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        seen.append(len(_records(out)))
        assert not (out / "regrade_report.json").exists()
    assert seen[0] < 10 and seen[1] < 10, seen  # both kills landed midway
    final = subprocess.run(CLI + [str(made.path), "-o", str(out), "-j", "2"],
                           capture_output=True, text=True, timeout=HANG)
    assert final.returncode == 0, final.stderr
    reused = json.loads((out / "regrade_runs.jsonl").read_text().splitlines()[-1])["reused"]
    assert reused == seen[1] and f"{seen[1]} reused" in final.stdout
    assert _report(out)[0].replace(str(out), "OUT") == _report(ref)[0].replace(str(ref), "OUT")
    assert _report(out)[1] == _report(ref)[1]
    assert not list(out.glob(".work-*"))  # the killed runs' work folders are gone


# ----------------------------------------------------------------------------- interrupts
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_stops_every_child_at_once_and_says_what_was_kept(
        tmp_path: Path, sig: int, code: int) -> None:
    made = synth_export(module="01", n=3, out=tmp_path / "export.zip", seed=5, mix=NO_LOOP,
                        looping=1)
    loop = next(r for r in made.records if r.kind == "looping")
    out = tmp_path / "out"
    proc = _start([str(made.path), "-o", str(out), "-j", "2"])

    def sandboxed(pid: int) -> bool:  # a child.py that dropped to its run uid (not a
        try:                            # reference run, which stays root and ends quickly)
            return (b"child.py" in Path(f"/proc/{pid}/cmdline").read_bytes()
                    and os.stat(f"/proc/{pid}").st_uid >= isolation.UID_BASE)
        except OSError:
            return False

    def grading() -> bool:
        return proc.poll() is not None or any(
            sandboxed(p) for p in isolation.descendants(proc.pid))

    _wait_for(grading, "a sandboxed grading child")
    assert proc.poll() is None
    time.sleep(1.0)  # let the looping submission's sandbox spin (slowest first: it is first)
    tree = isolation.descendants(proc.pid)
    assert tree
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=HANG)
    left = [p for p in tree if not isolation._zombie(p)]  # gone or zombie: not left
    for p in left:
        os.kill(p, signal.SIGKILL)
    assert proc.returncode == code, err
    assert not left, f"children still running after the regrade exited: {left}"
    assert "interrupted" in err and "kept" in err and "run the same command again" in err
    # one line, no traceback (a grading that could not start a child after the abort was
    # printed as an internal error: issue 34)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert not (out / f"submission_{loop.submission_id}" / "regrade.json").exists()


# ----------------------------------------------------------------------------- pre-flight
def test_apply_refuses_a_duplicate_student_before_grading(tmp_path: Path) -> None:
    made = synth_export(module="01", n=4, out=tmp_path / "export.zip", seed=1, mix=NO_LOOP,
                        duplicated=1)
    out = tmp_path / "out"
    res = CliRunner().invoke(regrade_cmd, [str(made.path), "-o", str(out), "--apply",
                                           "--store", str(tmp_path / "gb.sqlite")])
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "nothing was graded" in lines[0] and "both name" in lines[0]
    assert not list(tmp_path.rglob("results.json")) and not out.exists()


def test_dry_run_reports_what_apply_would_refuse_on_both_rows(tmp_path: Path) -> None:
    made = synth_export(module="01", n=4, out=tmp_path / "export.zip", seed=1, mix=NO_LOOP,
                        duplicated=1)
    report = regrade(export=made.path, dry_run=True, jobs=2)
    dup = next(r for r in made.records if r.kind == "duplicated")
    partner = dup.students[1]["sid"]
    flagged = [r.key for r in report.rows if any(partner in n and "--apply refuses" in n
                                                 for n in r.notes)]
    assert len(flagged) == 2 and f"submission_{dup.submission_id}" in flagged
    assert any(n.startswith("--apply would refuse:") for n in report.notes)


# ----------------------------------------------------------------------------- course side
def test_course_side_failure_is_not_a_score_and_apply_keeps_the_old_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = synth_export(module="01", n=3, out=tmp_path / "export.zip", seed=2,
                        mix={"correct": 1.0})
    victim = f"submission_{made.records[1].submission_id}"
    real = regrade_run.finish

    def flaky(task: Any, outcome: dict[str, Any]) -> Any:
        # what a full /tmp did to honest students, as the worker process returns it
        if task.folder.name == victim:
            outcome = {"results": {"score": 0.0, "tests": [{"name": "x", "score": 0,
                                                            "max_score": 0}],
                                   "extra_data": {"grader_error": "OSError: No space left"}}}
        return real(task, outcome)

    monkeypatch.setattr(regrade_run, "finish", flaky)
    store = tmp_path / "gb.sqlite"
    report = regrade(export=made.path, out=tmp_path / "out", apply=True, store=store)
    row = next(r for r in report.rows if r.key == victim)
    assert row.outcome == "error" and row.new_score is None and not row.graded
    assert any("No space left" in n for n in row.notes)
    assert not (tmp_path / "out" / victim / "regrade.json").exists()  # retried next run
    assert report.ingest is not None and report.ingest["not_applied"] == [victim]
    import sqlite3

    with sqlite3.connect(store) as conn:
        kinds = conn.execute("SELECT kind, submission_id FROM events").fetchall()
    assert ("results_json", made.records[1].submission_id) not in kinds
    assert ("gradescope_export", made.records[1].submission_id) in kinds


# ----------------------------------------------------------------------------- what a sandbox sees
def _probe_notebook(src: Path, paths: list[str]) -> bytes:
    nb = json.loads(src.read_text())
    code = ("\nimport os as _os\n_seen = []\n"
            f"for _p in {paths!r}:\n"
            "    try:\n"
            "        if _os.path.isdir(_p):\n"
            "            for _r, _d, _f in _os.walk(_p):\n"
            "                for _n in _f:\n"
            "                    with open(_os.path.join(_r, _n), 'rb') as _fh:\n"
            "                        _seen.append(_fh.read(4000).decode('utf-8', 'replace'))\n"
            "        else:\n"
            "            with open(_p, 'rb') as _fh:\n"
            "                _seen.append(_fh.read(4000).decode('utf-8', 'replace'))\n"
            "    except OSError:\n"
            "        pass\n"
            "print('PROBE', ' '.join(_seen)[:20000])\n")
    for cell in nb["cells"]:
        text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "code" and text.lstrip().startswith("#| export"):
            cell["source"] = text + code
            break
    return json.dumps(nb).encode()


def test_a_sandbox_sees_only_its_own_submission(tmp_path: Path) -> None:
    made = synth_export(module="01", n=2, out=tmp_path / "export", seed=4,
                        mix={"correct": 1.0}, as_zip=False)
    root = next((tmp_path / "export").glob("assignment_*_export"))
    spy, mate = (root / f"submission_{r.submission_id}" for r in made.records)
    nb = spy / "01_tensor.ipynb"
    (mate / "01_tensor.ipynb").write_text((mate / "01_tensor.ipynb").read_text().replace(
        "#| export", "#| export\n# CLASSMATE_MARKER_7f3a", 1))
    out = tmp_path / "out"
    nb.write_bytes(_probe_notebook(nb, [str(tmp_path), str(root), str(mate), str(out),
                                        str(root / "submission_metadata.yml")]))
    report = regrade(export=tmp_path / "export", out=out, jobs=2)
    row = next(r for r in report.rows if r.key == spy.name)
    text = (out / spy.name / "results.json").read_text()
    assert "PROBE" in text, "the probe did not run"
    mate_person = made.records[1].students[0]
    for secret in ("CLASSMATE_MARKER_7f3a", mate_person["email"], mate_person["name"],
                   ":submitters"):
        assert secret not in text, f"the sandbox read {secret!r}"
    assert row.graded


def test_symlinks_in_an_export_are_never_followed(tmp_path: Path) -> None:
    made = synth_export(module="01", n=2, out=tmp_path / "export", seed=4,
                        mix={"correct": 1.0}, as_zip=False)
    root = next((tmp_path / "export").glob("assignment_*_export"))
    victim = root / f"submission_{made.records[0].submission_id}"
    elsewhere = tmp_path / "host" / "notebook.ipynb"
    elsewhere.parent.mkdir()
    (victim / "01_tensor.ipynb").rename(elsewhere)  # a full-marks notebook, outside the export
    (victim / "01_tensor.ipynb").symlink_to(elsewhere)
    report = regrade(export=tmp_path / "export", dry_run=True)
    row = next(r for r in report.rows if r.key == victim.name)
    assert row.new_score == 0 and row.outcome == "zero"
    assert any("01_tensor.ipynb is a symbolic link: not followed" in n for n in row.notes)
    # the same in a zip: the link member is left out
    zpath = tmp_path / "linked.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        for f in sorted((tmp_path / "export").rglob("*")):
            rel = f.relative_to(tmp_path / "export").as_posix()
            if f.is_symlink():
                info = zipfile.ZipInfo(rel)
                info.external_attr = (0o120777 << 16)
                zf.writestr(info, str(elsewhere))
            elif f.is_file():
                zf.write(f, rel)
    report = regrade(export=zpath, dry_run=True)
    row = next(r for r in report.rows if r.key == victim.name)
    assert row.new_score == 0 and any("symbolic link" in n for n in row.notes)


def test_two_regrades_never_write_one_folder(tmp_path: Path) -> None:
    import fcntl

    from staff.regrade.core import RegradeError

    made = synth_export(module="01", n=1, out=tmp_path / "export.zip", seed=6,
                        mix={"correct": 1.0})
    out = tmp_path / "out"
    out.mkdir()
    with (out / ".lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(RegradeError, match="another tito regrade is writing"):
            regrade(export=made.path, out=out)


def test_output_and_work_folders_are_private_and_nothing_is_left(tmp_path: Path) -> None:
    made = synth_export(module="01", n=2, out=tmp_path / "export.zip", seed=6,
                        mix={"correct": 1.0})
    out = tmp_path / "deep" / "out"
    regrade(export=made.path, out=out)
    for d in [out, *[p for p in out.rglob("*") if p.is_dir()]]:
        assert d.stat().st_mode & 0o777 == 0o700, d
    assert not list(out.glob(".work-*"))
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [f"submission_{r.submission_id}" for r in made.records]
        + [".lock", "regrade_report.csv", "regrade_report.json", "regrade_runs.jsonl"])


# ----------------------------------------------------------------------------- hostile text
def test_hostile_names_reach_the_table_and_csv_safely(tmp_path: Path) -> None:
    made = synth_export(module="01", n=9, out=tmp_path / "export.zip", seed=7,
                        mix={"correct": 1.0}, hostile_names=True)
    out = tmp_path / "out"
    res = CliRunner().invoke(regrade_cmd, [str(made.path), "-o", str(out), "--dry-run",
                                           "-j", "2"])
    assert res.exit_code == 0, res.output
    names = [s["name"] for r in made.records for s in r.students]
    assert any(n.startswith("[bold red]Rich[/]") for n in names)
    assert "[bold red]Rich[/]" in res.output  # shown as text, not markup
    import csv

    with (out / "regrade_report.csv").open(newline="") as fh:
        cells = [c for row in csv.reader(fh) for c in row]
    assert any(c.startswith("'=HYPERLINK") for c in cells)
    assert not any(c[:1] in "=+@" for c in cells if c)


# ----------------------------------------------------------------------------- a whole term
def test_a_folder_of_exports_is_one_run_and_one_report(tmp_path: Path) -> None:
    term = tmp_path / "term"
    a = synth_export(module="01", n=2, out=term / "m01" / "export.zip", seed=8,
                     mix={"correct": 1.0})
    b = synth_export(module="02", n=2, out=term / "m02.zip", seed=8, mix={"untouched": 1.0})
    (term / "m01" / "export.zip").rename(term / "m01.zip")
    out = tmp_path / "out"
    report = regrade(export=term, out=out, jobs=2)
    assert [u["module"] for u in report.units] == ["01_tensor", "02_activations"]
    got = {(r.module, r.submission_id): r.new_score for r in report.rows}
    assert got == {**{("01_tensor", x.submission_id): 50.0 for x in a.records},
                   **{("02_activations", x.submission_id): 0.0 for x in b.records}}
    doc = json.loads((out / "regrade_report.json").read_text())
    assert len(doc["submissions"]) == 4 and (out / "01_tensor-m01").is_dir()


# ----------------------------------------------------------------------------- Dask
def test_local_dask_cluster_gives_identical_scores_with_the_sandbox(tmp_path: Path) -> None:
    import distributed  # noqa: F401 - the pinned extra; make setup-dev installs it
    made = synth_export(module="01", n=6, out=tmp_path / "export.zip", seed=9, mix=NO_LOOP)
    local = regrade(export=made.path, out=tmp_path / "local", jobs=2)
    dask = regrade(export=made.path, out=tmp_path / "dask", scheduler="local:2")
    assert [r.to_json() for r in dask.rows] == [r.to_json() for r in local.rows]
    runs = [json.loads(p.read_text()) for p in (tmp_path / "dask").rglob("regrade.json")]
    workers = {r["worker"] for r in runs}
    assert f":{os.getpid()}" not in " ".join(workers) and len(workers) >= 1
    one = json.loads(next((tmp_path / "dask").rglob("results.json")).read_text())
    methods = one["extra_data"]["isolation"]
    assert {"child-process", "rlimits"} <= set(methods)
    if os.geteuid() == 0:
        assert "per-run-uid" in methods or "pid-namespace" in methods
