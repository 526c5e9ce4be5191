"""Hidden suite · module 20 (capstone: the Torch Olympics). Cases are probes; the parent decides.

Eight cases compare with the reference's answers; the ninth, ``olympics_event``, is the event:
the child trains the digits baseline, runs the student's ``optimize`` with their
``OLYMPICS_RECIPE`` and times paired forward passes (CPU seconds); the trusted parent measures
both models itself (held-out digits accuracy by a NumPy forward pass, bytes of the returned
arrays, the median latency ratio), grades them against course.yml's ``targets`` and builds the
Gradescope leaderboard entry (``suite.leaderboard``). Points sum to 50.
"""

from __future__ import annotations

import importlib
import math
import time
from typing import Any

import numpy as np

from autograder.milestones.data import loaders
from autograder.suite import Suite, outcome

suite = Suite(module="20_capstone", version="2027.1", needs_course_data=True)
case = suite.case

#: Training digits for the event, read while the suite loads (before the sandbox); the held-out
#: digits are read only by the parent's check.
_DIGITS = loaders().load_digits()
TRAIN_X = (_DIGITS.train_x.reshape(len(_DIGITS.train_x), -1) / 16.0).astype(np.float32)
TRAIN_Y = _DIGITS.train_y.astype(np.int64)
del _DIGITS

RECIPE_KEYS = ("amount", "finetune_epochs", "lr", "calibration")
#: Paired timings, alternating which model runs first. The clock is the thread's CPU time:
#: under the sandbox's RLIMIT_CPU the process CPU clock only advances once per scheduler tick
#: (measured: two readings 5 ms apart were equal), while the thread clock keeps nanoseconds
#: (one BLAS thread: the thread's time is the work).
PAIRS = 15
CALLS = 5  # forward passes per timing (one pass of 360 digits is ~0.1 ms of CPU)


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
@case(points=6, hint="At least as good in all three (accuracy higher, latency and bytes "
                     "lower) and strictly better in one; equal entries do not dominate.")
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


@case(points=6, hint="Keep an entry when no entry dominates it; input order; equal entries "
                     "both stay; an empty list has an empty front.")
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
@case(points=5, hint="0 below baseline accuracy minus the drop (with a 1e-9 tolerance: an "
                     "accuracy exactly at the bound passes); else sqrt(speed-up x compression).")
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


@case(points=3, hint="A latency or byte count that is not positive, in the entry or the "
                     "baseline, is not a measurement: raise ValueError.")
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


@case(points=5, hint="Four dicts in order: score (4 decimals, desc), accuracy in % (2, desc), "
                     "latency ms (4, asc), size in KB = bytes / 1024 (2, asc).",
      rtol=0.0, atol=1e-12)
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
@case(points=6, hint="Per 2-D array: min(dense nbytes, nnz * (itemsize + index bytes) + "
                     "(rows + 1) * 4), index bytes 1 up to 256 columns else 2; other arrays "
                     "dense.")
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


# ----------------------------------------------------------------------------- the pipeline
@case(points=7, hint="prune_model(amount, 'global') -> fine-tune with Adam (masks in place) -> "
                     "strip_masks -> quantize_model with train_x[:calibration]; the float model "
                     "must not change.", atol=0.04)
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
    q = m.optimize(model, x, y, amount=amount, finetune_epochs=2, calibration=64,
                   seed=int(rng.integers(0, 100)))
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
    # variant (so a constant answer cannot pass) and shows which rows calibrated the model
    scale = layers[0].input_scale if layers and statics[0] else 0.0
    return {"layers": len(layers), "dtype": str(weights.dtype), "unchanged": bool(unchanged),
            "static": statics, "input_range": round(255.0 * float(
                np.asarray(getattr(scale, "data", scale)).reshape(-1)[0]), 3),
            "sparsity": round(float(np.mean(weights == 0)), 2),
            "accuracy": round(acc, 2), "training": bool(q.training)}


@case(points=6, hint="accuracy from one untimed forward pass; latency_ms = 1000 x the median "
                     "of `repeats` timer() differences around model(Tensor(x)); bytes = "
                     "storage_bytes(model).")
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
    return {k: float(v) for k, v in entry.items()}


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


def _olympics_measure(value: Any) -> dict[str, Any]:
    """Parent side: accuracy, bytes and latency of both models from the child's raw data."""
    from autograder.milestones import mlperf  # trusted parent only (never called in the child)

    if not isinstance(value, dict):
        raise ValueError("the event sent no results")
    _, _, test_x, test_y = mlperf.task()
    x = (np.asarray(test_x, dtype=np.float32).reshape(len(test_x), -1) / 16.0)
    y = np.asarray(test_y, dtype=np.int64)
    base, sub = value.get("baseline"), value.get("submitted")
    base_acc = float(np.mean(mlperf.mlp_predict(mlperf.float_layers(base, "baseline"), x) == y))
    layers = (mlperf.int8_layers(sub) if isinstance(sub, dict) and "0.qweight" in sub
              else mlperf.float_layers(sub, "submitted model"))
    sub_acc = float(np.mean(mlperf.mlp_predict(layers, x) == y))
    decision = mlperf.speedup_decision(value.get("baseline_s"), value.get("submitted_s"),
                                       1.0, 0.95, 1)
    return {"baseline": {"accuracy": base_acc, "latency_ms": 1.0, "bytes": _bytes(base)},
            "submitted": {"accuracy": sub_acc, "latency_ms": 1.0 / decision["median"],
                          "bytes": _bytes(sub)},
            "speedup": decision["median"]}


def _bytes(state: Any) -> int:
    """The module's storage rule, on the returned arrays (dense or CSR per 2-D array)."""
    total = 0
    for a in state.values():
        if not isinstance(a, np.ndarray):
            raise ValueError("the model state holds something that is not an array")
        if a.ndim != 2:
            total += a.nbytes
            continue
        idx = 1 if a.shape[1] <= 256 else 2
        total += min(a.nbytes, int(np.count_nonzero(a)) * (a.itemsize + idx)
                     + (a.shape[0] + 1) * 4)
    return int(total)


def _targets() -> dict[str, float]:
    from tito.course import load_course  # trusted parent only

    module = next(mod for mod in load_course().modules if mod.name == "20_capstone")
    return {k: float(module.targets[k]) for k in ("max_accuracy_drop", "min_size_ratio")}


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


def _olympics_check(got: Any, expected: Any) -> tuple[bool, str]:
    try:
        r = _olympics_measure(got)
    except (ValueError, KeyError) as exc:
        return False, f"the event could not be measured: {exc}"
    if isinstance(expected, dict):  # the reference's run of the same variant
        far = _baseline_distance(got, expected)
        if not far <= BASELINE_RTOL:
            return False, (f"the event's baseline is not the model this variant trains (relative "
                           f"distance {far:.3g}, at most {BASELINE_RTOL:g}): the suite trains it "
                           "from the variant's seed with your modules 01-07; if those are yours, "
                           "check them against their public checks")
    t = _targets()
    base, sub = r["baseline"], r["submitted"]
    ratio = base["bytes"] / max(1, sub["bytes"])
    close = sub["accuracy"] + 1e-9 >= base["accuracy"] - t["max_accuracy_drop"]
    small = ratio >= t["min_size_ratio"]
    text = (f"held-out accuracy {sub['accuracy']:.4f} (baseline {base['accuracy']:.4f}), "
            f"{ratio:.2f}x smaller ({sub['bytes']} of {base['bytes']} bytes), "
            f"{r['speedup']:.2f}x the baseline's speed")
    if not close:
        text += f"; more than {100 * t['max_accuracy_drop']:g} point(s) below the baseline"
    if not small:
        text += f"; needs at least {t['min_size_ratio']:g}x smaller"
    return close and small, text


def olympics_leaderboard(value: Any, expected: Any) -> list[dict[str, Any]]:
    """The leaderboard entries the parent publishes: the module's format and score (none for
    an event whose baseline is not this variant's)."""
    far = _baseline_distance(value, expected) if isinstance(expected, dict) else math.inf
    if not far <= BASELINE_RTOL:
        raise ValueError(f"the event's baseline is not this variant's (distance {far:.3g})")
    r = _olympics_measure(value)
    t = _targets()
    base, sub = r["baseline"], r["submitted"]
    gated = sub["accuracy"] + 1e-9 < base["accuracy"] - t["max_accuracy_drop"]
    score = 0.0 if gated else math.sqrt(r["speedup"] * base["bytes"] / sub["bytes"])
    return [{"name": "Olympics score", "value": round(score, 4), "order": "desc"},
            {"name": "Accuracy (%)", "value": round(100.0 * sub["accuracy"], 2),
             "order": "desc"},
            {"name": "Speed-up", "value": round(r["speedup"], 4), "order": "desc"},
            {"name": "Size (KB)", "value": round(sub["bytes"] / 1024.0, 2), "order": "asc"}]


@case(points=6, hint="Your OLYMPICS_RECIPE through your optimize must stay within one point "
                     "of the baseline's held-out accuracy and be at least 3.5x smaller (INT8, "
                     "or enough zeros for CSR); the grader measures both itself.",
      check=_olympics_check)
def olympics_event(tt, rng):
    m = _module(tt)
    recipe = dict(m.OLYMPICS_RECIPE)
    unknown = sorted(str(k) for k in recipe if k not in RECIPE_KEYS)
    if unknown:
        raise ValueError(f"OLYMPICS_RECIPE: unknown keys {unknown}; allowed: {list(RECIPE_KEYS)}")
    seed = int(rng.integers(0, 1000))
    baseline = _baseline(tt, seed)
    submitted = m.optimize(baseline, TRAIN_X.copy(), TRAIN_Y.copy(), seed=seed, **recipe)
    submitted.eval()
    batch = tt.Tensor(TRAIN_X[:360])
    base_s: list[float] = []
    sub_s: list[float] = []
    with tt.no_grad():
        for i in range(PAIRS):
            for which in ((0, 1) if i % 2 == 0 else (1, 0)):
                model = (baseline, submitted)[which]
                t0 = time.thread_time()
                for _ in range(CALLS):
                    model(batch)
                (base_s, sub_s)[which].append(time.thread_time() - t0)
    return {"baseline": _state(baseline), "submitted": _state(submitted),
            "baseline_s": np.asarray(base_s), "submitted_s": np.asarray(sub_s)}


suite.leaderboard = ("olympics_event", olympics_leaderboard)
