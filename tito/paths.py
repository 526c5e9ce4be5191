"""Where things live in the repository. One place, so no path is spelled twice."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = REPO_ROOT / "solutions"
REFERENCE = REPO_ROOT / "tinytorch_ref"
ASSIGNMENTS = REPO_ROOT / "assignments"
RELEASE = REPO_ROOT / "student_release"
AUTOGRADER = REPO_ROOT / "autograder"
SUITES = AUTOGRADER / "suites"
DATASETS = REPO_ROOT / "datasets"
BUILD = REPO_ROOT / "build"
SAMPLES = REPO_ROOT / "samples"
