"""End-to-end: what a client without the curator's session can reach (docs/serving.md).

* The CONFIDENTIAL curator record is built when the curator clicks its download, never
  before: no file the page fetched before the click is confidential. A second browser
  context (its own cookies, its own session) that learns the URL, as a proxy log or a
  browser history would give it, gets nothing from
  ``ui.downloads.CONFIDENTIAL_URL_SECONDS`` (5 s) after the click on, nor does a client
  without any cookie: the app drops the file from Streamlit's media store. Until then the
  URL answers whoever presents it (Streamlit's media route checks nothing); the test asks
  from the moment the download completed and records how long it answered
  (``artifacts/curator_url.json``).
* DNS rebinding: the app's websocket refuses a Host outside ``server.allowedHosts``
  (``.streamlit/config.toml``), so a page of another site whose name resolves to this
  machine cannot run the app.
* Decompression bombs: a Parquet file of 10^8 (nearly) equal rows is read in bounded
  memory, one of 4·10^8 rows and a gzip file named ``.csv`` that decompresses to 500 MB (2.6·10^8 rows)
  are refused before they are read; the server's peak resident memory (VmHWM from /proc)
  stays under 1 GiB above its idle level. The files are built here, in a few seconds.
"""

from __future__ import annotations

import base64
import concurrent.futures
import gzip
import io
import json
import os
import socket
import time
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np

import st_waits as w
from conftest import streamlit_server

CURATOR_LABEL = "Download CONFIDENTIAL curator record (zip)"
URL_GONE_TIMEOUT_S = 60        # hang guard: the app drops the file 5 s after the click
BOMB_SLACK_MIB = 1024          # the server's peak may not exceed its idle level by 1 GiB


# --------------------------------------------------------------------------- the curator record
def test_another_context_cannot_fetch_the_curator_record_by_its_url_once_served(browser, app_url, artifacts_dir):
    a = browser.new_context(accept_downloads=True, viewport={"width": 1400, "height": 1000})
    b = browser.new_context(viewport={"width": 1400, "height": 1000})
    a.set_default_timeout(60_000)
    media: list[str] = []
    a.on("request", lambda request: media.append(request.url) if "/media/" in request.url else None)
    try:
        page = a.new_page()
        w.open_app(page, app_url)
        w.go_to_page(page, "Synthetic data")
        w.press(page, "Generate release")
        button = page.get_by_role("button", name=CURATOR_LABEL, exact=True)
        button.wait_for(state="visible")
        # Before the click, nothing of the record is on the server: no file the page fetched
        # from the media store (the public files are there, behind the gate) is CONFIDENTIAL.
        before = list(media)
        for url in before:
            response = b.request.get(url)
            assert response.status != 200 or not _confidential(response.body()), url

        clicked = time.monotonic()
        with page.expect_download() as info:
            button.click()
        download = info.value
        url = download.url
        assert urlsplit(url).path.startswith("/media/") and url not in before
        record = _zip_names(Path(download.path()).read_bytes())
        assert "CONFIDENTIAL_report.json" in record and all(name.startswith("CONFIDENTIAL_") for name in record)

        # Context B asks for the URL, as anyone who read it in a log would, from the moment
        # the download completed: the app drops the record seconds after the click.
        answered = []
        while (status := b.request.get(url).status) == 200:
            answered.append(round(time.monotonic() - clicked, 2))
            assert time.monotonic() - clicked < URL_GONE_TIMEOUT_S, "the curator record is still served"
            time.sleep(0.2)
        gone_after = time.monotonic() - clicked
        assert status == 404
        assert b.request.get(url).status == 404 and a.request.get(url).status == 404
        # and no other client can reach it either: a plain request without any cookie
        assert _status_without_cookies(url) == 404
        (artifacts_dir / "curator_url.json").write_text(json.dumps(
            {"seconds_until_404": round(gone_after, 2), "answered_200_at": answered}, indent=2))
    finally:
        a.close()
        b.close()


def _zip_names(payload: bytes) -> list[str]:
    with zipfile.ZipFile(io.BytesIO(payload)) as zf:
        return zf.namelist()


def _confidential(payload: bytes) -> bool:
    if payload[:2] == b"PK":
        return any(name.startswith("CONFIDENTIAL_") for name in _zip_names(payload))
    return payload.startswith(b"# CONFIDENTIAL")


def _status_without_cookies(url: str) -> int:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


# --------------------------------------------------------------------------- DNS rebinding
def _websocket_handshake(url: str, host: str) -> int:
    """The status of a websocket handshake on the app's stream with this ``Host`` header."""
    parts = urlsplit(url)
    key = base64.b64encode(os.urandom(16)).decode()
    request = (f"GET /_stcore/stream HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
               f"Origin: http://{host}\r\n\r\n")
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(request.encode())
        status_line = sock.makefile("rb").readline().decode()
    return int(status_line.split()[1])


def test_a_rebound_host_name_cannot_open_the_app(app_url):
    port = urlsplit(app_url).port
    assert _websocket_handshake(app_url, f"127.0.0.1:{port}") == 101
    assert _websocket_handshake(app_url, f"localhost:{port}") == 101
    # a name an attacker's DNS points at 127.0.0.1: the websocket that runs the app is refused
    assert _websocket_handshake(app_url, f"rebind.attacker.example:{port}") != 101


# --------------------------------------------------------------------------- decompression bombs
def _parquet_of_equal_rows(rows: int, chunk: int = 10**7) -> bytes:
    """A Parquet file of ``rows`` int64 values in one row group, all 0 but the first
    ``chunk`` (1: a column of one value cannot be prepared without public bounds, and the
    page would stop before showing n): the pages are run-length encoded and compressed, so
    10^8 rows take a few hundred kilobytes. The column is two chunks referenced ``rows /
    chunk`` times: built in seconds, in 160 MB."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    zeros = pa.array(np.zeros(chunk, dtype=np.int64))
    ones = pa.array(np.ones(chunk, dtype=np.int64))
    table = pa.table({"amount": pa.chunked_array([ones] + [zeros] * (rows // chunk - 1))})
    buffer = io.BytesIO()
    pq.write_table(table, buffer, row_group_size=rows, data_page_size=1 << 30, compression="zstd",
                   write_statistics=False)
    return buffer.getvalue()


def _gzip_of_equal_rows(rows: int, member_rows: int = 2**18) -> bytes:
    """A gzip file of a header and ``rows`` lines ``1``: one compressed member of
    ``member_rows`` lines, repeated (gzip members may be concatenated): 2.6·10^8 rows,
    500 MB of text, in half a megabyte, built in milliseconds."""
    member = gzip.compress(b"1\n" * member_rows, compresslevel=9)
    return gzip.compress(b"amount\n") + member * (rows // member_rows)


def _status_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {key} in /proc/{pid}/status")


def test_decompression_bombs_are_refused_or_read_in_bounded_memory(browser, artifacts_dir, tmp_path):
    # the two large Parquet files take seconds to encode: built while the server starts
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        parquets = pool.submit(lambda: {rows: _parquet_of_equal_rows(rows) for rows in (10**8, 4 * 10**8)})
        log_path = artifacts_dir / "streamlit_bomb_test.log"
        with streamlit_server(log_path) as (url, proc):
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            context.set_default_timeout(120_000)
            try:
                page = context.new_page()
                w.open_app(page, url)
                w.choose_radio(page, "Upload a CSV or Parquet file")
                idle_kib = _status_kib(proc.pid, "VmRSS")
                files = {"bomb.csv": _gzip_of_equal_rows(262_364_000)}
                built = parquets.result()
                files["equal_1e8.parquet"] = built[10**8]
                files["equal_4e8.parquet"] = built[4 * 10**8]
                outcome = {}
                for name, content in files.items():
                    path = tmp_path / name
                    path.write_bytes(content)
                    w.upload(page, path)
                    # replacing a file takes two runs: wait until the page speaks of this one
                    page.locator('[data-testid="stAlert"], [data-testid="stSidebar"]').filter(
                        has_text=name).first.wait_for()
                    w.wait_for_idle(page)
                    alerts = w.alert_texts(page)
                    refused = [a for a in alerts if f"Could not use {name}" in a]
                    outcome[name] = {"bytes": len(content), "refused": refused[0] if refused else None,
                                     "sidebar": page.locator('[data-testid="stSidebar"]').inner_text()}
                    assert not w.has_exception(page), name
                peak_kib = _status_kib(proc.pid, "VmHWM")
            finally:
                context.close()

    record = {"idle_rss_mib": round(idle_kib / 1024, 1), "peak_mib": round(peak_kib / 1024, 1),
              "peak_above_idle_mib": round((peak_kib - idle_kib) / 1024, 1), "files": outcome}
    (artifacts_dir / "bombs.json").write_text(json.dumps(record, indent=2))
    print("decompression bombs:", json.dumps(record))
    assert "more than 100,000,000 rows" in outcome["bomb.csv"]["refused"] or \
        "decompresses to more than 128 MiB" in outcome["bomb.csv"]["refused"]
    assert "400,000,000 rows, above the limit of 100,000,000" in outcome["equal_4e8.parquet"]["refused"]
    for name in ("bomb.csv", "equal_4e8.parquet"):
        assert "python -m core release" in outcome[name]["refused"]
    # the file of 10^8 rows is within the limit: read, streamed by DuckDB, and profiled
    assert outcome["equal_1e8.parquet"]["refused"] is None
    sidebar = outcome["equal_1e8.parquet"]["sidebar"]
    assert "equal_1e8.parquet" in sidebar and "n = 100,000,000, k = 2" in sidebar, sidebar
    assert peak_kib - idle_kib < BOMB_SLACK_MIB * 1024, record

