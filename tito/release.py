"""Build the reference package, the otter master notebooks and the student release.

``sync``    solutions/NN_slug/NN_slug.py -> tinytorch_ref/<slug>.py        (the exporter)
``master``  solution module + course.yml -> assignments/NN_slug/NN_slug.ipynb
``release`` master --otter assign--> student_release/NN_slug/ (+ student_release/tinytorch/)

Everything generated is deterministic (stable cell ids, no timestamps), so CI can check the
checked-in trees are in sync with their sources. Every release ends with a leak scan.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tito import paths
from tito.course import Course, CourseError, Module
from tito.export import export_module, read_cells, write_module

# Files of tinytorch_ref that are package infrastructure (hand-written), not module exports.
INFRA_SUFFIXES = (".py",)


class ReleaseError(RuntimeError):
    """A release step failed; one line naming the module and the problem."""


def solution_path(module: Module) -> Path:
    return paths.SOLUTIONS / module.name / f"{module.name}.py"


def available_modules(course: Course) -> list[Module]:
    """Modules of course.yml that have a solution module in solutions/."""
    return [m for m in course.modules if solution_path(m).exists()]


def suite_path(module: Module) -> Path:
    return paths.SUITES / module.name / "suite.py"


def built_modules(course: Course) -> list[Module]:
    """Modules with both a solution module and a hidden suite: the ones a course can run."""
    return [m for m in course.modules if solution_path(m).exists() and suite_path(m).exists()]


def span_text(numbers: list[int]) -> str:
    """``[1, 2, 3, 5]`` -> ``01-03, 05``."""
    parts: list[str] = []
    for n in numbers:
        if parts and parts[-1].endswith(f"{n - 1:02d}"):
            head = parts[-1].split("-")[0]
            parts[-1] = f"{head}-{n:02d}"
        else:
            parts.append(f"{n:02d}")
    return ", ".join(parts) or "none"


def require_built(course: Course, ref: str | int, *, suite: bool = True) -> Module:
    """The module ``ref`` names, if it is built (solution module, and hidden suite if asked).

    Raises:
        CourseError: one line: which file is missing and which modules are built.
    """
    m = course.module(ref)
    missing = [f"solutions/{m.name}/{m.name}.py"] if not solution_path(m).exists() else []
    if suite and not suite_path(m).exists():
        missing.append(f"autograder/suites/{m.name}/suite.py")
    if missing:
        built = span_text([b.number for b in built_modules(course)])
        raise CourseError(f"{m.name} is declared in course.yml but not built yet (no "
                          f"{' and no '.join(missing)}); built modules: {built}")
    return m


# ----------------------------------------------------------------------------- reference
def reference_source(module: Module) -> str:
    return export_module(solution_path(module), slug=module.slug, number=module.number,
                         title=module.title, mode="reference")


def sync(course: Course, *, check: bool = False, reference_dir: Path | None = None) -> list[str]:
    """Regenerate ``tinytorch_ref/<slug>.py`` for every module with a solution.

    Args:
        check: do not write; return the modules whose file is out of date.

    Returns:
        Names of modules written (or, with ``check``, out of date).
    """
    ref = reference_dir or paths.REFERENCE
    changed = []
    for m in available_modules(course):
        text = reference_source(m)
        target = ref / f"{m.slug}.py"
        current = target.read_text(encoding="utf-8") if target.exists() else None
        if current != text:
            changed.append(m.name)
            if not check:
                write_module(text, ref, m.slug)
    return changed


def module_files(course: Course) -> set[str]:
    """File names in the package that are generated from a module (``tensor.py``, …)."""
    return {f"{m.slug}.py" for m in course.modules}


def infrastructure_files(course: Course, reference_dir: Path | None = None) -> list[Path]:
    """Hand-written package files of tinytorch_ref (facades, ``__init__``), relative paths."""
    ref = reference_dir or paths.REFERENCE
    generated = module_files(course)
    out = []
    for p in sorted(ref.rglob("*.py")):
        rel = p.relative_to(ref)
        if "__pycache__" in rel.parts:
            continue
        if len(rel.parts) == 1 and rel.name in generated:
            continue
        out.append(rel)
    return out


# ----------------------------------------------------------------------------- master notebook
def assignment_config(course: Course, module: Module) -> str:
    return "\n".join([
        "# ASSIGNMENT CONFIG",
        f"name: {module.name}",
        "init_cell: true",
        "check_all_cell: false",
        "export_cell: false",
        "run_tests: false",
        "strip_solutions_from_all_cells: true",
        "tests:",
        "  ok_format: false",
        "  files: true",
    ])


SETUP_CELL = """\
# Setup: make your own `tinytorch` package importable (the course folder holding tinytorch/,
# found from here upwards: the module's folder, or your copy in work/).
import sys
from pathlib import Path

_root = next((p for p in [Path.cwd(), *Path.cwd().parents] if (p / "tinytorch").is_dir()),
             Path.cwd().parent)
if str(_root) not in sys.path:
    sys.path.insert(0, str(_root))"""


def build_master(course: Course, module: Module) -> dict:
    """The otter master notebook (as JSON) for ``module``."""
    import jupytext
    import nbformat

    text = solution_path(module).read_text(encoding="utf-8")
    nb = jupytext.reads(text, fmt="py:percent")
    config = nbformat.v4.new_raw_cell(assignment_config(course, module))
    setup = nbformat.v4.new_code_cell(SETUP_CELL)
    nb.cells = [config, setup, *nb.cells]
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    for cell in nb.cells:
        cell.metadata = {}
    raw = json.loads(nbformat.writes(nb))
    return normalize_notebook(raw)


def normalize_notebook(nb: dict) -> dict:
    """Stable cell ids and metadata, no outputs: byte-identical output for identical input."""
    for i, cell in enumerate(nb.get("cells", [])):
        cell["id"] = f"{i:04d}"
        md = cell.get("metadata", {})
        for key in ("lines_to_next_cell", "execution"):
            md.pop(key, None)
        cell["metadata"] = md
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    nb.setdefault("metadata", {}).pop("jupytext", None)
    nb["nbformat"], nb["nbformat_minor"] = 4, 5
    return nb


def dump_notebook(nb: dict) -> str:
    return json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


# ----------------------------------------------------------------------------- release
_STUB_SUFFIX = re.compile(r"\s*# STUB\s*$")


def _strip_stub_markers(source: str) -> str:
    return "\n".join(_STUB_SUFFIX.sub("", ln) for ln in source.split("\n"))


@dataclass
class ReleaseResult:
    module: str
    notebook: Path
    tests: list[Path] = field(default_factory=list)
    package_file: Path | None = None


def run_otter_assign(master: Path, out_dir: Path) -> None:
    """Run ``otter assign`` on ``master`` into ``out_dir`` (no test run: we test ourselves).

    In this process, as ``otter assign --no-run-tests`` would (its output and warnings kept out
    of tito's): importing otter takes about 0.7 s of CPU and its work on one module about
    0.05 s, so releasing every module imports it once, not once per module.
    """
    import contextlib
    import io
    import logging

    from otter import logging as otter_logging
    from otter.assign import main as otter_assign

    log = io.StringIO()
    try:
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log), \
                otter_logging.level_context(logging.ERROR):
            otter_assign(str(master), str(out_dir), no_run_tests=True)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - any failure is this module's
        raise ReleaseError(f"otter assign failed for {master.name}: "
                           f"{type(exc).__name__}: {exc}") from None


def release_module(course: Course, module: Module, *, assignments_dir: Path | None = None,
                   release_dir: Path | None = None) -> ReleaseResult:
    """Build ``assignments/NN_slug`` and ``student_release/NN_slug`` for one module."""
    assignments_dir = assignments_dir or paths.ASSIGNMENTS
    release_dir = release_dir or paths.RELEASE
    if not solution_path(module).exists():
        raise ReleaseError(f"{module.name}: no solution module at {solution_path(module)}")
    master = build_master(course, module)
    master_dir = assignments_dir / module.name
    master_dir.mkdir(parents=True, exist_ok=True)
    master_path = master_dir / f"{module.name}.ipynb"
    master_path.write_text(dump_notebook(master), encoding="utf-8")

    target = release_dir / module.name
    with tempfile.TemporaryDirectory(prefix="tito-release-") as tmp:
        tmp_master = Path(tmp) / f"{module.name}.ipynb"
        shutil.copy(master_path, tmp_master)
        out = Path(tmp) / "dist"
        run_otter_assign(tmp_master, out)
        student_nb = json.loads((out / "student" / f"{module.name}.ipynb").read_text("utf-8"))
        for cell in student_nb["cells"]:
            src = cell.get("source", "")
            src = "".join(src) if isinstance(src, list) else src
            cell["source"] = _strip_stub_markers(src)
        student_nb = normalize_notebook(student_nb)
        if target.exists():
            shutil.rmtree(target)
        (target / "tests").mkdir(parents=True)
        nb_path = target / f"{module.name}.ipynb"
        nb_path.write_text(dump_notebook(student_nb), encoding="utf-8")
        tests = []
        for t in sorted((out / "student" / "tests").glob("*.py")):
            dest = target / "tests" / t.name
            shutil.copy(t, dest)
            tests.append(dest)
    result = ReleaseResult(module.name, nb_path, tests)
    # the student's package file: the stubs of this module, exported from the release notebook
    text = export_module(nb_path, slug=module.slug, number=module.number, title=module.title,
                         mode="student")
    result.package_file = write_module(text, release_dir / "tinytorch", module.slug)
    return result


def write_student_package_infra(course: Course, release_dir: Path | None = None) -> None:
    """Copy the package infrastructure (facades) from tinytorch_ref into the release package."""
    release_dir = release_dir or paths.RELEASE
    pkg = release_dir / "tinytorch"
    for rel in infrastructure_files(course):
        dest = pkg / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        text = (paths.REFERENCE / rel).read_text(encoding="utf-8")
        if rel.as_posix() == "__init__.py":
            text = _replace_docstring(text, STUDENT_PACKAGE_DOC)
        dest.write_text(text.replace("tinytorch_ref", "tinytorch"), encoding="utf-8")


#: The docstring of the student's ``tinytorch/__init__.py`` (the reference's describes itself).
STUDENT_PACKAGE_DOC = '''"""tinytorch — your framework: each module's file is what ``python export.py NN`` (or
``tito module export NN``) wrote from your notebook of that module.

This file and the facades ``nn``, ``optim``, ``data`` are provided: they gather your modules
under PyTorch's names (``tinytorch.nn.Linear``, ``tinytorch.optim.SGD``); do not edit them.

Note: the factory ``tensor()`` stays in ``tinytorch.tensor`` (the module file); the package
attribute ``tensor`` is that module.
"""
'''


def _replace_docstring(text: str, doc: str) -> str:
    """``text`` (a module's source) with its docstring replaced by ``doc``."""
    tree = ast.parse(text)
    first = tree.body[0] if tree.body else None
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)):
        return doc + "\n" + text
    rest = text.splitlines(keepends=True)[first.end_lineno or 1:]
    return doc + "".join(rest)


STUDENT_REQUIREMENTS = """\
# What a student needs to work through the notebooks (no PyTorch: you build it).
numpy>=1.26
otter-grader==7.0.0
jupyterlab
matplotlib
rich
"""


def write_student_extras(course: Course, release_dir: Path | None = None) -> None:
    """README, requirements, the module list and the standalone export script."""
    release_dir = release_dir or paths.RELEASE
    templates = Path(__file__).parent / "templates"
    released = [m for m in course.modules if (release_dir / m.name).is_dir()]
    rows = "\n".join(f"| [{m.name}]({m.name}/{m.name}.ipynb) | {m.title} | {m.due} |"
                     for m in released)
    late = course.grading.late
    written = sorted({f"{m.written_points:g}" for m in released}) or ["0"]
    readme = (templates / "student_README.md").read_text(encoding="utf-8").format(
        course_code=course.course.code, course_name=course.course.name, term=course.course.term,
        timezone=course.course.timezone, module_rows=rows, written_points=" or ".join(written),
        grace=f"{late.grace_minutes:g}", per_day=f"{late.deduction_per_day:.0%}",
        cap=f"{late.max_deduction:.0%}", tokens=late.tokens, token_hours=f"{late.token_hours:g}")
    (release_dir / "README.md").write_text(readme, encoding="utf-8")
    (release_dir / "requirements.txt").write_text(STUDENT_REQUIREMENTS, encoding="utf-8")
    from tito.export import defined_names

    def names(m: Module) -> list[str]:
        stub = release_dir / "tinytorch" / f"{m.slug}.py"
        return sorted(defined_names(stub.read_text(encoding="utf-8"))) if stub.exists() else []

    modules = [{"number": m.number, "slug": m.slug, "name": m.name, "title": m.title,
                "release": m.release, "due": m.due, "timezone": course.course.timezone,
                "names": names(m)} for m in released]
    (release_dir / "modules.json").write_text(json.dumps(modules, indent=1) + "\n",
                                              encoding="utf-8")
    shutil.copy(templates / "student_export.py", release_dir / "export.py")
    shutil.copy(templates / "student_tito.py", release_dir / "tito_student.py")
    shutil.copy(templates / "student_pyproject.toml", release_dir / "pyproject.toml")
    write_student_milestones(course, release_dir, released)
    (release_dir / "tools").mkdir(exist_ok=True)
    shutil.copy(Path(__file__).parent / "export.py", release_dir / "tools" / "tito_export.py")


def write_student_milestones(course: Course, release_dir: Path, released: list[Module]) -> None:
    """The milestone scripts students run with their own package, once every module a
    milestone needs is released: the scripts (``milestones/``), the recipes they share with
    the grader (``tinytorch_milestones/``), the data with its checksums (``tinytorch_data/``)
    and ``milestones/milestones.json`` (the thresholds of course.yml)."""
    numbers = {m.number for m in released}
    ready = [ms for ms in course.milestones if set(ms.requires) <= numbers
             and (paths.REPO_ROOT / "milestones" / f"{ms.id}.py").is_file()]
    for folder in ("milestones", "tinytorch_milestones", "tinytorch_data"):
        if (release_dir / folder).exists():
            shutil.rmtree(release_dir / folder)
    if not ready:
        return
    support = ["mlperf_score.py"] if any(ms.id == "mlperf_2018" for ms in ready) else []
    for rel in ("milestones/_runner.py", *(f"milestones/{ms.id}.py" for ms in ready),
                "tinytorch_milestones/__init__.py", "tinytorch_milestones/recipes.py",
                *(f"tinytorch_milestones/{name}" for name in support)):
        # the staff's way of running a script with the reference package stays out
        text = (paths.REPO_ROOT / rel).read_text(encoding="utf-8")
        kept = [ln for ln in text.splitlines(keepends=True)
                if not (ln.lstrip().startswith("python milestones/") and "tinytorch_ref" in ln)]
        (release_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (release_dir / rel).write_text("".join(kept).replace(" or the staff's\n``tinytorch_ref``)",
                                                             ")"), encoding="utf-8")
    table = [ms.model_dump(include={"id", "year", "title", "metric", "threshold", "seeds",
                                    "min_passing_seeds", "time_budget_s", "requires",
                                    "graded_with", "weights", "criteria", "training"},
                           exclude_none=True)
             for ms in ready]
    (release_dir / "milestones" / "milestones.json").write_text(json.dumps(table, indent=1) + "\n",
                                                                encoding="utf-8")
    data = release_dir / "tinytorch_data"
    manifest = json.loads((paths.DATASETS / "MANIFEST.json").read_text(encoding="utf-8"))
    for rel in ("__init__.py", "loaders.py", "MANIFEST.json", *_manifest_files(manifest)):
        (data / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(paths.DATASETS / rel, data / rel)


def _manifest_files(manifest: dict) -> list[str]:
    """Relative paths of the shipped data files listed in tinytorch_data/MANIFEST.json."""
    return sorted(manifest.get("files", {}))


def release(course: Course, modules: list[Module], *, release_dir: Path | None = None,
            assignments_dir: Path | None = None) -> list[ReleaseResult]:
    """Release ``modules`` (build masters, run otter assign, write the package) and leak-scan."""
    from tito.leakscan import scan

    release_dir = release_dir or paths.RELEASE
    results = [release_module(course, m, release_dir=release_dir,
                              assignments_dir=assignments_dir) for m in modules]
    write_student_package_infra(course, release_dir)
    write_student_extras(course, release_dir)
    problems = scan(course, release_dir)
    if problems:
        raise ReleaseError(f"leak scan failed: {problems[0]} (and {len(problems) - 1} more)"
                           if len(problems) > 1 else f"leak scan failed: {problems[0]}")
    return results


def public_test_names(module: Module, release_dir: Path | None = None) -> list[str]:
    release_dir = release_dir or paths.RELEASE
    return [p.stem for p in sorted((release_dir / module.name / "tests").glob("*.py"))]


def solution_cells(module: Module):  # pragma: no cover - convenience for tools
    return read_cells(solution_path(module))
