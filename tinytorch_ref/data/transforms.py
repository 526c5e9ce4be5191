"""``tinytorch.data.transforms`` — image transforms on ``(C, H, W)`` arrays or Tensors, as
``torchvision.transforms`` (a facade over module 08)."""

from ..dataloader import Compose, Normalize, RandomCrop, RandomHorizontalFlip, ToTensor, pad

__all__ = ["Compose", "Normalize", "RandomCrop", "RandomHorizontalFlip", "ToTensor", "pad"]
