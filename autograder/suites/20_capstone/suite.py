"""Hidden suite · module 20 (capstone: the Torch Olympics). Cases are probes; the parent decides.

Thirteen cases compare with the reference's answers; two are the events, each timed by the
parent (``Timing``: :mod:`autograder.harness.timing`) and each with its own leaderboard
columns (``suite.leaderboard``):

* ``olympics_event``, the digits sprint: the child trains the digits baseline, runs the
  student's ``optimize`` with their ``OLYMPICS_RECIPE`` and writes the submission's benchmark
  report with the student's ``olympics_report`` (module 19's harness and ``save_report``), and
  commits both models' arrays and the report; nothing is timed in the child. The trusted parent
  measures both models itself: held-out digits accuracy by a NumPy forward pass, bytes from the
  arrays at itemsizes it fixes (the baseline's bytes are the reference's float32 model's), and
  the speed-up by timing, from outside, queries of 32 fresh digits it draws after the commit,
  answered by the submission's optimised model in the child and by the reference's own
  baseline in the trusted twin; each run's answers must be the committed model's. It grades
  them against course.yml's ``targets``, checks the report with the reference's schema
  validator and against its own measurement of both models on the report's digits, and
  publishes the checked report in the test's results (``publish``).
* ``tinygpt_event``, the TinyGPT sprint: the child optimises the course's trained TinyGPT with
  the student's ``optimize_gpt`` and ``GPT_RECIPE``, generates a greedy continuation of the
  variant's prompt with the student's ``generate_greedy``, and commits the optimised model's
  arrays and that text. The parent checks the text against its own forward pass of the
  committed arrays (exact output) and the committed model's held-out perplexity against the
  original's (course.yml ``gpt_max_perplexity_increase``), then times greedy generation on
  prompts it draws after the commit: the student's in the child, module 13's plain
  ``generate`` of the original TinyGPT by the reference in the twin; every timed run's text
  must be the committed model's greedy text. Tokens per CPU-second and the speed-up go to the
  leaderboard, from plausible measurements only.

Points sum to 50.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from autograder.milestones.data import loaders
from autograder.milestones.gpt_forward import BadParameters, gpt_logits, gpt_shapes
from autograder.suite import Baseline, Run, Suite, Timed, TimedResult, Timing, outcome

suite = Suite(module="20_capstone", version="2027.6", needs_course_data=True,
              needs_report_schema=True)
case = suite.case
DOMINATES = suite.unit("dominates", "dominates")
PARETO = suite.unit("pareto_front", "pareto_front", uses=(DOMINATES,))
SCORE = suite.unit("olympics_score", "olympics_score")
LEADERBOARD = suite.unit("leaderboard", "leaderboard", uses=(SCORE,))
STORAGE = suite.unit("storage_bytes", "storage_bytes")
# one case grades both: the layer's fold refuses what exact_in_float32 says is not exact
BLAS = suite.unit("BlasQuantizedLinear", "exact_in_float32", "BlasQuantizedLinear")
# The cases of blas_engine, optimize and FusedMLP run the student's own units below them: a
# stand-in would put them in a later stage than the events (stage 0: the student's whole
# pipeline, like a milestone), which would then be the first to fail on their bugs; the
# catalogue declares those dependants (autograder/suites/20_capstone/bugs.py)
BLAS_ENGINE = suite.unit("blas_engine", "blas_engine")
OPTIMIZE = suite.unit("optimize", "optimize")
MEASURE = suite.unit("measure_entry", "measure_entry", uses=(STORAGE,))
EVENT = suite.unit("the Olympics event", "OLYMPICS_RECIPE", "olympics_report")
INT8_WEIGHTS = suite.unit("Int8WeightLinear", "Int8WeightLinear")
FUSED_MLP = suite.unit("FusedMLP", "FusedMLP", "linear_weight")
PERPLEXITY = suite.unit("perplexity", "perplexity")
GPT_EVENT = suite.unit("the TinyGPT event", "GPT_RECIPE", "optimize_gpt", "generate_greedy")

#: Training digits for the event, read while the suite loads (before the sandbox); the held-out
#: digits are read only by the parent's check.
_DIGITS = loaders().load_digits()
TRAIN_X = (_DIGITS.train_x.reshape(len(_DIGITS.train_x), -1) / 16.0).astype(np.float32)
TRAIN_Y = _DIGITS.train_y.astype(np.int64)
del _DIGITS

RECIPE_KEYS = ("amount", "finetune_epochs", "lr", "calibration", "engine")
GPT_RECIPE_KEYS = ("int8_weights", "fused_gelu", "kv_cache")


def _targets() -> dict[str, float]:
    """The module's course.yml ``targets`` (read while the suite loads: the child needs the
    allowed accuracy drop for the report's gate before the sandbox closes the file system)."""
    from coursekit.course import load_course

    module = next(mod for mod in load_course().modules if mod.name == "20_capstone")
    return {k: float(module.targets[k]) for k in ("max_accuracy_drop", "min_size_ratio",
                                                  "max_speedup", "gpt_max_perplexity_increase",
                                                  "gpt_max_speedup")}


TARGETS = _targets()

#: The benchmark report's digits: ``REPORT_COPIES`` copies of the training digits, each with
#: fresh Gaussian pixel noise of standard deviation ``REPORT_NOISE`` (clipped to [0, 1], the
#: range the INT8 model was calibrated on), drawn from the event's seed. The models were not
#: trained on them, so their accuracies (about 88 %) differ between variants and, in most
#: variants, between the float and the INT8 model. The parent rebuilds them from the
#: reference's seed for the variant, never the child's.
REPORT_NOISE, REPORT_COPIES = 0.25, 2
REPORT_RUNS, REPORT_QUERIES = 3, 64  # the report's run_scenario runs and single-stream queries
REPORT_SYSTEM = "autograder sandbox"
#: The report file's text may be this long (a report of two results is about 1,500 characters).
MAX_REPORT_CHARS = 20_000
#: The report's fields besides the results, and each result's (what make_report and
#: run_scenario write: nothing else may travel to results.json).
REPORT_KEYS = {"schema", "system", "model", "results"}
RESULT_KEYS = {"scenario", "status", "metric", "value", "ci", "confidence", "runs", "accuracy",
               "accuracy_target", "latency_ms"}
LATENCY_KEYS = {"count", "mean", "p50", "p90", "p99", "min", "max"}
MAX_TEXT = 200  # characters of a report string (system.*, model)

#: The speed-up: ``PAIRS`` pairs of runs, alternating which model runs first; a run answers
#: ``QUERIES`` queries of ``QUERY_BATCH`` digits (a server answering batched requests: 2,048
#: digits), fresh for each pair. The parent sends only indices, which the work turns into digits
#: (:func:`_digits_of`: a training digit plus two rows of a fixed noise bank, about 0.07 us a
#: digit to build, where sending the digits themselves cost 0.35 us, a third of the float
#: model's own time a digit at this batch size); the answers come back as classes (2 KB). The
#: parent times each run from outside (the process tree's CPU clocks, nanoseconds): the
#: baseline's ~2.3 ms, the BLAS engine's ~2.2 ms, module 15's int32 engine's ~12 ms.
PAIRS = 15
QUERY_BATCH = 32
QUERIES = 64
#: A query's CPU time below this is not a forward pass of the model (one Python call into NumPy
#: costs more): the measurement is implausible and nothing is published.
MIN_QUERY_S = 1e-6
#: The noise bank of the timed digits: 4,096 rows of Gaussian pixel noise whose sum of two has
#: standard deviation ``REPORT_NOISE``. A digit is ``clip(train digit + bank[a] + bank[b])``
#: with ``a``, ``b`` and the digit drawn by the parent: 24 billion combinations, so no table of
#: answers can be made in advance, and no two digits of one run are likely to be the same.
NOISE_BANK = np.random.default_rng(20).normal(
    0.0, REPORT_NOISE / math.sqrt(2.0), (4096, 64)).astype(np.float32)
#: Bytes per element the event counts for each array of a state, by the last part of its name:
#: the dtypes the course's models store (float32 weights, biases and scales; 8-bit quantized
#: weights and zero points), whatever dtype the arrays were sent in, so neither a float16 copy
#: nor a float64 or float128 baseline moves the compression.
ITEMSIZE = {"weight": 4, "bias": 4, "weight_scale": 4, "input_scale": 4, "qweight": 1,
            "weight_zero_point": 1, "input_zero_point": 1}


def _module(tt):
    """The module file under test (``tt`` is the package: the student's or the reference)."""
    return importlib.import_module(f"{tt.__name__}.capstone")


def _entry(rng, acc=None, lat=None, size=None):
    return {"accuracy": float(rng.choice([0.9, 0.95, 0.97]) if acc is None else acc),
            "latency_ms": float(rng.choice([0.5, 1.0, 2.0]) if lat is None else lat),
            "bytes": float(rng.choice([100.0, 400.0, 1600.0]) if size is None else size)}


def _blobs(tt, rng, n=480, features=16, classes=3):
    centers = rng.standard_normal((classes, features)).astype(np.float32) * 3
    y = rng.integers(0, classes, n).astype(np.int64)
    x = (centers[y] + rng.standard_normal((n, features))).astype(np.float32)
    tt.manual_seed(int(rng.integers(0, 1000)))
    model = tt.nn.Sequential(tt.nn.Linear(features, 32), tt.nn.ReLU(), tt.nn.Linear(32, classes))
    return model, x, y


# ----------------------------------------------------------------------------- the frontier
@case(unit=DOMINATES, points=4,
      hint="dominates: at least as good in all three (accuracy higher, latency and bytes lower) "
           "and strictly better in one; equal entries do not dominate.",
      stated={
          "dominates": (
              'a, b: mappings with ``"accuracy"`` (higher is better), ``"latency_ms"`` and ``"bytes"`` (lower is better).',
              "True when ``a`` is at least as good as ``b`` in all three objectives and strictly better in at least one.",
          ),
      })
def dominates_pairs(tt, rng):
    m = _module(tt)
    entries = [_entry(rng) for _ in range(12)]
    out = [bool(m.dominates(a, b)) for a in entries for b in entries]
    base = _entry(rng)
    for key, worse in (("accuracy", base["accuracy"] - 0.01),
                       ("latency_ms", base["latency_ms"] * 2), ("bytes", base["bytes"] * 2)):
        other = dict(base, **{key: worse})
        out += [bool(m.dominates(base, other)), bool(m.dominates(other, base))]
    return out


@case(unit=PARETO, points=4,
      hint="pareto_front: keep an entry when no entry dominates it; input order; equal entries "
           "both stay; an empty list has an empty front.",
      stated={
          "pareto_front": (
              "Indices of the entries that no other entry dominates, in input order.",
              "the front of an empty list is empty; equal entries both stay.",
          ),
      })
def pareto_front_indices(tt, rng):
    m = _module(tt)
    fronts = []
    for n in (1, 5, 20):
        entries = [_entry(rng) for _ in range(n)]
        entries.insert(int(rng.integers(0, n + 1)), dict(entries[0]))  # a duplicate
        fronts.append([int(i) for i in m.pareto_front(entries)])
    spread = [_entry(rng, acc=float(rng.uniform(0.8, 1.0)), lat=float(rng.uniform(0.1, 5)),
                     size=float(rng.uniform(10, 2000))) for _ in range(int(rng.integers(8, 40)))]
    fronts.append([int(i) for i in m.pareto_front(spread)])
    fronts.append(list(m.pareto_front([])))
    return fronts


# ----------------------------------------------------------------------------- the score
@case(unit=SCORE, points=4,
      hint="olympics_score: 0 below baseline accuracy minus the drop (with a 1e-9 tolerance: an "
           "accuracy exactly at the bound passes); else sqrt(speed-up x compression).",
      stated={
          "olympics_score": (
              '``0.0`` when ``entry["accuracy"] < baseline["accuracy"] - max_accuracy_drop``; otherwise ``sqrt((baseline latency / entry latency) * (baseline bytes / entry bytes))`` as a Python float.',
              '``entry["accuracy"] + 1e-9 < baseline["accuracy"] - max_accuracy_drop``, so that an accuracy exactly at the bound passes despite float rounding',
              "max_accuracy_drop: the accuracy an entry may lose (0.01 = one point).",
          ),
      })
def olympics_score_values(tt, rng):
    m = _module(tt)
    base = _entry(rng, acc=0.97)
    out = []
    for _ in range(6):
        e = _entry(rng, acc=float(rng.choice([0.955, 0.962, 0.97, 0.99])),
                   lat=float(rng.uniform(0.1, 5)), size=float(rng.uniform(10, 2000)))
        out.append(float(m.olympics_score(e, base)))
        out.append(float(m.olympics_score(e, base, max_accuracy_drop=0.02)))
    out.append(float(m.olympics_score(dict(base, accuracy=0.96), base)))  # exactly at the bound
    out.append(float(m.olympics_score(dict(base), base)))
    low = _entry(rng, acc=0.13)  # 0.13 - 0.01 = 0.12000000000000001: the tolerance matters
    out.append(float(m.olympics_score(dict(low, accuracy=0.12), low)))
    half = _entry(rng, acc=0.5)  # accuracy + 1e-9 lands exactly on the bound 0.25: passes
    out.append(float(m.olympics_score(dict(half, accuracy=0.25 - 1e-9), half,
                                      max_accuracy_drop=0.25)))
    return out


@case(unit=SCORE, points=2,
      hint="olympics_score: a latency or byte count that is not positive, in the entry or the "
           "baseline, is not a measurement: raise ValueError.",
      stated={
          "olympics_score": (
              "ValueError: a latency or a byte count that is not positive (in either entry).",
              "Refuse ``latency_ms <= 0`` or ``bytes <= 0`` in ``entry`` or ``baseline``",
          ),
      })
def olympics_score_refuses_non_positive(tt, rng):
    m = _module(tt)
    base = _entry(rng)
    good = _entry(rng, acc=base["accuracy"], lat=float(rng.uniform(0.1, 5)),
                  size=float(rng.uniform(10, 2000)))  # a valid pair first: its score varies per variant
    bad = [0.0, -float(rng.uniform(0.5, 100.0))]
    order = rng.permutation(4)
    calls = [(dict(base, latency_ms=bad[int(rng.integers(2))]), base),
             (dict(base, bytes=bad[int(rng.integers(2))]), base),
             (base, dict(base, latency_ms=bad[int(rng.integers(2))])),
             (base, dict(base, bytes=bad[int(rng.integers(2))]))]
    return [float(m.olympics_score(good, base))] + [outcome(m.olympics_score, *calls[i])
                                                    for i in order]


@case(unit=LEADERBOARD, points=3, rtol=0.0, atol=1e-12,
      hint="leaderboard: four dicts in order: score (4 decimals, desc), accuracy in % (2, desc), "
           "speed-up = baseline latency / latency (4, desc), size in KB = bytes / 1024 (2, asc).",
      stated={
          "leaderboard": '``{"name": "Olympics score", "value": olympics_score(...) rounded to 4 decimals, "order": "desc"}``, ``{"name": "Accuracy (%)", "value": 100 * accuracy rounded to 2, "order": "desc"}``, ``{"name": "Speed-up", "value": baseline latency / entry latency rounded to 4, "order": "desc"}``, ``{"name": "Size (KB)", "value": bytes / 1024 rounded to 2, "order": "asc"}`` — every value a Python float.',
      })
def leaderboard_entries(tt, rng):
    m = _module(tt)
    base = _entry(rng, acc=0.97)
    out = []
    for acc in (float(rng.uniform(0.9, 0.95)), float(rng.uniform(0.961, 0.99))):
        e = _entry(rng, acc=acc, lat=float(rng.uniform(0.1, 5)), size=float(rng.uniform(10, 5000)))
        out.append([(str(d["name"]), float(d["value"]), str(d["order"]))
                    for d in m.leaderboard(e, base)])
    return out


# ----------------------------------------------------------------------------- storage
@case(unit=STORAGE, points=4,
      hint="storage_bytes: per 2-D array: min(dense nbytes, nnz * (itemsize + index bytes) + "
           "(rows + 1) * 4), index bytes 1 up to 256 columns else 2; other arrays dense.",
      stated={
          "storage_bytes": (
              "model: any module; its ``state_dict()`` (parameters and buffers) is what is stored.",
              "The sum over the state's arrays ``a`` of: ``a.nbytes`` when ``a.ndim != 2``; otherwise ``min(a.nbytes, nnz * (a.itemsize + idx) + (rows + 1) * 4)`` with ``nnz`` the non-zero count, ``idx = 1`` when ``a.shape[1] <= 256`` else ``2``, and ``rows = a.shape[0]``.",
              "return an ``int``.",
          ),
      })
def storage_bytes_dense_and_csr(tt, rng):
    m = _module(tt)
    out = []
    tt.manual_seed(int(rng.integers(0, 1000)))
    for rows, cols, zeros in ((8, 16, 0.0), (32, 64, 0.5), (4, 300, 0.9), (10, 256, 0.8),
                              (6, 257, 0.8)):
        lin = tt.nn.Linear(cols, rows)
        mask = rng.random((rows, cols)) < zeros
        lin.weight.data[mask] = 0.0
        out.append(int(m.storage_bytes(lin)))
        q = tt.ao.quantization.QuantizedLinear.from_float(lin)
        out.append(int(m.storage_bytes(q)))
    return out


# ----------------------------------------------------------------------------- INT8 on BLAS
def _static_layer(tt: Any, rng: np.random.Generator, in_features: int, out_features: int,
                  bias: bool = True) -> Any:
    """A static module-15 layer of a random Linear: per-channel weights, an input scale and
    zero point drawn from ``rng``."""
    lin = tt.nn.Linear(in_features, out_features, bias=bias)
    lin.weight.data[...] = rng.standard_normal(lin.weight.shape) * float(rng.uniform(0.05, 2))
    scale = float(rng.uniform(0.002, 0.05))
    return tt.ao.quantization.QuantizedLinear.from_float(
        lin, input_qparams=(scale, int(rng.integers(0, 256))))


@case(unit=BLAS, points=4, hint="exact_in_float32: terms * x_max * w_max <= 2**24 (ValueError when "
                     "negative). BlasQuantizedLinear.fold: refuse a dynamic or inexact layer "
                     "(ValueError); weight_t = (qweight - zero points) as float32, transposed; "
                     "inv_scale = float32(1) / float32(s); zero; out_scale = float32(s) * "
                     "weight_scale. forward: rint(x * inv_scale + zero), clip to [0, 255], "
                     "minus zero, @ weight_t, * out_scale, + bias, max(., 0) with relu: module "
                     "15's output bit for bit.", rtol=0.0, atol=0.0,
      stated={
          "exact_in_float32": (
              "True when the largest possible sum, ``terms * x_max * w_max``, is at most ``FLOAT32_EXACT``",
              "ValueError: a negative argument.",
              "Raise ``ValueError`` if ``terms``, ``x_max`` or ``w_max`` is negative.",
              "Return ``terms * x_max * w_max <= FLOAT32_EXACT`` (Python integers, exact).",
              ">>> exact_in_float32(64), exact_in_float32(514), exact_in_float32(515) (True, True, False)",
          ),
          "BlasQuantizedLinear": (
              "Module 15's static ``QuantizedLinear``, computed with float32 BLAS: the same buffers and, bit for bit, the same outputs; ``relu=True`` fuses a following ReLU.",
              "Attributes (set by ``fold``, never stored: they are not buffers):",
              "weight_t: ``(in, out)`` float32, the weight integers minus their zero points; inv_scale: ``float32(1) / float32(input_scale)``; zero: the input zero point as float32; out_scale: ``(out,)`` float32, ``float32(input_scale) * weight_scale``.",
          ),
          "BlasQuantizedLinear.fold": (
              "ValueError: a dynamic layer (``input_scale`` is None: its input scale changes with every batch, so nothing can be folded), or a layer whose sums are not exact in float32 (``exact_in_float32(in_features, 255, largest |weight integer|)`` is False).",
              "``self.weight_t = np.ascontiguousarray(wi.T.astype(np.float32))`` — ``(in, out)``.",
              "``s = np.float32(self.input_scale.data[0])``; ``self.inv_scale = np.float32(1.0) / s``; ``self.zero = np.float32(self.input_zero_point.data[0])``; ``self.out_scale = s * self.weight_scale.data`` (float32, ``(out,)``).",
          ),
          "BlasQuantizedLinear.forward": (
              "Module 15's static ``forward``, bit for bit, with float32 BLAS; ReLU if ``relu``.",
              "``out *= self.out_scale``; add the bias (``out += self.bias.data``) if there is one; with ``relu``: ``np.maximum(out, 0.0, out=out)``;",
          ),
      })
def blas_layer_exact(tt, rng):
    m = _module(tt)
    k = int(rng.integers(1, 514))
    w = int(rng.integers(1, 128))
    bounds: list[Any] = [bool(m.exact_in_float32(t))
                         for t in (k, 514, 515, int(rng.integers(516, 5000)))]
    edge = (2 ** 24) // (255 * w)
    bounds += [bool(m.exact_in_float32(edge, 255, w)), bool(m.exact_in_float32(edge + 1, 255, w))]
    bounds.append(outcome(m.exact_in_float32, -int(rng.integers(1, 9))))
    # a product of exactly 2**24 is exact; zero sizes are fine, a negative size of any
    # argument is refused
    xm, wm = 2 ** int(rng.integers(1, 9)), 2 ** int(rng.integers(0, 8))
    bounds += [bool(m.exact_in_float32(2 ** 24 // (xm * wm), xm, wm)),
               bool(m.exact_in_float32(2 ** 24 // (xm * wm) + 1, xm, wm)),
               bool(m.exact_in_float32(0, 255, w)), bool(m.exact_in_float32(k, 0, 0)),
               outcome(m.exact_in_float32, k, -int(rng.integers(1, 9)), w),
               outcome(m.exact_in_float32, k, 255, -int(rng.integers(1, 9)))]
    tt.manual_seed(int(rng.integers(0, 1000)))
    n_in, n_out = int(rng.integers(4, 80)), int(rng.integers(2, 20))
    q = _static_layer(tt, rng, n_in, n_out, bias=bool(rng.integers(0, 2)))
    relu = bool(rng.integers(0, 2))
    fast = m.BlasQuantizedLinear.from_quantized(q, relu=relu)
    x = (rng.standard_normal((int(rng.integers(1, 9)), n_in)) * 0.5).astype(np.float32)
    out = np.asarray(fast(tt.Tensor(x)).data)
    # the other relu setting on the same layer: both must match module 15 (and its ReLU)
    other = np.asarray(m.BlasQuantizedLinear.from_quantized(q, relu=not relu)(tt.Tensor(x)).data)
    dynamic = tt.ao.quantization.QuantizedLinear.from_float(tt.nn.Linear(n_in, n_out))
    wide = _static_layer(tt, rng, int(rng.integers(600, 900)), 2)
    return {"bounds": bounds, "out": out, "other_relu": other, "dtype": str(out.dtype),
            "relu": relu,
            "weight_t": np.asarray(fast.weight_t), "inv_scale": float(fast.inv_scale),
            "zero": float(fast.zero), "out_scale": np.asarray(fast.out_scale),
            "state": sorted(fast.state_dict()),
            "dynamic": outcome(m.BlasQuantizedLinear.from_quantized, dynamic),
            "wide": outcome(m.BlasQuantizedLinear.from_quantized, wide)}


@case(unit=BLAS_ENGINE, points=3, hint="blas_engine: a deep copy; each module-15 QuantizedLinear becomes "
                     "BlasQuantizedLinear.from_quantized; with fuse_relu, one directly followed "
                     "by a ReLU in a Sequential takes relu=True and the ReLU becomes an Identity "
                     "(add_module, names kept); the model passed in is left as it was.",
      stated={
          "blas_engine": (
              "every module-15 ``QuantizedLinear`` becomes a ``BlasQuantizedLinear``; with ``fuse_relu``, one directly followed by a ``ReLU`` in the same ``Sequential`` takes it in (``relu=True``) and the ``ReLU`` becomes an ``Identity``.",
              "model: a model with static module-15 ``QuantizedLinear`` layers (left unchanged).",
              "The lowered copy (the same layer names, hence the same ``state_dict``).",
              "``out = copy.deepcopy(model)``; if ``type(out) is QuantizedLinear``, return ``BlasQuantizedLinear.from_quantized(out)``.",
              "``fuse = fuse_relu and isinstance(module, Sequential)`` and the next child (``names[i + 1]``, if any) is exactly a ``ReLU``",
          ),
      })
def blas_engine_lowering(tt, rng):
    m = _module(tt)
    tt.manual_seed(int(rng.integers(0, 1000)))
    # 3 or 4 layers; a ReLU after layers 0 and 2 and, at random, after the last: layer 1 is
    # followed by a Linear, which no fusion may take
    sizes = [int(v) for v in rng.integers(3, 24, int(rng.integers(4, 6)))]
    layers: list[Any] = []
    for i in range(len(sizes) - 1):
        layers.append(tt.nn.Linear(sizes[i], sizes[i + 1]))
        if (i % 2 == 0 and i < len(sizes) - 2) or (i == len(sizes) - 2 and rng.integers(0, 2)):
            layers.append(tt.nn.ReLU())
    model = tt.nn.Sequential(*layers)
    calib = rng.random((32, sizes[0]), dtype=np.float32)
    q = tt.ao.quantization.quantize_model(model, [calib])
    x = tt.Tensor(rng.random((5, sizes[0]), dtype=np.float32))
    out: dict[str, Any] = {}
    for fuse in (True, False):
        lowered = m.blas_engine(q, fuse_relu=fuse)
        with tt.no_grad():
            y = np.asarray(lowered(x).data)
        out[f"fuse={fuse}"] = {
            "kinds": [type(mod).__name__ for mod in lowered.modules()],
            "relu": [bool(getattr(mod, "relu", False)) for mod in lowered.modules()],
            "state": sorted(lowered.state_dict()), "out": y}
    # a Sequential whose last child is a layer (nothing after it to fuse)
    tail = tt.ao.quantization.quantize_model(
        tt.nn.Sequential(tt.nn.Linear(sizes[0], 4), tt.nn.ReLU(), tt.nn.Linear(4, 3)), [calib])
    return {**out, "original": [type(mod).__name__ for mod in q.modules()],
            "single": type(m.blas_engine(_static_layer(tt, rng, 5, 3))).__name__,
            "tail": [type(mod).__name__ for mod in m.blas_engine(tail).modules()]}


# ----------------------------------------------------------------------------- the pipeline
@case(unit=OPTIMIZE, points=5, atol=0.04,
      hint="optimize: prune_model(amount, 'global') -> fine-tune with Adam (masks in place) -> "
           "strip_masks -> quantize_model with train_x[:calibration] -> blas_engine for engine "
           "'blas' (as is for 'int32'; another engine is a ValueError); the float model must not "
           "change.",
      stated={
          "optimize": (
              "An INT8, pruned, fine-tuned copy of a trained float ``model`` (left unchanged).",
              "calibration: the first ``calibration`` rows of ``train_x`` calibrate the INT8 inputs.",
              "engine: ``\"blas\"`` (section 4's ``blas_engine``, ReLUs fused) or ``\"int32\"`` (module 15's layers as they are).",
              "The quantized model (``QuantizedLinear`` layers, or their ``BlasQuantizedLinear`` copies) in eval mode.",
              "ValueError: another ``engine`` (naming the two allowed).",
              "Refuse an unknown ``engine`` first (before any work).",
              '``pruned = prune_model(model, amount, scope="global")`` (a copy); ``pruned.train()``.',
              "``quantized = quantize_model(plain, [train_x[:calibration]])``",
          ),
      })
def optimize_pipeline(tt, rng):
    m = _module(tt)
    model, x, y = _blobs(tt, rng)
    opt = tt.optim.Adam(model.parameters(), lr=1e-2)
    loss_fn = tt.nn.CrossEntropyLoss()
    for _ in range(30):
        opt.zero_grad()
        loss_fn(model(tt.Tensor(x)), tt.Tensor(y)).backward()
        opt.step()
    before = [p.data.copy() for p in model.parameters()]
    amount = float(rng.choice([0.5, 0.7]))
    engine = str(rng.choice(["blas", "int32", "default"]))
    kwargs = {} if engine == "default" else {"engine": engine}
    q = m.optimize(model, x, y, amount=amount, finetune_epochs=2, calibration=64,
                   seed=int(rng.integers(0, 100)), **kwargs)
    kinds = [type(mod).__name__ for mod in q.modules()]
    refused = outcome(m.optimize, model, x, y, amount=0.0, finetune_epochs=0, calibration=8,
                      engine=str(rng.choice(["int8", "float16", "BLAS"])))
    layers = [mod for mod in q.modules()
              if isinstance(mod, tt.ao.quantization.QuantizedLinear)]
    weights = np.concatenate([mod.qweight.data.ravel() for mod in layers]) if layers else \
        np.zeros(0)
    with tt.no_grad():
        acc = float(np.mean(q(tt.Tensor(x)).numpy().argmax(axis=1) == y))
    unchanged = all(np.array_equal(b, p.data)
                    for b, p in zip(before, model.parameters(), strict=True))
    statics = [mod.input_scale is not None for mod in layers]
    # the first layer's static input scale comes from the calibration rows: it differs per
    # variant (so a constant answer cannot pass) and shows which rows calibrated the model;
    # six decimals, because the rest of the answer varies little: at three, two of 64 variants
    # collided for one salt (the comparison's atol decides a pass, not the rounding)
    scale = layers[0].input_scale if layers and statics[0] else 0.0
    return {"layers": len(layers), "dtype": str(weights.dtype), "unchanged": bool(unchanged),
            "static": statics, "input_range": round(255.0 * float(
                np.asarray(getattr(scale, "data", scale)).reshape(-1)[0]), 6),
            "sparsity": round(float(np.mean(weights == 0)), 2),
            "accuracy": round(acc, 2), "training": bool(q.training),
            "engine": engine, "kinds": kinds, "refused": refused}


@case(unit=MEASURE, points=3,
      hint="measure_entry: accuracy from one untimed forward pass over all of x; latency_ms = "
           "1000 x the median of `repeats` timer() differences around one query, "
           "model(Tensor(x[:batch])) (all of x when batch is None); bytes = storage_bytes(model).",
      stated={
          "measure_entry": (
              "batch: the rows of one query, ``x[:batch]`` (the event's queries hold 32 digits); None: all of ``x`` at once.",
              "``accuracy``: the share of ``argmax(model(x), axis=1) == y`` over all of ``x``; ``latency_ms``: 1000 × the **median** of ``repeats`` timings of one query, ``model(Tensor(x[:batch]))``; ``bytes``: ``storage_bytes(model)`` — all Python numbers.",
              "``out = model(Tensor(x))`` (untimed; also warms up) -> accuracy;",
              "``query = Tensor(x if batch is None else x[:batch])``, once; ``repeats`` times: ``t0 = timer()``, ``model(query)``, append ``timer() - t0``;",
          ),
      })
def measure_entry_with_a_fake_clock(tt, rng):
    m = _module(tt)
    tt.manual_seed(int(rng.integers(0, 1000)))
    lin = tt.nn.Linear(4, 3)
    lin.weight.data[:, 1:] = 0.0  # sparse: CSR storage is smaller than dense
    x = rng.standard_normal((20, 4)).astype(np.float32)
    y = rng.integers(0, 3, 20)
    repeats = int(rng.integers(3, 8))
    steps = rng.uniform(0.001, 0.01, 2 * repeats + 10)
    clock = iter(np.cumsum(steps).tolist())
    entry = m.measure_entry(lin, x, y, repeats=repeats, timer=lambda: next(clock))

    base_module: Any = tt.nn.Module

    class Rows(base_module):  # records the rows of every call
        def __init__(self, inner):
            super().__init__()
            self.inner, self.rows = inner, []

        def forward(self, t):
            self.rows.append(int(t.shape[0]))
            return self.inner(t)

    spy = Rows(lin)
    batch = int(rng.integers(2, 12))
    again = m.measure_entry(spy, x, y, repeats=3, timer=lambda: next(clock), batch=batch)
    return {**{k: float(v) for k, v in entry.items()},
            "batched": {k: float(v) for k, v in again.items()}, "rows": spy.rows}


# ----------------------------------------------------------------------------- the event
def _baseline(tt, seed: int) -> Any:
    training = importlib.import_module(f"{tt.__name__}.training")
    tt.manual_seed(seed)
    model = tt.nn.Sequential(tt.nn.Linear(64, 64), tt.nn.ReLU(), tt.nn.Linear(64, 10))
    opt, loss_fn = tt.optim.Adam(model.parameters(), lr=3e-3), tt.nn.CrossEntropyLoss()
    rng = np.random.default_rng(seed)
    for _ in range(30):
        for xb, yb in training.iterate_minibatches(TRAIN_X, TRAIN_Y, 32, rng=rng):
            opt.zero_grad()
            loss_fn(model(tt.Tensor(xb)), tt.Tensor(yb)).backward()
            opt.step()
    model.eval()
    return model


def _state(model: Any) -> dict[str, np.ndarray]:
    return {str(k): np.array(np.asarray(v)) for k, v in model.state_dict().items()}


def _unwrap(got: Any) -> tuple[Any, Any]:
    """``(committed value, the parent's timing summary or None)`` of an event's result."""
    if isinstance(got, TimedResult):
        return got.value, got.timing
    return got, None


def _olympics_measure(got: Any, expected: Any) -> dict[str, Any]:
    """Parent side: accuracy and bytes of both models, and the speed-up, from the committed
    arrays and the parent's own timings. The baseline is the reference's float32 model for the
    variant (``expected``), never the child's; ``speedup`` is None (with ``speed_note``) when
    nothing was timed or the timing is implausible."""
    from autograder.milestones import mlperf  # trusted parent only (never called in the child)

    value, timing = _unwrap(got)
    if not isinstance(value, dict):
        raise ValueError("the event sent no results")
    if not isinstance(expected, dict) or not isinstance(expected.get("baseline"), dict):
        raise ValueError("no reference baseline for this variant (an autograder problem)")
    x, y = _held_out_digits()
    ref = expected["baseline"]
    base_acc = float(np.mean(mlperf.mlp_predict(mlperf.float_layers(ref, "baseline"), x) == y))
    sub = value.get("submitted")
    layers = _layers(sub)
    sub_acc = float(np.mean(mlperf.mlp_predict(layers, x) == y))
    speedup, note = _speedup(timing)
    return {"baseline": {"accuracy": base_acc, "bytes": _bytes(ref)},
            "submitted": {"accuracy": sub_acc, "bytes": _bytes(sub)},
            "speedup": speedup, "speed_note": note}


_HELD_OUT_DIGITS: list[tuple[np.ndarray, np.ndarray]] = []


def _held_out_digits() -> tuple[np.ndarray, np.ndarray]:
    """The held-out digits ``(360, 64)`` float32 in [0, 1] and their labels, read once per
    process (by the parent's first check; the child never reads them), read-only."""
    from autograder.milestones import mlperf  # trusted parent only

    if not _HELD_OUT_DIGITS:
        _, _, test_x, test_y = mlperf.task()
        x = (np.asarray(test_x, dtype=np.float32).reshape(len(test_x), -1) / 16.0)
        y = np.asarray(test_y, dtype=np.int64)
        x.flags.writeable = y.flags.writeable = False
        _HELD_OUT_DIGITS.append((x, y))
    return _HELD_OUT_DIGITS[0]


def _layers(state: Any) -> list[Any]:
    """The parent's layers of a committed optimised model (names, shapes, dtypes checked)."""
    from autograder.milestones import mlperf  # trusted parent only

    if isinstance(state, dict) and "0.qweight" in state:
        return mlperf.int8_layers(state)
    return mlperf.float_layers(state, "submitted model")


def _speedup(timing: Any) -> tuple[float | None, str]:
    """``(median of baseline / submitted CPU time per pair, "")``, or ``(None, why not)``:
    not timed, a run that failed, or a measurement that is not physically plausible (a query
    faster than :data:`MIN_QUERY_S`, a speed-up above course.yml's ``max_speedup``)."""
    if not isinstance(timing, dict):
        return None, "not timed in this run"
    if timing.get("problem"):
        return None, str(timing["problem"])
    base = np.asarray(timing.get("baseline_s"), dtype=np.float64)
    sub = np.asarray(timing.get("submitted_s"), dtype=np.float64)
    queries = int(timing.get("queries", 0))
    if base.ndim != 1 or base.shape != sub.shape or base.size == 0 or queries <= 0 \
            or not (np.all(np.isfinite(base)) and np.all(np.isfinite(sub))):
        return None, "the timing is incomplete"
    floor = queries * MIN_QUERY_S
    if np.any(sub < floor) or np.any(base < floor):
        return None, (f"a run of {queries} queries took less than {floor * 1e3:.2f} ms of CPU, "
                      "faster than any forward pass: implausible, nothing published")
    speed = float(np.median(base / sub))
    if speed > TARGETS["max_speedup"]:
        return None, (f"a speed-up of {speed:.1f}x is above the plausible "
                      f"{TARGETS['max_speedup']:g}x: nothing published")
    return speed, ""


def _bytes(state: Any) -> int:
    """The module's storage rule (dense or CSR per 2-D array) on the arrays of a state, at the
    itemsize the event fixes for each array's role (:data:`ITEMSIZE`), never the itemsize it was
    sent in; an integer array must fit in its bytes (a quantized weight in 8 bits)."""
    if not isinstance(state, dict):
        raise ValueError("the model state is not a mapping of arrays")
    total = 0
    for name, a in state.items():
        if not isinstance(a, np.ndarray) or a.dtype.kind not in "fiu":
            raise ValueError(f"{name} is not a numeric array")
        role = str(name).rpartition(".")[2]
        if role not in ITEMSIZE:
            raise ValueError(f"{name}: the event stores no array named {role!r}")
        size = ITEMSIZE[role]
        if a.dtype.kind in "iu" and a.size and (int(a.min()) < -128 or int(a.max()) > 255):
            raise ValueError(f"{name} holds values that do not fit in 8 bits")
        if a.ndim != 2:
            total += a.size * size
            continue
        idx = 1 if a.shape[1] <= 256 else 2
        total += min(a.size * size, int(np.count_nonzero(a)) * (size + idx)
                     + (a.shape[0] + 1) * 4)
    return int(total)


#: How far (relative Frobenius distance per array) the child's baseline may be from the one the
#: reference trains for this variant: rounding differences of correct earlier modules stay far
#: below it; a baseline from another seed (a precomputed answer) is ~1.4 away.
BASELINE_RTOL = 0.1


def _baseline_distance(got: Any, expected: Any) -> float:
    """The largest relative distance between the child's baseline arrays and the reference's."""
    mine, ref = got.get("baseline"), expected.get("baseline")
    if not isinstance(mine, dict) or not isinstance(ref, dict) or set(mine) != set(ref):
        return math.inf
    worst = 0.0
    for key, e in ref.items():
        a, e = np.asarray(mine[key], dtype=np.float64), np.asarray(e, dtype=np.float64)
        if a.shape != e.shape or not np.all(np.isfinite(a)):
            return math.inf
        scale = max(float(np.linalg.norm(e)), 1e-12)
        worst = max(worst, float(np.linalg.norm(a - e)) / scale)
    return worst


# ----------------------------------------------------------------------------- the report
def _report_digits(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The benchmark report's digits for the event's ``seed``: ``(N, 64)`` float32 in [0, 1]
    (the training digits plus noise) and their labels ``(N,)``; the child's and the parent's."""
    rng = np.random.default_rng([int(seed), 20])
    clean = np.concatenate([TRAIN_X] * REPORT_COPIES)  # (N, 64)
    noisy = clean + rng.normal(0.0, REPORT_NOISE, clean.shape)
    return (np.clip(noisy, 0.0, 1.0).astype(np.float32),
            np.concatenate([TRAIN_Y] * REPORT_COPIES))


#: How far (in logits) the child's forward pass may be from the parent's before a digit's class
#: is in doubt: float32 BLAS sums in another order than float64 (measured: 8e-6 at most on the
#: digits MLP), and the parent replays a static INT8 layer in module 15's own float32 steps
#: (bit for bit the reference's). A layer with dynamic (per-batch) input quantization depends on
#: the batches the harness sent, which the parent does not replay: its margin is wide.
LOGIT_TOL, DYNAMIC_LOGIT_TOL = 1e-4, 0.5


def _report_band(state: Any, x: np.ndarray, y: np.ndarray, what: str) -> tuple[int, int]:
    """``(sure, doubtful)``: digits the parent's own forward pass of a returned model gets right
    with a clear margin, and digits whose top two logits are too close to call. A faithful
    report's count of right answers lies in ``[sure, sure + doubtful]``."""
    from autograder.milestones import mlperf  # trusted parent only

    if isinstance(state, dict) and "0.qweight" in state:
        layers = mlperf.int8_layers(state)  # checks names, shapes and dtypes
        if all(layer[2] is not None for layer in layers):
            logits, tol = mlperf.int8_static_logits(state, x).astype(np.float64), LOGIT_TOL
        else:
            logits, tol = mlperf.mlp_logits(layers, x), DYNAMIC_LOGIT_TOL
    else:
        logits, tol = mlperf.mlp_logits(mlperf.float_layers(state, what), x), LOGIT_TOL
    top2 = np.sort(logits, axis=1)[:, -2:]  # (N, 2)
    doubtful = (top2[:, 1] - top2[:, 0]) <= tol
    right = logits.argmax(axis=1) == y
    return int(np.sum(right & ~doubtful)), int(np.sum(doubtful))


def _digits_of(request: Any) -> np.ndarray:
    """The digits a timed run answers: ``clip(TRAIN_X[rows] + NOISE_BANK[a] + NOISE_BANK[b],
    0, 1)`` ``(N, 64)`` float32 from the request's index arrays (the same code in the child,
    the twin and the parent)."""
    if not isinstance(request, dict) or set(request) != {"rows", "a", "b"}:
        raise ValueError("a timed request is {'rows', 'a', 'b'}")
    rows, a, b = (np.asarray(request[k]) for k in ("rows", "a", "b"))
    if any(v.dtype.kind not in "iu" or v.ndim != 1 or v.shape != rows.shape
           for v in (rows, a, b)):
        raise ValueError("a timed request holds three equally long 1-D integer arrays")
    x = TRAIN_X[rows] + NOISE_BANK[a]  # (N, 64)
    x += NOISE_BANK[b]
    return np.clip(x, 0.0, 1.0, out=x)


def _queries(tt: Any, model: Any) -> Any:
    """The timed work, the same code on both sides: a request -> the class of each of its
    digits ``(N,)`` uint8, answered in queries of ``QUERY_BATCH`` digits, one forward pass
    each."""

    def run(request: Any) -> np.ndarray:
        x = _digits_of(request)
        out = np.empty(len(x), dtype=np.uint8)
        with tt.no_grad():
            for i in range(0, len(x), QUERY_BATCH):
                logits = np.asarray(model(tt.Tensor(x[i:i + QUERY_BATCH])).data)
                out[i:i + QUERY_BATCH] = logits.argmax(axis=1)
        return out

    return run


def olympics_baseline(tt: Any, data: Any) -> dict[str, Any]:
    """The twin's work: the reference's float32 baseline for the variant (its arrays are
    ``data["state"]``) in the reference's own layers."""
    model = tt.nn.Sequential(tt.nn.Linear(64, 64), tt.nn.ReLU(), tt.nn.Linear(64, 10))
    for name, p in model.named_parameters():
        p.data = np.asarray(data["state"][name], dtype=np.float32).copy()
    model.eval()
    return {"queries": _queries(tt, model)}


def _fresh_request(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """``QUERIES * QUERY_BATCH`` digits the submission has never seen, as the indices
    :func:`_digits_of` reads: a training digit and two noise rows each, drawn by the parent."""
    n = QUERIES * QUERY_BATCH
    return {"rows": rng.integers(0, len(TRAIN_X), n).astype(np.uint16),
            "a": rng.integers(0, len(NOISE_BANK), n).astype(np.uint16),
            "b": rng.integers(0, len(NOISE_BANK), n).astype(np.uint16)}


def _committed_outputs_problem(state: Any, x: np.ndarray, classes: Any) -> str:
    """"" when a run's classes are the committed model's on ``x`` (every digit's, but those
    whose top two logits are too close to call), else what is wrong."""
    from autograder.milestones import mlperf  # trusted parent only

    if not isinstance(classes, np.ndarray) or classes.shape != (len(x),) \
            or classes.dtype.kind not in "iu":
        return f"a run sent no ({len(x)},) array of classes"
    layers = _layers(state)
    if all(len(layer) > 2 and layer[2] is not None for layer in layers):
        mine, tol = mlperf.int8_static_logits(state, x).astype(np.float64), LOGIT_TOL
    else:
        dynamic = any(len(layer) > 2 for layer in layers)
        mine, tol = mlperf.mlp_logits(layers, x), DYNAMIC_LOGIT_TOL if dynamic else LOGIT_TOL
    top2 = np.sort(mine, axis=1)[:, -2:]  # (N, 2)
    sure = (top2[:, 1] - top2[:, 0]) > tol
    wrong = int(np.sum(sure & (classes.astype(np.int64) != mine.argmax(axis=1))))
    if wrong:
        return (f"on {wrong} of {len(x)} of the grader's digits your optimised model's answer "
                "was not the committed model's: the timed model must be the one you submit")
    return ""


def olympics_plan(value: Any, expected: Any, rng: np.random.Generator) -> Any:
    """The parent's timing plan: the reference's baseline in the twin, the committed
    optimised model in the child, ``PAIRS`` pairs of ``QUERIES`` queries of ``QUERY_BATCH``
    fresh digits each, alternating which runs first; every run of the submission is checked
    against the committed model."""
    if not isinstance(expected, dict) or not isinstance(expected.get("baseline"), dict):
        return {"problem": "no reference baseline for this variant"}
    try:
        sub = value["submitted"]
        _layers(sub)
    except (KeyError, TypeError, ValueError) as exc:
        return {"problem": f"the optimised model cannot be timed: {exc}"}
    yield Baseline({"state": expected["baseline"]})
    base_s: list[float] = []
    sub_s: list[float] = []
    for i in range(PAIRS):
        request = _fresh_request(rng)
        got = {}
        for side in (("baseline", "submission") if i % 2 == 0 else ("submission", "baseline")):
            got[side] = yield Run(side, "queries", request)
        mine = got["submission"]
        if mine.implausible:
            return {"problem": f"implausible measurement: {mine.implausible}"}
        if mine.error:
            return {"problem": f"your optimised model raised {mine.error}"}
        wrong = _committed_outputs_problem(sub, _digits_of(request), mine.output)
        if wrong:
            return {"problem": wrong}
        base_s.append(got["baseline"].cpu_s)
        sub_s.append(mine.cpu_s)
    return {"baseline_s": base_s, "submitted_s": sub_s, "queries": QUERIES, "problem": ""}


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _report_check(got: Any, expected: Any) -> tuple[str, dict[str, Any] | None]:
    """``("", report)`` when the event's benchmark report holds; else ``(what is wrong, None)``.

    The report is the text of the file module 19's ``save_report`` wrote in the child. It must
    parse, pass schema ``tinytorch-benchmark/1`` by the reference's own ``validate_report``, be
    what ``olympics_report`` makes (two single-stream results, the grader's runs and queries,
    baseline first, positive latencies), and agree with the parent's own measurement of both
    returned models on the report's digits (rebuilt from the reference's seed for the variant):
    each accuracy, and the one accuracy target (the baseline's accuracy minus course.yml's
    ``max_accuracy_drop``), on which the schema already ties each status.
    """
    from autograder.milestones import report_schema  # trusted parent only

    got, _ = _unwrap(got)
    if not isinstance(expected, dict) or not isinstance(expected.get("seed"), int):
        return "no expected value for this variant (an autograder problem)", None
    text = got.get("report") if isinstance(got, dict) else None
    todo = ("olympics_report must return make_report(...) of run_scenario's two results; the "
            "event saves it with save_report")
    if not isinstance(text, str):
        return f"the event sent no report file (got {type(text).__name__}); {todo}", None
    if len(text) > MAX_REPORT_CHARS:
        return (f"the report file has {len(text)} characters (a report of two results has "
                f"about 1,500; at most {MAX_REPORT_CHARS}); {todo}"), None
    schema = report_schema.load()
    try:
        report = schema._from_json(json.loads(text, parse_constant=_no_constant))
    except (ValueError, RecursionError) as exc:
        return f"the report file is not JSON ({str(exc)[:120]}); {todo}", None
    try:
        schema.validate_report(report)
    except schema.ReportError as err:
        return (f"it breaks schema {schema.SCHEMA} at {err.field}: {err.problem} (checked with "
                "the course's own validator); fix what builds that field"), None
    keys = sorted(map(str, report))
    if set(report) != REPORT_KEYS:
        return (f"it has the fields {keys}, expected exactly {sorted(REPORT_KEYS)} (no "
                f"comparisons); {todo}"), None
    system, model = report["system"], report["model"]
    texts = [model, *system.values()]
    if set(system) != {"name", "python", "numpy", "machine"} or any(
            not isinstance(v, str) or len(v) > MAX_TEXT for v in texts):
        return (f"its system must be make_report's system_info (four strings) and every text "
                f"at most {MAX_TEXT} characters; got system fields {sorted(map(str, system))}"
                ), None
    if system["name"] != REPORT_SYSTEM:
        return (f"system.name is {system['name'][:40]!r}, expected {REPORT_SYSTEM!r}, the "
                "`system` argument the grader passes to olympics_report"), None
    results = report["results"]
    if len(results) != 2:
        return (f"it has {len(results)} results, expected 2: the baseline's, then your "
                "optimised model's"), None
    count = REPORT_RUNS * REPORT_QUERIES
    for i, r in enumerate(results):
        at = f"results[{i}]"
        if set(r) != RESULT_KEYS:
            return (f"{at} has the fields {sorted(map(str, r))}, expected run_scenario's "
                    f"{sorted(RESULT_KEYS)}"), None
        if r["scenario"] != "SingleStream":
            return (f"{at} is an {r['scenario']} result, expected SingleStream (one digit per "
                    "query, as the lesson's report)"), None
        lat = r["latency_ms"]
        if set(lat) != LATENCY_KEYS:
            return (f"{at}.latency_ms has the fields {sorted(map(str, lat))}, expected "
                    f"latency_summary's {sorted(LATENCY_KEYS)}"), None
        if r["runs"] != REPORT_RUNS or lat["count"] != count:
            return (f"{at} has {r['runs']} runs and {lat['count']} latencies, expected "
                    f"{REPORT_RUNS} runs of {REPORT_QUERIES} queries ({count} latencies): pass "
                    "the grader's `runs` and `queries` on to run_scenario"), None
        numbers = [lat[k] for k in ("mean", "p50", "p90", "p99", "min", "max")]
        if not all(v > 0 for v in numbers) or not lat["min"] <= r["value"] <= lat["max"] \
                or not lat["min"] <= lat["mean"] <= lat["max"]:
            return (f"{at}.latency_ms {lat} with value {r['value']} is not a measurement: "
                    "every latency positive and finite, the mean and the value between min "
                    "and max"), None
    try:
        seed = int(expected["seed"])
        x, y = _report_digits(seed)
        bands = [_report_band(got.get(k), x, y, k) for k in ("baseline", "submitted")]
    except (ValueError, KeyError) as exc:
        return f"the models could not be measured on the report's digits: {exc}", None
    n = len(y)
    drop = TARGETS["max_accuracy_drop"]

    def count_of(acc: float) -> int | None:
        k = round(acc * n)
        return k if abs(acc * n - k) < 1e-6 else None

    def own(band: tuple[int, int]) -> str:
        sure, doubt = band
        if doubt == 0:
            return f"{sure} of {n} ({sure / n:.4f})"
        return f"{sure} to {sure + doubt} of {n} ({doubt} too close to call)"

    for i, (r, band, who) in enumerate(zip(results, bands, ("baseline", "optimised model"),
                                           strict=True)):
        k = count_of(r["accuracy"])
        if k is None or not band[0] <= k <= band[0] + band[1]:
            got_k = f"{k} of {n}" if k is not None else f"not a count of the {n} digits"
            return (f"results[{i}].accuracy is {r['accuracy']:.6g} ({got_k}), but your {who} "
                    f"classifies {own(band)} of the report's digits right by the grader's own "
                    "forward pass: report run_scenario's measurement of each model, the "
                    "baseline first, then your optimised model"), None
    targets = [r["accuracy_target"] for r in results]
    base = count_of(targets[0] + drop)
    if abs(targets[0] - targets[1]) > 1e-12 or base is None \
            or not bands[0][0] <= base <= bands[0][0] + bands[0][1]:
        return (f"the accuracy targets are {targets[0]:.6g} and {targets[1]:.6g}; the gate is "
                f"one target for both, the baseline's accuracy minus max_accuracy_drop "
                f"({drop:g}): the baseline classifies {own(bands[0])} of the report's digits "
                "right, so compute the target from evaluate_accuracy of the baseline"), None
    return "", report


def olympics_publish(value: Any, expected: Any) -> tuple[str, dict[str, Any]] | None:
    """The checked report, for the student: a table in the test's output and the report itself
    in its ``extra_data``; nothing when the report did not hold (the verdict says why)."""
    problem, report = _report_check(value, expected)
    if report is None:
        return None
    lines = [f"Your benchmark report ({report['system']['name']}, schema {report['schema']}; "
             "its accuracies and target match the grader's own measurement of your models, "
             "its latencies are your harness's):"]
    for label, r in zip(("baseline", "optimised"), report["results"], strict=True):
        low, high = r["ci"]
        lines.append(f"  {label:9s} {r['scenario']} p90 {r['value']:.4f} ms "
                     f"(CI {low:.4f}-{high:.4f}), accuracy {r['accuracy']:.4f}, target "
                     f"{r['accuracy_target']:.4f}: {r['status']}")
    return "\n".join(lines), {"benchmark_report": report}


def _olympics_check(got: Any, expected: Any) -> tuple[bool, str]:
    if isinstance(expected, dict):  # the reference's run of the same variant
        far = _baseline_distance(_unwrap(got)[0], expected)
        if not far <= BASELINE_RTOL:
            return False, (f"the event's baseline is not the model this variant trains (relative "
                           f"distance {far:.3g}, at most {BASELINE_RTOL:g}): the suite trains it "
                           "from the variant's seed with your modules 01-07; if those are yours, "
                           "check them against their public checks")
    try:
        r = _olympics_measure(got, expected)
    except (ValueError, KeyError) as exc:
        return False, f"the event could not be measured: {exc}"
    t = TARGETS
    base, sub = r["baseline"], r["submitted"]
    ratio = base["bytes"] / max(1, sub["bytes"])
    close = sub["accuracy"] + 1e-9 >= base["accuracy"] - t["max_accuracy_drop"]
    small = ratio >= t["min_size_ratio"]
    speed = (f"{r['speedup']:.2f}x the baseline's speed" if r["speedup"] is not None
             else f"speed not measured ({r['speed_note']}; no leaderboard entry)")
    text = (f"held-out accuracy {sub['accuracy']:.4f} (baseline {base['accuracy']:.4f}), "
            f"{ratio:.2f}x smaller ({sub['bytes']} of {base['bytes']} bytes), {speed}")
    if not close:
        text += f"; more than {100 * t['max_accuracy_drop']:g} point(s) below the baseline"
    if not small:
        text += f"; needs at least {t['min_size_ratio']:g}x smaller"
    problem, _ = _report_check(got, expected)
    if problem:
        text += f"; your benchmark report was not accepted: {problem}"
    return close and small and not problem, text


def _event_kept(value: Any) -> dict[str, Any]:
    """What the check, the report check and the leaderboard use of the reference's event: its
    seed and baseline (the variant's own; the reference's optimised model, timings and report
    are not compared, and they would make the goldens differ from build to build)."""
    return {"seed": value["seed"], "baseline": value["baseline"]}


def olympics_leaderboard(value: Any, expected: Any) -> list[dict[str, Any]]:
    """The leaderboard entries the parent publishes: the module's format and score, from the
    parent's own measurements only; none (a ``ValueError`` saying why) for an event whose
    baseline is not this variant's or whose timing is missing or implausible."""
    far = (_baseline_distance(_unwrap(value)[0], expected) if isinstance(expected, dict)
           else math.inf)
    if not far <= BASELINE_RTOL:
        raise ValueError(f"the event's baseline is not this variant's (distance {far:.3g})")
    r = _olympics_measure(value, expected)
    if r["speedup"] is None:
        raise ValueError(f"no speed-up measured: {r['speed_note']}")
    t = TARGETS
    base, sub = r["baseline"], r["submitted"]
    gated = sub["accuracy"] + 1e-9 < base["accuracy"] - t["max_accuracy_drop"]
    score = 0.0 if gated else math.sqrt(r["speedup"] * base["bytes"] / sub["bytes"])
    return [{"name": "Olympics score", "value": round(score, 4), "order": "desc"},
            {"name": "Accuracy (%)", "value": round(100.0 * sub["accuracy"], 2),
             "order": "desc"},
            {"name": "Speed-up", "value": round(r["speedup"], 4), "order": "desc"},
            {"name": "Size (KB)", "value": round(sub["bytes"] / 1024.0, 2), "order": "asc"}]


def _event_shortcut(tt, rng):
    """What the goldens keep of the reference's event (``_event_kept``), without optimising,
    reporting and timing a model that is not kept: the same draw from ``rng``, the same
    baseline (the goldens build checks this against the whole event in one variant)."""
    seed = int(rng.integers(0, 2**31))
    return {"seed": seed, "baseline": _state(_baseline(tt, seed))}


@case(unit=EVENT, points=4, standins=(), check=_olympics_check, expected=_event_kept,
      publish=olympics_publish, shortcut=_event_shortcut,
      timing=Timing(plan=olympics_plan, baseline=olympics_baseline),
      hint="Your OLYMPICS_RECIPE through your optimize must stay within one point of the "
           "baseline's held-out accuracy and be at least 3.5x smaller (INT8, or enough zeros for "
           "CSR), and your olympics_report must be a valid report whose accuracies and target "
           "match the grader's measurement of both models; the grader measures both itself.",
      stated={
          "olympics_report": (
              "NOTE (the event): the autograder passes your ``OLYMPICS_RECIPE`` (only ``optimize``'s keywords ``amount``, ``finetune_epochs``, ``lr``, ``calibration``, ``engine``) to your ``optimize`` on the baseline it trains, and measures both models itself: your model passes when it meets the module's targets in course.yml (held-out accuracy at most ``max_accuracy_drop`` below the baseline's, and ``min_size_ratio`` times smaller or more) and this report is valid, with accuracies and target that match the grader's own measurement of both models on the report's digits.",
              "``make_report(system, REPORT_MODEL, [baseline's result, submitted's result])``, each result ``run_scenario(as_sut(model), x, y, \"SingleStream\", accuracy_target=target, runs=runs, queries=queries)`` with the one ``target = evaluate_accuracy(as_sut( baseline), x, y) - max_accuracy_drop``.",
          ),
      })
def olympics_event(tt, rng):
    m = _module(tt)
    recipe = dict(m.OLYMPICS_RECIPE)
    unknown = sorted(str(k) for k in recipe if k not in RECIPE_KEYS)
    if unknown:
        raise ValueError(f"OLYMPICS_RECIPE: unknown keys {unknown}; allowed: {list(RECIPE_KEYS)}")
    seed = int(rng.integers(0, 2**31))  # wide: no two of the 64 variants share a baseline
    baseline = _baseline(tt, seed)
    submitted = m.optimize(baseline, TRAIN_X.copy(), TRAIN_Y.copy(), seed=seed, **recipe)
    submitted.eval()
    # the submission's benchmark report, as the lesson writes it: the student's olympics_report
    # with module 19's harness, saved by module 19's save_report; the parent reads the file
    x_report, y_report = _report_digits(seed)
    report = m.olympics_report(baseline, submitted, x_report, y_report,
                               max_accuracy_drop=TARGETS["max_accuracy_drop"], runs=REPORT_RUNS,
                               queries=REPORT_QUERIES, system=REPORT_SYSTEM)
    bench = importlib.import_module(f"{tt.__name__}.benchmarking")
    folder = Path(tempfile.mkdtemp(prefix="olympics-"))
    try:
        bench.save_report(report, folder / "olympics_report.json")
        text = (folder / "olympics_report.json").read_text(encoding="utf-8")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    # the commitment: both models' arrays and the report; the parent then times the optimised
    # model's single-stream queries from outside (olympics_plan), never with a clock in here
    return Timed({"baseline": _state(baseline), "submitted": _state(submitted), "seed": seed,
                  "report": text}, {"queries": _queries(tt, submitted)})


# ----------------------------------------------------------------------------- the TinyGPT event
#: The course's TinyGPT (module 13's GPT trained on the KJV text,
#: ``tinytorch_data/tinygpt_kjv``) and the held-out text, read while the suite loads (before the sandbox): the child builds the
#: model, the twin the baseline, the parent its own forward passes from the same arrays.
_TINY = loaders().load_tinygpt()
GPT_CONFIG: dict[str, int] = dict(_TINY.config)
GPT_PARAMS: dict[str, np.ndarray] = _TINY.params
GPT_VOCABULARY = _TINY.vocabulary
HELD_OUT = loaders().kjv_ids(loaders().load_kjv_chars().validation,
                             GPT_VOCABULARY).astype(np.int64)
del _TINY
#: A timed run: a prompt of ``GPT_PROMPT`` characters (a window of the held-out text with
#: ``GPT_SUBSTITUTIONS`` of them replaced at random: no table of answers can exist), then
#: ``GPT_NEW_TOKENS`` greedy characters; ``GPT_PAIRS`` pairs, alternating which side runs first.
#: The baseline (module 13's plain generate) takes ~100 ms a run, the reference's recipe ~35 ms.
GPT_PROMPT, GPT_NEW_TOKENS, GPT_SUBSTITUTIONS, GPT_PAIRS = 64, 64, 4, 10
#: Held-out windows of ``context + 1`` characters for the perplexity gate (fixed: the gate's
#: verdict is a function of the committed arrays only).
GPT_EVAL_WINDOWS, GPT_EVAL_SEED = 64, 2020
#: How far below the best logit a generated character's logit may be (times 1 + |best|) and
#: still count as the greedy choice: float32 in the child against float64 here, and a fused
#: kernel's other rounding, move logits by ~1e-6.
TOKEN_TOL = 1e-3
#: A run faster than this per generated character did not run a transformer: implausible.
MIN_TOKEN_S = 5e-6


def _gpt_linears() -> list[str]:
    """The GPT's ``Linear`` layers, which a submission may store as int8 weights
    (``qweight`` + ``weight_scale``, module 20's ``Int8WeightLinear``)."""
    out = []
    for i in range(GPT_CONFIG["n_layers"]):
        out += [f"blocks.{i}.attn.out_proj", f"blocks.{i}.mlp.fc", f"blocks.{i}.mlp.proj"]
    return [*out, "head"]


def _tinygpt(tt: Any) -> Any:
    """Module 13's ``GPT`` of the package ``tt`` holding TinyGPT's parameters, in eval mode."""
    transformers = importlib.import_module(f"{tt.__name__}.transformers")
    c = GPT_CONFIG
    gpt = transformers.GPT(c["vocab_size"], c["context"], c["d_model"], c["n_layers"],
                           c["n_heads"])
    for name, p in gpt.named_parameters():
        p.data = np.array(GPT_PARAMS[name], dtype=np.float32)
    gpt.eval()
    return gpt


def _gpt_prompt(rng: np.random.Generator) -> np.ndarray:
    """``(1, GPT_PROMPT)`` int64: a held-out window with ``GPT_SUBSTITUTIONS`` random
    characters put in at random places."""
    start = int(rng.integers(0, len(HELD_OUT) - GPT_PROMPT))
    prompt = HELD_OUT[start:start + GPT_PROMPT].copy()
    where = rng.choice(GPT_PROMPT, GPT_SUBSTITUTIONS, replace=False)
    prompt[where] = rng.integers(0, GPT_CONFIG["vocab_size"], GPT_SUBSTITUTIONS)
    return prompt[None, :]


def _array(state: dict[str, Any], name: str, kinds: str, shape: tuple[int, ...]) -> np.ndarray:
    a = state.get(name)
    if not isinstance(a, np.ndarray):
        raise ValueError(f"{name} is missing (or not an array)")
    if a.dtype.kind not in kinds or a.shape != shape:
        raise ValueError(f"{name} is {a.dtype} {a.shape}, expected {shape} "
                         f"{'integers' if kinds == 'iu' else 'floats'}")
    if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
        raise ValueError(f"{name} holds values that are not finite")
    return a


def _gpt_params(state: Any) -> tuple[dict[str, np.ndarray], int]:
    """``(float32 parameters for the parent's forward pass, bytes stored)`` of a committed
    TinyGPT: module 13's names, each ``Linear`` either float (``weight``) or int8
    (``qweight`` in [-128, 127] and a float ``weight_scale`` per row, dequantized as
    ``qweight.astype(float32) * weight_scale[:, None]``). Bytes at fixed itemsizes: 4 a float,
    1 an int8 weight. Anything else in the state is refused (ValueError)."""
    if not isinstance(state, dict):
        raise ValueError("the optimised TinyGPT's state is not a mapping of arrays")
    c = GPT_CONFIG
    shapes = gpt_shapes(c["vocab_size"], c["context"], c["d_model"], c["n_layers"])
    params: dict[str, np.ndarray] = {}
    used: set[str] = set()
    nbytes = 0
    for prefix in _gpt_linears():
        if prefix + ".qweight" not in state:
            continue
        out_in = shapes[prefix + ".weight"]
        q = _array(state, prefix + ".qweight", "iu", out_in)
        if q.size and (int(q.min()) < -128 or int(q.max()) > 127):
            raise ValueError(f"{prefix}.qweight holds values that do not fit in int8")
        scale = _array(state, prefix + ".weight_scale", "f", (out_in[0],)).astype(np.float32)
        params[prefix + ".weight"] = q.astype(np.float32) * scale[:, None]
        used |= {prefix + ".qweight", prefix + ".weight_scale"}
        nbytes += q.size + 4 * scale.size
    for name, shape in shapes.items():
        if name in params:
            continue
        params[name] = _array(state, name, "f", shape).astype(np.float32)
        used.add(name)
        nbytes += 4 * params[name].size
    extra = sorted(str(k) for k in set(state) - used)
    if extra:
        raise ValueError(f"the optimised TinyGPT stores arrays module 13's GPT does not have: "
                         f"{extra[:4]}")
    return params, int(nbytes)


def _gpt_logits(params: dict[str, np.ndarray], ids: np.ndarray, dtype: Any) -> np.ndarray:
    c = GPT_CONFIG
    return gpt_logits(params, ids, vocab_size=c["vocab_size"], context=c["context"],
                      d_model=c["d_model"], n_layers=c["n_layers"], n_heads=c["n_heads"],
                      dtype=dtype)


def _tokens_problem(params: dict[str, np.ndarray], prompt: np.ndarray, tokens: Any) -> str:
    """"" when ``tokens`` are ``prompt`` followed by ``GPT_NEW_TOKENS`` greedy choices of the
    model ``params`` (the parent's float64 forward pass of the whole text at once; a character
    whose logit is within ``TOKEN_TOL`` of the best may go either way), else what is wrong."""
    total = prompt.shape[1] + GPT_NEW_TOKENS
    if not isinstance(tokens, np.ndarray) or tokens.dtype.kind not in "iu" \
            or tokens.shape != (1, total):
        return f"a generation did not return (1, {total}) token ids"
    if not np.array_equal(tokens[0, :prompt.shape[1]], prompt[0]):
        return "a generation does not begin with its prompt"
    if int(tokens.min()) < 0 or int(tokens.max()) >= GPT_CONFIG["vocab_size"]:
        return "a generation holds token ids outside the vocabulary"
    start = prompt.shape[1] - 1
    rows = _gpt_logits(params, tokens[:, :-1].astype(np.int64), np.float64)[0, start:]
    chosen = rows[np.arange(rows.shape[0]), tokens[0, start + 1:]]
    best = rows.max(axis=1)
    wrong = np.flatnonzero(chosen < best - TOKEN_TOL * (1.0 + np.abs(best)))
    if wrong.size:
        at = int(wrong[0])
        return (f"character {start + 1 + at} of a generation ({GPT_VOCABULARY[int(tokens[0, start + 1 + at])]!r}) "
                f"is not the greedy choice of the model you committed "
                f"({GPT_VOCABULARY[int(rows[at].argmax())]!r}), by the grader's own forward "
                f"pass of your arrays: generate with the model you return")
    return ""


def _eval_windows() -> np.ndarray:
    """The perplexity gate's held-out windows ``(GPT_EVAL_WINDOWS, context + 1)``."""
    n = GPT_CONFIG["context"] + 1
    starts = np.random.default_rng(GPT_EVAL_SEED).integers(0, len(HELD_OUT) - n,
                                                           GPT_EVAL_WINDOWS)
    return HELD_OUT[starts[:, None] + np.arange(n)]


#: Perplexities already computed in this process, by :func:`_params_digest` (the last few):
#: a bank's or a regrade's checks see the same committed TinyGPT again and again (the
#: reference's recipe gives the same model in every variant), and the forward pass of the 64
#: windows costs about 0.15 s each time.
_PERPLEXITIES: dict[str, float] = {}
_KEEP_PERPLEXITIES = 8


def _params_digest(params: dict[str, np.ndarray]) -> str:
    """SHA-256 of every parameter's name, dtype, shape and bytes: equal only for equal models."""
    h = hashlib.sha256()
    for name in sorted(params):
        a = np.ascontiguousarray(params[name])
        h.update(f"{name}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _gpt_perplexity(params: dict[str, np.ndarray]) -> float:
    """The parent's perplexity of a model on :func:`_eval_windows` (float32 forward pass,
    float64 log-softmax), computed once per distinct model in a process."""
    key = _params_digest(params)
    if key not in _PERPLEXITIES:
        w = _eval_windows()
        logits = _gpt_logits(params, w[:, :-1], np.float32).astype(np.float64)
        z = logits - logits.max(axis=-1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
        while len(_PERPLEXITIES) >= _KEEP_PERPLEXITIES:
            _PERPLEXITIES.pop(next(iter(_PERPLEXITIES)))
        _PERPLEXITIES[key] = float(math.exp(-float(np.mean(
            np.take_along_axis(logp, w[:, 1:, None], -1)))))
    return _PERPLEXITIES[key]


_BASE_PERPLEXITY: list[float] = []


def _base_perplexity() -> float:
    if not _BASE_PERPLEXITY:
        _BASE_PERPLEXITY.append(_gpt_perplexity(dict(GPT_PARAMS)))
    return _BASE_PERPLEXITY[0]


def _gpt_speed(timing: Any) -> tuple[float | None, float | None, str]:
    """``(speed-up, tokens per CPU-second, "")`` from the parent's timing: the median of the
    per-pair ratios, and ``GPT_NEW_TOKENS`` over the submission's median run; ``(None, None,
    why not)`` when nothing was timed or the timing is refused or implausible."""
    if not isinstance(timing, dict):
        return None, None, "not timed in this run"
    if timing.get("problem"):
        return None, None, str(timing["problem"])
    base = np.asarray(timing.get("baseline_s"), dtype=np.float64)
    sub = np.asarray(timing.get("submitted_s"), dtype=np.float64)
    new = int(timing.get("new_tokens", 0))
    if base.ndim != 1 or base.shape != sub.shape or base.size == 0 or new <= 0 \
            or not (np.all(np.isfinite(base)) and np.all(np.isfinite(sub))):
        return None, None, "the timing is incomplete"
    floor = new * MIN_TOKEN_S
    if np.any(sub < floor) or np.any(base < floor):
        return None, None, (f"a run of {new} characters took less than {floor * 1e3:.2f} ms of "
                            "CPU, faster than any transformer: implausible, nothing published")
    speed = float(np.median(base / sub))
    if speed > TARGETS["gpt_max_speedup"]:
        return None, None, (f"a speed-up of {speed:.1f}x is above the plausible "
                            f"{TARGETS['gpt_max_speedup']:g}x: nothing published")
    return speed, float(new / np.median(sub)), ""


_MEASURED: dict[int, tuple[Any, dict[str, Any]]] = {}


def _tinygpt_measure(got: Any, expected: Any) -> dict[str, Any]:
    """Parent side: the committed model's parameters and bytes, its perplexity against the
    original's, whether its text on the variant's prompt is its greedy text, and the speed.
    Raises ValueError when the event sent nothing measurable."""
    key = id(got)
    if key in _MEASURED and _MEASURED[key][0] is got:
        return _MEASURED[key][1]
    value, timing = _unwrap(got)
    if not isinstance(value, dict):
        raise ValueError("the event sent no results")
    if not isinstance(expected, dict) or not isinstance(expected.get("prompt"), np.ndarray):
        raise ValueError("no prompt for this variant (an autograder problem)")
    try:
        params, nbytes = _gpt_params(value.get("state"))
    except BadParameters as exc:
        raise ValueError(str(exc)) from exc
    prompt = expected["prompt"]
    mine = value.get("prompt")
    if not isinstance(mine, np.ndarray) or not np.array_equal(mine, prompt):
        sample = "its text is not for your variant's prompt"
    else:
        sample = _tokens_problem(params, prompt, value.get("tokens"))
    base_ppl, ppl = _base_perplexity(), _gpt_perplexity(params)
    speed, tps, note = _gpt_speed(timing)
    out: dict[str, Any] = {
        "bytes": nbytes, "base_bytes": 4 * sum(a.size for a in GPT_PARAMS.values()),
        "perplexity": ppl, "base_perplexity": base_ppl,
        "bound": base_ppl * (1.0 + TARGETS["gpt_max_perplexity_increase"]),
        "sample_problem": sample, "speedup": speed, "tokens_per_s": tps, "speed_note": note,
        "tokens": value.get("tokens") if not sample else None}
    out["passed"] = not sample and ppl <= out["bound"]
    _MEASURED.clear()
    _MEASURED[key] = (got, out)
    return out


def _tinygpt_check(got: Any, expected: Any) -> tuple[bool, str]:
    try:
        r = _tinygpt_measure(got, expected)
    except ValueError as exc:
        return False, f"your TinyGPT could not be measured: {exc}"
    speed = (f"{r['tokens_per_s']:.0f} tokens per CPU-second, {r['speedup']:.2f}x module 13's "
             "generate" if r["speedup"] is not None
             else f"speed not measured ({r['speed_note']}; no leaderboard entry)")
    text = (f"held-out perplexity {r['perplexity']:.4f} (TinyGPT {r['base_perplexity']:.4f}, "
            f"at most {r['bound']:.4f}), {r['base_bytes'] / r['bytes']:.2f}x smaller "
            f"({r['bytes']} of {r['base_bytes']} bytes), {speed}")
    if r["sample_problem"]:
        text += f"; on your variant's prompt: {r['sample_problem']}"
    if r["perplexity"] > r["bound"]:
        text += (f"; perplexity more than {100 * TARGETS['gpt_max_perplexity_increase']:g}% "
                 "above the original's: your optimisation changed the model too much")
    return bool(r["passed"]), text


def tinygpt_publish(value: Any, expected: Any) -> tuple[str, dict[str, Any]] | None:
    """What the student sees of the event: the variant's prompt and their model's text."""
    try:
        r = _tinygpt_measure(value, expected)
    except ValueError:
        return None
    tokens = r["tokens"]
    if tokens is None:
        return None
    words = "".join(GPT_VOCABULARY[int(i)] for i in np.asarray(tokens)[0])
    cut = GPT_PROMPT
    return (f"Your TinyGPT, on your variant's prompt {words[:cut]!r}, wrote "
            f"{words[cut:]!r}"), {"tinygpt_text": words[cut:]}


def _gpt_kept(value: Any) -> dict[str, Any]:
    """What the check needs of the reference's event: the variant's prompt."""
    return {"prompt": value["prompt"]}


def _gpt_shortcut(tt: Any, rng: np.random.Generator) -> dict[str, Any]:
    """What the goldens keep of the reference's TinyGPT event (``_gpt_kept``), without
    optimising the model and generating the text that is not kept: the event's one draw from
    ``rng`` is the prompt (the goldens build checks this against the whole event in one
    variant)."""
    return {"prompt": _gpt_prompt(rng)}


def tinygpt_plan(value: Any, expected: Any, rng: np.random.Generator) -> Any:
    """The parent's timing plan: module 13's plain generate of the original TinyGPT in the
    twin, the submission's ``generate_greedy`` in the child, ``GPT_PAIRS`` pairs of a fresh
    prompt each, alternating which runs first; every run of the submission must be the
    committed model's greedy text."""
    try:
        params, _ = _gpt_params(value.get("state") if isinstance(value, dict) else None)
    except (ValueError, BadParameters) as exc:
        return {"problem": f"your optimised TinyGPT cannot be timed: {exc}"}
    yield Baseline({"new_tokens": GPT_NEW_TOKENS})
    base_s: list[float] = []
    sub_s: list[float] = []
    for i in range(GPT_PAIRS):
        prompt = _gpt_prompt(rng)
        got = {}
        for side in (("baseline", "submission") if i % 2 == 0 else ("submission", "baseline")):
            got[side] = yield Run(side, "generate", prompt)
        mine = got["submission"]
        if mine.implausible:
            return {"problem": f"implausible measurement: {mine.implausible}"}
        if mine.error:
            return {"problem": f"your generate_greedy raised {mine.error}"}
        wrong = _tokens_problem(params, prompt, mine.output)
        if wrong:
            return {"problem": wrong}
        base_s.append(got["baseline"].cpu_s)
        sub_s.append(mine.cpu_s)
    return {"baseline_s": base_s, "submitted_s": sub_s, "new_tokens": GPT_NEW_TOKENS,
            "problem": ""}


def tinygpt_baseline(tt: Any, data: Any) -> dict[str, Any]:
    """The twin's work: module 13's plain (uncached) greedy ``generate`` of the original
    TinyGPT, in the reference."""
    gpt = _tinygpt(tt)
    new = int(data["new_tokens"])

    def generate(prompt: Any) -> np.ndarray:
        with tt.no_grad():
            out = gpt.generate(tt.Tensor(np.asarray(prompt, dtype=np.int64)), new, top_k=1)
        return np.asarray(out.data, dtype=np.int64)

    return {"generate": generate}


def tinygpt_leaderboard(value: Any, expected: Any) -> list[dict[str, Any]]:
    """The TinyGPT columns, from the parent's measurements only: tokens per CPU-second and the
    speed-up (0 when a gate fails), and the bytes stored; none (a ``ValueError`` saying why)
    when the timing is missing, refused or implausible."""
    r = _tinygpt_measure(value, expected)
    if r["speedup"] is None:
        raise ValueError(f"no speed-up measured: {r['speed_note']}")
    gated = not r["passed"]
    return [{"name": "GPT tokens/s", "value": 0.0 if gated else round(r["tokens_per_s"], 1),
             "order": "desc"},
            {"name": "GPT speed-up", "value": 0.0 if gated else round(r["speedup"], 4),
             "order": "desc"},
            {"name": "GPT size (KB)", "value": round(r["bytes"] / 1024.0, 2), "order": "asc"}]


# ----------------------------------------------------------------------------- TinyGPT's units
@case(unit=INT8_WEIGHTS, points=2, hint="Int8WeightLinear.from_float: module 15's symmetric per-channel int8 "
                     "weights (PerChannelMinMaxObserver, quantize_per_channel), the scales as "
                     "float32, a copy of the bias, dequantized = qweight.astype(float32) * "
                     "weight_scale[:, None]; forward: x @ dequantized.T + bias.",
      stated={
          "Int8WeightLinear": (
              "Buffers (the state a checkpoint stores): ``qweight`` ``(out, in)`` int8, ``weight_scale`` ``(out,)`` float32, ``bias`` ``(out,)`` float32 or None.",
              "Attributes: ``dequantized``: ``(out, in)`` float32, ``qweight.astype(np.float32) * weight_scale[:, None]``, computed once by ``from_float`` (not a buffer",
          ),
          "Int8WeightLinear.from_float": (
              "``obs = PerChannelMinMaxObserver(ch_axis=0, dtype=qint8, qscheme=per_channel_symmetric)``; ``obs(mod.weight)``; ``scale, zp = obs.calculate_qparams()``.",
              "``q.qweight = quantize_per_channel(mod.weight, scale, zp, 0, qint8).int_repr()``; ``q.weight_scale = Tensor(scale as float32)``; copy the bias",
          ),
          "Int8WeightLinear.forward": (
              "``y = x Wᵀ + b`` with ``W = self.dequantized``: ``(*, in) -> (*, out)`` float32.",
              "``out = x.data @ self.dequantized.T``; add ``self.bias.data`` if there is a bias; return ``Tensor(out)``.",
          ),
      })
def int8_weight_linear(tt, rng):
    m = _module(tt)
    tt.manual_seed(int(rng.integers(0, 1000)))
    n_in, n_out = int(rng.integers(3, 40)), int(rng.integers(2, 30))
    lin = tt.nn.Linear(n_in, n_out)
    lin.weight.data[...] = rng.standard_normal(lin.weight.shape) * float(rng.uniform(0.01, 3))
    q = m.Int8WeightLinear.from_float(lin)
    x = rng.standard_normal((2, int(rng.integers(1, 6)), n_in)).astype(np.float32)
    out = np.asarray(q(tt.Tensor(x)).data)
    bare = m.Int8WeightLinear.from_float(tt.nn.Linear(n_in, n_out, bias=False))
    return {"qweight": np.asarray(q.qweight.data), "scale": np.asarray(q.weight_scale.data),
            "bias": np.asarray(q.bias.data), "dequantized": np.asarray(q.dequantized),
            "out": out, "dtype": str(out.dtype), "state": sorted(q.state_dict()),
            "bare": [bare.bias is None, np.asarray(bare(tt.Tensor(x)).data),
                     sorted(bare.state_dict())]}


@case(unit=FUSED_MLP, points=2, hint="FusedMLP.forward: h = x.data as (N, C); pre = h @ linear_weight(fc).T "
                     "(no bias); bias_gelu(Tensor(pre), fc.bias); proj; back to x's shape.",
      rtol=1e-5, atol=1e-5,
      stated={
          "FusedMLP": "The same layers (``fc``, ``proj``: ``Linear`` or ``Int8WeightLinear``), so the same parameter names",
          "FusedMLP.forward": (
              "``shape = x.shape``; ``h = x.data.reshape(-1, shape[-1])`` — ``(N, C)``.",
              "``pre = h @ linear_weight(self.fc).T`` — ``(N, 4C)``, no bias yet.",
              "``a = bias_gelu(Tensor(pre), self.fc.bias)`` — GELU(pre + bias), one pass.",
              "Return ``self.proj(a).reshape(*shape)``.",
          ),
          "linear_weight": "The float32 ``(out, in)`` weight matrix a ``Linear`` or an ``Int8WeightLinear`` multiplies by (provided).",
      })
def fused_mlp(tt, rng):
    m = _module(tt)
    transformers = importlib.import_module(f"{tt.__name__}.transformers")
    tt.manual_seed(int(rng.integers(0, 1000)))
    c = int(rng.choice([4, 8, 12]))
    mlp = transformers.MLP(c)
    mlp.eval()
    for _, p in mlp.named_parameters():
        p.data[...] = rng.standard_normal(p.shape) * 0.5
    fused = m.FusedMLP(mlp)
    x = tt.Tensor(rng.standard_normal((2, int(rng.integers(1, 7)), c)).astype(np.float32))
    with tt.no_grad():
        out = np.asarray(fused(x).data)
        fused.fc = m.Int8WeightLinear.from_float(mlp.fc)
        quantized = np.asarray(fused(x).data)
    return {"out": out, "int8_fc": quantized,
            "names": [n for n, _ in fused.named_parameters()]}


@case(unit=PERPLEXITY, points=2, hint="perplexity: logits of windows[:, :-1] as float64, a stable log-softmax "
                     "(subtract the row max), the mean negative log-likelihood of windows[:, "
                     "1:], then exp.", rtol=1e-9, atol=1e-9,
      stated={
          "perplexity": (
              "``exp(mean over the N·T positions of -log softmax(logits)[next token])`` (a Python float; the vocabulary size for a model that knows nothing, 1 for a perfect one).",
              "under ``no_grad()``: ``logits = model(Tensor(ids[:, :-1])).data`` as float64.",
              "Log-softmax, stable: ``z = logits - logits.max(-1, keepdims=True)``; ``logp = z - log(exp(z).sum(-1, keepdims=True))``.",
              "``nll = -mean(take_along_axis(logp, ids[:, 1:, None], -1))``; return ``float(exp(nll))``.",
          ),
      })
def perplexity_values(tt, rng):
    m = _module(tt)
    transformers = importlib.import_module(f"{tt.__name__}.transformers")
    tt.manual_seed(int(rng.integers(0, 1000)))
    vocab = int(rng.integers(5, 20))
    gpt = transformers.GPT(vocab, 16, 8, 1, 2)
    gpt.eval()
    for name, p in gpt.named_parameters():
        if name.endswith("head.weight"):
            p.data[...] = rng.standard_normal(p.shape) * 40.0  # large logits: stability matters
    windows = rng.integers(0, vocab, (int(rng.integers(1, 5)), int(rng.integers(2, 12))))

    base_module: Any = tt.nn.Module

    class Uniform(base_module):
        def forward(self, ids):
            return tt.Tensor(np.zeros((*np.asarray(ids.data).shape, vocab), np.float32))

    return [float(m.perplexity(gpt, windows)), float(m.perplexity(Uniform(), windows))]


@case(unit=GPT_EVENT, points=4, standins=(), hint="Your GPT_RECIPE through your optimize_gpt and generate_greedy: the text "
                     "on your variant's prompt must be the greedy text of the model you commit "
                     "(the grader recomputes it), and that model's held-out perplexity at most "
                     "2% above TinyGPT's; the grader times your generation itself.",
      check=_tinygpt_check, publish=tinygpt_publish, expected=_gpt_kept, shortcut=_gpt_shortcut,
      timing=Timing(plan=tinygpt_plan, baseline=tinygpt_baseline),
      stated={
          "generate_greedy": (
              "NOTE (the event): the autograder runs your ``GPT_RECIPE`` (keys ``int8_weights``, ``fused_gelu``, ``kv_cache``; a missing one counts as True) through your ``optimize_gpt`` and this function: the text on your variant's prompt must be exactly the greedy text of the model you commit (the grader recomputes it), and that model's held-out perplexity at most course.yml's ``gpt_max_perplexity_increase`` (a fraction) above TinyGPT's.",
              "``top_k=1`` keeps only the most likely token",
          ),
          "optimize_gpt": "An optimised copy of a trained ``GPT`` (left unchanged), in eval mode.",
      })
def tinygpt_event(tt, rng):
    m = _module(tt)
    recipe = dict(m.GPT_RECIPE)
    unknown = sorted(str(k) for k in recipe if k not in GPT_RECIPE_KEYS)
    if unknown:
        raise ValueError(f"GPT_RECIPE: unknown keys {unknown}; allowed: {list(GPT_RECIPE_KEYS)}")
    flags = {k: bool(recipe.get(k, True)) for k in GPT_RECIPE_KEYS}
    model = m.optimize_gpt(_tinygpt(tt), int8_weights=flags["int8_weights"],
                           fused_gelu=flags["fused_gelu"])
    model.eval()
    kv_cache = flags["kv_cache"]

    def generate(prompt: Any) -> np.ndarray:
        ids = np.asarray(prompt, dtype=np.int64)
        return np.asarray(m.generate_greedy(model, ids, GPT_NEW_TOKENS, kv_cache=kv_cache))

    prompt = _gpt_prompt(rng)
    # the commitment: the optimised model's arrays and its text on the variant's prompt; the
    # parent then times generate on prompts it draws (tinygpt_plan), never with a clock in here
    return Timed({"state": _state(model), "prompt": prompt, "tokens": generate(prompt)},
                 {"generate": generate})


suite.leaderboard = (("olympics_event", olympics_leaderboard),
                     ("tinygpt_event", tinygpt_leaderboard))
