"""The sandboxed child: imports the package under test and runs probes, nothing else.

Started by :mod:`autograder.harness.supervisor` as ``python -I -B child.py`` with a JSON job on
stdin and a result pipe on an inherited file descriptor. Before any submission code runs it
loads everything trusted it needs (NumPy, the suite, the milestone probes, the public tests),
hides secrets, sets hard rlimits and drops to the run's uid. Then it imports the package and
streams one message per item over the pipe::

    {"n": NONCE, "seq": 3, "type": "result", "item": "case:add", "data": {...}, "out": "..."}

Message types: ``ready`` (package imported; integrity facts), ``start`` (an item begins),
``result`` (plain data, see :mod:`autograder.harness.wire`), ``error`` (the item raised),
``public`` (a public test's verdict), ``fatal`` (the package could not be imported), ``done``.
The parent trusts none of it: it validates the nonce, the sequence and the item names,
decodes plain data only, and decides every score itself.
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
import time
import traceback
import types
from typing import Any, cast

_print = builtins.print
_len, _isinstance, _repr, _str, _type = len, isinstance, repr, str, type
_monotonic = time.monotonic
_os_write = os.write
_dumps = json.dumps

FORBIDDEN = ("torch", "jax", "jaxlib", "tensorflow", "tinytorch_ref", "autograder", "otter")


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


def _student_frames(tb: Any, student_files: set[str]) -> str:
    """Traceback lines from the student's own file only (hidden suite frames are elided)."""
    lines = []
    for fs in traceback.extract_tb(tb):
        if fs.filename in student_files:
            lines.append(f"  {os.path.basename(fs.filename)}, line {fs.lineno}, in {fs.name}"
                         + (f": {fs.line}" if fs.line else ""))
    return "\n".join(lines[-5:])


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


def main() -> None:  # noqa: C901 - one linear script, read top to bottom
    job = json.loads(sys.stdin.buffer.read().decode())
    sys.stdin.close()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - input() sees EOF
    chan = _Channel(int(job["result_fd"]), job["nonce"])
    sys.path[:0] = [job["harness_root"]]

    # ---- trusted imports, before any secret is hidden or any student code runs
    import numpy as np  # noqa: F401 - loaded while every library path is still reachable

    from autograder.harness import wire
    from autograder.harness.isolation import (
        NetBlock,
        become_subreaper,
        drop_privileges,
        hide_paths,
        no_new_privs,
        set_rlimits,
    )
    from autograder.suite import run_case

    spec = importlib.util.spec_from_file_location("hidden_suite", job["suite_file"])
    suite_mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(suite_mod)  # type: ignore[union-attr]
    cases = {c.name: c for c in suite_mod.suite.cases}
    milestone_probes: dict[str, Any] = {}
    for m in job.get("milestones", []):
        mspec = importlib.util.spec_from_file_location(f"milestone_{m['id']}", m["file"])
        mmod = importlib.util.module_from_spec(mspec)  # type: ignore[arg-type]
        mspec.loader.exec_module(mmod)  # type: ignore[union-attr]
        milestone_probes[m["id"]] = mmod.probe
    public = _load_public_tests(job.get("public_tests", []))
    encode = wire.encode
    cap = int(job["max_output_chars"])

    # ---- sandbox
    sb = job.get("sandbox") or {}
    if "hide" in sb:  # also with nothing to hide: it re-exposes an unreachable interpreter
        stash = sb.get("stash") or f"/tmp/.ttstash-{job['nonce'][:12]}"
        os.makedirs(stash, mode=0o700, exist_ok=True)
        hide_paths(sb["hide"], sb.get("keep", []), stash)
    if sb.get("rlimits"):
        set_rlimits(**sb["rlimits"])
    if sb.get("uid") is not None:
        drop_privileges(int(sb["uid"]))
    elif sb:
        no_new_privs()
    if sb:
        become_subreaper()
    if sb.get("block_network"):
        NetBlock().install()
    os.chdir(job["cwd"])
    blocker = _ImportBlocker(tuple(job.get("forbidden", FORBIDDEN)))
    if job.get("block_imports", True):
        sys.meta_path.insert(0, blocker)
        for name in list(sys.modules):  # the harness keeps direct references to what it needs
            if name.split(".")[0] in ("autograder", "hidden_suite") or name.startswith(
                    "milestone_"):
                del sys.modules[name]

    # ---- import the package under test (first student code)
    sys.path.insert(0, job["package_parent"])
    slug = job["slug"]
    student_file = job.get("student_file", "")
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
                  where=_student_frames(exc.__traceback__, {student_file}),
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
              numpy=np.__version__)

    # ---- items
    env = dict(vars(mod))
    env.setdefault("np", np)
    env.setdefault("numpy", np)
    public_by_name = {name: (tc, fail) for name, tc, fail in public}
    for item in job["items"][int(job.get("start", 0)):]:
        chan.send("start", item=item)
        out = _CappedText(cap)
        sys.stdout = sys.stderr = out
        t0 = _monotonic()
        kind, _, name = item.partition(":")
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
                value = run_case(cases[name], pkg)
            elif kind == "milestone":
                mid, _, seed = name.partition("@")
                value = milestone_probes[mid](pkg, int(seed))
            else:
                raise KeyError(item)
            data = encode(value)
        except BaseException as exc:  # noqa: BLE001 - report, never die
            sys.stdout, sys.stderr = real_out, real_err
            detail = _describe(exc)
            if kind == "public" and public_by_name.get(item, (None, ""))[1]:
                detail = public_by_name[item][1] + " — " + detail
            chan.send("error", item=item, error=detail,
                      where=_student_frames(exc.__traceback__, {student_file}),
                      out=out.text(), secs=round(_monotonic() - t0, 4),
                      blocked=list(blocker.attempts))
            continue
        sys.stdout, sys.stderr = real_out, real_err
        chan.send("result", item=item, data=data, out=out.text(),
                  secs=round(_monotonic() - t0, 4), blocked=list(blocker.attempts))
    chan.send("done")
    # Stay alive until the parent kills the whole tree: exiting here would orphan anything
    # the submission left running before the parent could sweep it.
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
