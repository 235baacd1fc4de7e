"""End-to-end: a session belongs to whoever opened it (issue 33, item 1; ``ui/access.py``).

The attack: a session's id is in every upload URL (``/_stcore/upload_file/<session id>/…``),
so it reaches proxy logs; a second browser that opens the app presenting that id on its
websocket (the third ``Sec-WebSocket-Protocol`` entry, which Streamlit reads as "reconnect to
this session") used to be handed the first user's session — its upload, its page, its
downloads. Here the second browser's page script is patched to present the stolen id:

* one person on localhost, no identity: the app sees another browser's secret and refuses
  the run (nothing of the session is shown);
* a page on another port of the same host (which Streamlit's host-name check lets in) is
  refused by the app's origin check, port included;
* behind a proxy that names the user (``server.trustedUserHeaders``): Streamlit opens a fresh
  session for the other identity, and a request that does not carry the header is not served.
"""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlsplit

import pandas as pd
import pytest
import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

import st_waits as w
from async_runner import run_async
from conftest import streamlit_server

SECRET_COLUMN = "alice_confidential_income"
IDENTITY_HEADER = "X-Remote-User"

#: The second browser presents ``stolen`` as the session to reconnect to, whatever its own is.
STEAL_JS = """(stolen) => {
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(url, protocols) {
      if (Array.isArray(protocols) && protocols[0] === 'streamlit') {
        protocols = ['streamlit', protocols[1] || 'PLACEHOLDER_AUTH_TOKEN', stolen];
      }
      super(url, protocols);
    }
  };
}"""


@pytest.fixture(scope="module")
def victim_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("identity") / "alice.csv"
    pd.DataFrame({SECRET_COLUMN: [10.5 + i for i in range(40)], "region": ["north", "south"] * 20}).to_csv(
        path, index=False)
    return path


def _open_and_upload(page, url: str, path) -> str:
    """Open the app, upload ``path`` and return the session id its upload URL carried."""
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url) if "/_stcore/upload_file/" in r.url else None)
    w.open_app(page, url)
    w.choose_radio(page, "Upload a CSV or Parquet file", timeout=120_000)
    w.upload(page, path)
    page.get_by_text(SECRET_COLUMN).first.wait_for(timeout=60_000)
    assert seen, "no upload request was seen"
    return seen[0].split("/_stcore/upload_file/", 1)[1].split("/", 1)[0]


def _open_with_stolen_id(context, url: str, session_id: str):
    page = context.new_page()
    page.add_init_script(script=f"({STEAL_JS})({json.dumps(session_id)})")
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector(w.APP, timeout=90_000)
    return page


def _page_text(page) -> str:
    return page.locator(w.APP).inner_text()


def test_a_stolen_session_id_is_refused_on_localhost(browser, app_url, victim_file):
    alice = browser.new_context(viewport={"width": 1400, "height": 1000})
    mallory = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        session_id = _open_and_upload(alice.new_page(), app_url, victim_file)
        page = _open_with_stolen_id(mallory, app_url, session_id)
        page.get_by_text("this session was opened by another browser").first.wait_for(timeout=60_000)
        w.wait_for_idle(page)
        text = _page_text(page)
        assert SECRET_COLUMN not in text and "alice.csv" not in text
        # nothing but the refusal: no page of the app ran for this browser
        assert page.locator('[data-testid="stMetric"]').count() == 0
        assert page.locator('[data-testid="stFileUploader"]').count() == 0
    finally:
        mallory.close()
        alice.close()


def test_behind_a_proxy_sessions_follow_the_named_user(browser, artifacts_dir, victim_file):
    headers = json.dumps({IDENTITY_HEADER: "email"})
    log = artifacts_dir / "streamlit_identity.log"
    with streamlit_server(log, "--server.trustedUserHeaders", headers) as (url, _):
        alice = browser.new_context(extra_http_headers={IDENTITY_HEADER: "alice@example.org"})
        bob = browser.new_context(extra_http_headers={IDENTITY_HEADER: "bob@example.org"})
        nobody = browser.new_context()
        try:
            session_id = _open_and_upload(alice.new_page(), url, victim_file)
            # another user presenting Alice's session id gets a session of his own
            page = _open_with_stolen_id(bob, url, session_id)
            page.get_by_text("Signed in as bob").first.wait_for(timeout=60_000)
            w.wait_for_idle(page)
            text = _page_text(page)
            assert SECRET_COLUMN not in text and "alice.csv" not in text and "alice@" not in text
            assert "Ignoring reconnect to active session id" in log.read_text()
            # a request that did not come through the proxy (no header) is not served at all
            stray = nobody.new_page()
            stray.goto(url, wait_until="domcontentloaded")
            stray.get_by_text("Not served").first.wait_for(timeout=60_000)
            assert stray.locator('[data-testid="stMetric"]').count() == 0
        finally:
            nobody.close()
            bob.close()
            alice.close()


async def _first_run(url: str, origin: str) -> str:
    """The text of every message of one run of the app's main page, driven over its websocket
    as a page of ``origin`` would (Streamlit's own check lets any port of the same host in)."""
    stream = url.replace("http://", "ws://") + "/_stcore/stream"
    async with websockets.connect(stream, subprotocols=["streamlit"], additional_headers={"Origin": origin}) as ws:
        rerun = BackMsg()
        rerun.rerun_script.query_string = ""
        await ws.send(rerun.SerializeToString())
        texts = []
        while True:
            message = ForwardMsg()
            message.ParseFromString(await asyncio.wait_for(ws.recv(), 60))
            texts.append(str(message))
            if message.WhichOneof("type") == "script_finished":
                return "\n".join(texts)


def test_a_page_on_another_port_is_refused(app_url):
    own = urlsplit(app_url)
    foreign = f"http://{own.hostname}:{own.port + 1 if own.port < 65535 else own.port - 1}"
    refused = run_async(_first_run(app_url, foreign))
    assert "Refused:" in refused and "not this app" in refused and "records n" not in refused
    served = run_async(_first_run(app_url, f"http://{own.hostname}:{own.port}"))
    assert "Refused:" not in served and "Not served" not in served
