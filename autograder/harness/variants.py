"""Per-submission variants: the seeds a submission's probes and milestones are run with.

A hidden case is a probe ``fn(tt, rng)``; if ``rng`` were the same for every submission, its
expected value would be one fixed answer that a submission could memorise, share, or return as
a constant from a replaced probe. So grading seeds every probe per submission:

* the **submission key** is the SHA-256 of the graded module's exported source (the same on
  Gradescope, in ``tito grade`` and in ``tito regrade``);
* the **salt** is a digest of the graded module's reference file, a secret the sandbox never
  holds (it lives in the trusted parent and in ``goldens.json``); without it, neither the
  variant a file lands on nor its seeds can be computed;
* the **variant** is ``H(salt, key) mod count`` (``count`` = course.yml
  ``course.grading.variants``); case seeds are :meth:`autograder.suite.Case.seed` of
  ``(variant, salt)``, so expected values can be precomputed as a bank of ``count`` goldens
  (:mod:`autograder.harness.goldens`) and grading costs no reference run;
* **milestone seeds** need no bank (the parent evaluates trained parameters on held-out data
  it generates itself), so each seed slot of course.yml gets a full-size training seed and a
  separate data seed derived from ``(salt, key, milestone, slot)``; only the training seed ever
  reaches the sandbox.

Everything here runs in the trusted parent.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

_SEED_BITS = 31  # milestone seeds: plain non-negative ints every RNG accepts


def salt_from_bytes(reference_source: bytes) -> str:
    """The variant salt of a module: a digest of its reference file (secret to students)."""
    return hashlib.sha256(b"tinytorch-variant-salt\0" + reference_source).hexdigest()


def salt_from_reference(reference_file: Path) -> str:
    """:func:`salt_from_bytes` of ``reference_file`` (``tinytorch_ref/<slug>.py``)."""
    return salt_from_bytes(Path(reference_file).read_bytes())


def submission_key(source: str) -> str:
    """The submission's key: SHA-256 of the graded module's exported source."""
    return hashlib.sha256(source.encode("utf-8", errors="surrogatepass")).hexdigest()


def _h(*parts: object) -> int:
    text = "\0".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "little")


def variant_index(key: str, salt: str, count: int) -> int:
    """Which of the ``count`` variants the submission with ``key`` is graded on."""
    if count < 1:
        raise ValueError("variants must be at least 1")
    return _h("tinytorch-variant", salt, key) % count


@dataclass(frozen=True)
class MilestoneSeed:
    """One seed slot of a milestone for one submission."""

    slot: int     # the course.yml seed this slot stands for
    train: int    # handed to the sandbox: ``tt.manual_seed`` and batch order
    data: int     # parent only: which task variant (inputs, labels, held-out test set)


def milestone_seeds(key: str, salt: str, milestone_id: str, slots: list[int] | tuple[int, ...]
                    ) -> list[MilestoneSeed]:
    """The training and data seeds of each course.yml seed slot, for this submission."""
    mask = (1 << _SEED_BITS) - 1
    return [MilestoneSeed(int(s), _h("ms-train", salt, key, milestone_id, s) & mask,
                          _h("ms-data", salt, key, milestone_id, s) & mask) for s in slots]
