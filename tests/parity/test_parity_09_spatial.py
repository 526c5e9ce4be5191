"""PyTorch parity · module 09 (spatial): conv2d, pooling and batch norm, forward and backward.

float32 throughout, with copied weights; gradients are compared for every input and
parameter. Ties in max pooling (zeros after a ReLU) must route the gradient exactly as PyTorch.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tinytorch_ref as tt
import tinytorch_ref.nn.functional as F
from tinytorch_ref.spatial import _pad, col2im, im2col, sliding_windows, window_grads, windows_tile

pytestmark = pytest.mark.parity
RTOL, ATOL = 1e-5, 1e-5


def _rng(*key: object) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _pair_of_tensors(x: np.ndarray) -> tuple[tt.Tensor, torch.Tensor]:
    return tt.Tensor(x.copy(), requires_grad=True), torch.tensor(x, requires_grad=True)


def _close(ours: np.ndarray, theirs: torch.Tensor, what: str, rtol: float = RTOL,
           atol: float = ATOL) -> None:
    ref = theirs.detach().numpy()
    assert ours.shape == ref.shape, f"{what}: shape {ours.shape} vs torch {ref.shape}"
    assert ours.dtype == ref.dtype, f"{what}: dtype {ours.dtype} vs torch {ref.dtype}"
    np.testing.assert_allclose(ours, ref, rtol=rtol, atol=atol, err_msg=what)


# ----------------------------------------------------------------------------- convolution
CONV_CASES = [
    # (N, C, H, W, O, kernel, stride, padding, bias)
    (2, 3, 8, 8, 4, 3, 1, 0, True),
    (2, 3, 8, 7, 5, 3, 2, 1, True),
    (1, 2, 9, 6, 3, (3, 2), (2, 1), (1, 0), False),
    (3, 1, 5, 5, 2, 5, 1, 2, True),
    (2, 4, 6, 6, 6, 1, 1, 0, True),
    (1, 2, 7, 7, 2, 2, 3, 1, True),
]


@pytest.mark.parametrize("case", CONV_CASES, ids=[str(c) for c in CONV_CASES])
def test_conv2d_forward_and_backward(case):
    n, c, h, w, o, k, s, p, bias = case
    rng = _rng("conv", case)
    ours = tt.nn.Conv2d(c, o, k, stride=s, padding=p, bias=bias)
    theirs = torch.nn.Conv2d(c, o, k, stride=s, padding=p, bias=bias)
    with torch.no_grad():
        theirs.weight.copy_(torch.from_numpy(ours.weight.numpy()))
        if bias:
            theirs.bias.copy_(torch.from_numpy(ours.bias.numpy()))
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    a, b = _pair_of_tensors(x)
    ya, yb = ours(a), theirs(b)
    _close(ya.numpy(), yb, "conv2d output")
    g = rng.standard_normal(tuple(yb.shape)).astype(np.float32)
    (ya * tt.Tensor(g)).sum().backward()
    (yb * torch.tensor(g)).sum().backward()
    _close(a.grad.numpy(), b.grad, "conv2d d input")
    _close(ours.weight.grad.numpy(), theirs.weight.grad, "conv2d d weight", rtol=1e-4)
    if bias:
        _close(ours.bias.grad.numpy(), theirs.bias.grad, "conv2d d bias", rtol=1e-4)


def test_conv2d_without_input_gradient_still_trains_the_weight():
    rng = _rng("conv-no-input-grad")
    x = rng.standard_normal((2, 1, 6, 6)).astype(np.float32)
    w = rng.standard_normal((3, 1, 3, 3)).astype(np.float32)
    wa, wb = _pair_of_tensors(w)
    F.conv2d(tt.Tensor(x), wa, padding=1).sum().backward()
    TF.conv2d(torch.tensor(x), wb, padding=1).sum().backward()
    _close(wa.grad.numpy(), wb.grad, "d weight")


def test_conv2d_unbatched_input_matches_torch():
    rng = _rng("conv-unbatched")
    x = rng.standard_normal((3, 6, 5)).astype(np.float32)
    w = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    _close(F.conv2d(tt.Tensor(x), tt.Tensor(w), stride=2).numpy(),
           TF.conv2d(torch.tensor(x), torch.tensor(w), stride=2), "unbatched conv2d")


def test_conv2d_errors_are_runtime_errors_like_torch():
    x = tt.Tensor(np.zeros((1, 3, 4, 4), dtype=np.float32))
    with pytest.raises(RuntimeError, match="expected input.* to have 2 channels"):
        F.conv2d(x, tt.Tensor(np.zeros((4, 2, 3, 3), dtype=np.float32)))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater"):
        F.conv2d(x, tt.Tensor(np.zeros((4, 3, 5, 5), dtype=np.float32)))
    with pytest.raises(RuntimeError, match="Expected 3D"):
        F.conv2d(tt.Tensor(np.zeros((3, 4), dtype=np.float32)),
                 tt.Tensor(np.zeros((4, 3, 1, 1), dtype=np.float32)))


def test_conv2d_init_bound_and_names_match_torch():
    tt.manual_seed(0)
    torch.manual_seed(0)
    ours, theirs = tt.nn.Conv2d(16, 512, 3), torch.nn.Conv2d(16, 512, 3)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    bound = 1 / np.sqrt(16 * 3 * 3)  # kaiming_uniform_(a=sqrt(5)) and the bias rule
    for a, b in [(ours.weight.numpy(), theirs.weight.detach().numpy()),
                 (ours.bias.numpy(), theirs.bias.detach().numpy())]:
        assert a.shape == b.shape and a.dtype == b.dtype
        assert np.abs(a).max() <= bound and np.abs(b).max() <= bound
        assert abs(np.abs(a).max() - np.abs(b).max()) < 0.02 * bound
        assert abs(a.std() - b.std()) < 0.1 * b.std()
    assert repr(ours) == repr(theirs)
    assert repr(tt.nn.Conv2d(3, 8, (3, 2), 2, 1, bias=False)) == repr(
        torch.nn.Conv2d(3, 8, (3, 2), 2, 1, bias=False))


@pytest.mark.parametrize("kernel,stride,padding", [((3, 3), (1, 1), 0), ((2, 3), (2, 1), 1)])
def test_im2col_and_col2im_are_torch_unfold_and_fold(kernel, stride, padding):
    rng = _rng("unfold", kernel, stride, padding)
    x = rng.standard_normal((2, 3, 7, 6)).astype(np.float32)
    cols = im2col(_pad(x, (padding, padding)), kernel, stride)
    _close(cols, TF.unfold(torch.tensor(x), kernel, padding=padding, stride=stride), "unfold")
    c = rng.standard_normal(cols.shape).astype(np.float32)
    xp_shape = (2, 3, 7 + 2 * padding, 6 + 2 * padding)
    folded = TF.fold(torch.tensor(c), (7, 6), kernel, padding=padding, stride=stride)
    ours = col2im(c, xp_shape, kernel, stride)
    ours = ours[:, :, padding:xp_shape[2] - padding, padding:xp_shape[3] - padding]
    _close(np.ascontiguousarray(ours), folded, "fold")


# ----------------------------------------------------------------------------- pooling
POOL_CASES = [
    # (shape, kernel, stride, padding)
    ((2, 3, 8, 8), 2, None, 0),
    ((2, 3, 7, 9), 3, 2, 1),
    ((1, 2, 6, 6), 3, 1, 0),
    ((1, 2, 8, 7), (2, 3), (2, 1), (1, 1)),
    ((3, 1, 5, 5), 2, 2, 0),
]


@pytest.mark.parametrize("relu", [False, True], ids=["gaussian", "relu-ties"])
@pytest.mark.parametrize("case", POOL_CASES, ids=[str(c) for c in POOL_CASES])
def test_max_pool2d_forward_and_backward(case, relu):
    shape, k, s, p = case
    rng = _rng("maxpool", case, relu)
    x = rng.standard_normal(shape).astype(np.float32)
    if relu:  # many windows of tied zeros, and exact repeats
        x = np.maximum(np.round(x, 1), 0.0).astype(np.float32)
    a, b = _pair_of_tensors(x)
    ya = F.max_pool2d(a, k, s, p)
    yb = TF.max_pool2d(b, k, s, p)
    _close(ya.numpy(), yb, "max_pool2d output", atol=0)
    g = rng.standard_normal(tuple(yb.shape)).astype(np.float32)
    (ya * tt.Tensor(g)).sum().backward()
    (yb * torch.tensor(g)).sum().backward()
    _close(a.grad.numpy(), b.grad, "max_pool2d d input")


#: windows that tile the padded image (max pooling's reshape path, no col2im), with padding,
#: ceil_mode and a non-square kernel
TILING_CASES = [
    # (shape, kernel, stride, padding, ceil_mode)
    ((2, 3, 8, 8), 2, None, 0, False),
    ((2, 2, 6, 6), 2, 2, 1, False),
    ((2, 2, 6, 9), (2, 3), None, 0, False),
    ((1, 3, 7, 7), 2, 2, 0, True),
    ((2, 1, 9, 6), 3, 3, 0, False),
]


@pytest.mark.parametrize("case", TILING_CASES, ids=[str(c) for c in TILING_CASES])
def test_max_pool2d_over_tiling_windows_is_torch_bit_for_bit(case):
    """Ties of -0 and +0, NaN and repeats: the maximum (a NaN wins) and the gradient to the
    first maximum in row-major order, exactly as PyTorch, where the windows tile. (The sign
    of a zero maximum is not compared: ``np.maximum(-0.0, 0.0)`` is ``0.0`` in NumPy, where
    PyTorch keeps the first, as the reference always has.)"""
    shape, k, s, p, ceil = case
    rng = _rng("maxpool-tiling", case)
    x = rng.choice(np.array([-1.0, -0.0, 0.0, 0.5, np.nan], np.float32), size=shape,
                   p=[0.2, 0.3, 0.3, 0.15, 0.05]).astype(np.float32)
    a, b = _pair_of_tensors(x)
    ya = F.max_pool2d(a, k, s, p, ceil_mode=ceil)
    yb = TF.max_pool2d(b, k, s, p, ceil_mode=ceil)
    ours, theirs = ya.numpy(), yb.detach().numpy()
    assert ours.shape == theirs.shape
    assert np.array_equal(np.isnan(ours), np.isnan(theirs)), "max_pool2d: NaN windows"
    assert np.array_equal(ours, theirs, equal_nan=True), "max_pool2d output"
    g = rng.standard_normal(theirs.shape).astype(np.float32)
    (ya * tt.Tensor(g)).sum().backward()
    (yb * torch.tensor(g)).sum().backward()
    assert np.array_equal(a.grad.numpy(), b.grad.numpy()), "max_pool2d d input"


@pytest.mark.parametrize("shape, kernel, stride, dilation, tiles", [
    ((2, 3, 8, 6), (2, 2), (2, 2), (1, 1), True),
    ((1, 2, 9, 6), (3, 2), (3, 2), (1, 1), True),
    ((1, 2, 9, 6), (2, 2), (2, 2), (1, 1), False),  # a row left over
    ((1, 2, 8, 8), (2, 2), (1, 1), (1, 1), False),  # overlapping windows
    ((1, 2, 8, 8), (2, 2), (2, 2), (2, 2), False),  # dilated taps
])
def test_window_grads_is_a_view_of_the_image_gradient_exactly_when_windows_tile(
        shape, kernel, stride, dilation, tiles):
    assert windows_tile(shape, kernel, stride, dilation) is tiles
    dxp, dwin = window_grads(shape, kernel, stride, dilation, np.float32)
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    expected = sliding_windows(x, kernel, stride, dilation)  # (N, C, kh, kw, Ho, Wo)
    assert dwin.shape == expected.shape
    if not tiles:
        assert dxp is None  # the caller adds dwin back with col2im
        return
    assert dxp.shape == shape and np.shares_memory(dxp, dwin)
    dwin[...] = expected  # writing every window entry writes every pixel, in place
    assert np.array_equal(dxp, x)


@pytest.mark.parametrize("case", POOL_CASES, ids=[str(c) for c in POOL_CASES])
def test_avg_pool2d_forward_and_backward(case):
    shape, k, s, p = case
    rng = _rng("avgpool", case)
    x = rng.standard_normal(shape).astype(np.float32)
    a, b = _pair_of_tensors(x)
    ya = F.avg_pool2d(a, k, s, p)
    yb = TF.avg_pool2d(b, k, s, p)
    _close(ya.numpy(), yb, "avg_pool2d output")
    g = rng.standard_normal(tuple(yb.shape)).astype(np.float32)
    (ya * tt.Tensor(g)).sum().backward()
    (yb * torch.tensor(g)).sum().backward()
    _close(a.grad.numpy(), b.grad, "avg_pool2d d input")


def test_pool_modules_defaults_and_repr_match_torch():
    for ours, theirs in [(tt.nn.MaxPool2d(2), torch.nn.MaxPool2d(2)),
                         (tt.nn.MaxPool2d(3, 1, 1), torch.nn.MaxPool2d(3, 1, 1)),
                         (tt.nn.AvgPool2d(2), torch.nn.AvgPool2d(2))]:
        assert repr(ours) == repr(theirs)
        x = _rng("poolmod", repr(ours)).standard_normal((2, 3, 6, 6)).astype(np.float32)
        _close(ours(tt.Tensor(x)).numpy(), theirs(torch.tensor(x)), repr(ours))
    x3 = np.arange(2 * 4 * 4, dtype=np.float32).reshape(2, 4, 4)
    _close(F.max_pool2d(tt.Tensor(x3), 2).numpy(), TF.max_pool2d(torch.tensor(x3), 2),
           "unbatched max_pool2d")


def test_pool_padding_larger_than_half_the_kernel_is_an_error():
    x = tt.Tensor(np.zeros((1, 1, 4, 4), dtype=np.float32))
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        F.max_pool2d(x, 2, padding=2)
    with pytest.raises(RuntimeError):
        TF.max_pool2d(torch.zeros((1, 1, 4, 4)), 2, padding=2)


PADDED_CONVS = [
    # (mode, kernel, padding, stride, dilation, groups, (H, W))
    ("reflect", 3, 1, 1, 1, 1, (5, 6)),
    ("reflect", (2, 3), "same", 1, 1, 2, (4, 5)),
    ("replicate", 3, (2, 1), 2, 1, 1, (5, 4)),
    ("replicate", 2, 3, 1, (1, 2), 1, (3, 3)),
    ("circular", 3, (1, 2), 1, 1, 2, (4, 4)),
    ("circular", 4, "same", 1, 1, 1, (5, 6)),
    ("zeros", 3, "same", 1, 2, 1, (6, 5)),
]


@pytest.mark.parametrize("case", PADDED_CONVS, ids=[str(c) for c in PADDED_CONVS])
def test_conv2d_padding_modes_match_torch(case):
    """``padding_mode`` pads with the image's own pixels (mirrored, repeated, wrapped), then
    convolves without padding: values, every gradient and the repr as PyTorch's."""
    mode, k, p, s, d, groups, (h, w) = case
    rng = _rng("padmode", case)
    ours = tt.nn.Conv2d(2, 4, k, stride=s, padding=p, dilation=d, groups=groups,
                        padding_mode=mode).double()
    theirs = torch.nn.Conv2d(2, 4, k, stride=s, padding=p, dilation=d, groups=groups,
                             padding_mode=mode).double()
    with torch.no_grad():
        theirs.weight.copy_(torch.from_numpy(ours.weight.numpy()))
        theirs.bias.copy_(torch.from_numpy(ours.bias.numpy()))
    assert repr(ours) == repr(theirs)
    xo, xt = _pair_of_tensors(rng.standard_normal((2, 2, h, w)))
    yo, yt = ours(xo), theirs(xt)
    _close(yo.numpy(), yt, f"{case} forward", 1e-12, 1e-12)
    g = rng.standard_normal(yo.shape)
    yo.backward(tt.Tensor(g))
    yt.backward(torch.from_numpy(g))
    _close(xo.grad.numpy(), xt.grad, f"{case} dx", 1e-12, 1e-12)
    _close(ours.weight.grad.numpy(), theirs.weight.grad, f"{case} dweight", 1e-12, 1e-12)


def test_conv2d_padding_mode_errors_like_torch():
    x = np.zeros((1, 1, 2, 2), dtype=np.float32)
    for mode, p in (("reflect", 2), ("circular", 3)):
        with pytest.raises(RuntimeError):
            torch.nn.Conv2d(1, 1, 1, padding=p, padding_mode=mode)(torch.from_numpy(x))
        with pytest.raises(RuntimeError, match="(?i)padding"):
            tt.nn.Conv2d(1, 1, 1, padding=p, padding_mode=mode)(tt.Tensor(x))
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        tt.nn.Conv2d(1, 1, 1, padding_mode="mirror")
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        torch.nn.Conv2d(1, 1, 1, padding_mode="mirror")


def _conv_leaving_padding_out(x: np.ndarray, w: np.ndarray, b: np.ndarray, s: int, p: int,
                              d: int) -> np.ndarray:
    """The oracle: every output sums weight * pixel over the taps that land on the image;
    a tap on the padding adds nothing, whatever its weight."""
    n, _, h, wd = x.shape
    o, _, k, _ = w.shape
    ho, wo = (h + 2 * p - d * (k - 1) - 1) // s + 1, (wd + 2 * p - d * (k - 1) - 1) // s + 1
    out = np.zeros((n, o, ho, wo)) + b.reshape(1, o, 1, 1)
    for i in range(ho):
        for j in range(wo):
            for u in range(k):
                for v in range(k):
                    r, c = i * s + u * d - p, j * s + v * d - p
                    if 0 <= r < h and 0 <= c < wd:
                        out[:, :, i, j] += np.einsum("oc,nc->no", w[:, :, u, v], x[:, :, r, c])
    return out


@pytest.mark.parametrize("seed", range(12))
def test_conv2d_with_a_non_finite_weight_leaves_the_padding_out(seed):
    """An infinite or NaN weight that lands on zero padding adds nothing (the padding is not
    part of the image): the oracle above, and PyTorch wherever it picks its oneDNN kernel
    for a kernel larger than 1×1 — its im2col kernel (batch 1, float64) computes ``0 · inf``
    instead (docs/conformance.md, ``conv-non-finite-weight-times-zero``)."""
    rng = _rng("nonfinite", seed)
    k, p, s, d = int(rng.integers(2, 4)), 1, int(rng.integers(1, 3)), int(rng.integers(1, 3))
    h, w_ = (int(v) for v in rng.integers(d * (k - 1) + 1, 7, 2))
    x = rng.standard_normal((2, 2, h, w_)).astype(np.float32)
    w = rng.standard_normal((3, 2, k, k)).astype(np.float32)
    w.flat[rng.choice(w.size, 2, replace=False)] = [np.inf, -np.inf] if seed % 2 else [np.nan,
                                                                                        np.inf]
    b = rng.standard_normal(3).astype(np.float32)
    xo, wo, bo = (tt.Tensor(a.copy(), requires_grad=True) for a in (x, w, b))
    yo = F.conv2d(xo, wo, bo, s, p, d)
    with np.errstate(invalid="ignore"):
        oracle = _conv_leaving_padding_out(x.astype(np.float64), w.astype(np.float64),
                                           b.astype(np.float64), s, p, d)
    np.testing.assert_allclose(yo.numpy(), oracle, rtol=1e-5, atol=1e-5)
    g = rng.standard_normal(yo.shape).astype(np.float32)
    yo.backward(tt.Tensor(g))
    xt, wt, bt = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    backend = torch._C._select_conv_backend(xt, wt, bt, (s, s), (p, p), (d, d), False, (0, 0),
                                            1, None)
    if backend.name == "Mkldnn":
        yt = TF.conv2d(xt, wt, bt, s, p, d)
        _close(yo.numpy(), yt, f"seed {seed} forward", 1e-4, 1e-4)
        yt.backward(torch.from_numpy(g))
        for name, ours, theirs in (("dx", xo, xt), ("dweight", wo, wt), ("dbias", bo, bt)):
            if name != "dx" or (h + 2 * p - d * (k - 1) - 1) % s == 0:  # every pixel read
                _close(ours.grad.numpy(), theirs.grad, f"seed {seed} {name}", 1e-4, 1e-4)
    assert np.isfinite(bo.grad.numpy()).all()


# ----------------------------------------------------------------------------- indices
def test_max_pool2d_return_indices_match_torch():
    """Ties go to the first maximum, a NaN to the last NaN, and the padding never wins, not
    even over a real ``-inf`` (or an integer dtype's smallest value)."""
    rng = _rng("indices")
    checked = 0
    for trial in range(300):
        k, s, d = int(rng.integers(1, 4)), int(rng.integers(1, 3)), int(rng.integers(1, 3))
        p, ceil = int(rng.integers(0, k // 2 + 1)), bool(rng.integers(0, 2))
        h, w = (int(v) for v in rng.integers(max(1, d * (k - 1) + 1 - 2 * p), 7, 2))
        dt = ["float32", "float64", "int64", "int32"][trial % 4]
        pool = ([np.iinfo(dt).min, 0, 1, 2] if dt.startswith("int")
                else [-np.inf, np.nan, 0.0, 1.0, np.inf])
        x = rng.choice(pool, (2, 2, h, w)).astype(dt)
        theirs = TF.max_pool2d(torch.tensor(x), k, s, p, d, ceil, True)
        if (theirs[1] < 0).any() or (theirs[1] >= h * w).any():
            continue  # a window of padding only (PyTorch's own bug, pytorch/pytorch#114216)
        ours = F.max_pool2d(tt.Tensor(x), k, s, p, d, ceil, True)
        what = f"k={k} s={s} p={p} d={d} ceil={ceil} {dt} {h}x{w}"
        np.testing.assert_array_equal(ours[0].numpy(), theirs[0].numpy(), err_msg=what)
        np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy(), err_msg=what)
        assert ours[1].dtype == np.int64
        checked += 1
    assert checked > 200
    layer = tt.nn.MaxPool2d(2, return_indices=True)
    assert repr(layer) == repr(torch.nn.MaxPool2d(2, return_indices=True))
    out, idx = layer(tt.Tensor(np.arange(16.0).reshape(1, 4, 4)))  # unbatched
    assert idx.tolist() == [[[5, 7], [13, 15]]] and out.tolist() == [[[5.0, 7.0], [13.0, 15.0]]]


@pytest.mark.parametrize("output_size", [None, (5, 5), (1, 1, 5, 4)])
def test_max_unpool2d_matches_torch(output_size):
    rng = _rng("unpool", output_size)
    x = rng.standard_normal((2, 3, 4, 4 if output_size is None else 5))
    po, io = F.max_pool2d(tt.Tensor(x), 2, return_indices=True)
    pt, it = TF.max_pool2d(torch.tensor(x), 2, return_indices=True)
    vo = tt.Tensor(po.numpy(), requires_grad=True)
    vt = torch.tensor(pt.numpy(), requires_grad=True)
    yo = tt.nn.MaxUnpool2d(2)(vo, io, output_size)
    yt = torch.nn.MaxUnpool2d(2)(vt, it, output_size)
    _close(yo.numpy(), yt, f"unpool {output_size}", 0, 0)
    g = rng.standard_normal(yo.shape)
    yo.backward(tt.Tensor(g))
    yt.backward(torch.from_numpy(g))
    _close(vo.grad.numpy(), vt.grad, "unpool gradient", 0, 0)
    assert repr(tt.nn.MaxUnpool2d((2, 3), 1, 1)) == repr(torch.nn.MaxUnpool2d((2, 3), 1, 1))


def test_max_unpool2d_errors_like_torch():
    po, io = F.max_pool2d(tt.Tensor(np.arange(16.0).reshape(1, 1, 4, 4)), 2,
                          return_indices=True)
    pt, it = TF.max_pool2d(torch.arange(16.0).reshape(1, 1, 4, 4), 2, return_indices=True)
    for kwargs in ({"output_size": (6, 5)}, {"output_size": (4, 4, 4)}):
        with pytest.raises(ValueError):
            TF.max_unpool2d(pt, it, 2, **kwargs)
        with pytest.raises(ValueError):
            F.max_unpool2d(po, io, 2, **kwargs)
    for bad_index in (io + 100, -io - 1):
        with pytest.raises(RuntimeError, match="invalid max index"):
            F.max_unpool2d(po, bad_index, 2)
    with pytest.raises(RuntimeError, match="int64"):
        F.max_unpool2d(po, tt.Tensor(io.numpy().astype(np.int32)), 2)
    with pytest.raises(RuntimeError):
        TF.max_unpool2d(pt, it.int(), 2)


# ----------------------------------------------------------------------------- batch norm
def _copy_bn(ours: tt.nn.BatchNorm2d, theirs: torch.nn.BatchNorm2d, rng) -> None:
    for name in ("weight", "bias"):
        if getattr(ours, name) is not None:
            v = rng.uniform(0.5, 2.0, ours.num_features).astype(np.float32)
            getattr(ours, name).data[...] = v
            with torch.no_grad():
                getattr(theirs, name).copy_(torch.from_numpy(v))


BN_CONFIGS = [
    dict(),
    dict(momentum=None),
    dict(momentum=0.3, eps=1e-3),
    dict(affine=False),
    dict(track_running_stats=False),
    dict(bias=False),
]


@pytest.mark.parametrize("config", BN_CONFIGS, ids=[str(c) for c in BN_CONFIGS])
def test_batchnorm2d_train_steps_then_eval(config):
    rng = _rng("bn", sorted(config.items()))
    ours, theirs = tt.nn.BatchNorm2d(4, **config), torch.nn.BatchNorm2d(4, **config)
    _copy_bn(ours, theirs, rng)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for step in range(3):
        x = (rng.standard_normal((5, 4, 3, 6)) * 2.0 + step).astype(np.float32)
        a, b = _pair_of_tensors(x)
        ya, yb = ours(a), theirs(b)
        _close(ya.numpy(), yb, f"train step {step} output")
        g = rng.standard_normal(x.shape).astype(np.float32)
        (ya * tt.Tensor(g)).sum().backward()
        (yb * torch.tensor(g)).sum().backward()
        _close(a.grad.numpy(), b.grad, f"train step {step} d input", rtol=1e-4)
        for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters(),
                                     strict=True):
            _close(p.grad.numpy(), q.grad, f"d {name}", rtol=1e-4)
        ours.zero_grad()
        theirs.zero_grad()
    for (name, value), (tname, tvalue) in zip(ours.state_dict().items(),
                                              theirs.state_dict().items(), strict=True):
        assert name == tname
        np.testing.assert_allclose(value, tvalue.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)
    ours.eval()
    theirs.eval()
    x = rng.standard_normal((1, 4, 2, 2)).astype(np.float32)
    a, b = _pair_of_tensors(x)
    ya, yb = ours(a), theirs(b)
    _close(ya.numpy(), yb, "eval output (one image)")
    g = rng.standard_normal(x.shape).astype(np.float32)
    (ya * tt.Tensor(g)).sum().backward()
    (yb * torch.tensor(g)).sum().backward()
    _close(a.grad.numpy(), b.grad, "eval d input")
    assert repr(ours) == repr(theirs)


def test_functional_batch_norm_matches_torch():
    rng = _rng("F.batch_norm")
    x = rng.standard_normal((6, 3, 4)).astype(np.float32)  # (N, C, L): any rank >= 2
    rm, rv = np.zeros(3, np.float32), np.ones(3, np.float32)
    ours_rm, ours_rv = tt.Tensor(rm.copy()), tt.Tensor(rv.copy())
    t_rm, t_rv = torch.tensor(rm), torch.tensor(rv)
    a, b = _pair_of_tensors(x)
    ya = F.batch_norm(a, ours_rm, ours_rv, training=True, momentum=0.2)
    yb = TF.batch_norm(b, t_rm, t_rv, training=True, momentum=0.2)
    _close(ya.numpy(), yb, "F.batch_norm output")
    _close(ours_rm.numpy(), t_rm, "running_mean")
    _close(ours_rv.numpy(), t_rv, "running_var")
    ya.sum().backward()
    yb.sum().backward()
    _close(a.grad.numpy(), b.grad, "F.batch_norm d input")
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        F.batch_norm(tt.Tensor(np.ones((1, 3, 1, 1), np.float32)), None, None, training=True)
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        TF.batch_norm(torch.ones((1, 3, 1, 1)), None, None, training=True)


# ----------------------------------------------------------------------------- a whole CNN
def test_small_cnn_training_step_matches_torch():
    """Conv-BN-ReLU-MaxPool-Conv-ReLU-AvgPool-Flatten-Linear: loss and every gradient."""
    def build(nn):
        return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Conv2d(4, 6, 3), nn.ReLU(), nn.AvgPool2d(2),
                             nn.Flatten(), nn.Linear(6, 3))

    ours, theirs = build(tt.nn), build(torch.nn)
    theirs.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in
                            ours.state_dict().items()})
    rng = _rng("cnn")
    x = rng.standard_normal((5, 1, 8, 8)).astype(np.float32)
    y = rng.integers(0, 3, 5)
    la = tt.nn.CrossEntropyLoss()(ours(tt.Tensor(x)), tt.Tensor(y))
    lb = torch.nn.CrossEntropyLoss()(theirs(torch.tensor(x)), torch.tensor(y))
    np.testing.assert_allclose(la.item(), lb.item(), rtol=1e-5)
    la.backward()
    lb.backward()
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters(), strict=True):
        _close(p.grad.numpy(), q.grad, f"d {name}", rtol=1e-4)
