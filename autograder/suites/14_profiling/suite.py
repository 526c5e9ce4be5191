"""Hidden suite · module 14 (profiling). Cases are probes; the trusted parent compares.

Each case returns plain data computed with the package under test ``tt``; the expected value
is the same case run against tinytorch_ref. Every size, duration and seed comes from ``rng``.
No case depends on the speed of the machine: the timing functions run on fake clocks that
move only when the code under test "runs". Points sum to module 14's ``points`` (50).
"""

from __future__ import annotations

import importlib

import numpy as np

from autograder.suite import Suite, outcome

suite = Suite(module="14_profiling", version="2027.2")
case = suite.case
PARAMETERS = suite.unit("parameters_by_module", "parameters_by_module")
MEMORY = suite.unit("training_memory", "training_memory", uses=(PARAMETERS,))
LINEAR_FLOPS = suite.unit("linear_flops", "linear_flops")
CONV_FLOPS = suite.unit("conv2d_flops", "conv2d_flops")
ATTENTION_FLOPS = suite.unit("attention_flops", "attention_flops")
MODULE_FLOPS = suite.unit("module_flops", "module_flops",
                          uses=(LINEAR_FLOPS, CONV_FLOPS, ATTENTION_FLOPS))
GRAPH_BYTES = suite.unit("graph_activation_bytes", "graph_activation_bytes")
SUMMARIZE = suite.unit("summarize", "summarize")
MEASURE = suite.unit("measure", "measure", uses=(SUMMARIZE,))
MEDIAN_CI = suite.unit("median_ci", "median_ci")
COMPARE = suite.unit("compare", "compare", uses=(SUMMARIZE, MEDIAN_CI))
PROFILER = suite.unit("Profiler", "Profiler",
                      uses=(PARAMETERS, LINEAR_FLOPS, CONV_FLOPS, ATTENTION_FLOPS, MODULE_FLOPS,
                            SUMMARIZE))


def _p(tt):
    return importlib.import_module(f"{tt.__name__}.profiling")


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _int(rng, low, high):
    return int(rng.integers(low, high + 1))


def _plain(value):
    """NamedTuples (Timing, Comparison) as plain tuples, for the wire."""
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _seed(tt, rng):
    tt.manual_seed(int(rng.integers(2**31)))


class _Clock:
    """A fake clock: it moves only when a function made by ``work`` runs."""

    def __init__(self):
        self.now = 0

    def __call__(self):
        return self.now

    def work(self, durations, drift=0.0):
        """A function whose k-th call takes ``durations[k]`` (+ ``drift`` x the clock)."""
        it = iter(durations)

        def fn():
            self.now += int(next(it)) + int(drift * self.now)
        return fn


class _Ticks:
    """A fake clock that advances by one at every reading."""

    def __init__(self, start):
        self.now = start

    def __call__(self):
        self.now += 1
        return self.now


class _Like:
    """A stand-in layer with PyTorch's attribute names (dispatch is by attribute)."""

    def __init__(self, **attrs):
        self.__dict__.update(attrs)


def _mlp(tt, rng, n_layers=3):
    nn = tt.nn
    sizes = [_int(rng, 2, 9) for _ in range(n_layers + 1)]
    layers = []
    for i in range(n_layers):
        layers.append(nn.Linear(sizes[i], sizes[i + 1], bias=bool(rng.random() < 0.7)))
        if i < n_layers - 1:
            layers.append(nn.ReLU() if rng.random() < 0.5 else nn.Tanh())
    return nn.Sequential(*layers), sizes


# ----------------------------------------------------------------------------- parameters (7)
@case(unit=PARAMETERS, points=4,
      hint="parameters_by_module: count each module's own _parameters in named_modules() order, "
           "skip None and parameters already counted (shared weights), and list only modules that "
           "own at least one parameter.",
      stated={
          "parameters_by_module": (
              "How many parameters each module owns directly, by dotted name (shared ones once).",
              "``{module_name: count}`` in ``named_modules()`` order, only for modules that own at least one parameter",
              "skip ``None`` and parameters already in ``seen``",
              "``_parameters`` holds only a module's *own* parameters",
          ),
      })
def parameters_by_module_counts(tt, rng):
    P, nn = _p(tt), tt.nn
    _seed(tt, rng)
    mlp, _ = _mlp(tt, rng, 3)
    nested = nn.Sequential(nn.Linear(_int(rng, 2, 6), 4), nn.Sequential(nn.Dropout(0.1),
                                                                       nn.Linear(4, 4)))
    e, v = 4 * _int(rng, 1, 3), _int(rng, 5, 20)
    emb = nn.Sequential(nn.Embedding(v, e), nn.MultiheadAttention(e, 2, bias=bool(rng.random() <
                                                                                   0.5)))
    tied = nn.Sequential(nn.Linear(5, 5), nn.ReLU(), nn.Linear(5, 5, bias=False),
                         nn.Linear(5, 5))
    tied[2].weight = tied[0].weight
    tied[3].bias = tied[0].bias
    single = nn.Sequential(nn.Linear(1, 1, bias=False), nn.ReLU(), nn.Linear(1, _int(rng, 2, 9)))
    return [P.parameters_by_module(m) for m in (mlp, nested, emb, tied, single)]


@case(unit=MEMORY, points=3,
      hint="training_memory: parameters = nbytes of every parameter once; gradients and optimizer "
           "state count only parameters with requires_grad; state = OPTIMIZER_STATE [name] x the "
           "trainable bytes; unknown names raise ValueError.",
      stated={
          "training_memory": (
              '``{"parameters", "gradients", "optimizer", "activations", "total"}`` in bytes.',
              "ValueError: an unknown optimizer name",
              "``parameters`` = the sum of ``p.data.nbytes`` over ``model.parameters()`` (each parameter once); ``trainable`` = the same over those with ``p.requires_grad``.",
              "``gradients = trainable``; ``optimizer = OPTIMIZER_STATE[name] * trainable``.",
              "Return the dict with ``total`` = the sum of the four.",
              "a float64 parameter takes 8 per element",
          ),
      })
def training_memory_breakdown(tt, rng):
    P, nn = _p(tt), tt.nn
    _seed(tt, rng)
    mlp, _ = _mlp(tt, rng, 2)
    frozen = [p for p in mlp.parameters()][int(rng.integers(0, 2))]
    frozen.requires_grad = False
    wide = nn.Linear(_int(rng, 2, 6), _int(rng, 2, 6))
    wide.weight = nn.Parameter(rng.standard_normal(wide.weight.shape))  # float64 weights
    tied = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3))
    tied[1].weight = tied[0].weight
    act = _int(rng, 0, 10_000)
    out = [P.training_memory(m, name, activation_bytes=act)
           for m in (mlp, wide, tied) for name in ("sgd", "momentum", "adam", "adamw")]
    return out + [P.training_memory(mlp), outcome(P.training_memory, mlp, "rmsprop")]


# ----------------------------------------------------------------------------- FLOP formulas (9)
@case(unit=LINEAR_FLOPS, points=3,
      hint="linear_flops: 2 x rows x in x out for the multiply-adds (rows = product of the "
           "leading dims, 1 for a 1-D input), plus rows x out with a bias.",
      stated={
          "linear_flops": (
              "``2 · rows · in_features · out_features`` (+ ``rows · out_features`` with a bias), where ``rows`` is the product of the leading dimensions (1 for a 1-D input).",
              "bias: whether the layer adds a bias (one FLOP per output element).",
          ),
      })
def linear_flops_formula(tt, rng):
    P = _p(tt)
    shapes = [(_int(rng, 1, 9),), (_int(rng, 1, 9), _int(rng, 1, 9)),
              (_int(rng, 1, 4), _int(rng, 1, 9), _int(rng, 1, 9)),
              (_int(rng, 1, 3), _int(rng, 1, 3), _int(rng, 1, 5), _int(rng, 1, 9))]
    return [[P.linear_flops(s, _int(rng, 1, 12), bias) for s in shapes]
            for bias in (True, False)]


@case(unit=CONV_FLOPS, points=3,
      hint="conv2d_flops: every output element is one dot product of (C_in/groups) x kh x kw "
           "multiply-adds (2 FLOPs each), plus 1 for the bias; kernel_size is an int or a pair.",
      stated={
          "conv2d_flops": (
              "kernel_size: an int or a pair ``(kh, kw)``.",
              "bias: one FLOP per output element for the bias.",
              "groups: each output channel sees ``C_in / groups`` input channels.",
              "``2 · outputs · (C_in // groups) · kh · kw`` (+ ``outputs`` with a bias), where ``outputs = N · C_out · H_out · W_out``.",
          ),
      })
def conv2d_flops_formula(tt, rng):
    P = _p(tt)
    out = []
    for _ in range(4):
        groups = int(rng.choice([1, 2, 4]))
        cin = groups * _int(rng, 1, 4)
        shape = (_int(rng, 1, 4), groups * _int(rng, 1, 4), _int(rng, 1, 9), _int(rng, 1, 9))
        k = _int(rng, 1, 5) if rng.random() < 0.5 else (_int(rng, 1, 5), _int(rng, 1, 5))
        out.append([P.conv2d_flops(shape, cin, k), P.conv2d_flops(shape, cin, k, bias=False),
                    P.conv2d_flops(shape, cin, k, True, groups)])
    return out


@case(unit=ATTENTION_FLOPS, points=3,
      hint="attention_flops: 2 x b x L x S x E for Q K^T plus 2 x b x L x S x Ev for P V, where b "
           "is the product of the batch shapes broadcast together (a shared key still costs one "
           "product per query batch).",
      stated={
          "attention_flops": (
              "the leading dims broadcast as in ``matmul``.",
              "``2·b·L·S·E`` (scores) + ``2·b·L·S·Ev`` (weighted values), ``b`` the product of the broadcast batch shape.",
              "a key shared by every batch element (fewer batch dims) still costs one product per query batch",
          ),
      })
def attention_flops_formula(tt, rng):
    P = _p(tt)
    out = []
    for _ in range(4):
        length, source = _int(rng, 1, 9), _int(rng, 1, 9)
        e, ev = _int(rng, 1, 9), _int(rng, 1, 9)
        b1, b2 = _int(rng, 1, 4), _int(rng, 1, 4)
        out.append([P.attention_flops((b1, b2, length, e), (b1, b2, source, e),
                                      (b1, b2, source, ev)),
                    P.attention_flops((b1, b2, length, e), (source, e), (b1, 1, source, ev)),
                    P.attention_flops((length, e), (b2, source, e), (source, ev))])
    return out


# ----------------------------------------------------------------------------- dispatch (7)
@case(unit=MODULE_FLOPS, points=4,
      hint="module_flops: dispatch in the docstring's order: Linear, MultiheadAttention, conv "
           "(in_channels + kernel_size, from the output shape), pooling (kh x kw per output), "
           "normalisation (5 + weight + bias per element), the ELEMENTWISE_FLOPS table, "
           "positional encodings (1 per element), else 0.",
      stated={
          "module_flops": (
              "or 0 for layers that only move data and for containers (``Sequential``, your models)",
              "APPROACH (first match wins; ``out = _first_tensor(output)``):",
              "1. ``Linear``: ``linear_flops(args[0].shape, module.out_features, module.bias is not None)``.",
              '3. A layer with ``in_channels`` and ``kernel_size`` (``Conv2d``): ``conv2d_flops(out.shape, module.in_channels, module.kernel_size, module.bias is not None, getattr(module, "groups", 1))``.',
              "4. A layer with ``kernel_size`` only (pooling): ``kh·kw`` per output element.",
              '5. A layer with ``normalized_shape`` or ``num_features`` (``LayerNorm``, ``BatchNorm2d``): ``5 + (weight is not None) + (bias is not None)`` per element (use ``getattr(module, "weight", None)``).',
              "6. ``type(module)`` in ``ELEMENTWISE_FLOPS``: that many per element of ``out``.",
              "7. A positional encoding (``SinusoidalPositionalEncoding``, ``LearnedPositionalEmbedding``): 1 per element of ``out``.",
              "8. Anything else: 0 — and so is, from step 3 on, a layer whose ``output`` holds no tensor (``out is None``).",
          ),
      })
def module_flops_dispatch(tt, rng):
    P, nn = _p(tt), tt.nn
    _seed(tt, rng)
    n, c = _int(rng, 1, 4), _int(rng, 2, 7)
    x = tt.Tensor(_f32(rng, n, _int(rng, 1, 5), c))
    lin = nn.Linear(c, _int(rng, 1, 6), bias=bool(rng.random() < 0.5))
    out = [P.module_flops(lin, (x,), lin(x))]
    for act in (nn.ReLU(), nn.Sigmoid(), nn.Tanh(), nn.GELU(), nn.Softmax(dim=-1),
                nn.LogSoftmax(dim=-1), nn.Dropout(0.2), nn.Flatten()):
        out.append(P.module_flops(act, (x,), x))
    y = tt.Tensor(_f32(rng, n, _int(rng, 1, 4), _int(rng, 1, 6), _int(rng, 1, 6)))
    k = _int(rng, 1, 3)
    conv = _Like(in_channels=_int(rng, 1, 5), kernel_size=(k, k + 1), bias=None,
                 weight=object())
    conv_g = _Like(in_channels=4, kernel_size=k, bias=object(), groups=2)
    pool = _Like(kernel_size=_int(rng, 1, 4), stride=2)
    norm = _Like(normalized_shape=(c,), weight=object(), bias=None)
    affine = _Like(num_features=c, weight=object(), bias=object())
    bare = _Like(num_features=c, weight=None, bias=None)
    out += [P.module_flops(m, (y,), y) for m in (conv, conv_g, pool, norm, affine, bare)]
    out.append(P.module_flops(nn.ReLU(), (x,), None))  # no tensor output: 0
    emb = importlib.import_module(f"{tt.__name__}.embeddings")
    learned = emb.LearnedPositionalEmbedding(16, c)
    sinus = emb.SinusoidalPositionalEncoding(c, 16)
    out += [P.module_flops(learned, (x,), learned(x)), P.module_flops(sinus, (x,), sinus(x)),
            P.module_flops(nn.Embedding(5, c), (x,), x),
            P.module_flops(nn.Sequential(lin), (x,), lin(x))]
    return out


@case(unit=MODULE_FLOPS, points=3,
      hint="module_flops: multiheadAttention itself: the three input projections, attention per "
           "head (b = N x heads, head_dim = E / heads) and a softmax of 5 per score; out_proj is "
           "a child Linear with its own row. Shapes follow batch_first.",
      stated={
          "module_flops": "2. ``MultiheadAttention``: ``multihead_attention_flops(module, args[0].shape, args[1].shape)``.",
          "multihead_attention_flops": (
              "FLOPs of ``MultiheadAttention`` itself: input projections, attention, softmax (provided).",
              "``out_proj`` is a child ``Linear``, counted on its own row.",
          ),
          "attention_flops": "``2·b·L·S·E`` (scores) + ``2·b·L·S·Ev`` (weighted values), ``b`` the product of the broadcast batch shape.",
      })
def module_flops_attention(tt, rng):
    P, nn = _p(tt), tt.nn
    _seed(tt, rng)
    h = _int(rng, 1, 3)
    e = h * _int(rng, 1, 4)
    n, length = _int(rng, 1, 5), _int(rng, 1, 12)
    source = length + _int(rng, 1, 8)  # cross-attention: keys longer than the queries
    out = []
    for batch_first in (True, False):
        m = nn.MultiheadAttention(e, h, bias=bool(rng.random() < 0.5), batch_first=batch_first)
        q = tt.Tensor(_f32(rng, n, length, e) if batch_first else _f32(rng, length, n, e))
        kv = tt.Tensor(_f32(rng, n, source, e) if batch_first else _f32(rng, source, n, e))
        out.append(P.module_flops(m, (q, q, q), m(q, q, q)))
        out.append(P.module_flops(m, (q, kv, kv), m(q, kv, kv)))
    m = nn.MultiheadAttention(e, h)
    q, kv = tt.Tensor(_f32(rng, length, e)), tt.Tensor(_f32(rng, source, e))
    out.append(P.module_flops(m, (q, kv, kv), m(q, kv, kv)))  # unbatched
    out.append(P.attention_flops((n * h, length, e // h), (n * h, source, e // h),
                                 (n * h, source, e // h)))
    return out


# ----------------------------------------------------------------------------- activation memory (6)
@case(unit=GRAPH_BYTES, points=4,
      hint="graph_activation_bytes: walk the graph from the output; count each storage once "
           "(follow .base: reshapes and transposes are views), add the arrays nodes saved (a "
           "Function's Context, nested contexts), and skip every storage of a leaf.",
      stated={
          "graph_activation_bytes": (
              "The total ``nbytes`` of the distinct storages of every array the graph holds — ``output`` and every non-leaf tensor it reaches, plus ``saved_arrays(node)`` of their nodes — except storages that belong to a leaf (a parameter, an input).",
              "A leaf (``t._node is None``): add ``id(storage(t.data))`` to ``leaf_storage``.",
              "Map each array of ``kept`` to its ``storage(...)``; keep one entry per ``id``, skipping ids in ``leaf_storage``.",
              "its reshape is a view of them (0 more)",
          ),
      })
def graph_activation_bytes_models(tt, rng):
    P, F = _p(tt), tt.nn.functional
    _seed(tt, rng)
    b = _int(rng, 1, 40)
    mlp, sizes = _mlp(tt, rng, 3)
    x = tt.Tensor(_f32(rng, b, sizes[0]))
    a = tt.Tensor(_f32(rng, b, _int(rng, 2, 30)), requires_grad=True)
    chain = ((a * 2.0).transpose(0, 1).reshape(-1) * 3.0).sum()
    t_kv, d = _int(rng, 2, 12), _int(rng, 1, 8)
    q, k, v = (tt.Tensor(_f32(rng, 2, _int(rng, 2, 12) if i == 0 else t_kv, d),
                         requires_grad=True) for i in range(3))
    att = F.scaled_dot_product_attention(q, k, v)
    sm = F.softmax(a, dim=-1)
    d64 = tt.Tensor(rng.standard_normal((b, _int(rng, 1, 20))), requires_grad=True)
    return [P.graph_activation_bytes(mlp(x)), P.graph_activation_bytes(chain),
            P.graph_activation_bytes(att), P.graph_activation_bytes(sm),
            P.graph_activation_bytes((d64 * d64).sum(dim=1)), P.graph_activation_bytes(a)]


@case(unit=GRAPH_BYTES, points=2,
      hint="graph_activation_bytes: A view of a weight (W.T) may be met before the weight itself: "
           "collect the leaves' storages during the walk and exclude them at the end; a shared "
           "intermediate is one storage, however many nodes use it.",
      stated={
          "graph_activation_bytes": (
              "The total ``nbytes`` of the distinct storages of every array the graph holds",
              "except storages that belong to a leaf (a parameter, an input).",
              "keep one entry per ``id``, skipping ids in ``leaf_storage``.",
              "Collect the leaves' storages during the walk and subtract at the end — a view of a weight (``W.T``) can be met before the weight itself.",
          ),
          "storage": "The object that owns an array's memory: follow ``.base`` to the end (provided).",
      })
def graph_activation_bytes_leaf_views(tt, rng):
    P = _p(tt)
    n, m, rows = _int(rng, 2, 200), _int(rng, 2, 200), _int(rng, 1, 40)
    w = tt.Tensor(_f32(rng, m, n), requires_grad=True)
    x = tt.Tensor(_f32(rng, rows, n))
    y = x @ w.T  # W.T (a view of the leaf) is reached first
    h = y * y  # y is used twice
    z = (h + y).sum() + (w.T * 0.5).sum()
    big = tt.Tensor(_f32(rng, 12, n), requires_grad=True)
    lo = _int(rng, 0, 5)
    part = (big[lo:lo + _int(rng, 1, 6)] * 1.0).sum()  # the slice is a view of a leaf
    return [P.graph_activation_bytes(z), P.graph_activation_bytes(part)]


# ----------------------------------------------------------------------------- timing (14)
@case(unit=SUMMARIZE, points=3,
      hint="summarize: median and quartiles with np.percentile (linear interpolation) over the "
           "samples as float64; IQR = Q3 - Q1; samples kept as given (a tuple); no samples raise "
           "ValueError.",
      stated={
          "summarize": (
              "``Timing(samples, median, q1, q3, iqr, min, max)``: ``samples`` as a tuple of the values given, every other field a Python ``float``.",
              "ValueError: no samples.",
              "``q1, median, q3 = np.percentile(np.asarray(samples, dtype=np.float64), [25, 50, 75])`` (linear interpolation).",
              "Return the ``Timing`` with ``iqr = q3 - q1`` and ``float`` of every number.",
          ),
      })
def summarize_statistics(tt, rng):
    P = _p(tt)
    out = []
    for n in (1, 2, _int(rng, 3, 9), _int(rng, 10, 40)):
        samples = [int(s) for s in rng.integers(50, 5000, size=n)]
        out.append(P.summarize(samples))
    return _plain(out) + [_plain(P.summarize([float(s) for s in rng.random(5)])),
                          outcome(P.summarize, [])]


@case(unit=MEASURE, points=4,
      hint="measure: warm-up calls are not timed; each of the repeats is timed alone (timer() "
           "after minus timer() before); return summarize of the repeats; warmup < 0 or repeats < "
           "1 raise ValueError.",
      stated={
          "measure": (
              "Time ``fn()``: ``warmup`` untimed calls, then ``repeats`` timed ones.",
              "timer: the clock; each sample is ``timer()`` after the call minus ``timer()`` before.",
              "``summarize(samples)`` of the ``repeats`` durations, in the timer's unit.",
              "ValueError: ``warmup < 0`` or ``repeats < 1``.",
              "1. Check the arguments. 2. Call ``fn()`` ``warmup`` times.",
          ),
      })
def measure_on_a_fake_clock(tt, rng):
    P = _p(tt)
    out = []
    for warmup, repeats in ((0, 1), (_int(rng, 1, 4), _int(rng, 2, 9)), (3, 20)):
        clock = _Clock()
        durations = [int(d) for d in rng.integers(10, 10_000, size=warmup + repeats)]
        out.append(P.measure(clock.work(durations), warmup=warmup, repeats=repeats,
                             timer=clock))
    calls = []
    P.measure(lambda: calls.append(1), warmup=_int(rng, 0, 3), repeats=_int(rng, 1, 4))
    out = _plain(out) + [len(calls)]
    early: list[int] = []  # a refused call runs nothing, not even its warm-up
    out += [outcome(P.measure, lambda: None, warmup=-1),
            outcome(P.measure, lambda: early.append(1), warmup=_int(rng, 1, 3), repeats=0),
            len(early)]
    return out


@case(unit=MEDIAN_CI, points=3,
      hint="median_ci: sort the values; k is the largest number <= n // 2 with 2 x P(Binomial(n, "
           "1/2) <= k - 1) <= 1 - confidence; the interval is (v_k, v_(n-k+1)) 1-based, or (-inf, "
           "inf) when no k qualifies.",
      stated={
          "median_ci": (
              "``(v_k, v_{n-k+1})`` of the sorted values (1-based), for the largest ``k <= n // 2`` with ``2 · P(X <= k - 1) <= 1 - confidence``, ``X ~ Binomial(n, 1/2)``; ``(-inf, inf)`` when even ``k = 1`` does not qualify. Python floats.",
              "ValueError: no values, or ``confidence`` outside (0, 1).",
          ),
      })
def median_ci_order_statistics(tt, rng):
    P = _p(tt)
    out = []
    for n in (1, 5, 6, _int(rng, 7, 15), _int(rng, 16, 40), _int(rng, 41, 200)):
        values = (rng.standard_normal(n) * 3 + 10).tolist()
        out.append([P.median_ci(values, c) for c in (0.8, 0.9, 0.95, 0.99)])
    values = rng.random(_int(rng, 6, 12)).tolist()
    out.append(P.median_ci(values))
    # n = 4 at confidence 0.875: 2 P(B <= 0) = 0.125 = 1 - confidence exactly, so k = 1
    out.append(P.median_ci(rng.standard_normal(4).tolist(), 0.875))
    return out + [outcome(P.median_ci, []), outcome(P.median_ci, values, 1.0),
                  outcome(P.median_ci, values, 0.0)]


@case(unit=COMPARE, points=4,
      hint="compare: warm up with pairs, then each repeat times fn_a and then fn_b (in that "
           "order: the clock drifts); ratios a_i / b_i, their median, median_ci of the ratios, "
           "and summarize of each side.",
      stated={
          "compare": (
              "warmup: untimed pairs first (``fn_a()`` then ``fn_b()``).",
              "``Comparison(ratios, ratio, low, high, a, b)``: ``ratios[i] = a_i / b_i`` for pair ``i``; ``ratio`` their median (a float); ``(low, high) = median_ci(ratios, confidence)``; ``a`` and ``b`` the ``summarize`` of each version's samples.",
              "ValueError: ``warmup < 0`` or ``repeats < 1``.",
              "1. Check the arguments; ``warmup`` times: ``fn_a(); fn_b()``.",
              "``repeats`` times, **a then b**: time ``fn_a()`` as in ``measure``, then ``fn_b()``",
          ),
      })
def compare_alternates_pairs(tt, rng):
    P = _p(tt)
    out = []
    for warmup, repeats in ((0, _int(rng, 1, 5)), (_int(rng, 1, 3), _int(rng, 6, 20)),
                            (_int(rng, 0, 2), 1)):
        clock = _Clock()
        total = warmup + repeats
        a = clock.work([int(d) for d in rng.integers(500, 3000, size=total)], drift=0.01)
        b = clock.work([int(d) for d in rng.integers(100, 1000, size=total)], drift=0.002)
        out.append(P.compare(a, b, warmup=warmup, repeats=repeats, timer=clock,
                             confidence=float(rng.choice([0.9, 0.95]))))
    early: list[int] = []  # a refused call runs nothing, not even its warm-up
    return _plain(out) + [outcome(P.compare, lambda: early.append(1), lambda: early.append(2),
                                  warmup=_int(rng, 1, 3), repeats=0),
                          len(early), outcome(P.compare, lambda: None, lambda: None, warmup=-2)]


# ----------------------------------------------------------------------------- profiler (7)
@case(unit=PROFILER, points=4, atol=1e-12,
      hint="Profiler: hooks on every module: _before reads the clock once and pushes it, _after "
           "reads it once, pops the start and adds the elapsed time for the pass; on the first "
           "timed pass also FLOPs, calls and output shapes.",
      stated={
          "Profiler._before": (
              "``self.starts.setdefault(id(module), []).append(self.timer())``",
              "read the clock exactly once, and last",
          ),
          "Profiler._after": (
              "``end = self.timer()`` first; ``name = self.names[id(module)]``; ``elapsed = end - self.starts[id(module)].pop()``.",
              "``self.current[name] = self.current.get(name, 0) + elapsed``.",
              "If ``self.recording``: add ``module_flops(module, args, output)`` to ``self.flops[name]`` and 1 to ``self.calls[name]`` (both start at 0), and set ``self.shapes[name] = tuple(_first_tensor(output).shape)`` (when it is not None).",
          ),
          "Profiler.profile": (
              "repeats: timed passes (1 or more); the first also records FLOPs and shapes.",
              "for every ``m`` in ``self.model.modules()``: append ``m.register_forward_pre_hook(self._before)`` and ``m.register_forward_hook(self._after)`` to ``handles``.",
              "then for each timed pass ``r``: ``self.current = {}``, ``self.recording = (r == 0)``, run the model, and append each ``self.current[name]`` to ``self.times.setdefault(name, [])``.",
              "``finally:`` call ``h.remove()`` for every handle",
          ),
          "Profiler.rows": "One dict per module that ran, in ``named_modules()`` order.",
      })
def profiler_sequential_rows(tt, rng):
    P = _p(tt)
    _seed(tt, rng)
    model, sizes = _mlp(tt, rng, _int(rng, 2, 4))
    x = tt.Tensor(_f32(rng, _int(rng, 1, 5), sizes[0]))
    repeats = _int(rng, 2, 4)
    prof = P.Profiler(model, timer=_Ticks(_int(rng, 0, 100))).profile(
        x, warmup=_int(rng, 0, 2), repeats=repeats)
    rows = [{k: r[k] for k in ("name", "calls", "output_shape", "params", "params_total",
                               "flops", "flops_total", "time_ms", "self_ms")}
            for r in prof.rows()]
    hooks = [bool(m.__dict__.get("_forward_hooks") or m.__dict__.get("_forward_pre_hooks"))
             for m in model.modules()]
    once = P.Profiler(model, timer=_Ticks(_int(rng, 0, 100))).profile(x, repeats=1)
    once_rows = [{k: r[k] for k in ("name", "calls", "output_shape", "flops")}
                 for r in once.rows()]
    return [rows, {k: list(v) for k, v in prof.times.items()}, hooks, prof.to_dict()["total"],
            once_rows]


@case(unit=PROFILER, points=3, atol=1e-12,
      hint="Profiler: run warmup untimed passes and repeats timed ones under no_grad; a layer "
           "called twice per pass adds both calls; remove every hook in a finally block, even "
           "when the model raises; repeats < 1 raises ValueError.",
      stated={
          "Profiler.profile": (
              "ValueError: ``repeats < 1``.",
              "``with no_grad():`` run ``self.model(*inputs)`` ``warmup`` times",
              "``finally:`` call ``h.remove()`` for every handle and set ``self.recording = False`` — even when the model raises, it must come back without hooks.",
              "warm-up passes also run the hooks (they fill ``self.current``); resetting ``self.current`` before every timed pass keeps them out of the times.",
          ),
          "Profiler._after": "a module called twice in one pass (a shared layer) adds both calls' time and FLOPs: accumulate, do not overwrite.",
      })
def profiler_shared_layers_and_errors(tt, rng):
    P, nn = _p(tt), tt.nn
    _seed(tt, rng)
    c = _int(rng, 2, 6)

    class Twice(nn.Module):  # type: ignore[name-defined]  # base: the package under test
        def __init__(self, fail=False):
            super().__init__()
            self.lin = nn.Linear(c, c)
            self.act = nn.ReLU()
            self.passes = 0
            self.fail = fail
            self.grad_seen = []

        def forward(self, x):
            self.passes += 1
            self.grad_seen.append(tt.is_grad_enabled())
            y = self.act(self.lin(x))
            if self.fail:
                raise ValueError("broken model")
            return self.lin(y)

    model = Twice()
    x = tt.Tensor(_f32(rng, _int(rng, 1, 4), c))
    warmup, repeats = _int(rng, 0, 3), _int(rng, 2, 3)
    prof = P.Profiler(model, timer=_Ticks(0)).profile(x, warmup=warmup, repeats=repeats)
    rows = [(r["name"], r["calls"], r["flops"], r["time_ms"]) for r in prof.rows()]
    broken = Twice(fail=True)
    failed = outcome(P.Profiler(broken).profile, x)
    left = [bool(m.__dict__.get("_forward_hooks") or m.__dict__.get("_forward_pre_hooks"))
            for m in (*model.modules(), *broken.modules())]
    return [rows, {k: list(v) for k, v in prof.times.items()}, model.passes,
            any(model.grad_seen), failed, left,
            outcome(P.Profiler(model).profile, x, repeats=0), model(x).numpy()]
