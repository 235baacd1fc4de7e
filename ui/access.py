"""Who may open the dashboard.

* When ``.streamlit/secrets.toml`` has an ``[auth]`` section, every page requires a login
  with Streamlit's built-in OpenID Connect support (``st.login``): until the visitor has
  signed in, ``app.py`` gives ``st.navigation`` the :func:`login_screen` as its only
  page, so no other page can render, whatever the URL.
* Without it, the app is meant for one person on one machine: ``.streamlit/config.toml``
  binds the server to ``localhost``. :func:`exposure_warning` shows a banner when the app
  is nevertheless reachable from elsewhere — the server bound to another address, or the
  page opened through a host name other than the loopback one.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

import streamlit as st

from .text import literal

LOOPBACK = {"localhost", "127.0.0.1", "::1", "[::1]"}


def auth_settings() -> Mapping | None:
    """The ``[auth]`` section of the secrets, or ``None`` when none is configured."""
    try:
        return st.secrets["auth"] if "auth" in st.secrets else None
    except FileNotFoundError:  # Streamlit's StreamlitSecretNotFoundError subclasses it
        # No secrets file: no login. A secrets file that exists but cannot be read must not
        # silently open the app to everyone: fail closed.
        if any(Path(p).is_file() for p in st.get_option("secrets.files")):
            st.error("The secrets file (.streamlit/secrets.toml) exists but cannot be read, so the login it "
                     "may configure cannot be enforced. Fix the file and restart the app.")
            st.stop()
        return None


def providers(auth: Mapping) -> list[str | None]:
    """Login providers configured: ``None`` for the unnamed one (``client_id`` directly in
    ``[auth]``), and the name of every ``[auth.<name>]`` sub-section."""
    named = [name for name, value in auth.items() if isinstance(value, Mapping)]
    return ([None] if "client_id" in auth else []) + named


def signed_in() -> bool | None:
    """``None`` when no login is configured; otherwise whether the visitor has signed in."""
    auth = auth_settings()
    # Fail closed: a user record without the flag counts as not signed in.
    return None if auth is None else bool(st.user.get("is_logged_in", False))


def login_screen() -> None:
    """The only page a visitor sees before signing in (when ``[auth]`` is configured)."""
    st.title("bnp-synth: sign in")
    st.markdown("This dashboard handles confidential data: sign in to continue.")
    if importlib.util.find_spec("authlib") is None:
        st.error("Login is configured in .streamlit/secrets.toml, but Authlib is not installed on the "
                 "server: install it with `pip install \"streamlit[auth]\"` and restart the app.")
        return
    for provider in providers(auth_settings()) or [None]:
        label = "Sign in" if provider is None else f"Sign in with {provider}"
        st.button(label, on_click=st.login, args=() if provider is None else (provider,),
                  key=f"login_{provider}", type="primary")


def signed_in_note() -> None:
    with st.sidebar:
        who = st.user.get("email") or st.user.get("name")   # from the identity provider: shown as text
        st.caption(f"Signed in as {literal(who) if who else 'an authenticated user'}.")
        st.button("Sign out", on_click=st.logout, key="logout")


def exposure(server_address: str | None, url: str | None) -> str | None:
    """Why the app is reachable beyond this machine, or ``None`` if it is not.

    ``server_address`` is the ``server.address`` option (empty: every interface); ``url``
    the address the browser used (``st.context.url``).
    """
    address = (server_address or "").strip()
    if address not in LOOPBACK:
        where = f"server.address = {address!r}" if address else "server.address is unset (every interface)"
        return f"the server listens beyond localhost ({where})"
    host = urlsplit(url).hostname if url else None
    if host and host not in LOOPBACK and f"[{host}]" not in LOOPBACK:
        return f"this page was opened as {host!r}, not through localhost (a proxy or a forwarded port)"
    return None


def exposure_warning() -> None:
    """A banner when the app is served beyond localhost without authentication."""
    try:
        url = st.context.url
    except Exception:  # noqa: BLE001 — no browser context (e.g. a scripted test run)
        url = None
    reason = exposure(st.get_option("server.address"), url)
    if reason:
        st.warning(f"**Not protected:** {literal(reason)}, and no login is configured. Anyone who can reach this "
                   "address can open the dashboard and see the data uploaded here. Serve it on localhost "
                   "only, or configure a login in .streamlit/secrets.toml (see the README).", icon="🚨")
