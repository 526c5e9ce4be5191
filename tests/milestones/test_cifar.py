"""cnn_cifar_1998: students train at home and submit weights; the parent scores them.

The path end to end on small CIFAR-10 batches in the real binary format (``cifar_fixture``):
the student script trains with module 08's ``CIFAR10`` and writes the ``.npz``; the parent's
NumPy forward pass (equal to PyTorch's and to the reference package's eval-mode forward) scores
it against the test labels; malformed files score 0 with their reason; the test batch is
installed only by ``fetch_data`` after the archive's size and SHA-256 match course.yml.
"""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cifar_fixture import TEST, images, write_cifar
from milestone_variants import package_root, variant

import tinytorch_ref
from autograder.gradescope import fetch_data
from autograder.milestones import cifar
from autograder.milestones.data import recipes
from coursekit import paths
from coursekit.course import load_course

MEMBER = "cifar-10-batches-bin/test_batch.bin"
N_TRAIN, N_TEST, EPOCHS = 1000, 400, 2


def _milestone() -> Any:
    return next(m for m in load_course().milestones if m.id == "cnn_cifar_1998")


def _install_test_batch(folder: Path, data_dir: Path) -> Path:
    """What fetch_data leaves: data_dir/<member> and SHA256SUMS."""
    target = data_dir / MEMBER
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes((folder / TEST).read_bytes())
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    (data_dir / "SHA256SUMS").write_text(f"{digest}  {MEMBER}\n", encoding="ascii")
    return target


def run_script(*args: str, extra_path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", MPLBACKEND="Agg", COLUMNS="160")
    if extra_path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(extra_path), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, str(paths.REPO_ROOT / "milestones" /
                                               "cnn_cifar_1998.py"), "--quiet", *args],
                          capture_output=True, text=True, timeout=1800, env=env,
                          cwd=paths.REPO_ROOT)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The script, run once with the reference on the fixture: its weights and output."""
    root = tmp_path_factory.mktemp("cifar")
    folder = write_cifar(root / "data", N_TRAIN, N_TEST)
    out = root / "out" / "cnn_cifar_1998.npz"
    proc = run_script("--package", "tinytorch_ref", "--data", str(root / "data"),
                      "--epochs", str(EPOCHS), "--out", str(out), "--plot",
                      str(root / "curve.png"))
    return {"root": root, "folder": folder, "npz": out, "proc": proc}


def _submission(tmp_path: Path, npz_bytes: bytes | None, name: str = "cnn_cifar_1998.npz"
                ) -> Path:
    sub = tmp_path / "submission"
    sub.mkdir(exist_ok=True)
    (sub / "09_spatial.ipynb").write_text("{}", encoding="utf-8")
    if npz_bytes is not None:
        (sub / name).write_bytes(npz_bytes)
    return sub


# ----------------------------------------------------------------------------- architecture
def test_the_script_the_grader_and_the_reference_model_agree_on_every_array() -> None:
    R = recipes()
    model = R.cifar_model(tinytorch_ref)
    state = {k: tuple(np.shape(v)) for k, v in model.state_dict().items()
             if not k.endswith("num_batches_tracked")}
    assert R.cifar_shapes() == cifar.cifar_shapes() == state
    # by hand: convs 896 + 18,496 + 73,856, batch norms 4 x (32 + 64 + 128), linears
    # 524,544 + 2,570
    assert sum(int(np.prod(s)) for s in state.values()) == 621_258


def _random_params(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in cifar.cifar_shapes().items():
        if name.endswith("running_var"):
            out[name] = rng.uniform(0.3, 2.0, shape).astype(np.float32)
        elif name.endswith(("running_mean", ".bias")):
            out[name] = rng.normal(0.0, 0.3, shape).astype(np.float32)
        else:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
            scale = 1.0 if len(shape) == 1 else 1.5 / np.sqrt(fan_in)
            out[name] = (rng.normal(0.0, scale, shape)
                         + (1.0 if len(shape) == 1 else 0.0)).astype(np.float32)
    return out


def test_numpy_forward_equals_pytorch_in_eval_mode() -> None:
    torch = pytest.importorskip("torch")
    params = _random_params(1)
    nn = torch.nn
    layers: list[Any] = []
    c_in = 3
    for c_out in cifar.CONV_CHANNELS:
        layers += [nn.Conv2d(c_in, c_out, 3, padding=1), nn.BatchNorm2d(c_out), nn.ReLU(),
                   nn.MaxPool2d(2)]
        c_in = c_out
    layers += [nn.Flatten(), nn.Linear(2048, cifar.HIDDEN), nn.ReLU(),
               nn.Linear(cifar.HIDDEN, 10)]
    net = nn.Sequential(*layers).double().eval()
    net.load_state_dict({k: torch.from_numpy(v.astype(np.float64)) for k, v in params.items()},
                        strict=False)
    x = np.random.default_rng(2).integers(0, 256, (7, 3, 32, 32), dtype=np.uint8)
    with torch.no_grad():
        want = net(torch.from_numpy(x.astype(np.float64) / 255.0)).numpy()
    got = cifar.forward(params, x)
    assert got.shape == (7, 10)
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4 * np.abs(want).max())


def test_numpy_forward_equals_the_reference_model_in_eval_mode() -> None:
    R = recipes()
    params = _random_params(3)
    tinytorch_ref.manual_seed(0)
    model = R.cifar_model(tinytorch_ref)
    model.load_state_dict(dict(params), strict=False)
    assert np.array_equal(R.cifar_state(model)["1.running_var"], params["1.running_var"])
    x, _ = images(30, 5)
    hwc = x.transpose(0, 2, 3, 1)
    assert np.array_equal(R.predict_cifar(tinytorch_ref, model, hwc), cifar.predict(params, x))


# ----------------------------------------------------------------------------- the path
def test_script_trains_on_the_binary_fixture_and_the_parent_passes_its_weights(
        trained: dict[str, Any], tmp_path: Path) -> None:
    proc = trained["proc"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASSED" in proc.stdout and f"{N_TRAIN} training images" in proc.stdout
    data_dir = tmp_path / "grader-data"
    _install_test_batch(trained["folder"], data_dir)
    sub = _submission(tmp_path, trained["npz"].read_bytes())
    verdict, problem = cifar.score_weights(_milestone(), sub, data_dir)
    assert problem is None
    assert verdict["passed"] and verdict["score"] == _milestone().points
    acc = verdict["per_seed"][0]
    assert acc >= _milestone().threshold
    # the script measured the student's model on the same images: the same accuracy
    assert f"{acc:.4f}" in proc.stdout
    with np.load(trained["npz"], allow_pickle=False) as npz:
        assert sorted(npz.files) == sorted(cifar.cifar_shapes())
        assert all(npz[k].dtype == np.float32 for k in npz.files)


def test_weights_fail_on_test_labels_they_were_not_trained_for(trained: dict[str, Any],
                                                               tmp_path: Path) -> None:
    """Accuracy is measured against the labels: the same images relabelled fail."""
    data_dir = tmp_path / "grader-data"
    target = _install_test_batch(trained["folder"], data_dir)
    rec = np.frombuffer(target.read_bytes(), np.uint8).reshape(-1, 3073).copy()
    rec[:, 0] = (rec[:, 0] + 1) % 10
    target.write_bytes(rec.tobytes())
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    (data_dir / "SHA256SUMS").write_text(f"{digest}  {MEMBER}\n", encoding="ascii")
    sub = _submission(tmp_path, trained["npz"].read_bytes())
    verdict, _ = cifar.score_weights(_milestone(), sub, data_dir)
    assert not verdict["passed"] and verdict["score"] == 0
    assert verdict["per_seed"][0] < 0.2


def test_script_with_a_broken_optimizer_fails_and_its_weights_fail_the_grader(
        trained: dict[str, Any], tmp_path: Path) -> None:
    pkg = variant("adam_never_updates")
    out = tmp_path / "w.npz"
    proc = run_script("--package", pkg.__name__, "--data", str(trained["root"] / "data"),
                      "--epochs", "1", "--limit", "200", "--out", str(out),
                      "--plot", str(tmp_path / "c.png"), extra_path=package_root(pkg))
    assert proc.returncode == 1 and "FAILED" in proc.stdout, proc.stdout + proc.stderr
    data_dir = tmp_path / "grader-data"
    _install_test_batch(trained["folder"], data_dir)
    verdict, _ = cifar.score_weights(_milestone(), _submission(tmp_path, out.read_bytes()),
                                     data_dir)
    assert verdict["score"] == 0 and verdict["per_seed"][0] < 0.5


def test_script_without_data_says_what_to_download(tmp_path: Path) -> None:
    proc = run_script("--package", "tinytorch_ref", "--data", str(tmp_path),
                      "--out", str(tmp_path / "w.npz"))
    assert proc.returncode == 2
    assert "cifar-10-binary.tar.gz" in " ".join(proc.stdout.split())
    assert not (tmp_path / "w.npz").exists()


# ----------------------------------------------------------------------------- refused files
def _npz(arrays: dict[str, Any], **kw: Any) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays, **kw)
    return buf.getvalue()


def _good() -> dict[str, np.ndarray]:
    return _random_params(7)


def _with(name: str, value: Any) -> dict[str, Any]:
    arrays: dict[str, Any] = _good()
    arrays[name] = value
    return arrays


def _huge_header() -> bytes:
    """A member whose .npy header claims 10**12 floats (never allocated: refused first)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, arr in _good().items():
            member = io.BytesIO()
            if name == "0.weight":
                np.lib.format.write_array_header_1_0(
                    member, {"descr": "<f4", "fortran_order": False, "shape": (10**12,)})
                member.write(b"\x00" * 64)
            else:
                np.lib.format.write_array(member, arr)
            zf.writestr(f"{name}.npy", member.getvalue())
    return buf.getvalue()


def _pickled() -> bytes:
    arrays: dict[str, Any] = _good()
    obj = np.empty(arrays["0.bias"].shape, dtype=object)
    obj[:] = [{"x": i} for i in range(len(obj))]
    arrays["0.bias"] = obj
    return _npz(arrays)


BAD: dict[str, tuple[Any, str]] = {
    "wrong shape": (lambda: _npz(_with("0.weight", np.zeros((32, 3, 5, 5), np.float32))),
                    r"0\.weight has shape \(32, 3, 5, 5\), expected \(32, 3, 3, 3\)"),
    "NaN": (lambda: _npz(_with("13.bias", np.full(256, np.nan, np.float32))),
            "13.bias holds NaN"),
    "infinity": (lambda: _npz(_with("1.running_var", np.full(32, np.inf, np.float32))),
                 "1.running_var holds NaN or infinite"),
    "pickled object array": (_pickled, "0.bias has dtype object"),
    "integer dtype": (lambda: _npz(_with("15.bias", np.zeros(10, np.int64))),
                      "15.bias has dtype int64"),
    "missing array": (lambda: _npz({k: v for k, v in _good().items() if k != "5.running_mean"}),
                      "missing 5.running_mean"),
    "extra array": (lambda: _npz(_with("16.weight", np.zeros(3, np.float32))),
                    "unexpected 16.weight"),
    "oversized": (lambda: _npz(_with("extra", np.zeros(3_000_000, np.float32))),
                  "larger than the"),
    "huge header": (_huge_header, r"0\.weight holds 128 bytes|0\.weight has shape"),
    "not a zip": (lambda: b"\x93NUMPY" + b"\x00" * 100, "not an .npz archive"),
    "a raw pickle": (lambda: __import__("pickle").dumps({"0.weight": 1}), "not an .npz"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_weights_score_zero_with_the_reason(case: str, tmp_path: Path) -> None:
    make, reason = BAD[case]
    data_dir = tmp_path / "grader-data"
    _install_test_batch(write_cifar(tmp_path / "data", 10, 20), data_dir)
    verdict, problem = cifar.score_weights(_milestone(), _submission(tmp_path, make()),
                                           data_dir)
    assert problem is None, "a student's bad file is not a grader problem"
    assert verdict["score"] == 0 and not verdict["passed"]
    assert verdict["per_seed"] == {0: None}
    import re
    assert re.search(reason, verdict["message"]), verdict["message"]
    assert verdict["message"].startswith("cnn_cifar_1998 failed: cnn_cifar_1998.npz")


def test_pickled_array_is_never_unpickled(tmp_path: Path) -> None:
    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self) -> tuple[Any, ...]:
            return (Path.write_text, (marker, "x"))

    arrays: dict[str, Any] = _good()
    obj = np.empty(32, dtype=object)
    obj[:] = [Evil() for _ in range(32)]
    arrays["0.bias"] = obj
    path = tmp_path / "cnn_cifar_1998.npz"
    path.write_bytes(_npz(arrays))
    with pytest.raises(cifar.BadWeights, match="dtype object"):
        cifar.read_weights(path)
    assert not marker.exists()


def test_missing_weights_and_links_are_refused(tmp_path: Path) -> None:
    data_dir = tmp_path / "grader-data"
    _install_test_batch(write_cifar(tmp_path / "data", 10, 20), data_dir)
    verdict, _ = cifar.score_weights(_milestone(), _submission(tmp_path, None), data_dir)
    assert verdict["score"] == 0 and "was not submitted" in verdict["message"]
    assert "tito submit 09" in verdict["message"]
    link = tmp_path / "submission" / "cnn_cifar_1998.npz"
    link.symlink_to(data_dir / MEMBER)
    verdict, _ = cifar.score_weights(_milestone(), tmp_path / "submission", data_dir)
    assert verdict["score"] == 0 and "not a regular file" in verdict["message"]


def test_weights_in_a_subfolder_of_the_upload_are_found(tmp_path: Path) -> None:
    sub = _submission(tmp_path, None)
    (sub / "build").mkdir()
    (sub / "build" / "cnn_cifar_1998.npz").write_bytes(_npz(_good()))
    assert cifar.find_weights(sub, "cnn_cifar_1998.npz").parent.name == "build"


def test_size_cap_is_derived_from_the_architecture() -> None:
    floats = sum(int(np.prod(s)) for s in cifar.cifar_shapes().values())
    assert cifar.size_cap() == 8 * floats + cifar.MEMBER_SLACK * len(cifar.cifar_shapes())
    assert len(_npz(_good())) < cifar.size_cap()
    float64 = {k: v.astype(np.float64) for k, v in _good().items()}
    assert len(_npz(float64)) <= cifar.size_cap()


def test_missing_or_tampered_test_data_is_a_grader_problem(tmp_path: Path) -> None:
    sub = _submission(tmp_path, _npz(_good()))
    verdict, problem = cifar.score_weights(_milestone(), sub, None)
    assert verdict["score"] == 0 and problem and "no test-data folder" in problem
    assert "course-side problem" in verdict["message"]
    data_dir = tmp_path / "grader-data"
    target = _install_test_batch(write_cifar(tmp_path / "data", 10, 20), data_dir)
    target.write_bytes(target.read_bytes()[:-3073])
    verdict, problem = cifar.score_weights(_milestone(), sub, data_dir)
    assert verdict["score"] == 0 and problem and "SHA-256 differs" in problem


# ----------------------------------------------------------------------------- test data
def test_course_yml_pins_the_archive_module_08_verifies() -> None:
    """One archive: course.yml's URL and digest are those of module 08's CIFAR10 loader."""
    spec = _milestone().test_data
    cls = tinytorch_ref.data.datasets.CIFAR10
    assert spec.url == cls.url and spec.sha256 in cls.tgz_sha256
    assert spec.member == f"{cls.base_folder}/test_batch.bin"
    assert spec.bytes == 170_052_171


def _archive(tmp_path: Path, files: dict[str, bytes], symlink: str | None = None
             ) -> tuple[Path, dict[str, Any]]:
    path = tmp_path / "cifar-10-binary.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        if symlink:
            info = tarfile.TarInfo(symlink)
            info.type = tarfile.SYMTYPE
            info.linkname = "/etc/passwd"
            tar.addfile(info)
    raw = path.read_bytes()
    return path, {"url": path.as_uri(), "sha256": hashlib.sha256(raw).hexdigest(),
                  "bytes": len(raw), "member": MEMBER}


def test_fetch_data_installs_only_the_verified_member(tmp_path: Path) -> None:
    x, y = images(20, 0)
    from cifar_fixture import batch_bytes
    body = batch_bytes(x, y)
    _, spec = _archive(tmp_path, {MEMBER: body, "cifar-10-batches-bin/data_batch_1.bin": body,
                                  "../escape.bin": b"x"})
    dest = tmp_path / "source" / "data"
    got = fetch_data.install(spec, dest)
    assert got == dest / MEMBER and got.read_bytes() == body
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()) == [
        "SHA256SUMS", MEMBER]
    assert cifar.test_batch_path(dest, spec) == got
    assert not (tmp_path / "source" / "escape.bin").exists()


@pytest.mark.parametrize("flaw", ["checksum", "size", "member", "symlink", "traversal"])
def test_fetch_data_refuses_a_wrong_archive_and_writes_nothing(flaw: str, tmp_path: Path
                                                                ) -> None:
    body = b"\x00" * 3073
    if flaw == "symlink":
        _, spec = _archive(tmp_path, {}, symlink=MEMBER)
    else:
        _, spec = _archive(tmp_path, {MEMBER if flaw != "member" else "other.bin": body})
    if flaw == "checksum":
        spec["sha256"] = "0" * 64
    elif flaw == "size":
        spec["bytes"] -= 1
    elif flaw == "traversal":
        spec["member"] = "../outside.bin"
    dest = tmp_path / "data"
    with pytest.raises(fetch_data.FetchError):
        fetch_data.install(spec, dest)
    assert not [p for p in dest.rglob("*") if p.is_file()] if dest.exists() else True
    assert not (tmp_path / "outside.bin").exists()


def test_fetch_data_cli_reads_the_zip_snapshot_and_fails_loudly(tmp_path: Path) -> None:
    import json
    _, spec = _archive(tmp_path, {MEMBER: b"\x01" * 3073})
    src = tmp_path / "source"
    src.mkdir()
    snap = {"milestones": [{"id": "cnn_cifar_1998", "test_data": spec},
                           {"id": "cnn_1998"}]}
    (src / "course.json").write_text(json.dumps(snap))
    assert fetch_data.main(["--source", str(src)]) == 0
    assert (src / "data" / MEMBER).read_bytes() == b"\x01" * 3073
    spec["sha256"] = "f" * 64
    (src / "course.json").write_text(json.dumps({"milestones": [{"test_data": spec}]}))
    assert fetch_data.main(["--source", str(src)]) == 1
    (src / "course.json").write_text(json.dumps({"milestones": [{"id": "xor_1969"}]}))
    assert fetch_data.main(["--source", str(src)]) == 0
