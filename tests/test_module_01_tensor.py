"""Module 01 beyond the common contract (tests/test_module_contract.py)."""

from __future__ import annotations

import tinytorch_ref


def test_imagenet_batch_costs_about_19_mb():
    import numpy as np

    batch = tinytorch_ref.Tensor(np.zeros((32, 3, 224, 224), dtype=np.float32))
    assert batch.memory_footprint() == 32 * 3 * 224 * 224 * 4
    assert round(batch.memory_footprint() / 1e6, 1) == 19.3


# The same large allocation, freed and made again, as a training step does every step: how many
# pages the kernel had to hand over fresh (minor page faults) after the first round. Without
# tensor.py's memory policy glibc gives a freed block of this size back to the kernel and the
# next one faults in again (about 500 pages over the five rounds here; 512 make 2 MiB). NumPy's
# own huge-page advice (arrays of 4 MiB or more) is off so that pages are 4 KiB ones.
_FAULTS_OF_REALLOCATION = """
import resource, sys
import numpy as np
if sys.argv[1] == "with":
    import tinytorch_ref.tensor  # noqa: F401 - applies the policy at import
def step():
    a = np.ones(2**19, dtype=np.float32)  # 2 MiB, every page written
    return float(a[::1024].sum())
step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    step()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def test_freed_memory_is_reused_not_faulted_in_again():
    import os
    import subprocess
    import sys

    from tinytorch_ref.tensor import _keep_freed_memory

    assert _keep_freed_memory() is True  # Linux with glibc: the policy applies
    env = dict(os.environ, NUMPY_MADVISE_HUGEPAGE="0")
    faults = {}
    for mode in ("with", "without"):
        run = subprocess.run([sys.executable, "-c", _FAULTS_OF_REALLOCATION, mode], env=env,
                             capture_output=True, text=True, check=True)
        faults[mode] = int(run.stdout)
    assert faults["without"] >= 256, faults  # the control: freed memory faults in again
    assert faults["with"] < 64, faults  # the same memory, reused
