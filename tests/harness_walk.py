"""How a submission's path reads through the harness: one grading, traced file by file.

``python tests/harness_walk.py [NN]`` grades module NN's reference (default 01: the full
notebook ``tito samples`` builds, graded as ``tito grade`` does: the reference run for the
submission's variant, the sandboxed run, the decision, results.json) with ``sys.setprofile``
on the grading thread, and prints the walk a maintainer takes who follows that path in the
code: each function of ``autograder/harness/`` read the first time it is called (a second
call of a function already read is not followed again, nor anything below it), back to the
caller's file when it returns. Code outside the harness (the suite API, NumPy, the standard
library) is transparent: a harness function it calls back (the supervisor's ``on_result``)
is entered from the harness frame below it. Module-level code run by an import is not read.

The figures (docs/architecture.md, "The harness"): *stays*, the maximal runs of the walk in
one file; *files*, how many distinct files it visits; *returns*, the stays in a file the walk
had already left (stays minus files). Only the grading parent is traced: the children run
in processes of their own.
"""

from __future__ import annotations

import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

HARNESS = Path(__file__).resolve().parents[1] / "autograder" / "harness"
SKIP = "\0"  # the reader is inside a function already read: nothing here is followed


@dataclass
class Walk:
    """The files a reader visits, in order, one entry per stay."""

    stays: list[str] = field(default_factory=list)

    def visit(self, name: str) -> None:
        if not self.stays or self.stays[-1] != name:
            self.stays.append(name)

    @property
    def files(self) -> int:
        return len(set(self.stays))

    @property
    def returns(self) -> int:
        return len(self.stays) - self.files

    def entered(self) -> Counter[str]:
        return Counter(self.stays)

    def summary(self) -> str:
        per = ", ".join(f"{f} {n}" for f, n in self.entered().most_common())
        return (f"{self.files} files in {len(self.stays)} stays, {self.returns} returns to a "
                f"file already left\nstays per file: {per}\nwalk: {' > '.join(self.stays)}")


def trace(run: Callable[[], Any], *, root: Path = HARNESS) -> Walk:
    """Run ``run()`` on this thread under the profiler and return the reader's walk."""
    walk = Walk()
    prefix = str(root) + "/"
    seen: set[CodeType] = set()
    # one entry per live frame on this thread: the harness file it keeps the reader in (the
    # nearest followed harness frame at or below it; "" below none), or SKIP inside a repeat
    stack: list[tuple[FrameType, str]] = []
    me = threading.get_ident()

    def where() -> str:
        return stack[-1][1] if stack else ""

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            here = where()
            code = frame.f_code
            name = code.co_filename
            if here == SKIP or not name.startswith(prefix):
                stack.append((frame, here))
                return
            if code in seen or code.co_name == "<module>":
                stack.append((frame, SKIP))  # read already (or an import): not followed
                return
            seen.add(code)
            rel = name[len(prefix):]
            stack.append((frame, rel))
            walk.visit(rel)
        elif event == "return":
            while stack and stack[-1][0] is not frame:
                stack.pop()  # frames left by an exception the profiler saw no return of
            if stack:
                stack.pop()
            here = where()
            if here and here != SKIP:
                walk.visit(here)

    assert threading.get_ident() == me
    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return walk


def grade_reference(number: str = "01") -> Walk:
    """Trace one grading of module ``number``'s reference notebook (``tito grade``'s path)."""
    from autograder.harness import core
    from tito.course import load_course
    from tito.release import dump_notebook
    from tito.samples import build_notebook

    course = load_course()
    module = course.module(number)
    with tempfile.TemporaryDirectory(prefix="tt-walk-") as tmp:
        sub = Path(tmp) / "submission"
        sub.mkdir()
        (sub / f"{module.name}.ipynb").write_text(dump_notebook(build_notebook(module, "full")))
        out = Path(tmp) / "out" / "results.json"
        results: dict[str, Any] = {}

        def run() -> None:
            results.update(core.grade_module(course=course, module=module, submission=sub,
                                             out=out))

        walk = trace(run)
    if results.get("score") != module.points:
        raise SystemExit(f"the reference scored {results.get('score')} of {module.points}: "
                         f"{results.get('output')}")
    return walk


if __name__ == "__main__":
    print(grade_reference(sys.argv[1] if len(sys.argv) > 1 else "01").summary())
