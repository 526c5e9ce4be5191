"""``tinytorch.nn.functional`` — the function forms of activations and losses (a facade).

Re-exports modules 02 (activations), 03 (``linear``), 04 (losses), 09 (spatial), 11
(embeddings), 12 (attention), 13 (transformers) and 16 (``kl_div``), like ``torch.nn.functional``.
"""

from ..activations import gelu, log_softmax, relu, sigmoid, softmax, tanh
from ..attention import scaled_dot_product_attention
from ..compression import kl_div
from ..embeddings import embedding
from ..layers import linear
from ..losses import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    mse_loss,
    nll_loss,
)
from ..spatial import avg_pool2d, batch_norm, conv2d, max_pool2d, max_unpool2d
from ..transformers import layer_norm

__all__ = [
    "avg_pool2d", "batch_norm", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "conv2d", "cross_entropy", "embedding", "gelu", "kl_div", "layer_norm", "linear",
    "log_softmax", "max_pool2d", "max_unpool2d", "mse_loss", "nll_loss", "relu",
    "scaled_dot_product_attention", "sigmoid", "softmax", "tanh",
]
