"""The optimization tier's differentiable operations (modules 14-19), in ``op_catalogue`` format.

Module 18 adds a fused ``Function`` with a hand-written backward (bias + tanh-GELU in one
node). ``OPTIMIZATION_OPS`` is shared by ``tests/test_gradcheck.py`` (float64
central differences, dtypes) and the parity suites (``theirs``: the torch equivalent).
"""

from __future__ import annotations

from op_catalogue import Op


def _acc():
    import tinytorch_ref.acceleration as acc
    return acc


def _their_bias_gelu(x, b):
    import torch
    return torch.nn.functional.gelu(x + b, approximate="tanh")


OPTIMIZATION_OPS: list[Op] = [
    Op("bias_gelu_vector", ((5,), (5,)), "any", lambda x, b: _acc().bias_gelu(x, b),
       _their_bias_gelu),
    Op("bias_gelu_rows", ((4, 6), (6,)), "any", lambda x, b: _acc().bias_gelu(x, b),
       _their_bias_gelu),
    Op("bias_gelu_batched", ((2, 3, 4), (4,)), "any", lambda x, b: _acc().bias_gelu(x, b),
       _their_bias_gelu),
    Op("bias_gelu_large_inputs", ((3, 5), (5,)), "pos", lambda x, b: _acc().bias_gelu(
        x * 4.0, b), lambda x, b: _their_bias_gelu(x * 4.0, b)),
]
