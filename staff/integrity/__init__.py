"""`tito integrity`: which students' code for a module is too alike to be independent work.

It flags pairs for a person to read and never changes a grade. See ``docs/integrity.md``.

Pipeline: read the submissions (exports, folders), the course-provided code (the released
notebook) and, from the gradebook store, earlier terms' submissions of the module; normalise
each into syntax-tree tokens per function (:mod:`staff.integrity.fingerprint`); winnow k-gram
hashes into fingerprints, dropping every k-gram of the provided code; find pairs through an
inverted index of rare fingerprints (:mod:`staff.integrity.match`); write a staff-only HTML and
CSV report (:mod:`staff.integrity.report`); record this term's submissions in the store.

Submissions are hostile input: every one is parsed and fingerprinted in capped reader processes
(:mod:`autograder.harness.reader`, the grader's export worker: 512 MB, 60 s of CPU time each,
iterative tree walks), never in this process. One that cannot be read is listed in the report
with the reason, naming the file, and every other pair is still compared.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from staff.integrity.corpus import (
    Document,
    IntegrityError,
    attach_prints,
    provided_document,
    read_folder,
    read_inputs,
)
from staff.integrity.match import Pair, Settings, clusters, compare, explain, settings_of
from staff.integrity.report import (
    Inputs,
    private_folder,
    render_csv,
    render_html,
    write_private,
)

if TYPE_CHECKING:
    from coursekit.course import Course

__all__ = ["IntegrityError", "IntegrityResult", "run_integrity"]

#: Pairs shown side by side in the HTML report (all flagged ones, at most this many).
MAX_DETAIL = 50
#: Pairs whose matching functions are worked out (and every flagged pair).
EXPLAINED = 200


@dataclass
class IntegrityResult:
    """What one run found and wrote."""

    docs: list[Document]
    pairs: list[Pair]
    groups: list[list[int]]
    settings: Settings
    html: Path
    csv: Path
    recorded: int

    @property
    def flagged(self) -> list[Pair]:
        return [p for p in self.pairs if p.score >= self.settings.flag_score]

    @property
    def unreadable(self) -> list[Document]:
        """Submissions that could not be read, so were compared with nothing."""
        return [d for d in self.docs if d.problem]


def _digest(path: Path) -> str:
    if path.is_dir():
        return "folder"
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def run_integrity(*, module: str, inputs: list[Path], course: Course | None = None,
                  public: Path | None = None, out: Path | None = None,
                  store: Any = None, term: str | None = None, record: bool = True,
                  release_root: Path | None = None) -> IntegrityResult:
    """Compare every submission of ``module`` in ``inputs`` and write the report.

    Args:
        module: ``01``, ``1``, ``01_tensor`` or ``tensor``.
        inputs: Gradescope exports (zip or folder) and folders of notebooks.
        course: a loaded course, a path to course.yml, or None for the repository's.
        public: a folder of known public solutions, compared with this term's submissions.
        out: the report folder (default ``build/integrity/<module>``); made 0700.
        store: an open gradebook ``Store``, its URL, or None (the course's store); earlier
            terms are read from it and this term is recorded in it.
        term: this term's label (default: course.yml ``course.term``).
        record: record this term's submissions in the store.
        release_root: the student release (default: the repository's ``student_release``).

    Raises:
        IntegrityError: bad input (one line naming the file).
    """
    from coursekit import paths
    from coursekit.course import resolve_course

    c = resolve_course(course)
    m = c.module(module)
    settings = settings_of(c)
    term = term or c.course.term
    if not inputs:
        raise IntegrityError("give at least one Gradescope export or folder of notebooks")
    release = (release_root or paths.RELEASE) / m.name / f"{m.name}.ipynb"
    k, w = settings.k, settings.window
    provided = provided_document(release, k=k, w=w)
    docs = read_inputs([Path(p) for p in inputs], m.name, k=k, w=w)
    if public is not None:
        if not Path(public).is_dir():
            raise IntegrityError(f"{public}: not a folder of public solutions")
        docs += read_folder(Path(public), kind="public", k=k, w=w)

    opened = None
    if store is None or isinstance(store, (str, Path)):
        from gradebook.store import Store

        url = store if store is not None else c.course.gradebook_store
        opened = store = Store(url, root=paths.REPO_ROOT)
    try:
        from staff.integrity.store import load_other_terms, save

        past = load_other_terms(store, term=term, module=m.name, k=k, w=w)
        docs += past
        attach_prints(docs, provided.hashes)
        pairs = compare(docs, settings)
        cache: dict = {}
        for rank, pair in enumerate(pairs):
            if rank < EXPLAINED or pair.score >= settings.flag_score:
                explain(pair, docs, cache)
        groups = clusters(pairs, len(docs), settings)
        recorded = save(store, docs, term=term, module=m.name) if record else 0
    finally:
        if opened is not None:
            opened.close()

    folder = private_folder(Path(out) if out else paths.REPO_ROOT / "build" / "integrity" / m.name)
    cluster_of = {i: gi for gi, g in enumerate(groups, 1) for i in g}
    detail = min(MAX_DETAIL, max(sum(p.score >= settings.flag_score for p in pairs), 1))
    sources = [(str(p), _digest(Path(p))) for p in inputs]
    if public is not None:
        sources.append((f"{public} (public solutions)", "folder"))
    info = Inputs(sources, str(release), sorted({d.term for d in past}))
    title = f"Code similarity — Module {m.number:02d} · {m.title} — {term}"
    html_path, csv_path = folder / "similarity.html", folder / "similarity.csv"
    write_private(html_path, render_html(title=title, pairs=pairs, docs=docs,
                                         settings=settings, groups=groups, inputs=info,
                                         detail=detail))
    write_private(csv_path, render_csv(pairs, docs, settings, cluster_of))
    return IntegrityResult(docs, pairs, groups, settings, html_path, csv_path, recorded)
