"""What `tito integrity` compares: submissions read from exports, folders and past terms.

A :class:`Document` is what one student (or group) wrote for the module: every code cell of
their notebook, normalised into units (functions). Inputs:

* a Gradescope "Export Submissions" archive (zip or unpacked folder), read with the same export
  reader as ``tito regrade``; each record's notebook is located the way the grader does;
* a folder of notebooks (``.ipynb``, or ``.py`` files): one submission per file, or per
  sub-folder holding one notebook (the sub-folder names it);
* a folder of known public solutions (``--public``): compared with this term, never with each
  other;
* earlier terms' documents, kept in the gradebook store (see :mod:`tito.integrity.store`).

Code the course provided is never evidence: the released notebook's code (scaffold, stubs,
docstrings, provided helpers and checks) is read the same way and every one of its k-grams is
removed from the submissions' fingerprints.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tito.export import Cell, ExportError, read_cells
from tito.integrity.fingerprint import Print, Unit, fingerprints, normalise

CELL_HEADER = "# ---- cell {index} ----"
NOTEBOOK_SUFFIXES = (".ipynb", ".py")
#: Read notebooks in worker processes from this many on.
PARALLEL_FROM = 64


class IntegrityError(ValueError):
    """Bad input to ``tito integrity``: one line naming the file and what is wrong."""


@dataclass
class Document:
    """One submission's own code, ready to compare."""

    label: str            # who: "Ada Lovelace <S1001>", a file name, "public: name"
    kind: str             # "current", "public" or "past"
    origin: str           # where it was read: export record, file, or "term <term>"
    code: str             # the code cells, joined, with a header line per cell
    units: list[Unit]
    sha256: str           # of ``code``
    student: str = ""     # sid or email when known
    term: str = ""
    notes: list[str] = field(default_factory=list)
    prints: list[Print] = field(default_factory=list)
    cells: list[Cell] = field(default_factory=list)

    def unit_name(self, index: int) -> str:
        return self.units[index].name if 0 <= index < len(self.units) else "?"


def code_cells(path: Path) -> list[Cell]:
    """The code cells of a notebook, a percent-format ``.py`` or a plain ``.py`` file."""
    try:
        cells = read_cells(path)
    except ExportError as exc:
        raise IntegrityError(str(exc)) from None
    if path.suffix == ".py" and not cells:
        return [Cell("code", path.read_text(encoding="utf-8", errors="replace"), 1)]
    return [c for c in cells if c.kind == "code" and c.source.strip()]


def document_from_cells(cells: list[Cell], *, label: str, kind: str, origin: str,
                        student: str = "", term: str = "") -> Document:
    """Join the cells into one document, normalising each cell on its own line range."""
    lines: list[str] = []
    units: list[Unit] = []
    for cell in cells:
        lines.append(CELL_HEADER.format(index=cell.index))
        offset = len(lines)
        lines.extend(cell.source.splitlines())
        units.extend(normalise(cell.source, line_offset=offset))
    code = "\n".join(lines) + "\n"
    return Document(label=label, kind=kind, origin=origin, code=code, units=units,
                    sha256=hashlib.sha256(code.encode()).hexdigest(), student=student,
                    term=term, cells=list(cells))


def read_notebook(path: Path, *, label: str, kind: str, origin: str, student: str = "",
                  term: str = "") -> Document:
    return document_from_cells(code_cells(path), label=label, kind=kind, origin=origin,
                               student=student, term=term)


def provided_document(release_notebook: Path) -> Document:
    """The code the course gave students for the module (the released notebook)."""
    if not release_notebook.is_file():
        raise IntegrityError(f"{release_notebook}: the released notebook is missing; run "
                             "`tito release NN` first")
    return read_notebook(release_notebook, label="course-provided code", kind="provided",
                         origin=str(release_notebook))


def _notebooks_in(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir()
                  if p.is_file() and not p.is_symlink() and p.suffix in NOTEBOOK_SUFFIXES
                  and not p.name.startswith("."))


Task = tuple[str, str, str, str, bool]  # path, label, kind, origin, tolerate a broken file


def _read_task(task: Task) -> Document:
    path, label, kind, origin, tolerant = task
    try:
        return read_notebook(Path(path), label=label, kind=kind, origin=origin)
    except IntegrityError as exc:
        if not tolerant:
            raise
        doc = document_from_cells([], label=label, kind=kind, origin=origin)
        doc.notes.append(str(exc))
        return doc


def read_many(tasks: list[Task]) -> list[Document]:
    """Read and normalise notebooks, in worker processes when there are many."""
    workers = min(os.cpu_count() or 1, 8)
    if len(tasks) < PARALLEL_FROM or workers < 2:
        return [_read_task(t) for t in tasks]
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(workers) as pool:
        return list(pool.map(_read_task, tasks, chunksize=16))


def read_folder(folder: Path, *, kind: str) -> list[Document]:
    """One document per notebook file in ``folder``, or per sub-folder holding one notebook."""
    tasks: list[Task] = []
    prefix = "public: " if kind == "public" else ""
    for path in _notebooks_in(folder):
        tasks.append((str(path), f"{prefix}{path.stem}", kind, str(path), False))
    for sub in sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink()
                      and not p.name.startswith((".", "__"))):
        books = _notebooks_in(sub)
        if not books:
            continue
        if len(books) > 1:
            raise IntegrityError(f"{sub}: holds {len(books)} notebooks; keep one per "
                                 "submission folder")
        tasks.append((str(books[0]), f"{prefix}{sub.name}", kind, str(books[0]), False))
    if not tasks:
        raise IntegrityError(f"{folder}: no notebooks (.ipynb or .py) in it or its sub-folders")
    return read_many(tasks)


def read_export(path: Path, module_name: str, *, workdir: Path) -> list[Document]:
    """One document per record of a Gradescope export (zip or folder)."""
    from autograder.regrade import RegradeError, locate_notebook, open_export

    try:
        export = open_export(path, workdir=workdir)
    except RegradeError as exc:
        raise IntegrityError(str(exc)) from None
    tasks: list[Task] = []
    extra: list[tuple[str, list[str]]] = []
    for rec in export.records:
        who = ", ".join(f"{s.name} <{s.sid or s.email}>" for s in rec.students) or rec.key
        notebook, notes = locate_notebook(export.root / rec.key, module_name)
        # a missing notebook reads as an empty document (tolerant task on a missing path)
        tasks.append((str(notebook or export.root / rec.key / "(no notebook)"), who, "current",
                      f"{path}: {rec.key}", True))
        extra.append((";".join(s.sid or s.email for s in rec.students), list(notes)))
    docs = read_many(tasks)
    for doc, (student, notes) in zip(docs, extra, strict=True):
        doc.student = student
        doc.notes = notes + doc.notes
    return docs


def is_export(path: Path) -> bool:
    """A zip, or a folder with a ``submission_metadata.yml`` at most two levels down."""
    if path.is_file():
        return path.suffix == ".zip"
    from autograder.regrade import RegradeError, find_metadata

    try:
        find_metadata(path)
    except RegradeError:
        return False
    return True


def read_inputs(paths: list[Path], module_name: str, *, workdir: Path | None = None
                ) -> list[Document]:
    """Every submission in the given exports and folders (labels made unique)."""
    docs: list[Document] = []
    with tempfile.TemporaryDirectory(prefix="tt-integrity-") as tmp:
        for i, path in enumerate(paths):
            path = Path(path)
            if not path.exists():
                raise IntegrityError(f"{path}: no such file or folder")
            if is_export(path):
                docs += read_export(path, module_name, workdir=(workdir or Path(tmp)) / str(i))
            elif path.is_dir():
                docs += read_folder(path, kind="current")
            else:
                raise IntegrityError(f"{path}: expected a Gradescope export (.zip or folder) "
                                     "or a folder of notebooks")
    seen: dict[str, int] = {}
    for doc in docs:
        n = seen.get(doc.label, 0)
        seen[doc.label] = n + 1
        if n:
            doc.label = f"{doc.label} ({n + 1})"
    return docs


def attach_prints(docs: list[Document], provided: set[int], *, k: int, w: int) -> None:
    """Fingerprint every document, dropping any fingerprint of course-provided code."""
    for doc in docs:
        doc.prints = [p for p in fingerprints(doc.units, k=k, w=w) if p.hash not in provided]
