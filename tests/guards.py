"""Hang guards of the test suite.

Tests assert correctness; speed targets live in ``benchmarks/`` (each prints its figure,
its target and whether it is met). A test that times something keeps only a guard against a
hang: at least ten times the benchmark's target and never below 10 s, so a slow neighbour on
a shared 2-core CI machine cannot turn a correct submission red.
"""

#: Seconds after which a computation whose benchmark target is at most 2 s counts as hung.
HANG_GUARD_S = 20.0
