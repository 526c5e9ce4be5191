"""Fixtures for the gradebook tests: the course, and the sample term loaded into a store."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradebook import api


@pytest.fixture(scope="session")
def gb_course():
    """The repository's course.yml."""
    return api.load_course_any(None)


@pytest.fixture(scope="session")
def sample_store(tmp_path_factory: pytest.TempPathFactory, gb_course) -> Path:
    """A store with the whole sample term loaded (read-only for tests: copy it to write)."""
    store = tmp_path_factory.mktemp("sample") / "gradebook.sqlite"
    api.load_sample(store=store, course=gb_course)
    return store


@pytest.fixture(scope="session")
def sample_built(sample_store: Path, gb_course):
    """The sample term, built with the default cut-off."""
    return api.build(store=sample_store, course=gb_course)


@pytest.fixture()
def store_copy(sample_store: Path, tmp_path: Path) -> Path:
    """A private copy of the sample store a test may write to."""
    import sqlite3

    dest = tmp_path / "copy.sqlite"
    src = sqlite3.connect(sample_store)
    dst = sqlite3.connect(dest)
    src.backup(dst)
    src.close()
    dst.close()
    return dest
