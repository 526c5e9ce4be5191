"""Differential fuzzer: tinytorch_ref against PyTorch (instructor CI only; needs torch).

``PYTHONPATH=tests python -m fuzz --cases 100000 --jobs 2`` (or ``make fuzz``) runs the long
tier; ``tests/parity/test_fuzz.py`` runs the fast seeded tier in every CI run.
"""
