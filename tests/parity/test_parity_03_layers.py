"""PyTorch parity · module 03 (layers): Linear/Sequential/Flatten/Dropout values and gradients."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tinytorch_ref as tt

pytestmark = pytest.mark.parity
RTOL, ATOL = 1e-5, 1e-5


def _copy_linear(ours: tt.nn.Linear, theirs: torch.nn.Linear) -> None:
    with torch.no_grad():
        theirs.weight.copy_(torch.from_numpy(ours.weight.numpy()))
        if ours.bias is not None:
            theirs.bias.copy_(torch.from_numpy(ours.bias.numpy()))


@pytest.mark.parametrize("in_f,out_f,bias,batch", [(4, 3, True, (5,)), (7, 2, False, (2, 3)),
                                                    (1, 6, True, ()), (16, 16, True, (8,))])
def test_linear_forward_and_gradients(in_f, out_f, bias, batch):
    rng = np.random.default_rng(in_f * 100 + out_f)
    ours = tt.nn.Linear(in_f, out_f, bias=bias)
    theirs = torch.nn.Linear(in_f, out_f, bias=bias)
    _copy_linear(ours, theirs)
    x = rng.standard_normal((*batch, in_f)).astype(np.float32)
    a, b = tt.Tensor(x.copy(), requires_grad=True), torch.tensor(x, requires_grad=True)
    ya, yb = ours(a), theirs(b)
    np.testing.assert_allclose(ya.numpy(), yb.detach().numpy(), rtol=RTOL, atol=ATOL)
    w = rng.standard_normal(yb.shape).astype(np.float32)
    (ya * tt.Tensor(w)).sum().backward()
    (yb * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(),
                               rtol=RTOL, atol=ATOL)
    if bias:
        np.testing.assert_allclose(ours.bias.grad.numpy(), theirs.bias.grad.numpy(),
                                   rtol=RTOL, atol=ATOL)


def test_linear_init_distribution_matches_torch():
    """Same bound as kaiming_uniform_(a=sqrt(5)): max |w| close to 1/sqrt(fan_in) for both."""
    tt.manual_seed(0)
    torch.manual_seed(0)
    ours, theirs = tt.nn.Linear(256, 512), torch.nn.Linear(256, 512)
    for a, b in [(ours.weight.numpy(), theirs.weight.detach().numpy()),
                 (ours.bias.numpy(), theirs.bias.detach().numpy())]:
        assert a.shape == b.shape and a.dtype == b.dtype
        assert abs(np.abs(a).max() - np.abs(b).max()) < 2e-3
        assert abs(a.std() - b.std()) < 0.1 * b.std()


def test_mlp_and_state_dict_names_match_torch():
    ours = tt.nn.Sequential(tt.nn.Linear(5, 8), tt.nn.ReLU(), tt.nn.Dropout(0.2),
                            tt.nn.Linear(8, 3), tt.nn.Tanh())
    theirs = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.ReLU(), torch.nn.Dropout(0.2),
                                 torch.nn.Linear(8, 3), torch.nn.Tanh())
    theirs.load_state_dict({k: torch.from_numpy(v) for k, v in ours.state_dict().items()})
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    ours.eval()
    theirs.eval()
    x = np.random.default_rng(1).standard_normal((6, 5)).astype(np.float32)
    np.testing.assert_allclose(ours(tt.Tensor(x)).numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("start,end", [(1, -1), (0, 1), (1, 2), (-2, -1), (0, -1)])
def test_flatten_matches_torch(start, end):
    x = np.random.default_rng(2).standard_normal((2, 3, 4, 5)).astype(np.float32)
    a = tt.Tensor(x.copy(), requires_grad=True)
    b = torch.tensor(x, requires_grad=True)
    ya, yb = tt.nn.Flatten(start, end)(a), torch.nn.Flatten(start, end)(b)
    assert tuple(ya.shape) == tuple(yb.shape)
    np.testing.assert_array_equal(ya.numpy(), yb.detach().numpy())
    (ya * ya).sum().backward()
    (yb * yb).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=RTOL)


def test_dropout_statistics_and_gradient_match_torch():
    x = np.ones((400, 250), dtype=np.float32)
    tt.manual_seed(0)
    a = tt.Tensor(x.copy(), requires_grad=True)
    ya = tt.nn.Dropout(0.3)(a)
    yb = torch.nn.Dropout(0.3)(torch.tensor(x))
    assert set(np.unique(ya.numpy())) == set(np.unique(yb.numpy()))  # {0, 1/0.7}
    assert abs((ya.numpy() == 0).mean() - (yb.numpy() == 0).mean()) < 0.01
    ya.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ya.numpy())  # gradient = the scaled mask
