"""``tinytorch.nn.functional`` — the function forms of activations and losses (a facade).

Re-exports modules 02 (activations), 04 (losses), 11 (embeddings) and 12 (attention), like
``torch.nn.functional``.
"""

from ..activations import gelu, log_softmax, relu, sigmoid, softmax, tanh
from ..attention import scaled_dot_product_attention
from ..embeddings import embedding
from ..losses import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    mse_loss,
    nll_loss,
)

__all__ = [
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy", "embedding",
    "gelu", "log_softmax", "mse_loss", "nll_loss", "relu", "scaled_dot_product_attention",
    "sigmoid", "softmax", "tanh",
]
