"""Hidden suite · module 18 (acceleration). Cases are probes; the trusted parent compares.

Each case returns plain data computed with the package under test ``tt``; the expected value
is the same case run against tinytorch_ref. Every size, block size and clock increment comes
from ``rng``. Correctness only: no case depends on the speed of the machine (the measuring
functions run on fake clocks). Points sum to module 18's ``points`` (50).
"""

from __future__ import annotations

import importlib

import numpy as np

from autograder.suite import Suite, outcome

suite = Suite(module="18_acceleration", version="2027.3")
case = suite.case
LOOPS = suite.unit("matmul_loops", "matmul_loops")
BROADCAST = suite.unit("matmul_broadcast", "matmul_broadcast")
BLOCKED = suite.unit("matmul_blocked", "matmul_blocked", uses=(BROADCAST,))
BIAS_GELU = suite.unit("bias_gelu", "_BiasGELUFn")
COST = suite.unit("matmul_cost", "matmul_cost")
BLOCKED_BYTES = suite.unit("blocked_matmul_bytes", "blocked_matmul_bytes")
ROOFLINE = suite.unit("attainable_gflops", "attainable_gflops")
BANDWIDTH = suite.unit("measure_bandwidth", "measure_bandwidth")
GFLOPS = suite.unit("measure_gflops", "measure_gflops", uses=(COST,))


def _a(tt):
    return importlib.import_module(f"{tt.__name__}.acceleration")


def _int(rng, low, high):
    return int(rng.integers(low, high + 1))


def _mat(rng, m, n, dtype=np.float64):
    return rng.standard_normal((m, n)).astype(dtype)


class _Clock:
    """A fake clock: every reading advances it by the next of ``steps`` (in ns)."""

    def __init__(self, steps):
        self.steps = iter(steps)
        self.now = 0

    def __call__(self):
        self.now += int(next(self.steps))
        return self.now


# ----------------------------------------------------------------------------- matmul (20)
@case(unit=LOOPS, points=5,
      hint="matmul_loops: C[i, j] = sum over p of a[i, p] * b[p, j] (p in order), summed in "
           "_accumulator(dtype) and returned in the inputs' dtype (integers wrap); mismatched "
           "shapes raise ValueError, two dtypes or bool TypeError.",
      stated={
          "matmul_loops": (
              "``(m, n)`` in the inputs' dtype (integers wrap around, as in PyTorch).",
              "ValueError: the shapes do not fit; TypeError: two dtypes, or bool",
              "For every ``i`` and ``j``: ``acc = wide.type(0)``; for every ``p``: ``acc += a[i, p] * b[p, j]``; then ``out[i, j] = acc``.",
              "Sum in the order ``p = 0, 1, ...``",
          ),
          "_accumulator": "The dtype a product is summed in: the dtype itself for floats (float32 stays float32), int64 for integers; the result is cast back to ``dtype`` at the end, so integer products wrap around exactly as PyTorch's integer ``matmul`` does.",
          "_check_matmul": "``(m, k, n)`` of ``a (m, k) @ b (k, n)``; ValueError naming both shapes otherwise, and TypeError for two different dtypes or bool matrices",
      })
def matmul_loops_values(tt, rng):
    A = _a(tt)
    m, k, n = _int(rng, 1, 6), _int(rng, 1, 7), _int(rng, 1, 6)
    out = [A.matmul_loops(_mat(rng, m, k), _mat(rng, k, n)),
           A.matmul_loops(_mat(rng, k, m, np.float32), _mat(rng, m, n, np.float32)),
           A.matmul_loops(_mat(rng, 1, k), _mat(rng, k, 1))]
    ints = rng.integers(-128, 128, (m, k)).astype(np.int8), rng.integers(-128, 128, (k, n))
    return out + [str(out[1].dtype), outcome(A.matmul_loops, _mat(rng, m, k), _mat(rng, k + 1, n)),
                  A.matmul_loops(ints[0], ints[1].astype(np.int8)),
                  A.matmul_loops(ints[0].astype(np.int32), ints[1].astype(np.int32)),
                  outcome(A.matmul_loops, ints[0], ints[1].astype(np.int16)),
                  outcome(A.matmul_loops, ints[0] > 0, ints[1] > 0)]


@case(unit=BROADCAST, points=5, rtol=1e-5, atol=1e-5,
      hint="matmul_broadcast: a[:, :, None] * b[None, :, :] is (m, k, n) in _accumulator(dtype); "
           "sum it over axis 1 and cast back to the inputs' dtype; mismatched shapes raise "
           "ValueError, two dtypes TypeError.",
      stated={
          "matmul_broadcast": (
              "``(m, n)`` in the inputs' dtype (integers wrap around, as in PyTorch).",
              "check the shapes with ``_check_matmul``; cast both to ``_accumulator(a.dtype)``; ``a[:, :, None] * b[None, :, :]`` has shape ``(m, k, n)``; sum it over axis 1 and cast the sum back to the inputs' dtype.",
          ),
          "_accumulator": "The dtype a product is summed in: the dtype itself for floats (float32 stays float32), int64 for integers; the result is cast back to ``dtype`` at the end, so integer products wrap around exactly as PyTorch's integer ``matmul`` does.",
          "_check_matmul": "``(m, k, n)`` of ``a (m, k) @ b (k, n)``; ValueError naming both shapes otherwise, and TypeError for two different dtypes or bool matrices",
      })
def matmul_broadcast_values(tt, rng):
    A = _a(tt)
    m, k, n = _int(rng, 1, 9), _int(rng, 1, 9), _int(rng, 1, 9)
    f32 = A.matmul_broadcast(_mat(rng, m, k, np.float32), _mat(rng, k, n, np.float32))
    ints = rng.integers(0, 256, (m, k)).astype(np.uint8), rng.integers(0, 256, (k, n))
    return [A.matmul_broadcast(_mat(rng, m, k), _mat(rng, k, n)), f32, str(f32.dtype),
            outcome(A.matmul_broadcast, _mat(rng, m, k), _mat(rng, m + k, n)),
            A.matmul_broadcast(ints[0], ints[1].astype(np.uint8)),
            outcome(A.matmul_broadcast, _mat(rng, m, k), _mat(rng, k, n, np.float32))]


@case(unit=BLOCKED, points=8, rtol=1e-5, atol=1e-5,
      hint="matmul_blocked: tiles: for i, j over the output in steps of block_size, add "
           "kernel(a[i:i+b, p:p+b], b[p:p+b, j:j+b]) for every p; the edge tiles are smaller when "
           "b does not divide a size; block_size < 1 raises ValueError.",
      stated={
          "matmul_blocked": (
              "block_size: the tile edge ``b`` (1 or more; need not divide any dimension).",
              "kernel: multiplies two tiles (``np.matmul`` by default, or ``matmul_broadcast``).",
              "``(m, n)`` in the inputs' dtype (integers wrap around, as in PyTorch).",
              "ValueError: the shapes do not fit, or ``block_size < 1``; TypeError: two dtypes, or bool.",
              "cast ``a`` and ``b`` to ``wide = _accumulator(a.dtype)``",
              "``out[i:i + bs, ...]`` stops at the edge by itself",
          ),
          "_accumulator": "The dtype a product is summed in: the dtype itself for floats (float32 stays float32), int64 for integers; the result is cast back to ``dtype`` at the end, so integer products wrap around exactly as PyTorch's integer ``matmul`` does.",
      })
def matmul_blocked_any_size_and_block(tt, rng):
    A = _a(tt)
    m, k, n = _int(rng, 5, 13), _int(rng, 5, 13), _int(rng, 5, 13)
    a, b = _mat(rng, m, k), _mat(rng, k, n)
    out = [A.matmul_blocked(a, b, bs) for bs in (1, _int(rng, 2, 4), _int(rng, 5, 12), 16)]
    a32, b32 = _mat(rng, k, m, np.float32), _mat(rng, m, n, np.float32)
    with_bcast = A.matmul_blocked(a32, b32, _int(rng, 2, 5), kernel=A.matmul_broadcast)
    out += [A.matmul_blocked(a32, b32, _int(rng, 2, 5)), with_bcast, str(with_bcast.dtype)]
    i8 = rng.integers(-128, 128, (m, k)).astype(np.int8), rng.integers(-128, 128, (k, n))
    return out + [outcome(A.matmul_blocked, a, b, 0), outcome(A.matmul_blocked, a, a.T.copy()[:1]),
                  A.matmul_blocked(i8[0], i8[1].astype(np.int8), _int(rng, 2, 5))]


@case(unit=BLOCKED, points=2,
      hint="matmul_blocked: loop order i (rows of C), then j (columns of C), then p (the shared "
           "dimension): the kernel sees every tile pair once, in that order.",
      stated={
          "matmul_blocked": (
              "For ``i`` in ``range(0, m, block_size)``, ``j`` in ``range(0, n, block_size)``: ``tile = out[i:i + block_size, j:j + block_size]`` (a view); for ``p`` in ``range(0, k, block_size)``: ``tile += kernel(a[i:i + bs, p:p + bs], b[p:p + bs, j:j + bs])``.",
              "the loop order ``i, j, p``",
          ),
      })
def matmul_blocked_tile_order(tt, rng):
    A = _a(tt)
    m, k, n = _int(rng, 3, 9), _int(rng, 3, 9), _int(rng, 3, 9)
    bs = _int(rng, 2, 4)
    calls = []

    def kernel(x, y):
        calls.append((x.shape, y.shape, float(x[0, 0]), float(y[0, 0])))
        return x @ y

    A.matmul_blocked(_mat(rng, m, k), _mat(rng, k, n), bs, kernel=kernel)
    return calls


# ----------------------------------------------------------------------------- fusion (14)
def _bias_gelu_inputs(rng, dtype):
    c = _int(rng, 1, 7)
    shape = [(c,), (_int(rng, 1, 5), c), (_int(rng, 1, 3), _int(rng, 1, 4), c)][_int(rng, 0, 2)]
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    return x, rng.standard_normal(c).astype(dtype)


@case(unit=BIAS_GELU, points=6,
      hint="bias_gelu: h = x + bias; t = tanh(sqrt(2/pi) * (h + 0.044715 h^3)); y = 0.5 h (1 + "
           "t); Python-float constants keep float32 float32.",
      stated={
          "_BiasGELUFn.forward": (
              "``y = 0.5·h·(1 + tanh(c·(h + a·h³)))`` for ``h = x + bias``; save ``h`` and ``t``.",
              "``t = h * h``; then in place: ``t *= _GELU_A``; ``t += 1.0``; ``t *= h``; ``t *= _GELU_C``; ``np.tanh(t, out=t)``",
              "``y = h * 0.5``; ``y *= t + 1.0`` (halve first",
              "Every constant is a Python float.",
          ),
          "bias_gelu": '``F.gelu(input + bias, approximate="tanh")`` as one fused node (provided).',
      })
def bias_gelu_forward(tt, rng):
    A = _a(tt)
    out = []
    for dtype in (np.float32, np.float64, np.float32):
        x, b = _bias_gelu_inputs(rng, dtype)
        y = A.bias_gelu(tt.Tensor(x), tt.Tensor(b))
        out += [y.numpy(), str(y.dtype)]
    big = np.array([[-30.0, -3.0, 0.0, 3.0, 30.0]], np.float32) * np.float32(rng.uniform(0.5, 1))
    out.append(A.bias_gelu(tt.Tensor(big), tt.Tensor(np.zeros(5, np.float32))).numpy())
    return out


# atol 1e-5: float32's own 1 - t^2 loses digits where |t| ~ 1, so a correct backward computed
# in float64 (cast back) lands ~1e-6 from the float32 reference on large |h|.
@case(unit=BIAS_GELU, points=6, rtol=1e-4, atol=1e-5,
      hint="bias_gelu: dy/dh = 0.5 (1 + t) + 0.5 h (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 h^2); "
           "multiply by the incoming gradient; the bias gets the same, summed over the leading "
           "axes (return it in x's shape: the engine sums).",
      stated={
          "_BiasGELUFn.backward": (
              "``(dL/dx, dL/dbias)`` from the saved ``h`` and ``t`` (both in ``x``'s shape).",
              "``d = 1.0 - t * t``; ``d *= h * h * (3.0 * _GELU_A) + 1.0``; ``d *= h * (0.5 * _GELU_C)``; ``d += 0.5 * (1.0 + t)`` — now ``d = dy/dh``.",
              "``d *= grad``; return ``(d, d)`` (the engine sums the bias's copy down to ``(C,)``).",
          ),
      })
def bias_gelu_backward(tt, rng):
    A = _a(tt)
    out = []
    for dtype in (np.float64, np.float32):
        x, b = _bias_gelu_inputs(rng, dtype)
        xt, bt = tt.Tensor(x, requires_grad=True), tt.Tensor(b, requires_grad=True)
        y = A.bias_gelu(xt, bt)
        (y * tt.Tensor(rng.standard_normal(y.shape).astype(dtype))).sum().backward()
        out += [xt.grad.numpy(), bt.grad.numpy(), str(xt.grad.dtype)]
    return out


@case(unit=BIAS_GELU, points=2,
      hint="bias_gelu: save only h = x + bias and t = tanh(...) for backward (two arrays of x's "
           "shape), and record one graph node.",
      stated={
          "_BiasGELUFn": "``gelu(x + bias)`` with the tanh approximation, as one node (a fused kernel).",
          "_BiasGELUFn.forward": (
              "``h = x + bias`` (a new array, kept for backward).",
              "``ctx.save_for_backward(h, t)``; return ``y``.",
          ),
      })
def bias_gelu_keeps_two_arrays(tt, rng):
    A = _a(tt)
    x, b = _bias_gelu_inputs(rng, np.float32)
    y = A.bias_gelu(tt.Tensor(x, requires_grad=True), tt.Tensor(b))
    saved = y._node.saved["ctx"].saved
    return [[tuple(np.shape(s)) for s in saved], len(y._node.inputs),
            [np.asarray(s) for s in saved]]


# ----------------------------------------------------------------------------- roofline (16)
@case(unit=COST, points=3,
      hint="matmul_cost: FLOPs 2 m k n; bytes itemsize x (m k + k n + m n): read A and B, write C.",
      stated={
          "matmul_cost": "FLOPs ``2·m·k·n``; bytes ``itemsize·(m·k + k·n + m·n)`` (read A and B, write C). Return both as Python ints.",
      })
def matmul_cost_formula(tt, rng):
    A = _a(tt)
    return [A.matmul_cost(_int(rng, 1, 600), _int(rng, 1, 600), _int(rng, 1, 600),
                          int(rng.choice([1, 2, 4, 8]))) for _ in range(4)] + [
        A.matmul_cost(_int(rng, 1, 50), _int(rng, 1, 50), _int(rng, 1, 50))]


@case(unit=BLOCKED_BYTES, points=4,
      hint="blocked_matmul_bytes: itemsize x (m k ceil(n / b) + k n ceil(m / b) + m n): A is "
           "re-read for every column of output tiles, B for every row of them, C written once.",
      stated={
          "blocked_matmul_bytes": (
              "``itemsize·(m·k·⌈n/b⌉ + k·n·⌈m/b⌉ + m·n)``",
              "``math.ceil(n / block_size)`` and ``math.ceil(m / block_size)``; return the formula as an int.",
          ),
      })
def blocked_matmul_bytes_formula(tt, rng):
    A = _a(tt)
    out = []
    for _ in range(5):
        m, k, n = _int(rng, 1, 700), _int(rng, 1, 700), _int(rng, 1, 700)
        b = _int(rng, 1, 256)
        out.append([A.blocked_matmul_bytes(m, k, n, b),
                    A.blocked_matmul_bytes(m, k, n, b, int(rng.choice([2, 8]))),
                    A.blocked_matmul_bytes(m, k, n, max(m, n))])
    return out


@case(unit=ROOFLINE, points=2,
      hint="attainable_gflops: the roofline is min(peak, bandwidth x intensity), a float in "
           "GFLOP/s.",
      stated={
          "attainable_gflops": (
              "The roofline: ``min(peak, bandwidth · intensity)`` in GFLOP/s.",
              "one ``min`` of two Python floats.",
          ),
      })
def attainable_gflops_roofline(tt, rng):
    A = _a(tt)
    peak, bw = float(rng.uniform(10, 500)), float(rng.uniform(5, 100))
    ridge = peak / bw
    return [A.attainable_gflops(i, peak, bw)
            for i in (0.0, ridge * rng.uniform(0.01, 0.9), ridge, ridge * rng.uniform(1.1, 50))]


@case(unit=BANDWIDTH, points=4,
      hint="measure_bandwidth: copy with np.copyto into a preallocated array, timed by module "
           "14's measure (warmup 2); a copy moves 2 x nbytes; bytes per nanosecond of the median "
           "are GB/s.",
      stated={
          "measure_bandwidth": (
              "``src = np.ones(n_bytes // 4, np.float32)``; ``dst = np.empty_like(src)``.",
              "``t = measure(lambda: np.copyto(dst, src), warmup=2, repeats=repeats, timer=timer)`` (module 14).",
              "return ``2 * src.nbytes / t.median`` (bytes per nanosecond are GB/s).",
          ),
      })
def measure_bandwidth_on_a_fake_clock(tt, rng):
    A = _a(tt)
    out = []
    for _ in range(2):
        repeats = _int(rng, 3, 7)
        steps = rng.integers(10**5, 10**7, size=2 * repeats + 8)
        n_bytes = 4 * _int(rng, 2**10, 2**16)
        out.append(A.measure_bandwidth(n_bytes, repeats=repeats, timer=_Clock(steps)))
    return out


@case(unit=GFLOPS, points=3,
      hint="measure_gflops: 2 n^3 FLOPs per n x n matmul (np.matmul with out=), timed by module "
           "14's measure (warmup 2); FLOPs per nanosecond of the median are GFLOP/s.",
      stated={
          "measure_gflops": (
              "``t = measure(lambda: np.matmul(a, b, out=c), warmup=2, repeats=repeats, timer=timer)``.",
              "Return ``2 * n**3 / t.median`` (FLOPs per nanosecond are GFLOP/s).",
          ),
      })
def measure_gflops_on_a_fake_clock(tt, rng):
    A = _a(tt)
    out = []
    for _ in range(2):
        repeats = _int(rng, 3, 7)
        steps = rng.integers(10**4, 10**7, size=2 * repeats + 8)
        out.append(A.measure_gflops(_int(rng, 8, 64), repeats=repeats, timer=_Clock(steps)))
    return out
