"""Module 16 (compression): the reference against independent oracles, without torch.

* L1 masks against a brute-force oracle (sort every magnitude in Python), hypothesis inputs;
* pruning keeps pruned weights at zero through training (masks and zero gradients);
* structured pruning removes channels exactly when they feed nothing — Linear, Conv2d,
  through BatchNorm2d and Flatten — and really shrinks the layers;
* the SVD factorisation's error follows Eckart-Young for every rank;
* the lesson's measurement on the real 8x8 digits: 50% global pruning, with and without a
  short fine-tuning, and the composition with module 15's quantization.
"""

from __future__ import annotations

import numpy as np
from digits_mlp import trained_digits_mlp
from hypothesis import given
from hypothesis import strategies as st

import tinytorch_ref as tt
from tinytorch_ref import compression as C
from tinytorch_ref import quantization as Q


def _oracle_l1_mask(values: list[float], k: int) -> list[int]:
    order = sorted(range(len(values)), key=lambda i: (abs(values[i]), i))
    pruned = set(order[:k])
    return [0 if i in pruned else 1 for i in range(len(values))]


@given(values=st.lists(st.integers(-5, 5), min_size=1, max_size=30), data=st.data())
def test_l1_mask_matches_a_sorting_oracle_with_ties(values, data):
    k = data.draw(st.integers(0, len(values)))
    w = np.array(values, dtype=np.float32) / 4
    got = C.l1_unstructured_mask(w, k).astype(int).tolist()
    assert got == _oracle_l1_mask(w.tolist(), k)


@given(amount=st.floats(0, 1), seed=st.integers(0, 2**16))
def test_global_masks_prune_exactly_the_global_count(amount, seed):
    rng = np.random.default_rng(seed)
    tensors = [rng.standard_normal(s).astype(np.float32) for s in ((3, 4), (5,), (2, 2, 3))]
    masks = C.global_unstructured_masks(tensors, amount)
    n = sum(t.size for t in tensors)
    assert sum(int((m == 0).sum()) for m in masks) == round(amount * n)
    kept = np.concatenate([np.abs(t)[m == 1] for t, m in zip(tensors, masks, strict=True)])
    gone = np.concatenate([np.abs(t)[m == 0] for t, m in zip(tensors, masks, strict=True)])
    if kept.size and gone.size:
        assert gone.max() <= kept.min()


def test_pruned_weights_stay_zero_through_training():
    rng = np.random.default_rng(0)
    tt.manual_seed(0)
    model = tt.nn.Sequential(tt.nn.Conv2d(1, 3, 3), tt.nn.ReLU(), tt.nn.Flatten(),
                             tt.nn.Linear(3 * 4 * 4, 5))
    pruned = C.prune_model(model, 0.6)
    opt = tt.optim.SGD(pruned.parameters(), lr=0.1, momentum=0.9)
    x = tt.Tensor(rng.standard_normal((8, 1, 6, 6)).astype(np.float32))
    y = tt.Tensor(rng.integers(0, 5, 8))
    masks = [m.weight_mask.numpy().copy() for m in pruned.modules()
             if isinstance(m, C.MASKED_TYPES)]
    for _ in range(5):
        opt.zero_grad()
        tt.nn.functional.cross_entropy(pruned(x), y).backward()
        for m in pruned.modules():
            if isinstance(m, C.MASKED_TYPES):
                assert not m.weight.grad.numpy()[m.weight_mask.numpy() == 0].any()
        opt.step()
    report = C.sparsity_report(pruned)
    assert report["global"]["sparsity"] == round(0.6 * report["global"]["total"]) / \
        report["global"]["total"]
    assert [m.weight_mask.numpy().tolist() for m in pruned.modules()
            if isinstance(m, C.MASKED_TYPES)] == [m.tolist() for m in masks]
    plain = C.strip_masks(pruned)
    assert not C.is_pruned(plain) and C.is_pruned(pruned)
    assert C.sparsity_report(plain)["global"] == report["global"]


def test_prune_channels_removes_channels_that_feed_nothing_exactly():
    rng = np.random.default_rng(1)
    tt.manual_seed(1)
    net = tt.nn.Sequential(tt.nn.Conv2d(2, 6, 3, padding=1), tt.nn.BatchNorm2d(6), tt.nn.ReLU(),
                           tt.nn.Conv2d(6, 4, 3, padding=1), tt.nn.ReLU(), tt.nn.MaxPool2d(2),
                           tt.nn.Flatten(), tt.nn.Linear(4 * 3 * 3, 8), tt.nn.ReLU(),
                           tt.nn.Linear(8, 3))
    net[1].running_mean.data[...] = rng.standard_normal(6).astype(np.float32)
    net[1].running_var.data[...] = rng.uniform(0.5, 2, 6).astype(np.float32)
    dead = {0: [1, 4], 3: [0, 2], 7: [3, 5, 6]}      # smallest norms, and their outputs unused
    for i, rows in dead.items():
        net[i].weight.data[rows] *= 0.01
    net[3].weight.data[:, [1, 4]] = 0.0
    net[7].weight.data.reshape(8, 4, 9)[:, [0, 2]] = 0.0
    net[9].weight.data[:, [3, 5, 6]] = 0.0
    net.eval()
    slim = C.prune_channels(net, 0.4)
    assert [tuple(p.shape) for p in slim.parameters()] == [
        (4, 2, 3, 3), (4,), (4,), (4,), (2, 4, 3, 3), (2,), (5, 18), (5,), (3, 5), (3,)]
    assert slim[1].num_features == 4 and slim[1].running_mean.shape == (4,)
    x = tt.Tensor(rng.standard_normal((3, 2, 6, 6)).astype(np.float32))
    with tt.no_grad():
        np.testing.assert_allclose(slim(x).numpy(), net(x).numpy(), atol=1e-5)
    assert C.parameter_count(slim) < C.parameter_count(net)


def test_low_rank_error_follows_eckart_young_for_every_rank():
    rng = np.random.default_rng(2)
    lin = tt.nn.Linear(9, 7)
    lin.weight.data[...] = rng.standard_normal((7, 9)).astype(np.float32)
    s = np.linalg.svd(lin.weight.numpy().astype(np.float64), compute_uv=False)
    errors = []
    for r in range(1, 8):
        m = C.low_rank_linear(lin, r)
        product = m[1].weight.numpy() @ m[0].weight.numpy()
        errors.append(C.relative_error(product, lin.weight.numpy()))
        np.testing.assert_allclose(errors[-1], np.sqrt((s[r:] ** 2).sum() / (s ** 2).sum()),
                                   atol=1e-5)
        assert C.parameter_count(m) == r * (9 + 7) + 7
    assert errors == sorted(errors, reverse=True) and errors[-1] < 1e-5


def test_digits_mlp_half_pruned_then_quantized():
    """The lesson's measurement, pinned for seed 0: 50% global pruning, fine-tuning that keeps
    the masks, and module 15's INT8 on top of the pruned model."""
    trained = trained_digits_mlp(seed=0)
    model, train_x, accuracy = trained.model, trained.train_x, trained.accuracy
    base = accuracy(model)
    pruned = C.prune_model(model, 0.5)
    assert C.parameter_count(pruned, nonzero=True) == 4810 - 2368
    assert base - accuracy(pruned) <= 0.02
    trainer = tt.training.Trainer(pruned, tt.nn.CrossEntropyLoss(),
                                  tt.optim.Adam(pruned.parameters(), lr=1e-3))
    for _ in range(3):
        trainer.train_epoch(train_x, trained.train_y, 32, trained.rng)
    pruned.eval()
    assert C.sparsity_report(pruned)["global"]["sparsity"] == 0.5
    assert base - accuracy(pruned) <= 0.01
    both = Q.quantize_model(C.strip_masks(pruned), [train_x[:256]])
    assert abs(accuracy(both) - accuracy(pruned)) <= 0.01
