"""tinytorch.optim — optimizers (module 06) and LR schedulers (module 07), PyTorch's layout.

Hand-written facade: ``optim.SGD``/``Adam``/``AdamW`` and ``optim.lr_scheduler.StepLR`` etc.
re-export the generated module files, so ``from tinytorch.optim.lr_scheduler import StepLR``
works as in PyTorch.
"""

from __future__ import annotations

import sys
import types

from .optimizers import SGD, Adam, AdamW, Optimizer
from .training import CosineAnnealingLR, LinearLR, LRScheduler, StepLR

lr_scheduler = types.ModuleType(
    f"{__name__}.lr_scheduler", "Learning-rate schedulers (module 07), as torch.optim.lr_scheduler.")
lr_scheduler.LRScheduler = LRScheduler  # type: ignore[attr-defined]
lr_scheduler.StepLR = StepLR  # type: ignore[attr-defined]
lr_scheduler.CosineAnnealingLR = CosineAnnealingLR  # type: ignore[attr-defined]
lr_scheduler.LinearLR = LinearLR  # type: ignore[attr-defined]
lr_scheduler.__all__ = ["LRScheduler", "StepLR", "CosineAnnealingLR", "LinearLR"]  # type: ignore[attr-defined]
sys.modules[lr_scheduler.__name__] = lr_scheduler

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "lr_scheduler"]
