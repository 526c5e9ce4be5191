"""A student's path through every released notebook, executed for real.

For each module: copy the student release, fill the export cells with the solution (what a
student who finished would have), give earlier modules the reference (as if exported), then
run the whole notebook in a Jupyter kernel: every lesson cell must run and every
``grader.check`` must pass. This is the check that the lesson can be finished as written.

The module's own file in ``tinytorch/`` stays as released (its stubs), and so do later
modules': a student runs the cells top to bottom *before* exporting, so the checks must pass
with the code of the notebook's cells alone, without exporting or restarting (issue 11 item 1;
module 05's ``Tensor.backward`` must reach the engine defined in the notebook).

The same execution checks the lesson's claims (``solutions/NN_slug/claims.yml``, issue 29): every
figure its prose states must hold for what its cells printed (``coursebuild/claims.py``). They must hold
on a quiet machine and beside a busy one: ``TT_BUSY=N`` starts N processes that spin on the CPU
for as long as each notebook runs (``TT_BUSY=auto``: one per core).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import nbformat
import pytest
from nbclient import NotebookClient
from traitlets.config import Config

from coursebuild.claims import check_outputs, notebook_text
from coursebuild.release import available_modules
from coursebuild.samples import build_notebook
from coursekit import paths
from coursekit.course import load_course
from coursekit.paths import solution_path

COURSE = load_course()
MODULES = available_modules(COURSE)


@contextmanager
def busy_processes(count: str | None) -> Iterator[int]:
    """``count`` (``TT_BUSY``: a number, or ``auto`` for one per core) processes that spin on
    the CPU while the block runs: the lessons' figures must hold on a loaded machine too."""
    n = (os.cpu_count() or 1) if count == "auto" else int(count or 0)
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(n)]
    try:
        yield n
    finally:
        for p in spinners:
            p.kill()
            p.wait()


@pytest.mark.parametrize("module", MODULES, ids=[m.name for m in MODULES])
def test_finished_notebook_runs_top_to_bottom_and_passes_its_checks(module, tmp_path):
    release = tmp_path / "student_release"
    shutil.copytree(paths.RELEASE, release)
    for m in COURSE.modules:  # earlier modules: reference files (as if exported)
        ref = paths.REFERENCE / f"{m.slug}.py"
        if ref.exists() and m.number < module.number:
            shutil.copy(ref, release / "tinytorch" / f"{m.slug}.py")
    nb_path = release / module.name / f"{module.name}.ipynb"
    nb_path.write_text(json.dumps(build_notebook(module, "full")), encoding="utf-8")
    nb = nbformat.read(nb_path, as_version=4)
    # The kernel talks over Unix sockets in tmp_path, not TCP ports another run could take.
    ipc = Config({"KernelManager": {"transport": "ipc", "ip": str(tmp_path / "kernel")}})
    client = NotebookClient(nb, timeout=1800, kernel_name="python3", config=ipc,
                            resources={"metadata": {"path": str(nb_path.parent)}})
    with busy_processes(os.environ.get("TT_BUSY")):
        client.execute()
    failures = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                failures.append(f"cell {i}: {out.get('ename')}: {out.get('evalue')}"[:300])
        if cell.cell_type == "code" and "grader.check(" in cell.source:
            plain = " ".join(o.get("data", {}).get("text/plain", "")
                             for o in cell.get("outputs", []))
            if "All test cases passed!" not in plain:
                failures.append(f"cell {i}: {cell.source.strip()} did not pass: {plain[:300]}")
    failures += check_outputs(solution_path(module), notebook_text(nb))
    assert failures == [], "\n".join(failures)

