"""``tinytorch.nn`` — layers, activations and losses under PyTorch's names (a facade).

Hand-written infrastructure: it only re-exports what modules 02 (activations), 03 (layers),
04 (losses), 11 (embeddings) and 12 (attention) define, so ``from tinytorch import nn;
nn.Linear(4, 2)`` works as in PyTorch.
"""

from ..activations import GELU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from ..attention import MultiheadAttention
from ..embeddings import Embedding
from ..layers import Dropout, Flatten, Linear, Module, Parameter, Sequential
from ..losses import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, MSELoss, NLLLoss
from . import functional, utils

__all__ = [
    "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "Dropout", "Embedding", "Flatten", "GELU",
    "Linear", "LogSoftmax", "MSELoss", "Module", "MultiheadAttention", "NLLLoss", "Parameter",
    "ReLU", "Sequential", "Sigmoid", "Softmax", "Tanh", "functional", "utils",
]
