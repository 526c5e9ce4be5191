"""Fixtures for harness tests: a stand-in module 01 'mini' (5 points), notebooks, grading."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from autograder.harness import isolation
from autograder.harness.goldens import build_goldens
from autograder.harness.limits import Limits

FIXTURES = Path(__file__).parent / "fixtures"
REF = FIXTURES / "ref"
SUITE = FIXTURES / "suites" / "01_mini" / "suite.py"
PUBLIC = FIXTURES / "public"
STUBS = FIXTURES / "stubs"
CORRECT = (REF / "mini.py").read_text(encoding="utf-8")
# Per-case and import limits are CPU seconds (a loop costs 2 s of CPU, however busy the
# machine); the whole run's limit is wall clock and only a backstop here, so it is generous.
FAST = Limits(test_timeout_s=2.0, run_timeout_s=120.0, memory_limit_mb=700, max_output_kb=8,
              import_timeout_s=3.0)

MINI: dict[str, Any] = {
    "format": 1,
    "course": "TEST",
    "module": {"number": 1, "slug": "mini", "title": "Mini", "points": 5, "due": ""},
    "limits": {"test_timeout_s": 20, "run_timeout_s": 540, "memory_limit_mb": 700,
               "max_output_kb": 64},
    "milestones": [],
    "modules": [{"number": 1, "slug": "mini"}, {"number": 2, "slug": "later"}],
}


def notebook_bytes(*sources: str, export: bool = True) -> bytes:
    """A minimal .ipynb whose code cells hold ``sources`` (each an export cell)."""
    cells = [{"cell_type": "markdown", "metadata": {}, "source": "# Mini\n"}]
    for src in sources:
        cells.append({"cell_type": "code", "metadata": {}, "outputs": [],
                      "execution_count": None,
                      "source": ("#| export\n" if export else "") + src})
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb).encode()


def all_sandbox_processes() -> list[int]:
    """Live processes owned by a grading uid this test process handed out (should be none)."""
    out: list[int] = []
    for uid in set(isolation.USED_UIDS):
        out += isolation.processes_of_uid(uid)
    return out


@pytest.fixture(scope="session")
def goldens(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("goldens") / "goldens.json"
    return build_goldens(suite_path=SUITE, reference=REF, out=out, slug="mini", number=1,
                         all_modules=((1, "mini"), (2, "later")), limits=FAST)


GradeFn = Callable[..., dict[str, Any]]


@pytest.fixture
def grade_mini(tmp_path: Path, goldens: Path) -> Iterator[GradeFn]:
    """``grade_mini(source=..., raw=..., name=...) -> results`` for the stand-in module."""
    from autograder.harness import grade

    counter = iter(range(1000))

    def run(source: str | None = None, *, raw: bytes | None = None,
            name: str = "01_mini.ipynb", limits: Limits = FAST, use_goldens: bool = True,
            files: dict[str, bytes] | None = None, public: bool = True) -> dict[str, Any]:
        i = next(counter)
        sub = tmp_path / f"submission{i}"
        sub.mkdir()
        if files is not None:
            for fname, data in files.items():
                (sub / fname).write_bytes(data)
        else:
            (sub / name).write_bytes(raw if raw is not None else notebook_bytes(source or ""))
        out = tmp_path / f"results{i}" / "results.json"
        res = grade(module=MINI, submission=sub, suite_path=SUITE, reference=REF,
                    public_tests=PUBLIC if public else None, out=out, limits=limits,
                    expected=goldens if use_goldens else None, stubs=STUBS)
        on_disk = json.loads(out.read_text(encoding="utf-8"))
        assert on_disk == json.loads(json.dumps(res)), "results.json differs from the return"
        check_results_schema(on_disk)
        run.last_out = out  # type: ignore[attr-defined]
        return on_disk

    yield run
    assert all_sandbox_processes() == [], "a sandboxed process outlived its grading run"


def check_results_schema(res: dict[str, Any]) -> None:
    """Gradescope's results.json shape as docs/architecture.md fixes it."""
    assert isinstance(res["score"], (int, float))
    assert isinstance(res["execution_time"], (int, float))
    assert isinstance(res["output"], str)
    assert res["visibility"] in ("hidden", "after_due_date", "after_published", "visible")
    assert res["stdout_visibility"] in ("hidden", "visible")
    for t in res["tests"]:
        assert set(t) >= {"name", "score", "max_score", "status", "visibility", "output", "tags"}
        assert t["status"] in ("passed", "failed")
        assert 0 <= t["score"] <= t["max_score"] or t["max_score"] == 0 == t["score"]
        assert any(tag.startswith("module:") for tag in t["tags"])
    if "grader_error" not in res["extra_data"]:
        ed = res["extra_data"]
        assert {"module", "suite_version", "seeds", "packages", "isolation"} <= set(ed)
        assert abs(sum(t["score"] for t in res["tests"]) - res["score"]) < 1e-9


def scores(res: dict[str, Any]) -> dict[str, float]:
    """{case name: score} for the hidden cases."""
    return {t["name"].split(" · ")[-1]: t["score"] for t in res["tests"] if "hidden" in t["tags"]}


def outputs(res: dict[str, Any]) -> dict[str, str]:
    return {t["name"].split(" · ")[-1]: t["output"] for t in res["tests"]}


#: Adversarial cases that need the full sandbox: root with namespaces (CI and Gradescope run as
#: root). They never skip: a machine that cannot build the sandbox fails them, saying why, so the
#: adversarial classes always run where the tests pass.
_FULL = isolation.plan().namespaces and isolation.plan().drop_uid
_WHY = "needs root with namespaces (CI and Gradescope run as root)"
needs_full = pytest.mark.needs_full


@pytest.fixture(autouse=True)
def _full_sandbox_or_skip(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("needs_full") is None or _FULL:
        return
    pytest.fail(f"the adversarial cases run as root with namespaces: {_WHY}; "
                f"this machine has {isolation.plan()}")


class LoopbackListener:
    """A TCP server on the host's loopback that records any connection (network probe)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(5)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self.stop = True
        self.thread.join(timeout=2)
        self.sock.close()


def attacked_submission(course: Any, module: Any, attack: str, folder: Path, *,
                        kind: str = "full",
                        earlier: dict[str, tuple[str, str]] | None = None) -> Path:
    """``folder`` (made here) holding ``module``'s sample notebook of ``kind`` with ``attack``
    as a last export cell (none when empty), and, as students upload them while earlier modules
    are open, the finished notebooks of the earlier modules (``earlier``: ``{name prefix:
    (old, new)}``, a text replacement in one of them, which must occur)."""
    from coursebuild.release import dump_notebook  # noqa: PLC0415 - the course-building side
    from coursebuild.samples import build_notebook, earlier_full_notebooks  # noqa: PLC0415

    nb = build_notebook(module, kind)
    if attack:
        nb["cells"].append({"cell_type": "code", "id": "attack", "metadata": {}, "outputs": [],
                            "execution_count": None, "source": "#| export\n" + attack})
    folder.mkdir()
    (folder / f"{module.name}.ipynb").write_text(dump_notebook(nb), encoding="utf-8")
    for name, text in earlier_full_notebooks(course, module).items():
        for prefix, (old, new) in (earlier or {}).items():
            if name.startswith(prefix):
                text = _replaced(text, old, new)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _replaced(notebook_text: str, old: str, new: str) -> str:
    """The notebook with ``old`` replaced by ``new`` in the one cell that holds it."""
    nb = json.loads(notebook_text)
    hits = 0
    for cell in nb["cells"]:
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if old in src:
            cell["source"] = src.replace(old, new)
            hits += 1
    assert hits == 1, f"the fixture's bug no longer applies: {old.strip()!r}"
    return json.dumps(nb)
