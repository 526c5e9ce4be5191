"""A reference GPT forward pass in NumPy, for the parent's evaluation of trained parameters.

The 2017 milestone's sandbox returns only the parameters its training produced (by name, as
``model.named_parameters()`` gives them); the trusted parent runs them through this forward pass
on held-out data the sandbox never saw. So an accuracy can only come from weights the student's
framework trained, and the architecture is the course's whatever the student's ``forward`` did:
a model trained without its causal mask, say, leans on future tokens this forward pass never
shows it. Nothing here is shipped to students or imported in the sandbox.

The architecture is module 13's ``GPT`` (PyTorch layouts): token and learned position
embeddings, pre-norm blocks (LayerNorm eps 1e-5, causal multi-head attention with packed
``in_proj``, a tanh-GELU MLP of width 4C), a final LayerNorm and a bias-free head. Computed in
float32 by default, as the model was trained (NumPy's float64 ``tanh`` alone is ~50x slower),
or in float64 for exact comparisons; in chunks of rows so memory stays bounded.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from autograder.milestones.forward import BadParameters, as_params

__all__ = ["BadParameters", "as_params", "gpt_logits", "gpt_shapes"]

EPS = 1e-5
CHUNK = 128  # sequences per forward pass: (CHUNK, h, T, T) float64 scores stay small


def gpt_shapes(vocab_size: int, context: int, d_model: int, n_layers: int
               ) -> dict[str, tuple[int, ...]]:
    """Every parameter name of module 13's ``GPT`` with its shape, in ``named_parameters`` order."""
    c = d_model
    shapes: dict[str, tuple[int, ...]] = {"tok_emb.weight": (vocab_size, c),
                                          "pos_emb.weight": (context, c)}
    for i in range(n_layers):
        p = f"blocks.{i}."
        shapes.update({p + "ln_1.weight": (c,), p + "ln_1.bias": (c,),
                       p + "attn.in_proj_weight": (3 * c, c), p + "attn.in_proj_bias": (3 * c,),
                       p + "attn.out_proj.weight": (c, c), p + "attn.out_proj.bias": (c,),
                       p + "ln_2.weight": (c,), p + "ln_2.bias": (c,),
                       p + "mlp.fc.weight": (4 * c, c), p + "mlp.fc.bias": (4 * c,),
                       p + "mlp.proj.weight": (c, 4 * c), p + "mlp.proj.bias": (c,)})
    shapes.update({"ln_f.weight": (c,), "ln_f.bias": (c,), "head.weight": (vocab_size, c)})
    return shapes


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    xc = x - x.mean(axis=-1, keepdims=True)
    var = (xc * xc).mean(axis=-1, keepdims=True)
    return xc / np.sqrt(var + EPS) * w + b


def _gelu_tanh(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))


def _attention(x: np.ndarray, p: dict[str, np.ndarray], prefix: str, n_heads: int
               ) -> np.ndarray:
    n, t, c = x.shape
    hs = c // n_heads
    qkv = x @ p[prefix + "in_proj_weight"].T + p[prefix + "in_proj_bias"]  # (N, T, 3C)
    q, k, v = (qkv[..., i * c:(i + 1) * c].reshape(n, t, n_heads, hs).transpose(0, 2, 1, 3)
               for i in range(3))  # (N, h, T, hs)
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hs)  # (N, h, T, T)
    scores = np.where(np.tril(np.ones((t, t), dtype=bool)), scores, -np.inf)
    scores -= scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    out = (weights @ v).transpose(0, 2, 1, 3).reshape(n, t, c)  # (N, T, C)
    return out @ p[prefix + "out_proj.weight"].T + p[prefix + "out_proj.bias"]


def gpt_logits(params: Any, idx: np.ndarray, *, vocab_size: int, context: int, d_model: int,
               n_layers: int, n_heads: int, dtype: Any = np.float32) -> np.ndarray:
    """Logits ``(N, T, vocab_size)`` of the GPT with ``params`` for token ids ``idx (N, T)``,
    computed in ``dtype``.

    Raises:
        BadParameters: the parameters do not fit ``GPT(vocab_size, context, d_model, n_layers,
            n_heads)``.
        ValueError: ``idx`` is not (N, T) with ``T <= context`` and ids in range.
    """
    p = as_params(params, gpt_shapes(vocab_size, context, d_model, n_layers), dtype,
                  model="GPT")
    idx = np.asarray(idx)
    if idx.ndim != 2 or idx.shape[1] > context or idx.dtype.kind not in "iu":
        raise ValueError(f"token ids must be (N, T <= {context}) integers, got {idx.shape}")
    if idx.size and (idx.min() < 0 or idx.max() >= vocab_size):
        raise ValueError("token ids out of range")
    out = np.empty((*idx.shape, vocab_size), dtype=dtype)
    for lo in range(0, len(idx), CHUNK):
        ids = idx[lo:lo + CHUNK]
        x = p["tok_emb.weight"][ids] + p["pos_emb.weight"][:ids.shape[1]]  # (N, T, C)
        for i in range(n_layers):
            b = f"blocks.{i}."
            h = _layer_norm(x, p[b + "ln_1.weight"], p[b + "ln_1.bias"])
            x = x + _attention(h, p, b + "attn.", n_heads)
            h = _layer_norm(x, p[b + "ln_2.weight"], p[b + "ln_2.bias"])
            h = _gelu_tanh(h @ p[b + "mlp.fc.weight"].T + p[b + "mlp.fc.bias"])
            x = x + h @ p[b + "mlp.proj.weight"].T + p[b + "mlp.proj.bias"]
        x = _layer_norm(x, p["ln_f.weight"], p["ln_f.bias"])
        out[lo:lo + CHUNK] = x @ p["head.weight"].T
    return out
