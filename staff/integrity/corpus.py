"""What `tito integrity` compares: submissions read from exports, folders and past terms.

A :class:`Document` is what one student (or group) wrote for the module: every code cell of
their notebook, normalised into units (functions). Inputs:

* a Gradescope "Export Submissions" archive (zip or unpacked folder), read with the same export
  reader as ``tito regrade``; each record's notebook is located the way the grader does;
* a folder of notebooks (``.ipynb``, or ``.py`` files): one submission per file, or per
  sub-folder holding one notebook (the sub-folder names it);
* a folder of known public solutions (``--public``): compared with this term, never with each
  other;
* earlier terms' documents, kept in the gradebook store (see :mod:`staff.integrity.store`).

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
from typing import Any

from coursekit.export import Cell
from coursekit.gradescope_export import GradescopeExportError, find_metadata
from staff.integrity import fingerprint
from staff.integrity.fingerprint import Print, Unit

CELL_HEADER = "# ---- cell {index} ----"
NOTEBOOK_SUFFIXES = (".ipynb", ".py")
#: Notebooks larger than this are not read (the grader refuses them too).
MAX_NOTEBOOK_BYTES = 20 * 1024 * 1024
#: Address-space cap and CPU seconds per document of the processes that read submissions.
READER_MEMORY_MB = 512
READER_CPU_S = 60.0


class IntegrityError(ValueError):
    """Bad input to ``tito integrity``: one line naming the file and what is wrong."""


@dataclass
class Document:
    """One submission's own code, ready to compare."""

    label: str            # who: "Ada Lovelace <S1001>", a file name, "public: name"
    kind: str             # "current", "public" or "past"
    origin: str           # where it was read: export record, file, or "term <term>"
    code: str             # the code cells, joined, with a header line per cell
    units: list[Unit]     # names only (the tokens stay in the reader process)
    sha256: str           # of ``code``
    student: str = ""     # sid or email when known
    term: str = ""
    notes: list[str] = field(default_factory=list)
    prints: list[Print] = field(default_factory=list)
    cells: list[Cell] = field(default_factory=list)
    #: why some or all of it could not be read (listed in the report); "" when read in full
    problem: str = ""
    #: every k-gram hash (the course-provided document only)
    hashes: set[int] = field(default_factory=set)

    def unit_name(self, index: int) -> str:
        return self.units[index].name if 0 <= index < len(self.units) else "?"


def join_cells(cells: list[Cell]) -> str:
    """The document's text: each cell after a header line (the lines prints refer to)."""
    lines: list[str] = []
    for cell in cells:
        lines.append(CELL_HEADER.format(index=cell.index))
        lines.extend(cell.source.splitlines())
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Source:
    """One document to read: a file, or cells kept in the gradebook store."""

    label: str
    kind: str
    origin: str
    path: str = ""
    cells: tuple[tuple[int, str], ...] = ()
    student: str = ""
    term: str = ""
    notes: tuple[str, ...] = ()


def _item(src: Source) -> tuple[dict[str, Any] | None, str]:
    """The reader's job for one source, or why it is not read at all."""
    if not src.path:
        return {"cells": [list(c) for c in src.cells], "name": src.label}, ""
    path = Path(src.path)
    try:
        st = path.lstat()
    except OSError as exc:
        return None, f"{path.name}: cannot be read ({exc.strerror})"
    if not path.is_file() or path.is_symlink():
        return None, f"{path.name}: not a regular file"
    if st.st_size > MAX_NOTEBOOK_BYTES:
        return None, (f"{path.name}: is {st.st_size / 2**20:.0f} MB, more than "
                      f"{MAX_NOTEBOOK_BYTES // 2**20} MB (the grader refuses it too)")
    return {"path": str(path)}, ""


def read_sources(sources: list[Source], *, k: int, w: int, provided: bool = False
                 ) -> list[Document]:
    """Read and fingerprint every source in capped reader processes.

    A source that cannot be read (not a notebook, too large, too slow, or its parser ran out
    of memory) becomes an empty document whose ``problem`` says why, naming the file; every
    other source is read. A cell too large to parse is left out of its document with a note.

    Args:
        k: tokens per k-gram; w: the winnowing window.
        provided: the sources are the course's own code (also return every k-gram hash).
    """
    from autograder.harness.reader import read_untrusted

    items: list[dict[str, Any]] = []
    where: list[int] = []
    problems = [""] * len(sources)
    for i, src in enumerate(sources):
        item, problem = _item(src)
        if item is None:
            problems[i] = problem
        else:
            items.append(item)
            where.append(i)
    # at most 4 readers: 4 x 512 MB stays within a 4 GB laptop when every one is attacked
    workers = max(1, min(os.cpu_count() or 1, 4, -(-len(items) // 16)))
    got: list[dict[str, Any]] = [{}] * len(sources)
    for i, res in zip(where, read_untrusted(
            items, reader=Path(fingerprint.__file__), function="read_document",
            options={"k": k, "w": w, "hashes": provided}, memory_mb=READER_MEMORY_MB,
            cpu_s=READER_CPU_S, workers=workers), strict=True):
        got[i] = res
    docs = []
    for src, res, problem in zip(sources, got, problems, strict=True):
        problem = problem or str(res.get("error") or "")
        if problem and src.path and Path(src.path).name not in problem:
            problem = f"{Path(src.path).name}: {problem}"
        cells = [] if problem else [Cell("code", str(c[1]), int(c[0]))
                                    for c in res.get("cells") or []]
        code = join_cells(cells)
        doc = Document(
            label=src.label, kind=src.kind, origin=src.origin, code=code,
            units=[Unit(str(n)) for n in res.get("units") or []],
            sha256=hashlib.sha256(code.encode()).hexdigest(), student=src.student,
            term=src.term, notes=list(src.notes), cells=cells,
            prints=[Print(int(h), int(u), int(a), int(b))
                    for h, u, a, b in res.get("prints") or []],
            problem=problem,
            hashes={int(h) for h in res.get("hashes") or []})
        if problem:
            doc.notes.append(f"not compared: {problem}")
        doc.notes += [str(n) for n in res.get("notes") or []]
        docs.append(doc)
    return docs


def provided_document(release_notebook: Path, *, k: int, w: int) -> Document:
    """The code the course gave students for the module (the released notebook).

    Raises:
        IntegrityError: the release is missing or cannot be read.
    """
    if not release_notebook.is_file():
        raise IntegrityError(f"{release_notebook}: the released notebook is missing; run "
                             "`tito release NN` first")
    doc = read_sources([Source("course-provided code", "provided", str(release_notebook),
                               path=str(release_notebook))], k=k, w=w, provided=True)[0]
    if doc.problem:
        raise IntegrityError(f"{release_notebook}: {doc.problem}")
    return doc


def _notebooks_in(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir()
                  if p.is_file() and not p.is_symlink() and p.suffix in NOTEBOOK_SUFFIXES
                  and not p.name.startswith("."))


def read_folder(folder: Path, *, kind: str, k: int, w: int) -> list[Document]:
    """One document per notebook file in ``folder``, or per sub-folder holding one notebook."""
    sources: list[Source] = []
    prefix = "public: " if kind == "public" else ""
    for path in _notebooks_in(folder):
        sources.append(Source(f"{prefix}{path.stem}", kind, str(path), path=str(path)))
    for sub in sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink()
                      and not p.name.startswith((".", "__"))):
        books = _notebooks_in(sub)
        if not books:
            continue
        if len(books) > 1:
            raise IntegrityError(f"{sub}: holds {len(books)} notebooks; keep one per "
                                 "submission folder")
        sources.append(Source(f"{prefix}{sub.name}", kind, str(books[0]), path=str(books[0])))
    if not sources:
        raise IntegrityError(f"{folder}: no notebooks (.ipynb or .py) in it or its sub-folders")
    return read_sources(sources, k=k, w=w)


def read_export(path: Path, module_name: str, *, workdir: Path, k: int, w: int
                ) -> list[Document]:
    """One document per record of a Gradescope export (zip or folder)."""
    from staff.regrade.core import RegradeError, locate_notebook, open_export

    try:
        export = open_export(path, workdir=workdir)
    except RegradeError as exc:
        raise IntegrityError(str(exc)) from None
    sources: list[Source] = []
    for rec in export.records:
        who = ", ".join(f"{s.name} <{s.sid or s.email}>" for s in rec.students) or rec.key
        notebook, notes = locate_notebook(export.root / rec.key, module_name)
        student = ";".join(s.sid or s.email for s in rec.students)
        origin = f"{path}: {rec.key}"
        if notebook is None:  # no readable notebook: an empty document, with the reason
            sources.append(Source(who, "current", origin, cells=(), student=student,
                                  notes=tuple(notes)))
        else:
            sources.append(Source(who, "current", origin, path=str(notebook), student=student,
                                  notes=tuple(notes)))
    return read_sources(sources, k=k, w=w)


def is_export(path: Path) -> bool:
    """A zip, or a folder with a ``submission_metadata.yml`` at most two levels down."""
    if path.is_file():
        return path.suffix == ".zip"
    try:
        find_metadata(path)
    except GradescopeExportError:
        return False
    return True


def read_inputs(paths: list[Path], module_name: str, *, k: int, w: int,
                workdir: Path | None = None) -> list[Document]:
    """Every submission in the given exports and folders (labels made unique)."""
    docs: list[Document] = []
    with tempfile.TemporaryDirectory(prefix="tt-integrity-") as tmp:
        for i, path in enumerate(paths):
            path = Path(path)
            if not path.exists():
                raise IntegrityError(f"{path}: no such file or folder")
            if is_export(path):
                docs += read_export(path, module_name, workdir=(workdir or Path(tmp)) / str(i),
                                    k=k, w=w)
            elif path.is_dir():
                docs += read_folder(path, kind="current", k=k, w=w)
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


def attach_prints(docs: list[Document], provided: set[int]) -> None:
    """Drop every fingerprint of course-provided code from the documents."""
    for doc in docs:
        doc.prints = [p for p in doc.prints if p.hash not in provided]
