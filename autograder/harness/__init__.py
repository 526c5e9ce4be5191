"""The grading harness: student code runs in a sandboxed child, the parent decides the score.

Its stages, bottom to top, and the pipeline that calls them in order: docs/architecture.md,
"The harness". Public entry points:

* :func:`autograder.harness.core.grade` — grade one submission, always write results.json;
* :func:`autograder.harness.goldens.build_goldens` — expected values from the reference;
* :class:`autograder.harness.limits.Limits` — time, memory and output limits;
* :mod:`autograder.harness.mutation` — mutation testing of the hidden suites.
"""

from __future__ import annotations

from typing import Any

__all__ = ["grade", "build_goldens", "Limits", "GraderError"]


def __getattr__(name: str) -> Any:
    if name in ("grade", "GraderError"):
        from autograder.harness import core  # noqa: PLC0415 - keeps the sandboxed child light

        return getattr(core, name)
    if name == "build_goldens":
        from autograder.harness.goldens import build_goldens  # noqa: PLC0415 - as above

        return build_goldens
    if name == "Limits":
        from autograder.harness.limits import Limits  # noqa: PLC0415 - as above

        return Limits
    raise AttributeError(name)
