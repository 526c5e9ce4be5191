"""The mutation fork server: its children are what a fresh child is, and verdicts match.

The oracle for "the same isolation" is a fresh child itself: the same probe runs once in a
child launched as grading launches it and once in a child forked by the server, and what
each saw of its process, namespaces, mounts, credentials, limits, signals and environment
must be equal (see :mod:`autograder.harness.zygote`). Verdicts are compared the same way,
on mutants with known reasons (wrong value, raised, crashed, import failed, timeouts).
"""

from __future__ import annotations

import os
import shutil
import textwrap
from pathlib import Path

import pytest

from autograder.harness import isolation
from autograder.harness.limits import Limits
from autograder.harness.mutation import Mutant, run_mutation
from autograder.harness.package import build_package
from autograder.harness.supervisor import RunSpec, SandboxUnavailable, run_items, start_zygote
from tests.autograder.conftest import CORRECT, REF, SUITE, all_sandbox_processes

MODULES = ((1, "mini"), (2, "later"))

# What a child can see of itself; everything that may differ between two runs (pids, the
# run's uid, the result pipe's number, the command line, the parent process) is left out
# or reduced to what must hold for both. Also left out: the string hash seed, which ``-I``
# draws at random for every fresh interpreter (it ignores PYTHONHASHSEED) and the children
# of one fork server share (module docstring).
FACTS = textwrap.dedent('''

    def facts():
        import os, resource, signal, socket, sys
        status = dict(line.split(":", 1) for line in open("/proc/self/status")
                      if ":" in line)
        keep = ("NoNewPrivs", "Seccomp", "Seccomp_filters", "CapInh", "CapPrm", "CapEff",
                "CapBnd", "CapAmb", "Groups")
        limits = {name: list(resource.getrlimit(getattr(resource, name)))
                  for name in ("RLIMIT_AS", "RLIMIT_FSIZE", "RLIMIT_CORE", "RLIMIT_NOFILE",
                               "RLIMIT_NPROC", "RLIMIT_STACK", "RLIMIT_DATA")}
        cpu = resource.getrlimit(resource.RLIMIT_CPU)
        try:
            socket.socket()
            sock = "allowed"
        except OSError as exc:
            sock = exc.errno
        try:
            import torch  # noqa: F401
            blocked = "imported"
        except ImportError as exc:
            blocked = str(exc)[:30]
        handlers = {}
        for name in ("SIGINT", "SIGTERM", "SIGPIPE", "SIGCHLD", "SIGXFSZ", "SIGHUP",
                     "SIGUSR1"):
            h = signal.getsignal(getattr(signal, name))
            handlers[name] = h.name if hasattr(h, "name") else "python handler"
        umask = os.umask(0o22)
        os.umask(umask)
        mounts = sorted(" ".join(line.split()[4:6]) for line in open("/proc/self/mountinfo"))
        pid1 = os.getpid() == 1
        return {
            "pid1": pid1,
            "procs": sorted(p for p in os.listdir("/proc") if p.isdigit()) if pid1 else None,
            "ppid0": os.getppid() == 0,
            "session_leader": os.getsid(0) in (0, os.getpid()),
            "group_leader": os.getpgid(0) in (0, os.getpid()),
            "uid_dropped": os.getuid() != 0, "one_uid": len(set(os.getresuid())) == 1,
            "one_gid": len(set(os.getresgid())) == 1, "groups": os.getgroups(),
            "status": {k: status[k].strip() for k in keep if k in status},
            "limits": limits, "cpu_limited": 0 < cpu[0] == cpu[1],
            "socket": sock, "torch": blocked, "handlers": handlers,
            "sigmask": sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])),
            "umask": umask, "nice": os.nice(0), "cwd": os.getcwd(), "env": dict(os.environ),
            "root": sorted(os.listdir("/")), "mounts": mounts,
            "fds": len(os.listdir("/proc/self/fd")), "stdin": sys.stdin.read(),
            "path": list(sys.path),
            "flags": [sys.flags.isolated, sys.flags.dont_write_bytecode,
                      sys.flags.ignore_environment, sys.flags.no_user_site],
            "harness": sorted(m for m in sys.modules  # (the launcher's own module aside)
                              if m.split(".")[0] in ("autograder", "hidden_suite")
                              and m not in ("autograder.harness.child",
                                            "autograder.harness.zygote")),
            "affinity": sorted(os.sched_getaffinity(0)),
        }
''')
PROBE_SUITE = textwrap.dedent('''
    """A suite with one case: what the child sees."""

    from autograder.suite import Suite

    suite = Suite(module="01_mini", version="probe.1")


    @suite.case(points=1)
    def facts(tt, rng):
        return tt.mini.facts()
''')


def _facts(tmp_path: Path, *, sandbox: bool, fork: bool) -> dict:
    suite = tmp_path / "suites" / "01_mini" / "suite.py"
    if not suite.is_file():
        tmp_path.mkdir(exist_ok=True)
        suite.parent.mkdir(parents=True)
        suite.write_text(PROBE_SUITE, encoding="utf-8")
        (tmp_path / "pkg").mkdir()
        build_package(dest=tmp_path / "pkg", reference=REF, module_number=1, slug="mini",
                      student_source=CORRECT + FACTS, all_modules=MODULES)
    spec = RunSpec(package_parent=tmp_path / "pkg", slug="mini", suite_file=suite,
                   items=["case:facts"], scratch=tmp_path, item_timeout_s={"case:facts": 10.0},
                   import_timeout_s=10.0, run_timeout_s=120.0, memory_limit_mb=700,
                   max_output_kb=4, sandbox=sandbox, hide=[])
    if fork:
        with start_zygote(suite_file=suite) as zygote:
            spec.zygote = zygote
            report = run_items(spec)
        assert zygote.proc.poll() is not None, "the fork server ends with its handle"
    else:
        report = run_items(spec)
    o = report.outcomes["case:facts"]
    assert o.status == "result", (o, report.fatal, report.raw_output)
    return {"facts": o.value, "isolation": report.isolation,
            "sandbox": [f for f in report.sandbox_facts if not f.startswith("euid=")],
            "root_euid": [f for f in report.sandbox_facts if f.startswith("euid=")] == [
                "euid=0"]}


@pytest.mark.parametrize("level", ["full", "basic", "trusted"])
def test_a_forked_child_sees_exactly_what_a_fresh_child_sees(tmp_path, monkeypatch, level):
    """Namespaces and minimal root (``full``), the fallback without them (``basic``) and a
    trusted run: the fork server's child matches a fresh child fact for fact."""
    if level == "basic":
        monkeypatch.setenv("TT_GRADER_ISOLATION", "basic")
        if isolation.plan().refuse:  # this machine's interpreter is root's alone: both refuse
            for fork in (False, True):
                with pytest.raises(SandboxUnavailable, match="would run as root"):
                    _facts(tmp_path / str(fork), sandbox=True, fork=fork)
            return
    sandbox = level != "trusted"
    fresh = _facts(tmp_path, sandbox=sandbox, fork=False)
    forked = _facts(tmp_path, sandbox=sandbox, fork=True)
    differ = {k: (fresh["facts"][k], forked["facts"].get(k)) for k in fresh["facts"]
              if fresh["facts"][k] != forked["facts"].get(k)}
    assert not differ, differ
    assert forked == fresh
    facts = forked["facts"]
    if sandbox and isolation.plan().namespaces:
        assert facts["pid1"] and facts["procs"] == ["1"] and facts["ppid0"]
        assert facts["socket"] == 13 and "home" not in facts["root"]
        assert facts["cwd"] == "/tmp" and facts["status"]["NoNewPrivs"] == "1"
    if sandbox and os.geteuid() == 0:
        assert facts["uid_dropped"] and facts["one_uid"] and facts["groups"] == []
    if sandbox:
        assert facts["harness"] == [] and facts["torch"].startswith("importing 'torch' is not")
    assert all_sandbox_processes() == []


LOOPS_AT_IMPORT = CORRECT.replace("import numpy as np\n",
                                  "import numpy as np\n\nwhile True:\n    pass\n", 1)
EXITS = CORRECT.replace("        return float(self.data.sum())",
                        "        import os\n        os._exit(9)")
RAISES_AT_IMPORT = CORRECT.replace("import numpy as np\n",
                                   "import numpy as np\n\nraise RuntimeError('no')\n", 1)
WRONG = CORRECT.replace("return float(self.data.sum())", "return float(self.data.mean())")
RAISES = CORRECT.replace("        return float(self.data.sum())",
                         "        raise ValueError('sum')")
LOOPS = CORRECT.replace("        return float(self.data.sum())",
                        "        while True:\n            pass")
# a timeout (sum_value) followed by a wrong value (shape_tuple): the wrong value decides
LOOPS_THEN_WRONG = LOOPS.replace("return tuple(int(s) for s in self.data.shape)",
                                 "return tuple(int(s) + 1 for s in self.data.shape)")
# a wrong value (add_vectors) followed by a loop (sum_value): the run stops before the loop
WRONG_THEN_LOOPS = LOOPS.replace("return Vec(self.data + other)",
                                 "return Vec(self.data - other)")
KNOWN = {
    "bug:wrong": (WRONG, "wrong value"), "bug:raises": (RAISES, "raised"),
    "bug:exits": (EXITS, "crashed"), "bug:import_raises": (RAISES_AT_IMPORT, "import failed"),
    "bug:import_loops": (LOOPS_AT_IMPORT, "timeout"), "bug:loops": (LOOPS, "timeout"),
    "bug:loops_then_wrong": (LOOPS_THEN_WRONG, "wrong value"),
    "bug:wrong_then_loops": (WRONG_THEN_LOOPS, "wrong value"),
}


def test_fork_server_and_fresh_children_give_the_same_verdicts():
    """Every kind of kill, with known reasons, the same with and without the fork server;
    the unmutated control passes in both."""
    assert len({src for src, _ in KNOWN.values()} | {CORRECT}) == len(KNOWN) + 1
    bugs = [Mutant(mid, mid, 1, src) for mid, (src, _) in KNOWN.items()]
    lim = Limits(test_timeout_s=0.5, run_timeout_s=120.0, import_timeout_s=1.0)
    reports = [run_mutation(suite_path=SUITE, reference=REF, slug="mini", number=1,
                            all_modules=MODULES, bugs=bugs, lines=set(), limits=lim,
                            fork=fork) for fork in (True, False)]
    expected = {mid: reason for mid, (_, reason) in KNOWN.items()}
    assert reports[0].reasons == expected
    assert reports[1].reasons == expected
    assert [m.id for m in reports[0].timed_out] == ["bug:import_loops", "bug:loops"]
    assert all_sandbox_processes() == []


def _spec(tmp_path: Path, source: str, **kw) -> RunSpec:
    (tmp_path / "pkg").mkdir(parents=True)
    build_package(dest=tmp_path / "pkg", reference=REF, module_number=1, slug="mini",
                  student_source=source, all_modules=MODULES)
    items = ["case:add_vectors", "case:sum_value", "case:shape_tuple",
             "case:total_of_empty_raises"]
    return RunSpec(package_parent=tmp_path / "pkg", slug="mini", suite_file=SUITE,
                   items=items, scratch=tmp_path, item_timeout_s=dict.fromkeys(items, 0.5),
                   import_timeout_s=5.0, run_timeout_s=120.0, memory_limit_mb=700,
                   max_output_kb=4, hide=[], **kw)


def test_a_run_stops_at_the_first_outcome_stop_after_accepts(tmp_path):
    """The case that loops after the stop is never started; a timeout before it does not
    stop the run (the predicate decides, and it sees every outcome in order)."""
    seen: list[str] = []

    def stop(o):
        seen.append(f"{o.item}={o.status}")
        return o.status == "error"

    # sum_value raises, shape_tuple would loop: stopped after sum_value
    raising = RAISES.replace("return tuple(int(s) for s in self.data.shape)",
                             "while True:\n            pass")
    rep = run_items(_spec(tmp_path / "a", raising, stop_after=stop))
    assert {k: o.status for k, o in rep.outcomes.items()} == {
        "case:add_vectors": "result", "case:sum_value": "error",
        "case:shape_tuple": "skipped", "case:total_of_empty_raises": "skipped"}
    assert rep.stopped_at == "case:sum_value" and rep.launches == 1
    assert "stopped at case:sum_value" in rep.outcomes["case:shape_tuple"].message
    assert seen == ["case:add_vectors=result", "case:sum_value=error"]
    # sum_value loops (timeout, the run goes on in a new child), total raises: stop there
    seen.clear()
    looping = LOOPS.replace('raise ValueError("empty")', "raise KeyError('x')").replace(
        "    return sum(xs)", "    raise KeyError('y')")
    rep = run_items(_spec(tmp_path / "b", looping, stop_after=stop))
    assert [o.status for o in rep.outcomes.values()] == ["result", "timeout", "result",
                                                          "error"]
    assert rep.stopped_at == "case:total_of_empty_raises" and rep.launches == 2
    # without a predicate nothing stops
    rep = run_items(_spec(tmp_path / "c", raising.replace(
        "while True:\n            pass", "return (1,)")))
    assert rep.stopped_at == "" and "skipped" not in {o.status for o in rep.outcomes.values()}


def test_moot_items_are_never_started_and_the_run_goes_on_after_them(tmp_path):
    """``RunSpec.moot`` (a milestone's seeds once its verdict is decided): the items it names
    are not run (shape_tuple would loop for its whole timeout), the child that would run them
    is replaced by one that goes on after them, and they say why; an outcome that is not a
    result (a timeout) decides too. The callback sees every outcome in order."""
    loops = CORRECT.replace("return tuple(int(s) for s in self.data.shape)",
                            "while True:\n            pass")
    assert loops != CORRECT
    seen: list[str] = []

    def after_add(o):
        seen.append(f"{o.item}={o.status}")
        return ({"case:sum_value": "not needed", "case:shape_tuple": "not needed"}
                if o.item == "case:add_vectors" else {})

    rep = run_items(_spec(tmp_path / "a", loops, moot=after_add))
    assert {k: o.status for k, o in rep.outcomes.items()} == {
        "case:add_vectors": "result", "case:sum_value": "skipped",
        "case:shape_tuple": "skipped", "case:total_of_empty_raises": "result"}
    assert rep.outcomes["case:shape_tuple"].message == "not needed" and rep.launches == 2
    assert rep.outcomes["case:shape_tuple"].cpu_s is None
    assert seen == ["case:add_vectors=result", "case:total_of_empty_raises=result"]
    assert rep.stopped_at == "" and set(rep.moot) == {"case:sum_value", "case:shape_tuple"}

    def after_timeout(o):
        return {"case:total_of_empty_raises": "decided"} if o.status == "timeout" else {}

    rep = run_items(_spec(tmp_path / "b", loops, moot=after_timeout))
    assert [o.status for o in rep.outcomes.values()] == ["result", "result", "timeout",
                                                          "skipped"]
    assert rep.launches == 1  # the timeout ended the child; nothing was left to start
    # a moot item that already ran keeps its outcome (the caller leaves it out)
    rep = run_items(_spec(tmp_path / "c", CORRECT, moot=lambda o: (
        {"case:add_vectors": "late"} if o.item == "case:sum_value" else {})))
    assert [o.status for o in rep.outcomes.values()] == ["result"] * 4
    assert rep.moot == {"case:add_vectors": "late"} and rep.launches == 1
    # a callback that fails makes nothing moot: every item runs

    def broken(o):
        raise ValueError("a course-side bug")

    rep = run_items(_spec(tmp_path / "d", CORRECT, moot=broken))
    assert [o.status for o in rep.outcomes.values()] == ["result"] * 4 and rep.moot == {}


def test_a_fork_server_never_starts_student_code(tmp_path):
    with start_zygote(suite_file=SUITE) as zygote:
        spec = _spec(tmp_path, CORRECT, zygote=zygote, student_file=tmp_path / "s.py")
        with pytest.raises(ValueError, match="trusted code only"):
            run_items(spec)
        other = tmp_path / "suite.py"
        shutil.copy(SUITE, other)
        with pytest.raises(ValueError, match="another suite_file"):
            run_items(RunSpec(**{**vars(spec), "student_file": None, "suite_file": other}))
