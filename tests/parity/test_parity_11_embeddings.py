"""PyTorch parity · module 11 (embeddings): lookup, padding_idx, init, errors, positions."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from op_catalogue_sequence import SEQUENCE_OPS

import tinytorch_ref as tt
from tinytorch_ref import embeddings as E

pytestmark = pytest.mark.parity
RTOL, ATOL = 1e-6, 1e-6


def _pair(x: np.ndarray) -> tuple[tt.Tensor, torch.Tensor]:
    return tt.Tensor(x.copy(), requires_grad=True), torch.tensor(x, requires_grad=True)


@pytest.mark.parametrize("op", [op for op in SEQUENCE_OPS if op.theirs is not None],
                         ids=lambda op: op.name)
def test_catalogue_forward_and_backward_match_torch(op):
    rng = np.random.default_rng(len(op.name))
    arrays = [rng.standard_normal(s).astype(np.float32) for s in op.shapes]
    ours = [tt.Tensor(a.copy(), requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    ya, yb = op.ours(*ours), op.torch_fn()(*theirs)
    np.testing.assert_allclose(ya.numpy(), yb.detach().numpy(), rtol=RTOL, atol=ATOL)
    w = rng.standard_normal(tuple(yb.shape)).astype(np.float32)
    (ya * tt.Tensor(w)).sum().backward()
    (yb * torch.tensor(w)).sum().backward()
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(), (7,), (3, 4), (2, 3, 5)])
@pytest.mark.parametrize("padding_idx", [None, 0, 3, -1, -6])
@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_functional_embedding_matches_torch(shape, padding_idx, dtype):
    rng = np.random.default_rng(abs(hash((shape, padding_idx))) % 2**32)
    table = rng.standard_normal((6, 4)).astype(np.float32)
    ids = rng.integers(0, 6, size=shape).astype(dtype)
    if ids.size > 2:
        ids.flat[:3] = 3  # repeats, on the padding row when padding_idx is 3
    a, b = _pair(table)
    ya = tt.nn.functional.embedding(tt.Tensor(ids), a, padding_idx=padding_idx)
    yb = torch.nn.functional.embedding(torch.from_numpy(ids), b, padding_idx=padding_idx)
    assert tuple(ya.shape) == tuple(yb.shape) and ya.dtype == np.float32
    np.testing.assert_array_equal(ya.numpy(), yb.detach().numpy())
    g = rng.standard_normal(tuple(yb.shape)).astype(np.float32)
    (ya * tt.Tensor(g)).sum().backward()
    (yb * torch.from_numpy(g)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("padding_idx", [None, 0, 4, -1, -5])
def test_module_matches_torch_with_copied_weights(padding_idx):
    ours = tt.nn.Embedding(5, 3, padding_idx=padding_idx)
    theirs = torch.nn.Embedding(5, 3, padding_idx=padding_idx)
    assert ours.padding_idx == theirs.padding_idx
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
    if padding_idx is not None:
        np.testing.assert_array_equal(ours.weight.numpy()[ours.padding_idx], 0.0)
        np.testing.assert_array_equal(theirs.weight.detach().numpy()[theirs.padding_idx], 0.0)
    theirs.load_state_dict({k: torch.from_numpy(v) for k, v in ours.state_dict().items()})
    ids = np.array([[0, 4, 4, 1], [2, 3, 0, 4]])
    ya, yb = ours(tt.Tensor(ids)), theirs(torch.from_numpy(ids))
    np.testing.assert_array_equal(ya.numpy(), yb.detach().numpy())
    (ya * ya).sum().backward()
    (yb * yb).sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(),
                               rtol=RTOL, atol=ATOL)


def test_init_distribution_matches_torch():
    tt.manual_seed(0)
    torch.manual_seed(0)
    a = tt.nn.Embedding(4000, 32).weight.numpy()
    b = torch.nn.Embedding(4000, 32).weight.detach().numpy()
    assert a.dtype == b.dtype == np.float32
    assert abs(a.mean() - b.mean()) < 0.02 and abs(a.std() - b.std()) < 0.02
    assert abs(a.std() - 1.0) < 0.02


def test_errors_match_torch_where_torch_raises_python_errors():
    ours, theirs = tt.nn.Embedding(5, 3), torch.nn.Embedding(5, 3)
    for ids in ([5], [-1], [[0, 7]]):
        with pytest.raises(IndexError, match="index out of range in self"):
            ours(tt.Tensor(np.array(ids)))
        with pytest.raises(IndexError, match="index out of range in self"):
            theirs(torch.tensor(ids))
    with pytest.raises(RuntimeError):
        ours(tt.Tensor(np.array([1.0], dtype=np.float32)))
    with pytest.raises(RuntimeError):
        theirs(torch.tensor([1.0]))
    # torch asserts (AssertionError); we raise ValueError with the same message
    for bad in (5, -6):
        with pytest.raises(ValueError, match="Padding_idx must be within num_embeddings"):
            tt.nn.Embedding(5, 3, padding_idx=bad)
        with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
            torch.nn.Embedding(5, 3, padding_idx=bad)


def test_from_pretrained_matches_torch():
    w = np.random.default_rng(3).standard_normal((4, 2)).astype(np.float32)
    for freeze in (True, False):
        ours = tt.nn.Embedding.from_pretrained(w, freeze=freeze, padding_idx=1)
        theirs = torch.nn.Embedding.from_pretrained(torch.from_numpy(w), freeze=freeze,
                                                    padding_idx=1)
        np.testing.assert_array_equal(ours.weight.numpy(), theirs.weight.detach().numpy())
        assert ours.weight.requires_grad == theirs.weight.requires_grad
        assert ours.padding_idx == theirs.padding_idx


@pytest.mark.parametrize("num_positions,dim", [(50, 16), (7, 2), (128, 64)])
def test_sinusoidal_table_matches_the_pytorch_tutorial_formula(num_positions, dim):
    """The table of the PyTorch transformer tutorial's ``PositionalEncoding`` (even D)."""
    position = torch.arange(num_positions, dtype=torch.float64).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, dim, 2, dtype=torch.float64)
                         * (-math.log(10000.0) / dim))
    pe = torch.zeros(num_positions, dim, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    ours = E.sinusoidal_positional_encoding(num_positions, dim).numpy()
    np.testing.assert_allclose(ours, pe.float().numpy(), rtol=0, atol=1e-6)


@pytest.mark.parametrize("offset", [0, 3])
def test_learned_positions_match_a_torch_position_embedding(offset):
    rng = np.random.default_rng(offset)
    ours = E.LearnedPositionalEmbedding(10, 4)
    theirs = torch.nn.Embedding(10, 4)
    theirs.load_state_dict({"weight": torch.from_numpy(ours.weight.numpy())})
    x = rng.standard_normal((2, 5, 4)).astype(np.float32)
    a, b = _pair(x)
    ya = ours(a, offset=offset)
    yb = b + theirs(torch.arange(offset, offset + 5))
    np.testing.assert_allclose(ya.numpy(), yb.detach().numpy(), rtol=RTOL, atol=ATOL)
    g = rng.standard_normal((2, 5, 4)).astype(np.float32)
    (ya * tt.Tensor(g)).sum().backward()
    (yb * torch.from_numpy(g)).sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(),
                               rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=RTOL, atol=ATOL)
