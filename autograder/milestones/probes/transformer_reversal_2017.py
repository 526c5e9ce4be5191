"""Milestone transformer_reversal_2017: ``probe`` trains module 13's GPT in the sandboxed child (loaded before any
student code runs; it holds the training split only) and returns the trained parameters;
``evaluate`` runs the reference forward pass on the held-out split in the trusted parent."""

from autograder.milestones.transformer import make_probe, make_verdict

probe = make_probe("transformer_reversal_2017")
evaluate = make_verdict("transformer_reversal_2017")
