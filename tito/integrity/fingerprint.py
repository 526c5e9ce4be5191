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
    except (SyntaxError, ValueError):
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
        except (SyntaxError, ValueError):
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
                except (SyntaxError, ValueError):
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

    def node(self, node: ast.AST, line: int) -> None:
        line = getattr(node, "lineno", line)
        if isinstance(node, ast.Name):
            self.add(node.id if node.id in KEPT_NAMES else "N", line)
        elif isinstance(node, ast.Constant):
            v = node.value
            self.add("S" if isinstance(v, (str, bytes)) else "0" if isinstance(v, (int, float,
                     complex)) and not isinstance(v, bool) else repr(v), line)
        elif isinstance(node, ast.Attribute):
            self.add("." + node.attr, line)
            self.node(node.value, line)
        elif isinstance(node, ast.keyword):
            self.add(f"{node.arg}=" if node.arg else "**", line)
            self.node(node.value, line)
        elif isinstance(node, ast.arg):
            return  # argument names are renamable; their annotations are the scaffold's
        elif isinstance(node, ast.AnnAssign):
            self.add("Assign", line)
            self.node(node.target, line)
            if node.value is not None:
                self.node(node.value, line)
        else:
            self.add(type(node).__name__, line)
            for name in node._fields:
                if name in _SKIPPED_FIELDS:
                    continue
                value = getattr(node, name, None)
                if isinstance(value, list):
                    if value and isinstance(value[0], ast.stmt):
                        self.stmts(value, line)
                    else:
                        for item in value:
                            if isinstance(item, ast.AST):
                                self.node(item, line)
                elif isinstance(value, ast.AST):
                    self.node(value, line)


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
