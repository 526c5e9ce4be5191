"""What an author's solution module must hold, checked: every function students write has a
stub, and can be replaced by that stub on its own.

A *solution function* is a function or method of an ``#| export`` cell with a solution block
(``# BEGIN SOLUTION NO PROMPT`` ... ``# END SOLUTION``) in it. :func:`marker_problems` finds,
without running anything, what would ship broken: a block with no ``# STUB`` line after it (the
student would get a function without a body), otter's prompting ``# BEGIN SOLUTION`` in an
export cell (otter replaces it with ``...``), unbalanced markers, a ``# STUB`` line outside any
solution function. :func:`stub_one` builds the reference module with exactly one function
replaced by its stub: CI runs the public checks and the hidden suite on each of those (some
public check must fail, the hidden score must drop), so no function can go unchecked.
"""

from __future__ import annotations

import ast
import builtins
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from coursekit.export import Cell, export_module, read_cells
from coursekit.markers import CELL, SOLUTION_WORD, STUB, is_export_source, tag_lines

_SOL = SOLUTION_WORD  # spelled through the grammar, so this file holds no marker text


class AuthoringError(ValueError):
    """A solution module breaks the authoring contract (one line, file:line: what to do)."""


@dataclass(frozen=True)
class SolutionFunction:
    """A function students write: its qualified name and its lines in the solution file."""

    name: str
    first_line: int  # 1-based, the ``def`` line (decorators excluded)
    last_line: int


def _export_cells(path: Path) -> list[tuple[Cell, int]]:
    """(cell, 1-based file line of its first source line) of every export cell."""
    lines = path.read_text(encoding="utf-8").splitlines()
    starts = [i + 2 for i, ln in enumerate(lines) if CELL.match(ln)]
    out = []
    for cell, start in zip(read_cells(path), starts, strict=False):
        if cell.kind == "code" and is_export_source(cell.source):
            offset = start
            while offset <= len(lines) and not lines[offset - 1].strip():
                offset += 1  # jupytext strips leading blank lines from a cell's source
            out.append((cell, offset))
    return out


def _functions(source: str) -> list[tuple[str, int, int]]:
    """(qualified name, first line, last line) of every function and method, innermost last."""
    tree = ast.parse(source)
    found: list[tuple[str, int, int]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                found.append((name, child.lineno, child.end_lineno or child.lineno))
                walk(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
            else:
                walk(child, prefix)

    walk(tree, "")
    return found


def _innermost(functions: list[tuple[str, int, int]], line: int) -> tuple[str, int, int] | None:
    inside = [f for f in functions if f[1] <= line <= f[2]]
    return min(inside, key=lambda f: f[2] - f[1]) if inside else None


def scan(path: Path) -> tuple[list[SolutionFunction], list[str]]:
    """The solution functions of a solution module, and every marker problem found.

    Problems are one line each: ``file:line: function: what is wrong; what to do``.
    """
    shown = path.as_posix()
    try:
        shown = path.resolve().relative_to(Path.cwd()).as_posix()
    except ValueError:
        pass
    problems: list[str] = []
    result: dict[str, SolutionFunction] = {}
    for cell, start in _export_cells(path):
        lines = cell.source.splitlines()
        try:
            functions = _functions(cell.source)
        except SyntaxError as exc:
            problems.append(f"{shown}:{start + (exc.lineno or 1) - 1}: the export cell does not "
                            f"parse ({exc.msg})")
            continue
        tags = tag_lines(lines)
        stubbed: set[str] = set()
        solved: dict[str, int] = {}
        for t in tags.lines:
            where = f"{shown}:{start + t.number - 1}"
            if t.kind == "begin":
                fn = _innermost(functions, t.number)
                if t.prompt:
                    problems.append(f"{where}: {fn[0] if fn else 'cell'}: '# BEGIN {_SOL}' in an "
                                    f"export cell ships '...' to students; write '# BEGIN {_SOL} "
                                    "NO PROMPT' and a '# STUB' line after the block")
                if fn is None:
                    problems.append(f"{where}: a solution block outside any function; students "
                                    "write functions, put it inside one")
                else:
                    solved.setdefault(fn[0], t.number)
            elif t.kind == "end" and t.number in tags.stray_ends:
                problems.append(f"{where}: '# END {_SOL}' without a BEGIN")
            elif t.kind == "stub" and t.depth == 0:
                fn = _innermost(functions, t.number)
                if fn is None:
                    problems.append(f"{where}: a '# STUB' line outside any function")
                else:
                    stubbed.add(fn[0])
        if tags.unclosed:
            problems.append(f"{shown}:{start + tags.unclosed[-1] - 1}: a solution block is never "
                            f"closed with '# END {_SOL}'")
        for name, first, last in functions:
            if name in solved:
                result.setdefault(name, SolutionFunction(name, start + first - 1,
                                                         start + last - 1))
                if name not in stubbed:
                    problems.append(f"{shown}:{start + solved[name] - 1}: {name}: no '# STUB' line "
                                    "after its solution block, so students would get a function "
                                    "without a body; add 'raise NotImplementedError(\"module NN: "
                                    f"implement {name} (see its docstring)\")  # STUB'")
        for name in sorted(stubbed - set(solved)):
            problems.append(f"{shown}: {name}: has a '# STUB' line but no solution block")
    return list(result.values()), problems


def stub_one(path: Path, function: SolutionFunction, *, slug: str, number: int) -> str:
    """The reference module with only ``function``'s solution replaced by its stub."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[str] = []
    for t, line in zip(tag_lines(lines).lines, lines, strict=True):
        inside = function.first_line <= t.number <= function.last_line
        if inside and (t.kind in ("begin", "end") or t.depth):
            continue  # the function's solution blocks, markers and all
        out.append(STUB.sub("", line) if inside else line)
    with tempfile.TemporaryDirectory(prefix="tt-stub-one-") as tmp:
        copy = Path(tmp) / path.name
        copy.write_text("\n".join(out) + "\n", encoding="utf-8")
        return export_module(copy, slug=slug, number=number, mode="reference")


def _module_level_names(tree: ast.Module) -> set[str]:
    """Names a function body can read without defining them: builtins, imports, and every
    function, class and assignment at module level."""
    names = set(dir(builtins))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            names.update(n.id for n in ast.walk(node)
                         if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    return names


def unexplained_tail_names(path: Path) -> list[str]:
    """Names the code kept after a stub reads but no one defines, missing from the docstring.

    A solution function may keep lines after its ``# STUB`` raise (``return _result(out, ...)``)
    that read variables the student's code must define (``out``, ``axis``). The docstring has
    to name each (as ````out```` or ``out =``), or the APPROACH cannot be followed as written.
    Returns one line per problem: ``file: function: name``.
    """
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    known = _module_level_names(tree)
    solved = {f.name for f in scan(path)[0]}
    problems: list[str] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                if name in solved:
                    problems.extend(f"{path.name}: {name}: {n}" for n in _tail_gaps(child, known))
                walk(child, f"{name}.")

    walk(tree, "")
    return problems


def _tail_gaps(fn: ast.FunctionDef | ast.AsyncFunctionDef, known: set[str]) -> list[str]:
    raises = [i for i, st in enumerate(fn.body)
              if isinstance(st, ast.Raise) and "NotImplementedError" in ast.unparse(st)]
    if not raises:
        return []
    tail = fn.body[raises[-1] + 1:]
    args = fn.args
    params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    params |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    loaded: set[str] = set()
    stored: set[str] = set()
    for st in tail:
        for n in ast.walk(st):
            if isinstance(n, ast.Name):
                (loaded if isinstance(n.ctx, ast.Load) else stored).add(n.id)
    doc = ast.get_docstring(fn) or ""
    return [n for n in sorted(loaded - stored - params - known)
            if not re.search(rf"``{re.escape(n)}\b|\b{re.escape(n)} =", doc)]
