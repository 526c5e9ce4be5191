"""Every module's goldens bank packages: the reference answers every case in every variant,
no case repeats an expected value across variants (a constant answer would pass it), and the
reference's own answer passes each case's comparison in every variant (a correct submission is
never failed by the draw it was given).

``tito autograder NN`` refuses such a bank, so a suite that varies too little fails here, in
the grading tier, rather than on the instructor's machine in release week. The variant salt
comes from the reference file, so any change to a reference re-draws every variant: cases
must vary for every salt: this checks today's and one other.
"""

from __future__ import annotations

import pytest

from autograder.harness import wire
from autograder.harness.goldens import (
    check_variation,
    compute_banks,
    kept_bank,
    load_suite,
    salt_from_reference,
)
from autograder.harness.limits import ModuleInfo, module_snapshot
from autograder.suite import compare
from coursekit import paths
from coursekit.course import load_course

COURSE = load_course()
MODULES = [m for m in COURSE.modules if (paths.SUITES / m.name / "suite.py").is_file()]


@pytest.mark.parametrize("module", MODULES, ids=[m.name for m in MODULES])
def test_every_case_varies_and_the_reference_passes_it_in_every_variant(module):
    info = ModuleInfo.from_any(module_snapshot(COURSE, module, None))
    suite_path = paths.SUITES / module.name / "suite.py"
    suite = load_suite(suite_path)
    salt = salt_from_reference(paths.REFERENCE / f"{info.slug}.py")
    # today's salt, and the one an edited reference might get: both banks in one reference
    # child (one start and one import of the reference for both)
    banks = compute_banks(suite_path=suite_path, suite=suite, reference=paths.REFERENCE,
                          slug=info.slug, number=info.number, all_modules=info.all_modules,
                          limits=info.limits, variants=info.limits.variants,
                          salts=(salt, salt[::-1]), whole=True)
    for which, bank in zip((salt, salt[::-1]), banks, strict=True):
        assert bank.salt == which
        kept = kept_bank(bank, suite)  # what the zip's goldens hold
        assert bank.count == kept.count == info.limits.variants >= 32
        assert check_variation(kept) == [], f"salt {which!r}"
        # the reference's own answer passes every case in every variant: a check that decides
        # statistically (dropout rates, accuracy gates) must hold for each variant's draw
        for case in suite.cases:
            for v, encoded in enumerate(bank.cases[case.name]):
                value = wire.decode(encoded)
                expected = wire.decode(kept.cases[case.name][v])
                passed, msg = compare(value, expected, case)
                assert passed, f"salt {which!r}, variant {v}: the reference fails {case.name}: {msg}"
