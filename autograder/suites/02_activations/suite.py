"""Hidden suite · module 02 (activations). Cases are probes; the trusted parent compares.

Each case returns plain data computed with the package under test ``tt``; the expected value
is the same case run against tinytorch_ref. Points sum to module 02's ``points`` (50).
"""

from __future__ import annotations

import warnings

import numpy as np

from autograder.suite import Suite, outcome

suite = Suite(module="02_activations", version="2027.2")
case = suite.case
RELU = suite.unit("relu", "_ReLUFn")
SIGMOID = suite.unit("sigmoid", "_SigmoidFn")
TANH = suite.unit("tanh", "tanh")
GELU = suite.unit("gelu", "_GELUFn", "gelu")
SOFTMAX = suite.unit("softmax", "_SoftmaxFn")
LOG_SOFTMAX = suite.unit("log_softmax", "_LogSoftmaxFn", uses=(SOFTMAX,))


def _f32(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _extreme(rng):
    """Large and tiny magnitudes of both signs (past float32 exp's overflow at 88.7), jittered
    and shuffled per variant."""
    mags = np.array([1e4, 1000.0, 100.0, 88.0, 20.0, 1e-3]) * rng.uniform(1.0, 1.15, 6)
    x = np.concatenate([-mags, [0.0], mags]).astype(np.float32)
    return x[rng.permutation(x.size)]


# ----------------------------------------------------------------------------- relu (6)
@case(unit=RELU, points=2,
      hint="_ReLUFn.forward: np.maximum(x, 0) keeps the shape and dtype (ints too).",
      stated={'_ReLUFn.forward': ('Compute ``max(x, 0)`` element-wise',
                                  '``out = np.maximum(x, 0)`` — same shape and dtype as ``x``'),
              'relu': 'Rectified linear unit, element-wise: ``max(0, x)``; same shape and dtype.',
              'ReLU': '``max(0, x)`` as a module.'})
def relu_values_shapes_dtype(tt, rng):
    F = tt.nn.functional
    x = tt.Tensor(_f32(rng, 3, 4, 5))
    out = F.relu(x)
    ints = F.relu(tt.Tensor(rng.integers(-5, 5, 6)))
    return [out.numpy(), str(out.dtype), F.relu(tt.Tensor(_extreme(rng))).numpy(),
            tt.nn.ReLU()(x).numpy(), ints.numpy()]


@case(unit=RELU, points=2,
      hint="relu goes through _ReLUFn.apply, so the result is recorded for autograd.",
      stated={'_ReLUFn': "ReLU with PyTorch's gradient",
              'test:test_relu_values': 'relu must return a Tensor (so autograd can track it)'})
def relu_returns_recorded_tensor(tt, rng):
    x = tt.Tensor(_f32(rng, *(int(d) for d in rng.integers(1, 7, 2))), requires_grad=True)
    out = tt.nn.functional.relu(x)
    return [type(out).__name__, bool(out.requires_grad), tuple(out.shape), out.numpy(),
            x.numpy()]


@case(unit=RELU, points=2,
      hint="relu: save the output with ctx.save_for_backward(out): the given backward passes the "
           "gradient where it is positive and nothing at 0 (PyTorch's convention).",
      stated={'_ReLUFn': '1 where the output is positive, 0 elsewhere (also at 0).',
              '_ReLUFn.forward': '``ctx.save_for_backward(out)`` and return ``out``.'})
def relu_gradient_is_zero_at_zero(tt, rng):
    x = np.round(rng.standard_normal(12)).astype(np.float32)  # many exact zeros
    out = tt.nn.functional.relu(tt.Tensor(x, requires_grad=True))
    node = out._node
    grad = rng.standard_normal(12).astype(np.float32)
    (dx,) = node.op.backward(node.saved["ctx"], grad)
    return [x, np.asarray(dx)]


# ----------------------------------------------------------------------------- sigmoid/tanh (12)
@case(unit=SIGMOID, points=3, hint="sigmoid(x) = 1 / (1 + exp(-x)); keep float32.",
      stated={'_SigmoidFn.forward': ('Compute ``1 / (1 + exp(-x))`` element-wise without overflow',
                                     '``out = np.empty_like(x)`` (same shape and dtype)'),
              'Sigmoid': '``1 / (1 + exp(-x))`` as a module.'})
def sigmoid_moderate_values(tt, rng):
    x = tt.Tensor(_f32(rng, 4, 7, scale=3.0))
    out = tt.nn.functional.sigmoid(x)
    return [out.numpy(), str(out.dtype), tt.nn.Sigmoid()(x).numpy()]


@case(unit=SIGMOID, points=5, rtol=1e-5, atol=0.0,
      hint="Branch on the sign: exp may only see arguments <= 0, so nothing overflows and tiny "
           "outputs such as sigmoid(-100) keep their value.",
      stated={'_SigmoidFn.forward': ('``out[pos] = 1 / (1 + np.exp(-x[pos]))``',
                                     '``e = np.exp(x[~pos])`` (here ``x < 0``), then ``out[~pos] = e / (1 + e)``.'),
              'test:test_sigmoid_is_stable': 'sigmoid(-100) = 3.7e-44 is tiny but positive'})
def sigmoid_extreme_inputs_stable(tt, rng):
    x = tt.Tensor(_extreme(rng))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            out = tt.nn.functional.sigmoid(x).numpy()
    return out


@case(unit=SIGMOID, points=1, hint="sigmoid: no NumPy overflow warning for large |x|.",
      stated={'_SigmoidFn.forward': 'no NumPy warning should appear for ``x = ±1000``: ``exp`` may only see arguments <= 0.',
              'test:test_sigmoid_is_stable': "with np.errstate(over='raise', invalid='raise'):"})
def sigmoid_raises_no_overflow(tt, rng):
    x = tt.Tensor(_extreme(rng))
    with np.errstate(over="raise", invalid="raise"):
        try:
            return tt.nn.functional.sigmoid(x).numpy()
        except NotImplementedError:
            raise
        except Exception as exc:  # noqa: BLE001 - FloatingPointError is the answer
            return type(exc).__name__


@case(unit=TANH, points=3, hint="tanh is Tensor.tanh; it saturates at ±1 without overflow.",
      stated={'tanh': ('Hyperbolic tangent, element-wise (range (-1, 1)).',
                       "module 01's ``Tensor.tanh`` already computes it stably (``np.tanh`` never overflows); return it."),
              'Tanh': '``tanh(x)`` as a module.'})
def tanh_values(tt, rng):
    x = tt.Tensor(_f32(rng, 5, 3, scale=2.0))
    return [tt.nn.functional.tanh(x).numpy(), tt.nn.Tanh()(x).numpy(),
            tt.nn.functional.tanh(tt.Tensor(_extreme(rng))).numpy()]


# ----------------------------------------------------------------------------- gelu (9)
@case(unit=GELU, points=4, atol=1e-7,
      hint="Exact GELU is x * 0.5 * (1 + erf(x / sqrt(2))); use the provided erf/erfc.",
      stated={'_GELUFn.forward': ('Compute ``x * 0.5 * (1 + erf(x / sqrt(2)))`` element-wise',
                                  '``cdf = 0.5 * erfc(-x / math.sqrt(2))`` — the same as ``0.5 * (1 + erf(...))`` but without cancellation for very negative ``x``.',
                                  'Return ``(x * cdf).astype(x.dtype)``',
                                  'check that a float32 input gives a float32 output.'),
              'GELU': "``approximate`` is ``'none'`` (exact) or ``'tanh'``."})
def gelu_exact_values(tt, rng):
    x = tt.Tensor(np.concatenate([_f32(rng, 40, scale=3.0), _extreme(rng)]))
    out = tt.nn.functional.gelu(x)
    return [out.numpy(), str(out.dtype), tt.nn.GELU()(x).numpy()]


# atol 1e-6: in float32, 1 + tanh(u) cancels for x << 0 (tanh's ulp near -1 is 6e-8, times
# 0.5|x| up to ~5), so the reference itself is that far from exact; an equivalent form such as
# x * sigmoid(2u) lands up to ~1.2e-7 away from it.
@case(unit=GELU, points=3, atol=1e-6,
      hint="tanh GELU: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).",
      stated={'gelu': ("``'tanh'`` for ``0.5·x·(1 + tanh(sqrt(2/pi)·(x + 0.044715·x³)))``.",
                       'A tensor of the same shape and dtype.'),
              'GELU': "``approximate`` is ``'none'`` (exact) or ``'tanh'``."})
def gelu_tanh_approximation(tt, rng):
    x = tt.Tensor(_f32(rng, 6, 5, scale=3.0))
    out = tt.nn.functional.gelu(x, approximate="tanh")
    return [out.numpy(), str(out.dtype), tt.nn.GELU(approximate="tanh")(x).numpy()]


@case(unit=GELU, points=2,
      hint="gelu: approximate must be 'none' or 'tanh': raise ValueError otherwise.",
      stated={'gelu': ("ValueError: ``approximate`` is neither ``'none'`` nor ``'tanh'``.",
                       "``'none'``: ``return _GELUFn.apply(input)``")})
def gelu_rejects_unknown_approximation(tt, rng):
    x = tt.Tensor(_f32(rng, 3))
    bad = ["fast", "erf", "TANH", "exact", "sigmoid"][int(rng.integers(5))]
    return [outcome(tt.nn.functional.gelu, x, approximate=bad),
            tt.nn.functional.gelu(x, approximate="none").numpy()]


# ----------------------------------------------------------------------------- softmax (13)
@case(unit=SOFTMAX, points=3,
      hint="softmax: exp(x - max) / sum(exp(x - max)) along dim, keepdim=True to broadcast.",
      stated={'_SoftmaxFn.forward': ('``exp(x - max) / sum(exp(x - max))`` along ``dim``',
                                     'use ``dim`` in both the max and the sum.'),
              'softmax': 'dim: the axis to normalise (negative values count from the end).',
              'Softmax': 'Softmax along ``dim`` as a module.'})
def softmax_along_each_dim(tt, rng):
    F = tt.nn.functional
    x = tt.Tensor(_f32(rng, 2, 3, 4))
    return [F.softmax(x, dim=-1).numpy(), F.softmax(x, dim=0).numpy(),
            F.softmax(x, dim=1).numpy(), tt.nn.Softmax(dim=2)(x).numpy()]


@case(unit=SOFTMAX, points=1,
      hint="max(..., initial=-np.inf): an empty row has no maximum; a 0-d tensor is its own row "
           "(softmax 1, log_softmax 0).",
      stated={'_SoftmaxFn.forward': ('``initial=-np.inf`` makes the maximum of an empty row ``-inf`` instead of an error (PyTorch returns an empty result for an empty tensor).',
                                     'A 0-d input arrives with ``dim=None`` (NumPy\'s "everything"): it is a row of one, and its softmax is 1.'),
              'softmax': 'entries are in (0, 1) and sum to 1 along ``dim``.'})
def softmax_of_empty_and_0d_tensors(tt, rng):
    F = tt.nn.functional
    n, k = int(rng.integers(1, 40)), int(rng.integers(2, 7))
    vec = _f32(rng, k)  # a 1-D input is one row: the value varies, so no constant passes
    return _empty_and_0d(tt, rng, F.softmax, n, vec)


def _empty_and_0d(tt, rng, fn, n, vec):
    """``fn`` on (n, 0), (0, n), a 0-d tensor and a 1-D row."""
    return [tuple(fn(tt.Tensor(np.zeros((n, 0), np.float32)), dim=1).shape),
            tuple(fn(tt.Tensor(np.zeros((0, n), np.float32)), dim=1).shape),
            fn(tt.Tensor(np.float32(rng.standard_normal())), dim=0).numpy(),
            fn(tt.Tensor(vec), dim=0).numpy()]


@case(unit=SOFTMAX, points=5,
      hint="softmax: subtract each row's maximum before exp, or large logits overflow to NaN.",
      stated={'_SoftmaxFn.forward': 'subtracting the maximum keeps every exponent <= 0, so nothing overflows',
              '_SoftmaxFn': 'stable for any logits'})
def softmax_large_logits_no_overflow(tt, rng):
    x = np.array([[1000.0, 0.0, -1000.0], [500.0, 500.0, 499.0], [-800.0, -801.0, -1e4],
                  [89.0, 90.0, 91.0]]) + rng.uniform(-1.5, 1.5, (4, 3))
    x = x.astype(np.float32)[rng.permutation(4)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return tt.nn.functional.softmax(tt.Tensor(x), dim=1).numpy()


@case(unit=SOFTMAX, points=2, hint="Softmax is shift-invariant: softmax(x + c) == softmax(x).",
      stated={'_SoftmaxFn.forward': '``exp(x - max) / sum(exp(x - max))`` along ``dim``',
              'softmax': 'entries are in (0, 1) and sum to 1 along ``dim``.'})
def softmax_shift_invariant_and_normalised(tt, rng):
    F = tt.nn.functional
    x = _f32(rng, 5, 6, scale=4.0)
    a = F.softmax(tt.Tensor(x), dim=1).numpy()
    b = F.softmax(tt.Tensor(x + np.float32(rng.uniform(100.0, 500.0))), dim=1).numpy()
    # both are compared, in the parent, with the reference's: equal values, rows summing to 1
    return [a, b]


@case(unit=SOFTMAX, points=2,
      hint="softmax: without dim, PyTorch picks 0 for 0-D, 1-D and 3-D inputs, else 1 (warns).",
      stated={'softmax': "``None`` uses PyTorch's legacy rule and warns.",
              '_softmax_dim': "``dim=None`` takes PyTorch's legacy choice with its warning"})
def softmax_implicit_dim_rule(tt, rng):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = tt.nn.functional.softmax(tt.Tensor(_f32(rng, 3, 4)))
        b = tt.nn.Softmax()(tt.Tensor(_f32(rng, 2, 3, 4)))
    return [a.numpy(), b.numpy()]


# ----------------------------------------------------------------------------- log_softmax (10)
@case(unit=LOG_SOFTMAX, points=4,
      hint="log_softmax = (x - m) - log(sum(exp(x - m))) along dim; an empty row keeps its "
           "shape (max with initial=-np.inf), a 0-d tensor is one row.",
      stated={'_LogSoftmaxFn.forward': ('``(x - m) - log(sum(exp(x - m)))`` along ``dim`` (log-sum-exp)',
                                        '``shifted = np.asarray(x - x.max(axis=dim, keepdims=True, initial=-np.inf))``',
                                        'A 0-d input (``dim=None``) is a row of one: its log_softmax is 0.'),
              'LogSoftmax': 'LogSoftmax along ``dim`` as a module.',
              'test:test_log_softmax_is_stable': 'log_softmax must keep float32'})
def log_softmax_along_dims(tt, rng):
    F = tt.nn.functional
    x = tt.Tensor(_f32(rng, 3, 5, 2, scale=2.0))
    out = F.log_softmax(x, dim=1)
    n = int(rng.integers(1, 40))
    edges = _empty_and_0d(tt, rng, F.log_softmax, n, _f32(rng, int(rng.integers(2, 7))))
    return [out.numpy(), F.log_softmax(x, dim=-1).numpy(), str(out.dtype),
            tt.nn.LogSoftmax(dim=0)(x).numpy(), edges]


@case(unit=LOG_SOFTMAX, points=4,
      hint="log_softmax: work in log space: log(softmax(x)) gives -inf when a probability "
           "underflows.",
      stated={'log_softmax': 'stable for any logits.',
              '_LogSoftmaxFn.forward': 'never compute ``np.log(softmax)``: for the example it returns ``[0, -inf]``.'})
def log_softmax_extreme_logits_finite(tt, rng):
    x = np.array([[0.0, -200.0, -1000.0], [1000.0, 1000.0, -1000.0], [88.0, 100.0, 0.0]])
    x = (x + rng.uniform(-1.5, 1.5, (3, 3))).astype(np.float32)[rng.permutation(3)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return tt.nn.functional.log_softmax(tt.Tensor(x), dim=1).numpy()


@case(unit=LOG_SOFTMAX, points=2,
      hint="exp(log_softmax(x)) must equal softmax(x) along the same dim.",
      stated={'log_softmax': '``log(softmax(x))`` along ``dim``',
              '_SoftmaxFn.forward': '``exp(x - max) / sum(exp(x - max))`` along ``dim``'})
def log_softmax_consistent_with_softmax(tt, rng):
    F = tt.nn.functional
    x = tt.Tensor(_f32(rng, 4, 6, scale=3.0))
    # the parent compares both with the reference's (so exp(log_softmax) == softmax)
    return [np.exp(F.log_softmax(x, dim=0).numpy()), F.softmax(x, dim=0).numpy()]
