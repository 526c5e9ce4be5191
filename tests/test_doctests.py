"""Every EXAMPLE in the reference docstrings runs and prints what it says (students copy them)."""

from __future__ import annotations

import doctest
import importlib
import os

import pytest

from coursekit import paths

MODULES = sorted(p.stem for p in paths.REFERENCE.glob("*.py") if p.stem != "__init__")


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name, tmp_path):
    module = importlib.import_module(f"tinytorch_ref.{name}")
    cwd = os.getcwd()
    os.chdir(tmp_path)  # examples that write files write here
    try:
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                                 report=True, verbose=False)
    finally:
        os.chdir(cwd)
    assert result.failed == 0, f"{result.failed} docstring example(s) of {name} fail (see output)"
