"""PyTorch parity for module 08: default_collate, samplers, DataLoader batches, random_split,
and the transforms' arithmetic (torchvision is not installed: its semantics are rebuilt from
torch ops — padding with ``torch.nn.functional.pad``, flips with ``torch.flip``)."""

from __future__ import annotations

import collections

import numpy as np
import pytest
import torch
import torch.nn.functional as F  # noqa: N812 - PyTorch's conventional name
from torch.utils import data as tdata

import tinytorch_ref as tt
from tinytorch_ref import data
from tinytorch_ref.data import transforms as T  # noqa: N812 - torchvision's conventional name

Pair = collections.namedtuple("Pair", "image label")


def _same(ours, theirs, where="batch"):
    """Recursively compare a tinytorch batch with a torch batch: types, dtypes, values."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, tt.Tensor), f"{where}: {type(ours).__name__} is not a Tensor"
        want = theirs.numpy()
        assert ours.data.dtype == want.dtype, f"{where}: dtype {ours.data.dtype} != {want.dtype}"
        np.testing.assert_array_equal(ours.data, want, err_msg=where)
    elif isinstance(theirs, dict):
        assert type(ours) is dict and list(ours) == list(theirs), where
        for k in theirs:
            _same(ours[k], theirs[k], f"{where}[{k!r}]")
    elif isinstance(theirs, tuple) and hasattr(theirs, "_fields"):
        assert type(ours) is type(theirs), where
        for i, (o, t) in enumerate(zip(ours, theirs, strict=True)):
            _same(o, t, f"{where}.{theirs._fields[i]}")
    elif isinstance(theirs, list):
        assert type(ours) is list and len(ours) == len(theirs), f"{where}: {type(ours)}"
        for i, (o, t) in enumerate(zip(ours, theirs, strict=True)):
            _same(o, t, f"{where}[{i}]")
    else:
        assert ours == theirs and type(ours) is type(theirs), f"{where}: {ours!r} != {theirs!r}"


def _samples(kind, rng, b=3):
    if kind == "pairs":
        return [(rng.standard_normal((2, 3)).astype(np.float32), int(rng.integers(10)))
                for _ in range(b)]
    if kind == "numbers":
        return [(int(rng.integers(10)), float(rng.standard_normal()), bool(i % 2),
                 np.float32(rng.standard_normal()), np.int32(i), np.float64(i / 3), np.bool_(i))
                for i in range(b)]
    if kind == "arrays":
        return [(rng.integers(0, 255, (1, 2, 2)).astype(np.uint8), np.array(float(i)),
                 rng.standard_normal(3)) for i in range(b)]
    if kind == "dicts":
        return [{"x": rng.standard_normal(2).astype(np.float32), "y": i, "name": f"s{i}",
                 "raw": b"ab", "nested": {"w": [i, float(i)], "t": (i, i * 2)}}
                for i in range(b)]
    if kind == "namedtuples":
        return [Pair(rng.standard_normal((1, 2)).astype(np.float32), i) for i in range(b)]
    if kind == "lists":
        return [[rng.standard_normal(2), [i, i + 1], "a"] for i in range(b)]
    raise KeyError(kind)


def _to_ours(x):
    """The same samples with our Tensors where torch would get tensors (for Tensor inputs)."""
    return x


@pytest.mark.parametrize("kind", ["pairs", "numbers", "arrays", "dicts", "namedtuples", "lists"])
def test_default_collate_matches_torch(kind):
    samples = _samples(kind, np.random.default_rng(0))
    _same(data.default_collate(samples), tdata.default_collate(samples))


def test_default_collate_of_tensors_matches_torch():
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((3, 2)).astype(np.float32) for _ in range(4)]
    ours = data.default_collate([(tt.Tensor(a), tt.Tensor(np.int64(i))) for i, a in
                                 enumerate(arrays)])
    theirs = tdata.default_collate([(torch.from_numpy(a), torch.tensor(i)) for i, a in
                                    enumerate(arrays)])
    _same(ours, theirs)


@pytest.mark.parametrize("samples_fn", [
    lambda T_: [T_(np.zeros(3, np.float32)), T_(np.zeros(4, np.float32))],
    lambda T_: [(1, 2), (3,)],
    lambda T_: [object(), object()],
    lambda T_: [np.array(["a"]), np.array(["b"])],
], ids=["ragged_tensors", "unequal_tuples", "objects", "string_arrays"])
def test_default_collate_errors_match_torch(samples_fn):
    with pytest.raises(Exception) as theirs:
        tdata.default_collate(samples_fn(torch.from_numpy))
    with pytest.raises(Exception) as ours:
        data.default_collate(samples_fn(tt.Tensor))
    assert type(ours.value) is type(theirs.value)
    if not isinstance(theirs.value, TypeError) or "object" not in str(theirs.value):
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("n", [1, 7, 10, 12])
@pytest.mark.parametrize("batch_size", [1, 3, 4, 12, 20])
@pytest.mark.parametrize("drop_last", [False, True])
def test_sequential_loader_batches_and_len_match_torch(n, batch_size, drop_last):
    x = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
    y = np.arange(n)
    ours = data.DataLoader(data.TensorDataset(tt.Tensor(x), tt.Tensor(y)),
                           batch_size=batch_size, drop_last=drop_last)
    theirs = tdata.DataLoader(tdata.TensorDataset(torch.from_numpy(x), torch.from_numpy(y)),
                              batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs)
    got, want = list(ours), list(theirs)
    assert len(got) == len(want) == len(ours)
    for o, t in zip(got, want, strict=True):
        _same(o, t)


@pytest.mark.parametrize("indices", [list(range(9)), [5, 3, 8, 0], []])
@pytest.mark.parametrize("batch_size", [1, 2, 4])
@pytest.mark.parametrize("drop_last", [False, True])
def test_batch_sampler_matches_torch(indices, batch_size, drop_last):
    ours = data.BatchSampler(indices, batch_size, drop_last)
    theirs = tdata.BatchSampler(indices, batch_size, drop_last)
    assert list(ours) == list(theirs) and len(ours) == len(theirs)
    assert list(data.SequentialSampler(indices)) == list(tdata.SequentialSampler(indices))


@pytest.mark.parametrize("bad", [{"batch_size": 0, "drop_last": False},
                                 {"batch_size": True, "drop_last": False},
                                 {"batch_size": 2, "drop_last": 1}])
def test_batch_sampler_argument_errors_match_torch(bad):
    with pytest.raises(ValueError) as theirs:
        tdata.BatchSampler(range(3), **bad)
    with pytest.raises(ValueError) as ours:
        data.BatchSampler(range(3), **bad)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("n,num_samples,replacement", [(10, None, False), (4, 11, False),
                                                       (5, 3, False), (6, 20, True)])
def test_random_sampler_counts_match_torch(n, num_samples, replacement):
    """Different RNGs, same semantics: length and how often each index can appear."""
    ours = list(data.RandomSampler(range(n), replacement, num_samples,
                                   generator=data.Generator().manual_seed(0)))
    theirs = list(tdata.RandomSampler(range(n), replacement, num_samples,
                                      generator=torch.Generator().manual_seed(0)))
    assert len(ours) == len(theirs) == len(data.RandomSampler(range(n), replacement, num_samples))
    assert all(type(i) is int for i in ours) and all(type(i) is int for i in theirs)
    if not replacement:
        assert sorted(np.bincount(ours, minlength=n)) == sorted(np.bincount(theirs, minlength=n))


def test_shuffled_loader_semantics_match_torch():
    n = 23
    ds_o = data.TensorDataset(tt.Tensor(np.arange(n)))
    ds_t = tdata.TensorDataset(torch.arange(n))
    ours = data.DataLoader(ds_o, batch_size=5, shuffle=True, generator=data.Generator())
    theirs = tdata.DataLoader(ds_t, batch_size=5, shuffle=True, generator=torch.Generator())
    for _ in range(2):
        o = [b[0].tolist() for b in ours]
        t = [b[0].tolist() for b in theirs]
        assert [len(b) for b in o] == [len(b) for b in t]
        assert sorted(sum(o, [])) == sorted(sum(t, [])) == list(range(n))
    assert data.Generator().initial_seed() == torch.Generator().initial_seed()


@pytest.mark.parametrize("lengths", [[4, 7], [0.3, 0.7], [0.33, 0.33, 0.34], [0.5, 0.5]])
def test_random_split_sizes_match_torch(lengths):
    ours = data.random_split(range(11), lengths, generator=data.Generator().manual_seed(1))
    theirs = tdata.random_split(range(11), lengths, generator=torch.Generator().manual_seed(1))
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    assert sorted(i for s in ours for i in s) == list(range(11))


# ----------------------------------------------------------------------------- transforms
def test_normalize_matches_torch_arithmetic():
    rng = np.random.default_rng(2)
    img = rng.standard_normal((2, 3, 5, 4)).astype(np.float32)
    mean, std = [0.1, -0.2, 0.3], [0.5, 1.5, 2.0]
    want = ((torch.from_numpy(img) - torch.tensor(mean).view(-1, 1, 1))
            / torch.tensor(std).view(-1, 1, 1)).numpy()
    got = T.Normalize(mean, std)(img)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("padding", [1, (2, 1), (0, 1, 2, 3)])
@pytest.mark.parametrize("ours_mode,torch_mode", [("constant", "constant"), ("edge", "replicate"),
                                                  ("reflect", "reflect")])
def test_pad_matches_torch(padding, ours_mode, torch_mode):
    img = np.arange(2 * 4 * 5, dtype=np.float32).reshape(2, 4, 5)
    p = [padding] * 4 if isinstance(padding, int) else (
        [padding[0], padding[0], padding[1], padding[1]] if len(padding) == 2
        else [padding[0], padding[2], padding[1], padding[3]])  # torch: (left, right, top, bottom)
    kw = {"value": 7.0} if torch_mode == "constant" else {}
    want = F.pad(torch.from_numpy(img)[None], p, mode=torch_mode, **kw)[0].numpy()
    got = T.pad(img, padding, fill=7.0, padding_mode=ours_mode)
    np.testing.assert_array_equal(got, want)


def test_random_crop_is_the_torch_crop_of_the_padded_image_at_the_drawn_corner():
    rng = np.random.default_rng(3)
    img = rng.standard_normal((3, 6, 7)).astype(np.float32)
    padded = F.pad(torch.from_numpy(img)[None], [2, 2, 2, 2])[0]
    for seed in range(5):
        tt.manual_seed(seed)
        i, j, th, tw = T.RandomCrop.get_params(padded.numpy(), (5, 6))
        tt.manual_seed(seed)
        got = T.RandomCrop((5, 6), padding=2)(img)
        np.testing.assert_array_equal(got, padded[:, i:i + th, j:j + tw].numpy())


def test_flip_and_to_tensor_match_torch():
    rng = np.random.default_rng(4)
    img = rng.standard_normal((3, 4, 5)).astype(np.float32)
    np.testing.assert_array_equal(T.RandomHorizontalFlip(p=1.0)(img),
                                  torch.flip(torch.from_numpy(img), dims=[-1]).numpy())
    hwc = rng.integers(0, 256, (4, 5, 3)).astype(np.uint8)
    want = torch.from_numpy(hwc).permute(2, 0, 1).float().div(255).numpy()
    got = T.ToTensor()(hwc)
    assert got.dtype == np.float32 and got.shape == (3, 4, 5)
    np.testing.assert_allclose(got.data, want, rtol=1e-6, atol=1e-7)
