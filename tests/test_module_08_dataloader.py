"""Module 08 beyond the hidden suite: the dataset classes on fixture files in the real formats
(lookup, SHA-256 checks, the cache folder, downloads from a local ``file://`` mirror), the
shipped Fashion-MNIST subset, reproducibility through ``Generator`` / ``manual_seed``, the
DataLoader's argument rules and the ``tinytorch.data`` layout."""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import io
import json
import struct
import tarfile
from pathlib import Path

import numpy as np
import pytest

import tinytorch_ref as tt
from tinytorch_data import loaders as L
from tinytorch_ref import data
from tinytorch_ref.data import datasets as D
from tinytorch_ref.data import transforms as T  # noqa: N812 - torchvision's conventional name


def idx_bytes(arr: np.ndarray) -> bytes:
    """uint8 IDX: 00 00 08 ndim, big-endian uint32 dims, the bytes."""
    return bytes([0, 0, 8, arr.ndim]) + struct.pack(f">{arr.ndim}I", *arr.shape) + \
        arr.astype(np.uint8).tobytes()


def digest(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


@pytest.fixture()
def mnist_files():
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (6, 28, 28)).astype(np.uint8)
    labels = rng.integers(0, 10, 6).astype(np.uint8)
    files = {"train-images-idx3-ubyte.gz": gzip.compress(idx_bytes(images)),
             "train-labels-idx1-ubyte.gz": gzip.compress(idx_bytes(labels)),
             "t10k-images-idx3-ubyte": idx_bytes(images[:2]),
             "t10k-labels-idx1-ubyte": idx_bytes(labels[:2])}
    cls = type("MNIST", (D.MNIST,), {"sha256": {k: (digest(v),) for k, v in files.items()}})
    return cls, files, images, labels


def write(folder: Path, files: dict[str, bytes]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, blob in files.items():
        (folder / name).write_bytes(blob)


# ----------------------------------------------------------------------------- MNIST-style
def test_mnist_reads_torchvision_layout_gz_and_raw(tmp_path, mnist_files):
    cls, files, images, labels = mnist_files
    write(tmp_path / "MNIST" / "raw", files)
    train = cls(tmp_path, train=True)
    test = cls(tmp_path, train=False, transform=T.ToTensor())
    assert np.array_equal(train.data, images) and train.targets.tolist() == labels.tolist()
    assert train.data.dtype == np.uint8 and train.targets.dtype == np.int64 and len(test) == 2
    img, target = test[1]
    assert isinstance(img, tt.Tensor) and img.shape == (1, 28, 28) and type(target) is int
    np.testing.assert_allclose(img.data[0], images[1] / 255.0, rtol=1e-6)


def test_mnist_flat_root_works_too(tmp_path, mnist_files):
    cls, files, images, _ = mnist_files
    write(tmp_path, files)
    assert np.array_equal(cls(tmp_path).data, images)


def test_corrupt_file_is_refused_with_one_line(tmp_path, mnist_files):
    cls, files, _, _ = mnist_files
    write(tmp_path, files)
    blob = bytearray(files["train-labels-idx1-ubyte.gz"])
    blob[-5] ^= 1
    (tmp_path / "train-labels-idx1-ubyte.gz").write_bytes(bytes(blob))
    with pytest.raises(RuntimeError) as err:
        cls(tmp_path, train=True)
    msg = str(err.value)
    assert "train-labels-idx1-ubyte.gz" in msg and "SHA-256" in msg and "\n" not in msg


def test_missing_file_says_where_to_put_it(tmp_path, mnist_files):
    cls, _, _, _ = mnist_files
    with pytest.raises(RuntimeError) as err:
        cls(tmp_path, train=True)
    msg = str(err.value)
    assert "train-images-idx3-ubyte.gz not found" in msg and "download=True" in msg
    assert "\n" not in msg and not (tmp_path / "MNIST").exists(), "nothing written"


def test_download_from_a_local_mirror_is_verified_and_atomic(tmp_path, mnist_files):
    cls, files, images, _ = mnist_files
    mirror = tmp_path / "mirror"
    write(mirror, {k: v for k, v in files.items() if k.endswith(".gz")})
    local = type("MNIST", (cls,), {"mirrors": (mirror.as_uri() + "/",)})
    ds = local(tmp_path / "cache", train=True, download=True)
    assert np.array_equal(ds.data, images)
    raw = tmp_path / "cache" / "MNIST" / "raw"
    assert sorted(p.name for p in raw.iterdir()) == ["train-images-idx3-ubyte.gz",
                                                      "train-labels-idx1-ubyte.gz"]
    # A mirror serving the wrong bytes: refused, and no partial file is left behind.
    (mirror / "t10k-images-idx3-ubyte.gz").write_bytes(b"not the file")
    with pytest.raises(RuntimeError, match="SHA-256") as err:
        type("MNIST", (local,), {"sha256": {**local.sha256,
                                            "t10k-images-idx3-ubyte.gz": ("0" * 64,)}})(
            tmp_path / "cache2", train=False, download=True)
    assert "\n" not in str(err.value)
    assert list((tmp_path / "cache2" / "MNIST" / "raw").iterdir()) == []


def test_default_root_is_the_cache_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("TINYTORCH_DATA", str(tmp_path / "here"))
    assert D.default_root() == tmp_path / "here"
    monkeypatch.delenv("TINYTORCH_DATA")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert D.default_root() == tmp_path / ".cache" / "tinytorch"


# ----------------------------------------------------------------------------- Fashion-MNIST
def test_fashion_mnist_reads_the_shipped_subset_like_the_course_loader():
    root = L.DATASETS_DIR / "fashion_mnist"
    split = L.load_fashion_mnist()
    train, test = D.FashionMNIST(root, train=True), D.FashionMNIST(root, train=False)
    assert np.array_equal(train.data, split.train_x) and np.array_equal(test.data, split.test_x)
    assert np.array_equal(train.targets, split.train_y)
    assert np.array_equal(test.targets, split.test_y)
    assert train.classes == list(L.FASHION_MNIST_CLASSES)


def test_fashion_mnist_digests_agree_with_the_manifest_and_the_extraction_script():
    """One source each: the subset's digests are those in MANIFEST.json, the Debian ones those
    the extraction script checks its input against."""
    files = L.manifest()["files"]
    spec = importlib.util.spec_from_file_location(
        "extract_fm", L.DATASETS_DIR / "fashion_mnist" / "extract_fashion_mnist.py")
    assert spec and spec.loader
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    for name, entry in files.items():
        if entry["dataset"] == "fashion_mnist":
            assert entry["sha256"] in D.FashionMNIST.sha256[Path(name).name], name
    for name, sha in script.SOURCE_SHA256.items():
        assert sha in D.FashionMNIST.sha256[name], name


def test_raw_subset_file_is_accepted_after_gunzip(tmp_path):
    for name in ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
        blob = (L.DATASETS_DIR / "fashion_mnist" / f"{name}.gz").read_bytes()
        (tmp_path / name).write_bytes(gzip.decompress(blob))
    assert len(D.FashionMNIST(tmp_path, train=False)) == 1000


# ----------------------------------------------------------------------------- CIFAR-10
CIFAR_NAMES = ("data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin",
               "data_batch_5.bin", "test_batch.bin")


def cifar_archive(rng, sizes=(2, 1, 3, 1, 2, 2), extra=()):
    planes, labels, buf = {}, {}, io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, n in zip(CIFAR_NAMES, sizes, strict=True):
            planes[name] = rng.integers(0, 256, (n, 3, 32, 32)).astype(np.uint8)
            labels[name] = rng.integers(0, 10, n).astype(np.uint8)
            blob = np.concatenate([labels[name][:, None], planes[name].reshape(n, -1)], 1)
            info = tarfile.TarInfo(f"cifar-10-batches-bin/{name}")
            info.size = blob.nbytes
            tar.addfile(info, io.BytesIO(blob.tobytes()))
        for member_name, payload in extra:
            info = tarfile.TarInfo(member_name)
            info.size = len(payload)
            tar.addfile(info, io.BytesIO(payload))
    return buf.getvalue(), planes, labels


def tiny_cifar(blob: bytes):
    return type("CIFAR10", (D.CIFAR10,), {"tgz_sha256": (digest(blob),)})


def test_cifar10_extracts_once_into_the_cache_and_reads_the_binary_batches(tmp_path):
    blob, planes, labels = cifar_archive(np.random.default_rng(1),
                                         extra=[("../evil.bin", b"x"), ("cifar-10-batches-bin/"
                                                                        "readme.html", b"<p>")])
    (tmp_path / "cifar-10-binary.tar.gz").write_bytes(blob)
    cls = tiny_cifar(blob)
    train = cls(tmp_path, train=True)
    want = np.concatenate([planes[n] for n in CIFAR_NAMES[:5]]).transpose(0, 2, 3, 1)
    assert np.array_equal(train.data, want) and train.data.shape == (9, 32, 32, 3)
    assert train.targets.tolist() == np.concatenate([labels[n] for n in CIFAR_NAMES[:5]]).tolist()
    cache = tmp_path / "cifar-10-batches-bin"
    assert sorted(p.name for p in cache.iterdir()) == sorted([*CIFAR_NAMES, "SHA256SUMS"])
    assert not (tmp_path.parent / "evil.bin").exists()
    # The second use reads the cache (the archive may be gone) ...
    (tmp_path / "cifar-10-binary.tar.gz").unlink()
    test = cls(tmp_path, train=False, transform=T.ToTensor())
    img, target = test[0]
    assert img.shape == (3, 32, 32) and type(target) is int
    # ... and a corrupted cached batch without its archive is refused, in one line.
    (cache / "test_batch.bin").write_bytes(b"\x00" * 3073)
    with pytest.raises(RuntimeError, match="cifar-10-binary.tar.gz: not found") as err:
        cls(tmp_path, train=False)
    assert "\n" not in str(err.value)
    # With the archive back, the cache is rebuilt from it.
    (tmp_path / "cifar-10-binary.tar.gz").write_bytes(blob)
    assert len(cls(tmp_path, train=False)) == 2


def test_cifar10_refuses_a_wrong_archive_and_an_incomplete_one(tmp_path):
    blob, _, _ = cifar_archive(np.random.default_rng(2))
    (tmp_path / "cifar-10-binary.tar.gz").write_bytes(blob[:-10])
    with pytest.raises(RuntimeError, match="SHA-256"):
        tiny_cifar(blob)(tmp_path)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("cifar-10-batches-bin/data_batch_1.bin")
        info.size = 3073
        tar.addfile(info, io.BytesIO(b"\x01" * 3073))
    (tmp_path / "cifar-10-binary.tar.gz").write_bytes(buf.getvalue())
    with pytest.raises(RuntimeError, match="lacks data_batch_2.bin"):
        tiny_cifar(buf.getvalue())(tmp_path)


def test_cifar10_download_from_a_local_mirror(tmp_path):
    blob, _, _ = cifar_archive(np.random.default_rng(3))
    (tmp_path / "cifar-10-binary.tar.gz").write_bytes(blob)
    cls = type("CIFAR10", (tiny_cifar(blob),),
               {"url": (tmp_path / "cifar-10-binary.tar.gz").as_uri()})
    ds = cls(tmp_path / "cache", train=False, download=True)
    assert len(ds) == 2 and (tmp_path / "cache" / "cifar-10-binary.tar.gz").is_file()


def test_known_archive_digest_is_the_published_one():
    assert D.CIFAR10.tgz_sha256[0] == (
        "c4a38c50a1bc5f3a1c5537f2155ab9d68f9f25eb1ed8d9ddda3db29a59bca1dd")
    assert D.CIFAR10.url.endswith("cifar-10-binary.tar.gz")


# ----------------------------------------------------------------------------- reproducibility
def test_manual_seed_reproduces_a_whole_augmented_shuffled_pipeline():
    rng = np.random.default_rng(4)
    images = rng.integers(0, 256, (20, 8, 8, 3)).astype(np.uint8)

    class Images(data.Dataset):
        def __init__(self):
            self.transform = T.Compose([T.ToTensor(), T.RandomCrop(6, padding=1),
                                        T.RandomHorizontalFlip(), T.Normalize(0.5, 0.25)])

        def __getitem__(self, i):
            return self.transform(images[i]), i

        def __len__(self):
            return len(images)

    def run():
        tt.manual_seed(11)
        return [(xb.data.copy(), yb.tolist()) for xb, yb in
                data.DataLoader(Images(), batch_size=6, shuffle=True)]

    a, b = run(), run()
    assert [y for _, y in a] == [y for _, y in b]
    assert all(np.array_equal(x1, x2) for (x1, _), (x2, _) in zip(a, b, strict=True))
    assert a[0][0].shape == (6, 3, 6, 6) and a[0][0].dtype == np.float32


def test_generator_state_resumes_a_shuffle():
    g = data.Generator().manual_seed(5)
    sampler = data.RandomSampler(range(10), generator=g)
    list(sampler)
    state = g.get_state()
    nxt = list(sampler)
    g.set_state(state)
    assert list(sampler) == nxt
    with pytest.raises(TypeError):
        list(data.RandomSampler(range(3), generator=5))  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- API rules
def test_dataloader_argument_rules():
    ds = data.TensorDataset(tt.Tensor(np.arange(5)))
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        data.DataLoader(ds, shuffle=True, sampler=[0, 1])
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        data.DataLoader(ds, batch_size=2, batch_sampler=[[0, 1]])
    with pytest.raises(ValueError, match="batch_size=None"):
        data.DataLoader(ds, batch_size=None, drop_last=True)
    with pytest.raises(ValueError, match="num_workers=2: .* use num_workers=0"):
        data.DataLoader(ds, num_workers=2)
    for bad in ({"num_workers": -1}, {"timeout": -1}, {"prefetch_factor": 2},
                {"persistent_workers": True}, {"multiprocessing_context": "spawn"}):
        with pytest.raises(ValueError):
            data.DataLoader(ds, **bad)
    with pytest.warns(UserWarning, match="pin_memory"):
        pinned = data.DataLoader(ds, batch_size=2, pin_memory=True)
    assert [b[0].tolist() for b in pinned] == [[0, 1], [2, 3], [4]]
    # PyTorch's positional order: dataset, batch_size, shuffle, sampler, batch_sampler,
    # num_workers, collate_fn, pin_memory, drop_last
    positional = data.DataLoader(ds, 2, False, None, None, 0, None, False, True)
    assert (positional.batch_size, positional.drop_last, len(positional)) == (2, True, 2)
    with pytest.raises(ValueError, match="Size mismatch"):
        data.TensorDataset(tt.Tensor(np.zeros(3)), tt.Tensor(np.zeros(4)))
    loader = data.DataLoader(ds, batch_size=2)
    assert (loader.dataset, loader.batch_size, loader.drop_last) == (ds, 2, False)
    assert isinstance(loader.sampler, data.SequentialSampler)
    assert isinstance(data.DataLoader(ds, shuffle=True).sampler, data.RandomSampler)


def test_pytorch_layout_of_the_public_api():
    assert tt.data.DataLoader is tt.dataloader.DataLoader and tt.Generator is data.Generator
    for name in ("Compose", "ToTensor", "Normalize", "RandomCrop", "RandomHorizontalFlip"):
        assert getattr(T, name) is getattr(tt.dataloader, name)
    for name in ("MNIST", "FashionMNIST", "CIFAR10"):
        assert getattr(D, name) is getattr(tt.dataloader, name)
    release = json.loads((L.DATASETS_DIR.parent / "student_release" / "modules.json").read_text())
    assert any(m["slug"] == "dataloader" for m in release)
