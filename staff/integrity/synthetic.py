"""Disguised copies, for proving `tito integrity` (tests and the benchmark).

Each disguise is what a student hiding a copy really does, applied to Python source:
renaming every local variable and argument, reformatting (and dropping comments), reordering
functions and methods, padding with dead code, and adding comments. ``disguise`` chains them.
All are deterministic given the seed, and the result still runs exactly as the original.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Callable

from coursekit.markers import EXPORT_DIRECTIVE as _EXPORT

_SKIP_NAMES = {"self", "cls"}


class _Renamer(ast.NodeTransformer):
    """Rename the arguments and local variables of every function, consistently per function."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def _fresh(self, used: set[str]) -> str:
        while True:
            name = "".join(self.rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(5))
            if name not in used:
                used.add(name)
                return name

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return self._rename_function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        return self._rename_function(node)

    def _rename_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        local: set[str] = set()
        args = node.args
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            if a.arg not in _SKIP_NAMES:
                local.add(a.arg)
        for star in (args.vararg, args.kwarg):
            if star is not None:
                local.add(star.arg)
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                local.add(sub.id)
        # Keyword-only and regular arguments are part of the API (callers pass them by name).
        api = {a.arg for a in [*args.args, *args.kwonlyargs, *args.posonlyargs]}
        local -= api
        used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | api
        mapping = {name: self._fresh(used) for name in sorted(local)}
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and sub.id in mapping:
                sub.id = mapping[sub.id]
            elif isinstance(sub, ast.arg) and sub.arg in mapping:
                sub.arg = mapping[sub.arg]
        self.generic_visit(node)
        return node


def _parse(source: str) -> tuple[ast.Module, bool]:
    lines = source.splitlines()
    export = bool(lines) and lines[0].strip() == _EXPORT
    return ast.parse("\n".join(lines[1:] if export else lines)), export


def _emit(tree: ast.Module, export: bool) -> str:
    text = ast.unparse(ast.fix_missing_locations(tree))
    return f"{_EXPORT}\n{text}\n" if export else text + "\n"


def rename(source: str, seed: int) -> str:
    tree, export = _parse(source)
    return _emit(_Renamer(random.Random(seed)).visit(tree), export)


def reformat(source: str, seed: int = 0) -> str:
    tree, export = _parse(source)
    return _emit(tree, export)


def reorder(source: str, seed: int) -> str:
    """Shuffle the top-level functions and the methods of every class (execution unchanged)."""
    rng = random.Random(seed)
    tree, export = _parse(source)

    def shuffle_defs(body: list[ast.stmt]) -> list[ast.stmt]:
        slots = [i for i, s in enumerate(body)
                 if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
        defs = [body[i] for i in slots]
        rng.shuffle(defs)
        out = list(body)
        for i, d in zip(slots, defs, strict=True):
            out[i] = d
        return out

    tree.body = shuffle_defs(tree.body)
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            node.body = shuffle_defs(node.body)
    return _emit(tree, export)


def pad(source: str, seed: int, *, every: int = 2) -> str:
    """Insert a dead statement after every ``every``-th statement of each function body."""
    rng = random.Random(seed)
    tree, export = _parse(source)
    templates = ["_unused = {n}", "if False:\n    print({n})", "assert {n} == {n}",
                 "_scratch = [{n}] * 0", "pass"]
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body: list[ast.stmt] = []
            for i, stmt in enumerate(node.body):
                body.append(stmt)
                last = i == len(node.body) - 1
                if i % every == every - 1 and not last:
                    snippet = rng.choice(templates).format(n=rng.randint(1, 99))
                    body.extend(ast.parse(snippet).body)
            node.body = body
    return _emit(tree, export)


def comment(source: str, seed: int) -> str:
    """Add a comment line above every ``def`` (layout changes, code does not)."""
    rng = random.Random(seed)
    words = ["helper", "compute the result", "TODO tidy", "see lecture", "edge case", "fast path"]
    out = []
    for line in source.splitlines():
        stripped = line.lstrip()
        if stripped.startswith("def "):
            indent = line[: len(line) - len(stripped)]
            out.append(f"{indent}# {rng.choice(words)}")
        out.append(line)
    return "\n".join(out) + "\n"


DISGUISES: dict[str, Callable[[str, int], str]] = {"rename": rename, "reformat": reformat, "reorder": reorder, "pad": pad,
             "comment": comment}


def disguise(source: str, seed: int, steps: tuple[str, ...] = ("rename", "reorder", "pad",
                                                                "comment")) -> str:
    """Apply the named disguises in order (each with its own seed derived from ``seed``)."""
    for i, step in enumerate(steps):
        source = DISGUISES[step](source, seed * 31 + i)
    return source
