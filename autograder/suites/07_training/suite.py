"""Hidden suite · module 07 (training). Cases are probes; the trusted parent compares.

Models in these cases are built from Tensor operations inside the suite (a linear model with
``parameters``/``train``/``eval``/``state_dict``), so the score depends on module 07 and not on
the layers of module 03. Points sum to module 07's ``points`` (50).
"""

from __future__ import annotations

import importlib
import math
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from autograder.suite import Suite, compare_values

suite = Suite(module="07_training", version="2027.3")
case = suite.case
ACCURACY = suite.unit("accuracy", "accuracy")
CLIP = suite.unit("clip_grad_norm_", "clip_grad_norm_")
STEP_LR = suite.unit("StepLR", "StepLR.get_lr")
COSINE = suite.unit("CosineAnnealingLR", "CosineAnnealingLR.get_lr")
LINEAR_LR = suite.unit("LinearLR", "LinearLR.get_lr")
CHECKPOINTS = suite.unit("checkpoints", "save_checkpoint", "load_checkpoint")
EARLY_STOPPING = suite.unit("EarlyStopping", "EarlyStopping.step")
EVALUATE = suite.unit("Trainer.evaluate", "Trainer.evaluate", uses=(ACCURACY,))
TRAIN_EPOCH = suite.unit("Trainer.train_epoch", "Trainer.train_epoch", uses=(CLIP,))


def _mod(tt, name):
    return importlib.import_module(f"{tt.__name__}.{name}")


class _Linear:
    """y = x @ W + b as a tiny Module stand-in (parameters, train/eval, state_dict)."""

    def __init__(self, tt, rng, n_in, n_out):
        self.tt = tt
        self.w = tt.Tensor((rng.standard_normal((n_in, n_out)) * 0.3).astype(np.float32),
                           requires_grad=True)
        self.b = tt.Tensor(np.zeros(n_out, dtype=np.float32), requires_grad=True)
        self.training = True

    def __call__(self, x):
        return x @ self.w + self.b

    def parameters(self):
        return [self.w, self.b]

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def state_dict(self):
        return {"w": self.w.data.copy(), "b": self.b.data.copy()}

    def load_state_dict(self, sd):
        self.w.data[...] = np.asarray(getattr(sd["w"], "data", sd["w"]))
        self.b.data[...] = np.asarray(getattr(sd["b"], "data", sd["b"]))


def _mse(out, target):
    diff = out.reshape(-1) - target
    return (diff * diff).mean()


def _sgd(tt, params, **kw):
    return _mod(tt, "optimizers").SGD(params, **kw)


def _lrs(sched, opt, n):
    out = [list(sched.get_last_lr())]
    for _ in range(n):
        opt.step()
        sched.step()
        out.append([g["lr"] for g in opt.param_groups] + list(sched.get_last_lr()))
    return out


def _dummy(tt, rng, n=1):
    return [tt.Tensor(rng.standard_normal(3).astype(np.float32), requires_grad=True)
            for _ in range(n)]


# ----------------------------------------------------------------------------- metrics (4)
@case(unit=ACCURACY, points=4,
      hint="accuracy: (N, C) scores -> arg-max; (N,) or (N, 1) floats: logits=False -> p > 0.5, "
           "logits=True -> z > 0, neither -> ValueError; ints -> labels.",
      stated={'accuracy': ('Fraction of correct predictions, a Python float in [0, 1].',
                           'scores of shape ``(N, C)`` with ``C > 1`` (logits or probabilities): the prediction is the arg-max over the last dimension',
                           'floats of shape ``(N,)`` or ``(N, 1)``, one score of class 1 per example.',
                           '``logits=True`` (a model trained with ``BCEWithLogitsLoss``: predicted 1 when ``> 0``) or ``logits=False`` (probabilities, after a sigmoid: predicted 1 when ``> 0.5``). Without it, raise ``ValueError``',
                           'integers of shape ``(N,)``: predicted labels.',
                           'unwrap Tensors (``.data``)')})
def accuracy_from_scores_probabilities_labels(tt, rng):
    acc = _mod(tt, "training").accuracy
    n, c, m = int(rng.integers(50, 300)), int(rng.integers(2, 7)), int(rng.integers(50, 300))
    logits = rng.standard_normal((n, c)).astype(np.float32)
    labels = rng.integers(0, c, n)
    probs = rng.uniform(0, 1, (m, 1)).astype(np.float32)
    binary = rng.integers(0, 2, m)
    ints = rng.integers(0, 3, m)
    probs[rng.permutation(m)[: m // 5]] = 0.5  # exactly one half is class 0 (p > 0.5 is 1)
    two = rng.standard_normal((m, 2)).astype(np.float32)  # two classes: scores, not p
    z = rng.standard_normal((m, 1)).astype(np.float32)
    z[rng.permutation(m)[: m // 10]] = 0.0  # a logit of exactly 0 is probability 0.5: class 0
    near = rng.permutation(m)[: m // 5]  # class 1 as logits, class 0 read as probabilities
    z[near] = rng.uniform(0.05, 0.45, (len(near), 1))
    try:
        acc(probs, binary)
        ambiguous = "accepted"
    except ValueError:
        ambiguous = "ValueError"
    return [acc(logits, labels), acc(tt.Tensor(logits), tt.Tensor(labels)),
            acc(probs, binary, logits=False), acc(probs.reshape(-1), binary, logits=False),
            acc(z, binary, logits=True), acc(tt.Tensor(z.reshape(-1)), binary, logits=True),
            acc(ints, rng.integers(0, 3, m)), type(acc(logits, labels)).__name__,
            acc(two, binary), ambiguous]


# ----------------------------------------------------------------------------- clipping (7)
@case(unit=CLIP, points=4, rtol=1e-5,
      hint="clip_grad_norm_: one global norm over all gradients; scale every gradient by "
           "max/(norm+1e-6).",
      stated={'clip_grad_norm_': ('Scale all gradients in place so their global norm is at most ``max_norm``.',
                                  'parameters: a Tensor or an iterable of Tensors; those with ``grad is None`` are skipped.',
                                  "The total norm *before* clipping, as a 0-d Tensor of the gradients' dtype (as PyTorch).",
                                  '``coef = min(max_norm / (total + 1e-6), 1)``',
                                  'Multiply **every** gradient by ``coef`` (write a new ``p.grad`` Tensor, keep its dtype)',
                                  'a generator can only be walked once')})
def clip_grad_norm_scales_every_parameter(tt, rng):
    clip = _mod(tt, "training").clip_grad_norm_
    params = _dummy(tt, rng, 3)
    for p in params:
        p.grad = tt.Tensor(rng.standard_normal(3).astype(np.float32) * 4)
    params[1].grad = None
    total = clip(iter(params), max_norm=1.5)
    (tiny,) = _dummy(tt, rng)  # a norm far below the 1e-6 guard: coef = max / (norm + 1e-6)
    tiny.grad = tt.Tensor((rng.standard_normal(3) * 1e-7).astype(np.float32))
    clip(tiny, max_norm=float(rng.uniform(2e-8, 8e-8)))
    return {"total": float(np.asarray(total.numpy())), "dtype": str(params[0].grad.dtype),
            "grads": [None if p.grad is None else p.grad.numpy().copy() for p in params],
            "tiny": tiny.grad.numpy() * np.float32(1e8)}  # in units of 1e-8: comparable


@case(unit=CLIP, points=2, rtol=1e-5,
      hint="clip_grad_norm_: below max_norm nothing changes; a single Tensor is accepted too.",
      stated={'clip_grad_norm_': ('parameters: a Tensor or an iterable of Tensors',
                                  '``coef = min(max_norm / (total + 1e-6), 1)``',
                                  'The total norm *before* clipping')})
def clip_grad_norm_leaves_small_gradients(tt, rng):
    clip = _mod(tt, "training").clip_grad_norm_
    (p,) = _dummy(tt, rng)
    g = rng.uniform(-0.2, 0.2, 3).astype(np.float32)
    p.grad = tt.Tensor(g.copy())
    total = clip(p, max_norm=float(rng.uniform(1.0, 2.0)))
    return [float(np.asarray(total.numpy())), p.grad.numpy().copy()]


@case(unit=CLIP, points=2, rtol=1e-5,
      hint="clip_grad_norm_: the total is the norm of the per-parameter norms (_vector_norm: inf, "
           "-inf, 0 and p-norms); every gradient is multiplied by min(coef, 1), so a NaN spreads.",
      stated={'clip_grad_norm_': ('norm_type: 2.0 (Euclidean), ``math.inf`` (largest absolute value), or any p-norm.',
                                  '``norms = [_vector_norm(g, norm_type) for g in grads]`` (one per parameter), then ``total = _vector_norm(np.array(norms), norm_type)``.',
                                  'a NaN total must give a NaN ``coef``',
                                  'Multiply **every** gradient by ``coef``'),
              '_vector_norm': '(``inf``: largest ``|x|``; ``-inf``: smallest; ``0``: how many are non-zero)'})
def clip_grad_norm_any_norm_and_nan(tt, rng):
    clip = _mod(tt, "training").clip_grad_norm_
    out = []
    for norm_type in (1.0, 3.0, float("inf"), float("-inf"), 0.0):
        params = _dummy(tt, rng, 2)
        for p in params:
            p.grad = tt.Tensor((rng.standard_normal(3) * 3).astype(np.float32))
        total = clip(params, max_norm=0.5, norm_type=norm_type)
        out.append([float(np.asarray(total.numpy()))] + [p.grad.numpy().copy() for p in params])
    params = _dummy(tt, rng, 2)
    params[0].grad = tt.Tensor(np.array([np.nan, 1.0, 0.0], dtype=np.float32))
    params[1].grad = tt.Tensor(rng.standard_normal(3).astype(np.float32))
    with np.errstate(invalid="ignore"):
        total = clip(params, max_norm=100.0)
    out.append([float(np.asarray(total.numpy()))] + [p.grad.numpy().copy() for p in params])
    return out


# ----------------------------------------------------------------------------- schedulers (14)
@case(unit=STEP_LR, points=4, rtol=1e-6,
      hint="StepLR: lr = base * gamma ** (last_epoch // step_size); the constructor is step 0.",
      stated={'StepLR.get_lr': ('``base · gamma ** (last_epoch // step_size)`` for each base LR in ``self.base_lrs``.',
                                'epochs 0..6 give ``1, 1, 1, 0.1, 0.1, 0.1, 0.01``.'),
              'LRScheduler': "Base class with PyTorch's ``step()``/``get_last_lr()`` contract (provided)."})
def step_lr_schedule(tt, rng):
    sched_mod = _mod(tt, "training")
    opt = _sgd(tt, _dummy(tt, rng), lr=float(rng.uniform(0.1, 1.0)))
    sched = sched_mod.StepLR(opt, step_size=int(rng.integers(2, 5)),
                             gamma=float(rng.uniform(0.2, 0.9)))
    return {"lrs": _lrs(sched, opt, 8), "last_epoch": int(sched.last_epoch)}


@case(unit=COSINE, points=4, rtol=1e-6,
      hint="CosineAnnealingLR: eta_min + (base - eta_min) * (1 + cos(pi * epoch / T_max)) / 2.",
      stated={'CosineAnnealingLR.get_lr': ('``eta_min + (base - eta_min) * (1 + cos(pi * last_epoch / T_max)) / 2`` per group.',
                                           'epochs 0..4 give ``1.0, 0.854, 0.5, 0.146, 0.0``.'),
              'CosineAnnealingLR': '(torch semantics)'})
def cosine_annealing_schedule(tt, rng):
    t = _mod(tt, "training")
    opt = _sgd(tt, _dummy(tt, rng), lr=float(rng.uniform(0.1, 1.0)))
    a = _lrs(t.CosineAnnealingLR(opt, T_max=int(rng.integers(3, 7)),
                                 eta_min=float(rng.uniform(0.0, 0.05))), opt, 7)
    opt2 = _sgd(tt, _dummy(tt, rng), lr=float(rng.uniform(0.5, 2.0)))
    b = _lrs(t.CosineAnnealingLR(opt2, T_max=int(rng.integers(2, 5))), opt2, 3)
    return [a, b]


@case(unit=LINEAR_LR, points=3, rtol=1e-6,
      hint="LinearLR: base * (s + (e - s) * min(epoch, total_iters) / total_iters); with "
           "total_iters=0 there is no ramp: the factor stays start_factor.",
      stated={'LinearLR.get_lr': ('``base * (s + (e - s) * min(last_epoch, total_iters) / total_iters)`` per group.',
                                  '``total_iters = 0`` means no ramp at all: PyTorch then keeps ``start_factor`` (``frac = 0``)'),
              'LinearLR': '(torch semantics and defaults)'})
def linear_warmup_schedule(tt, rng):
    t = _mod(tt, "training")
    opt = _sgd(tt, _dummy(tt, rng), lr=float(rng.uniform(0.05, 0.5)))
    a = _lrs(t.LinearLR(opt, start_factor=float(rng.uniform(0.05, 0.5)),
                        total_iters=int(rng.integers(2, 6))), opt, 6)
    opt2 = _sgd(tt, _dummy(tt, rng), lr=float(rng.uniform(0.5, 2.0)))
    b = _lrs(t.LinearLR(opt2), opt2, 6)
    opt3 = _sgd(tt, _dummy(tt, rng), lr=float(rng.uniform(0.5, 2.0)))
    c = _lrs(t.LinearLR(opt3, start_factor=1.0, end_factor=float(rng.uniform(0.2, 0.8)),
                        total_iters=2), opt3, 3)
    opt4 = _sgd(tt, _dummy(tt, rng), lr=float(rng.uniform(0.5, 2.0)))
    d = _lrs(t.LinearLR(opt4, start_factor=float(rng.uniform(0.1, 0.9)), total_iters=0), opt4, 3)
    return [a, b, c, d]


@case(unit=STEP_LR, points=1, rtol=1e-6,
      hint="StepLR: each param group keeps its own base lr (group['initial_lr']).",
      stated={'StepLR.get_lr': ('for each base LR in ``self.base_lrs``.',
                                'return a *list* with one LR per parameter group'),
              'LRScheduler.get_last_lr': 'one per parameter group.'})
def schedulers_handle_param_groups(tt, rng):
    t = _mod(tt, "training")
    a, b = _dummy(tt, rng, 2)
    opt = _sgd(tt, [{"params": [a]}, {"params": [b], "lr": float(rng.uniform(0.001, 0.05))}],
               lr=float(rng.uniform(0.05, 0.5)))
    return _lrs(t.StepLR(opt, step_size=2, gamma=float(rng.uniform(0.05, 0.5))), opt, 4)


# ----------------------------------------------------------------------------- early stop (5)
@case(unit=EARLY_STOPPING, points=2,
      hint="EarlyStopping: improve = beat best by more than min_delta; stop after `patience` "
           "misses.",
      stated={'EarlyStopping.step': ('Improvement: ``best is None``, or ``value < best - min_delta`` (mode "min")',
                                     'On improvement: ``best = value``, ``counter = 0``. Otherwise ``counter += 1``.',
                                     '``should_stop = counter >= patience``; return it.')})
def early_stopping_min_mode(tt, rng):
    # Binary fractions (multiples of 2**-20, min_delta 2**-7): ``b1 - md`` is exactly md below
    # the best, so "not an improvement" holds however the comparison is written
    # (best - v > md, v < best - md, ...); with 0.01 it depended on rounding.
    md = 2.0 ** -7
    es = _mod(tt, "training").EarlyStopping(patience=3, min_delta=md)

    def u(lo, hi):
        return round(float(rng.uniform(lo, hi)) * 2**20) / 2**20

    first = u(0.8, 1.2)
    b1 = first - u(0.1, 0.3)     # improves
    b2 = b1 - u(0.05, 0.15)      # improves again, after three misses
    values = [first, b1, b1 - md * u(0.2, 0.8), b1 - md,  # below the best, but not by > md
              b1 + u(0.005, 0.02), b2, b2 + u(0.005, 0.02), b2 - md * u(0.2, 0.8),
              b2 + u(0.005, 0.02), b2 - u(0.05, 0.15)]
    return {"stops": [es.step(v) for v in values], "best": es.best, "counter": es.counter}


@case(unit=EARLY_STOPPING, points=2,
      hint="EarlyStopping: mode='max' for accuracies: an improvement is value > best + min_delta.",
      stated={'EarlyStopping.step': ('or ``value > best + min_delta`` (mode "max").',
                                     'On improvement: ``best = value``, ``counter = 0``. Otherwise ``counter += 1``.',
                                     '``should_stop = counter >= patience``; return it.'),
              'EarlyStopping': 'mode: ``"min"`` (losses) or ``"max"`` (accuracies).'})
def early_stopping_max_mode(tt, rng):
    es = _mod(tt, "training").EarlyStopping(patience=2, mode="max")
    shift = float(rng.uniform(-0.2, 0.2))
    values = [v + shift for v in (0.5, 0.6, 0.6, 0.7, 0.65, 0.7)]
    md = float(rng.uniform(0.02, 0.08))
    margin = _mod(tt, "training").EarlyStopping(patience=2, mode="max", min_delta=md)
    start = float(rng.uniform(0.3, 0.6))
    wide = [start, start + md * 0.5, start + md * 2.0, start + md * 2.5, start + md * 2.2]
    return {"stops": [es.step(v) for v in values], "best": es.best,
            "margin": [margin.step(v) for v in wide], "margin_best": margin.best}


# ----------------------------------------------------------------------------- checkpoints (8)
@case(unit=CHECKPOINTS, points=5, rtol=1e-6,
      hint="save_checkpoint/load_checkpoint: save model AND optimizer state (moments, step, lr) "
           "and restore them exactly.",
      stated={'save_checkpoint': 'Save model parameters, optimizer state and the epoch to an ``.npz`` archive.',
              'load_checkpoint': ('Restore what :func:`save_checkpoint` wrote; returns the saved epoch.',
                                  'group values go through ``_from_array`` — then ``optimizer.load_state_dict(...)``.'),
              'test:test_checkpoint_roundtrip_restores_optimizer_state': ("the saved lr 0.1 must replace the new optimizer's 0.5",
                                                                          "Adam's state must be restored")})
def checkpoint_roundtrip_resumes_exactly(tt, rng):
    t = _mod(tt, "training")
    optim = _mod(tt, "optimizers")
    seed = int(rng.integers(1 << 30))
    x = rng.standard_normal((16, 3)).astype(np.float32)
    y = rng.standard_normal(16).astype(np.float32)

    def run(model, opt, steps):
        for _ in range(steps):
            opt.zero_grad()
            _mse(model(tt.Tensor(x)), tt.Tensor(y)).backward()
            opt.step()

    m1 = _Linear(tt, np.random.default_rng(seed), 3, 1)
    o1 = optim.Adam(m1.parameters(), lr=0.05)
    run(m1, o1, 3)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ckpt.npz"
        t.save_checkpoint(path, m1, o1, epoch=7)
        m2 = _Linear(tt, np.random.default_rng(seed + 1), 3, 1)
        o2 = optim.Adam(m2.parameters(), lr=0.9)
        epoch = t.load_checkpoint(path, m2, o2)
    run(m1, o1, 2)
    run(m2, o2, 2)
    return {"epoch": epoch, "lr": o2.param_groups[0]["lr"],
            "betas": list(o2.param_groups[0]["betas"]),
            "w": [m1.w.numpy().copy(), m2.w.numpy().copy()],
            "b": [m1.b.numpy().copy(), m2.b.numpy().copy()]}


def _plain_npz(got, expected):
    """Parent-side check: no object arrays, at least 4 arrays (model and optimizer state),
    and the epoch and restored weights the reference gives."""
    if not (isinstance(got, dict) and set(got) == set(expected)):
        return False, "the result is not the mapping the test builds"
    if not isinstance(got["kinds"], list) or "O" in got["kinds"]:
        return False, "the checkpoint holds object (pickled) arrays"
    if not isinstance(got["n"], int) or got["n"] < 4:
        return False, "the checkpoint holds too few arrays for the model and optimizer state"
    return compare_values([got["epoch"], got["w"], got["bare"]],
                          [expected["epoch"], expected["w"], expected["bare"]])


@case(unit=CHECKPOINTS, points=2, check=_plain_npz,
      hint="save_checkpoint/load_checkpoint: an .npz of plain arrays only: np.load(..., "
           "allow_pickle=False) must read it.",
      stated={'save_checkpoint': ('``"model/<name>"`` for each entry of ``model.state_dict()``; from ``optimizer.state_dict()``: ``"optim/state/<i>/<key>"`` for each state value and ``"optim/group/<j>/<key>"`` for each group hyper-parameter',
                                  'Return the path written (NumPy adds ``.npz`` when missing).',
                                  'refuses anything that would need pickle.'),
              'load_checkpoint': ('``with np.load(path, allow_pickle=False) as data:`` — never allow pickle.',
                                  'Return ``int(data["epoch"])``.')})
def checkpoint_is_plain_npz(tt, rng):
    t = _mod(tt, "training")
    m = _Linear(tt, rng, 2, 2)
    opt = _sgd(tt, m.parameters(), lr=0.1, momentum=0.9)
    for p in m.parameters():
        p.grad = tt.Tensor(np.ones_like(p.data))
    opt.step()
    epoch = int(rng.integers(1, 1000))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.npz"
        t.save_checkpoint(path, m, opt, epoch=epoch)
        with np.load(path, allow_pickle=False) as data:
            kinds = sorted({str(data[k].dtype.kind) for k in data.files})
            n = len(data.files)
        bare = Path(t.save_checkpoint(Path(tmp) / "no_suffix", m, opt, epoch=epoch + 1))
        return {"kinds": kinds, "n": n, "epoch": t.load_checkpoint(path, m, opt),
                "w": m.w.numpy().copy(), "bare": [bare.name, t.load_checkpoint(bare, m, opt)]}


# ----------------------------------------------------------------------------- loop (12)
def _data(rng, n=40):
    x = rng.standard_normal((n, 3)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5], dtype=np.float32) + 0.3).astype(np.float32)
    return x, y


@case(unit=TRAIN_EPOCH, points=5, rtol=1e-5, atol=1e-6,
      hint="Trainer.train_epoch: zero_grad, forward, loss, backward, (clip), step per batch; mean "
           "loss per example.",
      stated={'Trainer.train_epoch': ('One pass over shuffled minibatches; returns the mean loss per example.',
                                      '``batches = list(iterate_minibatches(x, y, batch_size, rng=rng))``.',
                                      'After the group: clip if ``self.max_grad_norm`` is set (use ``self.optimizer.params()``), then ``self.optimizer.step()``.',
                                      'Return ``total / count``.')})
def train_epoch_updates_and_reports_mean_loss(tt, rng):
    t = _mod(tt, "training")
    x, y = _data(rng, 37)
    model = _Linear(tt, rng, 3, 1)
    trainer = t.Trainer(model, _mse, _sgd(tt, model.parameters(), lr=0.05, momentum=0.5))
    losses = [trainer.train_epoch(x, y, batch_size=8, rng=np.random.default_rng(0))
              for _ in range(3)]
    clipped = _Linear(tt, np.random.default_rng(1), 3, 1)
    t2 = t.Trainer(clipped, _mse, _sgd(tt, clipped.parameters(), lr=0.5), max_grad_norm=0.1)
    t2.train_epoch(x, y, batch_size=37, rng=np.random.default_rng(0))
    single = t2.train_epoch(x[:1], y[:1], batch_size=8, rng=np.random.default_rng(0))
    return {"losses": losses, "w": model.w.numpy().copy(), "clipped_w": clipped.w.numpy().copy(),
            "single": single}


@case(unit=EVALUATE, points=3, rtol=1e-5, atol=1e-6,
      hint="evaluate: model.eval(), no_grad(), batches in order; mean loss and accuracy.",
      stated={'Trainer.evaluate': ('Mean loss and accuracy over ``(x, y)`` without training: ``{"loss", "accuracy"}``.',
                                   '``self.model.eval()``; inside ``with no_grad():`` walk the batches in order (``shuffle=False``)',
                                   'divide both by the number of examples.',
                                   'Neither ``zero_grad()`` nor ``step()`` belongs here: evaluating must not change the model.')})
def evaluate_loss_accuracy_without_training(tt, rng):
    t = _mod(tt, "training")
    x = rng.standard_normal((25, 4)).astype(np.float32)
    y = rng.integers(0, 3, 25)
    model = _Linear(tt, rng, 4, 3)

    def nll_like(out, target):
        return (out * out).mean() + float(np.asarray(target.numpy()).mean()) * 0.0

    trainer = t.Trainer(model, nll_like, _sgd(tt, model.parameters(), lr=1.0))
    res = trainer.evaluate(x, y, batch_size=7)
    one = trainer.evaluate(x[:1], y[:1])  # a single example: the mean of one
    # the weights must be unchanged: the parent compares them with the reference's
    return {"loss": res["loss"], "accuracy": res["accuracy"], "w": model.w.numpy().copy(),
            "eval_mode": model.training is False, "no_grads": model.w.grad is None,
            "one": [one["loss"], one["accuracy"]]}


@case(unit=TRAIN_EPOCH, points=3, rtol=1e-4, atol=1e-6,
      hint="Trainer.train_epoch: gradient accumulation: zero_grad once per group of "
           "accumulation_steps batches, weight each loss by len(xb) / (examples in the group), "
           "one step per group.",
      stated={'Trainer.train_epoch': ('each optimizer step uses the gradients of ``k`` consecutive minibatches (a *group*; the last group may be shorter), summed so that the step is exactly the step of one batch made of the whole group.',
                                      '``(loss * (len(xb) / n)).backward()``',
                                      'Call ``zero_grad()`` once per *group*, before its first ``backward()``'),
              'Trainer': 'ValueError: ``accumulation_steps`` is not an int >= 1.'})
def gradient_accumulation_equals_the_big_batch(tt, rng):
    t = _mod(tt, "training")
    x, y = _data(rng, 37)  # batches of 4: nine full ones and a last one of 1 example
    out: dict[str, Any] = {}
    for k in (1, 3, 4):
        model = _Linear(tt, np.random.default_rng(5), 3, 1)
        trainer = t.Trainer(model, _mse, _sgd(tt, model.parameters(), lr=0.1, momentum=0.9),
                            accumulation_steps=k)
        losses = [trainer.train_epoch(x, y, batch_size=4, rng=np.random.default_rng(7))
                  for _ in range(2)]
        out[f"k{k}"] = {"losses": losses, "w": model.w.numpy().copy(),
                        "b": model.b.numpy().copy()}
    big = _Linear(tt, np.random.default_rng(5), 3, 1)
    trainer = t.Trainer(big, _mse, _sgd(tt, big.parameters(), lr=0.1, momentum=0.9))
    for _ in range(2):
        trainer.train_epoch(x, y, batch_size=12, rng=np.random.default_rng(7))
    out["same_as_batch_12"] = bool(np.allclose(big.w.numpy(), out["k3"]["w"], atol=1e-5))
    try:
        t.Trainer(big, _mse, _sgd(tt, big.parameters(), lr=0.1), accumulation_steps=0)
        out["zero_steps"] = "accepted"
    except ValueError:
        out["zero_steps"] = "ValueError"
    return out


@case(unit=TRAIN_EPOCH, points=4, standins=(CLIP, ACCURACY, EVALUATE, STEP_LR, EARLY_STOPPING),
      rtol=1e-5, atol=1e-6,
      hint="Trainer.train_epoch: fit: per epoch train, validate, step the scheduler, check early "
           "stopping.",
      stated={'Trainer.fit': ('History keys: ``train_loss``, ``lr`` (the LR used in each epoch) and, with ``val_data``, ``val_loss`` and ``val_accuracy``.',
                              'Early stopping watches ``val_loss`` (or ``train_loss`` without validation data).'),
              'Trainer': 'scheduler: optional LR scheduler, stepped once per epoch.',
              'Trainer.train_epoch': 'returns the mean loss per example.'})
def fit_history_with_scheduler_and_early_stopping(tt, rng):
    t = _mod(tt, "training")
    x, y = _data(rng, 30)
    model = _Linear(tt, rng, 3, 1)
    opt = _sgd(tt, model.parameters(), lr=0.1)
    trainer = t.Trainer(model, _mse, opt, scheduler=t.StepLR(opt, step_size=2, gamma=0.5),
                        logits=False)
    hist = trainer.fit(x, y, epochs=6, batch_size=10, val_data=(x[:10], y[:10]), seed=3)
    stopper = t.EarlyStopping(patience=1, min_delta=10.0)
    m2 = _Linear(tt, rng, 3, 1)
    short = t.Trainer(m2, _mse, _sgd(tt, m2.parameters(), lr=0.01)).fit(
        x, y, epochs=10, batch_size=10, early_stopping=stopper)
    return {"hist": {k: list(v) for k, v in hist.items()},
            "short_epochs": len(short["train_loss"]), "finite": math.isfinite(hist["train_loss"][-1])}
