"""From a submission on disk to the grader's view of it: a package in a scratch folder.

Steps, none of them running student code:

1. :func:`find_notebook` picks the notebook out of a submission (file or folder), and
   :func:`earlier_notebooks` the student's notebooks of earlier modules submitted with it;
2. :func:`export_notebooks` turns their ``#| export`` cells into module source with
   ``coursekit.export.export_module`` in a separate, memory-capped process
   (:mod:`autograder.harness.export_worker`): a corrupt, empty, non-UTF-8, syntactically
   broken or absurdly large notebook becomes a :class:`SubmissionError` with a message for
   the student, and the grading parent's memory stays small;
3. the same worker lists refused imports (torch, jax, ...: :func:`forbidden_imports`);
4. :func:`build_package` lays out ``tinytorch/`` = the reference with the graded module
   replaced by the student's export; an earlier module comes from the reference only once its
   submission window has closed, otherwise from the student's own notebook submitted with
   this one (or the release stub); later modules from the student-release stubs. Every module
   that came from the reference or the stubs gets its bytecode beside it (a checked-hash
   ``.pyc``, compiled once per process for each distinct file), so a grading child does not
   compile some 12,000 trusted lines again each time it starts; student code is never
   compiled here.
"""

from __future__ import annotations

import ast
import hashlib
import py_compile
import shutil
import sys
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.harness.export_worker import FORBIDDEN_TOP, forbidden_imports
from autograder.harness.reader import HARNESS_ROOT, read_untrusted

MAX_NOTEBOOK_BYTES = 20 * 1024 * 1024
#: Address-space cap of the process that reads untrusted notebooks, and the CPU time each
#: notebook may take there (:mod:`autograder.harness.reader`).
EXPORT_MEMORY_MB = 512
EXPORT_CPU_S = 30.0
__all__ = ["FORBIDDEN_TOP", "HARNESS_ROOT", "forbidden_imports"]


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


def earlier_notebooks(submission: Path, module_number: int,
                      all_modules: tuple[tuple[int, str], ...]) -> dict[int, Path]:
    """The student's notebooks of earlier modules submitted with this one, by exact release
    name (``01_tensor.ipynb``): anywhere in a submission folder, or beside a notebook given
    as a file (what a Gradescope upload of those files together holds; ``tito grade NN
    notebook.ipynb``). Symlinks are never followed."""
    if submission.is_file() and not submission.is_symlink():
        candidates = sorted(submission.parent.glob("*.ipynb"))
        submission = submission.parent
    elif submission.is_dir():
        candidates = sorted(submission.rglob("*.ipynb"))
    else:
        return {}
    wanted = {f"{n:02d}_{slug}.ipynb": n for n, slug in all_modules if n < module_number}
    found: dict[int, Path] = {}
    for p in candidates:
        n = wanted.get(p.name)
        if n is None or n in found or ".ipynb_checkpoints" in p.parts:
            continue
        if any(q.is_symlink() for q in [p, *p.parents] if q != submission
               and submission in q.parents) or not p.is_file():
            continue
        found[n] = p
    return found


@dataclass
class Exported:
    """One notebook read by the export worker: its module source, or why there is none."""

    source: str | None
    error: str = ""
    forbidden: list[str] = field(default_factory=list)


def _check_size(notebook: Path) -> str:
    try:
        size = notebook.stat().st_size
    except OSError as exc:
        return f"{notebook.name}: cannot be read ({exc.strerror})"
    if size == 0:
        return f"{notebook.name}: is empty (0 bytes); save the notebook in Jupyter and upload " \
               "it again"
    if size > MAX_NOTEBOOK_BYTES:
        return (f"{notebook.name}: is {size // 2**20} MB; clear the outputs (Kernel > Restart "
                "& Clear Output), save and upload again")
    return ""


def export_notebooks(notebooks: dict[str, tuple[Path, int, str]], *,
                     memory_mb: int = EXPORT_MEMORY_MB,
                     cpu_s: float = EXPORT_CPU_S) -> dict[str, Exported]:
    """Export ``{slug: (notebook, number, title)}`` in a capped worker process
    (:func:`autograder.harness.reader.read_untrusted`): a notebook that exhausts the worker's
    memory or CPU time is that notebook's error; the others are still exported.

    Raises:
        RuntimeError: the worker itself is broken (a course-side problem).
    """
    out: dict[str, Exported] = {}
    todo: list[dict[str, Any]] = []
    for slug, (path, number, title) in notebooks.items():
        problem = _check_size(path)
        if problem:
            out[slug] = Exported(None, problem)
        else:
            todo.append({"path": str(path), "slug": slug, "number": number, "title": title})
    got = read_untrusted(todo, memory_mb=memory_mb, cpu_s=cpu_s)
    for nb, m in zip(todo, got, strict=True):
        if isinstance(m.get("source"), str):
            out[nb["slug"]] = Exported(m["source"], "",
                                       [str(x) for x in m.get("forbidden") or []])
            continue
        error = str(m.get("error") or "could not be read")
        if m.get("kind") == "memory":
            error += "; clear the outputs (Kernel > Restart & Clear Output) and remove huge " \
                     "literals"
        elif m.get("kind") == "time":
            error += "; is it unusually large?"
        out[nb["slug"]] = Exported(None, error)
    return out


def export_submission(notebook: Path, *, slug: str, number: int, title: str) -> str:
    """The student's module source, or a SubmissionError saying why there is none."""
    got = export_notebooks({slug: (notebook, number, title)})[slug]
    if got.source is None:
        raise SubmissionError(got.error)
    return got.source


# CPython 3.11's ast.parse is not thread-safe: two threads building Python AST objects at once
# can fail with "SystemError: AST constructor recursion depth mismatch" (seen with
# `tito regrade --jobs 2`). Every parse in the grading parent goes through this lock.
_AST_LOCK = threading.Lock()


def parse_source(source: str) -> ast.Module:
    """``ast.parse`` serialised across threads (see ``_AST_LOCK``)."""
    with _AST_LOCK:
        return ast.parse(source)


def build_package(*, dest: Path, reference: Path, module_number: int, slug: str,
                  student_source: str | None, all_modules: tuple[tuple[int, str], ...],
                  stubs: Path | None = None, package: str = "tinytorch",
                  earlier: dict[str, str | None] | None = None) -> Path:
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
        earlier: earlier modules that must NOT come from the reference (still open):
            ``{slug: the student's own source, or None for the release stub}``. ``None``
            (trusted tools: publish mode, mutation testing) keeps every earlier reference.

    Raises:
        FileNotFoundError: a module file that must be replaced has no stub to replace it.
    """
    pkg = dest / package
    shutil.copytree(reference, pkg, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    numbers = {s: n for n, s in all_modules}
    if stubs is not None and stubs.is_dir():
        for f in stubs.glob("*.py"):
            n = numbers.get(f.stem)
            if n is not None and n > module_number:
                shutil.copy2(f, pkg / f.name)
    for other, src in (earlier or {}).items():
        target_file = pkg / f"{other}.py"
        if src is not None:
            target_file.write_text(src, encoding="utf-8")
        elif stubs is not None and (stubs / f"{other}.py").is_file():
            shutil.copy2(stubs / f"{other}.py", target_file)
        elif target_file.exists():  # a built module's reference with no stub to replace it
            target_file.unlink()
            raise FileNotFoundError(f"no release stub for the open module {other}.py")
        # else: a module the course has not built yet is in no package at all
    target = pkg / f"{slug}.py"
    if student_source is not None:
        target.write_text(student_source, encoding="utf-8")
    elif not target.exists():
        raise FileNotFoundError(f"reference module {slug}.py is missing from {reference}")
    students = {pkg / f"{o}.py" for o, src in (earlier or {}).items() if src is not None}
    if student_source is not None:
        students.add(target)
    _trusted_bytecode(pkg, students)
    return target


#: Checked-hash bytecode of trusted module files, by the SHA-256 of their source.
_PYC: OrderedDict[bytes, bytes] = OrderedDict()
_PYC_LOCK = threading.Lock()
PYC_CACHE = 256


def pyc_beside(src: Path) -> Path:
    """``src``'s bytecode path in the ``__pycache__`` folder beside it: where the sandboxed
    child (whose environment sets no bytecode prefix) looks. Not
    ``importlib.util.cache_from_source``, which follows the *grader's* ``sys.pycache_prefix``:
    with ``PYTHONPYCACHEPREFIX`` set on a TA's machine it would put the bytecode where the child
    never looks."""
    return src.parent / "__pycache__" / f"{src.stem}.{sys.implementation.cache_tag}.pyc"


def _trusted_bytecode(pkg: Path, students: set[Path]) -> None:
    """Write ``__pycache__/<name>.<tag>.pyc`` for every module of ``pkg`` but ``students``.

    The ``.pyc`` is *checked-hash* (PEP 552): the import system hashes the source beside it
    and uses the bytecode only if it matches, so bytecode can never stand in for other code;
    it names no path (the import sets the real one). A file that does not compile is left
    for the import to report.
    """
    for src in sorted(pkg.rglob("*.py")):
        if src in students:
            continue
        data = src.read_bytes()
        key = hashlib.sha256(data).digest()
        with _PYC_LOCK:
            pyc = _PYC.get(key)
        if pyc is None:
            with tempfile.TemporaryDirectory(prefix="ttpyc-") as tmp:
                out = Path(tmp) / "m.pyc"
                try:
                    py_compile.compile(str(src), cfile=str(out), dfile=src.name, doraise=True,
                                       optimize=0, invalidation_mode=(
                                           py_compile.PycInvalidationMode.CHECKED_HASH))
                except py_compile.PyCompileError:
                    continue
                pyc = out.read_bytes()
            with _PYC_LOCK:
                _PYC[key] = pyc
                while len(_PYC) > PYC_CACHE:
                    _PYC.popitem(last=False)
        cached = pyc_beside(src)
        cached.parent.mkdir(exist_ok=True)
        cached.write_bytes(pyc)


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
