"""AppTest (streamlit.testing.v1) of the dashboard on large data (issue 13 §3–4).

Parquet uploads, frequency-table uploads, the lean path (a CSV above
``core.data.FULL_READ_MAX_BYTES`` reduced by DuckDB to its frequency table) on every
page, the session's coarsening, the advisor's ``release_frame``/``release_counts`` and
the upload limit. Expected profiles come from pandas (``value_counts``) on the data the
test wrote itself, never from ``core``.
"""

from __future__ import annotations

import io
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from core.data import FULL_READ_MAX_BYTES, HEAD_BYTES, ColumnTransform
from ui import selection, state
from ui.selection import content_hash
from ui.text import shown

REPO = Path(__file__).resolve().parents[1]
APP = str(REPO / "app.py")
TIMEOUT = 180
RAW_NEVER_LEFT = "raw records never left the custodian's system"
PAGES = ("privacy.py", "synthetic_data.py", "compare.py", "informativity.py", "inference.py", "audit.py")


@pytest.fixture(scope="module")
def records() -> pd.DataFrame:
    """100 000 records: an integer amount with ties and singletons, and a region label."""
    rng = np.random.default_rng(13)
    n = 100_000
    return pd.DataFrame({"amount": np.round(rng.lognormal(7.0, 1.0, n)).astype(np.int64),
                         "region": rng.choice(["north", "south", "east", "west"], n),
                         "score": np.round(rng.normal(size=n), 2)})


def _csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


def _parquet(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def _uploaded(name: str, content: bytes, **session) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["source_kind"] = "upload"
    at.session_state["upload"] = {"name": name, "bytes": content, "hash": content_hash(content)}
    for key, value in session.items():
        at.session_state[key] = value
    at.run()
    _no_traceback(at)
    return at


def _no_traceback(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _metrics(at: AppTest) -> dict:
    return {m.label: m.value for m in at.metric}


def _text(at: AppTest) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption] + [s.value for s in at.success]
                     + [i.value for i in at.info] + [w.value for w in at.warning])


def _expected_profile(values) -> dict:
    counts = pd.Series(values).value_counts()
    return {"records n": f"{int(counts.sum()):,}", "distinct values k": f"{counts.size:,}",
            "singletons k₁": f"{int((counts == 1).sum()):,}", "largest multiplicity": f"{int(counts.max()):,}"}


def _visit_every_page(at: AppTest) -> None:
    """Every page renders without a traceback; the buttons that compute from the data are pressed."""
    for page in PAGES:
        at.switch_page(f"app_pages/{page}").run()
        _no_traceback(at)
        assert not at.error or all("δ target" in e.value for e in at.error), (page, [e.value for e in at.error])
        if page == "synthetic_data.py":
            at.button[0].click().run()
            _no_traceback(at)
            assert "released rows m" in _metrics(at)
        if page == "compare.py" and at.button(key="run_compare") is not None:
            at.session_state["runs"] = 5
            at.button(key="run_compare").click().run()
            _no_traceback(at)
        if page == "informativity.py":
            at.radio(key="_w_inf_source").set_value("data").run()
            _no_traceback(at)
            if at.session_state["inf_column"] is not None:
                assert "records of **" in _text(at)
        if page == "audit.py":
            risk = [b for b in at.button if b.label == "Compute disclosure risk"]
            if risk:
                risk[0].click().run()
                _no_traceback(at)


# --------------------------------------------------------------------------- lean path
def test_large_csv_takes_the_lean_path_and_profiles_exactly(records):
    content = _csv(records)
    assert len(content) > FULL_READ_MAX_BYTES
    at = _uploaded("large.csv", content)
    assert _metrics(at) == _expected_profile(records["amount"])
    text = _text(at)
    assert "Lean path (CSV" in text
    # the reader's decisions were made on the head, and the page says so
    assert f"made on the file's first {selection.size_text(HEAD_BYTES)}" in text
    # the rounding profile is computed from the table: exact distinct values and singletons
    table = at.dataframe[0].value
    rounded = pd.Series(np.round(records["amount"].to_numpy(), -1)).value_counts()
    row = table[table["decimals"] == "-1"].iloc[0]
    assert (row["distinct"], row["singletons"]) == (rounded.size, int((rounded == 1).sum()))


def test_every_page_works_on_the_lean_path(records):
    at = _uploaded("large.csv", _csv(records))
    _visit_every_page(at)


def test_compare_inference_and_audit_never_build_the_n_rows_of_a_table(records, monkeypatch):
    # The lean path keeps only the frequency table: building the n records of it
    # (PreparedData.values) fails the test, so each page below must work from the table.
    # The one exception is the bounded picture, PreparedData.sample, which returns every
    # record only while n is at most its size (ui.compute.PICTURE_ROWS).
    import sys

    from core import data as core_data

    held = core_data.PreparedData.values
    sample_file = core_data.PreparedData.sample.__code__.co_filename   # core/data/prepare.py

    def values(self):
        caller = sys._getframe(1).f_code
        if self.from_table and (caller.co_name != "sample" or caller.co_filename != sample_file):
            raise AssertionError("a page built the n rows of a frequency table (PreparedData.values)")
        return held.fget(self)

    monkeypatch.setattr(core_data.PreparedData, "values", property(values))
    at = _uploaded("large.csv", _csv(records))
    at.switch_page("app_pages/compare.py").run()
    _no_traceback(at)
    assert at.button(key="run_compare") is not None and not at.error
    at.session_state["runs"] = 5
    at.button(key="run_compare").click().run()
    _no_traceback(at)
    assert any("W1 in original units to the confidential data" in c.proto.spec for c in at.get("plotly_chart"))
    at.session_state["sweep_runs"] = 5
    at.button(key="run_sweep").click().run()
    _no_traceback(at)
    at.switch_page("app_pages/synthetic_data.py").run()   # the Inference page analyses this page's release
    next(b for b in at.button if b.label == "Generate release").click().run()
    _no_traceback(at)
    at.switch_page("app_pages/inference.py").run()
    _no_traceback(at)
    assert "released values m" in _metrics(at)
    at.switch_page("app_pages/audit.py").run()
    _no_traceback(at)
    risk = [b for b in at.button if b.label == "Compute disclosure risk"]
    assert risk
    risk[0].click().run()
    _no_traceback(at)


def test_small_csv_keeps_the_exact_full_read(records):
    content = _csv(records.head(2000))
    assert len(content) <= FULL_READ_MAX_BYTES
    at = _uploaded("small.csv", content)
    assert _metrics(at) == _expected_profile(records["amount"].head(2000))
    assert "Lean path" not in _text(at)
    assert "**2,000 rows × 3 columns.**" in _text(at)


# --------------------------------------------------------------------------- Parquet
def test_parquet_upload_is_profiled_from_its_schema_and_table(records):
    content = _parquet(records)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.radio(key="_w_source_kind").set_value("upload").run()
    at.file_uploader(key="uploader").set_value(("records.parquet", content, "application/octet-stream")).run()
    _no_traceback(at)
    assert _metrics(at) == _expected_profile(records["amount"])
    text = _text(at)
    assert f"Parquet file: {len(records):,} rows × 3 columns." in text
    assert "Lean path (PARQUET" in text
    # typed columns: no reader options are offered
    assert not [s for s in at.selectbox if s.key == "_w_read_sep"]
    assert set(at.multiselect(key="_w_columns").options) == {"amount", "region", "score"}
    _visit_every_page(at)


def test_parquet_categorical_and_damaged_file(records):
    at = _uploaded("records.parquet", _parquet(records))
    at.multiselect(key="_w_columns").set_value(["region"]).run()
    at.radio(key="_w_tf_region_kind").set_value("categorical").run()
    _no_traceback(at)
    assert _metrics(at) == _expected_profile(records["region"])
    bad = b"PAR1" + b"\0" * 100
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.radio(key="_w_source_kind").set_value("upload").run()
    at.file_uploader(key="uploader").set_value(("broken.parquet", bad, "application/octet-stream")).run()
    _no_traceback(at)
    assert "not a readable Parquet file" in " ".join(e.value for e in at.error)


# --------------------------------------------------------------------------- frequency tables
def test_frequency_table_upload_says_the_records_never_left(records):
    table = records["amount"].value_counts().rename_axis("amount").reset_index(name="count")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.radio(key="_w_source_kind").set_value("upload").run()
    at.file_uploader(key="uploader").set_value(("table.csv", _csv(table), "text/csv")).run()
    _no_traceback(at)
    at.toggle(key="_w_is_frequency_table").set_value(True).run()
    _no_traceback(at)
    assert at.selectbox(key="_w_counts_column").value == "count"
    # the counts column is not offered for release
    assert "count" not in at.multiselect(key="_w_columns").options
    assert _metrics(at) == _expected_profile(records["amount"])
    text = _text(at)
    assert RAW_NEVER_LEFT in text.replace("**", "")
    assert f"n = {len(records):,} records is the sum of the counts" in text
    _visit_every_page(at)
    # switched off again: each row is one record
    at.switch_page("app_pages/data.py").run()
    at.toggle(key="_w_is_frequency_table").set_value(False).run()
    _no_traceback(at)
    assert _metrics(at)["records n"] == f"{len(table):,}"
    assert RAW_NEVER_LEFT not in _text(at).replace("**", "")


def test_parquet_frequency_table_with_a_bad_count_is_a_message(records):
    table = records["region"].value_counts().rename_axis("region").reset_index(name="n")
    at = _uploaded("regions.parquet", _parquet(table), counts_column="n")
    assert _metrics(at)["records n"] == f"{len(records):,}"
    assert RAW_NEVER_LEFT in _text(at).replace("**", "")
    table.loc[0, "n"] = -3
    at = _uploaded("bad_regions.parquet", _parquet(table), counts_column="n")
    assert "records n" not in _metrics(at)
    assert "counts" in " ".join(e.value for e in at.error)


def test_switching_to_a_sample_drops_the_counts_column(records):
    table = records["region"].value_counts().rename_axis("region").reset_index(name="count")
    at = _uploaded("regions.csv", _csv(table), counts_column="count")
    assert _metrics(at)["records n"] == f"{len(records):,}"
    at.radio(key="_w_source_kind").set_value("sample").run()
    _no_traceback(at)
    assert at.session_state["counts_column"] is None
    assert _metrics(at)["records n"] == "13,501"
    assert not at.error


# --------------------------------------------------------------------------- coarsening and the advisor's data
@pytest.mark.parametrize("rows", [2000, None], ids=["exact path", "lean path"])
def test_session_coarsening_is_applied_before_prepare(records, rows):
    data = records if rows is None else records.head(rows)
    rounding = (ColumnTransform("amount", kind="round", step=100.0),)
    at = _uploaded("data.csv", _csv(data), columns=["amount"], coarsening=rounding)
    expected = _expected_profile(100.0 * np.round(data["amount"].to_numpy() / 100.0))
    assert _metrics(at) == expected
    _no_traceback(at)
    # a new source drops the coarsening
    selection_key = _metrics(at)
    at.radio(key="_w_source_kind").set_value("sample").run()
    assert at.session_state["coarsening"] == ()
    assert _metrics(at) != selection_key


def _advisor_script():
    import numpy as np
    import streamlit as st

    from ui import selection as sel
    from ui import state as st_state

    st_state.init_state()
    frame, counts = sel.release_frame(), sel.release_counts()
    st.write(f"rows={0 if frame is None else len(frame)}")
    st.write(f"columns={None if frame is None else list(frame.columns)}")
    st.write(f"records={None if counts is None else int(np.sum(counts))}")
    if frame is not None:
        st.write(f"total={float(np.sum(frame.iloc[:, 0].to_numpy(dtype=float) * (1 if counts is None else counts)))}")


@pytest.mark.parametrize("rows", [2000, None], ids=["exact path", "lean path"])
def test_release_frame_gives_the_released_columns_before_coarsening(records, rows):
    data = records if rows is None else records.head(rows)
    content = _csv(data)
    at = AppTest.from_function(_advisor_script, default_timeout=TIMEOUT)
    at.session_state["source_kind"] = "upload"
    at.session_state["upload"] = {"name": "data.csv", "bytes": content, "hash": content_hash(content)}
    at.session_state["columns"] = ["amount"]
    at.session_state["coarsening"] = (ColumnTransform("amount", kind="round", step=1000.0),)
    at.run()
    _no_traceback(at)
    shown = {m.value.split("=")[0]: m.value.split("=", 1)[1] for m in at.markdown}
    assert shown["columns"] == "['amount']"
    # original units, before the coarsening: the sum of the amounts is unchanged
    assert float(shown["total"]) == float(data["amount"].sum())
    if rows is None:   # lean: the distinct values and the records of each
        assert int(shown["rows"]) == data["amount"].nunique()
        assert int(shown["records"]) == len(data)
    else:              # exact: one row per record
        assert int(shown["rows"]) == len(data) and shown["records"] == "None"


def _transform_widget_script():
    import streamlit as st

    from ui import state as st_state

    st_state.init_state()
    if "amount" in st.session_state.transforms:
        st.checkbox("log", **st_state.bind_transform("amount", "log"))
    st.write(f"transforms={sorted(st.session_state.transforms)}")


def test_a_stale_transform_widget_of_a_replaced_file_is_ignored():
    """Replacing the file resets the transforms; a widget of the old file's column can still
    report a change in that run (seen in Chromium when a click races an upload): no KeyError."""
    at = AppTest.from_function(_transform_widget_script, default_timeout=TIMEOUT)
    at.session_state["transforms"] = {"amount": {"kind": "numeric", "log": False}}
    at.run()
    _no_traceback(at)
    box = at.checkbox[0]
    at.session_state["transforms"] = {}          # a new file: _new_source() reset them
    box.check().run()
    _no_traceback(at)
    assert at.markdown[-1].value == "transforms=[]"


# --------------------------------------------------------------------------- helpers used by the pages
def test_singleton_stand_ins_give_the_exact_match_counts():
    from core.evaluation import audit as core_audit
    from core import data as core_data
    from ui import compute

    rng = np.random.default_rng(5)
    values = rng.integers(0, 300, size=2000).astype(float)
    frame = pd.DataFrame({"x": values})
    rows = core_data.prepare(frame, [core_data.ColumnSpec("x", bounds=(0, 300))])
    table = rows.table
    from_table = core_data.prepare(pd.DataFrame({"x": pd.Series(values).value_counts().index.to_numpy()}),
                                   [core_data.ColumnSpec("x", bounds=(0, 300))],
                                   counts=pd.Series(values).value_counts().to_numpy())
    assert from_table.from_table and not rows.from_table
    released = np.concatenate([table.atoms[:50], rng.uniform(0, 1, 20)])
    expected = core_audit.exact_match_counts(rows.values, released)
    assert expected["equal_to_singleton"] > 0
    assert core_audit.exact_match_counts(compute.singleton_stand_ins(rows), released) == expected
    assert core_audit.exact_match_counts(compute.singleton_stand_ins(from_table), released) == expected
    # column_table: the frequency table of a column in original units, from the rows or from the table
    want_values, want_counts = np.unique(values, return_counts=True)
    for prepared in (from_table, rows):
        got_values, got_counts = compute.column_table(prepared, "x")
        assert np.array_equal(got_values, want_values) and np.array_equal(got_counts, want_counts)
    # a picture of at most `size` records, a sample only when n is larger
    picture, sampled = compute.data_picture(from_table, size=500)
    assert picture.shape == (500,) and sampled
    picture, sampled = compute.data_picture(from_table)
    assert picture.shape == (2000,) and not sampled


# --------------------------------------------------------------------------- the limit
def test_upload_limit_is_1000_megabytes_everywhere():
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    assert state.MAX_UPLOAD_MB == 1000
    assert config["server"]["maxUploadSize"] == state.MAX_UPLOAD_MB
    assert selection.upload_problem("big.parquet", 1000 * 10**6) is None
    assert "limit of 1000 MB" in selection.upload_problem("big.parquet", 1000 * 10**6 + 1)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.radio(key="_w_source_kind").set_value("upload").run()
    uploader = at.get("file_uploader")[0]
    assert uploader.proto.max_upload_size_mb == 1000
    assert "parquet" in [t.lstrip(".") for t in uploader.proto.type]


def test_an_upload_that_would_become_too_large_is_refused_before_it_is_read(records, monkeypatch):
    """The Data page checks what an upload would become (rows; what a gzip file decompresses
    to) before reading it, and says to use the command line (``core.data.check_read_limits``
    with ``ui.state.MAX_ROWS`` and ``MAX_DECOMPRESSED_BYTES``)."""
    import gzip

    assert (state.MAX_ROWS, state.MAX_DECOMPRESSED_BYTES) == (10**8, 2**27)
    monkeypatch.setattr(state, "MAX_ROWS", 50_000)
    monkeypatch.setattr(state, "MAX_DECOMPRESSED_BYTES", 500_000)
    text = _csv(records)   # 100 000 rows
    cases = {"many.parquet": (_parquet(records), "100,000 rows, above the limit of 50,000"),
             "many.csv": (text, "more than 50,000 rows"),
             "packed.csv": (gzip.compress(text), "decompresses to more than 500,000 bytes")}
    for name, (content, said) in cases.items():
        at = AppTest.from_file(APP, default_timeout=TIMEOUT)
        at.run()
        at.radio(key="_w_source_kind").set_value("upload").run()
        at.file_uploader(key="uploader").set_value((name, content, "application/octet-stream")).run()
        _no_traceback(at)
        errors = [shown(e.value) for e in at.error]   # core's messages are shown as text
        assert any(f"Could not use {name}" in e and said in e and "python -m core release" in e for e in errors), errors
        assert at.session_state["upload"] is None and not at.metric   # nothing was kept or profiled
