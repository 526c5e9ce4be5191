"""A small assignment with four independently written solutions, for `tito integrity` tests.

The release has six stubs. Each of the four "students" below solved them on their own, in
their own style (two of them with NumPy, as the lesson suggests, so they share idioms the way
real independent work does). Copies are made from them with the disguises of
``staff.integrity.synthetic``.
"""

from __future__ import annotations

import json
from pathlib import Path

RELEASE = '''#| export
import numpy as np


def mean(xs):
    """The arithmetic mean of a 1-D array."""
    raise NotImplementedError("module 01: implement mean (see its docstring)")


def variance(xs, ddof=0):
    """The variance with ``ddof`` delta degrees of freedom."""
    raise NotImplementedError("module 01: implement variance (see its docstring)")


def softmax(v):
    """A numerically stable softmax of a 1-D array."""
    raise NotImplementedError("module 01: implement softmax (see its docstring)")


def matmul(a, b):
    """The matrix product of two 2-D arrays."""
    raise NotImplementedError("module 01: implement matmul (see its docstring)")


def normalize_rows(m):
    """Each row of ``m`` scaled to unit Euclidean norm (zero rows stay zero)."""
    raise NotImplementedError("module 01: implement normalize_rows (see its docstring)")


def top_k(v, k):
    """Indices of the ``k`` largest values of ``v``, largest first."""
    raise NotImplementedError("module 01: implement top_k (see its docstring)")
'''

HEADER = "#| export\nimport numpy as np\n\n\n"

STUDENTS = {
    "loops": '''
def mean(xs):
    total = 0.0
    for x in xs:
        total += x
    return total / len(xs)


def variance(xs, ddof=0):
    m = mean(xs)
    acc = 0.0
    for x in xs:
        acc += (x - m) ** 2
    return acc / (len(xs) - ddof)


def softmax(v):
    biggest = max(v)
    exps = []
    for x in v:
        exps.append(np.exp(x - biggest))
    s = sum(exps)
    return np.array([e / s for e in exps])


def matmul(a, b):
    rows, inner = len(a), len(a[0])
    cols = len(b[0])
    out = np.zeros((rows, cols))
    for i in range(rows):
        for j in range(cols):
            for t in range(inner):
                out[i, j] += a[i][t] * b[t][j]
    return out


def normalize_rows(m):
    out = np.zeros_like(m, dtype=float)
    for i, row in enumerate(m):
        length = np.sqrt(sum(x * x for x in row))
        if length > 0:
            out[i] = row / length
    return out


def top_k(v, k):
    order = sorted(range(len(v)), key=lambda i: v[i], reverse=True)
    return order[:k]
''',
    "numpy_a": '''
def mean(xs):
    return np.sum(xs) / xs.shape[0]


def variance(xs, ddof=0):
    centered = xs - xs.mean()
    return np.sum(centered * centered) / (xs.size - ddof)


def softmax(v):
    shifted = v - np.max(v)
    e = np.exp(shifted)
    return e / e.sum()


def matmul(a, b):
    return np.einsum("ik,kj->ij", a, b)


def normalize_rows(m):
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return m / norms


def top_k(v, k):
    return list(np.argsort(-v, kind="stable")[:k])
''',
    "numpy_b": '''
def mean(xs):
    arr = np.asarray(xs, dtype=np.float64)
    return float(arr.sum() / len(arr))


def variance(xs, ddof=0):
    arr = np.asarray(xs, dtype=np.float64)
    n = len(arr) - ddof
    return float(((arr - arr.mean()) ** 2).sum() / n)


def softmax(v):
    z = np.asarray(v, dtype=np.float64)
    z = np.exp(z - z.max())
    total = np.sum(z)
    return z / total


def matmul(a, b):
    a = np.asarray(a)
    b = np.asarray(b)
    return (a[:, :, None] * b[None, :, :]).sum(axis=1)


def normalize_rows(m):
    sq = (m ** 2).sum(axis=1)
    scale = np.where(sq > 0, 1.0 / np.sqrt(np.where(sq > 0, sq, 1.0)), 0.0)
    return m * scale[:, None]


def top_k(v, k):
    idx = np.argpartition(v, -k)[-k:]
    return [int(i) for i in idx[np.argsort(v[idx])[::-1]]]
''',
    "functional": '''
from functools import reduce


def mean(xs):
    return reduce(lambda s, x: s + x, xs, 0.0) / len(xs)


def variance(xs, ddof=0):
    mu = mean(xs)
    squares = map(lambda x: (x - mu) * (x - mu), xs)
    return sum(squares) / (len(xs) - ddof)


def softmax(v):
    peak = np.max(v)
    weights = [np.exp(x - peak) for x in v]
    norm = reduce(lambda s, w: s + w, weights)
    return np.array(list(map(lambda w: w / norm, weights)))


def matmul(a, b):
    cols = list(zip(*b))
    return np.array([[sum(x * y for x, y in zip(row, col)) for col in cols] for row in a])


def normalize_rows(m):
    def unit(row):
        n = sum(x * x for x in row) ** 0.5
        return [x / n for x in row] if n else [0.0 for _ in row]
    return np.array([unit(r) for r in m])


def top_k(v, k):
    pairs = sorted(enumerate(v), key=lambda p: -p[1])
    return [i for i, _ in pairs][:k]
''',
}


def notebook(code: str) -> str:
    """A minimal notebook: a lesson cell, the export cell, and a provided check cell."""
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": "# Module 01 · Toy statistics"},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": code},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": 'grader.check("statistics")'},
    ]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
                      indent=1)


def solution(style: str) -> str:
    return HEADER + STUDENTS[style].lstrip("\n")


def write_release(root: Path, module_name: str = "01_tensor") -> Path:
    folder = root / module_name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{module_name}.ipynb"
    path.write_text(notebook(RELEASE), encoding="utf-8")
    return root
