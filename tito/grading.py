"""tito's grading verbs, forwarded to the harness and the Gradescope packager.

The CLI never imports student or reference code itself: grading goes through
``autograder.harness`` (sandboxed child, trusted parent), packaging through
``autograder.gradescope``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tito.course import Course, Module


def grade_submission(*, course: Course, module: Module, submission: Path, out: Path,
                     metadata: Path | None = None, extensions: Path | None = None
                     ) -> dict[str, Any]:
    """Grade one notebook (or a folder with it and the student's open earlier modules) with
    the repository's suite and reference; writes ``out``."""
    from autograder.harness.core import grade_module

    return grade_module(course=course, module=module, submission=Path(submission),
                        out=Path(out), metadata=metadata, extensions=extensions)


def write_config_failure(out: Path, reason: str) -> None:
    """A valid Gradescope results.json for a run that could not start (bad course setup)."""
    import json

    results = {
        "score": 0.0, "execution_time": 0.0, "visibility": "visible",
        "stdout_visibility": "hidden",
        "output": ("The autograder is misconfigured, so your submission was not graded; it is "
                   "kept and will be graded once course staff fix it. (" + reason + ")"),
        "tests": [{"name": "grader configuration", "score": 0.0, "max_score": 0.0,
                   "status": "failed", "visibility": "visible", "output": reason,
                   "tags": ["grader_error"]}],
        "extra_data": {"grader_error": reason},
    }
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    tmp.replace(out)


def build_autograder(*, course: Course, module: Module, out_zip: Path,
                     extensions: Path | None = None, jobs: int = 1) -> Path:
    """Build the Gradescope zip for ``module``; returns its path. ``jobs``: reference
    children computing the goldens bank at once."""
    from autograder.gradescope import build_zip

    out_zip.parent.mkdir(parents=True, exist_ok=True)
    result = build_zip(course=course, module=module, out_zip=out_zip, extensions=extensions,
                       jobs=jobs)
    return Path(result) if result else out_zip
