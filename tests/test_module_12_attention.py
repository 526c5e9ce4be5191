"""Instructor tests for module 12 beyond the hidden suite: the given ``_key_major`` lays a mask
out like the key-major scores (same values and shape, its last two axes swapped in memory), and
the attention core gives the same numbers with a mask of any broadcast shape."""

from __future__ import annotations

import numpy as np
import pytest

from tinytorch_ref.attention import _key_major, _ScaledDotProductAttentionFn
from tinytorch_ref.tensor import Context


@pytest.mark.parametrize("shape", [(5, 7), (2, 3, 5, 7), (2, 1, 1, 7), (1, 5, 1)])
def test_key_major_keeps_values_and_shape_and_swaps_the_layout(shape):
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    k = _key_major(a)
    assert k.shape == a.shape and k.dtype == a.dtype
    np.testing.assert_array_equal(k, a)
    assert np.swapaxes(k, -1, -2).flags.c_contiguous
    # a mask already laid out that way (a size-1 axis among the last two) is not copied
    assert np.shares_memory(k, a) == np.swapaxes(a, -1, -2).flags.c_contiguous


def test_key_major_leaves_vectors_and_scalars_as_they_are():
    row = np.arange(4, dtype=np.float32)
    assert _key_major(row) is row
    scalar = np.array(2.0, np.float32)
    assert _key_major(scalar) is scalar


@pytest.mark.parametrize("bias_shape", [(6, 9), (2, 3, 6, 9), (2, 1, 1, 9), (9,)])
def test_masked_attention_matches_the_plain_formula(bias_shape):
    """Causal and padding-style masks (0 / -inf) of every broadcast shape: the same output as
    ``softmax(q kᵀ · scale + bias) v`` computed directly in float64."""
    rng = np.random.default_rng(2)
    q = rng.standard_normal((2, 3, 6, 4)).astype(np.float32)
    k = rng.standard_normal((2, 3, 9, 4)).astype(np.float32)
    v = rng.standard_normal((2, 3, 9, 5)).astype(np.float32)
    bias = np.where(rng.random(bias_shape) < 0.3, -np.inf, 0.0).astype(np.float32)
    bias[..., 0] = 0.0  # every row sees at least one key
    out = _ScaledDotProductAttentionFn.forward(Context(), q, k, v, bias=bias, scale=0.5)
    s = np.matmul(q.astype(np.float64), np.swapaxes(k, -1, -2)) * 0.5 + bias
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    np.testing.assert_allclose(out, np.matmul(p, v), rtol=1e-5, atol=1e-6)
