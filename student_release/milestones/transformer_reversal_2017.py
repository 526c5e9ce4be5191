"""Milestone 2017 · a transformer reverses sequences (the first task of ``transformer_2017.py``).

Run with your package (after exporting modules 01-13)::

    python milestones/transformer_reversal_2017.py

A 2-layer GPT reads 8 digits and a separator and writes them backwards (each digit renamed, a
different renaming per seed), decoded greedily from its own outputs. Passes when the share of
held-out sequences written back exactly right reaches the threshold in course.yml on enough
of the graded seeds. ``python milestones/transformer_2017.py`` runs this task and the KJV one.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# An entry point: the folder you run from and the course folder (your tinytorch, the course's
# tinytorch_data and tinytorch_milestones) come first on the path; _runner is beside this file.
sys.path[:0] = [os.getcwd(), str(Path(__file__).resolve().parents[1])]

from transformer_2017 import main

if __name__ == "__main__":
    sys.exit(main(["--task", "reversal", *sys.argv[1:]]))
