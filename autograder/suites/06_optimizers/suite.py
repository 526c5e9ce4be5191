"""Hidden suite · module 06 (optimizers). Cases are probes; the trusted parent compares.

Cases run optimizer trajectories over several steps with gradients computed in NumPy from the
current parameters (no autograd needed, so a bug in module 05 cannot leak in) and return the
parameters after every step. Points sum to module 06's ``points`` (50).
"""

from __future__ import annotations

import importlib

import numpy as np

from autograder.suite import Suite

suite = Suite(module="06_optimizers", version="2027.2")
case = suite.case
ZERO_GRAD = suite.unit("Optimizer.zero_grad", "Optimizer.zero_grad")
SGD = suite.unit("SGD", "SGD.step")
ADAM = suite.unit("Adam", "Adam.step", "AdamW")
STATE_BYTES = suite.unit("Optimizer.state_bytes", "Optimizer.state_bytes", uses=(SGD, ADAM))


def _optim(tt):
    return importlib.import_module(f"{tt.__name__}.optimizers")


def _params(tt, rng, *shapes):
    return [tt.Tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)
            for s in shapes]


def _trajectory(tt, params, opt, steps=5, skip=()):
    """Gradient of sum(p**4/4 - p) = p**3 - 1 (depends on p), ``steps`` updates."""
    out = []
    for _ in range(steps):
        for i, p in enumerate(params):
            p.grad = None if i in skip else tt.Tensor(p.numpy() ** 3 - 1.0)
        opt.step()
        out.append([p.numpy().copy() for p in params])
    return out


# ----------------------------------------------------------------------------- base (5)
@case(unit=ZERO_GRAD, points=3,
      hint="zero_grad(): None by default; zeros of the same shape with set_to_none=False.",
      stated={'Optimizer.zero_grad': ("``p.grad = None`` when ``set_to_none`` (PyTorch's default: frees the memory); otherwise, if it has a gradient, replace it by zeros of the same shape and dtype.",
                                      'use ``self.params()`` so every group is cleared, not just the first.')})
def zero_grad_none_or_zeros(tt, rng):
    shapes = [tuple(int(d) for d in rng.integers(1, 6, int(rng.integers(1, 4))))
              for _ in range(2)]
    p, q = _params(tt, rng, *shapes)
    p.grad = tt.Tensor(rng.standard_normal(shapes[0]).astype(np.float32))
    q.grad = tt.Tensor(rng.standard_normal(shapes[1]).astype(np.float32))
    opt = _optim(tt).SGD([p, q], lr=0.1)
    opt.zero_grad(set_to_none=False)
    zeros = [p.grad.numpy().copy(), q.grad.numpy().copy()]
    opt.zero_grad()
    # the parameters themselves must stay as they were
    return {"zeros": zeros, "none": [p.grad is None, q.grad is None],
            "values": [p.numpy().copy(), q.numpy().copy()]}


def _in_place_updates(tt, rng, makers):
    out = []
    for make in makers:
        (p,) = _params(tt, rng, (3,))
        buf = p.data
        p.grad = tt.Tensor(rng.standard_normal(3).astype(np.float32))
        kwargs = {"lr": 0.1, "momentum": 0.9} if make == "SGD" else {"lr": 0.1}
        getattr(_optim(tt), make)([p], **kwargs).step()
        # the array object the parameter started with must hold the update (in place): the
        # parent compares its values with the reference's updated parameter
        out.append([str(p.data.dtype), np.array(buf, copy=True)])
    return out


@case(unit=SGD, points=1,
      hint="SGD.step writes each update in place into p.data and keeps its dtype (float32).",
      stated={'SGD.step': ('``p.data -= lr * g`` (in place, so every reference to ``p`` sees it).',
                           '``p.data -= ...`` keeps float32 and writes into the array ``p.data`` already is; do not rebind ``p.data = p.data - ...``')})
def sgd_updates_in_place_keep_float32(tt, rng):
    return _in_place_updates(tt, rng, ("SGD",))


@case(unit=ADAM, points=1,
      hint="Adam.step (and AdamW's) writes each update in place into p.data and keeps its dtype "
           "(float32).",
      stated={'Adam.step': 'Change ``p.data`` in place (``*=``, ``-=``) in steps 3 and 5, as ``SGD.step`` does: the array the parameter holds is updated, never replaced, and keeps its dtype.',
              'AdamW': 'Same update as :class:`Adam`'})
def adam_updates_in_place_keep_float32(tt, rng):
    return _in_place_updates(tt, rng, ("Adam", "AdamW"))


# ----------------------------------------------------------------------------- SGD (22)
@case(unit=SGD, points=4, rtol=1e-5,
      hint="SGD: p <- p - lr * grad, for every parameter with a gradient.",
      stated={'SGD.step': ('One SGD update of every parameter with a gradient',
                           '``p.data -= lr * g``')})
def sgd_plain_trajectory(tt, rng):
    params = _params(tt, rng, (3, 2), (4,))
    return _trajectory(tt, params, _optim(tt).SGD(params, lr=0.05))


@case(unit=SGD, points=3, rtol=1e-5,
      hint="SGD's weight_decay adds wd * p to the gradient before anything else.",
      stated={'SGD.step': 'if ``weight_decay``: ``g = g + wd * p.data``.',
              'SGD': 'weight_decay: L2 penalty added to the gradient.'})
def sgd_weight_decay_trajectory(tt, rng):
    params = _params(tt, rng, (5,))
    strong = _params(tt, rng, (3,))
    return [_trajectory(tt, params, _optim(tt).SGD(params, lr=0.05, weight_decay=0.1)),
            _trajectory(tt, strong, _optim(tt).SGD(strong, lr=0.05, weight_decay=1.0))]


@case(unit=SGD, points=5, rtol=1e-5,
      hint="First step: buffer = a copy of grad (torch); then buf = m*buf + (1-d)*g.",
      stated={'SGD.step': ('if it has no ``"momentum_buffer"``, store ``g.copy()``; else update the buffer in place: ``buf * momentum + (1 - dampening) * g``.',
                           'else ``g = buf``.')})
def sgd_momentum_trajectory(tt, rng):
    params = _params(tt, rng, (2, 3))
    return _trajectory(tt, params, _optim(tt).SGD(params, lr=0.05, momentum=0.9), steps=6)


@case(unit=SGD, points=3, rtol=1e-5,
      hint="Dampening scales the new gradient from the second step on: (1 - dampening).",
      stated={'SGD.step': ('if ``weight_decay``: ``g = g + wd * p.data``.',
                           'if it has no ``"momentum_buffer"``, store ``g.copy()``; else update the buffer in place: ``buf * momentum + (1 - dampening) * g``.')})
def sgd_momentum_dampening_weight_decay(tt, rng):
    params = _params(tt, rng, (4,))
    opt = _optim(tt).SGD(params, lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.01)
    return _trajectory(tt, params, opt, steps=5)


@case(unit=SGD, points=4, rtol=1e-5,
      hint="SGD: Nesterov: g <- g + momentum * buf (look ahead), not g <- buf.",
      stated={'SGD.step': 'Then ``g = g + momentum * buf`` for Nesterov, else ``g = buf``.',
              'SGD': 'nesterov: Nesterov momentum (needs momentum > 0 and dampening 0).'})
def sgd_nesterov_trajectory(tt, rng):
    params = _params(tt, rng, (3,), (2, 2))
    opt = _optim(tt).SGD(params, lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)
    return _trajectory(tt, params, opt, steps=5)


@case(unit=SGD, points=3, rtol=1e-5,
      hint="SGD: skip parameters without .grad; each param group uses its own lr.",
      stated={'SGD.step': 'for each group and each ``p`` in ``group["params"]`` with ``p.grad``:',
              'Optimizer': ('params: an iterable of Tensors, or of dicts ``{"params": [...], **overrides}``.',
                            'defaults: hyper-parameters every group gets unless it overrides them.')})
def sgd_param_groups_and_missing_grads(tt, rng):
    a, b, c = _params(tt, rng, (3,), (3,), (2,))
    opt = _optim(tt).SGD([{"params": [a, b]}, {"params": [c], "lr": 0.5}], lr=0.05,
                         momentum=0.5)
    traj = _trajectory(tt, [a, b, c], opt, steps=3, skip=(1,))
    return {"traj": traj, "lrs": [g["lr"] for g in opt.param_groups],
            "momentum": [g["momentum"] for g in opt.param_groups]}


# ----------------------------------------------------------------------------- Adam (19)
@case(unit=ADAM, points=7, rtol=1e-5, atol=1e-6,
      hint="m, v moving averages; step_size = lr/(1-b1^t); denom = sqrt(v)/sqrt(1-b2^t)+eps.",
      stated={'Adam.step': ('Update the moments (in place): ``m = β₁ m + (1 − β₁) g``, ``v = β₂ v + (1 − β₂) g²``.',
                            '``step_size = lr / (1 − β₁ᵗ)``; ``denom = √v / √(1 − β₂ᵗ) + eps``; ``p.data -= step_size * m / denom``.'),
              'Adam': 'as ``torch.optim.Adam``'})
def adam_trajectory(tt, rng):
    params = _params(tt, rng, (3, 2), (4,))
    big_eps = _params(tt, rng, (4,))
    return [_trajectory(tt, params, _optim(tt).Adam(params, lr=0.05), steps=6),
            _trajectory(tt, big_eps, _optim(tt).Adam(big_eps, lr=0.05, eps=0.5), steps=3)]


@case(unit=ADAM, points=4, rtol=1e-5, atol=1e-6,
      hint="Adam's weight_decay is L2: add wd * p to the gradient (not AdamW's decay).",
      stated={'Adam': '``weight_decay`` is an L2 penalty.',
              'Adam.step': 'otherwise (Adam) ``g = g + wd * p.data``.'})
def adam_weight_decay_is_l2(tt, rng):
    params = _params(tt, rng, (5,))
    opt = _optim(tt).Adam(params, lr=0.02, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)
    strong = _params(tt, rng, (3,))
    opt2 = _optim(tt).Adam(strong, lr=0.02, weight_decay=1.0)
    return [_trajectory(tt, params, opt, steps=5), _trajectory(tt, strong, opt2, steps=3)]


@case(unit=ADAM, points=6, rtol=1e-5, atol=1e-6,
      hint="AdamW: p <- p * (1 - lr * wd) first, then Adam with the raw gradient.",
      stated={'AdamW': ('weights decay as ``p ← p·(1 − lr·wd)`` before the step instead of adding ``wd·p`` to the gradient.',
                        'Default ``weight_decay=1e-2`` as in PyTorch.'),
              'Adam.step': 'if ``self._decoupled`` (AdamW) multiply ``p.data`` by ``1 - lr * wd``'})
def adamw_trajectory(tt, rng):
    params = _params(tt, rng, (2, 3), (3,))
    opt = _optim(tt).AdamW(params, lr=0.05, weight_decay=0.2)
    default = _optim(tt).AdamW(_params(tt, rng, (1,)))
    return {"traj": _trajectory(tt, params, opt, steps=6),
            "default_wd": float(default.param_groups[0]["weight_decay"])}


@case(unit=ADAM, points=2, rtol=1e-5, atol=1e-7,
      hint="Adam's state per parameter: step (int), exp_avg and exp_avg_sq like p.",
      stated={'Adam': 'State per parameter: ``step`` (int), ``exp_avg`` and ``exp_avg_sq`` (arrays like ``p``).',
              'Adam.step': ('``state["step"] += 1``',
                            'update ``exp_avg``/``exp_avg_sq`` in place')})
def adam_state_contents(tt, rng):
    (p,) = _params(tt, rng, (2, 2))
    opt = _optim(tt).Adam([p], lr=0.1)
    _trajectory(tt, [p], opt, steps=3)
    s = opt.state[p]
    return {"step": int(s["step"]), "exp_avg": np.asarray(s["exp_avg"]),
            "exp_avg_sq": np.asarray(s["exp_avg_sq"])}


# ----------------------------------------------------------------------------- memory (4)
@case(unit=STATE_BYTES, points=4,
      hint="state_bytes: total nbytes of the arrays in optimizer.state (0x, 1x, 2x).",
      stated={'Optimizer.state_bytes': ('Bytes of optimizer state: the total ``nbytes`` of every array in ``self.state``.',
                                        'Plain SGD: 0 bytes (no state); SGD with momentum: 4000 bytes (one buffer).',
                                        '``exp_avg`` + ``exp_avg_sq`` = 2 × 4,000 = 8000 bytes.',
                                        'before the first step every optimizer reports 0.')})
def state_bytes_zero_one_two_times_params(tt, rng):
    out = []
    optim = _optim(tt)
    shapes = [tuple(int(d) for d in rng.integers(1, 40, int(rng.integers(1, 3))))
              for _ in range(3)]
    for make in (lambda ps: optim.SGD(ps, lr=0.1),
                 lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
                 lambda ps: optim.Adam(ps), lambda ps: optim.AdamW(ps)):
        params = _params(tt, rng, *shapes)
        opt = make(params)
        before = int(opt.state_bytes())
        _trajectory(tt, params, opt, steps=1)
        out.append([before, int(opt.state_bytes())])
    return [out, shapes]
