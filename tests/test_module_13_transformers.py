"""Instructor tests for module 13 beyond the hidden suite: the KV-cache plug-in point works for
a real incremental decoder (module 17 will need no change to module 13), generation records no
graph, float32 stays float32 through a whole GPT step, and dropout follows train/eval."""

from __future__ import annotations

import numpy as np

import tinytorch_ref as tt
from tinytorch_ref import transformers as T
from tinytorch_ref.autograd import topological_order


class RecomputeLayerCache:
    """A per-layer cache that stores the normalised inputs of past positions and attends from
    the new positions over all of them (keys and values are recomputed: the simplest cache that
    honours the protocol ``cache(attn, h) -> (B, T_new, C)``)."""

    def __init__(self) -> None:
        self.past: np.ndarray | None = None

    def __call__(self, attn, h):
        new = h.numpy()
        full = new if self.past is None else np.concatenate([self.past, new], axis=1)
        offset = 0 if self.past is None else self.past.shape[1]
        t, s = new.shape[1], full.shape[1]
        # query i (absolute position offset + i) may see keys j <= offset + i
        mask = np.arange(s)[None, :] > (offset + np.arange(t))[:, None]
        self.past = full
        out, _ = attn(h, tt.Tensor(full), tt.Tensor(full), attn_mask=mask, need_weights=False)
        return out


class RecomputeCache:
    def __init__(self, n_layers: int) -> None:
        self.layers = [RecomputeLayerCache() for _ in range(n_layers)]

    @property
    def offset(self) -> int:
        past = self.layers[0].past
        return 0 if past is None else past.shape[1]


def test_incremental_decoding_through_the_cache_argument_matches_the_full_forward():
    tt.manual_seed(0)
    gpt = T.GPT(vocab_size=17, context_length=12, d_model=16, n_layers=3, n_heads=4)
    idx = np.random.default_rng(0).integers(0, 17, size=(2, 10))
    full = gpt(idx).numpy()
    cache = RecomputeCache(3)
    parts = [gpt(idx[:, :4], cache=cache).numpy()]  # a prompt of 4, then one token at a time
    for t in range(4, 10):
        parts.append(gpt(idx[:, t:t + 1], cache=cache).numpy())
    np.testing.assert_allclose(np.concatenate(parts, axis=1), full, rtol=1e-5, atol=1e-5)


def test_generate_records_no_graph_and_keeps_the_mode():
    tt.manual_seed(1)
    gpt = T.GPT(vocab_size=9, context_length=4, d_model=8, n_layers=1, n_heads=2, dropout=0.1)
    gpt.eval()
    out = gpt.generate(tt.Tensor([[1, 2]]), max_new_tokens=7)
    assert out.shape == (1, 9) and not out.requires_grad and out._node is None
    assert all(p.grad is None for p in gpt.parameters())
    assert not gpt.training and tt.is_grad_enabled()


def test_a_float32_training_step_stays_float32():
    tt.manual_seed(2)
    gpt = T.GPT(vocab_size=11, context_length=8, d_model=16, n_layers=2, n_heads=4)
    idx = np.random.default_rng(1).integers(0, 11, size=(3, 8))
    logits = gpt(idx)
    loss = tt.nn.functional.cross_entropy(logits.reshape(-1, 11), tt.Tensor(idx.reshape(-1)))
    wrong = {str(t.dtype) for t in topological_order(loss) if t.dtype.kind == "f"} - {"float32"}
    assert wrong == set(), f"float64 crept into the graph: {wrong}"
    loss.backward()
    assert all(p.grad.dtype == np.float32 for p in gpt.parameters())


def test_dropout_is_random_in_training_and_off_in_eval():
    tt.manual_seed(3)
    gpt = T.GPT(vocab_size=11, context_length=8, d_model=16, n_layers=2, n_heads=4, dropout=0.3)
    idx = np.random.default_rng(2).integers(0, 11, size=(2, 8))
    a, b = gpt(idx).numpy(), gpt(idx).numpy()
    assert not np.allclose(a, b)
    gpt.eval()
    np.testing.assert_array_equal(gpt(idx).numpy(), gpt(idx).numpy())


def test_sampling_is_reproducible_and_temperature_sharpens():
    tt.manual_seed(4)
    gpt = T.GPT(vocab_size=6, context_length=4, d_model=8, n_layers=1, n_heads=2)
    rng = np.random.default_rng(3)
    for p in gpt.parameters():
        p.data[...] += rng.standard_normal(p.shape).astype(np.float32)
    prompt = np.repeat([[3]], 3000, axis=0)
    tt.manual_seed(5)
    cold = gpt.generate(prompt, 1, temperature=0.3).numpy()[:, -1]
    tt.manual_seed(5)
    assert np.array_equal(cold, gpt.generate(prompt, 1, temperature=0.3).numpy()[:, -1])
    hot = gpt.generate(prompt, 1, temperature=3.0).numpy()[:, -1]
    top = np.argmax(gpt(prompt[:1]).numpy()[0, -1])
    assert (cold == top).mean() > (hot == top).mean()


def test_layer_norm_of_rows_whose_squares_overflow_is_the_true_value():
    """Issue 30: float32 rows beyond ~1.8e19 (float64: 1.3e154) square to inf; the output is
    still the ordinary normalised row, and so is the gradient (PyTorch's Welford sums give NaN
    or 0 here, pytorch/pytorch#162489; docs/conformance.md, layer-norm-overflowing-variance).
    The oracle: the same rows scaled down by ``s`` in float64, where ``LN(x) = LN'(x / s)``
    with ``eps / s²`` and ``dLN/dx = dLN'/dx' / s``."""
    rows = [[2e19, 2e19, 2e19, 2e19], [3e19, 1e19, 0.0, -5e18], [1e20, -1e20, 5e19, 0.0],
            [1e36, 2e36, -3e36, 1.0]]
    upstream = np.array([1.0, -2.0, 0.5, 0.25])
    for dtype, scale in (("float32", 1.0), ("float64", 1e135)):
        x = np.array(rows, dtype=np.float64) * scale
        s = np.abs(x - x.mean(axis=1, keepdims=True)).max(axis=1, keepdims=True)
        s[s == 0] = 1.0
        small = tt.Tensor(x / s, requires_grad=True)
        with np.errstate(over="ignore"):
            eps = tt.Tensor(1e-5 / s[:, 0] ** 2)  # per row (0 when s² overflows: negligible)
        xc = small - small.mean(dim=1, keepdim=True)
        want = xc / ((xc * xc).mean(dim=1, keepdim=True) + eps.reshape(-1, 1)).sqrt()
        want.backward(tt.Tensor(np.tile(upstream, (len(rows), 1))))
        ours = tt.Tensor(x.astype(dtype), requires_grad=True)
        out = T.layer_norm(ours, (4,))
        out.backward(tt.Tensor(np.tile(upstream, (len(rows), 1)).astype(dtype)))
        assert np.isfinite(out.numpy()).all() and np.isfinite(ours.grad.numpy()).all(), dtype
        np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=dtype)
        np.testing.assert_allclose(ours.grad.numpy() * s, small.grad.numpy(), rtol=1e-4,
                                   atol=1e-6, err_msg=dtype)


def test_the_averaging_column_is_made_once_and_cannot_be_changed():
    """``_averager`` (given to LayerNorm's forward) hands every call the same read-only
    ``(n, 1)`` column of ``1 / n``: no call can alter what the next one averages with."""
    avg = T._averager(64, np.dtype(np.float32))
    assert avg is T._averager(64, np.dtype(np.float32))
    assert avg.shape == (64, 1) and avg.dtype == np.float32
    assert np.all(avg == np.float32(1 / 64))
    assert not avg.flags.writeable
    assert T._averager(3, np.dtype(np.float64)).dtype == np.float64
    rows = np.random.default_rng(0).standard_normal((5, 64)).astype(np.float32)
    np.testing.assert_allclose(rows.dot(avg)[:, 0], rows.mean(axis=1), rtol=1e-5, atol=1e-6)


def test_layer_norm_of_one_row_after_many_rows_is_unchanged():
    """The cached column is shared between calls of every size: a one-row LayerNorm (a
    generation step) after a many-row one (a training batch) gives the row's own numbers."""
    rng = np.random.default_rng(1)
    ln = T.LayerNorm(16)
    many = rng.standard_normal((8, 4, 16)).astype(np.float32)
    ln(tt.Tensor(many))
    one = many[:1, :1]
    x = one.astype(np.float64)
    expected = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(ln(tt.Tensor(one)).numpy(), expected, rtol=1e-5, atol=1e-5)
