"""How a submission's path reads through the harness: one grading, traced file by file.

``python tests/harness_walk.py [--stages] [NN]`` grades module NN's reference (default 01: the full
notebook ``tito samples`` builds, graded as ``tito grade`` does: the reference run for the
submission's variant, the sandboxed run, the decision, results.json) with ``sys.setprofile``
on the grading thread, and prints the walk a maintainer takes who follows that path in the
code: each function of ``autograder/harness/`` is read the first time it runs, and the
reader goes back to its caller's file when it returns. A call of a function already read is
not followed, unless it runs a function for the first time: then the reader goes down to it
through the callers it had not followed. Code outside the harness (the suite API, NumPy,
the standard library) is transparent: a harness function it calls back (the supervisor's
``on_result``) is entered from the harness frame below it. Module-level code run by an
import is not read.

The figures (docs/architecture.md, "The harness"): *stays*, the maximal runs of the walk in
one file; *files*, how many distinct files it visits; *returns*, the stays in a file the walk
had already left (stays minus files). ``--stages`` leaves the shared leaf helpers out (wire,
clock, limits, variants, lifeline, isolation, home, export_worker: read like the standard library),
so the walk is the one between the stages. Only the grading parent is traced: the children
run in processes of their own.
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

HARNESS = Path(__file__).resolve().parents[1] / "autograder" / "harness"


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


def trace(run: Callable[[], Any], *, root: Path = HARNESS,
          transparent: frozenset[str] = frozenset()) -> Walk:
    """Run ``run()`` on this thread under the profiler and return the reader's walk; the
    files named in ``transparent`` (``wire.py``...) count as code outside the harness."""
    walk = Walk()
    prefix = str(root) + "/"
    seen: set[CodeType] = set()
    # one entry per live frame on this thread: [frame, its harness file or "", followed]
    stack: list[list[Any]] = []

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            code = frame.f_code
            name = code.co_filename
            rel = name[len(prefix):] if name.startswith(prefix) else ""
            if rel in transparent:
                rel = ""
            new = bool(rel) and code not in seen and code.co_name != "<module>"
            if new:
                seen.add(code)
                # the reader goes down to here through the functions already read that
                # made the call (not followed until now) from the last one it followed
                i = len(stack)
                while i > 0 and not stack[i - 1][2]:
                    i -= 1
                for entry in stack[i:]:
                    if entry[1]:
                        entry[2] = True
                        walk.visit(entry[1])
                walk.visit(rel)
            stack.append([frame, rel, new])
        elif event == "return":
            while stack and stack[-1][0] is not frame:
                stack.pop()  # frames left by an exception the profiler saw no return of
            if not stack:
                return
            _, _, followed = stack.pop()
            if followed:
                back = next((e[1] for e in reversed(stack) if e[2]), "")
                if back:
                    walk.visit(back)

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return walk


def grade_reference(number: str = "01", *, transparent: frozenset[str] = frozenset()) -> Walk:
    """Trace one grading of module ``number``'s reference notebook (``tito grade``'s path)."""
    from autograder.harness import core
    from coursebuild.release import dump_notebook
    from coursebuild.samples import build_notebook
    from coursekit.course import load_course

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

        walk = trace(run, transparent=transparent)
    if results.get("score") != module.points:
        raise SystemExit(f"the reference scored {results.get('score')} of {module.points}: "
                         f"{results.get('output')}")
    return walk


def helpers() -> frozenset[str]:
    """The shared leaf helpers at the bottom of the harness (the first stage of
    tests/autograder/test_harness_layers.py): ``--stages`` reads them like the standard
    library."""
    from tests.autograder.test_harness_layers import STAGES  # noqa: PLC0415 - the one list

    return frozenset(f"{m}.py" for m in dict(STAGES)["helpers"])


def main(argv: list[str]) -> None:
    stages = "--stages" in argv
    args = [a for a in argv if a != "--stages"]
    walk = grade_reference(args[0] if args else "01",
                           transparent=helpers() if stages else frozenset())
    print(("stage modules only (the leaf helpers read as library code): " if stages
           else "every harness file: ") + walk.summary())


if __name__ == "__main__":
    sys.path.insert(0, str(HARNESS.parents[1]))  # the repository: tests.autograder's stage list
    main(sys.argv[1:])
