"""Property tests of modules 11-12 (hypothesis, derandomized 'grading' profile).

Laws that hold for every input of a family: an embedding lookup is a one-hot matrix product
(forward and backward); attention is equivariant under permuting the queries and invariant
under permuting the keys and values together; its output rows are convex combinations of the
values; the safe softmax gives rows that sum to 1, or to 0 when everything is masked.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import tinytorch_ref as tt
from tinytorch_ref.attention import _SafeSoftmaxFn
from tinytorch_ref.nn import functional as F

SMALL = st.floats(-3, 3, allow_nan=False, allow_infinity=False, width=32)


@given(st.integers(2, 9), st.integers(1, 5), st.data())
def test_embedding_is_a_one_hot_product_forward_and_backward(v, d, data):
    ids = data.draw(arrays(np.int64, st.tuples(st.integers(0, 4), st.integers(1, 4)),
                           elements=st.integers(0, v - 1)))
    w = data.draw(arrays(np.float32, (v, d), elements=SMALL))
    g = data.draw(arrays(np.float32, ids.shape + (d,), elements=SMALL))
    onehot = np.eye(v, dtype=np.float32)[ids]  # (*ids.shape, V)
    t = tt.Tensor(w, requires_grad=True)
    out = F.embedding(tt.Tensor(ids), t)
    np.testing.assert_array_equal(out.numpy(), onehot @ w)
    (out * tt.Tensor(g)).sum().backward()
    expected = onehot.reshape(-1, v).T @ g.reshape(-1, d)
    np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-5, atol=1e-5)


@given(st.integers(1, 5), st.integers(1, 6), st.integers(1, 4), st.data())
def test_attention_permutes_with_queries_and_ignores_the_order_of_keys(lq, lk, e, data):
    q = data.draw(arrays(np.float32, (2, lq, e), elements=SMALL))
    k = data.draw(arrays(np.float32, (2, lk, e), elements=SMALL))
    v = data.draw(arrays(np.float32, (2, lk, 3), elements=SMALL))
    pq = np.asarray(data.draw(st.permutations(range(lq))))
    pk = np.asarray(data.draw(st.permutations(range(lk))))
    out = F.scaled_dot_product_attention(tt.Tensor(q), tt.Tensor(k), tt.Tensor(v)).numpy()
    moved = F.scaled_dot_product_attention(tt.Tensor(q[:, pq]), tt.Tensor(k[:, pk]),
                                           tt.Tensor(v[:, pk])).numpy()
    np.testing.assert_allclose(moved, out[:, pq], rtol=1e-5, atol=1e-5)
    # each output row is a convex combination of the value rows
    assert (out >= v.min(axis=1, keepdims=True) - 1e-5).all()
    assert (out <= v.max(axis=1, keepdims=True) + 1e-5).all()


@given(arrays(np.float32, st.tuples(st.integers(1, 4), st.integers(1, 6)),
              elements=st.floats(-1e4, 1e4, allow_nan=False, width=32)),
       st.data())
def test_safe_softmax_rows_sum_to_one_or_zero(x, data):
    masked = data.draw(arrays(np.bool_, x.shape))
    p = _SafeSoftmaxFn.apply(tt.Tensor(np.where(masked, -np.inf, x))).numpy()
    assert not np.isnan(p).any() and (p >= 0).all()
    sums = p.sum(axis=-1)
    full = masked.all(axis=-1)
    np.testing.assert_allclose(sums[~full], 1.0, rtol=1e-5)
    np.testing.assert_array_equal(sums[full], 0.0)
    np.testing.assert_array_equal(p[masked], 0.0)
