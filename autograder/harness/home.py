"""Where the harness lives, and how it imports the trusted course files a grading names.

``HARNESS_ROOT`` is the folder that holds ``autograder/`` (the repository, or a Gradescope
zip's source folder): a sandboxed child puts it on its path, and a sandbox hides it.

A hidden suite (``autograder/suites/NN_slug/suite.py``) and a milestone provider (``<id>.py``
in a plugin folder) are files a grading names, not modules of a package, so
:func:`import_file` loads them by path. Only these: the repository's own code is imported by
name (tests/test_layers.py keeps it so). The untrusted-notebook reader
(:mod:`autograder.harness.export_worker`) keeps a loader of its own: it runs with nothing of
the repository on its path, this module included.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

HARNESS_ROOT = Path(__file__).resolve().parents[2]


def import_file(name: str, path: str | Path) -> ModuleType:
    """Import the trusted file ``path`` as a module named ``name`` (not put in ``sys.modules``).

    Raises:
        ImportError: no such file (or no loader for it); whatever the file raises.
    """
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def in_threads(target: Callable[[Any], None], args: Sequence[Any], *, name: str) -> None:
    """``target(a)`` for each ``a`` of ``args``, each in its own thread, all at once; returns
    when every one has ended, raising the first exception one of them raised."""
    errors: list[BaseException] = []

    def run(a: Any) -> None:
        try:
            target(a)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(a,), name=f"{name}-{i}", daemon=True)
               for i, a in enumerate(args)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
