"""Downloads of confidential files: built on the click, for the session that shows the button
only, gone from the server seconds later, never at a URL that answered before.

Streamlit serves the data of an ``st.download_button`` from its media store at
``/media/<id>``, to any client that asks for that URL: the route checks no cookie,
session or login (Streamlit 1.67). Bytes given to the button are stored when the page
runs and stay until two sweeps of Streamlit's media store (at the end of later script
runs of any session) find them unused: on an idle server, for as long as it stays idle.
Such URLs end up in proxy logs and browser histories. So a confidential file (the
CONFIDENTIAL curator record, the quality report, every table that compares a release with
the confidential data) never goes to the button as bytes:

* the button gets a function (Streamlit's deferred ``data=``): nothing is built or
  stored until the curator clicks, and the click is answered on the session's own
  websocket with a fresh URL. The function builds only for a click of the session whose
  page run made the button (:func:`_requesting_session`): a request for its deferred id
  sent on another session's websocket is refused, nothing is built;
* every build is a new URL: the media id is a hash of the bytes, the MIME type and the file
  name, so a zip carries a random nonce as its comment and a CSV that starts with a ``#``
  comment line (the CONFIDENTIAL mark) carries it at the end of that line
  (:func:`_stamped`); and the MIME type carries a random parameter, new at every run of the
  page (``text/csv; nonce=…``: parameters a reader does not know are ignored, RFC 2045), which
  is all a plain CSV or JSON file can take without changing what a reader gets;
* the file built by a click is deleted from the media store :data:`CONFIDENTIAL_URL_SECONDS`
  after *that* build (one timer per file: other clicks, of any session, neither postpone
  nor hasten it), so its URL answers 404 from then on. The browser fetches it within
  milliseconds of the click (twice: a check and the download; both start before the
  deletion, and a response already started is served whole).

A leaked URL therefore yields nothing once those seconds have passed and never answers
again (docs/serving.md §1, where the alternative — a passphrase-encrypted zip — is
discussed). The public release and the synthetic CSV are public by design (behind the
publication gate) and are served the ordinary way, unstamped (their bytes replay exactly).

Those buttons are the only way a file leaves the app: Streamlit's own "Download as CSV" (and
clipboard copy) of every ``st.dataframe`` — tables of released rows, of the data's categories,
of user text — is switched off (:func:`builtin_export_off`, Streamlit's
``client.disableDataExport``), so no table hands out released rows past the gate
(docs/serving.md §5).
"""

from __future__ import annotations

import contextvars
import os
import secrets
import threading
import time
from collections.abc import Callable
from urllib.parse import urlsplit

import streamlit as st
from streamlit import runtime
from streamlit.runtime.backend_operation_handler import DeferredFileHandler
from streamlit.runtime.scriptrunner import get_script_run_ctx

from core.release import bundle as core_bundle

#: Seconds a confidential file stays at its URL after it was built: long enough for the
#: browser's two requests, which follow the click within milliseconds (a link across the
#: world adds well under a second), short enough that a URL read later from a log or a
#: history answers 404. A download that misses it fails in the browser; clicking again
#: builds the file anew.
CONFIDENTIAL_URL_SECONDS = 5.0


class RefusedDownload(PermissionError):
    """A deferred confidential file was asked for by a session other than the one that shows
    its button (or outside Streamlit's click handling): nothing is built."""


def confidential_download(label: str, build: Callable[[], bytes], *, file_name: str, mime: str, key: str,
                          help: str | None = None, where=st, **kwargs) -> None:
    """A download button whose file is built by ``build()`` when this session clicks it,
    and whose URL stops answering :data:`CONFIDENTIAL_URL_SECONDS` later (see the module docstring).

    ``build`` runs on a server thread outside the script run: it must not read
    ``st.session_state`` or call a cached function; pass it what it needs (computed
    during the run) in a closure. The click does not rerun the page. Each run of the page
    gives the button a new id (Streamlit's deferred downloads), so a click while the page
    is rerunning can hold the old one and fail with a message under the button; clicking
    again works (the other download buttons of a page with one of these should not rerun
    it either: ``on_click="ignore"``).
    """
    media = runtime.get_instance().media_file_mgr if runtime.exists() else None

    def stamped() -> bytes:
        data = _stamped(build(), mime)
        click = _CLICK.get()
        click.media, click.built = media, time.monotonic()
        return data

    built_on_click = session_only(stamped, file_name)

    lifetime = (f"Built when you click; its link works for {CONFIDENTIAL_URL_SECONDS:g} seconds only "
                "(click again to download it again).")
    # ``help`` is the page's own text (never user text): it is Markdown like every help
    where.download_button(label, data=built_on_click, file_name=file_name, mime=_with_run_nonce(mime),
                          key=key, help=lifetime if not help else help + " " + lifetime, on_click="ignore",
                          **kwargs)


def session_only(build: Callable[[], bytes], file_name: str = "the file") -> Callable[[], bytes]:
    """``build`` as the function of a deferred download (``st.download_button(data=...)``)
    that answers only a click of the session whose page run called this: any other session
    that asks for its deferred id gets :class:`RefusedDownload` and nothing is built or run.

    Every deferred download with a side effect goes through it — a confidential file
    (:func:`confidential_download`), and the public release, whose click charges the privacy
    ledger in the curator's name (ui/ledger.py). Fail closed: a call outside Streamlit's click
    handling (or a Streamlit that no longer passes through it) is refused too.
    """
    ctx = get_script_run_ctx(suppress_warning=True)
    owner = ctx.session_id if ctx is not None else None

    def answered() -> bytes:
        click = _CLICK.get()
        if click is None or owner is None or click.session_id != owner:
            raise RefusedDownload(f"{file_name!r} is built for a click of the session that shows its button only")
        return build()

    return answered


def _with_run_nonce(mime: str) -> str:
    """``mime`` with a random parameter: the media id hashes the MIME type, so the URL of a
    file differs at every run of the page even when its bytes do not (a plain CSV, a JSON
    file). The browser saves the file under its own name, with its bytes unchanged."""
    return f"{mime}; nonce={secrets.token_hex(8)}"


def _stamped(data: bytes, mime: str) -> bytes:
    """``data`` with a fresh random nonce where its format has room for one a reader ignores:
    a zip's comment (:func:`core.release.bundle.with_build_nonce`), or the end of the ``#``
    comment line that heads a CONFIDENTIAL CSV (read with ``comment='#'``, as it says), or a
    ``"download"`` member at the start of a JSON object. Any other file is left as it is: no
    byte of a plain CSV is one a reader skips."""
    nonce = secrets.token_hex(16)
    kind = mime.split(";", 1)[0].strip().lower()
    if not isinstance(data, bytes):
        return data
    if kind == "application/zip":
        return core_bundle.with_build_nonce(data, nonce)
    if kind == "text/csv" and data.startswith(b"#"):
        first, newline, rest = data.partition(b"\n")
        end = b"\r" if first.endswith(b"\r") else b""
        return first[:len(first) - len(end)] + f" (download {nonce})".encode("ascii") + end + newline + rest
    if kind == "application/json" and data.lstrip().startswith(b"{"):
        # one more member of the top-level object, first: a reader looks members up by name
        head, brace, rest = data.partition(b"{")
        return head + brace + f'"download": "{nonce}",'.encode("ascii") + rest
    return data


# --------------------------------------------------------------------------- one click
class _Click:
    """One deferred-file request, as Streamlit's handler received it: the session whose
    websocket carried it, and (once a confidential file is built) the media store and time."""

    __slots__ = ("session_id", "media", "built")

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.media = None
        self.built: float | None = None


#: The click being answered. Streamlit runs the deferred function through
#: ``asyncio.to_thread``, which copies the context of the request's task: the function reads
#: the click here, and writes the store and the time of its build into it.
_CLICK: contextvars.ContextVar[_Click | None] = contextvars.ContextVar("confidential_click", default=None)


def _requesting_session() -> None:
    """Make Streamlit's deferred-file handler say which session asks, and expire what it built.

    Streamlit 1.67 answers a click on a deferred download with
    ``DeferredFileHandler.handle(request, session_id)``: ``session_id`` is the session whose
    websocket carried the request, but the handler does not use it, and
    ``MediaFileManager.execute_deferred`` runs the function of any session's deferred id. This
    wraps ``handle`` (once per process) so that the function sees that session (:data:`_CLICK`);
    and, when the function built a confidential file, the file at the URL of the answer is
    deleted :data:`CONFIDENTIAL_URL_SECONDS` after its build (:func:`_expire`). The URL is
    Streamlit's own answer, so no media id is computed here. The one place this module relies
    on how Streamlit handles a click; tests/test_downloads_media.py fails if that changes.
    """
    original = DeferredFileHandler.handle
    if getattr(original, "_confidential_click", False):
        return

    async def handle(self, request, session_id: str):
        click = _Click(session_id)
        token = _CLICK.set(click)
        try:
            response = await original(self, request, session_id)
        finally:
            _CLICK.reset(token)
        if click.built is not None and response.deferred_file.url:
            _expire(click.media, response.deferred_file.url, click.built)
        return response

    handle._confidential_click = True
    handle.__doc__ = original.__doc__
    DeferredFileHandler.handle = handle


def _expire(media, url: str, built: float) -> None:
    """Delete the file at ``url`` :data:`CONFIDENTIAL_URL_SECONDS` after ``built`` (its build,
    ``time.monotonic()``), on a timer of its own."""
    if media is None:
        return
    file_id = os.path.splitext(urlsplit(url).path.rsplit("/", 1)[-1])[0]
    delay = max(0.0, built + CONFIDENTIAL_URL_SECONDS - time.monotonic())
    timer = threading.Timer(delay, _delete_stored, args=(media, file_id))
    timer.daemon = True
    timer.start()


def _delete_stored(media, file_id: str) -> None:
    """Delete one file from Streamlit's media store through the storage interface
    (``MediaFileStorage.delete_file``). ``MediaFileManager`` offers no deletion of one file, so
    its storage is reached by its private name ``_storage`` (Streamlit 1.67; the manager's own
    sweeps then find the file gone, which the storage allows). Only this file is deleted: a
    file built later, by this session or another, keeps its own seconds (unless it has the
    same bytes and MIME type, hence the same id: a plain CSV clicked twice in one run of the
    page goes at the earlier deadline; clicking again builds it anew)."""
    media._storage.delete_file(file_id)


_requesting_session()


#: Streamlit's option that hides the CSV download of every table's toolbar and its clipboard copy.
NO_BUILTIN_EXPORT = "client.disableDataExport"


def builtin_export_off() -> None:
    """Switch off Streamlit's own CSV download and clipboard copy of tables (the toolbar of
    every ``st.dataframe``), for every session of this server, before any page runs.

    ``.streamlit/config.toml`` sets it; a server started elsewhere (another directory, a flag
    or an environment variable overriding it) gets it here: the option is set and the run
    starts again, since a session learns its options when a run starts. Once per server.
    """
    if not st.get_option(NO_BUILTIN_EXPORT):
        st.set_option(NO_BUILTIN_EXPORT, True)
        st.rerun()
