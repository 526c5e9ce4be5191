"""The walk a maintainer takes through the harness when following one grading
(tests/harness_walk.py; the figures are in docs/architecture.md, "The harness")."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import harness_walk


def _load(folder: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"walk_oracle_{name}", folder / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_the_walk_reads_each_function_once_and_returns_to_its_caller(tmp_path: Path) -> None:
    """The oracle, on three files: ``a.go`` calls ``b.step`` three times (read once), and
    ``b.step`` calls ``c.leaf`` only the third time: the reader goes down to it through
    ``b.step`` then, and back up through both files."""
    (tmp_path / "c.py").write_text("def leaf():\n    return 1\n")
    (tmp_path / "b.py").write_text(
        "import walk_oracle_c as c\n"
        "def step(i):\n    return c.leaf() if i == 2 else 0\n")
    (tmp_path / "a.py").write_text(
        "import walk_oracle_b as b\n"
        "def go():\n    return sum(b.step(i) for i in range(3)) + again()\n"
        "def again():\n    return 0\n")
    _load(tmp_path, "c")
    _load(tmp_path, "b")
    a = _load(tmp_path, "a")
    walk = harness_walk.trace(a.go, root=tmp_path)
    assert walk.stays == ["a.py", "b.py", "a.py", "b.py", "c.py", "b.py", "a.py"]
    assert (walk.files, walk.returns) == (3, 4)
    assert harness_walk.trace(a.go, root=tmp_path,
                              transparent=frozenset({"b.py"})).stays == ["a.py", "c.py", "a.py"]


def test_a_grading_walks_through_the_stages_without_growing() -> None:
    """One grading of module 01's reference: the walk between the stage modules stays within
    the figure docs/architecture.md states (lower both when a change cuts a return)."""
    walk = harness_walk.grade_reference("01", transparent=harness_walk.helpers())
    assert walk.returns <= 26, walk.summary()
    assert walk.stays[0] == walk.stays[-1] == "core.py", walk.summary()
