"""The capped reader every staff tool parses untrusted files with (autograder/harness/reader.py).

Each test gives the worker a reader function that misbehaves on one item, the way a hostile
file makes a parser misbehave, and checks that the item gets a one-line error naming the file,
the items before and after it are read as usual, and nothing is left running.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from autograder.harness import isolation, reader
from autograder.harness.reader import read_untrusted

READERS = textwrap.dedent('''
    import os, signal

    def echo(exporter, item, **options):
        return {"name": item["path"].rsplit("/", 1)[-1], "options": options}

    def spin(exporter, item):
        if item["path"].endswith("bad"):
            while True:
                pass
        return {"ok": item["path"]}

    def hog(exporter, item):
        if item["path"].endswith("bad"):
            return {"n": len(bytearray(2 * 1024 ** 3))}
        return {"ok": item["path"]}

    def deep(exporter, item):
        def down(n):
            return down(n + 1) + 1
        if item["path"].endswith("bad"):
            down(0)
        return {"ok": item["path"]}

    def segfault(exporter, item):
        if item["path"].endswith("bad"):
            os.kill(os.getpid(), signal.SIGSEGV)
        return {"ok": item["path"]}

    def block(exporter, item):
        if item["path"].endswith("bad"):
            open(item["path"]).read()   # a FIFO nobody writes to
        return {"ok": item["path"]}

    def write(exporter, item):
        with open(item["path"] + ".out", "w") as fh:
            fh.write("x" * 10)
        return {"ok": item["path"]}

    def export_path(exporter, item):
        return {"exporter": exporter.__name__}
''')


@pytest.fixture
def funcs(tmp_path: Path) -> Path:
    path = tmp_path / "readers.py"
    path.write_text(READERS, encoding="utf-8")
    return path


def _items(tmp_path: Path) -> list[dict[str, str]]:
    return [{"path": str(tmp_path / name)} for name in ("first.ipynb", "bad", "last.ipynb")]


def _no_workers_left() -> None:
    assert not isolation._LIVE, f"reader processes left: {isolation._LIVE}"


def test_every_item_is_read_in_order_with_options(tmp_path, funcs):
    n = 2 * reader.BATCH_ITEMS + 5  # several worker processes each
    items = [{"path": f"/x/{i}.ipynb"} for i in range(n)]
    for workers in (1, 3):
        got = read_untrusted(items, reader=funcs, function="echo", options={"k": 3},
                             workers=workers)
        assert got == [{"name": f"{i}.ipynb", "options": {"k": 3}} for i in range(n)]
    assert read_untrusted([{"path": "/x/a"}], reader=funcs, function="export_path") == [
        {"exporter": "coursekit.export"}]
    _no_workers_left()


@pytest.mark.parametrize("function, kind, says", [
    ("spin", "time", "bad: took more than 1 s of CPU time to read"),
    ("hog", "memory", "bad: is too large to read (parsing it needs more than 256 MB"),
    ("deep", "recursion", "bad: is too deeply nested to read"),
    ("segfault", "killed by signal 11", "bad: could not be read (killed by signal 11)"),
])
def test_an_item_that_exhausts_a_limit_is_named_and_the_others_read(tmp_path, funcs, function,
                                                                    kind, says):
    got = read_untrusted(_items(tmp_path), reader=funcs, function=function, memory_mb=256,
                         cpu_s=1)
    assert got[0] == {"ok": str(tmp_path / "first.ipynb")}
    assert got[2] == {"ok": str(tmp_path / "last.ipynb")}
    assert got[1]["kind"] == kind and got[1]["error"].startswith(says), got[1]
    assert "\n" not in got[1]["error"]
    _no_workers_left()


def test_a_reader_blocked_on_io_is_stopped(tmp_path, funcs, monkeypatch):
    """A FIFO never fills: no CPU is used, so only the stall backstop can end it."""
    os.mkfifo(tmp_path / "bad")
    monkeypatch.setattr(reader, "STALL_S", 2.0)
    got = read_untrusted(_items(tmp_path), reader=funcs, function="block")
    assert got[1]["kind"] == "stalled" and "bad: reading it made no progress" in got[1]["error"]
    assert got[2] == {"ok": str(tmp_path / "last.ipynb")}
    _no_workers_left()


def test_a_reader_writes_no_file(tmp_path, funcs):
    got = read_untrusted(_items(tmp_path)[:1], reader=funcs, function="write")
    assert got[0]["kind"] == "error" and "File too large" in got[0]["error"], got
    assert (tmp_path / "first.ipynb.out").stat().st_size == 0


def test_a_broken_reader_is_a_course_side_error(tmp_path):
    with pytest.raises(RuntimeError, match="notebook reader failed"):
        read_untrusted([{"path": "/x/a"}], reader=tmp_path / "missing.py", function="f")
    _no_workers_left()
