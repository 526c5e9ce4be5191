"""Regenerate ``tinygpt_kjv.npz``: the TinyGPT of the capstone's second event, trained on the KJV.

Module 13's ``GPT`` (the course's reference, ``tinytorch_ref``) with ``CONFIG`` learns the next
character of the King James text of :func:`tinytorch_data.loaders.load_kjv_chars` (its
training part; the validation part stays unseen): ``STEPS`` steps of Adam on random windows of
``CONFIG["context"]`` characters, linear warm-up then a cosine decay to a tenth of the peak
rate, every position predicting the next character. One BLAS thread::

    OPENBLAS_NUM_THREADS=1 python tinytorch_data/tinygpt_kjv/train_tinygpt.py

It takes about 4 CPU minutes. The output is byte-for-byte reproducible on one machine (the zip
entries carry a fixed date; float32 BLAS kernels differ between CPUs, so another machine may
train slightly different weights: record the new sha256 and perplexity in
``tinytorch_data/MANIFEST.json`` then). The file is an ``.npz`` (read with ``allow_pickle=False``):
one float32 array per parameter, named as ``GPT.named_parameters()`` names it, plus
``__config__``, the JSON of ``CONFIG`` and the vocabulary as a 0-d string array. The script
prints the validation perplexity and the sha256 for the manifest.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import time
import zipfile
from pathlib import Path

import numpy as np

OUT = Path(__file__).with_name("tinygpt_kjv.npz")
CONFIG = {"context": 128, "d_model": 64, "n_layers": 2, "n_heads": 4}
SEED, STEPS, BATCH, LR, WARMUP = 2020, 3000, 16, 3e-3, 100
EVAL_WINDOWS = 256  # validation windows for the printed perplexity


def lr_at(step: int) -> float:
    if step <= WARMUP:
        return LR * step / WARMUP
    progress = (step - WARMUP) / (STEPS - WARMUP)
    return LR * (0.1 + 0.45 * (1.0 + math.cos(math.pi * progress)))


def write_npz(path: Path, arrays: dict[str, np.ndarray]) -> bytes:
    """An uncompressed ``.npz`` whose bytes depend on the arrays only (fixed entry dates)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, arr in arrays.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, np.asarray(arr), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            zf.writestr(info, member.getvalue())
    path.write_bytes(buf.getvalue())
    return buf.getvalue()


def main() -> None:
    import tinytorch_ref as tt
    from tinytorch_data.loaders import kjv_ids, load_kjv_chars
    from tinytorch_ref.transformers import GPT

    kjv = load_kjv_chars()
    vocabulary = kjv.vocabulary
    train = kjv_ids(kjv.train, vocabulary).astype(np.int64)
    val = kjv_ids(kjv.validation, vocabulary).astype(np.int64)
    ctx = CONFIG["context"]
    tt.manual_seed(SEED)
    model = GPT(len(vocabulary), ctx, CONFIG["d_model"], CONFIG["n_layers"], CONFIG["n_heads"])
    opt = tt.optim.Adam(model.parameters(), lr=LR)
    loss_fn = tt.nn.CrossEntropyLoss()
    rng = np.random.default_rng(SEED)
    offsets = np.arange(ctx)
    start, running = time.process_time(), 0.0
    for step in range(1, STEPS + 1):
        for group in opt.param_groups:
            group["lr"] = lr_at(step)
        rows = rng.integers(0, len(train) - ctx - 1, size=BATCH)[:, None] + offsets
        opt.zero_grad()
        logits = model(tt.Tensor(train[rows]))
        loss = loss_fn(logits.reshape(-1, len(vocabulary)), tt.Tensor(train[rows + 1].ravel()))
        loss.backward()
        opt.step()
        running += float(np.asarray(loss.data))
        if step % 100 == 0:
            print(f"step {step:5d}  loss {running / 100:.4f}  "
                  f"{time.process_time() - start:.0f} CPU s", flush=True)
            running = 0.0
    model.eval()
    eval_rng = np.random.default_rng(SEED + 1)
    starts = eval_rng.integers(0, len(val) - ctx - 1, size=EVAL_WINDOWS)[:, None] + offsets
    nll = 0.0
    with tt.no_grad():
        for lo in range(0, EVAL_WINDOWS, 32):
            rows = starts[lo:lo + 32]
            z = np.asarray(model(tt.Tensor(val[rows])).data, dtype=np.float64)
            z -= z.max(axis=-1, keepdims=True)
            logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
            nll -= float(np.take_along_axis(logp, val[rows + 1][..., None], -1).sum())
    perplexity = math.exp(nll / (EVAL_WINDOWS * ctx))
    arrays = {name: np.asarray(p.data, dtype=np.float32) for name, p in model.named_parameters()}
    arrays["__config__"] = np.array(json.dumps({**CONFIG, "vocabulary": vocabulary},
                                               sort_keys=True))
    data = write_npz(OUT, arrays)
    print(f"wrote {OUT}: {sum(a.size for k, a in arrays.items() if k != '__config__')} "
          f"parameters, {len(data)} bytes; validation perplexity {perplexity:.4f}")
    print(f"sha256 {hashlib.sha256(data).hexdigest()}")


if __name__ == "__main__":
    main()
