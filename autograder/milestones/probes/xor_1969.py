"""Child-side probe for milestone xor_1969, loaded by the harness before any student code runs."""

from autograder.milestones import make_probe

probe = make_probe("xor_1969")
