"""A synthetic Gradescope "Export Submissions" archive for any module (demo, tests, benchmark).

``synth_export(module="01", n=200, out=Path("build/synth/export.zip"))`` writes, in the real
format:

* ``export.zip`` holding ``assignment_<5000+NN>_export/submission_metadata.yml`` (Ruby-symbol
  keys, ``!ruby/object:BigDecimal`` scores, bare timestamps, ``:history:`` for some) and one
  ``submission_<id>/`` folder per record with the uploaded notebook;
* ``export-roster.csv`` beside it (``<name>-roster.csv`` for an export named ``<name>.zip``,
  so two exports in one folder keep their own rosters; Canvas format) for the students who
  are on the course roster.

Each record is one of these kinds (``kinds()`` lists them; a seeded RNG mixes them):

========== ===================================================================================
correct    the solution's export cells, as a student would submit them
buggy      the solution with one plausible bug from ``autograder/suites/NN_slug/bugs.py``
untouched  the student release as handed out
late       correct, submitted after the due time (lateness is the gradebook's business)
corrupt    an upload that is not notebook JSON
looping    the solution with an infinite loop in one function (its tests time out)
duplicated a group record naming a student who also has a record of their own
off_roster correct, by a student who is not on the roster
========== ===================================================================================

Old scores and ``:results:`` are what an earlier (weaker) suite gave: every hidden test passed
for correct, buggy, late and off-roster work; all failed for untouched and corrupt uploads; a
looping one shows its timeouts and a long ``execution_time``. Nothing here runs student code.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import re
import shutil
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coursekit.gradescope_export import METADATA_YML

if TYPE_CHECKING:
    from coursekit.course import Course

KINDS = ("correct", "buggy", "untouched", "late", "corrupt", "looping", "duplicated",
         "off_roster")
DEFAULT_MIX = {"correct": 0.55, "buggy": 0.2, "untouched": 0.08, "late": 0.1, "corrupt": 0.03,
               "off_roster": 0.04}
FIRST = ["Ada", "Alan", "Grace", "Edsger", "Barbara", "Donald", "Frances", "John", "Margaret",
         "Ken", "Radia", "Tim", "Shafi", "Leslie", "Niklaus", "Hedy", "Katherine", "Dennis",
         "Sophie", "Yann"]
LAST = ["Lovelace", "Turing", "Hopper", "Dijkstra", "Liskov", "Knuth", "Allen", "Backus",
        "Hamilton", "Thompson", "Perlman", "Berners-Lee", "Goldwasser", "Lamport", "Wirth",
        "Lamarr", "Johnson", "Ritchie", "Wilson", "LeCun"]
FIXED_TIME = (2027, 1, 1, 0, 0, 0)


@dataclass
class SynthRecord:
    """One record of the synthetic export and what it is."""

    submission_id: str
    kind: str
    students: list[dict[str, str]]
    detail: str = ""


@dataclass
class SynthExport:
    """What :func:`synth_export` wrote."""

    path: Path
    roster: Path
    module: str
    records: list[SynthRecord] = field(default_factory=list)

    def kinds(self) -> dict[str, int]:
        """How many records of each kind."""
        out: dict[str, int] = {}
        for r in self.records:
            out[r.kind] = out.get(r.kind, 0) + 1
        return out


def _catalogue_bugs(name: str) -> dict[str, list[tuple[str, str]]]:
    from autograder.harness.mutation import read_catalogue
    from coursekit import paths

    path = paths.bugs_catalogue(name)
    if not path.is_file():
        return {}
    return dict(read_catalogue(path).get("BUGS", {}))


def _apply_bug(sources: list[str], edits: list[tuple[str, str]]) -> list[str] | None:
    """The export cells with a bug's code edits applied (None when one does not apply)."""
    out = list(sources)
    changed = False
    for old, new in edits:
        hits = [i for i, s in enumerate(out) if old in s]
        if len(hits) != 1:
            if '"""' in old or "``" in old or "APPROACH" in old:
                continue  # a docstring edit of the fixture: irrelevant to behaviour
            return None
        out[hits[0]] = out[hits[0]].replace(old, new, 1)
        changed = True
    return out if changed else None


def _notebooks(module: Any) -> dict[str, tuple[bytes, str]]:
    """Notebook bytes per kind (buggy ones keyed ``buggy:<bug>``) and a detail string."""
    from coursebuild import samples
    from coursebuild.release import dump_notebook
    from coursekit import paths

    def notebook(sources: list[str]) -> bytes:
        return dump_notebook(samples.notebook_with_exports(module, sources)).encode()

    sources = samples.solution_export_sources(module)
    release = (paths.RELEASE / module.name / f"{module.name}.ipynb").read_bytes()
    out = {"correct": (notebook(sources), ""), "untouched": (release, ""),
           # the sample class's looping fault (coursebuild.samples.faults), for any module
           "looping": (notebook(samples.solution_export_sources(module, "infinite_loop")),
                       samples.note(module, "infinite_loop"))}
    for bug, edits in sorted(_catalogue_bugs(module.name).items()):
        edited = _apply_bug(sources, edits)
        if edited is not None:
            out[f"buggy:{bug}"] = (notebook(edited), bug)
    return out


def _old_results(module: Any, course: Course, kind: str, timeout: float) -> dict[str, Any]:
    """What the earlier suite wrote for this kind (scores add up, as the gradebook checks)."""
    from autograder.harness.goldens import load_suite
    from coursekit import paths

    suite = load_suite(paths.SUITES / module.name / "suite.py")
    ok = kind in ("correct", "buggy", "late", "off_roster", "duplicated")
    tests: list[dict[str, Any]] = [{
        "name": f"{module.name} · submission", "score": 0.0, "max_score": 0.0,
        "status": "passed" if kind != "corrupt" else "failed", "visibility": "visible",
        "tags": [f"module:{module.name}", "public"],
        "output": ("Your submission could not be graded: not valid notebook JSON"
                   if kind == "corrupt" else "exported cleanly")}]
    execution = 2.5
    for i, case in enumerate(suite.cases):
        passed = ok or (kind == "looping" and i >= 3)
        out = "Passed." if passed else "Not implemented yet."
        if kind == "looping" and i < 3:
            out = f"Timed out: stopped after {timeout:g} s (an infinite loop, or far too slow?)"
            execution += timeout
        tests.append({"name": f"{module.name} · {case.name}",
                      "score": float(case.points) if passed else 0.0,
                      "max_score": float(case.points), "status": "passed" if passed else "failed",
                      "visibility": case.visibility, "output": out,
                      "tags": [f"module:{module.name}", "hidden"]})
    for ms in course.milestones_graded_with(module.number):
        tests.append({"name": f"milestone · {ms.id} · {ms.title}",
                      "score": float(ms.points) if ok else 0.0, "max_score": float(ms.points),
                      "status": "passed" if ok else "failed", "visibility": "after_due_date",
                      "output": "", "tags": [f"module:{module.name}", f"milestone:{ms.id}"]})
    total = round(sum(t["score"] for t in tests), 6)
    return {"score": total, "execution_time": execution, "visibility": "after_due_date",
            "tests": tests, "extra_data": {"module": module.name, "suite_version": "2027.0"}}


def _bigdecimal(value: float) -> str:
    """Ruby's YAML dump of a BigDecimal: ``!ruby/object:BigDecimal 18:0.465e2``.

    Example:
        >>> _bigdecimal(46.5), _bigdecimal(0.05), _bigdecimal(0.0)
        ('!ruby/object:BigDecimal 18:0.465e2', '!ruby/object:BigDecimal 18:0.5e-1', \
'!ruby/object:BigDecimal 18:0.0')
    """
    from decimal import Decimal

    if value == 0:
        return "!ruby/object:BigDecimal 18:0.0"
    d = Decimal(repr(float(value))).normalize()
    sign, digits, exponent = d.as_tuple()
    assert isinstance(exponent, int)
    mantissa = "".join(str(x) for x in digits)
    return (f"!ruby/object:BigDecimal 18:{'-' if sign else ''}0.{mantissa}"
            f"e{len(digits) + exponent}")


def synth_export(*, module: str, n: int, out: Path, seed: int = 0, course: Course | None = None,
                 mix: dict[str, float] | None = None, looping: int = 0, duplicated: int = 0,
                 hostile_names: bool = False, as_zip: bool = True) -> SynthExport:
    """Write a synthetic export of ``n`` records for ``module`` (see the module docstring).

    Args:
        module: ``01``, ``tensor``, ``01_tensor``...
        n: records in the export (each one active submission).
        out: the zip to write (or, with ``as_zip=False``, the folder); its roster goes beside
            it as ``<name>-roster.csv`` (:func:`roster_path`).
        seed: the RNG seed (the same seed gives the same bytes).
        mix: weights of correct, buggy, untouched, late, corrupt, off_roster (default
            :data:`DEFAULT_MIX`).
        looping: exactly this many looping submissions (spread through the export).
        duplicated: this many group records naming a student who also has a record alone
            (an export ``--apply`` refuses; the dry run reports it).
        hostile_names: give a few students names with rich markup and spreadsheet formulas.

    Returns:
        What was written, record by record.
    """
    from coursekit.course import resolve_course
    from gradebook import csvsafe
    from staff.regrade.core import resolve_module

    c = resolve_course(course)
    mod = resolve_module(c, module)
    rng = random.Random(seed)
    weights = dict(mix or DEFAULT_MIX)
    notebooks = _notebooks(mod)
    bugs = sorted(k for k in notebooks if k.startswith("buggy:"))
    if not bugs:
        weights.pop("buggy", None)
    timeout = float(c.course.grading.test_timeout_s)
    due = c.local_time(mod.due)
    kinds = [rng.choices(list(weights), weights=list(weights.values()))[0] for _ in range(n)]
    for i in range(min(looping, n)):
        kinds[min(n - 1, (i * n) // looping + min(2, n - 1))] = "looping"
    for i in range(min(duplicated, max(n - 1, 0))):
        kinds[n - 1 - i] = "duplicated"
    records: list[SynthRecord] = []
    people: list[dict[str, str]] = []
    doc: dict[str, Any] = {}
    files: dict[str, bytes] = {}
    assignment = 5000 + mod.number
    base = f"assignment_{assignment}_export"
    for i, kind in enumerate(kinds):
        sub_id = str(800000 + mod.number * 10000 + i)
        first, last = FIRST[i % len(FIRST)], LAST[(i // len(FIRST)) % len(LAST)]
        if hostile_names and i % 7 == 1:
            first = ["[bold red]Rich[/]", "=HYPERLINK(\"http://x.example\",\"x\")",
                     "@SUM(A1)", "[/x]"][(i // 7) % 4]
        person = {"name": f"{first} {last}", "sid": f"S{20000 + i}",
                  "email": f"s{20000 + i}@example.edu"}
        students = [person]
        detail = ""
        if kind == "duplicated":
            partner = people[rng.randrange(len(people))] if people else person
            students = [person, partner]
            detail = f"group with {partner['sid']}, who also submitted alone"
        if kind != "off_roster":
            people.append(person)
        else:
            person["sid"] = f"X{90000 + i}"
            person["email"] = f"visitor{i}@elsewhere.example"
        if kind == "corrupt":
            data = b'{"cells": [ {"cell_type": "code", "sour'
        elif kind == "buggy":
            bug = bugs[rng.randrange(len(bugs))]
            data, detail = notebooks[bug]
        elif kind == "looping":
            data, detail = notebooks["looping"]
        elif kind == "untouched":
            data, _ = notebooks["untouched"]
        else:
            data, _ = notebooks["correct"]
        hours = rng.uniform(1, 60) if kind == "late" else -rng.uniform(0.5, 72)
        created = due + dt.timedelta(hours=hours)
        results = _old_results(mod, c, kind, timeout)
        rec: dict[str, Any] = {
            ":submitters": [{":name": s["name"], ":sid": s["sid"], ":email": s["email"]}
                            for s in students],
            ":created_at": _stamp(created),
            ":score": results["score"], ":results": results,
        }
        if rng.random() < 0.25:
            rec[":history"] = [{":created_at": _stamp(created - dt.timedelta(hours=5)),
                                ":score": 0.0, ":autograder_error": False}]
        doc[f"submission_{sub_id}"] = rec
        files[f"{base}/submission_{sub_id}/{mod.name}.ipynb"] = data
        records.append(SynthRecord(sub_id, kind, students, detail))
    text = _yaml(doc)
    files[f"{base}/{METADATA_YML}"] = text.encode()  # the name the reader looks for
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if as_zip:
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
            for name in sorted(files):
                zf.writestr(zipfile.ZipInfo(name, FIXED_TIME), files[name])
    else:
        shutil.rmtree(out, ignore_errors=True)
        for name, data in files.items():
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            (out / name).write_bytes(data)
    roster = roster_path(out)
    rows = [[f"{p['name'].split(' ', 1)[-1]}, {p['name'].split(' ', 1)[0]}", 60000 + k,
             p["sid"], p["email"].split("@")[0], "CS 249 LEC 001", "full", p["email"]]
            for k, p in enumerate(people)]
    csvsafe.write_rows(roster, ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                                "Track", "Email"], rows)
    return SynthExport(path=out, roster=roster, module=mod.name, records=records)


def roster_path(export: Path) -> Path:
    """The roster written beside the export ``export``: ``<name>-roster.csv``."""
    name = export.name[:-4] if export.name.endswith(".zip") else export.name
    return export.with_name(f"{name}-roster.csv")


def _stamp(when: dt.datetime) -> str:
    """Gradescope's timestamp: ``2027-01-25 17:59:00.000000000 -05:00``."""
    zone = when.strftime("%z")
    return when.strftime("%Y-%m-%d %H:%M:%S.%f000 ") + f"{zone[:3]}:{zone[3:]}"


def _yaml(doc: dict[str, Any]) -> str:
    """The YAML as Gradescope writes it: bare timestamps and BigDecimal record scores."""
    import yaml

    text = yaml.safe_dump(doc, sort_keys=True, allow_unicode=True, width=120)
    text = re.sub(r"(:created_at: )'([^']*)'", r"\1\2", text)
    return re.sub(r"^(  :score: )([0-9.eE+-]+)$",
                  lambda m: m.group(1) + _bigdecimal(float(m.group(2))), text, flags=re.M)


def main(argv: list[str] | None = None) -> int:
    """``python -m staff.synthetic MODULE N OUT.zip [--looping K] [--seed S]``."""
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("module")
    ap.add_argument("n", type=int)
    ap.add_argument("out", type=Path)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--looping", type=int, default=0)
    ap.add_argument("--duplicated", type=int, default=0)
    args = ap.parse_args(argv)
    made = synth_export(module=args.module, n=args.n, out=args.out, seed=args.seed,
                        looping=args.looping, duplicated=args.duplicated)
    print(json.dumps({"export": str(made.path), "roster": str(made.roster),
                      "kinds": made.kinds()}))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
