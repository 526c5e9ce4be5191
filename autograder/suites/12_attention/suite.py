"""Hidden suite · module 12 (attention). Cases are probes; the trusted parent compares.

Each case returns plain data computed with the package under test ``tt``; the expected value
is the same case run against tinytorch_ref. Every input (tensors, masks, seeds) comes from
``rng``. Points sum to module 12's ``points`` (50).
"""

from __future__ import annotations

import importlib

import numpy as np

from autograder.suite import Suite, compare_values, outcome

suite = Suite(module="12_attention", version="2027.3")
case = suite.case
SOFTMAX = suite.unit("_SafeSoftmaxFn", "_SafeSoftmaxFn")
MASKS = suite.unit("mask_to_bias", "mask_to_bias")
SDPA = suite.unit("scaled_dot_product_attention", "_ScaledDotProductAttentionFn",
                  "scaled_dot_product_attention", uses=(SOFTMAX, MASKS))
HEADS = suite.unit("split_heads, merge_heads", "split_heads", "merge_heads")
MHA_INIT = suite.unit("MultiheadAttention.__init__", "MultiheadAttention.__init__")
MHA_MASKS = suite.unit("MultiheadAttention._merge_masks", "MultiheadAttention._merge_masks",
                       uses=(MASKS,))
# the course's __init__ never runs next to the student's forward (which may keep attributes
# of its own): the forward cases set every parameter themselves (_mha)
MHA = suite.unit("MultiheadAttention.forward", "MultiheadAttention.forward",
                 uses=(SOFTMAX, MASKS, SDPA, HEADS, MHA_MASKS))
GRAD_RTOL, GRAD_ATOL = 1e-4, 1e-5  # gradients: other summation orders are fine


def _att(tt):
    return importlib.import_module(f"{tt.__name__}.attention")


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _leaves(tt, rng, *shapes):
    return [tt.Tensor(_f32(rng, *s), requires_grad=True) for s in shapes]


def _seed(tt, rng):
    tt.manual_seed(int(rng.integers(2**31)))


def _grads(tt, rng, out, leaves):
    """Backward of sum(out * R) for a random R: the gradient of every leaf."""
    (out * tt.Tensor(_f32(rng, *out.shape))).sum().backward()
    return [None if t.grad is None else t.grad.numpy() for t in leaves]


def _mha(tt, rng, embed_dim, num_heads, **kwargs):
    """A seeded MultiheadAttention whose every parameter is then set from ``rng``, by sorted
    name (weights about Xavier's size, biases non-zero), and whose stored settings are set
    again: the forward cases depend on the names the docstring pins (parameters, and the
    ``embed_dim``, ``num_heads``, ``dropout``, ``batch_first``, ``head_dim`` that ``__init__``
    stores), not on how ``__init__`` draws or stores them (its own case). ``(N, L, E)``
    inputs unless ``batch_first=False`` is given (the layer's default is PyTorch's, False)."""
    _seed(tt, rng)
    kwargs.setdefault("batch_first", True)
    m = tt.nn.MultiheadAttention(embed_dim, num_heads, **kwargs)
    m.embed_dim, m.num_heads, m.head_dim = embed_dim, num_heads, embed_dim // num_heads
    m.dropout, m.batch_first = float(kwargs.get("dropout", 0.0)), bool(kwargs["batch_first"])
    params = dict(m.named_parameters())
    for name in sorted(params):
        p = params[name]
        scale = 0.5 if p.ndim == 1 else float(np.sqrt(2.0 / sum(p.shape)))
        p.data[...] = _f32(rng, *p.shape) * np.float32(scale)
    return m


def _broadcast(bias, shape):
    """``_merge_masks`` promises a bias *broadcastable* to (N, h, L, S): (N, 1, 1, S) and a
    full (N, h, L, S) array are both correct, so the probe compares them at full size (a
    shape that does not broadcast raises, and fails the case)."""
    if bias is None:
        return None
    arr = np.asarray(bias)
    return np.broadcast_to(arr, shape).copy() if arr.ndim <= len(shape) else arr


def _mask(rng, *shape, p=0.3):
    """A random boolean mask, True with probability 1 - p."""
    return rng.random(shape) >= p


# ----------------------------------------------------------------------------- softmax, masks (10)
@case(unit=SOFTMAX, points=3,
      hint="_SafeSoftmaxFn: subtract the row maximum before exp; a row that is all -inf gives "
           "zeros (shift it by 0, divide by 1); keep the input's dtype.",
      stated={"_SafeSoftmaxFn.forward": (
                  "``P = exp(x - max) / sum(exp(x - max))`` along the last axis",
                  "A row whose entries are all ``-inf`` (nothing may be attended) gives zeros, not NaN.",
                  "every exponent is <= 0, nothing overflows.",
                  "Python floats (``0.0``, ``1.0``) keep float32 arrays float32",
              ),
              "_SafeSoftmaxFn": "Softmax over the last axis, stable for large scores and zero on fully masked rows."})
def safe_softmax_forward(tt, rng):
    A = _att(tt)
    x = _f32(rng, 4, 6) * np.float32(30.0)
    x[1, 2] = 800.0
    x[2, rng.integers(0, 6, size=3)] = -np.inf
    x[3] = -np.inf
    p = A._SafeSoftmaxFn.apply(tt.Tensor(x))
    p64 = A._SafeSoftmaxFn.apply(tt.Tensor(rng.standard_normal((2, 3, 5))))
    return [p.numpy(), str(p.dtype), p64.numpy(), str(p64.dtype)]


@case(unit=SOFTMAX, points=3, rtol=GRAD_RTOL, atol=GRAD_ATOL,
      hint="_SafeSoftmaxFn: dL/dx = P * (G - rowsum(G * P)) along the last axis, from the saved P.",
      stated={"_SafeSoftmaxFn.backward": (
                  "``dL/dx = P * (grad - sum(grad * P, last axis))`` from the saved ``P``.",
                  "return ``(p * (grad - dot),)``",
              )})
def safe_softmax_backward(tt, rng):
    A = _att(tt)
    x = _f32(rng, 3, 2, 5)
    x[0, 1, :] = -np.inf
    x[2, 0, rng.integers(0, 5, size=2)] = -np.inf
    t = tt.Tensor(x, requires_grad=True)
    return _grads(tt, rng, A._SafeSoftmaxFn.apply(t), [t])


@case(unit=MASKS, points=4,
      hint="mask_to_bias: is_causal: tril of ones (L, S), aligned top-left; bool masks: True -> "
           "0, False -> -inf; float masks are returned as they are (in dtype); mask + is_causal "
           "raises RuntimeError.",
      stated={"mask_to_bias": (
                  "is_causal: use the top-left lower triangle ``j <= i`` of ``(query_len, key_len)``.",
                  "None when there is nothing to mask, else an array of ``dtype`` with 0 where attention is allowed and ``-inf`` where it is not (float masks: their own values).",
                  "RuntimeError: both ``attn_mask`` and ``is_causal`` are given",
                  "take ``.data`` of a Tensor; a boolean mask is ``allowed``; a float mask is returned as ``mask.astype(dtype)``.",
              )})
def mask_to_bias_conventions(tt, rng):
    A = _att(tt)
    lq, lk = int(rng.integers(2, 5)), int(rng.integers(5, 8))
    bmask = _mask(rng, 2, lq, lk)
    fmask = _f32(rng, lq, lk)
    return [A.mask_to_bias(None, True, lq, lk, np.float32),
            A.mask_to_bias(None, True, lk, lq, np.float64),
            A.mask_to_bias(bmask, False, lq, lk, np.float32),
            A.mask_to_bias(tt.Tensor(bmask[0]), False, lq, lk, np.float64),
            A.mask_to_bias(fmask, False, lq, lk, np.float64),
            A.mask_to_bias(None, False, lq, lk, np.float32),
            outcome(A.mask_to_bias, bmask, True, lq, lk, np.float32)]


# ----------------------------------------------------------------------------- SDPA (18)
@case(unit=SDPA, points=4,
      hint="scaled_dot_product_attention: softmax(Q K^T * scale) V with scale = 1/sqrt(E), "
           "softmax over the keys (last axis); L and S may differ and Ev may differ from E.",
      stated={"scaled_dot_product_attention": (
                  "query: ``(..., L, E)``; key: ``(..., S, E)``; value: ``(..., S, Ev)`` (leading dims broadcast).",
                  "scale: defaults to ``1 / sqrt(E)``.",
                  "``math.sqrt`` returns a Python float — a NumPy float64 scale would turn a float32 attention into float64.",
              ),
              "_ScaledDotProductAttentionFn": "``softmax(Q Kᵀ · scale + bias) V``",
              "_SafeSoftmaxFn": "Softmax over the last axis"})
def sdpa_forward(tt, rng):
    F = tt.nn.functional
    q, k, v = (tt.Tensor(_f32(rng, *s)) for s in [(2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 5)])
    out = F.scaled_dot_product_attention(q, k, v)
    q2, k2, v2 = (tt.Tensor(_f32(rng, *s)) for s in [(5, 9), (7, 9), (7, 2)])
    return [out.numpy(), str(out.dtype), F.scaled_dot_product_attention(q2, k2, v2).numpy()]


@case(unit=SDPA, points=3,
      hint="scaled_dot_product_attention: is_causal is the top-left triangle even when L != S; "
           "boolean masks: True takes part; float masks are added; rows with nothing allowed are "
           "0.",
      stated={"scaled_dot_product_attention": (
                  "attn_mask: None, boolean (True = takes part) or float (added), broadcastable to ``(..., L, S)``",
                  "is_causal: top-left causal mask",
                  "Rows with no allowed key are 0",
              ),
              "mask_to_bias": "is_causal: use the top-left lower triangle ``j <= i`` of ``(query_len, key_len)``."})
def sdpa_masks_forward(tt, rng):
    F = tt.nn.functional
    q, k, v = (tt.Tensor(_f32(rng, *s)) for s in [(2, 4, 6), (2, 7, 6), (2, 7, 3)])
    q2, k2 = tt.Tensor(_f32(rng, 2, 7, 6)), tt.Tensor(_f32(rng, 2, 4, 6))
    bmask = _mask(rng, 4, 7)
    bmask[2] = False
    fmask = _f32(rng, 2, 1, 7)
    fmask[1, 0, 3] = -np.inf
    return [F.scaled_dot_product_attention(q, k, v, is_causal=True).numpy(),
            F.scaled_dot_product_attention(q2, k2, tt.Tensor(_f32(rng, 2, 4, 3)),
                                           is_causal=True).numpy(),
            F.scaled_dot_product_attention(q, k, v, attn_mask=bmask).numpy(),
            F.scaled_dot_product_attention(q, k, v, attn_mask=tt.Tensor(fmask)).numpy()]


@case(unit=SDPA, points=4, rtol=GRAD_RTOL, atol=GRAD_ATOL,
      hint="scaled_dot_product_attention: dV = P^T G; dP = G V^T; dS = P * (dP - rowsum(dP * P)); "
           "dQ = dS K * scale; dK = dS^T Q * scale (swap the last two axes, never .T); a float "
           "mask that requires grad goes through _composed_attention.",
      stated={"_ScaledDotProductAttentionFn.backward": (
                  "``dv = np.matmul(np.swapaxes(p_used, -1, -2), grad)``.",
                  "``(ds,) = _SafeSoftmaxFn.backward(sm, dp)``; then ``ds = ds * scale``.",
                  "``dq = np.matmul(ds, k)``; ``dk = np.matmul(np.swapaxes(ds, -1, -2), q)``.",
              ),
              "scaled_dot_product_attention": (
                  "A float mask that requires grad gets its gradient (a learned attention bias).",
                  "A float mask that requires grad (a ``Tensor`` with ``requires_grad``): return ``_composed_attention(query, key, value, attn_mask, scale, dropout_p)`` (given).",
              )})
def sdpa_backward(tt, rng):
    F = tt.nn.functional
    out = []
    for kwargs in ({}, {"is_causal": True}, {"attn_mask": _mask(rng, 4, 6)}):
        q, k, v = _leaves(tt, rng, (2, 2, 4, 5), (2, 2, 6, 5), (2, 2, 6, 3))
        out.append(_grads(tt, rng, F.scaled_dot_product_attention(q, k, v, **kwargs), [q, k, v]))
    q, k, v = _leaves(tt, rng, (2, 4, 5), (2, 6, 5), (2, 6, 3))
    bias = tt.Tensor(_f32(rng, 4, 6), requires_grad=True)  # a learned bias gets its gradient
    out.append(_grads(tt, rng, F.scaled_dot_product_attention(q, k, v, attn_mask=bias),
                      [q, k, v, bias]))
    return out


@case(unit=SDPA, points=2, rtol=GRAD_RTOL, atol=GRAD_ATOL,
      hint="scaled_dot_product_attention: A key/value with fewer batch dims broadcasts like "
           "matmul; return the gradients in the broadcast shape and let unbroadcast sum them.",
      stated={"scaled_dot_product_attention": "(leading dims broadcast).",
              "_ScaledDotProductAttentionFn.backward": "shapes for ``q (2, 4, 3)``, ``k (5, 3)`` (shared) and ``v (2, 5, 6)``: ``grad (2, 4, 6)`` -> ``dq (2, 4, 3)``, ``dk (2, 5, 3)`` (the engine sums it to ``(5, 3)``)"})
def sdpa_broadcast_batch_backward(tt, rng):
    F = tt.nn.functional
    q, k, v = _leaves(tt, rng, (3, 4, 6), (5, 6), (5, 2))
    y = F.scaled_dot_product_attention(q, k, v)
    return [y.numpy(), _grads(tt, rng, y, [q, k, v])]


@case(unit=SDPA, points=2, rtol=GRAD_RTOL, atol=GRAD_ATOL,
      hint="scaled_dot_product_attention: scale=None means 1/sqrt(E) as a Python float; an "
           "explicit scale replaces it; float64 stays float64, float32 stays float32.",
      stated={"scaled_dot_product_attention": (
                  "scale: defaults to ``1 / sqrt(E)``.",
                  "``scale = 1.0 / math.sqrt(query.shape[-1])`` when it is None.",
                  "``math.sqrt`` returns a Python float — a NumPy float64 scale would turn a float32 attention into float64.",
              ),
              "_ScaledDotProductAttentionFn.forward": "scale: multiplies ``Q Kᵀ``"})
def sdpa_scale_and_dtype(tt, rng):
    F = tt.nn.functional
    q, k, v = (tt.Tensor(_f32(rng, 3, 9)) for _ in range(3))
    d = [tt.Tensor(rng.standard_normal((2, 3, 4)), requires_grad=True) for _ in range(3)]
    y64 = F.scaled_dot_product_attention(*d, scale=0.25)
    g64 = _grads(tt, rng, y64, d)
    return [F.scaled_dot_product_attention(q, k, v, scale=1.7).numpy(),
            F.scaled_dot_product_attention(q, k, v).numpy(), str(y64.dtype), y64.numpy(),
            [str(g.dtype) if g is not None else None for g in g64]]


def _sdpa_dropout_check(got, expected):
    """Parent-side: the forward's statistics, and the analytic gradient against central
    differences of the same (reseeded) forward, for this variant's inputs."""
    if not (isinstance(got, dict) and set(got) == set(expected)):
        return False, "the result is not the mapping the test builds"
    ok, msg = compare_values(got["inputs"], expected["inputs"])
    if not ok:
        return False, msg
    o = got["o"]
    if not isinstance(o, np.ndarray) or o.shape != expected["o"].shape:
        return False, "the output does not have the expected shape"
    if o.dtype != np.float32:
        return False, f"dtype {o.dtype} is wrong (expected float32)"
    if not (0.95 < float(o.mean()) < 1.05 and 0.1 < float(o.std()) < 0.4):
        return False, (f"with all-ones values and dropout_p=0.3 the outputs average "
                       f"{float(o.mean()):.3f} with spread {float(o.std()):.3f}; kept weights "
                       "scaled by 1 / (1 - p) give an average within 0.05 of 1 and a spread "
                       "between 0.1 and 0.4 (none dropped: spread 0)")
    for g, n in zip(got["analytic"], got["numeric"], strict=True):
        if not (isinstance(g, np.ndarray) and isinstance(n, np.ndarray)
                and g.shape == n.shape == (1, 3, 4)):
            return False, "the gradients do not have the inputs' shapes"
        if not np.allclose(g, n, rtol=1e-4, atol=1e-6):
            diff = float(np.max(np.abs(g - n)))
            return False, (f"the analytic gradient and central differences of the same "
                           f"(reseeded) forward differ by {diff:.3g}: backward must reuse the "
                           "forward's dropout mask")
    return True, ""


@case(unit=SDPA, points=2, check=_sdpa_dropout_check,
      hint="scaled_dot_product_attention: dropout_p: keep each weight with probability 1 - p "
           "(draw with default_generator()), scale kept ones by 1/(1 - p), and multiply dP by the "
           "same mask in backward.",
      stated={"scaled_dot_product_attention": "dropout_p: dropout on the attention weights (applied whenever it is > 0",
              "_ScaledDotProductAttentionFn.forward": "if ``dropout_p > 0``: ``keep = (default_generator() .random(p.shape) >= dropout_p).astype(p.dtype) / (1.0 - dropout_p)`` and ``p_used = p * keep``",
              "_ScaledDotProductAttentionFn.backward": (
                  "``p_used = p if keep is None else p * keep``.",
                  "with dropout ``dp = dp * keep``.",
              )})
def sdpa_dropout(tt, rng):
    F = tt.nn.functional
    seed = int(rng.integers(2**31))
    tt.manual_seed(seed)
    q = tt.Tensor(np.zeros((64, 8, 4), np.float32))  # uniform weights 1/8
    o = F.scaled_dot_product_attention(q, q, tt.Tensor(np.ones((64, 8, 2), np.float32)),
                                       dropout_p=0.3).numpy()
    # the same mask in forward and backward: with the generator reseeded before each call,
    # the analytic gradient must match central differences (float64)
    arrays = [rng.standard_normal((1, 3, 4)) for _ in range(3)]
    r = rng.standard_normal((1, 3, 4))

    def run(values, need_grad):
        tt.manual_seed(seed)
        leaves = [tt.Tensor(a, requires_grad=need_grad) for a in values]
        y = F.scaled_dot_product_attention(*leaves, dropout_p=0.4)
        return leaves, (y * tt.Tensor(r)).sum()

    leaves, total = run(arrays, True)
    total.backward()
    analytic = [t.grad.numpy() for t in leaves]
    numeric = [np.zeros((1, 3, 4)) for _ in range(3)]
    for which in (0, 1, 2):
        for idx in np.ndindex(1, 3, 4):
            plus = [a.copy() for a in arrays]
            minus = [a.copy() for a in arrays]
            plus[which][idx] += 1e-6
            minus[which][idx] -= 1e-6
            diff = run(plus, False)[1].item() - run(minus, False)[1].item()
            numeric[which][idx] = diff / 2e-6
    # decided in the parent: the statistics of o, and analytic against numeric
    return {"o": o, "analytic": analytic, "numeric": numeric, "inputs": [*arrays, r]}


@case(unit=SDPA, points=1,
      hint="scaled_dot_product_attention: raise RuntimeError when E of query and key differ, S of "
           "key and value differ, or attn_mask is given together with is_causal=True.",
      stated={"scaled_dot_product_attention": "RuntimeError: ``query`` and ``key`` differ in ``E``, ``key`` and ``value`` in ``S``, ``attn_mask`` is given with ``is_causal=True``"})
def sdpa_errors(tt, rng):
    F = tt.nn.functional
    q = tt.Tensor(_f32(rng, 2, 3, 4))
    return [outcome(F.scaled_dot_product_attention, q, tt.Tensor(_f32(rng, 2, 3, 5)), q),
            outcome(F.scaled_dot_product_attention, q, q, tt.Tensor(_f32(rng, 2, 5, 4))),
            outcome(F.scaled_dot_product_attention, q, q, q, attn_mask=_mask(rng, 3, 3),
                    is_causal=True),
            outcome(F.scaled_dot_product_attention, q, q, q),
            q.numpy()]  # what this variant drew: no fixed answer fits every variant


# ----------------------------------------------------------------------------- heads (4)
@case(unit=HEADS, points=4,
      hint="split_heads: reshape (..., T, E) to (..., T, h, E/h), then swap the T and h axes; "
           "merge_heads undoes it; gradients flow through both.",
      stated={"split_heads": (
                  "``(..., T, E)`` -> ``(..., num_heads, T, E // num_heads)``: one reshape, one transpose.",
                  "``x.reshape(*lead, t, num_heads, head_dim)`` — the last axis is cut into heads.",
                  "Use the Tensor's own ``reshape`` and ``transpose`` (here and in ``merge_heads``), so gradients flow back through both functions.",
              ),
              "merge_heads": "``(..., h, T, hs)`` -> ``(..., T, h * hs)``: the inverse of ``split_heads``."})
def split_and_merge_heads(tt, rng):
    A = _att(tt)
    x = tt.Tensor(_f32(rng, 2, 5, 12), requires_grad=True)
    heads = A.split_heads(x, 3)
    un = A.split_heads(tt.Tensor(_f32(rng, 4, 6)), 2)
    deep = A.split_heads(tt.Tensor(_f32(rng, 2, 2, 3, 8)), 4)
    merged = A.merge_heads(heads)
    grads = _grads(tt, rng, A.merge_heads(A.split_heads(x, 4) * tt.Tensor(_f32(rng, 2, 4, 5, 3))),
                   [x])
    return [heads.numpy(), un.numpy(), tuple(deep.shape), merged.numpy(),
            A.merge_heads(tt.Tensor(_f32(rng, 3, 2, 4, 5))).numpy(),
            A.merge_heads(tt.Tensor(_f32(rng, 2, 3, 4))).numpy(), grads]


# ----------------------------------------------------------------------------- MHA (18)
@case(unit=MHA_INIT, points=3,
      hint="MultiheadAttention.__init__: register in_proj_weight (3E, E), in_proj_bias (3E,), "
           "out_proj (Linear) in that order; draw out_proj first, then Xavier-uniform "
           "in_proj_weight with bound sqrt(6/(E + 3E)); zero both biases.",
      stated={"MultiheadAttention.__init__": (
                  "If ``embed_dim % num_heads`` is not 0, raise ``ValueError(",
                  "Store ``embed_dim``, ``num_heads``, ``dropout``, ``batch_first`` and ``head_dim = embed_dim // num_heads``.",
                  'with ``bias``, else ``self.register_parameter("in_proj_bias", None)``; then ``self.out_proj = Linear(E, E, bias=bias)`` (it draws its own weights).',
                  "Xavier-uniform for the packed weight, drawn after ``out_proj``: ``bound = math.sqrt(6.0 / (E + 3 * E))`` and ``self.in_proj_weight.data[...] = default_generator().uniform(-bound, bound, (3E, E))``.",
                  "With ``bias``: ``out_proj.bias`` is set to zeros (``in_proj_bias`` already is).",
              ),
              "MultiheadAttention": "(PyTorch's default). Keyword-only",
              "test:test_multihead_parameters_and_init": "the default is PyTorch's, batch_first=False"})
def mha_parameters_from_seed(tt, rng):
    nn = tt.nn
    _seed(tt, rng)
    m = nn.MultiheadAttention(8, 2)
    nb = nn.MultiheadAttention(6, 3, bias=False)
    return [[(n, tuple(p.shape)) for n, p in m.named_parameters()],
            m.in_proj_weight.numpy(), m.out_proj.weight.numpy(), m.in_proj_bias.numpy(),
            m.out_proj.bias.numpy(), [n for n, _ in nb.named_parameters()],
            nb.in_proj_bias is None, bool(m.batch_first), m.head_dim, m.num_heads,
            outcome(nn.MultiheadAttention, 10, 4)]


@case(unit=MHA_MASKS, points=3,
      hint="MultiheadAttention masks: boolean True = IGNORE (-inf), float masks are added; "
           "attn_mask (L, S) or (N*h, L, S) -> (N, h, L, S); key_padding_mask (N, S) -> (N, 1, 1, "
           "S) (any shape that broadcasts to (N, h, L, S) is fine); wrong shapes raise "
           "RuntimeError.",
      stated={"MultiheadAttention._merge_masks": (
                  "One additive bias broadcastable to ``(batch, h, query_len, key_len)``, or None.",
                  "Boolean masks here mean **True = ignore** (PyTorch's ``MultiheadAttention``); float masks are added as they are.",
                  "RuntimeError: a mask has the wrong shape",
                  "a 2-D mask must be ``(query_len, key_len)``; a 3-D mask must be ``(batch * h, query_len, key_len)`` and is reshaped to ``(batch, h, query_len, key_len)``; otherwise raise ``RuntimeError``.",
                  "For ``key_padding_mask``: it must be ``(batch, key_len)``; convert the same way and reshape to ``(batch, 1, 1, key_len)``",
                  "Return the sum of what was given (or the one given, or None).",
              )})
def mha_merge_masks(tt, rng):
    m = tt.nn.MultiheadAttention(4, 2)
    n, lq, lk = 2, 3, 4
    kpm = _mask(rng, n, lk, p=0.7)
    am2 = _mask(rng, lq, lk, p=0.7)
    am3 = _f32(rng, n * 2, lq, lk)
    fk = _f32(rng, n, lk)
    full = (n, 2, lq, lk)
    return [_broadcast(m._merge_masks(kpm, None, n, lq, lk, np.float32), full),
            _broadcast(m._merge_masks(None, am2, n, lq, lk, np.float32), full),
            _broadcast(m._merge_masks(None, am3, n, lq, lk, np.float64), full),
            _broadcast(m._merge_masks(tt.Tensor(fk), tt.Tensor(am2), n, lq, lk, np.float32),
                       full),
            m._merge_masks(None, None, n, lq, lk, np.float32),
            outcome(m._merge_masks, None, _mask(rng, lk, lq), n, lq, lk, np.float32),
            outcome(m._merge_masks, _mask(rng, n, lq), None, n, lq, lk, np.float32),
            outcome(m._merge_masks, None, _mask(rng, n, lq, lk), n, lq, lk, np.float32)]


@case(unit=MHA, points=3, rtol=GRAD_RTOL, atol=GRAD_ATOL,
      hint="MultiheadAttention.forward: self-attention: project with in_proj, split heads, attend "
           "with scale 1/sqrt(head_dim), merge, out_proj; weights averaged over heads unless "
           "average_attn_weights=False; need_weights=False gives (out, None). A query with no "
           "allowed key: NaN with need_weights=True (plain softmax) and in PyTorch's fused "
           "inference path, zeros on the SDPA path.",
      stated={"MultiheadAttention.forward": (
                  "weights ``(N, L, S)`` (averaged over heads) or ``(N, h, L, S)``, or None with ``need_weights=False``.",
                  "``scale = 1 / sqrt(hs)``.",
                  "``weights = softmax(scores, dim=-1)`` (module 02: a fully masked row is NaN, as in PyTorch)",
                  "Otherwise ``out = _ScaledDotProductAttentionFn.apply(q, k, v, bias=bias, scale=scale, dropout_p=p)`` and ``weights = None``.",
                  "``out = self.out_proj(merge_heads(out))``",
                  "Average the weights over heads (``mean(dim=1)``) if ``average_attn_weights``",
              ),
              "MultiheadAttention._uses_fused_inference": "so a fully masked query row is NaN there even with ``need_weights=False``.",
              "scaled_dot_product_attention": "Rows with no allowed key are 0"})
def mha_self_attention_forward(tt, rng):
    m = _mha(tt, rng, 8, 2)
    x = tt.Tensor(_f32(rng, 3, 5, 8))
    out, w = m(x, x, x)
    _, per_head = m(x, x, x, average_attn_weights=False)
    fused, none = m(x, x, x, need_weights=False)
    blind = _mask(rng, 5, 5, p=0.5)
    blind[int(rng.integers(5))] = True  # that query may attend to nothing
    nan_out, nan_w = m(x, x, x, attn_mask=blind)
    zero_out, _ = m(x, x, x, attn_mask=blind, need_weights=False)
    m.eval()
    with tt.no_grad():
        inference, _ = m(x, x, x, attn_mask=blind, need_weights=False)
    return [out.numpy(), w.numpy(), per_head.numpy(), fused.numpy(), none is None,
            nan_out.numpy(), nan_w.numpy(), zero_out.numpy(), inference.numpy()]


@case(unit=MHA, points=3, rtol=GRAD_RTOL, atol=GRAD_ATOL,
      hint="MultiheadAttention.forward: cross-attention (query != key): each input gets its third "
           "of in_proj_weight; key_padding_mask True marks padding keys; bool attn_mask True "
           "forbids a pair.",
      stated={"MultiheadAttention._in_projection": "Otherwise each input gets its third.",
              "MultiheadAttention.forward": (
                  "``packed = query is key and key is value`` (before any reshape!).",
                  "``bias = self._merge_masks(key_padding_mask, attn_mask, N, L, S, q.dtype)``",
              ),
              "MultiheadAttention._merge_masks": "Boolean masks here mean **True = ignore**",
              "test:test_multihead_forward_paths_and_masks": "key_padding_mask: True marks padding keys"})
def mha_cross_attention_with_masks(tt, rng):
    m = _mha(tt, rng, 12, 3)
    q, k, v = (tt.Tensor(_f32(rng, *s)) for s in [(2, 4, 12), (2, 6, 12), (2, 6, 12)])
    kpm = np.zeros((2, 6), dtype=bool)
    kpm[1, 4:] = True
    am = np.triu(np.ones((4, 6), dtype=bool), k=3)
    out, w = m(q, k, v, key_padding_mask=kpm, attn_mask=am)
    out2, _ = m(q, k, v, key_padding_mask=kpm, attn_mask=am, need_weights=False)
    f_out, _ = m(q, k, v, attn_mask=tt.Tensor(_f32(rng, 6, 4, 6)), need_weights=False)
    memory, _ = m(q, k, k)  # encoder-decoder: key is value, query differs
    same_qk, _ = m(k, k, v)  # query is key, value differs: not packed self-attention
    return [out.numpy(), w.numpy(), out2.numpy(), f_out.numpy(), memory.numpy(),
            same_qk.numpy()]


@case(unit=MHA, points=3, rtol=GRAD_RTOL, atol=GRAD_ATOL,
      hint="MultiheadAttention.forward: every parameter and input gets its gradient through both "
           "paths (need_weights True and False): use Tensor operations end to end.",
      stated={"MultiheadAttention.forward": "Use Tensor operations so every parameter gets its gradient.",
              "_ScaledDotProductAttentionFn.backward": "Return ``(dq, dk, dv)``."})
def mha_backward(tt, rng):
    out = []
    for need in (True, False):
        m = _mha(tt, rng, 8, 4)
        x = tt.Tensor(_f32(rng, 2, 3, 8), requires_grad=True)
        y, _ = m(x, x, x, need_weights=need, attn_mask=np.triu(np.ones((3, 3), bool), k=1))
        grads = _grads(tt, rng, y, [x])
        out.append(grads + [p.grad.numpy() if p.grad is not None else None
                            for p in m.parameters()])
    return out


@case(unit=MHA, points=2, rtol=GRAD_RTOL, atol=GRAD_ATOL,
      hint="MultiheadAttention.forward: batch_first=False: inputs and output are (L, N, E), "
           "weights stay (N, L, S); 2-D inputs (L, E) are one unbatched sequence.",
      stated={"MultiheadAttention.forward": "With ``batch_first=False`` inputs and output are ``(L, N, E)`` (weights stay ``(N, ...)``). 2-D inputs ``(L, E)`` are one unbatched sequence (``key_padding_mask (S,)``; weights ``(L, S)`` or ``(h, L, S)``).",
              "MultiheadAttention": "batch_first: inputs are ``(N, L, E)`` when True and ``(L, N, E)`` when False"})
def mha_batch_first_false_and_unbatched(tt, rng):
    m = _mha(tt, rng, 8, 2, batch_first=False)
    x = tt.Tensor(_f32(rng, 5, 2, 8))
    out, w = m(x, x, x)
    q, kv = tt.Tensor(_f32(rng, 3, 8)), tt.Tensor(_f32(rng, 4, 8))
    uo, uw = m(q, kv, kv, key_padding_mask=np.array([False, True, False, False]),
               average_attn_weights=False)
    return [out.numpy(), w.numpy(), uo.numpy(), uw.numpy()]


def _mha_dropout_check(got, expected):
    """Parent-side: two training-mode calls differ, weights are dropped and rescaled, eval is
    deterministic and equals the reference's, the is_causal error is the reference's."""
    if not (isinstance(got, dict) and set(got) == set(expected)):
        return False, "the result is not the mapping the test builds"
    a, b = got["train"]
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape):
        return False, "training-mode outputs are missing"
    if np.allclose(a, b):
        return False, ("two training-mode calls on the same input gave the same output: "
                       "dropout is not applied")
    if not 0.93 < float(got["row_sum_mean"]) < 1.07:
        return False, (f"the returned attention weights' rows sum to {got['row_sum_mean']:.3f} "
                       "on average in training mode, not about 1: the weights returned are the "
                       "dropped-out ones, kept ones scaled by 1 / (1 - p)")
    # weights averaged over 2 heads are 0 where both heads dropped them: p**2 = 0.25
    if not 0.2 < float(got["zero_share"]) < 0.3:
        return False, (f"{got['zero_share']:.3f} of the returned weights (averaged over 2 "
                       "heads, p = 0.5) are zero, not about p**2 = 0.25: the weights returned "
                       "are the dropped-out ones")
    c, d = got["eval"]
    if not (isinstance(d, np.ndarray) and isinstance(c, np.ndarray) and c.shape == d.shape):
        return False, "the eval-mode outputs are missing"
    if not np.allclose(c, d, atol=1e-5):
        return False, (f"in eval() mode the explicit-weights path (need_weights=True) and the "
                       f"fused path (need_weights=False) differ by "
                       f"{float(np.max(np.abs(c - d))):.3g}")
    return compare_values([c, got["causal"]], [expected["eval"][0], expected["causal"]],
                          atol=1e-6)


@case(unit=MHA, points=1, check=_mha_dropout_check,
      hint="MultiheadAttention.forward: dropout on the attention weights in training mode "
           "only, and the weights returned are the dropped-out ones (kept ones times 1 / (1 - "
           "p)); in eval() both paths give the same output; is_causal without attn_mask raises "
           "RuntimeError.",
      stated={"MultiheadAttention.forward": (
                  "Dropout (training mode, ``dropout > 0``) acts on the attention weights, and the weights returned are those dropped-out ones, as PyTorch returns them: zeros where a weight was dropped, kept ones scaled by ``1 / (1 - p)`` (a row sums to about 1 on average). In ``eval()`` mode there is no dropout and both paths give the same output.",
                  "``is_causal`` without ``attn_mask``: raise ``RuntimeError(",
              )})
def mha_dropout_and_causal_hint(tt, rng):
    m = _mha(tt, rng, 8, 2, dropout=0.5)
    x = tt.Tensor(_f32(rng, 2, 6, 8))
    a, _ = m(x, x, x)
    b, _ = m(x, x, x)
    big = tt.Tensor(_f32(rng, 64, 8, 8))
    _, w = m(big, big, big)  # kept weights are scaled by 1/(1 - p): rows still sum to ~1
    row_sums = w.numpy().sum(-1)
    m.eval()
    c, _ = m(x, x, x)
    d, _ = m(x, x, x, need_weights=False)
    return {"train": [a.numpy().copy(), b.numpy().copy()],
            "row_sum_mean": float(row_sums.mean()), "zero_share": float((w.numpy() == 0).mean()),
            "eval": [c.numpy().copy(), d.numpy().copy()],
            "causal": outcome(m, x, x, x, is_causal=True)}
