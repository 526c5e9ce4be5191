"""Hidden suite · module 13 (transformers). Cases are probes; the trusted parent compares.

Each case returns plain data computed with the package under test ``tt``; the expected value
is the same case run against tinytorch_ref. Every input (sizes, tensors, parameter values,
seeds, sampling settings) comes from ``rng``. Parameters are set by name, in sorted order, so
a case depends on the names and shapes of the docstrings, not on how a model drew its initial
weights; most cases run in float64 so that tolerances can be tight. The two sampling checks are
decided by ``check`` functions in the parent (a distribution, not one draw). Points sum to
module 13's ``points`` (50).
"""

from __future__ import annotations

import importlib
import math
from typing import Any

import numpy as np

from autograder.suite import Suite, compare_values, outcome

suite = Suite(module="13_transformers", version="2027.3")
case = suite.case
LN = suite.unit("LayerNorm", "_LayerNormFn", "layer_norm", "LayerNorm")
MLP = suite.unit("MLP", "MLP")
BLOCK = suite.unit("TransformerBlock", "TransformerBlock", uses=(LN, MLP))
GPT = suite.unit("GPT", "GPT.__init__", "GPT.forward", uses=(BLOCK, LN))
GENERATE = suite.unit("GPT.generate", "GPT.generate", uses=(GPT,))
COUNTS = suite.unit("gpt_parameter_counts", "gpt_parameter_counts")
RTOL, ATOL = 1e-7, 1e-9  # most cases run in float64: any summation order passes


def _tf(tt):
    return importlib.import_module(f"{tt.__name__}.transformers")


def _f64(rng, *shape):
    return rng.standard_normal(shape)


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _seed(tt, rng):
    tt.manual_seed(int(rng.integers(2**31)))


def _set_params(module, rng, dtype=np.float64, scale=0.4):
    """Give every parameter random values, by sorted name (and make it ``dtype``)."""
    params = dict(module.named_parameters())
    for name in sorted(params):
        p = params[name]
        values = rng.standard_normal(p.shape) * scale
        if name.endswith("weight") and p.ndim == 1:  # LayerNorm scales around one
            values = 1.0 + values
        p.data = values.astype(dtype)
    return module


def _grads(tt, rng, out, leaves):
    """Backward of sum(out * R) for a random R: the gradient of every leaf (None if missing)."""
    r = rng.standard_normal(out.shape).astype(out.numpy().dtype)
    (out * tt.Tensor(r)).sum().backward()
    return [None if t.grad is None else t.grad.numpy() for t in leaves]


def _param_grads(module):
    return {n: (None if p.grad is None else p.grad.numpy()) for n, p in module.named_parameters()}


def _sizes(rng):
    heads = int(rng.integers(1, 4))
    return heads, heads * int(rng.integers(2, 5))  # (n_heads, d_model)


# ----------------------------------------------------------------------------- LayerNorm (14)
def _f64_then_f32(got: Any, expected: Any) -> tuple[bool, str]:
    """``layer_norm_forward``'s decision: the float64 results at ``RTOL``; item 3, a float32
    result, at float32's precision (float64 statistics cast back may round an ulp apart)."""
    if not (isinstance(got, list) and len(got) == len(expected)):
        return False, "the result is not the list the test builds"
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        rtol, atol = (1e-6, 1e-6) if i == 3 else (RTOL, ATOL)
        ok, msg = compare_values(g, e, where=f"result[{i}]", rtol=rtol, atol=atol)
        if not ok:
            return False, msg
    return True, ""


@case(unit=LN, points=3, rtol=RTOL, atol=ATOL, check=_f64_then_f32,
      hint="LayerNorm: mean and biased variance over the trailing normalized_shape dims "
           "(keepdims), x_hat = (x - mean) / sqrt(var + eps), then x_hat * weight + bias; keep "
           "the input's dtype.",
      stated={"layer_norm": (
                  "normalized_shape: a sequence of ints — the trailing dims of one row",
                  "eps: added to the variance (default ``1e-5``, PyTorch's).",
                  "A tensor of ``input``'s shape and dtype.",
                  "``normalized_shape`` counts from the *end*: for ``(B, T, C)`` and ``C`` the axes are ``(2,)``; for ``(T, C)`` they are ``(1, 2)``.",
              ),
              "_LayerNormFn.forward": (
                  "``var = (xc * xc).dot(avg)`` — the *biased* variance.",
                  "return ``(xhat * weight.reshape(n) + bias.reshape(n)).reshape(x.shape)``.",
                  "``eps`` is a Python float, so float32 stays float32.",
              ),
              "_LayerNormFn": "``(x - mean) / sqrt(var + eps) * weight + bias`` over the trailing ``axes``, fused."})
def layer_norm_forward(tt, rng):
    F = tt.nn.functional
    c = int(rng.integers(3, 8))
    x = _f64(rng, 2, 3, c) * rng.uniform(0.5, 3.0) + rng.uniform(-2, 2)
    x[0, 1] *= 1e-2  # a row with a small variance: eps matters there
    w, b = tt.Tensor(_f64(rng, c)), tt.Tensor(_f64(rng, c))
    eps = float(rng.uniform(1e-4, 1e-2))
    two = _f64(rng, 4, 2, c) * 2.0
    w2, b2 = tt.Tensor(_f64(rng, 2, c)), tt.Tensor(_f64(rng, 2, c))
    x32 = _f32(rng, 3, c) * np.float32(4.0)
    y32 = F.layer_norm(tt.Tensor(x32), (c,), tt.Tensor(np.ones(c, np.float32)),
                       tt.Tensor(np.zeros(c, np.float32)))
    return [F.layer_norm(tt.Tensor(x), [c], w, b).numpy(),
            F.layer_norm(tt.Tensor(x), (c,), w, b, eps=eps).numpy(),
            F.layer_norm(tt.Tensor(two), (2, c), w2, b2).numpy(),
            np.asarray(y32.numpy(), dtype=np.float64), str(y32.dtype)]


@case(unit=LN, points=1, rtol=1e-2, atol=1e-2,
      hint="_LayerNormFn.forward: the variance is the mean of (x - mean)**2; E[x²] − E[x]² "
           "cancels away in float32 when the mean is large (values near 2000 that vary by about "
           "1).",
      stated={"_LayerNormFn.forward": "subtract the mean first, as in step 2. The shortcut ``E[x²] − E[x]²`` subtracts two nearly equal large numbers: for float32 rows near 2000 that vary by about 1 it loses every digit of the variance (or makes it negative), where PyTorch stays exact."})
def layer_norm_large_mean_float32(tt, rng):
    F = tt.nn.functional
    c = int(rng.integers(4, 9))
    x = (rng.standard_normal((3, 2, c)) * rng.uniform(0.5, 2.0)
         + rng.uniform(1e3, 4e3, (3, 2, 1))).astype(np.float32)
    w = tt.Tensor(1.0 + 0.2 * _f32(rng, c))
    b = tt.Tensor(_f32(rng, c))
    return F.layer_norm(tt.Tensor(x), (c,), w, b).numpy()


@case(unit=LN, points=4, rtol=RTOL, atol=ATOL,
      hint="LayerNorm: dbias = sum of grad over the leading dims; dweight = sum of grad * x_hat; "
           "dx = rstd * (g - mean(g) - x_hat * mean(g * x_hat)) with g = grad * weight, means "
           "over each row.",
      stated={"_LayerNormFn.backward": (
                  "``dbias = ones.dot(gr)``; ``gx = gr * xhat``; ``dweight = ones.dot(gx)`` — both reshaped to ``weight.shape``.",
                  "``dx = rstd * (g - gr.dot(wavg) - xhat * gx.dot(wavg))``",
                  "Return ``(dx.reshape(shape), dweight, dbias)`` — one gradient per input.",
              ),
              "test:test_layer_norm_backward_matches_finite_differences": "dL/dx, dL/dweight and dL/dbias must match central differences"})
def layer_norm_backward(tt, rng):
    F = tt.nn.functional
    out = []
    for shape, norm in (((2, 3, int(rng.integers(3, 7))), 1), ((3, 2, int(rng.integers(2, 5))), 2)):
        x = tt.Tensor(_f64(rng, *shape) * 2.0 + 0.5, requires_grad=True)
        w = tt.Tensor(_f64(rng, *shape[-norm:]), requires_grad=True)
        b = tt.Tensor(_f64(rng, *shape[-norm:]), requires_grad=True)
        eps = float(rng.uniform(1e-3, 1e-1))
        out.append(_grads(tt, rng, F.layer_norm(x, shape[-norm:], w, b, eps=eps), [x, w, b]))
    return out


@case(unit=LN, points=3, rtol=RTOL, atol=ATOL,
      hint="LayerNorm: without weight/bias use scale 1 and shift 0 (no gradient for them); a 1-D "
           "row works too; a constant row gives 0 (not NaN); trailing dims that do not match "
           "normalized_shape raise RuntimeError; an int normalized_shape or an integer input "
           "raise as in PyTorch.",
      stated={"layer_norm": (
                  "weight, bias: ``normalized_shape`` tensors, or None (scale 1, shift 0).",
                  "(constants: they get no gradient)",
                  "TypeError: ``normalized_shape`` is an int",
                  "RuntimeError: an integer or bool input",
                  "RuntimeError: the trailing dims of ``input`` are not ``normalized_shape``",
              ),
              "_LayerNormFn.forward": "A constant row has variance 0: ``eps`` is what keeps the division finite.",
              "_LayerNormFn.backward": "an unbatched row ``(C,)`` is one row (``R = 1``)."})
def layer_norm_defaults_and_errors(tt, rng):
    F = tt.nn.functional
    c = int(rng.integers(3, 7))
    x = tt.Tensor(_f64(rng, 4, c) * 3.0, requires_grad=True)
    y = F.layer_norm(x, (c,))
    grads = _grads(tt, rng, y, [x])
    row = F.layer_norm(tt.Tensor(_f64(rng, c)), [c]).numpy()
    flat = F.layer_norm(tt.Tensor(np.full((2, c), float(rng.uniform(-3, 3)))), (c,)).numpy()
    return [y.numpy(), grads, row, flat,
            outcome(F.layer_norm, tt.Tensor(_f64(rng, 2, c)), (c + 1,)),
            outcome(F.layer_norm, tt.Tensor(_f64(rng, 2, c)), (3, c)),
            outcome(F.layer_norm, tt.Tensor(_f64(rng, 2, c)), c),
            outcome(F.layer_norm, tt.Tensor(rng.integers(0, 5, (2, c))), (c,))]


@case(unit=LN, points=3, rtol=RTOL, atol=ATOL,
      hint="LayerNorm(shape, eps=1e-5, elementwise_affine=True, bias=True): weight (ones) and "
           "bias (zeros) of normalized_shape as a tuple; None without affine (or bias=False); "
           "forward calls layer_norm with them.",
      stated={"LayerNorm": (
                  "normalized_shape: an int or a sequence of ints, the trailing dims of one row.",
                  "eps: added to the variance for stability (default ``1e-5``, PyTorch's).",
                  "elementwise_affine: learn ``weight`` (ones) and ``bias`` (zeros) of ``normalized_shape``; without it both are None.",
                  "bias: with ``elementwise_affine``, whether to learn the shift",
              ),
              "LayerNorm.__init__": (
                  "``self.normalized_shape = _shape_tuple(normalized_shape)``; store ``eps`` and ``elementwise_affine``.",
                  '``self.weight = Parameter(np.ones(shape, np.float32))``, and ``self.bias = Parameter(np.zeros(shape, np.float32))`` if ``bias`` else ``self.register_parameter("bias", None)``.',
                  'Without it: register both ``"weight"`` and ``"bias"`` as None.',
              ),
              "LayerNorm.forward": (
                  "``layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)``.",
                  "pass the parameters themselves (not ``.data``) so they receive gradients.",
              )})
def layer_norm_module(tt, rng):
    nn = tt.nn
    c = int(rng.integers(3, 7))
    eps = float(rng.uniform(1e-4, 1e-2))
    ln = nn.LayerNorm(c, eps=eps)
    fresh = [(n, p.numpy().copy(), str(p.dtype)) for n, p in ln.named_parameters()]
    _set_params(ln, rng)
    x = tt.Tensor(_f64(rng, 2, 3, c), requires_grad=True)
    y = ln(x)
    grads = _grads(tt, rng, y, [x, ln.weight, ln.bias])
    bare = nn.LayerNorm([2, c], elementwise_affine=False)
    nobias = nn.LayerNorm(c, bias=False)
    return [fresh, tuple(ln.normalized_shape), float(ln.eps), y.numpy(), grads,
            tuple(bare.normalized_shape), bare.weight is None, bare.bias is None,
            len(list(bare.parameters())), bare(tt.Tensor(_f64(rng, 3, 2, c))).numpy(),
            nobias.bias is None, [n for n, _ in nobias.named_parameters()]]


# ----------------------------------------------------------------------------- MLP (5)
@case(unit=MLP, points=1,
      hint="MLP: fc = Linear(d_model, hidden), proj = Linear(hidden, d_model) (hidden = 4 * "
           "d_model by default), then a Dropout, assigned in that order.",
      stated={"MLP.__init__": (
                  "Create ``fc``, ``proj`` and ``dropout``, in that order.",
                  "``hidden = 4 * d_model`` if it is None; ``self.fc = Linear(d_model, hidden)``; ``self.proj = Linear(hidden, d_model)``; ``self.dropout = Dropout(dropout)``.",
              )})
def mlp_structure(tt, rng):
    T = _tf(tt)
    _seed(tt, rng)
    d = int(rng.integers(2, 65))
    hidden = int(rng.integers(3, 200))
    p_drop = float(np.round(rng.uniform(0.05, 0.9), 3))
    return [[(n, tuple(p.shape)) for n, p in T.MLP(d).named_parameters()],
            [(n, tuple(p.shape)) for n, p in T.MLP(d, hidden=hidden).named_parameters()],
            float(T.MLP(d, dropout=p_drop).dropout.p)]


@case(unit=MLP, points=4, rtol=RTOL, atol=ATOL,
      hint="MLP(x) = proj(gelu_tanh(fc(x))) on (*, C) inputs (reshape to (B*T, C) and back); "
           "every parameter and the input get gradients.",
      stated={"MLP.forward": (
                  "``dropout(proj(gelu_tanh(fc(x))))`` for ``x (*, d_model)``.",
                  "``Linear`` acts on the last dimension of any input",
              ),
              "test:test_mlp_structure_and_forward": (
                  "the input must receive a gradient",
                  "every parameter gets a gradient",
              )})
def mlp_forward_backward(tt, rng):
    T = _tf(tt)
    d = int(rng.integers(3, 7))  # never the batch size: (B*T, C) is not (B*T*C/B, B)
    mlp = _set_params(T.MLP(d, hidden=int(rng.integers(3, 10))), rng)
    x = tt.Tensor(_f64(rng, 2, int(rng.integers(2, 5)), d), requires_grad=True)
    y = mlp(x)
    gx = _grads(tt, rng, y, [x])
    x1 = tt.Tensor(_f64(rng, d))
    return [y.numpy(), gx, _param_grads(mlp), mlp(x1).numpy()]


# ----------------------------------------------------------------------------- block (13)
@case(unit=BLOCK, points=2,
      hint="TransformerBlock: ln_1 = LayerNorm(C), attn = MultiheadAttention(C, h, "
           "dropout=dropout, batch_first=True), ln_2 = LayerNorm(C), mlp = MLP(C, "
           "dropout=dropout), dropout = Dropout(dropout), in this order.",
      stated={"TransformerBlock.__init__": "``self.ln_1 = LayerNorm(d_model)``; ``self.attn = MultiheadAttention(d_model, n_heads, dropout=dropout, batch_first=True)``; ``self.ln_2 = LayerNorm(d_model)``; ``self.mlp = MLP(d_model, dropout=dropout)``; ``self.dropout = Dropout(dropout)``"})
def block_structure(tt, rng):
    T = _tf(tt)
    _seed(tt, rng)
    h, d = _sizes(rng)
    p = float(rng.uniform(0.1, 0.4))
    block = T.TransformerBlock(d, h, dropout=p)
    return [[(n, tuple(q.shape)) for n, q in block.named_parameters()],
            bool(block.attn.batch_first), int(block.attn.num_heads), float(block.attn.dropout),
            float(block.dropout.p), float(block.mlp.dropout.p)]


@case(unit=BLOCK, points=4, rtol=RTOL, atol=ATOL,
      hint="TransformerBlock: out = x + attn(h, h, h) with h = ln_1(x) and the causal mask "
           "(True above the diagonal), then out + mlp(ln_2(out)); the residual adds the block's "
           "input, not h.",
      stated={"TransformerBlock.forward": (
                  "``h = self.ln_1(x)``.",
                  "No cache: ``a, _ = self.attn(h, h, h, attn_mask=causal_mask(T), need_weights=False, is_causal=True)`` with ``T = x.shape[1]``",
                  "``x = x + self.dropout(a)``.",
                  "Return ``x + self.mlp(self.ln_2(x))``.",
                  "Add to ``x``, not to ``h``: the stream itself is never normalised.",
              )})
def block_forward(tt, rng):
    T = _tf(tt)
    h, d = _sizes(rng)
    block = _set_params(T.TransformerBlock(d, h), rng)
    return [block(tt.Tensor(_f64(rng, 2, int(rng.integers(2, 7)), d))).numpy(),
            block(tt.Tensor(_f64(rng, 1, 1, d))).numpy()]


@case(unit=BLOCK, points=4, rtol=RTOL, atol=ATOL,
      hint="TransformerBlock: use Tensor operations all the way (no .data), so the input and all "
           "twelve parameters receive gradients through both residual branches.",
      stated={"TransformerBlock.forward": (
                  "``x = x + self.dropout(a)``.",
                  "Return ``x + self.mlp(self.ln_2(x))``.",
              ),
              "LayerNorm.forward": "pass the parameters themselves (not ``.data``) so they receive gradients."})
def block_backward(tt, rng):
    T = _tf(tt)
    h, d = _sizes(rng)
    block = _set_params(T.TransformerBlock(d, h), rng)
    x = tt.Tensor(_f64(rng, 2, int(rng.integers(2, 6)), d), requires_grad=True)
    gx = _grads(tt, rng, block(x), [x])
    return [gx, _param_grads(block)]


@case(unit=BLOCK, points=2, rtol=RTOL, atol=ATOL,
      hint="TransformerBlock: position t must not see later positions; with a cache the block "
           "calls cache(self.attn, h) once with h = ln_1(x) instead of its own attention.",
      stated={"TransformerBlock.forward": (
                  "attn_mask=causal_mask(T)",
                  "with a cache: ``a = cache(self.attn, h)``.",
                  "a callable ``cache(attn, h)`` returning the attention output ``(B, T, C)`` for the new positions ``h``.",
              ),
              "test:test_block_is_causal_and_takes_a_cache": "with a cache the block calls cache(self.attn, h) once"})
def block_causality_and_cache(tt, rng):
    T = _tf(tt)
    h, d = _sizes(rng)
    block = _set_params(T.TransformerBlock(d, h), rng)
    x = _f64(rng, 2, int(rng.integers(4, 8)), d)
    cut = int(rng.integers(1, x.shape[1]))
    full = block(tt.Tensor(x)).numpy()
    prefix = block(tt.Tensor(x[:, :cut])).numpy()
    fake = _f64(rng, *x.shape)
    calls = []

    def cache(attn, hidden):
        calls.append([attn is block.attn, tuple(hidden.shape), np.array(hidden.numpy())])
        return tt.Tensor(fake)

    with_cache = block(tt.Tensor(x), cache=cache).numpy()
    return [full, prefix, with_cache, calls]


def _dropout_modes_check(got: Any, expected: Any) -> tuple[bool, str]:
    """Parent-side: the eval outputs equal the reference's; the training-mode output differs
    from the eval one (dropout applied)."""
    if not (isinstance(got, list) and len(got) == 3 and isinstance(got[2], np.ndarray)
            and isinstance(got[0], np.ndarray) and got[2].shape == got[0].shape):
        return False, "the result is not the list the test builds"
    if np.allclose(got[2], got[0]):
        return False, "training mode gave the eval-mode output: dropout is not applied"
    return compare_values(got[:2], expected[:2], rtol=RTOL, atol=ATOL)


@case(unit=BLOCK, points=1, check=_dropout_modes_check,
      hint="TransformerBlock: dropout is active in training mode only: in eval mode a block with "
           "dropout gives the same output as without.",
      stated={"TransformerBlock": "dropout: on the attention weights, the attention output and the MLP output (training mode only)."})
def block_dropout_modes(tt, rng):
    T = _tf(tt)
    h, d = _sizes(rng)
    _seed(tt, rng)
    a = T.TransformerBlock(d, h, dropout=0.5)
    b = T.TransformerBlock(d, h)
    state = {n: _f64(rng, *p.shape) * 0.4 for n, p in a.named_parameters()}
    for m in (a, b):
        for n, p in m.named_parameters():
            p.data = state[n].copy()
    x = tt.Tensor(_f64(rng, 2, 4, d))
    a.eval()
    same = a(x).numpy()
    a.train()
    _seed(tt, rng)
    noisy = a(x).numpy()
    return [same, b(x).numpy(), noisy]


# ----------------------------------------------------------------------------- GPT (12)
def _gpt(tt, rng, dtype=np.float64, scale=0.4, **sizes):
    T = _tf(tt)
    h, d = _sizes(rng)
    cfg = {"vocab_size": int(rng.integers(5, 12)), "context_length": int(rng.integers(4, 9)),
           "d_model": d, "n_layers": int(rng.integers(1, 3)), "n_heads": h}
    cfg.update(sizes)
    _seed(tt, rng)
    return _set_params(T.GPT(**cfg), rng, dtype, scale), cfg


@case(unit=GPT, points=2,
      hint="GPT: tok_emb = Embedding(V, C), pos_emb = LearnedPositionalEmbedding(context, C), "
           "drop, blocks = Sequential of n_layers TransformerBlocks, ln_f = LayerNorm(C), head = "
           "Linear(C, V, bias=False); store the sizes as attributes.",
      stated={"GPT.__init__": (
                  "store ``vocab_size``, ``context_length``, ``d_model``, ``n_layers`` and ``n_heads``.",
                  "``self.tok_emb = Embedding(vocab_size, d_model)``; ``self.pos_emb = LearnedPositionalEmbedding(context_length, d_model)``; ``self.drop = Dropout(dropout)``; ``self.blocks = Sequential(*[TransformerBlock(d_model, n_heads, dropout) for _ in range(n_layers)])``; ``self.ln_f = LayerNorm(d_model)``; ``self.head = Linear(d_model, vocab_size, bias=False)``.",
              ),
              "GPT": "Attributes (in this order): ``tok_emb``, ``pos_emb``, ``drop``, ``blocks``, ``ln_f``, ``head``."})
def gpt_structure(tt, rng):
    T = _tf(tt)
    h, d = _sizes(rng)
    v, ctx, n = int(rng.integers(5, 40)), int(rng.integers(4, 30)), int(rng.integers(1, 4))
    p_drop = round(float(rng.uniform(0.05, 0.5)), 6)  # sizes alone repeat across 64 variants
    _seed(tt, rng)
    gpt = T.GPT(v, ctx, d, n, h, dropout=p_drop)
    return [[(name, tuple(p.shape)) for name, p in gpt.named_parameters()],
            [gpt.vocab_size, gpt.context_length, gpt.d_model, gpt.n_layers, gpt.n_heads],
            len(gpt.blocks), float(gpt.drop.p)]


def _init_stats(gpt: Any) -> dict[str, Any]:
    params = dict(gpt.named_parameters())

    def std(key: str) -> float:
        return float(np.mean([params[n].numpy().std() for n in params if n.endswith(key)]))

    return {"tok": float(params["tok_emb.weight"].numpy().std()),
            "pos": float(params["pos_emb.weight"].numpy().std()),
            "head": float(params["head.weight"].numpy().std()),
            "in_proj": std("attn.in_proj_weight"), "fc": std("mlp.fc.weight"),
            "out_proj": std("attn.out_proj.weight"), "proj": std("mlp.proj.weight"),
            "bias_max": max(float(np.abs(p.numpy()).max()) for n, p in params.items()
                            if n.endswith("bias")),
            "ln_range": _ln_range(params),
            # the asked sizes: statistics alone are the same for every variant
            "sizes": [int(params["head.weight"].shape[0]), len(params)]}


def _ln_range(params: dict[str, Any]) -> list[float]:
    """Smallest and largest LayerNorm weight (raw data; the parent wants both at one)."""
    ws = [params[n].numpy().ravel() for n in params if ".ln_" in f".{n}" and n.endswith("weight")]
    allw = np.concatenate(ws) if ws else np.zeros(0)
    return [float(allw.min()), float(allw.max())] if allw.size else []


def _init_close(got: Any, expected: Any) -> tuple[bool, str]:
    if not isinstance(got, dict) or set(got) != set(expected):
        return False, "the result is not the mapping the test builds"
    for key in ("tok", "pos", "head", "in_proj", "fc", "out_proj", "proj"):
        g, e = got[key], expected[key]
        if not isinstance(g, float) or not math.isfinite(g) or abs(g - e) > 0.12 * e:
            shown = f"{g:.4g}" if isinstance(g, float) else type(g).__name__
            return False, (f"the standard deviation of the {key} weights is {shown}, not within "
                           f"12 % of the {e:.4g} GPT-2's initialisation gives")
    if got["bias_max"] != 0.0:
        return False, f"the largest |bias| is {got['bias_max']:.3g}: every bias starts at zero"
    if got["ln_range"] != [1.0, 1.0]:
        return False, f"LayerNorm weights range over {got['ln_range']}: they stay at one"
    if got["sizes"] != expected["sizes"]:
        return False, (f"the model has {got['sizes'][1]} parameter tensors and a head for "
                       f"{got['sizes'][0]} tokens, not {expected['sizes'][1]} and "
                       f"{expected['sizes'][0]}: GPT(vocab_size, ..., n_layers, ...) builds "
                       "what it is asked")
    return True, ""


@case(unit=GPT, points=2, check=_init_close,
      hint="GPT-2 init: 2-D parameters ~ N(0, 0.02^2), but out_proj.weight and mlp.proj.weight ~ "
           "N(0, (0.02 / sqrt(2 * n_layers))^2); biases zero.",
      stated={"GPT.__init__": 'a 2-D ``p`` gets ``p.data[...] = rng.normal(0.0, std, p.shape)`` with ``std = 0.02 / math.sqrt(2 * n_layers)`` when ``name`` ends with ``"out_proj.weight"`` or ``"mlp.proj.weight"`` and ``0.02`` otherwise; a ``name`` ending with ``"bias"`` gets zeros. (LayerNorm weights stay at one.)'})
def gpt_initialisation(tt, rng):
    T = _tf(tt)
    _seed(tt, rng)
    n = int(rng.integers(1, 5))
    return _init_stats(T.GPT(int(rng.integers(200, 300)), 64, 64, n, 4))


@case(unit=GPT, points=4, rtol=RTOL, atol=ATOL,
      hint="GPT: logits = head(ln_f(blocks(drop(tok_emb(idx) + pos_emb[0:T])))) for every "
           "position, shape (B, T, V); T may be shorter than context_length; idx may be a Tensor "
           "or an array.",
      stated={"GPT.forward": (
                  "idx: integer token ids, a Tensor or an array, shape ``(B, T)``.",
                  "``x = self.drop(self.pos_emb(self.tok_emb(ids), offset))``",
                  "Return the logits ``self.head(self.ln_f(x))`` — ``(B, T, V)``",
              ),
              "test:test_gpt_forward_is_causal_and_uses_positions": "T may be shorter than context_length"})
def gpt_forward(tt, rng):
    gpt, cfg = _gpt(tt, rng)
    v, ctx = cfg["vocab_size"], cfg["context_length"]
    full = rng.integers(0, v, size=(2, ctx))
    short = rng.integers(0, v, size=(3, int(rng.integers(1, ctx))))
    return [gpt(tt.Tensor(full)).numpy(), gpt(short).numpy()]


@case(unit=GPT, points=2, rtol=RTOL, atol=ATOL,
      hint="GPT: every parameter (embeddings, all blocks, ln_f, head) receives a gradient of the "
           "logits.",
      stated={"test:test_gpt_forward_is_causal_and_uses_positions": "every parameter must receive a gradient",
              "GPT.forward": "Return the logits ``self.head(self.ln_f(x))``"})
def gpt_backward(tt, rng):
    gpt, cfg = _gpt(tt, rng)
    idx = rng.integers(0, cfg["vocab_size"], size=(2, cfg["context_length"]))
    logits = gpt(tt.Tensor(idx))
    _grads(tt, rng, logits, [])
    return _param_grads(gpt)


@case(unit=GPT, points=2, rtol=RTOL, atol=ATOL,
      hint="GPT: more than context_length positions (counting cache.offset) or ids that are not "
           "(B, T) raise ValueError; with a cache, positions start at cache.offset and block i "
           "gets cache.layers[i].",
      stated={"GPT.forward": (
                  "ValueError: ``idx`` is not 2-D, or ``offset + T > context_length``.",
                  "``offset = 0 if cache is None else cache.offset``",
                  "``x = block(x, None if cache is None else cache.layers[i])``.",
                  "position ``t`` of ``idx`` is position ``offset + t`` of the sequence",
              )})
def gpt_positions_and_cache(tt, rng):
    gpt, cfg = _gpt(tt, rng)
    v, ctx = cfg["vocab_size"], cfg["context_length"]
    offset = int(rng.integers(1, ctx))
    idx = rng.integers(0, v, size=(2, ctx - offset))
    seen = []

    class LayerCache:
        def __init__(self, i):
            self.i = i

        def __call__(self, attn, h):
            seen.append(self.i)
            t = h.shape[1]
            out, _ = attn(h, h, h, attn_mask=np.triu(np.ones((t, t), bool), k=1),
                          need_weights=False)
            return out

    class ModelCache:
        def __init__(self):
            self.offset = offset
            self.layers = [LayerCache(i) for i in range(cfg["n_layers"])]

    with_offset = gpt(idx, cache=ModelCache()).numpy()
    return [with_offset, seen,
            outcome(gpt, tt.Tensor(rng.integers(0, v, size=(1, ctx + 1)))),
            outcome(gpt, tt.Tensor(rng.integers(0, v, size=(ctx,))))]


# ----------------------------------------------------------------------------- generate (4)
@case(unit=GENERATE, points=2,
      hint="GPT.generate: greedy decoding (top_k=1): append the argmax of the last position's "
           "logits, feeding only the last context_length tokens; the result is (B, T + "
           "max_new_tokens) int64; subtract the maximum before exp so huge logits do not overflow.",
      stated={"GPT.generate": (
                  "Extend ``idx (B, T)`` by ``max_new_tokens`` sampled tokens; returns ``(B, T + n)``.",
                  "each step feeds the last ``context_length`` tokens, takes the logits of the last position, divides them by ``temperature`` (default 1.0)",
                  "Greedy decoding: ``top_k=1``.",
                  "ValueError: ``temperature <= 0`` or ``top_k < 1``.",
                  "as int64",
                  "``p = np.exp(logits - logits.max(-1, keepdims=True))``; divide by its sum",
              )})
def gpt_generate_greedy(tt, rng):
    gpt, cfg = _gpt(tt, rng, scale=1.0)
    v, ctx = cfg["vocab_size"], cfg["context_length"]
    prompt = rng.integers(0, v, size=(3, ctx + int(rng.integers(0, 3))))
    n = int(rng.integers(3, 8))
    out = gpt.generate(tt.Tensor(prompt), max_new_tokens=n, top_k=1)
    tau = float(rng.uniform(0.3, 3.0))
    again = gpt.generate(prompt[:1, :2], max_new_tokens=n, temperature=tau, top_k=1)
    gpt.head.weight.data = gpt.head.weight.data * 1e4  # logits ~1e4: exp must not overflow
    loud = gpt.generate(prompt[:2, :2], max_new_tokens=n)  # sampling, yet ~greedy
    return [out.numpy(), str(out.dtype), again.numpy(), loud.numpy(),
            outcome(gpt.generate, prompt, 1, temperature=0.0),
            outcome(gpt.generate, prompt, 1, top_k=0)]


N_SAMPLES = 8000


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


def _sampled_like(got: Any, expected: Any) -> tuple[bool, str]:
    """The parent's decision: each sample's frequencies match the reference model's
    distribution (temperature, top-k), samples are reproducible and stay inside top-k."""
    if not isinstance(got, list) or len(got) != len(expected):
        return False, "the result is not the list the test builds"
    for g, e in zip(got, expected, strict=True):
        if not (isinstance(g, dict) and set(g) == set(e)):
            return False, "the result is not the mapping the test builds"
        counts = g["counts"]
        if not (isinstance(counts, np.ndarray) and counts.shape == e["counts"].shape
                and counts.dtype.kind in "iu" and int(counts.sum()) == N_SAMPLES):
            return False, f"expected counts of {N_SAMPLES} sampled tokens per vocabulary entry"
        logits = g["logits"]
        if not (isinstance(logits, np.ndarray) and logits.shape == e["logits"].shape
                and np.allclose(logits, e["logits"], rtol=1e-6, atol=1e-8)):
            return False, "the model's last-position logits are wrong (see gpt_forward)"
        again, third = g["again"], g["third"]
        if not (isinstance(again, np.ndarray) and isinstance(third, np.ndarray)
                and again.shape == third.shape == e["again"].shape
                and np.array_equal(again, third)):
            return False, "the same manual_seed must give the same sample"
        z = e["logits"] / e["temperature"]
        if e["top_k"] is not None:
            kth = np.sort(z)[-e["top_k"]]
            z = np.where(z < kth, -np.inf, z)
        p = _softmax(z)
        freq = counts / N_SAMPLES
        if np.any((p == 0) & (counts > 0)):
            return False, "a token outside the top_k most likely ones was sampled"
        tv = 0.5 * float(np.abs(freq - p).sum())
        if tv > 0.05:
            return False, (f"the sampled frequencies are far from softmax(logits / temperature) "
                           f"(total variation {tv:.3f})")
    return True, ""


@case(unit=GENERATE, points=2, check=_sampled_like,
      hint="GPT.generate: divide the last logits by temperature, keep the top_k largest (others "
           "-inf), sample from the softmax with the package's generator (the same manual_seed "
           "gives the same tokens).",
      stated={"GPT.generate": (
                  "divides them by ``temperature`` (default 1.0), keeps only the ``top_k`` largest (if given), and samples from the softmax with the package's generator (reproducible with ``manual_seed``).",
                  "tokens removed by top-k have probability 0 and can never be drawn.",
              ),
              "test:test_generate_greedy_sampling_and_cropping": "the same manual_seed must give the same sample"})
def gpt_generate_sampling(tt, rng):
    gpt, cfg = _gpt(tt, rng, scale=0.3, n_layers=1)
    v = cfg["vocab_size"]
    out = []
    for top_k, tau in ((None, float(rng.choice([rng.uniform(0.4, 0.7), rng.uniform(1.5, 2.5)]))),
                       (2, float(rng.uniform(1.5, 2.5)))):
        prompt = rng.integers(0, v, size=(1, int(rng.integers(1, 4))))
        seed = int(rng.integers(2**31))
        tt.manual_seed(seed)
        drawn = gpt.generate(np.repeat(prompt, N_SAMPLES, axis=0), max_new_tokens=1,
                             temperature=tau, top_k=top_k).numpy()[:, -1]
        tt.manual_seed(seed)
        again = gpt.generate(np.repeat(prompt, 50, axis=0), max_new_tokens=2, temperature=tau,
                             top_k=top_k).numpy()
        tt.manual_seed(seed)
        third = gpt.generate(np.repeat(prompt, 50, axis=0), max_new_tokens=2, temperature=tau,
                             top_k=top_k).numpy()
        logits = gpt(tt.Tensor(prompt)).numpy()[0, -1]
        out.append({"counts": np.bincount(np.asarray(drawn, dtype=np.int64), minlength=v),
                    "logits": np.asarray(logits, dtype=np.float64), "temperature": tau,
                    "top_k": top_k, "again": np.asarray(again), "third": np.asarray(third)})
    return out


# ----------------------------------------------------------------------------- counts (2)
@case(unit=COUNTS, points=2,
      hint="gpt_parameter_counts: embeddings V*C + context*C; attention n*(4C^2 + 4C); mlp "
           "n*(8C^2 + 5C); norms (2n + 1)*2C; head V*C; total = their sum (n_heads plays no part).",
      stated={"gpt_parameter_counts": (
                  '``{"embeddings", "attention", "mlp", "norms", "head", "total"}`` -> int.',
                  "``embeddings = V·C + context·C``; ``attention = n_layers·(4C² + 4C)``; ``mlp = n_layers·(8C² + 5C)``; ``norms = (2·n_layers + 1)·2C``; ``head = V·C``; ``total`` is their sum.",
                  "``n_heads`` is not used",
              )})
def formula_counts_by_component(tt, rng):
    T = _tf(tt)
    out = []
    for _ in range(3):
        h = int(rng.integers(1, 13))
        out.append(T.gpt_parameter_counts(int(rng.integers(2, 60000)), int(rng.integers(2, 2048)),
                                          h * int(rng.integers(1, 100)), int(rng.integers(1, 49)),
                                          h))
    return out
