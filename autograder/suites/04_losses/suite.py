"""Hidden suite · module 04 (losses). Cases are probes; the trusted parent compares.

Each case returns plain data computed with the package under test ``tt``; the expected value
is the same case run against tinytorch_ref. Points sum to module 04's ``points`` (50).
"""

from __future__ import annotations

import importlib
import warnings

import numpy as np

from autograder.suite import Suite, outcome

suite = Suite(module="04_losses", version="2027.2")
case = suite.case
REDUCE = suite.unit("_reduce", "_reduce")
MSE = suite.unit("mse_loss", "mse_loss", uses=(REDUCE,))
NLL = suite.unit("nll_loss", "nll_loss", uses=(REDUCE,))
CROSS_ENTROPY = suite.unit("cross_entropy", "cross_entropy", uses=(REDUCE, NLL))
BCE = suite.unit("binary_cross_entropy", "_BCEFn", uses=(REDUCE,))
BCE_LOGITS = suite.unit("binary_cross_entropy_with_logits", "_BCEWithLogitsFn", uses=(REDUCE, BCE))


def _f32(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)


# ----------------------------------------------------------------------------- MSE (8)
_BAD_REDUCTIONS = ["avg", "batchmean", "elementwise_mean", "Mean", "total"]


@case(unit=MSE, points=4,
      hint="mse_loss: mse = (input - target)^2, then mean / sum / none (_reduce); an unknown "
           "reduction raises ValueError when the loss is computed (modules check it when called, "
           "as in PyTorch).",
      stated={'mse_loss': ('Mean squared error ``(input - target)²``, reduced.',
                           '``diff = input - target``; return ``_reduce(diff * diff, reduction)``.',
                           'An unknown ``reduction`` needs no check here: ``_reduce`` raises.'),
              '_reduce': 'ValueError: any other ``reduction``',
              'MSELoss': "Mean squared error as a module: ``MSELoss(reduction='mean')(input, target)``.",
              'test:test_mse_reductions': 'the loss stays float32'})
def mse_all_reductions(tt, rng):
    F = tt.nn.functional
    a, b = tt.Tensor(_f32(rng, 4, 3)), tt.Tensor(_f32(rng, 4, 3))
    bad = _BAD_REDUCTIONS[int(rng.integers(len(_BAD_REDUCTIONS)))]
    out = [F.mse_loss(a, b).numpy(), F.mse_loss(a, b, reduction="sum").numpy(),
           F.mse_loss(a, b, reduction="none").numpy(),
           tt.nn.MSELoss(reduction="sum")(a, b).numpy()]
    return out + [str(F.mse_loss(a, b).dtype), tuple(F.mse_loss(a, b).shape),
                  outcome(F.mse_loss, a, b, reduction=bad),
                  outcome(tt.nn.MSELoss(reduction=bad), a, b)]


@case(unit=REDUCE, points=2,
      hint="_reduce: 'mean' -> loss.mean(), 'sum' -> loss.sum(), 'none' -> loss unchanged; any "
           "other reduction raises ValueError.",
      stated={'_reduce': ("``'mean'`` -> ``loss.mean()``; ``'sum'`` -> ``loss.sum()``; ``'none'`` -> ``loss``; anything else -> ``raise ValueError`` with the message above.",)})
def reduction_validated(tt, rng):
    reduce = importlib.import_module(f"{tt.__name__}.losses")._reduce
    pick = [_BAD_REDUCTIONS[int(i)] for i in rng.permutation(len(_BAD_REDUCTIONS))[:3]]
    loss = tt.Tensor(_f32(rng, *(int(d) for d in rng.integers(1, 5, 2))) ** 2)
    # valid reductions next to the invalid ones: the answer differs in every variant
    return [[outcome(reduce, loss, r) for r in pick],
            [reduce(loss, r).numpy() for r in ("mean", "sum", "none")]]


@case(unit=MSE, points=2,
      hint="mse_loss: different shapes broadcast (with a warning) like PyTorch.",
      stated={'mse_loss': ('target: same shape as ``input`` (a different shape broadcasts, with a warning).',
                           'if the shapes differ, ``warnings.warn(...)`` (a ``UserWarning``)')})
def mse_broadcast_warns(tt, rng):
    F = tt.nn.functional
    n, m = (int(d) for d in rng.integers(2, 7, 2))
    pred, target = tt.Tensor(_f32(rng, n, 1)), tt.Tensor(_f32(rng, m))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = F.mse_loss(pred, target, reduction="none")
    return [tuple(out.shape), len(caught) > 0, out.numpy()]


# ----------------------------------------------------------------------------- CE / NLL (26)
@case(unit=CROSS_ENTROPY, points=4,
      hint="cross_entropy = -log_softmax(z, dim=1)[i, y_i], averaged over the batch.",
      stated={'cross_entropy': ("reduction: ``'mean'`` | ``'sum'`` | ``'none'``.",
                                'Check ``reduction``;',
                                '``logp = log_softmax(input, dim=cdim)``',
                                "reduce like ``nll_loss`` (``'mean'``: ``_weighted_mean(losses, denom)``)."),
              'nll_loss': 'Check ``reduction`` is one of ``_REDUCTIONS`` (``ValueError`` otherwise).',
              'CrossEntropyLoss': 'Cross-entropy of logits against class indices (or probabilities).',
              'test:test_cross_entropy_values': "reduction='mean' gives a 0-d tensor"})
def cross_entropy_reductions(tt, rng):
    F = tt.nn.functional
    z = tt.Tensor(_f32(rng, 6, 5, scale=2.0))
    y = tt.Tensor(rng.integers(0, 5, 6))
    loss = F.cross_entropy(z, y)
    return [loss.numpy(), tuple(loss.shape), str(loss.dtype),
            F.cross_entropy(z, y, reduction="sum").numpy(),
            F.cross_entropy(z, y, reduction="none").numpy(),
            tt.nn.CrossEntropyLoss()(z, y).numpy(),
            outcome(F.cross_entropy, z, y,
                    reduction=_BAD_REDUCTIONS[int(rng.integers(len(_BAD_REDUCTIONS)))])]


@case(unit=CROSS_ENTROPY, points=5,
      hint="cross_entropy: use log_softmax (log-sum-exp), never log(softmax): extreme logits stay "
           "finite.",
      stated={'cross_entropy': ('``logp = log_softmax(input, dim=cdim)`` (stable, module 02).',
                                'never compute ``softmax(...).log()``: a confident wrong prediction gives ``-inf``.')})
def cross_entropy_extreme_logits(tt, rng):
    z = np.array([[1000.0, -1000.0, 0.0], [-1000.0, 1000.0, 0.0], [0.0, 0.0, 200.0],
                  [90.0, 95.0, 100.0]]) + rng.uniform(-1.5, 1.5, (4, 3))
    z = z.astype(np.float32)
    y = rng.integers(0, 3, 4)
    return _quiet(tt.nn.functional.cross_entropy, tt.Tensor(z), tt.Tensor(y),
                  reduction="none").numpy()


@case(unit=CROSS_ENTROPY, points=4,
      hint="cross_entropy: the class dim is 1: (N, C, d1) logits with (N, d1) targets; mean over "
           "all.",
      stated={'cross_entropy': ('input: unnormalised logits ``(N, C)``, ``(N, C, d1, ...)`` or ``(C,)``.',
                                "target: int64 class indices of the input's shape without the class dim"),
              'nll_loss': 'target: int64 class indices ``(N,)``, ``(N, d1, ...)`` or 0-d.'})
def cross_entropy_spatial_and_unbatched(tt, rng):
    F = tt.nn.functional
    z = tt.Tensor(_f32(rng, 2, 4, 3))
    y = tt.Tensor(rng.integers(0, 4, (2, 3)))
    single = tt.Tensor(_f32(rng, 5))
    return [F.cross_entropy(z, y).numpy(), F.cross_entropy(z, y, reduction="none").numpy(),
            F.cross_entropy(single, tt.Tensor(np.array(3))).numpy()]


@case(unit=CROSS_ENTROPY, points=2,
      hint="cross_entropy: _picked_loss, not logp * coef: a -inf logit elsewhere in the row must "
           "not turn the loss into NaN; every target ignored gives a NaN mean (_weighted_mean).",
      stated={'cross_entropy': ('``losses = _picked_loss(logp, coef, cdim)``',
                                'ignore_index: int = -100'),
              '_picked_loss': 'ignores ``logp`` where ``coef`` is 0 (even ``-inf`` or NaN there)',
              'nll_loss': "ignore_index: targets equal to it contribute nothing (and are not counted in 'mean').",
              '_weighted_mean': 'When every target is ignored (``denom == 0``) PyTorch returns NaN',
              '_smoothing': 'above 1 is an error'})
def class_losses_pick_like_pytorch(tt, rng):
    F = tt.nn.functional
    z = _f32(rng, 4, 5)
    y = rng.integers(0, 4, 4)
    z[np.arange(4), 4] = -np.inf  # class 4 masked out in every row; never a target
    ignored = tt.Tensor(np.full(3, -100))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return [F.cross_entropy(tt.Tensor(z), tt.Tensor(y), reduction="none").numpy(),
                    F.cross_entropy(tt.Tensor(_f32(rng, 3, 4)), ignored).numpy(),
                    F.cross_entropy(tt.Tensor(_f32(rng, 3, 4)), ignored, reduction="sum").numpy(),
                    outcome(F.cross_entropy, tt.Tensor(z), tt.Tensor(y), label_smoothing=1.5)]


@case(unit=NLL, points=3,
      hint="nll_loss picks -input[i, y_i] from log-probabilities (no softmax inside), with "
           "_picked_loss: a -inf entry of another class must not make NaN.",
      stated={'nll_loss': ('Negative log-likelihood of class indices, given log-probabilities.',
                           '``losses = _picked_loss(input, coef, _class_dim(input))``',
                           '``nll_loss`` does **not** apply (log-)softmax'),
              'NLLLoss': 'Negative log-likelihood of class indices, given log-probabilities.'})
def nll_loss_values(tt, rng):
    F = tt.nn.functional
    logp = F.log_softmax(tt.Tensor(_f32(rng, 5, 4)), dim=1)
    y = tt.Tensor(rng.integers(0, 4, 5))
    raw = tt.Tensor(_f32(rng, 5, 4))
    masked = _f32(rng, 4, 5)
    masked[np.arange(4), 4] = -np.inf  # class 4 masked out in every row; never a target
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            picked = F.nll_loss(tt.Tensor(masked), tt.Tensor(rng.integers(0, 4, 4))).numpy()
    return [F.nll_loss(logp, y).numpy(), F.nll_loss(raw, y, reduction="none").numpy(),
            F.nll_loss(raw, y, reduction="sum").numpy(), tt.nn.NLLLoss()(raw, y).numpy(),
            picked]


@case(unit=CROSS_ENTROPY, points=2,
      hint="cross_entropy: uniform logits over C classes cost log(C).",
      stated={'cross_entropy': '``logp = log_softmax(input, dim=cdim)``',
              'test:test_loss_modules': 'uniform logits over 10 classes cost log(10)'})
def cross_entropy_uniform_is_log_c(tt, rng):
    n, c = int(rng.integers(2, 9)), int(rng.integers(2, 200))
    z = tt.Tensor(np.full((n, c), rng.uniform(-5.0, 5.0), dtype=np.float32))
    loss = tt.nn.functional.cross_entropy(z, tt.Tensor(rng.integers(0, c, n)))
    return [loss.numpy(), z.numpy()[0, 0]]  # the logit level, so the answer is the variant's


@case(unit=CROSS_ENTROPY, points=3,
      hint="cross_entropy: label_smoothing eps: target = (1 - eps) one-hot + eps / C.",
      stated={'cross_entropy': 'label_smoothing: ``ε`` in [0, 1]: the target becomes ``(1 - ε)·onehot + ε / C``',
              '_class_coefficients': '``coef`` holds ``(1 - ε)·w[y]`` at each target class, ``ε/C·w[c]`` spread over all classes'})
def cross_entropy_label_smoothing(tt, rng):
    F = tt.nn.functional
    z = tt.Tensor(_f32(rng, 4, 6))
    y = tt.Tensor(rng.integers(0, 6, 4))
    return [F.cross_entropy(z, y, label_smoothing=0.1).numpy(),
            tt.nn.CrossEntropyLoss(label_smoothing=0.2, reduction="none")(z, y).numpy()]


@case(unit=CROSS_ENTROPY, points=3,
      hint="cross_entropy: probability targets (float, same shape as the logits): -(q * "
           "logp).sum(1), with q smoothed as (1 - eps) q + eps / C and each class scaled by its "
           "weight.",
      stated={'cross_entropy': ("**or** float class probabilities of the input's shape.",
                                'Float targets (``target.dtype.kind == "f"``): ``q = target * (1 - ε) + ε / C``',
                                'if ``weight`` is given, multiply ``q`` by it reshaped to broadcast along ``cdim``',
                                'return ``_reduce(-(logp * q).sum(dim=cdim), reduction)``')})
def cross_entropy_probability_targets(tt, rng):
    z = tt.Tensor(_f32(rng, 3, 4))
    q = rng.random((3, 4)).astype(np.float32)
    q /= q.sum(axis=1, keepdims=True)
    f = tt.nn.functional
    w = rng.uniform(0.5, 2.0, (4,)).astype(np.float32)
    return [f.cross_entropy(z, tt.Tensor(q), reduction="none").numpy(),
            f.cross_entropy(z, tt.Tensor(q), label_smoothing=0.2).numpy(),
            f.cross_entropy(z, tt.Tensor(q), weight=tt.Tensor(w), reduction="sum").numpy()]


# ----------------------------------------------------------------------------- BCE (8)
@case(unit=BCE, points=4,
      hint="binary_cross_entropy: -(y log p + (1-y) log(1-p)) with each log clamped at -100.",
      stated={'_BCEFn.forward': ('Per-element ``-(t·max(log p, -100) + (1 - t)·max(log(1 - p), -100))``.',
                                 'clamp the *logs*, not ``p``'),
              'BCELoss': 'Binary cross-entropy on probabilities (logs clamped at -100).',
              'test:test_bce_clamps_log': "reduction='mean' (the default) averages the per-element losses"})
def bce_values_and_clamp(tt, rng):
    F = tt.nn.functional
    p = rng.uniform(0.01, 0.99, (3, 4)).astype(np.float32)
    p[0, 0], p[0, 1], p[1, 0] = 0.0, 1.0, 1.0
    y = (rng.random((3, 4)) > 0.5).astype(np.float32)
    y[0, 0], y[0, 1], y[1, 0] = 1.0, 0.0, 1.0
    P, Y = tt.Tensor(p), tt.Tensor(y)
    return [_quiet(F.binary_cross_entropy, P, Y, reduction="none").numpy(),
            _quiet(F.binary_cross_entropy, P, Y).numpy(),
            _quiet(tt.nn.BCELoss(reduction="sum"), P, Y).numpy()]


@case(unit=BCE, points=2,
      hint="binary_cross_entropy: inputs (and targets) outside [0, 1] are not probabilities: "
           "raise RuntimeError.",
      stated={'binary_cross_entropy': 'RuntimeError: an input or a target is outside [0, 1] (not a probability).'})
def bce_rejects_non_probabilities(tt, rng):
    F = tt.nn.functional
    y = tt.Tensor(np.array([1.0, 0.0], dtype=np.float32))
    q = np.float32(rng.uniform(0.05, 0.95))
    ok = tt.Tensor(np.array([1.0, q], np.float32))
    above = np.float32(1.0 + rng.uniform(0.01, 2.0))
    below = np.float32(-rng.uniform(0.01, 2.0))
    return [outcome(F.binary_cross_entropy, tt.Tensor(np.array([above, q], np.float32)), y),
            outcome(F.binary_cross_entropy, tt.Tensor(np.array([below, q], np.float32)), y),
            F.binary_cross_entropy(ok, y).numpy(),
            outcome(F.binary_cross_entropy, ok, tt.Tensor(np.array([1.0, above], np.float32)))]


@case(unit=BCE, points=2,
      hint="binary_cross_entropy: weight multiplies each element's loss before the reduction.",
      stated={'binary_cross_entropy': "``weight`` (optional, broadcast against the input) multiplies each element's loss before the ``reduction``.",
              '_BCEFn.forward': 'Per-element ``-(t·max(log p, -100) + (1 - t)·max(log(1 - p), -100))``.'})
def bce_with_weights(tt, rng):
    p = tt.Tensor(rng.uniform(0.05, 0.95, (4, 3)).astype(np.float32))
    y = tt.Tensor((rng.random((4, 3)) > 0.5).astype(np.float32))
    w = tt.Tensor(rng.uniform(0.5, 2.0, (3,)).astype(np.float32))
    return tt.nn.functional.binary_cross_entropy(p, y, weight=w).numpy()


# ----------------------------------------------------------------------------- BCE logits (8)
@case(unit=BCE_LOGITS, points=4,
      hint="binary_cross_entropy_with_logits: (1 - y) z + log(1 + exp(-|z|)) + max(-z, 0): no exp "
           "of a positive number.",
      stated={'_BCEWithLogitsFn.forward': ('Per-element ``(1 - t)·z + (1 + (pos_weight - 1)·t)·softplus(-z)``.',
                                           '``sp = np.log1p(np.exp(-np.abs(z))) + np.maximum(-z, 0)`` — softplus(-z) with every ``exp`` argument <= 0.'),
              'BCEWithLogitsLoss': 'Binary cross-entropy on logits (stable)',
              'test:test_bce_with_logits_is_stable': "with np.errstate(over='raise'):"})
def bce_logits_values_and_extremes(tt, rng):
    F = tt.nn.functional
    z = np.concatenate([_f32(rng, 8, scale=3.0),
                        np.array([1000.0, -1000.0, 100.0, -100.0, 0.0], dtype=np.float32)])
    y = np.concatenate([(rng.random(8) > 0.5).astype(np.float32),
                        np.array([0.0, 1.0, 1.0, 0.0, 1.0], dtype=np.float32)])
    Z, Y = tt.Tensor(z), tt.Tensor(y)
    return [_quiet(F.binary_cross_entropy_with_logits, Z, Y, reduction="none").numpy(),
            _quiet(F.binary_cross_entropy_with_logits, Z, Y).numpy(),
            _quiet(tt.nn.BCEWithLogitsLoss(reduction="sum"), Z, Y).numpy()]


@case(unit=BCE_LOGITS, points=2,
      hint="binary_cross_entropy_with_logits: pos_weight scales the positive term: (1 + (pw - 1) "
           "y) * softplus(-z).",
      stated={'_BCEWithLogitsFn.forward': ('Per-element ``(1 - t)·z + (1 + (pos_weight - 1)·t)·softplus(-z)``.',
                                           '``lw = 1`` if ``pos_weight is None`` else ``1 + (pos_weight - 1) * t``.'),
              'binary_cross_entropy_with_logits': '``pos_weight`` (broadcast along the last dimension) weights the positive class',
              'BCEWithLogitsLoss': '``pos_weight`` weights positives.'})
def bce_logits_pos_weight(tt, rng):
    z = tt.Tensor(_f32(rng, 5, 3, scale=2.0))
    y = tt.Tensor((rng.random((5, 3)) > 0.5).astype(np.float32))
    pw = tt.Tensor(np.array([1.0, 2.0, 5.0], dtype=np.float32))
    return [tt.nn.functional.binary_cross_entropy_with_logits(z, y, pos_weight=pw,
                                                              reduction="none").numpy(),
            tt.nn.BCEWithLogitsLoss(pos_weight=pw)(z, y).numpy()]


@case(unit=BCE_LOGITS, points=2, rtol=1e-4, atol=1e-5,
      hint="BCEWithLogits(z) must equal BCE(sigmoid(z)) where the latter is finite.",
      stated={'binary_cross_entropy_with_logits': 'Binary cross-entropy on logits: ``BCE(sigmoid(input), target)`` computed stably.'})
def bce_logits_matches_bce_of_sigmoid(tt, rng):
    F = tt.nn.functional
    z = tt.Tensor(_f32(rng, 10))
    y = tt.Tensor((rng.random(10) > 0.5).astype(np.float32))
    a = F.binary_cross_entropy_with_logits(z, y, reduction="none").numpy()
    b = F.binary_cross_entropy(F.sigmoid(z), y, reduction="none").numpy()
    # the parent compares both with the reference's values (hence with each other)
    return [a, b]
