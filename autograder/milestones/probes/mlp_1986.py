"""Child-side probe for milestone mlp_1986, loaded by the harness before any student code runs."""

from autograder.milestones import make_probe

probe = make_probe("mlp_1986")
