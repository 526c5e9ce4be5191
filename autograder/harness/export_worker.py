"""Read untrusted notebooks in a separate, capped process (no student code runs here).

Every command that parses a student's file (the grader's export, ``tito integrity``'s
fingerprints) starts ``python -I -S -B export_worker.py`` through
:func:`autograder.harness.reader.read_untrusted`, with a JSON job on stdin::

    {"root": HARNESS_ROOT, "memory_mb": 512, "cpu_s": 30,
     "reader": null | "/path/to/a/stdlib-only/file.py", "function": "export_one",
     "options": {...}, "items": [{"path": ".../01_tensor.ipynb", ...}, ...]}

It caps its own address space (``RLIMIT_AS``), forbids core dumps and file writes
(``RLIMIT_CORE`` = ``RLIMIT_FSIZE`` = 0), imports the course's one exporter (``coursekit.export``,
with the job's root first on its path) and, when ``reader`` is given, that file (by path: standard library only), and calls
``function(exporter, item, **options)`` for each item in turn. Before each item it moves its
CPU-time limit (``RLIMIT_CPU``) to ``cpu_s`` seconds past what it has used, so one item that
parses forever ends the process with ``SIGXCPU``; the parent knows which item that was. After
each item it writes one JSON line::

    {"i": 0, ...the function's result...}            or
    {"i": 0, "kind": "memory" | "recursion" | "error", "detail": "..."}

(the parent turns the second form into one line naming the file).

A notebook with one enormous literal can make CPython's parser use gigabytes; here that is a
``MemoryError`` (or this process being killed), which the parent reports as that file's
problem while its own memory stays small, and goes on with the next file in a fresh worker.
Standard library only.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import math
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


def load_by_path(name: str, path: Path) -> Any:
    """Import one file as module ``name`` (the worker has no site-packages nor repo path)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"{path} is missing")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def export_one(exporter: Any, nb: dict[str, Any]) -> dict[str, Any]:
    """The grader's job: one notebook's ``#| export`` source and its refused imports."""
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


def _cpu_used() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _cpu_budget(seconds: float) -> None:
    """Let the next item use ``seconds`` of CPU time; past that the kernel sends SIGXCPU."""
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = math.ceil(_cpu_used() + seconds)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _line(out: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(out, ensure_ascii=False, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def main() -> None:
    job = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    cap = int(job["memory_mb"]) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    # the course's exporter and its marker grammar: the foundation package under the root
    # (the repository, or the Gradescope zip that carries coursekit/); this is the entry point
    sys.path.insert(0, str(Path(job["root"])))
    exporter = importlib.import_module("coursekit.export")
    if job.get("reader"):
        function = getattr(load_by_path("tt_reader", Path(job["reader"])), job["function"])
    else:
        function = export_one
    options = job.get("options") or {}
    for i, item in enumerate(job["items"]):
        _cpu_budget(float(job["cpu_s"]))
        try:
            out = function(exporter, item, **options)
        except MemoryError:
            out = {"kind": "memory", "detail": ""}
        except RecursionError:
            out = {"kind": "recursion", "detail": ""}
        except Exception as exc:  # noqa: BLE001 - a reader's bug is this item's failure
            out = {"kind": "error", "detail": f"{type(exc).__name__}: {str(exc)[:200]}"}
        try:
            _line({"i": i, **out})
        except MemoryError:
            out = None
        if out is None:
            _line({"i": i, "kind": "memory", "detail": ""})


if __name__ == "__main__":
    main()
