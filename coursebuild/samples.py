"""The bundled sample class: realistic module submissions built from the release and solution.

``tito samples`` writes ``samples/class_NN_slug/<student>/`` folders, each with the student's
notebook and a Gradescope-style ``submission_metadata.json``. They are generated (and checked
in) so ``make demo`` and the tests grade real notebooks: the full solution, the untouched
release, a partial answer, a syntax error, an infinite loop, a hard exit, and a late
submission.
"""

from __future__ import annotations

import datetime as dt
import json
import textwrap
from dataclasses import dataclass
from pathlib import Path

from coursebuild.authoring import scan
from coursebuild.release import dump_notebook
from coursekit import paths
from coursekit.course import Course, Module
from coursekit.export import is_export_cell, read_cells, strip_solution_markers
from coursekit.markers import STUB, is_export_source, tag_lines
from coursekit.paths import solution_path


@dataclass(frozen=True)
class SampleStudent:
    folder: str
    name: str
    sid: str
    email: str
    kind: str
    hours_after_due: float
    note: str


# Students come from the sample term roster (samples/term/roster.csv) so the demo gradebook
# matches them on SIS user id.
STUDENTS = [
    SampleStudent("s1001_full", "Ada Lovelace", "S1001", "alovelace@example.edu", "full", -30,
                  "complete, correct solution"),
    SampleStudent("s1002_untouched", "Alan Turing", "S1002", "aturing@example.edu",
                  "untouched", -2, "submitted the release without changes"),
    SampleStudent("s1003_partial", "Grace Hopper", "S1003", "ghopper@example.edu", "partial",
                  -5, "matmul and reductions left unfinished"),
    SampleStudent("s1004_syntax", "Donald Knuth", "S1004", "dknuth@example.edu",
                  "syntax_error", -1, "a syntax error in the Tensor cell"),
    SampleStudent("s1005_loop", "Margaret Hamilton", "S1005", "mhamilton@example.edu",
                  "infinite_loop", -3, "an infinite loop in matmul()"),
    SampleStudent("s1006_exit", "Barbara Liskov", "S1006", "bliskov@example.edu", "hard_exit", -4,
                  "calls os._exit(0) while importing"),
    SampleStudent("s1007_late", "Edsger Dijkstra", "S1007", "edijkstra@example.edu", "late", 40,
                  "complete, submitted 40 hours late"),
]

@dataclass(frozen=True)
class Faults:
    """Which functions a module's faulty samples break (qualified names, as coursebuild.authoring)."""

    unfinished: tuple[str, ...]  # the partial answer leaves these as stubs
    syntax: str                  # its def line loses the colon
    loop: str                    # its solution starts with a loop that never ends


#: Module 01's sample class predates the generic rule; its choices are kept so the demo's
#: figures stay what the README shows.
CHOSEN = {"01_tensor": Faults(("_matmul", "_sum", "_mean", "_max"), "Tensor.numel", "_matmul")}


def faults(module: Module) -> Faults:
    """Every third solution function left unfinished (from the second), the first one with a
    syntax error, the second one looping."""
    if module.name in CHOSEN:
        return CHOSEN[module.name]
    names = [f.name for f in scan(solution_path(module))[0]]
    if not names:
        raise ValueError(f"{module.name}: no solution functions to build samples from")
    unfinished = tuple(names[1::3]) or (names[0],)
    return Faults(unfinished, names[0], names[min(1, len(names) - 1)])


def note(module: Module, kind: str) -> str:
    """What a sample of ``kind`` is, for this module."""
    f = faults(module)
    if kind == "partial":
        shown = ", ".join(f.unfinished[:4]) + (" and more" if len(f.unfinished) > 4 else "")
        return f"left unfinished: {shown}"
    if kind == "syntax_error":
        return f"a syntax error: the def line of {f.syntax} lost its colon"
    if kind == "infinite_loop":
        return f"an infinite loop in {f.loop}()"
    return next(s.note for s in STUDENTS if s.kind == kind)


def _edited_solution(module: Module, kind: str) -> list[str]:
    """The solution module's lines with the sample's fault applied (markers still in)."""
    lines = solution_path(module).read_text(encoding="utf-8").splitlines()
    spans = {f.name: f for f in scan(solution_path(module))[0]}
    f = faults(module)
    tags = tag_lines(lines).lines
    if kind == "partial":
        drop: set[int] = set()
        for name in f.unfinished:
            fn = spans[name]
            for t in tags[fn.first_line - 1:fn.last_line]:
                if t.kind in ("begin", "end", "solution") or t.depth:
                    drop.add(t.number)  # what the student has not written yet
                elif t.kind == "stub":
                    lines[t.number - 1] = STUB.sub("", t.text)
        lines = [ln for n, ln in enumerate(lines, 1) if n not in drop]
    elif kind == "syntax_error":
        fn = spans[f.syntax]
        row, col = _signature_colon(lines[fn.first_line - 1:fn.last_line])
        n = fn.first_line + row - 1
        lines[n - 1] = lines[n - 1][:col] + lines[n - 1][col + 1:]
    elif kind == "infinite_loop":
        fn = spans[f.loop]
        n = next(t.number for t in tags[fn.first_line - 1:fn.last_line] if t.kind == "begin")
        indent = lines[n - 1][: len(lines[n - 1]) - len(lines[n - 1].lstrip())]
        lines[n:n] = [f"{indent}while True:  # oops: this loop never ends",
                      f"{indent}    pass"]
    return lines


def _signature_colon(lines: list[str]) -> tuple[int, int]:
    """(row, column) of the colon that ends the ``def`` statement starting ``lines``."""
    import io
    import tokenize

    depth = 0
    indent = len(lines[0]) - len(lines[0].lstrip())
    source = textwrap.dedent("\n".join(lines))
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        elif tok.type == tokenize.OP and tok.string == ":" and depth == 0:
            return tok.start[0], tok.start[1] + indent
    raise ValueError("no colon ends this def")


def solution_export_sources(module: Module, kind: str = "full") -> list[str]:
    """The solution's export cells as a student of ``kind`` would write them (no markers)."""
    import tempfile

    if kind in ("partial", "syntax_error", "infinite_loop"):
        with tempfile.TemporaryDirectory(prefix="tt-samples-") as tmp:
            edited = Path(tmp) / solution_path(module).name
            edited.write_text("\n".join(_edited_solution(module, kind)) + "\n",
                              encoding="utf-8")
            cells = read_cells(edited)
    else:
        cells = read_cells(solution_path(module))
    return ["\n".join(strip_solution_markers(c.source.splitlines()))
            for c in cells if is_export_cell(c)]


def notebook_with_exports(module: Module, sources: list[str]) -> dict:
    nb = json.loads((paths.RELEASE / module.name / f"{module.name}.ipynb").read_text("utf-8"))
    it = iter(sources)
    for cell in nb["cells"]:
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "code" and is_export_source(src):
            cell["source"] = next(it)
    return nb


def build_notebook(module: Module, kind: str) -> dict:
    """A sample student notebook of the given kind for ``module``."""
    if kind == "untouched":
        return json.loads((paths.RELEASE / module.name / f"{module.name}.ipynb").read_text())
    if kind in ("full", "late"):
        return notebook_with_exports(module, solution_export_sources(module))
    if kind in ("partial", "syntax_error", "infinite_loop"):
        return notebook_with_exports(module, solution_export_sources(module, kind))
    if kind == "hard_exit":
        sources = solution_export_sources(module)
        sources[-1] = sources[-1] + "\n\nimport os\nos._exit(0)\n"
        return notebook_with_exports(module, sources)
    raise ValueError(f"unknown sample kind {kind!r}")


def earlier_full_notebooks(course: Course, module: Module) -> dict[str, str]:
    """``{file name: notebook JSON}`` of the complete notebooks of every built module before
    ``module``: what a finished student uploads with it while those modules are still open
    (graded on these copies then, on the reference once closed)."""
    from coursebuild.release import available_modules

    return {f"{m.name}.ipynb": dump_notebook(build_notebook(m, "full"))
            for m in available_modules(course) if m.number < module.number}


def metadata(course: Course, module: Module, student: SampleStudent, index: int) -> dict:
    due = course.local_time(module.due)
    created = due + dt.timedelta(hours=student.hours_after_due)
    return {
        "id": 900000 + index,
        "created_at": created.isoformat(),
        "assignment": {
            "id": 5000 + module.number,
            "title": f"Module {module.number:02d} · {module.title}",
            "release_date": course.local_time(module.release).isoformat(),
            "due_date": due.isoformat(),
            "late_due_date": (due + dt.timedelta(days=5)).isoformat(),
            "total_points": str(module.points),
            "group_submission": False,
        },
        "submission_method": "upload",
        "users": [{"email": student.email, "id": 70000 + index, "name": student.name,
                   "sid": student.sid}],
        "previous_submissions": [],
    }


def write_samples(course: Course, module: Module, out_root: Path | None = None) -> list[Path]:
    """Write ``samples/class_NN_slug/<student>/`` for every sample student; returns folders."""
    root = (out_root or paths.SAMPLES) / f"class_{module.name}"
    folders = []
    for i, s in enumerate(STUDENTS):
        folder = root / s.folder
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{module.name}.ipynb").write_text(dump_notebook(build_notebook(module, s.kind)),
                                                      encoding="utf-8")
        (folder / "submission_metadata.json").write_text(
            json.dumps(metadata(course, module, s, i), indent=1) + "\n", encoding="utf-8")
        folders.append(folder)
    readme = ["# Sample class for " + module.name, "",
              "Generated by `tito samples`; graded by `make demo`.", "",
              "| folder | what it is |", "|---|---|"]
    readme += [f"| `{s.folder}` | {note(module, s.kind)} |" for s in STUDENTS]
    (root / "README.md").write_text("\n".join(readme) + "\n", encoding="utf-8")
    return folders
