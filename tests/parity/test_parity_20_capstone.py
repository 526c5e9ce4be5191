"""PyTorch parity · module 20 (capstone).

Module 20 adds no differentiable op; what it computes from PyTorch-defined pieces is checked
against PyTorch: ``optimize`` without fine-tuning is global L1 pruning
(``torch.nn.utils.prune.global_unstructured``) followed by symmetric per-channel INT8 weights
(``torch.quantize_per_channel`` with the observer's scales), and ``storage_bytes``'s CSR layout
stores what ``torch.Tensor.to_sparse_csr`` stores (``nnz`` values and column indices, ``rows +
1`` row pointers). Weights are normal draws, so magnitudes never tie.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.utils.prune as tprune

import tinytorch_ref as tt
from tinytorch_ref import capstone as C

pytestmark = [pytest.mark.parity,
              pytest.mark.filterwarnings("ignore:.*quantiz.*:UserWarning"),
              pytest.mark.filterwarnings("ignore:.*[Ss]parse CSR.*:UserWarning")]


def _mlp(rng: np.random.Generator) -> tuple:
    ours = tt.nn.Sequential(tt.nn.Linear(12, 16), tt.nn.ReLU(), tt.nn.Linear(16, 3))
    theirs = torch.nn.Sequential(torch.nn.Linear(12, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    for i in (0, 2):
        w = rng.standard_normal(ours[i].weight.shape).astype(np.float32)
        b = rng.standard_normal(ours[i].bias.shape).astype(np.float32)
        ours[i].weight.data[...] = w
        ours[i].bias.data[...] = b
        with torch.no_grad():
            theirs[i].weight.copy_(torch.from_numpy(w))
            theirs[i].bias.copy_(torch.from_numpy(b))
    return ours, theirs


@pytest.mark.parametrize("amount", [0.3, 0.5, 0.8])
def test_optimize_without_finetuning_is_torch_global_pruning_then_per_channel_int8(amount: float
                                                                                   ) -> None:
    rng = np.random.default_rng(int(amount * 100))
    ours, theirs = _mlp(rng)
    x = rng.standard_normal((40, 12)).astype(np.float32)
    q = C.optimize(ours, x, np.zeros(40, dtype=np.int64), amount=amount, finetune_epochs=0,
                   calibration=40)
    tprune.global_unstructured([(theirs[0], "weight"), (theirs[2], "weight")],
                               pruning_method=tprune.L1Unstructured, amount=amount)
    for i in (0, 2):
        w = theirs[i].weight.detach()  # the pruned weight (weight_orig * weight_mask)
        layer = q[i]
        scale = torch.from_numpy(layer.weight_scale.data.astype(np.float64))
        zp = torch.zeros(len(scale), dtype=torch.int64)
        expected = torch.quantize_per_channel(w, scale, zp, 0, torch.qint8).int_repr().numpy()
        assert np.array_equal(layer.qweight.data, expected), f"layer {i}"
        # torch's symmetric qint8 observer: scale = max |w| / ((q_max - q_min) / 2) = / 127.5
        amax = w.abs().amax(dim=1).numpy()
        assert np.allclose(layer.weight_scale.data, amax / 127.5, rtol=1e-6)
        assert np.allclose(layer.bias.data, theirs[i].bias.detach().numpy())


@pytest.mark.parametrize("shape, zeros", [((8, 20), 0.5), ((5, 300), 0.9), ((30, 7), 0.0)])
def test_storage_bytes_counts_what_torch_csr_stores(shape: tuple[int, int], zeros: float) -> None:
    rng = np.random.default_rng(shape[1])
    lin = tt.nn.Linear(shape[1], shape[0], bias=False)
    w = rng.standard_normal(shape).astype(np.float32)
    w[rng.random(shape) < zeros] = 0.0
    lin.weight.data[...] = w
    csr = torch.from_numpy(w).to_sparse_csr()
    nnz = csr.values().numel()
    assert csr.col_indices().numel() == nnz and csr.crow_indices().numel() == shape[0] + 1
    index = 1 if shape[1] <= 256 else 2
    expected = min(w.nbytes, nnz * (4 + index) + (shape[0] + 1) * 4)
    assert C.storage_bytes(lin) == expected
