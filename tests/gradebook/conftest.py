"""Fixtures for the gradebook tests: the course, and the sample term loaded into a store."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gradebook import api
from gradebook.ingest import SLOW_HOOK

REPO = Path(api.__file__).resolve().parent.parent
RESULTS = Path(api.SAMPLE_TERM) / "results"

#: A child that ingests the sample term's results into the store ``argv[1]``, printing
#: ``row N`` as rows are written inside the one open transaction.
INGEST_CHILD = textwrap.dedent("""
    import sys
    from pathlib import Path
    from gradebook import api
    from gradebook.ingest import parse_inputs, record
    from gradebook.store import Store

    course = api.load_course_any(None)
    sources = parse_inputs([Path(sys.argv[2])], course=course)
    store = Store(sys.argv[1])
    def progress(n):
        print(f"row {n}", flush=True)
    record(store, sources, progress=progress)
    print("committed", flush=True)
""")


def start_ingest(store: str, *, slow_s: str) -> subprocess.Popen[str]:
    """:data:`INGEST_CHILD` on ``store``, each row slowed by ``slow_s`` seconds."""
    env = {**os.environ, SLOW_HOOK: slow_s, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-c", INGEST_CHILD, store, str(RESULTS)],
                            stdout=subprocess.PIPE, text=True, env=env, cwd=REPO)


def kill_mid_ingest(store: str, *, slow_s: str) -> None:
    """Ingest into ``store`` and ``kill -9`` the child once 40 rows are written inside its
    open transaction."""
    child = start_ingest(store, slow_s=slow_s)
    assert child.stdout is not None
    for line in child.stdout:
        if line.strip() == "row 40":
            break
    else:  # pragma: no cover - the child finished or died early
        raise AssertionError(f"child ended early with {child.wait()}")
    child.send_signal(signal.SIGKILL)
    assert child.wait() == -signal.SIGKILL
    child.stdout.close()


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
