"""Fixtures of the end-to-end tests: the real app served on localhost, driven by headless
Debian Chromium through Python Playwright (never a Playwright-downloaded browser).

* ``app_url``: starts ``streamlit run app.py`` on a free localhost port (one server per
  test process, shared by its modules), waits for ``/_stcore/health`` and yields the base URL; the server is
  killed afterwards (its whole process group, so no orphan script runner survives).
* ``browser`` / ``page``: a Chromium launched with ``executable_path=/usr/bin/chromium``.
  Without Chromium the tests are skipped with the reason, except under CI (environment
  variable ``CI`` set), where a missing browser is a failure: CI installs it with apt.

Screenshots, downloads and the server log go to ``tests/e2e/artifacts/`` (git-ignored).
The README screenshot ``docs/privacy_page.png`` is rewritten only on request
(``BNP_SYNTH_SCREENSHOT=1``), so the suite leaves the checkout clean.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
SERVER_START_TIMEOUT = 60.0


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.e2e)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    # Keep each phase's report on the item so the page fixture can save a screenshot of
    # a failing test (the cheapest way to see what the browser showed).
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"_report_{report.when}", report)


def _unavailable(reason: str):
    """Skip locally, fail under CI: CI must really run the browser tests."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (the CI environment variable is set, so this is a failure, not a skip)")
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
            return resp.status == 200 and resp.read().strip() == b"ok"
    except OSError:
        return False


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@contextlib.contextmanager
def streamlit_server(log_path: Path, *extra: str):
    """``streamlit run app.py`` on a free localhost port, started from the checkout (so it
    reads ``.streamlit/config.toml``); yields ``(base URL, process)`` and kills the server's
    whole process group afterwards (no orphan script runner survives)."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = open(log_path, "w")
    env = dict(os.environ, STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
    # The privacy ledger of the test run (tests/conftest.py), never the user's: the same for every
    # server, whichever test starts it (a test's own ledger is for in-process app tests).
    if os.environ.get("BNP_SYNTH_TEST_RUN_LEDGER"):
        env["BNP_SYNTH_LEDGER"] = os.environ["BNP_SYNTH_TEST_RUN_LEDGER"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py",
         "--server.headless", "true", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none", *extra],
        cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while not _healthy(url):
            if proc.poll() is not None:
                log.flush()
                pytest.fail(f"streamlit exited with code {proc.returncode}:\n{log_path.read_text()[-3000:]}")
            if time.monotonic() > deadline:
                pytest.fail(f"streamlit not healthy after {SERVER_START_TIMEOUT:.0f} s:\n"
                            f"{log_path.read_text()[-3000:]}")
            time.sleep(0.25)
        yield url, proc
    finally:
        # The server was started in its own session: signal its process group only.
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        log.close()


@pytest.fixture(scope="session")
def app_url(artifacts_dir, worker_id):
    """Base URL of one ``streamlit run app.py`` on a free localhost port per test process
    (one per xdist worker), shared by the browser-test modules that process runs.

    Starting a server and its first page (the imports of ``core``, the sample's caches)
    costs several seconds of CPU on this 2-core machine, a dozen times over with a server per
    module. Sharing it is safe for these tests: each test opens its own browser context (its
    own Streamlit session, its own state), and every wait is on an event, so work that a
    closed session of an earlier module leaves running only slows, never changes, what a
    later test sees. Tests that need a server of their own (other options, or its memory
    measured) start one with :func:`streamlit_server`."""
    log = artifacts_dir / f"streamlit_server_{worker_id}.log"
    with streamlit_server(log) as (url, _):
        yield url


@pytest.fixture(scope="session")
def browser():
    """Headless Debian Chromium driven by Playwright (sync API)."""
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)) and not shutil.which(CHROMIUM):
        _unavailable(f"Chromium not found at {CHROMIUM} (install Debian's package: apt-get install -y chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Python Playwright is not installed (pip install -e '.[test]')")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def shared_context(browser):
    """One browser context per test process, in which each test opens its own tab.

    A tab is its own Streamlit session (its own websocket, its own state), so tests stay
    isolated; what the tabs share is the browser's cache. A fresh context parses and compiles
    the app's JavaScript again (several MB: 4-7 s of CPU per test on this 2-core machine); a
    tab of a context that already loaded the app takes it from the cache (about 1 s). Tests
    about what separate users cannot share (tests/e2e/test_security.py, the session tests)
    open contexts of their own."""
    context = browser.new_context(accept_downloads=True, viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(60_000)
    try:
        yield context
    finally:
        context.close()


@pytest.fixture
def page(request, shared_context, app_url, artifacts_dir):
    """A new tab (its own Streamlit session) of :func:`shared_context`.

    On failure a full-page screenshot is saved as ``artifacts/<test>-failure.png``.
    """
    pg = shared_context.new_page()
    pg.set_viewport_size({"width": 1400, "height": 1000})
    try:
        yield pg
    finally:
        report = getattr(request.node, "_report_call", None)
        if report is not None and report.failed:
            try:
                pg.screenshot(path=str(artifacts_dir / f"{request.node.name}-failure.png"), full_page=True)
            except Exception:  # the page may be gone; the traceback says enough then
                pass
        pg.close()
