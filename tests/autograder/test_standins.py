"""Stand-ins (invariant 11, docs/architecture.md): a composite's case runs on the reference's version of
the units it is built from, in a sealed stage of its own; a bug is charged by its own unit.

The fixture course ``fixtures/parts`` has five one-point units: ``scale``, ``shift``,
``affine`` (built from the first two), ``Box.area`` and ``Crate.volume`` (built from
``Box.area``, a class member of the base class).
"""

from __future__ import annotations

import importlib
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from autograder import standins
from autograder.harness.goldens import build_goldens, load_suite
from autograder.harness.supervisor import SEALED_FATAL
from autograder.suite import Suite
from tests.autograder.conftest import FAST, check_results_schema, notebook_bytes, outputs, scores

PARTS = Path(__file__).parent / "fixtures" / "parts"
REF, STUBS = PARTS / "ref", PARTS / "stubs"
SUITE = PARTS / "suites" / "01_parts" / "suite.py"
CORRECT = (REF / "parts.py").read_text(encoding="utf-8")
SNAPSHOT: dict[str, Any] = {
    "format": 1, "course": "TEST",
    "module": {"number": 1, "slug": "parts", "title": "Parts", "points": 5, "due": ""},
    "limits": {"test_timeout_s": 20, "run_timeout_s": 540, "memory_limit_mb": 700,
               "max_output_kb": 64},
    "milestones": [], "modules": [{"number": 1, "slug": "parts"}],
}


def _grade(tmp_path: Path, source: str, *, goldens: Path | None = None,
           lanes: int = 1) -> dict[str, Any]:
    from autograder.harness import grade

    sub = tmp_path / f"sub{len(list(tmp_path.iterdir()))}"
    sub.mkdir()
    (sub / "01_parts.ipynb").write_bytes(notebook_bytes(source))
    out = sub / "out" / "results.json"
    res = grade(module=SNAPSHOT, submission=sub, suite_path=SUITE, reference=REF, out=out,
                limits=FAST, expected=goldens, stubs=STUBS, lanes=lanes)
    check_results_schema(res)
    return res


def _edit(old: str, new: str) -> str:
    assert CORRECT.count(old) == 1
    return CORRECT.replace(old, new)


# ----------------------------------------------------------------------------- suite API
def test_cases_run_in_stages_after_every_case_of_the_units_they_stand_in():
    suite = load_suite(SUITE)
    assert suite.check_units() == []
    stages = [[c.name for c in s] for s in suite.stages()]
    assert stages == [["scale_values", "shift_values", "box_area"],
                      ["affine_values", "crate_volume"]]
    assert suite.standins(suite.get("affine_values")) == ("scale", "shift")
    assert suite.standins(suite.get("crate_volume")) == ("Box.area",)


def test_units_are_declared_once_in_order_and_without_cycles():
    s = Suite(module="01_x", version="t")
    a = s.unit("a", "f")
    with pytest.raises(ValueError, match="already part of unit 'a'"):
        s.unit("b", "f")
    s.unit("c", "C.m")
    with pytest.raises(ValueError, match="already part of unit 'c'"):
        s.unit("d", "C")
    with pytest.raises(ValueError, match="not declared before"):
        s.unit("e", "g", uses=("later",))
    with pytest.raises(ValueError, match="not declared"):
        s.case(points=1, unit="nope")

    @s.case(points=1, unit=a, standins=("c",))
    def one(tt, rng):
        return 1

    @s.case(points=1, unit="c", standins=("a",))
    def two(tt, rng):
        return 2

    assert any("cycle" in p for p in s.check_units())


def test_extract_takes_whole_definitions_and_class_members():
    got = standins.extract(CORRECT, {"parts": ("scale", "affine"), "area": ("Box.area",)})
    assert got["parts"]["names"] == ["scale", "affine"]
    assert "def scale(x, k):" in got["parts"]["defs"] and "def shift" not in got["parts"]["defs"]
    assert got["area"]["members"]["Box"]["names"] == ["area"]
    assert got["area"]["members"]["Box"]["source"].startswith("class Box:\n    def area")
    assert "import numpy as np" in got["parts"]["prelude"]
    with pytest.raises(standins.StandinError, match="defines no 'nothing'"):
        standins.extract(CORRECT, {"x": ("nothing",)})
    assert standins.covering_entry(CORRECT, CORRECT.splitlines().index(
        "        return self.area() * self.d") + 1) == "Crate.volume"


def _package(tmp_path: Path, source: str, name: str = "pkgx") -> Any:
    root = tmp_path / "pkgs"
    (root / name).mkdir(parents=True)
    (root / name / "__init__.py").write_text("from .parts import affine, scale  # noqa: F401\n")
    (root / name / "parts.py").write_text(source)
    sys.path.insert(0, str(root))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(root))


def test_apply_puts_the_reference_in_every_alias_and_restore_puts_the_student_back(tmp_path):
    wrong = _edit("    return np.asarray(x, dtype=np.float64) * k\n",
                  "    return np.asarray(x, dtype=np.float64) * k * 2\n")
    wrong = wrong.replace("        return self.w * self.h\n", "        return self.w + self.h\n")
    pkg = _package(tmp_path, wrong)
    mod = importlib.import_module(f"{pkg.__name__}.parts")
    mine_scale, mine_area = mod.scale, mod.Box.area
    code = standins.compile_payloads(standins.extract(
        CORRECT, {"scale": ("scale",), "area": ("Box.area",)}))
    restore = standins.apply(mod, list(code.values()), pkg.__name__)
    try:
        assert mod.scale is not mine_scale and pkg.scale is mod.scale  # the facade too
        assert mod.scale(3.0, 2.0) == 6.0
        assert mod.affine(1.0, 2.0, 1.0) == 3.0  # the student's affine calls the stand-in
        assert mod.Crate(2, 3, 4).volume() == 24  # super().__init__ and area() of the stand-in
        assert mod.scale.__code__.co_filename.startswith("<course reference")
    finally:
        restore()
    assert mod.scale is mine_scale and pkg.scale is mine_scale and mod.Box.area is mine_area
    assert mod.scale(3.0, 2.0) == 12.0


def test_a_member_stand_in_needs_the_class(tmp_path):
    pkg = _package(tmp_path, CORRECT.replace("class Box:", "class Boxes:").replace(
        "class Crate(Box):", "class Crate(Boxes):"), name="pkgy")
    mod = importlib.import_module(f"{pkg.__name__}.parts")
    code = standins.compile_payloads(standins.extract(CORRECT, {"area": ("Box.area",)}))
    with pytest.raises(standins.StandinError, match="no class Box"):
        standins.apply(mod, list(code.values()), pkg.__name__)
    assert "Box" not in vars(mod)


# ----------------------------------------------------------------------------- grading
def test_a_bug_in_a_part_costs_only_the_parts_own_cases(tmp_path):
    res = _grade(tmp_path, _edit("    return np.asarray(x, dtype=np.float64) * k\n",
                                 "    return np.asarray(x, dtype=np.float64) * (k + 1)\n"))
    assert scores(res) == {"scale_values": 0, "shift_values": 1, "affine_values": 1,
                           "box_area": 1, "crate_volume": 1}
    assert res["extra_data"]["run"]["launches"] == 2  # one child per stage
    ran_with = outputs(res)
    assert "Hint: scale" in ran_with["scale_values"]


def test_a_member_bug_in_the_base_class_costs_only_its_case(tmp_path):
    res = _grade(tmp_path, _edit("        return self.w * self.h\n",
                                 "        return self.w + self.h\n"))
    assert scores(res) == {"scale_values": 1, "shift_values": 1, "affine_values": 1,
                           "box_area": 0, "crate_volume": 1}


def test_a_wrong_composite_costs_its_case_and_says_what_ran_with_the_course_code(tmp_path):
    res = _grade(tmp_path, _edit("    return shift(scale(x, k), c)\n", "    return scale(x, k)\n"))
    assert scores(res) == {"scale_values": 1, "shift_values": 1, "affine_values": 0,
                           "box_area": 1, "crate_volume": 1}
    out = outputs(res)["affine_values"]
    assert "course's own scale and shift" in out, out


def test_the_reference_of_a_unit_never_runs_where_that_unit_is_graded(tmp_path):
    """A submission that looks for the course's code in its own process and uses it finds
    it only in the stage that grades the composites, never where ``scale`` is graded."""
    cheat = textwrap.dedent('''
        def scale(x, k):
            import gc
            for f in gc.get_objects():
                code = getattr(f, "__code__", None)
                if (getattr(f, "__name__", "") == "scale" and code is not None
                        and code.co_filename.startswith("<course reference")):
                    return f(x, k)
            return np.asarray(x, dtype=np.float64) * 0
    ''')
    mine = CORRECT[CORRECT.index("def scale(x, k):"):CORRECT.index("def shift(x, c):")]
    source = CORRECT.replace(mine, cheat.lstrip("\n") + "\n\n")
    assert "gc.get_objects" in source
    res = _grade(tmp_path, source)
    assert scores(res)["scale_values"] == 0
    assert scores(res)["affine_values"] == 1  # runs with the reference's scale anyway


def test_a_stand_in_stage_is_sealed(tmp_path):
    """What a child that holds course code prints, raises or names is not shown: only the
    exception's built-in type and the student's own lines, re-read by the parent."""
    source = _edit("    return shift(scale(x, k), c)\n",
                   "    print('LE' + 'AK-printed')\n"
                   "    raise ValueError('LE' + 'AK-message')\n")
    res = _grade(tmp_path, source)
    out = outputs(res)["affine_values"]
    assert "LEAK" not in json.dumps(res)
    assert "ValueError" in out and "its message is not shown" in out
    assert "parts.py, line" in out and "raise ValueError(" in out  # the parent's copy


def test_a_child_that_holds_course_code_cannot_speak_through_its_import(tmp_path):
    """The first stage's import decides the visible ``submission`` test; a later stage's
    import output or failure never reaches it."""
    probe = textwrap.dedent('''
        import gc as _gc
        _found = [o.defs for o in _gc.get_objects() if type(o).__name__ == "Compiled"]
        print("LE" + "AK-import" if _found else "quiet import")
        if _found:
            raise RuntimeError("LE" + "AK-fatal " + _found[0].co_filename)
    ''')
    res = _grade(tmp_path, CORRECT + probe)
    sub = outputs(res)["01_parts · submission"] if "01_parts · submission" in outputs(res) else \
        next(t["output"] for t in res["tests"] if t["name"].endswith("submission"))
    assert "quiet import" in sub and "LEAK" not in json.dumps(res)
    s = scores(res)
    assert s["scale_values"] == s["shift_values"] == s["box_area"] == 1
    assert s["affine_values"] == s["crate_volume"] == 0
    assert SEALED_FATAL in outputs(res)["affine_values"]


def test_goldens_carry_the_stand_ins_and_a_bank_without_them_is_refused(tmp_path):
    bank = build_goldens(suite_path=SUITE, reference=REF, out=tmp_path / "g" / "goldens.json",
                         slug="parts", number=1, all_modules=((1, "parts"),), limits=FAST,
                         variants=4)
    doc = json.loads(bank.read_text())
    assert sorted(doc["standins"]) == ["Box.area", "scale", "shift"]
    assert "class Box" not in doc["standins"]["scale"]["defs"]
    wrong = _edit("    return shift(scale(x, k), c)\n", "    return scale(x, k)\n")
    assert scores(_grade(tmp_path, wrong, goldens=bank))["affine_values"] == 0
    assert scores(_grade(tmp_path, CORRECT, goldens=bank)) == dict.fromkeys(
        ["scale_values", "shift_values", "affine_values", "box_area", "crate_volume"], 1)
    del doc["standins"]
    stale = tmp_path / "g" / "stale.json"
    stale.write_text(json.dumps(doc))
    res = _grade(tmp_path, CORRECT, goldens=stale)
    assert "rebuild the goldens" in res["extra_data"]["grader_error"]


def test_stages_run_in_lanes_too(tmp_path):
    """``tito regrade`` deals a slow submission's items to lanes: each stage is dealt on its
    own, after the one before has ended, and the verdicts are those of one child."""
    wrong = _edit("    return np.asarray(x, dtype=np.float64) + c\n",
                  "    return np.asarray(x, dtype=np.float64) - c\n")
    one, two = _grade(tmp_path, wrong), _grade(tmp_path, wrong, lanes=2)
    assert scores(one) == scores(two) == {"scale_values": 1, "shift_values": 0,
                                          "affine_values": 1, "box_area": 1, "crate_volume": 1}
    assert two["extra_data"]["run"]["launches"] == 4  # two lanes per stage


def test_milestones_run_after_every_stage_so_the_wall_limit_never_cuts_a_case(
        tmp_path, monkeypatch):
    """The run's one wall-clock limit (``run_timeout_s``) can only cut the milestones'
    training, never a case: a case of a later stage used to run after the training and get
    the wall time left, so module 09's one-point ``cnn_training_step`` scored 0 or 1 with the
    machine's load (issue 27). Here each training slot takes 200 s of wall time (a busy
    machine) and the limit is 540 s: the staged case runs, the third slot is cut."""
    from autograder.harness import lanes
    from autograder.harness.supervisor import Outcome, RunReport, RunSpec

    now = [0.0]
    wall = {"case:a": 1.0, "case:b": 1.0, "ms:0": 200.0, "ms:1": 200.0, "ms:2": 200.0}
    stages: list[tuple[list[str], bool, bool, bool]] = []

    def fake_lanes(spec: RunSpec, n: int) -> RunReport:
        stages.append((list(spec.items), spec.sealed, bool(spec.milestone_job),
                       bool(spec.public_tests)))
        report, end = RunReport(outcomes={}), now[0] + spec.run_timeout_s
        for item in spec.items:
            now[0] += wall[item]
            report.outcomes[item] = (Outcome(item, "result") if now[0] <= end else
                                     Outcome(item, "not_run", message="the run's limit"))
        report.launches = 1
        return report

    monkeypatch.setattr(lanes, "run_lanes", fake_lanes)
    monkeypatch.setattr(lanes, "time", type("Clock", (), {"monotonic": lambda: now[0]}))
    spec = RunSpec(package_parent=tmp_path, slug="parts", suite_file=SUITE,
                   items=["case:a", "ms:0", "ms:1", "ms:2"], scratch=tmp_path,
                   item_timeout_s={}, import_timeout_s=10.0, run_timeout_s=540.0,
                   memory_limit_mb=700, max_output_kb=64,
                   public_tests=[{"file": "t.py"}], milestone_job={"slots": 3})
    later = [(["case:b"], {"units": {}, "items": {"case:b": ["scale"]}})]
    report = lanes.run_stages(spec, later, last=["ms:0", "ms:1", "ms:2"])
    assert stages == [(["case:a"], False, True, True), (["case:b"], True, False, False),
                      (["ms:0", "ms:1", "ms:2"], False, True, False)]
    assert {i: o.status for i, o in report.outcomes.items()} == {
        "case:a": "result", "ms:0": "result", "ms:1": "result", "ms:2": "not_run",
        "case:b": "result"}
    assert list(report.outcomes) == ["case:a", "ms:0", "ms:1", "ms:2", "case:b"]
    assert report.launches == 3
    # without ``last`` (the order before the fix) the same load costs the staged case
    now[0], stages[:] = 0.0, []
    before = lanes.run_stages(spec, later)
    assert before.outcomes["case:b"].status == "not_run"
