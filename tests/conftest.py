"""Shared fixtures. Tests import helpers from tests/ (suite_tools) by path."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests are derandomized: the same examples every run, so CI (and any score built on
# them) is reproducible. HYPOTHESIS_PROFILE=explore searches more widely on a developer's box.
settings.register_profile("grading", derandomize=True, max_examples=60, deadline=None,
                          print_blob=True)
settings.register_profile("explore", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "grading"))

TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(scope="session")
def course():
    from tito.course import load_course

    return load_course()
