"""The bundled sample class: realistic module submissions built from the release and solution.

``tito samples`` writes ``samples/class_NN_slug/<student>/`` folders, each with the student's
notebook and a Gradescope-style ``submission_metadata.json``. They are generated (and checked
in) so ``make demo`` and the tests grade real notebooks: the full solution, the untouched
release, a partial answer, a syntax error, an infinite loop, a hard exit, and a late
submission.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import re
from dataclasses import dataclass
from pathlib import Path

from tito import paths
from tito.course import Course, Module
from tito.export import is_export_cell, read_cells, strip_solution_markers
from tito.release import dump_notebook, solution_path

_DEF = re.compile(r"^\s*def (\w+)\(")
_BEGIN = re.compile(r"^\s*# BEGIN SOLUTION")
_END = re.compile(r"^\s*# END SOLUTION")


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

PARTIAL_UNFINISHED = {"matmul", "sum", "mean", "max"}


def _solution_export_sources(module: Module, unfinished: set[str] | None = None) -> list[str]:
    """The solution's export cells as a student would write them (markers removed).

    Args:
        unfinished: functions whose solution is replaced by the stub (a partial answer).
    """
    out = []
    for cell in read_cells(solution_path(module)):
        if not is_export_cell(cell):
            continue
        lines = cell.source.splitlines()
        if unfinished:
            kept, fn, skip = [], None, False
            for ln in lines:
                m = _DEF.match(ln)
                if m:
                    fn = m.group(1)
                if _BEGIN.match(ln):
                    skip = fn in unfinished
                    kept.append(ln)
                    continue
                if _END.match(ln):
                    skip = False
                    kept.append(ln)
                    continue
                if skip:
                    continue
                if fn not in unfinished and ln.rstrip().endswith("# STUB"):
                    continue
                kept.append(ln.replace("  # STUB", ""))
            lines = [ln for ln in kept if not (_BEGIN.match(ln) or _END.match(ln))]
        else:
            lines = strip_solution_markers(lines)
        out.append("\n".join(lines))
    return out


def _notebook_with_exports(module: Module, sources: list[str]) -> dict:
    nb = json.loads((paths.RELEASE / module.name / f"{module.name}.ipynb").read_text("utf-8"))
    it = iter(sources)
    for cell in nb["cells"]:
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "code" and src.lstrip().startswith("#| export"):
            cell["source"] = next(it)
    return nb


def build_notebook(module: Module, kind: str) -> dict:
    """A sample student notebook of the given kind for ``module``."""
    if kind == "untouched":
        return json.loads((paths.RELEASE / module.name / f"{module.name}.ipynb").read_text())
    if kind == "partial":
        return _notebook_with_exports(module, _solution_export_sources(module, PARTIAL_UNFINISHED))
    sources = _solution_export_sources(module)
    if kind in ("full", "late"):
        return _notebook_with_exports(module, sources)
    sources = copy.copy(sources)
    if kind == "syntax_error":
        sources[1] = sources[1].replace("def numel(self) -> int:", "def numel(self) -> int", 1)
    elif kind == "infinite_loop":
        sources[1] = sources[1].replace(
            "        k_self = self.shape[-1]\n",
            "        k_self = self.shape[-1]\n        while k_self > 0:  # oops: never changes\n"
            "            k_self += 0\n", 1)
    elif kind == "hard_exit":
        sources[-1] = sources[-1] + "\n\nimport os\nos._exit(0)\n"
    else:
        raise ValueError(f"unknown sample kind {kind!r}")
    return _notebook_with_exports(module, sources)


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
    readme += [f"| `{s.folder}` | {s.note} |" for s in STUDENTS]
    (root / "README.md").write_text("\n".join(readme) + "\n", encoding="utf-8")
    return folders
