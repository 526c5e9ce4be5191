"""Every prefix in tests/conftest.py's TIERS names a test that exists.

The check itself lives in ``pytest_collection_modifyitems`` and runs on a whole-suite
collection; under pytest-xdist it does not stop the workers (a worker that stops at collection
shows up as a crash without a message): it leaves the stale prefixes on the config, and this
test reports them by name. Run on its own (no whole-suite collection around it), this test
runs a plain whole-suite collection instead.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from coursekit.paths import REPO_ROOT


def test_every_tier_prefix_names_an_existing_test(pytestconfig: pytest.Config) -> None:
    """Every prefix in TIERS matches a test of the whole suite. A run that collected the whole
    suite itself (``make test``, each xdist worker) checked its own collection
    (tests/conftest.py); any other run collects the whole suite once more to check."""
    stale = getattr(pytestconfig, "_tt_stale_tiers", None)
    if stale is not None:
        assert not stale, f"tests/conftest.py TIERS: no test matches {stale}"
        return
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "-p", "no:randomly"], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=600)
    text = proc.stdout + proc.stderr
    assert "TIERS" not in text, [ln for ln in text.splitlines() if "TIERS" in ln]
    assert proc.returncode == 0, text[-2000:]


def test_right_after_make_setup_pytest_collects_without_torch(tmp_path: Path) -> None:
    """``make setup`` installs no PyTorch (an instructor-CI extra): a whole collection, and
    ``pytest -k ...``, must not stop at the parity files; they are left out and the run says
    so (issue 34). Simulated by an import hook that refuses torch (and Dask, also an extra)."""
    (tmp_path / "sitecustomize.py").write_text(
        "import sys\n"
        "class _Missing:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('torch', 'dask', 'distributed'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, _Missing())\n")
    env = {**__import__("os").environ, "PYTHONPATH": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "-p", "no:randomly"], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=600, env=env)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text[-2000:]
    assert not [ln for ln in proc.stdout.splitlines() if ln.startswith("tests/parity/")]
    assert "ERROR" not in text and "errors during collection" not in text
    assert "PyTorch is not installed" in text and "parity test file(s) were not collected" in text
    picked = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-k",
                             "softmax_is_shift_invariant"], cwd=REPO_ROOT, capture_output=True,
                            text=True, timeout=600, env=env)
    assert picked.returncode in (0, 5), (picked.stdout + picked.stderr)[-2000:]


class _Worker:
    """What the scheduler uses of an xdist worker: it records the tests it is sent."""

    def __init__(self, name: str) -> None:
        self.gateway = type("Gateway", (), {"id": name})()
        self.shutting_down = False
        self.sent: list[int] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent += indices

    def shutdown(self) -> None:
        self.shutting_down = True


def test_the_parallel_queue_serves_the_slow_tiers_first_and_keeps_files_together(
        pytestconfig: pytest.Config) -> None:
    """The scheduler ``make test`` uses, fed a collection in which the slow tests come last:
    the first tests the workers get are the slow ones (the larger group first), a file that
    shares state goes to one worker whole, and every test is sent exactly once."""
    # the tests folder's conftest as pytest loaded it (``import conftest`` may name another
    # folder's in a whole run; loading it again would rerun its session setup)
    root = (REPO_ROOT / "tests" / "conftest.py").resolve()
    conftest = next(p for p in pytestconfig.pluginmanager.get_plugins()
                    if Path(getattr(p, "__file__", "") or "/").resolve() == root)

    fast = [f"tests/test_course.py::test_{i}" for i in range(6)]
    group = [f"tests/test_sample_class.py::test_{i}" for i in range(3)]  # module fixture
    slow = ["tests/test_demo.py::test_demo_releases_builds_grades_and_reports",
            "tests/autograder/test_mutation.py::test_every_module_suite_kills[01_tensor]"]
    collection = fast + group + slow
    assert conftest._shares_state("tests/test_sample_class.py")
    assert not conftest._shares_state("tests/test_course.py")
    assert [conftest._in_slow_tier(t) for t in collection] == [False] * 6 + [True] * 5

    class Config:
        option = type("Option", (), {"loadscopereorder": True})()

        def getvalue(self, name: str) -> object:
            return {"dist": "loadgroup", "tx": ["2*popen"]}[name]

    sched = conftest.pytest_xdist_make_scheduler(Config(), None)
    workers = [_Worker("gw0"), _Worker("gw1")]
    for w in workers:
        sched.add_node(w)
    for w in workers:
        sched.add_node_collection(w, collection)
    sched.schedule()
    first = [collection[w.sent[0]] for w in workers]
    assert first == [group[0], slow[0]], first
    for w in workers:  # finish every test, in order, so the rest of the queue is served
        done = 0
        while done < len(w.sent):
            sched.mark_test_complete(w, w.sent[done])
            done += 1
    sent = [collection[i] for w in workers for i in w.sent]
    assert sorted(sent) == sorted(collection)
    owners = {w.gateway.id for w in workers if any(collection[i] in group for i in w.sent)}
    assert len(owners) == 1, "a file that shares state runs on one worker"
    order = [collection[i] for i in workers[1].sent]
    assert order[: 2] == slow, order


def test_a_crashed_worker_names_its_test_and_its_other_tests_run_elsewhere(
        pytestconfig: pytest.Config) -> None:
    """xdist asks the scheduler which test a dead worker was running (it reports that one as
    crashed); the tests it held besides go back to the queue and reach the other worker."""
    from xdist_groups import FileGroups

    class Config:
        def getvalue(self, name: str) -> object:
            return {"tx": ["2*popen"]}[name]

    collection = [f"tests/test_course.py::test_{i}" for i in range(6)]
    sched = FileGroups(Config(), scope=lambda n: n, slow=lambda n: False)  # type: ignore[arg-type]
    gw0, gw1 = _Worker("gw0"), _Worker("gw1")
    for w in (gw0, gw1):
        sched.add_node(w)
        sched.add_node_collection(w, collection)
    sched.schedule()
    assert [len(w.sent) for w in (gw0, gw1)] == [2, 2]  # the running test and the next
    assert sched.remove_node(gw0) == collection[gw0.sent[0]]
    while sched.has_pending:
        sched.mark_test_complete(gw1, next(i for i in gw1.sent
                                           if collection[i] in sched.pending[gw1]))
    ran = [collection[i] for i in gw0.sent[:1] + gw1.sent]
    assert sorted(ran) == sorted(collection) and len(ran) == len(set(ran)), ran
