"""``tinytorch.data`` — datasets, samplers and the DataLoader, as ``torch.utils.data`` (a facade).

Hand-written infrastructure over module 08 (``dataloader.py``). PyTorch's layout:

* ``tinytorch.data``: ``Dataset``, ``TensorDataset``, ``Subset``, ``random_split``,
  ``Sampler``/``SequentialSampler``/``RandomSampler``/``BatchSampler``, ``DataLoader``,
  ``default_collate``, ``default_convert`` (``torch.utils.data``);
* ``tinytorch.data.transforms``: ``Compose``, ``ToTensor``, ``Normalize``, ``RandomCrop``,
  ``RandomHorizontalFlip``, ``pad`` (``torchvision.transforms``);
* ``tinytorch.data.datasets``: ``MNIST``, ``FashionMNIST``, ``CIFAR10`` and the file readers
  (``torchvision.datasets``).

``tinytorch.Generator`` (like ``torch.Generator``) seeds shuffles.
"""

from ..dataloader import (
    BatchSampler,
    DataLoader,
    Dataset,
    Generator,
    RandomSampler,
    Sampler,
    SequentialSampler,
    Subset,
    TensorDataset,
    default_collate,
    default_convert,
    random_split,
)
from . import datasets, transforms

__all__ = [
    "BatchSampler", "DataLoader", "Dataset", "Generator", "RandomSampler", "Sampler",
    "SequentialSampler", "Subset", "TensorDataset", "datasets", "default_collate",
    "default_convert", "random_split", "transforms",
]
