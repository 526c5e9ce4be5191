# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Module 14 · Profiling
#
# You have built a framework that trains MLPs, CNNs and a GPT. Before making any of it
# faster or smaller (modules 15–19), you need to know **where the parameters, the
# arithmetic, the memory and the time go**, measured rather than guessed. In this module you
# build the tools every optimisation starts from: parameter counts per layer, FLOP counts
# with a stated convention, the memory of training (weights, gradients, optimizer state and
# the activations the autograd graph keeps), latency statistics that survive a noisy machine,
# and a `Profiler` that prints a per-layer table of your own models.
#
# ## Learning objectives
#
# By the end of this module you can:
#
# 1. count a model's parameters per layer (each shared parameter once) and its training
#    memory: weights, gradients, optimizer state (Adam keeps 2 numbers per parameter);
# 2. count the FLOPs of `Linear`, `Conv2d`, attention, normalisation and activations with one
#    convention — **a multiply-add is 2 FLOPs** — and check them against PyTorch's counter;
# 3. **measure** the activation memory a forward pass keeps for backward by walking the
#    autograd graph, and explain why it differs from the textbook formula;
# 4. time code properly: on the **CPU clock** of the thread (not the wall clock), with
#    warm-up, repeats, the **median** and the **interquartile range**,
#    and the **paired ratio** of two alternating versions with a confidence interval — the
#    measurement module 19's benchmarks and the 2018 milestone reuse;
# 5. attach **forward hooks** to every layer and build a per-layer profile (parameters,
#    FLOPs, output shape, time), and read it: which layers are compute-bound and which are
#    dominated by overhead and memory traffic.
#
# ## How to work through this notebook
#
# Fill in every function that raises `NotImplementedError` (docstrings give what / APPROACH /
# EXAMPLE / HINT) and run each `grader.check(...)`. Cells starting with `#| export` become
# `tinytorch/profiling.py` (`python export.py 14`).

# %%
import time

import numpy as np

# %% [markdown]
# ## 1. Parameters and the memory of training
#
# A parameter belongs to the module that registered it (`self.weight = Parameter(...)`), so
# "parameters per layer" means the parameters each module owns *directly* (its
# `_parameters`), and a model's total is their sum. Two layers can share one `Parameter`
# (weight tying); it is stored once, so it is counted once, at its first owner in
# `named_modules()` order.
#
# ```
#   Sequential(Linear(4, 8), ReLU(), Linear(8, 3))
#     "0"  Linear   weight (8, 4) + bias (8,)   = 40
#     "1"  ReLU     —                           =  0   (not listed)
#     "2"  Linear   weight (3, 8) + bias (3,)   = 27        total 67
# ```
#
# **Training memory.** Training keeps, for every trainable parameter, the parameter itself,
# its gradient (same shape) and the optimizer's state:
#
# | optimizer | state per parameter | bytes (float32) |
# |---|---|---|
# | SGD | none | 0 |
# | SGD with momentum | `momentum_buffer` | 4 |
# | Adam / AdamW | `exp_avg`, `exp_avg_sq` | 8 |
#
# so Adam training needs **4× the weights** before a single activation is stored: GPT-2 small
# as published (124 M parameters, its head tied to the token embedding; module 13's untied GPT
# counts 163 M) needs ~2 GB for weights, gradients and Adam state. Frozen parameters
# (`requires_grad=False`) get no gradient and no state. The activations come on top (section
# 3); they grow with the batch, the rest does not.

# %%
#| export
"""Module 14 · Profiling — depends on: tensor, activations, layers, optimizers, embeddings,
attention; used by: quantization, compression, memoization, acceleration, benchmarking.

Where a model's parameters, FLOPs, memory and time go: parameters per layer, FLOP formulas
(a multiply-add is 2 FLOPs), training memory, the activation bytes the autograd graph keeps,
latency statistics (``measure``, ``compare``: medians, IQR, paired ratios with a confidence
interval) and a per-layer ``Profiler`` built on forward hooks.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np

from tinytorch.activations import GELU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from tinytorch.attention import MultiheadAttention
from tinytorch.embeddings import LearnedPositionalEmbedding, SinusoidalPositionalEncoding
from tinytorch.layers import Linear, Module, Sequential  # noqa: F401 - for examples
from tinytorch.tensor import Context, Tensor, manual_seed, no_grad  # noqa: F401 - for examples

#: Arrays of optimizer state per trainable parameter (module 06's optimizers).
OPTIMIZER_STATE = {"sgd": 0, "momentum": 1, "adam": 2, "adamw": 2}


def parameters_by_module(model: Module) -> dict[str, int]:
    """How many parameters each module owns directly, by dotted name (shared ones once).

    Args:
        model: any module (a layer or a whole model).

    Returns:
        ``{module_name: count}`` in ``named_modules()`` order, only for modules that own at
        least one parameter (the root's own parameters are under ``""``). The values add up
        to the model's total.

    APPROACH:
        1. ``seen = set()`` of ``id``\\ s of parameters already counted; ``counts = {}``.
        2. For each ``(name, m)`` in ``model.named_modules()``: ``n = 0``; for each ``p`` in
           ``m._parameters.values()``: skip ``None`` and parameters already in ``seen``;
           otherwise add ``id(p)`` to ``seen`` and ``p.numel()`` to ``n``.
        3. Keep ``counts[name] = n`` when ``n > 0``; return ``counts``.

    EXAMPLE:
        >>> parameters_by_module(Sequential(Linear(4, 8), ReLU(), Linear(8, 3)))
        {'0': 40, '2': 27}

    HINT: ``_parameters`` holds only a module's *own* parameters (``named_modules`` visits the
    children); ``None`` entries are disabled ones such as ``Linear(..., bias=False)``'s bias.
    """
    # BEGIN SOLUTION NO PROMPT
    seen: set[int] = set()
    counts: dict[str, int] = {}
    for name, m in model.named_modules():
        n = 0
        for p in m._parameters.values():
            if p is None or id(p) in seen:
                continue
            seen.add(id(p))
            n += p.numel()
        if n > 0:
            counts[name] = n
    return counts
    # END SOLUTION
    raise NotImplementedError(  # STUB
        "module 14: implement parameters_by_module (see its docstring)")  # STUB


def training_memory(model: Module, optimizer: str = "adam",
                    activation_bytes: int = 0) -> dict[str, int]:
    """Bytes of training state: parameters, gradients, optimizer state, activations.

    Args:
        model: the model being trained.
        optimizer: ``"sgd"``, ``"momentum"``, ``"adam"`` or ``"adamw"`` (see
            ``OPTIMIZER_STATE``: arrays of state per trainable parameter).
        activation_bytes: the activations kept for backward (measure them with
            ``graph_activation_bytes``, section 3).

    Returns:
        ``{"parameters", "gradients", "optimizer", "activations", "total"}`` in bytes.

    Raises:
        ValueError: an unknown optimizer name (the message lists the known ones).

    APPROACH:
        1. Refuse a name that is not in ``OPTIMIZER_STATE`` (``ValueError``).
        2. ``parameters`` = the sum of ``p.data.nbytes`` over ``model.parameters()`` (each
           parameter once); ``trainable`` = the same over those with ``p.requires_grad``.
        3. ``gradients = trainable``; ``optimizer = OPTIMIZER_STATE[name] * trainable``.
        4. Return the dict with ``total`` = the sum of the four.

    EXAMPLE:
        >>> training_memory(Linear(100, 10), "adam")
        {'parameters': 4040, 'gradients': 4040, 'optimizer': 8080, 'activations': 0, 'total': 16160}

    HINT: count bytes with ``nbytes`` (a float64 parameter takes 8 per element), not elements.
    """
    # BEGIN SOLUTION NO PROMPT
    if optimizer not in OPTIMIZER_STATE:
        raise ValueError(f"training_memory: unknown optimizer {optimizer!r}; known: "
                         f"{sorted(OPTIMIZER_STATE)}")
    params = list(model.parameters())
    parameters = sum(p.data.nbytes for p in params)
    trainable = sum(p.data.nbytes for p in params if p.requires_grad)
    out = {"parameters": parameters, "gradients": trainable,
           "optimizer": OPTIMIZER_STATE[optimizer] * trainable,
           "activations": activation_bytes}
    out["total"] = sum(out.values())
    return out
    # END SOLUTION
    raise NotImplementedError(  # STUB
        "module 14: implement training_memory (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: parameters_and_memory
# points: 0

# %% [markdown]
# ### Check: parameters and training memory

# %% [raw]
# # BEGIN TESTS

# %%
def test_parameters_by_module_counts_each_parameter_once(parameters_by_module, Sequential,
                                                         Linear, ReLU):
    model = Sequential(Linear(4, 8), ReLU(), Linear(8, 3, bias=False))
    got = parameters_by_module(model)
    assert got == {"0": 40, "2": 24}, (
        f"Linear(4, 8) owns 4*8 + 8 = 40, Linear(8, 3, bias=False) owns 24 and ReLU nothing; "
        f"got {got}")
    tied = Sequential(Linear(3, 3), Linear(3, 3))
    tied[1].weight = tied[0].weight
    got = parameters_by_module(tied)
    assert got == {"0": 12, "1": 3}, (
        f"a shared weight is stored once and counted at its first owner: expected "
        f"{{'0': 12, '1': 3}}, got {got}")


# %%
def test_training_memory_adam_is_four_times_the_weights(training_memory, Linear):
    lin = Linear(100, 10)
    got = training_memory(lin, "adam", activation_bytes=123)
    assert got == {"parameters": 4040, "gradients": 4040, "optimizer": 8080,
                   "activations": 123, "total": 16283}, (
        f"1,010 float32 parameters = 4,040 bytes; gradients the same; Adam keeps 2 arrays per "
        f"parameter; got {got}")
    got = training_memory(lin, "sgd")["optimizer"]
    assert got == 0, f"plain SGD keeps no state: expected 0 optimizer bytes, got {got}"
    lin.bias.requires_grad = False
    frozen = training_memory(lin, "momentum")
    assert frozen["gradients"] == 4000 and frozen["optimizer"] == 4000, (
        f"a frozen bias has no gradient and no momentum buffer; got {frozen}")
    try:
        training_memory(lin, "adagrad")
    except ValueError:
        pass
    else:
        raise AssertionError("an unknown optimizer name must raise ValueError")


# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 2. FLOPs, with one convention
#
# A FLOP is one floating-point operation. Papers disagree by a factor of two because some
# count a **multiply-add** (MAC) as one operation; we follow PyTorch's
# `torch.utils.flop_counter` and count it as **2 FLOPs**. Our convention, in full:
#
# | layer | FLOPs of one forward | note |
# |---|---|---|
# | `Linear(in, out)` on `(*, in)` | `2·rows·in·out + rows·out` | rows = product of the leading dims; the second term is the bias add (none without a bias) |
# | `Conv2d` with output `(N, C_out, H', W')` | `2·N·C_out·H'·W'·(C_in/groups)·kh·kw + N·C_out·H'·W'` | every output is a dot product of length `C_in·kh·kw`, plus its bias |
# | attention `softmax(QKᵀ)V`, `Q (b, L, E)`, `K (b, S, E)`, `V (b, S, Ev)` | `2·b·L·S·E + 2·b·L·S·Ev` | the two matrix products; `b` = the product of the (broadcast) batch dims |
# | softmax / log-softmax | `5` per element | max, subtract, exp, sum, divide |
# | `LayerNorm`, `BatchNorm2d` | `5` per element, `+1` with a weight, `+1` with a bias | mean, subtract, square, sum, normalise; then scale and shift |
# | ReLU, Sigmoid, Tanh, GELU | `1` per element | one element-wise function |
# | pooling with a `kh × kw` window | `kh·kw` per output | the comparisons or additions of one window |
# | positional encodings | `1` per element | the add |
# | `Embedding`, `Dropout` (eval), `Flatten`, reshapes | `0` | data movement only |
#
# PyTorch's counter counts only the matrix products and convolutions; the bias adds,
# normalisations and activations are our additions (the parity tests subtract them).
# A `MultiheadAttention(E, h)` layer on `N` sequences of `L` queries and `S` keys costs its
# three input projections (`Linear(E, E)` each), attention per head with `head_dim = E/h`
# (`b = N·h`) plus a softmax over the `N·h·L·S` scores, and `out_proj` — a child `Linear`
# counted on its own row.
#
# ```
#   Linear(784, 256) on a batch of 32:   2·32·784·256 + 32·256 = 12,853,248 FLOPs ≈ 12.9 MFLOP
#   attention, b = 8, L = S = 128, E = Ev = 16:   2·8·128·128·(16 + 16) = 8,388,608
# ```
#
# Since `Conv2d` (module 09) and `LayerNorm` (module 13) are not imported here, `module_flops`
# dispatches on what the layer *has*: see its docstring.

# %%
#| export
#: FLOPs per element of parameter-free element-wise layers (our convention, table above).
ELEMENTWISE_FLOPS: dict[type, int] = {ReLU: 1, Sigmoid: 1, Tanh: 1, GELU: 1, Softmax: 5,
                                      LogSoftmax: 5}


def _prod(values: Sequence[int]) -> int:
    out = 1
    for v in values:
        out *= int(v)
    return out


def _pair(value: Any) -> tuple[int, int]:
    return (int(value), int(value)) if isinstance(value, (int, np.integer)) else (
        int(value[0]), int(value[1]))


def linear_flops(input_shape: Sequence[int], out_features: int, bias: bool = True) -> int:
    """FLOPs of ``Linear(in_features, out_features)`` on an input of ``input_shape``.

    Args:
        input_shape: ``(*, in_features)``.
        out_features: the layer's output width.
        bias: whether the layer adds a bias (one FLOP per output element).

    Returns:
        ``2 · rows · in_features · out_features`` (+ ``rows · out_features`` with a bias),
        where ``rows`` is the product of the leading dimensions (1 for a 1-D input).

    APPROACH: ``rows = _prod(input_shape[:-1])``; ``in_features = input_shape[-1]``; return
    the formula above as a Python ``int``.

    EXAMPLE:
        >>> linear_flops((32, 784), 256)
        12853248
        >>> linear_flops((2, 5, 3), 4, bias=False)
        240

    HINT: every output element is a dot product of length ``in_features``: that many
    multiply-adds, 2 FLOPs each.
    """
    # BEGIN SOLUTION NO PROMPT
    rows = _prod(input_shape[:-1])
    in_features = int(input_shape[-1])
    flops = 2 * rows * in_features * int(out_features)
    if bias:
        flops += rows * int(out_features)
    return flops
    # END SOLUTION
    raise NotImplementedError("module 14: implement linear_flops (see its docstring)")  # STUB


def conv2d_flops(output_shape: Sequence[int], in_channels: int, kernel_size: Any,
                 bias: bool = True, groups: int = 1) -> int:
    """FLOPs of a 2-D convolution that produced an output of ``output_shape``.

    Args:
        output_shape: ``(N, C_out, H_out, W_out)``.
        in_channels: ``C_in``.
        kernel_size: an int or a pair ``(kh, kw)``.
        bias: one FLOP per output element for the bias.
        groups: each output channel sees ``C_in / groups`` input channels.

    Returns:
        ``2 · outputs · (C_in // groups) · kh · kw`` (+ ``outputs`` with a bias), where
        ``outputs = N · C_out · H_out · W_out``.

    APPROACH: ``kh, kw = _pair(kernel_size)``; ``outputs = _prod(output_shape)``; return the
    formula.

    EXAMPLE:
        >>> conv2d_flops((2, 8, 5, 5), in_channels=3, kernel_size=3)
        22000

    HINT: using the *output* shape avoids redoing the padding and stride arithmetic: each
    output element is one dot product of length ``(C_in/groups)·kh·kw``.
    """
    # BEGIN SOLUTION NO PROMPT
    kh, kw = _pair(kernel_size)
    outputs = _prod(output_shape)
    flops = 2 * outputs * (int(in_channels) // int(groups)) * kh * kw
    if bias:
        flops += outputs
    return flops
    # END SOLUTION
    raise NotImplementedError("module 14: implement conv2d_flops (see its docstring)")  # STUB


def attention_flops(query_shape: Sequence[int], key_shape: Sequence[int],
                    value_shape: Sequence[int]) -> int:
    """FLOPs of the two products of ``softmax(Q Kᵀ) V`` (the softmax is counted apart).

    Args:
        query_shape: ``(..., L, E)``; key_shape: ``(..., S, E)``; value_shape:
            ``(..., S, Ev)``; the leading dims broadcast as in ``matmul``.

    Returns:
        ``2·b·L·S·E`` (scores) + ``2·b·L·S·Ev`` (weighted values), ``b`` the product of the
        broadcast batch shape.

    APPROACH:
        1. ``L, E = query_shape[-2:]``; ``S = key_shape[-2]``; ``Ev = value_shape[-1]``.
        2. ``b = _prod(np.broadcast_shapes(query_shape[:-2], key_shape[:-2],
           value_shape[:-2]))``.
        3. Return the formula.

    EXAMPLE:
        >>> attention_flops((8, 128, 16), (8, 128, 16), (8, 128, 16))
        8388608
        >>> attention_flops((2, 4, 5, 8), (5, 8), (2, 1, 5, 6))
        5600

    HINT: a key shared by every batch element (fewer batch dims) still costs one product per
    query batch: broadcast the batch shapes before multiplying them out.
    """
    # BEGIN SOLUTION NO PROMPT
    length, embed = int(query_shape[-2]), int(query_shape[-1])
    source = int(key_shape[-2])
    value_dim = int(value_shape[-1])
    batch = _prod(np.broadcast_shapes(tuple(query_shape[:-2]), tuple(key_shape[:-2]),
                                      tuple(value_shape[:-2])))
    return 2 * batch * length * source * embed + 2 * batch * length * source * value_dim
    # END SOLUTION
    raise NotImplementedError("module 14: implement attention_flops (see its docstring)")  # STUB


def multihead_attention_flops(module: MultiheadAttention, query_shape: Sequence[int],
                              key_shape: Sequence[int]) -> int:
    """FLOPs of ``MultiheadAttention`` itself: input projections, attention, softmax (provided).

    ``out_proj`` is a child ``Linear``, counted on its own row.

    Example:
        >>> mha = MultiheadAttention(16, 4, batch_first=True)
        >>> multihead_attention_flops(mha, (2, 5, 16), (2, 5, 16))
        20040
    """
    e, h = module.embed_dim, module.num_heads
    bias = module.in_proj_bias is not None
    rows_q, rows_k = _prod(query_shape) // e, _prod(key_shape) // e
    projections = (linear_flops((rows_q, e), e, bias)
                   + 2 * linear_flops((rows_k, e), e, bias))  # q; k and v
    batched = len(query_shape) == 3 and module.batch_first
    length = int(query_shape[1] if batched else query_shape[0])
    n = rows_q // length
    source = rows_k // n
    hs = e // h
    core = attention_flops((n * h, length, hs), (n * h, source, hs), (n * h, source, hs))
    return projections + core + 5 * n * h * length * source


def _first_tensor(value: Any) -> Tensor | None:
    """The output tensor of a layer (``MultiheadAttention`` returns ``(out, weights)``)."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (tuple, list)):
        for v in value:
            t = _first_tensor(v)
            if t is not None:
                return t
    return None


def module_flops(module: Any, args: tuple[Any, ...], output: Any) -> int:
    """FLOPs a layer does itself in one call (its children are counted on their own rows).

    Args:
        module: the layer that ran.
        args: the positional arguments it was called with (``args[0]`` is the input).
        output: what it returned (a Tensor, or a tuple whose first item is one).

    Returns:
        The FLOPs of the convention table, or 0 for layers that only move data and for
        containers (``Sequential``, your models), whose work is in their children.

    APPROACH (first match wins; ``out = _first_tensor(output)``):
        1. ``Linear``: ``linear_flops(args[0].shape, module.out_features,
           module.bias is not None)``.
        2. ``MultiheadAttention``: ``multihead_attention_flops(module, args[0].shape,
           args[1].shape)``.
        3. A layer with ``in_channels`` and ``kernel_size`` (``Conv2d``):
           ``conv2d_flops(out.shape, module.in_channels, module.kernel_size,
           module.bias is not None, getattr(module, "groups", 1))``.
        4. A layer with ``kernel_size`` only (pooling): ``kh·kw`` per output element.
        5. A layer with ``normalized_shape`` or ``num_features`` (``LayerNorm``,
           ``BatchNorm2d``): ``5 + (weight is not None) + (bias is not None)`` per element
           (use ``getattr(module, "weight", None)``).
        6. ``type(module)`` in ``ELEMENTWISE_FLOPS``: that many per element of ``out``.
        7. A positional encoding (``SinusoidalPositionalEncoding``,
           ``LearnedPositionalEmbedding``): 1 per element of ``out``.
        8. Anything else: 0 — and so is, from step 3 on, a layer whose ``output`` holds no
           tensor (``out is None``).

    EXAMPLE:
        >>> lin = Linear(784, 256); x = Tensor(np.zeros((32, 784), np.float32))
        >>> module_flops(lin, (x,), lin(x)), module_flops(ReLU(), (x,), x)
        (12853248, 25088)

    HINT: dispatching on attributes (``in_channels``, ``normalized_shape``) rather than on
    classes keeps this module importable without modules 09 and 13, and counts your own
    layers that follow PyTorch's names too.
    """
    # BEGIN SOLUTION NO PROMPT
    out = _first_tensor(output)
    if isinstance(module, Linear):
        return linear_flops(args[0].shape, module.out_features, module.bias is not None)
    if isinstance(module, MultiheadAttention):
        return multihead_attention_flops(module, args[0].shape, args[1].shape)
    if out is None:
        return 0
    if hasattr(module, "in_channels") and hasattr(module, "kernel_size"):
        return conv2d_flops(out.shape, module.in_channels, module.kernel_size,
                            getattr(module, "bias", None) is not None,
                            getattr(module, "groups", 1))
    if hasattr(module, "kernel_size"):
        kh, kw = _pair(module.kernel_size)
        return kh * kw * out.numel()
    if hasattr(module, "normalized_shape") or hasattr(module, "num_features"):
        per = (5 + (getattr(module, "weight", None) is not None)
               + (getattr(module, "bias", None) is not None))
        return per * out.numel()
    if type(module) in ELEMENTWISE_FLOPS:
        return ELEMENTWISE_FLOPS[type(module)] * out.numel()
    if isinstance(module, (SinusoidalPositionalEncoding, LearnedPositionalEmbedding)):
        return out.numel()
    return 0
    # END SOLUTION
    raise NotImplementedError("module 14: implement module_flops (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: flops
# points: 0

# %% [markdown]
# ### Check: FLOP formulas

# %% [raw]
# # BEGIN TESTS

# %%
def test_linear_and_conv_flops(linear_flops, conv2d_flops):
    got = linear_flops((32, 784), 256)
    assert got == 12_853_248, (
        f"2*32*784*256 multiply-add FLOPs + 32*256 bias adds = 12,853,248; got {got}")
    got = linear_flops((2, 5, 3), 4, bias=False)
    assert got == 240, f"rows = 2*5 = 10: 2*10*3*4 = 240 without a bias; got {got}"
    got = conv2d_flops((2, 8, 5, 5), 3, 3)
    assert got == 22_000, (
        f"400 outputs, each a dot product of 3*3*3 = 27 (2 FLOPs per multiply-add) plus a bias: "
        f"400*(54 + 1) = 22,000; got {got}")
    got = conv2d_flops((1, 4, 2, 3), 6, (1, 2), bias=False, groups=2)
    assert got == 288, f"groups=2: each output sees 6/2 = 3 channels: 2*24*3*2 = 288; got {got}"


# %%
def test_attention_and_module_flops(attention_flops, module_flops, MultiheadAttention, Linear,
                                    ReLU, Softmax, Tensor, np):
    got = attention_flops((8, 128, 16), (8, 128, 16), (8, 128, 16))
    assert got == 8_388_608, f"2*8*128*128*(16 + 16) = 8,388,608; got {got}"
    got = attention_flops((2, 4, 5, 8), (5, 8), (2, 1, 5, 6))
    assert got == 5600, (
        f"batch dims broadcast to (2, 4), b = 8: 2*8*5*5*(8 + 6) = 5,600; got {got}")
    x = Tensor(np.zeros((3, 7), np.float32))
    lin = Linear(7, 5)
    got = module_flops(lin, (x,), lin(x))
    assert got == 2 * 3 * 7 * 5 + 3 * 5, (
        f"a Linear(7, 5) on (3, 7) uses linear_flops: expected 2*3*7*5 + 3*5 = 225, got {got}")
    got = module_flops(ReLU(), (x,), x)
    assert got == 21, f"ReLU: 1 FLOP per element, expected 21 for (3, 7), got {got}"
    got = module_flops(Softmax(dim=-1), (x,), x)
    assert got == 105, f"softmax: 5 FLOPs per element, expected 105 for (3, 7), got {got}"
    mha = MultiheadAttention(16, 4, batch_first=True)
    q = Tensor(np.zeros((2, 5, 16), np.float32))
    got = module_flops(mha, (q, q, q), mha(q, q, q))
    assert got == 20_040, (
        f"3 projections (2*10*16*16 + 10*16 = 5,280 each) + attention over b = 2*4 heads "
        f"(2*8*5*5*(4 + 4) = 3,200) + softmax (5*8*5*5 = 1,000) = 20,040; got {got}")
    got = module_flops(object(), (x,), x)
    assert got == 0, f"a layer that only moves data costs 0 FLOPs, got {got}"


# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 3. Activation memory: measured on the autograd graph
#
# The textbook estimate of the activations a forward pass keeps for backward is "every
# layer's output". Your framework can do better than estimate: the autograd graph *is* what
# is kept. Every tensor the graph reaches holds its array alive until backward runs (module
# 05's `Node.inputs`), and a `Function` keeps what it saved in its `Context`.
#
# ```
#   out ─ Node(_LinearFn) ─┬─ x      leaf (input): not counted
#                          ├─ W      leaf (weight)
#                          └─ b      leaf (parameter)
#   kept for backward: out, and the input rows x.reshape(-1, in): a *view* of x, no new memory
#
#   the same layer composed as x @ W.T + b (three tensor operations) keeps one array more:
#   out ─ Node(add) ─┬─ (x @ W.T) ─ Node(matmul) ─┬─ x
#                    └─ b                         └─ W.T ─ Node(transpose) ─ W
#   kept for backward: out, x @ W.T       W.T is a view of W: no new memory
# ```
#
# Count **storage**, not tensors: a reshape or a transpose is a view that shares its base's
# buffer (module 01), so follow `array.base` to the array that owns the memory and count each
# owner once. Leaves (parameters and inputs: `_node is None`) are not activations — their
# buffers, and any view of them, are excluded.
#
# `saved_arrays(node)` (given) lists the arrays a node saved besides its inputs: the values
# in `node.saved`, digging into a `Function`'s `Context` (and contexts inside it).

# %%
#| export
def storage(array: Any) -> Any:
    """The object that owns an array's memory: follow ``.base`` to the end (provided).

    Example:
        >>> a = np.zeros((4, 6), np.float32)
        >>> storage(a.T) is a, storage(a[1:].reshape(3, 2, 3)) is a
        (True, True)
    """
    while getattr(array, "base", None) is not None:
        array = array.base
    return array


def saved_arrays(node: Any) -> Iterator[np.ndarray]:
    """Every NumPy array a graph node saved for backward, besides its inputs (provided)."""
    stack: list[Any] = list(node.saved.values())
    while stack:
        value = stack.pop()
        if isinstance(value, np.ndarray):
            yield value
        elif isinstance(value, Tensor):
            yield value.data
        elif isinstance(value, Context):
            stack.extend(value.saved)
        elif isinstance(value, (tuple, list)):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())


def graph_activation_bytes(output: Tensor) -> int:
    """Bytes of activation memory the autograd graph of ``output`` keeps alive.

    Args:
        output: the result of a forward pass run with gradients enabled.

    Returns:
        The total ``nbytes`` of the distinct storages of every array the graph holds —
        ``output`` and every non-leaf tensor it reaches, plus ``saved_arrays(node)`` of their
        nodes — except storages that belong to a leaf (a parameter, an input).

    APPROACH:
        1. Walk the graph from ``output`` with a stack and a ``seen`` set of tensor ids. A
           leaf (``t._node is None``): add ``id(storage(t.data))`` to ``leaf_storage``. Any
           other tensor: add ``t.data`` and every array of ``saved_arrays(t._node)`` to a
           list ``kept``, and push the node's ``inputs``.
        2. Map each array of ``kept`` to its ``storage(...)``; keep one entry per ``id``,
           skipping ids in ``leaf_storage``.
        3. Return the sum of ``nbytes`` of those storages (``getattr(s, "nbytes", 0)``).

    EXAMPLE:
        >>> x = Tensor(np.ones((4, 8), np.float32), requires_grad=True)
        >>> graph_activation_bytes((x * 2.0).reshape(8, 4).sum())
        132

    HINT: ``(x * 2)`` owns 4·8·4 = 128 bytes, its reshape is a view of them (0 more), and the
    0-d sum owns 4: 132. Collect the leaves' storages during the walk and subtract at the
    end — a view of a weight (``W.T``) can be met before the weight itself.
    """
    # BEGIN SOLUTION NO PROMPT
    stack = [output]
    seen: set[int] = set()
    leaf_storage: set[int] = set()
    kept: list[Any] = []
    while stack:
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        if t._node is None:
            leaf_storage.add(id(storage(t.data)))
            continue
        kept.append(t.data)
        kept.extend(saved_arrays(t._node))
        stack.extend(t._node.inputs)
    owners: dict[int, Any] = {}
    for array in kept:
        owner = storage(array)
        if id(owner) not in leaf_storage:
            owners[id(owner)] = owner
    return int(sum(getattr(s, "nbytes", 0) for s in owners.values()))
    # END SOLUTION
    raise NotImplementedError(  # STUB
        "module 14: implement graph_activation_bytes (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: activation_memory
# points: 0

# %% [markdown]
# ### Check: activation bytes on the graph

# %% [raw]
# # BEGIN TESTS

# %%
def test_graph_activation_bytes_counts_storage_once(graph_activation_bytes, Linear, Tensor, np):
    x = Tensor(np.ones((4, 8), np.float32), requires_grad=True)
    got = graph_activation_bytes((x * 2.0).reshape(8, 4).sum())
    assert got == 132, (
        f"x * 2 owns 128 bytes, its reshape is a view (0 more) and the sum owns 4: 132; got "
        f"{got} (count each storage once, follow .base)")
    lin = Linear(6, 5)
    inp = Tensor(np.ones((3, 6), np.float32))
    got = graph_activation_bytes(lin(inp))
    assert got == 3 * 5 * 4, (
        f"Linear (one fused node, module 03) keeps its output (3x5 floats): 60 bytes; the rows "
        f"it saves are a view of the input, a leaf like W and b; got {got}")
    got = graph_activation_bytes(x)
    assert got == 0, f"a leaf alone keeps no activations: expected 0 bytes, got {got}"


# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 4. Timing done right: the right clock, warm-up, repeats, median, spread
#
# One clock reading before and one after one call measures the noise as much as the code:
# the first calls pay for allocating fresh memory pages and filling caches, and other
# processes take the CPU at random moments. The rules every benchmark (module 19, the 2018
# milestone) follows:
#
# 1. **Use a CPU clock**: time with `time.thread_time_ns()` (below), not a wall clock.
# 2. **Warm up**: run the code a few times untimed.
# 3. **Repeat**: time each of `repeats` calls separately.
# 4. **Summarise robustly**: noise only ever *adds* time, in bursts, so the **median** (not
#    the mean) is the typical time and the **interquartile range** `IQR = Q3 − Q1` is the
#    spread (quartiles by linear interpolation, `np.percentile`'s default).
#
# ```
#   samples (µs): 102 101 103 100 250 101 102      mean 122.7  (dragged by the 250)
#   sorted:       100 101 101 102 102 103 250      median 102, Q1 101, Q3 102.5, IQR 1.5
# ```
#
# **Wall clock or CPU clock?** Python has two kinds of clock:
#
# | clock | counts | when other processes share the cores |
# |---|---|---|
# | `time.perf_counter_ns()` | wall time: everything that happens, to anyone | counts the time the OS gave the other processes while yours waited |
# | `time.thread_time_ns()` | CPU time this thread spent running | unchanged: a thread that waits is not charged |
# | `time.process_time_ns()` | CPU time of every thread of the process | unchanged, but adds other threads' work (and their idle spinning) |
#
# On a shared machine — a lab server, Colab, the grader — other processes take turns on the
# cores, a few milliseconds each. A call longer than such a turn is interrupted in nearly
# every repeat, a short one mostly runs untouched, so the wall clock makes the long call
# look slower *relative to the short one*: the ratio moves, not only the times. Pairing does
# not help: it cancels a burst that hits both members of a pair alike, but another user's job
# lasts longer than a pair and hits every pair the same way, so the median ratio moves and its
# interval narrows around the wrong value. The experiment below measures it beside busy
# processes. CPU time charges your thread only for the time it ran, so the course times
# **single-threaded code with `time.thread_time_ns`**: it is the default clock of `measure`,
# `compare` and the `Profiler`, and the grader's clock too.
#
# Two caveats. *Threads*: NumPy hands large matrix products to a BLAS library that may run
# them on several threads; the calling thread's clock then misses the others' share. The
# grader and the milestones run BLAS on one thread (`OPENBLAS_NUM_THREADS=1`, set before NumPy
# is imported); do the same when you time matrix products, or pass
# `timer=time.process_time_ns` (every thread, on a quiet machine). *Resolution*: on Linux and
# macOS the thread clock ticks in nanoseconds to microseconds; on Windows it advances in steps
# of about 15 ms, so there time a loop of many calls per sample. CPU time is not immune to
# everything either: a neighbour on the same core (hyper-threading) or a cooler, slower clock
# speed still changes it, just far less than sharing the core.
#
# **Comparing two versions.** "B is 1.8× faster than A" is a *ratio*, and a ratio measured
# on one machine transfers to another far better than a time. Measure it in pairs: run A then
# B, `repeats` times, so that a burst of noise hits both members of a pair; each pair gives a
# ratio `a_i / b_i`. Report the **median ratio** with a **confidence interval**. A
# distribution-free interval for a median comes from order statistics: sorted values
# `v_1 ≤ … ≤ v_n` bracket the median between `v_k` and `v_{n−k+1}` with probability
# `1 − 2·P(X ≤ k − 1)`, `X ~ Binomial(n, ½)` (each value lies below the median with
# probability ½). Take the largest `k` whose coverage is at least the confidence asked for;
# with too few samples (5 or fewer at 95 %) no `k` works and the honest answer is
# `(-inf, inf)`: the data cannot support any claim.
#
# Every function here takes a `timer` argument (default `time.thread_time_ns`): the checks
# pass a fake clock, so they test your statistics, never the speed of the machine.

# %%
#| export
class Timing(NamedTuple):
    """Summary of repeated timings, in the timer's unit (nanoseconds for thread_time_ns)."""

    samples: tuple[float, ...]
    median: float
    q1: float
    q3: float
    iqr: float
    min: float
    max: float


class Comparison(NamedTuple):
    """Paired timings of two versions: ``ratio`` is the median of ``a_i / b_i``."""

    ratios: tuple[float, ...]
    ratio: float
    low: float
    high: float
    a: Timing
    b: Timing


def summarize(samples: Sequence[float]) -> Timing:
    """Median, quartiles, IQR, min and max of timing samples.

    Args:
        samples: one or more durations (any unit).

    Returns:
        ``Timing(samples, median, q1, q3, iqr, min, max)``: ``samples`` as a tuple of the
        values given, every other field a Python ``float``.

    Raises:
        ValueError: no samples.

    APPROACH:
        1. Refuse an empty sequence.
        2. ``q1, median, q3 = np.percentile(np.asarray(samples, dtype=np.float64),
           [25, 50, 75])`` (linear interpolation).
        3. Return the ``Timing`` with ``iqr = q3 - q1`` and ``float`` of every number.

    EXAMPLE:
        >>> summarize([102, 101, 103, 100, 250, 101, 102])
        Timing(samples=(102, 101, 103, 100, 250, 101, 102), median=102.0, q1=101.0, q3=102.5, iqr=1.5, min=100.0, max=250.0)

    HINT: ``np.percentile`` returns NumPy floats; wrap them in ``float(...)`` so the result is
    plain Python data.
    """
    # BEGIN SOLUTION NO PROMPT
    if len(samples) == 0:
        raise ValueError("summarize: no samples")
    values = np.asarray(samples, dtype=np.float64)
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    return Timing(tuple(samples), float(median), float(q1), float(q3), float(q3 - q1),
                  float(values.min()), float(values.max()))
    # END SOLUTION
    raise NotImplementedError("module 14: implement summarize (see its docstring)")  # STUB


def measure(fn: Callable[[], Any], warmup: int = 3, repeats: int = 20,
            timer: Callable[[], float] = time.thread_time_ns) -> Timing:
    """Time ``fn()``: ``warmup`` untimed calls, then ``repeats`` timed ones.

    Args:
        fn: called with no arguments.
        warmup: untimed calls first (0 or more).
        repeats: timed calls (1 or more).
        timer: the clock; each sample is ``timer()`` after the call minus ``timer()`` before.

    Returns:
        ``summarize(samples)`` of the ``repeats`` durations, in the timer's unit.

    Raises:
        ValueError: ``warmup < 0`` or ``repeats < 1``.

    APPROACH:
        1. Check the arguments.
        2. Call ``fn()`` ``warmup`` times.
        3. ``repeats`` times: ``start = timer(); fn(); samples.append(timer() - start)``.
        4. Return ``summarize(samples)``.

    EXAMPLE:
        >>> clock = iter(range(0, 1000, 10)).__next__   # a fake clock: +10 per reading
        >>> measure(lambda: None, warmup=2, repeats=3, timer=clock).median
        10.0

    HINT: time each call on its own (not the whole loop divided by ``repeats``): the spread
    between calls is what tells you whether to trust the median.
    """
    # BEGIN SOLUTION NO PROMPT
    if warmup < 0 or repeats < 1:
        raise ValueError(f"measure: need warmup >= 0 and repeats >= 1, got {warmup} and "
                         f"{repeats}")
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        start = timer()
        fn()
        samples.append(timer() - start)
    return summarize(samples)
    # END SOLUTION
    raise NotImplementedError("module 14: implement measure (see its docstring)")  # STUB


def median_ci(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float]:
    """A distribution-free confidence interval for the median (from order statistics).

    Args:
        values: one or more numbers (e.g. paired ratios).
        confidence: the coverage asked for, in (0, 1).

    Returns:
        ``(v_k, v_{n-k+1})`` of the sorted values (1-based), for the largest ``k <= n // 2``
        with ``2 · P(X <= k - 1) <= 1 - confidence``, ``X ~ Binomial(n, 1/2)``;
        ``(-inf, inf)`` when even ``k = 1`` does not qualify. Python floats.

    Raises:
        ValueError: no values, or ``confidence`` outside (0, 1).

    APPROACH:
        1. Check the arguments; ``v = sorted(float(x) for x in values)``; ``n = len(v)``.
        2. ``k = 0``; ``cdf = 0.0``; for ``j`` in ``range(n // 2)``: ``cdf += math.comb(n, j)
           / 2 ** n`` (now ``P(X <= j)``); stop when ``2 * cdf > 1 - confidence``; otherwise
           ``k = j + 1``.
        3. ``k == 0``: return ``(-math.inf, math.inf)``; else ``(v[k - 1], v[n - k])``.

    EXAMPLE:
        >>> median_ci([5.0, 1.0, 4.0, 2.0, 3.0, 6.0])
        (1.0, 6.0)
        >>> median_ci([1.0, 2.0, 3.0, 4.0, 5.0])
        (-inf, inf)

    HINT: ``math.comb(n, j) / 2 ** n`` divides two exact integers, so it stays accurate for
    thousands of samples; with 6 values the interval [min, max] covers the median with
    probability ``1 - 2/64 ≈ 97 %``.
    """
    # BEGIN SOLUTION NO PROMPT
    if len(values) == 0:
        raise ValueError("median_ci: no values")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"median_ci: confidence must be in (0, 1), got {confidence}")
    v = sorted(float(x) for x in values)
    n = len(v)
    k = 0
    cdf = 0.0
    for j in range(n // 2):
        cdf += math.comb(n, j) / 2**n
        if 2.0 * cdf > 1.0 - confidence:
            break
        k = j + 1
    if k == 0:
        return (-math.inf, math.inf)
    return (v[k - 1], v[n - k])
    # END SOLUTION
    raise NotImplementedError("module 14: implement median_ci (see its docstring)")  # STUB


def compare(fn_a: Callable[[], Any], fn_b: Callable[[], Any], warmup: int = 3,
            repeats: int = 20, timer: Callable[[], float] = time.thread_time_ns,
            confidence: float = 0.95) -> Comparison:
    """Paired timing of two versions, alternating them: how many times slower is ``a``?

    Args:
        fn_a, fn_b: the two versions, called with no arguments.
        warmup: untimed pairs first (``fn_a()`` then ``fn_b()``).
        repeats: timed pairs (1 or more).
        timer: the clock.
        confidence: for the interval of the median ratio.

    Returns:
        ``Comparison(ratios, ratio, low, high, a, b)``: ``ratios[i] = a_i / b_i`` for pair
        ``i``; ``ratio`` their median (a float); ``(low, high) = median_ci(ratios,
        confidence)``; ``a`` and ``b`` the ``summarize`` of each version's samples. A ratio
        above 1 means ``b`` is faster.

    Raises:
        ValueError: ``warmup < 0`` or ``repeats < 1``.

    APPROACH:
        1. Check the arguments; ``warmup`` times: ``fn_a(); fn_b()``.
        2. ``repeats`` times, **a then b**: time ``fn_a()`` as in ``measure``, then
           ``fn_b()``; append to ``a_samples`` and ``b_samples``.
        3. ``ratios = tuple(x / y for x, y in zip(a_samples, b_samples))``;
           ``ratio = float(np.median(ratios))``; ``low, high = median_ci(ratios, confidence)``.

    EXAMPLE:
        >>> clock = iter(range(0, 10_000, 5)).__next__
        >>> compare(lambda: None, lambda: None, repeats=6, timer=clock)[1:4]
        (1.0, 1.0, 1.0)

    HINT: alternate, do not run all of ``a`` and then all of ``b``: a slow minute of the
    machine would then land on one version only. The median of the ratios is not the ratio
    of the medians: pairing cancels the noise both members share.
    """
    # BEGIN SOLUTION NO PROMPT
    if warmup < 0 or repeats < 1:
        raise ValueError(f"compare: need warmup >= 0 and repeats >= 1, got {warmup} and "
                         f"{repeats}")
    for _ in range(warmup):
        fn_a()
        fn_b()
    a_samples, b_samples = [], []
    for _ in range(repeats):
        start = timer()
        fn_a()
        a_samples.append(timer() - start)
        start = timer()
        fn_b()
        b_samples.append(timer() - start)
    ratios = tuple(x / y for x, y in zip(a_samples, b_samples, strict=True))
    low, high = median_ci(ratios, confidence)
    return Comparison(ratios, float(np.median(ratios)), low, high, summarize(a_samples),
                      summarize(b_samples))
    # END SOLUTION
    raise NotImplementedError("module 14: implement compare (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: timing
# points: 0

# %% [markdown]
# ### Check: timing statistics (with a fake clock)

# %% [raw]
# # BEGIN TESTS

# %%
def test_summarize_and_measure(summarize, measure):
    class FakeClock:  # moves only while the code under test "runs"
        now = 0

        def __call__(self):
            return self.now

        def work(self, durations):
            it = iter(durations)

            def fn():
                self.now += next(it)
            return fn

    t = summarize([102, 101, 103, 100, 250, 101, 102])
    assert (t.median, t.q1, t.q3, t.iqr, t.min, t.max) == (102.0, 101.0, 102.5, 1.5, 100.0, 250.0), (
        f"median 102, quartiles 101 and 102.5 (linear interpolation), IQR 1.5; got {t}")
    clock = FakeClock()
    got = measure(clock.work([1000, 900, 5, 7, 6, 50]), warmup=2, repeats=4, timer=clock)
    assert got.samples == (5, 7, 6, 50), (
        f"the 2 warm-up calls (1000 and 900 ns) are not timed; the 4 timed calls take 5, 7, 6 and "
        f"50 ns; got samples {got.samples}")
    assert got.median == 6.5, f"the median of 5, 7, 6, 50 is 6.5; got {got.median}"
    try:
        measure(lambda: None, repeats=0)
    except ValueError:
        pass
    else:
        raise AssertionError("repeats=0 measures nothing: raise ValueError")


# %%
def test_median_ci_and_compare(median_ci, compare, np):
    class FakeClock:  # moves only while the code under test "runs"
        now = 0

        def __call__(self):
            return self.now

        def work(self, durations):
            it = iter(durations)

            def fn():
                self.now += next(it)
            return fn

    got = median_ci([5.0, 1.0, 4.0, 2.0, 3.0, 6.0])
    assert got == (1.0, 6.0), (
        f"6 values at 95%: k = 1, the interval is [min, max] = (1.0, 6.0) (coverage 1 - 2/64), "
        f"got {got}")
    got = median_ci([1.0, 2.0, 3.0, 4.0, 5.0])
    assert got == (-np.inf, np.inf), (
        f"5 values cannot give 95% (2/32 > 0.05): expected (-inf, inf), got {got}: an honest "
        "'no conclusion' rather than a narrower interval that covers less")
    got = median_ci(list(range(1, 21)))
    assert got == (6.0, 15.0), (
        f"20 values at 95%: 2*P(X <= 5) = 0.041 <= 0.05 but 2*P(X <= 6) = 0.115 is not, so "
        f"k = 6 and the interval is (v_6, v_15) = (6, 15); got {got}")
    clock = FakeClock()
    a = clock.work([100] * 2 + [40, 30, 20, 10, 50, 60])
    b = clock.work([100] * 2 + [20, 10, 10, 10, 25, 20])
    got = compare(a, b, warmup=2, repeats=6, timer=clock)
    assert got.ratios == (2.0, 3.0, 2.0, 1.0, 2.0, 3.0), (
        f"pair i gives a_i / b_i: expected (2, 3, 2, 1, 2, 3), got {got.ratios}")
    assert got.ratio == 2.0 and (got.low, got.high) == (1.0, 3.0), (
        f"median ratio 2 with the interval [min, max] = [1, 3] for 6 pairs; got {got[1:4]}")
    assert got.a.median == 35.0 and got.b.median == 15.0, (
        f"a and b summarise each version: expected medians 35.0 and 15.0, got "
        f"{got.a.median} and {got.b.median}")


# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ### Experiment: two clocks beside busy processes
#
# Time a long call (a Python loop over 400,000 numbers: several milliseconds, longer than the
# turns the OS hands out) against a short one (20,000 numbers: a fraction of a millisecond)
# with your `compare`, on the wall clock and on the thread clock — first with the machine as it
# is, then beside twice as many spinning processes as it has cores, like other people's jobs
# on a shared server. The true ratio is about 20 (twenty times the numbers).

# %%
import os
import subprocess
import sys


def long_call():
    return sum(range(400_000))


def short_call():
    return sum(range(20_000))


def both_clocks():
    return {clock: compare(long_call, short_call, warmup=2, repeats=21, timer=timer)
            for clock, timer in (("wall", time.perf_counter_ns), ("thread", time.thread_time_ns))}


def busy_processes(n):
    """``n`` processes that spin on the CPU until killed: other people's jobs."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


as_is = both_clocks()
spinners = busy_processes(2 * (os.cpu_count() or 1))
try:
    busy = both_clocks()
finally:
    for p in spinners:
        p.kill()
        p.wait()
print(f"{'':30} {'long ms':>8} {'short ms':>9} {'ratio':>7}   95% interval")
for label, runs in (("as is", as_is), ("busy", busy)):
    for clock, c in runs.items():
        print(f"{label + ', ' + clock + ' clock':<30} {c.a.median / 1e6:8.2f} {c.b.median / 1e6:9.3f} "
              f"{c.ratio:7.1f}   [{c.low:.1f}, {c.high:.1f}]")
print(f"thread-clock ratio, busy / as is: {busy['thread'].ratio / as_is['thread'].ratio:.2f}")
print(f"busy: wall-clock ratio / thread-clock ratio: {busy['wall'].ratio / busy['thread'].ratio:.1f}")
# Expected shape: beside the busy processes the wall clock charges the long call for every turn
# the spinners took while it waited, the short call mostly runs between two turns: the
# wall-clock ratio comes out several times too large (at least 1.5x the thread clock's), with
# an interval that excludes the truth. The thread clock's ratio barely moves (busy / as is
# between 0.8 and 1.2). On a quiet machine both clocks agree; on a shared one the wall clock
# is already off before the spinners start.

# %% [markdown]
# ## 5. A per-layer profiler, with forward hooks
#
# To see every layer, the profiler must run code *around* each layer's `forward` without
# changing any layer. PyTorch's answer — and ours since module 02 — is **forward hooks**:
#
# ```
#   handle = layer.register_forward_pre_hook(before)    before(layer, args)
#   handle = layer.register_forward_hook(after)         after(layer, args, output)
#
#   layer(x):  before(layer, (x,))  →  out = layer.forward(x)  →  after(layer, (x,), out)
#   handle.remove()                                        the layer is plain again
# ```
#
# The `Profiler` registers both hooks on every module of the model (the model itself, its
# blocks, their layers). A module's hooks bracket its children's, so the time between a
# module's `before` and `after` is its *inclusive* time, and its *self* time is that minus its
# children's:
#
# ```
#   before(Seq) before(Lin0) after(Lin0) before(ReLU) after(ReLU) before(Lin2) after(Lin2) after(Seq)
#   │           └── Lin0 ──┘             └── ReLU ──┘             └── Lin2 ──┘           │
#   └──────────────────────────────── Seq (inclusive) ───────────────────────────────────┘
# ```
#
# `profile(*inputs)` runs `warmup` untimed forward passes, then `repeats` timed ones under
# `no_grad()` (inference: no graph to record). On the first timed pass the hooks also record,
# per module, its FLOPs (`module_flops`), its number of calls and its output shape. `rows()`,
# `table()` and `to_dict()` (given) turn this into the per-layer table.
#
# Hooks cost time themselves (two clock readings and a few dictionary updates per layer,
# about a microsecond): the profile of a tiny layer is mostly hook overhead. Use the
# profile to find where time goes, and `measure` to time a change.

# %%
#| export
class Profiler:
    """Per-layer parameters, FLOPs, output shapes and times of a model, via forward hooks.

    Example:
        >>> manual_seed(0)
        >>> model = Sequential(Linear(4, 8), ReLU(), Linear(8, 3))
        >>> prof = Profiler(model).profile(Tensor(np.ones((2, 4), np.float32)), repeats=3)
        >>> [(r["name"], r["flops"], r["output_shape"]) for r in prof.rows()]
        [('', 0, (2, 3)), ('0', 144, (2, 8)), ('1', 16, (2, 8)), ('2', 102, (2, 3))]
    """

    def __init__(self, model: Module, timer: Callable[[], float] = time.thread_time_ns) -> None:
        self.model = model
        self.timer = timer
        self.names: dict[int, str] = {id(m): name for name, m in model.named_modules()}
        self.starts: dict[int, list[float]] = {}  # id(module) -> start times of open calls
        self.current: dict[str, float] = {}       # name -> time in the current pass
        self.times: dict[str, list[float]] = {}   # name -> one total per timed pass
        self.flops: dict[str, int] = {}           # name -> self FLOPs of one pass
        self.calls: dict[str, int] = {}           # name -> calls in one pass
        self.shapes: dict[str, tuple[int, ...]] = {}  # name -> output shape
        self.recording = False                    # True on the pass that records FLOPs

    def _before(self, module: Any, args: tuple[Any, ...]) -> None:
        """Forward pre-hook: remember when this call of ``module`` started.

        APPROACH: ``self.starts.setdefault(id(module), []).append(self.timer())`` — a stack
        per module, so a module that calls itself (or is shared) still pairs up.

        EXAMPLE: see ``Profiler``'s example; ``_before`` and ``_after`` run inside every call.

        HINT: read the clock exactly once, and last: whatever the hook does after reading it
        would be charged to the layer.
        """
        # BEGIN SOLUTION NO PROMPT
        self.starts.setdefault(id(module), []).append(self.timer())
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 14: implement Profiler._before (see its docstring)")  # STUB

    def _after(self, module: Any, args: tuple[Any, ...], output: Any) -> None:
        """Forward hook: charge the elapsed time; on the recording pass also FLOPs and shape.

        APPROACH:
            1. ``end = self.timer()`` first; ``name = self.names[id(module)]``;
               ``elapsed = end - self.starts[id(module)].pop()``.
            2. ``self.current[name] = self.current.get(name, 0) + elapsed``.
            3. If ``self.recording``: add ``module_flops(module, args, output)`` to
               ``self.flops[name]`` and 1 to ``self.calls[name]`` (both start at 0), and set
               ``self.shapes[name] = tuple(_first_tensor(output).shape)`` (when it is not
               None).

        EXAMPLE: see ``Profiler``'s example.

        HINT: a module called twice in one pass (a shared layer) adds both calls' time and
        FLOPs: accumulate, do not overwrite.
        """
        # BEGIN SOLUTION NO PROMPT
        end = self.timer()
        name = self.names[id(module)]
        elapsed = end - self.starts[id(module)].pop()
        self.current[name] = self.current.get(name, 0) + elapsed
        if self.recording:
            self.flops[name] = self.flops.get(name, 0) + module_flops(module, args, output)
            self.calls[name] = self.calls.get(name, 0) + 1
            out = _first_tensor(output)
            if out is not None:
                self.shapes[name] = tuple(out.shape)
        # END SOLUTION
        raise NotImplementedError("module 14: implement Profiler._after (see its docstring)")  # STUB

    def profile(self, *inputs: Any, warmup: int = 1, repeats: int = 5) -> Profiler:
        """Run the model with hooks on every module and collect the per-layer numbers.

        Args:
            inputs: the model's positional arguments.
            warmup: untimed forward passes first.
            repeats: timed passes (1 or more); the first also records FLOPs and shapes.

        Returns:
            ``self`` (so ``Profiler(model).profile(x).table()`` reads well).

        Raises:
            ValueError: ``repeats < 1``.

        APPROACH:
            1. Refuse ``repeats < 1``. ``handles = []``.
            2. ``try:`` for every ``m`` in ``self.model.modules()``: append
               ``m.register_forward_pre_hook(self._before)`` and
               ``m.register_forward_hook(self._after)`` to ``handles``.
               ``with no_grad():`` run ``self.model(*inputs)`` ``warmup`` times; then for
               each timed pass ``r``: ``self.current = {}``, ``self.recording = (r == 0)``,
               run the model, and append each ``self.current[name]`` to
               ``self.times.setdefault(name, [])``.
            3. ``finally:`` call ``h.remove()`` for every handle and set
               ``self.recording = False`` — even when the model raises, it must come back
               without hooks. Return ``self``.

        EXAMPLE: see ``Profiler``'s example.

        HINT: warm-up passes also run the hooks (they fill ``self.current``); resetting
        ``self.current`` before every timed pass keeps them out of the times.
        """
        # BEGIN SOLUTION NO PROMPT
        if repeats < 1:
            raise ValueError(f"profile: repeats must be >= 1, got {repeats}")
        handles = []
        try:
            for m in self.model.modules():
                handles.append(m.register_forward_pre_hook(self._before))
                handles.append(m.register_forward_hook(self._after))
            with no_grad():
                for _ in range(warmup):
                    self.model(*inputs)
                for r in range(repeats):
                    self.current = {}
                    self.recording = r == 0
                    self.model(*inputs)
                    for name, elapsed in self.current.items():
                        self.times.setdefault(name, []).append(elapsed)
        finally:
            for h in handles:
                h.remove()
            self.recording = False
        return self
        # END SOLUTION
        raise NotImplementedError("module 14: implement Profiler.profile (see its docstring)")  # STUB

    # ----------------------------------------------------------------- the table (provided)
    def rows(self) -> list[dict[str, Any]]:
        """One dict per module that ran, in ``named_modules()`` order.

        Keys: ``name``, ``type``, ``depth``, ``calls``, ``output_shape``, ``params`` (own),
        ``params_total``, ``flops`` (self), ``flops_total``, ``time_ms`` and ``iqr_ms``
        (median and IQR of the inclusive time per pass), ``self_ms`` (median of inclusive
        minus children, per pass), ``share`` (``time_ms`` / the model's) and
        ``gflops_per_s`` (``flops_total`` / inclusive time).
        """
        own = parameters_by_module(self.model)
        root = self.times.get("")
        root_ms = float(np.median(root)) / 1e6 if root else 0.0
        out = []
        for name, m in self.model.named_modules():
            if name not in self.times:
                continue
            inside = [k for k in self.times if name == "" or k == name or
                      k.startswith(name + ".")]
            per_pass = np.asarray(self.times[name], dtype=np.float64)
            children = [f"{name}.{c}" if name else c for c in m._modules]
            self_pass = per_pass.copy()
            for child in children:
                if child in self.times:
                    self_pass -= np.asarray(self.times[child], dtype=np.float64)
            t = summarize(per_pass.tolist())
            flops_total = sum(self.flops.get(k, 0) for k in inside)
            out.append({
                "name": name, "type": type(m).__name__,
                "depth": 0 if name == "" else name.count(".") + 1,
                "calls": self.calls.get(name, 0), "output_shape": self.shapes.get(name),
                "params": own.get(name, 0),
                "params_total": sum(v for k, v in own.items()
                                    if name == "" or k == name or k.startswith(name + ".")),
                "flops": self.flops.get(name, 0), "flops_total": flops_total,
                "time_ms": t.median / 1e6, "iqr_ms": t.iqr / 1e6,
                "self_ms": float(np.median(self_pass)) / 1e6,
                "share": (t.median / 1e6) / root_ms if root_ms > 0 else 0.0,
                "gflops_per_s": flops_total / t.median if t.median > 0 else 0.0,
            })
        return out

    def table(self) -> str:
        """The rows as a text table (times in ms, FLOPs in MFLOP, inclusive of children)."""
        head = (f"{'layer':<28} {'type':<20} {'output':<16} {'params':>9} {'MFLOP':>9} "
                f"{'ms':>8} {'IQR':>7} {'self ms':>8} {'%':>5} {'GFLOP/s':>8}")
        lines = [head, "-" * len(head)]
        for r in self.rows():
            label = ("  " * r["depth"] + (r["name"].split(".")[-1] or "(model)"))[:28]
            shape = "x".join(str(s) for s in r["output_shape"] or ())
            lines.append(
                f"{label:<28} {r['type'][:20]:<20} {shape[:16]:<16} {r['params_total']:>9,} "
                f"{r['flops_total'] / 1e6:>9.3f} {r['time_ms']:>8.3f} {r['iqr_ms']:>7.3f} "
                f"{r['self_ms']:>8.3f} {100 * r['share']:>5.1f} {r['gflops_per_s']:>8.2f}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """``{"layers": rows, "total": {params, flops, time_ms, iqr_ms}}`` (plain data)."""
        rows = self.rows()
        root = rows[0] if rows and rows[0]["name"] == "" else None
        total = {"params": sum(parameters_by_module(self.model).values()),
                 "flops": sum(self.flops.values()),
                 "time_ms": root["time_ms"] if root else 0.0,
                 "iqr_ms": root["iqr_ms"] if root else 0.0}
        return {"layers": rows, "total": total}


# %% [raw]
# # BEGIN QUESTION
# name: profiler
# points: 0

# %% [markdown]
# ### Check: the profiler (with a clock that ticks once per reading)

# %% [raw]
# # BEGIN TESTS

# %%
def test_profiler_rows_and_hooks(Profiler, Sequential, Linear, ReLU, Tensor, np):
    ticks = iter(range(10**6))
    model = Sequential(Linear(4, 8), ReLU(), Linear(8, 3))
    x = Tensor(np.ones((2, 4), np.float32))
    prof = Profiler(model, timer=lambda: next(ticks)).profile(x, warmup=1, repeats=3)
    rows = {r["name"]: r for r in prof.rows()}
    assert list(rows) == ["", "0", "1", "2"], f"one row per module that ran; got {list(rows)}"
    got = {k: (r["flops"], r["calls"], r["output_shape"]) for k, r in rows.items()}
    assert got == {"": (0, 1, (2, 3)), "0": (144, 1, (2, 8)), "1": (16, 1, (2, 8)),
                   "2": (102, 1, (2, 3))}, (
        f"(self FLOPs, calls, output shape) per module from the first timed pass; got {got}")
    assert prof.times["0"] == [1, 1, 1], (
        f"3 timed passes; a leaf layer spans one tick (one reading in _before, one in _after); "
        f"got {prof.times['0']}")
    assert prof.times[""] == [7, 7, 7], (
        f"the model's hooks bracket its 3 children's 6 readings: 7 ticks per pass; got "
        f"{prof.times['']}")
    got = (rows[""]["flops_total"], rows[""]["params_total"])
    assert got == (262, 67), (
        f"the model's row adds up its children's FLOPs and parameters: expected (262, 67), "
        f"got {got}")
    left = (model.__dict__.get("_forward_hooks"), model[0].__dict__.get("_forward_pre_hooks"))
    assert not left[0] and not left[1], (
        f"profile() must remove every hook it registered; still there: {left}")
    out = model(x)
    assert out.shape == (2, 3), (
        f"the model still works after profiling: expected output (2, 3), got {out.shape}")


# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 6. Systems experiment: where do the FLOPs go, and where does the time go?
#
# Profile two of your models on this machine — an MLP on 8×8 digit images and a small
# attention model — and compare each layer's share of the **FLOPs** with its share of the
# **time**. The last column is the rate each layer achieves, in GFLOP/s.

# %%
manual_seed(0)
mlp = Sequential(Linear(64, 256), ReLU(), Linear(256, 256), ReLU(), Linear(256, 10))
digits = Tensor(np.random.default_rng(0).standard_normal((256, 64)).astype(np.float32))
print(Profiler(mlp).profile(digits, warmup=3, repeats=20).table())


class AttentionBlock(Module):
    """x + attn(x) -> x + mlp(x): a transformer block without normalisation."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        self.attn = MultiheadAttention(d_model, n_heads, batch_first=True)
        self.fc = Linear(d_model, 4 * d_model)
        self.act = ReLU()
        self.proj = Linear(4 * d_model, d_model)

    def forward(self, x):
        a, _ = self.attn(x, x, x, need_weights=False)
        x = x + a
        return x + self.proj(self.act(self.fc(x)))


block = AttentionBlock(64, 4)
tokens = Tensor(np.random.default_rng(1).standard_normal((8, 64, 64)).astype(np.float32))
print()
print(Profiler(block).profile(tokens, warmup=3, repeats=20).table())
# Expected shape: the Linear and attention rows hold nearly all the FLOPs and run at the
# highest GFLOP/s (matrix products use BLAS: many FLOPs per byte moved). The ReLU rows take a
# larger share of the time than of the FLOPs and run one to two orders of magnitude slower
# in GFLOP/s: an element-wise layer reads and writes every element once for one FLOP, so it
# waits on memory (and, at this size, on Python's fixed cost per call, plus the hooks' own
# microsecond). The residual adds in the block's forward are nobody's row: they show up as the
# block's self time. Run the cell twice: the IQR column says how much to trust each median.

# %% [markdown]
# ### Memory: formula vs the graph
#
# For the MLP above, the textbook formula for the activations kept for backward is "every
# layer's output": `B·(256 + 256 + 256 + 256 + 10)` floats. Measure the graph and compare.

# %%
for batch in (64, 256):
    x = Tensor(np.random.default_rng(2).standard_normal((batch, 64)).astype(np.float32))
    measured = graph_activation_bytes(mlp(x))
    formula = 4 * batch * (256 + 256 + 256 + 256 + 10)
    mem = training_memory(mlp, "adam", activation_bytes=measured)
    print(f"batch {batch:4d}: activations measured {measured / 1e3:8.1f} kB, formula "
          f"{formula / 1e3:8.1f} kB; parameters {mem['parameters'] / 1e3:.1f} kB, "
          f"total with Adam {mem['total'] / 1e6:.2f} MB")
# Expected shape: the measured activations grow linearly with the batch and here match the
# formula: each Linear is one fused node (module 03, like PyTorch's addmm) that keeps its
# output, and the input rows it saves are the previous layer's output, already counted.
# Written as `x @ W.T + b` with tensor operations, every layer would also keep its product
# before the bias. The parameters, gradients and Adam state do not depend on the batch.

# %% [markdown]
# ## 7. ML systems thinking (graded by hand)

# %% [raw]
# # BEGIN QUESTION
# name: written_flops_vs_time
# manual: true
# points: 5

# %% [markdown]
# **Q1 · FLOPs are not time.** From your profile, name the layer with the largest share of
# the FLOPs and the one whose share of the time most exceeds its share of the FLOPs. Using
# the GFLOP/s column, explain the difference in terms of the bytes each layer must move per
# FLOP, and say which layer you would optimise first if you had to halve the model's latency.

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# The largest Linear (or the attention/MLP matrices in the block) has most FLOPs and runs at
# tens of GFLOP/s: a matrix product reuses every loaded number many times (about `in` FLOPs
# per input element), so it is limited by arithmetic. ReLU and the residual adds do 1 FLOP
# per element read and written (8 bytes per FLOP in float32), so they are limited by memory
# bandwidth and by Python's fixed cost per call, and take several times their FLOP share of
# the time at well under 1 GFLOP/s. To halve latency, first attack the biggest *time* share:
# at small sizes, the overhead of many small element-wise calls (fuse them: module 18); at
# large sizes, the matrix products (fewer FLOPs: quantization, pruning, a smaller model).

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_training_memory
# manual: true
# points: 5

# %% [markdown]
# **Q2 · Training memory.** GPT-2 small as published has 124 M parameters (its head tied to the
# token embedding). Estimate the memory of its weights, gradients and Adam state in float32.
# For the MLP your measurement matched the formula; for a transformer block it would not: name
# the arrays the formula misses, and two ways frameworks shrink the activations of a large
# model without changing its maths.

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# 124 M × 4 B ≈ 0.5 GB of weights, 0.5 GB of gradients and 1 GB of Adam moments: about
# 2 GB before activations. The formula counts one output per layer; the graph also keeps the
# arrays saved inside Functions (the attention weights `P`, LayerNorm's `x̂`, GELU's input,
# masks), every element-wise intermediate of composed operations (a residual's sum, a
# product before its bias when a layer is not fused).
# Frameworks shrink them with fused operations that save only their inputs (addmm, fused
# attention that recomputes `P`), activation checkpointing (keep some layer outputs,
# recompute the rest in backward), and lower precision (bf16/fp16 activations).

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_measurement
# manual: true
# points: 5

# %% [markdown]
# **Q3 · Measurement.** A classmate times a model once with `time.time()` before and after,
# and reports "version B is 12 % faster" from one run of each. List three things wrong with
# this, and describe the measurement you would make instead, with the numbers you would
# report.

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# One sample includes one-time costs (first-call allocation, cold caches) and whatever noise
# hit that moment; `time.time()` is a wall clock that can jump, has coarse resolution and
# counts every turn other processes took on the core (use the CPU time of the thread,
# `thread_time_ns`, for single-threaded code); the two runs were at different moments, so
# machine load differs; and one number has no spread, so 12 % cannot be told apart from noise.
# Instead: warm up, then alternate A and B for many pairs on the thread clock, take each
# pair's ratio, and report the median ratio with its confidence interval (and each version's
# median and IQR). Claim "B is faster" only when the whole interval lies above 1 — and report
# a ratio, not a time, since it transfers between machines.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## Summary
#
# You can now say where a model's parameters, FLOPs, memory and time go: `parameters_by_module`
# and `training_memory` for the state of training, FLOP formulas with one convention,
# `graph_activation_bytes` measuring what backward keeps, `measure` / `compare` for honest
# timings, and a hook-based `Profiler` for the per-layer view. Modules 15–18 use these numbers
# to shrink and speed up your models; module 19 builds its benchmark harness on `measure` and
# `compare`. Export with `python export.py 14`.
