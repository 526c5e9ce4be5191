"""Hidden suite · module 08 (dataloader). Cases are probes; the trusted parent compares.

Inputs (sizes, seeds, pixel values, fixture files) come from ``rng``; data files are written
in their real formats into a temporary folder inside the sandbox. Random behaviour (shuffles,
crops, flips) is pinned with ``Generator().manual_seed`` or ``tt.manual_seed`` so the student's
draws can be compared with the reference's; a few cases check invariants instead (``check=``,
decided in the parent) so a valid but differently drawn shuffle still earns those points.
Points sum to module 08's ``points`` (50).
"""

from __future__ import annotations

import collections
import gzip
import hashlib
import importlib
import io
import struct
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from autograder.suite import Suite, compare_values, outcome

suite = Suite(module="08_dataloader", version="2027.3")
case = suite.case
TENSOR_DATASET = suite.unit("TensorDataset", "TensorDataset")
RANDOM_SAMPLER = suite.unit("RandomSampler", "RandomSampler.__iter__")
BATCH_SAMPLER = suite.unit("BatchSampler", "BatchSampler.__iter__", "BatchSampler.__len__")
COLLATE = suite.unit("default_collate", "default_collate")
LOADER = suite.unit("DataLoader", "DataLoader.__iter__", "DataLoader.__len__",
                    uses=(TENSOR_DATASET, RANDOM_SAMPLER, BATCH_SAMPLER, COLLATE))
NORMALIZE = suite.unit("Normalize", "Normalize.__call__")
RANDOM_CROP = suite.unit("RandomCrop", "RandomCrop.get_params", "RandomCrop.__call__")
FLIP = suite.unit("RandomHorizontalFlip", "RandomHorizontalFlip.__call__")
READ_IDX = suite.unit("read_idx", "read_idx")
READ_CIFAR = suite.unit("read_cifar10_bin", "read_cifar10_bin")


def _dl(tt):
    return importlib.import_module(f"{tt.__name__}.dataloader")


def _plain(x: Any) -> Any:
    """Tensors and arrays -> ``{"type", "dtype", "value"}``; containers recursively."""
    if isinstance(x, np.ndarray) or hasattr(x, "data") and isinstance(x.data, np.ndarray):
        arr = x if isinstance(x, np.ndarray) else x.data
        return {"type": type(x).__name__, "dtype": str(arr.dtype), "value": np.array(arr)}
    if isinstance(x, dict):
        return {"type": "dict", "items": {str(k): _plain(v) for k, v in x.items()}}
    if isinstance(x, (list, tuple)):
        if x and all(isinstance(v, (str, bytes)) for v in x):
            # A batch of strings comes back as it was passed in ("unchanged"): a list, or the
            # tuple zip(*batch) made of a tuple field. Which one depends only on how a correct
            # collate transposed the samples, so both are accepted.
            return {"type": "strings", "items": [_plain(v) for v in x]}
        return {"type": type(x).__name__, "items": [_plain(v) for v in x]}
    if isinstance(x, (bool, int, float, str)) or x is None:
        return x
    if isinstance(x, bytes):
        return x.decode("latin-1")
    return {"type": type(x).__name__}


def _seed(rng) -> int:
    return int(rng.integers(0, 2**31))


def _labels(batches) -> list[list[int]]:
    return [np.asarray(getattr(b[-1], "data", b[-1])).tolist() for b in batches]


# ----------------------------------------------------------------------------- dataset (3)
@case(unit=TENSOR_DATASET, points=3,
      hint="TensorDataset: ds[i] is the tuple (t[i] for each tensor); len(ds) is the size of dim "
           "0.",
      stated={"TensorDataset": "*tensors: Tensors (or NumPy arrays) with the same size in dimension 0.",
              "TensorDataset.__getitem__": (
                  "``tuple(t[index] for t in self.tensors)`` — one entry per tensor, in order.",
                  "negative indices work for free",
              ),
              "TensorDataset.__len__": "The number of samples: the size of dimension 0"})
def tensor_dataset_items_and_length(tt, rng):
    dl = _dl(tt)
    n = int(rng.integers(5, 13))
    x = tt.Tensor(rng.standard_normal((n, 3)).astype(np.float32))
    y = tt.Tensor(rng.integers(0, 10, n))
    ds = dl.TensorDataset(x, y)
    picks = [0, n - 1, -1, int(rng.integers(0, n))]
    items = [_plain(ds[i]) for i in picks]
    arrays = dl.TensorDataset(rng.standard_normal((n, 2)))
    return {"len": len(ds), "items": items, "single": _plain(arrays[1]), "len1": len(arrays)}


# ----------------------------------------------------------------------------- samplers (10)
@case(unit=RANDOM_SAMPLER, points=3,
      hint="RandomSampler: one rng.permutation(n) per epoch from _numpy_rng(self.generator); "
           "yield ints.",
      stated={"RandomSampler.__iter__": (
                  "``rng = _numpy_rng(self.generator)`` — once per call to ``__iter__``, i.e. once per epoch",
                  "With the default ``num_samples == n`` this is exactly one permutation.",
                  "Convert every index with ``int(...)``",
                  "Follow the draws above exactly (``permutation``, not ``shuffle`` or ``choice``) and the same seed gives the same order as the reference.",
              ),
              "_numpy_rng": "a :class:`Generator` -> its ``.rng`` (the stream continues across calls)",
              "RandomSampler": "num_samples: how many indices per epoch (default ``len(data_source)``)."})
def random_sampler_permutation_matches_seed(tt, rng):
    dl = _dl(tt)
    n = int(rng.integers(8, 30))
    sampler = dl.RandomSampler(range(n), generator=dl.Generator().manual_seed(_seed(rng)))
    first, second = list(sampler), list(sampler)
    return {"epochs": [first, second], "len": len(sampler),
            "ints": all(type(i) is int for i in first + second)}


def _permutations_check(got: Any, expected: Any) -> tuple[bool, str]:
    if not isinstance(got, dict) or set(got) != {"n", "seed", "epochs", "again"}:
        return False, "result: not the expected structure"
    # n and the seed are the variant's (from the reference's answer, never the student's)
    if got["n"] != expected["n"] or got["seed"] != expected["seed"]:
        return False, "result: not the sampler this test builds"
    n, epochs, again = expected["n"], got["epochs"], got["again"]
    for i, e in enumerate(list(epochs) + list(again)):
        if not isinstance(e, list) or sorted(e) != list(range(n)):
            return False, f"epoch {i}: does not visit every index exactly once"
    if epochs[0] == epochs[1]:
        return False, "two epochs in a row gave the same order (draw a new permutation each epoch)"
    if again[0] != again[1]:
        return False, "the same seed gave two different orders (not reproducible)"
    return True, ""


@case(unit=RANDOM_SAMPLER, points=2, check=_permutations_check,
      hint="RandomSampler: every epoch is a new permutation of 0..n-1; the same seed repeats it.",
      stated={"RandomSampler.__iter__": (
                  "once per call to ``__iter__``, i.e. once per epoch",
                  "With the default ``num_samples == n`` this is exactly one permutation.",
              ),
              "Generator": "passing the same seeded generator reproduces a shuffle",
              "test:test_random_sampler_is_a_reproducible_fresh_permutation": "the same seed must give the same order"})
def random_sampler_epochs_are_fresh_reproducible_permutations(tt, rng):
    dl = _dl(tt)
    n = int(rng.integers(10, 40))
    seed = _seed(rng)
    sampler = dl.RandomSampler(range(n), generator=dl.Generator().manual_seed(seed))
    epochs = [list(sampler), list(sampler)]
    again = [list(dl.RandomSampler(range(n), generator=dl.Generator().manual_seed(seed + 1)))
             for _ in range(2)]
    return {"n": n, "seed": seed, "epochs": epochs, "again": again}


@case(unit=RANDOM_SAMPLER, points=2,
      hint="RandomSampler: generator=None seeds from the global generator (manual_seed); "
           "replacement uses rng.integers; num_samples > n chains permutations.",
      stated={"RandomSampler.__iter__": (
                  "With ``replacement``: yield from ``rng.integers(0, n, size=self.num_samples)``.",
                  "Without: ``num_samples // n`` times yield from ``rng.permutation(n)``, then yield the first ``num_samples % n`` entries of one more ``rng.permutation(n)``",
                  "with ``generator=None`` each epoch must draw a new seed from the global generator",
              ),
              "_numpy_rng": (
                  "``None`` -> a **fresh** generator seeded with one draw from tinytorch's global generator",
                  "(the stream continues across calls)",
              ),
              "RandomSampler": "num_samples: how many indices per epoch"})
def random_sampler_global_seed_replacement_num_samples(tt, rng):
    dl = _dl(tt)
    n = int(rng.integers(4, 9))
    seed = _seed(rng)
    tt.manual_seed(seed)
    a = [list(dl.RandomSampler(range(n))) for _ in range(2)]
    tt.manual_seed(seed)
    b = list(dl.RandomSampler(range(n)))
    g = dl.Generator().manual_seed(seed)
    repl = list(dl.RandomSampler(range(n), replacement=True, num_samples=3 * n, generator=g))
    more = dl.RandomSampler(range(n), num_samples=2 * n + 3, generator=g)
    return {"global": a, "again": b, "replacement": repl, "more": list(more), "len": len(more)}


@case(unit=BATCH_SAMPLER, points=3,
      hint="BatchSampler: fill a list to batch_size, yield it, start a new one; keep or drop the "
           "leftover; len = ceil or floor of n / batch_size.",
      stated={"BatchSampler": "sampler: any iterable of indices (a Sampler, a range, a list).",
              "BatchSampler.__iter__": "when it holds ``batch_size`` indices, yield it and start a new list. At the end, yield the leftover list if it is not empty — unless ``drop_last``.",
              "BatchSampler.__len__": (
                  "``n = len(self.sampler)``; ``n // self.batch_size`` when ``drop_last``, otherwise ``(n + self.batch_size - 1) // self.batch_size``.",
                  "a dataset of 0 samples has 0 batches",
              )})
def batch_sampler_batches_and_len(tt, rng):
    dl = _dl(tt)
    n = int(rng.integers(11, 30))
    bs = int(rng.integers(3, 7))
    order = rng.permutation(n).tolist()
    out: dict[str, Any] = {}
    for drop in (False, True):
        bsamp = dl.BatchSampler(order, bs, drop)
        out[f"drop={drop}"] = [list(bsamp), len(bsamp)]
        seq = dl.BatchSampler(dl.SequentialSampler(range(bs * 3)), bs, drop)
        out[f"exact drop={drop}"] = [list(seq), len(seq)]
    out["empty"] = [list(dl.BatchSampler([], 3, False)), len(dl.BatchSampler([], 3, False))]
    short = dl.BatchSampler(range(2), 5, True)
    out["single"] = [list(short), len(short)]
    return out


# ----------------------------------------------------------------------------- collate (8)
@case(unit=COLLATE, points=3,
      hint="default_collate: tensors/arrays stack on a new dim 0 (same dtype); int -> int64, "
           "float -> float64, bool -> bool, NumPy scalars keep their dtype; a tuple gives a list.",
      stated={"default_collate": (
                  "``Tensor`` -> ``Tensor(np.stack([s.data for s in batch]))`` (new dim 0)",
                  "``np.ndarray`` -> like Tensors",
                  "-> ``Tensor(np.asarray(batch))`` (keeps the scalar's dtype).",
                  "``bool`` / ``int`` -> ``Tensor(np.asarray(batch))`` (bool, or int64); ``float`` -> ``Tensor(np.asarray(batch, dtype=np.float64))``.",
                  "then a **list**: ``[default_collate(field) for field in zip(*batch)]``",
              ),
              "test:test_collate_numbers_arrays_and_dicts": "NumPy arrays are stacked into a Tensor that keeps their dtype"})
def collate_tensors_arrays_and_numbers(tt, rng):
    dl = _dl(tt)
    b = int(rng.integers(2, 6))
    samples = [(tt.Tensor(rng.standard_normal((2, 3)).astype(np.float32)),
                rng.integers(0, 255, 4).astype(np.uint8),
                int(rng.integers(0, 10)), float(rng.standard_normal()), bool(rng.random() < 0.5),
                np.float32(rng.standard_normal()), np.int32(rng.integers(0, 5)))
               for _ in range(b)]
    out = dl.default_collate(samples)
    single = dl.default_collate([tt.Tensor(rng.standard_normal(3).astype(np.float32))])
    return {"batch": _plain(out), "single": _plain(single)}


Pair = collections.namedtuple("Pair", "image label")


@case(unit=COLLATE, points=3,
      hint="default_collate: dicts -> dict of collated fields; namedtuples keep their type; "
           "strings stay a list; lists/tuples of fields -> a list of collated fields.",
      stated={"default_collate": (
                  "``str`` / ``bytes`` -> ``batch`` itself, unchanged (the sequence of strings).",
                  "a mapping (``cabc.Mapping``) -> ``{key: default_collate([s[key] for s in batch]) for key in elem}``.",
                  "a namedtuple (a tuple with ``_fields``) -> ``type(elem)(*(default_collate(field) for field in zip(*batch)))``.",
                  "NumPy scalar (``np.generic``: ``np.float32(1)``, ``np.int64(2)``, ``np.bool_``) -> ``Tensor(np.asarray(batch))`` (keeps the scalar's dtype).",
                  "then a **list**: ``[default_collate(field) for field in zip(*batch)]``",
                  "``np.ndarray`` -> like Tensors",
              )})
def collate_nested_dicts_namedtuples_strings(tt, rng):
    dl = _dl(tt)
    b = int(rng.integers(2, 5))
    samples = [{"img": rng.standard_normal((1, 2, 2)).astype(np.float32),
                "meta": (int(rng.integers(0, 9)), f"id{i}"),
                "pair": Pair(np.float64(rng.standard_normal()), i),
                "raw": b"x" * (i + 1),
                "seq": [float(rng.standard_normal()), int(rng.integers(0, 3))]}
               for i in range(b)]
    out = dl.default_collate(samples)
    pair_type = type(out["pair"]).__name__ if isinstance(out, dict) else None
    return {"out": _plain(out), "pair_type": pair_type}


@case(unit=COLLATE, points=2,
      hint="default_collate: ragged tensors/arrays or samples of unequal length -> RuntimeError; "
           "objects and string arrays -> TypeError.",
      stated={"default_collate": (
                  "different shapes -> ``RuntimeError(",
                  '``np.ndarray`` -> like Tensors, after checking the dtype: an array of strings or objects (``dtype.kind`` in ``"USO"``) -> ``TypeError(',
                  "every sample must have ``len(elem)`` entries, else ``RuntimeError(",
                  "anything else -> ``TypeError(_COLLATE_ERROR.format(type(elem)))``.",
              )})
def collate_rejects_ragged_and_unknown(tt, rng):
    dl = _dl(tt)
    k = int(rng.integers(2, 5))
    c = dl.default_collate
    return [
        outcome(c, [tt.Tensor(np.zeros(k, np.float32)), tt.Tensor(np.zeros(k + 1, np.float32))]),
        outcome(c, [np.zeros((k, 2)), np.zeros((2, k + 1))]),
        outcome(c, [(1, 2), (3,)]),
        outcome(c, [object(), object()]),
        outcome(c, [np.array(["a", "b"]), np.array(["c", "d"])]),
        outcome(c, [tt.Tensor(np.zeros(k, np.float32))] * 2),
        # the same shapes, collated: what the errors are measured against (and the variant's)
        c([tt.Tensor(rng.standard_normal(k).astype(np.float32)) for _ in range(3)]).numpy(),
    ]


# ----------------------------------------------------------------------------- DataLoader (11)
def _dataset(tt, rng, n):
    dl = _dl(tt)
    x = tt.Tensor(rng.standard_normal((n, 2, 3)).astype(np.float32))
    y = tt.Tensor(np.arange(n))
    return dl.TensorDataset(x, y)


@case(unit=LOADER, points=3,
      hint="DataLoader: batches follow the batch sampler; the last one is short unless drop_last; "
           "len(loader) counts batches; batch_size=None yields single samples "
           "(default_convert) and len is the sampler's.",
      stated={"DataLoader": (
                  "batch_size: samples per batch (a positive int; default 1), or None: no automatic batching — each sample on its own, through ``collate_fn`` (default: :func:`default_convert`,",
                  "drop_last: drop the last batch if it is smaller than ``batch_size``.",
              ),
              "DataLoader.__iter__": (
                  "for every ``indices`` in ``self.batch_sampler``: build the list ``[self.dataset[i] for i in indices]`` and yield ``self.collate_fn(that list)``.",
                  "for every index ``i`` of ``self.sampler`` yield ``self.collate_fn(self.dataset[i])``.",
              ),
              "DataLoader.__len__": (
                  "The number of batches in one epoch: ``len(self.batch_sampler)``.",
                  "without batching (no batch sampler) it is ``len(self.sampler)``.",
              ),
              "default_convert": "a tuple becomes a list, as in PyTorch",
              "default_collate": "then a **list**"})
def loader_sequential_batches_and_len(tt, rng):
    dl = _dl(tt)
    n = int(rng.integers(9, 25))
    bs = int(rng.integers(2, 6))
    ds = _dataset(tt, rng, n)
    out: dict[str, Any] = {}
    for drop in (False, True):
        loader = dl.DataLoader(ds, batch_size=bs, drop_last=drop)
        batches = list(loader)
        out[f"drop={drop}"] = {"len": len(loader), "x": [_plain(xb) for xb, _ in batches],
                               "y": _labels(batches), "type": type(batches[0]).__name__}
    out["default_bs"] = [len(dl.DataLoader(ds)), _labels(list(dl.DataLoader(ds)))[:3]]
    single = dl.DataLoader(ds, batch_size=None, sampler=rng.permutation(n).tolist())
    out["unbatched"] = [len(single), [_plain(s) for s in single], single.batch_sampler is None]
    return out


@case(unit=LOADER, points=3,
      hint="DataLoader: shuffle=True: RandomSampler(dataset, generator=generator) — a new "
           "permutation every epoch, the same run for the same seed.",
      stated={"DataLoader": (
                  "shuffle: a new random order every epoch (``RandomSampler``)",
                  "generator: the :class:`Generator` the shuffle draws from",
              ),
              "DataLoader.__iter__": "each ``for ... in loader`` starts a fresh pass over ``self.batch_sampler`` — which is what draws a new permutation.",
              "DataLoader.__len__": "delegate to the batch sampler, which knows about ``drop_last``",
              "test:test_loader_shuffles_reproducibly_per_epoch": "the same seeded generator must reproduce the same first epoch"})
def loader_shuffle_reproducible_with_generator(tt, rng):
    dl = _dl(tt)
    n = int(rng.integers(10, 30))
    ds = _dataset(tt, rng, n)
    seed = _seed(rng)
    loader = dl.DataLoader(ds, batch_size=4, shuffle=True,
                           generator=dl.Generator().manual_seed(seed))
    epochs = [_labels(list(loader)) for _ in range(3)]
    again = dl.DataLoader(ds, batch_size=4, shuffle=True, drop_last=True,
                          generator=dl.Generator().manual_seed(seed))
    return {"epochs": epochs, "drop_last": _labels(list(again)), "len": len(again)}


@case(unit=LOADER, points=2,
      hint="DataLoader: without a generator the shuffle is seeded from the global generator, so "
           "tt.manual_seed(s) reproduces it.",
      stated={"DataLoader": "(None: the global generator, which ``tinytorch.manual_seed`` seeds).",
              "DataLoader.__iter__": "each ``for ... in loader`` starts a fresh pass over ``self.batch_sampler`` — which is what draws a new permutation.",
              "RandomSampler.__iter__": "with ``generator=None`` each epoch must draw a new seed from the global generator"})
def loader_shuffle_follows_manual_seed(tt, rng):
    dl = _dl(tt)
    n = int(rng.integers(10, 30))
    ds = _dataset(tt, rng, n)
    seed = _seed(rng)
    tt.manual_seed(seed)
    loader = dl.DataLoader(ds, batch_size=3, shuffle=True)
    first = [_labels(list(loader)) for _ in range(2)]
    tt.manual_seed(seed)
    again = _labels(list(dl.DataLoader(ds, batch_size=3, shuffle=True)))
    return {"first": first, "again": again}


class _DictDataset:
    def __init__(self, n, rng):
        self.items = [{"x": rng.standard_normal(2).astype(np.float32), "y": i, "name": f"s{i}"}
                      for i in range(n)]

    def __getitem__(self, i):
        return self.items[i]

    def __len__(self):
        return len(self.items)


@case(unit=LOADER, points=2,
      hint="DataLoader: call self.collate_fn on the list of fetched samples; any dataset with "
           "__getitem__/__len__ works; a custom sampler decides the order.",
      stated={"DataLoader": (
                  "dataset: a map-style dataset (``__getitem__`` and ``__len__``).",
                  "sampler: a custom index sampler",
                  "batch_sampler: a custom sampler of index lists",
              ),
              "DataLoader.__iter__": "Call ``self.collate_fn``, not ``default_collate``: users pass their own.",
              "default_collate": "a mapping (``cabc.Mapping``) -> ``{key: default_collate([s[key] for s in batch]) for key in elem}``."})
def loader_custom_collate_sampler_and_dict_dataset(tt, rng):
    dl = _dl(tt)
    n = int(rng.integers(7, 15))
    ds = _DictDataset(n, rng)
    sizes = list(dl.DataLoader(ds, batch_size=3, collate_fn=lambda s: [d["y"] for d in s]))
    order = rng.permutation(n).tolist()
    custom = list(dl.DataLoader(ds, batch_size=4, sampler=order))
    bsamp = list(dl.DataLoader(ds, batch_sampler=[[1, 0], [n - 1]]))
    return {"collate_fn": sizes, "custom": [_plain(b) for b in custom],
            "batch_sampler": [_plain(b) for b in bsamp]}


def _covers_check(got: Any, expected: Any) -> tuple[bool, str]:
    if not isinstance(got, dict) or set(got) != set(expected):
        return False, "result: not the expected structure"
    if got["n"] != expected["n"]:
        return False, "result: not the loader this test builds"
    if sorted(got["labels"]) != list(range(expected["n"])):
        return False, "one shuffled epoch must yield every sample exactly once"
    # the samples themselves (in any order): the variant's data, each exactly once
    values_ok, _ = compare_values(got["values"], expected["values"])
    if not values_ok:
        return False, "the batches do not hold the dataset's samples"
    if got["sizes"] != expected["sizes"]:
        return False, "batch sizes: the last batch keeps the remainder (or is dropped)"
    if got["n_batches"] != expected["n_batches"]:
        return False, "len(loader) does not match the number of batches"
    return True, ""


@case(unit=LOADER, points=1, check=_covers_check,
      hint="DataLoader: A shuffled epoch still yields every sample once, in batches of batch_size.",
      stated={"DataLoader.__iter__": "with ``shuffle=True`` every epoch visits all 10 in a new order.",
              "DataLoader.__len__": "The number of batches in one epoch",
              "test:test_loader_shuffles_reproducibly_per_epoch": "a shuffled epoch still visits every sample exactly once"})
def loader_shuffle_covers_every_sample(tt, rng):
    dl = _dl(tt)
    n = int(rng.integers(10, 30))
    bs = int(rng.integers(3, 7))
    loader = dl.DataLoader(_dataset(tt, rng, n), batch_size=bs, shuffle=True)
    batches = list(loader)
    values = np.sort(np.concatenate([np.asarray(b[0].numpy()).reshape(-1) for b in batches]))
    return {"n": n, "labels": [i for b in _labels(batches) for i in b],
            "sizes": [len(b) for b in _labels(batches)], "n_batches": len(loader),
            "values": values}


# ----------------------------------------------------------------------------- transforms (9)
@case(unit=NORMALIZE, points=3,
      hint="Normalize: (x - mean[c]) / std[c] with mean/std as x.dtype reshaped to (C, 1, 1); "
           "float input only; std 0 and < 3-D inputs are errors.",
      stated={"Normalize": (
                  "mean: one value per channel (or one value for all channels).",
                  "inplace: write the result into the input's array instead of a new one.",
              ),
              "Normalize.__call__": (
                  "If ``x.ndim < 3``: ``ValueError(",
                  'if ``x.dtype.kind != "f"``: ``TypeError(',
                  "``mean = np.asarray(self.mean, dtype=x.dtype)``, same for ``std``; if any ``std == 0``: ``ValueError(",
                  "If ``mean`` is 1-D, reshape it to ``(C, 1, 1)``",
                  "``inplace``: ``x -= mean; x /= std`` and return ``img`` itself; otherwise return ``_rewrap((x - mean) / std, was_tensor)``.",
                  "A batch ``(B, C, H, W)`` works unchanged",
              )})
def normalize_per_channel_arrays_tensors_batches(tt, rng):
    dl = _dl(tt)
    c = int(rng.integers(1, 4))
    mean = rng.uniform(-1, 1, c).round(3).tolist()
    std = rng.uniform(0.5, 2, c).round(3).tolist()
    img = rng.standard_normal((c, 3, 4)).astype(np.float32)
    norm = dl.Normalize(mean, std)
    batch = rng.standard_normal((2, c, 2, 2)).astype(np.float32)
    inplace_img = img.copy()
    ret = dl.Normalize(mean, std, inplace=True)(inplace_img)
    return {"array": _plain(norm(img)), "tensor": _plain(norm(tt.Tensor(img))),
            "batch": _plain(norm(batch)), "scalar": _plain(dl.Normalize(0.5, 2.0)(img)),
            "f64": _plain(norm(img.astype(np.float64))),
            "inplace": [ret is inplace_img, _plain(inplace_img)],
            "errors": [outcome(norm, img.astype(np.uint8)), outcome(norm, img[0]),
                       outcome(dl.Normalize([0.0] * c, [0.0] * c), img)]}


@case(unit=RANDOM_CROP, points=4,
      hint="RandomCrop: pad first; draw i = integers(0, h - th + 1) then j; crop [..., i:i+th, "
           "j:j+tw] of the padded image; pad_if_needed pads the missing size.",
      stated={"RandomCrop": (
                  "padding: optional padding applied first (see :func:`pad`).",
                  "fill, padding_mode: as in :func:`pad`.",
              ),
              "pad": "``padding``: an int (all four sides), ``(lr, tb)`` (left/right, top/bottom) or ``(left, top, right, bottom)``.",
              "RandomCrop.__call__": (
                  "If ``self.padding is not None``: ``img = pad(img, self.padding, self.fill, self.padding_mode)``.",
                  "If ``self.pad_if_needed`` and ``w < tw``: pad with ``(tw - w, 0)``; then (recompute ``h``) if ``h < th``: pad with ``(0, th - h)`` — both with ``self.fill`` and ``self.padding_mode``, as in step 1.",
                  "Return ``img[..., i:i + th, j:j + tw]`` as a new contiguous array (or Tensor, if a Tensor came in",
              ),
              "RandomCrop.get_params": (
                  "If ``h < th or w < tw``: ``ValueError(",
                  "If ``(h, w) == (th, tw)``: return ``(0, 0, h, w)`` without drawing anything.",
                  "``rng = default_generator()``; ``i = int(rng.integers(0, h - th + 1))``, then ``j = int(rng.integers(0, w - tw + 1))`` — in this order",
              )})
def random_crop_padding_params_and_errors(tt, rng):
    dl = _dl(tt)
    h = int(rng.integers(5, 8))
    w = h + int(rng.integers(1, 3))  # never square: a swapped height and width must show
    img = rng.integers(1, 100, size=(2, h, w)).astype(np.float32)
    tt.manual_seed(_seed(rng))
    out = {
        "int_pad": [_plain(dl.RandomCrop(4, padding=2)(img)) for _ in range(3)],
        "pad2_reflect": _plain(dl.RandomCrop((h, w - 1), padding=(1, 2),
                                             padding_mode="reflect")(img)),
        "pad4_edge": _plain(dl.RandomCrop(3, padding=(0, 1, 2, 3), padding_mode="edge")(img)),
        "fill": _plain(dl.RandomCrop((h + 2, w + 2), padding=1, fill=-1.0)(img)),
        "tensor": _plain(dl.RandomCrop((3, 2))(tt.Tensor(img))),
        "if_needed": _plain(dl.RandomCrop((h + 1, w + 3), pad_if_needed=True)(img)),
        "if_needed_width": _plain(dl.RandomCrop((h, w + 2), pad_if_needed=True,
                                                fill=-1.0)(img)),
        "if_needed_height": _plain(dl.RandomCrop((h + 2, w), pad_if_needed=True,
                                                 fill=-1.0)(img)),
        "params": [list(dl.RandomCrop.get_params(img, (3, 3))) for _ in range(3)],
        "same": list(dl.RandomCrop.get_params(img, (h, w))),
        "too_big": outcome(dl.RandomCrop((h + 1, w)), img),
        "too_wide": outcome(dl.RandomCrop((h, w + 1)), img),
    }
    return out


@case(unit=FLIP, points=2,
      hint="RandomHorizontalFlip: draw u = default_generator().random() once per call; flip the "
           "LAST axis when u < p; otherwise return the input itself.",
      stated={"RandomHorizontalFlip.__init__": "p: float = 0.5",
              "RandomHorizontalFlip.__call__": "draw **once** ``u = default_generator().random()`` (every call, whatever ``p``); if ``u < self.p`` return the image reversed along its last axis (``x[..., ::-1]``) as a new contiguous array (or Tensor, if a Tensor came in); else return ``img`` itself.",
              "test:test_random_crop_and_flip": "p=0 never flips: return the input itself"})
def horizontal_flip_probability(tt, rng):
    dl = _dl(tt)
    img = rng.standard_normal((2, 3, 4)).astype(np.float32)
    tt.manual_seed(_seed(rng))
    half = dl.RandomHorizontalFlip()
    seq = [_plain(half(img)) for _ in range(6)]
    always = dl.RandomHorizontalFlip(p=1.0)
    never = dl.RandomHorizontalFlip(p=0.0)
    return {"seq": seq, "always": _plain(always(img)), "tensor": _plain(always(tt.Tensor(img))),
            "never_same_object": never(img) is img}


# ----------------------------------------------------------------------------- files (9)
def _idx(arr: np.ndarray, code: int) -> bytes:
    dt = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}[code]
    return (bytes([0, 0, code, arr.ndim]) + struct.pack(f">{arr.ndim}I", *arr.shape)
            + arr.astype(dt).tobytes())


@case(unit=READ_IDX, points=4,
      hint="read_idx: Gunzip when the file starts with 1f 8b; 2 zero bytes, type code, ndim, "
           "big-endian uint32 dims, then big-endian data; ValueError on a bad file.",
      stated={"read_idx": (
                  "An array of shape ``(dim_0, dim_1, ...)`` from the header, in native byte order, with the header's element type",
                  "ValueError: one line naming the file — bad magic number, unknown type code, truncated header, or a data size that does not match the dimensions.",
                  "if it starts with ``_GZIP_MAGIC`` (``1f 8b``), ``data = gzip.decompress(data)``.",
                  "Bytes 0 and 1 must be zero; byte 2 is the type code (a key of ``_IDX_DTYPES``)",
                  "Check ``len(data) - offset == prod(dims) * itemsize``",
                  "(this copies, so the array is writable)",
              )})
def read_idx_types_gzip_and_errors(tt, rng):
    dl = _dl(tt)
    n = int(rng.integers(2, 5))
    images = rng.integers(0, 256, size=(n, 5, 4)).astype(np.uint8)
    labels = rng.integers(0, 10, n).astype(np.uint8)
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = {
            "images.gz": gzip.compress(_idx(images, 0x08)),
            "labels": _idx(labels, 0x08),
            "int16": _idx(rng.integers(-300, 300, size=(3, 2)), 0x0B),
            "int32": _idx(rng.integers(-70000, 70000, size=4), 0x0C),
            "float32.gz": gzip.compress(_idx(rng.standard_normal((2, 2)), 0x0D)),
            "float64": _idx(rng.standard_normal(3), 0x0E),
            "int8": _idx(rng.integers(-100, 100, size=(2, 1, 2)), 0x09),
            "no items": _idx(np.zeros((0,), dtype=np.uint8), 0x08),
        }
        for name, data in files.items():
            (root / name).write_bytes(data)
            got = dl.read_idx(root / name)
            out[name] = [_plain(got), bool(got.flags.writeable)]
        bad = {"magic": b"\x01\x00\x08\x01" + struct.pack(">I", 2) + b"\x00\x00",
               "code": b"\x00\x00\x07\x01" + struct.pack(">I", 2) + b"\x00\x00",
               "short": _idx(images, 0x08)[:-3],
               "long": _idx(labels, 0x08) + b"\x00",
               "header": b"\x00\x00\x08\x03\x00\x00",
               "three bytes": b"\x00\x00\x08",
               "second byte": b"\x00\x01\x08\x01" + struct.pack(">I", 2) + b"\x00\x00"}
        for name, data in bad.items():
            (root / name).write_bytes(data)
            out[f"bad {name}"] = outcome(dl.read_idx, root / name)
    return out


def _cifar_records(rng, n) -> tuple[bytes, np.ndarray, np.ndarray]:
    planes = rng.integers(0, 256, size=(n, 3, 32, 32)).astype(np.uint8)
    labels = rng.integers(0, 10, n).astype(np.uint8)
    labels[int(rng.integers(0, n))] = 9  # the largest class is a valid label
    records = np.concatenate([labels[:, None], planes.reshape(n, -1)], axis=1)
    return records.tobytes(), planes, labels


@case(unit=READ_CIFAR, points=2,
      hint="read_cifar10_bin: records of 1 label byte + 3072 pixel bytes (R, G, B planes): "
           "reshape to (N, 3, 32, 32), then transpose to (N, 32, 32, 3).",
      stated={"read_cifar10_bin": (
                  "``images`` ``(N, 32, 32, 3)`` uint8",
                  "``labels`` ``(N,)`` int64 in 0..9.",
                  "ValueError: one line naming the file — an empty file, a size that is not a multiple of 3,073 bytes, or a label above 9.",
                  "``images = records[:, 1:].reshape(-1, 3, 32, 32)`` (channel planes), then ``.transpose(0, 2, 3, 1)``",
              )})
def read_cifar10_bin_records(tt, rng):
    dl = _dl(tt)
    n = int(rng.integers(2, 5))
    data, _, _ = _cifar_records(rng, n)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "data_batch_1.bin"
        path.write_bytes(data)
        images, labels = dl.read_cifar10_bin(path)
        (Path(tmp) / "cut.bin").write_bytes(data[:-1])
        (Path(tmp) / "label.bin").write_bytes(b"\x0a" + data[1:])
        (Path(tmp) / "empty.bin").write_bytes(b"")
        errors = [outcome(dl.read_cifar10_bin, Path(tmp) / f)
                  for f in ("cut.bin", "label.bin", "empty.bin")]
    return {"images": _plain(images), "labels": _plain(labels), "errors": errors}


@case(unit=READ_IDX, points=2,
      hint="MNIST/FashionMNIST read their files with your read_idx after the SHA-256 check.",
      stated={"MNIST": (
                  "files are looked up in ``root/<ClassName>/raw/`` and then in ``root/`` itself, as ``name.gz`` or ``name``.",
                  "data: ``(N, 28, 28)`` uint8 array; targets: ``(N,)`` int64 array",
                  "RuntimeError: a file is missing (and ``download`` is False) or matches no known digest",
              ),
              "VisionDataset": "``ds[i]`` is ``(transform(data[i]), target_transform(int(targets[i])))``",
              "ToTensor": "a 2-D image gets a channel axis, channels move first, and ``uint8`` becomes ``float32 / 255``",
              "read_idx": "with the header's element type (``uint8`` for MNIST images and labels)."})
def mnist_dataset_from_fixture_files(tt, rng):
    dl = _dl(tt)
    n = int(rng.integers(3, 6))
    images = rng.integers(0, 256, size=(n, 28, 28)).astype(np.uint8)
    labels = rng.integers(0, 10, n).astype(np.uint8)
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = {"t10k-images-idx3-ubyte.gz": gzip.compress(_idx(images, 0x08)),
                 "t10k-labels-idx1-ubyte": _idx(labels, 0x08)}
        for name, data in files.items():
            (root / name).write_bytes(data)

        tiny_mnist = type("TinyMNIST", (dl.FashionMNIST,), {
            "sha256": {k: (hashlib.sha256(v).hexdigest(),) for k, v in files.items()}})

        ds = tiny_mnist(root, train=False, transform=dl.ToTensor(),
                       target_transform=lambda t: t + 100)
        out["mnist"] = [len(ds), _plain(ds[1]), _plain(ds.data), _plain(ds.targets)]
        (root / "t10k-labels-idx1-ubyte").write_bytes(_idx(labels[::-1].copy(), 0x08))
        out["mnist_corrupt"] = outcome(tiny_mnist, root, train=False)
    return out


@case(unit=READ_CIFAR, points=1,
      hint="CIFAR10 reads its batches with your read_cifar10_bin after the SHA-256 check.",
      stated={"CIFAR10": (
                  "The first use verifies ``root/cifar-10-binary.tar.gz``",
                  "train: the 50,000 training images (``data_batch_1..5.bin``) or the 10,000 test images.",
                  "data: ``(N, 32, 32, 3)`` uint8 (HWC, like torchvision); targets: ``(N,)`` int64.",
              ),
              "VisionDataset": "``ds[i]`` is ``(transform(data[i]), target_transform(int(targets[i])))``",
              "read_cifar10_bin": "``images`` ``(N, 32, 32, 3)`` uint8"})
def cifar10_dataset_from_fixture_files(tt, rng):
    dl = _dl(tt)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        members = {}
        for name in ("data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                     "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"):
            members[name] = _cifar_records(rng, int(rng.integers(1, 3)))[0]
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            for name, data in members.items():
                info = tarfile.TarInfo(f"cifar-10-batches-bin/{name}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        (root / "cifar-10-binary.tar.gz").write_bytes(buf.getvalue())

        tiny_cifar = type("TinyCIFAR", (dl.CIFAR10,), {
            "tgz_sha256": (hashlib.sha256(buf.getvalue()).hexdigest(),)})
        train = tiny_cifar(root, train=True)
        test = tiny_cifar(root, train=False, transform=dl.ToTensor())
        return {"cifar": [len(train), _plain(train.data), _plain(train.targets), _plain(test[0])]}
