"""``tinytorch.ao`` — "architecture optimization", PyTorch's home for quantization (a facade).

Only ``tinytorch.ao.quantization`` (module 15) lives here, as ``torch.ao.quantization``.
"""

from . import quantization

__all__ = ["quantization"]
