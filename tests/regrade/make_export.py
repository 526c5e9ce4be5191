"""Build a realistic Gradescope "Export Submissions" archive from the sample class (tests only).

``build_export(tmp)`` writes ``assignment_5001_export/`` with ``submission_metadata.yml``
(Ruby-symbol keys, as Gradescope writes it) and one ``submission_<id>/`` folder per submission,
zipped (or left as a folder). Old scores and old per-test results are chosen to differ from what
the current suite gives for some students:

=========  =======================  =====  =====  ===========================================
id         folder                   old    new    why
=========  =======================  =====  =====  ===========================================
700001     s1001_full               46     50     old suite failed matmul_batched, shape errors
700002     s1003_partial            35     35     unchanged (same failing tests)
700003     s1002_untouched          10     0      old autograder bug gave points for stubs
700004     corrupt notebook         50     0      the uploaded file is not notebook JSON
700005     no notebook              0      0      uploaded notes only; no old results
700006     renamed notebook         50     50     ``01_tensor (1).ipynb``, graded with a note
=========  =======================  =====  =====  ===========================================

Run ``python tests/regrade/make_export.py OUT.zip`` to write one for a manual try.
"""

from __future__ import annotations

import re
import shutil
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
CLASS = REPO / "samples" / "class_01_tensor"
MODULE = "01_tensor"
ASSIGNMENT = "5001"
UNTOUCHED_OLD_PASSES = ("shape_dtype_ndim_of_various_inputs", "numel_counts_elements",
                        "memory_footprint_in_bytes", "stride_in_elements",
                        "contiguity_after_views")  # 10 points an old suite bug gave for stubs
PARTIAL_FAILS = ("matmul_matrix_and_vector", "matmul_batched", "matmul_shape_errors_name_shapes",
                 "sum_over_dims", "mean_over_dims", "max_values_and_indices")


@dataclass
class Sub:
    """One submission of the fixture export."""

    sid: str
    name: str
    email: str
    files: dict[str, bytes | Path]
    old_fails: tuple[str, ...] | None  # None: the export holds no :results:
    old_score: float | None = None     # default: computed from old_fails
    old_passes: tuple[str, ...] = ()   # with old_fails ("*",): the only tests that passed
    created_at: str = "2027-01-25 17:59:00.000000000 -05:00"
    history: list[dict[str, object]] = field(default_factory=list)


def submissions() -> dict[str, Sub]:
    nb = f"{MODULE}.ipynb"
    return {
        "700001": Sub("S1001", "Ada Lovelace", "alovelace@example.edu",
                      {nb: CLASS / "s1001_full" / nb},
                      ("matmul_batched", "matmul_shape_errors_name_shapes"),
                      history=[{"created_at": "2027-01-24 10:00:00.000000000 -05:00",
                                "score": 30.0, "autograder_error": False}]),
        "700002": Sub("S1003", "Grace Hopper", "ghopper@example.edu",
                      {nb: CLASS / "s1003_partial" / nb}, PARTIAL_FAILS),
        "700003": Sub("S1002", "Alan Turing", "aturing@example.edu",
                      {nb: CLASS / "s1002_untouched" / nb}, ("*",),
                      old_passes=UNTOUCHED_OLD_PASSES),
        "700004": Sub("S1004", "Barbara Liskov", "bliskov@example.edu",
                      {nb: b'{"cells": [ {"cell_type": "code", "sour'}, ()),
        "700005": Sub("S1005", "Edsger Dijkstra", "edijkstra@example.edu",
                      {"tensor_notes.txt": b"I ran out of time.\n"}, None, old_score=0.0),
        "700006": Sub("S1006", "Frances Allen", "fallen@example.edu",
                      {"01_tensor (1).ipynb": CLASS / "s1001_full" / nb}, ()),
    }


def _suite_cases() -> tuple[str, list[tuple[str, float]]]:
    from autograder.harness.goldens import load_suite

    suite = load_suite(REPO / "autograder" / "suites" / MODULE / "suite.py")
    return suite.version, [(c.name, float(c.points)) for c in suite.cases]


def old_results(fails: tuple[str, ...], score: float | None, passes: tuple[str, ...] = (),
                ) -> tuple[dict[str, object], float]:
    """A results.json as the old autograder wrote it: every hidden case, ``fails`` failed
    (``("*",)``: all but ``passes``)."""
    version, cases = _suite_cases()
    tests: list[dict[str, object]] = [{
        "name": f"{MODULE} · submission", "score": 0.0, "max_score": 0.0, "status": "passed",
        "visibility": "visible", "tags": [f"module:{MODULE}", "public"]}]
    total = 0.0
    for name, points in cases:
        ok = name in passes if "*" in fails else name not in fails
        total += points if ok else 0.0
        tests.append({"name": f"{MODULE} · {name}", "score": points if ok else 0.0,
                      "max_score": points, "status": "passed" if ok else "failed",
                      "visibility": "after_due_date", "tags": [f"module:{MODULE}", "hidden"]})
    final = total if score is None else score
    return ({"score": final, "execution_time": 3.2, "visibility": "after_due_date",
             "tests": tests, "extra_data": {"module": MODULE, "suite_version": version}}, final)


def metadata_yaml(subs: dict[str, Sub]) -> str:
    """The YAML with Ruby-symbol keys (``:submitters:``), as Gradescope's export writes it."""
    doc: dict[str, object] = {}
    for sub_id, s in subs.items():
        rec: dict[str, object] = {
            ":submitters": [{":name": s.name, ":sid": s.sid, ":email": s.email}],
            ":created_at": s.created_at,
        }
        if s.old_fails is None:
            rec[":score"] = s.old_score
            rec[":results"] = None
        else:
            results, score = old_results(s.old_fails, s.old_score, s.old_passes)
            rec[":score"] = score
            rec[":results"] = results
        if s.history:
            rec[":history"] = [{f":{k}": v for k, v in h.items()} for h in s.history]
        doc[f"submission_{sub_id}"] = rec
    text = yaml.safe_dump(doc, sort_keys=True, allow_unicode=True)
    # Gradescope writes times as bare YAML timestamps, not quoted strings.
    return re.sub(r"(:created_at: )'([^']*)'", r"\1\2", text)


def build_export(tmp: Path, *, only: list[str] | None = None, nested: bool = False,
                 as_zip: bool = True, name: str = "export") -> Path:
    """Write the export under ``tmp``; returns the zip, or the folder to pass to regrade.

    Args:
        only: submission ids to include (default: all six).
        nested: put ``assignment_<id>_export/`` one folder deeper (``<name>/...``).
        as_zip: zip it (``<name>.zip``); else return the unpacked folder.
    """
    subs = {k: v for k, v in submissions().items() if only is None or k in only}
    base = tmp / f"{name}-tree"
    if base.exists():
        shutil.rmtree(base)
    top = base / name if nested else base
    root = top / f"assignment_{ASSIGNMENT}_export"
    root.mkdir(parents=True)
    (root / "submission_metadata.yml").write_text(metadata_yaml(subs), encoding="utf-8")
    for sub_id, s in subs.items():
        folder = root / f"submission_{sub_id}"
        folder.mkdir()
        for fname, content in s.files.items():
            data = content.read_bytes() if isinstance(content, Path) else content
            (folder / fname).write_bytes(data)
    if not as_zip:
        return base
    zpath = tmp / f"{name}.zip"
    with zipfile.ZipFile(zpath, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in sorted(base.rglob("*")):
            if f.is_file():
                zf.write(f, f.relative_to(base).as_posix())
    shutil.rmtree(base)
    return zpath


if __name__ == "__main__":  # pragma: no cover - manual use
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "export.zip").absolute()
    sys.path.insert(0, str(REPO))
    made = build_export(target.parent, name=target.stem)
    print(made)
