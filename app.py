"""bnp-synth dashboard: ``streamlit run app.py``.

The entry point of every page. First :func:`ui.access.guard_session` refuses a run that must
not see the session: a page of another origin (port included), a server reachable by others
with no identity on the session (no login, no trusted proxy header), or a browser other than
the one that opened the session (a reconnect with a stolen session id). When
``.streamlit/secrets.toml`` configures a login (:mod:`ui.access`), a visitor who has not
signed in gets the sign-in screen as the only page. Then
the settings go into the session and the page chosen in the sidebar (``st.navigation``)
runs inside the one error handler that turns a ``ValueError`` from ``core`` into a
message (:func:`ui.widgets.show_errors`). Before all that, the server's allocator is set to
return large freed buffers to the system (:mod:`ui.allocator`), so a closed session's data
leave the server's memory, not only its Python heap.
"""

from __future__ import annotations

import streamlit as st

from ui import access, allocator, downloads, state, widgets

PAGES = [
    st.Page("app_pages/data.py", title="Data", icon="📄", default=True),
    st.Page("app_pages/privacy.py", title="Privacy", icon="🔒"),
    st.Page("app_pages/synthetic_data.py", title="Synthetic data", icon="🎲"),
    st.Page("app_pages/compare.py", title="Compare", icon="📊"),
    st.Page("app_pages/informativity.py", title="Informativity", icon="📈"),
    st.Page("app_pages/inference.py", title="Inference", icon="🔎"),
    st.Page("app_pages/audit.py", title="Audit", icon="🛡️"),
    st.Page("app_pages/planner.py", title="Release planner", icon="🧭"),
    st.Page("app_pages/ledger.py", title="Ledger", icon="📒"),
]

# Large buffers (uploads and what is derived from them) go back to the OS when a session
# ends, instead of staying in glibc's arenas (ui/allocator.py; once per server process).
allocator.release_large_buffers_on_free()
# No table offers Streamlit's own "Download as CSV": the gated downloads are the only way out.
downloads.builtin_export_off()
st.set_page_config(page_icon="🔒", layout="wide")
access.guard_session()   # stops the run when this session must not be served to this request
login = access.signed_in()   # None: no login configured
if login is False:
    st.navigation([st.Page(access.login_screen, title="Sign in")]).run()
    st.stop()
page = st.navigation(PAGES)
if login:
    access.signed_in_note()
else:
    access.proxy_identity_note()
state.init_state()
with widgets.show_errors():
    page.run()
