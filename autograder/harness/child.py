"""The sandboxed child: imports the package under test and runs probes, nothing else.

Started by :mod:`autograder.harness.supervisor` as ``python -I -B child.py`` with a JSON job on
stdin and a result pipe on an inherited file descriptor. Before any submission code runs it
loads everything trusted it needs (NumPy, the suite, the milestone training recipes, the
public tests; never a test label or code that makes one), builds the minimal root
(:func:`autograder.harness.isolation.enter_minimal_root`) when it runs in namespaces, sets
hard rlimits, blocks ``socket()`` with seccomp and drops to the run's uid. Then it imports the
package and streams one message per item over the pipe::

    {"n": NONCE, "seq": 3, "type": "result", "item": "case:add", "data": {...}, "out": "..."}

Message types: ``sandbox`` (what was put in force, sent before any student code runs) or
``sandbox_failed`` (the minimal root could not be built: the parent falls back), ``ready``
(package imported; integrity facts), ``start`` (an item begins), ``result`` (plain data, see
:mod:`autograder.harness.wire`), ``error`` (the item raised), ``fatal`` (the package could not
be imported), ``done``. A timed item (it returned :class:`autograder.suite.Timed`) first sends
``commit`` (its value), then answers the parent's requests on the work pipe (``work_fd``: one
JSON line each, ``run`` or ``end``) with ``work_done`` or ``work_error``, and sends an empty
``result`` after ``end``; the parent times every run from outside
(:mod:`autograder.harness.timing`). Started with ``--twin``, the same harness is the trusted
twin that runs a timed item's baseline work with the reference package.

The parent trusts none of it after ``sandbox``: it validates the nonce, the sequence and the
item names, decodes plain data only, and decides every score itself. A case gets the seed
the parent chose for it (``seeds``); a milestone item gets its training data and training
seed, and returns trained parameters, never predictions.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import importlib.abc
import importlib.util
import io
import json
import os
import sys
import threading
import time
import traceback
import types
from typing import Any, cast

_print = builtins.print
_len, _isinstance, _repr, _str, _type = len, isinstance, repr, str, type
_monotonic = time.monotonic
_os_write = os.write
_os_read = os.read
_dumps = json.dumps
_loads = json.loads

FORBIDDEN = ("torch", "jax", "jaxlib", "tensorflow", "tinytorch_ref", "autograder", "otter")
#: Wall seconds between two progress messages of a milestone item (see :class:`_Progress`).
PROGRESS_EVERY_S = 0.25


class _Channel:
    """Writes framed messages to the result fd; captured before student code runs."""

    def __init__(self, fd: int, nonce: str) -> None:
        self._fd = fd
        self._nonce = nonce
        self._seq = 0

    def send(self, kind: str, **fields: Any) -> None:
        self._seq += 1
        msg = {"n": self._nonce, "seq": self._seq, "type": kind, **fields}
        data = (_dumps(msg, separators=(",", ":"), allow_nan=False) + "\n").encode()
        view = memoryview(data)
        while view:
            try:
                written = _os_write(self._fd, view)
            except OSError:
                return  # the pipe is gone: the parent will score what never arrived as 0
            view = view[written:]


class _Progress:
    """A milestone trainer's ``on_step``: tells the parent how many training steps are done,
    at most every :data:`PROGRESS_EVERY_S` (the parent only needs the last count, to say how
    far a seed got when its CPU cap stopped it)."""

    def __init__(self, chan: _Channel, item: str) -> None:
        self._chan = chan
        self._item = item
        self._done = 0
        self._sent = -1
        self._at = _monotonic()

    def __call__(self, done: int) -> None:
        self._done = int(done)
        now = _monotonic()
        if self._sent < 0 or now - self._at >= PROGRESS_EVERY_S:  # the first step at once
            self._at = now
            self.flush()

    def flush(self) -> None:
        if self._done != self._sent:
            self._sent = self._done
            self._chan.send("progress", item=self._item, done=self._done)


class _CappedText(io.TextIOBase):
    """A stdout/stderr replacement that keeps at most ``cap`` characters."""

    def __init__(self, cap: int) -> None:
        self._parts: list[str] = []
        self._size = 0
        self._cap = cap
        self.truncated = False

    def write(self, s: Any) -> int:
        s = _str(s)
        room = self._cap - self._size
        if room > 0:
            self._parts.append(s[:room])
            self._size += min(_len(s), room)
        if _len(s) > room:
            self.truncated = True
        return _len(s)

    def writable(self) -> bool:
        return True

    def flush(self) -> None:
        return None

    def text(self) -> str:
        out = "".join(self._parts)
        return out + ("\n[... output truncated ...]" if self.truncated else "")


class _ImportBlocker(importlib.abc.MetaPathFinder):
    """Refuses frameworks that would do the student's work, and the grader's own packages."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        self.attempts: list[str] = []

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        top = fullname.split(".")[0]
        if top in self.names:
            self.attempts.append(fullname)
            raise ImportError(f"importing {top!r} is not allowed in TinyTorch: build it "
                              "from NumPy and the Python standard library")
        return None


def _shim_otter() -> None:
    """A stand-in ``otter.test_files.test_case`` so public tests load without otter."""

    class test_case:  # noqa: N801 - mirrors otter's name
        def __init__(self, name: str | None = None, points: float | None = None,
                     hidden: bool = False, success_message: str | None = None,
                     failure_message: str | None = None) -> None:
            self.name, self.points, self.hidden = name, points, hidden
            self.success_message, self.failure_message = success_message, failure_message
            self.fn: Any = None

        def __call__(self, fn: Any) -> Any:
            self.fn = fn
            return self

    otter = types.ModuleType("otter")
    tf = types.ModuleType("otter.test_files")
    tf.test_case = test_case  # type: ignore[attr-defined]
    otter.test_files = tf  # type: ignore[attr-defined]
    sys.modules["otter"] = otter
    sys.modules["otter.test_files"] = tf


def _load_public_tests(tests: list[dict[str, str]]) -> list[tuple[str, Any, str]]:
    """Compile public test files; returns (item name, test_case object, failure message)."""
    _shim_otter()
    tc_cls = sys.modules["otter.test_files"].test_case
    found: list[tuple[str, Any, str]] = []
    for t in tests:
        ns: dict[str, Any] = {"__name__": f"public_{t['name']}"}
        exec(compile(t["source"], t["file"], "exec"), ns)  # trusted course file
        for i, value in enumerate(v for v in ns.values() if _isinstance(v, tc_cls)):
            found.append((f"public:{t['name']}:{i + 1}", value, value.failure_message or ""))
    sys.modules.pop("otter.test_files", None)
    sys.modules.pop("otter", None)
    return found


def _student_frames(tb: Any, student_files: set[str], graded: str = "") -> str:
    """Traceback lines from the student's own files only (hidden suite frames are elided).

    At most five, from the deepest line of the graded module's file on (where that module's
    code handed over to the earlier modules the error surfaced in), so a bug in ``spatial.py``
    that makes ``tensor.py`` raise names the ``spatial.py`` line first, not only frames of the
    student's earlier modules.
    """
    frames = [fs for fs in traceback.extract_tb(tb) if fs.filename in student_files]
    mine = [i for i, fs in enumerate(frames) if fs.filename == graded]
    note = ""
    if mine:
        frames = frames[mine[-1]:]
        if len(frames) > 5:
            frames = [frames[0], *frames[-4:]]
    else:
        frames = frames[-5:]
        if frames and graded:
            note = (f"\n  (no line of {os.path.basename(graded)} is running here: the error "
                    "surfaced in your copy of an earlier module, in what it was given)")
    return "\n".join(f"  {os.path.basename(fs.filename)}, line {fs.lineno}, in {fs.name}"
                     + (f": {fs.line}" if fs.line else "") for fs in frames) + note


def _describe(exc: BaseException) -> str:
    name = _type(exc).__name__
    if _isinstance(exc, SystemExit):
        # _isinstance is the captured builtin, which mypy does not narrow through
        code = cast(SystemExit, exc).code
        return f"called sys.exit({code!r}); graded code must return, not exit"
    if _isinstance(exc, KeyboardInterrupt):
        return "raised KeyboardInterrupt"
    try:
        msg = _str(exc)
    except BaseException:  # noqa: BLE001 - a hostile __str__
        msg = "<message could not be shown>"
    return f"{name}: {msg[:500]}" if msg else name


def _integrity(pkg: Any, mod: Any, slug: str, source_file: str, source: str) -> list[str]:
    """Check that the graded names are defined by the student's module, in their file."""
    problems: list[str] = []
    modname = f"tinytorch.{slug}"
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ["the exported module does not parse"]
    defs = cast("list[ast.FunctionDef | ast.ClassDef]",
                [n for n in tree.body if _isinstance(n, (ast.FunctionDef, ast.ClassDef))])
    for node in defs:
        obj = getattr(mod, node.name, None)
        if obj is None:
            problems.append(f"{node.name} is defined in your module but missing after import")
            continue
        if getattr(obj, "__module__", None) != modname:
            problems.append(f"{node.name} is replaced by an object from "
                            f"{getattr(obj, '__module__', '?')}")
            continue
        code = getattr(obj, "__code__", None)
        if code is not None and code.co_filename != source_file:
            problems.append(f"{node.name} does not run code from your module")
        if _isinstance(node, ast.ClassDef):
            for item in node.body:
                if _isinstance(item, ast.FunctionDef):
                    item = cast(ast.FunctionDef, item)
                    fn = obj.__dict__.get(item.name)
                    fcode = getattr(getattr(fn, "__func__", fn), "__code__", None)
                    if fcode is not None and fcode.co_filename != source_file:
                        problems.append(f"{node.name}.{item.name} does not run code from "
                                        "your module")
        exported = getattr(pkg, node.name, None)
        if exported is not None and exported is not obj and _isinstance(exported, type):
            problems.append(f"tinytorch.{node.name} is not the {node.name} from your module")
    return problems


class Trusted:
    """What a child loads before its sandbox closes: NumPy, the harness helpers it keeps
    direct references to, the hidden suite, the milestone recipes and the public tests.

    Built by :func:`load_trusted` from the job's trusted part (:data:`TRUSTED_FIELDS`); a
    fresh child builds it for itself, the mutation fork server
    (:mod:`autograder.harness.zygote`) once for all the children it forks.
    """

    def __init__(self, job: dict[str, Any]) -> None:
        import numpy as np  # noqa: F401 - loaded while every library path is still reachable

        # this file runs as a script: autograder is importable once load_trusted put the
        # harness root on sys.path
        from autograder import standins  # noqa: PLC0415 - see above
        from autograder.harness import isolation, wire  # noqa: PLC0415 - see above
        from autograder.harness.home import import_file  # noqa: PLC0415 - see above
        from autograder.suite import Timed, run_case  # noqa: PLC0415 - see above

        self.np = np
        self.isolation = isolation
        self.encode = wire.encode
        self.decode = wire.decode
        self.run_case = run_case
        self.compile_standins = standins.compile_payloads
        self.apply_standins = standins.apply
        self.Timed = Timed
        suite_mod = import_file("hidden_suite", job["suite_file"])
        self.cases = {c.name: c for c in suite_mod.suite.cases}
        ms_job = job.get("milestones") or {}
        self.trainers: dict[str, Any] = {}
        self.timed_work: dict[str, Any] = {}
        self.baseline_work: dict[str, Any] = {}
        self.ms_inputs: dict[str, Any] = {}
        self.to_params: Any = None
        if ms_job.get("recipes"):
            # a module of the harness root (tinytorch_milestones.recipes), first on sys.path
            rmod = importlib.import_module(ms_job["recipes"])
            self.trainers = {mid: rmod.TRAINERS[mid] for mid in ms_job.get("ids", [])}
            # a milestone's timed work (the submission's side) and its baseline (the twin's)
            self.timed_work = {mid: f for mid, f in getattr(rmod, "TIMED_WORK", {}).items()
                               if mid in self.trainers}
            self.baseline_work = {mid: f for mid, f in getattr(rmod, "BASELINE_WORK", {}).items()
                                  if mid in self.trainers}
            self.to_params = rmod.parameters
            self.ms_inputs = {item: wire.decode(data)
                              for item, data in ms_job.get("inputs", {}).items()}
        self.ms_work = {str(k): dict(v) for k, v in (ms_job.get("work") or {}).items()}
        self.public = _load_public_tests(job.get("public_tests", []))


#: The fields of a job that :class:`Trusted` is built from (the rest is per launch).
TRUSTED_FIELDS = ("harness_root", "suite_file", "milestones", "public_tests")


def load_trusted(job: dict[str, Any]) -> Trusted:
    """Put the harness on ``sys.path`` and load everything trusted the job needs."""
    sys.path[:0] = [job["harness_root"]]
    return Trusted(job)


def main() -> None:
    """A fresh child: the job on stdin, then :func:`serve` (or :func:`serve_twin`)."""
    job = json.loads(sys.stdin.buffer.read().decode())
    sys.stdin.close()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - input() sees EOF
    if "--twin" in sys.argv[1:]:
        serve_twin(job, load_trusted(job))
    serve(job, load_trusted(job))


def _requests(fd: int) -> Any:
    """The parent's requests on a work pipe, one JSON object a line, until end of input."""
    buf = bytearray()
    while True:
        cut = buf.find(b"\n")
        if cut >= 0:
            line = bytes(buf[:cut])
            del buf[:cut + 1]
            yield _loads(line)
            continue
        chunk = _os_read(fd, 1 << 20)
        if not chunk:
            return
        buf += chunk


def _serve_work(chan: _Channel, requests: Any, item: str, work: Any, decode: Any,
                encode: Any, out: _CappedText | None = None) -> None:
    """Answer ``run`` requests with ``work[name](input)`` until ``end`` (or end of input).

    Every run's output is plain data sent back as ``work_done``; an exception is a
    ``work_error``. The time is measured by the parent, from outside, never here.
    """
    real_out, real_err = sys.stdout, sys.stderr
    for req in requests:
        op = req.get("op") if _isinstance(req, dict) else None
        if op == "end":
            return
        if op != "run":
            continue
        try:
            fn = work[req["work"]]
            x = decode(req["input"])
            if out is not None:
                sys.stdout = sys.stderr = out
            data = encode(fn(x))
        except BaseException as exc:  # noqa: BLE001 - the run's failure, reported
            sys.stdout, sys.stderr = real_out, real_err
            chan.send("work_error", item=item, error=_describe(exc))
            continue
        sys.stdout, sys.stderr = real_out, real_err
        chan.send("work_done", item=item, data=data)


def serve_twin(job: dict[str, Any], t: Trusted) -> None:
    """The trusted twin: import the reference package, then build each timed item's baseline
    work when asked (``setup``) and run it (``run``) until the parent closes the pipe. No
    student code is loaded here; the parent times every run from outside."""
    chan = _Channel(int(job["result_fd"]), job["nonce"])
    sys.path.insert(0, job["package_parent"])
    try:
        pkg = importlib.import_module(job["package"])
    except BaseException as exc:  # noqa: BLE001 - a course-side problem, reported
        chan.send("fatal", error=_describe(exc))
        os._exit(3)
    chan.send("ready")
    requests = _requests(int(job["work_fd"]))
    for req in requests:
        if not _isinstance(req, dict) or req.get("op") != "setup":
            continue
        item = str(req.get("item"))
        kind, _, name = item.partition(":")
        try:
            if kind == "case":
                timing = t.cases[name.rpartition("@")[0] or name].timing
                work = timing.baseline(pkg, t.decode(req["data"]))
            else:
                mid = name.partition("@")[0].partition("#")[0]
                work = t.baseline_work[mid](pkg, t.decode(req["data"]))
        except BaseException as exc:  # noqa: BLE001 - a course-side problem, reported
            chan.send("setup_error", item=item, error=_describe(exc))
            continue
        chan.send("built", item=item)
        _serve_work(chan, requests, item, work, t.decode, t.encode)
    os._exit(0)


def _trace_lines(suffix: str) -> set[int]:
    """Record, from now on, every line executed of the file whose path ends in ``suffix``
    (``sys.settrace`` and ``threading.settrace``; other files' frames are not traced): the
    set the lines are added to. A frame's ``call`` event adds its first line too."""
    lines: set[int] = set()

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            lines.add(frame.f_lineno)
        return local

    def start(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename.endswith(suffix):
            lines.add(frame.f_lineno)
            return local
        return None

    threading.settrace(start)
    sys.settrace(start)
    return lines


def _lines_taken(covered: set[int] | None) -> dict[str, list[int]]:
    """``{"lines": [...]}``: the lines recorded since the last call (then forgotten); ``{}``
    when nothing is traced."""
    if covered is None:
        return {}
    taken = sorted(covered)
    covered.clear()
    return {"lines": taken}


def serve(job: dict[str, Any], t: Trusted) -> None:  # noqa: C901 - one linear script
    """Close the sandbox, import the package under test and run the items; never returns.

    Everything trusted is already loaded (``t``); from here on, what runs is what the
    submission (or the mutant) makes of it.
    """
    chan = _Channel(int(job["result_fd"]), job["nonce"])
    np = t.np
    isolation = t.isolation
    cases, run_case, encode, decode, timed = t.cases, t.run_case, t.encode, t.decode, t.Timed
    trainers, to_params, ms_inputs, ms_work = t.trainers, t.to_params, t.ms_inputs, t.ms_work
    timed_work = t.timed_work
    work_fd = job.get("work_fd")
    requests = _requests(int(work_fd)) if work_fd is not None else iter(())
    public = t.public
    seeds = {str(k): int(v) for k, v in (job.get("seeds") or {}).items()}
    # stand-ins: the reference's version of the units a case is built from (a stage that
    # holds them grades none of those units: autograder.suite.Suite.stages)
    standin_job = job.get("standins") or {}
    standin_code = t.compile_standins(standin_job.get("units") or {})
    standin_items = {str(k): [standin_code[u] for u in v]
                     for k, v in (standin_job.get("items") or {}).items()}
    apply_standins = t.apply_standins
    shortcuts = bool(job.get("shortcuts"))
    cap = int(job["max_output_chars"])

    # ---- sandbox: nothing of the host beyond the minimal root, no sockets, not root
    sb = job.get("sandbox") or {}
    cwd = job["cwd"]
    facts: list[str] = []
    if sb.get("root"):
        try:
            cwd = isolation.enter_minimal_root(sb["root"])
        except OSError as exc:
            chan.send("sandbox_failed", error=f"{type(exc).__name__}: {exc}"[:300])
            os._exit(4)
        os.environ.update({"HOME": cwd, "TMPDIR": cwd})
        facts.append("minimal-root")
    if sb.get("rlimits"):
        isolation.set_rlimits(**sb["rlimits"])
    if sb.get("seccomp"):
        facts.append("seccomp-no-sockets" if isolation.block_sockets() else
                     "seccomp-unavailable")
    if sb.get("uid") is not None:
        isolation.drop_privileges(int(sb["uid"]))
        facts.append("uid-dropped")
    elif sb:
        isolation.no_new_privs()
    if sb:
        isolation.become_subreaper()
        # dies with the grader even after kill -9 (the uid change above cleared the signal)
        isolation.die_with_parent(int(job["result_fd"]))
        facts.append(f"euid={os.geteuid()}")
    del isolation, t
    os.chdir(cwd)
    blocker = _ImportBlocker(tuple(job.get("forbidden", FORBIDDEN)))
    if job.get("block_imports", True):
        sys.meta_path.insert(0, blocker)
        for name in list(sys.modules):  # the harness keeps direct references to what it needs
            if name.split(".")[0] in ("autograder", "hidden_suite", "tinytorch_milestones"):
                del sys.modules[name]
    chan.send("sandbox", facts=facts)

    # ---- import the package under test (first student code)
    sys.path.insert(0, job["package_parent"])
    slug = job["slug"]
    # line coverage of the module under test (the mutation gate's traced control run only:
    # autograder.harness.mutation): the lines each item executes, sent with its outcome
    covered = _trace_lines(f"{os.sep}{job['package']}{os.sep}{slug}.py") if job.get(
        "trace") else None
    student_file = job.get("student_file", "")
    student_files = {student_file, *job.get("student_files", [])}
    t0 = _monotonic()
    out = _CappedText(cap)
    real_out, real_err = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = out
    try:
        pkg = importlib.import_module(job["package"])
        mod = importlib.import_module(f"{job['package']}.{slug}")
    except BaseException as exc:  # noqa: BLE001 - anything at import time is the student's
        sys.stdout, sys.stderr = real_out, real_err
        chan.send("fatal", error=_describe(exc),
                  where=_student_frames(exc.__traceback__, student_files, student_file),
                  out=out.text())
        os._exit(3)
    sys.stdout, sys.stderr = real_out, real_err
    problems: list[str] = []
    if job.get("check_integrity") and student_file:
        try:
            with open(student_file, encoding="utf-8") as fh:
                problems = _integrity(pkg, mod, slug, student_file, fh.read())
        except BaseException as exc:  # noqa: BLE001
            problems = [f"integrity check failed: {_describe(exc)}"]
    chan.send("ready", import_s=round(_monotonic() - t0, 4), out=out.text(),
              integrity=problems, blocked=list(blocker.attempts),
              numpy=np.__version__, **_lines_taken(covered))

    # ---- items
    env = dict(vars(mod))
    env.setdefault("np", np)
    env.setdefault("numpy", np)
    public_by_name = {name: (tc, fail) for name, tc, fail in public}
    for item in job["items"][int(job.get("start", 0)):]:
        chan.send("start", item=item)
        _lines_taken(covered)  # (nothing runs between items: this only starts afresh)
        out = _CappedText(cap)
        sys.stdout = sys.stderr = out
        t0 = _monotonic()
        kind, _, name = item.partition(":")
        restore = None  # puts the student's units back after a case that ran with stand-ins
        try:
            if kind == "public":
                tc, fail = public_by_name[item]
                params = tc.fn.__code__.co_varnames[: tc.fn.__code__.co_argcount]
                missing = [p for p in params if p not in env]
                if missing:
                    raise NameError(f"{', '.join(missing)} not defined by your exported module")
                tc.fn(*[env[p] for p in params])
                value: Any = True
            elif kind == "case":
                units = standin_items.get(item)
                restore = apply_standins(mod, units, job["package"]) if units else None
                value = run_case(cases[name.rpartition("@")[0] or name], pkg, seeds.get(item),
                                 shortcut=shortcuts)
            elif kind == "milestone":
                mid, _, seed = name.partition("@")
                mid = mid.partition("#")[0]
                x, y = ms_inputs[item]
                progress = _Progress(chan, item)
                value = to_params(trainers[mid](pkg, int(seed), x, y, dict(ms_work[mid]),
                                                on_step=progress))
                progress.flush()
                if mid in timed_work:
                    value = timed(value, timed_work[mid](pkg, int(seed), x))
            else:
                raise KeyError(item)
            work = None
            if _type(value) is timed:
                value, work = value.value, value.work
            data = encode(value)
        except BaseException as exc:  # noqa: BLE001 - report, never die
            sys.stdout, sys.stderr = real_out, real_err
            if restore is not None:
                restore()
            detail = _describe(exc)
            if kind == "public" and public_by_name.get(item, (None, ""))[1]:
                detail = public_by_name[item][1] + " — " + detail
            chan.send("error", item=item, error=detail,
                      where=_student_frames(exc.__traceback__, student_files, student_file),
                      out=out.text(), secs=round(_monotonic() - t0, 4),
                      blocked=list(blocker.attempts), **_lines_taken(covered))
            continue
        sys.stdout, sys.stderr = real_out, real_err
        if work is not None:
            # commit first; the parent times the work from outside, then ends with "end"
            chan.send("commit", item=item, data=data)
            del data
            # (a timed case's work runs with the same stand-ins as the case itself)
            _serve_work(chan, requests, item, work, decode, encode, out)
            data = None
        if restore is not None:
            restore()
        chan.send("result", item=item, data=data, out=out.text(),
                  secs=round(_monotonic() - t0, 4), blocked=list(blocker.attempts),
                  **_lines_taken(covered))
    chan.send("done")
    # Stay alive until the parent kills the whole tree: exiting here would orphan anything
    # the submission left running before the parent could sweep it.
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
