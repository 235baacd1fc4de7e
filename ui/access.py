"""Who may open the dashboard.

* When ``.streamlit/secrets.toml`` has an ``[auth]`` section, every page requires a login
  with Streamlit's built-in OpenID Connect support (``st.login``): until the visitor has
  signed in, ``app.py`` gives ``st.navigation`` the :func:`login_screen` as its only
  page, so no other page can render, whatever the URL.
* Or a trusted reverse proxy names the user in a request header (oauth2-proxy's
  ``X-Auth-Request-Email``, mapped into ``st.user`` by Streamlit's
  ``server.trustedUserHeaders``; docs/nginx.conf, docs/serving.md §7).
* Without either, the app is meant for one person on one machine: ``.streamlit/config.toml``
  binds the server to ``localhost``. Served to anyone else — the server bound to another
  address, or the page opened through a host name other than the loopback one — it refuses
  to show any page (:func:`guard_session`) and says how to give it an identity.

Every session is also bound to the browser that opened it (:func:`guard_session`): Streamlit
lets a websocket reconnect to an existing session by presenting its id, and that id is in
every upload URL. With an identity, Streamlit 1.67 already refuses a reconnect under another
identity (it opens a fresh session); without one (one person on localhost), the app compares
the browser's own secret — the token of Streamlit's XSRF cookie, which another browser does
not have — with the one that opened the session, and a run for any other browser shows a
refusal and nothing of the session. The websocket's ``Origin`` is checked with its port
against the address the request was sent to, which Streamlit's own check (host names only)
does not do.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from pathlib import Path
import binascii
import hashlib
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


def proxy_identity_note() -> None:
    """The user the trusted proxy named, in the sidebar (as text: it comes from a header)."""
    who = proxy_identity()
    if who:
        with st.sidebar:
            st.caption(f"Signed in as {literal(who)} (named by the proxy).")


#: Streamlit's option that maps request headers of a trusted proxy to ``st.user`` keys.
TRUSTED_HEADERS_OPTION = "server.trustedUserHeaders"
#: Streamlit's XSRF cookie: a random token per browser, masked afresh on each page load.
XSRF_COOKIE = "_streamlit_xsrf"
#: Where a session keeps the fingerprint of the browser (and identity) that opened it.
SESSION_OWNER_KEY = "_session_owner"
#: Default ports of the schemes a browser may use (an ``Origin`` omits them).
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def trusted_identity_headers() -> dict[str, str]:
    """``server.trustedUserHeaders``: request header -> ``st.user`` key (empty: none)."""
    mapping = st.get_option(TRUSTED_HEADERS_OPTION)
    return {str(k): str(v) for k, v in mapping.items()} if isinstance(mapping, Mapping) else {}


def proxy_identity() -> str | None:
    """The user the trusted proxy named for this session, or ``None`` (no header configured,
    or the request came without it)."""
    for key in trusted_identity_headers().values():
        value = st.user.get(key)
        if value:
            return str(value)
    return None


def serving_refusal(exposed: str | None, *, login_configured: bool, headers_configured: bool,
                    identity: str | None) -> str | None:
    """Why this session may not be served, or ``None`` when it may.

    Parameters
    ----------
    exposed : str or None
        :func:`exposure`'s reason (``None``: one person on this machine).
    login_configured : bool
        ``[auth]`` is in the secrets (the login screen guards every page then).
    headers_configured : bool
        ``server.trustedUserHeaders`` names at least one header.
    identity : str or None
        The user named by that header in this session's request.
    """
    if headers_configured and not identity and not login_configured:
        # The proxy is supposed to name every user: a request without the header did not
        # come through it (or it is misconfigured). Fail closed, wherever it is served.
        return ("server.trustedUserHeaders is set, but this request carries none of its headers "
                f"({', '.join(sorted(trusted_identity_headers()))}): it did not come through the "
                "proxy that names the user")
    if exposed and not login_configured and not headers_configured:
        return exposed
    return None


def origin_mismatch(origin: str | None, host: str | None) -> str | None:
    """Why a websocket's ``Origin`` is not the address it was sent to, or ``None``.

    Streamlit 1.67 compares host names only, so a page on another port of the same host
    (another local service, a developer's server) passes its check. Here the origin's
    scheme, host and port must name the request's ``Host`` (with the scheme's default port
    when it gives none). No ``Origin`` (a non-browser client) or no ``Host`` passes: the
    check is against browsers carrying a foreign page's requests.
    """
    if not origin or not host:
        return None
    try:
        parts = urlsplit(origin)
        origin_port = parts.port or _DEFAULT_PORTS.get(parts.scheme)
        target = urlsplit(f"//{host}")
        target_port = target.port or _DEFAULT_PORTS.get(parts.scheme)
    except ValueError:
        return "the Origin header is malformed"
    if (parts.hostname or "").lower() != (target.hostname or "").lower() or origin_port != target_port:
        return f"the page that opened this connection ({origin}) is not this app's address ({host})"
    return None


def browser_secret(cookie: str | None) -> bytes | None:
    """The token of Streamlit's XSRF cookie (version 2: ``2|mask|masked token|time``, the
    token XOR the repeated 4-byte mask), or ``None`` when there is none to read. Each page
    load masks the same token afresh, so the raw cookie changes while the token does not."""
    if not cookie:
        return None
    value = cookie.strip("\"'")
    try:
        if value.startswith("2|"):
            _, mask_hex, masked_hex, _ = value.split("|")
            mask, masked = binascii.a2b_hex(mask_hex), binascii.a2b_hex(masked_hex)
            if len(mask) != 4 or not masked:
                return None
            return bytes(b ^ mask[i % 4] for i, b in enumerate(masked))
        return binascii.a2b_hex(value) or None
    except (binascii.Error, ValueError):
        return None


def session_owner(cookie: str | None) -> str:
    """A fingerprint of the browser behind a run (SHA-256: the secret itself never enters the
    session's state). The identity is not part of it: Streamlit binds a session to the
    identity that opened it already, and a sign-in or sign-out starts a new session."""
    return hashlib.sha256(browser_secret(cookie) or b"").hexdigest()


def _refuse(title: str, reason: str, how: str) -> None:
    st.error(f"**{title}:** {literal(reason)}. {how}", icon="🚫")
    st.stop()


def guard_session() -> None:
    """Refuse a run that must not see this session: a foreign origin, a server reachable by
    others without an identity, or a browser other than the one that opened the session.
    Runs before any page, on every run."""
    try:
        headers, cookies, url = st.context.headers, st.context.cookies, st.context.url
    except Exception:  # noqa: BLE001 — no browser context (a scripted test run): nothing to check
        return
    mismatch = origin_mismatch(headers.get("Origin"), headers.get("Host"))
    if mismatch:
        _refuse("Refused", mismatch, "Open the app at its own address.")
    identity = proxy_identity()
    refusal = serving_refusal(exposure(st.get_option("server.address"), url),
                              login_configured=auth_settings() is not None,
                              headers_configured=bool(trusted_identity_headers()), identity=identity)
    if refusal:
        _refuse("Not served", refusal,
                "This dashboard holds confidential data and serves others only with an identity on every "
                "session: configure a login (`[auth]` in .streamlit/secrets.toml) or put it behind a proxy "
                "that signs users in and names them in a header (`server.trustedUserHeaders`, "
                "docs/nginx.conf); or serve it on localhost only (README, docs/serving.md §7).")
    owner = session_owner(cookies.get(XSRF_COOKIE))
    first = st.session_state.setdefault(SESSION_OWNER_KEY, owner)
    if first != owner:
        _refuse("Refused", "this session was opened by another browser",
                "A session belongs to the browser that opened it: reload the page for a session of your own.")
