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
                     metadata: Path | None = None) -> dict[str, Any]:
    """Grade one notebook with the repository's suite and reference; writes ``out``."""
    from autograder.harness.core import grade_module

    return grade_module(course=course, module=module, submission=Path(submission),
                        out=Path(out), metadata=metadata)


def build_autograder(*, course: Course, module: Module, out_zip: Path) -> Path:
    """Build the Gradescope zip for ``module``; returns its path."""
    from autograder.gradescope import build_zip

    out_zip.parent.mkdir(parents=True, exist_ok=True)
    result = build_zip(course=course, module=module, out_zip=out_zip)
    return Path(result) if result else out_zip
