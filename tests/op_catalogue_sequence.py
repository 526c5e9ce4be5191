"""The sequence tier's differentiable operations (modules 11-12), in ``op_catalogue`` format.

Modules 11 (embeddings) and 12 (attention) add operations that are ``Function`` subclasses
with hand-written backward passes (the embedding gather, scaled dot-product attention, the
fused softmax) or compositions of them (positional encodings, multi-head attention).
``SEQUENCE_OPS`` is shared by ``tests/test_gradcheck_sequence_ops.py`` (float64 central
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
]
