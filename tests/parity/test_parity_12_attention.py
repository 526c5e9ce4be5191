"""PyTorch parity · module 12 (attention): scaled_dot_product_attention (masks, causal, scale,
shapes, fully masked rows) and MultiheadAttention with copied weights (both batch layouts,
both weight paths, masks), forward and backward, against torch 2.13."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from op_catalogue_sequence import SEQUENCE_OPS

import tinytorch_ref as tt
from tinytorch_ref import attention as A

pytestmark = pytest.mark.parity
RTOL, ATOL = 1e-5, 1e-5
torch.set_num_threads(1)


def _leaves(rng, *shapes, dtype=np.float32):
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    return ([tt.Tensor(a.copy(), requires_grad=True) for a in arrays],
            [torch.tensor(a, requires_grad=True) for a in arrays])


def _check(ya, yb, ours, theirs, rng, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(ya.numpy(), yb.detach().numpy(), rtol=rtol, atol=atol)
    g = rng.standard_normal(tuple(yb.shape)).astype(ya.numpy().dtype)
    (ya * tt.Tensor(g)).sum().backward()
    (yb * torch.from_numpy(g)).sum().backward()
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert a.grad is not None, f"input {i} got no gradient"
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=atol,
                                   err_msg=f"gradient of input {i}")


@pytest.mark.parametrize("op", [op for op in SEQUENCE_OPS if op.theirs is not None
                                and op.name.startswith(("sdpa", "safe_softmax"))],
                         ids=lambda op: op.name)
def test_catalogue_forward_and_backward_match_torch(op):
    rng = np.random.default_rng(len(op.name))
    ours, theirs = _leaves(rng, *op.shapes)
    _check(op.ours(*ours), op.torch_fn()(*theirs), ours, theirs, rng)


SHAPES = [  # (query, key, value)
    ((4, 8), (6, 8), (6, 8)),  # no batch dims, L != S
    ((2, 5, 8), (2, 5, 8), (2, 5, 3)),  # Ev != E
    ((2, 3, 4, 8), (2, 3, 7, 8), (2, 3, 7, 8)),  # (B, h, L, E)
    ((2, 3, 4, 8), (3, 6, 8), (3, 6, 8)),  # key/value broadcast over the batch
    ((1, 2, 1, 8), (1, 2, 9, 8), (1, 2, 9, 8)),  # one query against 9 keys (KV cache)
]


@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: "x".join(str(x) for x in s[0]))
@pytest.mark.parametrize("mode", ["none", "causal", "bool", "float", "scale"])
def test_sdpa_matches_torch(shapes, mode):
    rng = np.random.default_rng(abs(hash((shapes, mode))) % 2**32)
    (q, k, v), (tq, tk, tv) = _leaves(rng, *shapes)
    big, small = {}, {}
    L, S = shapes[0][-2], shapes[1][-2]
    if mode == "causal":
        big = small = {"is_causal": True}
    elif mode == "bool":
        mask = rng.random((L, S)) > 0.3
        mask[:, 0] = True
        big, small = {"attn_mask": mask}, {"attn_mask": torch.from_numpy(mask)}
    elif mode == "float":
        mask = rng.standard_normal((L, S)).astype(np.float32)
        mask[:, -1] = -np.inf
        big, small = {"attn_mask": tt.Tensor(mask)}, {"attn_mask": torch.from_numpy(mask)}
    elif mode == "scale":
        big = small = {"scale": 0.37}
    ya = tt.nn.functional.scaled_dot_product_attention(q, k, v, **big)
    yb = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, **small)
    assert ya.dtype == np.float32
    _check(ya, yb, [q, k, v], [tq, tk, tv], rng)


def test_sdpa_fully_masked_rows_are_zero_like_torch():
    rng = np.random.default_rng(5)
    (q, k, v), (tq, tk, tv) = _leaves(rng, (2, 4, 8), (2, 5, 8), (2, 5, 6))
    mask = np.ones((4, 5), dtype=bool)
    mask[1] = False
    mask[3, 1:] = False
    ya = tt.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    yb = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv,
                                                          attn_mask=torch.from_numpy(mask))
    assert not np.isnan(ya.numpy()).any()
    np.testing.assert_array_equal(ya.numpy()[:, 1], 0.0)
    _check(ya, yb, [q, k, v], [tq, tk, tv], rng)


def test_sdpa_float64_matches_torch_tightly():
    rng = np.random.default_rng(6)
    (q, k, v), (tq, tk, tv) = _leaves(rng, (2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4),
                                      dtype=np.float64)
    ya = tt.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    yb = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=True)
    assert ya.dtype == np.float64
    _check(ya, yb, [q, k, v], [tq, tk, tv], rng, rtol=1e-10, atol=1e-12)


def test_sdpa_errors_like_torch():
    q = np.zeros((2, 3, 4), np.float32)
    with pytest.raises(RuntimeError, match="is_causal"):
        tt.nn.functional.scaled_dot_product_attention(
            tt.Tensor(q), tt.Tensor(q), tt.Tensor(q), attn_mask=np.ones((3, 3), bool),
            is_causal=True)
    with pytest.raises(RuntimeError, match="is_causal"):
        torch.nn.functional.scaled_dot_product_attention(
            torch.tensor(q), torch.tensor(q), torch.tensor(q),
            attn_mask=torch.ones(3, 3, dtype=torch.bool), is_causal=True)
    with pytest.raises(RuntimeError):
        tt.nn.functional.scaled_dot_product_attention(tt.Tensor(q), tt.Tensor(q[..., :3]),
                                                      tt.Tensor(q))
    with pytest.raises(RuntimeError):
        torch.nn.functional.scaled_dot_product_attention(torch.tensor(q),
                                                         torch.tensor(q[..., :3]),
                                                         torch.tensor(q))


def test_sdpa_dropout_statistics_match_torch():
    """Dropout masks come from different generators; compare what is distributional."""
    rng = np.random.default_rng(7)
    q = rng.standard_normal((64, 8, 16)).astype(np.float32)
    v = np.ones((64, 8, 16), np.float32)
    tt.manual_seed(0)
    torch.manual_seed(0)
    a = tt.nn.functional.scaled_dot_product_attention(tt.Tensor(q), tt.Tensor(q), tt.Tensor(v),
                                                      dropout_p=0.25).numpy()
    b = torch.nn.functional.scaled_dot_product_attention(
        torch.tensor(q), torch.tensor(q), torch.tensor(v), dropout_p=0.25).numpy()
    # with v = 1 each output is (sum of kept weights) / 0.75: mean 1 for both
    assert abs(a.mean() - 1.0) < 0.02 and abs(b.mean() - 1.0) < 0.02
    assert abs(a.std() - b.std()) < 0.05


def test_query_of_length_one_against_cached_keys_is_the_last_causal_row():
    """What module 17's KV cache relies on: the newest query over all S cached keys, with an
    explicit mask, equals the last row of full causal attention (in torch and here)."""
    rng = np.random.default_rng(8)
    q, k, v = (rng.standard_normal((2, 3, 9, 8)).astype(np.float32) for _ in range(3))
    full = tt.nn.functional.scaled_dot_product_attention(tt.Tensor(q), tt.Tensor(k),
                                                         tt.Tensor(v), is_causal=True).numpy()
    allowed = np.ones((1, 9), dtype=bool)
    last = tt.nn.functional.scaled_dot_product_attention(
        tt.Tensor(q[:, :, -1:]), tt.Tensor(k), tt.Tensor(v), attn_mask=allowed).numpy()
    theirs = torch.nn.functional.scaled_dot_product_attention(
        torch.tensor(q[:, :, -1:]), torch.tensor(k), torch.tensor(v),
        attn_mask=torch.from_numpy(allowed)).numpy()
    np.testing.assert_allclose(last, full[:, :, -1:], rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(last, theirs, rtol=RTOL, atol=ATOL)


# ----------------------------------------------------------------------------- MultiheadAttention
def _pair_mha(embed_dim, num_heads, *, bias=True, batch_first=True, seed=0):
    tt.manual_seed(seed)
    ours = tt.nn.MultiheadAttention(embed_dim, num_heads, bias=bias, batch_first=batch_first)
    theirs = torch.nn.MultiheadAttention(embed_dim, num_heads, bias=bias,
                                         batch_first=batch_first)
    rng = np.random.default_rng(seed)
    with torch.no_grad():  # non-zero biases so a bias bug shows
        for p in ours.parameters():
            if p.ndim == 1:
                p.data[...] = rng.standard_normal(p.shape).astype(np.float32) * 0.1
    theirs.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in ours.state_dict().items()})
    return ours, theirs


def _param_grads_match(ours, theirs):
    ta = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), ta[name].grad.numpy(), rtol=1e-4,
                                   atol=1e-5, err_msg=name)


def test_mha_parameters_names_shapes_and_init_match_torch():
    ours, theirs = tt.nn.MultiheadAttention(32, 4), torch.nn.MultiheadAttention(32, 4)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    a, b = ours.in_proj_weight.numpy(), theirs.in_proj_weight.detach().numpy()
    assert abs(np.abs(a).max() - np.abs(b).max()) < 0.01 and abs(a.std() - b.std()) < 0.01
    for name in ("in_proj_bias", "out_proj.bias"):
        assert not dict(ours.named_parameters())[name].numpy().any()
        assert not dict(theirs.named_parameters())[name].detach().numpy().any()
    c, d = ours.out_proj.weight.numpy(), theirs.out_proj.weight.detach().numpy()
    assert abs(np.abs(c).max() - np.abs(d).max()) < 0.01
    nobias = tt.nn.MultiheadAttention(8, 2, bias=False)
    assert [n for n, _ in nobias.named_parameters()] == \
        [n for n, _ in torch.nn.MultiheadAttention(8, 2, bias=False).named_parameters()]


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("average", [True, False])
def test_mha_self_attention_matches_torch(batch_first, need_weights, average):
    ours, theirs = _pair_mha(16, 4, batch_first=batch_first)
    rng = np.random.default_rng(1)
    shape = (3, 6, 16) if batch_first else (6, 3, 16)
    (x,), (tx,) = _leaves(rng, shape)
    ya, wa = ours(x, x, x, need_weights=need_weights, average_attn_weights=average)
    yb, wb = theirs(tx, tx, tx, need_weights=need_weights, average_attn_weights=average)
    assert (wa is None) == (wb is None)
    if wb is not None:
        np.testing.assert_allclose(wa.numpy(), wb.detach().numpy(), rtol=RTOL, atol=ATOL)
    _check(ya, yb, [x], [tx], rng, rtol=1e-4)
    _param_grads_match(ours, theirs)


@pytest.mark.parametrize("mask_kind", ["bool_causal", "float_causal", "padding_bool",
                                       "padding_float", "both", "3d"])
@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_cross_attention_with_masks_matches_torch(mask_kind, need_weights):
    ours, theirs = _pair_mha(12, 3, seed=2)
    rng = np.random.default_rng(3)
    (q, k, v), (tq, tk, tv) = _leaves(rng, (2, 5, 12), (2, 7, 12), (2, 7, 12))
    ka, kb = {}, {}
    causal_bool = np.triu(np.ones((5, 7), dtype=bool), k=1)  # True = not allowed
    pad = np.zeros((2, 7), dtype=bool)
    pad[1, 5:] = True
    if mask_kind == "bool_causal":
        ka, kb = {"attn_mask": causal_bool}, {"attn_mask": torch.from_numpy(causal_bool)}
    elif mask_kind == "float_causal":
        f = np.where(causal_bool, -np.inf, 0.0).astype(np.float32)
        ka, kb = {"attn_mask": tt.Tensor(f)}, {"attn_mask": torch.from_numpy(f)}
    elif mask_kind == "padding_bool":
        ka, kb = {"key_padding_mask": pad}, {"key_padding_mask": torch.from_numpy(pad)}
    elif mask_kind == "padding_float":
        f = np.where(pad, -np.inf, 0.0).astype(np.float32)
        ka, kb = {"key_padding_mask": f}, {"key_padding_mask": torch.from_numpy(f)}
    elif mask_kind == "both":
        ka = {"attn_mask": causal_bool, "key_padding_mask": pad}
        kb = {"attn_mask": torch.from_numpy(causal_bool),
              "key_padding_mask": torch.from_numpy(pad)}
    elif mask_kind == "3d":
        m = rng.standard_normal((2 * 3, 5, 7)).astype(np.float32)
        ka, kb = {"attn_mask": m}, {"attn_mask": torch.from_numpy(m)}
    ya, wa = ours(q, k, v, need_weights=need_weights, **ka)
    yb, wb = theirs(tq, tk, tv, need_weights=need_weights, **kb)
    if wb is not None:
        np.testing.assert_allclose(wa.numpy(), wb.detach().numpy(), rtol=RTOL, atol=ATOL)
    _check(ya, yb, [q, k, v], [tq, tk, tv], rng, rtol=1e-4)
    _param_grads_match(ours, theirs)


def test_mha_causal_hint_needs_a_mask_like_torch():
    ours, theirs = _pair_mha(8, 2)
    x = np.random.default_rng(4).standard_normal((2, 4, 8)).astype(np.float32)
    with pytest.raises(RuntimeError, match="Need attn_mask"):
        ours(tt.Tensor(x), tt.Tensor(x), tt.Tensor(x), is_causal=True)
    with pytest.raises(RuntimeError, match="Need attn_mask"):
        theirs(torch.tensor(x), torch.tensor(x), torch.tensor(x), is_causal=True)
    m = A.generate_square_subsequent_mask(4)
    tm = torch.nn.Transformer.generate_square_subsequent_mask(4)
    np.testing.assert_array_equal(m.numpy(), tm.numpy())
    ya, _ = ours(tt.Tensor(x), tt.Tensor(x), tt.Tensor(x), attn_mask=m, is_causal=True,
                 need_weights=False)
    yb, _ = theirs(torch.tensor(x), torch.tensor(x), torch.tensor(x), attn_mask=tm,
                   is_causal=True, need_weights=False)
    np.testing.assert_allclose(ya.numpy(), yb.detach().numpy(), rtol=1e-4, atol=ATOL)


def test_mha_unbatched_and_no_bias_match_torch():
    ours, theirs = _pair_mha(8, 2, bias=False, seed=5)
    rng = np.random.default_rng(6)
    (q, k, v), (tq, tk, tv) = _leaves(rng, (4, 8), (6, 8), (6, 8))
    pad = np.array([False, False, True, False, False, True])
    ya, wa = ours(q, k, v, key_padding_mask=pad, average_attn_weights=False)
    yb, wb = theirs(tq, tk, tv, key_padding_mask=torch.from_numpy(pad),
                    average_attn_weights=False)
    assert tuple(wa.shape) == tuple(wb.shape) == (2, 4, 6)
    np.testing.assert_allclose(wa.numpy(), wb.detach().numpy(), rtol=RTOL, atol=ATOL)
    _check(ya, yb, [q, k, v], [tq, tk, tv], rng, rtol=1e-4)


def test_mha_loads_a_torch_state_dict_and_dropout_is_off_in_eval():
    theirs = torch.nn.MultiheadAttention(16, 4, dropout=0.5, batch_first=True).eval()
    ours = tt.nn.MultiheadAttention(16, 4, dropout=0.5, batch_first=True).eval()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(7).standard_normal((2, 5, 16)).astype(np.float32)
    ya, wa = ours(tt.Tensor(x), tt.Tensor(x), tt.Tensor(x))
    yb, wb = theirs(torch.tensor(x), torch.tensor(x), torch.tensor(x))
    np.testing.assert_allclose(ya.numpy(), yb.detach().numpy(), rtol=1e-4, atol=ATOL)
    np.testing.assert_allclose(wa.numpy(), wb.detach().numpy(), rtol=RTOL, atol=ATOL)
