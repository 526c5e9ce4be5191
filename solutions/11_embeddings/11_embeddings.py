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
# # Module 11 · Embeddings
#
# Module 10 turned text into integers: `"to be"` became token ids like `[84, 111, 32, 98, 101]`.
# A network cannot do arithmetic on an id — token 98 is not "twice" token 49. An **embedding**
# gives every id its own learned vector, and a **positional encoding** tells the model *where*
# in the sequence each token sits. Together they are the first layer of every transformer: in
# GPT-2, 38 M of its 124 M parameters are one embedding table.
#
# ## Learning objectives
#
# By the end of this module you can:
#
# 1. explain an embedding as a **table lookup** that equals a one-hot vector times a weight
#    matrix, and why nobody computes it as a matrix product;
# 2. implement `nn.Embedding(num_embeddings, embedding_dim, padding_idx=None)` and
#    `nn.functional.embedding` with PyTorch's semantics: `N(0, 1)` initialisation, index tensors
#    of any shape, a padding row that starts at zero and never receives a gradient;
# 3. derive the **backward pass of a gather** — a scatter-*add* — and explain why repeated
#    tokens must accumulate their gradients;
# 4. build the **sinusoidal positional encoding** of Vaswani et al. (2017) and a **learned**
#    positional embedding, with an `offset` for generating one token at a time (module 17);
# 5. measure what an embedding table costs in memory, and how few of its rows one batch
#    actually touches (the case for sparse gradients).
#
# ## How to work through this notebook
#
# Fill in every function that raises `NotImplementedError` (docstrings give what / APPROACH /
# EXAMPLE / HINT) and run each `grader.check(...)`. Cells starting with `#| export` become
# `tinytorch/embeddings.py` (`python export.py 11`), re-exported as `tinytorch.nn.Embedding`
# and `tinytorch.nn.functional.embedding`. Your modules 01–07 are imported from your package.

# %%
import time

import numpy as np

# %% [markdown]
# ## 1. A lookup table that learns
#
# An embedding table `W` has one row per token id: shape `(num_embeddings, embedding_dim)`,
# written `(V, D)`. Embedding a batch of ids is *indexing*:
#
# ```
#   W (V=5, D=3)                       ids (B=2, T=3)          out = W[ids]  (2, 3, 3)
#   0 │ 0.1  0.7 -0.2 │               [[0, 2, 2],            [[W[0], W[2], W[2]],
#   1 │ 1.3 -0.4  0.0 │                [4, 1, 2]]             [W[4], W[1], W[2]]]
#   2 │-0.9  0.3  0.5 │
#   3 │ 0.2  0.2  0.8 │         any index shape (...) gives an output of shape (..., D)
#   4 │ 0.0 -1.1  0.6 │
# ```
#
# Mathematically `W[i]` is `onehot(i) @ W`: a `(V,)` vector of zeros with a single one, times
# the table. For `V = 50,257` (GPT-2) that product would multiply 50,256 zeros per token; the
# lookup copies one row of `D` numbers instead. Same result, `V` times less work.
#
# **Indices are integers.** PyTorch refuses float indices (`RuntimeError`), and an id outside
# `[0, V)` is an `IndexError` — including **negative** ids: NumPy would quietly wrap `-1` to the
# last row, which hides tokenizer bugs. We accept any integer dtype (PyTorch takes int32 and
# int64 only).
#
# The lookup is a new differentiable operation, so it is a `Function` (module 01's
# `Function`/`Context`): `forward` works on raw NumPy arrays and saves what `backward` needs.
# The indices are not differentiable; they travel as a keyword argument.

# %% [markdown]
# ## 2. The backward pass of a gather is a scatter-add
#
# Each output row is a copy of one table row, so the gradient of a table row is the sum of the
# gradients of every output that copied it:
#
# ```
#   ids = [1, 3, 1]              dL/dout (3, D)          dL/dW (V=4, D)
#                                 g0 ──────────┐          row 0: 0
#   out[0] = W[1]                 g1 ────┐     ├──add──►  row 1: g0 + g2
#   out[1] = W[3]                        └─────┼──────►   row 2: 0
#   out[2] = W[1]                 g2 ──────────┘          row 3: g1
# ```
#
# Rows that no id names get exactly zero: a batch touches few rows of a big table (section 5
# measures how few). PyTorch can keep such a gradient *sparse* (`sparse=True`); by default, as
# here, it is a dense `(V, D)` array.
#
# **`padding_idx`.** Batches of sentences of different lengths are padded with a special id
# (say 0). Those positions carry no meaning, so PyTorch lets the padding row take part in the
# forward pass but gives it **no gradient**: it stays what it was (zeros, see section 3).

# %%
#| export
"""Module 11 · Embeddings — depends on: tensor, layers; used by: transformers, memoization.

``Embedding`` (a learned lookup table with PyTorch's ``padding_idx`` semantics) and the
functional ``embedding``; the sinusoidal positional encoding of Vaswani et al. (2017) and a
learned positional embedding, both with an ``offset`` for one-token-at-a-time generation.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tinytorch.layers import Module, Parameter
from tinytorch.tensor import Context, Function, Tensor, default_generator, manual_seed  # noqa: F401


class _EmbeddingFn(Function):
    """``weight[indices]`` with its own gradient: a gather forward, a scatter-add backward."""

    @staticmethod
    def forward(ctx: Context, weight: np.ndarray, *, indices: np.ndarray,
                padding_idx: int | None = None) -> np.ndarray:
        """Gather the rows of ``weight`` named by ``indices``: output ``(*indices.shape, D)``.

        Args:
            weight: the table, shape ``(V, D)``.
            indices: an integer array of any shape, every value in ``[0, V)`` (``embedding``
                checks this before calling).
            padding_idx: a row in ``[0, V)`` that gets no gradient, or None.

        APPROACH:
            1. ``ctx.save_for_backward(indices, weight.shape, padding_idx)`` — backward needs
               where the rows came from and the table's shape, not the table itself.
            2. Return ``weight[indices]`` (NumPy integer indexing gathers whole rows).

        EXAMPLE:
            >>> w = np.arange(6, dtype=np.float32).reshape(3, 2)
            >>> _EmbeddingFn.forward(Context(), w, indices=np.array([[2, 0], [2, 2]]))
            array([[[4., 5.],
                    [0., 1.]],
            <BLANKLINE>
                   [[4., 5.],
                    [4., 5.]]], dtype=float32)

        HINT: do not loop over the indices; one indexing expression gathers every row.
        """
        # BEGIN SOLUTION NO PROMPT
        ctx.save_for_backward(indices, weight.shape, padding_idx)
        return weight[indices]
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 11: implement _EmbeddingFn.forward (see its docstring)")  # STUB

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray) -> tuple[np.ndarray]:
        """The gradient of the table: ``grad`` rows *added* into the rows they came from.

        ``grad`` has the output's shape ``(*indices.shape, D)``. Row ``v`` of the result is
        the sum of ``grad[..., :]`` over every position where ``indices == v``; rows no index
        names stay zero, and the ``padding_idx`` row is zero whatever its count.

        APPROACH:
            1. ``indices, shape, padding_idx = ctx.saved``; ``g = np.zeros(shape, grad.dtype)``.
            2. Flatten: ``idx = indices.ravel()`` and ``rows = grad.reshape(-1, D)``.
            3. ``np.add.at(g, idx, rows)`` adds every row, *also when an index repeats*.
            4. If ``padding_idx`` is not None: ``g[padding_idx] = 0``.
            5. Return ``(g,)`` — one gradient per input of ``forward`` (only ``weight``).

        EXAMPLE: ``V = 4``, ``indices = [1, 1, 3]``, ``grad = ones((3, 2))`` ->
        ``g = [[0, 0], [2, 2], [0, 0], [1, 1]]``; with ``padding_idx=1`` row 1 is ``[0, 0]``.

        HINT: ``g[idx] += rows`` is the classic bug: with a repeated index NumPy writes the row
        once, so a token used twice in a batch learns half as fast. (Speed NOTE: ``np.add.at``
        on the flat ``(V*D,)`` view with indices ``idx[:, None] * D + arange(D)`` takes NumPy's
        fast 1-D path, ~6x faster than on the 2-D table.)
        """
        # BEGIN SOLUTION NO PROMPT
        indices, shape, padding_idx = ctx.saved
        dim = shape[1]
        g = np.zeros(shape[0] * dim, dtype=grad.dtype)
        flat = (indices.ravel()[:, None] * dim + np.arange(dim)).ravel()
        np.add.at(g, flat, grad.ravel())
        g = g.reshape(shape)
        if padding_idx is not None:
            g[padding_idx] = 0
        return (g,)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 11: implement _EmbeddingFn.backward (see its docstring)")  # STUB


def embedding(input: Any, weight: Tensor, padding_idx: int | None = None) -> Tensor:  # noqa: A002
    """Look up rows of ``weight`` (``torch.nn.functional.embedding``).

    Args:
        input: integer indices of any shape (a Tensor, an array or a list).
        weight: the table ``(V, D)``, usually a Parameter.
        padding_idx: a row that receives no gradient, in ``[-V, V)``; negative values count
            from the end.

    Returns:
        A tensor of shape ``(*input.shape, D)`` and ``weight``'s dtype.

    Raises:
        RuntimeError: the indices are not integers (floats, bools).
        IndexError: an index is outside ``[0, V)`` — negative ones too
            (``"index out of range in self"``, as in PyTorch).
        ValueError: ``padding_idx`` is outside ``[-V, V)`` (PyTorch: ``AssertionError``).

    APPROACH:
        1. ``idx = input.data`` for a Tensor, else ``np.asarray(input)``.
        2. If ``idx.dtype.kind`` is not ``"i"`` or ``"u"``: raise ``RuntimeError`` naming the
           dtype.
        3. ``V = weight.shape[0]``; if ``idx`` is non-empty and ``idx.min() < 0`` or
           ``idx.max() >= V``: raise ``IndexError("index out of range in self")``.
        4. Unless ``padding_idx`` is None or ``-V <= padding_idx < V``: raise
           ``ValueError("Padding_idx must be within num_embeddings")``. (A negative one needs
           no conversion: NumPy's ``g[-1]`` is the last row, as PyTorch means it.)
        5. Return ``_EmbeddingFn.apply(weight, indices=idx, padding_idx=padding_idx)``.

    EXAMPLE:
        >>> w = Tensor(np.arange(6, dtype=np.float32).reshape(3, 2))
        >>> embedding(Tensor([[2, 0], [1, 1]]), w).shape
        (2, 2, 2)
        >>> embedding(Tensor([-1]), w)
        Traceback (most recent call last):
        IndexError: index out of range in self

    HINT: check the range *before* indexing — NumPy happily reads ``w[-1]``.
    """
    # BEGIN SOLUTION NO PROMPT
    idx = input.data if isinstance(input, Tensor) else np.asarray(input)
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"embedding: indices must be integers (int64 or int32), "
                           f"got {idx.dtype}")
    num = weight.shape[0]
    if idx.size and (idx.min() < 0 or idx.max() >= num):
        raise IndexError("index out of range in self")
    if padding_idx is not None and not -num <= padding_idx < num:
        raise ValueError("Padding_idx must be within num_embeddings")
    return _EmbeddingFn.apply(weight, indices=idx, padding_idx=padding_idx)
    # END SOLUTION
    raise NotImplementedError("module 11: implement embedding (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: lookup
# points: 0

# %% [markdown]
# ### Check: the lookup

# %% [raw]
# # BEGIN TESTS

# %%
def test_embedding_gathers_rows_for_any_index_shape(embedding, Tensor, np):
    w = Tensor(np.arange(15, dtype=np.float32).reshape(5, 3))
    ids = Tensor(np.array([[0, 2, 2], [4, 1, 2]]))
    out = embedding(ids, w)
    assert out.shape == (2, 3, 3), (
        f"indices (2, 3) and a table with D = 3 give (2, 3, 3), got {out.shape}")
    assert np.array_equal(out.numpy()[1, 0], [12.0, 13.0, 14.0]), (
        f"out[1, 0] is row 4 of the table [12, 13, 14], got {out.numpy()[1, 0].tolist()}")
    assert out.dtype == np.float32, f"the output has the table's dtype, got {out.dtype}"
    got = embedding(Tensor(np.array(3)), w).shape
    assert got == (3,), f"a single (0-d) index gives one row of shape (D,) = (3,), got {got}"
    got = embedding(Tensor(np.array([1, 4], dtype=np.int32)), w).shape
    assert got == (2, 3), (
        f"int32 indices work too: expected shape (2, 3), got {got}")


# %%
def test_embedding_rejects_bad_indices(embedding, Tensor, np):
    w = Tensor(np.zeros((5, 3), dtype=np.float32))
    for bad, kind, why in [([5], IndexError, "5 is outside [0, 5)"),
                           ([-1], IndexError, "negative ids are errors, not 'the last row'"),
                           (np.array([1.0]), RuntimeError, "float indices are refused")]:
        try:
            embedding(Tensor(np.asarray(bad)), w)
        except kind:
            continue
        except NotImplementedError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise AssertionError(f"{bad}: expected {kind.__name__} ({why}), got "
                                 f"{type(exc).__name__}") from None
        raise AssertionError(f"{bad}: expected {kind.__name__} ({why}), nothing was raised")


# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: scatter_add
# points: 0

# %% [markdown]
# ### Check: gradients of the table

# %% [raw]
# # BEGIN TESTS

# %%
def test_repeated_indices_accumulate_gradients(embedding, Tensor, np):
    w = Tensor(np.ones((4, 2), dtype=np.float32), requires_grad=True)
    embedding(Tensor(np.array([1, 3, 1])), w).sum().backward()
    got = w.grad.numpy() if w.grad is not None else None
    assert got is not None and got.shape == (4, 2), (
        f"the table's gradient has the table's shape (4, 2), got "
        f"{None if got is None else got.shape}")
    assert np.array_equal(got, [[0, 0], [2, 2], [0, 0], [1, 1]]), (
        f"id 1 is used twice, so row 1 gets 2 per element; rows 0 and 2 are unused (0). Got "
        f"{got.tolist()}: use np.add.at, not g[idx] += rows (which adds a repeat only once)")


# %%
def test_padding_row_gets_no_gradient(embedding, Tensor, np):
    w = Tensor(np.ones((4, 2), dtype=np.float32), requires_grad=True)
    out = embedding(Tensor(np.array([[0, 2], [2, 3]])), w, padding_idx=2)
    assert np.array_equal(out.numpy()[0, 1], [1.0, 1.0]), (
        f"the forward pass still reads the padding row as it is: expected [1.0, 1.0], got "
        f"{out.numpy()[0, 1].tolist()} (padding_idx only stops its gradient)")
    out.sum().backward()
    got = w.grad.numpy()
    assert np.array_equal(got, [[1, 1], [0, 0], [0, 0], [1, 1]]), (
        f"padding_idx=2 must get a zero gradient even though it is used twice; got "
        f"{got.tolist()}")
    w.grad = None
    embedding(Tensor(np.array([3, 3])), w, padding_idx=-1).sum().backward()
    assert np.array_equal(w.grad.numpy()[3], [0.0, 0.0]), (
        f"padding_idx=-1 means the last row (V - 1 = 3): it gets no gradient either, got "
        f"{w.grad.numpy()[3].tolist()}")


# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 3. `nn.Embedding`
#
# The module owns the table as a `Parameter` called `weight`, shape `(num_embeddings,
# embedding_dim)`, and PyTorch's defaults:
#
# * **initialisation** `W ~ N(0, 1)`, drawn from the global generator (`default_generator()`,
#   seeded by `manual_seed`) as float32. Unlike `Linear` there is no `1/sqrt(fan_in)`: an
#   embedding output is one row, not a sum of `V` products, so unit variance is already the
#   scale of a normalised activation;
# * **`padding_idx`** must lie in `[-V, V)`; a negative value is stored as `padding_idx + V`
#   (so `padding_idx=-1` is `V - 1`), and that row of the table is set to **zero** at
#   initialisation. PyTorch raises `AssertionError("Padding_idx must be within
#   num_embeddings")`; we raise `ValueError` with the same message.
#
# `forward(input)` is the functional `embedding` with the module's table and padding row.

# %%
#| export
class Embedding(Module):
    """A learned lookup table: ``Embedding(V, D)(ids)`` is ``weight[ids]``, shape ``(*, D)``.

    Args:
        num_embeddings: size of the vocabulary ``V``.
        embedding_dim: size of each vector ``D``.
        padding_idx: a row that starts at zero and never receives a gradient (negative values
            count from the end); None for no padding row.

    Attributes:
        weight: Parameter ``(num_embeddings, embedding_dim)``, float32, ``N(0, 1)``.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int,
                 padding_idx: int | None = None) -> None:
        """Create ``weight ~ N(0, 1)`` and normalise/zero the padding row.

        APPROACH:
            1. ``super().__init__()``; store ``num_embeddings`` and ``embedding_dim``.
            2. If ``padding_idx`` is not None: unless ``-num_embeddings <= padding_idx <
               num_embeddings``, raise ``ValueError("Padding_idx must be within
               num_embeddings")``; a negative value becomes ``padding_idx + num_embeddings``.
               Store it as ``self.padding_idx``.
            3. ``self.weight = Parameter(default_generator().standard_normal((V, D))
               .astype(np.float32))``.
            4. If there is a padding row, set it to zero in ``self.weight.data``.

        EXAMPLE:
            >>> manual_seed(0); emb = Embedding(10, 4, padding_idx=-1)
            >>> emb.weight.shape, emb.padding_idx, emb.weight.numpy()[9].tolist()
            ((10, 4), 9, [0.0, 0.0, 0.0, 0.0])

        HINT: draw the whole table first, then zero the row, so the same seed gives the same
        other rows with or without padding.
        """
        # BEGIN SOLUTION NO PROMPT
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError("Padding_idx must be within num_embeddings")
            if padding_idx < 0:
                padding_idx = padding_idx + num_embeddings
        self.padding_idx = padding_idx
        table = default_generator().standard_normal((num_embeddings, embedding_dim))
        self.weight = Parameter(table.astype(np.float32))
        if padding_idx is not None:
            self.weight.data[padding_idx] = 0.0
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 11: implement Embedding.__init__ (see its docstring)")  # STUB

    def forward(self, input: Any) -> Tensor:  # noqa: A002 - PyTorch's argument name
        """Look up ``input``'s rows of ``self.weight``: shape ``(*input.shape, D)``.

        APPROACH: return ``embedding(input, self.weight, self.padding_idx)``.

        EXAMPLE:
            >>> emb = Embedding(5, 3)
            >>> emb(Tensor([[0, 4, 4]])).shape
            (1, 3, 3)

        HINT: pass the stored ``padding_idx`` so the padding row gets no gradient.
        """
        # BEGIN SOLUTION NO PROMPT
        return embedding(input, self.weight, self.padding_idx)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 11: implement Embedding.forward (see its docstring)")  # STUB

    @classmethod
    def from_pretrained(cls, embeddings: Any, freeze: bool = True,
                        padding_idx: int | None = None) -> Embedding:
        """A module holding a copy of ``embeddings`` ``(V, D)`` in its own dtype (provided; as
        in PyTorch, the padding row is *not* zeroed and ``freeze`` turns off its gradient)."""
        table = embeddings if isinstance(embeddings, Tensor) else Tensor(embeddings)
        data = np.array(table.data, copy=True)  # float64 stays float64, as in PyTorch
        if data.ndim != 2:
            raise ValueError("Embeddings parameter is expected to be 2-dimensional")
        module = cls(data.shape[0], data.shape[1], padding_idx=padding_idx)
        module.weight = Parameter(data, requires_grad=not freeze)
        return module

    def extra_repr(self) -> str:
        pad = "" if self.padding_idx is None else f", padding_idx={self.padding_idx}"
        return f"{self.num_embeddings}, {self.embedding_dim}{pad}"


# %% [raw]
# # BEGIN QUESTION
# name: embedding_module
# points: 0

# %% [markdown]
# ### Check: `nn.Embedding`

# %% [raw]
# # BEGIN TESTS

# %%
def test_embedding_module_init(Embedding, manual_seed, np):
    manual_seed(0)
    emb = Embedding(2000, 8)
    w = emb.weight.numpy()
    assert w.shape == (2000, 8) and w.dtype == np.float32, (
        f"weight is (num_embeddings, embedding_dim) float32, got {w.shape} {w.dtype}")
    assert emb.weight.requires_grad, (
        f"the table is a Parameter (requires_grad=True), got requires_grad="
        f"{emb.weight.requires_grad}: otherwise the optimizer never updates it")
    assert abs(float(w.mean())) < 0.05 and 0.95 < float(w.std()) < 1.05, (
        f"PyTorch initialises embeddings with N(0, 1); got mean {w.mean():.3f}, std "
        f"{w.std():.3f}")
    names = [n for n, _ in emb.named_parameters()]
    assert names == ["weight"], (
        f"the table is registered as the parameter 'weight' (PyTorch's name), got {names}: "
        "state_dict keys and checkpoints use it")


# %%
def test_embedding_module_padding_and_forward(Embedding, Tensor, np):
    emb = Embedding(6, 3, padding_idx=-2)
    assert emb.padding_idx == 4, f"padding_idx=-2 with 6 rows is stored as 4, got {emb.padding_idx}"
    assert np.array_equal(emb.weight.numpy()[4], [0.0, 0.0, 0.0]), (
        f"the padding row starts at zero, got {emb.weight.numpy()[4].round(3).tolist()}")
    out = emb(Tensor(np.array([[4, 1], [1, 0]])))
    assert out.shape == (2, 2, 3) and np.array_equal(out.numpy()[1, 0], emb.weight.numpy()[1]), (
        f"forward looks up rows of self.weight: expected shape (2, 2, 3) with out[1, 0] = "
        f"weight[1], got shape {out.shape}")
    out.sum().backward()
    assert np.array_equal(emb.weight.grad.numpy()[4], [0.0, 0.0, 0.0]), (
        f"the module passes its padding_idx on: the padding row gets no gradient, got "
        f"{emb.weight.grad.numpy()[4].tolist()}")
    try:
        Embedding(6, 3, padding_idx=6)
    except ValueError:
        pass
    else:
        raise AssertionError("padding_idx=6 is not a row of a 6-row table: raise ValueError")


# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 4. Where is each token? Positional encodings
#
# Attention (module 12) compares every token with every other one and sums the results: it
# treats its input as a **set**. Shuffle the tokens and each output row is shuffled the same
# way, nothing else changes. "dog bites man" and "man bites dog" would look alike. So we add
# a vector that depends on the **position** to each token's embedding:
#
# ```
#   x (B, T, D) = token_embedding(ids) + P[offset : offset + T]     P: (max_len, D)
# ```
#
# **Sinusoidal** (Vaswani et al., 2017): fixed, no parameters. Column pair `(2i, 2i+1)` is a
# sine and a cosine of frequency `ω_i = 10000^(-2i/D)`:
#
# ```
#   P[pos, 2i]   = sin(pos · ω_i)        ω_0 = 1          (fastest: period 2π ≈ 6 positions)
#   P[pos, 2i+1] = cos(pos · ω_i)        ω_{D/2-1} ≈ 1e-4 (slowest: period ≈ 63,000 positions)
#
#   pos 0: [sin 0, cos 0, sin 0, cos 0, ...] = [0, 1, 0, 1, ...]
# ```
#
# Every position gets a distinct pattern (like the digits of a clock with hands of many
# speeds), and `P[pos + k]` is a fixed rotation of `P[pos]` for every `pos`, which makes
# *relative* offsets easy to express. With an odd `D` the last column is a sine.
#
# **Learned** (GPT-2): a `(max_len, D)` Parameter initialised like an embedding table, that
# training shapes as it likes — but it knows nothing beyond `max_len`.
#
# Both modules here share one contract: `forward(x, offset=0)` returns `x + P[offset :
# offset + T]` for `x` of shape `(..., T, D)`. The `offset` is for generating text one token at
# a time (module 17): the new token at position 37 needs row 37, not row 0. Positions beyond
# `max_len` are a `ValueError`.

# %%
#| export
def sinusoidal_positional_encoding(num_positions: int, embedding_dim: int) -> Tensor:
    """The fixed table ``P (num_positions, embedding_dim)`` of Vaswani et al., float32.

    ``P[pos, 2i] = sin(pos / 10000^(2i/D))`` and ``P[pos, 2i+1] = cos(pos / 10000^(2i/D))``.

    APPROACH:
        1. ``pos = np.arange(num_positions)[:, None]`` (a column) and
           ``even = np.arange(0, D, 2)`` (the even column indices ``2i``).
        2. ``freq = np.exp(-math.log(10000.0) * even / D)`` — ``10000^(-2i/D)`` without a huge
           power; ``angles = pos * freq`` has shape ``(P, ceil(D/2))``.
        3. ``table = np.zeros((P, D))``; ``table[:, 0::2] = np.sin(angles)`` and
           ``table[:, 1::2] = np.cos(angles[:, :D // 2])`` (an odd ``D`` has one sine more).
        4. Return ``Tensor(table.astype(np.float32))``.

    EXAMPLE:
        >>> sinusoidal_positional_encoding(3, 4).numpy().round(4)
        array([[ 0.    ,  1.    ,  0.    ,  1.    ],
               [ 0.8415,  0.5403,  0.01  ,  1.    ],
               [ 0.9093, -0.4161,  0.02  ,  0.9998]], dtype=float32)

    HINT: compute in float64 and cast once at the end; ``pos * freq`` broadcasts a column
    against a row, no loops needed.
    """
    # BEGIN SOLUTION NO PROMPT
    pos = np.arange(num_positions, dtype=np.float64)[:, None]
    even = np.arange(0, embedding_dim, 2, dtype=np.float64)
    freq = np.exp(-math.log(10000.0) * even / embedding_dim)
    angles = pos * freq
    table = np.zeros((num_positions, embedding_dim))
    table[:, 0::2] = np.sin(angles)
    table[:, 1::2] = np.cos(angles[:, :embedding_dim // 2])
    return Tensor(table.astype(np.float32))
    # END SOLUTION
    raise NotImplementedError(  # STUB
        "module 11: implement sinusoidal_positional_encoding (see its docstring)")  # STUB


def _positions(x: Tensor, offset: int, max_len: int) -> tuple[int, int]:
    """The rows ``[offset, offset + T)`` that ``x (..., T, D)`` needs (provided)."""
    length = x.shape[-2]
    if offset < 0 or offset + length > max_len:
        raise ValueError(f"positions {offset}..{offset + length - 1} are outside the "
                         f"encoding's max_len {max_len}")
    return offset, offset + length


class SinusoidalPositionalEncoding(Module):
    """Adds the fixed sinusoidal table: ``x + P[offset : offset + T]`` for ``x (..., T, D)``.

    Args:
        embedding_dim: ``D``, the size of each token vector.
        max_len: the number of positions the table holds.

    The table is a non-persistent buffer ``pe`` ``(max_len, D)``: it is rebuilt, never saved
    in ``state_dict``, and it has no gradient.
    """

    def __init__(self, embedding_dim: int, max_len: int = 5000) -> None:
        super().__init__()
        self.embedding_dim = embedding_dim
        self.max_len = max_len
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, embedding_dim),
                             persistent=False)

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        """Return ``x + self.pe[offset : offset + T]`` where ``T = x.shape[-2]``.

        APPROACH:
            1. ``start, stop = _positions(x, offset, self.max_len)`` (given: it raises
               ``ValueError`` beyond ``max_len``).
            2. Return ``x + Tensor(self.pe.data[start:stop])`` — ``(T, D)`` broadcasts over
               the leading (batch) dimensions.

        EXAMPLE:
            >>> enc = SinusoidalPositionalEncoding(4, max_len=8)
            >>> enc(Tensor(np.zeros((1, 2, 4), np.float32)), offset=1).numpy()[0, 0].round(4)
            array([0.8415, 0.5403, 0.01  , 1.    ], dtype=float32)

        HINT: the row of position ``p`` is ``pe[p]``; with ``offset=5`` the first token of
        ``x`` sits at position 5.
        """
        # BEGIN SOLUTION NO PROMPT
        start, stop = _positions(x, offset, self.max_len)
        return x + Tensor(self.pe.data[start:stop])
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 11: implement SinusoidalPositionalEncoding.forward (see its docstring)")  # STUB

    def extra_repr(self) -> str:
        return f"{self.embedding_dim}, max_len={self.max_len}"


class LearnedPositionalEmbedding(Module):
    """Adds a learned table: ``x + weight[offset : offset + T]`` for ``x (..., T, D)`` (GPT-2).

    Args:
        max_len: the number of positions (GPT's context length).
        embedding_dim: ``D``.

    Attributes:
        weight: Parameter ``(max_len, embedding_dim)``, float32, ``N(0, 1)`` like an
            ``Embedding`` (it *is* an embedding of the positions ``0 .. max_len - 1``).
    """

    def __init__(self, max_len: int, embedding_dim: int) -> None:
        """Create ``weight ~ N(0, 1)`` of shape ``(max_len, embedding_dim)``.

        APPROACH: ``super().__init__()``; store ``max_len`` and ``embedding_dim``;
        ``self.weight = Parameter(default_generator().standard_normal((max_len,
        embedding_dim)).astype(np.float32))``.

        EXAMPLE:
            >>> LearnedPositionalEmbedding(16, 8).weight.shape
            (16, 8)

        HINT: the same draw as ``Embedding``: one ``standard_normal`` call for the table.
        """
        # BEGIN SOLUTION NO PROMPT
        super().__init__()
        self.max_len = max_len
        self.embedding_dim = embedding_dim
        table = default_generator().standard_normal((max_len, embedding_dim))
        self.weight = Parameter(table.astype(np.float32))
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 11: implement LearnedPositionalEmbedding.__init__ (see its docstring)")  # STUB

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        """Return ``x + self.weight[offset : offset + T]`` where ``T = x.shape[-2]``.

        APPROACH: ``start, stop = _positions(x, offset, self.max_len)``; return
        ``x + self.weight[start:stop]`` — a Tensor slice, so the used rows get gradients.

        EXAMPLE:
            >>> pos = LearnedPositionalEmbedding(8, 2); pos.weight.data[...] = 1.0
            >>> pos(Tensor(np.zeros((3, 4, 2), np.float32))).shape
            (3, 4, 2)

        HINT: slice the Parameter itself (``self.weight[a:b]``), not ``self.weight.data``: on
        the array the rows would never learn.
        """
        # BEGIN SOLUTION NO PROMPT
        start, stop = _positions(x, offset, self.max_len)
        return x + self.weight[start:stop]
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 11: implement LearnedPositionalEmbedding.forward (see its docstring)")  # STUB

    def extra_repr(self) -> str:
        return f"{self.max_len}, {self.embedding_dim}"


# %% [raw]
# # BEGIN QUESTION
# name: positions
# points: 0

# %% [markdown]
# ### Check: positional encodings

# %% [raw]
# # BEGIN TESTS

# %%
def test_sinusoidal_table_values(sinusoidal_positional_encoding, np):
    p = sinusoidal_positional_encoding(50, 6).numpy()
    assert p.shape == (50, 6) and p.dtype == np.float32, (
        f"(num_positions, embedding_dim) float32, got {p.shape} {p.dtype}")
    assert np.allclose(p[0], [0, 1, 0, 1, 0, 1]), f"position 0 is [0, 1, 0, 1, ...], got {p[0]}"
    w1 = 10000.0 ** (-2 / 6)
    expected = [np.sin(7.0), np.cos(7.0), np.sin(7 * w1), np.cos(7 * w1)]
    assert np.allclose(p[7, :4], expected, atol=1e-6), (
        f"row 7 should start {np.round(expected, 4).tolist()}, got {p[7, :4].round(4).tolist()}:"
        " column 2i is sin(pos * 10000^(-2i/D)), column 2i+1 its cosine")
    odd = sinusoidal_positional_encoding(3, 5).numpy()
    want = np.sin(10000.0 ** (-4 / 5))
    assert odd.shape == (3, 5) and np.isclose(odd[1, 4], want), (
        f"with an odd D the last column is a sine: expected shape (3, 5) and pe[1, 4] = "
        f"{want:.5f}, got shape {odd.shape}" + (f" and {odd[1, 4]:.5f}" if odd.shape == (3, 5)
                                                 else ""))


# %%
def test_positional_modules_add_rows_from_offset(SinusoidalPositionalEncoding,
                                                 LearnedPositionalEmbedding, Tensor, np):
    x = Tensor(np.ones((2, 3, 4), dtype=np.float32))
    enc = SinusoidalPositionalEncoding(4, max_len=10)
    out = enc(x, offset=2).numpy()
    assert out.shape == (2, 3, 4), f"the output has x's shape (2, 3, 4), got {out.shape}"
    assert np.allclose(out[1, 0], 1 + enc.pe.numpy()[2]), (
        f"with offset=2 the first token gets row 2 of the table: expected "
        f"{(1 + enc.pe.numpy()[2]).round(3).tolist()}, got {out[1, 0].round(3).tolist()}")
    pos = LearnedPositionalEmbedding(10, 4)
    assert pos.weight.shape == (10, 4), f"weight is (max_len, D), got {pos.weight.shape}"
    y = pos(x, offset=5)
    assert np.allclose(y.numpy()[0, 2], 1 + pos.weight.numpy()[7]), (
        f"token 2 at offset 5 gets row 7 of the learned table: expected "
        f"{(1 + pos.weight.numpy()[7]).round(3).tolist()}, got "
        f"{y.numpy()[0, 2].round(3).tolist()}")
    y.sum().backward()
    used = np.abs(pos.weight.grad.numpy()).sum(axis=1) > 0
    assert used.tolist() == [False] * 5 + [True] * 3 + [False] * 2, (
        f"only rows 5, 6, 7 were used, so only they get gradients; got {used.tolist()}")
    try:
        pos(x, offset=8)
    except ValueError:
        pass
    else:
        raise AssertionError("positions 8..10 do not exist in a max_len=10 table: ValueError")


# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 5. Systems view: what a table costs, and how little of it a batch touches
#
# **Memory.** A table holds `V · D` floats: `V · D · 4` bytes in float32. Training adds a
# gradient of the same size and, with Adam (module 06), two moment buffers: **4×** the table.
# GPT-2's `50,257 × 768` table is 38.6 M parameters, 154 MB for the weights alone and 618 MB
# to train it — a third of the model.
#
# **Sparse use.** One batch of `B · T` tokens names at most `B · T` distinct rows, and real
# text (Zipf's law: a few tokens are very common) names far fewer. Yet our backward pass
# allocates, zeroes and returns a dense `(V, D)` gradient, and the optimizer then updates all
# `V` rows. PyTorch's `Embedding(..., sparse=True)` returns only the touched rows (with
# `optim.SparseAdam`), which is what makes recommendation models with 10⁸-row tables trainable.
#
# The experiment below measures both: the bytes of real tables, and — for one fixed batch of
# Zipf-distributed token ids — how many rows it touches, the time of forward + backward, and
# the time of one SGD update of the table done densely (every row, as with our `(V, D)`
# gradient) and sparsely (only the touched rows, as a sparse gradient allows).

# %%
def median_cpu_ms(fn, warmup=1, repeats=7):
    """Median CPU time of ``fn()`` in ms: ``warmup`` untimed calls, then ``repeats`` timed ones
    on this thread's clock, which other programs on the machine do not inflate (module 14
    explains why, and builds the full tool)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.thread_time_ns()
        fn()
        times.append(time.thread_time_ns() - start)
    return float(np.median(times)) / 1e6


rng = np.random.default_rng(0)
batch_ids = rng.zipf(1.3, size=(32, 64)) - 1  # 2,048 tokens; a few ids are very common
# NOTE: a process's first large allocations get fresh pages from the OS (slow page faults).
# On Linux, glibc's malloc then keeps freed buffers for reuse up to the largest size it has
# seen (at most 32 MB); other systems' allocators have their own rules. One big buffer, freed,
# warms it up so the first rows are not measured cold.
warm_up = np.ones(7_500_000, dtype=np.float32)
del warm_up
print(f"{'V':>7} {'D':>4} {'table MB':>9} {'Adam MB':>8} {'rows used':>9} {'used':>7} "
      f"{'backward':>9} {'dense upd':>10} {'sparse upd':>10}")
for V in (1_000, 10_000, 50_000):
    for D in (64, 256):
        emb = Embedding(V, D)
        ids = Tensor(batch_ids % V)
        table_mb = emb.weight.numpy().nbytes / 1e6

        def forward_backward():
            emb.weight.grad = None
            emb(ids).sum().backward()

        backward_ms = median_cpu_ms(forward_backward)
        grad = emb.weight.grad.numpy()
        rows = np.unique(ids.numpy())  # the rows this batch touched

        def dense_update():  # what SGD does with a dense gradient: every row
            emb.weight.data -= 0.01 * grad

        def sparse_update():  # what a sparse gradient allows: the touched rows only
            emb.weight.data[rows] -= 0.01 * grad[rows]

        dense_ms, sparse_ms = median_cpu_ms(dense_update), median_cpu_ms(sparse_update)
        print(f"{V:>7,} {D:>4} {table_mb:>9.1f} {4 * table_mb:>8.1f} {len(rows):>9,} "
              f"{100 * len(rows) / V:>6.2f}% {backward_ms:>7.2f}ms {dense_ms:>8.2f}ms "
              f"{sparse_ms:>8.2f}ms")
print(f"V = 50,000, D = 256: the dense update takes {dense_ms / sparse_ms:.0f}x the sparse one")
# Expected shape: table MB = V·D·4/1e6 and Adam MB (weights, gradient, two moments) four times
# that. "rows used" stays at a few hundred for every V (the batch is the same 2,048 tokens),
# so the used share falls roughly like 1/V. The dense update grows with V·D — at V = 50,000 it
# is tens of times slower than the sparse update (at least 10x at D = 256), which stays about
# constant: the work that matters is (rows used) × D, the rest is the price of a dense
# gradient.

# %% [markdown]
# ## 6. ML systems thinking (graded by hand)

# %% [raw]
# # BEGIN QUESTION
# name: written_table_memory
# manual: true
# points: 5

# %% [markdown]
# **Q1 · The table is a third of the model.** GPT-2 small has a `50,257 × 768` token table and a
# `1,024 × 768` learned position table. How many parameters and how many MB do they need in
# float32 for inference, and for training with Adam? GPT-2 *ties* the output layer (the
# `768 → 50,257` projection to logits) to the token table. What does tying save, and why is it
# allowed?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Token table 50,257 · 768 = 38.6 M parameters, position table 1,024 · 768 = 0.79 M: 39.4 M in
# all, 157 MB in float32. Training with Adam keeps weights, gradients and two moments: 4× ≈
# 630 MB. Without tying the LM head would be another 768 · 50,257 = 38.6 M parameters (154 MB,
# 618 MB in training). Tying is allowed because both matrices map between the same two spaces:
# the table sends a token to a vector, the head scores a vector against every token by a dot
# product with that token's vector, so one `(V, D)` matrix can serve both (`logits = h @ Wᵀ`);
# it also means the head's gradient reaches rows of rare tokens through every logit.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_sparse_gradients
# manual: true
# points: 5

# %% [markdown]
# **Q2 · Sparse gradients.** Use your measurements: for `V = 50,000`, what share of the
# gradient was non-zero, and what did the backward pass spend its time on? A recommendation
# model has a 100 M-row, 64-dim item table and batches of 4,096 items. Estimate the bytes a
# dense gradient writes per step versus a sparse one (rows + their indices). Why does plain Adam
# make a sparse gradient useless again, and what does `SparseAdam` give up to fix that?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Only a few hundred of 50,000 rows (489 rows, 0.98 %) were non-zero; the time went into
# allocating and zeroing the dense `V × D` array (and reading it back), which grows with `V`
# while the scatter-add of the used rows does not. Dense: 10⁸ · 64 · 4 B = 25.6 GB written per
# step. Sparse: at most 4,096 rows · 64 · 4 B ≈ 1 MB plus 4,096 int64 indices (32 KB). Adam
# decays its moments `m` and `v` for *every* parameter each step (`m ← β₁ m`), so every row
# changes even with a zero gradient and the update is dense (25.6 GB of reads and writes for
# each moment). `SparseAdam` updates the moments and weights of the touched rows only, so rows
# not seen for many steps keep stale moments — it gives up exact Adam semantics (the decay
# between visits) for work proportional to the batch.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_positions
# manual: true
# points: 5

# %% [markdown]
# **Q3 · Sinusoidal or learned?** Give one advantage of each. What happens to each when a model
# trained on sequences of 512 tokens is asked about position 600? Why is a positional encoding
# needed at all for a transformer, when an RNN needs none?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Sinusoidal: no parameters or memory to train, defined for every position, and `P[pos + k]`
# is a fixed linear map (a rotation per frequency pair) of `P[pos]`, so relative offsets are
# easy to express. Learned: the model chooses whatever position features help the task, and in
# practice matches or beats sinusoids inside the trained range (GPT-2, BERT). At position 600 a
# learned table has no row at all (an error, or an untrained row if the table was larger); the
# sinusoidal row exists, but the model never saw those patterns, so quality usually degrades
# too — which is why later models use relative schemes (RoPE, ALiBi). Attention is permutation
# equivariant: it sums over keys with weights from dot products, so without positions
# "dog bites man" and "man bites dog" give the same set of outputs; an RNN reads tokens in
# order, so position is built into its computation.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## Summary
#
# You built the first layer of every language model: `Embedding` with PyTorch's
# initialisation and padding semantics, its scatter-add backward, and the two ways to tell a
# model where each token is. Export with `python export.py 11`; module 12 lets the tokens look
# at each other with attention.
