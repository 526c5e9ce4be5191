"""Entry point of ``run_autograder`` inside the Gradescope container (or a simulated one).

Reads the zip's course snapshot, grades ``<root>/submission`` with the zip's goldens, suite,
reference modules and public tests, and writes ``<root>/results/results.json``. Any failure
still leaves a valid results.json. Standard library + NumPy only.

Which earlier modules are graded on the course's reference is decided now, at grading time,
from the close times in ``course.json`` and this machine's clock (Gradescope's container).
``--now`` replaces the clock for a simulated run (``run_autograder --now 2027-02-22T12:00Z``);
Gradescope never passes it, and nothing the student uploads can set it: the submission's own
``submission_metadata.json`` time is recorded, never used for the decision.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time
import traceback
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2]


def _fallback(out: Path, why: str, started: float) -> None:
    """A course-side failure, written atomically; a provisional results.json already there
    stays if even this cannot be written (a full disk)."""
    msg = ("The autograder could not grade this submission because of a problem on the "
           "course's side, not yours. Please tell course staff; your submission is kept.")
    doc = {"score": 0.0, "execution_time": round(time.monotonic() - started, 3), "output": msg,
           "visibility": "visible", "stdout_visibility": "hidden",
           "tests": [{"name": "autograder", "score": 0.0, "max_score": 0.0,
                      "status": "failed", "visibility": "visible", "output": msg,
                      "tags": ["grader-error"]}],
           "extra_data": {"grader_error": why[:2000]}}
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".fallback-{os.getpid()}.json")
        tmp.write_text(json.dumps(doc, indent=1), encoding="utf-8")
        os.replace(tmp, out)
    except OSError:
        pass


def _parse_now(text: str | None) -> dt.datetime | None:
    """``--now``: an ISO 8601 time with its offset (``Z`` for UTC), or None for the clock."""
    if text is None:
        return None
    when = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    if when.tzinfo is None:
        raise ValueError(f"--now {text!r}: give the UTC offset (e.g. 2027-02-22T12:00+00:00)")
    return when


def main(argv: list[str] | None = None) -> int:
    """Grade the submission under ``--root``; returns 0 whenever results.json was written."""
    started = time.monotonic()
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--root", default=os.environ.get("AUTOGRADER_ROOT", "/autograder"))
    ap.add_argument("--now", default=None, metavar="ISO-TIME",
                    help="grade as of this time (with its UTC offset) instead of the clock: "
                         "a simulation of another day of the term")
    ns = ap.parse_args(argv)
    root = Path(ns.root).absolute()
    out = root / "results" / "results.json"
    try:
        sys.path.insert(0, str(SOURCE))
        from autograder.harness.core import grade  # noqa: PLC0415 - after sys.path is set

        now = _parse_now(ns.now)

        snap = json.loads((SOURCE / "course.json").read_text(encoding="utf-8"))
        name = f"{int(snap['module']['number']):02d}_{snap['module']['slug']}"
        metadata = root / "submission_metadata.json"
        results = grade(
            module=snap, submission=root / "submission",
            suite_path=SOURCE / "autograder" / "suites" / name / "suite.py",
            reference=SOURCE / "reference", public_tests=SOURCE / "public_tests", out=out,
            expected=SOURCE / "goldens.json", stubs=SOURCE / "stubs",
            metadata=metadata if metadata.is_file() else None,
            milestone_dirs=[SOURCE / "autograder" / "milestones" / "providers"],
            hide=[root, SOURCE], data_dir=SOURCE / "data", now=now)
        print(f"{name}: {results['score']:g} points -> {out}")
    except BaseException as exc:  # noqa: BLE001 - the last line of defence
        traceback.print_exc()
        _fallback(out, f"{type(exc).__name__}: {exc}", started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
