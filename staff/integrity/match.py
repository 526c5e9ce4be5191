"""Pairwise similarity through an inverted index of fingerprints (never every pair naively).

Each fingerprint is weighted by how rare it is among the documents compared,
``log((N + 1) / df)``: code that many students wrote the same way (the idiom the lesson
teaches) counts little, code only two of them share counts much. A fingerprint shared by
more than ``max_df`` documents is an idiom and is ignored altogether (as MOSS does), which
also bounds the work: only documents sharing a rare fingerprint become candidate pairs.

The similarity of a pair is the weight of their shared fingerprints over the weight of the
smaller document (1.0: everything the smaller one wrote also appears in the other).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

from staff.integrity.corpus import Document
from staff.integrity.fingerprint import Print


@dataclass
class Pair:
    """Two documents and how much of their own code they share."""

    a: int
    b: int
    score: float            # shared weight / weight of the smaller document
    cover_a: float          # shared weight / weight of a
    cover_b: float          # shared weight / weight of b
    shared: int             # distinct shared fingerprints
    units: list[tuple[str, str, int]] = field(default_factory=list)  # (unit a, unit b, shared)
    lines_a: set[int] = field(default_factory=set)
    lines_b: set[int] = field(default_factory=set)


@dataclass(frozen=True)
class Settings:
    """How fingerprints are made and pairs chosen (course.yml ``integrity``; these defaults)."""

    k: int = 12                 # tokens per k-gram
    window: int = 6             # winnowing window (matches of k + window - 1 tokens found)
    max_df: int = 10            # ignore fingerprints shared by more documents than this ...
    max_df_fraction: float = 0.1  # ... or than this fraction of them, whichever is larger
    min_shared: int = 6         # a listed pair shares at least this many fingerprints
    flag_score: float = 0.6     # pairs at or above this similarity are flagged for review


def _cap(n_docs: int, s: Settings) -> int:
    return max(s.max_df, math.ceil(s.max_df_fraction * n_docs))


def compare(docs: list[Document], s: Settings) -> list[Pair]:
    """Every pair of documents sharing enough rare code, most similar first.

    Pairs of two documents that are both ``public`` or ``past`` are not compared: only this
    term's submissions are under review.
    """
    n = len(docs)
    cap = _cap(n, s)
    holders: dict[int, list[int]] = defaultdict(list)
    for i, doc in enumerate(docs):
        for h in {p.hash for p in doc.prints}:
            holders[h].append(i)
    weight = {h: math.log((n + 1) / len(ids)) for h, ids in holders.items() if len(ids) <= cap}
    total = [sum(weight.get(h, 0.0) for h in {p.hash for p in doc.prints}) for doc in docs]
    current = [doc.kind == "current" for doc in docs]
    shared_w: dict[tuple[int, int], float] = defaultdict(float)
    shared_n: dict[tuple[int, int], int] = defaultdict(int)
    for h, ids in holders.items():
        if len(ids) < 2 or h not in weight:
            continue
        wt = weight[h]
        for x in range(len(ids)):
            i = ids[x]
            for j in ids[x + 1:]:
                if current[i] or current[j]:
                    shared_w[(i, j)] += wt
                    shared_n[(i, j)] += 1
    pairs: list[Pair] = []
    for (i, j), m in shared_w.items():
        if shared_n[(i, j)] < s.min_shared or min(total[i], total[j]) <= 0:
            continue
        pairs.append(Pair(i, j, m / min(total[i], total[j]), m / total[i], m / total[j],
                          shared_n[(i, j)]))
    pairs.sort(key=lambda p: (-p.score, -p.shared, docs[p.a].label, docs[p.b].label))
    return pairs


def _by_hash(doc: Document) -> dict[int, list[Print]]:
    index: dict[int, list[Print]] = defaultdict(list)
    for p in doc.prints:
        index[p.hash].append(p)
    return index


def explain(pair: Pair, docs: list[Document],
            cache: dict[int, dict[int, list[Print]]] | None = None) -> Pair:
    """Fill in which units match which, and the lines of each document the match covers."""
    cache = {} if cache is None else cache
    for i in (pair.a, pair.b):
        if i not in cache:
            cache[i] = _by_hash(docs[i])
    a, b = cache[pair.a], cache[pair.b]
    by_units: dict[tuple[int, int], int] = defaultdict(int)
    for h in a.keys() & b.keys():
        units_b = {p.unit for p in b[h]}
        for p in b[h]:
            pair.lines_b.update(range(p.first_line, p.last_line + 1))
        for p in a[h]:
            pair.lines_a.update(range(p.first_line, p.last_line + 1))
            for ub in units_b:
                by_units[(p.unit, ub)] += 1
    da, db = docs[pair.a], docs[pair.b]
    pair.units = sorted(((da.unit_name(ua), db.unit_name(ub), n)
                         for (ua, ub), n in by_units.items()), key=lambda t: (-t[2], t[0], t[1]))
    return pair


def clusters(pairs: list[Pair], n_docs: int, s: Settings, *, min_size: int = 3
             ) -> list[list[int]]:
    """Groups of ``min_size`` or more documents linked by flagged pairs (union-find)."""
    parent = list(range(n_docs))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for p in pairs:
        if p.score >= s.flag_score:
            parent[find(p.a)] = find(p.b)
    groups: dict[int, list[int]] = defaultdict(list)
    for i in range(n_docs):
        groups[find(i)].append(i)
    return sorted((g for g in groups.values() if len(g) >= min_size), key=lambda g: (-len(g), g))


def settings_of(course: object) -> Settings:
    """The settings of course.yml's ``integrity`` section."""
    section = getattr(course, "integrity", None)
    if section is None:
        return Settings()
    return Settings(**section.model_dump())
