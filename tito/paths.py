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
DATASETS = REPO_ROOT / "tinytorch_data"
BUILD = REPO_ROOT / "build"
SAMPLES = REPO_ROOT / "samples"


def bugs_catalogue(module_name: str) -> Path:
    """A module's plausible-bug catalogue (``autograder/suites/NN_slug/bugs.py``): a course
    asset beside the hidden suite it exercises, read by the mutation gate, the synthetic
    exports, ``tito course check`` and the module contract. Not shipped in the Gradescope zip
    (which carries only the suite's ``suite.py``)."""
    return SUITES / module_name / "bugs.py"
