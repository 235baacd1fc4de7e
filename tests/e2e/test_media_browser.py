"""End-to-end: a confidential download is a file of its own, for its own session, for its own
seconds (ui/downloads.py, docs/serving.md §1).

In one browser tab the curator generates a release and downloads the CONFIDENTIAL curator
record twice: two different media URLs (a random nonce in each build; the record's zip is
otherwise the same bytes). Another tab (another session) then keeps downloading its own
record, about once a second: the curator's first URL still answers 404 its
``ui.downloads.CONFIDENTIAL_URL_SECONDS`` after its own click (one timer per file, which no
click postpones). A third session, a plain websocket client that is not the curator's, asks
for the curator's deferred download by its id, as a tampered client could: it is refused and
gets no URL.
"""

from __future__ import annotations

import time
from urllib.parse import urlsplit

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

import st_waits as w
from ui.downloads import CONFIDENTIAL_URL_SECONDS

CURATOR_LABEL = "Download CONFIDENTIAL curator record (zip)"
SLACK_S = 3.0              # a 404 is due CONFIDENTIAL_URL_SECONDS after the build; the server may be busy
FOREIGN_TIMEOUT_S = 30     # hang guard of the websocket client


def _sent_deferred_ids(page) -> list[str]:
    """The deferred-file ids ``page`` asks for on its websocket (one per click), as they are sent."""
    ids: list[str] = []

    def on_frame(payload) -> None:
        if isinstance(payload, (bytes, bytearray)):
            msg = BackMsg.FromString(bytes(payload))
            if msg.WhichOneof("type") == "backend_operation_request":
                ids.append(msg.backend_operation_request.deferred_file.file_id)

    page.on("websocket", lambda ws: ws.on("framesent", on_frame))
    return ids


def _download(page) -> str:
    """Click the curator record's download; the media URL the browser fetched it from."""
    with page.expect_download() as info:
        page.get_by_role("button", name=CURATOR_LABEL, exact=True).click()
    return info.value.url


def _ask_as_another_session(app_url: str, deferred_id: str) -> ForwardMsg:
    """Open a session of our own on the app's websocket (a client without the curator's
    session), run its first page to learn its session id, then ask for ``deferred_id``; the
    server's answer."""
    from websockets.sync.client import connect

    ws_url = "ws" + app_url.removeprefix("http") + "/_stcore/stream"
    deadline = time.monotonic() + FOREIGN_TIMEOUT_S
    # no Origin header: a client that is not a browser (an unknown Origin would be checked online)
    with connect(ws_url, subprotocols=["streamlit"], open_timeout=10, max_size=None) as ws:
        rerun = BackMsg()
        rerun.rerun_script.query_string = ""
        ws.send(rerun.SerializeToString())
        session_id = None
        while session_id is None:
            msg = ForwardMsg.FromString(ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if msg.WhichOneof("type") == "new_session":
                session_id = msg.new_session.initialize.session_id
        ask = BackMsg()
        ask.backend_operation_request.request_id = "foreign"
        ask.backend_operation_request.session_id = session_id
        ask.backend_operation_request.deferred_file.file_id = deferred_id
        ws.send(ask.SerializeToString())
        while True:
            msg = ForwardMsg.FromString(ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if msg.WhichOneof("type") == "backend_operation_response" and \
                    msg.backend_operation_response.request_id == "foreign":
                return msg


def test_each_download_is_its_own_url_for_its_own_seconds_and_session(page, shared_context, app_url):
    other = shared_context.new_page()
    try:
        asked = _sent_deferred_ids(page)
        # two sessions open the release page at once (w.open_app, both tabs loading side by side)
        for tab in (page, other):
            tab.add_init_script(w.SOCKET_HOOK_JS)
            tab.goto(app_url + "/synthetic_data", wait_until="domcontentloaded")
        for tab in (page, other):
            tab.wait_for_selector(w.APP, timeout=90_000)
            w.wait_for_idle(tab)
        # and generate their release at once (the server runs them side by side)
        for tab in (page, other):
            w.watch_runs(tab)
            tab.get_by_role("button", name="Generate release", exact=True).dispatch_event("click")
        for tab in (page, other):
            w.wait_for_runs(tab)
            tab.get_by_role("button", name=CURATOR_LABEL, exact=True).wait_for(state="visible")

        # (a) the same record, downloaded twice: two URLs
        clicked = time.monotonic()
        first = _download(page)
        done = time.monotonic()   # the first file was built between ``clicked`` and now
        second = _download(page)
        assert urlsplit(first).path.startswith("/media/") and first != second
        assert len(asked) == 2 and asked[0] == asked[1]   # one deferred id, two builds

        # (b) the other session keeps clicking; the first URL goes at its own time anyway
        theirs = []
        while (status := page.request.get(first).status) == 200:
            assert time.monotonic() - done < CONFIDENTIAL_URL_SECONDS + SLACK_S, \
                f"the first URL still answers while the other session clicks ({len(theirs)} clicks)"
            theirs.append(_download(other))
        assert status == 404 and len(theirs) >= 2, theirs
        assert time.monotonic() - clicked >= CONFIDENTIAL_URL_SECONDS   # not before its seconds
        assert page.request.get(second).status in (200, 404)   # its own timer, started a moment later
        assert len(set(theirs)) == len(theirs)   # every build of theirs at a URL of its own

        # (c) another session asks for the curator's deferred id: refused, nothing to fetch
        answer = _ask_as_another_session(app_url, asked[0]).backend_operation_response
        assert answer.error_msg and not answer.deferred_file.url, answer
        # the curator's own session still gets its file
        assert _download(page) not in (first, second)
    finally:
        other.close()
