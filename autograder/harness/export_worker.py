"""Read untrusted notebooks in a separate, memory-capped process (no student code runs here).

The grading parent starts ``python -I -S export_worker.py`` with a JSON job on stdin::

    {"root": HARNESS_ROOT, "memory_mb": 512,
     "notebooks": [{"path": ".../01_tensor.ipynb", "slug": "tensor", "number": 1,
                    "title": "Tensor"}, ...]}

It caps its own address space first, then exports each notebook with the course's one
exporter (``tito/export.py``, loaded by path) and looks for refused imports, and writes one
JSON line to stdout::

    {"modules": {"tensor": {"source": "...", "forbidden": ["torch"]}
                 | {"error": "what to fix", "kind": "submission"}}}

A notebook with one enormous literal can make CPython's parser use gigabytes; here that is a
``MemoryError`` (or this process being killed), which the parent reports as the submission's
problem while its own memory stays small. Standard library only.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import resource
import sys
from pathlib import Path
from typing import Any

FORBIDDEN_TOP = ("torch", "jax", "jaxlib", "tensorflow", "tinytorch_ref", "autograder",
                 "keras", "cupy")


def forbidden_imports(source: str) -> list[str]:
    """Top-level names of refused packages imported (or ``__import__``-ed) by ``source``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return []
    hits: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Call) and node.args:
            fn = node.func
            fname = fn.id if isinstance(fn, ast.Name) else (
                fn.attr if isinstance(fn, ast.Attribute) else "")
            arg = node.args[0]
            if fname in ("__import__", "import_module") and isinstance(arg, ast.Constant) \
                    and isinstance(arg.value, str):
                names = [arg.value]
        for n in names:
            top = n.split(".")[0]
            if top in FORBIDDEN_TOP:
                hits.add(top)
    return sorted(hits)


def _exporter(root: Path) -> Any:
    spec = importlib.util.spec_from_file_location("tt_export", root / "tito" / "export.py")
    if spec is None or spec.loader is None:
        raise RuntimeError(f"the exporter is missing from {root}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["tt_export"] = mod
    spec.loader.exec_module(mod)
    return mod


def export_one(exporter: Any, nb: dict[str, Any]) -> dict[str, Any]:
    path = Path(nb["path"])
    try:
        source = exporter.export_module(path, slug=nb["slug"], number=int(nb["number"]),
                                        title=nb["title"], mode="student")
    except exporter.ExportError as exc:
        return {"error": str(exc), "kind": "submission"}
    except (RecursionError, MemoryError):
        return {"error": f"{path.name}: is too deeply nested or too large to read",
                "kind": "submission"}
    except (SyntaxError, ValueError, TypeError, KeyError, AttributeError) as exc:
        return {"error": f"{path.name}: could not be read as a notebook "
                         f"({type(exc).__name__}: {str(exc)[:200]})", "kind": "submission"}
    try:
        refused = forbidden_imports(source)
    except MemoryError:
        return {"error": f"{path.name}: is too large to read", "kind": "submission"}
    return {"source": source, "forbidden": refused}


def main() -> None:
    job = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    cap = int(job["memory_mb"]) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    exporter = _exporter(Path(job["root"]))
    out = {"modules": {nb["slug"]: export_one(exporter, nb) for nb in job["notebooks"]}}
    sys.stdout.write(json.dumps(out))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
