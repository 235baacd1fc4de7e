"""The dashboard's shared glue, split by concern. No mathematics lives here: every number
comes from a :mod:`core` function.

* :mod:`ui.state` — session-state settings, their admissible ranges and widget binding;
* :mod:`ui.selection` — the data source (bundled sample or this session's upload), the
  chosen columns and transforms, and the prepared data of :mod:`core.data` (which loads
  the file: format, full read or lean path, head, default kinds), cached;
* :mod:`ui.compute` — cached calls into :mod:`core` (privacy curves, releases,
  comparisons, the Audit page's computations), scoped to the session;
* :mod:`ui.release` — the release bundle and the command line that reproduces it;
* :mod:`ui.peer_release` — the Synthetic data page's choice of mechanism (PYPP or a peer,
  docs/verdicts.md §6);
* :mod:`ui.ledger` — the privacy ledger: which ledger, who, the dataset name, and the public
  downloads charged on the click (docs/audit.md §8);
* :mod:`ui.downloads` — downloads built on the click and answering only their own session;
* :mod:`ui.widgets` — widgets and notes shared by the pages (bound sliders, the sidebar
  summary, the error helper, progress bars);
* :mod:`ui.text` — :func:`ui.text.literal`, the one escape of user text (file, column and
  category names, cells, messages quoting them) into Streamlit's Markdown;
* :mod:`ui.access` — who may open the app: login when ``secrets.toml`` configures it, or a
  trusted proxy's identity header; a refusal when it is reachable beyond localhost with
  neither; every session bound to the browser that opened it (docs/serving.md §7).

Confidential data stay in their session: uploaded bytes live in ``st.session_state``
and every cache of something derived from them is session-scoped
(``st.cache_data(scope="session")``), so Streamlit drops it when the session ends.
"""
