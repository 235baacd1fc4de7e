"""Test-wide settings: property-based tests run with fixed seeds (reproducible in CI), and the
files are handed to the two xdist workers longest first."""

from pathlib import Path

from hypothesis import settings

# No example database: every run, here and in CI, replays exactly the same examples.
settings.register_profile("deterministic", derandomize=True, print_blob=True, database=None)
settings.load_profile("deterministic")

# The suite runs on two xdist workers, a file per work unit (pyproject: ``-n 2 --dist loadfile
# --no-loadscope-reorder``). Files start in this order — the longest first, so the two
# workers finish together instead of one running the browser tests alone at the end; the
# others follow in their usual order. Measured on this 2-core machine (seconds, alone):
# sessions 300 (two tests), app corpus 210 in 75 short runs, scale 130, dashboard 115,
# microdata 105, cli 105, fuzz 100, privacy exact 90, security 75, large upload 75 (with
# three workers on a busy machine: the order matters, not the values).
LONGEST_FIRST = (
    "e2e/test_sessions.py", "test_app_corpus.py", "e2e/test_live.py", "test_scale.py", "e2e/test_dashboard.py",
    "e2e/test_microdata.py", "test_cli.py", "test_fuzz_core.py", "test_privacy_exact.py", "e2e/test_security.py",
    "e2e/test_large_upload.py", "test_app.py", "test_app_large_upload.py", "e2e/test_pure_release.py",
    "test_privacy.py", "e2e/test_compare_page.py", "e2e/test_audit_page.py", "test_baselines.py",
    "e2e/test_experiments.py", "test_inference.py", "test_mechanisms.py", "e2e/test_mixed_columns.py",
    "e2e/test_injection_browser.py",
)


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).resolve().parent

    def rank(item) -> int:
        relative = Path(str(item.fspath)).resolve().relative_to(here).as_posix()
        return LONGEST_FIRST.index(relative) if relative in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)   # stable: a file's own tests keep their order
