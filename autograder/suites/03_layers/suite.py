"""Hidden suite · module 03 (layers). Cases are probes; the trusted parent compares.

Each case returns plain data computed with the package under test ``tt``; the expected value
is the same case run against tinytorch_ref. Points sum to module 03's ``points`` (50).
"""

from __future__ import annotations

import math

import numpy as np

from autograder.suite import Suite, compare_values, outcome

suite = Suite(module="03_layers", version="2027.2")
case = suite.case
LINEAR = suite.unit("Linear", "Linear", "_LinearFn")
DROPOUT = suite.unit("Dropout", "Dropout.forward")
FLATTEN = suite.unit("Flatten", "Flatten.forward")
PARAMETERS = suite.unit("named_parameters", "_ModuleTree.named_parameters",
                        "_ModuleTree.parameters", uses=(LINEAR,))
TRAIN = suite.unit("train", "_ModuleTree.train", uses=(LINEAR, DROPOUT))
ZERO_GRAD = suite.unit("zero_grad", "_ModuleTree.zero_grad", uses=(LINEAR, PARAMETERS))
STATE_DICT = suite.unit("state_dict", "_ModuleTree.state_dict", uses=(LINEAR, PARAMETERS))
LOAD_STATE_DICT = suite.unit("load_state_dict", "_ModuleTree.load_state_dict",
                             uses=(LINEAR, DROPOUT, PARAMETERS, TRAIN, STATE_DICT))
SEQUENTIAL = suite.unit("Sequential", "Sequential.forward", uses=(LINEAR, DROPOUT, TRAIN))


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _mlp(tt):
    nn = tt.nn
    return nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Dropout(0.3), nn.Linear(7, 3))


def _seed(tt, rng):
    """Seed the package's generator from the variant (parameter inits differ per variant)."""
    tt.manual_seed(int(rng.integers(2**31)))


def _dims(rng, n, low=2, high=9):
    return [int(d) for d in rng.integers(low, high, n)]


# ----------------------------------------------------------------------------- Module tree (14)
@case(unit=PARAMETERS, points=4,
      hint="named_parameters walks own parameters, then children, with dotted names.",
      stated={'_ModuleTree.named_parameters': ('Yield ``(dotted_name, parameter)`` for every parameter, each object once.',
                                               'Walk ``self.named_modules(prefix)``',
                                               'skip ``p is None``',
                                               'yield ``(f"{mod_name}.{name}" if mod_name else name, p)``.'),
              '_ModuleTree.parameters': 'Yield every parameter (no names), in the order of ``named_parameters``.',
              'Module': 'any other value, a plain ``Tensor`` included, is an ordinary attribute.',
              'test:test_module_registers_parameters_and_children': "named_parameters should list own parameters first, then children's with dotted names"})
def named_parameters_dotted_order(tt, rng):
    nn = tt.nn
    d, h = _dims(rng, 2)
    bias = bool(rng.integers(2))
    scale = _f32(rng, d)

    class Block(nn.Module):  # type: ignore[name-defined]  # base: the package under test
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(scale)
            self.body = nn.Sequential(nn.Linear(d, h), nn.Tanh(), nn.Linear(h, d, bias=bias))
            self.note = "not a parameter"

    named = list(Block().named_parameters())
    names = [(n, tuple(p.shape)) for n, p in named]
    return [names, [tuple(p.shape) for p in Block().parameters()], named[0][1].numpy()]


@case(unit=PARAMETERS, points=2,
      hint="named_parameters: yield each Parameter object once, even when two layers share it.",
      stated={'_ModuleTree.named_parameters': ('each object once.',
                                               'skip a ``p`` whose ``id`` you have already yielded'),
              '_ModuleTree.parameters': 'so the two can never disagree about order or shared parameters.'})
def shared_parameters_counted_once(tt, rng):
    nn = tt.nn
    d = int(rng.integers(2, 9))
    layers = [nn.Linear(d, d) for _ in range(int(rng.integers(2, 5)))]
    i, j = sorted(int(k) for k in rng.choice(len(layers), 2, replace=False))
    layers[i].weight.data[...] = _f32(rng, d, d)
    layers[j].weight = layers[i].weight
    model = nn.Sequential(*layers)
    return [[n for n, _ in model.named_parameters()], len(list(model.parameters())),
            [p.numpy() for p in model.parameters()][2 * i]]


@case(unit=TRAIN, points=3,
      hint="train(mode) / eval() set .training on every module in the tree; return self.",
      stated={'_ModuleTree.train': ('Set ``training = mode`` on this module and every descendant; return ``self``.',
                                    'for every module ``m`` in ``self.modules()`` (this one included), set ``m.training = bool(mode)``'),
              '_ModuleTree.eval': 'Evaluation mode: ``self.train(False)``.'})
def train_eval_propagate(tt, rng):
    nn = tt.nn
    d, h = _dims(rng, 2)
    kinds = [nn.ReLU, nn.Tanh, lambda: nn.Dropout(float(rng.uniform(0.1, 0.6)))]
    inner = [kinds[int(k)]() for k in rng.integers(0, 3, int(rng.integers(1, 4)))]
    first = nn.Linear(d, h)
    first.weight.data[...] = _f32(rng, h, d)
    model = nn.Sequential(first, *inner, nn.Sequential(nn.Linear(h, d), nn.Dropout(0.2)))
    ret = model.eval()
    after_eval = [bool(m.training) for m in model.modules()]
    model.train()
    after_train = [bool(m.training) for m in model.modules()]
    model.train(False)
    return [ret is model, after_eval, after_train, [bool(m.training) for m in model.modules()],
            [type(m).__name__ for m in model.modules()], model[0].weight.numpy()]


@case(unit=ZERO_GRAD, points=2,
      hint="zero_grad sets p.grad = None (or zeros with set_to_none=False).",
      stated={'_ModuleTree.zero_grad': ("Clear every parameter's gradient (``p.grad = None``, PyTorch's default).",
                                        'With ``set_to_none=False``, set each existing ``p.grad`` to a zero Tensor instead.')})
def zero_grad_clears_every_parameter(tt, rng):
    _seed(tt, rng)
    model = _mlp(tt)
    for p in model.parameters():
        p.grad = tt.Tensor(_f32(rng, *p.shape))
    model.zero_grad(set_to_none=False)
    zeros = [float(np.abs(p.grad.numpy()).sum()) for p in model.parameters()]
    model.zero_grad()
    # the values must stay as they were: only the gradients are cleared
    return [zeros, [p.grad is None for p in model.parameters()],
            [p.numpy() for p in model.parameters()]]


@case(unit=PARAMETERS, points=3,
      hint="named_parameters: parameter is a Tensor with requires_grad=True; __setattr__ "
           "registers it.",
      stated={'Parameter': "A Tensor that is a module's trainable state; ``requires_grad`` defaults to True.",
              'Module': ('Assigning a ``Parameter`` registers it as a parameter and a ``Module`` as a child (in assignment order); any other value, a plain ``Tensor`` included, is an ordinary attribute.',
                         "Module 02's activations are modules too: ``isinstance(ReLU(), Module)``."),
              '_ModuleTree.named_parameters': 'Yield ``(dotted_name, parameter)`` for every parameter'})
def parameter_and_registration(tt, rng):
    nn = tt.nn
    p = nn.Parameter(_f32(rng, 2, 3))

    class M(nn.Module):  # type: ignore[name-defined]  # base: the package under test
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(np.zeros(2, dtype=np.float32))
            self.t = tt.Tensor(np.zeros(2, dtype=np.float32))
            self.child = nn.Linear(2, 1)

    m = M()
    return [isinstance(p, tt.Tensor), bool(p.requires_grad), p.numpy(),
            [n for n, _ in m.named_parameters()], [type(c).__name__ for c in m.children()],
            isinstance(nn.ReLU(), nn.Module)]


# ----------------------------------------------------------------------------- state_dict (9)
@case(unit=STATE_DICT, points=3,
      hint="state_dict maps dotted names to NumPy array copies of every parameter.",
      stated={'_ModuleTree.state_dict': ('Every parameter and persistent buffer as ``{dotted_name: ndarray copy}``.',
                                         'The arrays are copies: changing the model afterwards does not change a saved state.',
                                         'For each ``(name, p)`` in ``self.named_parameters()``: ``out[name] = p.data.copy()``.')})
def state_dict_keys_shapes_copies(tt, rng):
    _seed(tt, rng)
    model = _mlp(tt)
    sd = model.state_dict()
    first = next(iter(model.parameters()))
    before = np.array(sd["0.weight"], copy=True)
    first.data[...] = 7.0
    # a copy keeps the old values after the model changes (the parent compares both arrays)
    return [list(sd), {k: tuple(np.asarray(v).shape) for k, v in sd.items()},
            all(isinstance(v, np.ndarray) for v in sd.values()),
            np.array(sd["0.weight"], copy=True), before]


@case(unit=LOAD_STATE_DICT, points=4,
      hint="load_state_dict copies values in place into the existing Parameters.",
      stated={'_ModuleTree.load_state_dict': ("Copy arrays from ``state_dict`` into this model's parameters, *in place*.",
                                              '``(missing_keys, unexpected_keys)``.',
                                              'Do not assign ``own[k].data = arr`` or a new ``Parameter``')})
def load_state_dict_round_trip(tt, rng):
    _seed(tt, rng)
    src = _mlp(tt)
    _seed(tt, rng)
    dst = _mlp(tt)
    ids = [id(p) for p in dst.parameters()]
    res = dst.load_state_dict(src.state_dict())
    x = tt.Tensor(_f32(rng, 4, 5))
    src.eval()
    dst.eval()
    return [dst(x).numpy(), [id(p) for p in dst.parameters()] == ids,
            list(res[0]), list(res[1])]


@case(unit=LOAD_STATE_DICT, points=2,
      hint="load_state_dict: raise RuntimeError on missing/unexpected keys (strict) and shape "
           "mismatch.",
      stated={'_ModuleTree.load_state_dict': ('RuntimeError: a shape differs (always), or keys differ with ``strict=True``.',
                                              '``missing = [k for k in own if k not in state_dict]``; ``unexpected = [k for k in state_dict if k not in own]``.',
                                              'Return ``_IncompatibleKeys(missing, unexpected)``.',
                                              'For each shared key: check shapes')})
def load_state_dict_errors(tt, rng):
    nn = tt.nn
    fan_in, fan_out = _dims(rng, 2)
    lin = nn.Linear(fan_in, fan_out)
    good = {"weight": _f32(rng, fan_out, fan_in), "bias": _f32(rng, fan_out)}
    missing = {"weight": good["weight"]}
    extra = dict(good, extra=np.zeros(1, dtype=np.float32))
    wrong = {"weight": np.zeros((fan_in, fan_out + 1), dtype=np.float32), "bias": good["bias"]}
    loose = lin.load_state_dict(missing, strict=False)
    return [outcome(lin.load_state_dict, missing), outcome(lin.load_state_dict, extra),
            outcome(lin.load_state_dict, wrong), list(loose[0]), list(loose[1]),
            lin.weight.numpy()]


# ----------------------------------------------------------------------------- Linear (15)
@case(unit=LINEAR, points=3,
      hint="Linear: weight is (out_features, in_features); bias (out_features,); float32.",
      stated={'Linear': ('``weight`` ``(out_features, in_features)``, ``bias`` ``(out_features,)``.',
                         'bias: whether to learn an additive bias (``self.bias`` is None otherwise).'),
              'Linear.__init__': ('store ``in_features`` and ``out_features``.',
                                  '``self.weight = Parameter(rng.uniform(-bound, bound, (out_features, in_features)).astype(np.float32))``.',
                                  'otherwise ``self.register_parameter("bias", None)``.'),
              'Parameter': '``requires_grad`` defaults to True.'})
def linear_parameter_shapes(tt, rng):
    nn = tt.nn
    a = nn.Linear(*_dims(rng, 2, 1, 64))
    b = nn.Linear(*_dims(rng, 2, 1, 64), bias=False)
    return [tuple(a.weight.shape), tuple(a.bias.shape), str(a.weight.dtype), b.bias is None,
            tuple(b.weight.shape),
            [n for n, p in b._parameters.items() if p is not None],
            bool(a.weight.requires_grad),
            int(a.in_features), int(a.out_features)]


@case(unit=LINEAR, points=4,
      hint="Linear: bound = 1/sqrt(in_features); draw weight, then bias, with "
           "default_generator().uniform(-bound, bound, shape).",
      stated={'Linear.__init__': ('``bound = 1 / math.sqrt(in_features)``',
                                  '``rng = default_generator()``.',
                                  '``self.weight = Parameter(rng.uniform(-bound, bound, (out_features, in_features)).astype(np.float32))``.',
                                  'With ``bias``: the same for shape ``(out_features,)``, drawn *after* the weight;')})
def linear_default_init_from_seed(tt, rng):
    _seed(tt, rng)
    lin = tt.nn.Linear(*_dims(rng, 2, 2, 20))
    big = tt.nn.Linear(int(rng.integers(300, 500)), 30)
    return [lin.weight.numpy(), lin.bias.numpy(), float(np.abs(big.weight.numpy()).max()),
            float(np.abs(big.bias.numpy()).max())]


@case(unit=LINEAR, points=4, hint="Linear: y = x @ weight.T + bias.",
      stated={'Linear.forward': ('``x @ weight.T + bias`` for ``x`` of shape ``(*, in_features)``.',
                                 'return ``linear(x, self.weight, self.bias)``'),
              '_LinearFn.forward': 'when ``bias`` is not None, ``out += bias``'})
def linear_forward_2d(tt, rng):
    lin = tt.nn.Linear(4, 3)
    lin.weight.data[...] = _f32(rng, 3, 4)
    lin.bias.data[...] = _f32(rng, 3)
    x = tt.Tensor(_f32(rng, 5, 4))
    out = lin(x)
    return [out.numpy(), str(out.dtype)]


@case(unit=LINEAR, points=2,
      hint="Linear acts on the last dimension of any (*, in_features) input; bias=False adds "
           "nothing.",
      stated={'Linear': 'input ``(*, in_features)`` -> output ``(*, out_features)``;',
              '_LinearFn.forward': ('``(*, in) -> (*, out)``: one matrix product over all rows, then the bias.',
                                    '``rows = x.reshape(-1, x.shape[-1])``',
                                    'when ``bias`` is not None, ``out += bias``')})
def linear_forward_batched_and_no_bias(tt, rng):
    lin = tt.nn.Linear(4, 2, bias=False)
    lin.weight.data[...] = _f32(rng, 2, 4)
    x = tt.Tensor(_f32(rng, 2, 3, 4))
    v = tt.Tensor(_f32(rng, 4))
    return [lin(x).numpy(), lin(v).numpy()]


@case(unit=SEQUENTIAL, points=2,
      hint="Sequential applies its children in order; children are named '0', '1', ...",
      stated={'Sequential': 'A chain of modules applied in order; children are named ``"0"``, ``"1"``, ...',
              'Sequential.forward': 'Apply each child in order: ``x = child(x)`` for every child, then return ``x``.'})
def sequential_forward_and_indexing(tt, rng):
    tt.manual_seed(5)
    model = _mlp(tt).eval()
    x = tt.Tensor(_f32(rng, 6, 5))
    return [model(x).numpy(), len(model), type(model[1]).__name__,
            [n for n, _ in model.named_children()]]


# ----------------------------------------------------------------------------- Dropout (8)
@case(unit=DROPOUT, points=3,
      hint="In eval mode, and for p = 0, dropout returns its input unchanged.",
      stated={'Dropout': 'the identity in eval mode.',
              'Dropout.forward': 'If not training, or ``p == 0``: return ``x``.'})
def dropout_identity_in_eval(tt, rng):
    nn = tt.nn
    x = tt.Tensor(_f32(rng, 50, 40))
    d = nn.Dropout(0.5).eval()
    p0 = nn.Dropout(0.0)
    return [d(x).numpy(), p0(x).numpy()]


def _is_dropout_of(out, x, p):
    """(ok, why): ``out`` is a dropout of ``x`` with drop rate ``p`` (decided in the parent)."""
    if not isinstance(out, np.ndarray) or out.shape != x.shape:
        shape = getattr(out, "shape", type(out).__name__)
        return False, f"the output's shape {shape} is not the input's {x.shape}"
    if out.dtype != np.float32:
        return False, f"dtype {out.dtype} is wrong (expected float32)"
    kept = out != 0
    frac = float(kept.mean())
    # six binomial standard deviations: a correct dropout is outside once in ~5e8 draws (a
    # fixed 0.03 failed 40x40 inputs at p = 0.5, 2.4 sigma, for ~3 % of the variants)
    if abs(frac - (1.0 - p)) > 6.0 * math.sqrt(p * (1.0 - p) / kept.size):
        return False, f"{frac:.3f} of the elements were kept, not 1 - p = {1.0 - p:.3f}"
    ok, _ = compare_values(out[kept], x[kept] / np.float32(1.0 - p), rtol=1e-5, atol=1e-6,
                           check_dtype=False)
    if not ok:
        ratio = float(np.median(out[kept] / x[kept])) if kept.any() else float("nan")
        return False, (f"the kept elements are the input times {ratio:.4g} (median), not "
                       f"times 1 / (1 - p) = {1.0 / (1.0 - p):.4g}")
    return True, ""


def _rate_and_scale(got, expected):
    if not (isinstance(got, dict) and set(got) == set(expected)):
        return False, "the result is not the mapping the test builds"
    same, msg = compare_values(got["x"], expected["x"])
    if not same:
        return False, msg
    return _is_dropout_of(got["out"], expected["x"], expected["p"])


@case(unit=DROPOUT, points=3, check=_rate_and_scale,
      hint="Dropout: keep each element with probability 1 - p and scale survivors by 1/(1-p).",
      stated={'Dropout': 'in training zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``',
              'Dropout.forward': ('each element survives with probability ``1 - p``.',
                                  '``mask = Tensor((keep / (1 - self.p)).astype(x.dtype))`` and return ``x * mask``')})
def dropout_train_rate_and_scale(tt, rng):
    _seed(tt, rng)
    p = float(rng.uniform(0.2, 0.5))
    x = np.abs(_f32(rng, 200, 100)) + np.float32(0.5)
    out = tt.nn.Dropout(p)(tt.Tensor(x)).numpy()
    return {"x": x, "out": np.array(out, copy=True), "p": p}


def _edge_cases(got, expected):
    if not (isinstance(got, list) and len(got) == len(expected) == 5):
        return False, "the result is not the list the test builds"
    ok, msg = compare_values(got[:3], expected[:3])
    if not ok:
        return False, msg
    x = expected[4]["x"]
    a, b = got[3]
    for out in (a, b):
        ok, why = _is_dropout_of(out, x, 0.5)
        if not ok:
            return False, why
    if np.array_equal(a, b):
        return False, ("the masks of two calls on the same input are identical: draw a new "
                       "mask every call")
    return compare_values(got[4], expected[4])


@case(unit=DROPOUT, points=2, check=_edge_cases,
      hint="Dropout: p = 1 drops everything; p outside [0, 1] raises ValueError; masks differ "
           "between calls.",
      stated={'Dropout': 'ValueError: ``p`` is not in ``[0, 1]``.',
              'Dropout.forward': ('If ``p == 1``: return ``x * 0.0`` (everything dropped).',
                                  '``keep = default_generator().random(x.shape) >= self.p``')})
def dropout_edge_cases(tt, rng):
    nn = tt.nn
    _seed(tt, rng)
    x = np.abs(_f32(rng, 40, 40)) + np.float32(0.5)
    d = nn.Dropout(0.5)
    a, b = d(tt.Tensor(x)).numpy().copy(), d(tt.Tensor(x)).numpy().copy()
    return [nn.Dropout(1.0)(tt.Tensor(x)).numpy(),
            outcome(nn.Dropout, 1.0 + float(rng.uniform(0.01, 2.0))),
            outcome(nn.Dropout, -float(rng.uniform(0.01, 2.0))), [a, b], {"x": x}]


# ----------------------------------------------------------------------------- Flatten (4)
@case(unit=FLATTEN, points=4,
      hint="Flatten: merge dims start_dim..end_dim (inclusive, negatives allowed) into one; a 1-D "
           "input keeps its shape and a 0-d input becomes shape (1,), as in PyTorch; a dim out of "
           "range is an IndexError (never wrap it) and start after end a RuntimeError.",
      stated={'Flatten': 'Merge dimensions ``start_dim..end_dim`` into one: ``(N, C, H, W) -> (N, C*H*W)``.',
              'Flatten.forward': ('Reshape so that dimensions ``start_dim`` to ``end_dim`` (inclusive) become one.',
                                  'with ``size = max(x.ndim, 1)`` each must be in ``[-size, size - 1]`` (``IndexError`` otherwise',
                                  'raise ``RuntimeError`` if ``start > end``.',
                                  'A 0-d tensor (``x.ndim == 0``) becomes shape ``(1,)``, as in PyTorch.',
                                  'a 1-D input has nothing to merge with the defaults (``start_dim=1``): its shape stays the same.')})
def flatten_dims(tt, rng):
    nn = tt.nn
    x = tt.Tensor(_f32(rng, 2, 3, 4, 5))
    return [nn.Flatten()(x).numpy(), tuple(nn.Flatten(0, 1)(x).shape),
            tuple(nn.Flatten(1, 2)(x).shape), tuple(nn.Flatten(-2, -1)(x).shape),
            tuple(nn.Flatten(0, -1)(x).shape), tuple(nn.Flatten()(tt.Tensor(_f32(rng, 4, 1))).shape),
            tuple(nn.Flatten(0)(tt.Tensor(_f32(rng, 5))).shape),
            tuple(nn.Flatten(0)(tt.Tensor(np.float32(3.0))).shape),
            outcome(nn.Flatten(4), x), outcome(nn.Flatten(0, -5), x),
            outcome(nn.Flatten(2, 1), x), outcome(nn.Flatten(), tt.Tensor(np.float32(1.0)))]
