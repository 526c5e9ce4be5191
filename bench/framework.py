"""Framework speed: the same workloads in tinytorch_ref and PyTorch, side by side (issue 14).

    make bench                                   # or: python bench/framework.py --runs 3

Both run on one thread (``OPENBLAS_NUM_THREADS=1``, ``torch.set_num_threads(1)``), in one
process. Each run warms up, then times ``--steps`` steps of each workload, alternating the two
frameworks step by step so that noise from a busy machine hits both; it keeps the medians.
Steps are timed in wall-clock time; ``--clock cpu`` times the process's CPU time instead
(steadier on a loaded machine, but it also counts PyTorch's helper threads).
With ``--runs N`` the printed figures are the medians over the runs (per-run lines go to
stderr). One line per workload on stdout::

    NAME tinytorch_ms=X torch_ms=Y ratio=Z          (ratio = tinytorch / torch)
    NAME missing                                    (its course module is not built yet)

Workloads (weights are copied so both compute the same numbers; a test checks that):

* ``matmul1k``: ``a @ b`` for two 1000x1000 float32 matrices (no graph).
* ``mlp``: one training step (forward, cross-entropy, backward, Adam) of
  ``Linear(64, 128) -> ReLU -> Linear(128, 10)`` on a batch of 64.
* ``cnn8`` / ``cnn28`` / ``cnn32``: one training step of ``Conv2d(C, 8, 3, padding=1) -> ReLU
  -> MaxPool2d(2) -> Conv2d(8, 16, 3, padding=1) -> ReLU -> MaxPool2d(2) -> Flatten ->
  Linear(16 * (S / 4)², 10)``, batch 64, Adam, on ``C x S x S`` = 1x8x8, 1x28x28
  (Fashion-MNIST's shape) and 3x32x32 inputs (CIFAR-10's). Needs ``tinytorch_ref.nn.Conv2d``
  and ``nn.MaxPool2d`` (module 09).
* ``gpt``: one training step (cross-entropy over every position, Adam) of module 13's
  ``GPT(vocab_size=65, context_length=32, d_model=64, n_layers=2, n_heads=4)``, batch 16. The
  PyTorch twin is built from ``nn.Embedding``, ``nn.LayerNorm``, ``nn.MultiheadAttention`` and
  a tanh-GELU MLP with the same parameter names; our weights are loaded into it by name.
* ``generate`` / ``generate_kv``: 128 new tokens from a 1-token prompt, greedy (``top_k=1``),
  with the same model but a 160-position context (so the cache holds the whole text):
  ``GPT.generate`` recomputing the whole prefix at every step, and module 17's
  ``CachedGPT(model).generate`` computing one new position per step. PyTorch runs the same
  greedy loop, without a cache and with a per-layer key/value cache (``torch.cat`` and
  ``F.scaled_dot_product_attention``).

Target (issue 35; ratio, median of three runs on a quiet machine): <= 1.0 for every
workload. Results and the machine: docs/performance.md, whose "Framework speed" table holds
one ratio per workload.

``--guard FACTOR`` turns the run into a regression check: every workload's ratio (the median
over ``--runs``) must stay within ``FACTOR`` times the ratio that table records; the exit
status is 1 otherwise, or when a workload the table records is missing. It is a same-run ratio
of medians (both frameworks measured alternately in one process), so a busy machine slows both
sides alike; ``tests/parity/test_bench.py`` runs it with a factor of 2 and few steps.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import statistics
import sys
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import tinytorch_ref as tt  # noqa: E402

Step = Callable[[], Any]


def _torch() -> Any:
    import torch

    torch.set_num_threads(1)
    return torch


# ----------------------------------------------------------------------------- workloads
def matmul1k() -> tuple[Step, Step]:
    torch = _torch()
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((1000, 1000)).astype(np.float32) for _ in range(2))
    ta, tb = tt.Tensor(a), tt.Tensor(b)
    qa, qb = torch.from_numpy(a), torch.from_numpy(b)
    return (lambda: ta @ tb), (lambda: qa @ qb)


def _copy_params(ours: Any, theirs: Any) -> None:
    """Copy our parameters into the PyTorch twin, matched in order (shapes must agree)."""
    torch = _torch()
    mine, yours = list(ours.parameters()), list(theirs.parameters())
    assert len(mine) == len(yours), f"{len(mine)} parameters vs {len(yours)}"
    with torch.no_grad():
        for p, q in zip(mine, yours, strict=True):
            assert tuple(p.shape) == tuple(q.shape), f"{p.shape} vs {tuple(q.shape)}"
            q.copy_(torch.from_numpy(np.ascontiguousarray(p.data)))


def _train_steps(model: Any, twin: Any, x: np.ndarray, y: np.ndarray,
                 copy: bool = True) -> tuple[Step, Step]:
    """One Adam training step of ``model`` (ours) and ``twin`` (PyTorch) on the same batch
    (``copy``: copy our weights into the twin in parameter order first)."""
    torch = _torch()
    if copy:
        _copy_params(model, twin)
    opt = tt.optim.Adam(model.parameters(), lr=1e-3)
    topt = torch.optim.Adam(twin.parameters(), lr=1e-3)
    ce, tce = tt.nn.CrossEntropyLoss(), torch.nn.CrossEntropyLoss()
    xb, yb = tt.Tensor(x), tt.Tensor(y)
    txb, tyb = torch.from_numpy(x), torch.from_numpy(y)

    def ours() -> float:
        opt.zero_grad()
        out = model(xb)
        loss = ce(out.reshape(-1, out.shape[-1]), yb.reshape(-1))
        loss.backward()
        opt.step()
        return float(loss.item())

    def theirs() -> float:
        topt.zero_grad()
        out = twin(txb)
        loss = tce(out.reshape(-1, out.shape[-1]), tyb.reshape(-1))
        loss.backward()
        topt.step()
        return float(loss.item())

    return ours, theirs


def mlp() -> tuple[Step, Step]:
    torch = _torch()
    tt.manual_seed(0)
    model = tt.nn.Sequential(tt.nn.Linear(64, 128), tt.nn.ReLU(), tt.nn.Linear(128, 10))
    twin = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                               torch.nn.Linear(128, 10))
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 64)).astype(np.float32)
    y = rng.integers(0, 10, 64)
    return _train_steps(model, twin, x, y)


def _cnn(size: int, channels: int = 1) -> tuple[Step, Step] | None:
    nn = tt.nn
    if not (hasattr(nn, "Conv2d") and hasattr(nn, "MaxPool2d")):
        return None
    torch = _torch()
    tn = torch.nn
    tt.manual_seed(0)
    flat = 16 * (size // 4) ** 2

    def build(m: Any) -> Any:
        return m.Sequential(m.Conv2d(channels, 8, 3, padding=1), m.ReLU(), m.MaxPool2d(2),
                            m.Conv2d(8, 16, 3, padding=1), m.ReLU(), m.MaxPool2d(2),
                            m.Flatten(), m.Linear(flat, 10))

    rng = np.random.default_rng(2)
    x = rng.standard_normal((64, channels, size, size)).astype(np.float32)
    y = rng.integers(0, 10, 64)
    return _train_steps(build(nn), build(tn), x, y)


def cnn8() -> tuple[Step, Step] | None:
    return _cnn(8)


def cnn28() -> tuple[Step, Step] | None:
    return _cnn(28)


def cnn32() -> tuple[Step, Step] | None:
    return _cnn(32, channels=3)


GPT_CONFIG = dict(vocab_size=65, context_length=32, d_model=64, n_layers=2, n_heads=4)
#: generation: the same model with a context that holds the prompt and all 128 new tokens
GENERATE_CONFIG = dict(GPT_CONFIG, context_length=160)
NEW_TOKENS = 128


def _gpt_class() -> Any:
    try:
        module = importlib.import_module("tinytorch_ref.transformers")
    except ModuleNotFoundError:
        return None
    return getattr(module, "GPT", None)


def _torch_gpt(config: dict[str, int]) -> Any:
    """The PyTorch twin of module 13's GPT, from torch.nn primitives (same parameter names)."""
    torch = _torch()
    nn, F = torch.nn, torch.nn.functional

    class KV:
        """One layer's keys and values so far: the PyTorch side of module 17's KV cache."""

        def __init__(self) -> None:
            self.k: Any = None
            self.v: Any = None

        def __call__(self, attn: Any, h: Any) -> Any:
            b, t, d = h.shape
            heads = attn.num_heads
            q, k, v = (z.view(b, t, heads, d // heads).transpose(1, 2)  # (B, nh, T, hs)
                       for z in F.linear(h, attn.in_proj_weight, attn.in_proj_bias).chunk(3, -1))
            past = 0 if self.k is None else self.k.shape[2]
            self.k = k if self.k is None else torch.cat([self.k, k], dim=2)  # (B, nh, P+T, hs)
            self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
            mask = torch.ones(t, past + t, dtype=torch.bool).tril(past)  # True: may attend
            y = F.scaled_dot_product_attention(q, self.k, self.v, attn_mask=mask)
            return attn.out_proj(y.transpose(1, 2).reshape(b, t, d))  # (B, T, C)

    class Block(nn.Module):
        def __init__(self, d: int, heads: int) -> None:
            super().__init__()
            self.ln_1 = nn.LayerNorm(d)
            self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
            self.ln_2 = nn.LayerNorm(d)
            self.mlp = nn.Sequential(OrderedDict(fc=nn.Linear(d, 4 * d),
                                                 gelu=nn.GELU(approximate="tanh"),
                                                 proj=nn.Linear(4 * d, d)))

        def forward(self, x: Any, cache: Any = None) -> Any:
            h = self.ln_1(x)  # (B, T, C)
            if cache is None:
                t = x.shape[1]
                mask = torch.ones(t, t, dtype=torch.bool).triu(1)  # True: masked out
                a, _ = self.attn(h, h, h, attn_mask=mask, need_weights=False, is_causal=True)
            else:
                a = cache(self.attn, h)
            x = x + a
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self, vocab_size: int, context_length: int, d_model: int, n_layers: int,
                     n_heads: int) -> None:
            super().__init__()
            self.tok_emb = nn.Embedding(vocab_size, d_model)
            self.pos_emb = nn.Embedding(context_length, d_model)
            self.blocks = nn.Sequential(*[Block(d_model, n_heads) for _ in range(n_layers)])
            self.ln_f = nn.LayerNorm(d_model)
            self.head = nn.Linear(d_model, vocab_size, bias=False)

        def forward(self, idx: Any, caches: list[Any] | None = None, offset: int = 0) -> Any:
            t = idx.shape[1]
            x = self.tok_emb(idx) + self.pos_emb(torch.arange(offset, offset + t))  # (B, T, C)
            for i, block in enumerate(self.blocks):
                x = block(x, None if caches is None else caches[i])
            return self.head(self.ln_f(x))  # (B, T, vocab)

        def new_cache(self) -> list[Any]:
            return [KV() for _ in self.blocks]

    return GPT(**config)


def _copy_state(ours: Any, theirs: Any) -> None:
    """Copy our parameters into the PyTorch twin by name (every name must match)."""
    torch = _torch()
    state = {n: torch.from_numpy(np.ascontiguousarray(p.data))
             for n, p in ours.named_parameters()}
    theirs.load_state_dict(state, strict=True)


def gpt() -> tuple[Step, Step] | None:
    cls = _gpt_class()
    if cls is None:
        return None
    tt.manual_seed(0)
    model = cls(**GPT_CONFIG, dropout=0.0)
    twin = _torch_gpt(GPT_CONFIG)
    _copy_state(model, twin)
    rng = np.random.default_rng(3)
    idx = rng.integers(0, 65, (16, 33))
    return _train_steps(model, twin, idx[:, :-1], idx[:, 1:], copy=False)


def _generate(use_cache: bool) -> tuple[Step, Step] | None:
    cls = _gpt_class()
    if cls is None:
        return None
    cached: Any = None
    if use_cache:
        try:
            cached = importlib.import_module("tinytorch_ref.memoization").CachedGPT
        except ModuleNotFoundError:
            return None
    torch = _torch()
    tt.manual_seed(0)
    model = cls(**GENERATE_CONFIG, dropout=0.0).eval()
    twin = _torch_gpt(GENERATE_CONFIG).eval()
    _copy_state(model, twin)
    start = np.zeros((1, 1), dtype=np.int64)
    runner = model if cached is None else cached(model)

    def ours() -> np.ndarray:  # module 13's generate (module 17's CachedGPT runs the same loop)
        return runner.generate(tt.Tensor(start), NEW_TOKENS, top_k=1).numpy()

    def theirs() -> np.ndarray:  # greedy decoding, the whole prefix again or one position
        with torch.no_grad():
            idx = torch.from_numpy(start)
            caches = twin.new_cache() if use_cache else None
            for _ in range(NEW_TOKENS):
                if caches is None:
                    logits = twin(idx)[:, -1, :]
                else:
                    logits = twin(idx[:, _cached_positions(caches):], caches, _cached_positions(caches))[:, -1]
                idx = torch.cat([idx, logits.argmax(-1, keepdim=True)], dim=1)
            return idx.numpy()

    return ours, theirs


def _cached_positions(caches: list[Any]) -> int:
    """Positions already in a PyTorch twin's per-layer caches."""
    return 0 if caches[0].k is None else int(caches[0].k.shape[2])


def generate() -> tuple[Step, Step] | None:
    return _generate(use_cache=False)


def generate_kv() -> tuple[Step, Step] | None:
    return _generate(use_cache=True)


WORKLOADS: dict[str, Callable[[], tuple[Step, Step] | None]] = {
    "matmul1k": matmul1k, "mlp": mlp, "cnn8": cnn8, "cnn28": cnn28, "cnn32": cnn32,
    "gpt": gpt, "generate": generate, "generate_kv": generate_kv,
}
#: issue 35: every workload at or below PyTorch's time (ratio <= 1.0, median of three runs)
TARGETS = dict.fromkeys(WORKLOADS, 1.0)


DOC = Path(__file__).resolve().parents[1] / "docs" / "performance.md"


def documented_ratios(doc: Path = DOC) -> dict[str, float]:
    """``{workload: ratio}`` from the table of the "Framework speed" section of ``doc``: the
    first Markdown table there whose header has a ``workload`` and a ``ratio`` column (a ratio
    cell starts with the number; anything after it, e.g. per-run ratios, is ignored)."""
    text = doc.read_text(encoding="utf-8")
    start = text.index("## Framework speed")
    end = text.find("\n## ", start + 1)
    out: dict[str, float] = {}
    header: list[str] | None = None
    for line in text[start:end if end > 0 else None].splitlines():
        if not line.startswith("|"):
            if header is not None:
                break  # the table ended: later tables of the section are other figures
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            if "workload" in cells and "ratio" in cells:
                header = cells
            continue
        if set(line) <= set("|-: "):
            continue
        name = cells[header.index("workload")].strip("`")
        match = re.match(r"[0-9.]+", cells[header.index("ratio")])
        if name in WORKLOADS and match:
            out[name] = float(match.group())
        elif out:
            break
    if not out:
        raise ValueError(f"{doc}: no 'workload | ... | ratio' table in its Framework speed "
                         "section")
    return out


# ----------------------------------------------------------------------------- timing
CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def time_pair(ours: Step, theirs: Step, steps: int, warmup: int,
              clock: Callable[[], float] = time.perf_counter) -> tuple[float, float]:
    """Median milliseconds of each step function, alternating them step by step."""
    for _ in range(warmup):
        ours()
        theirs()
    a: list[float] = []
    b: list[float] = []
    for i in range(steps):
        first, second = (ours, theirs) if i % 2 == 0 else (theirs, ours)
        t0 = clock()
        first()
        t1 = clock()
        second()
        t2 = clock()
        (a if first is ours else b).append(t1 - t0)
        (b if first is ours else a).append(t2 - t1)
    return statistics.median(a) * 1e3, statistics.median(b) * 1e3


def run(names: list[str], runs: int, steps: int, warmup: int,
        clock: str = "wall") -> dict[str, tuple[float, float, float]]:
    """``{workload: (tinytorch ms, torch ms, ratio)}``, each the median over the runs."""
    results: dict[str, tuple[float, float, float]] = {}
    for name in names:
        pair = WORKLOADS[name]()
        if pair is None:
            print(f"{name} missing", flush=True)
            continue
        per_run = []
        for r in range(runs):
            ours_ms, torch_ms = time_pair(*pair, steps=steps, warmup=warmup,
                                          clock=CLOCKS[clock])
            per_run.append((ours_ms, torch_ms))
            print(f"  run {r + 1}: {name} tinytorch_ms={ours_ms:.3f} torch_ms={torch_ms:.3f} "
                  f"ratio={ours_ms / torch_ms:.2f}", file=sys.stderr, flush=True)
        ours_ms = statistics.median(p[0] for p in per_run)
        torch_ms = statistics.median(p[1] for p in per_run)
        ratio = statistics.median(p[0] / p[1] for p in per_run)
        results[name] = (ours_ms, torch_ms, ratio)
        target = TARGETS.get(name)
        note = "" if target is None else f"  (target <= {target})"
        print(f"{name} tinytorch_ms={ours_ms:.3f} torch_ms={torch_ms:.3f} ratio={ratio:.2f}"
              f"{note}", flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", default=list(WORKLOADS),
                        help=f"workloads (default all): {', '.join(WORKLOADS)}")
    parser.add_argument("--runs", type=int, default=3, help="runs; medians over runs")
    parser.add_argument("--steps", type=int, default=100, help="timed steps per run (>= 20)")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                        help="wall: wall-clock time (default); cpu: process CPU time")
    parser.add_argument("--guard", type=float, metavar="FACTOR",
                        help="exit 1 when a ratio exceeds FACTOR times docs/performance.md's")
    parser.add_argument("--doc", type=Path, default=DOC, help="the table --guard reads")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workload(s): {', '.join(unknown)}")
    if args.steps < (5 if args.guard else 20):
        parser.error(f"--steps must be at least {5 if args.guard else 20}")
    recorded = documented_ratios(args.doc) if args.guard else {}
    print(f"# load average before: {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
    results = run(args.names, args.runs, args.steps, args.warmup, args.clock)
    print(f"# load average after: {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
    if args.guard is None:
        return 0
    bad = []
    for name in args.names:
        if name not in recorded:
            continue
        if name not in results:
            bad.append(f"{name}: recorded in {args.doc.name} but missing here")
            continue
        limit = args.guard * recorded[name]
        ratio = results[name][2]
        verdict = "ok" if ratio <= limit else "REGRESSED"
        print(f"guard {name} ratio={ratio:.2f} recorded={recorded[name]:.2f} "
              f"limit={limit:.2f} {verdict}", flush=True)
        if ratio > limit:
            bad.append(f"{name}: ratio {ratio:.2f} > {args.guard:g} x the recorded "
                       f"{recorded[name]:.2f}")
    for line in bad:
        print(f"FAIL {line}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
