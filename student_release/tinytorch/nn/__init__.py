"""``tinytorch.nn`` — layers, activations and losses under PyTorch's names (a facade).

Hand-written infrastructure: it only re-exports what modules 02 (activations), 03 (layers),
04 (losses), 09 (spatial), 11 (embeddings), 12 (attention), 13 (transformers) and 16
(``KLDivLoss``) define, so ``from tinytorch import nn; nn.Linear(4, 2)`` works as in PyTorch.
"""

from ..activations import GELU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from ..attention import MultiheadAttention
from ..compression import KLDivLoss
from ..embeddings import Embedding
from ..layers import Dropout, Flatten, Linear, Module, Parameter, Sequential
from ..losses import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, MSELoss, NLLLoss
from ..spatial import AvgPool2d, BatchNorm2d, Conv2d, MaxPool2d, MaxUnpool2d
from ..transformers import LayerNorm
from . import functional, utils

__all__ = [
    "AvgPool2d", "BCELoss", "BCEWithLogitsLoss", "BatchNorm2d", "Conv2d", "CrossEntropyLoss",
    "Dropout", "Embedding", "Flatten", "GELU", "KLDivLoss", "LayerNorm", "Linear", "LogSoftmax",
    "MSELoss", "MaxPool2d", "MaxUnpool2d", "Module", "MultiheadAttention", "NLLLoss",
    "Parameter", "ReLU", "Sequential", "Sigmoid", "Softmax", "Tanh", "functional", "utils",
]
