"""Stand-ins: the reference's version of a unit, put in place of the student's for one case.

A hidden suite names its module's units (:meth:`autograder.suite.Suite.unit`); a case that
grades a composite (a transformer block) runs with the reference's version of every unit the
composite is built from (LayerNorm, the MLP), so one bug is charged by the cases of the unit
it lives in, not again by every case that composes it (invariant 11, docs/architecture.md).

Two halves:

* :func:`extract` (trusted side: the autograder build, ``tito grade``, instructor tests) takes
  the units' definitions out of the reference module's source, as plain data (a *payload*:
  JSON, stored in the goldens bank of a Gradescope zip);
* :func:`apply` (in the grading child, or in-process for trusted packages) executes a
  payload's definitions in the namespace of the graded module: the reference's code then runs
  with the student's globals (their ``Tensor``, their other units, their helpers), and every
  name in the package that was bound to the student's definition is bound to the stand-in
  until the returned ``restore`` puts the student's back. Whole definitions replace module
  globals; ``Class.member`` entries replace one attribute of the student's class (a method's
  zero-argument ``super()`` is bound to the student's class).

Which processes may hold a payload, and what they may show, is the harness's business
(:meth:`autograder.suite.Suite.stages`, ``RunSpec.sealed``; docs/security.md).
"""

from __future__ import annotations

import ast
import builtins
import functools
import sys
import types
from collections.abc import Callable, Iterable
from typing import Any, cast

_MISSING = object()
# captured when the trusted side loads this module: a submission may rebind builtins
_exec, _compile, _setattr, _getattr, _delattr = exec, compile, setattr, getattr, delattr
_isinstance, _id, _vars, _list, _dict = isinstance, id, vars, list, dict
_property, _staticmethod, _classmethod = property, staticmethod, classmethod
_FunctionType = types.FunctionType

#: The file name stand-in code runs under: never a student's file, so tracebacks never show it.
FILENAME = "<course reference>"


class StandinError(ValueError):
    """A unit's definition is not in the reference (a suite or reference bug)."""


# ----------------------------------------------------------------------------- extract
def statement_lines(node: ast.stmt) -> tuple[int, int]:
    """A statement's first line (its first decorator's, if any) and its last line."""
    first = min([node.lineno, *[d.lineno for d in getattr(node, "decorator_list", [])]])
    return first, int(node.end_lineno or node.lineno)


def _defined(node: ast.stmt) -> str | None:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
            node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def extract(source: str, units: dict[str, tuple[str, ...]]) -> dict[str, dict[str, Any]]:
    """The stand-in payload of each unit (``{unit: entries}``) from the reference ``source``.

    A payload is plain data: ``names`` (top-level names it defines), ``defs`` (their
    statements, in source order), ``members`` (``{class: {"names": [...], "source":
    "class C:\\n    ..."}}`` for ``Class.member`` entries) and ``prelude`` (the module's import
    statements, for names a student's module lacks).

    Raises:
        StandinError: an entry names nothing in ``source``.
    """
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    top: dict[str, ast.stmt] = {}
    for node in tree.body:
        name = _defined(node)
        if name is not None:
            top[name] = node
    prelude = "".join("".join(lines[a - 1:b]) for a, b in (
        statement_lines(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))
        and not (isinstance(n, ast.ImportFrom) and n.module == "__future__")))
    out: dict[str, dict[str, Any]] = {}
    for unit, entries in units.items():
        whole = [e for e in entries if "." not in e]
        for e in whole:
            if e not in top:
                raise StandinError(f"unit {unit!r}: the reference defines no {e!r}")
        order = sorted(whole, key=lambda e: top[e].lineno)
        defs = "".join("".join(lines[a - 1:b])
                       for a, b in (statement_lines(top[e]) for e in order))
        members: dict[str, dict[str, Any]] = {}
        for e in entries:
            if "." not in e:
                continue
            cls_name, _, member = e.partition(".")
            cls = top.get(cls_name)
            if not isinstance(cls, ast.ClassDef):
                raise StandinError(f"unit {unit!r}: the reference has no class {cls_name!r}")
            found = next((n for n in cls.body if _defined(n) == member), None)
            if found is None:
                raise StandinError(f"unit {unit!r}: class {cls_name} defines no {member!r}")
            entry = members.setdefault(cls_name, {"names": [], "spans": []})
            entry["names"].append(member)
            entry["spans"].append(statement_lines(found))
        for cls_name, entry in members.items():
            body = "".join("".join(lines[a - 1:b]) for a, b in sorted(entry.pop("spans")))
            entry["source"] = f"class {cls_name}:\n{body}"
        out[unit] = {"names": order, "defs": defs, "members": members, "prelude": prelude}
    return out


def covering_entry(source: str, line: int) -> str | None:
    """The unit entry a 1-based ``line`` of ``source`` belongs to: ``"Class.member"`` inside
    a class member, else the top-level name (None outside every definition)."""
    for a, b, name, members in _entry_spans(source):
        if not a <= line <= b:
            continue
        for s, e, member in members:
            if s <= line <= e:
                return f"{name}.{member}"
        return name
    return None


@functools.lru_cache(maxsize=16)
def _entry_spans(source: str) -> tuple[tuple[int, int, str | None,
                                             tuple[tuple[int, int, str], ...]], ...]:
    """``(first, last, name, members)`` per top-level statement of ``source`` (members: the
    named definitions of a class body, with their spans): parsed once per source, as callers
    ask line by line (a module's every solution line, every mutant's line)."""
    out = []
    for node in ast.parse(source).body:
        a, b = statement_lines(node)
        members: tuple[tuple[int, int, str], ...] = ()
        if isinstance(node, ast.ClassDef):
            members = tuple((*statement_lines(sub), name) for sub in node.body
                            if (name := _defined(sub)))
        out.append((a, b, _defined(node), members))
    return tuple(out)


# ----------------------------------------------------------------------------- apply
class Compiled:
    """A payload compiled once (in the grading child: before its sandbox closes)."""

    def __init__(self, unit: str, payload: dict[str, Any]) -> None:
        self.unit = unit
        self.names: list[str] = [str(n) for n in payload.get("names", [])]
        self.defs = _compile(str(payload.get("defs", "")), f"{FILENAME[:-1]}: {unit}>", "exec")
        self.prelude = _compile(str(payload.get("prelude", "")), FILENAME, "exec")
        self.members = {str(c): ([str(n) for n in m["names"]],
                                 _compile(str(m["source"]), f"{FILENAME[:-1]}: {unit}>", "exec"))
                        for c, m in (payload.get("members") or {}).items()}


def compile_payloads(payloads: dict[str, dict[str, Any]]) -> dict[str, Compiled]:
    return {u: Compiled(u, p) for u, p in payloads.items()}


def _functions(obj: Any) -> list[Any]:
    if _isinstance(obj, _FunctionType):
        return [obj]
    if _isinstance(obj, _property):
        return [f for f in (obj.fget, obj.fset, obj.fdel) if f is not None]
    if _isinstance(obj, (_staticmethod, _classmethod)):
        return [obj.__func__]
    return []


def _bind_class_cell(obj: Any, cls: type) -> None:
    """Point a member's zero-argument ``super()`` / ``__class__`` at ``cls``."""
    for fn in _functions(obj):
        code = fn.__code__
        if fn.__closure__ and "__class__" in code.co_freevars:
            fn.__closure__[code.co_freevars.index("__class__")].cell_contents = cls


def _attribute_restorer(cls: type, name: str) -> Callable[[], None]:
    """What puts ``cls.name`` back as it is now (or removes it, if ``cls`` has none)."""
    old = _vars(cls).get(name, _MISSING)

    def restore() -> None:
        if old is _MISSING:
            _delattr(cls, name)
        else:
            _setattr(cls, name, old)

    return restore


def apply(module: types.ModuleType, units: Iterable[Compiled],
          package: str | None = None) -> Callable[[], None]:
    """Put ``units``' reference definitions in place in ``module`` (the graded module) and
    every loaded module of its package; returns ``restore``, which puts everything back.

    Raises:
        StandinError: a ``Class.member`` stand-in names a class the module does not have.
    """
    g = module.__dict__
    undo: list[Callable[[], None]] = []

    def put(ns: dict[str, Any], name: str, value: Any) -> None:
        old = ns.get(name, _MISSING)
        undo.append(lambda: ns.pop(name, None) if old is _MISSING else ns.__setitem__(name,
                                                                                     old))
        ns[name] = value

    def restore() -> None:
        while undo:
            undo.pop()()

    try:
        units = _list(units)
        replaced: dict[int, tuple[Any, Any]] = {}
        for u in units:
            scratch: dict[str, Any] = {"__name__": g.get("__name__"),
                                       "__package__": g.get("__package__"),
                                       "__builtins__": builtins}
            _exec(u.prelude, scratch)
            for k, v in scratch.items():
                if not k.startswith("__") and k not in g:
                    put(g, k, v)
            old = {n: g.get(n, _MISSING) for n in u.names}
            for n in u.names:
                put(g, n, g.get(n, _MISSING))  # records the student's binding for restore
            _exec(u.defs, g)
            for n in u.names:
                if old[n] is not _MISSING:
                    replaced[_id(old[n])] = (old[n], g[n])
        for u in units:
            for cls_name, (names, code) in u.members.items():
                found_cls = g.get(cls_name)
                if not _isinstance(found_cls, type):
                    raise StandinError(f"your module has no class {cls_name} (the course's "
                                       f"{u.unit} is a part of it)")
                cls = cast(type, found_cls)
                local: dict[str, Any] = {}
                _exec(code, g, local)
                synthetic = local[cls_name]
                for n in names:
                    value = _vars(synthetic)[n]
                    _bind_class_cell(value, cls)
                    undo.append(_attribute_restorer(cls, n))
                    _setattr(cls, n, value)
        if replaced:
            prefix = (package or g.get("__package__") or "").split(".")[0]
            spaces = [g] + [_vars(m) for name, m in _list(sys.modules.items())
                            if prefix and (name == prefix or name.startswith(prefix + "."))
                            and _isinstance(m, types.ModuleType) and m is not module]
            for ns in spaces:
                for k, v in _list(ns.items()):
                    hit = replaced.get(_id(v))
                    if hit is not None and hit[0] is v:
                        put(ns, k, hit[1])
    except BaseException:
        restore()
        raise
    return restore


# ----------------------------------------------------------------------------- plan
def payloads_for(suite: Any, source: str) -> dict[str, dict[str, Any]]:
    """The payloads of every unit some case of ``suite`` stands in, from the reference
    module's ``source`` (empty for a suite without stand-ins)."""
    used = {u for c in suite.cases for u in suite.standins(c)}
    return extract(source, {u: suite.units[u].entries for u in suite.units if u in used})


def stage_plan(suite: Any, payloads: dict[str, dict[str, Any]],
               item: Callable[[str], str] = lambda name: f"case:{name}"
               ) -> tuple[list[str], list[tuple[list[str], dict[str, Any]]]]:
    """The case items of the first stage (no stand-ins), and each later stage's items with
    the child's ``standins`` job (``{"units": payloads it needs, "items": {item: units}}``).

    Raises:
        StandinError: a payload a case needs is missing (goldens built before the suite
            declared it).
    """
    stages = suite.stages()
    first = [item(c.name) for c in stages[0]] if stages else []
    later = []
    for cases in stages[1:]:
        wanted = {u for c in cases for u in suite.standins(c)}
        missing = sorted(wanted - set(payloads))
        if missing:
            raise StandinError(f"no stand-in code for {', '.join(missing)}: rebuild the goldens")
        later.append(([item(c.name) for c in cases], {
            "units": {u: payloads[u] for u in suite.units if u in wanted},
            "items": {item(c.name): list(suite.standins(c)) for c in cases}}))
    return first, later
