"""``tinytorch.ao.quantization`` — observers and model conversion (module 15), a facade.

Re-exports what ``torch.ao.quantization`` calls the same: the observers, ``QConfig`` and the
default qconfigs, ``quantize_dynamic``, ``prepare`` and ``convert``; plus the course's
``QuantizedLinear``, ``quantize_model`` and ``model_bytes``. The tensor-level functions
(``quantize_per_tensor``, ``quantize_per_channel``, ``qint8``, ``quint8``) are at the top of
the package, as in PyTorch.
"""

from ..quantization import (
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    ObserverBase,
    PerChannelMinMaxObserver,
    QConfig,
    QuantizedLinear,
    convert,
    default_dynamic_qconfig,
    default_per_channel_qconfig,
    default_qconfig,
    model_bytes,
    per_channel_dynamic_qconfig,
    prepare,
    quantize_dynamic,
    quantize_model,
)

__all__ = [
    "MinMaxObserver", "MovingAverageMinMaxObserver", "ObserverBase", "PerChannelMinMaxObserver",
    "QConfig", "QuantizedLinear", "convert", "default_dynamic_qconfig",
    "default_per_channel_qconfig", "default_qconfig", "model_bytes",
    "per_channel_dynamic_qconfig", "prepare", "quantize_dynamic", "quantize_model",
]
