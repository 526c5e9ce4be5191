"""One table of every differentiable Tensor operation, shared by gradcheck and parity tests.

Each entry: ``(name, input shapes, domain, tinytorch fn, torch fn)``. ``domain`` is
``"any"`` (standard normal), ``"pos"`` (uniform in [0.5, 2]), ``"big"`` (uniform in [2.5, 3]), ``"nonzero"`` or ``"prob"`` (see
``FUNCTION_OPS``), or one per input joined with ``_``; fns take Tensors (ours or
torch's) and return one. The same lambda usually works for both libraries.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np


class Op(NamedTuple):
    name: str
    shapes: tuple[tuple[int, ...], ...]
    domain: str
    ours: Callable[..., Any]
    theirs: Callable[..., Any] | None = None  # None: same lambda as ours

    def torch_fn(self) -> Callable[..., Any]:
        return self.theirs or self.ours


IDX = np.array([2, 0, 2, 1])

OPS: list[Op] = [
    Op("add", ((3, 4), (3, 4)), "any", lambda a, b: a + b),
    Op("add_broadcast_row", ((3, 4), (4,)), "any", lambda a, b: a + b),
    Op("add_broadcast_both", ((4, 1, 3), (5, 1)), "any", lambda a, b: a + b),
    Op("add_scalar", ((3,),), "any", lambda a: a + 1.5),
    Op("sub_broadcast", ((2, 3), (2, 1)), "any", lambda a, b: a - b),
    Op("rsub_scalar", ((3,),), "any", lambda a: 2.0 - a),
    Op("mul_broadcast", ((2, 3), (3,)), "any", lambda a, b: a * b),
    Op("mul_self", ((4,),), "any", lambda a: a * a),
    Op("div_broadcast", ((2, 3), (3,)), "pos", lambda a, b: a / b),
    Op("rdiv_scalar", ((3,),), "pos", lambda a: 1.0 / a),
    Op("neg", ((2, 3),), "any", lambda a: -a),
    Op("pow_2", ((2, 3),), "any", lambda a: a ** 2),
    Op("pow_3", ((2, 3),), "any", lambda a: a ** 3),
    Op("pow_half", ((2, 3),), "pos", lambda a: a ** 0.5),
    Op("pow_neg", ((2, 3),), "pos", lambda a: a ** -1.5),
    Op("pow_zero", ((2, 3),), "any", lambda a: a ** 0),
    Op("pow_tensor_exponent", ((2, 3), (2, 3)), "pos_any", lambda a, b: a ** b),
    Op("rpow_number", ((2, 3),), "any", lambda a: 2.0 ** a),
    Op("mod_broadcast", ((2, 3), (3,)), "pos_big", lambda a, b: a % b),
    Op("exp", ((2, 3),), "any", lambda a: a.exp()),
    Op("log", ((2, 3),), "pos", lambda a: a.log()),
    Op("sqrt", ((2, 3),), "pos", lambda a: a.sqrt()),
    Op("tanh", ((2, 3),), "any", lambda a: a.tanh()),
    Op("abs", ((2, 3),), "any", lambda a: a.abs()),
    Op("clamp_both", ((3, 4),), "any", lambda a: a.clamp(min=-0.5, max=0.5)),
    Op("clamp_min", ((3, 4),), "any", lambda a: a.clamp(min=0.0)),
    Op("clamp_max", ((3, 4),), "any", lambda a: a.clamp(max=0.2)),
    Op("matmul_2d", ((3, 4), (4, 5)), "any", lambda a, b: a @ b),
    Op("matmul_batched_shared", ((2, 3, 4), (4, 5)), "any", lambda a, b: a @ b),
    Op("matmul_batched", ((2, 3, 4), (2, 4, 5)), "any", lambda a, b: a @ b),
    Op("matmul_batch_broadcast", ((2, 1, 3, 4), (3, 4, 2)), "any", lambda a, b: a @ b),
    Op("matmul_matrix_vector", ((3, 4), (4,)), "any", lambda a, b: a @ b),
    Op("matmul_vector_matrix", ((4,), (4, 3)), "any", lambda a, b: a @ b),
    Op("matmul_vector_vector", ((4,), (4,)), "any", lambda a, b: a @ b),
    Op("sum_all", ((2, 3, 4),), "any", lambda a: a.sum()),
    Op("sum_dim", ((2, 3, 4),), "any", lambda a: a.sum(dim=1)),
    Op("sum_dims_keepdim", ((2, 3, 4),), "any", lambda a: a.sum(dim=(0, 2), keepdim=True)),
    Op("sum_neg_dim", ((2, 3, 4),), "any", lambda a: a.sum(dim=-1)),
    Op("mean_all", ((2, 3, 4),), "any", lambda a: a.mean()),
    Op("mean_dim", ((2, 3, 4),), "any", lambda a: a.mean(dim=0)),
    Op("mean_dims_keepdim", ((2, 3, 4),), "any", lambda a: a.mean(dim=(1, 2), keepdim=True)),
    Op("max_all", ((3, 4),), "any", lambda a: a.max()),
    Op("max_dim", ((3, 4),), "any", lambda a: a.max(dim=1).values,
       lambda a: a.max(dim=1).values),
    Op("max_dim_keepdim", ((3, 4),), "any", lambda a: a.max(dim=0, keepdim=True).values,
       lambda a: a.max(dim=0, keepdim=True).values),
    Op("amax_dim", ((2, 3, 4),), "any", lambda a: a.amax(dim=1)),
    Op("amax_dims_keepdim", ((2, 3, 4),), "any", lambda a: a.amax(dim=(0, 2), keepdim=True)),
    Op("reshape", ((2, 3, 4),), "any", lambda a: a.reshape(4, 6)),
    Op("reshape_infer", ((2, 3, 4),), "any", lambda a: a.reshape(-1, 3)),
    Op("view", ((2, 3, 4),), "any", lambda a: a.view(6, 4)),
    Op("transpose", ((2, 3, 4),), "any", lambda a: a.transpose(0, 2)),
    Op("transpose_neg", ((2, 3, 4),), "any", lambda a: a.transpose(-1, -2)),
    Op("permute", ((2, 3, 4),), "any", lambda a: a.permute(2, 0, 1)),
    Op("T", ((3, 4),), "any", lambda a: a.T, lambda a: a.T),
    Op("contiguous", ((3, 4),), "any", lambda a: a.transpose(0, 1).contiguous()),
    Op("getitem_int", ((4, 5),), "any", lambda a: a[1]),
    Op("getitem_slice", ((4, 5),), "any", lambda a: a[:, 1:4]),
    Op("getitem_neg_step", ((4, 5),), "any", lambda a: a[1:3, -1]),
    Op("getitem_fancy_repeats", ((4, 5),), "any", lambda a: a[IDX]),
    Op("getitem_fancy_pair", ((4, 5),), "any", lambda a: a[IDX, np.array([0, 1, 0, 4])],
       None),
    Op("getitem_none", ((4, 5),), "any", lambda a: a[None, 2]),
    Op("composite_softmax", ((3, 4),), "any",
       lambda a: (a - a.amax(dim=1, keepdim=True)).exp()
       / (a - a.amax(dim=1, keepdim=True)).exp().sum(dim=1, keepdim=True)),
]


def _sample(domain: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    if domain == "pos":
        return rng.uniform(0.5, 2.0, shape)
    if domain == "nonzero":
        return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.1, 2.0, shape)
    if domain == "prob":
        return rng.uniform(0.05, 0.95, shape)
    if domain == "big":  # divisors larger than any "pos" value: a % b stays away from its jumps
        return rng.uniform(2.5, 3.0, shape)
    assert domain == "any", f"unknown domain {domain!r}"
    return rng.standard_normal(shape)


def make_inputs(op: Op, rng: np.random.Generator, dtype: Any = np.float64) -> list[np.ndarray]:
    """Random inputs in the op's domain; ties are unlikely, so max/abs are differentiable.

    A domain joined with ``_`` (``"any_prob"``) gives one domain per input; a single domain
    applies to every input.
    """
    domains = op.domain.split("_")
    if len(domains) == 1:
        domains = domains * len(op.shapes)
    assert len(domains) == len(op.shapes), f"{op.name}: one domain per input"
    return [_sample(d, s, rng).astype(dtype) for d, s in zip(domains, op.shapes, strict=True)]


# --- Modules 02 and 04: activations and losses (``Function`` subclasses and compositions) ---
#
# Same entry format; the fns take only the differentiable inputs, targets and weights are
# fixed constants captured below. Extra domains: ``"nonzero"`` (|x| in [0.1, 2], random sign:
# ReLU's kink at 0 stays out of reach of the finite differences) and ``"prob"`` (uniform in
# [0.05, 0.95]: inside BCE's (0, 1)). ``theirs`` are the torch.nn.functional equivalents.


def _tt():
    from tinytorch_ref.nn import functional
    return functional


def _torch():
    import torch
    return torch


def _ours_t(x: Any) -> Any:
    from tinytorch_ref import Tensor
    return Tensor(x)


def _their_t(x: Any) -> Any:
    return _torch().as_tensor(x)


CLS_2D = np.array([2, 0, 4, 1])  # targets for (4, 5) logits
CLS_3D = np.array([[0, 2, 1], [1, 1, 0]])  # targets for (2, 3, 3) logits: class dim 1
CLS_W = np.array([0.5, 1.0, 2.0, 0.3, 1.5])  # per-class weights for 5 classes
BIN_T = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.3]])  # BCE targets for (2, 3) inputs
POS_W = np.array([0.5, 2.0, 3.0])  # pos_weight, broadcast along the last dim
MSE_T = np.array([[0.3, -1.2, 0.5], [2.0, 0.0, -0.7]])
DIST_P = np.array([[0.1, 0.2, 0.3, 0.4, 0.0], [0.5, 0.25, 0.125, 0.0625, 0.0625]])  # kl targets
TEACHER = np.array([[2.0, -1.0, 0.5, 3.0, 0.0], [0.1, 0.2, -2.0, 1.0, 4.0],
                    [1.5, 1.5, -0.5, 0.0, 2.5], [-1.0, 3.0, 0.5, 0.2, 0.3]])  # fixed logits


def _compression():
    from tinytorch_ref import compression
    return compression

FUNCTION_OPS: list[Op] = [
    Op("sigmoid", ((3, 4),), "any", lambda a: _tt().sigmoid(a),
       lambda a: _torch().sigmoid(a)),
    Op("tanh_fn", ((3, 4),), "any", lambda a: _tt().tanh(a), lambda a: _torch().tanh(a)),
    Op("relu", ((3, 4),), "nonzero", lambda a: _tt().relu(a), lambda a: _torch().relu(a)),
    Op("gelu_erf", ((3, 4),), "any", lambda a: _tt().gelu(a),
       lambda a: _torch().nn.functional.gelu(a)),
    Op("gelu_tanh", ((3, 4),), "any", lambda a: _tt().gelu(a, approximate="tanh"),
       lambda a: _torch().nn.functional.gelu(a, approximate="tanh")),
    Op("softmax_dim1", ((3, 4),), "any", lambda a: _tt().softmax(a, dim=1),
       lambda a: _torch().softmax(a, dim=1)),
    Op("softmax_dim0_3d", ((2, 3, 4),), "any", lambda a: _tt().softmax(a, dim=0),
       lambda a: _torch().softmax(a, dim=0)),
    Op("softmax_neg_dim", ((2, 3, 4),), "any", lambda a: _tt().softmax(a, dim=-1),
       lambda a: _torch().softmax(a, dim=-1)),
    Op("log_softmax_dim1", ((3, 4),), "any", lambda a: _tt().log_softmax(a, dim=1),
       lambda a: _torch().log_softmax(a, dim=1)),
    Op("log_softmax_dim1_3d", ((2, 3, 4),), "any", lambda a: _tt().log_softmax(a, dim=1),
       lambda a: _torch().log_softmax(a, dim=1)),
    Op("log_softmax_neg_dim", ((2, 3, 4),), "any", lambda a: _tt().log_softmax(a, dim=-1),
       lambda a: _torch().log_softmax(a, dim=-1)),
    Op("mse_loss_mean", ((2, 3), (2, 3)), "any", lambda a, b: _tt().mse_loss(a, b),
       lambda a, b: _torch().nn.functional.mse_loss(a, b)),
    Op("mse_loss_sum_const_target", ((2, 3),), "any",
       lambda a: _tt().mse_loss(a, _ours_t(MSE_T), reduction="sum"),
       lambda a: _torch().nn.functional.mse_loss(a, _their_t(MSE_T), reduction="sum")),
    Op("cross_entropy_mean", ((4, 5),), "any",
       lambda a: _tt().cross_entropy(a, _ours_t(CLS_2D)),
       lambda a: _torch().nn.functional.cross_entropy(a, _their_t(CLS_2D))),
    Op("cross_entropy_sum", ((4, 5),), "any",
       lambda a: _tt().cross_entropy(a, _ours_t(CLS_2D), reduction="sum"),
       lambda a: _torch().nn.functional.cross_entropy(a, _their_t(CLS_2D), reduction="sum")),
    Op("cross_entropy_label_smoothing", ((4, 5),), "any",
       lambda a: _tt().cross_entropy(a, _ours_t(CLS_2D), label_smoothing=0.2),
       lambda a: _torch().nn.functional.cross_entropy(a, _their_t(CLS_2D),
                                                      label_smoothing=0.2)),
    Op("cross_entropy_weight_mean", ((4, 5),), "any",
       lambda a: _tt().cross_entropy(a, _ours_t(CLS_2D), weight=_ours_t(CLS_W)),
       lambda a: _torch().nn.functional.cross_entropy(a, _their_t(CLS_2D),
                                                      weight=_their_t(CLS_W))),
    Op("cross_entropy_weight_sum_smoothing", ((4, 5),), "any",
       lambda a: _tt().cross_entropy(a, _ours_t(CLS_2D), weight=_ours_t(CLS_W),
                                     reduction="sum", label_smoothing=0.1),
       lambda a: _torch().nn.functional.cross_entropy(a, _their_t(CLS_2D),
                                                      weight=_their_t(CLS_W),
                                                      reduction="sum", label_smoothing=0.1)),
    Op("cross_entropy_spatial", ((2, 3, 3),), "any",
       lambda a: _tt().cross_entropy(a, _ours_t(CLS_3D)),
       lambda a: _torch().nn.functional.cross_entropy(a, _their_t(CLS_3D))),
    Op("nll_loss_mean", ((4, 5),), "any",
       lambda a: _tt().nll_loss(a, _ours_t(CLS_2D)),
       lambda a: _torch().nn.functional.nll_loss(a, _their_t(CLS_2D))),
    Op("nll_loss_weight_sum", ((4, 5),), "any",
       lambda a: _tt().nll_loss(a, _ours_t(CLS_2D), weight=_ours_t(CLS_W), reduction="sum"),
       lambda a: _torch().nn.functional.nll_loss(a, _their_t(CLS_2D), weight=_their_t(CLS_W),
                                                 reduction="sum")),
    Op("nll_loss_weight_mean_of_log_softmax", ((4, 5),), "any",
       lambda a: _tt().nll_loss(_tt().log_softmax(a, dim=1), _ours_t(CLS_2D),
                                weight=_ours_t(CLS_W)),
       lambda a: _torch().nn.functional.nll_loss(_torch().log_softmax(a, dim=1),
                                                 _their_t(CLS_2D), weight=_their_t(CLS_W))),
    Op("binary_cross_entropy", ((2, 3), (2, 3)), "prob",
       lambda p, t: _tt().binary_cross_entropy(p, t),
       lambda p, t: _torch().nn.functional.binary_cross_entropy(p, t)),
    Op("binary_cross_entropy_sum_const_target", ((2, 3),), "prob",
       lambda p: _tt().binary_cross_entropy(p, _ours_t(BIN_T), reduction="sum"),
       lambda p: _torch().nn.functional.binary_cross_entropy(p, _their_t(BIN_T),
                                                             reduction="sum")),
    Op("bce_with_logits", ((2, 3),), "any",
       lambda z: _tt().binary_cross_entropy_with_logits(z, _ours_t(BIN_T)),
       lambda z: _torch().nn.functional.binary_cross_entropy_with_logits(z, _their_t(BIN_T))),
    Op("bce_with_logits_pos_weight", ((2, 3),), "any",
       lambda z: _tt().binary_cross_entropy_with_logits(z, _ours_t(BIN_T),
                                                        pos_weight=_ours_t(POS_W)),
       lambda z: _torch().nn.functional.binary_cross_entropy_with_logits(
           z, _their_t(BIN_T), pos_weight=_their_t(POS_W))),
    Op("bce_with_logits_pos_weight_target_grad", ((2, 3), (2, 3)), "any_prob",
       lambda z, t: _tt().binary_cross_entropy_with_logits(z, t, pos_weight=_ours_t(POS_W),
                                                           reduction="sum"),
       lambda z, t: _torch().nn.functional.binary_cross_entropy_with_logits(
           z, t, pos_weight=_their_t(POS_W), reduction="sum")),
    # module 16: kl_div (input log-probabilities, target probabilities or log-probabilities;
    # both differentiable) and the distillation loss (teacher logits and labels fixed)
    Op("kl_div_batchmean_input_and_target", ((3, 4), (3, 4)), "any_prob",
       lambda x, t: _tt().kl_div(x, t, reduction="batchmean"),
       lambda x, t: _torch().nn.functional.kl_div(x, t, reduction="batchmean")),
    Op("kl_div_log_target_sum", ((3, 4), (3, 4)), "any",
       lambda x, t: _tt().kl_div(x, t, reduction="sum", log_target=True),
       lambda x, t: _torch().nn.functional.kl_div(x, t, reduction="sum", log_target=True)),
    Op("kl_div_mean_of_log_softmax", ((2, 5),), "any",
       lambda x: _tt().kl_div(_tt().log_softmax(x, dim=1), _ours_t(DIST_P)),
       lambda x: _torch().nn.functional.kl_div(_torch().log_softmax(x, dim=1), _their_t(DIST_P))),
    Op("distillation_loss_t3", ((4, 5),), "any",
       lambda s: _compression().distillation_loss(s, _ours_t(TEACHER), _ours_t(CLS_2D),
                                                  temperature=3.0, alpha=0.6),
       None),
]


# --- Module 09: spatial (convolution, pooling, batch norm; ``Function`` subclasses) ---
#
# ``BN_PROBE`` weights the batch-norm output: in training mode ``sum(batch_norm(x))`` does not
# depend on ``x`` at all (every channel is re-centred), so an unweighted sum would check nothing.

BN_RM, BN_RV = np.array([0.3, -0.5, 0.1]), np.array([1.5, 0.6, 2.0])  # running stats, 3 channels
BN_PROBE = np.random.default_rng(9).standard_normal((4, 3, 2, 3))

FUNCTION_OPS += [
    Op("conv2d_stride_padding_bias", ((2, 3, 6, 5), (4, 3, 3, 2), (4,)), "any",
       lambda x, w, b: _tt().conv2d(x, w, b, stride=(2, 1), padding=1),
       lambda x, w, b: _torch().nn.functional.conv2d(x, w, b, stride=(2, 1), padding=1)),
    Op("conv2d_no_bias", ((1, 2, 5, 5), (3, 2, 3, 3)), "any",
       lambda x, w: _tt().conv2d(x, w), lambda x, w: _torch().nn.functional.conv2d(x, w)),
    Op("conv2d_1x1_stride_2", ((2, 4, 5, 4), (2, 4, 1, 1), (2,)), "any",
       lambda x, w, b: _tt().conv2d(x, w, b, stride=2),
       lambda x, w, b: _torch().nn.functional.conv2d(x, w, b, stride=2)),
    Op("conv2d_dilation_groups", ((2, 4, 7, 6), (6, 2, 3, 2), (6,)), "any",
       lambda x, w, b: _tt().conv2d(x, w, b, 2, 1, (2, 1), 2),
       lambda x, w, b: _torch().nn.functional.conv2d(x, w, b, 2, 1, (2, 1), 2)),
    Op("conv2d_same_even_kernel", ((1, 2, 5, 4), (3, 2, 2, 3)), "any",
       lambda x, w: _tt().conv2d(x, w, padding="same", dilation=(1, 2)),
       lambda x, w: _torch().nn.functional.conv2d(x, w, padding="same", dilation=(1, 2))),
    Op("conv2d_depthwise", ((2, 3, 5, 5), (3, 1, 3, 3)), "any",
       lambda x, w: _tt().conv2d(x, w, padding=1, groups=3),
       lambda x, w: _torch().nn.functional.conv2d(x, w, padding=1, groups=3)),
    Op("max_pool2d_dilation_ceil", ((1, 2, 7, 8),), "any",
       lambda x: _tt().max_pool2d(x, 3, 2, 1, dilation=2, ceil_mode=True),
       lambda x: _torch().nn.functional.max_pool2d(x, 3, 2, 1, dilation=2, ceil_mode=True)),
    Op("avg_pool2d_ceil_exclude_pad", ((1, 2, 6, 7),), "any",
       lambda x: _tt().avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
       lambda x: _torch().nn.functional.avg_pool2d(x, 3, 2, 1, ceil_mode=True,
                                                   count_include_pad=False)),
    Op("avg_pool2d_divisor_override", ((1, 1, 5, 4),), "any",
       lambda x: _tt().avg_pool2d(x, 2, 1, divisor_override=3),
       lambda x: _torch().nn.functional.avg_pool2d(x, 2, 1, divisor_override=3)),
    Op("max_pool2d_default_stride", ((2, 2, 6, 6),), "any",
       lambda x: _tt().max_pool2d(x, 2), lambda x: _torch().nn.functional.max_pool2d(x, 2)),
    Op("max_pool2d_overlap_padding", ((1, 2, 7, 6),), "any",
       lambda x: _tt().max_pool2d(x, 3, 2, 1),
       lambda x: _torch().nn.functional.max_pool2d(x, 3, 2, 1)),
    Op("avg_pool2d_default_stride", ((2, 2, 6, 4),), "any",
       lambda x: _tt().avg_pool2d(x, 2), lambda x: _torch().nn.functional.avg_pool2d(x, 2)),
    Op("avg_pool2d_overlap_padding", ((1, 2, 7, 6),), "any",
       lambda x: _tt().avg_pool2d(x, (3, 2), (1, 2), 1),
       lambda x: _torch().nn.functional.avg_pool2d(x, (3, 2), (1, 2), 1)),
    Op("batch_norm_train_affine", ((4, 3, 2, 3), (3,), (3,)), "any",
       lambda x, w, b: _tt().batch_norm(x, None, None, w, b, training=True) * _ours_t(BN_PROBE),
       lambda x, w, b: _torch().nn.functional.batch_norm(x, None, None, w, b, training=True)
       * _their_t(BN_PROBE)),
    Op("batch_norm_train_plain", ((4, 3, 2, 3),), "any",
       lambda x: _tt().batch_norm(x, None, None, training=True, eps=1e-3) * _ours_t(BN_PROBE),
       lambda x: _torch().nn.functional.batch_norm(x, None, None, training=True, eps=1e-3)
       * _their_t(BN_PROBE)),
    Op("batch_norm_eval_affine", ((4, 3, 2, 3), (3,), (3,)), "any",
       lambda x, w, b: _tt().batch_norm(x, _ours_t(BN_RM), _ours_t(BN_RV), w, b) * _ours_t(BN_PROBE),
       lambda x, w, b: _torch().nn.functional.batch_norm(x, _their_t(BN_RM), _their_t(BN_RV), w, b)
       * _their_t(BN_PROBE)),
]
