"""``tinytorch.nn.utils`` — where PyTorch keeps ``clip_grad_norm_`` (a facade over module 07)."""

from ..training import clip_grad_norm_

__all__ = ["clip_grad_norm_"]
