"""End-to-end: behind docs/nginx.conf, no other site can frame the app or open its websocket
(issue 33, item 7; docs/serving.md §6).

Streamlit 1.67 sends no frame headers and compares websocket origins by host name only, so the
recommended proxy does both. This runs Debian's nginx on the server block of
``docs/nginx.conf`` itself — its ``map`` of origins, its headers, its locations — with only
what a test machine cannot have taken out (TLS, the oauth2-proxy login, the IPv6 listener) and
the addresses made local. Then, in Chromium:

* the app opens through the proxy, as it does for a signed-in user;
* a page of another origin that frames the app gets no app in its frame (X-Frame-Options /
  frame-ancestors), while the same page framing the bare Streamlit server does — the headers
  are the proxy's;
* a websocket handshake with a foreign ``Origin`` is answered 403 by the proxy, before
  Streamlit sees it (so Streamlit never looks the origin up outside).
"""

from __future__ import annotations

import http.server
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import pytest
import websockets
from async_runner import run_async

import st_waits as w
from conftest import REPO

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
CONF = (REPO / "docs" / "nginx.conf").read_text()
START_TIMEOUT_S = 30.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _block(text: str, head: str) -> str:
    """The first ``head … { … }`` block of ``text``, braces balanced."""
    start = text.index("{", re.search(head, text).end() - 1)
    depth = 0
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[re.search(head, text).start():i + 1]
    raise AssertionError(f"unbalanced block {head!r}")


def _test_config(nginx_port: int, app_port: int, tmp: Path) -> str:
    """docs/nginx.conf's served block, made local: TLS, the login and IPv6 taken out."""
    served = [m.start() for m in re.finditer(r"\bserver\s*\{", CONF)]
    body = next(b for b in (_block(CONF[s:], r"\bserver\s*\{") for s in served)
                if "server_name stats.example.org" in b and "ssl_certificate" in b)
    for location in (r"location /oauth2/\s*\{", r"location = /oauth2/auth\s*\{"):
        body = body.replace(_block(body, location), "")
    drop = ("listen [::]", "http2 on", "ssl_", "auth_request", "error_page 401", "X-Auth-Request-Email",
            "access_log /var")
    body = "\n".join(line for line in body.splitlines() if not line.strip().startswith(drop)
                     and "X-Auth-Request-Email" not in line)
    body = body.replace("listen 443 ssl;", f"listen 127.0.0.1:{nginx_port};")
    body = body.replace("http://127.0.0.1:8501", f"http://127.0.0.1:{app_port}")
    origins = _block(CONF, r"\bmap \$http_origin \$bnp_synth_foreign_origin\s*\{").replace(
        '"https://stats.example.org"', f'"http://127.0.0.1:{nginx_port}"')
    upgrade = _block(CONF, r"\bmap \$http_upgrade \$bnp_synth_connection\s*\{")
    zone = re.search(r"limit_req_zone[^;]*;", CONF).group(0)
    temp = " ".join(f"{kind}_temp_path {tmp / kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi",
                                                                     "scgi"))
    return (f"worker_processes 1; daemon off; pid {tmp / 'nginx.pid'}; error_log {tmp / 'error.log'};\n"
            f"events {{}}\nhttp {{ {temp} access_log {tmp / 'access.log'};\n{zone}\n{origins}\n{upgrade}\n"
            f"{body}\n}}\n")


@pytest.fixture(scope="module")
def proxied(app_url, tmp_path_factory):
    """nginx on a free local port in front of the shared app server; yields the proxy's URL."""
    if not os.access(NGINX, os.X_OK):
        reason = f"nginx not found at {NGINX} (install Debian's package: apt-get install -y nginx-light)"
        if os.environ.get("CI"):
            pytest.fail(reason + " (the CI environment variable is set, so this is a failure, not a skip)")
        pytest.skip(reason)
    tmp = tmp_path_factory.mktemp("nginx")
    tmp.chmod(0o777)   # nginx's workers (user nobody under root) write their temp files here
    port = _free_port()
    conf = tmp / "nginx.conf"
    conf.write_text(_test_config(port, int(app_url.rsplit(":", 1)[1]), tmp))
    proc = subprocess.Popen([NGINX, "-c", str(conf), "-p", str(tmp)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"nginx did not start: {(tmp / 'error.log').read_text() if (tmp / 'error.log').exists() else ''}")
            time.sleep(0.1)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def framing_site(tmp_path_factory):
    """Another origin: a local HTTP server whose pages frame a given URL; returns
    ``page(target) -> URL`` of a page framing ``target``."""
    root = tmp_path_factory.mktemp("site")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def framing(target: str) -> str:
        name = f"frame_{abs(hash(target))}.html"
        (root / name).write_text(f'<!doctype html><title>another site</title>'
                                 f'<iframe src="{target}" width="900" height="600"></iframe>')
        return f"http://127.0.0.1:{server.server_address[1]}/{name}"

    try:
        yield framing
    finally:
        server.shutdown()


def _framed(page, site: str):
    """Open ``site`` (a page framing another URL) until its load event, which waits for its
    frame: the app's page, or the browser's error page when the response forbids framing."""
    page.goto(site, wait_until="load", timeout=60_000)
    return page.frames[1]


def test_the_proxy_serves_the_app_and_no_other_site_can_frame_it(browser, app_url, proxied, framing_site):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        w.open_app(page, proxied)                     # through the proxy, the app works
        assert "n = 13,501" in page.locator('[data-testid="stSidebar"]').inner_text()   # the sample, read
        assert not [a for a in w.alert_texts(page) if "Refused" in a or "Not served" in a]
        blocked = _framed(context.new_page(), framing_site(proxied + "/"))
        assert blocked.locator('[data-testid="stApp"]').count() == 0
        assert blocked.url.startswith("chrome-error://"), blocked.url
        # the bare server (no proxy) can be framed: the headers that stop it are the proxy's
        bare = _framed(context.new_page(), framing_site(app_url + "/"))
        bare.locator('[data-testid="stApp"]').wait_for(timeout=60_000)
    finally:
        context.close()


def test_the_proxy_refuses_a_foreign_origin_before_streamlit(proxied):
    stream = proxied.replace("http://", "ws://") + "/_stcore/stream"

    async def handshake(origin: str) -> int:
        try:
            async with websockets.connect(stream, subprotocols=["streamlit"], additional_headers={"Origin": origin}):
                return 101
        except websockets.exceptions.InvalidStatus as exc:
            return exc.response.status_code

    port = int(proxied.rsplit(":", 1)[1])
    assert run_async(handshake(f"http://127.0.0.1:{port + 1 if port < 65535 else port - 1}")) == 403
    assert run_async(handshake("http://stats.example.org.evil.example")) == 403
    assert run_async(handshake(proxied)) == 101
