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
        self.names.update(_ours_extras(package, tensor))

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
        self.names.update(_torch_extras(torch))

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


# ----------------------------------------------------------------------------- modules 08-18
# Names for the APIs whose PyTorch counterpart has another name or shape, one binding per
# library (the case code is the same on both sides):
#
# * ``tensor_of(data)``: ``Tensor(data)`` / ``torch.tensor(data)`` (PyTorch's ``torch.Tensor``
#   is its legacy float32-only constructor);
# * ``data``: ``tinytorch.data`` / ``torch.utils.data``; ``tv``: the image transforms
#   (``tinytorch.data.transforms`` / the same operations written with torch ops, as
#   torchvision documents them: torchvision is not installed);
# * ``obs``: the observers (``tinytorch.ao`` / ``torch.ao.quantization``);
# * ``PR``: pruning — ``PR.prunable(m)`` (ours: the masked layer sharing ``m``'s parameters;
#   torch: ``m``), ``PR.l1_unstructured(m, name, amount)``, ``PR.remove``,
#   ``PR.weight(m)`` (the effective weight), ``PR.l1_mask(t, amount)``,
#   ``PR.ln_mask(t, amount, n, dim)``, ``PR.global_masks(tensors, amount)``;
# * ``K``: module 18's kernels on tensors (``K.loops``, ``K.broadcast``, ``K.blocked``; torch:
#   ``torch.matmul``) and ``K.bias_gelu`` (torch: ``gelu(x + b, approximate="tanh")``);
# * ``PE``: positional encodings (``PE.sinusoidal(P, D)``, ``PE.add_sinusoidal(x, offset,
#   max_len)``, ``PE.add_learned(x, table, offset)``; torch: the formulas with torch ops);
# * ``KV.attend(mha, x, prompt)``: causal self-attention of ``x (B, T, E)``, ours through a
#   ``KVCache`` (the prompt, then one token at a time), torch with the full causal mask.


def _ours_extras(package: Any, tensor: Any) -> dict[str, Any]:
    from importlib import import_module

    acc = import_module(f"{package.__name__}.acceleration")
    comp = import_module(f"{package.__name__}.compression")
    emb = import_module(f"{package.__name__}.embeddings")
    memo = import_module(f"{package.__name__}.memoization")

    def on_arrays(fn: Any) -> Any:
        return lambda a, b, *rest, **kw: package.Tensor(fn(a.data, b.data, *rest, **kw))

    class K:
        loops = staticmethod(on_arrays(acc.matmul_loops))
        broadcast = staticmethod(on_arrays(acc.matmul_broadcast))

        @staticmethod
        def blocked(a: Any, b: Any, block_size: int = 64, kernel: str = "matmul") -> Any:
            k = np.matmul if kernel == "matmul" else acc.matmul_broadcast
            return package.Tensor(acc.matmul_blocked(a.data, b.data, block_size, kernel=k))

        bias_gelu = staticmethod(acc.bias_gelu)

    class PR:
        @staticmethod
        def prunable(m: Any) -> Any:
            return comp.make_prunable(package.nn.Sequential(m), inplace=True)[0]

        l1_unstructured = staticmethod(comp.l1_unstructured)
        ln_structured = staticmethod(comp.ln_structured)
        remove = staticmethod(comp.remove)

        @staticmethod
        def weight(m: Any) -> Any:
            return m.weight * m.weight_mask

        @staticmethod
        def l1_mask(t: Any, amount: Any) -> Any:
            return package.Tensor(comp.l1_unstructured_mask(t, amount))

        @staticmethod
        def ln_mask(t: Any, amount: Any, n: Any, dim: int) -> Any:
            return package.Tensor(comp.ln_structured_mask(t, amount, n, dim))

        @staticmethod
        def global_masks(tensors: list[Any], amount: Any) -> Any:
            return [package.Tensor(m) for m in comp.global_unstructured_masks(tensors, amount)]

    class PE:
        @staticmethod
        def sinusoidal(positions: int, dim: int) -> Any:
            return emb.sinusoidal_positional_encoding(positions, dim)

        @staticmethod
        def add_sinusoidal(x: Any, offset: int, max_len: int) -> Any:
            return emb.SinusoidalPositionalEncoding(x.shape[-1], max_len)(x, offset)

        @staticmethod
        def add_learned(x: Any, table: Any, offset: int) -> Any:
            layer = emb.LearnedPositionalEmbedding(table.shape[0], table.shape[1])
            layer.weight.data[...] = table.data
            return layer(x, offset), layer.weight

    class KV:
        @staticmethod
        def attend(mha: Any, x: Any, prompt: int) -> Any:
            b, t, e = x.shape
            cache = memo.KVCache(b, t, mha.num_heads, e // mha.num_heads, dtype=x.dtype)
            parts = [memo.cached_attention(cache, mha, x[:, :prompt])]
            parts += [cache(mha, x[:, i:i + 1]) for i in range(prompt, t)]
            return package.Tensor(np.concatenate([p.data for p in parts], axis=1))

    return {"tensor_of": package.Tensor,
            "data": package.data, "tv": package.data.transforms, "obs": package.ao.quantization,
            "PR": PR, "K": K, "PE": PE, "KV": KV}


def _torch_extras(torch: Any) -> dict[str, Any]:
    import torch.nn.utils.prune as prune
    from torch.ao import quantization as tq

    tF = torch.nn.functional

    class K:
        @staticmethod
        def loops(a: Any, b: Any) -> Any:
            return torch.matmul(a, b)

        broadcast = loops

        @staticmethod
        def blocked(a: Any, b: Any, block_size: int = 64, kernel: str = "matmul") -> Any:
            if block_size < 1:
                raise ValueError("block_size must be >= 1")
            return torch.matmul(a, b)

        @staticmethod
        def bias_gelu(x: Any, b: Any) -> Any:
            return tF.gelu(x + b, approximate="tanh")

    class PR:
        @staticmethod
        def prunable(m: Any) -> Any:
            return m

        @staticmethod
        def l1_unstructured(m: Any, name: str, amount: Any) -> Any:
            return prune.l1_unstructured(m, name, amount)

        @staticmethod
        def ln_structured(m: Any, name: str, amount: Any, n: Any, dim: int) -> Any:
            return prune.ln_structured(m, name, amount, n, dim)

        @staticmethod
        def remove(m: Any, name: str) -> Any:
            return prune.remove(m, name)

        @staticmethod
        def weight(m: Any) -> Any:
            return m.weight

        @staticmethod
        def l1_mask(t: Any, amount: Any) -> Any:
            return prune.L1Unstructured(amount).compute_mask(t, torch.ones_like(t))

        @staticmethod
        def ln_mask(t: Any, amount: Any, n: Any, dim: int) -> Any:
            return prune.LnStructured(amount, n, dim).compute_mask(t, torch.ones_like(t))

        @staticmethod
        def global_masks(tensors: list[Any], amount: Any) -> Any:
            holders = []
            for t in tensors:
                holder = torch.nn.Module()
                holder.weight = torch.nn.Parameter(t.detach().clone(), requires_grad=False)
                holders.append(holder)
            prune.global_unstructured([(h, "weight") for h in holders],
                                      pruning_method=prune.L1Unstructured, amount=amount)
            return [h.weight_mask for h in holders]

    class PE:
        @staticmethod
        def sinusoidal(positions: int, dim: int) -> Any:
            pos = torch.arange(positions, dtype=torch.float64)[:, None]
            freq = torch.exp(-math.log(10000.0) * torch.arange(0, dim, 2, dtype=torch.float64)
                             / dim)
            table = torch.zeros(positions, dim, dtype=torch.float64)
            table[:, 0::2] = torch.sin(pos * freq)
            table[:, 1::2] = torch.cos(pos * freq)[:, :dim // 2]
            return table.float()

        @staticmethod
        def add_sinusoidal(x: Any, offset: int, max_len: int) -> Any:
            if offset < 0 or offset + x.shape[-2] > max_len:
                raise ValueError("positions outside max_len")
            return x + PE.sinusoidal(max_len, x.shape[-1])[offset:offset + x.shape[-2]]

        @staticmethod
        def add_learned(x: Any, table: Any, offset: int) -> Any:
            if offset < 0 or offset + x.shape[-2] > table.shape[0]:
                raise ValueError("positions outside max_len")
            weight = torch.nn.Parameter(table.detach().clone())
            return x + weight[offset:offset + x.shape[-2]], weight

    class KV:
        @staticmethod
        def attend(mha: Any, x: Any, prompt: int) -> Any:
            t = x.shape[1]
            mask = torch.triu(torch.ones(t, t, dtype=torch.bool), 1)
            return mha(x, x, x, attn_mask=mask, need_weights=False)[0].detach()

    class TV:
        """torchvision's documented semantics, with torch ops (torchvision is not installed)."""

        class ToTensor:
            def __call__(self, pic: Any) -> Any:
                arr = np.asarray(pic)
                if arr.ndim not in (2, 3):
                    raise ValueError(f"pic should be 2/3 dimensional. Got {arr.ndim} dimensions.")
                if arr.ndim == 2:
                    arr = arr[:, :, None]
                img = torch.from_numpy(np.ascontiguousarray(arr)).permute(2, 0, 1).contiguous()
                return img.to(torch.float32).div(255) if img.dtype == torch.uint8 else img

        class Normalize:
            def __init__(self, mean: Any, std: Any, inplace: bool = False) -> None:
                self.mean, self.std, self.inplace = mean, std, inplace

            def __call__(self, t: Any) -> Any:
                if not t.is_floating_point():
                    raise TypeError(f"Input tensor should be a float tensor. Got {t.dtype}.")
                if t.ndim < 3:
                    raise ValueError("Expected tensor to be a tensor image of size (..., C, H, "
                                     f"W). Got {tuple(t.shape)}.")
                mean = torch.as_tensor(self.mean, dtype=t.dtype)
                std = torch.as_tensor(self.std, dtype=t.dtype)
                if (std == 0).any():
                    raise ValueError("std evaluated to zero after conversion to "
                                     f"{t.dtype}, leading to division by zero.")
                if mean.ndim == 1:
                    mean = mean.view(-1, 1, 1)
                if std.ndim == 1:
                    std = std.view(-1, 1, 1)
                out = (t - mean) / std
                if self.inplace:
                    t.copy_(out)
                    return t
                return out

        class Compose:
            def __init__(self, transforms: Any) -> None:
                self.transforms = list(transforms)

            def __call__(self, img: Any) -> Any:
                for t in self.transforms:
                    img = t(img)
                return img

        @staticmethod
        def pad(img: Any, padding: Any, fill: float = 0, padding_mode: str = "constant") -> Any:
            p = [padding] if isinstance(padding, int) else list(padding)
            if len(p) == 1:
                left = top = right = bottom = p[0]
            elif len(p) == 2:
                left, top, right, bottom = p[0], p[1], p[0], p[1]
            elif len(p) == 4:
                left, top, right, bottom = p
            else:
                raise ValueError("Padding must be an int or a 1, 2, or 4 element tuple")
            if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
                raise ValueError("Padding mode should be constant, edge, reflect or symmetric")
            h, w = img.shape[-2:]
            if padding_mode == "symmetric" and (max(top, bottom) > h or max(left, right) > w):
                raise IndexError("torchvision's symmetric padding indexes past the image")
            if padding_mode == "symmetric":
                rows = [min(max(i, -i - 1), 2 * h - i - 1) for i in range(-top, h + bottom)]
                cols = [min(max(j, -j - 1), 2 * w - j - 1) for j in range(-left, w + right)]
                return img[..., rows, :][..., cols]
            mode = {"edge": "replicate"}.get(padding_mode, padding_mode)
            x = img if img.ndim >= 3 or mode == "constant" else img[None]
            kw = {"value": fill} if mode == "constant" else {}
            out = tF.pad(x if mode == "constant" or x.is_floating_point() else x.double(),
                         (left, right, top, bottom), mode=mode, **kw)
            out = out.to(img.dtype)
            return out if out.ndim == img.ndim else out[0]

    return {"tensor_of": torch.tensor, "data": torch.utils.data, "tv": TV, "obs": tq, "PR": PR,
            "K": K, "PE": PE, "KV": KV}


@cache
def _torch() -> Any:
    import torch

    torch.set_num_threads(1)
    return torch
