"""AppTest of serving: who may reach the app (the exposure banner, the login) and the server's
memory after a session (issue 15)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from test_app import APP, REPO, TIMEOUT


def _app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


# --------------------------------------------------------------------------- access (issue 15 §2)

@pytest.mark.parametrize("address, url, exposed", [
    ("localhost", "http://localhost:8501/", False),
    ("127.0.0.1", "http://127.0.0.1:8501/privacy", False),
    ("localhost", None, False),
    ("", None, True),
    ("0.0.0.0", "http://localhost:8501/", True),
    ("localhost", "https://stats.example.org/", True),
    ("::1", "http://[::1]:8501/", False),
])
def test_exposure_is_detected_from_address_and_url(address, url, exposed):
    from ui.access import exposure

    assert (exposure(address, url) is not None) == exposed


def test_refused_when_served_beyond_localhost_without_an_identity():
    # issue 33, item 1: no page at all (not a banner above the data) for a server reachable by
    # others with neither a login nor a trusted identity header
    from streamlit import config

    before = config.get_option("server.address")
    try:
        config.set_option("server.address", "0.0.0.0")
        at = _app()
        assert any(e.value.startswith("**Not served:**") for e in at.error)
        assert not at.metric and not at.title and not at.sidebar.radio
        config.set_option("server.address", "localhost")
        at = _app()
        assert not at.error and at.metric
    finally:
        config.set_option("server.address", before)


def test_login_is_required_on_every_page_when_auth_is_configured():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.secrets["auth"] = {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "x" * 32,
                          "client_id": "id", "client_secret": "secret",
                          "server_metadata_url": "https://login.example.org/.well-known/openid-configuration"}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "bnp-synth: sign in"
    assert not at.metric and not [e for e in at.error if "Not served" in e.value or "Refused" in e.value]
    # no other page is registered before sign-in: none can be reached, whatever the URL
    for page in ("app_pages/privacy.py", "app_pages/synthetic_data.py"):
        with pytest.raises(ValueError, match=r"Known pages: \['Sign in'\]"):
            at.switch_page(page)



# --------------------------------------------------------------------------- server memory (issue 15 §3)

_ALLOCATOR_PROBE = r"""
import sys
from ui import allocator
if sys.argv[1] == "fixed" and not allocator.release_large_buffers_on_free():
    print("not glibc"); sys.exit(0)

def rss_mib():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

big = bytearray(30 << 20)    # freeing a mapped block raises glibc's dynamic mmap threshold to its size
del big
before = rss_mib()
blocks = [bytearray(4 << 20) for _ in range(25)]   # 100 MiB of upload-sized buffers
keep = blocks[-1]                                  # one survivor, as a live session would be
del blocks
print(round(rss_mib() - before, 1))
"""


def test_large_freed_buffers_go_back_to_the_os():
    """The cause of a closed session's memory staying with the server (issue 15 §3): with
    glibc's dynamic mmap threshold, upload-sized buffers freed behind a live block stay in
    the process; with ui.allocator's fixed threshold they are unmapped on free."""
    import subprocess
    import sys

    if not Path("/proc/self/status").is_file():
        pytest.skip("needs /proc (Linux)")

    def growth(mode: str) -> str:
        out = subprocess.run([sys.executable, "-c", _ALLOCATOR_PROBE, mode], cwd=REPO, capture_output=True,
                             text=True, check=True, timeout=60)
        return out.stdout.strip()

    fixed = growth("fixed")
    if fixed == "not glibc":
        pytest.skip("the C library is not glibc: ui.allocator does nothing")
    assert float(fixed) < 16, fixed               # only the survivor (4 MiB) and noise remain
    assert float(growth("default")) > 60          # without it, the freed 96 MiB stay resident
