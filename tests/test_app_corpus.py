"""Every awkward file of tests/data/ uploaded into the app (issue 9), through Streamlit's
AppTest and the real file uploader of the Data page.

The expected readings (tests/data/expected.json, derived by tests/data/make_corpus.py from
the cells' text, not from :mod:`core.data`) are the same as in tests/test_corpus.py. For
each case: the file is uploaded with the case's reading options chosen in the Data page's
widgets; the run must raise nothing and render no ``st.exception`` (a traceback); a file
the reader refuses shows a clear ``st.error`` with the expected message; and for every
column and kind the case lists, the profile the page shows (records n, distinct values k)
equals the expected one, or the expected refusal is shown as an error. Each readable file
is also opened on the Privacy page and released on the Synthetic data page (its default
column), which must give a result or a clear message, never a traceback.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from ui.text import shown

REPO = Path(__file__).resolve().parents[1]
APP = str(REPO / "app.py")
DATA = REPO / "tests" / "data"
EXPECTED = json.loads((DATA / "expected.json").read_text(encoding="utf-8"))
TIMEOUT = 60
SECONDS_PER_FILE = 60.0   # a hang guard on every AppTest run of a case together (the files are tiny)
MAX_PROFILES_PER_FILE = 4  # (column, kind) pairs checked per file (columns_10000.csv lists 3)

#: Reading options the Data page offers, and the widget that sets each one.
WIDGET_OF_OPTION = {"sep": "_w_read_sep", "header": "_w_read_header", "thousands": "_w_read_thousands",
                    "keep_na_text": "_w_read_keep_na_text"}


def _no_traceback(at: AppTest, what: str) -> None:
    assert not at.exception, (what, [e.value for e in at.exception])


def _errors(at: AppTest) -> str:
    return "\n".join(shown(e.value) for e in at.error)   # core's messages are shown as text


def _metrics(at: AppTest) -> dict:
    return {m.label: m.value for m in at.metric}


def _apply_option(at: AppTest, name: str, value) -> None:
    widget = WIDGET_OF_OPTION[name]
    if name == "keep_na_text":
        box = at.checkbox(key=widget)
        (box.check() if value else box.uncheck()).run()
    else:
        at.selectbox(key=widget).set_value(value).run()


def _upload(case: str) -> AppTest:
    spec = EXPECTED[case]
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    # the session starts on the upload source (what the radio sets), without first profiling
    # the bundled sample: the radio itself is tested in test_app.py
    at.session_state["source_kind"] = "upload"
    at.run()
    _no_traceback(at, "first run")
    assert at.radio(key="_w_source_kind").value == "upload"
    content = (DATA / spec["file"]).read_bytes()
    at.file_uploader(key="uploader").set_value((spec["file"], content, "text/csv")).run()
    _no_traceback(at, "upload")
    return at


def _app_cases() -> list:
    out = []
    for case in sorted(EXPECTED):
        options = EXPECTED[case]["options"]
        marks = []
        if any(name not in WIDGET_OF_OPTION for name in options):
            # The Data page detects the encoding (and names it); it offers no choice, so a
            # case that forces one is the command line's (tests/test_corpus.py). The same
            # file without options is its own case here.
            marks.append(pytest.mark.skip(reason=f"the app has no choice for {sorted(options)}: detected only"))
        out.append(pytest.param(case, marks=marks))
    return out


@pytest.mark.parametrize("case", _app_cases())
def test_every_corpus_file_uploaded_into_the_app(case):
    spec = EXPECTED[case]
    start = time.perf_counter()
    at = _upload(case)
    if "error" in spec:
        # Refused at upload: a clear message naming the file, no profile, no traceback.
        assert spec["error"] in _errors(at), (case, _errors(at))
        assert spec["file"] in _errors(at)
        assert "records n" not in _metrics(at)
        assert time.perf_counter() - start < SECONDS_PER_FILE
        return
    for name, value in spec["options"].items():
        _apply_option(at, name, value)
        _no_traceback(at, f"option {name}={value!r}")
    # The reader's decisions are shown on the page.
    read = spec["read"]
    text = "\n".join(md.value for md in at.markdown)
    assert f"**{read['n_rows']:,} rows × {read['n_columns']:,} columns.**" in text, text[:2000]

    # The default profile renders on the Privacy page too (or says clearly what is wrong).
    default_ok = "records n" in _metrics(at)
    if default_ok:
        at.switch_page("app_pages/privacy.py").run()
        _no_traceback(at, "privacy page")
        assert at.title[0].value.startswith("Privacy")
        at.switch_page("app_pages/synthetic_data.py").run()
        _no_traceback(at, "synthetic data page")
        at.button[0].click().run()    # Generate release: a release, or a clear message
        _no_traceback(at, "generate release")
        assert at.metric or at.error, (case, "no release and no message")
        at.switch_page("app_pages/data.py").run()
        _no_traceback(at, "back to the data page")
    else:
        assert at.error, (case, "no profile and no message")

    checked = 0
    for column, expected in spec["columns"].items():
        for kind in ("numeric", "categorical"):
            if kind not in expected or checked == MAX_PROFILES_PER_FILE:
                continue
            checked += 1
            at.multiselect(key="_w_columns").set_value([column]).run()
            _no_traceback(at, f"choose column {column!r}")
            at.radio(key=f"_w_tf_{column}_kind").set_value(kind).run()
            _no_traceback(at, f"{column!r} as {kind}")
            want = expected[kind]
            if "error" in want:
                assert want["error"] in _errors(at), (case, column, kind, _errors(at))
                assert "records n" not in _metrics(at)
                continue
            shown = _metrics(at)
            assert (shown.get("records n"), shown.get("distinct values k")) == (
                f"{want['n']:,}", f"{want['k']:,}"), (case, column, kind, shown, _errors(at))
    assert checked, f"{case}: no column to profile"
    assert time.perf_counter() - start < SECONDS_PER_FILE
