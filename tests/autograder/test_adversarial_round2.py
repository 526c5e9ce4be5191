"""Issue 10, "grading trust, round 2": one adversarial case (or more) per weakness class.

Each test here failed on the harness before this round and passes after it:

1. the sandbox could read too much: an open earlier module's reference, other runs' and
   earlier submissions' temporary files, a course clone elsewhere on the host; student code ran
   as root when namespaces were refused (see also ``test_harness``);
2. what the sandbox computed was the student's to change: constants in place of every probe
   scored points; the child held the milestone data code;
3. fail-closed depended on resources a submission can exhaust: no results.json while the
   child ran, none on a full disk, /dev/shm outside every limit, a parent holding every array,
   a notebook parser using gigabytes, a malformed message crashing the grader.

Tests marked ``needs_full`` need root with namespaces (CI and this harness's Gradescope image
run as root); everything else runs anywhere.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

from autograder.harness import grade, isolation, supervisor
from autograder.harness.goldens import build_goldens, load_suite
from autograder.suite import run_case
from tests.autograder.conftest import (
    CORRECT,
    FAST,
    FIXTURES,
    MINI,
    PUBLIC,
    REF,
    STUBS,
    SUITE,
    LoopbackListener,
    check_results_schema,
    needs_full,
    notebook_bytes,
    outputs,
    scores,
)

REPO = Path(__file__).resolve().parents[2]
SUITE2 = FIXTURES / "suites" / "02_later" / "suite.py"
MARKER = "EARLIER MODULE REFERENCE"


def _later(closes: str) -> dict[str, Any]:
    """Course facts for grading the stand-in module 02, with module 01 closing at ``closes``."""
    return {"format": 1, "course": "TEST",
            "module": {"number": 2, "slug": "later", "title": "Later", "points": 3, "due": ""},
            "limits": MINI["limits"], "milestones": [],
            "modules": [{"number": 1, "slug": "mini", "closes": closes},
                        {"number": 2, "slug": "later", "closes": ""}]}


LATER_REF = (REF / "later.py").read_text(encoding="utf-8")
LEAK_EARLIER = LATER_REF + textwrap.dedent('''

    import inspect as _inspect
    import importlib as _importlib
    print("MINI SOURCE:", _inspect.getsource(_importlib.import_module("tinytorch.mini")))
''')


@pytest.fixture(scope="module")
def later_goldens(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("later") / "goldens.json"
    return build_goldens(suite_path=SUITE2, reference=REF, out=out, slug="later", number=2,
                         all_modules=((1, "mini"), (2, "later")), limits=FAST)


def _grade_later(tmp_path: Path, goldens: Path, closes: str,
                 files: dict[str, bytes]) -> dict[str, Any]:
    sub = tmp_path / f"sub-{uuid.uuid4().hex[:8]}"
    sub.mkdir()
    for name, data in files.items():
        (sub / name).write_bytes(data)
    out = tmp_path / f"out-{uuid.uuid4().hex[:8]}" / "results.json"
    res = grade(module=_later(closes), submission=sub, suite_path=SUITE2, reference=REF,
                out=out, limits=FAST, expected=goldens, stubs=STUBS)
    assert json.loads(out.read_text()) == json.loads(json.dumps(res))
    check_results_schema(res)
    return res


FUTURE = "2999-01-01T00:00:00+00:00"
PAST = "2000-01-01T00:00:00+00:00"


# ============================================================================ class 1
def test_an_open_earlier_modules_reference_never_reaches_the_sandbox(tmp_path, later_goldens):
    """Module 01 still open: a module-02 submission that prints module 01's source sees the
    release stub (nothing uploaded) or the student's own upload, never the reference."""
    res = _grade_later(tmp_path, later_goldens, FUTURE,
                       {"02_later.ipynb": notebook_bytes(LEAK_EARLIER)})
    text = json.dumps(res)
    assert MARKER not in text, "the open module's reference reached the sandbox"
    assert "released stub" in text  # what the sandbox saw instead
    assert res["extra_data"]["earlier_modules"]["01_mini"]["from"] == "stub"
    assert "you did not upload 01_mini.ipynb" in outputs(res)["submission"]
    assert res["score"] == 0  # module 02 needs a working module 01

    own = CORRECT.replace(MARKER, "MY OWN MODULE 01")
    res = _grade_later(tmp_path, later_goldens, FUTURE,
                       {"02_later.ipynb": notebook_bytes(LEAK_EARLIER),
                        "01_mini.ipynb": notebook_bytes(own)})
    text = json.dumps(res)
    assert MARKER not in text and "MY OWN MODULE 01" in text
    assert res["extra_data"]["earlier_modules"]["01_mini"]["from"] == "yours"
    assert res["score"] == 3, outputs(res)
    assert "graded with your own 01_mini.ipynb" in outputs(res)["submission"]


def test_a_stub_of_an_earlier_module_is_said_once_and_never_blamed_on_the_student(
        tmp_path, later_goldens):
    """Module 01 open and not uploaded (issue 28): one line at the top of the results says
    which earlier modules were stubs and why, and a test that fails on module 01's stub says
    it needs module 01, not 'implement Vec.sum'."""
    res = _grade_later(tmp_path, later_goldens, FUTURE,
                       {"02_later.ipynb": notebook_bytes(LATER_REF)})
    top = res["output"].splitlines()
    assert top[1] == ("Earlier module 01 is still open for late work: this run used the "
                      "unfinished release stub of 01 (see 'submission').")
    assert sum("still open" in line for line in top) == 1
    out = outputs(res)["double_of_sum"]
    assert "this needs module 01 (Vec.sum)" in out and "you did not upload" in out
    assert "Replace the stub's raise" not in out and "Hint:" not in out
    assert outputs(res)["submission"].count("01_mini") == 2  # the stub and what to upload


def test_a_closed_earlier_module_is_graded_on_the_reference(tmp_path, later_goldens):
    """No double penalty once module 01 has closed: its reference, whatever was uploaded."""
    broken = CORRECT.replace("return float(self.data.sum())", "return 0.0")
    res = _grade_later(tmp_path, later_goldens, PAST,
                       {"02_later.ipynb": notebook_bytes(LATER_REF),
                        "01_mini.ipynb": notebook_bytes(broken)})
    assert res["score"] == 3
    assert res["extra_data"]["earlier_modules"] == {
        "01_mini": {"from": "reference", "closed": "2000-01-01 00:00 UTC"}}
    assert "Module 01 no longer accepts late work" in outputs(res)["submission"]


def _planted_clone() -> Path:
    """A world-readable copy of the reference elsewhere on the host (a TA's clone)."""
    where = Path(tempfile.mkdtemp(prefix="tt-other-clone-"))
    os.chmod(where, 0o755)
    (where / "mini.py").write_text((REF / "mini.py").read_text(encoding="utf-8"))
    os.chmod(where / "mini.py", 0o644)
    return where


@needs_full
def test_the_sandbox_sees_only_the_interpreter_the_package_and_its_scratch(grade_mini):
    clone = _planted_clone()
    try:
        attack = CORRECT + textwrap.dedent(f'''

            import os, sys, importlib
            def _try(fn):
                try:
                    return fn()
                except Exception as e:
                    return type(e).__name__
            print("ROOT", sorted(os.listdir("/")))
            print("ETC", sorted(os.listdir("/etc")))
            print("CLONE", _try(lambda: open({str(clone / "mini.py")!r}).read()))
            print("REPO", _try(lambda: os.listdir({str(REPO)!r})))
            sys.meta_path[:] = [m for m in sys.meta_path
                                if type(m).__name__ != "_ImportBlocker"]
            for name in ("torch", "pandas", "pytest", "autograder", "tito"):
                print("IMPORT", name, _try(lambda: importlib.import_module(name) and "ok"))
        ''')
        res = grade_mini(attack)
    finally:
        shutil.rmtree(clone, ignore_errors=True)
    out = outputs(res)["submission"]
    assert res["score"] == 5, out
    assert MARKER not in json.dumps(res), "a world-readable clone elsewhere was readable"
    root = json.loads(out.split("ROOT ", 1)[1].splitlines()[0].replace("'", '"'))
    layout = isolation.root_layout(Path(tempfile.gettempdir()) / "x" / "pkg", Path("/nowhere"))
    bound = [*layout["ro"], *layout["links"], *layout["masks"], *layout["expose"],
             layout["package"]]
    allowed = {Path(p).parts[1] for p in bound} | {"dev", "proc", "tmp", "var"}
    assert set(root) <= allowed, f"the sandbox sees {sorted(set(root) - allowed)} of the host"
    assert "ETC ['ld.so.cache']" in out or "ETC []" in out
    assert "CLONE FileNotFoundError" in out
    for name in ("torch", "pandas", "pytest", "autograder", "tito"):
        assert f"IMPORT {name} ModuleNotFoundError" in out, out


@needs_full
def test_temporary_space_is_private_and_emptied_after_every_run(grade_mini):
    tag = f"tt-left-{uuid.uuid4().hex[:10]}"
    write = CORRECT + textwrap.dedent(f'''

        import os
        for d in ("/tmp", "/var/tmp", "/dev/shm", os.getcwd()):
            try:
                with open(os.path.join(d, "{tag}"), "w") as f:
                    f.write("left behind")
                os.chmod(os.path.join(d, "{tag}"), 0o666)
            except OSError as e:
                print("could not write", d, e)
    ''')
    res = grade_mini(write)
    assert res["score"] == 5
    for d in ("/tmp", "/var/tmp", "/dev/shm"):
        assert not os.path.exists(os.path.join(d, tag)), f"{d}/{tag} survived the run"
    read = CORRECT + textwrap.dedent(f'''

        import os
        for d in ("/tmp", "/var/tmp", "/dev/shm"):
            print(d, sorted(os.listdir(d)))
            try:
                print(open(os.path.join(d, "{tag}")).read())
            except OSError as e:
                print("none", type(e).__name__)
    ''')
    res2 = grade_mini(read)
    out = outputs(res2)["submission"]
    assert "left behind" not in out and tag not in out, out
    for d in ("/tmp", "/var/tmp", "/dev/shm"):
        listed = json.loads(out.split(d + " ", 1)[1].splitlines()[0].replace("'", '"'))
        # at most the mount point of its own package (the scratch folder's name, or the first
        # name of the temporary folder it was made in: the test run's own, below /tmp), and the
        # mount points of the interpreter's folders when the venv lives there (a clone in /tmp)
        scratch_top = _first_names_under(d, [os.path.join(tempfile.gettempdir(), "ttgrade-x")])
        package = [e for e in listed if e.startswith("ttgrade-") or e in scratch_top]
        assert len(package) <= 1 and set(listed) - set(package) <= _interpreter_tops(d), (
            d, listed)


def _interpreter_tops(top: str) -> set[str]:
    """The first names under ``top`` of what the minimal root binds from the host (the
    interpreter, its venv, NumPy): not empty only when the venv lives under ``top``."""
    layout = isolation.root_layout(Path(top, "ttgrade-x"), Path("/nonexistent"))
    return _first_names_under(top, [*layout["ro"], *layout["links"], *layout["masks"],
                                    *layout["expose"]])


def _first_names_under(top: str, paths: list[str]) -> set[str]:
    """The first component below ``top`` of each path that lies below it."""
    return {Path(p).relative_to(top).parts[0] for p in paths
            if p != top and isolation._under(p, top)}


@needs_full
def test_grading_leaves_nothing_in_the_hosts_temporary_folder(tmp_path, goldens):
    """Graded in a private mount namespace whose /tmp starts empty (so other work on the
    machine cannot interfere; only the repository and its venv are bound back when they live
    under /tmp): afterwards /tmp holds nothing new; no folder is left per launch
    (a crash makes a second launch)."""
    script = tmp_path / "run.py"
    fresh = tmp_path / "fresh-tmp"
    fresh.mkdir()
    # The repository and its venv may live under /tmp themselves (.ci/stress clones there):
    # the fresh /tmp gets them bound back at the same paths, then replaces the host's.
    keep = isolation._dedupe([p for p in (str(REPO), sys.prefix)
                              if isolation._under(os.path.realpath(p), "/tmp")])
    kept_tops = sorted(_first_names_under("/tmp", keep))
    script.write_text(textwrap.dedent(f'''
        import os, subprocess, sys, tempfile
        sys.path.insert(0, {str(REPO)!r})
        goldens = open({str(goldens)!r}, "rb").read()
        fresh = {str(fresh)!r}
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", fresh], check=True)
        for path in {keep!r}:
            inside = os.path.join(fresh, os.path.relpath(path, "/tmp"))
            os.makedirs(inside)
            subprocess.run(["mount", "--bind", path, inside], check=True)
        subprocess.run(["mount", "--move", fresh, "/tmp"], check=True)
        tempfile.tempdir = None
        os.environ["TMPDIR"] = "/tmp"
        from tests.autograder.conftest import CORRECT, FAST, MINI, REF, STUBS, SUITE
        from tests.autograder.conftest import notebook_bytes
        from autograder.harness import grade
        work = "/tmp/inputs"
        os.makedirs(work)
        open(os.path.join(work, "goldens.json"), "wb").write(goldens)
        crash = CORRECT.replace("    def sum(self):\\n",
                                "    def sum(self):\\n        import os\\n        os._exit(3)\\n")
        open(os.path.join(work, "01_mini.ipynb"), "wb").write(notebook_bytes(crash))
        res = grade(module=MINI, submission=os.path.join(work, "01_mini.ipynb"),
                    suite_path=SUITE, reference=REF, out=os.path.join(work, "r", "results.json"),
                    limits=FAST, expected=os.path.join(work, "goldens.json"), stubs=STUBS)
        print(res["extra_data"]["run"]["launches"], sorted(os.listdir("/tmp")))
    '''))
    proc = subprocess.run(["unshare", "--mount", "--propagation", "private", sys.executable,
                           str(script)], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    launches, left = proc.stdout.strip().splitlines()[-1].split(" ", 1)
    assert int(launches) >= 2 and left == repr(sorted(["inputs", *kept_tops])), proc.stdout


def test_a_reference_runs_scratch_is_not_readable_by_other_users(tmp_path):
    """tito regrade --jobs N runs reference children next to sandboxes: their scratch (the
    graded module's reference) is root-only, not 0711 as before."""
    scratch = tmp_path / "ttref"
    scratch.mkdir()
    os.chmod(scratch, 0o755)
    pkg = scratch / "pkg"
    pkg.mkdir()
    shutil.copytree(REF, pkg / "tinytorch")
    spec = supervisor.RunSpec(
        package_parent=pkg, slug="mini", suite_file=SUITE, items=["case:sum_value"],
        scratch=scratch, item_timeout_s={"case:sum_value": 10.0}, import_timeout_s=10.0,
        run_timeout_s=20.0, memory_limit_mb=700, max_output_kb=4, sandbox=False)
    seen: list[int] = []
    real = supervisor._launch_once

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(os.stat(scratch).st_mode & 0o777)
        return real(*args, **kwargs)

    supervisor._launch_once = spy  # type: ignore[assignment]
    try:
        report = supervisor.run_items(spec)
    finally:
        supervisor._launch_once = real  # type: ignore[assignment]
    assert report.outcomes["case:sum_value"].status == "result"
    assert seen and all(mode == 0o700 for mode in seen), [oct(m) for m in seen]


# ============================================================================ class 2
def _constants_attack(module_name: str, suite_path: Path) -> str:
    """Stub code that swaps every hidden case for a function returning the reference's answer
    at the case's public (base) seed: all a student can compute with the suite's code and
    someone's correct implementation, without the salt."""
    import tinytorch_ref
    from autograder.suite import Timed

    suite = load_suite(suite_path)
    answers = {c.name: run_case(c, tinytorch_ref) for c in suite.cases}
    # a timed case's answer is what it commits (its work runs on live objects, which a
    # constant cannot carry): the parent then refuses it, since nothing was committed
    answers = {k: v.value if isinstance(v, Timed) else v for k, v in answers.items()}
    blob = base64.b64encode(pickle.dumps(answers)).decode()
    return textwrap.dedent(f'''
        import base64 as _b64, gc as _gc, pickle as _pk
        _ANSWERS = _pk.loads(_b64.b64decode("{blob}"))
        for _o in _gc.get_objects():
            if type(_o).__name__ == "Case" and getattr(_o, "name", None) in _ANSWERS:
                _v = _ANSWERS[_o.name]
                object.__setattr__(_o, "fn", lambda tt, rng, _v=_v: _v)
        print("replaced every probe with its public-seed answer")
    ''')


def _modules_with_suites() -> list[Any]:
    from coursebuild.release import available_modules
    from coursekit import paths
    from coursekit.course import load_course

    course = load_course()
    return [m for m in available_modules(course)
            if (paths.SUITES / m.name / "suite.py").is_file()]


@pytest.mark.parametrize("module", _modules_with_suites(), ids=lambda m: m.name)
def test_a_stub_that_returns_every_answer_as_a_constant_scores_zero(module, tmp_path):
    from coursebuild.release import dump_notebook
    from coursebuild.samples import build_notebook
    from coursekit import paths

    attack = _constants_attack(module.name, paths.SUITES / module.name / "suite.py")
    nb = build_notebook(module, "untouched")
    nb["cells"].append({"cell_type": "code", "id": "attack", "metadata": {}, "outputs": [],
                        "execution_count": None, "source": "#| export\n" + attack})
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / f"{module.name}.ipynb").write_text(dump_notebook(nb), encoding="utf-8")
    out = tmp_path / "out" / "results.json"
    proc = subprocess.run([sys.executable, "-m", "tito.cli", "grade", module.name, str(sub),
                           "-o", str(out)], capture_output=True, text=True, cwd=REPO,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(out.read_text())
    assert "replaced every probe" in json.dumps(res), res["extra_data"].get("grader_error")
    assert res["score"] == 0, [(t["name"], t["score"]) for t in res["tests"] if t["score"]]
    assert res["extra_data"]["variant"]["of"] >= 2


@needs_full
def test_the_child_holds_no_milestone_data_code_nor_test_labels(tmp_path):
    """Module 07's child: no dataset loader, no task generator, no held-out split."""
    from coursebuild.release import dump_notebook
    from coursebuild.samples import build_notebook
    from coursekit.course import load_course

    course = load_course()
    module = course.module("07")
    probe = textwrap.dedent('''
        import gc, sys
        _mods = sorted(m for m in sys.modules  # the package under test may have a data module
                       if not m.startswith(("__editable__", "tinytorch")) and (
                           "dataset" in m or "loader" in m or "course" in m or "provider" in m))
        _fns = sorted({getattr(o, "__name__", "") for o in gc.get_objects()
                       if callable(o) and getattr(o, "__name__", "") in
                       ("milestone_task", "milestone_data", "load_digits", "separable_2d",
                        "separable_2d_split", "xor_noisy", "make_provider", "data_for")})
        print("HELD", _mods, _fns)
    ''')
    nb = build_notebook(module, "full")
    nb["cells"].append({"cell_type": "code", "id": "probe", "metadata": {}, "outputs": [],
                        "execution_count": None, "source": "#| export\n" + probe})
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "07_training.ipynb").write_text(dump_notebook(nb), encoding="utf-8")
    out = tmp_path / "results.json"
    closed = dt.datetime(2027, 7, 1, tzinfo=dt.timezone.utc)
    from autograder.harness.core import grade_module

    res = grade_module(course=course, module=module, submission=sub, out=out, now=closed)
    held = next(t for t in res["tests"] if t["name"].endswith("submission"))["output"]
    assert "HELD [] []" in held, held
    assert res["score"] == module.points + 20, [t["output"][:300] for t in res["tests"]
                                                if t["status"] == "failed"]


# ============================================================================ class 3
def test_a_valid_results_json_exists_before_any_student_code_runs(tmp_path, goldens,
                                                                  monkeypatch):
    out = tmp_path / "results.json"
    out.write_text('{"score": 999}')  # stale
    seen: list[dict[str, Any]] = []
    import autograder.harness.core as core

    real = core.run_stages

    def check_then_run(spec: Any, later: Any, lanes: int, **kw: Any) -> Any:
        seen.append(json.loads(out.read_text()))  # raises if missing or invalid
        return real(spec, later, lanes, **kw)

    monkeypatch.setattr(core, "run_stages", check_then_run)
    sub = tmp_path / "01_mini.ipynb"
    sub.write_bytes(notebook_bytes(CORRECT))
    res = grade(module=MINI, submission=sub, suite_path=SUITE, reference=REF, out=out,
                limits=FAST, expected=goldens, stubs=STUBS, public_tests=PUBLIC)
    assert len(seen) == 1
    check_results_schema(seen[0])
    assert seen[0]["score"] == 0 and seen[0]["extra_data"]["provisional"] is True
    assert "grading did not finish" in seen[0]["extra_data"]["grader_error"]
    assert res["score"] == 5 and json.loads(out.read_text())["score"] == 5
    assert not list(tmp_path.glob(".results-reserve-*")), "the reserve was not released"


@needs_full
def test_a_full_disk_still_leaves_a_valid_results_json(tmp_path, goldens):
    """results.json lives on a small filesystem that fills up while student code runs: the
    reserve kept next to it lets the real results be written."""
    script = tmp_path / "run.py"
    disk = tmp_path / "disk"
    disk.mkdir()
    script.write_text(textwrap.dedent(f'''
        import json, os, subprocess, sys
        sys.path.insert(0, {str(REPO)!r})
        from tests.autograder.conftest import CORRECT, FAST, MINI, REF, STUBS, SUITE
        from tests.autograder.conftest import notebook_bytes
        from autograder.harness import grade, lanes
        disk = {str(disk)!r}
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", disk], check=True)
        real = lanes.run_items  # what the run stage calls for every stage of the suite
        def fill_then_run(spec):
            with open(os.path.join(disk, "filler"), "wb") as f:  # the disk fills up
                try:
                    while True:
                        f.write(b"0" * 65536)
                        f.flush()
                except OSError:
                    pass
            return real(spec)
        lanes.run_items = fill_then_run
        sub = os.path.join(disk, "01_mini.ipynb")
        open(sub, "wb").write(notebook_bytes(CORRECT))
        os.makedirs(os.path.join(disk, "out"))
        grade(module=MINI, submission=sub, suite_path=SUITE, reference=REF,
              out=os.path.join(disk, "out", "results.json"), limits=FAST,
              expected={str(goldens)!r}, stubs=STUBS)
        if not os.path.getsize(os.path.join(disk, "filler")):
            sys.exit("the disk was never filled: the patched run stage was not called")
        print(open(os.path.join(disk, "out", "results.json")).read())
    '''))
    proc = subprocess.run(["unshare", "--mount", "--propagation", "private", sys.executable,
                           str(script)], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout)
    check_results_schema(res)
    assert res["score"] == 5, res["output"]


@needs_full
def test_dev_shm_is_private_capped_and_gone_after_the_run(grade_mini):
    tag = f"tt-shm-{uuid.uuid4().hex[:10]}"
    hog = CORRECT + textwrap.dedent(f'''

        import os
        _written = 0
        for i in range(5):
            try:
                with open("/dev/shm/{tag}-%d" % i, "wb") as f:
                    for _ in range(50):
                        f.write(b"x" * (1 << 20))
                        _written += 1 << 20
            except OSError as e:
                print("stopped:", type(e).__name__)
                break
        print("SHM_MB", _written >> 20)
    ''')
    res = grade_mini(hog)
    out = outputs(res)["submission"]
    written = int(out.split("SHM_MB ", 1)[1].split()[0])
    assert written <= isolation.SCRATCH_MB, f"{written} MB in /dev/shm beyond the cap"
    assert not [e for e in os.listdir("/dev/shm") if e.startswith(tag)], "left in /dev/shm"
    assert res["score"] == 5


def _rss_of_grading(tmp_path: Path, module: str, notebook: Path) -> tuple[dict[str, Any], int]:
    """Grade in a fresh process; returns (results, that process's peak RSS in MB)."""
    out = tmp_path / f"rss-{uuid.uuid4().hex[:8]}.json"
    code = textwrap.dedent(f'''
        import json, sys
        from pathlib import Path
        from coursekit.course import load_course
        from autograder.harness.core import grade_module
        c = load_course()
        grade_module(course=c, module=c.module({module!r}), submission=Path({str(notebook)!r}),
                     out=Path({str(out)!r}))
        # VmHWM: this process's own peak. ru_maxrss would also count the pytest worker's
        # pages this process was forked from (Linux keeps the pre-exec high-water mark)
        hwm = [ln for ln in Path("/proc/self/status").read_text().splitlines()
               if ln.startswith("VmHWM:")][0]
        print(int(hwm.split()[1]) // 1024)
    ''')
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text()), int(proc.stdout.strip().splitlines()[-1])


PARENT_MB = 300  # far under Gradescope's 768 MB together with the sandboxed child


def test_the_parent_drops_every_result_it_has_decided(tmp_path):
    """21 results of 20 MB each: a parent that keeps them all needs over 400 MB."""
    from coursebuild.release import dump_notebook
    from coursebuild.samples import build_notebook
    from coursekit.course import load_course

    course = load_course()
    module = course.module("01")
    attack = textwrap.dedent('''
        import gc as _gc
        import numpy as _np
        for _o in _gc.get_objects():
            if type(_o).__name__ == "Case" and hasattr(_o, "fn"):
                object.__setattr__(_o, "fn", lambda tt, rng: _np.zeros(2_500_000))
    ''')
    nb = build_notebook(module, "full")
    nb["cells"].append({"cell_type": "code", "id": "attack", "metadata": {}, "outputs": [],
                        "execution_count": None, "source": "#| export\n" + attack})
    path = tmp_path / "01_tensor.ipynb"
    path.write_text(dump_notebook(nb), encoding="utf-8")
    res, rss = _rss_of_grading(tmp_path, "01", path)
    assert res["score"] == 0 and "grader_errors" not in res["extra_data"]
    assert rss < PARENT_MB, f"the grading parent peaked at {rss} MB"


def test_a_notebook_with_one_huge_literal_is_read_under_a_memory_cap(tmp_path):
    """A 9 MB literal makes CPython's parser use gigabytes; the export worker is capped, the
    parent is not touched, and the student is told what is wrong."""
    literal = "X = [" + "0," * 4_500_000 + "]\n"
    path = tmp_path / "01_tensor.ipynb"
    path.write_bytes(notebook_bytes(literal))
    res, rss = _rss_of_grading(tmp_path, "01", path)
    assert res["score"] == 0 and "too large" in res["output"], res["output"]
    assert "grader_error" not in res["extra_data"]
    assert rss < PARENT_MB, f"the grading parent peaked at {rss} MB"


FORGE_UNDECODABLE = """\
    def sum(self):
        import gc
        for c in [o for o in gc.get_objects() if type(o).__name__ == "_Channel"]:
            c.send("result", item="case:sum_value", data={"__float__": "boom"})
            c.send("result", item="case:sum_value", data={"__nd__": 5, "dtype": "<f8"})
"""


def test_a_malformed_result_message_is_the_submissions_failure(grade_mini):
    res = grade_mini(CORRECT.replace("    def sum(self):\n", FORGE_UNDECODABLE, 1))
    assert "grader_error" not in res["extra_data"] and "grader_errors" not in res["extra_data"]
    assert scores(res) == {"add_vectors": 2, "sum_value": 0, "shape_tuple": 1,
                           "total_of_empty_raises": 1}
    assert "No valid result" in outputs(res)["sum_value"]


def test_the_socket_filter_holds_for_the_c_level_socket_module():
    """Without a network namespace, patching Python's socket module is not enough (``_socket``
    gets through); the seccomp filter every sandbox installs is enforced by the kernel."""
    listener = LoopbackListener()
    try:
        code = textwrap.dedent(f'''
            import sys
            sys.path.insert(0, {str(REPO)!r})
            from autograder.harness.isolation import block_sockets
            assert block_sockets(), "seccomp unavailable"
            import _socket, subprocess
            try:
                s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
                s.connect(("127.0.0.1", {listener.port}))
                print("CONNECTED")
            except OSError as e:
                print("REFUSED", e.errno)
            r = subprocess.run([sys.executable, "-c", "import socket; socket.create_connection(('127.0.0.1', {listener.port}))"], capture_output=True, text=True)
            print("CHILD", r.returncode)
        ''')
        proc = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True,
                              text=True, timeout=60)
    finally:
        listener.close()
    assert proc.returncode == 0, proc.stderr
    assert "REFUSED 13" in proc.stdout and "CHILD 1" in proc.stdout, proc.stdout
    assert listener.connections == 0
