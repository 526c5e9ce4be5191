"""Alternative implementations say only what differs: :func:`apply_alternative` puts them on
the release.

A fixture ``tests/fixtures/alternatives/NN_slug/<name>.py`` holds a header comment saying how
it differs, the imports its code uses, and only the definitions it writes: the release's stubs
it fills in (a module-level function, or a method given inside a ``class Name:`` block that
holds only the replaced methods) and helpers of its own (names the release does not define).
Everything else, the provided code, constants, docstrings and imports, comes from the released
module ``student_release/tinytorch/<slug>.py``, so a change to the provided code touches no
fixture. :func:`build_alternative` reads both files and returns the complete module the tests
grade.

Rules (an alternative breaking one is refused with :class:`AlternativeError`, one line naming
the file and the definition):

* a definition the release has must be a stub (its body raises ``NotImplementedError("module
  NN: implement ...")``), and the alternative keeps its signature; provided code, constants and
  the module docstring are the release's;
* a class block names a class of the release, with its bases or none, and holds only methods
  the release's class has (so a misspelt name is refused, not silently added);
* a module-level name the release does not have is a helper: it goes before the first
  top-level statement that mentions it (or after the imports when none does), and never above
  a release definition it needs when it is defined (a base class, a decorator, a default);
* an import that binds a name the release's imports do not is added after the release's
  imports; the others are the release's already.

A replaced definition without a docstring keeps the release's, and the header comment follows
the release's leading comment lines, so the built module reads as the release filled in.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ALT_DIR = ROOT / "tests" / "fixtures" / "alternatives"
RELEASE = ROOT / "student_release" / "tinytorch"
#: The header comment every fixture starts with.
HEADER = "# Alternative implementation"

_STUB_MESSAGE = re.compile(r"module \d+: implement ")
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class AlternativeError(ValueError):
    """An alternative that does not only fill stubs and add helpers."""


def is_stub(fn: ast.AST) -> bool:
    """A released stub: a function one of whose statements raises ``NotImplementedError("module
    NN: implement ...")``, usually the last (in module 01 a given ``return`` follows it)."""
    return isinstance(fn, _FUNCS) and any(
        isinstance(s, ast.Raise) and isinstance(s.exc, ast.Call)
        and isinstance(s.exc.func, ast.Name) and s.exc.func.id == "NotImplementedError"
        and bool(s.exc.args) and isinstance(s.exc.args[0], ast.Constant)
        and isinstance(s.exc.args[0].value, str)
        and _STUB_MESSAGE.match(s.exc.args[0].value) is not None
        for s in fn.body)


def release_path(module_folder: str) -> Path:
    """``01_tensor`` -> ``student_release/tinytorch/tensor.py``."""
    return RELEASE / f"{module_folder.split('_', 1)[1]}.py"


def build_alternative(path: Path) -> str:
    """The complete module of the fixture at ``path``: its release with the fixture applied."""
    return apply_alternative(release_path(path.parent.name).read_text(encoding="utf-8"),
                             path.read_text(encoding="utf-8"),
                             name=f"{path.parent.name}/{path.name}")


# ----------------------------------------------------------------------------- helpers
def _bound(stmt: ast.stmt) -> list[str]:
    """Names a top-level statement binds."""
    if isinstance(stmt, _DEFS):
        return [stmt.name]
    if isinstance(stmt, ast.Assign):
        return [n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and isinstance(stmt.target, ast.Name):
        return [stmt.target.id]
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in stmt.names]
    return []


def _bindings(stmt: ast.Import | ast.ImportFrom) -> set[tuple]:
    module = stmt.module if isinstance(stmt, ast.ImportFrom) else None
    level = stmt.level if isinstance(stmt, ast.ImportFrom) else 0
    return {(module, level, a.name, a.asname) for a in stmt.names}


def _names(*nodes: ast.AST | None) -> set[str]:
    return {n.id for node in nodes if node is not None for n in ast.walk(node)
            if isinstance(n, ast.Name)}


def _needed_at_definition(stmt: ast.stmt) -> set[str]:
    """Names a helper evaluates when the module runs it (not inside function bodies)."""
    if isinstance(stmt, _FUNCS):
        return _names(*stmt.decorator_list, *stmt.args.defaults,
                      *(d for d in stmt.args.kw_defaults if d is not None))
    if isinstance(stmt, ast.ClassDef):
        return (_names(*stmt.bases, *stmt.keywords, *stmt.decorator_list)
                | set().union(*(_needed_at_definition(s) if isinstance(s, _FUNCS) else _names(s)
                                for s in stmt.body)))
    return _names(stmt)


def _end(node: ast.stmt) -> int:
    return node.end_lineno or node.lineno


def _first_line(node: ast.stmt) -> int:
    return min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])


def _docstring(fn: ast.AST) -> ast.Expr | None:
    body = getattr(fn, "body", [])
    if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)):
        return body[0]
    return None


def _shift(lines: list[str], by: int) -> list[str]:
    """Indent (``by`` > 0) or dedent every non-blank line by ``by`` columns."""
    if by >= 0:
        return [" " * by + ln if ln.strip() else ln for ln in lines]
    return [ln[-by:] if ln[:-by].strip() == "" else ln.lstrip() for ln in lines]


def _text(lines: list[str], node: ast.stmt, indent: int) -> list[str]:
    """Source lines of ``node`` (decorators and the comment lines right above it included),
    re-indented to ``indent`` columns."""
    start = _first_line(node)
    while start > 1 and lines[start - 2].lstrip().startswith("#"):
        start -= 1
    return _shift(lines[start - 1:_end(node)], indent - node.col_offset)


class _Applier:
    def __init__(self, release_source: str, alternative_source: str, name: str):
        self.name = name
        self.rel_lines = release_source.splitlines(keepends=True)
        self.alt_lines = alternative_source.splitlines(keepends=True)
        self.release = ast.parse(release_source)
        self.alt = ast.parse(alternative_source)
        self.replace: dict[tuple[int, int], list[str]] = {}  # release lines -> new lines
        self.replaced_in: dict[int, list[ast.stmt]] = {}  # top-level index -> new nodes
        self.imports: list[str] = []
        self.helpers: list[ast.stmt] = []

    def refuse(self, what: str, why: str) -> AlternativeError:
        return AlternativeError(f"{self.name}: {what}: {why}")

    # ------------------------------------------------------------------ classification
    def run(self) -> str:
        top: dict[str, tuple[int, ast.stmt]] = {}
        for i, stmt in enumerate(self.release.body):
            for bound in _bound(stmt):
                top.setdefault(bound, (i, stmt))
        release_imports = set().union(*(_bindings(s) for s in self.release.body
                                        if isinstance(s, (ast.Import, ast.ImportFrom))))
        for stmt in self.alt.body:
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                if not _bindings(stmt) <= release_imports:
                    self.imports += _text(self.alt_lines, stmt, 0)
            elif stmt is self.alt.body[0] and _docstring(self.alt) is stmt:
                raise self.refuse("the module docstring", "is the release's; say how the "
                                  f"alternative differs in the '{HEADER}' header comment")
            elif isinstance(stmt, _DEFS + (ast.Assign, ast.AnnAssign)):
                names = _bound(stmt)
                known = [n for n in names if n in top]
                if not known:
                    self.helpers.append(stmt)
                elif isinstance(stmt, ast.ClassDef):
                    self.fill_class(stmt, *top[stmt.name])
                elif isinstance(stmt, _FUNCS):
                    index, rel = top[stmt.name]
                    self.fill(stmt, rel, 0, f"{stmt.name}")
                    self.replaced_in.setdefault(index, []).append(stmt)
                else:
                    raise self.refuse(", ".join(known), "replaces provided code (a constant)")
            else:
                raise self.refuse(f"line {stmt.lineno}", "an alternative holds imports and "
                                  "definitions only, not other module-level statements")
        return self.assemble()

    def fill(self, new: ast.stmt, old: ast.stmt, indent: int, qualname: str) -> None:
        """Replace the release's stub ``old`` by ``new``."""
        if not isinstance(old, _FUNCS) or not is_stub(old):
            raise self.refuse(qualname, "replaces provided code (only the release's stubs "
                              "may be replaced)")
        if not isinstance(new, _FUNCS) or ast.dump(new.args) != ast.dump(old.args):
            raise self.refuse(qualname, "changes the stub's signature "
                              f"(the release's: def {old.name}({ast.unparse(old.args)}))")
        lines = _text(self.alt_lines, new, indent)
        doc = _docstring(old)
        if _docstring(new) is None and doc is not None and new.body[0].lineno > new.lineno:
            at = new.body[0].lineno - _first_line(new)
            at += len(lines) - (_end(new) - _first_line(new) + 1)  # comments above
            body_indent = new.body[0].col_offset - new.col_offset + indent
            lines[at:at] = _shift(self.rel_lines[doc.lineno - 1:_end(doc)],
                                  body_indent - doc.col_offset)
        self.replace[(_first_line(old), _end(old))] = lines

    def fill_class(self, new: ast.ClassDef, index: int, old: ast.stmt) -> None:
        if not isinstance(old, ast.ClassDef):
            raise self.refuse(new.name, "replaces provided code (the release's is not a class)")
        if new.bases and ast.dump(ast.Tuple(new.bases)) != ast.dump(ast.Tuple(old.bases)):
            raise self.refuse(new.name, "changes the class's bases")
        methods: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        for stmt in old.body:
            if isinstance(stmt, _FUNCS):
                methods.setdefault(stmt.name, []).append(stmt)
        for stmt in new.body:
            if _docstring(new) is stmt:
                raise self.refuse(f"{new.name}'s docstring", "is the release's (a class block "
                                  "holds only the replaced methods)")
            if not isinstance(stmt, _FUNCS):
                raise self.refuse(f"{new.name} line {stmt.lineno}", "a class block holds only "
                                  "the replaced methods")
            qualname = f"{new.name}.{stmt.name}"
            if stmt.name not in methods:
                raise self.refuse(qualname, f"names a method the release's {new.name} does "
                                  "not have")
            same = [m for m in methods[stmt.name] if ast.dump(ast.Tuple(m.decorator_list))
                    == ast.dump(ast.Tuple(stmt.decorator_list))] or methods[stmt.name]
            self.fill(stmt, same[0], same[0].col_offset, qualname)
        self.replaced_in.setdefault(index, []).extend(new.body)

    # ------------------------------------------------------------------ placement
    def import_block(self) -> list[ast.stmt]:
        """The release's imports above its first definition."""
        body = self.release.body
        first = next((i for i, s in enumerate(body) if isinstance(s, _DEFS)), len(body))
        return [s for s in body[:first] if isinstance(s, (ast.Import, ast.ImportFrom))]

    def helper_slots(self) -> list[int]:
        """For each helper, the index of the release's top-level statement it goes before."""
        body = self.release.body
        imports = self.import_block()
        after_imports = body.index(imports[-1]) + 1 if imports else 0
        uses = [_names(s, *self.replaced_in.get(i, [])) for i, s in enumerate(body)]
        runs = [_needed_at_definition(s).union(*map(_needed_at_definition,
                                                    self.replaced_in.get(i, [])))
                for i, s in enumerate(body)]
        bound = [set(_bound(h)) for h in self.helpers]
        slots: list[int | None] = [next((i for i, used in enumerate(uses) if b & used), None)
                                   for b in bound]
        changed = True
        while changed:  # a helper another helper uses goes no later than that one
            changed = False
            for h in range(len(self.helpers)):
                for g, other in enumerate(self.helpers):
                    mine, theirs = slots[h], slots[g]
                    if (g != h and bound[h] & _names(other) and theirs is not None
                            and (mine is None or theirs < mine)):
                        slots[h], changed = theirs, True
        out: list[int] = []
        for h, helper in enumerate(self.helpers):
            needs = _needed_at_definition(helper)
            late = [i for i, s in enumerate(body) if set(_bound(s)) & needs
                    and not isinstance(s, (ast.Import, ast.ImportFrom))]
            earliest = max(late, default=-1) + 1  # after the release definitions it needs
            first_use = slots[h]
            slot = max(after_imports if first_use is None else first_use, earliest)
            run_at = next((i for i, run in enumerate(runs) if bound[h] & run), None)
            if run_at is not None and run_at < slot:
                raise self.refuse(", ".join(_bound(helper)), f"{_bound(body[run_at])[0]} of "
                                  f"the release runs it, but it needs "
                                  f"{_bound(body[earliest - 1])[0]}, defined later")
            out.append(slot)
        for h, g in ((h, g) for h in range(len(out)) for g in range(len(out))):
            if bound[h] & _needed_at_definition(self.helpers[g]) and out[h] > out[g]:
                raise self.refuse(", ".join(bound[g]), f"runs {', '.join(bound[h])}, which "
                                  "cannot go before it")
        return out

    def assemble(self) -> str:
        body = self.release.body
        inserts: dict[int, list[str]] = {}  # insert before release line (1-based)
        for helper, slot in zip(self.helpers, self.helper_slots(), strict=True):
            line = (self.rel_lines_before(body[slot]) if slot < len(body)
                    else len(self.rel_lines) + 1)
            inserts.setdefault(line, []).extend(_text(self.alt_lines, helper, 0) + ["\n\n"])
        if self.imports:
            imports = self.import_block()
            line = _end(imports[-1]) + 1 if imports else 1
            inserts.setdefault(line, [])[:0] = self.imports
        header = self.header()
        if header:
            line = 1
            while line <= len(self.rel_lines) and self.rel_lines[line - 1].startswith("#"):
                line += 1
            inserts.setdefault(line, [])[:0] = header
        out: list[str] = []
        replace = {start: (end, lines) for (start, end), lines in self.replace.items()}
        line = 1
        while line <= len(self.rel_lines) + 1:
            out += inserts.get(line, [])
            if line in replace:
                end, lines = replace[line]
                out += [ln if ln.endswith("\n") else ln + "\n" for ln in lines]
                line = end + 1
                continue
            if line <= len(self.rel_lines):
                out.append(self.rel_lines[line - 1])
            line += 1
        return "".join(out)

    def rel_lines_before(self, stmt: ast.stmt) -> int:
        """The first line of ``stmt`` with the comment lines right above it."""
        start = _first_line(stmt)
        while start > 1 and self.rel_lines[start - 2].lstrip().startswith("#"):
            start -= 1
        return start

    def header(self) -> list[str]:
        lines = []
        for ln in self.alt_lines:
            if not ln.startswith("#"):
                break
            lines.append(ln)
        return lines


def apply_alternative(release_source: str, alternative_source: str,
                      name: str = "alternative") -> str:
    """The released module ``release_source`` with the alternative applied (module docstring).

    Every definition the alternative gives replaces the release's stub of that name (a method
    given in a ``class Name:`` block replaces that method only); its imports that bind new
    names follow the release's imports; its helpers go before their first use; its leading
    comment lines follow the release's. ``name`` (the fixture's file) starts every error.

    Raises:
        AlternativeError: the alternative replaces provided code, changes a stub's signature,
            or names a method (or class member) the release does not have.
    """
    return _Applier(release_source, alternative_source, name).run()
