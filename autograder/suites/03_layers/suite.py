"""Hidden suite · module 03 (layers). Cases are probes; the trusted parent compares.

Each case returns plain data computed with the package under test ``tt``; the expected value
is the same case run against tinytorch_ref. Points sum to module 03's ``points`` (50).
"""

from __future__ import annotations

import numpy as np

from autograder.suite import Suite, outcome

suite = Suite(module="03_layers", version="2027.1")
case = suite.case


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _mlp(tt):
    nn = tt.nn
    return nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Dropout(0.3), nn.Linear(7, 3))


# ----------------------------------------------------------------------------- Module tree (14)
@case(points=4, hint="named_parameters walks own parameters, then children, with dotted names.")
def named_parameters_dotted_order(tt, rng):
    nn = tt.nn

    class Block(nn.Module):  # type: ignore[name-defined]  # base: the package under test
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(np.ones(3, dtype=np.float32))
            self.body = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 3, bias=False))
            self.note = "not a parameter"

    names = [(n, tuple(p.shape)) for n, p in Block().named_parameters()]
    return [names, [tuple(p.shape) for p in Block().parameters()]]


@case(points=2, hint="Yield each Parameter object once, even when two layers share it.")
def shared_parameters_counted_once(tt, rng):
    nn = tt.nn
    a = nn.Linear(4, 4)
    b = nn.Linear(4, 4)
    b.weight = a.weight
    model = nn.Sequential(a, b)
    return [[n for n, _ in model.named_parameters()], len(list(model.parameters()))]


@case(points=3, hint="train(mode) / eval() set .training on every module in the tree; return self.")
def train_eval_propagate(tt, rng):
    model = _mlp(tt)
    ret = model.eval()
    after_eval = [bool(m.training) for m in model.modules()]
    model.train()
    after_train = [bool(m.training) for m in model.modules()]
    model.train(False)
    return [ret is model, after_eval, after_train, [bool(m.training) for m in model.modules()]]


@case(points=2, hint="zero_grad sets p.grad = None (or zeros with set_to_none=False).")
def zero_grad_clears_every_parameter(tt, rng):
    model = _mlp(tt)
    for p in model.parameters():
        p.grad = tt.Tensor(np.ones(p.shape, dtype=np.float32))
    model.zero_grad(set_to_none=False)
    zeros = [float(np.abs(p.grad.numpy()).sum()) for p in model.parameters()]
    model.zero_grad()
    return [zeros, [p.grad is None for p in model.parameters()]]


@case(points=3, hint="Parameter is a Tensor with requires_grad=True; __setattr__ registers it.")
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
@case(points=3, hint="state_dict maps dotted names to NumPy array copies of every parameter.")
def state_dict_keys_shapes_copies(tt, rng):
    tt.manual_seed(3)
    model = _mlp(tt)
    sd = model.state_dict()
    first = next(iter(model.parameters()))
    before = np.array(sd["0.weight"], copy=True)
    first.data[...] = 7.0
    return [list(sd), {k: tuple(np.asarray(v).shape) for k, v in sd.items()},
            all(isinstance(v, np.ndarray) for v in sd.values()),
            bool(np.array_equal(sd["0.weight"], before))]


@case(points=4, hint="load_state_dict copies values in place into the existing Parameters.")
def load_state_dict_round_trip(tt, rng):
    tt.manual_seed(1)
    src = _mlp(tt)
    tt.manual_seed(2)
    dst = _mlp(tt)
    ids = [id(p) for p in dst.parameters()]
    res = dst.load_state_dict(src.state_dict())
    x = tt.Tensor(_f32(rng, 4, 5))
    src.eval()
    dst.eval()
    return [dst(x).numpy(), [id(p) for p in dst.parameters()] == ids,
            list(res[0]), list(res[1])]


@case(points=2, hint="Raise RuntimeError on missing/unexpected keys (strict) and shape mismatch.")
def load_state_dict_errors(tt, rng):
    nn = tt.nn
    lin = nn.Linear(3, 2)
    good = lin.state_dict()
    missing = {"weight": good["weight"]}
    extra = dict(good, extra=np.zeros(1, dtype=np.float32))
    wrong = {"weight": np.zeros((3, 2), dtype=np.float32), "bias": good["bias"]}
    loose = lin.load_state_dict(missing, strict=False)
    return [outcome(lin.load_state_dict, missing), outcome(lin.load_state_dict, extra),
            outcome(lin.load_state_dict, wrong), list(loose[0]), list(loose[1])]


# ----------------------------------------------------------------------------- Linear (15)
@case(points=3, hint="weight is (out_features, in_features); bias (out_features,); float32.")
def linear_parameter_shapes(tt, rng):
    nn = tt.nn
    a = nn.Linear(6, 2)
    b = nn.Linear(3, 5, bias=False)
    return [tuple(a.weight.shape), tuple(a.bias.shape), str(a.weight.dtype), b.bias is None,
            [n for n, _ in b.named_parameters()], bool(a.weight.requires_grad),
            int(a.in_features), int(a.out_features)]


@case(points=4, hint="bound = 1/sqrt(in_features); draw weight, then bias, with "
                     "default_generator().uniform(-bound, bound, shape).")
def linear_default_init_from_seed(tt, rng):
    tt.manual_seed(1234)
    lin = tt.nn.Linear(16, 4)
    big = tt.nn.Linear(400, 30)
    return [lin.weight.numpy(), lin.bias.numpy(), float(np.abs(big.weight.numpy()).max()),
            float(np.abs(big.bias.numpy()).max())]


@case(points=4, hint="y = x @ weight.T + bias.")
def linear_forward_2d(tt, rng):
    lin = tt.nn.Linear(4, 3)
    lin.weight.data[...] = _f32(rng, 3, 4)
    lin.bias.data[...] = _f32(rng, 3)
    x = tt.Tensor(_f32(rng, 5, 4))
    out = lin(x)
    return [out.numpy(), str(out.dtype)]


@case(points=2, hint="Linear acts on the last dimension of any (*, in_features) input; "
                     "bias=False adds nothing.")
def linear_forward_batched_and_no_bias(tt, rng):
    lin = tt.nn.Linear(4, 2, bias=False)
    lin.weight.data[...] = _f32(rng, 2, 4)
    x = tt.Tensor(_f32(rng, 2, 3, 4))
    v = tt.Tensor(_f32(rng, 4))
    return [lin(x).numpy(), lin(v).numpy()]


@case(points=2, hint="Sequential applies its children in order; children are named '0', '1', ...")
def sequential_forward_and_indexing(tt, rng):
    tt.manual_seed(5)
    model = _mlp(tt).eval()
    x = tt.Tensor(_f32(rng, 6, 5))
    return [model(x).numpy(), len(model), type(model[1]).__name__,
            [n for n, _ in model.named_children()]]


# ----------------------------------------------------------------------------- Dropout (8)
@case(points=3, hint="In eval mode, and for p = 0, dropout returns its input unchanged.")
def dropout_identity_in_eval(tt, rng):
    nn = tt.nn
    x = tt.Tensor(_f32(rng, 50, 40))
    d = nn.Dropout(0.5).eval()
    p0 = nn.Dropout(0.0)
    return [d(x).numpy(), p0(x).numpy()]


@case(points=3, hint="Keep each element with probability 1 - p and scale survivors by 1/(1-p).")
def dropout_train_rate_and_scale(tt, rng):
    tt.manual_seed(7)
    x = np.abs(_f32(rng, 200, 100)) + np.float32(0.5)
    out = tt.nn.Dropout(0.3)(tt.Tensor(x)).numpy()
    kept = out != 0
    frac = float(kept.mean())
    scale_ok = bool(np.allclose(out[kept], x[kept] / np.float32(0.7), rtol=1e-5))
    mean_ratio = float(out.sum() / x.sum())
    return [0.67 < frac < 0.73, scale_ok, 0.95 < mean_ratio < 1.05, str(out.dtype)]


@case(points=2, hint="p = 1 drops everything; p outside [0, 1] raises ValueError; masks differ "
                     "between calls.")
def dropout_edge_cases(tt, rng):
    nn = tt.nn
    x = tt.Tensor(np.ones((20, 20), dtype=np.float32))
    d = nn.Dropout(0.5)
    a, b = d(x).numpy(), d(x).numpy()
    return [nn.Dropout(1.0)(x).numpy(), outcome(nn.Dropout, 1.5), outcome(nn.Dropout, -0.1),
            bool(not np.array_equal(a, b))]


# ----------------------------------------------------------------------------- Flatten (4)
@case(points=4, hint="Merge dims start_dim..end_dim (inclusive, negatives allowed) into one; "
      "a 1-D input keeps its shape and a 0-d input becomes shape (1,), as in PyTorch; a dim "
      "out of range is an IndexError (never wrap it) and start after end a RuntimeError.")
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
