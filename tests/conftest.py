"""Test-wide settings: property-based tests run with fixed seeds (reproducible in CI)."""

from hypothesis import settings

# No example database: every run, here and in CI, replays exactly the same examples.
settings.register_profile("deterministic", derandomize=True, print_blob=True, database=None)
settings.load_profile("deterministic")
