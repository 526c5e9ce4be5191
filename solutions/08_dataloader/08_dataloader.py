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
# # Module 08 · DataLoader
#
# Module 07 trained on NumPy arrays that fit in memory, sliced by a helper. Real training reads
# tens of thousands of images from files in a fixed binary format, shuffles them differently
# every epoch (but reproducibly), augments them on the fly and stacks them into batches. This
# module builds that pipeline with PyTorch's names and semantics — `Dataset`, `TensorDataset`,
# samplers, `DataLoader` and `default_collate` from `torch.utils.data`, and the transforms and
# dataset readers of `torchvision` — and measures what a batch costs.
#
# ## Learning objectives
#
# 1. separate **what** a dataset holds (`__getitem__`, `__len__`) from **in which order** it is
#    read (samplers) and **how** samples become a batch (collation);
# 2. make shuffling **reproducible** with a seeded `Generator`, and explain why every epoch
#    needs a fresh order;
# 3. implement PyTorch's **`DataLoader`**: `len()`, iteration order, the last partial batch and
#    `drop_last`, and **`default_collate`** for tensors, arrays, numbers, tuples and dicts;
# 4. write the image **transforms** `Normalize`, `RandomCrop` and `RandomHorizontalFlip` with
#    torchvision's semantics on `(C, H, W)` images;
# 5. parse the real **binary formats** of MNIST / Fashion-MNIST (IDX) and CIFAR-10, and verify
#    every downloaded file with **SHA-256** before trusting it;
# 6. **measure** throughput against batch size, and the cost of copies against views.
#
# Fill in the functions that raise `NotImplementedError`; run the checks; `python export.py 08`
# writes `tinytorch/dataloader.py`. The pieces are also available under PyTorch's layout:
# `tinytorch.data` (like `torch.utils.data`), `tinytorch.data.transforms` (like
# `torchvision.transforms`) and `tinytorch.data.datasets` (like `torchvision.datasets`).

# %%
import numpy as np

from tinytorch.tensor import Tensor, manual_seed

# %% [markdown]
# ## 1. Datasets: what the data is
#
# ```
#   Dataset            Sampler             BatchSampler          collate_fn
#  ┌───────────┐  i  ┌──────────────┐ [i,j,k] ┌────────────┐ samples ┌─────────────┐
#  │ ds[i] ->  │◄────│ 0 1 2 3 ...  │────────►│ groups of B│────────►│ stack into  │──► batch
#  │  (x_i,y_i)│     │ or a shuffled│         │ (the last  │ [ds[i], │ (B, ...)    │
#  │ len(ds)   │     │ permutation  │         │  may be    │  ds[j], │ tensors     │
#  └───────────┘     └──────────────┘         │  shorter)  │  ds[k]] └─────────────┘
#                                             └────────────┘
#               └─────────────────── DataLoader.__iter__ ───────────────────┘
# ```
#
# A **map-style dataset** is anything with `__getitem__(i)` and `__len__()`: a list, a folder of
# images read lazily, or arrays in memory. `TensorDataset(x, y)` wraps tensors that share their
# first dimension: `ds[i] == (x[i], y[i])`. Keeping the dataset this dumb is what lets the same
# `DataLoader` serve every dataset: the loader only ever asks for one index at a time.
#
# **Randomness is an object.** Everything random in this module takes a `generator`: our
# `Generator` (like `torch.Generator`) wraps a NumPy PCG64 generator in `.rng`, and
# `Generator().manual_seed(0)` gives the same stream every time. When no generator is given,
# a fresh one is seeded from tinytorch's **global** generator, so `manual_seed(0)` (module 01's
# `tinytorch.manual_seed`, like `torch.manual_seed`) makes a whole run reproducible.

# %%
#| export
"""Module 08 · DataLoader — depends on: tensor; used by: spatial, transformers, milestones.

PyTorch's data pipeline: map-style ``Dataset``/``TensorDataset``, samplers, ``DataLoader`` with
``default_collate`` and a seeded ``Generator`` for reproducible shuffles (``torch.utils.data``);
torchvision-style transforms on ``(C, H, W)`` images; readers for the real MNIST /
Fashion-MNIST (IDX) and CIFAR-10 (binary) files, verified by SHA-256 in a cache folder.
"""

from __future__ import annotations

import collections.abc as cabc
import copy
import gzip
import hashlib
import math
import os
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tinytorch.tensor import Tensor, default_generator, manual_seed  # noqa: F401 - for checks


class Generator:
    """A seeded source of randomness, like ``torch.Generator`` (provided).

    ``Generator().manual_seed(0)`` always produces the same stream. The NumPy generator doing
    the work is ``.rng`` (PCG64); samplers, ``DataLoader(generator=...)`` and
    ``random_split`` draw from it, so passing the same seeded generator reproduces a shuffle.

    Example:
        >>> g = Generator().manual_seed(7)
        >>> a = g.rng.permutation(5).tolist()
        >>> a == Generator().manual_seed(7).rng.permutation(5).tolist(), g.initial_seed()
        (True, 7)
    """

    default_seed = 67280421310721  # torch.Generator()'s initial seed

    def __init__(self) -> None:
        self.manual_seed(self.default_seed)

    def manual_seed(self, seed: int) -> Generator:
        """Restart the stream from ``seed`` (a non-negative int); returns ``self``."""
        self._seed = int(seed)
        self.rng = np.random.default_rng(self._seed)
        return self

    def initial_seed(self) -> int:
        """The seed the stream was last started from."""
        return self._seed

    def get_state(self) -> dict[str, Any]:
        """A copy of the generator's state (save it with a checkpoint to resume a shuffle)."""
        return copy.deepcopy(self.rng.bit_generator.state)

    def set_state(self, state: dict[str, Any]) -> Generator:
        """Restore a state from :meth:`get_state`; returns ``self``."""
        self.rng.bit_generator.state = copy.deepcopy(state)
        return self

    def __repr__(self) -> str:
        return f"Generator(initial_seed={self._seed})"


def _numpy_rng(generator: Generator | np.random.Generator | None) -> np.random.Generator:
    """The NumPy generator to draw from (provided).

    * a :class:`Generator` -> its ``.rng`` (the stream continues across calls);
    * a ``numpy.random.Generator`` -> itself;
    * ``None`` -> a **fresh** generator seeded with one draw from tinytorch's global generator,
      as PyTorch's ``RandomSampler`` does: ``tinytorch.manual_seed(s)`` then reproduces it.
    """
    if generator is None:
        return np.random.default_rng(int(default_generator().integers(0, 2**63 - 1)))
    if isinstance(generator, Generator):
        return generator.rng
    if isinstance(generator, np.random.Generator):
        return generator
    raise TypeError(f"generator must be a tinytorch Generator, a numpy Generator or None, "
                    f"not {type(generator).__name__}")


class Dataset:
    """A map-style dataset: ``ds[i]`` is the ``i``-th sample, ``len(ds)`` how many (provided).

    Subclasses implement ``__getitem__`` and ``__len__``, like ``torch.utils.data.Dataset``.
    """

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} does not implement __len__")


class TensorDataset(Dataset):
    """Samples are slices of tensors along their first dimension (``torch.utils.data``).

    Args:
        *tensors: Tensors (or NumPy arrays) with the same size in dimension 0.

    Example:
        >>> ds = TensorDataset(Tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), Tensor([0, 1, 0]))
        >>> len(ds), [t.tolist() for t in ds[1]]
        (3, [[3.0, 4.0], 1])
    """

    def __init__(self, *tensors: Any) -> None:
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        sizes = [len(t) for t in tensors]
        if any(s != sizes[0] for s in sizes):
            raise ValueError(f"Size mismatch between tensors: first dimensions {sizes}")
        self.tensors = tuple(tensors)

    def __getitem__(self, index: int) -> tuple[Any, ...]:
        """The ``index``-th sample: a tuple with row ``index`` of every tensor.

        APPROACH: ``tuple(t[index] for t in self.tensors)`` — one entry per tensor, in order.

        EXAMPLE:
            >>> x, y = Tensor([[1.0, 2.0], [3.0, 4.0]]), Tensor([7, 9])
            >>> [t.tolist() for t in TensorDataset(x, y)[-1]]
            [[3.0, 4.0], 9]

        HINT: return a *tuple* (the DataLoader unpacks ``xb, yb``), not a list or a Tensor;
        negative indices work for free because Tensor indexing follows NumPy's rules.
        """
        # BEGIN SOLUTION NO PROMPT
        return tuple(t[index] for t in self.tensors)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 08: implement TensorDataset.__getitem__ (see its docstring)")  # STUB

    def __len__(self) -> int:
        """The number of samples: the size of dimension 0 (shared by every tensor).

        APPROACH: the length of the first tensor, ``len(self.tensors[0])``.

        EXAMPLE: ``len(TensorDataset(Tensor(np.zeros((5, 3))), Tensor(np.zeros(5))))`` is ``5``.

        HINT: not ``numel`` (that would be 15 above) and not the number of tensors (2).
        """
        # BEGIN SOLUTION NO PROMPT
        return len(self.tensors[0])
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 08: implement TensorDataset.__len__ (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: datasets
# points: 0

# %% [markdown]
# ### Check: TensorDataset

# %% [raw]
# # BEGIN TESTS

# %%
def test_tensor_dataset_rows_and_length(TensorDataset, Tensor, np):
    x = Tensor(np.arange(12, dtype=np.float32).reshape(4, 3))
    y = Tensor(np.array([3, 1, 4, 1]))
    ds = TensorDataset(x, y)
    assert len(ds) == 4, (
        f"len() is the size of dimension 0 (4 samples), got {len(ds)}: the DataLoader uses it "
        "to know how many indices to draw")
    item = ds[2]
    assert isinstance(item, tuple) and len(item) == 2, (
        f"ds[i] must be a tuple with one entry per tensor, got {type(item).__name__}")
    assert item[0].tolist() == [6.0, 7.0, 8.0] and item[1].tolist() == 4, (
        f"ds[2] is (x[2], y[2]) = ([6, 7, 8], 4), got ({item[0].tolist()}, {item[1].tolist()})")
    last = ds[-1][1].tolist()
    assert last == 1, (
        f"negative indices count from the end, like x[-1]: expected label 1, got {last}")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 2. Samplers: in which order
#
# A **sampler** yields dataset indices; a **batch sampler** groups them:
#
# ```
#   SequentialSampler(ds)        0 1 2 3 4 5 6 7 8 9
#   RandomSampler(ds, g)         7 2 9 0 4 1 8 3 6 5        a fresh permutation every epoch
#   BatchSampler(·, 4, False)    [7 2 9 0] [4 1 8 3] [6 5]  len = ceil(10 / 4) = 3
#   BatchSampler(·, 4, True)     [7 2 9 0] [4 1 8 3]        len = floor(10 / 4) = 2
# ```
#
# **Why shuffle?** SGD assumes each minibatch is a random sample of the data. A dataset stored
# sorted by class (many are) fed in order gives batches of a single class: the model chases
# one class after another and never converges. And the order must change **every epoch** —
# with a fixed permutation, the same samples always meet in the same batch.
#
# **Why a generator?** A shuffle you cannot reproduce is a bug you cannot reproduce. PyTorch's
# `RandomSampler` draws its permutation from the `generator` it was given, so the stream
# continues from epoch to epoch (different orders) yet the whole run repeats from the seed.
# Without one, it seeds a fresh generator from the global one at the start of each epoch,
# which `torch.manual_seed` controls. We do exactly the same: `_numpy_rng(self.generator)`
# returns the NumPy generator to use in either case.
#
# **The last batch.** 10 samples in batches of 4 leave 2 over. By default they form a short
# last batch (every sample is seen each epoch); `drop_last=True` drops them, which keeps every
# batch the same shape — useful when a layer (batch norm, module 09) or a compiled kernel
# needs a fixed batch size, at the cost of never training on up to `B - 1` samples per epoch
# (different ones each epoch when shuffling).

# %%
#| export
class Sampler:
    """Yields dataset indices; subclasses define ``__iter__`` and usually ``__len__`` (provided)."""

    def __iter__(self) -> Iterator[int]:
        raise NotImplementedError(f"{type(self).__name__} does not implement __iter__")


class SequentialSampler(Sampler):
    """Indices ``0, 1, ..., len(data_source) - 1`` in order (provided)."""

    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """Indices in random order, as ``torch.utils.data.RandomSampler``.

    Args:
        data_source: the dataset (only its ``len`` is used).
        replacement: draw indices independently (with repeats) instead of a permutation.
        num_samples: how many indices per epoch (default ``len(data_source)``).
        generator: a :class:`Generator` (or None: seeded from the global generator each epoch).
    """

    def __init__(self, data_source: Any, replacement: bool = False,
                 num_samples: int | None = None,
                 generator: Generator | np.random.Generator | None = None) -> None:
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got "
                            f"replacement={replacement}")
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        """Yield ``self.num_samples`` indices (Python ints) for one epoch.

        APPROACH:
            1. ``rng = _numpy_rng(self.generator)`` — once per call to ``__iter__``, i.e. once
               per epoch; ``n = len(self.data_source)``.
            2. With ``replacement``: yield from ``rng.integers(0, n, size=self.num_samples)``.
            3. Without: ``num_samples // n`` times yield from ``rng.permutation(n)``, then yield
               the first ``num_samples % n`` entries of one more ``rng.permutation(n)`` (only if
               that remainder is not 0). With the default ``num_samples == n`` this is exactly
               one permutation.
            Convert every index with ``int(...)`` (or ``.tolist()``).

        EXAMPLE:
            >>> list(RandomSampler(range(6), generator=Generator().manual_seed(0)))
            [3, 2, 5, 4, 0, 1]

        HINT: make the generator the function's first statement inside ``__iter__``, not in
        ``__init__``: with ``generator=None`` each epoch must draw a new seed from the global
        generator. Follow the draws above exactly (``permutation``, not ``shuffle`` or
        ``choice``) and the same seed gives the same order as the reference.
        """
        # BEGIN SOLUTION NO PROMPT
        rng = _numpy_rng(self.generator)
        n = len(self.data_source)
        if self.replacement:
            yield from rng.integers(0, n, size=self.num_samples).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from rng.permutation(n).tolist()
        rest = self.num_samples % n
        if rest:
            yield from rng.permutation(n)[:rest].tolist()
        return
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 08: implement RandomSampler.__iter__ (see its docstring)")  # STUB

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size`` (``torch.utils.data``).

    Args:
        sampler: any iterable of indices (a Sampler, a range, a list).
        batch_size: indices per batch, a positive int.
        drop_last: drop the last batch when it is shorter than ``batch_size``.
    """

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        """Yield lists of ``batch_size`` consecutive indices from ``self.sampler``.

        APPROACH: walk ``self.sampler`` once, appending to a list; when it holds
        ``batch_size`` indices, yield it and start a new list. At the end, yield the leftover
        list if it is not empty — unless ``drop_last``.

        EXAMPLE:
            >>> list(BatchSampler(range(10), batch_size=4, drop_last=False))
            [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
            >>> list(BatchSampler(range(10), batch_size=4, drop_last=True))
            [[0, 1, 2, 3], [4, 5, 6, 7]]

        HINT: iterate the sampler exactly once per epoch (a RandomSampler draws a new order
        each time it is iterated); yield a new list each time rather than clearing and
        re-yielding the same one, or every batch the caller kept would change under it.
        """
        # BEGIN SOLUTION NO PROMPT
        batch: list[int] = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch
        return
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 08: implement BatchSampler.__iter__ (see its docstring)")  # STUB

    def __len__(self) -> int:
        """The number of batches per epoch: ``floor(n / B)`` with ``drop_last``, else ``ceil``.

        APPROACH: ``n = len(self.sampler)``; ``n // self.batch_size`` when ``drop_last``,
        otherwise ``(n + self.batch_size - 1) // self.batch_size``.

        EXAMPLE: 10 indices in batches of 4 -> ``3`` batches (4, 4, 2), or ``2`` with
        ``drop_last=True``; 8 indices -> ``2`` either way.

        HINT: integer arithmetic only (``math.ceil`` of a float is fine here but loses
        precision past 2**53); a dataset of 0 samples has 0 batches.
        """
        # BEGIN SOLUTION NO PROMPT
        n = len(self.sampler)  # type: ignore[arg-type]
        if self.drop_last:
            return n // self.batch_size
        return (n + self.batch_size - 1) // self.batch_size
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 08: implement BatchSampler.__len__ (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: samplers
# points: 0

# %% [markdown]
# ### Check: samplers

# %% [raw]
# # BEGIN TESTS

# %%
def test_random_sampler_is_a_reproducible_fresh_permutation(RandomSampler, Generator,
                                                            manual_seed):
    g = Generator().manual_seed(3)
    sampler = RandomSampler(range(10), generator=g)
    first, second = list(sampler), list(sampler)
    assert sorted(first) == list(range(10)), (
        f"one epoch must visit every index exactly once, got {first}")
    kinds = sorted({type(i).__name__ for i in first})
    assert kinds == ["int"], (
        f"yield Python ints (use .tolist()), got {kinds}: NumPy integers leak into every batch "
        "and label")
    assert first != second, (
        f"two epochs gave the same order {first}: draw a new permutation in every call to "
        "__iter__ (the generator's stream continues), or the model sees the same batches every "
        "epoch")
    again = list(RandomSampler(range(10), generator=Generator().manual_seed(3)))
    assert again == first, (
        f"the same seed must give the same order: got {again} and {first}")
    manual_seed(5)
    a = list(RandomSampler(range(10)))
    manual_seed(5)
    b = list(RandomSampler(range(10)))
    assert a == b, (f"manual_seed(5) twice gave {a} and then {b}: without a generator, seed a "
                    "fresh one from the global generator (_numpy_rng(None)) so that "
                    "manual_seed makes the order reproducible")

# %%
def test_batch_sampler_groups_and_counts(BatchSampler):
    got = list(BatchSampler(range(10), batch_size=4, drop_last=False))
    assert got == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]], (
        f"10 indices in batches of 4: the last batch keeps the 2 left over, got {got}")
    got = list(BatchSampler(range(10), batch_size=4, drop_last=True))
    assert got == [[0, 1, 2, 3], [4, 5, 6, 7]], f"drop_last drops the short batch, got {got}"
    n = len(BatchSampler(range(10), 4, False)), len(BatchSampler(range(10), 4, True))
    assert n == (3, 2), (
        f"len() = ceil(10 / 4) = 3, or floor(10 / 4) = 2 with drop_last; got {n}: a training "
        "loop that counts steps (schedulers, progress bars) relies on it")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 3. Collation: how samples become a batch
#
# The loader fetches `B` samples, each maybe a tuple `(image, label)`, and must hand the model
# one `(B, C, H, W)` tensor of images and one `(B,)` tensor of labels. `default_collate` does
# this recursively on the *structure of the first sample*:
#
# ```
#   sample type              batch of B samples becomes                 (PyTorch's rule)
#   Tensor (C, H, W)         Tensor (B, C, H, W), stacked on a new dim 0
#   np.ndarray               Tensor (B, ...), same dtype (uint8 stays uint8)
#   NumPy scalar             Tensor (B,), same dtype
#   int / bool / float       Tensor (B,) int64 / bool / float64  (a Python float is a double)
#   str, bytes               the list of B strings, unchanged
#   dict {k: v}              {k: collate([s[k] for s in samples])}
#   namedtuple P(a, b)       P(collate(a's), collate(b's))
#   tuple / list of n        a LIST of n collated fields  ([xb, yb] for (x, y) samples)
# ```
#
# ```
#   [(x0, y0), (x1, y1), (x2, y2)]  ──transpose──►  (x0, x1, x2), (y0, y1, y2)
#                                   ──stack──────►  [X (3, ...), Y (3,)]
# ```
#
# Stacking **copies**: every sample's bytes are written once into the new batch array. That is
# the price of a batch; section 7 measures it. Shapes must agree: PyTorch raises
# `RuntimeError("stack expects each tensor to be equal size, ...")` on a ragged batch, and
# anything it cannot batch (an arbitrary object, an array of strings) is a `TypeError`.

# %%
#| export
_COLLATE_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                  "lists; found {}")


def default_collate(batch: Sequence[Any]) -> Any:
    """Merge a list of samples into a batch, as ``torch.utils.data.default_collate``.

    Args:
        batch: a non-empty list of samples that all have the structure of ``batch[0]``.

    Returns:
        The batch, by the type of ``elem = batch[0]`` (checked in this order):
            * ``Tensor`` -> ``Tensor(np.stack([s.data for s in batch]))`` (new dim 0);
              different shapes -> ``RuntimeError("stack expects each tensor to be equal
              size, but got [3] at entry 0 and [4] at entry 1")``.
            * ``np.ndarray`` -> like Tensors, after checking the dtype: an array of strings or
              objects (``dtype.kind`` in ``"USO"``) -> ``TypeError(_COLLATE_ERROR.format(
              elem.dtype))``.
            * NumPy scalar (``np.generic``: ``np.float32(1)``, ``np.int64(2)``, ``np.bool_``)
              -> ``Tensor(np.asarray(batch))`` (keeps the scalar's dtype).
            * ``bool`` / ``int`` -> ``Tensor(np.asarray(batch))`` (bool, or int64);
              ``float`` -> ``Tensor(np.asarray(batch, dtype=np.float64))``.
            * ``str`` / ``bytes`` -> ``batch`` itself, unchanged (the sequence of strings).
            * a mapping (``cabc.Mapping``) -> ``{key: default_collate([s[key] for s in batch])
              for key in elem}``.
            * a namedtuple (a tuple with ``_fields``) -> ``type(elem)(*(default_collate(field)
              for field in zip(*batch)))``.
            * a ``cabc.Sequence`` (tuple, list) -> every sample must have ``len(elem)`` entries,
              else ``RuntimeError("each element in list of batch should be of equal size")``;
              then a **list**: ``[default_collate(field) for field in zip(*batch)]`` (each
              ``field`` is the tuple of that entry across the samples).
            * anything else -> ``TypeError(_COLLATE_ERROR.format(type(elem)))``.

    APPROACH: one ``if``/``elif`` chain on ``elem`` in the order above, recursing for dicts,
    namedtuples and sequences. ``bool`` and ``int`` share a branch (``np.asarray([True,
    False])`` is already a bool array); ``str`` must come before ``Sequence`` (a string is a
    sequence of strings: it would recurse forever).

    EXAMPLE:
        >>> xb, yb = default_collate([(Tensor([1.0, 2.0]), 0), (Tensor([3.0, 4.0]), 1)])
        >>> xb.shape, xb.dtype, yb.tolist(), yb.dtype
        ((2, 2), dtype('float32'), [0, 1], dtype('int64'))
        >>> out = default_collate([{"x": 0.5, "name": "a"}, {"x": 1.5, "name": "b"}])
        >>> out["x"].dtype, out["name"]
        (dtype('float64'), ['a', 'b'])

    HINT: a tuple sample gives a *list* of fields (PyTorch's behaviour; ``xb, yb = batch``
    unpacks either). A NumPy scalar is not a Python ``float``: ``isinstance(np.float32(1),
    float)`` is False (but ``np.float64`` *is* a float subclass — test ``np.generic`` first).
    """
    # BEGIN SOLUTION NO PROMPT
    elem = batch[0]
    if isinstance(elem, Tensor):
        shapes = [tuple(s.shape) for s in batch]
        for i, shape in enumerate(shapes):
            if shape != shapes[0]:
                raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                                   f"{list(shapes[0])} at entry 0 and {list(shape)} at entry {i}")
        return Tensor(np.stack([s.data for s in batch]))
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "USO":
            raise TypeError(_COLLATE_ERROR.format(elem.dtype))
        return default_collate([Tensor(s) for s in batch])
    if isinstance(elem, np.generic):
        return Tensor(np.asarray(batch))
    if isinstance(elem, (bool, int)):
        return Tensor(np.asarray(batch))
    if isinstance(elem, float):
        return Tensor(np.asarray(batch, dtype=np.float64))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, cabc.Mapping):
        return {key: default_collate([s[key] for s in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(f) for f in zip(*batch, strict=True)))
    if isinstance(elem, cabc.Sequence):
        if any(len(s) != len(elem) for s in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(field) for field in zip(*batch, strict=True)]
    raise TypeError(_COLLATE_ERROR.format(type(elem)))
    # END SOLUTION
    raise NotImplementedError("module 08: implement default_collate (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: collate
# points: 0

# %% [markdown]
# ### Check: default_collate

# %% [raw]
# # BEGIN TESTS

# %%
def test_collate_stacks_pairs_into_a_list_of_tensors(default_collate, Tensor, np):
    samples = [(Tensor(np.full((1, 2, 2), i, dtype=np.float32)), i) for i in range(3)]
    out = default_collate(samples)
    assert isinstance(out, list) and len(out) == 2, (
        f"a batch of (x, y) tuples becomes a list [X, Y] (PyTorch's rule), got "
        f"{type(out).__name__}")
    xb, yb = out
    assert isinstance(xb, Tensor) and xb.shape == (3, 1, 2, 2) and xb.dtype == np.float32, (
        f"three (1, 2, 2) float32 images stack to a (3, 1, 2, 2) float32 Tensor, got "
        f"{getattr(xb, 'shape', type(xb).__name__)}")
    top = float(xb.data[2].max())
    assert top == 2.0, f"sample i must land at batch position i: row 2 should hold 2.0, got {top}"
    assert isinstance(yb, Tensor) and yb.tolist() == [0, 1, 2] and yb.dtype == np.int64, (
        f"Python int labels become an int64 Tensor (what CrossEntropyLoss expects), got {yb!r}")

# %%
def test_collate_numbers_arrays_and_dicts(default_collate, Tensor, np):
    out = default_collate([{"img": np.zeros((2, 2), np.uint8), "w": 0.5, "id": "a"},
                           {"img": np.ones((2, 2), np.uint8), "w": 1.5, "id": "b"}])
    assert isinstance(out, dict) and set(out) == {"img", "w", "id"}, (
        f"a dict sample gives a dict of collated fields, got {type(out).__name__}")
    assert isinstance(out["img"], Tensor) and out["img"].shape == (2, 2, 2) and \
        out["img"].dtype == np.uint8, (
            f"got {type(out['img']).__name__} {getattr(out['img'], 'shape', '')} "
            f"{getattr(out['img'], 'dtype', '')}: "
            "NumPy arrays are stacked into a Tensor that keeps their dtype (uint8 stays uint8: "
            "converting to float is a transform's job, not collate's)")
    assert out["w"].dtype == np.float64 and out["w"].tolist() == [0.5, 1.5], (
        f"Python floats become a float64 Tensor (as in PyTorch), got {out['w']!r}")
    assert out["id"] == ["a", "b"], (
        f"strings are returned as the list, unchanged: expected ['a', 'b'], got {out['id']!r}")
    try:
        default_collate([Tensor(np.zeros(3)), Tensor(np.zeros(4))])
    except RuntimeError:
        pass
    else:
        raise AssertionError("tensors of different shapes cannot be stacked: raise RuntimeError")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 4. The DataLoader
#
# `DataLoader` wires the three pieces together. Its constructor (provided) turns the familiar
# arguments into samplers, as PyTorch's does:
#
# ```
#   DataLoader(dataset, batch_size=1, shuffle=False, drop_last=False, collate_fn=None,
#              generator=None)
#       sampler       = RandomSampler(dataset, generator=generator) if shuffle
#                       else SequentialSampler(dataset)
#       batch_sampler = BatchSampler(sampler, batch_size, drop_last)
#       collate_fn    = collate_fn or default_collate
# ```
#
# Iterating it is then three lines: for each list of indices, fetch the samples and collate
# them. `len(loader)` is the number of batches. Every `for xb, yb in loader:` starts a new
# epoch: a new iteration of the batch sampler, hence a new permutation when shuffling.
#
# Left out, on purpose: `num_workers` (PyTorch forks worker processes that fetch and collate
# batches in parallel while the model trains), `pin_memory` (page-locked buffers for fast GPU
# copies) and iterable-style datasets. Question 2 asks what the workers would buy you.

# %%
#| export
def default_convert(data: Any) -> Any:
    """What ``DataLoader(batch_size=None)`` does to each sample (provided; PyTorch's
    ``default_convert``): NumPy arrays and scalars of numbers become Tensors, dicts, namedtuples
    and lists are converted entry by entry (a tuple becomes a list, as in PyTorch), anything
    else is returned unchanged."""
    if isinstance(data, (np.ndarray, np.generic)) and data.dtype.kind not in "USO":
        return Tensor(np.asarray(data))
    if isinstance(data, cabc.Mapping):
        return {key: default_convert(value) for key, value in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (tuple, list)):
        return [default_convert(d) for d in data]
    return data


class DataLoader:
    """Iterate over a dataset in batches, as ``torch.utils.data.DataLoader``.

    Args:
        dataset: a map-style dataset (``__getitem__`` and ``__len__``).
        batch_size: samples per batch (a positive int; default 1), or None: no automatic
            batching — each sample on its own, through ``collate_fn`` (default:
            :func:`default_convert`, which turns NumPy arrays into Tensors), and no
            ``batch_sampler``.
        shuffle: a new random order every epoch (``RandomSampler``) instead of ``0..n-1``.
        sampler: a custom index sampler (mutually exclusive with ``shuffle``).
        batch_sampler: a custom sampler of index lists (mutually exclusive with
            ``batch_size``, ``shuffle``, ``sampler`` and ``drop_last``).
        num_workers: 0, loading in the main process (the only choice here: worker processes
            raise a ValueError, see below).
        collate_fn: merges a list of samples into a batch (default: :func:`default_collate`).
        pin_memory: accepted; with no accelerator it changes nothing (PyTorch warns the
            same on a CPU-only machine).
        drop_last: drop the last batch if it is smaller than ``batch_size``.
        timeout, worker_init_fn, multiprocessing_context, prefetch_factor,
            persistent_workers, pin_memory_device, in_order: the worker-process options, with
            PyTorch's checks; without workers they change nothing.
        generator: the :class:`Generator` the shuffle draws from (None: the global generator,
            which ``tinytorch.manual_seed`` seeds).

    The arguments come in PyTorch's order, so positional calls mean the same in both.

    Raises:
        ValueError: ``num_workers > 0`` — worker processes (multiprocessing, shared memory)
            are not part of the course; the batches are the same with ``num_workers=0``.
            Also PyTorch's own checks of the options above.

    Attributes:
        dataset, batch_size, drop_last, generator, sampler, batch_sampler, collate_fn,
        num_workers, pin_memory, timeout, worker_init_fn, prefetch_factor, ...

    Example:
        >>> ds = TensorDataset(Tensor(np.arange(10.0)), Tensor(np.arange(10)))
        >>> [yb.tolist() for _, yb in DataLoader(ds, batch_size=4)]
        [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    """

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Iterable[int] | None = None,
                 batch_sampler: Iterable[list[int]] | None = None, num_workers: int = 0,
                 collate_fn: Callable[[list[Any]], Any] | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context: Any = None,
                 generator: Generator | np.random.Generator | None = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        self._check_workers(num_workers, timeout, prefetch_factor, persistent_workers,
                            multiprocessing_context, pin_memory)
        self.num_workers, self.timeout, self.worker_init_fn = num_workers, timeout, worker_init_fn
        self.prefetch_factor, self.persistent_workers = prefetch_factor, persistent_workers
        self.multiprocessing_context = multiprocessing_context
        self.pin_memory, self.pin_memory_device, self.in_order = (pin_memory, pin_memory_device,
                                                                  in_order)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        if batch_sampler is None and batch_size is not None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        if collate_fn is None:  # one sample at a time without batching: only converted
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.generator = generator
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.collate_fn = collate_fn

    @staticmethod
    def _check_workers(num_workers: int, timeout: float, prefetch_factor: int | None,
                       persistent_workers: bool, multiprocessing_context: Any,
                       pin_memory: bool) -> None:
        """PyTorch's checks of the worker-process options (provided); ``num_workers > 0``
        itself is refused: everything loads in the main process here."""
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if num_workers > 0:
            raise ValueError(f"num_workers={num_workers}: tinytorch loads every batch in the "
                             "main process (worker processes are not part of the course); use "
                             "num_workers=0, which gives the same batches")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing. let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if persistent_workers:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if multiprocessing_context is not None:
            raise ValueError("multiprocessing_context can only be used with multi-process "
                             "loading (num_workers > 0), but got num_workers=0")
        if pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=3)

    def __iter__(self) -> Iterator[Any]:
        """One epoch: for each list of indices, fetch those samples and collate them.

        APPROACH: for every ``indices`` in ``self.batch_sampler``: build the list
        ``[self.dataset[i] for i in indices]`` and yield ``self.collate_fn(that list)``.
        Without batching (``self.batch_sampler is None``, from ``batch_size=None``): for every
        index ``i`` of ``self.sampler`` yield ``self.collate_fn(self.dataset[i])``.

        EXAMPLE: 10 samples, ``batch_size=4`` -> three batches with 4, 4 and 2 samples;
        with ``shuffle=True`` every epoch visits all 10 in a new order.

        HINT: write it as a generator (``yield``) so that each ``for ... in loader`` starts a
        fresh pass over ``self.batch_sampler`` — which is what draws a new permutation. Call
        ``self.collate_fn``, not ``default_collate``: users pass their own.
        """
        # BEGIN SOLUTION NO PROMPT
        if self.batch_sampler is None:
            for i in self.sampler:
                yield self.collate_fn(self.dataset[i])
            return
        for indices in self.batch_sampler:
            yield self.collate_fn([self.dataset[i] for i in indices])
        return
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 08: implement DataLoader.__iter__ (see its docstring)")  # STUB

    def __len__(self) -> int:
        """The number of batches in one epoch: ``len(self.batch_sampler)``.

        APPROACH: delegate to the batch sampler, which knows about ``drop_last``; without
        batching (no batch sampler) it is ``len(self.sampler)``.

        EXAMPLE: 10 samples, ``batch_size=4`` -> ``3`` (``2`` with ``drop_last=True``).

        HINT: this counts batches, not samples: ``len(loader.dataset)`` counts samples.
        """
        # BEGIN SOLUTION NO PROMPT
        if self.batch_sampler is None:
            return len(self.sampler)  # type: ignore[arg-type]
        return len(self.batch_sampler)  # type: ignore[arg-type]
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 08: implement DataLoader.__len__ (see its docstring)")  # STUB


def random_split(dataset: Any, lengths: Sequence[int | float],
                 generator: Generator | np.random.Generator | None = None) -> list[Subset]:
    """Split a dataset into non-overlapping random subsets (provided; ``torch.utils.data``).

    ``lengths`` are sizes summing to ``len(dataset)``, or fractions summing to 1 (the rounding
    remainder is handed out one by one from the first subset on, as PyTorch does).

    Example:
        >>> train, val = random_split(range(10), [0.8, 0.2], generator=Generator().manual_seed(0))
        >>> len(train), len(val), sorted(list(train) + list(val)) == list(range(10))
        (8, 2, True)
    """
    n = len(dataset)
    sizes = [int(x) for x in lengths]
    if math.isclose(sum(float(x) for x in lengths), 1.0) and sum(sizes) != n:
        sizes = [int(math.floor(n * float(f))) for f in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
    if sum(sizes) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = _numpy_rng(generator).permutation(n).tolist()
    out, start = [], 0
    for size in sizes:
        out.append(Subset(dataset, perm[start:start + size]))
        start += size
    return out


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices`` (provided; ``torch.utils.data.Subset``)."""

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = list(indices)

    def __getitem__(self, index: int) -> Any:
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


# %% [raw]
# # BEGIN QUESTION
# name: dataloader
# points: 0

# %% [markdown]
# ### Check: DataLoader

# %% [raw]
# # BEGIN TESTS

# %%
def test_loader_batches_in_order_with_a_short_last_batch(DataLoader, TensorDataset, Tensor, np):
    ds = TensorDataset(Tensor(np.arange(20, dtype=np.float32).reshape(10, 2)),
                       Tensor(np.arange(10)))
    loader = DataLoader(ds, batch_size=4)
    assert len(loader) == 3, f"10 samples in batches of 4 make 3 batches, len() gave {len(loader)}"
    batches = list(loader)
    assert [yb.tolist() for _, yb in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]], (
        "without shuffle the batches follow the dataset order and the last one holds the 2 "
        f"samples left over; got {[yb.tolist() for _, yb in batches]}")
    assert batches[0][0].shape == (4, 2), f"X of batch 0 must be (4, 2), got {batches[0][0].shape}"
    dropped = DataLoader(ds, batch_size=4, drop_last=True)
    sizes = [len(yb) for _, yb in dropped]
    assert len(dropped) == 2 and sizes == [4, 4], (
        f"drop_last=True drops the short last batch, and len() must agree with the iteration: "
        f"expected len 2 and batches [4, 4], got len {len(dropped)} and batches {sizes}")

# %%
def test_loader_shuffles_reproducibly_per_epoch(DataLoader, TensorDataset, Generator, Tensor, np):
    ds = TensorDataset(Tensor(np.arange(12)))
    loader = DataLoader(ds, batch_size=5, shuffle=True, generator=Generator().manual_seed(0))
    epoch1 = [i for (xb,) in loader for i in xb.tolist()]
    epoch2 = [i for (xb,) in loader for i in xb.tolist()]
    assert sorted(epoch1) == list(range(12)), (
        f"a shuffled epoch still visits every sample exactly once, got {sorted(epoch1)}")
    assert epoch1 != epoch2, (
        f"each epoch must draw a new order (iterate the batch sampler anew); both epochs were "
        f"{epoch1}")
    again = DataLoader(ds, batch_size=5, shuffle=True, generator=Generator().manual_seed(0))
    replay = [i for (xb,) in again for i in xb.tolist()]
    assert replay == epoch1, (
        f"the same seeded generator must reproduce the same first epoch: expected {epoch1}, "
        f"got {replay}")
    seen = []
    custom = DataLoader(ds, batch_size=4, collate_fn=lambda samples: len(samples))
    for b in custom:
        seen.append(b)
    assert seen == [4, 4, 4], f"use self.collate_fn (here it returns the batch size), got {seen}"

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 5. Transforms: preparing and augmenting images
#
# A dataset takes `transform=` (applied to the input) and `target_transform=` (to the label)
# and calls them in `__getitem__`, so each sample is processed when it is fetched — with fresh
# random choices every time for the *augmentations*. torchvision's contract, which we follow:
#
# ```
#   ToTensor()                  (H, W) or (H, W, C) uint8  ->  (C, H, W) float32 in [0, 1]
#   Normalize(mean, std)        x[c] <- (x[c] - mean[c]) / std[c]       per channel, (..., C, H, W)
#   RandomCrop(size, padding)   pad the borders, then cut a size×size window at a random place
#   RandomHorizontalFlip(p)     mirror left-right with probability p
#   Compose([t1, t2, ...])      t2(t1(x))
# ```
#
# **Normalize** makes every channel zero-mean, unit-variance over the training set (MNIST:
# mean 0.1307, std 0.3081): inputs of that scale keep early activations and gradients in a
# good range. Use the *training* statistics for the test set too. Its arithmetic must stay in
# the image's dtype: subtracting a float64 array from a float32 image would silently promote
# the whole batch to float64 (twice the memory, half the speed).
#
# **RandomCrop with padding** is the classic CIFAR augmentation: pad 4 pixels on every side
# (32 → 40), then cut a 32×32 window, i.e. shift the image by up to ±4 pixels. The network
# sees a slightly different image each epoch, which is nearly free extra data. The window's
# top-left corner `(i, j)` is drawn uniformly:
#
# ```
#     padded (H+2p) × (W+2p)           i ∈ [0, H+2p−th],  j ∈ [0, W+2p−tw]
#   ┌──────────────────────┐
#   │ 0 0 0 0 0 0 0 0 0 0  │          crop = padded[..., i:i+th, j:j+tw]
#   │ 0 ┌───────────┐ 0 0  │
#   │ 0 │ i,j  th×tw│ 0 0  │
#   │ 0 └───────────┘ 0 0  │
#   └──────────────────────┘
# ```
#
# **RandomHorizontalFlip** mirrors the width axis. It suits photos (a car facing left is still
# a car) but not digits or text: a mirrored 3 is not a 3. Augmentations encode what must not
# change the label — choose them per dataset.
#
# Randomness: like torchvision (which uses torch's global RNG), our random transforms draw from
# tinytorch's global generator `default_generator()`, so `manual_seed` reproduces them. Each
# transform accepts a NumPy array or a Tensor and returns the same kind (`_unwrap` / `_rewrap`
# below do the bookkeeping).

# %%
#| export
def _unwrap(img: Any) -> tuple[np.ndarray, bool]:
    """``(array, was_tensor)`` for a Tensor or array-like image (provided)."""
    if isinstance(img, Tensor):
        return img.data, True
    return np.asarray(img), False


def _rewrap(arr: np.ndarray, was_tensor: bool) -> Any:
    """Give the result back as the kind of image that came in (provided)."""
    return Tensor(arr) if was_tensor else arr


class Compose:
    """Chain transforms: ``Compose([t1, t2])(x) == t2(t1(x))`` (provided; torchvision)."""

    def __init__(self, transforms: Sequence[Callable[[Any], Any]]) -> None:
        self.transforms = list(transforms)

    def __call__(self, img: Any) -> Any:
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self) -> str:
        inner = "".join(f"\n    {t}" for t in self.transforms)
        return f"{type(self).__name__}({inner}\n)"


class ToTensor:
    """``(H, W)`` / ``(H, W, C)`` array -> ``(C, H, W)`` Tensor; uint8 scaled to [0, 1] (provided).

    As ``torchvision.transforms.ToTensor`` on a NumPy array: a 2-D image gets a channel axis,
    channels move first, and ``uint8`` becomes ``float32 / 255``; other dtypes keep their values.

    Example:
        >>> t = ToTensor()(np.full((2, 3), 255, dtype=np.uint8))
        >>> t.shape, t.dtype, float(t.data.max())
        ((1, 2, 3), dtype('float32'), 1.0)
    """

    def __call__(self, pic: Any) -> Tensor:
        arr = pic.data if isinstance(pic, Tensor) else np.asarray(pic)
        if arr.ndim not in (2, 3):
            raise ValueError(f"pic should be 2 or 3 dimensional. Got {arr.ndim} dimensions.")
        if arr.ndim == 2:
            arr = arr[:, :, None]
        chw = np.ascontiguousarray(arr.transpose(2, 0, 1))
        if chw.dtype == np.uint8:
            return Tensor(chw.astype(np.float32) / np.float32(255.0))
        return Tensor(chw)

    def __repr__(self) -> str:
        return "ToTensor()"


class Normalize:
    """Per-channel ``(x - mean[c]) / std[c]`` on ``(..., C, H, W)`` float images (torchvision).

    Args:
        mean: one value per channel (or one value for all channels).
        std: one value per channel (or one for all); none may be 0.
        inplace: write the result into the input's array instead of a new one.
    """

    def __init__(self, mean: Sequence[float] | float, std: Sequence[float] | float,
                 inplace: bool = False) -> None:
        self.mean = mean
        self.std = std
        self.inplace = inplace

    def __call__(self, img: Any) -> Any:
        """Normalize each channel of a ``(..., C, H, W)`` float image.

        APPROACH:
            1. ``x, was_tensor = _unwrap(img)``.
            2. If ``x.ndim < 3``: ``ValueError("Expected tensor to be a tensor image of size
               (..., C, H, W). Got tensor.size() = ...")``; if ``x.dtype.kind != "f"``:
               ``TypeError("Input tensor should be a float tensor. Got <dtype>.")``.
            3. ``mean = np.asarray(self.mean, dtype=x.dtype)``, same for ``std``; if any
               ``std == 0``: ``ValueError("std evaluated to zero after conversion to <dtype>,
               leading to division by zero.")``.
            4. If ``mean`` is 1-D, reshape it to ``(C, 1, 1)`` (``reshape(-1, 1, 1)``) so it
               broadcasts over ``H`` and ``W``; same for ``std``.
            5. ``inplace``: ``x -= mean; x /= std`` and return ``img`` itself; otherwise return
               ``_rewrap((x - mean) / std, was_tensor)``.

        EXAMPLE:
            >>> x = np.stack([np.full((2, 2), 1.0), np.full((2, 2), 3.0)]).astype(np.float32)
            >>> y = Normalize(mean=[1.0, 2.0], std=[0.5, 2.0])(x)
            >>> y[:, 0, 0].tolist(), y.dtype
            ([0.0, 0.5], dtype('float32'))

        HINT: converting ``mean``/``std`` to ``x.dtype`` first keeps a float32 image float32;
        ``np.asarray([0.5, 0.5])`` alone is float64 and would promote the result. A batch
        ``(B, C, H, W)`` works unchanged: broadcasting aligns from the right.
        """
        # BEGIN SOLUTION NO PROMPT
        x, was_tensor = _unwrap(img)
        if x.ndim < 3:
            raise ValueError(f"Expected tensor to be a tensor image of size (..., C, H, W). Got "
                             f"tensor.size() = {tuple(x.shape)}")
        if x.dtype.kind != "f":
            raise TypeError(f"Input tensor should be a float tensor. Got {x.dtype}.")
        mean = np.asarray(self.mean, dtype=x.dtype)
        std = np.asarray(self.std, dtype=x.dtype)
        if np.any(std == 0):
            raise ValueError(f"std evaluated to zero after conversion to {x.dtype}, leading to "
                             "division by zero.")
        if mean.ndim == 1:
            mean = mean.reshape(-1, 1, 1)
        if std.ndim == 1:
            std = std.reshape(-1, 1, 1)
        if self.inplace:
            x -= mean
            x /= std
            return img
        return _rewrap((x - mean) / std, was_tensor)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 08: implement Normalize.__call__ (see its docstring)")  # STUB

    def __repr__(self) -> str:
        return f"{type(self).__name__}(mean={self.mean}, std={self.std})"


def pad(img: Any, padding: int | Sequence[int], fill: float = 0,
        padding_mode: str = "constant") -> Any:
    """Pad the last two axes of an image (provided; ``torchvision.transforms.functional.pad``).

    ``padding``: an int (all four sides), ``(lr, tb)`` (left/right, top/bottom) or
    ``(left, top, right, bottom)``. ``padding_mode``: ``"constant"`` (with ``fill``),
    ``"edge"`` (repeat the border pixel), ``"reflect"`` (mirror without repeating the border:
    ``2 1 | 1 2 3 | 3 2`` is symmetric, ``3 2 | 1 2 3 | 2 1`` is reflect) or ``"symmetric"``.

    Example:
        >>> pad(np.array([[1, 2, 3]]), (2, 0), padding_mode="reflect").tolist()
        [[3, 2, 1, 2, 3, 2, 1]]
    """
    x, was_tensor = _unwrap(img)
    p = [padding] if isinstance(padding, int) else list(padding)
    if len(p) == 1:
        left = top = right = bottom = p[0]
    elif len(p) == 2:
        left = right = p[0]
        top = bottom = p[1]
    elif len(p) == 4:
        left, top, right, bottom = p
    else:
        raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a "
                         f"{len(p)} element tuple")
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    h, w = x.shape[-2:]
    limit = {"reflect": (h - 1, w - 1), "symmetric": (h, w)}.get(padding_mode)
    if limit is not None and (max(top, bottom) > limit[0] or max(left, right) > limit[1]):
        raise ValueError(f"padding ({left}, {top}, {right}, {bottom}) is too large for "
                         f"padding_mode={padding_mode!r} on a {h}x{w} image (as in PyTorch: at "
                         "most the size - 1 for reflect, the size for symmetric)")
    widths = [(0, 0)] * (x.ndim - 2) + [(top, bottom), (left, right)]
    if padding_mode == "constant":
        out = np.pad(x, widths, mode="constant", constant_values=np.asarray(fill, dtype=x.dtype))
    else:
        out = np.pad(x, widths, mode=padding_mode)
    return _rewrap(out, was_tensor)


class RandomCrop:
    """Cut a random ``size`` window, after optional padding (``torchvision.transforms.RandomCrop``).

    Args:
        size: ``(th, tw)`` or an int for a square crop.
        padding: optional padding applied first (see :func:`pad`).
        pad_if_needed: pad an image smaller than ``size`` (left/right by the missing width,
            top/bottom by the missing height) instead of failing.
        fill, padding_mode: as in :func:`pad`.
    """

    def __init__(self, size: int | Sequence[int], padding: int | Sequence[int] | None = None,
                 pad_if_needed: bool = False, fill: float = 0,
                 padding_mode: str = "constant") -> None:
        self.size = (int(size), int(size)) if isinstance(size, int) else (int(size[0]),
                                                                           int(size[-1]))
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    @staticmethod
    def get_params(img: Any, output_size: tuple[int, int]) -> tuple[int, int, int, int]:
        """Draw the window: ``(i, j, th, tw)`` with ``i`` the top row and ``j`` the left column.

        APPROACH:
            1. ``h, w`` = the last two sizes of the image (``_unwrap(img)[0].shape[-2:]``);
               ``th, tw = output_size``.
            2. If ``h < th or w < tw``: ``ValueError(f"Required crop size {(th, tw)} is larger
               than input image size {(h, w)}")``.
            3. If ``(h, w) == (th, tw)``: return ``(0, 0, h, w)`` without drawing anything.
            4. ``rng = default_generator()``; ``i = int(rng.integers(0, h - th + 1))``, then
               ``j = int(rng.integers(0, w - tw + 1))`` — in this order; return
               ``(i, j, th, tw)``.

        EXAMPLE: an ``8 × 8`` image and ``output_size=(8, 8)`` -> ``(0, 0, 8, 8)``; for
        ``(6, 6)``, ``i`` and ``j`` are each one of 0, 1, 2 (3 possible offsets per axis).

        HINT: ``integers(low, high)`` excludes ``high``: the ``+ 1`` is what lets the window
        touch the bottom/right border.
        """
        # BEGIN SOLUTION NO PROMPT
        h, w = _unwrap(img)[0].shape[-2:]
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size "
                             f"{(h, w)}")
        if (h, w) == (th, tw):
            return 0, 0, h, w
        rng = default_generator()
        i = int(rng.integers(0, h - th + 1))
        j = int(rng.integers(0, w - tw + 1))
        return i, j, th, tw
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 08: implement RandomCrop.get_params (see its docstring)")  # STUB

    def __call__(self, img: Any) -> Any:
        """Pad (if asked), then crop a random ``self.size`` window of the last two axes.

        APPROACH:
            1. If ``self.padding is not None``: ``img = pad(img, self.padding, self.fill,
               self.padding_mode)``.
            2. ``th, tw = self.size``; ``h, w`` = the last two sizes of ``img`` now. If
               ``self.pad_if_needed`` and ``w < tw``: pad with ``(tw - w, 0)``; then (recompute
               ``h``) if ``h < th``: pad with ``(0, th - h)`` — both with ``self.fill`` and
               ``self.padding_mode``, as in step 1.
            3. ``i, j, th, tw = self.get_params(img, self.size)``.
            4. Return ``img[..., i:i + th, j:j + tw]`` as a new contiguous array (or Tensor,
               if a Tensor came in: ``_unwrap``/``_rewrap``).

        EXAMPLE: ``RandomCrop(32, padding=4)`` on a ``(3, 32, 32)`` image pads to
        ``(3, 40, 40)`` and returns a ``(3, 32, 32)`` window shifted by up to 4 pixels.

        HINT: crop the *padded* image, with the sizes measured after padding; ``...`` keeps
        any leading channel/batch axes. ``np.ascontiguousarray`` (or ``.copy()``) makes the
        crop its own array: a view would keep the whole padded image alive.
        """
        # BEGIN SOLUTION NO PROMPT
        if self.padding is not None:
            img = pad(img, self.padding, self.fill, self.padding_mode)
        th, tw = self.size
        w = _unwrap(img)[0].shape[-1]
        if self.pad_if_needed and w < tw:
            img = pad(img, (tw - w, 0), self.fill, self.padding_mode)
        h = _unwrap(img)[0].shape[-2]
        if self.pad_if_needed and h < th:
            img = pad(img, (0, th - h), self.fill, self.padding_mode)
        i, j, th, tw = self.get_params(img, self.size)
        x, was_tensor = _unwrap(img)
        return _rewrap(np.ascontiguousarray(x[..., i:i + th, j:j + tw]), was_tensor)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 08: implement RandomCrop.__call__ (see its docstring)")  # STUB

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={self.size}, padding={self.padding})"


class RandomHorizontalFlip:
    """Mirror the last axis (width) with probability ``p`` (torchvision).

    Args:
        p: probability of flipping.
    """

    def __init__(self, p: float = 0.5) -> None:
        self.p = p

    def __call__(self, img: Any) -> Any:
        """Flip left-right with probability ``p``; otherwise return ``img`` unchanged.

        APPROACH: draw **once** ``u = default_generator().random()`` (every call, whatever
        ``p``); if ``u < self.p`` return the image reversed along its last axis
        (``x[..., ::-1]``) as a new contiguous array (or Tensor, if a Tensor came in);
        else return ``img`` itself.

        EXAMPLE: ``RandomHorizontalFlip(p=1.0)(np.array([[1, 2, 3]]))`` ->
        ``array([[3, 2, 1]])``; with ``p=0.0`` the same object comes back.

        HINT: the width is the *last* axis of ``(C, H, W)``; ``x[:, ::-1]`` would flip the
        height of a ``(C, H, W)`` image (upside down). ``<`` (not ``<=``) makes ``p=0`` never
        flip.
        """
        # BEGIN SOLUTION NO PROMPT
        u = default_generator().random()
        if u < self.p:
            x, was_tensor = _unwrap(img)
            return _rewrap(np.ascontiguousarray(x[..., ::-1]), was_tensor)
        return img
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 08: implement RandomHorizontalFlip.__call__ (see its docstring)")  # STUB

    def __repr__(self) -> str:
        return f"{type(self).__name__}(p={self.p})"


# %% [raw]
# # BEGIN QUESTION
# name: transforms
# points: 0

# %% [markdown]
# ### Check: transforms

# %% [raw]
# # BEGIN TESTS

# %%
def test_normalize_is_per_channel_and_keeps_float32(Normalize, Tensor, np):
    x = np.stack([np.full((2, 3), 0.5), np.full((2, 3), 1.0)]).astype(np.float32)  # (2, 2, 3)
    y = Normalize(mean=[0.5, 0.0], std=[0.25, 2.0])(x)
    assert isinstance(y, np.ndarray) and y.shape == (2, 2, 3), (
        f"an array in gives an array of the same shape out, got {type(y).__name__}")
    assert np.allclose(y[0], 0.0) and np.allclose(y[1], 0.5), (
        f"channel 0: (0.5 - 0.5) / 0.25 = 0; channel 1: (1 - 0) / 2 = 0.5; got "
        f"{y[:, 0, 0].tolist()} — mean/std must broadcast per channel, shape (C, 1, 1)")
    assert y.dtype == np.float32, (
        f"the result must stay float32, got {y.dtype}: convert mean/std to the image's dtype")
    t = Normalize([0.5, 0.0], [0.25, 2.0])(Tensor(x))
    assert isinstance(t, Tensor) and np.allclose(t.data, y), (
        f"a Tensor in gives a Tensor out with the same values, got {type(t).__name__}")

# %%
def test_random_crop_and_flip(RandomCrop, RandomHorizontalFlip, manual_seed, np):
    img = np.arange(1, 2 * 4 * 4 + 1, dtype=np.float32).reshape(2, 4, 4)
    padded = np.pad(img, [(0, 0), (2, 2), (2, 2)])  # (2, 8, 8), zeros around
    windows = {padded[:, i:i + 4, j:j + 4].tobytes() for i in range(5) for j in range(5)}
    manual_seed(0)
    crops = [RandomCrop(4, padding=2)(img) for _ in range(20)]
    assert all(c.shape == (2, 4, 4) for c in crops), (
        f"RandomCrop(4, padding=2) pads (2, 4, 4) to (2, 8, 8) and cuts (2, 4, 4), got "
        f"{crops[0].shape}")
    outside = sum(c.tobytes() not in windows for c in crops)
    assert outside == 0, (
        f"every crop must be a 4×4 window (all channels, same place) of the zero-padded image; "
        f"{outside} of {len(crops)} were not")
    places = len({c.tobytes() for c in crops})
    assert places > 3, (
        f"20 crops came from {places} places: the window's corner must be drawn at random")
    same = RandomCrop(4)(img)
    assert np.array_equal(same, img), (
        f"a crop as large as the image is the image, got shape {np.shape(same)}"
        + ("" if np.shape(same) != img.shape else " with other values"))
    flipped = RandomHorizontalFlip(p=1.0)(img)
    assert np.array_equal(flipped, img[..., ::-1]), (
        f"p=1 must always mirror the LAST axis (width) of (C, H, W); x[:, ::-1] flips the "
        f"height. First row expected {img[0, 0, ::-1].tolist()}, got "
        f"{np.asarray(flipped)[0, 0].tolist()}")
    kept = RandomHorizontalFlip(p=0.0)(img)
    assert kept is img, (
        f"p=0 never flips: return the input itself, got a {type(kept).__name__} copy (a copy "
        "per sample costs memory bandwidth for nothing)")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 6. Real datasets: binary formats, checksums and a cache folder
#
# Datasets travel as plain binary files. Two formats cover this course:
#
# **IDX** (MNIST, Fashion-MNIST), big-endian, usually gzipped:
#
# ```
#   byte  0  1     2            3        4 .. 4+4·ndim          then
#        [0][0][dtype code][ndim][dim_0][dim_1]...(uint32 BE)  data, row-major, big-endian
#   dtype codes: 0x08 uint8  0x09 int8  0x0B int16  0x0C int32  0x0D float32  0x0E float64
#   images: 00 00 08 03 | N | 28 | 28 | N·28·28 bytes      (16-byte header)
#   labels: 00 00 08 01 | N |            N bytes           ( 8-byte header)
# ```
#
# **CIFAR-10, binary version** (`cifar-10-binary.tar.gz` → `cifar-10-batches-bin/`): five
# training files `data_batch_1.bin` … `data_batch_5.bin` (10,000 images each) and
# `test_batch.bin`, each a run of 3,073-byte records:
#
# ```
#   [label: 1 byte][red: 1024 bytes = 32×32][green: 1024][blue: 1024]   × N records
#   -> images (N, 3, 32, 32) channel planes -> torchvision's (N, 32, 32, 3) HWC for ToTensor
# ```
#
# We never read the *python* version of CIFAR-10: its batches are pickles, and unpickling a
# file can run arbitrary code. A fixed binary layout parsed with `np.frombuffer` cannot.
#
# **Checksums.** A truncated download, a proxy's error page saved under the right name, a
# different file from a mirror: all parse into garbage or crash far from the cause. So every
# file is checked with **SHA-256** against the digests of the published files *before* it is
# parsed, and the loader refuses a mismatch with a one-line message naming the file. The
# known digests live with each dataset class (`MNIST.sha256`, `FashionMNIST.sha256`,
# `CIFAR10.tgz_sha256`): the gzip files as published, the raw (gunzipped) Fashion-MNIST files,
# the Debian package's copy, and the course's own Fashion-MNIST subset.
#
# **The cache folder.** `root` defaults to `$TINYTORCH_DATA`, else `~/.cache/tinytorch`.
# Download the files yourself (or pass `download=True`, which fetches them from the
# official mirrors and checks them the same way) into:
#
# ```
#   <root>/MNIST/raw/train-images-idx3-ubyte.gz ...    (or directly in <root>/)
#   <root>/FashionMNIST/raw/...                          (or directly in <root>/)
#   <root>/cifar-10-binary.tar.gz                        -> extracted once into
#   <root>/cifar-10-batches-bin/*.bin + SHA256SUMS       (digests written from the verified archive)
# ```
#
# Your part is the two parsers; the dataset classes around them (provided) do the lookup,
# checking, downloading and caching.

# %%
#| export
_IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
_GZIP_MAGIC = b"\x1f\x8b"
_CIFAR_RECORD = 1 + 3 * 32 * 32


def read_idx(path: str | Path) -> np.ndarray:
    """Parse an IDX file (MNIST's format), gzipped or not, into a NumPy array.

    Returns:
        An array of shape ``(dim_0, dim_1, ...)`` from the header, in native byte order, with
        the header's element type (``uint8`` for MNIST images and labels).

    Raises:
        ValueError: one line naming the file — bad magic number, unknown type code, truncated
            header, or a data size that does not match the dimensions.

    APPROACH:
        1. ``data = Path(path).read_bytes()``; if it starts with ``_GZIP_MAGIC``
           (``1f 8b``), ``data = gzip.decompress(data)``.
        2. Bytes 0 and 1 must be zero; byte 2 is the type code (a key of ``_IDX_DTYPES``),
           byte 3 the number of dimensions ``ndim``.
        3. ``dims = np.frombuffer(data, dtype=">u4", count=ndim, offset=4)`` (big-endian
           uint32); the data starts at ``offset = 4 + 4 * ndim``.
        4. Check ``len(data) - offset == prod(dims) * itemsize`` (``np.dtype(code).itemsize``).
        5. ``np.frombuffer(data, dtype=_IDX_DTYPES[code], offset=offset).reshape(dims)``, then
           ``.astype(dtype.newbyteorder("="))`` to get native byte order (this copies, so the
           array is writable).

    EXAMPLE: the 8-byte header ``00 00 08 01 00 00 00 03`` then bytes ``07 02 01`` ->
    ``array([7, 2, 1], dtype=uint8)``; an image file ``00 00 08 03 | 2 | 28 | 28 | ...`` ->
    shape ``(2, 28, 28)``.

    HINT: ``">u4"`` means big-endian unsigned 4-byte; reading the dimensions as native
    ``"<u4"`` on a little-endian machine turns 28 into 469,762,048. Check sizes *before*
    ``reshape`` so a truncated file gives your one-line message, not NumPy's.
    """
    # BEGIN SOLUTION NO PROMPT
    path = Path(path)
    data = path.read_bytes()
    if data[:2] == _GZIP_MAGIC:
        data = gzip.decompress(data)
    if len(data) < 4 or data[0] != 0 or data[1] != 0:
        raise ValueError(f"{path.name}: not an IDX file (bad magic number)")
    code, ndim = data[2], data[3]
    if code not in _IDX_DTYPES:
        raise ValueError(f"{path.name}: unknown IDX data type 0x{code:02x}")
    offset = 4 + 4 * ndim
    if len(data) < offset:
        raise ValueError(f"{path.name}: truncated IDX header")
    dims = tuple(int(d) for d in np.frombuffer(data, dtype=">u4", count=ndim, offset=4))
    dtype = np.dtype(_IDX_DTYPES[code])
    expected = math.prod(dims) * dtype.itemsize
    if len(data) - offset != expected:
        raise ValueError(f"{path.name}: header says {dims} ({expected} bytes of data) but the "
                         f"file holds {len(data) - offset}")
    arr = np.frombuffer(data, dtype=dtype, offset=offset).reshape(dims)
    return arr.astype(dtype.newbyteorder("="))
    # END SOLUTION
    raise NotImplementedError("module 08: implement read_idx (see its docstring)")  # STUB


def read_cifar10_bin(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Parse one CIFAR-10 binary batch file (``data_batch_1.bin`` ...).

    Returns:
        ``images`` ``(N, 32, 32, 3)`` uint8 (height, width, RGB: torchvision's layout, which
        ``ToTensor`` turns into ``(3, 32, 32)``) and ``labels`` ``(N,)`` int64 in 0..9.

    Raises:
        ValueError: one line naming the file — an empty file, a size that is not a multiple
            of 3,073 bytes, or a label above 9.

    APPROACH:
        1. ``raw = np.frombuffer(Path(path).read_bytes(), dtype=np.uint8)``; check
           ``raw.size`` is a positive multiple of ``_CIFAR_RECORD`` (3,073).
        2. ``records = raw.reshape(-1, _CIFAR_RECORD)``: column 0 is the label, columns
           ``1:`` the pixels.
        3. ``labels = records[:, 0].astype(np.int64)``; reject a label > 9.
        4. ``images = records[:, 1:].reshape(-1, 3, 32, 32)`` (channel planes), then
           ``.transpose(0, 2, 3, 1)`` to ``(N, 32, 32, 3)``, made contiguous
           (``np.ascontiguousarray``).

    EXAMPLE: a file of 2 records -> images ``(2, 32, 32, 3)``, labels e.g. ``[6, 9]``; the
    red value of the top-left pixel of image 0 is byte 1 of the file, its green value byte
    1 + 1024, its blue value byte 1 + 2048.

    HINT: reshape to ``(N, 3, 32, 32)`` first — the file stores whole colour planes — and
    only then move the channel axis last; reshaping straight to ``(N, 32, 32, 3)`` mixes
    up colours and positions.
    """
    # BEGIN SOLUTION NO PROMPT
    path = Path(path)
    raw = np.frombuffer(path.read_bytes(), dtype=np.uint8)
    if raw.size == 0 or raw.size % _CIFAR_RECORD:
        raise ValueError(f"{path.name}: size {raw.size} is not a positive multiple of "
                         f"{_CIFAR_RECORD} (1 label byte + 3072 pixel bytes per image)")
    records = raw.reshape(-1, _CIFAR_RECORD)
    labels = records[:, 0].astype(np.int64)
    if labels.max() > 9:
        raise ValueError(f"{path.name}: label {int(labels.max())} is not a CIFAR-10 class (0..9)")
    images = records[:, 1:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
    return np.ascontiguousarray(images), labels
    # END SOLUTION
    raise NotImplementedError("module 08: implement read_cifar10_bin (see its docstring)")  # STUB


# ----------------------------------------------------------------------------- provided below
def default_root() -> Path:
    """The cache folder datasets use when no ``root`` is given: ``$TINYTORCH_DATA``, else
    ``~/.cache/tinytorch``."""
    env = os.environ.get("TINYTORCH_DATA")
    return Path(env) if env else Path.home() / ".cache" / "tinytorch"


def sha256_file(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_integrity(path: str | Path, sha256: str | Iterable[str]) -> bool:
    """Whether ``path`` is a file whose SHA-256 is ``sha256`` (or one of several digests)."""
    known = {sha256} if isinstance(sha256, str) else set(sha256)
    return Path(path).is_file() and sha256_file(path) in known


def download_url(urls: Sequence[str], folder: Path, filename: str, sha256: str) -> Path:
    """Fetch ``filename`` from the first URL that works into ``folder``, verified (provided).

    The bytes go to a temporary file in ``folder`` and are renamed into place only when their
    SHA-256 is ``sha256``, so an interrupted or wrong download never looks like a good file.
    Only ever called when a dataset is constructed with ``download=True``.
    """
    # Imported here, not at the top: only a download needs it, and it loads http, ssl and
    # email (about 16 ms at every ``import tinytorch``, most of the package's import time).
    import urllib.request

    folder.mkdir(parents=True, exist_ok=True)
    errors = []
    for url in urls:
        fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=f".{filename}.", suffix=".part")
        tmp = Path(tmp_name)
        try:
            h = hashlib.sha256()
            with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=60) as resp:
                for block in iter(lambda: resp.read(1 << 20), b""):
                    h.update(block)
                    out.write(block)
            if h.hexdigest() != sha256:
                errors.append(f"{url}: SHA-256 {h.hexdigest()[:12]}... is not the expected "
                              f"{sha256[:12]}...")
                continue
            tmp.replace(folder / filename)
            return folder / filename
        except OSError as exc:
            errors.append(f"{url}: {exc}")
        finally:
            tmp.unlink(missing_ok=True)
    raise RuntimeError(f"could not download {filename}: " + "; ".join(errors))


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        Path(tmp_name).replace(path)
    finally:
        Path(tmp_name).unlink(missing_ok=True)


class VisionDataset(Dataset):
    """Images and labels held in ``data`` / ``targets`` arrays (provided; torchvision's base).

    ``ds[i]`` is ``(transform(data[i]), target_transform(int(targets[i])))``, each transform
    applied only when given; ``len(ds) == len(data)``. Subclasses fill ``data`` and ``targets``.
    """

    data: np.ndarray
    targets: np.ndarray

    def __init__(self, root: str | Path | None = None,
                 transform: Callable[[Any], Any] | None = None,
                 target_transform: Callable[[Any], Any] | None = None) -> None:
        self.root = Path(root) if root is not None else default_root()
        self.transform = transform
        self.target_transform = target_transform

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        img: Any = self.data[index]
        target: Any = int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self) -> int:
        return len(self.data)


class MNIST(VisionDataset):
    """The MNIST digits from their IDX files, checked by SHA-256 (``torchvision.datasets.MNIST``).

    Args:
        root: the cache folder (default :func:`default_root`); files are looked up in
            ``root/<ClassName>/raw/`` and then in ``root/`` itself, as ``name.gz`` or ``name``.
        train: the 60,000 training images (``train-*``) or the 10,000 test images (``t10k-*``).
        transform: applied to each image (an ``(28, 28)`` uint8 array), e.g. ``ToTensor()``.
        target_transform: applied to each label (a Python int).
        download: fetch missing files from ``mirrors`` into ``root/<ClassName>/raw/``.

    Attributes:
        data: ``(N, 28, 28)`` uint8 array; targets: ``(N,)`` int64 array; classes: names.
        (torchvision keeps these as tensors; here they are NumPy arrays — ``Tensor(ds.data)``
        wraps them without a copy.)

    Raises:
        RuntimeError: a file is missing (and ``download`` is False) or matches no known
            digest — one line naming the file.
    """

    mirrors: tuple[str, ...] = ("https://storage.googleapis.com/cvdf-datasets/mnist/",
                                "https://ossci-datasets.s3.amazonaws.com/mnist/")
    # SHA-256 of each file as published (the gzip files on the mirrors above).
    sha256: dict[str, tuple[str, ...]] = {
        "train-images-idx3-ubyte.gz":
            ("440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",),
        "train-labels-idx1-ubyte.gz":
            ("3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",),
        "t10k-images-idx3-ubyte.gz":
            ("8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",),
        "t10k-labels-idx1-ubyte.gz":
            ("f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",),
    }
    classes: list[str] = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four",
                          "5 - five", "6 - six", "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root: str | Path | None = None, train: bool = True,
                 transform: Callable[[Any], Any] | None = None,
                 target_transform: Callable[[Any], Any] | None = None,
                 download: bool = False) -> None:
        super().__init__(root, transform, target_transform)
        self.train = train
        prefix = "train" if train else "t10k"
        images = self._resource(f"{prefix}-images-idx3-ubyte", download)
        labels = self._resource(f"{prefix}-labels-idx1-ubyte", download)
        self.data = read_idx(images)
        self.targets = read_idx(labels).astype(np.int64)
        if self.data.ndim != 3 or self.targets.ndim != 1 or len(self.data) != len(self.targets):
            raise RuntimeError(f"{images}: images {self.data.shape} and labels "
                               f"{self.targets.shape} do not match")

    @property
    def raw_folder(self) -> Path:
        return self.root / type(self).__name__ / "raw"

    def _resource(self, stem: str, download: bool) -> Path:
        for folder in (self.raw_folder, self.root):
            for name in (stem + ".gz", stem):
                path = folder / name
                if path.is_file():
                    if not check_integrity(path, self.sha256.get(name, ())):
                        raise RuntimeError(
                            f"{path}: SHA-256 {sha256_file(path)[:12]}... matches no known copy "
                            f"of {name}: the file is corrupt, incomplete or not {name}; delete "
                            "it and download it again")
                    return path
        gz = stem + ".gz"
        if download:
            return download_url([m + gz for m in self.mirrors], self.raw_folder, gz,
                                self.sha256[gz][0])
        raise RuntimeError(f"{self.raw_folder}: {gz} not found; download {self.mirrors[0]}{gz} "
                           "into this folder (or pass download=True)")


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST: MNIST's format and sizes, 10 kinds of clothing (MIT licence).

    Accepted digests: the published gzip files, the same data gunzipped, Debian's
    ``dataset-fashion-mnist`` copy (same data, recompressed) and the course's class-balanced
    subset (6,000 train / 1,000 test images, shipped in ``tinytorch_data/fashion_mnist/``).
    """

    mirrors = ("http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",)
    sha256 = {
        "train-images-idx3-ubyte.gz": (
            "3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84",  # published
            "b0564c3eedabfbf835052cff8503ea422014ce006caf5b757f851416ee8300c7",  # Debian
            "fc2a7343e3f57b13b940c7fb46c1bc9b3cae77563de3e9633e2b10d6b917c4c1"),  # course subset
        "train-labels-idx1-ubyte.gz": (
            "a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845",
            "0ae29f65d86684f32d1b9c85147786c547b9c6aebcaf235f0400a0cce308b056",
            "9849de99d90ad9d8a69e2e9606de489bd60a77f8868ba3d0daca5b29f24a36ac"),
        "t10k-images-idx3-ubyte.gz": (
            "346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073",
            "cc1d090a38ace84dfa1aa66e3ada7c336ef481a96936906477e6dd344da56eaa",
            "2c15ce6de5c3e15b11d9f114805f4b16ed381b619d17608b64b196aa313d51d8"),
        "t10k-labels-idx1-ubyte.gz": (
            "67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5",
            "8d3605d196f4be44669e46906da9733c8131fef761fdbfec72c424d5222f1a05",
            "232c4ad719a350b1c15b0a9a12903eac6437be6fc95cf85590cfffc28206393b"),
        # the full sets gunzipped, and the course subset gunzipped
        "train-images-idx3-ubyte": (
            "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
            "6df4e6d6d37c3b2e5ef3aa54b8937a7f42b3355d38030fd1862bbcaedd4abe65"),
        "train-labels-idx1-ubyte": (
            "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
            "fd822cee0ad0b4554b9ff151c24dd080be6b16f219f6b013e5271c87090c5360"),
        "t10k-images-idx3-ubyte": (
            "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
            "690001e52668518fab39069c9e87985d3ec34487d656858d0cf6eb58127dfa5e"),
        "t10k-labels-idx1-ubyte": (
            "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34",
            "b733e93af88d87aeb7ad9720890fb6cdd1f6b91bb033ae7bd8d6176e6ca4435f"),
    }
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot"]


class CIFAR10(VisionDataset):
    """CIFAR-10 from its **binary** version, checked by SHA-256 (``torchvision.datasets.CIFAR10``).

    The first use verifies ``root/cifar-10-binary.tar.gz`` (or downloads it with
    ``download=True``), extracts the six ``.bin`` batches into ``root/cifar-10-batches-bin/``
    and writes ``SHA256SUMS`` there (digests of what was extracted from the verified archive);
    later uses read the cached ``.bin`` files after checking them against ``SHA256SUMS``.

    Args:
        root: the cache folder (default :func:`default_root`).
        train: the 50,000 training images (``data_batch_1..5.bin``) or the 10,000 test images.
        transform, target_transform, download: as :class:`MNIST`.

    Attributes:
        data: ``(N, 32, 32, 3)`` uint8 (HWC, like torchvision); targets: ``(N,)`` int64.
    """

    url = "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz"
    filename = "cifar-10-binary.tar.gz"
    tgz_sha256: tuple[str, ...] = (
        "c4a38c50a1bc5f3a1c5537f2155ab9d68f9f25eb1ed8d9ddda3db29a59bca1dd",)
    base_folder = "cifar-10-batches-bin"
    train_list = ("data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                  "data_batch_4.bin", "data_batch_5.bin")
    test_list = ("test_batch.bin",)
    classes = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship",
               "truck"]

    def __init__(self, root: str | Path | None = None, train: bool = True,
                 transform: Callable[[Any], Any] | None = None,
                 target_transform: Callable[[Any], Any] | None = None,
                 download: bool = False) -> None:
        super().__init__(root, transform, target_transform)
        self.train = train
        folder = self.root / self.base_folder
        names = self.train_list if train else self.test_list
        if not self._cache_is_valid(folder, names):
            self._extract(folder, download)
        parts = [read_cifar10_bin(folder / name) for name in names]
        self.data = np.concatenate([p[0] for p in parts])
        self.targets = np.concatenate([p[1] for p in parts])

    def _cache_is_valid(self, folder: Path, names: Sequence[str]) -> bool:
        sums = folder / "SHA256SUMS"
        if not sums.is_file():
            return False
        recorded = dict(reversed(line.split(maxsplit=1)) for line in
                        sums.read_text(encoding="ascii").splitlines() if line.strip())
        return all(name in recorded and check_integrity(folder / name, recorded[name])
                   for name in names)

    def _extract(self, folder: Path, download: bool) -> None:
        import tarfile  # only extracting needs it (as urllib in download_url)

        archive = self.root / self.filename
        if not archive.is_file():
            if not download:
                raise RuntimeError(f"{archive}: not found; download the CIFAR-10 binary version "
                                   f"({self.url}) into {self.root} (or pass download=True)")
            download_url([self.url], self.root, self.filename, self.tgz_sha256[0])
        if not check_integrity(archive, self.tgz_sha256):
            raise RuntimeError(f"{archive}: SHA-256 {sha256_file(archive)[:12]}... matches no "
                               "known copy of the CIFAR-10 binary archive: delete it and "
                               "download it again")
        wanted = {f"{self.base_folder}/{n}": n for n in (*self.train_list, *self.test_list)}
        folder.mkdir(parents=True, exist_ok=True)
        digests = {}
        with tarfile.open(archive, "r:gz") as tar:
            for member in tar:
                name = wanted.get(member.name)
                if name is None or not member.isfile():
                    continue
                fh = tar.extractfile(member)
                assert fh is not None
                data = fh.read()
                _write_atomic(folder / name, data)
                digests[name] = hashlib.sha256(data).hexdigest()
        missing = sorted(set(wanted.values()) - set(digests))
        if missing:
            raise RuntimeError(f"{archive}: the archive lacks {', '.join(missing)}")
        lines = "".join(f"{digests[n]}  {n}\n" for n in sorted(digests))
        _write_atomic(folder / "SHA256SUMS", lines.encode("ascii"))


# %% [raw]
# # BEGIN QUESTION
# name: formats
# points: 0

# %% [markdown]
# ### Check: IDX and CIFAR-10 binary files

# %% [raw]
# # BEGIN TESTS

# %%
def test_read_idx_gzipped_and_raw(read_idx, np):
    import gzip
    import struct
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp())
    images = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    (folder / "img.gz").write_bytes(gzip.compress(
        struct.pack(">IIII", 0x803, 2, 3, 4) + images.tobytes()))
    got = read_idx(folder / "img.gz")
    assert got.shape == (2, 3, 4) and got.dtype == np.uint8, (
        f"a gzipped IDX3 file of 2 images of 3×4 gives a (2, 3, 4) uint8 array, got "
        f"{getattr(got, 'shape', None)} {getattr(got, 'dtype', None)}: read the dimensions "
        "as big-endian uint32 ('>u4') after the 4 magic bytes")
    assert np.array_equal(got, images), (
        f"the pixels follow the 16-byte header, row-major: first image expected "
        f"{images[0, 0].tolist()}..., got {got[0, 0].tolist()}...")
    values = np.array([-2, 70000], dtype=">i4")
    (folder / "ints").write_bytes(struct.pack(">BBBBI", 0, 0, 0x0C, 1, 2) + values.tobytes())
    got = read_idx(folder / "ints")
    assert got.tolist() == [-2, 70000] and got.dtype == np.int32, (
        f"type code 0x0C is big-endian int32: expected [-2, 70000] int32, got {got!r}")
    (folder / "bad").write_bytes(struct.pack(">IIII", 0x803, 2, 3, 4) + b"\x00" * 5)
    try:
        read_idx(folder / "bad")
    except ValueError:
        pass
    else:
        raise AssertionError("a truncated file must raise ValueError naming it, not parse")

# %%
def test_read_cifar10_bin_planes_to_hwc(read_cifar10_bin, np):
    import tempfile
    from pathlib import Path

    rng = np.random.default_rng(0)
    planes = rng.integers(0, 256, size=(2, 3, 32, 32), dtype=np.uint8)
    labels = np.array([6, 9], dtype=np.uint8)
    records = np.concatenate([labels[:, None], planes.reshape(2, -1)], axis=1)
    path = Path(tempfile.mkdtemp()) / "data_batch_1.bin"
    path.write_bytes(records.tobytes())
    images, got_labels = read_cifar10_bin(path)
    assert images.shape == (2, 32, 32, 3) and images.dtype == np.uint8, (
        f"2 records give images (2, 32, 32, 3) uint8 (HWC), got {getattr(images, 'shape', None)}")
    assert got_labels.tolist() == [6, 9] and got_labels.dtype == np.int64, (
        f"the first byte of each 3,073-byte record is its label, as int64; got {got_labels!r}")
    assert np.array_equal(images, planes.transpose(0, 2, 3, 1)), (
        f"pixel (0, 0) of image 0 should be RGB {planes[0, :, 0, 0].tolist()}, got "
        f"{images[0, 0, 0].tolist()}: "
        "each record stores whole R, G, B planes: reshape to (N, 3, 32, 32) first, then move "
        "the channel axis last")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ### The real thing: the course's Fashion-MNIST subset
#
# The course ships a class-balanced Fashion-MNIST subset (6,000 training and 1,000 test
# images, MIT licence, © Zalando) in `tinytorch_data/fashion_mnist/` of your course folder, in
# the real gzipped IDX format. Your `read_idx` parses it inside `FashionMNIST`, after the checksum
# check. `ToTensor` + `Normalize` turn each `(28, 28)` uint8 image into a `(1, 28, 28)` float32
# tensor with zero mean and unit variance.

# %%
from pathlib import Path

# The course folder's tinytorch_data/, found from here upwards (the module's folder or work/).
FASHION_ROOT = next((p / "tinytorch_data" / "fashion_mnist"
                     for p in [Path.cwd(), *Path.cwd().parents]
                     if (p / "tinytorch_data" / "fashion_mnist").is_dir()),
                    Path("..") / "tinytorch_data" / "fashion_mnist")
fashion_raw = FashionMNIST(FASHION_ROOT, train=True)
mean = float(fashion_raw.data.mean() / 255.0)
std = float(fashion_raw.data.std() / 255.0)
print(f"{len(fashion_raw)} training images, data {fashion_raw.data.shape} "
      f"{fashion_raw.data.dtype}, mean {mean:.4f}, std {std:.4f}")
fashion = FashionMNIST(FASHION_ROOT, train=True,
                       transform=Compose([ToTensor(), Normalize((mean,), (std,))]))
image, label = fashion[0]
print(f"sample 0: {image.shape} {image.dtype}, label {label} = {fashion.classes[label]}")
loader = DataLoader(fashion, batch_size=64, shuffle=True, generator=Generator().manual_seed(0))
xb, yb = next(iter(loader))
print(f"one batch: images {xb.shape} {xb.dtype}, labels {yb.shape} {yb.dtype}; "
      f"{len(loader)} batches per epoch")
# Expected: 6000 images (6000, 28, 28) uint8, mean ≈ 0.288, std ≈ 0.354; sample 0 is a
# (1, 28, 28) float32 image; a batch is (64, 1, 28, 28) float32 + (64,) int64; 94 batches.

# %% [markdown]
# ## 7. Systems view: what a batch costs
#
# Per sample, the loader pays Python overhead (a `__getitem__` call, a tuple, a Tensor or two)
# and, in `default_collate`, a **copy** of the sample's bytes into the batch. Per batch, it
# pays one collate call. So at batch size 1 the fixed per-call costs dominate; as the batch
# grows they are spread over more samples and the loader approaches the speed of copying
# memory. The batch itself costs memory linearly: `B × 1 × 28 × 28 × 4` bytes of float32.
#
# ```
#   fetch path                           copies per epoch              Python calls per epoch
#   DataLoader (per-sample + collate)    every sample, once            ~ N (+ N/B collates)
#   one fancy index x[idx] per batch     every sample, once            ~ N/B
#   contiguous slices x[i:i+B]           none (a view)                 ~ N/B    (no shuffle!)
# ```
#
# ### Exercise: measure it
#
# Run the cell. It times one epoch over the 6,000 training images at several batch sizes and
# prints samples per second and the bytes of one batch; then it times the two alternatives.
# Predict first: how much faster is batch 256 than batch 1? Which path copies nothing?

# %%
import time

X = Tensor(fashion_raw.data[:, None].astype(np.float32) / np.float32(255.0))  # (6000, 1, 28, 28)
Y = Tensor(fashion_raw.targets)                                                 # (6000,)
train_set = TensorDataset(X, Y)


def median_cpu_ms(fn, warmup=1, repeats=5):
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


def one_epoch(loader):
    for _xb, _yb in loader:
        pass


results = {}
for batch_size in [1, 8, 64, 256]:
    loader = DataLoader(train_set, batch_size=batch_size, shuffle=True,
                        generator=Generator().manual_seed(0))
    ms = median_cpu_ms(lambda: one_epoch(loader), repeats=3)
    results[batch_size] = len(train_set) / (ms / 1e3)
    print(f"batch {batch_size:4d}: {results[batch_size]:>10,.0f} samples/s, one batch = "
          f"{batch_size * X.data[0].nbytes / 1024:7.1f} KiB")

order = Generator().manual_seed(0).rng.permutation(len(X))


def fancy_epoch():
    for i in range(0, len(order), 256):
        X.data[order[i:i + 256]]            # one fancy-index copy per batch


def slice_epoch():
    for i in range(0, len(X), 256):
        X.data[i:i + 256]                   # a view: no bytes copied


fancy = len(X) / (median_cpu_ms(fancy_epoch) / 1e3)
views = len(X) / (median_cpu_ms(slice_epoch) / 1e3)
print(f"fancy index, batch 256: {fancy:>12,.0f} samples/s (copies: "
      f"{not np.shares_memory(X.data[order[:256]], X.data)})")
print(f"slices,      batch 256: {views:>12,.0f} samples/s (copies: "
      f"{not np.shares_memory(X.data[0:256], X.data)})")
print(f"DataLoader speed-up from batch 1 to 256: {results[256] / results[1]:.1f}x; one fancy "
      f"index per batch / DataLoader at 256: {fancy / results[256]:.0f}x")
# Expected shape (numbers vary by machine): samples/s grows with the batch size and levels
# off; batch 256 is at least half again as fast as batch 1 (between 1.5x and 10x: about 2x on
# the course's server, where Python's cost per sample dominates); one fancy index per
# batch beats the per-sample path by 4x or more (by far more on a quiet machine: the copy is
# memory-bound, the per-sample path Python-bound); slices copy nothing and are fastest but
# cannot shuffle.

# %% [markdown]
# What the numbers say: at small batches the loader is **bound by Python calls**, not by
# memory; at large batches by **memory copies** (`N × 3,136` bytes per epoch, a few ms here).
# PyTorch attacks the first with `num_workers` (fetch and collate in parallel processes while
# the model trains) and with batched fetching (`__getitems__`); the second with `pin_memory`
# and by keeping data in the tensor's dtype (uint8 images are 4× smaller than float32 ones —
# convert per batch, on the fly, as `ToTensor` does). For this course's datasets the loader is
# never the bottleneck at batch sizes of 32 and more: the convolutions of module 09 are.

# %% [markdown]
# ## 8. ML systems thinking (graded by hand)

# %% [raw]
# # BEGIN QUESTION
# name: written_shuffle
# manual: true
# points: 5

# %% [markdown]
# **Q1 · Shuffling.** A dataset file stores all images of class 0 first, then class 1, and so
# on. What happens if you train with `shuffle=False`? With one fixed permutation reused every
# epoch? Your job is pre-empted mid-epoch and must resume *exactly*: what must the checkpoint
# contain besides the model and optimizer state?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# In order, every batch holds one class: the gradient points towards "predict class k" for a
# long stretch, the model forgets earlier classes (catastrophic interference) and the loss
# oscillates per epoch instead of converging; batch statistics are degenerate too. A fixed
# permutation fixes the class mix but always puts the same samples together, so batch-to-batch
# gradient noise is the same every epoch (less regularisation, possible cycles). To resume
# exactly, save the shuffle's state — the generator state (`Generator.get_state()`, or the seed
# plus the epoch number if each epoch is seeded) and the position inside the epoch (batches
# already consumed) — plus the global RNG state used by random augmentations.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_throughput
# manual: true
# points: 5

# %% [markdown]
# **Q2 · Throughput.** Using your measurements from section 7: how did samples/s change
# from batch size 1 to 256, and why? Where does the time go at batch size 1? What would
# PyTorch's `num_workers=4` change, and when does it not help?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# (Numbers are the student's; a typical run shows 2-5 times more samples/s at 256 than at 1,
# levelling off from about 64.) At batch 1 each sample costs a `__getitem__` call, Tensor objects, a
# tuple, a collate call and a one-sample stack: fixed Python overhead per call dominates and
# no work is vectorised. Larger batches spread the per-batch costs over more samples and the
# per-sample part approaches a memory copy. Workers run fetching/decoding/augmentation in
# parallel processes so the main process only trains: it helps when loading is slower than the
# training step (JPEG decoding, heavy augmentation, disk reads); it does not help when the
# model step dominates (as with our convolutions), when the data is already batched arrays in
# memory, or on a machine without spare cores; and each worker costs memory and the
# inter-process transfer of every batch.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_formats
# manual: true
# points: 5

# %% [markdown]
# **Q3 · Files you can trust.** Why check a SHA-256 digest *before* parsing a downloaded
# file — what failures would otherwise surface, and where? Why does this course read the
# binary version of CIFAR-10 and never the pickled "python version"?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# A truncated download, an HTML error page saved under the data file's name, a different
# release from a mirror or a flipped bit would otherwise either crash inside the parser with a
# confusing shape error, or worse parse "successfully" into wrong images/labels and surface as
# a model that mysteriously trains badly — far from the cause. A digest check fails at once,
# names the file and says what to do. The python version of CIFAR-10 is a pickle: unpickling
# can execute arbitrary code chosen by whoever produced (or tampered with) the file, so loading
# untrusted pickles is a remote-code-execution risk; the binary version is a fixed layout of
# bytes that `np.frombuffer` interprets as numbers only.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## Summary
#
# You built PyTorch's data pipeline: datasets that say *what*, samplers that say *in which
# order* (reproducibly, through a seeded `Generator`), batch samplers and `default_collate`
# that say *how samples become a batch*, and the `DataLoader` that runs them; torchvision's
# transforms for normalisation and augmentation; and parsers for the real IDX and CIFAR-10
# binary files behind checksums. Export with `python export.py 08`; use
# `from tinytorch.data import DataLoader, TensorDataset`,
# `from tinytorch.data.transforms import Compose, ToTensor, Normalize` and
# `from tinytorch.data.datasets import FashionMNIST`. Module 09 feeds these batches to
# convolutions.
