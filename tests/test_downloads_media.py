"""Confidential downloads in Streamlit's media store (ui/downloads.py, docs/serving.md §1).

Driven through Streamlit's own click handling (``DeferredFileHandler``, which answers a click
on a deferred download on the session's websocket) with a real ``MediaFileManager``: what a
click of the owning session, of another session, and of many sessions in a row leave in the
store. These also fail loudly if Streamlit changes how it answers a click (ui/downloads.py
relies on it in ``_requesting_session`` and ``_delete_stored``).
"""

from __future__ import annotations

import io
import json
import time
import zipfile

import pandas as pd
import pytest
from async_runner import run_async
from streamlit.proto.BackMsg_pb2 import BackendOperationRequest
from streamlit.runtime.backend_operation_handler import DeferredFileHandler
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.runtime.media_file_storage import MediaFileStorageError
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

from core.release import bundle as core_bundle
from ui import downloads, widgets

#: The session id of AppTest's script runs (streamlit.testing.v1.local_script_runner).
APPTEST_SESSION_ID = "test session id"
OWNER, OTHER = "owner-session", "other-session"


def deferred_click(manager: MediaFileManager, file_id: str, session_id: str = APPTEST_SESSION_ID) -> str:
    """What Streamlit does when ``session_id`` clicks the deferred download ``file_id``: its
    ``DeferredFileHandler`` runs the function and answers with the file's URL.

    Raises
    ------
    MediaFileStorageError
        The handler answered with an error (unknown id, or the function refused or failed).
    """
    request = BackendOperationRequest(request_id="r", session_id=session_id)
    request.deferred_file.file_id = file_id
    response = run_async(DeferredFileHandler(lambda: manager).handle(request, session_id))
    if response.error_msg or not response.deferred_file.url:
        raise MediaFileStorageError(response.error_msg or "no URL")
    return response.deferred_file.url


class _Button:
    """Stands for ``st`` (``where=``): registers the deferred function with ``manager`` as
    Streamlit's download button does, and keeps its deferred id and MIME type."""

    def __init__(self, manager: MediaFileManager) -> None:
        self.manager = manager

    def download_button(self, label, *, data, file_name, mime, key, **kwargs):
        self.mime = mime
        self.file_id = self.manager.add_deferred(data, mime, key, file_name, element_id=key)


class _Ctx:
    def __init__(self, session_id: str) -> None:
        self.session_id = session_id


@pytest.fixture
def offer(monkeypatch):
    """``offer(build, file_name, mime, session=OWNER)``: a confidential download shown by the page
    run of ``session``; returns (manager, button). Files expire after 0.3 s."""
    monkeypatch.setattr(downloads, "CONFIDENTIAL_URL_SECONDS", 0.3)
    manager = MediaFileManager(MemoryMediaFileStorage("/media"))

    class Runtime:   # the runtime of a served app, as the page run sees it
        media_file_mgr = manager
        exists = staticmethod(lambda: True)
        get_instance = classmethod(lambda cls: cls)

    monkeypatch.setattr(downloads, "runtime", Runtime)

    def make(build, file_name, mime, session=OWNER):
        monkeypatch.setattr(downloads, "get_script_run_ctx", lambda suppress_warning=False: _Ctx(session))
        button = _Button(manager)
        downloads.confidential_download("label", build, file_name=file_name, mime=mime, key=file_name,
                                        where=button)
        return manager, button

    return make


def _stored(manager: MediaFileManager, url: str):
    return manager.read_file(url.rsplit("/", 1)[-1])


def _record() -> bytes:
    files = [("CONFIDENTIAL_report.json", b'{"CONFIDENTIAL": 1}'), ("CONFIDENTIAL_summary.csv", b"# x\na\n1\n")]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, payload in files:
            zf.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), payload)
    return buffer.getvalue()


def _gone_within(manager, url: str, seconds: float) -> float:
    start = time.monotonic()
    while _stored(manager, url) is not None:
        assert time.monotonic() - start < seconds, f"{url} is still stored"
        time.sleep(0.02)
    return time.monotonic() - start


# --------------------------------------------------------------------------- (a) unique builds
def test_the_same_record_clicked_twice_is_two_files_at_two_urls(offer):
    """A deterministic zip (the curator record) gets a random nonce at each build: two clicks
    give two URLs, so a URL read from a log never answers again when the record is rebuilt."""
    manager, button = offer(_record, "CONFIDENTIAL_curator_record.zip", "application/zip")
    first, second = deferred_click(manager, button.file_id, OWNER), deferred_click(manager, button.file_id, OWNER)
    assert first != second
    a, b = _stored(manager, first).content, _stored(manager, second).content
    assert a != b
    for payload in (a, b):   # the same entries, bytes and order as built; only the comment differs
        with zipfile.ZipFile(io.BytesIO(payload)) as zf, zipfile.ZipFile(io.BytesIO(_record())) as plain:
            assert zf.namelist() == plain.namelist()
            assert all(zf.read(n) == plain.read(n) for n in zf.namelist())
            assert zf.comment.startswith(b"build ") and len(zf.comment) == 6 + 32


def test_a_marked_csv_carries_its_nonce_in_the_comment_line_a_reader_skips(offer):
    body = "# CONFIDENTIAL — mark\nproperty,score\nOverall,0.9\n".encode("utf-8")
    manager, button = offer(lambda: body, "CONFIDENTIAL_quality_report.csv", "text/csv")
    urls = [deferred_click(manager, button.file_id, OWNER) for _ in range(2)]
    assert urls[0] != urls[1]
    for url in urls:
        payload = _stored(manager, url).content
        assert payload.startswith(b"# CONFIDENTIAL") and payload.endswith(b"\nproperty,score\nOverall,0.9\n")
        assert pd.read_csv(io.BytesIO(payload), comment="#").equals(
            pd.read_csv(io.BytesIO(body), comment="#"))


def test_every_curator_table_and_json_is_marked_and_unique_at_each_click(offer):
    # the app's curator-only tables (Compare, Informativity, Inference) and the audit summary
    table = pd.DataFrame({"n": [100, 311], "mean": [0.5, 0.25]})
    body = widgets.confidential_csv_bytes(table)
    assert body.startswith(widgets.CONFIDENTIAL_TABLE_LINE.encode("utf-8") + b"\n")
    manager, button = offer(lambda: body, "CONFIDENTIAL_informativity.csv", "text/csv")
    urls = [deferred_click(manager, button.file_id, OWNER) for _ in range(2)]
    assert urls[0] != urls[1]
    for url in urls:
        assert pd.read_csv(io.BytesIO(_stored(manager, url).content), comment="#").equals(table)
    summary = json.dumps({"CONFIDENTIAL": "curator only", "releases_k": 1}, indent=1).encode()
    manager, button = offer(lambda: summary, "CONFIDENTIAL_audit_summary.json", "application/json")
    urls = [deferred_click(manager, button.file_id, OWNER) for _ in range(2)]
    read = [json.loads(_stored(manager, url).content) for url in urls]
    assert urls[0] != urls[1] and read[0]["download"] != read[1]["download"]
    assert all({k: v for k, v in r.items() if k != "download"} == json.loads(summary) for r in read)


def test_a_plain_csv_keeps_its_bytes_and_its_url_changes_with_each_page_run(offer):
    """No byte of a plain CSV is one a reader skips: the file is served as built, and the MIME
    type's random parameter (new at each run of the page) gives it a new URL."""
    body = b"a,b\n1,2\n"
    urls, mimes = [], []
    for _ in range(2):   # two runs of the page
        manager, button = offer(lambda: body, "table.csv", "text/csv")
        urls.append(deferred_click(manager, button.file_id, OWNER))
        mimes.append(button.mime)
        stored = _stored(manager, urls[-1])
        assert stored.content == body and stored.filename == "table.csv"
    assert urls[0] != urls[1]
    assert all(m.startswith("text/csv; nonce=") for m in mimes) and mimes[0] != mimes[1]


def test_with_build_nonce_refuses_what_is_not_a_zip():
    with pytest.raises(ValueError, match="payload"):
        core_bundle.with_build_nonce(b"a,b\n1,2\n", "ab")
    with pytest.raises(ValueError, match="nonce"):
        core_bundle.with_build_nonce(_record(), "a\nb")


# --------------------------------------------------------------------------- (b) a timer per file
def test_each_file_goes_on_its_own_timer_whatever_other_sessions_click(offer):
    """The first file is deleted its seconds after its own build although another session
    keeps building files (the earlier global debounce was postponed by every click)."""
    manager, mine = offer(_record, "CONFIDENTIAL_curator_record.zip", "application/zip", session=OWNER)
    _, theirs = offer(_record, "CONFIDENTIAL_curator_record.zip", "application/zip", session=OTHER)
    clicked = time.monotonic()
    url = deferred_click(manager, mine.file_id, OWNER)
    others = []
    while _stored(manager, url) is not None:
        others.append(deferred_click(manager, theirs.file_id, OTHER))   # a click every ~50 ms
        assert time.monotonic() - clicked < 5.0, "postponed by the other session's clicks"
        time.sleep(0.05)
    gone = time.monotonic() - clicked
    assert 0.3 <= gone < 1.5 and len(others) >= 3
    # the other session's latest file keeps its own seconds
    assert _stored(manager, others[-1]) is not None
    _gone_within(manager, others[-1], 5.0)


# --------------------------------------------------------------------------- (c) the owner only
def test_another_session_cannot_have_the_file_built(offer):
    built = []
    manager, button = offer(lambda: built.append(1) or b"a,b\n1,2\n", "table.csv", "text/csv", session=OWNER)
    with pytest.raises(MediaFileStorageError):
        deferred_click(manager, button.file_id, OTHER)
    assert built == [] and not manager._storage._files_by_id   # nothing built, nothing stored
    # a direct call (not a click answered by Streamlit's handler) is refused too: fail closed
    with pytest.raises(MediaFileStorageError):
        manager.execute_deferred(button.file_id)
    assert built == []
    url = deferred_click(manager, button.file_id, OWNER)
    assert _stored(manager, url).content == b"a,b\n1,2\n" and built == [1]


def test_streamlit_still_answers_a_click_as_this_module_expects():
    """ui/downloads.py wraps ``DeferredFileHandler.handle`` and deletes through the storage's
    ``delete_file``: if Streamlit renames or reshapes either, this fails (and so do the tests
    above), instead of confidential files silently staying at their URL."""
    assert getattr(DeferredFileHandler.handle, "_confidential_click", False)
    manager = MediaFileManager(MemoryMediaFileStorage("/media"))
    assert callable(manager._storage.delete_file)
