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
import datetime as dt
import hashlib
import importlib.util
import os
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
from autograder.harness.limits import ModuleInfo
from autograder.harness.reader import read_untrusted

MAX_NOTEBOOK_BYTES = 20 * 1024 * 1024
#: Address-space cap of the process that reads untrusted notebooks, and the CPU time each
#: notebook may take there (:mod:`autograder.harness.reader`).
EXPORT_MEMORY_MB = 512
EXPORT_CPU_S = 30.0
__all__ = ["FORBIDDEN_TOP", "forbidden_imports"]


class SubmissionError(ValueError):
    """The submission cannot be graded; the message tells the student what to fix."""


class Refused(SubmissionError):
    """:func:`package_submission` cannot run this submission: ``str(exc)`` tells the student
    why, ``reason`` is the record's word for it (``export``, ``forbidden-import``), and
    ``file`` / ``sha256`` are what was read of it before it was refused."""

    def __init__(self, message: str, reason: str, *, file: str = "", sha256: str = "") -> None:
        super().__init__(message)
        self.reason, self.file, self.sha256 = reason, file, sha256


class PackageError(RuntimeError):
    """The course's side of packaging failed (the export worker, a missing release stub)."""


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


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file, read in blocks (a submission may be large)."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


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
    _trusted_bytecode(pkg, students, (reference, *([stubs] if stubs is not None else [])))
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


def _trusted_bytecode(pkg: Path, students: set[Path], origins: tuple[Path, ...] = ()) -> None:
    """Write ``__pycache__/<name>.<tag>.pyc`` for every module of ``pkg`` but ``students``.

    The ``.pyc`` is *checked-hash* (PEP 552): the import system hashes the source beside it
    and uses the bytecode only if it matches, so bytecode can never stand in for other code;
    it names no path (the import sets the real one). A file that does not compile is left
    for the import to report. ``origins``: the trusted folders ``pkg``'s files were copied
    from; bytecode :func:`write_trusted_bytecode` left beside a file's origin is reused when
    it is checked-hash bytecode of the very same source (every grading process would
    otherwise compile the whole reference again: 0.15 CPU-s of a module-05 grading).
    """
    for src in sorted(pkg.rglob("*.py")):
        if src in students:
            continue
        data = src.read_bytes()
        key = hashlib.sha256(data).digest()
        with _PYC_LOCK:
            pyc = _PYC.get(key)
        if pyc is None:
            rel = src.relative_to(pkg)
            pyc = next((b for b in (_pyc_for(data, pyc_beside(o / rel)) for o in origins)
                        if b is not None), None) or _compile_trusted(src)
            if pyc is None:
                continue
            with _PYC_LOCK:
                _PYC[key] = pyc
                while len(_PYC) > PYC_CACHE:
                    _PYC.popitem(last=False)
        cached = pyc_beside(src)
        cached.parent.mkdir(exist_ok=True)
        cached.write_bytes(pyc)


def _compile_trusted(src: Path) -> bytes | None:
    """Checked-hash bytecode of ``src`` naming no path but its file name; None when it does
    not compile."""
    with tempfile.TemporaryDirectory(prefix="ttpyc-") as tmp:
        out = Path(tmp) / "m.pyc"
        try:
            py_compile.compile(str(src), cfile=str(out), dfile=src.name, doraise=True,
                               optimize=0,
                               invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
        except py_compile.PyCompileError:
            return None
        return out.read_bytes()


def _pyc_for(data: bytes, pyc: Path) -> bytes | None:
    """``pyc``'s bytes when it is checked-hash bytecode of this interpreter for the source
    ``data`` (PEP 552 header: magic, flags 0b11, the source's hash), else None."""
    try:
        blob = pyc.read_bytes()
    except OSError:
        return None
    ok = (blob[:4] == importlib.util.MAGIC_NUMBER and int.from_bytes(blob[4:8], "little") == 3
          and blob[8:16] == importlib.util.source_hash(data))
    return blob if ok else None


def write_trusted_bytecode(folder: Path) -> int:
    """Write, beside every module file under ``folder`` (a trusted package: the reference,
    the release's stubs), the checked-hash bytecode :func:`build_package` would compile for a
    copy of it, so gradings reuse it instead; files whose bytecode is already that are left
    alone. Returns how many files were written (``make bytecode``, the Gradescope
    ``setup.sh``)."""
    written = 0
    for src in sorted(folder.rglob("*.py")):
        if "__pycache__" in src.parts:
            continue
        target = pyc_beside(src)
        if _pyc_for(src.read_bytes(), target) is not None:
            continue
        pyc = _compile_trusted(src)
        if pyc is not None:
            target.parent.mkdir(exist_ok=True)
            part = target.with_name(f".{target.name}.{os.getpid()}.part")
            part.write_bytes(pyc)
            part.replace(target)  # a grading reading it meanwhile sees the old file or this one
            written += 1
    return written


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


# ----------------------------------------------------------------------------- the stage
@dataclass
class EarlierModules:
    """Which copy of each still-open earlier module the package gets, and what the student
    is told about it."""

    #: ``{slug: the student's own source, or None for the release stub}`` (build_package's
    #: ``earlier``)
    copies: dict[str, str | None] = field(default_factory=dict)
    #: slugs of the student's own copies
    mine: list[str] = field(default_factory=list)
    #: ``extra_data.earlier_modules``: ``{"NN_slug": {"from", "closed" | "closes", "why"}}``
    record: dict[str, Any] = field(default_factory=dict)
    #: a note for the student when some earlier modules are closed ("" when none is)
    note: str = ""
    #: one line for the top of the results, one paragraph for the submission test
    line: str = ""
    detail: str = ""
    #: the numbers that came from their release stubs, and why
    stubs: dict[int, str] = field(default_factory=dict)


@dataclass
class Packaged:
    """The package stage's product: the graded package in the scratch folder, and what was
    learnt on the way."""

    notebook: Path
    sha256: str
    source: str
    notes: list[str]
    earlier: EarlierModules
    package_parent: Path
    student_file: Path
    student_files: list[Path]
    #: the release's public tests: the files the child gets, and their test functions
    public_files: list[dict[str, str]]
    public: list[PublicTest]


def package_submission(submission: Path, info: ModuleInfo, *, now: dt.datetime,
                       reference: Path, stubs: Path | None, public_dir: Path | None,
                       dest: Path) -> Packaged:
    """The package stage: the notebook out of ``submission``, its module (and those of the
    still-open earlier modules submitted with it) exported in a capped worker, the graded
    package laid out in ``dest`` (an empty folder), and the release's public tests from
    ``public_dir`` (:func:`public_tests`). No student code runs.

    Raises:
        Refused: the submission cannot be run (the student's side; the message says why).
        PackageError: the course's side failed.
    """
    try:
        notebook, notes = find_notebook(submission, info.name)
    except SubmissionError as exc:
        raise Refused(f"Your submission could not be graded: {exc}", "export") from exc
    try:
        sha = sha256_file(notebook)
    except OSError as exc:
        raise Refused(f"Your submission could not be graded: {notebook.name}: cannot be read "
                      f"({exc.strerror})", "export", file=notebook.name) from exc
    all_modules = info.all_modules or ((info.number, info.slug),)
    open_earlier = [(n, slug) for n, slug in all_modules
                    if n < info.number and not reference_usable(info, n, slug, now)]
    found = earlier_notebooks(submission, info.number, all_modules)
    wanted = {info.slug: (notebook, info.number, info.title)}
    wanted.update({slug: (found[n], n, slug) for n, slug in open_earlier if n in found})
    try:
        exported = export_notebooks(wanted)
    except RuntimeError as exc:
        raise PackageError(str(exc)) from exc
    mine = exported[info.slug]
    if mine.source is None:
        raise Refused(f"Your submission could not be graded: {mine.error}", "export",
                      file=notebook.name, sha256=sha)
    if mine.forbidden:
        raise Refused(
            f"Your {info.slug}.py imports {', '.join(mine.forbidden)}. TinyTorch is built from "
            "NumPy and the Python standard library only: remove those imports (and the code "
            "that uses them), export again and resubmit.", "forbidden-import",
            file=notebook.name, sha256=sha)
    earlier = earlier_modules(info, open_earlier, exported)
    try:
        student_file = build_package(dest=dest, reference=reference, module_number=info.number,
                                     slug=info.slug, student_source=mine.source,
                                     all_modules=all_modules, stubs=stubs,
                                     earlier=earlier.copies)
    except FileNotFoundError as exc:
        raise PackageError(str(exc)) from exc
    pkg = dest / "tinytorch"
    files, tests = public_tests(public_dir)
    return Packaged(notebook=notebook, sha256=sha, source=mine.source, notes=notes,
                    earlier=earlier, package_parent=dest, student_file=student_file,
                    student_files=[pkg / f"{slug}.py" for slug in earlier.mine],
                    public_files=files, public=tests)


def reference_usable(info: ModuleInfo, number: int, slug: str, now: dt.datetime) -> bool:
    """An earlier module's reference may reach the sandbox only once its window has closed,
    decided here at grading time from the close times the course facts carry and ``now`` (the
    grading machine's clock, or a time the trusted caller gives; never anything of the
    submission). An old zip that lists the references it ships is also held to that list."""
    if info.reference_modules is not None and slug not in info.reference_modules:
        return False
    return info.closed(number, now)


def earlier_modules(info: ModuleInfo, open_earlier: list[tuple[int, str]],
                    exported: dict[str, Exported]) -> EarlierModules:
    """Which copy of each still-open earlier module the package gets, and what the student is
    told about it: one short line at the top of the results (``line``) and one paragraph in
    the ``submission`` test naming every stub and why (``detail``)."""
    out = EarlierModules()
    earlier, mine, record = out.copies, out.mine, out.record
    yours: list[int] = []
    stubs: list[tuple[int, str]] = []
    closed: list[str] = []
    for n, slug in ((n, s) for n, s in (info.all_modules or ()) if n < info.number):
        name = f"{n:02d}_{slug}"
        closes = info.closes_text(n)
        if (n, slug) not in open_earlier:
            record[name] = {"from": "reference", "closed": closes}
            closed.append(f"{n:02d}")
            continue
        got = exported.get(slug)
        if got is not None and got.source is not None and not got.forbidden:
            earlier[slug] = got.source
            mine.append(slug)
            record[name] = {"from": "yours", "closes": closes}
            yours.append(n)
            continue
        earlier[slug] = None
        if got is None:
            why = f"you did not upload {name}.ipynb with this notebook"
        elif got.forbidden:
            why = f"your {name}.ipynb imports {', '.join(got.forbidden)}"
        else:
            why = f"your {name}.ipynb could not be read ({got.error})"
        record[name] = {"from": "stub", "closes": closes, "why": why}
        stubs.append((n, why))
    if closed:
        out.note = (
            f"Module{'s' if len(closed) > 1 else ''} {', '.join(closed)} no longer accept"
            f"{'' if len(closed) > 1 else 's'} late work, so this module was graded with the "
            "course's reference of them: an earlier bug is not charged twice.")
    if yours or stubs:
        names = {n: f"{n:02d}_{s}" for n, s in info.all_modules or ()}
        opened = sorted(yours + [n for n, _ in stubs])
        last = max(opened, key=lambda n: dict(info.closes).get(n, "9999"))
        out.stubs = {n: why for n, why in stubs}
        used = []
        if yours:
            used.append(f"your own {_ranges(yours)}")
        if stubs:
            used.append(f"the unfinished release stub{'s' if len(stubs) > 1 else ''} of "
                        f"{_ranges([n for n, _ in stubs])}")
        one = len(opened) == 1
        out.line = (f"Earlier module{'' if one else 's'} {_ranges(opened)} "
                    f"{'is' if one else 'are'} still open for late work: this run used "
                    f"{' and '.join(used)} (see 'submission').")
        text = (f"Module{'' if one else 's'} {_ranges(opened)} {'is' if one else 'are'} still "
                f"open for late work ({'' if one else 'the last '}until "
                f"{info.closes_text(last)}), so ")
        if yours:
            text += ("this module was graded with your own "
                     + ", ".join(f"{names[n]}.ipynb" for n in yours)
                     + " in place of the course's reference")
        if stubs:
            text += ("; " if yours else "") + (
                "the unfinished release stub was used for "
                + "; ".join(f"{names[n]} ({why})" for n, why in stubs)
                + ": tests that need them fail, and say so. Upload those notebooks together "
                "with this one, or wait until they close")
        out.detail = (text + ". Once they close, the course's reference is used and "
                      "this module can be regraded on it.")
    return out


def _ranges(numbers: list[int]) -> str:
    """``1, 2, 3, 5`` -> ``01-03, 05`` (module numbers)."""
    runs: list[tuple[int, int]] = []
    for n in sorted(numbers):
        if runs and runs[-1][1] == n - 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return ", ".join(f"{a:02d}" if a == b else f"{a:02d}–{b:02d}" for a, b in runs)


if __name__ == "__main__":  # make bytecode, the Gradescope setup.sh: FOLDER... (missing: skipped)
    for _folder in sys.argv[1:]:
        if Path(_folder).is_dir():
            write_trusted_bytecode(Path(_folder))
