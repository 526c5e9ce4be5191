"""``tinytorch.data.datasets`` — MNIST, Fashion-MNIST and CIFAR-10 (binary) from their real
files, SHA-256 checked, in a cache folder; as ``torchvision.datasets`` (a facade over module 08).
"""

from ..dataloader import (
    CIFAR10,
    MNIST,
    FashionMNIST,
    VisionDataset,
    check_integrity,
    default_root,
    read_cifar10_bin,
    read_idx,
    sha256_file,
)

__all__ = ["CIFAR10", "MNIST", "FashionMNIST", "VisionDataset", "check_integrity",
           "default_root", "read_cifar10_bin", "read_idx", "sha256_file"]
