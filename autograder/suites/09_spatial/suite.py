"""Hidden suite · module 09 (spatial). Cases are probes; the trusted parent compares.

Each case computes plain data with the package under test ``tt`` (convolutions by loops and
by im2col, the window helpers, pooling and batch norm, their gradients under a random
upstream gradient, running statistics); the expected values are the same cases run against
tinytorch_ref. Points sum to module 09's ``points`` (50).
"""

from __future__ import annotations

import importlib

import numpy as np

from autograder.suite import Suite, outcome

suite = Suite(module="09_spatial", version="2027.3")
case = suite.case
CONV_LOOPS = suite.unit("conv2d_loops", "conv2d_loops")
WINDOWS = suite.unit("sliding_windows", "sliding_windows")
IM2COL = suite.unit("im2col", "im2col", uses=(WINDOWS,))
COL2IM = suite.unit("col2im", "col2im")
CONV = suite.unit("conv2d", "_Conv2dFn", uses=(WINDOWS, IM2COL, COL2IM))
CONV_LAYER = suite.unit("Conv2d", "Conv2d", uses=(CONV,))
MAX_POOL = suite.unit("max_pool2d", "_MaxPool2dFn", uses=(WINDOWS, IM2COL, COL2IM))
AVG_POOL = suite.unit("avg_pool2d", "_AvgPool2dFn", uses=(WINDOWS, IM2COL, COL2IM))
BATCH_NORM = suite.unit("batch_norm", "_BatchNormFn", "batch_norm")
BATCH_NORM_LAYER = suite.unit("BatchNorm2d", "BatchNorm2d", uses=(BATCH_NORM,))

# Sums over windows and batches may be ordered differently by a correct implementation.
RTOL, ATOL = 1e-4, 1e-5


def _spatial(tt):
    """The package's module 09 file (``tt.spatial``)."""
    return importlib.import_module(f"{tt.__name__}.spatial")


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _grads(tt, rng, fn, *arrays):
    """Output and leaf gradients of ``fn(*leaves)`` under a random upstream gradient."""
    leaves = [tt.Tensor(a.copy(), requires_grad=True) for a in arrays]
    out = fn(*leaves)
    upstream = rng.standard_normal(out.shape).astype(out.numpy().dtype)
    out.backward(tt.Tensor(upstream))
    return [out.numpy()] + [None if t.grad is None else np.array(t.grad.numpy())
                            for t in leaves]


def _relu_ties(rng, *shape):
    """Rounded, rectified values: many tied zeros and repeated maxima (as after a ReLU)."""
    return np.maximum(np.round(rng.standard_normal(shape), 1), 0.0).astype(np.float32)


# ----------------------------------------------------------------------------- loops (5)
@case(unit=CONV_LOOPS, points=3, rtol=RTOL, atol=ATOL,
      hint="conv2d_loops: out[b, k, i, j] = sum(x_pad[b, group of k, i*sh + u*dh, j*sw + v*dw] "
           "* w[k]) + bias[k]; stride, padding and dilation may differ along H and W; filter k "
           "reads the channels of group k // (O / groups).",
      stated={"conv2d_loops": (
                  "stride, padding, dilation: an int or a pair ``(along H, along W)``.",
                  "groups: split the channels and the filters into this many independent convolutions.",
                  "``(N, O, H_out, W_out)`` with ``H_out = out_size(H, kh, sh, ph, dh)``",
                  "filter ``k`` reads channels ``g*cg : (g+1)*cg`` with ``g = k // per_group``; ``patch = xp[b, g*cg:(g+1)*cg, i*sh : i*sh + dh*(kh-1) + 1 : dh, j*sw : j*sw + dw*(kw-1) + 1 : dw]``",
                  "Add ``bias[k]`` to every output of filter ``k``",
                  "when a bias is given.",
              )})
def conv2d_loops_values(tt, rng):
    sp = _spatial(tt)
    x, w, b = _f32(rng, 2, 3, 6, 5), _f32(rng, 4, 3, 3, 2), _f32(rng, 4)
    return [sp.conv2d_loops(x, w, b, stride=(2, 1), padding=(1, 0)),
            sp.conv2d_loops(x, w),
            sp.conv2d_loops(x[:1], w[:2], None, 1, 1),
            sp.conv2d_loops(x, _f32(rng, 6, 1, 2, 2), None, 1, (1, 0), (2, 1), 3)]


@case(unit=CONV_LOOPS, points=2, rtol=RTOL, atol=ATOL,
      hint="conv2d_loops: H_out = (H + 2p - kh) // s + 1; pad with zeros first; keep the dtype "
           "(float64 stays float64).",
      stated={"conv2d_loops": (
                  "``(N, O, H_out, W_out)`` with ``H_out = out_size(H, kh, sh, ph, dh)`` (same for W), in ``x``'s dtype.",
                  "``xp = _pad(x, (ph, pw))``",
              ),
              "out_size": "``(size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1``."})
def conv2d_loops_stride_padding_float64(tt, rng):
    sp = _spatial(tt)
    x = rng.standard_normal((1, 2, 7, 8))
    w = rng.standard_normal((3, 2, 3, 3))
    out = sp.conv2d_loops(x, w, rng.standard_normal(3), 2, 2)
    return [out, str(out.dtype), sp.conv2d_loops(x, w, None, 3, 0)]


# ----------------------------------------------------------------------------- windows (9)
@case(unit=WINDOWS, points=3,
      hint="sliding_windows: as_strided with shape (N, C, kh, kw, H_out, W_out) and strides (sN, "
           "sC, sH*dh, sW*dw, sH*sh, sW*sw) taken from x.strides (bytes); writeable=False.",
      stated={"sliding_windows": (
                  "A read-only view of every ``kh × kw`` window of ``x``, without copying.",
                  "A view of shape ``(N, C, kh, kw, H_out, W_out)`` with ``view[n, c, u, v, i, j] == x[n, c, i*sh + u*dh, j*sw + v*dw]``.",
                  "writeable=False)``.",
                  "taking them from ``x.strides`` keeps the view right for any dtype and for inputs that are themselves views.",
              )})
def sliding_windows_view(tt, rng):
    sp = _spatial(tt)
    x = _f32(rng, 2, 3, 7, 6)
    win = sp.sliding_windows(x, (3, 2), (2, 2))
    base = rng.standard_normal((2, 3, 6, 9))
    tview = base.transpose(0, 1, 3, 2)[:, :, ::2]  # a non-contiguous float64 view (2, 3, 5, 6)
    win2 = sp.sliding_windows(tview, (2, 3), (1, 3))
    dil = sp.sliding_windows(x, (2, 2), (1, 2), (3, 2))
    return [tuple(win.shape), np.array(win), bool(np.shares_memory(win, x)),
            bool(win.flags.writeable), tuple(win2.shape), np.array(win2),
            bool(np.shares_memory(win2, base)), tuple(dil.shape), np.array(dil)]


@case(unit=IM2COL, points=3,
      hint="im2col: reshape the windows view to (N, C*kh*kw, H_out*W_out): column i*W_out + j is "
           "window (i, j) flattened in (c, u, v) order.",
      stated={"im2col": (
                  "``cols`` with ``cols[n, (c*kh + u)*kw + v, i*W_out + j] == x[n, c, i*sh + u*dh, j*sw + v*dw]`` (a new, contiguous array).",
                  "Return ``win.reshape(n, c * kh * kw, ho * wo)``: merging the axes copies each window into its column.",
              )})
def im2col_layout(tt, rng):
    sp = _spatial(tt)
    x = _f32(rng, 2, 3, 6, 7)
    cols = sp.im2col(x, (3, 2), (2, 1))
    small = sp.im2col(rng.standard_normal((1, 1, 4, 4)), (2, 2), (2, 2))
    return [cols, bool(cols.flags.c_contiguous), small, str(small.dtype)]


@case(unit=COL2IM, points=3, rtol=RTOL, atol=ATOL,
      hint="col2im adds (+=) every column entry back into its pixel, looping over the kh*kw "
           "kernel offsets; pixels in no window stay 0.",
      stated={"col2im": (
                  "``(N, C, H, W)`` in ``cols``' dtype; a pixel covered by ``k`` windows is the sum of its ``k`` entries (a pixel in no window gets 0).",
                  "kernel_size, stride, dilation: as in ``im2col``.",
              )})
def col2im_values(tt, rng):
    sp = _spatial(tt)
    shape = (2, 2, 7, 6)  # 3x2 kernel, stride 2x3: the last row is in no window
    c = _f32(rng, 2, 2 * 3 * 2, 3 * 2)
    ones = np.ones((1, 9, 16), dtype=np.float32)
    return [sp.col2im(c, shape, (3, 2), (2, 3)),
            sp.col2im(ones, (1, 1, 6, 6), (3, 3), (1, 1)),
            sp.col2im(_f32(rng, 1, 4, 9), (1, 1, 4, 4), (2, 2), (1, 1)),
            sp.col2im(_f32(rng, 1, 8, 15), (1, 2, 7, 6), (2, 2), (1, 2), (2, 1))]


# ----------------------------------------------------------------------------- conv2d (15)
CONV_CONFIGS = [  # (x shape, w shape, stride, padding, bias, dilation, groups)
    ((2, 3, 7, 6), (4, 3, 3, 3), 1, 0, True, 1, 1),
    ((2, 3, 8, 7), (5, 3, 3, 2), 2, 1, True, 1, 1),
    ((1, 2, 9, 6), (3, 2, 2, 3), (2, 1), (1, 0), False, 1, 1),
    ((2, 4, 7, 6), (6, 2, 3, 2), 1, "same", True, (2, 1), 2),
    ((1, 3, 8, 7), (3, 1, 2, 3), 2, 1, False, 2, 3),
    ((3, 1, 5, 5), (2, 1, 5, 5), 1, 2, True, 1, 1),
]


@case(unit=CONV, points=4, rtol=RTOL, atol=ATOL,
      hint="conv2d: cols = im2col(padded x) reshaped to (N, G, K, L); out = weight.reshape(G, "
           "O/G, K) @ cols (+ bias) -> (N, O, L) -> (N, O, H_out, W_out); dilation goes to "
           "im2col.",
      stated={"conv2d": (
                  "input: ``(N, C, H, W)``, or ``(C, H, W)`` for one unbatched image.",
                  "padding: an int, a pair, ``'valid'`` (none) or ``'same'`` (``H_out = H``; stride 1).",
                  "groups: split channels and filters into this many independent convolutions.",
                  "``(N, O, H_out, W_out)`` (or ``(O, H_out, W_out)`` for an unbatched input).",
              ),
              "_Conv2dFn.forward": (
                  "``cols = im2col(xp, (kh, kw), stride, dilation)``",
                  "``out = np.matmul(weight.reshape(groups, o // groups, k), cols)``",
                  "if ``bias`` is not None: ``out += bias.reshape(1, o, 1)``.",
              ),
              "test:test_conv2d_dilation_groups_and_same_padding": "padding='same' keeps 7x6"})
def conv2d_forward_configs(tt, rng):
    F = tt.nn.functional
    outs = []
    for xs, ws, s, p, bias, d, g in CONV_CONFIGS:
        x, w = tt.Tensor(_f32(rng, *xs)), tt.Tensor(_f32(rng, *ws))
        b = tt.Tensor(_f32(rng, ws[0])) if bias else None
        outs.append(F.conv2d(x, w, b, stride=s, padding=p, dilation=d, groups=g).numpy())
    unbatched = F.conv2d(tt.Tensor(_f32(rng, 3, 5, 5)), tt.Tensor(_f32(rng, 2, 3, 3, 3)))
    return outs + [unbatched.numpy()]


@case(unit=CONV, points=5, rtol=RTOL, atol=ATOL,
      hint="conv2d: dw = sum over n of g @ cols^T; dcols = W2^T @ g, then col2im (with the "
           "dilation) and crop the padding; group by group; db = g summed over n and positions.",
      stated={"_Conv2dFn.backward": (
                  "``dw = np.matmul(g, cols.transpose(0, 1, 3, 2)).sum(axis=0)``",
                  "``dx = _crop(col2im(dcols, ctx.x_pad_shape, (kh, kw), ctx.stride, ctx.dilation), ctx.padding)``.",
                  "Return ``(dx, dw)``, or ``(dx, dw, grad.sum(axis=(0, 2, 3)))`` when ``ctx.has_bias``.",
              ),
              "test:test_conv2d_gradients_match_finite_differences": "conv2d backward disagrees with finite differences"})
def conv2d_backward_grads(tt, rng):
    F = tt.nn.functional
    out = []
    # the last: stride 1, one group, dilated and padded (the reference's col2im-free path)
    for xs, ws, s, p, bias, d, g in CONV_CONFIGS[:5] + [((2, 2, 7, 6), (3, 2, 3, 2), 1, (2, 1),
                                                         True, (2, 3), 1)]:
        arrays = [_f32(rng, *xs), _f32(rng, *ws)] + ([_f32(rng, ws[0])] if bias else [])
        out.append(_grads(tt, rng, lambda *t, s=s, p=p, d=d, g=g: F.conv2d(
            *t, stride=s, padding=p, dilation=d, groups=g), *arrays))
    return out


@case(unit=CONV, points=2, rtol=RTOL, atol=ATOL,
      hint="conv2d: when the input needs no gradient return None for dx, but still return dweight "
           "(and dbias): the first layer of a CNN trains this way.",
      stated={"_Conv2dFn.backward": (
                  "``dx = None`` unless ``ctx.needs_input_grad``",
                  "Return ``(dx, dw)``, or ``(dx, dw, grad.sum(axis=(0, 2, 3)))`` when ``ctx.has_bias``.",
              )})
def conv2d_weight_grad_without_input_grad(tt, rng):
    F = tt.nn.functional
    x = tt.Tensor(_f32(rng, 2, 1, 6, 6))
    w = tt.Tensor(_f32(rng, 3, 1, 3, 3), requires_grad=True)
    b = tt.Tensor(_f32(rng, 3), requires_grad=True)
    y = F.conv2d(x, w, b, padding=1)
    y.backward(tt.Tensor(_f32(rng, *y.shape)))
    return [x.grad is None, w.grad.numpy(), b.grad.numpy()]


@case(unit=CONV_LAYER, points=3,
      hint="Conv2d: fan_in = in_channels // groups * kh * kw, bound = 1/sqrt(fan_in); weight (O, "
           "C // groups, kh, kw) then bias (O,) drawn from default_generator(); float32.",
      stated={"Conv2d.__init__": (
                  "Store ``in_channels``, ``out_channels``, ``groups``, ``padding_mode`` and ``kernel_size``, ``stride``, ``dilation`` as pairs (``_pair``); ``padding`` as a pair too, or as given when it is a string (``'same'``, ``'valid'``).",
                  "``fan_in = in_channels // groups * kh * kw``; ``bound = 1 / math.sqrt(fan_in)``; ``rng = default_generator()``.",
                  "``self.weight = Parameter(rng.uniform(-bound, bound, (out_channels, in_channels // groups, kh, kw)).astype(np.float32))``.",
                  'With ``bias``: ``(out_channels,)`` from the same distribution, drawn *after* the weight; otherwise ``self.register_parameter("bias", None)``.',
              ),
              "Conv2d": "bias: whether to learn a per-filter bias (``self.bias`` is None otherwise)."})
def conv2d_layer_init(tt, rng):
    nn = tt.nn
    tt.manual_seed(int(rng.integers(2**31)))
    c, o, k = int(rng.integers(1, 5)), int(rng.integers(2, 6)), int(rng.integers(1, 4))
    a = nn.Conv2d(c, o, k)
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    sh, ph = int(rng.integers(1, 3)), (int(rng.integers(0, 2)), int(rng.integers(0, 2)))
    b = nn.Conv2d(int(rng.integers(1, 4)), int(rng.integers(2, 6)), (kh, kw), stride=sh,
                  padding=ph, bias=False)
    big = nn.Conv2d(int(rng.integers(8, 17)), 32, 3)
    groups = int(rng.integers(2, 4))
    grouped = nn.Conv2d(2 * groups, 3 * groups, 3, groups=groups, dilation=2, padding="same")
    return [a.weight.numpy(), a.bias.numpy(), tuple(b.weight.shape), b.bias is None,
            [n for n, _ in b.named_parameters()], b.kernel_size, b.stride, b.padding,
            float(np.abs(big.weight.numpy()).max()), str(a.weight.dtype),
            bool(a.weight.requires_grad), grouped.weight.numpy(), grouped.bias.numpy(),
            grouped.padding, grouped.dilation, grouped.groups]


@case(unit=CONV_LAYER, points=1, rtol=RTOL, atol=ATOL,
      hint="Conv2d.forward calls conv2d with the layer's weight, bias, stride and padding; a "
           "channel mismatch is a RuntimeError.",
      stated={"Conv2d._conv_forward": "``conv2d`` with this layer's geometry",
              "conv2d": "RuntimeError: wrong number of dimensions, channel or group mismatch",
              "Conv2d.__init__": "``fan_in = in_channels // groups * kh * kw``; ``bound = 1 / math.sqrt(fan_in)``; ``rng = default_generator()``."})
def conv2d_layer_forward_and_errors(tt, rng):
    nn = tt.nn
    tt.manual_seed(int(rng.integers(0, 1000)))
    conv = nn.Conv2d(2, 3, 3, stride=2, padding=1)
    x = tt.Tensor(_f32(rng, 2, 2, 6, 5))
    return [conv(x).numpy(), outcome(conv, tt.Tensor(_f32(rng, 1, 3, 6, 6)))]


# ----------------------------------------------------------------------------- pooling (10)
POOL_CONFIGS = [  # (x shape, kernel, stride, padding, ceil_mode)
    ((2, 3, 8, 8), 2, None, 0, False),
    ((2, 2, 7, 9), 3, 2, 1, False),
    ((1, 2, 6, 6), 3, 1, 0, False),
    ((1, 2, 8, 7), (2, 3), (2, 1), (1, 1), False),
    ((2, 2, 7, 8), 3, 2, 1, True),
]


@case(unit=MAX_POOL, points=3,
      hint="max_pool2d: max over each window (stride defaults to kernel_size; padding and the "
           "ceil_mode extra count as -inf, or the dtype's minimum for integers): np.maximum over "
           "the kh*kw offsets of the (dilated) windows view.",
      stated={"max_pool2d": (
                  "``stride`` defaults to ``kernel_size``; ``padding`` (at most half the kernel) pads with ``-inf``; ``dilation`` spreads the taps; ``ceil_mode`` rounds the output size up.",
                  "Input ``(N, C, H, W)`` or ``(C, H, W)``, float or integer.",
              ),
              "_lowest": "The value max pooling pads with: ``-inf``, or an integer dtype's smallest value.",
              "_MaxPool2dFn.forward": (
                  "``xp = _pad(x, padding, value=_lowest(x.dtype), extra=extra)``",
                  "``out = win[:, :, 0, 0].copy()``; for every offset ``(u, v)``: ``np.maximum(out, win[:, :, u, v], out=out)``.",
              ),
              "MaxPool2d": "``torch.nn.MaxPool2d(kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False)``"})
def max_pool_forward(tt, rng):
    F = tt.nn.functional
    outs = [F.max_pool2d(tt.Tensor(_f32(rng, *xs)), k, s, p, ceil_mode=c).numpy()
            for xs, k, s, p, c in POOL_CONFIGS]
    layer = tt.nn.MaxPool2d(2)
    dilated = tt.nn.MaxPool2d(3, 2, 1, dilation=2, ceil_mode=True)
    ints = F.max_pool2d(tt.Tensor(rng.integers(-9, 9, (1, 2, 5, 5))), 2, 2, 1)
    return outs + [layer(tt.Tensor(_f32(rng, 1, 3, 5, 5))).numpy(),
                   dilated(tt.Tensor(_f32(rng, 1, 2, 7, 8))).numpy(), ints.numpy(),
                   str(ints.dtype)]


@case(unit=MAX_POOL, points=4,
      hint="max_pool2d: the whole gradient of a window goes to its FIRST maximum in row-major "
           "order (ties after a ReLU are common); overlapping windows add up.",
      stated={"_MaxPool2dFn.backward": (
                  "``dx``: each window's gradient goes to its first maximum (row-major order)",
                  "``hit = ~won & (win[:, :, u, v] == out)``",
                  "``dxp = col2im(dwin.reshape(n, c * kh * kw, ho * wo), ctx.x_pad_shape, (kh, kw), ctx.stride, ctx.dilation)``",
              ),
              "test:test_max_pool_ties_pass_the_gradient_once": "with a tie, the first entry in row-major order wins"})
def max_pool_backward(tt, rng):
    F = tt.nn.functional
    out = []
    for xs, k, s, p, c in POOL_CONFIGS:
        for make in (_f32, _relu_ties):
            out.append(_grads(tt, rng, lambda t, k=k, s=s, p=p, c=c: F.max_pool2d(
                t, k, s, p, ceil_mode=c), make(rng, *xs)))
    out.append(_grads(tt, rng, lambda t: F.max_pool2d(t, 3, 2, 1, dilation=(2, 1)),
                      _relu_ties(rng, 1, 2, 7, 8)))
    return out


@case(unit=AVG_POOL, points=3, rtol=RTOL, atol=ATOL,
      hint="avg_pool2d: mean of each window (zero padding counts, divide by kh*kw, or by the "
           "pixels counted with count_include_pad=False or ceil_mode, or by divisor_override); "
           "backward spreads grad / divisor to every entry, then col2im.",
      stated={"avg_pool2d": "``stride`` defaults to ``kernel_size``; zero padding counts in the mean unless ``count_include_pad=False``; ``divisor_override`` replaces the divisor; ``ceil_mode`` rounds the output size up (the cut-short windows divide by what they cover). The mean of integers is truncated towards zero.",
              "_AvgPool2dFn.forward": "``divisor = _avg_divisor(x.shape, kernel_size, stride, padding, extra, count_include_pad, divisor_override, x.dtype)``",
              "_divide": "``total / divisor`` in ``total``'s dtype; integers are truncated towards zero",
              "_AvgPool2dFn.backward": (
                  "``dx``: every entry of a window receives ``grad / divisor``.",
                  "``dxp = col2im(dwin.reshape(n, c * kh * kw, ho * wo), ctx.x_pad_shape, (kh, kw), ctx.stride)``",
              ),
              "AvgPool2d": "``torch.nn.AvgPool2d(kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None)``"})
def avg_pool_forward_backward(tt, rng):
    F = tt.nn.functional
    out = [_grads(tt, rng, lambda t, k=k, s=s, p=p, c=c: F.avg_pool2d(t, k, s, p, c),
                  _f32(rng, *xs)) for xs, k, s, p, c in POOL_CONFIGS]
    out.append(_grads(tt, rng, lambda t: F.avg_pool2d(t, 3, 2, 1, True, False),
                      _f32(rng, 1, 2, 6, 7)))
    out.append(_grads(tt, rng, lambda t: F.avg_pool2d(t, 2, 1, 1, divisor_override=3),
                      _f32(rng, 1, 1, 4, 5)))
    ints = F.avg_pool2d(tt.Tensor(rng.integers(-9, 9, (1, 2, 4, 6))), 2, ceil_mode=True)
    return out + [tt.nn.AvgPool2d(2)(tt.Tensor(_f32(rng, 2, 1, 4, 6))).numpy(), ints.numpy(),
                  str(ints.dtype)]


# ----------------------------------------------------------------------------- batch norm (10)
@case(unit=BATCH_NORM, points=2, rtol=RTOL, atol=ATOL,
      hint="batch_norm: training: normalise each channel with its batch mean and biased variance "
           "over (N, H, W); dx = w*inv_std*(g - db/M - xhat*dw/M); one value per channel is a "
           "ValueError, two are enough.",
      stated={"batch_norm": (
                  "input: ``(N, C, *)``.",
                  "weight, bias: ``(C,)`` or None (scale 1, shift 0).",
                  "eps: added to the variance.",
                  "momentum: float = 0.1, eps: float = 1e-5",
                  "ValueError: training with one value per channel",
                  "``m = input.numel() // c``; ``m <= 1`` is a ``ValueError(",
                  "``mean = input.data.mean(axis=axes)``, ``var = input.data.var(axis=axes)``",
              ),
              "_BatchNormFn.backward": "``dx = scale * (grad - (db / m).reshape(shape) - xhat * (dw / m).reshape(shape))``.",
              "_BatchNormFn.forward": "``weight * (x - mean) / sqrt(var + eps) + bias``, per channel."})
def batch_norm_train_forward_backward(tt, rng):
    F = tt.nn.functional
    x = (_f32(rng, 4, 3, 3, 5) * 2.0 + 1.0).astype(np.float32)
    w, b = rng.uniform(0.5, 2.0, 3).astype(np.float32), _f32(rng, 3)
    plain = _grads(tt, rng, lambda t: F.batch_norm(t, None, None, training=True, eps=1e-3), x)
    affine = _grads(tt, rng, lambda t, g, h: F.batch_norm(t, None, None, g, h, training=True),
                    x, w, b)
    seq = _grads(tt, rng, lambda t: F.batch_norm(t, None, None, training=True),
                 _f32(rng, 6, 2, 4))
    c = int(rng.integers(1, 4))
    two = F.batch_norm(tt.Tensor(_f32(rng, 2, c, 1, 1)), None, None, training=True)
    one = outcome(F.batch_norm, tt.Tensor(_f32(rng, 1, c, 1, 1)), None, None, training=True)
    return [plain, affine, seq, two.numpy(), one]


@case(unit=BATCH_NORM, points=1, rtol=RTOL, atol=ATOL,
      hint="batch_norm(training=True) updates running_mean and running_var in place: (1 - "
           "momentum) * running + momentum * the batch statistic, the variance made unbiased (M / "
           "(M - 1)).",
      stated={"batch_norm": (
                  "running_mean, running_var: ``(C,)`` buffers, updated in place when ``training``",
                  "``running_mean.data[...] = (1 - momentum) * running_mean.data + momentum * mean``; if ``running_var`` is given: the same with ``var * m / (m - 1)``.",
              )})
def batch_norm_updates_running_stats(tt, rng):
    F = tt.nn.functional
    c = int(rng.integers(2, 5))
    rm = tt.Tensor(_f32(rng, c))
    rv = tt.Tensor(rng.uniform(0.5, 2.0, c).astype(np.float32))
    momentum = float(rng.uniform(0.05, 0.5))
    for _ in range(2):
        x = (_f32(rng, 3, c, 2, 2) * 2.0 + 1.0).astype(np.float32)
        F.batch_norm(tt.Tensor(x), rm, rv, training=True, momentum=momentum)
    return [rm.numpy().copy(), rv.numpy().copy()]


@case(unit=BATCH_NORM, points=1, rtol=1e-2, atol=1e-2,
      hint="batch_norm: the variance is the mean of (x - mean)**2 (np.var); E[x²] − E[x]² cancels "
           "away in float32 when the mean is large (values near 2000 that vary by about 1).",
      stated={"batch_norm": (
                  "``np.var`` subtracts the mean before squaring.",
                  "for float32 activations near 2000 that vary by about 1 it loses every digit of the variance (or makes it negative), where PyTorch stays exact.",
              )})
def batch_norm_large_mean_float32(tt, rng):
    F = tt.nn.functional
    c = int(rng.integers(2, 5))
    x = (rng.standard_normal((4, c, 3, 3)) * rng.uniform(0.5, 2.0)
         + rng.uniform(1e3, 4e3, (1, c, 1, 1))).astype(np.float32)
    rm = tt.Tensor(np.zeros(c, np.float32))
    rv = tt.Tensor(np.ones(c, np.float32))
    out = F.batch_norm(tt.Tensor(x), rm, rv, training=True, momentum=1.0)
    return [out.numpy(), rv.numpy().copy()]


@case(unit=BATCH_NORM, points=2, rtol=RTOL, atol=ATOL,
      hint="batch_norm: evaluation: normalise with running_mean/running_var (constants), so dx = "
           "grad * weight / sqrt(running_var + eps).",
      stated={"batch_norm": (
                  "required when not ``training``.",
                  "ValueError: training with one value per channel; evaluation without running stats.",
                  "Evaluation: both running buffers are required (``ValueError`` otherwise); ``mean, var = running_mean.data, running_var.data``.",
              ),
              "_BatchNormFn.backward": (
                  "If not ``ctx.batch_stats``: ``dx = grad * scale``.",
                  "``db = grad.sum(axis=axes)``; ``dw = (grad * xhat).sum(axis=axes)``",
              )})
def batch_norm_eval_forward_backward(tt, rng):
    F = tt.nn.functional
    rm = tt.Tensor(_f32(rng, 3))
    rv = tt.Tensor(rng.uniform(0.5, 2.0, 3).astype(np.float32))
    x = _f32(rng, 2, 3, 4, 4)
    w, b = rng.uniform(0.5, 2.0, 3).astype(np.float32), _f32(rng, 3)
    res = _grads(tt, rng, lambda t, g, h: F.batch_norm(t, rm, rv, g, h, training=False), x, w, b)
    return [res, rm.numpy(), rv.numpy(), outcome(F.batch_norm, tt.Tensor(x), None, None),
            outcome(F.batch_norm, tt.Tensor(x), rm, None), outcome(F.batch_norm, tt.Tensor(x), None, rv)]


@case(unit=BATCH_NORM_LAYER, points=2, rtol=RTOL, atol=ATOL,
      hint="BatchNorm2d: running = (1 - momentum) * running + momentum * batch stat, with the "
           "UNBIASED variance (M / (M - 1)); momentum=None averages cumulatively (factor 1 / "
           "num_batches_tracked); eval() uses the running stats.",
      stated={"BatchNorm2d.__init__": "eps: float = 1e-5, momentum: float | None = 0.1",
              "BatchNorm2d": (
                  "momentum: running-average factor, or None for a cumulative average.",
                  "keep ``running_mean`` (zeros), ``running_var`` (ones) and ``num_batches_tracked`` (int64 0) as buffers",
              ),
              "BatchNorm2d.forward": (
                  "When training with ``track_running_stats``: ``self.num_batches_tracked.data += 1``, and with ``momentum is None``: ``factor = 1.0 / float(self.num_batches_tracked.data)``.",
                  "``eval()`` must use the running statistics even for a batch of one image",
              ),
              "batch_norm": "the same with ``var * m / (m - 1)``."})
def batchnorm2d_running_stats(tt, rng):
    nn = tt.nn
    out = []
    for kwargs in ({}, {"momentum": None}, {"momentum": 0.25, "eps": 1e-3}):
        bn = nn.BatchNorm2d(3, **kwargs)
        for step in range(3):
            bn(tt.Tensor((_f32(rng, 4, 3, 2, 3) * (step + 1) + step).astype(np.float32)))
        state = {k: np.array(v) for k, v in bn.state_dict().items()}
        bn.eval()
        single = bn(tt.Tensor(_f32(rng, 1, 3, 2, 2))).numpy()
        out.append([state, single, np.array(bn.running_mean.numpy()),
                    int(bn.num_batches_tracked.item())])
    return out


@case(unit=BATCH_NORM_LAYER, points=2, rtol=RTOL, atol=ATOL,
      hint="BatchNorm2d: affine=False: no parameters (scale 1, shift 0); "
           "track_running_stats=False: buffers are None and batch statistics are used even in "
           "eval(); a non-4D input or one value per channel in training is a ValueError.",
      stated={"BatchNorm2d": (
                  "affine: learn ``weight`` (ones) and ``bias`` (zeros); None otherwise.",
                  "without them the layer always uses batch statistics.",
              ),
              "BatchNorm2d.forward": (
                  "``input.ndim != 4``: ``ValueError(",
                  "When training with ``track_running_stats``: ``self.num_batches_tracked.data += 1``",
                  "``use_batch = self.training or self.running_mean is None``.",
                  "Pass the running buffers to ``batch_norm`` unless training without ``track_running_stats`` (then ``None``)",
              ),
              "batch_norm": "ValueError: training with one value per channel"})
def batchnorm2d_options_and_errors(tt, rng):
    nn = tt.nn
    x = tt.Tensor(_f32(rng, 3, 2, 3, 3))
    plain = nn.BatchNorm2d(2, affine=False)
    free = nn.BatchNorm2d(2, track_running_stats=False).eval()
    flipped = nn.BatchNorm2d(2)
    flipped.track_running_stats = False  # buffers exist but are no longer updated
    two = nn.BatchNorm2d(2)(tt.Tensor(_f32(rng, 2, 2, 1, 1)))  # two values per channel suffice
    return [plain(x).numpy(), [n for n, _ in plain.named_parameters()], free(x).numpy(),
            free.running_mean is None, list(free.state_dict()), flipped(x).numpy(),
            {k: np.array(v) for k, v in flipped.state_dict().items()}, two.numpy(),
            outcome(nn.BatchNorm2d(2), tt.Tensor(_f32(rng, 3, 2, 4))),
            outcome(nn.BatchNorm2d(2), tt.Tensor(_f32(rng, 1, 2, 1, 1)))]


# ----------------------------------------------------------------------------- a CNN step (1)
@case(unit=CONV_LAYER, points=1,
      standins=(WINDOWS, IM2COL, COL2IM, CONV, MAX_POOL, AVG_POOL, BATCH_NORM, BATCH_NORM_LAYER),
      rtol=RTOL, atol=ATOL,
      hint="A whole CNN step: Conv2d, BatchNorm2d, ReLU, MaxPool2d, AvgPool2d, Flatten, Linear; "
           "the loss and every parameter's gradient.",
      stated={"Conv2d.__init__": (
                  "``fan_in = in_channels // groups * kh * kw``; ``bound = 1 / math.sqrt(fan_in)``; ``rng = default_generator()``.",
                  "With ``bias``: ``(out_channels,)`` from the same distribution, drawn *after* the weight",
              ),
              "Conv2d._conv_forward": "``conv2d`` with this layer's geometry"})
def cnn_training_step(tt, rng):
    nn = tt.nn
    tt.manual_seed(int(rng.integers(0, 1000)))
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Conv2d(4, 6, 3), nn.ReLU(), nn.AvgPool2d(2),
                          nn.Flatten(), nn.Linear(6, 3))
    x = tt.Tensor(_f32(rng, 5, 1, 8, 8))
    y = tt.Tensor(rng.integers(0, 3, 5))
    loss = nn.CrossEntropyLoss()(model(x), y)
    loss.backward()
    return [float(loss.item())] + [p.grad.numpy() for p in model.parameters()]
