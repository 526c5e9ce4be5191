"""Module 01 beyond the common contract (tests/test_module_contract.py)."""

from __future__ import annotations

import tinytorch_ref


def test_imagenet_batch_costs_about_19_mb():
    import numpy as np

    batch = tinytorch_ref.Tensor(np.zeros((32, 3, 224, 224), dtype=np.float32))
    assert batch.memory_footprint() == 32 * 3 * 224 * 224 * 4
    assert round(batch.memory_footprint() / 1e6, 1) == 19.3
