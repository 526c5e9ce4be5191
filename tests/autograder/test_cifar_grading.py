"""A submitted-weights milestone (course.yml ``weights``, e.g. cnn_cifar_1998) in the harness.

No sandboxed item is started for it; the parent reads the ``.npz`` from the submission and the
test batch from ``data_dir``, which the sandbox cannot see. Also through the Gradescope zip:
``setup.sh`` installs the test batch (checked against the snapshot's SHA-256), and
``run_autograder`` grades with it.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from autograder.gradescope import build_zip
from autograder.harness import core
from autograder.harness.supervisor import RunSpec
from coursekit.course import load_course
from tests.autograder.conftest import (
    CORRECT,
    FAST,
    MINI,
    PUBLIC,
    REF,
    STUBS,
    SUITE,
    check_results_schema,
    needs_full,
    notebook_bytes,
)
from tests.milestones.cifar_fixture import batch_bytes, images

MEMBER = "cifar-10-batches-bin/test_batch.bin"
N_TEST = 300
_TRAINED: dict[str, bytes] = {}


def _course_entry() -> dict[str, Any]:
    return next(m for m in load_course().milestones if m.id == "cnn_cifar_1998").model_dump()


def _snapshot(test_data: dict[str, Any] | None = None) -> dict[str, Any]:
    entry = _course_entry()
    if test_data is not None:
        entry["test_data"] = test_data
    return {**MINI, "milestones": [entry]}


def _trained_npz() -> bytes:
    """Weights from a short reference training on the fixture, trained once per run: by the
    first process that asks (pytest-xdist workers share the run's temporary folder,
    tests/run_folder.py), while the others wait for its file and read it."""
    if "npz" not in _TRAINED:
        weights = Path(tempfile.gettempdir()) / "tt-cifar-grading-weights.npz"
        with open(weights.with_suffix(".lock"), "w", encoding="ascii") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not weights.exists():
                part = weights.with_suffix(".part")
                part.write_bytes(_train())
                part.replace(weights)
        _TRAINED["npz"] = weights.read_bytes()
    return _TRAINED["npz"]


def _train() -> bytes:
    """The reference CNN trained two epochs on 1,000 fixture images (seed 0), as ``.npz``."""
    import tinytorch_ref
    from autograder.milestones.data import recipes

    R = recipes()
    x, y = images(1000, 0)

    class Fixture(tinytorch_ref.data.Dataset):
        def __getitem__(self, i: int) -> Any:
            return transform(x[i].transpose(1, 2, 0)), int(y[i])

        def __len__(self) -> int:
            return len(y)

    transform = R.cifar_train_transform(tinytorch_ref)
    model = R.fit_cifar(tinytorch_ref, 0, Fixture(), {**R.CIFAR_CNN, "epochs": 2})
    buf = io.BytesIO()
    np.savez(buf, **R.cifar_state(model))
    return buf.getvalue()


def _data_dir(tmp_path: Path) -> Path:
    data = tmp_path / "grader-data"
    (data / MEMBER).parent.mkdir(parents=True)
    x, y = images(N_TEST, 1)
    (data / MEMBER).write_bytes(batch_bytes(x, y))
    digest = hashlib.sha256((data / MEMBER).read_bytes()).hexdigest()
    (data / "SHA256SUMS").write_text(f"{digest}  {MEMBER}\n", encoding="ascii")
    return data


def _grade(tmp_path: Path, source: str, npz: bytes | None, data_dir: Path | None
           ) -> dict[str, Any]:
    sub = tmp_path / "submission"
    sub.mkdir()
    (sub / "01_mini.ipynb").write_bytes(notebook_bytes(source))
    if npz is not None:
        (sub / "cnn_cifar_1998.npz").write_bytes(npz)
    out = tmp_path / "results" / "results.json"
    res = core.grade(module=_snapshot(), submission=sub, suite_path=SUITE, reference=REF,
                     public_tests=PUBLIC, out=out, limits=FAST, stubs=STUBS, data_dir=data_dir)
    assert json.loads(out.read_text()) == json.loads(json.dumps(res))
    check_results_schema(res)
    return res


def _milestone_test(res: dict[str, Any]) -> dict[str, Any]:
    [t] = [t for t in res["tests"] if "milestone:cnn_cifar_1998" in t["tags"]]
    return t


def test_good_weights_score_the_milestone_in_the_parent(tmp_path: Path, monkeypatch) -> None:
    specs: list[RunSpec] = []
    real = core.run_stages

    def spy(spec: RunSpec, later: Any, lanes: int, **kw: Any) -> Any:
        specs.append(spec)
        return real(spec, later, lanes, **kw)

    monkeypatch.setattr(core, "run_stages", spy)
    data = _data_dir(tmp_path)
    res = _grade(tmp_path, CORRECT, _trained_npz(), data)
    t = _milestone_test(res)
    assert t["score"] == t["max_score"] == 10, t["output"]
    assert res["score"] == 15
    assert "accuracy" in t["output"] and f"/{N_TEST})" in t["output"]
    ms = res["extra_data"]["milestones"]["cnn_cifar_1998"]
    assert ms["passed"] and ms["values"]["0"] >= 0.75 and ms["weights"] == "cnn_cifar_1998.npz"
    # nothing of this milestone ran in the sandbox, which could not see the test data
    [spec] = specs
    assert not [i for i in spec.items if "cifar" in i] and not spec.milestones
    assert data in spec.hide


def test_missing_weights_score_zero_with_a_clear_message(tmp_path: Path) -> None:
    res = _grade(tmp_path, CORRECT, None, _data_dir(tmp_path))
    t = _milestone_test(res)
    assert t["score"] == 0 and t["status"] == "failed"
    assert "cnn_cifar_1998.npz was not submitted" in t["output"]
    assert res["score"] == 5 and "grader_errors" not in res["extra_data"]


def test_malformed_weights_score_zero_and_the_module_still_grades(tmp_path: Path) -> None:
    res = _grade(tmp_path, CORRECT, b"PK\x03\x04 not really a zip", _data_dir(tmp_path))
    t = _milestone_test(res)
    assert t["score"] == 0 and "cnn_cifar_1998.npz" in t["output"]
    assert res["score"] == 5


def test_missing_test_data_makes_the_milestone_pending_not_zero(tmp_path: Path) -> None:
    res = _grade(tmp_path, CORRECT, _trained_npz(), None)
    t = _milestone_test(res)
    assert "pending" in t["tags"] and t["status"] == "failed" and t["score"] == 0
    assert t["output"].startswith("Not scored yet") and "This is not a zero" in t["output"]
    assert any("cnn_cifar_1998" in e for e in res["extra_data"]["grader_errors"])
    [pending] = res["extra_data"]["pending"]
    assert pending["test"] == t["name"] and "no test-data folder" in pending["why"]
    assert res["output"].startswith("PENDING: 1 test(s) worth 10 points")
    # the module's own tests are scored as usual
    assert res["score"] == 5 and not [x for x in res["tests"] if "pending" in x["tags"]
                                      and x is not t]


def test_an_unusable_notebook_scores_the_weights_milestone_zero_too(tmp_path: Path) -> None:
    sub = tmp_path / "submission"
    sub.mkdir()
    (sub / "01_mini.ipynb").write_bytes(b"{not json")
    (sub / "cnn_cifar_1998.npz").write_bytes(_trained_npz())
    res = core.grade(module=_snapshot(), submission=sub, suite_path=SUITE, reference=REF,
                     out=tmp_path / "r" / "results.json", limits=FAST, stubs=STUBS,
                     data_dir=_data_dir(tmp_path))
    check_results_schema(res)
    assert res["score"] == 0 and _milestone_test(res)["output"].startswith("Not run:")


@needs_full
def test_student_code_cannot_read_the_test_labels_or_the_weights(tmp_path: Path) -> None:
    data = _data_dir(tmp_path)
    sub_npz = tmp_path / "submission" / "cnn_cifar_1998.npz"
    probe = CORRECT + (
        "\n\ndef _peek(path):\n"
        "    try:\n"
        "        with open(path, 'rb') as fh:\n"
        "            return 'READ ' + fh.read(8).hex()\n"
        "    except OSError as exc:\n"
        "        return 'blocked ' + type(exc).__name__\n"
        f"print('labels:', _peek({str(data / MEMBER)!r}))\n"
        f"print('sums:', _peek({str(data / 'SHA256SUMS')!r}))\n"
        f"print('weights:', _peek({str(sub_npz)!r}))\n")
    res = _grade(tmp_path, probe, _trained_npz(), data)
    text = json.dumps(res)
    assert "labels: blocked" in text and "sums: blocked" in text and "weights: blocked" in text
    assert "READ" not in text
    assert _milestone_test(res)["score"] == 10
    assert "mount-namespace" in res["extra_data"]["isolation"]


def test_gradescope_zip_setup_installs_the_test_batch_and_grades_with_it(tmp_path: Path
                                                                          ) -> None:
    x, y = images(N_TEST, 1)
    archive = tmp_path / "cifar-10-binary.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        body = batch_bytes(x, y)
        info = tarfile.TarInfo(MEMBER)
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
    raw = archive.read_bytes()
    spec = {"url": archive.as_uri(), "sha256": hashlib.sha256(raw).hexdigest(),
            "bytes": len(raw), "member": MEMBER}
    zip_path = build_zip(_snapshot(spec), tmp_path / "01_mini.zip", suite_path=SUITE,
                         reference=REF, public_tests=PUBLIC, stubs=STUBS)
    from tests.autograder.test_gradescope import _container, _run

    root = _container(tmp_path, zip_path, notebook_bytes(CORRECT), "01_mini.ipynb")
    env = {**os.environ, "AUTOGRADER_PYTHON": sys.executable}
    setup = subprocess.run(["bash", str(root / "source" / "setup.sh")], env=env,
                           capture_output=True, text=True, timeout=600)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    assert (root / "source" / "data" / MEMBER).read_bytes() == body
    # and the trusted packages' bytecode, which gradings reuse (autograder.harness.package)
    for folder in ("reference", "stubs"):
        pycs = list((root / "source" / folder).rglob("*.pyc"))
        assert pycs and all(p.read_bytes()[4:8] == (3).to_bytes(4, "little") for p in pycs)
    (root / "submission" / "cnn_cifar_1998.npz").write_bytes(_trained_npz())
    res = _run(root)
    check_results_schema(res)
    assert _milestone_test(res)["score"] == 10, _milestone_test(res)["output"]
    assert res["score"] == 15

    # a wrong archive fails the image build, loudly, and installs nothing
    bad = build_zip(_snapshot({**spec, "sha256": "0" * 64}), tmp_path / "bad.zip",
                    suite_path=SUITE, reference=REF, public_tests=PUBLIC, stubs=STUBS)
    root2 = _container(tmp_path / "bad", bad, notebook_bytes(CORRECT), "01_mini.ipynb")
    setup = subprocess.run(["bash", str(root2 / "source" / "setup.sh")], env=env,
                           capture_output=True, text=True, timeout=600)
    assert setup.returncode != 0 and "SHA-256" in setup.stderr
    assert not (root2 / "source" / "data" / MEMBER).exists()


@pytest.mark.parametrize("field", ["weights", "test_data"])
def test_course_requires_weights_and_test_data_together(field: str) -> None:
    from coursekit.course import Milestone

    entry = _course_entry()
    entry[field] = None
    with pytest.raises(ValueError, match="weights and test_data"):
        Milestone.model_validate(entry)
