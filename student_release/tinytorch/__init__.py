"""tinytorch — your framework: each module's file is what ``python export.py NN`` (or
``tito module export NN``) wrote from your notebook of that module.

This file and the facades ``nn``, ``optim``, ``data`` are provided: they gather your modules
under PyTorch's names (``tinytorch.nn.Linear``, ``tinytorch.optim.SGD``); do not edit them.

Note: the factory ``tensor()`` stays in ``tinytorch.tensor`` (the module file); the package
attribute ``tensor`` is that module.
"""

from . import (
    ao,  # noqa: F401 - facade: quantization observers and conversion (15), like torch.ao
    autograd,  # noqa: F401 - the engine (05), like torch.autograd
    data,  # noqa: F401 - facade: datasets, DataLoader, transforms (08), like torch.utils.data
    nn,  # noqa: F401 - facade: layers, activations, losses (02-04)
    optim,  # noqa: F401 - facade: optimizers (06), lr_scheduler (07)
)
from .dataloader import Generator
from .quantization import (
    fake_quantize_per_tensor_affine,
    per_channel_affine,
    per_channel_symmetric,
    per_tensor_affine,
    per_tensor_symmetric,
    qint8,
    quantize_per_channel,
    quantize_per_tensor,
    quint8,
)
from .tensor import (
    Function,
    Tensor,
    arange,
    full,
    is_grad_enabled,
    manual_seed,
    no_grad,
    ones,
    ones_like,
    rand,
    randn,
    result_type,
    zeros,
    zeros_like,
)

__all__ = [
    "Function", "Generator", "Tensor", "arange", "fake_quantize_per_tensor_affine", "full",
    "is_grad_enabled", "manual_seed",
    "no_grad", "ones", "ones_like", "per_channel_affine", "per_channel_symmetric",
    "per_tensor_affine", "per_tensor_symmetric", "qint8", "quantize_per_channel",
    "quantize_per_tensor", "quint8", "rand", "randn", "result_type", "zeros", "zeros_like",
]
