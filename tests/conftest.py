"""Test-wide settings: property-based tests run with fixed seeds (reproducible in CI)."""

from hypothesis import settings

settings.register_profile("deterministic", derandomize=True, print_blob=True)
settings.load_profile("deterministic")
