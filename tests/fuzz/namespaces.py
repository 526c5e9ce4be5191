"""The two namespaces a fuzz case runs in: tinytorch_ref and PyTorch, under the same names.

Names every case may use:

* ``T(values, dtype, shape=None, grad=False)`` a tensor; ``A(values, dtype)`` a NumPy array;
* ``lib`` the package (``tinytorch_ref`` or ``torch``), ``F`` its ``nn.functional``, ``nn``,
  ``optim``, ``lr_scheduler``, ``clip_grad_norm_``, ``no_grad``;
* ``load(module, name=array, ...)`` copies arrays into a module's parameters (layers are
  initialised at random; a case makes both sides equal with this);
* ``np``, ``math``, ``nan``, ``inf``.

A case sets ``out``; it may set ``leaves`` (more tensors whose ``.grad`` to compare, e.g. a
layer's parameters) and ``no_backward = True``.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import numpy as np

from .engine import Input, TensorValue


def _array(values: Any, dtype: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
    arr = np.array(values, dtype=dtype)
    return arr.reshape(shape) if shape is not None else arr


class Lib:
    """Binds the generic case vocabulary to one library."""

    name = "?"
    tensor_type: type = object
    names: dict[str, Any]

    def make(self, inp: Input) -> Any:
        if inp.kind == "tensor":
            return self.tensor(inp.value.copy(), inp.grad)
        if inp.kind == "array":
            return inp.value.copy()
        return inp.value

    def tensor(self, arr: np.ndarray, grad: bool) -> Any:
        raise NotImplementedError

    def to_numpy(self, t: Any) -> np.ndarray:
        raise NotImplementedError

    def dtype_name(self, t: Any) -> str:
        raise NotImplementedError

    def normalise(self, x: Any) -> Any:
        if isinstance(x, self.tensor_type):
            try:
                values = np.array(self.to_numpy(x), copy=True)
            except Exception as exc:  # noqa: BLE001 - an unreadable tensor is a result too
                return f"<unreadable tensor: {type(exc).__name__}>"
            return TensorValue(self.dtype_name(x), tuple(int(s) for s in values.shape), values,
                               bool(getattr(x, "requires_grad", False)))
        if isinstance(x, np.ndarray):
            return TensorValue(x.dtype.name, tuple(x.shape), x.copy(), False)
        if isinstance(x, (list, tuple)):
            return [self.normalise(v) for v in x]
        if isinstance(x, dict):
            return {str(k): self.normalise(v) for k, v in x.items()}
        if isinstance(x, np.dtype):
            return x.name
        if isinstance(x, (bool, int, float, str)) or x is None:
            return x
        if isinstance(x, np.generic):
            return f"<numpy scalar {x.dtype.name}>"
        return self.normalise_other(x)

    def normalise_other(self, x: Any) -> Any:
        return f"<{type(x).__name__}>"

    def wants_backward(self, out: Any) -> bool:
        return (isinstance(out, self.tensor_type) and bool(getattr(out, "requires_grad", False))
                and self.dtype_name(out).startswith("float"))

    def shape(self, out: Any) -> tuple[int, ...]:
        return tuple(int(s) for s in out.shape)

    def backward(self, out: Any, upstream: np.ndarray) -> None:
        raise NotImplementedError

    def grad(self, leaf: Any) -> Any:
        return getattr(leaf, "grad", "<no .grad attribute>")

    def is_grad_leaf(self, t: Any) -> bool:
        raise NotImplementedError


class Ours(Lib):
    name = "tinytorch_ref"

    def __init__(self, package: Any = None) -> None:
        if package is None:
            import tinytorch_ref as package
        self.pkg = package
        self.tensor_type = package.Tensor
        from importlib import import_module

        training = import_module(f"{package.__name__}.training")
        nn = package.nn

        def load(module: Any, **arrays: np.ndarray) -> Any:
            for key, arr in arrays.items():
                target = module
                for part in key.split("__"):
                    target = getattr(target, part)
                target.data[...] = arr
            return module

        def tensor(values: Any, dtype: str, shape: tuple[int, ...] | None = None,
                   grad: bool = False) -> Any:
            return package.Tensor(_array(values, dtype, shape), requires_grad=grad)

        self.names = {
            "T": tensor, "A": _array, "lib": package, "F": nn.functional, "nn": nn,
            "optim": package.optim, "lr_scheduler": package.optim.lr_scheduler,
            "clip_grad_norm_": training.clip_grad_norm_, "no_grad": package.no_grad,
            "load": load, "np": np, "math": math, "nan": math.nan, "inf": math.inf,
            "IS_TORCH": False,
        }

    def tensor(self, arr: np.ndarray, grad: bool) -> Any:
        return self.pkg.Tensor(arr, requires_grad=grad)

    def to_numpy(self, t: Any) -> np.ndarray:
        return np.asarray(t.data)

    def dtype_name(self, t: Any) -> str:
        dt = t.dtype
        return dt.name if isinstance(dt, np.dtype) else str(dt)

    def backward(self, out: Any, upstream: np.ndarray) -> None:
        out.backward(self.pkg.Tensor(upstream.astype(out.data.dtype)))

    def is_grad_leaf(self, t: Any) -> bool:
        return bool(t.requires_grad) and getattr(t, "_node", None) is None


class Torch(Lib):
    name = "torch"

    def __init__(self) -> None:
        torch = _torch()
        self.torch = torch
        self.tensor_type = torch.Tensor

        def load(module: Any, **arrays: np.ndarray) -> Any:
            with torch.no_grad():
                for key, arr in arrays.items():
                    target = module
                    for part in key.split("__"):
                        target = getattr(target, part)
                    target.copy_(torch.from_numpy(np.ascontiguousarray(arr)))
            return module

        def tensor(values: Any, dtype: str, shape: tuple[int, ...] | None = None,
                   grad: bool = False) -> Any:
            return torch.tensor(_array(values, dtype, shape), requires_grad=grad)

        self.names = {
            "T": tensor, "A": _array, "lib": torch, "F": torch.nn.functional, "nn": torch.nn,
            "optim": torch.optim, "lr_scheduler": torch.optim.lr_scheduler,
            "clip_grad_norm_": torch.nn.utils.clip_grad_norm_, "no_grad": torch.no_grad,
            "load": load, "np": np, "math": math, "nan": math.nan, "inf": math.inf,
            "IS_TORCH": True,
        }

    def tensor(self, arr: np.ndarray, grad: bool) -> Any:
        return self.torch.tensor(arr, requires_grad=grad)

    def to_numpy(self, t: Any) -> np.ndarray:
        return t.detach().numpy()

    def dtype_name(self, t: Any) -> str:
        return str(t.dtype).replace("torch.", "")

    def normalise_other(self, x: Any) -> Any:
        if isinstance(x, self.torch.dtype):
            return str(x).replace("torch.", "")
        if isinstance(x, self.torch.Size):
            return [int(s) for s in x]
        return super().normalise_other(x)

    def normalise(self, x: Any) -> Any:
        if isinstance(x, self.torch.Size):
            return [int(s) for s in x]
        return super().normalise(x)

    def backward(self, out: Any, upstream: np.ndarray) -> None:
        out.backward(self.torch.tensor(upstream, dtype=out.dtype))

    def is_grad_leaf(self, t: Any) -> bool:
        return bool(t.requires_grad) and t.is_leaf


@cache
def _torch() -> Any:
    import torch

    torch.set_num_threads(1)
    return torch
