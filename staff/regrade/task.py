"""One regrade task: a submission as plain data in, its results.json as plain data out.

``tito regrade`` grades every submission through :func:`grade_payload`, in its own threads
(``--jobs N``) or on a Dask worker (``--scheduler``), so both paths grade the same way. The
payload holds only what one submission's grading needs:

* ``module``: the course facts for the module (:func:`autograder.harness.limits.module_snapshot`:
  points, limits, milestones), so a worker grades with the parent's course.yml;
* ``grader``: the fingerprint of the grading files (harness, suite, reference, public tests,
  milestone providers): a worker whose repository differs refuses the task (a course-side
  failure, never a score);
* ``files``: the submission's files (relative path -> bytes; regular files only, symlinks were
  never followed when they were read);
* ``metadata``: its ``submission_metadata.json`` (submitters' names, SIDs and emails);
* ``lanes``: children to run its tests in side by side (2-3 for a submission whose old results
  timed out, see :mod:`autograder.harness.lanes`);
* ``now`` and ``open_earlier``: the regrade's decision time (one for the whole run, so a
  worker's clock never decides) and the earlier modules still open then.

The worker writes them into a private (0700) staging folder, grades it with the harness
(sandboxed child, trusted parent) and returns ``{"results": {...}}``: the results.json as JSON
data. Nothing else of the export (no classmate's files, no other record of the metadata) is on
the worker or in the sandbox.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import os
import shutil
import socket
import tempfile
import time
from pathlib import Path, PurePosixPath
from typing import Any

PAYLOAD_FORMAT = 1
MAX_SUBMISSION_BYTES = 64 * 1024 * 1024  # a notebook export is far smaller; more is refused
MAX_FILES = 200


# ----------------------------------------------------------------------------- fingerprints
def _hash_tree(digest: Any, root: Path, base: Path, suffixes: tuple[str, ...] = (),
               skip: tuple[Path, ...] = ()) -> None:
    if root.is_file():
        files = [root]
    elif root.is_dir():
        files = sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    else:
        files = []
    for f in files:
        if (suffixes and f.suffix not in suffixes) or f in skip:
            continue
        digest.update(f.relative_to(base).as_posix().encode())
        digest.update(b"\0")
        digest.update(hashlib.sha256(f.read_bytes()).digest())


@functools.lru_cache(maxsize=64)
def _files_fingerprint(module_name: str) -> str:
    from tito import paths

    digest = hashlib.sha256()
    base = paths.REPO_ROOT
    for root, suffixes in (
        (paths.AUTOGRADER / "harness", (".py",)),
        (paths.AUTOGRADER / "suite.py", ()),
        (paths.AUTOGRADER / "milestones", ()),
        (paths.SUITES / module_name, ()),
        (paths.REFERENCE, (".py",)),
        (paths.RELEASE / module_name / "tests", ()),
        (paths.RELEASE / "tinytorch", (".py",)),
        (base / "tinytorch_data", ()),
        (base / "tinytorch_milestones", (".py",)),
        (base / "tito" / "export.py", ()),
    ):
        # the buggy catalogue beside the suite is an authoring asset, not a grading file
        _hash_tree(digest, root, base, suffixes, skip=(paths.bugs_catalogue(module_name),))
    return digest.hexdigest()


def grader_fingerprint(module_snapshot: dict[str, Any]) -> str:
    """What decides a grade besides the submission: grading files + the course's facts."""
    mod = module_snapshot["module"]
    name = f"{int(mod['number']):02d}_{mod['slug']}"
    digest = hashlib.sha256(_files_fingerprint(name).encode())
    digest.update(json.dumps(module_snapshot, sort_keys=True).encode())
    return digest.hexdigest()


def payload_fingerprint(payload: dict[str, Any]) -> str:
    """The task's identity: grader, submission files and metadata (a finished task with the
    same fingerprint need not be graded again)."""
    files = {k: hashlib.sha256(v).hexdigest() for k, v in sorted(payload["files"].items())}
    doc = {"format": payload["format"], "grader": payload["grader"], "files": files,
           "metadata": payload["metadata"], "lanes": payload.get("lanes", 1),
           "open_earlier": payload.get("open_earlier")}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


# ----------------------------------------------------------------------------- reading
def read_submission(folder: Path) -> tuple[dict[str, bytes], list[str]]:
    """A submission folder's regular files (relative path -> bytes) and notes for the TA.

    Symbolic links (files or folders) are never followed: each is left out with a note. More
    than :data:`MAX_FILES` files or :data:`MAX_SUBMISSION_BYTES` bytes is refused with a note
    (graded as an empty submission).
    """
    files: dict[str, bytes] = {}
    notes: list[str] = []
    if not folder.is_dir() or folder.is_symlink():
        return files, notes
    total = 0
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        here = Path(dirpath)
        for d in list(dirnames):
            if (here / d).is_symlink():
                notes.append(f"{(here / d).relative_to(folder).as_posix()}/ is a symbolic link: "
                             "not followed")
                dirnames.remove(d)
        dirnames.sort()
        for name in sorted(filenames):
            path = here / name
            rel = path.relative_to(folder).as_posix()
            if path.is_symlink():
                notes.append(f"{rel} is a symbolic link: not followed")
                continue
            if not path.is_file():
                continue
            size = path.stat().st_size
            total += size
            if total > MAX_SUBMISSION_BYTES or len(files) >= MAX_FILES:
                return {}, [f"the submission holds more than {MAX_FILES} files or "
                            f"{MAX_SUBMISSION_BYTES // 1024**2} MB: not graded as uploaded"]
            files[rel] = path.read_bytes()
    return files, notes


def _safe_rel(rel: str) -> PurePosixPath:
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts or not p.parts:
        raise ValueError(f"unsafe path in the payload: {rel!r}")
    return p


# ----------------------------------------------------------------------------- grading
def grade_payload(payload: dict[str, Any], *, hide: tuple[str, ...] = ()) -> dict[str, Any]:
    """Grade one submission from plain data; never raises.

    Returns:
        ``{"results": dict, "seconds": float, "worker": str}``, or ``{"error": str, ...}``
        when the course side failed (no score: the caller must not record one).
    """
    started = time.monotonic()
    where = f"{socket.gethostname()}:{os.getpid()}"
    try:
        if payload.get("format") != PAYLOAD_FORMAT:
            return {"error": f"task format {payload.get('format')!r} is not "
                             f"{PAYLOAD_FORMAT} (update the worker)", "worker": where}
        mine = grader_fingerprint(payload["module"])
        if mine != payload["grader"]:
            return {"error": "this worker's grading files or course facts differ from the "
                             "regrade's (run workers from the same repository commit and "
                             "course.yml)", "worker": where}
        stage = Path(tempfile.mkdtemp(prefix="tt-regrade-task-"))  # 0700, this task only
        try:
            sub = stage / "submission"
            sub.mkdir(mode=0o700)
            for rel, data in payload["files"].items():
                target = sub / _safe_rel(rel)
                target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                target.write_bytes(data)
            meta = stage / "submission_metadata.json"
            meta.write_text(json.dumps(payload["metadata"], indent=1) + "\n", encoding="utf-8")
            from autograder.harness.core import grade_module

            now = payload.get("now")
            results = grade_module(course=None, module=payload["module"], submission=sub,
                                   out=stage / "out" / "results.json", metadata=meta,
                                   hide=[Path(h) for h in hide],
                                   lanes=int(payload.get("lanes", 1)), reference_bank=True,
                                   now=None if now is None else dt.datetime.fromisoformat(now))
        finally:
            shutil.rmtree(stage, ignore_errors=True)
    except Exception as exc:  # noqa: BLE001 - a task never raises: the parent records why
        return {"error": f"grading failed: {type(exc).__name__}: {exc}", "worker": where,
                "seconds": round(time.monotonic() - started, 3)}
    return {"results": results, "seconds": round(time.monotonic() - started, 3),
            "worker": where}


def course_side_failure(results: dict[str, Any]) -> str | None:
    """Why ``results`` is not a score the student earned, if the course side failed.

    The harness marks its own failures (``extra_data.grader_error``: a crash, a full disk, a
    misconfigured suite) and the tests it could not score for a course-side reason
    (``extra_data.pending``: the reference failed a case, a milestone has no provider, its
    test data is missing; each such test is tagged ``pending``). Such results are never
    recorded: the regrade reports the submission as not graded and ``--apply`` keeps its old
    score. Results of an older harness (no ``pending`` list) count any ``grader_errors``.
    """
    extra = results.get("extra_data")
    if not isinstance(extra, dict):
        return "results.json has no extra_data (not written by this autograder)"
    if extra.get("grader_error"):
        return f"autograder error: {str(extra['grader_error']).splitlines()[0][:300]}"
    pending = extra.get("pending")
    if isinstance(pending, list) and pending:
        first = pending[0] if isinstance(pending[0], dict) else {}
        return (f"pending (course side): {len(pending)} test(s) not scored; "
                f"{str(first.get('why') or first.get('test') or '')[:300]}")
    errors = extra.get("grader_errors")
    if "pending" not in extra and isinstance(errors, list) and errors:
        return f"autograder error: {str(errors[0])[:300]}"
    tests = results.get("tests")
    if not isinstance(tests, list) or not tests:
        return "results.json has no tests"
    return None
