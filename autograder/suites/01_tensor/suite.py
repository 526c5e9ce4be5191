"""Hidden suite · module 01 (tensor). Cases are probes; the trusted parent compares.

Each case returns plain data computed with the package under test ``tt``; the expected value
is the same case run against tinytorch_ref. Points sum to module 01's ``points`` (50).
"""

from __future__ import annotations

import numpy as np

from autograder.suite import Suite, outcome

suite = Suite(module="01_tensor", version="2027.1")
case = suite.case


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


# ----------------------------------------------------------------------------- basics (8)
@case(points=1, hint="shape is a tuple of ints; ndim is len(shape); 0-d tensors have ndim 0.")
def shape_dtype_ndim_of_various_inputs(tt, rng):
    out = []
    for data in ([[1.0, 2.0], [3.0, 4.0]], 3.5, [1, 2, 3], np.zeros((2, 0, 3)),
                 np.ones((1, 2, 3, 4), dtype=np.float64)):
        t = tt.Tensor(data)
        out.append([tuple(int(s) for s in t.shape), str(t.dtype), int(t.ndim)])
    return out


@case(points=1, hint="numel is the product of the shape; the empty product is 1.")
def numel_counts_elements(tt, rng):
    shapes = [(), (7,), (2, 3), (4, 1, 5), (2, 0, 3), (3, 3, 3, 3)]
    return [int(tt.Tensor(np.zeros(s, dtype=np.float32)).numel()) for s in shapes]


@case(points=3, hint="memory_footprint = numel() * bytes per element (data.itemsize).")
def memory_footprint_in_bytes(tt, rng):
    cases = [((32, 3, 224, 224), np.float32), ((10,), np.float64), ((5, 5), np.int64),
             ((3, 4), np.int8), ((), np.float32), ((2, 0), np.float32)]
    return [int(tt.Tensor(np.zeros(s, dtype=d)).memory_footprint()) for s, d in cases]


# ----------------------------------------------------------------------------- layout (12)
@case(points=2, hint="PyTorch strides count elements, NumPy's count bytes: divide by itemsize.")
def stride_in_elements(tt, rng):
    x = tt.Tensor(np.zeros((2, 3, 4), dtype=np.float32))
    y = tt.Tensor(np.zeros((5, 6), dtype=np.float64))
    return [tuple(x.stride()), int(x.stride(1)), tuple(y.stride()),
            tuple(x.transpose(0, 2).stride())]


@case(points=2, hint="Compare the strides with those of a row-major layout; skip size-1 dims; "
      "a tensor with no elements is contiguous.")
def contiguity_after_views(tt, rng):
    x = tt.Tensor(_f32(rng, 3, 4))
    col = tt.Tensor(_f32(rng, 4, 1))
    empty = tt.Tensor(np.zeros((int(rng.integers(2, 5)), 0, 3), dtype=np.float32))
    return [bool(x.is_contiguous()), bool(x.transpose(0, 1).is_contiguous()),
            bool(col.transpose(0, 1).is_contiguous()),
            bool(tt.Tensor(np.zeros((2, 3, 4))).permute(0, 2, 1).is_contiguous()),
            bool(empty.permute(2, 0, 1).is_contiguous())]


@case(points=2, hint="transpose must return a view: np.swapaxes, not a copy.")
def transpose_is_a_view_with_swapped_strides(tt, rng):
    x = tt.Tensor(_f32(rng, 2, 3, 4))
    t = x.transpose(0, 2)
    return {"shape": tuple(t.shape), "shares": bool(np.shares_memory(t.numpy(), x.numpy())),
            "values": t.numpy().copy(), "neg_dims": tuple(x.transpose(-1, -2).shape)}


@case(points=2, hint="permute reorders every dimension; it is a view as well.")
def permute_nchw_to_nhwc(tt, rng):
    x = tt.Tensor(_f32(rng, 2, 3, 4, 5))
    p = x.permute(0, 2, 3, 1)
    return {"shape": tuple(p.shape), "values": p.numpy().copy(),
            "tuple_arg": tuple(x.permute((3, 2, 1, 0)).shape),
            "shares": bool(np.shares_memory(p.numpy(), x.numpy())),
            "negative": x.permute(0, -1, 1, -2).numpy().copy(),
            "vector": tt.Tensor(_f32(rng, 3)).permute(-1).numpy().copy()}


# ----------------------------------------------------------------------------- reshape (8)
@case(points=3, hint="Accept ints or one tuple; infer a single -1 from the element count.")
def reshape_shapes_and_inference(tt, rng):
    x = tt.Tensor(np.arange(24, dtype=np.float32))
    r = x.reshape(2, -1, 3)
    return {"a": tuple(x.reshape(4, 6).shape), "b": tuple(x.reshape((3, 8)).shape),
            "c": tuple(r.shape), "values": r.numpy().copy(),
            "view": bool(np.shares_memory(r.numpy(), x.numpy()))}


@case(points=1, hint="Raise RuntimeError when the new shape does not hold exactly numel elements.")
def reshape_rejects_wrong_sizes(tt, rng):
    x = tt.Tensor(np.arange(12, dtype=np.float32))
    return [outcome(x.reshape, *shape) for shape in [(5, 5), (7, -1), (-1, -1)]]


@case(points=3, hint="view never copies: it works whenever the strides allow the new shape "
      "(np.reshape(data, shape, copy=False)) and raises RuntimeError otherwise.")
def view_requires_compatible_strides(tt, rng):
    x = tt.Tensor(_f32(rng, 3, 4))
    ok = x.view(12)
    refused = outcome(x.transpose(0, 1).view, 12)
    wide = tt.Tensor(_f32(rng, 4, 6))
    part = wide[:, :3]  # not contiguous, but (2, 2, 3) and (4, 3, 1) need no copy
    split = part.view(2, 2, 3)
    return {"shape": tuple(ok.shape), "values": ok.numpy().copy(), "refused": refused,
            "via_contiguous": x.transpose(0, 1).contiguous().view(12).numpy().copy(),
            "split": split.numpy().copy(),
            "split_shares": bool(np.shares_memory(split.numpy(), wide.numpy())),
            "unsqueezed": tuple(part.view(4, 3, 1).shape), "flat": outcome(part.view, 12)}


# ----------------------------------------------------------------------------- indexing (3)
@case(points=3, hint="x, index = _index_arg(self, index), then x.data[index]: it applies "
      "integers before index arrays (PyTorch's order) and refuses negative steps.")
def getitem_slices_and_fancy_indices(tt, rng):
    x = tt.Tensor(_f32(rng, 4, 5))
    idx = tt.Tensor(np.array([3, 0, 3]))
    cube = tt.Tensor(_f32(rng, 2, 3, 4))
    pick = tt.Tensor(rng.integers(0, 4, 2))
    mixed = cube[1, :, pick]  # PyTorch: (3, 2); NumPy's rule would give (2, 3)
    return [x[1].numpy().copy(), x[:, 1:4].numpy().copy(), x[1:3, -1].numpy().copy(),
            x[idx].numpy().copy(), tuple(x[None, 2].shape), x[x.numpy() > 0].numpy().copy(),
            mixed.numpy().copy(), outcome(lambda: x[::-1])]


# ----------------------------------------------------------------------------- arithmetic (9)
@case(points=2, hint="NumPy broadcasts for you: shapes align from the right, size 1 stretches.")
def add_sub_broadcast_shapes(tt, rng):
    a = tt.Tensor(_f32(rng, 4, 1, 3))
    b = tt.Tensor(_f32(rng, 5, 1))
    c = tt.Tensor(_f32(rng, 3))
    return [(a + b).numpy(), (a - c).numpy(), (c - b).numpy(), (a + 1.5).numpy(),
            (2.0 - c).numpy()]


@case(points=3, hint="Multiply and divide element-wise with broadcasting; 2 / t uses __rtruediv__.")
def mul_div_neg_broadcast(tt, rng):
    a = tt.Tensor(_f32(rng, 2, 3))
    b = tt.Tensor(rng.uniform(0.5, 2.0, (3,)).astype(np.float32))
    return [(a * b).numpy(), (a / b).numpy(), (3 * a).numpy(), (1.0 / b).numpy(),
            (-a).numpy(), (a ** 2).numpy(), (b ** 0.5).numpy(), (a ** 3).numpy(), (a ** 1).numpy(),
            (b ** -1.5).numpy()]


@case(points=2, hint="Operate on the promoted arrays a, b from _binary: a number never widens "
      "float32, int * 0.5 is float32, int / int is float32, as in PyTorch.")
def scalars_keep_float32(tt, rng):
    a = tt.Tensor(_f32(rng, 3))
    ints = tt.Tensor(rng.integers(1, 9, 3))
    f64 = tt.Tensor(rng.standard_normal(3))
    return [str((a + 1).dtype), str((a * 2.5).dtype), str((1 - a).dtype), str((a / 3).dtype),
            str((ints + 1).dtype), str((a ** 2).dtype), str((ints / ints).dtype),
            str((f64 / f64).dtype), str((a / f64).dtype),
            (ints / tt.Tensor(rng.integers(1, 9, 3))).numpy(), (ints * 0.5).numpy(),
            (a * np.float64(1.5)).numpy(), (a + tt.Tensor(np.float64(2.0))).numpy(),
            (ints + a).numpy()]


@case(points=3, hint="result_type: categories bool < int < float; the strongest group (tensors "
      "with dims, then 0-d tensors, then numbers) that reaches the top category decides.")
def result_type_follows_pytorch(tt, rng):
    def t(dtype, shape=(2,)):
        return tt.Tensor((rng.integers(0, 3, shape)).astype(dtype))
    combos = [
        (t("float32"), 0.5), (t("int64"), 0.5), (t("int32"), 2), (t("int8"), 300),
        (t("bool"), 2), (t("bool"), True), (t("uint8"), t("int8")), (t("int64"), t("float32")),
        (t("float32"), t("float64")), (t("float32"), t("float64", ())),
        (t("int32"), t("float64", ())), (t("int8"), t("int64", ())),
        (t("bool"), t("int8", ())), (t("float32"), np.float64(2.5)), (t("int16"), np.int64(7)),
        (t("int64", ()), 0.5), (t("int8", ()), t("int64", ())), (t("float64", ()), 1.5),
        (t("uint8"), 0.5, t("float64", ())), (t("int8", ()), 5), (t("int16", ()), 2 ** 40),
    ]
    return [str(tt.result_type(*c)) for c in combos]


@case(points=2, hint="Integer tensors become float32 for exp/log/sqrt/tanh (_float_data) and for "
      "float powers: Tensor([4, 9]) ** 0.5 is [2., 3.]; int ** 2 stays an integer.")
def integer_inputs_to_float_ops(tt, rng):
    ints = tt.Tensor(rng.integers(1, 10, 4))
    squares = tt.Tensor(np.array([4, 9, 16, 25])[rng.permutation(4)])
    out = [ints.exp().numpy(), ints.log().numpy(), squares.sqrt().numpy(),
           ints.tanh().numpy(), (squares ** 0.5).numpy(), (ints ** 2).numpy(),
           (ints ** 2.5).numpy(), ints.clamp(min=2.5).numpy(), ints.abs().numpy()]
    return out + [outcome(lambda: ints ** -1)]


# ----------------------------------------------------------------------------- math (3)
@case(points=2, hint="Use np.exp, np.log, np.sqrt, np.tanh, np.abs and np.clip.")
def elementwise_math(tt, rng):
    x = tt.Tensor(rng.uniform(0.1, 3.0, (2, 3)).astype(np.float32))
    z = tt.Tensor(_f32(rng, 2, 3))
    return [x.exp().numpy(), x.log().numpy(), x.sqrt().numpy(), z.tanh().numpy(),
            z.abs().numpy(), z.clamp(min=-0.5, max=0.5).numpy(), z.clamp(min=0.0).numpy()]


# ----------------------------------------------------------------------------- matmul (8)
@case(points=2, hint="(n, k) @ (k, m) -> (n, m); np.matmul handles 1-D and batched inputs.")
def matmul_matrix_and_vector(tt, rng):
    a = tt.Tensor(_f32(rng, 3, 4))
    b = tt.Tensor(_f32(rng, 4, 2))
    v = tt.Tensor(_f32(rng, 4))
    return [(a @ b).numpy(), a.matmul(b).numpy(), (a @ v).numpy(), (v @ b).numpy(),
            (v @ v).numpy()]


@case(points=2, hint="Batch dimensions broadcast: (B, n, k) @ (k, m) and (B, n, k) @ (B, k, m).")
def matmul_batched(tt, rng):
    a = tt.Tensor(_f32(rng, 5, 3, 4))
    b = tt.Tensor(_f32(rng, 4, 2))
    c = tt.Tensor(_f32(rng, 5, 4, 6))
    d = tt.Tensor(_f32(rng, 2, 1, 3, 4))
    return [(a @ b).numpy(), (a @ c).numpy(), tuple((d @ c).shape)]


@case(points=1, hint="Check the inner sizes and raise ValueError naming both shapes; a 0-d "
      "operand is a ValueError too (use * for scalars); different dtypes are a RuntimeError.")
def matmul_shape_errors_name_shapes(tt, rng):
    out: list = []
    out.append(outcome(tt.Tensor(_f32(rng, 2, 3)).matmul, tt.Tensor(rng.standard_normal((3, 2)))))
    scalar = tt.Tensor(2.0)
    out.append(outcome(tt.Tensor(np.ones(3, dtype=np.float32)).matmul, scalar))
    out.append(outcome(scalar.matmul, tt.Tensor(np.ones(3, dtype=np.float32))))
    for sa, sb in [((2, 3), (4, 5)), ((2, 3, 4), (3, 4)), ((3,), (4,))]:
        a = tt.Tensor(np.ones(sa, dtype=np.float32))
        b = tt.Tensor(np.ones(sb, dtype=np.float32))
        try:
            a @ b
            out.append("no error")
        except NotImplementedError:
            raise
        except ValueError as exc:
            out.append(str(sa) in str(exc) and str(sb) in str(exc))
        except Exception as exc:  # noqa: BLE001 - the type is the answer
            out.append(type(exc).__name__)
    return out


# ----------------------------------------------------------------------------- reductions (9)
@case(points=3, hint="np.sum with axis=_dim_arg(dim, ndim) and keepdims=keepdim; dim may be a "
      "tuple; dim=() means every dim; integer and bool tensors sum to int64.")
def sum_over_dims(tt, rng):
    x = tt.Tensor(_f32(rng, 2, 3, 4))
    pixels = tt.Tensor(rng.integers(200, 256, (3, 4)).astype(np.uint8))
    mask = tt.Tensor(rng.random(6) > 0.5)
    scalar = tt.Tensor(np.float32(rng.standard_normal()))
    return [x.sum().numpy(), x.sum(dim=0).numpy(), x.sum(dim=-1, keepdim=True).numpy(),
            x.sum(dim=(0, 2)).numpy(), tuple(x.sum(dim=1, keepdim=True).shape),
            x.sum(dim=()).numpy(), pixels.sum().numpy(), pixels.sum(dim=1).numpy(),
            mask.sum().numpy(), scalar.sum(dim=0).numpy(), scalar.sum(dim=-1, keepdim=True).numpy()]


@case(points=2, hint="mean = sum / count over the reduced dims; float stays float (float32 or "
      "float64); the mean of an integer tensor is a RuntimeError, as in PyTorch.")
def mean_over_dims(tt, rng):
    x = tt.Tensor(_f32(rng, 3, 5))
    ints = tt.Tensor(rng.integers(0, 9, (2, 3)))
    f64 = tt.Tensor(rng.standard_normal((4,)))
    return [x.mean().numpy(), x.mean(dim=0).numpy(), x.mean(dim=1, keepdim=True).numpy(),
            str(x.mean().dtype), outcome(ints.mean, dim=1), f64.mean().numpy(),
            x.mean(dim=()).numpy()]


@case(points=3, hint="max() is the largest element; max(dim) returns (values, indices).")
def max_values_and_indices(tt, rng):
    x = tt.Tensor(_f32(rng, 4, 6))
    m = x.max(dim=1)
    k = x.max(dim=0, keepdim=True)
    scalar = tt.Tensor(np.float32(rng.standard_normal()))
    s = scalar.max(dim=0)
    return [x.max().numpy(), m.values.numpy(), m.indices.numpy(), k.values.numpy(),
            tuple(k.indices.shape), s.values.numpy(), s.indices.numpy()]
