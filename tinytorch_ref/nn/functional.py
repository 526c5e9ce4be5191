"""``tinytorch.nn.functional`` — the function forms of activations and losses (a facade).

Re-exports modules 02 (activations), 04 (losses) and 16 (``kl_div``), like
``torch.nn.functional``.
"""

from ..activations import gelu, log_softmax, relu, sigmoid, softmax, tanh
from ..compression import kl_div
from ..losses import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    mse_loss,
    nll_loss,
)

__all__ = [
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy", "gelu",
    "kl_div", "log_softmax", "mse_loss", "nll_loss", "relu", "sigmoid", "softmax", "tanh",
]
