"""Hidden suite · module 01 (tensor). Cases are probes; the trusted parent compares.

Each case returns plain data computed with the package under test ``tt``; the expected value
is the same case run against tinytorch_ref. Points sum to module 01's ``points`` (50).
"""

from __future__ import annotations

import numpy as np

from autograder.suite import Suite, compare_values, outcome

suite = Suite(module="01_tensor", version="2027.2")
case = suite.case
BASICS = suite.unit("Tensor basics", "Tensor.shape", "Tensor.dtype", "Tensor.ndim", "Tensor.numel",
                    "Tensor.memory_footprint")
TRANSPOSE = suite.unit("transpose", "_transpose")
STRIDE = suite.unit("stride", "_stride", uses=(TRANSPOSE,))
PERMUTE = suite.unit("permute", "_permute")
CONTIGUOUS = suite.unit("is_contiguous", "_is_contiguous", uses=(STRIDE, TRANSPOSE, PERMUTE))
RESHAPE = suite.unit("reshape", "_reshape")
VIEW = suite.unit("view", "_view", uses=(TRANSPOSE, STRIDE, CONTIGUOUS))
INDEXING = suite.unit("indexing", "_getitem")
RESULT_TYPE = suite.unit("result_type", "result_type")
ARITHMETIC = suite.unit("arithmetic", "_add", "_sub", "_mul", "_truediv", "_neg",
                        uses=(RESULT_TYPE,))
MATH = suite.unit("math", "_pow", "_exp", "_log", "_sqrt", "_tanh", "_abs", "_clamp",
                  uses=(RESULT_TYPE,))
MATMUL = suite.unit("matmul", "_matmul", uses=(RESULT_TYPE,))
SUM = suite.unit("sum", "_sum")
MEAN = suite.unit("mean", "_mean")
MAX = suite.unit("max", "_max")


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _dims(rng, n, low=1, high=5):
    """``n`` random sizes in [low, high): every variant probes other shapes."""
    return tuple(int(d) for d in rng.integers(low, high, n))


# ----------------------------------------------------------------------------- basics (8)
@case(unit=BASICS, points=1,
      hint="shape is a tuple of ints; ndim is len(shape); 0-d tensors have ndim 0.",
      stated={'Tensor.shape': 'The size of each dimension, as a tuple of ints.',
              'Tensor.dtype': ('the NumPy array ``self.data`` knows its dtype already; return it.',
                               'Python floats become float32 in ``__init__`` (as in PyTorch)'),
              'Tensor.ndim': ('The number of dimensions.',
                              'a scalar tensor has shape ``()`` and therefore 0 dimensions, not 1.')})
def shape_dtype_ndim_of_various_inputs(tt, rng):
    nested = rng.standard_normal(_dims(rng, 2)).round(3).tolist()
    scalar = float(rng.uniform(-9.0, 9.0))
    ints = [int(v) for v in rng.integers(-50, 50, int(rng.integers(1, 8)))]
    a, b = _dims(rng, 2)
    out: list = []
    for data in (nested, scalar, ints, np.zeros((a, 0, b)),
                 rng.standard_normal(_dims(rng, 4)).astype(np.float64)):
        t = tt.Tensor(data)
        out.append([tuple(int(s) for s in t.shape), str(t.dtype), int(t.ndim)])
    out.append(tt.Tensor(scalar).numpy())
    return out


@case(unit=BASICS, points=1, hint="numel is the product of the shape; the empty product is 1.",
      stated={'Tensor.numel': ('The number of elements: the product of the shape (1 for a scalar tensor).',
                               'a shape with a 0 in it gets 0.')})
def numel_counts_elements(tt, rng):
    shapes = [(), _dims(rng, 1, 2, 40), _dims(rng, 2, 1, 9), (*_dims(rng, 1), 1, *_dims(rng, 1)),
              (*_dims(rng, 1), 0, *_dims(rng, 1)), _dims(rng, 4, 1, 6)]
    return [[int(tt.Tensor(np.zeros(s, dtype=np.float32)).numel()) for s in shapes],
            int(tt.Tensor(rng.standard_normal(_dims(rng, 3, 1, 7))).numel())]


@case(unit=BASICS, points=3, hint="memory_footprint = numel() * bytes per element (data.itemsize).",
      stated={'Tensor.memory_footprint': ("Bytes needed to hold this tensor's elements: ``numel() × bytes per element``.",
                                          'Multiply by the size of one element: ``self.data.itemsize``')})
def memory_footprint_in_bytes(tt, rng):
    dtypes = [np.float32, np.float64, np.int64, np.int8, np.int32, np.float16]
    order = [dtypes[int(i)] for i in rng.permutation(len(dtypes))]
    shapes = [(*_dims(rng, 1, 1, 64), 3, 224, 224), _dims(rng, 1, 1, 100), _dims(rng, 2, 1, 20),
              _dims(rng, 2, 1, 20), (), (*_dims(rng, 1), 0)]
    return [int(tt.Tensor(np.zeros(s, dtype=d)).memory_footprint())
            for s, d in zip(shapes, order, strict=True)]


# ----------------------------------------------------------------------------- layout (12)
@case(unit=STRIDE, points=2,
      hint="PyTorch strides count elements, NumPy's count bytes: divide by itemsize.",
      stated={'_stride': ("PyTorch counts strides in *elements*; NumPy's ``.strides`` counts *bytes*.",
                          "With ``dim`` given, return only that dimension's stride; a negative ``dim`` counts from the end (``stride(-1)`` is the last dimension's)",
                          'Tensor(np.zeros((2, 3), dtype=np.float32)).transpose(0, 1).stride() (1, 3)')})
def stride_in_elements(tt, rng):
    x = tt.Tensor(np.zeros(_dims(rng, 3, 2, 9), dtype=np.float32))
    y = tt.Tensor(np.zeros(_dims(rng, 2, 2, 9), dtype=np.float64))
    z = tt.Tensor(rng.standard_normal(_dims(rng, 4, 2, 6)).astype(np.float32))
    return [tuple(x.stride()), int(x.stride(1)), tuple(y.stride()),
            tuple(x.transpose(0, 2).stride()), tuple(z.stride()), int(z.stride(-1)),
            z.numpy()]


@case(unit=CONTIGUOUS, points=2,
      hint="is_contiguous: compare the strides with those of a row-major layout; skip size-1 "
           "dims; a tensor with no elements is contiguous.",
      stated={'_is_contiguous': ('True when elements sit in storage in row-major order with no gaps.',
                                 'A tensor with no elements (a 0 in its shape) is contiguous',
                                 'Dimensions of size 1 can have any stride (you never step along them), so skip them.')})
def contiguity_after_views(tt, rng):
    x = tt.Tensor(_f32(rng, *_dims(rng, 2, 2, 6)))
    col = tt.Tensor(_f32(rng, int(rng.integers(2, 6)), 1))
    cube = tt.Tensor(np.zeros(_dims(rng, 3, 2, 5)))
    empty = tt.Tensor(np.zeros((int(rng.integers(2, 5)), 0, 3), dtype=np.float32))
    perm = tuple(int(i) for i in rng.permutation(3))
    flags = [bool(x.is_contiguous()), bool(x.transpose(0, 1).is_contiguous()),
             bool(col.transpose(0, 1).is_contiguous()),
             bool(cube.permute(*perm).is_contiguous()),
             bool(empty.permute(2, 0, 1).is_contiguous())]
    # the case also returns what was probed, so one fixed answer cannot fit every variant
    return [flags, perm, x.numpy()]


@case(unit=TRANSPOSE, points=2, hint="transpose must return a view: np.swapaxes, not a copy.",
      stated={'_transpose': ('Swap two dimensions *without copying*: only the shape and strides change.',
                             'Negative dims count from the end, as in PyTorch: ``transpose(-1, -2)`` swaps the last two.')})
def transpose_is_a_view_with_swapped_strides(tt, rng):
    x = tt.Tensor(_f32(rng, 2, 3, 4))
    t = x.transpose(0, 2)
    return {"shape": tuple(t.shape), "shares": bool(np.shares_memory(t.numpy(), x.numpy())),
            "values": t.numpy().copy(), "neg_dims": tuple(x.transpose(-1, -2).shape)}


@case(unit=PERMUTE, points=2, hint="permute reorders every dimension; it is a view as well.",
      stated={'_permute': ('Reorder all dimensions, e.g. NCHW -> NHWC with ``permute(0, 2, 3, 1)``. A view.',
                           'Accept ints or one tuple',
                           'negative dims count from the end')})
def permute_nchw_to_nhwc(tt, rng):
    x = tt.Tensor(_f32(rng, 2, 3, 4, 5))
    p = x.permute(0, 2, 3, 1)
    return {"shape": tuple(p.shape), "values": p.numpy().copy(),
            "tuple_arg": tuple(x.permute((3, 2, 1, 0)).shape),
            "shares": bool(np.shares_memory(p.numpy(), x.numpy())),
            "negative": x.permute(0, -1, 1, -2).numpy().copy(),
            "vector": tt.Tensor(_f32(rng, 3)).permute(-1).numpy().copy()}


# ----------------------------------------------------------------------------- reshape (8)
@case(unit=RESHAPE, points=3,
      hint="reshape: accept ints or one tuple; infer a single -1 from the element count.",
      stated={'_reshape': ('a view (no copy) whenever the layout allows.',
                           'Accepts ``reshape(2, 6)`` or ``reshape((2, 6))``; one size may be ``-1`` and is inferred.')})
def reshape_shapes_and_inference(tt, rng):
    p, q, k = _dims(rng, 3, 2, 6)
    x = tt.Tensor(rng.standard_normal(p * q * k).astype(np.float32))
    r = x.reshape(p, -1, k)
    return {"a": tuple(x.reshape(p * q, k).shape), "b": tuple(x.reshape((q, p * k)).shape),
            "c": tuple(r.shape), "values": r.numpy().copy(),
            "view": bool(np.shares_memory(r.numpy(), x.numpy()))}


@case(unit=RESHAPE, points=1,
      hint="reshape: raise RuntimeError when the new shape does not hold exactly numel elements.",
      stated={'_reshape': ('Check the element count matches (resolving a ``-1``); if it cannot, raise ``RuntimeError(',
                           'one size may be ``-1`` and is inferred.',
                           'the provided helpers ``_shape_arg`` and ``_check_reshape`` do steps 1 and 2')})
def reshape_rejects_wrong_sizes(tt, rng):
    p, q = _dims(rng, 2, 2, 7)
    x = tt.Tensor(rng.standard_normal(p * q).astype(np.float32))
    bad = [(p + 1, q), (p * q + 1, -1), (-1, -1)]
    order = [bad[int(i)] for i in rng.permutation(3)]
    return [[outcome(x.reshape, *shape) for shape in order], order,
            x.reshape(q, p).numpy().copy()]


@case(unit=VIEW, points=3,
      hint="view never copies: it works whenever the strides allow the new shape "
           "(np.reshape(data, shape, copy=False)) and raises RuntimeError otherwise.",
      stated={'_view': ('Like ``reshape`` but guaranteed never to copy; raises when the strides forbid it.',
                        '``x[:, ::2].view(...)`` may only add or remove size-1 dimensions or split a dimension',
                        "Turn that ``ValueError`` into ``RuntimeError`` (PyTorch's type)",
                        'do not test ``is_contiguous()`` first: that refuses views PyTorch allows')})
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
@case(unit=INDEXING, points=3,
      hint="__getitem__: x, index = _index_arg(self, index), then x.data[index]: it applies "
           "integers before index arrays (PyTorch's order) and refuses negative steps.",
      stated={'_getitem': ("Indexing and slicing with PyTorch's rules: ``x[0]``, ``x[:, 1:3]``, ``x[idx]``.",
                           '``x, index = _index_arg(self, index)`` (provided): it unwraps Tensors in the index, refuses negative slice steps (PyTorch does), and applies integer indices first when they are mixed with index arrays',
                           '``x.data[index]``'),
              'test:test_indexing_like_pytorch': ('x[::-1] must raise ValueError',)})
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
@case(unit=ARITHMETIC, points=2,
      hint="_add/_sub/_mul/_truediv: NumPy broadcasts for you: shapes align from the right, size "
           "1 stretches.",
      stated={'_add': 'Element-wise ``self + other`` with broadcasting; ``other`` may be a number.',
              '_sub': ('Element-wise ``self - other`` with broadcasting.',
                       'the order matters: ``self`` minus ``other``; ``1 - t`` goes through ``__rsub__`` (given)')})
def add_sub_broadcast_shapes(tt, rng):
    a = tt.Tensor(_f32(rng, 4, 1, 3))
    b = tt.Tensor(_f32(rng, 5, 1))
    c = tt.Tensor(_f32(rng, 3))
    return [(a + b).numpy(), (a - c).numpy(), (c - b).numpy(), (a + 1.5).numpy(),
            (2.0 - c).numpy()]


@case(unit=ARITHMETIC, points=3,
      hint="Multiply and divide element-wise with broadcasting; 2 / t uses __rtruediv__.",
      stated={'_mul': 'Element-wise ``self * other`` with broadcasting',
              '_truediv': 'Element-wise ``self / other`` with broadcasting (true division, float result).',
              '_neg': 'Element-wise negation ``-self``.'})
def mul_div_neg_broadcast(tt, rng):
    a = tt.Tensor(_f32(rng, 2, 3))
    b = tt.Tensor(rng.uniform(0.5, 2.0, (3,)).astype(np.float32))
    return [(a * b).numpy(), (a / b).numpy(), (3 * a).numpy(), (1.0 / b).numpy(),
            (-a).numpy()]


@case(unit=ARITHMETIC, points=2,
      hint="arithmetic: operate on the promoted arrays a, b from _binary: a number never widens "
           "float32, int * 0.5 is float32, int / int is float32, as in PyTorch.",
      stated={'_add': ("gives you both data arrays ``a`` and ``b`` already converted to the dtype PyTorch's type promotion picks",
                       'Use ``a`` and ``b``, not ``self.data`` and ``other.data``: those still have their own dtypes.'),
              '_truediv': ('Dividing integers gives a float: NumPy makes ``int / int`` float64, PyTorch float32',
                           'integer and bool operands arrive as float32.'),
              '_pow': "while ``x ** 2`` keeps ``x``'s dtype.",
              'result_type': ('a number never widens a tensor of its own category (``float32 * 0.5`` stays float32, ``int8 + 300`` stays int8) but lifts a lower one (``int * 0.5`` is float32).',
                              'A NumPy number counts as a number too: ``np.float64(2.0)`` does not make float32 float64.'),
              'test:test_type_promotion': "'a float64 0-d tensor does not widen a float32 tensor with dimensions'"})
def scalars_keep_float32(tt, rng):
    a = tt.Tensor(_f32(rng, 3))
    ints = tt.Tensor(rng.integers(1, 50, 3))
    f64 = tt.Tensor(rng.uniform(0.5, 4.0, 3))
    c = float(rng.uniform(0.5, 3.0))
    return [str((a + 1).dtype), str((a * c).dtype), str((1 - a).dtype), str((a / 3).dtype),
            str((ints + 1).dtype), str((a ** 2).dtype), str((ints / ints).dtype),
            str((f64 / f64).dtype), str((a / f64).dtype),
            (ints / tt.Tensor(rng.integers(1, 9, 3))).numpy(), (a * c).numpy(),
            (ints * c).numpy(), (a * np.float64(c)).numpy(), (a + tt.Tensor(np.float64(c))).numpy(),
            (ints + a).numpy()]



@case(unit=RESULT_TYPE, points=3,
      hint="result_type: categories bool < int < float; the strongest group (tensors with dims, "
           "then 0-d tensors, then numbers) that reaches the top category decides.",
      stated={'result_type': ('Each dtype has a category: bool < integer < floating (``_category``).',
                              'Operands form three groups, strongest first: tensors with at least one dimension, 0-d tensors, and numbers',
                              "The result's category is the highest category of any operand.",
                              "The dtype comes from the strongest group that has an operand of that category: combine that group's dtypes with ``_promote_types``.")})
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
    # which combinations, in which order: drawn per variant, so no fixed list of dtype names
    # (the same in every variant) can stand in for the function
    order = rng.permutation(len(combos))[: int(rng.integers(12, len(combos) + 1))]
    return [str(tt.result_type(*combos[i])) for i in order]


@case(unit=MATH, points=2,
      hint="Integer tensors become float32 for exp/log/sqrt/tanh (_float_data) and for float "
           "powers: Tensor([4, 9]) ** 0.5 is [2., 3.]; int ** 2 stays an integer.",
      stated={'_exp': 'converted to float32 for integer and bool tensors',
              '_log': '(integers become float32)',
              '_sqrt': '(integers become float32)',
              '_tanh': '(integers become float32)',
              '_pow': ('an integer tensor to a float power is float32, as in PyTorch',
                       "while ``x ** 2`` keeps ``x``'s dtype.",
                       'refuse what PyTorch refuses (an integer tensor to a negative integer power)'),
              '_clamp': '``int.clamp(min=0.5)`` is float32',
              '_abs': '(the dtype stays: ``|int|`` is an int)'})
def integer_inputs_to_float_ops(tt, rng):
    ints = tt.Tensor(rng.integers(1, 10, 4))
    squares = tt.Tensor(np.array([4, 9, 16, 25])[rng.permutation(4)])
    out = [ints.exp().numpy(), ints.log().numpy(), squares.sqrt().numpy(),
           ints.tanh().numpy(), (squares ** 0.5).numpy(), (ints ** 2).numpy(),
           (ints ** 2.5).numpy(), ints.clamp(min=2.5).numpy(), ints.abs().numpy()]
    return out + [outcome(lambda: ints ** -1)]


# ----------------------------------------------------------------------------- math (3)
@case(unit=MATH, points=2, hint="math: use np.exp, np.log, np.sqrt, np.tanh, np.abs, np.clip "
                                 "and ** (np.power) for the powers.",
      stated={'_exp': 'Element-wise ``e ** x``.',
              '_log': 'Element-wise natural logarithm',
              '_sqrt': 'Element-wise square root.',
              '_tanh': 'Element-wise hyperbolic tangent',
              '_abs': 'Element-wise absolute value.',
              '_clamp': 'Limit every element to ``[min, max]``; either bound may be None (torch.clamp).',
              '_pow': '``self ** exponent`` for a number exponent (``x ** 2``, ``x ** 0.5``).'})
def elementwise_math(tt, rng):
    x = tt.Tensor(rng.uniform(0.1, 3.0, (2, 3)).astype(np.float32))
    z = tt.Tensor(_f32(rng, 2, 3))
    b = tt.Tensor(rng.uniform(0.5, 2.0, (3,)).astype(np.float32))
    return [x.exp().numpy(), x.log().numpy(), x.sqrt().numpy(), z.tanh().numpy(),
            z.abs().numpy(), z.clamp(min=-0.5, max=0.5).numpy(), z.clamp(min=0.0).numpy(),
            (z ** 2).numpy(), (b ** 0.5).numpy(), (z ** 3).numpy(), (z ** 1).numpy(),
            (b ** -1.5).numpy()]


# ----------------------------------------------------------------------------- matmul (8)
@case(unit=MATMUL, points=2,
      hint="(n, k) @ (k, m) -> (n, m); np.matmul handles 1-D and batched inputs.",
      stated={'_matmul': ("Matrix product with PyTorch's rules: 1-D vectors, 2-D matrices, batched N-D.",
                          '``np.matmul`` implements exactly these rules')})
def matmul_matrix_and_vector(tt, rng):
    a = tt.Tensor(_f32(rng, 3, 4))
    b = tt.Tensor(_f32(rng, 4, 2))
    v = tt.Tensor(_f32(rng, 4))
    return [(a @ b).numpy(), a.matmul(b).numpy(), (a @ v).numpy(), (v @ b).numpy(),
            (v @ v).numpy()]


@case(unit=MATMUL, points=2,
      hint="matmul: batch dimensions broadcast: (B, n, k) @ (k, m) and (B, n, k) @ (B, k, m).",
      stated={'_matmul': 'For N-D inputs the last two dimensions are multiplied and the leading (batch) dimensions broadcast: ``(B, n, k) @ (k, m) -> (B, n, m)``.'})
def matmul_batched(tt, rng):
    a = tt.Tensor(_f32(rng, 5, 3, 4))
    b = tt.Tensor(_f32(rng, 4, 2))
    c = tt.Tensor(_f32(rng, 5, 4, 6))
    d = tt.Tensor(_f32(rng, 2, 1, 3, 4))
    return [(a @ b).numpy(), (a @ c).numpy(), tuple((d @ c).shape)]


def _shapes_named(got, expected):
    """Parent-side check: the errors must be the reference's, and every ValueError message
    must name both shapes (the shapes come from the reference's answer, not the student's)."""
    if not isinstance(got, list) or len(got) != len(expected):
        return False, "the result is not the list the test builds"
    head_ok, msg = compare_values(got[:4], expected[:4])
    if not head_ok:
        return False, msg
    pairs = expected[3][0]
    for i, ((sa, sb), g, e) in enumerate(zip(pairs, got[4:], expected[4:], strict=True)):
        if not (isinstance(g, (list, tuple)) and len(g) == 2 and all(
                isinstance(v, str) for v in g)):
            return False, f"result[{4 + i}] is not (error name, message)"
        if g[0] != e[0]:
            return False, f"product {i + 1}: got {g[0]}, not the error the reference raises"
        if g[0] == "ValueError" and not (str(tuple(sa)) in g[1] and str(tuple(sb)) in g[1]):
            return False, f"product {i + 1}: the ValueError message does not name both shapes"
    return True, ""


@case(unit=MATMUL, points=1, check=_shapes_named,
      hint="matmul: check the inner sizes and raise ValueError naming both shapes; a 0-d operand "
           "is a ValueError too (use * for scalars); different dtypes are a RuntimeError.",
      stated={'_matmul': ('0-d inputs are a ``ValueError`` (use ``*``).',
                          'if the two dtypes differ, raise ``RuntimeError``',
                          'If not, raise ``ValueError`` naming both shapes',
                          'each shape as Python prints the tuple (``(2, 3)``, a vector ``(4,)``).')})
def matmul_shape_errors_name_shapes(tt, rng):
    out: list = []
    scalar = tt.Tensor(float(rng.uniform(1.0, 3.0)))
    n, m, k = _dims(rng, 3, 2, 9)
    out.append(outcome(tt.Tensor(np.ones(n, dtype=np.float32)).matmul, scalar))
    out.append(outcome(scalar.matmul, tt.Tensor(np.ones(n, dtype=np.float32))))
    out.append(outcome(tt.Tensor(_f32(rng, n, m)).matmul, tt.Tensor(rng.standard_normal((m, k)))))
    pairs = [((n, m), (m + 1, k)), ((2, n, m), (n, m + 1)), ((n,), (n + 1,))]
    out.append([pairs, scalar.numpy()])
    for sa, sb in pairs:
        a = tt.Tensor(np.ones(sa, dtype=np.float32))
        b = tt.Tensor(np.ones(sb, dtype=np.float32))
        try:
            a @ b
            out.append(["no error", ""])
        except NotImplementedError:
            raise
        except Exception as exc:  # noqa: BLE001 - the type (and message) is the answer
            out.append([type(exc).__name__, str(exc)[:300]])
    return out


# ----------------------------------------------------------------------------- reductions (9)
@case(unit=SUM, points=3,
      hint="np.sum with axis=_dim_arg(dim, ndim) and keepdims=keepdim; dim may be a tuple; dim=() "
           "means every dim; integer and bool tensors sum to int64.",
      stated={'_sum': ('Sum over ``dim`` (an int, a tuple, or None for every dimension).',
                       '``keepdim=True`` keeps the reduced dimensions with size 1',
                       'also for ``dim=()`` and for a 0-d tensor, where PyTorch reduces over all dimensions',
                       'Integer and bool tensors sum to int64, as in PyTorch')})
def sum_over_dims(tt, rng):
    x = tt.Tensor(_f32(rng, 2, 3, 4))
    pixels = tt.Tensor(rng.integers(200, 256, (3, 4)).astype(np.uint8))
    mask = tt.Tensor(rng.random(6) > 0.5)
    scalar = tt.Tensor(np.float32(rng.standard_normal()))
    return [x.sum().numpy(), x.sum(dim=0).numpy(), x.sum(dim=-1, keepdim=True).numpy(),
            x.sum(dim=(0, 2)).numpy(), tuple(x.sum(dim=1, keepdim=True).shape),
            x.sum(dim=()).numpy(), pixels.sum().numpy(), pixels.sum(dim=1).numpy(),
            mask.sum().numpy(), scalar.sum(dim=0).numpy(), scalar.sum(dim=-1, keepdim=True).numpy()]


@case(unit=MEAN, points=2,
      hint="mean = sum / count over the reduced dims; float stays float (float32 or float64); the "
           "mean of an integer tensor is a RuntimeError, as in PyTorch.",
      stated={'_mean': ('Mean over ``dim``; same ``dim``/``keepdim`` rules as ``sum``.',
                        'for a non-float tensor (``self.dtype.kind != "f"``) raise ``RuntimeError``',
                        '(float32 data gives a float32 mean)'),
              '_sum': 'also for ``dim=()``'})
def mean_over_dims(tt, rng):
    x = tt.Tensor(_f32(rng, 3, 5))
    ints = tt.Tensor(rng.integers(0, 9, (2, 3)))
    f64 = tt.Tensor(rng.standard_normal((4,)))
    return [x.mean().numpy(), x.mean(dim=0).numpy(), x.mean(dim=1, keepdim=True).numpy(),
            str(x.mean().dtype), outcome(ints.mean, dim=1), f64.mean().numpy(),
            x.mean(dim=()).numpy()]


@case(unit=MAX, points=3, hint="max() is the largest element; max(dim) returns (values, indices).",
      stated={'_max': ('``x.max()`` returns a 0-d tensor with the largest element;',
                       '``x.max(dim)`` returns ``MaxResult(values, indices)``',
                       'A 0-d tensor has nothing to reduce (``axis`` is None): its maximum is itself, at index 0',
                       '(both with ``keepdims``)')})
def max_values_and_indices(tt, rng):
    x = tt.Tensor(_f32(rng, 4, 6))
    m = x.max(dim=1)
    k = x.max(dim=0, keepdim=True)
    scalar = tt.Tensor(np.float32(rng.standard_normal()))
    s = scalar.max(dim=0)
    return [x.max().numpy(), m.values.numpy(), m.indices.numpy(), k.values.numpy(),
            tuple(k.indices.shape), s.values.numpy(), s.indices.numpy()]
