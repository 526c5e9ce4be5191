"""Code fingerprints that survive renaming, reformatting, comments and reordering.

A submission's code becomes a list of *units* (one per function or method, plus the statements
outside any function), each a list of normalised tokens:

* comments, blank lines, docstrings and line breaks inside brackets disappear;
* every identifier a student chooses becomes ``N`` (so renaming changes nothing); keywords,
  built-ins, ``np``/``math`` and attribute names after a dot stay (``.data``, ``.sum``: the API
  students must call cannot be renamed);
* numbers become ``0`` and strings ``S``; statement ends, indents and dedents become ``;``,
  ``{`` and ``}`` (the structure, not the layout).

Every ``k`` consecutive tokens of a unit (a *k-gram*) are hashed, and *winnowing* (Schleimer,
Wilkerson & Aiken, SIGMOD 2003) keeps the smallest hash of every window of ``w`` consecutive
k-gram hashes. Any match of at least ``w + k - 1`` tokens is then guaranteed to share a
fingerprint, and the fingerprints are a small, position-independent sample of the code, so
reordering functions or padding them with dead code leaves the untouched parts matching.
K-grams never cross a unit's boundary, so the order of functions does not matter.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import io
import keyword
import textwrap
import tokenize
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Names that keep their spelling: built-ins and the modules every solution imports.
KEPT_NAMES = frozenset(dir(builtins)) | {"np", "numpy", "math", "self", "cls"}
_SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}


@dataclass(frozen=True)
class Token:
    """One normalised token and the document line it starts on (1-based)."""

    text: str
    line: int


@dataclass
class Unit:
    """A function or method (``Class.method``), or the code outside functions (``<module>``)."""

    name: str
    tokens: list[Token] = field(default_factory=list)


@dataclass(frozen=True)
class Print:
    """A selected fingerprint: the k-gram's hash, its unit and the document lines it covers."""

    hash: int
    unit: int
    first_line: int
    last_line: int


def _blank_magics(source: str) -> str:
    """Jupyter magics and shell escapes (``%time``, ``!pip``) are not Python: blank them."""
    return "\n".join("" if ln.lstrip().startswith(("%", "!")) else ln
                     for ln in source.splitlines())


def _raw_tokens(source: str) -> Iterator[tokenize.TokenInfo]:
    """Python's tokens of ``source``; a tokenizer error ends the stream (keep what came)."""
    try:
        yield from tokenize.generate_tokens(io.StringIO(source).readline)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return


def normalise(source: str, *, line_offset: int = 0) -> list[Unit]:
    """Split ``source`` (one notebook cell or file) into units of normalised tokens.

    Source that parses is read from its syntax tree (:func:`_tree_units`), so layout,
    parentheses, quotes, comments, docstrings, annotations and dead code leave no trace; source
    with a syntax error falls back to Python's tokens (:func:`_lexical_units`).

    Args:
        source: Python source of one cell or file.
        line_offset: added to every line number (the cell's first line in the document, - 1).

    Returns:
        The units in source order; ``<module>`` (code outside functions) comes first.
    """
    source = _blank_magics(source)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        # RecursionError: CPython refuses trees deeper than its recursion limit (a
        # 10,000-term expression); such a cell is read statement by statement, else as tokens
        return _recover(source.splitlines(), line_offset)
    return _tree_units(tree, line_offset)


def _chunks(lines: list[str], indent: str) -> list[tuple[int, int]]:
    """(start, end) line ranges of the statements at ``indent``; decorators join their def."""
    starts: list[int] = []
    decorated = False
    for i, line in enumerate(lines):
        body = line[len(indent):] if line.startswith(indent) else ""
        if not body or body[0] in " \t#)]}" or not line.strip():
            continue
        if not decorated:
            starts.append(i)
        decorated = body.startswith("@")
    return [(a, b) for a, b in zip(starts, [*starts[1:], len(lines)], strict=False)]


def _recover(lines: list[str], line_offset: int) -> list[Unit]:
    """A cell with a syntax error: read every statement that parses on its own from its tree,
    descending into classes, so one broken function does not hide the rest of the cell."""
    units: list[Unit] = []
    for start, end in _chunks(lines, ""):
        text = "\n".join(lines[start:end])
        try:
            units += _tree_units(ast.parse(text), line_offset + start)
            continue
        except (SyntaxError, ValueError, RecursionError):
            pass
        header = lines[start].lstrip()
        body = lines[start + 1:end]
        indent = next((ln[: len(ln) - len(ln.lstrip())] for ln in body if ln.strip()), "")
        if header.startswith("class ") and indent:
            cls = header[6:].split("(")[0].split(":")[0].strip()
            for a, b in _chunks(body, indent):
                chunk = textwrap.dedent("\n".join(body[a:b]))
                offset = line_offset + start + 1 + a
                try:
                    inner = _tree_units(ast.parse(chunk), offset)
                except (SyntaxError, ValueError, RecursionError):
                    inner = _lexical_units(chunk, offset)
                for u in inner:
                    u.name = f"{cls}.{u.name}" if u.name != "<module>" else u.name
                units += inner
            continue
        units += _lexical_units(text, line_offset + start)
    return units


# ----------------------------------------------------------------------------- syntax trees
_SKIPPED_FIELDS = {"annotation", "returns", "type_comment", "type_params", "ctx", "kind"}
_PURE = (ast.Constant, ast.Name, ast.Attribute, ast.BinOp, ast.UnaryOp, ast.BoolOp,
         ast.Compare, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.Subscript, ast.Slice,
         ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)


def _constant_only(node: ast.AST) -> bool:
    return all(isinstance(n, (ast.Constant, ast.operator, ast.unaryop, ast.boolop, ast.cmpop,
                              ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Tuple,
                              ast.List, ast.expr_context))
               for n in ast.walk(node))


def _side_effect_free(node: ast.AST) -> bool:
    return all(isinstance(n, _PURE) for n in ast.walk(node))


def _is_dead(stmt: ast.stmt, loaded: set[str]) -> bool:
    """Statements that change nothing: padding a copy with them must not hide it."""
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, ast.Expr) and _constant_only(stmt.value):
        return True  # docstrings, stray constants
    if isinstance(stmt, ast.Assert) and _constant_only(stmt.test):
        return True
    if isinstance(stmt, (ast.If, ast.While)) and _constant_only(stmt.test) and not stmt.orelse:
        try:
            return not ast.literal_eval(stmt.test)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return False
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        value = stmt.value
        return (value is None or _side_effect_free(value)) and all(
            isinstance(t, ast.Name) and t.id not in loaded for t in targets)
    return False


def _children(node: ast.AST) -> Iterator[ast.AST]:
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, list):
            for item in value:
                if isinstance(item, ast.AST):
                    yield item
        elif isinstance(value, ast.AST):
            yield value


def _loaded_names(nodes: Iterable[ast.AST]) -> set[str]:
    """Names read anywhere below ``nodes`` (an explicit stack: ``ast.walk`` is slow here)."""
    out: set[str] = set()
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if type(node) is ast.Name:
            if type(node.ctx) is not ast.Store:
                out.add(node.id)
            continue
        stack.extend(_children(node))
    return out


class _Emitter:
    """Pre-order tokens of a syntax tree, with the line each comes from."""

    def __init__(self, loaded: set[str], line_offset: int) -> None:
        self.loaded = loaded
        self.offset = line_offset
        self.out: list[Token] = []

    def add(self, text: str, line: int) -> None:
        self.out.append(Token(text, line + self.offset))

    def stmts(self, body: list[ast.stmt], line: int) -> None:
        for stmt in body:
            if not _is_dead(stmt, self.loaded):
                self.node(stmt, line)

    def node(self, root: ast.AST, line: int) -> None:
        """Emit ``root``'s subtree in pre-order, with an explicit stack: a 1,500-term
        ``1+1+...+1`` is 1,500 levels deep, beyond Python's recursion limit."""
        stack: list[tuple[ast.AST, int]] = [(root, line)]
        while stack:
            node, line = stack.pop()
            line = getattr(node, "lineno", line)
            if isinstance(node, ast.Name):
                self.add(node.id if node.id in KEPT_NAMES else "N", line)
                continue
            if isinstance(node, ast.Constant):
                v = node.value
                self.add("S" if isinstance(v, (str, bytes)) else "0" if isinstance(
                    v, (int, float, complex)) and not isinstance(v, bool) else repr(v), line)
                continue
            if isinstance(node, ast.arg):
                continue  # argument names are renamable; their annotations are the scaffold's
            children: list[ast.AST] = []
            if isinstance(node, ast.Attribute):
                self.add("." + node.attr, line)
                children.append(node.value)
            elif isinstance(node, ast.keyword):
                self.add(f"{node.arg}=" if node.arg else "**", line)
                children.append(node.value)
            elif isinstance(node, ast.AnnAssign):
                self.add("Assign", line)
                children.append(node.target)
                if node.value is not None:
                    children.append(node.value)
            else:
                self.add(type(node).__name__, line)
                for name in node._fields:
                    if name in _SKIPPED_FIELDS:
                        continue
                    value = getattr(node, name, None)
                    if isinstance(value, list):
                        if value and isinstance(value[0], ast.stmt):
                            children += [s for s in value if not _is_dead(s, self.loaded)]
                        else:
                            children += [v for v in value if isinstance(v, ast.AST)]
                    elif isinstance(value, ast.AST):
                        children.append(value)
            stack.extend((child, line) for child in reversed(children))


def _tree_units(tree: ast.Module, line_offset: int) -> list[Unit]:
    funcs = (ast.FunctionDef, ast.AsyncFunctionDef)
    functions: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    outside: list[ast.AST] = []  # statements not inside a function (for module-level reads)
    for node in tree.body:
        if isinstance(node, funcs):
            functions.append((node.name, node))
        elif isinstance(node, ast.ClassDef):
            outside += node.bases
            for item in node.body:
                if isinstance(item, funcs):
                    functions.append((f"{node.name}.{item.name}", item))
                else:
                    outside.append(item)
        else:
            outside.append(node)
    reads = {name: _loaded_names([fn]) for name, fn in functions}
    module = _Emitter(_loaded_names(outside).union(*reads.values()), line_offset)
    units = [Unit("<module>")]
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            module.add("ClassDef", node.lineno)
            for base in node.bases:
                module.node(base, node.lineno)
            for item in node.body:
                if not isinstance(item, funcs):
                    module.stmts([item], item.lineno)
        elif not isinstance(node, funcs):
            module.stmts([node], node.lineno)
    for name, fn in functions:
        em = _Emitter(reads[name], line_offset)
        em.node(fn, fn.lineno)
        units.append(Unit(name, em.out))
    units[0].tokens = module.out
    return [u for u in units if u.tokens]


# ----------------------------------------------------------------------------- raw tokens
def _lexical_units(source: str, line_offset: int) -> list[Unit]:
    """Python's tokens, for a cell with a syntax error: one unit for the whole cell."""
    unit = Unit("<cell with a syntax error>")
    prev = ""
    for tok in _raw_tokens(source):
        if tok.type in _SKIP:
            continue
        line = tok.start[0]
        if tok.type == tokenize.NEWLINE:
            unit.tokens.append(Token(";", line + line_offset))
            prev = ";"
            continue
        text = _normal_text(tok, prev)
        unit.tokens.append(Token(text, line + line_offset))
        prev = tok.string if tok.type == tokenize.OP else text
    return [unit] if unit.tokens else []


def _normal_text(tok: tokenize.TokenInfo, prev: str) -> str:
    if tok.type == tokenize.INDENT:
        return "{"
    if tok.type == tokenize.DEDENT:
        return "}"
    if tok.type == tokenize.NUMBER:
        return "0"
    if tok.type == tokenize.STRING or tok.type == getattr(tokenize, "FSTRING_START", -1):
        return "S"
    if tok.type == tokenize.NAME:
        name = tok.string
        if keyword.iskeyword(name) or name in KEPT_NAMES or prev == ".":
            return name
        return "N"
    return tok.string


_TOKEN_IDS: dict[str, int] = {}


def _token_id(text: str) -> int:
    """A stable 64-bit number for a token text (cached: there are few distinct tokens)."""
    got = _TOKEN_IDS.get(text)
    if got is None:
        got = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
        _TOKEN_IDS[text] = got
    return got


def kgram_hashes(tokens: list[Token], k: int) -> list[int]:
    """A 63-bit hash of every k-gram of ``tokens``.

    Tokens become stable numbers first; a k-gram's hash is CPython's tuple hash of its k
    numbers, which depends only on those numbers (string hashing, which is salted per process,
    is never involved), so the same code gives the same fingerprints in every process.
    """
    ids = [_token_id(t.text) for t in tokens]
    mask = (1 << 63) - 1
    return [hash(tuple(ids[i:i + k])) & mask for i in range(len(ids) - k + 1)]


def winnow(hashes: list[int], w: int) -> list[int]:
    """Indices of the hashes winnowing selects: the rightmost minimum of every window of ``w``.

    A sliding-window minimum over a deque of candidate indices (increasing hashes), so each
    hash is pushed and popped once. A sequence shorter than one window keeps its minimum.
    """
    if not hashes:
        return []
    w = min(w, len(hashes))
    chosen: list[int] = []
    window: deque[int] = deque()
    for i, h in enumerate(hashes):
        while window and hashes[window[-1]] >= h:  # ties: the rightmost minimum wins
            window.pop()
        window.append(i)
        if window[0] <= i - w:
            window.popleft()
        if i >= w - 1 and (not chosen or chosen[-1] != window[0]):
            chosen.append(window[0])
    return chosen


def fingerprints(units: list[Unit], *, k: int, w: int) -> list[Print]:
    """Winnowed fingerprints of every unit, with the document lines each one covers."""
    prints: list[Print] = []
    for u_index, unit in enumerate(units):
        hashes = kgram_hashes(unit.tokens, k)
        for i in winnow(hashes, w):
            span = unit.tokens[i:i + k]
            prints.append(Print(hashes[i], u_index, span[0].line, span[-1].line))
    return prints


def all_hashes(units: Iterable[Unit], *, k: int) -> set[int]:
    """Every k-gram hash of the units (for code the course provided: nothing of it may count)."""
    return {h for unit in units for h in kgram_hashes(unit.tokens, k)}


# ----------------------------------------------------------------------------- the worker's job
#: Fingerprints kept per document: a whole module's solution has a few thousand; past this a
#: document is compared on its first ones, with a note.
MAX_PRINTS = 100_000
#: Places one fingerprint is kept in a document (a repeated k-gram is no more evidence; a
#: literal of a million numbers is one k-gram a million times).
MAX_REPEATS = 64


def read_document(exporter: Any, item: dict[str, Any], *, k: int, w: int,
                  hashes: bool = False) -> dict[str, Any]:
    """One document's fingerprints, computed in the capped reader process.

    :func:`autograder.harness.reader.read_untrusted` calls this for each submission (it is
    loaded there by path: standard library only), never the command's own process.

    Args:
        exporter: ``coursekit/export.py`` as loaded by the worker (``read_cells``, ``ExportError``).
        item: ``{"path": notebook}`` (``.ipynb``, percent-format or plain ``.py``) or
            ``{"cells": [[index, source], ...]}`` (a document kept in the gradebook store).
        k: tokens per k-gram; w: the winnowing window.
        hashes: also return every k-gram hash (for the course-provided code).

    Returns:
        ``{"cells": [[index, source], ...], "units": [name, ...], "prints": [[hash, unit,
        first_line, last_line], ...], "notes": [...]}`` (and ``"hashes"``), or ``{"error":
        one line naming the file, "kind": "input"}``. A cell whose syntax tree does not fit in
        the worker's memory (a huge literal) is left out with a note; the rest is read.
    """
    notes: list[str] = []
    cells: list[tuple[int, str]]
    if "cells" in item:
        cells = [(int(i), str(src)) for i, src in item["cells"]]
    else:
        path = Path(str(item["path"]))
        try:
            read = exporter.read_cells(path)
        except exporter.ExportError as exc:
            return {"error": str(exc), "kind": "input"}
        if path.suffix == ".py" and not read:
            cells = [(1, path.read_text(encoding="utf-8", errors="replace"))]
        else:
            cells = [(c.index, c.source) for c in read if c.kind == "code" and c.source.strip()]
    kept: list[list[Any]] = []
    units: list[Unit] = []
    lines = 0
    for index, source in cells:
        offset = lines + 1  # the cell's header line (see staff.integrity.corpus)
        try:
            got = normalise(source, line_offset=offset)
        except MemoryError:
            notes.append(f"cell {index} ({len(source):,} characters) is too large to read "
                         "(a huge literal?): left out")
            continue
        kept.append([index, source])
        units.extend(got)
        lines = offset + len(source.splitlines())
    prints: list[list[int]] = []
    seen: dict[int, int] = {}
    beyond = 0
    for p in fingerprints(units, k=k, w=w):
        n = seen.get(p.hash, 0)
        if n >= MAX_REPEATS:
            continue
        if len(prints) >= MAX_PRINTS:
            beyond += 1
            continue
        seen[p.hash] = n + 1
        prints.append([p.hash, p.unit, p.first_line, p.last_line])
    if beyond:
        notes.append(f"has {MAX_PRINTS + beyond:,} fingerprints, more than {MAX_PRINTS:,}: "
                     f"compared on its first {MAX_PRINTS:,}")
    out: dict[str, Any] = {"cells": kept, "units": [u.name for u in units],
                              "prints": prints, "notes": notes}
    if hashes:
        out["hashes"] = sorted(all_hashes(units, k=k))
    return out
