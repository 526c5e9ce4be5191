"""The one exporter: notebook ``#| export`` cells -> a package module file.

Three callers use it: ``tito sync`` builds ``tinytorch_ref/<slug>.py`` from the solution
module (mode ``"reference"``), a student's ``tito export`` builds their own
``tinytorch/<slug>.py`` from their notebook, and the grader builds its view of a submission
(both mode ``"student"``). Standard library and the marker grammar (``coursekit.markers``)
only: the Gradescope zip and the student release's ``tools/coursekit/`` carry both files.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from coursekit.markers import CELL, EXPORT_DIRECTIVE, SOLUTION_WORD, is_export_source, tag_lines

_IMPORT_FROM = re.compile(r"^(\s*)from\s+tinytorch((?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s+import\s+")
_IMPORT_PLAIN = re.compile(r"^\s*import\s+tinytorch\b")


class ExportError(ValueError):
    """The notebook cannot be exported; the message is one line a student can act on."""


@dataclass(frozen=True)
class Cell:
    """A notebook cell: its type ('code', 'markdown', 'raw') and source text."""

    kind: str
    source: str
    index: int


def read_cells(path: Path) -> list[Cell]:
    """Read the cells of an ``.ipynb`` notebook or a jupytext percent ``.py`` file.

    Raises:
        ExportError: the file is missing, not UTF-8, not notebook JSON, or has no cells.
    """
    name = path.name
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ExportError(f"{name}: file not found") from None
    except IsADirectoryError:
        raise ExportError(f"{name}: is a folder, not a notebook") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ExportError(
            f"{name}: is not UTF-8 text (byte {exc.start}); save the notebook from Jupyter again"
        ) from None
    if path.suffix == ".py":
        return _percent_cells(text)
    if path.suffix != ".ipynb":
        raise ExportError(f"{name}: expected a .ipynb notebook")
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ExportError(
            f"{name}: is not valid notebook JSON (line {exc.lineno}: {exc.msg}); "
            "re-download it or restore it from the release"
        ) from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise ExportError(f"{name}: has no 'cells' list; is this really a Jupyter notebook?")
    cells = []
    for i, c in enumerate(nb["cells"]):
        if not isinstance(c, dict):
            raise ExportError(f"{name}: cell {i + 1} is not a JSON object")
        src = c.get("source", "")
        if isinstance(src, list):
            if not all(isinstance(s, str) for s in src):
                raise ExportError(f"{name}: cell {i + 1} source is not text")
            src = "".join(src)
        if not isinstance(src, str):
            raise ExportError(f"{name}: cell {i + 1} source is not text")
        cells.append(Cell(str(c.get("cell_type", "code")), src, i + 1))
    if not cells:
        raise ExportError(f"{name}: the notebook is empty; restore it from the release")
    return cells


def _percent_cells(text: str) -> list[Cell]:
    cells: list[Cell] = []
    kind: str | None = None
    lines: list[str] = []
    for line in text.splitlines():
        m = CELL.match(line)
        if m:
            if kind is not None:
                cells.append(Cell(kind, "\n".join(lines).strip("\n"), len(cells) + 1))
            header = m.group(1)
            kind = "markdown" if "[markdown]" in header else "raw" if "[raw]" in header else "code"
            lines = []
        elif kind is not None:
            lines.append(line)
    if kind is not None:
        cells.append(Cell(kind, "\n".join(lines).strip("\n"), len(cells) + 1))
    return cells


def is_export_cell(cell: Cell) -> bool:
    return cell.kind == "code" and is_export_source(cell.source)


def strip_solution_markers(lines: list[str]) -> list[str]:
    """Reference view of solution code: markers and stub lines removed, solution kept."""
    tags = tag_lines(lines)
    if not tags.balanced:
        raise ExportError(f"unbalanced BEGIN {SOLUTION_WORD} / END {SOLUTION_WORD} markers")
    return [t.text for t in tags.lines if t.kind in ("solution", "given")]


def _rewrite_imports(line: str, where: str) -> str:
    m = _IMPORT_FROM.match(line)
    if m:
        indent, sub = m.group(1), m.group(2)
        target = "." + sub[1:] if sub else "."
        return f"{indent}from {target} import " + line[m.end():]
    if _IMPORT_PLAIN.match(line):
        raise ExportError(
            f"{where}: use 'from tinytorch.<module> import <name>' instead of 'import tinytorch' "
            "inside an export cell"
        )
    return line


def export_module(source: Path, *, slug: str, number: int, title: str = "", mode: str = "student"
                  ) -> str:
    """Build the source of package module ``<slug>.py`` from a notebook's export cells.

    Args:
        source: a ``.ipynb`` notebook or a percent ``.py`` solution module.
        slug: module file name (``tensor`` -> ``tensor.py``).
        number: module number, for messages and the header.
        title: module title, for the header.
        mode: ``"reference"`` strips solution markers and stub lines; ``"student"`` keeps
            the code as written.

    Returns:
        Python source text that compiles.

    Raises:
        ExportError: no export cells, or an export cell does not compile (names the cell and line).
    """
    if mode not in ("reference", "student"):
        raise ValueError(f"mode must be 'reference' or 'student', not {mode!r}")
    cells = read_cells(source)
    chunks: list[str] = []
    for cell in cells:
        if not is_export_cell(cell):
            continue
        lines = cell.source.splitlines()
        first = next(i for i, ln in enumerate(lines) if ln.strip())
        lines = lines[first + 1:]
        if mode == "reference":
            try:
                lines = strip_solution_markers(lines)
            except ExportError as exc:
                raise ExportError(f"{source.name}: cell {cell.index}: {exc}") from None
        where = f"{source.name}: cell {cell.index}"
        lines = [_rewrite_imports(ln, where) for ln in lines]
        body = "\n".join(lines).strip("\n")
        try:
            compile(body + "\n", f"{source.name} cell {cell.index}", "exec")
        except SyntaxError as exc:
            line = (exc.lineno or 0) + first + 1
            raise ExportError(
                f"{source.name}: cell {cell.index}, line {line}: {exc.msg}; fix the cell, "
                "run it in Jupyter to check, and save"
            ) from None
        except ValueError as exc:  # e.g. null bytes
            raise ExportError(f"{source.name}: cell {cell.index}: {exc}") from None
        chunks.append(body)
    if not chunks:
        raise ExportError(
            f"{source.name}: no cells start with '{EXPORT_DIRECTIVE}'; your implementation "
            "cells lost that first line — restore it from the release notebook"
        )
    label = f"module {number:02d}" + (f" ({title})" if title else "")
    header = (f"# Generated by tito export from {source.name} ({label}); do not edit here —\n"
              "# edit the notebook (or the solution module) and export again.\n")
    text = header + "\n\n".join(chunks) + "\n"
    compile(text, f"{slug}.py", "exec")
    return text


def defined_names(text: str) -> set[str]:
    """Top-level names a module's source defines (functions, classes, assignments)."""
    import ast

    names: set[str] = set()
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def missing_definitions(text: str, expected: list[str], *, notebook: str, number: int) -> str | None:
    """A message naming what the export no longer defines, or None when nothing is missing.

    ``expected`` are the names the module's given cells define (the release's package file).
    A name goes missing when a cell lost its first line ``#| export`` or was deleted.
    """
    missing = sorted(set(expected) - defined_names(text))
    if not missing:
        return None
    shown = ", ".join(missing[:6]) + (f" and {len(missing) - 6} more" if len(missing) > 6 else "")
    return (f"{notebook}: the export no longer defines {shown}, which module {number:02d}'s "
            f"cells define; a cell lost its first line '{EXPORT_DIRECTIVE}' or was deleted: put "
            "the line back (or copy the cell from the release notebook) and export again")


def write_module(text: str, package_dir: Path, slug: str) -> Path:
    """Write ``text`` as ``package_dir/<slug>.py`` atomically; returns the path."""
    package_dir.mkdir(parents=True, exist_ok=True)
    target = package_dir / f"{slug}.py"
    tmp = target.with_suffix(".py.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(target)
    return target


_SENTINEL = "  # @@solution-line@@"


def solution_line_numbers(source: Path, *, slug: str, number: int, title: str = "") -> set[int]:
    """1-based lines of the reference export that come from inside solution blocks.

    Used by mutation testing: the hidden suite must guard what students write, so mutants are
    made only on these lines. Computed by exporting a copy of the solution module whose
    solution lines carry a sentinel comment.
    """
    import tempfile

    marked = source.read_text(encoding="utf-8").splitlines()
    for t in tag_lines(marked).lines:  # one-line solutions too: the leak scan counts them
        if t.kind == "solution" and t.text.strip() and not t.text.rstrip().endswith("\\") \
                and not t.text.lstrip().startswith("#"):
            marked[t.number - 1] = t.text + _SENTINEL
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / source.name
        copy.write_text("\n".join(marked) + "\n", encoding="utf-8")
        text = export_module(copy, slug=slug, number=number, title=title, mode="reference")
    plain = export_module(source, slug=slug, number=number, title=title, mode="reference")
    if text.replace(_SENTINEL, "") != plain:
        raise ExportError(f"{source.name}: could not map solution lines (sentinel changed code)")
    return {i for i, ln in enumerate(text.splitlines(), 1) if ln.endswith(_SENTINEL)}
