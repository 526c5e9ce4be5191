"""``tinytorch.nn.utils`` — where PyTorch keeps ``clip_grad_norm_`` (module 07) and ``prune``
(module 16), a facade.

``tinytorch.nn.utils.prune`` mirrors ``torch.nn.utils.prune``: ``l1_unstructured``,
``global_unstructured``, ``ln_structured`` and ``remove`` act in place on layers that carry
masks (``MaskedLinear``, made by ``make_prunable``), since tinytorch layers have no forward
hooks to attach a mask to.
"""

from __future__ import annotations

import sys
import types

from .. import compression as _compression
from ..training import clip_grad_norm_

prune = types.ModuleType(f"{__name__}.prune",
                         "Magnitude pruning (module 16), as torch.nn.utils.prune.")
_PRUNE_NAMES = ["MaskedLinear", "global_unstructured", "is_pruned", "l1_unstructured",
                "ln_structured", "make_prunable", "prune_model", "remove", "strip_masks"]
for _name in _PRUNE_NAMES:
    setattr(prune, _name, getattr(_compression, _name))
prune.__all__ = _PRUNE_NAMES  # type: ignore[attr-defined]
sys.modules[prune.__name__] = prune

__all__ = ["clip_grad_norm_", "prune"]
