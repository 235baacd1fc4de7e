"""Framing and origins (issue 33, item 7; docs/serving.md §6).

Streamlit 1.67 sends no frame headers and compares websocket origins by host name only, so
the proxy configuration does both; ``.streamlit/config.toml`` states the browser address so
that Streamlit looks nothing up outside to find it. These tests read the two files.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NGINX = (REPO / "docs" / "nginx.conf").read_text()


def _strip_comments(text: str) -> str:
    return "\n".join(line.split("#", 1)[0] for line in text.splitlines())


def _blocks(text: str, head: str) -> list[str]:
    """The bodies of the ``head ... { ... }`` blocks of ``text`` (braces balanced)."""
    out = []
    for match in re.finditer(head, text):
        start = text.index("{", match.end() - 1)
        depth, i = 0, start
        while True:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
        out.append(text[start + 1:i])
    return out


def test_streamlit_config_names_the_browser_address():
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    # stated, so that neither the start nor the origin check asks checkip.amazonaws.com for it
    assert config["browser"]["serverAddress"] == "localhost"
    assert config["server"]["enableCORS"] is True and config["server"]["enableXsrfProtection"] is True


def test_nginx_denies_framing_on_every_location():
    conf = _strip_comments(NGINX)
    served = [b for b in _blocks(conf, r"\bserver\s*\{") if "server_name stats.example.org" in b and "443" in b]
    assert len(served) == 1
    body = served[0]
    assert re.search(r"add_header\s+X-Frame-Options\s+DENY\s+always;", body)
    assert re.search(r"add_header\s+Content-Security-Policy\s+\"frame-ancestors 'none'\"\s+always;", body)
    locations = _blocks(body, r"\blocation\b[^{]*\{")
    assert len(locations) >= 5
    # nginx inherits a server's add_header only into locations without one of their own
    assert not [loc for loc in locations if "add_header" in loc]


def test_nginx_requires_the_exact_origin_with_its_port():
    conf = _strip_comments(NGINX)
    maps = [b for b in _blocks(conf, r"\bmap\s+\$http_origin\s+\$bnp_synth_foreign_origin\s*\{")]
    assert len(maps) == 1
    entries = dict(re.findall(r"^\s*(\S+)\s+(\S+);", maps[0], flags=re.M))
    assert entries == {"default": "1", '""': "0", '"https://stats.example.org"': "0"}
    # the app's own locations refuse any other origin before passing anything to Streamlit
    for head in (r"location\s+/\s*\{", r"location\s+/_stcore/upload_file/\s*\{"):
        (body,) = _blocks(conf, head)
        refuse = body.index("if ($bnp_synth_foreign_origin) { return 403; }")
        assert refuse < body.index("proxy_pass")


def test_nginx_keeps_session_and_media_urls_out_of_the_access_log_and_names_the_user():
    # issue 33, item 1: an upload URL names its session, a media URL is a file's key
    conf = _strip_comments(NGINX)
    for head in (r"location\s+/_stcore/upload_file/\s*\{", r"location\s+/media/\s*\{"):
        (body,) = _blocks(conf, head)
        assert re.search(r"access_log\s+off;", body)
        assert "auth_request /oauth2/auth;" in body
        assert body.index("if ($bnp_synth_foreign_origin) { return 403; }") < body.index("proxy_pass")
    # the user named by oauth2-proxy reaches Streamlit in the header it maps (server.trustedUserHeaders);
    # proxy_set_header replaces whatever a client sent under that name
    for head in (r"location\s+/\s*\{", r"location\s+/_stcore/upload_file/\s*\{"):
        (body,) = _blocks(conf, head)
        assert "auth_request_set $bnp_synth_user $upstream_http_x_auth_request_email;" in body
        assert "proxy_set_header X-Auth-Request-Email $bnp_synth_user;" in body
    assert """--server.trustedUserHeaders '{"X-Auth-Request-Email": "email"}'""" in NGINX
