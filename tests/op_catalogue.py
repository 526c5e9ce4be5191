"""One table of every differentiable Tensor operation, shared by gradcheck and parity tests.

Each entry: ``(name, input shapes, domain, tinytorch fn, torch fn)``. ``domain`` is
``"any"`` (standard normal) or ``"pos"`` (uniform in [0.5, 2]); fns take Tensors (ours or
torch's) and return one. The same lambda usually works for both libraries.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np


class Op(NamedTuple):
    name: str
    shapes: tuple[tuple[int, ...], ...]
    domain: str
    ours: Callable[..., Any]
    theirs: Callable[..., Any] | None = None  # None: same lambda as ours

    def torch_fn(self) -> Callable[..., Any]:
        return self.theirs or self.ours


IDX = np.array([2, 0, 2, 1])

OPS: list[Op] = [
    Op("add", ((3, 4), (3, 4)), "any", lambda a, b: a + b),
    Op("add_broadcast_row", ((3, 4), (4,)), "any", lambda a, b: a + b),
    Op("add_broadcast_both", ((4, 1, 3), (5, 1)), "any", lambda a, b: a + b),
    Op("add_scalar", ((3,),), "any", lambda a: a + 1.5),
    Op("sub_broadcast", ((2, 3), (2, 1)), "any", lambda a, b: a - b),
    Op("rsub_scalar", ((3,),), "any", lambda a: 2.0 - a),
    Op("mul_broadcast", ((2, 3), (3,)), "any", lambda a, b: a * b),
    Op("mul_self", ((4,),), "any", lambda a: a * a),
    Op("div_broadcast", ((2, 3), (3,)), "pos", lambda a, b: a / b),
    Op("rdiv_scalar", ((3,),), "pos", lambda a: 1.0 / a),
    Op("neg", ((2, 3),), "any", lambda a: -a),
    Op("pow_2", ((2, 3),), "any", lambda a: a ** 2),
    Op("pow_3", ((2, 3),), "any", lambda a: a ** 3),
    Op("pow_half", ((2, 3),), "pos", lambda a: a ** 0.5),
    Op("pow_neg", ((2, 3),), "pos", lambda a: a ** -1.5),
    Op("exp", ((2, 3),), "any", lambda a: a.exp()),
    Op("log", ((2, 3),), "pos", lambda a: a.log()),
    Op("sqrt", ((2, 3),), "pos", lambda a: a.sqrt()),
    Op("tanh", ((2, 3),), "any", lambda a: a.tanh()),
    Op("abs", ((2, 3),), "any", lambda a: a.abs()),
    Op("clamp_both", ((3, 4),), "any", lambda a: a.clamp(min=-0.5, max=0.5)),
    Op("clamp_min", ((3, 4),), "any", lambda a: a.clamp(min=0.0)),
    Op("clamp_max", ((3, 4),), "any", lambda a: a.clamp(max=0.2)),
    Op("matmul_2d", ((3, 4), (4, 5)), "any", lambda a, b: a @ b),
    Op("matmul_batched_shared", ((2, 3, 4), (4, 5)), "any", lambda a, b: a @ b),
    Op("matmul_batched", ((2, 3, 4), (2, 4, 5)), "any", lambda a, b: a @ b),
    Op("matmul_batch_broadcast", ((2, 1, 3, 4), (3, 4, 2)), "any", lambda a, b: a @ b),
    Op("matmul_matrix_vector", ((3, 4), (4,)), "any", lambda a, b: a @ b),
    Op("matmul_vector_matrix", ((4,), (4, 3)), "any", lambda a, b: a @ b),
    Op("matmul_vector_vector", ((4,), (4,)), "any", lambda a, b: a @ b),
    Op("sum_all", ((2, 3, 4),), "any", lambda a: a.sum()),
    Op("sum_dim", ((2, 3, 4),), "any", lambda a: a.sum(dim=1)),
    Op("sum_dims_keepdim", ((2, 3, 4),), "any", lambda a: a.sum(dim=(0, 2), keepdim=True)),
    Op("sum_neg_dim", ((2, 3, 4),), "any", lambda a: a.sum(dim=-1)),
    Op("mean_all", ((2, 3, 4),), "any", lambda a: a.mean()),
    Op("mean_dim", ((2, 3, 4),), "any", lambda a: a.mean(dim=0)),
    Op("mean_dims_keepdim", ((2, 3, 4),), "any", lambda a: a.mean(dim=(1, 2), keepdim=True)),
    Op("max_all", ((3, 4),), "any", lambda a: a.max()),
    Op("max_dim", ((3, 4),), "any", lambda a: a.max(dim=1).values,
       lambda a: a.max(dim=1).values),
    Op("max_dim_keepdim", ((3, 4),), "any", lambda a: a.max(dim=0, keepdim=True).values,
       lambda a: a.max(dim=0, keepdim=True).values),
    Op("amax_dim", ((2, 3, 4),), "any", lambda a: a.amax(dim=1)),
    Op("amax_dims_keepdim", ((2, 3, 4),), "any", lambda a: a.amax(dim=(0, 2), keepdim=True)),
    Op("reshape", ((2, 3, 4),), "any", lambda a: a.reshape(4, 6)),
    Op("reshape_infer", ((2, 3, 4),), "any", lambda a: a.reshape(-1, 3)),
    Op("view", ((2, 3, 4),), "any", lambda a: a.view(6, 4)),
    Op("transpose", ((2, 3, 4),), "any", lambda a: a.transpose(0, 2)),
    Op("transpose_neg", ((2, 3, 4),), "any", lambda a: a.transpose(-1, -2)),
    Op("permute", ((2, 3, 4),), "any", lambda a: a.permute(2, 0, 1)),
    Op("T", ((3, 4),), "any", lambda a: a.T, lambda a: a.T),
    Op("contiguous", ((3, 4),), "any", lambda a: a.transpose(0, 1).contiguous()),
    Op("getitem_int", ((4, 5),), "any", lambda a: a[1]),
    Op("getitem_slice", ((4, 5),), "any", lambda a: a[:, 1:4]),
    Op("getitem_neg_step", ((4, 5),), "any", lambda a: a[1:3, -1]),
    Op("getitem_fancy_repeats", ((4, 5),), "any", lambda a: a[IDX]),
    Op("getitem_fancy_pair", ((4, 5),), "any", lambda a: a[IDX, np.array([0, 1, 0, 4])],
       None),
    Op("getitem_none", ((4, 5),), "any", lambda a: a[None, 2]),
    Op("composite_softmax", ((3, 4),), "any",
       lambda a: (a - a.amax(dim=1, keepdim=True)).exp()
       / (a - a.amax(dim=1, keepdim=True)).exp().sum(dim=1, keepdim=True)),
]


def make_inputs(op: Op, rng: np.random.Generator, dtype: Any = np.float64) -> list[np.ndarray]:
    """Random inputs in the op's domain; ties are unlikely, so max/abs are differentiable."""
    if op.domain == "pos":
        return [rng.uniform(0.5, 2.0, s).astype(dtype) for s in op.shapes]
    return [rng.standard_normal(s).astype(dtype) for s in op.shapes]
