"""Mutation testing of a hidden suite: does it catch plausible bugs in the reference?

A *mutant* is the reference module with one small change, made on its AST:

* ``op``: an operator swap (``+``/``-``, ``*``/``/``, ``<``/``<=``, ``==``/``!=``, and/or, ...);
* ``const``: an off-by-one integer constant;
* ``drop``: a dropped term (``a + b`` -> ``a``), a dropped ``not`` or unary minus;
* ``axis``: a wrong ``axis``/``dim`` keyword or a flipped ``keepdims``/``keepdim``.

Plus the module's plausible bugs (``bugs=``; the repository's gate reads the buggy catalogue,
``BUGS = {"name": [("exact old text", "new text"), ...]}``, with :func:`catalogue_bugs`).
Each mutant replaces the module in a copy of the reference package (hard links to one base
copy, plus the mutated file) and runs the suite in a sandboxed child; it is *killed* when any
case errors, crashes or differs from the reference's value, or, when nothing else failed,
*killed by timeout* (a case used more than its CPU-second limit:
:mod:`autograder.harness.clock`, so a busy machine gives the same verdicts as an idle one). The
report records each kill's reason: the first case, in suite order, that failed for a reason
other than time. A mutant's run therefore stops at that case (the cases after it cannot change
the reason; a timeout does not stop it, since a later failure would outrank it). The children
are forked from a fork server that has loaded NumPy and the suite once
(:mod:`autograder.harness.zygote`; ``fork=False`` starts a fresh interpreter for each, as
grading does: the verdicts are the same). Mutants listed in
``equivalent_mutants.txt`` next to the suite (one id per line, ``#`` comments) are reported
but left out of the kill rate. The unmutated module runs first as a control: if it does not
pass, no verdict is given.

Coverage-guided case selection (:func:`select_cases`, as mutmut and Stryker do it): one traced
run of the reference, staged and sandboxed as a mutant is (:func:`case_coverage`), records
which lines of the module each case and the package import execute; each AST mutant then runs
only the cases that executed a line of the statement it changes (in run order; a stage left
without a case is not started), and one that no case reaches survives without a run; a
catalogue bug, only the cases that executed a line of a function body it replaces
(:func:`changed_bodies`). Cases do not depend on each other, and one that never reaches the
change runs the reference's code, so the first failing case, the reason and ``killed_by`` are
those of a run of every case. Code the import runs, a bug that changes anything but function
bodies, a failing traced run or a reference whose ``ast.unparse`` text (the mutants' layout)
fails a case: every case is run (docs/testing.md, *Case selection*).

:func:`module_mutation` caches a module's verdicts in ``build/mutation/cache/`` under the
SHA-256 of all their inputs; ``TT_MUTATION_CACHE=off`` always runs (CI sets it).

Run ``python -m autograder.harness.mutation 01 --report build/mutation/01_tensor.md``;
it exits non-zero when the kill rate is below ``--min-rate`` (0.9).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder.harness.goldens import Expected, compute_expected, load_suite, standin_payloads
from autograder.harness.lanes import run_stages
from autograder.harness.limits import Limits
from autograder.harness.package import build_package, pyc_beside
from autograder.harness.supervisor import Outcome, RunReport, RunSpec, start_zygote
from autograder.harness.zygote import Zygote
from autograder.standins import covering_entry, stage_plan, statement_lines
from autograder.suite import Case, Suite, compare

if TYPE_CHECKING:
    from coursekit.course import Course  # noqa: PLC0415 - types only: the zip has no course.py

_BINOP_SWAPS: dict[type, type] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div, ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult, ast.MatMult: ast.Mult,
}
_CMP_SWAPS: dict[type, type] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
_AXIS_NAMES = {"axis", "dim", "dim0", "dim1", "axes"}
_FLAG_NAMES = {"keepdims", "keepdim"}
_SKIP_FUNCS = {"__repr__", "__str__", "__format__"}


@dataclass(frozen=True)
class Mutant:
    """One mutant: a stable id, a readable description and its module source.

    ``span`` is ``(first, last)`` line of the reference's statement that holds the change
    (the innermost one, decorators included): a case that executes none of those lines
    runs the same code on the mutant as on the reference (:func:`select_cases`). ``(0, 0)``
    (hand-written bugs: whole-source replacements) means none: then ``bodies`` are the
    reference's lines of the function bodies the bug replaces (:func:`changed_bodies`, filled
    in by :func:`run_mutation`), and when there are none, every case is run.
    """

    id: str
    description: str
    line: int
    source: str
    span: tuple[int, int] = (0, 0)
    bodies: tuple[tuple[int, int], ...] = ()


@dataclass
class MutationReport:
    """Kill statistics for one module.

    ``reasons`` maps each killed mutant's id to how the suite caught it: ``wrong value``,
    ``raised``, ``crashed``, ``import failed`` or ``timeout``. A mutant counts as killed by
    ``timeout`` only when nothing else failed; deadlines are CPU seconds (see
    :mod:`autograder.harness.clock`), so the same mutant times out on a busy machine and an
    idle one.
    """

    module: str
    killed: list[Mutant] = field(default_factory=list)
    survived: list[Mutant] = field(default_factory=list)
    equivalent: list[Mutant] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)
    #: The case whose failure killed each mutant ("" when the import failed).
    killed_by: dict[str, str] = field(default_factory=dict)
    cached: str = ""  # the inputs digest when this report came from the cache

    @property
    def total(self) -> int:
        return len(self.killed) + len(self.survived)

    @property
    def rate(self) -> float:
        return len(self.killed) / self.total if self.total else 1.0

    def foreign_kills(self, suite: Suite, source: str) -> list[tuple[str, str, str, str]]:
        """Mutants whose killing case grades another unit than the one the mutant is in:
        ``(mutant id, its unit, killing case, that case's unit)`` (one bug, one charge).
        Mutants outside every unit, and kills without a case (the import failed), are left
        out."""
        units = {c.name: c.unit for c in suite.cases}
        out = []
        for m in self.killed:
            case = self.killed_by.get(m.id, "")
            entry = covering_entry(source, m.line) if m.line else None
            mine = next((u.name for u in suite.units.values() if entry is not None and (
                entry in u.entries or entry.partition(".")[0] in u.entries)), None)
            if case and mine and units.get(case) != mine:
                out.append((m.id, mine, case, units.get(case, "")))
        return out

    @property
    def timed_out(self) -> list[Mutant]:
        """Mutants killed only because a case ran out of time."""
        return [m for m in self.killed if self.reasons.get(m.id) == "timeout"]

    def to_markdown(self) -> str:
        lines = [f"# Mutation report · {self.module}", "",
                 f"- mutants: {self.total} (+{len(self.equivalent)} marked equivalent)",
                 f"- killed: {len(self.killed)} (by timeout: {len(self.timed_out)})",
                 f"- survived: {len(self.survived)}",
                 f"- kill rate: {self.rate:.1%}", ""]
        if self.cached:
            lines += [f"Verdicts reused from the cache (inputs SHA-256 {self.cached[:16]}...).",
                      ""]
        if self.survived:
            lines += ["## Surviving mutants", "", "| id | line | change |", "|---|---|---|"]
            lines += [f"| `{m.id}` | {m.line} | {m.description} |" for m in self.survived]
            lines.append("")
        if self.timed_out:
            lines += ["## Killed by timeout", "", "| id | line | change |", "|---|---|---|"]
            lines += [f"| `{m.id}` | {m.line} | {m.description} |" for m in self.timed_out]
        return "\n".join(lines).rstrip("\n") + "\n"

    def to_json(self) -> dict[str, Any]:
        def rows(ms: list[Mutant]) -> list[list[Any]]:
            return [[m.id, m.description, m.line] for m in ms]

        return {"module": self.module, "killed": rows(self.killed),
                "survived": rows(self.survived), "equivalent": rows(self.equivalent),
                "reasons": dict(sorted(self.reasons.items())),
                "killed_by": dict(sorted(self.killed_by.items()))}

    @classmethod
    def from_json(cls, doc: dict[str, Any], *, cached: str = "") -> MutationReport:
        def muts(rows: list[list[Any]]) -> list[Mutant]:
            return [Mutant(str(i), str(d), int(ln), "") for i, d, ln in rows]

        return cls(module=str(doc["module"]), killed=muts(doc["killed"]),
                   survived=muts(doc["survived"]), equivalent=muts(doc["equivalent"]),
                   reasons={str(k): str(v) for k, v in doc["reasons"].items()},
                   killed_by={str(k): str(v) for k, v in (doc.get("killed_by") or {}).items()},
                   cached=cached)


# ----------------------------------------------------------------------------- generation
def _skippable(node: ast.AST, lines: list[str]) -> bool:
    ln = getattr(node, "lineno", 0)
    return ln == 0 or "pragma: no mutate" in lines[ln - 1]


def _candidates(node: ast.AST) -> Iterator[tuple[str, str, Any]]:
    """(kind, description, mutate-function) for one node."""
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOP_SWAPS:
        new = _BINOP_SWAPS[type(node.op)]
        yield ("op", f"{type(node.op).__name__} -> {new.__name__}",
               lambda n, new=new: setattr(n, "op", new()))
        if isinstance(node.op, (ast.Add, ast.Sub)):
            yield ("drop", f"drop right operand of {type(node.op).__name__}",
                   lambda n: ("replace", n.left))
    elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _CMP_SWAPS:
        new = _CMP_SWAPS[type(node.ops[0])]
        yield ("op", f"{type(node.ops[0]).__name__} -> {new.__name__}",
               lambda n, new=new: setattr(n, "ops", [new()]))
    elif isinstance(node, ast.BoolOp):
        new = ast.Or if isinstance(node.op, ast.And) else ast.And
        yield ("op", f"{type(node.op).__name__} -> {new.__name__}",
               lambda n, new=new: setattr(n, "op", new()))
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
        yield ("drop", f"drop {type(node.op).__name__}", lambda n: ("replace", n.operand))
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        v = node.value
        yield ("const", f"{v} -> {v + 1}", lambda n, v=v: setattr(n, "value", v + 1))
        if v != 0:
            yield ("const", f"{v} -> {v - 1}", lambda n, v=v: setattr(n, "value", v - 1))
    elif isinstance(node, ast.keyword) and node.arg in _AXIS_NAMES and isinstance(
            node.value, ast.Constant) and type(node.value.value) is int:
        v = node.value.value
        w = 0 if v != 0 else 1
        yield ("axis", f"{node.arg}={v} -> {node.arg}={w}",
               lambda n, w=w: setattr(n.value, "value", w))
    elif isinstance(node, ast.keyword) and node.arg in _FLAG_NAMES and isinstance(
            node.value, ast.Constant) and type(node.value.value) is bool:
        v = node.value.value
        yield ("axis", f"{node.arg}={v} -> {not v}",
               lambda n, v=v: setattr(n.value, "value", not v))


def _in_functions(tree: ast.Module) -> list[ast.AST]:
    """Nodes inside function bodies (not docstrings, not repr/str), in a stable order."""
    out: list[ast.AST] = []

    def walk(node: ast.AST, inside: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if child.name in _SKIP_FUNCS:
                    continue
                body = child.body
                start = 1 if body and isinstance(body[0], ast.Expr) and isinstance(
                    body[0].value, ast.Constant) else 0
                for stmt in body[start:]:
                    out.append(stmt)
                    walk(stmt, True)
                continue
            if inside:
                out.append(child)
            walk(child, inside)

    walk(tree, False)
    return out


def sites(tree: ast.Module) -> dict[int, str]:
    """Where each node inside a function body is, as a mutant id names it: ``id(node) ->
    "<qualname>+<k>"``, with ``k`` the node's line counted from the first line of code of its
    innermost function (after the docstring). Docstrings and other functions can change
    without moving an id, so a list of equivalent mutants survives edits elsewhere."""
    out: dict[int, str] = {}

    def walk(node: ast.AST, qual: str, anchor: int) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{qual}.{child.name}" if qual else child.name
                if isinstance(child, ast.ClassDef):
                    walk(child, name, anchor)
                    continue
                body = child.body
                start = 1 if len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(
                    body[0].value, ast.Constant) else 0
                walk(child, name, body[start].lineno)
                continue
            if anchor and hasattr(child, "lineno"):
                out[id(child)] = f"{qual}+{child.lineno - anchor}"
            walk(child, qual, anchor)

    walk(tree, "", 0)
    return out


def mutant_id(kind: str, site: str, node: ast.AST, text: str) -> str:
    """``kind@site:column:change``, e.g. ``op@GPT.forward+3:11:Add -> Sub``."""
    return f"{kind}@{site}:{getattr(node, 'col_offset', 0)}:{text}"


def generate_mutants(source: str, *, limit: int | None = None,
                     lines: set[int] | None = None) -> list[Mutant]:
    """Every single-site mutant of ``source`` (a module file), in source order.

    Args:
        limit: stop after this many mutants.
        lines: mutate only nodes starting on these 1-based lines (e.g. the solution lines
            students write); None mutates every function body.
    """
    tree = ast.parse(source)
    src_lines = source.splitlines()
    nodes = _in_functions(tree)
    where = sites(tree)
    spans = statement_spans(tree)
    text = _Unparsed(tree)
    check = text.checker()
    mutants: list[Mutant] = []
    seen: set[str] = set()
    for node in nodes:
        if _skippable(node, src_lines):
            continue
        line = getattr(node, "lineno", 0)  # never 0 here: _skippable drops unplaced nodes
        if lines is not None and line not in lines:
            continue
        top = text.top[id(node)]
        for kind, change, fn in _candidates(node):
            mid = mutant_id(kind, where[id(node)], node, change)
            if mid in seen:
                continue
            seen.add(mid)
            # mutate the one tree in place and put it back: a copy of the whole module per
            # mutant cost more than the rest of generating it
            with _mutated(tree.body[top], node, fn) as applied:
                if not applied:
                    continue
                try:  # (every node of a change already has its location: none to fix)
                    piece = text.piece(top)
                    check(piece, top)
                except (SyntaxError, ValueError, TypeError):
                    continue
                text_src = text.with_piece(top, piece)
            mutants.append(Mutant(mid, change, line, text_src, spans[id(node)]))
            if limit is not None and len(mutants) >= limit:
                return mutants
    return mutants


class _Unparsed:
    """``ast.unparse(tree)`` kept as one text per top-level statement, so that a change
    inside one statement costs the unparsing of that statement only (the rest of the module
    is reused: unparsing the whole module per mutant was most of making it).

    ``ast.unparse`` of a module writes its docstring, then each statement, and a statement's
    text depends on what came before only through whether anything did (the blank line
    before a ``def`` or ``class``): the joined pieces are ``ast.unparse(tree)`` byte for
    byte (``test_mutants_made_in_place_are_those_of_a_fresh_copy_each``). ``top`` maps
    ``id(node)`` of every node to the index in ``tree.body`` of its top-level statement."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.top = {id(n): i for i, stmt in enumerate(tree.body) for n in ast.walk(stmt)}
        u = ast._Unparser()  # type: ignore[attr-defined]  # what ast.unparse uses
        u._source = []
        body = tree.body
        self.head = ""
        doc = ast.get_docstring(tree, clean=False)
        if doc is not None and isinstance(body[0], ast.Expr):
            u._write_docstring(body[0].value)
            self.head = "".join(u._source)
        self.pieces = [self.piece(i) for i in range(len(body))]

    def piece(self, i: int) -> str:
        """Top-level statement ``i``'s text as the tree is now."""
        if i == 0 and self.head:
            return ""  # (the docstring is the head)
        u = ast._Unparser()  # type: ignore[attr-defined]
        before = bool(self.head) or i > 0
        u._source = ["."] if before else []
        u.traverse(self.tree.body[i])
        return "".join(u._source[1:] if before else u._source)

    def with_piece(self, i: int, piece: str) -> str:
        """The module's text with top-level statement ``i``'s text replaced by ``piece``."""
        return "".join([self.head, *self.pieces[:i], piece, *self.pieces[i + 1:]])

    def checker(self) -> Callable[[str, int], None]:
        """``check(piece, i)`` raises what ``compile`` raises for the module's text with
        statement ``i``'s text replaced by ``piece``, compiling that one statement (after the
        module's ``__future__`` imports): a change inside a top-level statement can make only
        that statement fail to compile (a function's or class's scope ends with it), when
        the unchanged text compiles. If it does not, every check compiles the whole text.
        Compiling the whole module per mutant was most of generating it."""
        def whole(piece: str, i: int) -> None:
            compile(self.with_piece(i, piece), "<mutant>", "exec")

        try:
            whole(self.pieces[0], 0)
        except (SyntaxError, ValueError, TypeError):
            return whole
        future = "".join(f"{ast.unparse(stmt)}\n" for stmt in self.tree.body
                         if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__")

        def alone(piece: str, i: int) -> None:
            compile(future + piece, "<mutant>", "exec")  # (inherits, as the whole text did)

        return alone


def _extent(stmts: list[ast.stmt]) -> tuple[int, int]:
    """The first and last line any node of ``stmts`` is on (decorators, bodies, continuation
    lines: every line executing them can report)."""
    placed = [n for s in stmts for n in ast.walk(s) if hasattr(n, "lineno")]
    return (min(n.lineno for n in placed),
            max(getattr(n, "end_lineno", None) or n.lineno for n in placed))


def statement_spans(tree: ast.Module) -> dict[int, tuple[int, int]]:
    """``id(node) -> (first, last)``: the lines of the innermost statement holding each node
    inside a statement (its whole extent: decorators, a compound statement's body).

    Executing any part of a node executes bytecode of its statement, and CPython reports a
    line event for a line of that statement when it enters it (a constant folded into a
    tuple, a continuation line: the event may name another line of the statement, never a
    line outside it), so "no line of the span ran" proves "the node never ran"."""
    out: dict[int, tuple[int, int]] = {}

    def walk(node: ast.AST, span: tuple[int, int]) -> None:
        for child in ast.iter_child_nodes(node):
            inner = span
            if isinstance(child, ast.stmt):
                inner = _extent([child])
            out[id(child)] = inner
            walk(child, inner)

    walk(tree, (0, 0))
    return out


@contextlib.contextmanager
def _mutated(tree: ast.AST, node: ast.AST, fn: Any) -> Iterator[bool]:
    """Apply one candidate's change to ``node`` inside ``tree``; undo it on exit.

    A change sets fields of ``node`` or of a direct child (an operator, a constant, a
    keyword's value), or replaces ``node`` by one of its children in its parent. Yields
    False when the replacement finds no parent (nothing is changed then).
    """
    saved = [(n, dict(vars(n))) for n in (node, *ast.iter_child_nodes(node))]
    try:
        result = fn(node)
        if isinstance(result, tuple) and result[0] == "replace":
            where = _replace(tree, node, result[1])
            if where is None:
                yield False
                return
            try:
                yield True
            finally:
                holder, name, index = where
                if index is None:
                    setattr(holder, name, node)
                else:
                    getattr(holder, name)[index] = node
            return
        yield True
    finally:
        for n, fields in saved:
            vars(n).clear()
            vars(n).update(fields)


def _replace(tree: ast.AST, old: ast.AST, new: ast.AST
             ) -> tuple[ast.AST, str, int | None] | None:
    """Put ``new`` where ``old`` is (the first holder in ``ast.walk`` order); returns
    (holder, field, list index or None), or None when ``old`` is nowhere in ``tree``."""
    for parent in ast.walk(tree):
        for name, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, name, new)
                return parent, name, None
            if isinstance(value, list):
                for j, item in enumerate(value):
                    if item is old:
                        value[j] = new
                        return parent, name, j
    return None


# ----------------------------------------------------------------------------- running
#: Limits for one mutant: CPU seconds per case and for the import (load does not change them);
#: the whole run's wall-clock limit is only a backstop, never reached by a mutant that stops.
MUTANT_LIMITS = Limits(test_timeout_s=5.0, run_timeout_s=600.0, import_timeout_s=10.0)
_TIME_STATUSES = {"timeout", "not_run"}


def _case_verdict(o: Outcome, c: Case, exp: Expected) -> tuple[str, str]:
    """(reason, detail) for one case: ("", "") when it passed, ``timeout`` when it only ran
    out of time, else why it failed (``raised``, ``crashed``, ``wrong value``)."""
    if o.status in _TIME_STATUSES:
        return "timeout", f"{c.name}: {o.message}"
    if o.status == "error":
        return "raised", f"{c.name}: {o.message}"
    if o.status != "result":
        return "crashed", f"{c.name}: {o.status} {o.message}"
    if c.name not in exp.values:
        return "wrong value", f"{c.name}: the reference has no value"
    try:
        ok, msg = compare(o.value, exp.values[c.name], c)
    except Exception as exc:  # noqa: BLE001
        ok, msg = False, f"comparison raised {type(exc).__name__}"
    return ("", "") if ok else ("wrong value", f"{c.name}: {msg}")


def run_order(suite: Suite) -> list[Case]:
    """The cases in the order a run meets them: stage by stage (:meth:`Suite.stages`)."""
    return [c for stage in suite.stages() for c in stage]


def _kill_reason(report: RunReport, suite: Suite, exp: Expected) -> tuple[str, str]:
    """(reason, detail) why the suite rejects this run; ("", "") when every case passes.

    The first case, in run order (:func:`run_order`), that failed for a reason other than
    time decides; a failure that is only about time (a case or the import stopped at its
    deadline) is reported as ``timeout`` only when no case failed for another reason. The
    run stops at its first such failure (:func:`_stops_run`): every case before it passed or
    ran out of time, and the cases it skipped could not change this. The detail starts with
    the deciding case's name.
    """
    if report.fatal is not None:
        reason = "timeout" if "took longer than" in report.fatal else "import failed"
        return reason, report.fatal
    timing = ""
    for c in run_order(suite):
        o = report.outcomes.get(f"case:{c.name}")
        if o is None or o.status == "skipped":  # (not selected: :func:`select_cases`)
            continue
        reason, detail = _case_verdict(o, c, exp)
        if reason == "timeout":
            timing = timing or detail
        elif reason:
            return reason, detail
    return ("timeout", timing) if timing else ("", "")


def _stops_run(suite: Suite, exp: Expected) -> Callable[[Outcome], bool]:
    """``RunSpec.stop_after`` for a mutant: stop at the first case that fails for a reason
    other than time (the one :func:`_kill_reason` reports); a timeout goes on, since a
    later failure would outrank it."""
    by_item = {f"case:{c.name}": c for c in suite.cases}

    def stop(o: Outcome) -> bool:
        c = by_item.get(o.item)
        return c is not None and _case_verdict(o, c, exp)[0] not in ("", "timeout")

    return stop


def _mutant_package(base: Path, dest: Path, *, slug: str, source: str,
                    package: str = "tinytorch") -> None:
    """``dest/<package>/``: the base package (the reference as :func:`build_package` lays
    it out, trusted bytecode included) with ``<slug>.py`` replaced by ``source`` and no
    bytecode for it, as ``build_package(student_source=source)`` makes it. Every other file
    is a hard link to the base's (a copy where links are not possible): root-owned and
    read-only to the sandbox, like a copy."""
    src_root, out_root = base / package, dest / package
    own = {Path(f"{slug}.py"), pyc_beside(Path(f"{slug}.py"))}
    for d, _dirs, files in os.walk(src_root):
        rel = Path(d).relative_to(src_root)
        (out_root / rel).mkdir(exist_ok=True)
        for name in files:
            if rel / name in own:
                continue
            try:
                os.link(Path(d) / name, out_root / rel / name)
            except OSError:
                shutil.copy2(Path(d) / name, out_root / rel / name)
    (out_root / f"{slug}.py").write_text(source, encoding="utf-8")


def _stage_mutant(mutant: Mutant, *, suite: Suite, suite_path: Path, exp: Expected,
                  base: Path, slug: str, limits: Limits, payloads: dict[str, Any],
                  zygote: Zygote | None = None, cases: set[str] | None = None,
                  trace: bool = False) -> RunReport:
    """Run the suite, sandboxed and staged as in grading (stand-ins: the unmutated
    reference's units), against the package with ``mutant``, up to its first failing case.

    ``cases``: run only these (each stage keeps its order; a stage left empty is not
    started); None runs all. ``trace``: record the lines each case executes and run to the
    end (the traced control run of :func:`case_coverage`)."""
    scratch = Path(tempfile.mkdtemp(prefix="ttmut-"))
    try:
        (scratch / "pkg").mkdir()
        _mutant_package(base, scratch / "pkg", slug=slug, source=mutant.source)
        first, later = stage_plan(suite, payloads)
        standins: dict[str, Any] | None = None
        if cases is not None:
            wanted = {f"case:{name}" for name in cases}
            first = [i for i in first if i in wanted]
            later = [([i for i in items if i in wanted], units) for items, units in later]
            later = [(items, units) for items, units in later if items]
            if not first and later:
                # the first stage imports the package for the report's fatal error; with no
                # case of its own, the first later stage is the one to start (same import)
                first, standins = later.pop(0)
        return _run_staged(scratch, suite_path, slug, suite, exp, limits, zygote, first,
                           later, trace, standins)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _run_staged(scratch: Path, suite_path: Path, slug: str, suite: Suite, exp: Expected,
                limits: Limits, zygote: Zygote | None, first: list[str],
                later: list[tuple[list[str], dict[str, Any]]], trace: bool,
                standins: dict[str, Any] | None) -> RunReport:
    """:func:`run_stages` with a mutant's spec: ``first`` in the first child (with
    ``standins``, sealed, when it is a later stage's items), then ``later``."""
    items = [f"case:{c.name}" for c in suite.cases]
    return run_stages(RunSpec(
        package_parent=scratch / "pkg", slug=slug, suite_file=suite_path, items=first,
        scratch=scratch, item_timeout_s=dict.fromkeys(items, limits.test_timeout_s),
        import_timeout_s=limits.import_timeout, run_timeout_s=limits.run_timeout_s,
        memory_limit_mb=limits.memory_limit_mb, max_output_kb=4, sandbox=True,
        hide=[], stop_after=None if trace else _stops_run(suite, exp), zygote=zygote,
        trace=trace, standins=standins, sealed=standins is not None), later)


def _run_mutant(mutant: Mutant, **kw: Any) -> tuple[str, str]:
    """:func:`_stage_mutant`'s verdict: (reason, detail), ("", "") when it passed."""
    return _kill_reason(_stage_mutant(mutant, **kw), kw["suite"], kw["exp"])


#: The traced control run's CPU seconds per case, as a multiple of the mutants' limit:
#: tracing slows Python code down, and this run decides no verdict (only which lines run).
TRACE_SLACK = 20.0


@dataclass(frozen=True)
class Coverage:
    """Which lines of the module under test the unmutated reference executes, run exactly
    as a mutant is (:func:`case_coverage`): ``cases`` maps each case to the lines it ran;
    ``imported`` are the lines the package import ran (in any of the run's children)."""

    cases: dict[str, frozenset[int]]
    imported: frozenset[int]


def case_coverage(**kw: Any) -> Coverage | None:
    """The traced control run: the unmutated reference (``kw["mutant"]``), staged and
    sandboxed as every mutant, every case run to the end with the lines it executes
    recorded (:func:`_stage_mutant` with ``trace``). None when any case fails or any
    outcome lacks its lines: then no selection is made (every mutant runs every case)."""
    report = _stage_mutant(kw.pop("mutant"), trace=True, **kw)
    if report.fatal is not None or _kill_reason(report, kw["suite"], kw["exp"])[0]:
        return None
    cases: dict[str, frozenset[int]] = {}
    for c in kw["suite"].cases:
        o = report.outcomes.get(f"case:{c.name}")
        if o is None or o.status != "result" or o.lines is None:
            return None
        cases[c.name] = o.lines
    return Coverage(cases, frozenset(report.import_lines))


def select_cases(mutant: Mutant, coverage: Coverage | None) -> set[str] | None:
    """The cases that can tell ``mutant`` from the reference: those that executed a line of
    its statement (``Mutant.span``), or for a whole-source bug a line of a function body it
    replaces (``Mutant.bodies``), in the traced control run. None (all of them) when there
    is no coverage, neither is known (a bug that changes more than function bodies) or the
    import ran a line of them (module-level code, a function called at import time: every
    case depends on it).

    Sound because a case that never reaches the changed statement executes the very code it
    executes on the reference, from the same state: cases do not depend on each other (a
    case's value is a function of the package and its seed, whatever other cases share its
    child: ``run_lanes`` deals them to children in any grouping), so dropping the others
    changes neither the outcome of a selected case nor which one fails first. The first
    failing case of the full run is therefore a selected one, and the selected run stops at
    the same case with the same reason."""
    return cases_reaching([mutant.span] if mutant.span[0] else list(mutant.bodies), coverage)


def cases_reaching(spans: list[tuple[int, int]] | tuple[tuple[int, int], ...],
                   coverage: Coverage | None) -> set[str] | None:
    """The cases of ``coverage`` that executed a line of ``spans`` (``(first, last)`` line
    ranges of the module); None (all of them) when there is no coverage, no span, or the
    import executed one of those lines. :func:`select_cases`' rule, also the contract tests'
    (``tests/suite_tools.cases_reached``)."""
    if coverage is None or not spans:
        return None
    reach = {ln for first, last in spans for ln in range(first, last + 1)}
    if reach & coverage.imported:
        return None
    return {name for name, lines in coverage.cases.items() if reach & lines}


def changed_bodies(reference: str, bug: str) -> tuple[tuple[int, int], ...] | None:
    """Where a whole-source bug (a catalogue entry: text edits anywhere) differs from the
    reference, as the lines in ``reference`` of the function bodies it replaces; None when
    it changes anything else, or anything whose effect is not confined to calls of a
    replaced function.

    The two modules are compared as syntax trees (comments, layout and line numbers aside),
    statement by statement, into class bodies. A bug may only replace the body of a
    function (its docstring excepted) or method: the same name, signature, defaults,
    decorators and return annotation, and the same kind of function (plain, generator,
    coroutine). Everything else (a module-level or class-level statement, a default, a
    decorator, a docstring, a statement added or removed outside a body) runs or is seen at
    import: None. A replaced body runs only when its function is called, and every call
    executes a line of the reference's body span: a case that executed none of these lines
    called none of these functions, so it runs the same code on the bug as on the reference
    (:func:`select_cases`, which also runs every case when the import executed such a line).
    """
    try:
        old, new = _parsed(reference), ast.parse(bug)
    except (SyntaxError, ValueError):
        return None
    out: list[tuple[int, int]] = []
    texts = (reference.splitlines(), bug.splitlines())
    return tuple(out) if _same_but_bodies(old.body, new.body, out, texts) else None


@functools.lru_cache(maxsize=4)
def _parsed(source: str) -> ast.Module:
    """The reference's tree, parsed once for all its bugs (read only: never changed)."""
    return ast.parse(source)


def _same_but_bodies(xs: list[ast.stmt], ys: list[ast.stmt], out: list[tuple[int, int]],
                     texts: tuple[list[str], list[str]]) -> bool:
    """True when statement lists ``xs`` and ``ys`` differ only in function bodies (the
    spans of ``xs``'s differing bodies are appended to ``out``). A pair whose source text is
    the same (most of them: a bug edits a few lines) is the same statement: not compared
    further (comparing trees is what costs)."""
    if len(xs) != len(ys):
        return False
    for x, y in zip(xs, ys, strict=True):
        if type(x) is not type(y):
            return False
        if _text(x, texts[0]) == _text(y, texts[1]):
            continue
        if isinstance(x, (ast.FunctionDef, ast.AsyncFunctionDef)):
            assert isinstance(y, (ast.FunctionDef, ast.AsyncFunctionDef))
            (xbody, xdoc), (ybody, ydoc) = _body(x), _body(y)
            if (_shell(x) != _shell(y) or xdoc != ydoc or not xbody or not ybody
                    or _generator(x) != _generator(y)):
                return False
            if [ast.dump(s) for s in xbody] != [ast.dump(s) for s in ybody]:
                out.append(_extent(xbody))
        elif isinstance(x, ast.ClassDef):
            assert isinstance(y, ast.ClassDef)
            if _shell(x) != _shell(y) or not _same_but_bodies(x.body, y.body, out, texts):
                return False
        elif ast.dump(x) != ast.dump(y):
            return False
    return True


def _text(stmt: ast.stmt, lines: list[str]) -> tuple[str, int, int]:
    """A statement's source: its lines (decorators included) and where in the first and the
    last it starts and ends. The same text parses to the same statement."""
    first, last = statement_lines(stmt)
    return "\n".join(lines[first - 1:last]), stmt.col_offset, stmt.end_col_offset or 0


def _body(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[list[ast.stmt], str]:
    """A function's statements after its docstring, and the docstring's dump ("" if none)."""
    first = fn.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
            first.value.value, str):
        return fn.body[1:], ast.dump(first)
    return fn.body, ""


def _shell(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str:
    """A definition without its body: what its ``def``/``class`` statement evaluates at
    import (name, arguments and defaults, decorators, annotations, bases)."""
    fields = {name: value for name, value in ast.iter_fields(node) if name != "body"}
    return repr({name: ast.dump(v) if isinstance(v, ast.AST)
                 else [ast.dump(i) for i in v] if isinstance(v, list) else v
                 for name, v in fields.items()})


def _generator(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether calling ``fn`` makes a generator (a ``yield`` in its own scope)."""
    def walk(node: ast.AST) -> bool:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Yield, ast.YieldFrom)):
                return True
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                      ast.ClassDef)) and walk(child):
                return True
        return False

    return walk(fn)


def run_mutation(*, suite_path: Path, reference: Path, slug: str, number: int,
                 all_modules: tuple[tuple[int, str], ...], limits: Limits | None = None,
                 jobs: int = 2, max_mutants: int | None = None,
                 lines: set[int] | None = None, bugs: list[Mutant] | None = None,
                 fork: bool = True, select: bool = True) -> MutationReport:
    """Generate the mutants of ``reference/<slug>.py`` and run the suite against each.

    The unmutated module is run first, exactly as the mutants are (sandboxed, same limits):
    if it does not pass, the environment is broken and every "kill" would be meaningless,
    so this raises instead of reporting.

    Args:
        lines: restrict AST mutants to these lines of the reference (see
            ``coursekit.export.solution_line_numbers``).
        bugs: plausible bugs to run before the AST mutants (default: none).
        fork: start the mutants' children from a fork server that has loaded NumPy and the
            suite once (:mod:`autograder.harness.zygote`); False starts a fresh interpreter
            for each, as grading does. The verdicts are the same.
        select: run each AST mutant only on the cases that reach its statement
            (:func:`select_cases`, from one traced control run: :func:`case_coverage`), and
            each bug only on the cases that call a function body it replaces
            (:func:`changed_bodies`); a mutant no case reaches survives without a run. False
            runs every mutant on every case (up to its first failure). The verdicts are the
            same.

    Two control runs come first: the reference as ``ast.unparse`` writes it (the mutants'
    text, comments and layout aside), which must pass (else the reference's own text must,
    and no selection is made), and the traced one. A bug that changes more than function
    bodies runs every case.
    """
    suite_path, reference = suite_path.absolute(), reference.absolute()
    lim = limits or MUTANT_LIMITS
    suite = load_suite(suite_path)
    source = (reference / f"{slug}.py").read_text(encoding="utf-8")
    exp = compute_expected(suite_path=suite_path, suite=suite, reference=reference, slug=slug,
                           number=number, all_modules=all_modules, limits=lim)
    if exp.errors:
        raise RuntimeError(f"the reference fails the suite: {exp.errors}")
    payloads = standin_payloads(suite, reference / f"{slug}.py")
    hand = [m if m.span[0] or m.bodies else dataclasses.replace(
        m, bodies=changed_bodies(source, m.source) or ()) for m in bugs or []]
    mutants = hand + generate_mutants(source, limit=max_mutants, lines=lines)
    eq_file = suite_path.parent / "equivalent_mutants.txt"
    equivalent = set()
    if eq_file.is_file():
        equivalent = {ln.split("#")[0].strip() for ln in eq_file.read_text().splitlines()}
        equivalent.discard("")
    report = MutationReport(module=suite.module)
    todo = [m for m in mutants if m.id not in equivalent]
    report.equivalent = [m for m in mutants if m.id in equivalent]

    with contextlib.ExitStack() as stack:
        base = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ttmut-base-")))
        build_package(dest=base, reference=reference, module_number=number, slug=slug,
                      student_source=None, all_modules=all_modules)
        zygote = stack.enter_context(start_zygote(suite_file=suite_path)) if fork else None

        common = {"suite": suite, "suite_path": suite_path, "exp": exp, "base": base,
                  "slug": slug, "limits": lim, "payloads": payloads, "zygote": zygote}
        coverage: Coverage | None = None

        def one(m: Mutant) -> tuple[Mutant, tuple[str, str]]:
            cases = select_cases(m, coverage)
            if cases is not None and not cases:
                return m, ("", "")  # no case reaches it: it survives, as a full run shows
            return m, _run_mutant(m, cases=cases, **common)

        _, (reason, detail) = one(Mutant("control:unparsed", "the reference as unparsed", 0,
                                         ast.unparse(ast.parse(source))))
        if reason:
            select = False  # the mutants' layout matters to the suite: the old way
            _, (reason, detail) = one(Mutant("control:unmutated", "the reference itself", 0,
                                             source))
        if reason:
            raise RuntimeError(f"the unmutated reference fails the suite when run as a mutant "
                               f"is ({reason}: {detail}); no verdict")
        if select:
            traced = Mutant("control:traced", "the reference itself", 0, source)
            coverage = case_coverage(mutant=traced, **{
                **common, "limits": dataclasses.replace(
                    lim, test_timeout_s=lim.test_timeout_s * TRACE_SLACK,
                    import_timeout_s=lim.import_timeout * TRACE_SLACK)})
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            names = {c.name for c in suite.cases}
            for m, (reason, detail) in pool.map(one, todo):
                if reason:
                    report.killed.append(m)
                    report.reasons[m.id] = reason
                    case = detail.partition(":")[0]
                    report.killed_by[m.id] = case if case in names else ""
                else:
                    report.survived.append(m)
    return report


def read_catalogue(catalogue: Path) -> dict[str, Any]:
    """What a plausible-bug catalogue (``autograder/suites/NN_slug/bugs.py``, located by
    ``coursekit.paths.bugs_catalogue``) defines: ``SLUG``, ``BUGS = {name: [(old, new), ...]}`` and
    optionally ``DEPENDANTS``. Trusted course code, executed in a fresh namespace."""
    ns: dict[str, Any] = {"__name__": f"bugs_{catalogue.parent.name}", "__file__": str(catalogue)}
    exec(compile(catalogue.read_text(encoding="utf-8"), str(catalogue), "exec"), ns)  # trusted
    return ns


def catalogue_bugs(catalogue: Path, source: str) -> list[Mutant]:
    """Mutants from a plausible-bug catalogue (:func:`read_catalogue`) applied to ``source``."""
    out = []
    for name, edits in read_catalogue(catalogue).get("BUGS", {}).items():
        text = source
        for old, new in edits:
            if text.count(old) != 1:
                raise ValueError(f"{catalogue.name}: bug {name!r}: edit must apply exactly once")
            text = text.replace(old, new)
        line = source[: source.index(edits[0][0])].count("\n") + 1
        out.append(Mutant(f"bug:{name}", f"plausible bug: {name}", line, text))
    return out


#: Set to ``off`` to ignore the verdict cache (CI does: a clean clone proves every module).
CACHE_ENV = "TT_MUTATION_CACHE"
_CACHE_FORMAT = 2


def inputs_digest(course: Course, module: Any, *, max_mutants: int | None,
                  limits: Limits) -> str:
    """SHA-256 over everything a module's mutation verdicts depend on.

    The whole reference package, the module's suite folder (suite, bugs, equivalent list),
    its buggy catalogue and solution notebook source, the harness and the code that finds
    solution lines, the course facts, the limits, and the Python and NumPy versions. Any
    change to any of them gives a different digest, so a cached verdict is never reused for
    inputs it was not computed from.
    """
    import numpy  # noqa: PLC0415

    from coursekit import paths  # noqa: PLC0415 - repo side only
    from coursekit.paths import solution_path  # noqa: PLC0415 - repo side only

    harness = paths.AUTOGRADER / "harness"  # this very code, as the repository holds it
    files = sorted(p for p in paths.REFERENCE.rglob("*") if p.is_file()
                   and "__pycache__" not in p.parts)
    # the suite folder holds the buggy catalogue too (paths.bugs_catalogue)
    files += sorted(p for p in (paths.SUITES / module.name).rglob("*") if p.is_file()
                    and "__pycache__" not in p.parts)
    files += [Path(solution_path(module))]
    files += sorted(harness.glob("*.py")) + sorted(harness.parent.glob("*.py"))
    files += [paths.REPO_ROOT / "coursekit" / "export.py",
              paths.REPO_ROOT / "coursekit" / "markers.py",
              paths.REPO_ROOT / "coursebuild" / "release.py"]
    h = hashlib.sha256()

    def add(label: str, data: bytes) -> None:
        h.update(label.encode() + b"\0" + len(data).to_bytes(8, "big") + data)

    for f in files:
        rel = f.resolve().relative_to(paths.REPO_ROOT.resolve()).as_posix()
        add(rel, f.read_bytes() if f.is_file() else b"<missing>")
    add("params", json.dumps({
        "format": _CACHE_FORMAT, "module": [module.number, module.slug, module.title],
        "all_modules": [[m.number, m.slug] for m in course.modules],
        "max_mutants": max_mutants, "limits": limits.as_dict(), "python": sys.version,
        "numpy": numpy.__version__}, sort_keys=True).encode())
    return h.hexdigest()


def _cache_file(module: Any) -> Path | None:
    from coursekit import paths  # noqa: PLC0415 - repo side only

    if os.environ.get(CACHE_ENV, "").strip().lower() in ("off", "0", "no", "false"):
        return None
    return paths.BUILD / "mutation" / "cache" / f"{module.name}.json"


def _cache_load(path: Path | None, key: str) -> MutationReport | None:
    if path is None or not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc.get("format") != _CACHE_FORMAT or doc.get("key") != key:
            return None
        return MutationReport.from_json(doc["report"], cached=key)
    except (OSError, ValueError, KeyError, TypeError):
        return None  # unreadable or foreign: run again


def _cache_save(path: Path | None, key: str, report: MutationReport) -> None:
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"format": _CACHE_FORMAT, "key": key,
                               "report": report.to_json()}, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def module_mutation(course: Course, module: Any, *, jobs: int = 2,
                    max_mutants: int | None = None, use_cache: bool = True) -> MutationReport:
    """Repository side: mutants of what students write (solution lines) + the plausible bugs
    of ``autograder/suites/<module>/bugs.py``, against the module's hidden suite.

    Verdicts are cached in ``build/mutation/cache/<module>.json`` under the SHA-256 of every
    input (:func:`inputs_digest`): a missing, stale or unreadable entry means a full run. Set
    ``TT_MUTATION_CACHE=off`` (CI does) or pass ``use_cache=False`` to always run.
    """
    from coursekit import paths  # noqa: PLC0415 - repo side only
    from coursekit.export import solution_line_numbers  # noqa: PLC0415 - repo side only
    from coursekit.paths import solution_path  # noqa: PLC0415 - repo side only

    cache = _cache_file(module) if use_cache else None
    key = inputs_digest(course, module, max_mutants=max_mutants, limits=MUTANT_LIMITS)
    hit = _cache_load(cache, key)
    if hit is not None:
        return hit
    source = (paths.REFERENCE / f"{module.slug}.py").read_text(encoding="utf-8")
    lines = solution_line_numbers(solution_path(module), slug=module.slug,
                                  number=module.number, title=module.title)
    catalogue = paths.bugs_catalogue(module.name)
    bugs = catalogue_bugs(catalogue, source) if catalogue.is_file() else []
    report = run_mutation(suite_path=paths.SUITES / module.name / "suite.py",
                          reference=paths.REFERENCE, slug=module.slug, number=module.number,
                          all_modules=tuple((x.number, x.slug) for x in course.modules),
                          jobs=jobs, max_mutants=max_mutants, lines=lines, bugs=bugs,
                          limits=MUTANT_LIMITS)
    _cache_save(cache, key, report)
    return report


def main(argv: list[str] | None = None) -> int:
    """CLI: mutation-test one module's hidden suite against the repository's reference."""
    from coursekit.course import load_course  # noqa: PLC0415 - repo side only

    ap = argparse.ArgumentParser(description="Mutation-test a module's hidden suite.")
    ap.add_argument("module")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--max", type=int, default=None, help="At most this many AST mutants.")
    ap.add_argument("--report", type=Path, default=None)
    ap.add_argument("--min-rate", type=float, default=0.9)
    ns = ap.parse_args(argv)
    course = load_course()
    rep = module_mutation(course, course.module(ns.module), jobs=ns.jobs, max_mutants=ns.max)
    text = rep.to_markdown()
    if ns.report:
        ns.report.parent.mkdir(parents=True, exist_ok=True)
        ns.report.write_text(text, encoding="utf-8")
    print(text)
    return 0 if rep.rate >= ns.min_rate else 1


if __name__ == "__main__":
    sys.exit(main())
