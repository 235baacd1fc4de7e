"""Downloads of confidential files: built on the click, gone from the server seconds later.

Streamlit serves the data of an ``st.download_button`` from its media store at
``/media/<id>.<ext>``, to any client that asks for that URL: the route checks no cookie,
session or login (Streamlit 1.67). Bytes given to the button are stored when the page
runs and stay until two sweeps of Streamlit's media store (at the end of later script
runs of any session) find them unused: on an idle server, for as long as it stays idle.
Such URLs end up in proxy logs and browser histories. So a confidential file (the
CONFIDENTIAL curator record, the quality report, every table that compares a release with
the confidential data) never goes to the button as bytes:

* the button gets a function (Streamlit's deferred ``data=``): nothing is built or
  stored until the curator clicks, and the click is answered on the session's own
  websocket with a fresh URL;
* :data:`CONFIDENTIAL_URL_SECONDS` after the latest such file was built, the media store
  is swept twice (Streamlit's public ``remove_orphaned_files``; a file no session shows goes on
  the second sweep), so the URL answers 404 from then on. The browser fetches it within
  milliseconds of the click (twice: a check and the download; both start before the
  sweep, and a response already started is served whole).

A leaked URL therefore yields nothing once those seconds have passed (docs/serving.md §1,
where the alternative — a passphrase-encrypted zip — is discussed). The public release and
the synthetic CSV are public by design (behind the publication gate) and are served the
ordinary way.

Those buttons are the only way a file leaves the app: Streamlit's own "Download as CSV" (and
clipboard copy) of every ``st.dataframe`` — tables of released rows, of the data's categories,
of user text — is switched off (:func:`builtin_export_off`, Streamlit's
``client.disableDataExport``), so no table hands out released rows past the gate
(docs/serving.md §5).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import streamlit as st
from streamlit import runtime

#: Seconds a confidential file stays at its URL after it was built: long enough for the
#: browser's two requests, which follow the click within milliseconds (a link across the
#: world adds well under a second), short enough that a URL read later from a log or a
#: history answers 404. A download that misses it fails in the browser; clicking again
#: builds the file anew.
CONFIDENTIAL_URL_SECONDS = 5.0


def confidential_download(label: str, build: Callable[[], bytes], *, file_name: str, mime: str, key: str,
                          help: str | None = None, where=st, **kwargs) -> None:
    """A download button whose file is built by ``build()`` when clicked, and whose URL
    stops answering :data:`CONFIDENTIAL_URL_SECONDS` later (see the module docstring).

    ``build`` runs on a server thread outside the script run: it must not read
    ``st.session_state`` or call a cached function; pass it what it needs (computed
    during the run) in a closure. The click does not rerun the page. Each run of the page
    gives the button a new id (Streamlit's deferred downloads), so a click while the page
    is rerunning can hold the old one and fail with a message under the button; clicking
    again works (the other download buttons of a page with one of these should not rerun
    it either: ``on_click="ignore"``).
    """
    media = runtime.get_instance().media_file_mgr if runtime.exists() else None

    def built_on_click() -> bytes:
        data = build()
        if media is not None:
            _SWEEPER.schedule(media)
        return data

    lifetime = (f"Built when you click; its link works for {CONFIDENTIAL_URL_SECONDS:g} seconds only "
                "(click again to download it again).")
    # ``help`` is the page's own text (never user text): it is Markdown like every help
    where.download_button(label, data=built_on_click, file_name=file_name, mime=mime, key=key,
                          help=lifetime if not help else help + " " + lifetime, on_click="ignore", **kwargs)


class _DebouncedSweep:
    """Sweeps Streamlit's media store :data:`CONFIDENTIAL_URL_SECONDS` after the *latest*
    confidential file was built.

    A sweep deletes every stored file no session shows, however young: a sweep timed from an
    earlier click would take a file built a moment ago away between the browser's two
    requests (seen under load: the download is cancelled). So one timer serves every click
    and is pushed back by each new build; when it fires, every file built through this
    module is at least :data:`CONFIDENTIAL_URL_SECONDS` old.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._due: float | None = None
        self._stores: list = []      # the media stores with a file waiting (one per runtime)

    def schedule(self, media) -> None:
        with self._lock:
            start = self._due is None
            self._due = time.monotonic() + CONFIDENTIAL_URL_SECONDS
            if not any(store is media for store in self._stores):
                self._stores.append(media)
        if start:
            sweeper = threading.Thread(target=self._run, daemon=True)
            sweeper.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                wait = self._due - time.monotonic()
                if wait <= 0:
                    self._due = None
                    stores, self._stores = self._stores, []
                    break
            time.sleep(wait)
        for media in stores:
            _drop_unused_files(media)


_SWEEPER = _DebouncedSweep()


def _drop_unused_files(media) -> None:
    """Two sweeps of Streamlit's media store: a downloadable file that no session shows is
    marked by the first and deleted by the second (what the end of two script runs of any
    session would do; a file a session still shows is kept)."""
    media.remove_orphaned_files()
    media.remove_orphaned_files()


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
