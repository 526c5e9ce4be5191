"""Module 19's report schema in the trusted parent: the reference's own validator, nothing more.

The capstone's event returns the benchmark report a submission wrote in the sandbox, as the
text of the file module 19's ``save_report`` writes. The parent checks it against schema
``tinytorch-benchmark/1`` with the **reference's** ``validate_report``, never the student's
(which ran in the child and may be anything). The reference module imports the framework
(``Tensor``, module 14's intervals); the parent runs none of that: :func:`extract` keeps, from
the reference file's syntax tree, only the names in :data:`NAMES`, the top-level definitions
they use (``validate_report``'s helpers and rules) and the standard-library imports, so what
the parent executes is the reference's own code for exactly the schema, written once, in
module 19.

Where the reference file comes from: in the repository, ``tinytorch_ref/benchmarking.py``; in a
Gradescope zip of a suite with ``needs_report_schema``, :data:`ZIP_PATH`, extracted when the zip
is built (the zip carries module 19's reference only after module 19 has closed). Like
``goldens.json`` it is read by the parent only: the sandbox never sees the zip's files.
"""

from __future__ import annotations

import ast
import sys
import types
from pathlib import Path

from coursekit import paths

#: The schema's names in the reference's ``benchmarking.py``: what a report is checked with
#: (``validate_report`` and what it calls) and how the report file is read back
#: (``_from_json``: JSON has no infinity, so ``"inf"`` / ``"-inf"`` stand for it).
NAMES = ("SCHEMA", "SCENARIOS", "VERDICTS", "ReportError", "_is_number", "_verdict",
         "validate_report", "_from_json")
#: Where a Gradescope zip carries the extracted schema (relative to the zip's root).
ZIP_PATH = "report_schema/benchmarking.py"
SHIPPED = paths.REPO_ROOT / ZIP_PATH
SOURCE = paths.REFERENCE / "benchmarking.py"


class SchemaSourceError(RuntimeError):
    """The reference file lacks a schema name or does not parse: a course-side problem."""


def extract(source: str, filename: str = "benchmarking.py") -> str:
    """The schema part of a ``benchmarking.py``: its standard-library imports and the
    top-level definitions of :data:`NAMES` and of every top-level name they use
    (transitively), in file order, as Python source.

    Raises:
        SchemaSourceError: the file does not parse or lacks one of the names.
    """
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as exc:
        raise SchemaSourceError(f"{filename}: does not parse ({exc.msg}, line {exc.lineno})"
                                ) from None
    imports: list[ast.stmt] = []
    defined: dict[str, ast.stmt] = {}  # top-level name -> the statement defining it
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            tops = ([a.name.split(".")[0] for a in node.names] if isinstance(node, ast.Import)
                    else [] if node.level else [(node.module or "").split(".")[0]])
            if tops and all(t == "__future__" or t in sys.stdlib_module_names for t in tops):
                imports.append(node)
            continue
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names = [node.target.id]
        else:
            continue
        for n in names:
            defined[n] = node
    found = {n for n in NAMES if n in defined}
    # NAMES and, transitively, every top-level definition they use (validate_report's helpers)
    todo = sorted(found)
    while todo:
        for sub in ast.walk(defined[todo.pop()]):
            if isinstance(sub, ast.Name) and sub.id in defined and sub.id not in found:
                found.add(sub.id)
                todo.append(sub.id)
    used = {id(defined[n]) for n in found}
    keep = [node for node in tree.body if node in imports or id(node) in used]
    missing = [n for n in NAMES if n not in found]
    if missing:
        raise SchemaSourceError(f"{filename}: defines no {', '.join(missing)} (the report "
                                "schema the capstone's parent checks with)")
    header = (f'"""Extracted from {filename} by autograder.milestones.report_schema: module '
              '19\'s report schema, for the trusted parent only."""\n\n')
    return header + ast.unparse(ast.Module(body=keep, type_ignores=[])) + "\n"


def load(path: Path | None = None) -> types.ModuleType:
    """The schema as a module (``validate_report``, ``ReportError``, ``_from_json``, ...).

    ``path`` defaults to the zip's :data:`SHIPPED` copy when there is one, else the
    repository's reference :data:`SOURCE`. Cached per path.
    """
    src = path or (SHIPPED if SHIPPED.is_file() else SOURCE)
    name = f"_tt_course_report_schema_{abs(hash(str(src.resolve())))}"
    if name in sys.modules:
        return sys.modules[name]
    try:
        text = src.read_text(encoding="utf-8")
    except OSError as exc:
        raise SchemaSourceError(f"{src}: cannot read the report schema ({exc.strerror})"
                                ) from None
    code = compile(extract(text, src.name), str(src), "exec")
    mod = types.ModuleType(name)
    mod.__file__ = str(src)
    sys.modules[name] = mod  # before running it: the module's own classes refer to it
    try:
        exec(code, mod.__dict__)  # noqa: S102 - the reference's own code, trusted
    except BaseException:
        del sys.modules[name]
        raise
    return mod
