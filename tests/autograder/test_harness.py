"""The grading harness on the stand-in module: scoring, feedback, goldens, fail-closed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from autograder.harness import grade, isolation
from autograder.harness.goldens import GoldensError, load_goldens, load_suite
from tests.autograder.conftest import (
    CORRECT,
    FAST,
    MINI,
    PUBLIC,
    REF,
    STUBS,
    SUITE,
    notebook_bytes,
    outputs,
    scores,
)


def test_correct_submission_scores_full_marks(grade_mini):
    res = grade_mini(CORRECT)
    assert res["score"] == 5
    assert all(t["status"] == "passed" for t in res["tests"])
    ed = res["extra_data"]
    assert ed["module"] == "01_mini" and ed["suite_version"] == "test.1"
    assert set(ed["seeds"]) == {"add_vectors", "sum_value", "shape_tuple",
                                "total_of_empty_raises"}
    assert ed["packages"]["numpy"] and ed["packages"]["python"]
    assert "child-process" in ed["isolation"]
    assert ed["expected_from"] == "goldens"
    assert ed["variant"]["of"] == 64 and 0 <= ed["variant"]["index"] < 64
    assert "euid=0" not in ed["sandbox"], "student code ran as root"
    if isolation.plan().namespaces:
        assert {"minimal-root", "seccomp-no-sockets", "uid-dropped"} <= set(ed["sandbox"])


def test_expected_values_from_a_trusted_reference_run(grade_mini):
    res = grade_mini(CORRECT, use_goldens=False)
    assert res["score"] == 5
    assert res["extra_data"]["expected_from"] == "reference-run"


def test_stub_scores_zero_with_not_implemented_message(grade_mini):
    stub = CORRECT.replace("        return Vec(self.data + other)",
                           "        raise NotImplementedError('module 01: implement Vec.__add__')")
    res = grade_mini(stub)
    assert scores(res)["add_vectors"] == 0
    assert "Not implemented yet" in outputs(res)["add_vectors"]
    assert res["score"] == 3


def test_partial_credit_and_helpful_feedback(grade_mini):
    wrong = CORRECT.replace("return float(self.data.sum())", "return float(self.data.mean())")
    res = grade_mini(wrong)
    assert scores(res) == {"add_vectors": 2, "sum_value": 0, "shape_tuple": 1,
                           "total_of_empty_raises": 1}
    out = outputs(res)["sum_value"]
    assert "Wrong result" in out and "Hint: Sum every element." in out


def test_feedback_never_reveals_expected_values(grade_mini, goldens):
    wrong = CORRECT.replace("return float(self.data.sum())", "return float(self.data.sum()) + 1")
    res = grade_mini(wrong)
    bank = load_goldens(goldens, suite_path=SUITE)
    variant = res["extra_data"]["variant"]["index"]
    expected = bank.expected(variant, load_suite(SUITE)).values["sum_value"]
    text = json.dumps(res)
    assert f"{expected:.6g}" not in text and repr(expected) not in text


def test_error_shows_student_frames_only(grade_mini):
    bad = CORRECT.replace("    def sum(self):\n",
                          "    def sum(self):\n        raise KeyError('oops')\n")
    res = grade_mini(bad)
    out = outputs(res)["sum_value"]
    assert "KeyError: 'oops'" in out and "mini.py, line" in out
    assert "suite.py" not in json.dumps(res)


def test_public_tests_are_visible_zero_point_feedback(grade_mini):
    bad = CORRECT.replace("    return sum(xs)", "    return 0")
    res = grade_mini(bad)
    pub = {t["name"]: t for t in res["tests"] if "public" in t["tags"]}
    total = pub["01_mini · public · checks · test_total"]
    assert total["status"] == "failed" and total["max_score"] == 0
    assert "total sums a list" in total["output"] and total["visibility"] == "visible"
    assert pub["01_mini · public · checks · test_add"]["status"] == "passed"


def test_print_output_is_attached_and_capped(grade_mini):
    noisy = CORRECT.replace("    def sum(self):\n",
                            "    def sum(self):\n        print('debug:' * 5000)\n")
    res = grade_mini(noisy)
    out = outputs(res)["sum_value"]
    assert "debug:" in out and len(out) < FAST.max_output_kb * 1024 + 500


def test_stale_results_are_removed_and_replaced(tmp_path, goldens):
    out = tmp_path / "results.json"
    out.write_text('{"score": 999}')
    sub = tmp_path / "01_mini.ipynb"
    sub.write_bytes(notebook_bytes(CORRECT))
    res = grade(module=MINI, submission=sub, suite_path=SUITE, reference=REF,
                public_tests=PUBLIC, out=out, limits=FAST, expected=goldens, stubs=STUBS)
    assert json.loads(out.read_text())["score"] == res["score"] == 5


def test_points_must_match_course_yml(tmp_path, goldens):
    sub = tmp_path / "01_mini.ipynb"
    sub.write_bytes(notebook_bytes(CORRECT))
    module = json.loads(json.dumps(MINI))
    module["module"]["points"] = 6
    out = tmp_path / "r.json"
    res = grade(module=module, submission=sub, suite_path=SUITE, reference=REF, out=out,
                limits=FAST, expected=goldens)
    assert res["score"] == 0 and "course.yml" in res["extra_data"]["grader_error"]
    assert "problem on the course's side" in res["output"]
    assert json.loads(out.read_text())["tests"][0]["status"] == "failed"


def test_stale_goldens_are_refused(tmp_path, goldens):
    suite_copy = tmp_path / "suites" / "01_mini" / "suite.py"
    suite_copy.parent.mkdir(parents=True)
    suite_copy.write_text(SUITE.read_text() + "\n# edited\n")
    with pytest.raises(GoldensError):
        load_goldens(goldens, suite_path=suite_copy)
    sub = tmp_path / "01_mini.ipynb"
    sub.write_bytes(notebook_bytes(CORRECT))
    res = grade(module=MINI, submission=sub, suite_path=suite_copy, reference=REF,
                out=tmp_path / "r.json", limits=FAST, expected=goldens)
    assert res["score"] == 0 and "different suite" in res["extra_data"]["grader_error"]


def test_goldens_are_plain_json(goldens):
    doc = json.loads(goldens.read_text())
    assert doc["format"] == 2 and set(doc["cases"]) == {
        "add_vectors", "sum_value", "shape_tuple", "total_of_empty_raises"}
    assert all(len(v) == doc["variants"] == 64 for v in doc["cases"].values())
    assert "__nd__" in json.dumps(doc["cases"]["add_vectors"])


def test_limits_never_exceed_the_course(tmp_path, goldens):
    sub = tmp_path / "01_mini.ipynb"
    sub.write_bytes(notebook_bytes(CORRECT))
    res = grade(module=MINI, submission=sub, suite_path=SUITE, reference=REF,
                out=tmp_path / "r.json", expected=goldens,
                limits={"memory_limit_mb": 5000, "test_timeout_s": 999, "run_timeout_s": 30})
    lim = res["extra_data"]["limits"]
    assert lim["memory_limit_mb"] == 700 and lim["test_timeout_s"] == 20
    assert lim["run_timeout_s"] == 30


def test_later_modules_come_from_stubs_not_the_reference(grade_mini):
    probe = CORRECT + (
        "\n\ndef leak():\n    import importlib\n    import inspect\n"
        "    return inspect.getsource(importlib.import_module('tinytorch.later'))\n"
        "\nprint(leak())\n")
    res = grade_mini(probe)
    text = json.dumps(res)
    assert "released stub" in text
    assert "REFERENCE SOLUTION" not in text


def test_basic_isolation_grades_without_namespaces_or_refuses_to_run_as_root(
        grade_mini, monkeypatch):
    """The no-namespace fallback: student code runs as a fresh uid when other users can run the
    interpreter; as root without that, grading refuses (a course-side error) rather than run
    student code as root. Which branch applies depends on where this machine's Python lives."""
    monkeypatch.setenv("TT_GRADER_ISOLATION", "basic")
    plan = isolation.plan()
    res = grade_mini(CORRECT)
    if plan.refuse:
        assert res["score"] == 0 and "would run as root" in res["extra_data"]["grader_error"]
        assert "problem on the course's side" in res["output"]
        return
    assert res["score"] == 5
    iso = res["extra_data"]["isolation"]
    assert "pid-namespace" not in iso and "session-sweep" in iso
    assert "seccomp-no-sockets" in iso and "tmp-sweep" in iso
    assert ("per-run-uid" in iso) == (os.geteuid() == 0)


def test_grading_refuses_when_student_code_would_run_as_root(grade_mini, monkeypatch, tmp_path):
    """Root, no namespaces, an interpreter other users cannot reach: a course-side error that
    says how to fix the image, and no student code runs (main ran it as root)."""
    monkeypatch.setenv("TT_GRADER_ISOLATION", "basic")
    monkeypatch.setattr(isolation, "_PLAN_CACHE", {})
    monkeypatch.setattr(isolation, "interpreter_blocker", lambda: "/root")
    monkeypatch.setattr(isolation.os, "geteuid", lambda: 0)  # the plan sees a root grader
    drop = tmp_path / "drop"
    drop.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chmod(drop, 0o777)
    marker = drop / "ran.txt"
    res = grade_mini(CORRECT + f"\nimport os\nopen({str(marker)!r}, 'w').write(str(os.geteuid()))\n")
    err = res["extra_data"]["grader_error"]
    assert res["score"] == 0 and "would run as root" in err and "setup.sh" in err
    assert "problem on the course's side" in res["output"]
    assert not marker.exists(), "student code ran although it would have run as root"


def test_submission_path_can_be_a_file(tmp_path, goldens):
    nb = tmp_path / "anything.ipynb"
    nb.write_bytes(notebook_bytes(CORRECT))
    res = grade(module=MINI, submission=nb, suite_path=SUITE, reference=REF,
                out=tmp_path / "r.json", limits=FAST, expected=goldens)
    assert res["score"] == 5


def test_results_dir_is_created(tmp_path: Path, goldens):
    nb = tmp_path / "01_mini.ipynb"
    nb.write_bytes(notebook_bytes(CORRECT))
    out = tmp_path / "deep" / "er" / "results.json"
    grade(module=MINI, submission=nb, suite_path=SUITE, reference=REF, out=out, limits=FAST,
          expected=goldens)
    assert out.is_file()



def test_orphan_sweep_never_takes_a_tracked_child_of_a_concurrent_run():
    """Regression: with the grader a child subreaper, a sweep after one run must not kill a
    child another thread has just spawned (regrade --jobs 2 lost results this way)."""
    import subprocess
    import sys

    from autograder.harness import isolation

    isolation.adopt_orphans()
    other = isolation.spawn_tracked([sys.executable, "-c", "import time; time.sleep(30)"],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    isolation.track(done.pid)
    done.wait()
    try:
        isolation.kill_tree(done, uid=None)  # runs the orphan sweep
        assert other.poll() is None, "the sweep killed another run's child"
        assert other.pid not in isolation._adopted()
    finally:
        other.kill()
        other.wait()
        isolation._LIVE.discard(other.pid)


def test_a_killed_trees_zombies_are_not_searched_again_but_its_live_processes_are():
    """kill_tree looks for live descendants only: an exited, unreaped process (zombie) can
    no longer run or fork, and a killed tree is full of them until they are reaped."""
    import signal
    import subprocess
    import sys
    import time

    code = ("import subprocess, sys, time\n"
            "dead = subprocess.Popen([sys.executable, '-c', 'pass'])\n"  # never reaped
            "alive = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            "time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    try:
        end = time.monotonic() + 60  # a safety bound only
        while True:
            found = isolation.descendants(proc.pid)
            zombies = [p for p in found if isolation._zombie(p)]
            if zombies and len(found) == 2:
                break
            assert time.monotonic() < end, found
            time.sleep(0.05)
        live = isolation.descendants(proc.pid, live=True)
        assert live == [p for p in found if p not in zombies] and len(live) == 1
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_trusted_bytecode_goes_beside_the_source_whatever_the_graders_pycache_prefix(
        tmp_path, monkeypatch):
    """A TA whose environment sets PYTHONPYCACHEPREFIX (sys.pycache_prefix) still gets the
    trusted bytecode in ``__pycache__`` beside each file, where the sandboxed child (which
    sets no prefix) looks; none lands under the prefix."""
    import sys

    from autograder.harness.package import build_package

    prefix = tmp_path / "prefix"
    monkeypatch.setattr(sys, "pycache_prefix", str(prefix))
    build_package(dest=tmp_path / "out", reference=REF, module_number=1, slug="mini",
                  student_source=None, all_modules=((1, "mini"), (2, "later")), stubs=STUBS)
    pkg = tmp_path / "out" / "tinytorch"
    tag = sys.implementation.cache_tag
    for name in ("mini", "later"):
        assert (pkg / "__pycache__" / f"{name}.{tag}.pyc").is_file(), sorted(pkg.rglob("*"))
    assert not prefix.exists() or not any(prefix.rglob("*.pyc"))


def test_bytecode_beside_a_trusted_origin_is_reused_only_for_its_own_source(tmp_path,
                                                                           monkeypatch):
    """``write_trusted_bytecode`` (make bytecode, the Gradescope setup.sh) leaves beside the
    reference and the stubs the bytes ``build_package`` would compile, and a grading process
    then copies them without compiling; bytecode there of another source, or bytecode of the
    same source that the import would not check against it (unchecked hash), is never copied:
    the file is compiled instead."""
    import marshal
    import py_compile
    import shutil

    from autograder.harness import package

    ref, stubs = tmp_path / "ref", tmp_path / "stubs"
    shutil.copytree(REF, ref, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(STUBS, stubs, ignore=shutil.ignore_patterns("__pycache__"))
    files = sorted(ref.rglob("*.py")) + sorted(stubs.rglob("*.py"))
    assert package.write_trusted_bytecode(ref) + package.write_trusted_bytecode(stubs) == len(
        files)
    assert package.write_trusted_bytecode(ref) == 0  # up to date: nothing written again
    def same(a: bytes, b: bytes | None) -> bool:  # marshal's bytes vary with refcounts
        return b is not None and a[:16] == b[:16] and marshal.loads(a[16:]) == marshal.loads(
            b[16:])

    for f in files:
        assert same(package.pyc_beside(f).read_bytes(), package._compile_trusted(f))

    compiled: list[str] = []
    real = package._compile_trusted
    monkeypatch.setattr(package, "_compile_trusted", lambda src: compiled.append(src.name) or
                        real(src))

    def build(dest):
        monkeypatch.setattr(package, "_PYC", type(package._PYC)())  # a fresh grading process
        package.build_package(dest=dest, reference=ref, module_number=1, slug="mini",
                              student_source=None, all_modules=((1, "mini"), (2, "later")),
                              stubs=stubs)
        return dest / "tinytorch"

    pkg = build(tmp_path / "a")
    assert compiled == []
    assert package.pyc_beside(pkg / "mini.py").read_bytes() == package.pyc_beside(
        ref / "mini.py").read_bytes()
    assert package.pyc_beside(pkg / "later.py").read_bytes() == package.pyc_beside(
        stubs / "later.py").read_bytes()  # a later module: the release stub's

    other = tmp_path / "other" / "mini.py"  # checked-hash bytecode of a different source
    other.parent.mkdir()
    other.write_text((ref / "mini.py").read_text() + "\nPLANTED = 1\n")
    package.pyc_beside(ref / "mini.py").write_bytes(real(other) or b"")
    compiled.clear()
    py_compile.compile(str(stubs / "later.py"), cfile=str(package.pyc_beside(stubs / "later.py")),
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    pkg = build(tmp_path / "b")
    assert sorted(compiled) == ["later.py", "mini.py"]
    for name in ("mini.py", "later.py"):
        assert same(package.pyc_beside(pkg / name).read_bytes(), real(pkg / name))
    assert b"PLANTED" not in package.pyc_beside(pkg / "mini.py").read_bytes()


def test_trusted_modules_get_checked_bytecode_and_the_students_module_none(tmp_path):
    """build_package writes bytecode for the reference and stub files only, and it is
    checked against the source: bytecode beside the student's file (here the reference's,
    planted on purpose) is never run in place of the student's code."""
    import importlib.util
    import shutil
    import subprocess
    import sys

    from autograder.harness.package import build_package

    student = CORRECT.replace("return float(self.data.sum())", "return -1.0")
    target = build_package(dest=tmp_path, reference=REF, module_number=1, slug="mini",
                           student_source=student, all_modules=((1, "mini"), (2, "later")),
                           stubs=STUBS)
    pkg = tmp_path / "tinytorch"

    def pyc(p: Path) -> Path:
        return Path(importlib.util.cache_from_source(str(p), optimization=""))

    trusted = [p for p in pkg.rglob("*.py") if p != target]
    assert trusted and all(pyc(p).is_file() for p in trusted)
    assert not pyc(target).exists()
    assert pyc(pkg / "later.py").read_bytes()[4:8] == (3).to_bytes(4, "little")  # checked hash
    ref_copy = tmp_path / "refcopy"
    build_package(dest=ref_copy, reference=REF, module_number=1, slug="mini",
                  student_source=None, all_modules=((1, "mini"), (2, "later")))
    shutil.copy(pyc(ref_copy / "tinytorch" / "mini.py"), pyc(target))  # the reference's
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import numpy as np, tinytorch; "
            "print(tinytorch.mini.Vec(np.ones(3)).sum())")
    out = subprocess.run([sys.executable, "-I", "-B", "-c", code, str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "-1.0", "bytecode stood in for the student's source"


@pytest.mark.parametrize("helper", ["kill", "missing", "broken"])
def test_kill_uid_kills_every_process_of_the_uid_with_either_helper(helper, monkeypatch):
    """``kill -9 -1`` as the uid: kill(1), or the shell's built-in when kill(1) is missing or
    cannot run; the uid's processes are gone either way. (Neither needs a file only root may
    reach: this venv's python may link into root's private home.) Not root, kill_uid can act
    as no other uid: it starts nothing and leaves every process alone."""
    import subprocess
    import time

    if os.geteuid() != 0:
        mine = subprocess.Popen(["sleep", "60"])
        started: list[list[str]] = []
        monkeypatch.setattr(isolation, "run_tracked", lambda cmd, **kw: started.append(cmd))
        try:
            isolation.kill_uid(os.getuid())
            assert started == [] and mine.poll() is None
        finally:
            mine.kill()
            mine.wait()
        return
    if helper == "kill":
        assert isolation.KILL_COMMAND is not None, "this machine has kill(1)"
        monkeypatch.setattr(isolation, "SHELL", "/nonexistent/sh")  # kill(1) alone
    elif helper == "missing":
        monkeypatch.setattr(isolation, "KILL_COMMAND", None)
    else:  # a kill(1) that cannot run: the shell next
        monkeypatch.setattr(isolation, "KILL_COMMAND", "/nonexistent/kill")
    ran: list[str] = []
    real_run = isolation.run_tracked

    def run_tracked(cmd, **kw):
        ran.append(cmd[0])
        return real_run(cmd, **kw)

    monkeypatch.setattr(isolation, "run_tracked", run_tracked)
    uid = 2 ** 31 - 13  # no one's: outside the per-run uids
    procs = [subprocess.Popen(["sleep", "60"], user=uid, group=uid, extra_groups=[])
             for _ in range(2)]
    try:
        end = time.monotonic() + 10
        while len(isolation.processes_of_uid(uid)) < 2 and time.monotonic() < end:
            time.sleep(0.01)
        isolation.kill_uid(uid)
        assert [p.wait(timeout=5) for p in procs] == [-9, -9]
        assert isolation.processes_of_uid(uid) == []
        # (a killed process may not be a zombie yet when kill_uid looks: one more helper)
        first = {"kill": [isolation.KILL_COMMAND], "missing": [isolation.SHELL],
                 "broken": ["/nonexistent/kill", isolation.SHELL]}[helper]
        assert ran[:len(first)] == first and set(ran[len(first):]) <= {isolation.SHELL,
                                                                        "/nonexistent/sh"}, ran
    finally:
        for p in procs:
            p.kill()
            p.wait()
