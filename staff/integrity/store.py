"""Earlier terms' submissions, kept in the gradebook store so each term meets the ones before.

``tito integrity`` records every document of this term (its code cells, not fingerprints, so a
change of the fingerprint settings never makes old terms unreadable) in the store's
``integrity_documents`` table, once per (term, module, student, code). Later runs read the
other terms' documents for the same module back and compare this term with them.
"""

from __future__ import annotations

import json
from typing import Any

from staff.integrity.corpus import Document, Source, read_sources


def save(store: Any, docs: list[Document], *, term: str, module: str) -> int:
    """Record this term's documents (idempotent); returns how many were new."""
    from gradebook.store import current_user, now_utc

    added = 0
    with store.transaction() as conn:
        for doc in docs:
            if doc.kind != "current" or doc.problem:
                continue
            cells = json.dumps([[c.index, c.source] for c in doc.cells])
            cur = conn.execute(
                "INSERT OR IGNORE INTO integrity_documents (term, module, label, student, kind, "
                "origin, sha256, cells, recorded_at, recorded_by) VALUES (?, ?, ?, ?, ?, ?, ?, "
                "?, ?, ?)",
                (term, module, doc.label, doc.student or doc.label, doc.kind, doc.origin,
                 doc.sha256, cells, now_utc(), current_user()))
            added += max(cur.rowcount, 0)
    return added


def load_other_terms(store: Any, *, term: str, module: str, k: int, w: int
                     ) -> list[Document]:
    """Every document of ``module`` recorded in a term other than ``term``, as ``past``
    (their code is fingerprinted in the capped reader processes, like this term's)."""
    rows = store.conn.execute(
        "SELECT term, label, student, origin, cells FROM integrity_documents "
        "WHERE module = ? AND term <> ? ORDER BY term, label, sha256", (module, term)).fetchall()
    sources = []
    for past_term, label, student, origin, cells in rows:
        notes: tuple[str, ...] = ()
        try:
            parsed = tuple((int(i), str(src)) for i, src in json.loads(cells))
        except (ValueError, TypeError, RecursionError):
            parsed, notes = (), ("its cells in the gradebook store are not readable JSON",)
        sources.append(Source(f"{past_term}: {label}", "past", f"term {past_term}: {origin}",
                              cells=parsed, student=student, term=past_term, notes=notes))
    return read_sources(sources, k=k, w=w)
