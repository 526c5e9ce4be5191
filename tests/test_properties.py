"""Property tests of the reference framework (hypothesis, derandomized 'grading' profile).

Each property is a law the framework must obey for *every* input of a family — broadcasting,
views, reductions, stable softmax, the gradient of a broadcast product — checked against
NumPy, the oracle of the underlying arithmetic.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays, mutually_broadcastable_shapes

import tinytorch_ref as tt
from tinytorch_ref.nn import functional as F

FINITE = st.floats(-100, 100, allow_nan=False, allow_infinity=False, width=32)


def f32(shape):
    return arrays(np.float32, shape, elements=FINITE)


@given(st.data(), mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4))
def test_broadcast_arithmetic_matches_numpy(data, shapes):
    a = data.draw(f32(shapes.input_shapes[0]))
    b = data.draw(f32(shapes.input_shapes[1]))
    ta, tb = tt.Tensor(a), tt.Tensor(b)
    assert (ta + tb).shape == shapes.result_shape
    np.testing.assert_array_equal((ta + tb).numpy(), a + b)
    np.testing.assert_array_equal((ta * tb).numpy(), a * b)
    np.testing.assert_array_equal((ta - tb).numpy(), a - b)


@given(arrays(np.float32, array_shapes(min_dims=2, max_dims=4, max_side=5), elements=FINITE),
       st.data())
def test_transpose_is_an_involutive_view(x, data):
    d0 = data.draw(st.integers(0, x.ndim - 1))
    d1 = data.draw(st.integers(0, x.ndim - 1))
    t = tt.Tensor(x)
    tr = t.transpose(d0, d1)
    assert np.shares_memory(tr.numpy(), t.numpy())
    np.testing.assert_array_equal(tr.transpose(d0, d1).numpy(), x)
    assert all(isinstance(s, int) for s in tr.stride())
    assert tr.stride()[d0] == t.stride()[d1]


@given(arrays(np.float32, array_shapes(min_dims=1, max_dims=4, max_side=5), elements=FINITE))
def test_reshape_round_trip_keeps_data_and_contiguity(x):
    t = tt.Tensor(x)
    flat = t.reshape(-1)
    assert flat.shape == (x.size,) and flat.is_contiguous()
    np.testing.assert_array_equal(flat.reshape(*x.shape).numpy(), x)
    assert t.numel() * 4 == t.memory_footprint()


@given(arrays(np.float64, array_shapes(min_dims=1, max_dims=3, max_side=5),
              elements=st.floats(-1e3, 1e3)), st.data())
def test_keepdim_reductions_broadcast_back(x, data):
    dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
    t = tt.Tensor(x)
    centred = (t - t.mean(dim=dim, keepdim=True)).numpy()
    np.testing.assert_allclose(centred.mean(axis=dim), 0.0, atol=1e-9 * (1 + np.abs(x).max()))
    np.testing.assert_allclose(t.sum(dim=dim).numpy(), x.sum(axis=dim), rtol=1e-12, atol=1e-9)
    assert t.max(dim=dim).values.shape == x.max(axis=dim).shape


@given(arrays(np.float32, st.tuples(st.integers(1, 4), st.integers(1, 6)), elements=FINITE),
       st.floats(-1e4, 1e4, allow_nan=False, width=32))
def test_softmax_is_shift_invariant_and_sums_to_one(x, shift):
    p = F.softmax(tt.Tensor(x), dim=1).numpy()
    q = F.softmax(tt.Tensor(x + np.float32(shift)), dim=1).numpy()
    assert np.all(np.isfinite(q)), "softmax must subtract the row max (no overflow)"
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(p, q, atol=1e-3)
    lp = F.log_softmax(tt.Tensor(x + np.float32(shift)), dim=1).numpy()
    assert np.all(np.isfinite(lp)) and np.all(lp <= 1e-6)


@given(st.data(), st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.integers(0, 3))
def test_batched_matmul_matches_numpy(data, n, k, m, batch):
    lead = (batch,) if batch else ()
    a = data.draw(arrays(np.float64, lead + (n, k), elements=st.floats(-10, 10)))
    b = data.draw(arrays(np.float64, (k, m), elements=st.floats(-10, 10)))
    np.testing.assert_allclose((tt.Tensor(a) @ tt.Tensor(b)).numpy(), a @ b, rtol=1e-12,
                               atol=1e-12)


@given(st.data(), mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4))
def test_gradient_of_a_broadcast_product_is_reduced_to_each_input(data, shapes):
    a = data.draw(arrays(np.float64, shapes.input_shapes[0], elements=st.floats(-5, 5)))
    b = data.draw(arrays(np.float64, shapes.input_shapes[1], elements=st.floats(-5, 5)))
    ta = tt.Tensor(a, requires_grad=True)
    tb = tt.Tensor(b, requires_grad=True)
    (ta * tb).sum().backward()
    # d/da sum(a * b) = b broadcast to the result, summed back to a's shape
    full_b = np.broadcast_to(b, shapes.result_shape)
    extra = len(shapes.result_shape) - a.ndim
    expect = full_b.sum(axis=tuple(range(extra))) if extra else full_b
    axes = tuple(i for i, s in enumerate(a.shape) if s == 1 and expect.shape[i] != 1)
    expect = expect.sum(axis=axes, keepdims=True) if axes else expect
    assert ta.grad.shape == a.shape and tb.grad.shape == b.shape
    np.testing.assert_allclose(ta.grad.numpy(), np.broadcast_to(expect, a.shape), atol=1e-9)


@given(arrays(np.float32, st.tuples(st.integers(1, 5), st.integers(2, 6)), elements=FINITE),
       st.data())
def test_cross_entropy_is_minus_log_softmax_at_the_target(z, data):
    y = np.array(data.draw(st.lists(st.integers(0, z.shape[1] - 1), min_size=z.shape[0],
                                    max_size=z.shape[0])))
    per = F.cross_entropy(tt.Tensor(z), tt.Tensor(y), reduction="none").numpy()
    lp = F.log_softmax(tt.Tensor(z), dim=1).numpy()
    assert np.all(per >= -1e-6)
    np.testing.assert_allclose(per, -lp[np.arange(len(y)), y], rtol=1e-5, atol=1e-5)
