"""Test-wide settings: property-based tests run with fixed seeds (reproducible in CI), the
files are handed to the two xdist workers longest first, and the privacy ledger is never the
user's: ``BNP_SYNTH_LEDGER`` names a temporary file for the whole run (set at import, so the
browser tests' servers, which inherit ``os.environ``, use it too)."""

import atexit
import itertools
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

# The privacy ledger of the run (per test process): never ~/.local/share/bnp-synth, never a ledger
# the environment names (a team's server). The browser tests' servers inherit it (RUN_LEDGER);
# every test in this process gets a ledger file of its own (``_own_ledger``), so budgets and
# fingerprints of one test never meet another's. The configuration file is pointed away too,
# so a user's [ledger] section is never read.
_LEDGER_DIR = tempfile.mkdtemp(prefix="bnp-synth-test-ledger-")
RUN_LEDGER = os.path.join(_LEDGER_DIR, "run.sqlite")
os.environ["BNP_SYNTH_LEDGER"] = RUN_LEDGER
os.environ["BNP_SYNTH_TEST_RUN_LEDGER"] = RUN_LEDGER   # what tests/e2e/conftest.py gives its servers
os.environ["BNP_SYNTH_CONFIG"] = os.path.join(_LEDGER_DIR, "no-config.toml")
atexit.register(shutil.rmtree, _LEDGER_DIR, ignore_errors=True)
_TEST_LEDGERS = itertools.count()


def _budget_setter(location):
    from core.ledger import open_ledger

    def set_budget(name: str, eps: float = 1e6, delta: float = 0.999, *, by: str = "test curator"):
        with open_ledger(location) as ledger:
            return ledger.set_budget(name, eps, delta, by=by)
    set_budget.location = location
    return set_budget


@pytest.fixture(autouse=True)
def _own_ledger(monkeypatch):
    """Each test's own ledger file (created only if the test opens it): cheap, no directory."""
    monkeypatch.setenv("BNP_SYNTH_LEDGER", os.path.join(_LEDGER_DIR, f"test-{next(_TEST_LEDGERS)}.sqlite"))


@pytest.fixture
def own_ledger(_own_ledger):
    """This test's ledger (the one an in-process app test uses), as a function that sets a
    dataset's budget in it (default: generous)."""
    return _budget_setter(os.environ["BNP_SYNTH_LEDGER"])


@pytest.fixture
def run_ledger():
    """The run's ledger (the one the browser tests' servers use), as a function that sets a
    dataset's budget in it. Dataset names are shared by every browser test of the process:
    use one of the test's own."""
    return _budget_setter(RUN_LEDGER)


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
