"""From a submission on disk to the grader's view of it: a package in a scratch folder.

Steps, all in the trusted parent and none of them running student code:

1. :func:`find_notebook` picks the notebook out of a submission (file or folder);
2. :func:`export_submission` turns its ``#| export`` cells into module source with
   ``tito.export.export_module`` (a corrupt, empty, non-UTF-8 or syntactically broken
   notebook becomes a :class:`SubmissionError` with a message for the student);
3. :func:`forbidden_imports` refuses frameworks that would do the work (torch, jax, ...);
4. :func:`build_package` lays out ``tinytorch/`` = the reference with the graded module
   replaced by the student's export (earlier modules from the reference so one early bug is
   not punished twice; later modules from the student-release stubs when given).
"""

from __future__ import annotations

import ast
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path

MAX_NOTEBOOK_BYTES = 20 * 1024 * 1024
FORBIDDEN_TOP = ("torch", "jax", "jaxlib", "tensorflow", "tinytorch_ref", "autograder",
                 "keras", "cupy")


class SubmissionError(ValueError):
    """The submission cannot be graded; the message tells the student what to fix."""


@dataclass(frozen=True)
class PublicTest:
    """One otter exception-based public test function (0 points, visible feedback)."""

    item: str
    file: str
    function: str
    label: str


def find_notebook(submission: Path, module_name: str) -> tuple[Path, list[str]]:
    """The notebook to grade and notes for the student (e.g. a renamed file).

    Accepts a file, or a folder holding ``NN_slug.ipynb`` (Gradescope's submission folder).

    Raises:
        SubmissionError: nothing gradable was found; the message lists what was found.
    """
    expected = f"{module_name}.ipynb"
    if submission.is_file():
        return submission, []
    if not submission.is_dir():
        raise SubmissionError(f"no submission found at {submission.name}; upload {expected}")
    exact = submission / expected
    if exact.is_file():
        return exact, []
    notebooks = sorted(p for p in submission.rglob("*.ipynb")
                       if ".ipynb_checkpoints" not in p.parts and p.is_file())
    found = sorted(p.relative_to(submission).as_posix() for p in submission.rglob("*")
                   if p.is_file())[:20]
    if len(notebooks) == 1:
        return notebooks[0], [f"expected a file named {expected}; graded "
                              f"{notebooks[0].name} instead. Please keep the release name."]
    for nb in notebooks:
        if nb.name == expected:
            return nb, []
    listing = ", ".join(found) if found else "no files"
    if notebooks:
        raise SubmissionError(f"found {len(notebooks)} notebooks ({listing}) and none is named "
                              f"{expected}; upload only {expected}")
    raise SubmissionError(f"no notebook named {expected} in your submission (found: {listing});"
                          f" upload the notebook {expected} from your release folder")


def export_submission(notebook: Path, *, slug: str, number: int, title: str) -> str:
    """The student's module source, or a SubmissionError saying why there is none."""
    try:
        size = notebook.stat().st_size
    except OSError as exc:
        raise SubmissionError(f"{notebook.name}: cannot be read ({exc.strerror})") from None
    if size == 0:
        raise SubmissionError(f"{notebook.name}: is empty (0 bytes); save the notebook in "
                              "Jupyter and upload it again")
    if size > MAX_NOTEBOOK_BYTES:
        raise SubmissionError(f"{notebook.name}: is {size // 2**20} MB; clear the outputs "
                              "(Kernel > Restart & Clear Output), save and upload again")
    try:
        from tito.export import ExportError, export_module  # noqa: PLC0415
    except ImportError as exc:  # pragma: no cover - a broken autograder build
        raise RuntimeError(f"the exporter is missing from the autograder ({exc})") from exc
    try:
        return export_module(notebook, slug=slug, number=number, title=title, mode="student")
    except ExportError as exc:
        raise SubmissionError(str(exc)) from None
    except (RecursionError, MemoryError):
        raise SubmissionError(f"{notebook.name}: is too deeply nested or too large to "
                              "read") from None
    except (SyntaxError, ValueError, TypeError, KeyError, AttributeError) as exc:
        raise SubmissionError(f"{notebook.name}: could not be read as a notebook "
                              f"({type(exc).__name__}: {str(exc)[:200]})") from None


# CPython 3.11's ast.parse is not thread-safe: two threads building Python AST objects at once
# can fail with "SystemError: AST constructor recursion depth mismatch" (seen with
# `tito regrade --jobs 2`). Every parse in the grading parent goes through this lock.
_AST_LOCK = threading.Lock()


def parse_source(source: str) -> ast.Module:
    """``ast.parse`` serialised across threads (see ``_AST_LOCK``)."""
    with _AST_LOCK:
        return ast.parse(source)


def forbidden_imports(source: str) -> list[str]:
    """Top-level names of refused packages imported (or ``__import__``-ed) by ``source``."""
    try:
        tree = parse_source(source)
    except (SyntaxError, ValueError, RecursionError):
        return []
    hits: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Call) and node.args:
            fn = node.func
            fname = fn.id if isinstance(fn, ast.Name) else (
                fn.attr if isinstance(fn, ast.Attribute) else "")
            arg = node.args[0]
            if fname in ("__import__", "import_module") and isinstance(arg, ast.Constant) \
                    and isinstance(arg.value, str):
                names = [arg.value]
        for n in names:
            top = n.split(".")[0]
            if top in FORBIDDEN_TOP:
                hits.add(top)
    return sorted(hits)


def build_package(*, dest: Path, reference: Path, module_number: int, slug: str,
                  student_source: str | None, all_modules: tuple[tuple[int, str], ...],
                  stubs: Path | None = None, package: str = "tinytorch") -> Path:
    """Lay out ``dest/<package>/`` and return the path of the graded module file.

    Args:
        dest: an empty folder (the package goes in ``dest/<package>``).
        reference: the reference package folder (``tinytorch_ref``), possibly without the
            graded module's file (the Gradescope zip does not ship it).
        module_number, slug: the graded module.
        student_source: the student's module source; ``None`` keeps the reference file
            (publish mode, computing expected values).
        all_modules: ``(number, slug)`` of every course module, to tell module files from
            infrastructure files.
        stubs: the student-release package; later modules come from here when given.
    """
    pkg = dest / package
    shutil.copytree(reference, pkg, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    numbers = {s: n for n, s in all_modules}
    if stubs is not None and stubs.is_dir():
        for f in stubs.glob("*.py"):
            n = numbers.get(f.stem)
            if n is not None and n > module_number:
                shutil.copy2(f, pkg / f.name)
    target = pkg / f"{slug}.py"
    if student_source is not None:
        target.write_text(student_source, encoding="utf-8")
    elif not target.exists():
        raise FileNotFoundError(f"reference module {slug}.py is missing from {reference}")
    return target


def public_tests(folder: Path | None) -> tuple[list[dict[str, str]], list[PublicTest]]:
    """Public test files to ship to the child, and their test functions in file order."""
    if folder is None or not folder.is_dir():
        return [], []
    files: list[dict[str, str]] = []
    tests: list[PublicTest] = []
    for path in sorted(folder.glob("*.py")):
        if path.name.startswith("__"):
            continue
        text = path.read_text(encoding="utf-8")
        try:
            tree = parse_source(text)
        except SyntaxError:
            continue
        files.append({"name": path.stem, "file": path.name, "source": text})
        i = 0
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and any(_is_test_case(d)
                                                         for d in node.decorator_list):
                i += 1
                tests.append(PublicTest(f"public:{path.stem}:{i}", path.name, node.name,
                                        f"{path.stem} · {node.name}"))
    return files, tests


def _is_test_case(dec: ast.expr) -> bool:
    target = dec.func if isinstance(dec, ast.Call) else dec
    return (isinstance(target, ast.Name) and target.id == "test_case") or (
        isinstance(target, ast.Attribute) and target.attr == "test_case")
