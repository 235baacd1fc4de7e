"""Who may be served a session (issue 33, item 1; ``ui/access.py``): the pure decisions behind
:func:`ui.access.guard_session` — the origin checked with its port, the browser's secret read
from Streamlit's XSRF cookie, and the refusal to serve others without an identity."""

from __future__ import annotations

import os

import pytest

from ui.access import browser_secret, origin_mismatch, serving_refusal, session_owner


@pytest.mark.parametrize("origin, host, refused", [
    ("http://localhost:8501", "localhost:8501", False),
    ("http://127.0.0.1:8501", "127.0.0.1:8501", False),
    ("https://stats.example.org", "stats.example.org", False),        # behind nginx: default ports
    ("https://stats.example.org:443", "stats.example.org", False),
    ("http://LOCALHOST:8501", "localhost:8501", False),
    ("http://localhost:9999", "localhost:8501", True),                # another local service's page
    ("http://localhost", "localhost:8501", True),
    ("https://stats.example.org:8443", "stats.example.org", True),
    ("http://stats.example.org", "stats.example.org:443", True),
    ("http://evil.example", "localhost:8501", True),
    ("http://[::1]:8501", "[::1]:8501", False),
    ("http://[::1]:8502", "[::1]:8501", True),
    ("http://localhost:notaport", "localhost:8501", True),
    (None, "localhost:8501", False),                                  # no browser, no check
    ("http://localhost:9999", None, False),
])
def test_the_origin_is_checked_with_its_port(origin, host, refused):
    assert (origin_mismatch(origin, host) is not None) is refused


def _v2_cookie(token: bytes, mask: bytes, when: int = 1_700_000_000) -> str:
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(token))
    return f"2|{mask.hex()}|{masked.hex()}|{when}"


def test_the_browser_secret_survives_a_new_mask_and_differs_between_browsers():
    token, other = os.urandom(16), os.urandom(16)
    first, reloaded = _v2_cookie(token, b"\x01\x02\x03\x04"), _v2_cookie(token, b"\xaa\xbb\xcc\xdd", 1_700_000_999)
    assert first != reloaded and browser_secret(first) == browser_secret(reloaded) == token
    assert session_owner(first) == session_owner(reloaded)
    assert session_owner(_v2_cookie(other, b"\x01\x02\x03\x04")) != session_owner(first)
    # a run without the cookie (a script, another client) is not the browser that has one
    assert session_owner(None) != session_owner(first)
    assert browser_secret(f'"{first}"') == token            # quoted as some clients send it
    for bad in ("", "2|zz|00|1", "2|0102|00|1", "2|01020304||1", "2|a|b", "nothex"):
        assert browser_secret(bad) is None


@pytest.mark.parametrize("exposed, login, headers, identity, served", [
    (None, False, False, None, True),                       # one person on localhost
    ("the server listens beyond localhost", False, False, None, False),
    ("this page was opened as 'stats.example.org'", False, False, None, False),
    ("the server listens beyond localhost", True, False, None, True),     # the login screen guards
    ("this page was opened as 'stats.example.org'", False, True, "ana@example.org", True),
    ("this page was opened as 'stats.example.org'", False, True, None, False),   # header missing
    (None, False, True, None, False),                       # a header is expected: fail closed
    (None, False, True, "ana@example.org", True),
])
def test_others_are_served_only_with_an_identity(exposed, login, headers, identity, served):
    refusal = serving_refusal(exposed, login_configured=login, headers_configured=headers, identity=identity)
    assert (refusal is None) is served
