"""Building autograders with several processes (``tito autograder --jobs N``) changes nothing
but the time: the goldens bank and every zip are the same bytes as a one-process build, the
zips come out in module order, and a failure names its module and leaves only whole zips."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
import yaml

from autograder.harness import wire
from autograder.harness.goldens import compute_bank, compute_banks, load_suite, variant_blocks
from autograder.harness.variants import salt_from_reference
from coursekit import paths
from coursekit.course import load_course
from tests.autograder.conftest import FAST, REF, SUITE
from tito.grading import AutograderError, build_autograders


@pytest.mark.parametrize(("variants", "jobs", "blocks"), [
    (64, 2, [(0, 32), (32, 64)]),
    (5, 3, [(0, 1), (1, 3), (3, 5)]),
    (2, 8, [(0, 1), (1, 2)]),  # never an empty block
    (7, 1, [(0, 7)]),
])
def test_variant_blocks_cover_every_variant_once_in_order(variants, jobs, blocks):
    assert [(b.start, b.stop) for b in variant_blocks(variants, jobs)] == blocks


def test_the_bank_is_the_same_whatever_the_number_of_reference_children():
    suite = load_suite(SUITE)
    common = dict(suite_path=SUITE, suite=suite, reference=REF, slug="mini", number=1,
                  all_modules=((1, "mini"), (2, "later")), limits=FAST, variants=5,
                  salt=salt_from_reference(REF / "mini.py"))
    one = compute_bank(**common, jobs=1)
    three = compute_bank(**common, jobs=3)
    assert three.cases == one.cases and three.count == one.count == 5
    # and each variant really was computed: the draws differ between variants
    first = next(iter(one.cases))
    assert len({wire.dumps(wire.decode(v)) for v in one.cases[first]}) > 1



def test_banks_of_several_salts_in_one_child_are_each_salts_own_bank():
    suite = load_suite(SUITE)
    salt = salt_from_reference(REF / "mini.py")
    common = dict(suite_path=SUITE, suite=suite, reference=REF, slug="mini", number=1,
                  all_modules=((1, "mini"), (2, "later")), limits=FAST, variants=5)
    alone = [compute_bank(**common, salt=s, whole=True) for s in (salt, salt[::-1])]
    for jobs in (1, 2):
        both = compute_banks(**common, salts=(salt, salt[::-1]), jobs=jobs, whole=True)
        assert [(b.salt, b.count, b.cases) for b in both] == \
            [(b.salt, b.count, b.cases) for b in alone]
    # the two salts draw differently: each bank was computed with its own seeds
    first = next(iter(alone[0].cases))
    assert alone[0].cases[first] != alone[1].cases[first]
    with pytest.raises(ValueError, match="at least one salt"):
        compute_banks(**common, salts=())

def _course_file(tmp_path: Path, edit=None) -> Path:
    data = yaml.safe_load((paths.REPO_ROOT / "course.yml").read_text(encoding="utf-8"))
    if edit:
        edit(data)
    out = tmp_path / "course.yml"
    out.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return out


def test_parallel_zips_equal_one_by_one_zips_in_module_order(tmp_path):
    course = load_course()
    modules = [course.module(n) for n in ("01", "02", "04")]
    built = {}
    for jobs in (1, 2):
        folder = tmp_path / f"jobs{jobs}"
        built[jobs] = list(build_autograders(course=course, modules=modules, jobs=jobs,
                                             out_zip=lambda m, f=folder: f / f"{m.name}.zip"))
        assert [p.name for p in built[jobs]] == [f"{m.name}.zip" for m in modules]
    for one, two in zip(built[1], built[2], strict=True):
        assert one.read_bytes() == two.read_bytes(), one.name


def test_a_failing_module_is_named_and_only_whole_zips_are_left(tmp_path):
    def edit(d):
        d["modules"][1]["points"] = 40  # 02_activations: its suite is worth 50

    course = load_course(_course_file(tmp_path, edit))
    modules = [course.module(n) for n in ("01", "02", "04", "05")]
    out = tmp_path / "zips"
    got = []
    with pytest.raises(AutograderError) as err:
        for path in build_autograders(course=course, modules=modules, jobs=2,
                                      out_zip=lambda m: out / f"{m.name}.zip"):
            got.append(path.name)
    assert str(err.value).startswith("02_activations: suite 02_activations is worth 50 points")
    assert got == ["01_tensor.zip"], "only the modules before the failing one are reported"
    # 01 was under way when 02 failed (at once: its points): it finishes, whole; nothing
    # starts after the failure, so neither 04 nor 05 is built, and nothing is left half-written
    assert sorted(p.name for p in out.iterdir()) == ["01_tensor.zip"]
    with zipfile.ZipFile(out / "01_tensor.zip") as zf:
        assert zf.testzip() is None and "goldens.json" in zf.namelist()


def test_the_command_reports_a_packaging_failure_in_one_line_naming_the_module(tmp_path):
    from click.testing import CliRunner

    from tito.cli import cli

    def edit(d):
        d["modules"][1]["points"] = 40

    course = _course_file(tmp_path, edit)
    res = CliRunner().invoke(cli, ["--course", str(course), "autograder", "02", "-o",
                                   str(tmp_path / "02.zip")])
    assert res.exit_code == 2, res.output
    assert res.output.strip().splitlines() == [
        "tito: 02_activations: suite 02_activations is worth 50 points; course.yml gives "
        "02_activations 40"], res.output
    assert not (tmp_path / "02.zip").exists()
