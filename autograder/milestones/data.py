"""The course packages milestone grading reads in the trusted parent, imported on first use.

``tinytorch_data.loaders`` (NumPy + standard library, checksums verified: the task variants)
and ``tinytorch_milestones.recipes`` (the trainers, the features, the model sizes) are plain
packages beside ``autograder`` (the Gradescope zip carries both), imported only when a
milestone is graded, so a zip without milestones needs neither. The sandboxed child imports
``tinytorch_milestones.recipes`` only, never the loaders.
"""

from __future__ import annotations

import importlib
from types import ModuleType

LOADERS = "tinytorch_data.loaders"
RECIPES = "tinytorch_milestones.recipes"
MLPERF_SCORE = "tinytorch_milestones.mlperf_score"


def course_module(name: str) -> ModuleType:
    """Import ``name`` whole: gradings run in threads (``--jobs``), and a thread that imports a
    module another thread is still executing waits for it (Python's per-module import lock);
    it never gets it half executed (a regrade under load once saw a recipes module without
    its functions, loaded by hand, and marked a milestone pending)."""
    return importlib.import_module(name)


def loaders() -> ModuleType:
    """``tinytorch_data.loaders``."""
    return course_module(LOADERS)


def recipes() -> ModuleType:
    """``tinytorch_milestones.recipes``."""
    return course_module(RECIPES)
