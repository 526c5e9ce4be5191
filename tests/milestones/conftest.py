"""Fixtures for the milestone tests."""

from __future__ import annotations

from types import ModuleType

import pytest


@pytest.fixture(scope="session")
def ref() -> ModuleType:
    import tinytorch_ref

    return tinytorch_ref
