"""Hidden suite · module 16 (compression). Cases are probes; the trusted parent compares.

Inputs come from ``rng``: weights of random shapes (normal, so magnitudes never tie, plus
deliberate ties where the tie rule is tested), amounts as fractions that hit ``round``'s
half-to-even cases and as counts, earlier masks for repeated pruning, small MLPs, logits and
probability distributions (some with exact zeros). Probes return masks, layer outputs and
gradients, sparsity reports, shapes, products of low-rank factors (the factors' signs are
arbitrary, their product is not), loss values and gradients, and exception names. Points sum
to module 16's ``points`` (50).
"""

from __future__ import annotations

import importlib

import numpy as np

from autograder.suite import Suite, outcome

suite = Suite(module="16_compression", version="2027.2")
case = suite.case
NPARAMS = suite.unit("nparams_to_prune", "nparams_to_prune")
L1_MASK = suite.unit("l1_unstructured_mask", "l1_unstructured_mask", uses=(NPARAMS,))
MASKED_LINEAR = suite.unit("MaskedLinear", "MaskedLinear.forward")
GLOBAL = suite.unit("global_unstructured_masks", "global_unstructured_masks",
                    uses=(NPARAMS, L1_MASK, MASKED_LINEAR))
SPARSITY = suite.unit("sparsity_report", "sparsity_report", uses=(NPARAMS, L1_MASK, MASKED_LINEAR))
LN_MASK = suite.unit("ln_structured_mask", "ln_structured_mask", uses=(NPARAMS,))
SHRINK = suite.unit("shrink_linear_pair", "shrink_linear_pair", uses=(NPARAMS, LN_MASK))
LOW_RANK = suite.unit("low_rank_linear", "low_rank_linear")
KL_DIV = suite.unit("kl_div", "_KLDivFn", "kl_div")
DISTILLATION = suite.unit("distillation_loss", "distillation_loss", uses=(KL_DIV,))


def _c(tt):
    return importlib.import_module(f"{tt.__name__}.compression")


def _layers(tt):
    return importlib.import_module(f"{tt.__name__}.layers")


def _f32(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _linear(tt, rng, n_in, n_out, bias=True):
    lin = _layers(tt).Linear(n_in, n_out, bias=bias)
    lin.weight.data[...] = _f32(rng, n_out, n_in, scale=0.5)
    if bias:
        lin.bias.data[...] = _f32(rng, n_out, scale=0.1)
    return lin


def _mlp(tt, rng, sizes=(10, 12, 8, 4)):
    act = importlib.import_module(f"{tt.__name__}.activations")
    mods = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:], strict=False)):
        mods.append(_linear(tt, rng, a, b))
        if i < len(sizes) - 2:
            mods.append(act.ReLU())
    return _layers(tt).Sequential(*mods)


# ----------------------------------------------------------------------------- L1 masks (10)
@case(unit=NPARAMS, points=3,
      hint="nparams_to_prune: A float amount is round(amount * n) with Python's round (half to "
           "even); an int is a count; negative, > 1.0 or > n: ValueError; not a number: TypeError.",
      stated={
          "nparams_to_prune": (
              "``amount`` for an int; ``round(amount * n)`` for a float.",
              "TypeError: ``amount`` is not a real number.",
              "ValueError: a negative amount, a float above 1, or an int larger than ``n``.",
              "Python's ``round`` (half to even), as PyTorch.",
              "Otherwise a float: refuse values outside [0, 1]",
          ),
      })
def nparams_to_prune_rules(tt, rng):
    c = _c(tt)
    odd = [int(v) for v in rng.integers(1, 30, 4) * 2 + 1]
    counts = [c.nparams_to_prune(0.5, n) for n in odd]
    counts += [c.nparams_to_prune(float(a), int(n)) for a, n in
               zip(rng.uniform(0, 1, 5), rng.integers(1, 200, 5), strict=True)]
    n = int(rng.integers(5, 50))
    counts += [c.nparams_to_prune(int(rng.integers(0, n + 1)), n), c.nparams_to_prune(0.0, n),
               c.nparams_to_prune(1.0, n), c.nparams_to_prune(n, n), c.nparams_to_prune(0, n)]
    errors = [outcome(c.nparams_to_prune, 1.0 + float(rng.uniform(0.01, 1)), n),
              outcome(c.nparams_to_prune, -int(rng.integers(1, 5)), n),
              outcome(c.nparams_to_prune, n + int(rng.integers(1, 5)), n),
              outcome(c.nparams_to_prune, -0.1, n), outcome(c.nparams_to_prune, "0.5", n)]
    return [counts, errors]


@case(unit=L1_MASK, points=4,
      hint="l1_unstructured_mask: prune the k smallest |t| (k from nparams_to_prune): a 0/1 mask "
           "of t's shape and float dtype.",
      stated={
          "l1_unstructured_mask": (
              "t: the importance scores (usually the weight), any shape; a Tensor or an array.",
              "amount: a fraction or a count of the entries *still kept* (see ``nparams_to_prune``).",
              "A 0/1 mask of ``t``'s shape and float dtype (float32 for float32 weights): zero where ``default_mask`` was zero, and at the ``k`` smallest ``|t|`` among the others.",
              "``mask`` = a float copy of ``default_mask`` (ones if None), contiguous, dtype of ``t`` (float32 for non-float ``t``)",
          ),
      })
def l1_unstructured_mask_values(tt, rng):
    c = _c(tt)
    out = []
    for shape in ((7,), (4, 6), (3, 2, 5)):
        w = _f32(rng, *shape)
        for amount in (float(rng.uniform(0.05, 0.95)), int(rng.integers(0, w.size + 1)), 0.5):
            out.append(c.l1_unstructured_mask(w, amount))
    out.append(c.l1_unstructured_mask(tt.Tensor(_f32(rng, 3, 3)), 0.4))
    out.append(c.l1_unstructured_mask(rng.standard_normal((2, 4)), 3))
    return out


@case(unit=L1_MASK, points=3,
      hint="l1_unstructured_mask: repeated pruning: k counts only the entries the default mask "
           "keeps, old zeros stay zero, the given mask is not modified; ties: lowest index first.",
      stated={
          "l1_unstructured_mask": (
              "default_mask: an earlier 0/1 mask of ``t``'s shape, a Tensor or an array (None: all ones); it is not modified.",
              "zero where ``default_mask`` was zero, and at the ``k`` smallest ``|t|`` among the others.",
              "``k = nparams_to_prune(amount, int(kept.sum()))``.",
              'the first ``k`` of ``np.argsort(scores, kind="stable")`` are pruned',
              '``kind="stable"`` breaks ties by position.',
          ),
      })
def l1_unstructured_mask_repeated_and_ties(tt, rng):
    c = _c(tt)
    w = _f32(rng, 5, 4)
    m1 = c.l1_unstructured_mask(w, float(rng.uniform(0.2, 0.6)))
    keep = m1.copy()
    m2 = c.l1_unstructured_mask(w, 0.5, default_mask=m1)
    m3 = c.l1_unstructured_mask(w, int(rng.integers(1, 4)), default_mask=tt.Tensor(m2))
    level = np.float32(rng.uniform(0.1, 1))
    ties = np.full(9, level, dtype=np.float32) * rng.choice([-1, 1], 9).astype(np.float32)
    ties[int(rng.integers(0, 9))] = 3.0
    return [m1, m2, m3, keep,
            c.l1_unstructured_mask(ties, int(rng.integers(1, 8)))]


# ----------------------------------------------------------------------------- masked layer (5)
@case(unit=MASKED_LINEAR, points=5, rtol=1e-5, atol=1e-6,
      hint="MaskedLinear.forward: x @ (weight * weight_mask).T + bias * bias_mask with Tensor "
           "operations, so pruned entries get zero gradient and weight keeps its values.",
      stated={
          "MaskedLinear.forward": (
              "``x @ (weight * weight_mask).T + bias * bias_mask`` for ``x`` of shape ``(*, in)``.",
              "``w = self.weight * self.weight_mask`` — a Tensor product, recorded by autograd (do not multiply ``.data``).",
              "If there is a bias: ``out = out + self.bias * self.bias_mask``.",
              "the Tensor product gives them a gradient of exactly 0.",
          ),
          "MaskedLinear": "``weight`` keeps the trained values (PyTorch's ``weight_orig``); the effective weight is ``weight * weight_mask``.",
      })
def masked_linear_forward_and_gradients(tt, rng):
    c = _c(tt)
    lin = _linear(tt, rng, 6, 4)
    layer = c.MaskedLinear.from_linear(lin)
    layer.weight_mask.data[...] = (rng.random((4, 6)) < 0.6).astype(np.float32)
    layer.bias_mask.data[...] = (rng.random(4) < 0.5).astype(np.float32)
    x = tt.Tensor(_f32(rng, 3, 6), requires_grad=True)
    y = layer(x)
    upstream = _f32(rng, 3, 4)
    (y * tt.Tensor(upstream)).sum().backward()
    nobias = c.MaskedLinear.from_linear(_linear(tt, rng, 3, 2, bias=False))
    nobias.weight_mask.data[0] = 0
    z = nobias(tt.Tensor(_f32(rng, 2, 5, 3)))
    return [np.asarray(y.data), np.asarray(layer.weight.grad.data), np.asarray(layer.bias.grad.data),
            np.asarray(x.grad.data), np.asarray(layer.weight.data), np.asarray(z.data)]


# ----------------------------------------------------------------------------- global (9)
@case(unit=GLOBAL, points=4,
      hint="global_unstructured_masks: global masks: l1_unstructured_mask of the concatenation of "
           "every tensor, cut back at the cumulative sizes and reshaped; earlier masks "
           "concatenated too.",
      stated={
          "global_unstructured_masks": (
              "the ``amount`` smallest magnitudes among all still-kept entries are pruned, wherever they are.",
              "default_masks: earlier masks, one per tensor (None: all ones).",
              "One mask per tensor, each of its tensor's shape.",
              "``flat = np.concatenate([values.ravel() for each tensor])`` and the same for the default masks (ones where None), in ``flat``'s dtype.",
              "``mask = l1_unstructured_mask(flat, amount, flat_default)``.",
              "reshape each to its tensor's shape and give it its tensor's dtype (float32 for a non-float tensor)",
          ),
      })
def global_unstructured_masks_values(tt, rng):
    c = _c(tt)
    tensors = [_f32(rng, 4, 3, scale=0.2), _f32(rng, 5), _f32(rng, 2, 2, 2, scale=2.0)]
    first = c.global_unstructured_masks(tensors, float(rng.uniform(0.2, 0.7)))
    second = c.global_unstructured_masks(tensors, int(rng.integers(1, 6)), first)
    one = c.global_unstructured_masks([tt.Tensor(_f32(rng, 3, 4))], 0.5)
    return [first, second, one]


@case(unit=GLOBAL, points=2,
      hint="global_unstructured_masks: prune_model: every Linear becomes a MaskedLinear of a "
           "copy; global ranks all weights together, local prunes each layer; biases untouched.",
      stated={
          "prune_model": 'A copy of ``model`` with every Linear/Conv2d turned into a masked layer and ``amount`` of their *weights* pruned by magnitude, across layers (``scope="global"``) or in each layer (``"local"``). Biases are not pruned.',
          "global_unstructured_masks": "the ``amount`` smallest magnitudes among all still-kept entries are pruned, wherever they are.",
      })
def prune_model_global_and_local(tt, rng):
    c = _c(tt)
    model = _mlp(tt, rng)
    x = tt.Tensor(_f32(rng, 5, 10))
    out = []
    for scope in ("global", "local"):
        pruned = c.prune_model(model, float(rng.uniform(0.3, 0.8)), scope=scope)
        masks = [np.asarray(m.weight_mask.data) for m in pruned.modules()
                 if type(m).__name__ == "MaskedLinear"]
        with tt.no_grad():
            out.append([masks, np.asarray(pruned(x).data)])
    out.append([type(m).__name__ for m in model.modules()])
    return out


@case(unit=SPARSITY, points=3,
      hint="sparsity_report: zeros of weight * weight_mask (or of weight) of every Linear and "
           "Conv2d, per layer named as in named_modules(), and globally; sparsity = zeros / total.",
      stated={
          "sparsity_report": (
              "``{\"layers\": {name: {\"zeros\": int, \"total\": int, \"sparsity\": float}}, \"global\": {...}}`` where ``name`` is the layer's name in ``model.named_modules()`` (``\"\"`` for the root) and ``sparsity = zeros / total`` (0.0 when ``total`` is 0).",
              "For each ``(name, m)`` in ``model.named_modules()`` that is a ``Linear`` or a ``Conv2d`` (``isinstance``: the masked layers are subclasses): ``w = m.weight.data``, times ``m.weight_mask.data`` if ``m`` has a ``weight_mask`` Tensor.",
              "``zeros = int(np.count_nonzero(w == 0))``, ``total = int(w.size)``; store the dict.",
              '``"global"``: the sums of ``zeros`` and ``total``, and their ratio.',
              "a plain Linear may have exact zeros too",
              "Biases and BatchNorm scales are not counted",
          ),
      })
def sparsity_report_layers_and_global(tt, rng):
    c = _c(tt)
    model = _mlp(tt, rng)
    model[0].weight.data[0, :3] = 0.0                     # exact zeros in a plain Linear
    pruned = c.prune_model(model, float(rng.uniform(0.2, 0.8)), scope="local")
    pruned[2].weight.data[1] = 0.0                        # zeros under the mask count once
    nested = _layers(tt).Sequential(_layers(tt).Sequential(c.MaskedLinear.from_linear(
        _linear(tt, rng, 3, 2))))
    nested[0][0].weight_mask.data[0, 0] = 0
    spatial = importlib.import_module(f"{tt.__name__}.spatial")
    cnn = _layers(tt).Sequential(spatial.Conv2d(1, 3, 3), spatial.BatchNorm2d(3),
                                 _layers(tt).Flatten(), _linear(tt, rng, 12, 2))
    cnn[0].weight.data[0] = 0.0
    cnn[1].weight.data[1] = 0.0                          # a BatchNorm scale is not a weight here
    n_in, n_out = (int(v) for v in rng.integers(2, 24, size=2))
    drawn = _linear(tt, rng, n_in, n_out)                 # zeros at drawn places and sizes
    drawn.weight.data[rng.random((n_out, n_in)) < rng.uniform(0.1, 0.6)] = 0.0
    return [c.sparsity_report(model), c.sparsity_report(pruned), c.sparsity_report(nested),
            c.sparsity_report(_linear(tt, rng, 2, 2)), c.sparsity_report(cnn),
            c.sparsity_report(drawn)]


# ----------------------------------------------------------------------------- structured (9)
@case(unit=LN_MASK, points=4,
      hint="ln_structured_mask: Ln norm of every slice along dim (over all other dims), keep the "
           "size - k largest (ties: lower index), whole slices; times the default mask.",
      stated={
          "ln_structured_mask": (
              "n: the norm order (1, 2, ``np.inf``, ``-np.inf``, ...).",
              "dim: the dimension whose slices are kept or pruned (negative counts from the end).",
              "default_mask: an earlier mask, multiplied in (None: all ones).",
              "A 0/1 mask of ``t``'s shape and float dtype.",
              "ValueError: ``t`` has fewer than 2 dimensions, or a bad ``amount``.",
              "IndexError: ``dim`` out of range.",
              "``size = t.shape[dim]``; ``k = nparams_to_prune(amount, size)``; ``keep = size - k``.",
              "``default`` = ones (or the given mask) in ``t``'s float dtype. If ``k == 0``, return ``default`` (a copy).",
              '``norms = np.linalg.norm(np.moveaxis(t, dim, 0).reshape(size, -1), ord=n, axis=1)``; ``kept = np.argsort(-norms, kind="stable")[:keep]``.',
              "return ``mask * default``.",
          ),
      })
def ln_structured_mask_values(tt, rng):
    c = _c(tt)
    out = []
    for shape, dim, n in (((6, 4), 0, 2), ((6, 4), 1, 1), ((3, 5, 2), -1, np.inf),
                          ((4, 3, 2, 2), 1, 2), ((5, 3), 0, -np.inf), ((5, 3), -2, 1)):
        w = _f32(rng, *shape)
        out.append(c.ln_structured_mask(w, float(rng.uniform(0.1, 0.9)), n, dim))
    w = _f32(rng, 5, 4)
    default = (rng.random((5, 4)) < 0.7).astype(np.float32)
    out.append(c.ln_structured_mask(w, int(rng.integers(1, 5)), 2, 0, default_mask=default))
    out.append(c.ln_structured_mask(w, 0, 2, 0, default_mask=default))
    ties = np.ones((4, 3), dtype=np.float32)
    out.append(c.ln_structured_mask(ties, 2, 2, 0))
    out.append(c.ln_structured_mask(rng.standard_normal((4, 3)), 0.5, 2, 1))   # float64 stays
    out.append([outcome(c.ln_structured_mask, _f32(rng, 5), 1),
                outcome(c.ln_structured_mask, _f32(rng, 3, 3), 1, 2, 2),
                outcome(c.ln_structured_mask, _f32(rng, 3, 3), 4, 2, 0)])
    return out


@case(unit=SHRINK, points=3,
      hint="shrink_linear_pair: rows `keep` (sorted) of the first weight and bias, columns `keep` "
           "of the next weight, its bias unchanged; new arrays.",
      stated={
          "shrink_linear_pair": (
              "``(Linear(in, len(keep)), Linear(len(keep), out))``, new layers with copied values: rows ``keep`` of ``layer.weight`` and entries ``keep`` of its bias; columns ``keep`` of ``next_layer.weight`` and all of its bias.",
              "ValueError: ``layer.out_features != next_layer.in_features``.",
              "``keep = np.sort(np.asarray(keep, dtype=np.int64))``.",
              "``b1 = layer.bias.data[keep]`` (or None)",
              "``b2 = next_layer.bias.data`` (or None) — copies.",
              "the new layers never share memory with the old ones.",
          ),
      })
def shrink_linear_pair_values(tt, rng):
    c = _c(tt)
    a, b = _linear(tt, rng, 5, 7), _linear(tt, rng, 7, 3)
    keep = rng.permutation(7)[:4]
    a2, b2 = c.shrink_linear_pair(a, b, keep)
    na, nb = _linear(tt, rng, 4, 6, bias=False), _linear(tt, rng, 6, 2, bias=False)
    na2, nb2 = c.shrink_linear_pair(na, nb, [5, 1])
    return [np.asarray(a2.weight.data), np.asarray(a2.bias.data), np.asarray(b2.weight.data),
            np.asarray(b2.bias.data), [a2.in_features, a2.out_features, b2.in_features,
                                       b2.out_features],
            np.asarray(na2.weight.data), np.asarray(nb2.weight.data),
            [na2.bias is None, nb2.bias is None],
            bool(np.shares_memory(a2.weight.data, a.weight.data)),
            outcome(c.shrink_linear_pair, a, _linear(tt, rng, 6, 2), [0])]


@case(unit=SHRINK, points=2,
      hint="shrink_linear_pair: prune_channels: the hidden neurons with the smallest row norms "
           "go, and the next layer loses the matching columns.",
      stated={
          "prune_channels": (
              "A copy of a ``Sequential`` network with ``amount`` of the output neurons / channels of every Linear or Conv2d that feeds another one removed (lowest Lₙ norm of their weight slices first), and the next layer shrunk to match.",
              "Linear pairs go through ``shrink_linear_pair``.",
          ),
          "shrink_linear_pair": "rows ``keep`` of ``layer.weight`` and entries ``keep`` of its bias; columns ``keep`` of ``next_layer.weight`` and all of its bias.",
      })
def prune_channels_shrinks_the_mlp(tt, rng):
    c = _c(tt)
    model = _mlp(tt, rng, (6, 9, 7, 3))
    slim = c.prune_channels(model, float(rng.uniform(0.2, 0.6)))
    x = tt.Tensor(_f32(rng, 4, 6))
    with tt.no_grad():
        y = slim(x)
    shapes = [list(p.shape) for p in slim.parameters()]
    return [shapes, np.asarray(y.data)]


# ----------------------------------------------------------------------------- low rank (5)
@case(unit=LOW_RANK, points=5, rtol=1e-4, atol=1e-5,
      hint="low_rank_linear: SVD of W in float64; first = Σ_r V_rᵀ (r, in) without bias, second = "
           "U_r (out, r) with the bias; the r largest singular values.",
      stated={
          "low_rank_linear": (
              "Replace ``linear`` by ``Linear(in, rank, bias=False)`` then ``Linear(rank, out)``, the best rank-``rank`` approximation of its weight (truncated SVD).",
              "rank: ``1 <= rank <= min(in, out)``.",
              "``Sequential(first, second)`` with ``first.weight = Σ_r V_rᵀ`` ``(r, in)``, no bias, and ``second.weight = U_r`` ``(out, r)`` with a copy of ``linear``'s bias; float32.",
              "ValueError: ``rank`` out of range.",
              "Check the rank; ``u, s, vt = np.linalg.svd(W as float64, full_matrices=False)``.",
          ),
      })
def low_rank_linear_product_and_output(tt, rng):
    c = _c(tt)
    out = []
    for n_in, n_out in ((8, 5), (4, 9)):
        lin = _linear(tt, rng, n_in, n_out)
        for rank in (1, int(rng.integers(2, min(n_in, n_out))), min(n_in, n_out)):
            m = c.low_rank_linear(lin, rank)
            product = np.asarray(m[1].weight.data, np.float64) @ np.asarray(m[0].weight.data,
                                                                           np.float64)
            x = tt.Tensor(_f32(rng, 3, n_in))
            with tt.no_grad():
                y = m(x)
            out.append([product, np.asarray(y.data), list(m[0].weight.shape),
                        list(m[1].weight.shape), m[0].bias is None,
                        str(m[0].weight.data.dtype)])
    lin = _linear(tt, rng, 3, 4)
    out.append([outcome(c.low_rank_linear, lin, 0), outcome(c.low_rank_linear, lin, 4)])
    return out


# ----------------------------------------------------------------------------- distillation (12)
def _dist(rng, n, k, zeros=False):
    p = rng.random((n, k)) + 0.05
    if zeros:
        p[rng.random((n, k)) < 0.3] = 0.0
        p[:, 0] += 0.1
    return p / p.sum(axis=1, keepdims=True)


@case(unit=KL_DIV, points=4,
      hint="kl_div: target * (log target - input), 0 where target is 0 (or exp(target) * (target "
           "- input) with log_target); mean over all elements, batchmean = sum / shape[0].",
      stated={
          "kl_div": (
              'reduction: ``"none"``, ``"mean"`` (over all elements), ``"sum"`` or ``"batchmean"`` (the sum divided by ``input.shape[0]``; just the sum for a 0-d input).',
              "The loss: ``input``'s shape for ``\"none\"``, else a 0-d Tensor.",
              "ValueError: an unknown reduction, or shapes that differ.",
          ),
          "_KLDivFn.forward": (
              "Per-element loss: ``t·(log t − x)`` (0 where ``t == 0``), or with ``log_target`` ``exp(t)·(t − x)``.",
              "Keep the dtype of ``x`` (``.astype(x.dtype, copy=False)``)",
          ),
      })
def kl_div_values_and_reductions(tt, rng):
    c = _c(tt)
    out: list[object] = []
    x = np.log(_dist(rng, 4, 5))
    p = _dist(rng, 4, 5, zeros=True)
    for log_target in (False, True):
        target = np.log(_dist(rng, 4, 5)) if log_target else p
        for reduction in ("none", "sum", "mean", "batchmean"):
            loss = c.kl_div(tt.Tensor(x), tt.Tensor(target), reduction=reduction,
                            log_target=log_target)
            out.append(np.asarray(loss.data))
    x32 = tt.Tensor(np.log(_dist(rng, 3, 4)).astype(np.float32))
    p32 = tt.Tensor(_dist(rng, 3, 4).astype(np.float32))
    out.append(np.asarray(c.kl_div(x32, p32, reduction="batchmean").data))
    scalar = c.kl_div(tt.Tensor(np.float64(-1.2)), tt.Tensor(np.float64(0.4)),
                      reduction="batchmean")
    out.append(np.asarray(scalar.data))
    vector = c.kl_div(tt.Tensor(np.log(_dist(rng, 1, 6)[0])), tt.Tensor(_dist(rng, 1, 6)[0]),
                      reduction="batchmean")
    out.append(np.asarray(vector.data))
    out.append([outcome(c.kl_div, tt.Tensor(x), tt.Tensor(p), reduction="avg"),
                outcome(c.kl_div, tt.Tensor(x), tt.Tensor(p[:, :4]))])
    return out


@case(unit=KL_DIV, points=4, rtol=1e-5, atol=1e-7,
      hint="kl_div gradients: d/dinput = -target (-exp(target) with log_target); d/dtarget = log "
           "target + 1 - input (exp(target)(target - input + 1)).",
      stated={
          "_KLDivFn.backward": (
              "``log_target``: ``x, t, e = ctx.saved``; ``dx = -e``; ``dt = e * (t - x + 1)``.",
              "Otherwise: ``x, t, log_t = ctx.saved``; ``dx = -t``; ``dt = log_t + 1 - x``.",
              "Return ``((grad * dx).astype(x.dtype), (grad * dt).astype(t.dtype))``.",
          ),
          "kl_div": '``"batchmean"``: ``loss.sum() / input.shape[0]`` when ``input.ndim > 0``',
      })
def kl_div_gradients(tt, rng):
    c = _c(tt)
    out: list[object] = []
    for log_target in (False, True):
        x = tt.Tensor(np.log(_dist(rng, 3, 4)), requires_grad=True)
        t_np = np.log(_dist(rng, 3, 4)) if log_target else _dist(rng, 3, 4)
        t = tt.Tensor(t_np, requires_grad=True)
        upstream = rng.standard_normal((3, 4))
        loss = c.kl_div(x, t, reduction="none", log_target=log_target)
        (loss * tt.Tensor(upstream)).sum().backward()
        out.append([np.asarray(x.grad.data), np.asarray(t.grad.data)])
    x = tt.Tensor(np.log(_dist(rng, 2, 3)), requires_grad=True)
    c.kl_div(x, tt.Tensor(_dist(rng, 2, 3, zeros=True)), reduction="batchmean").backward()
    out.append(np.asarray(x.grad.data))
    return out


@case(unit=DISTILLATION, points=4, rtol=1e-5, atol=1e-7,
      hint="distillation_loss = alpha * T^2 * kl_div(log_softmax(s/T), log_softmax(t/T), "
           "batchmean, log_target) + (1 - alpha) * cross_entropy(s, y); teacher detached.",
      stated={
          "distillation_loss": (
              "teacher_logits: ``(N, C)``, a fixed model's outputs (no gradient flows to it).",
              "ValueError: ``temperature <= 0`` or ``alpha`` outside [0, 1].",
              "``log_s = log_softmax(student_logits / T, dim=1)``; ``log_t = log_softmax(teacher_logits.detach() / T, dim=1)``.",
              '``soft = kl_div(log_s, log_t, reduction="batchmean", log_target=True) * (T * T)``.',
              "``hard = cross_entropy(student_logits, target)`` (temperature 1).",
              "Return ``soft * alpha + hard * (1 - alpha)``.",
          ),
      })
def distillation_loss_values_and_gradients(tt, rng):
    c = _c(tt)
    out = []
    for temperature, alpha in ((1.0, 0.5), (float(rng.uniform(2, 6)), float(rng.uniform(0.2, 0.9))),
                               (3.0, 1.0), (2.0, 0.0)):
        s = tt.Tensor(rng.standard_normal((5, 6)), requires_grad=True)
        t = tt.Tensor(rng.standard_normal((5, 6)) * 3, requires_grad=True)
        y = tt.Tensor(rng.integers(0, 6, 5))
        loss = c.distillation_loss(s, t, y, temperature=temperature, alpha=alpha)
        loss.backward()
        out.append([np.asarray(loss.data), np.asarray(s.grad.data), t.grad is None])
    z = tt.Tensor(_f32(rng, 4, 3))
    y = tt.Tensor(rng.integers(0, 3, 4))
    out.append([outcome(c.distillation_loss, z, z, y, 0.0),
                outcome(c.distillation_loss, z, z, y, 2.0, 1.5)])
    return out
