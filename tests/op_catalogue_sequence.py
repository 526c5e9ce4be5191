"""The sequence tier's differentiable operations (modules 11-13), in ``op_catalogue`` format.

Modules 11 (embeddings), 12 (attention) and 13 (transformers) add operations that are
``Function`` subclasses with hand-written backward passes (the embedding gather, scaled
dot-product attention, the fused softmax, layer norm, the tanh GELU) or compositions of them
(positional encodings, multi-head attention, the MLP and the transformer block).
``SEQUENCE_OPS`` is shared by ``tests/test_gradcheck.py`` (float64 central
differences) and the parity suites (``theirs``: the torch equivalent, None when torch has
none). Non-differentiable inputs (indices, masks) are fixed constants captured below.
"""

from __future__ import annotations

import numpy as np
from op_catalogue import Op

from tinytorch_ref import Tensor

IDS_REPEAT = np.array([[0, 2, 2], [4, 1, 2]])  # row 2 three times, row 3 never


def _F():
    from tinytorch_ref.nn import functional
    return functional


def _emb():
    import tinytorch_ref.embeddings as emb
    return emb


def _torch():
    import torch
    return torch


def _their_ids(ids: np.ndarray):
    return _torch().as_tensor(ids)


def _att():
    import tinytorch_ref.attention as att
    return att


def _sdpa(*args, **kwargs):
    return _F().scaled_dot_product_attention(*args, **kwargs)


def _their_sdpa(*args, **kwargs):
    return _torch().nn.functional.scaled_dot_product_attention(*args, **kwargs)


BOOL_MASK = np.array([[True, False, True, True, False],
                      [False, False, False, False, False],  # a fully masked row
                      [True, True, True, False, True]])
FLOAT_MASK = np.array([[0.5, -1.0, 0.0, 2.0, -np.inf],
                       [0.1, 0.2, -0.3, 0.0, 0.0],
                       [-np.inf, 1.0, 0.0, 0.0, 0.3]])
_MHA_CACHE: dict = {}


def _mha(dtype, num_heads: int = 2):
    """A fixed MultiheadAttention(8, num_heads) in ``dtype`` with non-zero biases."""
    key = (np.dtype(dtype).name, num_heads)
    if key not in _MHA_CACHE:
        from tinytorch_ref import manual_seed, nn
        manual_seed(11)
        m = nn.MultiheadAttention(8, num_heads, batch_first=True)
        rng = np.random.default_rng(11)
        for p in m.parameters():
            p.data = (p.data + 0.1 * rng.standard_normal(p.shape)).astype(dtype)
        _MHA_CACHE[key] = m
    return _MHA_CACHE[key]


CAUSAL_4 = np.triu(np.ones((4, 4), dtype=bool), k=1)  # MultiheadAttention: True = not allowed


def _tf():
    import tinytorch_ref.transformers as tf
    return tf


_LAYER_CACHE: dict = {}


def _layer(kind: str, dtype):
    """A fixed MLP(8) or TransformerBlock(8, 2) in ``dtype`` with non-trivial parameters."""
    key = (kind, np.dtype(dtype).name)
    if key not in _LAYER_CACHE:
        from tinytorch_ref import manual_seed
        manual_seed(13)
        m = _tf().MLP(8) if kind == "mlp" else _tf().TransformerBlock(8, 2)
        rng = np.random.default_rng(13)
        for p in m.parameters():
            p.data = (p.data + 0.3 * rng.standard_normal(p.shape)).astype(dtype)
        _LAYER_CACHE[key] = m
    return _LAYER_CACHE[key]


def _their_ln(x, w=None, b=None, *, shape, eps=1e-5):
    return _torch().nn.functional.layer_norm(x, shape, w, b, eps=eps)


SEQUENCE_OPS: list[Op] = [
    Op("embedding_repeats", ((5, 3),), "any",
       lambda w: _F().embedding(Tensor(IDS_REPEAT), w),
       lambda w: _torch().nn.functional.embedding(_their_ids(IDS_REPEAT), w)),
    Op("embedding_0d_index", ((4, 2),), "any",
       lambda w: _F().embedding(Tensor(np.array(3)), w),
       lambda w: _torch().nn.functional.embedding(_their_ids(np.array(3)), w)),
    Op("embedding_unused_padding_row", ((5, 3),), "any",
       lambda w: _F().embedding(Tensor(IDS_REPEAT), w, padding_idx=3),
       lambda w: _torch().nn.functional.embedding(_their_ids(IDS_REPEAT), w, padding_idx=3)),
    Op("learned_positions_offset", ((2, 3, 4), (6, 4)), "any",
       lambda x, w: x + w[2:5], lambda x, w: x + w[2:5]),
    Op("sinusoidal_positions", ((2, 3, 4),), "any",
       lambda x: _emb().SinusoidalPositionalEncoding(4, max_len=8)(x, offset=1), None),
    Op("safe_softmax", ((3, 5),), "any",
       lambda x: _att()._SafeSoftmaxFn.apply(x), lambda x: _torch().softmax(x, dim=-1)),
    Op("safe_softmax_masked_rows", ((2, 3, 5),), "any",
       lambda x: _att()._SafeSoftmaxFn.apply(x + Tensor(FLOAT_MASK.astype(x.dtype))),
       None),
    Op("narrow", ((3, 6),), "any", lambda x: _att().narrow(x, 1, 2, 3),
       lambda x: _torch().narrow(x, 1, 2, 3)),
    Op("sdpa_plain", ((2, 3, 4), (2, 5, 4), (2, 5, 3)), "any", _sdpa, _their_sdpa),
    Op("sdpa_causal_shared_key", ((2, 3, 4), (5, 4), (5, 4)), "any",
       lambda q, k, v: _sdpa(q, k, v, is_causal=True),
       lambda q, k, v: _their_sdpa(q, k, v, is_causal=True)),
    Op("sdpa_bool_mask_fully_masked_row", ((2, 3, 4), (2, 5, 4), (2, 5, 2)), "any",
       lambda q, k, v: _sdpa(q, k, v, attn_mask=BOOL_MASK),
       lambda q, k, v: _their_sdpa(q, k, v, attn_mask=_torch().as_tensor(BOOL_MASK))),
    Op("sdpa_float_mask_scale", ((3, 4), (5, 4), (5, 3)), "any",
       lambda q, k, v: _sdpa(q, k, v, attn_mask=FLOAT_MASK.astype(q.dtype), scale=0.4),
       lambda q, k, v: _their_sdpa(q, k, v, attn_mask=_torch().as_tensor(FLOAT_MASK).to(q.dtype),
                                   scale=0.4)),
    Op("sdpa_heads_one_query", ((2, 2, 1, 4), (2, 2, 6, 4), (2, 2, 6, 4)), "any", _sdpa,
       _their_sdpa),
    Op("mha_self_fused", ((2, 4, 8),), "any",
       lambda x: _mha(x.dtype)(x, x, x, need_weights=False, attn_mask=CAUSAL_4)[0], None),
    Op("mha_self_weights_path", ((2, 4, 8),), "any",
       lambda x: _mha(x.dtype)(x, x, x, attn_mask=CAUSAL_4)[0], None),
    Op("mha_weights_per_head", ((2, 4, 8),), "any",
       lambda x: _mha(x.dtype)(x, x, x, average_attn_weights=False)[1], None),
    Op("mha_cross_padding", ((2, 3, 8), (2, 5, 8), (2, 5, 8)), "any",
       lambda q, k, v: _mha(q.dtype, 4)(
           q, k, v, key_padding_mask=np.array([[False] * 5, [False, False, True, False, True]]),
           need_weights=False)[0], None),
    Op("layer_norm_last_dim", ((2, 3, 5), (5,), (5,)), "any",
       lambda x, w, b: _F().layer_norm(x, (5,), w, b),
       lambda x, w, b: _their_ln(x, w, b, shape=(5,))),
    Op("layer_norm_two_dims_eps", ((3, 2, 4), (2, 4), (2, 4)), "any",
       lambda x, w, b: _F().layer_norm(x, (2, 4), w, b, eps=1e-2),
       lambda x, w, b: _their_ln(x, w, b, shape=(2, 4), eps=1e-2)),
    Op("layer_norm_no_affine", ((4, 6),), "any",
       lambda x: _F().layer_norm(x, (6,)), lambda x: _their_ln(x, shape=(6,))),
    Op("layer_norm_unbatched_row", ((7,), (7,), (7,)), "any",
       lambda x, w, b: _F().layer_norm(x, (7,), w, b),
       lambda x, w, b: _their_ln(x, w, b, shape=(7,))),
    Op("gelu_tanh", ((3, 5),), "any", lambda x: _tf().gelu_tanh(x),
       lambda x: _torch().nn.functional.gelu(x, approximate="tanh")),
    Op("mlp", ((2, 3, 8),), "any", lambda x: _layer("mlp", x.dtype)(x), None),
    Op("transformer_block", ((2, 4, 8),), "any", lambda x: _layer("block", x.dtype)(x), None),
]
