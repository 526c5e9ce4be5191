"""Broken variants of the reference for the milestone tests (plausible bugs, by name), and the
recipes as the sandboxed child imports them."""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from suite_tools import load_variant

from tito import paths

REF = paths.REFERENCE


def _replace(slug: str, old: str, new: str) -> dict[str, str]:
    text = (REF / f"{slug}.py").read_text(encoding="utf-8")
    # Fail (not skip) when the reference changed under the fixture: the bug must still apply.
    assert text.count(old) == 1, f"variant fixture out of date: {old.strip()!r} not unique in {slug}.py"
    return {slug: text.replace(old, new)}


#: Plausible bugs: name -> (module file, text in the reference, buggy replacement).
BUGS: dict[str, tuple[str, str, str]] = {
    # Module 03's Linear is one fused operation (_LinearFn, F.linear): the bugs go there.
    "linear_ignores_bias": ("layers", "            out += bias\n", "            out += 0 * bias\n"),
    "linear_outputs_constant": ("layers", "        out = rows.dot(weight.T)  # (R, out)\n",
                                "        out = rows.dot(weight.T) * 0  # (R, out)\n"),
    "linear_drops_weight_grad": ("layers", "        dweight = g.T.dot(rows)  # (out, in)\n",
                                 "        dweight = np.zeros_like(weight)  # (out, in)\n"),
    "linear_drops_input_grad": ("layers", "        dx = g.dot(weight).reshape(shape) if "
                                "needs_input_grad else None\n",
                                "        dx = np.zeros(shape, g.dtype) if needs_input_grad "
                                "else None\n"),
    "sgd_never_updates": ("optimizers",
                          "                p.data -= (lr * g).astype(p.data.dtype, copy=False)\n",
                          "                pass\n"),
    "adam_never_updates": ("optimizers", "                p.data -= step_size * m / denom\n",
                           "                pass\n"),
    "conv_weight_grad_zero": ("spatial", "        dw = np.matmul(g, cols.transpose(0, 1, 3, 2))"
                              ".sum(axis=0).reshape(weight.shape)\n",
                              "        dw = np.zeros_like(weight)\n"),
    "conv_weight_grad_sign_flipped": ("spatial", "        dw = np.matmul(g, cols.transpose(0, 1, 3, 2))"
                                      ".sum(axis=0).reshape(weight.shape)\n",
                                      "        dw = -np.matmul(g, cols.transpose(0, 1, 3, 2))"
                                      ".sum(axis=0).reshape(weight.shape)\n"),
    "max_pool_drops_gradient": ("spatial", "        won = np.zeros(out.shape, dtype=bool)",
                                "        won = np.ones(out.shape, dtype=bool)"),
    # Module 13 (the 2017 transformer).
    "gpt_without_causal_mask": ("transformers",
                                "            a, _ = self.attn(h, h, h, attn_mask=causal_mask(x.shape[1]),"
                                " need_weights=False,\n                             is_causal=True)\n",
                                "            a, _ = self.attn(h, h, h, need_weights=False)\n"),
    "gpt_without_positional_embedding": ("transformers",
                                         "        x = self.drop(self.pos_emb(self.tok_emb(ids), "
                                         "offset))  # (B, T, C)\n",
                                         "        x = self.drop(self.tok_emb(ids))  # (B, T, C)\n"),
    "layer_norm_backward_drops_variance_term": ("transformers",
                                                "        dx -= xhat * gx.mean(axis=axes, "
                                                "keepdims=True)\n", ""),
    # Modules 15-17 (the 2018 MLPerf-style milestone).
    "kv_cache_never_reused": ("memoization",
                              "        keep = min(common_prefix_length(self.tokens, ids), t - 1)\n",
                              "        keep = 0\n"),
    "kv_cache_mask_hides_own_key": ("memoization", "    return keys <= queries  # (L, S)\n",
                                    "    return keys < queries  # (L, S)\n"),
    "quantized_linear_drops_bias": ("quantization",
                                    "            q.bias = Tensor(mod.bias.data.astype(np.float32,"
                                    " copy=True))\n", "            pass\n"),
    "quantized_weights_kept_float": ("quantization", "        q.qweight = qw.int_repr()\n",
                                     "        q.qweight = qw.dequantize()\n"),
    "prune_by_signed_value": ("compression",
                              "        scores = np.where(kept, np.abs(values), np.inf).ravel()\n",
                              "        scores = np.where(kept, values, np.inf).ravel()\n"),
    "prune_largest_weights": ("compression",
                              "        scores = np.where(kept, np.abs(values), np.inf).ravel()\n",
                              "        scores = np.where(kept, -np.abs(values), np.inf).ravel()\n"),
}

_cache: dict[str, ModuleType] = {}


def variant(name: str) -> ModuleType:
    """The reference package with bug ``name`` applied (imported once per session)."""
    if name not in _cache:
        _cache[name] = load_variant(_replace(*BUGS[name]))
    return _cache[name]


def package_root(pkg: ModuleType) -> Path:
    """The folder to put on PYTHONPATH so ``import <pkg.__name__>`` finds the variant."""
    return Path(pkg.__file__).resolve().parent.parent


class _Blocker(importlib.abc.MetaPathFinder):
    def __init__(self, blocked: tuple[str, ...]) -> None:
        self.blocked = blocked

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname.split(".")[0] in self.blocked:
            raise ImportError(f"blocked: {fullname}")
        return None


@contextlib.contextmanager
def as_the_child(blocked: tuple[str, ...] = ("autograder", "tinytorch_data")
                 ) -> Iterator[ModuleType]:
    """``tinytorch_milestones.recipes`` imported afresh by name, as the sandboxed child imports
    it, with ``blocked`` packages neither imported nor importable while it loads and runs; the
    modules of before are back afterwards."""
    fresh = (*blocked, "tinytorch_milestones")
    saved = {k: v for k, v in sys.modules.items() if k.split(".")[0] in fresh}
    for k in saved:
        del sys.modules[k]
    blocker = _Blocker(blocked)
    sys.meta_path.insert(0, blocker)
    try:
        yield importlib.import_module("tinytorch_milestones.recipes")
    finally:
        sys.meta_path.remove(blocker)
        for k in [k for k in sys.modules if k.split(".")[0] in fresh]:
            del sys.modules[k]
        sys.modules.update(saved)
