"""core.data's loading (core/data/loading.py): the format, the full read or the lean path,
the head of a file, the default kinds, columns and counts column, and the preparation the
dashboard and the release recipe share; and the ``name=`` of the readers, which calls an
upload by its file name in error messages without changing what was read.
"""
from __future__ import annotations

import gzip
import io
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from core import data as D
from core.validation import PrivacyLeakWarning
from ui.text import shown

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def _parquet(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


# --------------------------------------------------------------------------- format and path
def test_detect_format_reads_the_magic_bytes_and_the_name(tmp_path):
    frame = pd.DataFrame({"x": [1, 2, 3]})
    assert D.detect_format(_parquet(frame)) == "parquet"
    assert D.detect_format(b"x\n1\n") == "csv"
    assert D.detect_format(gzip.compress(b"x\n1\n")) == "csv"   # gzip text: read as CSV by the engines
    path = tmp_path / "data.pq"
    path.write_bytes(b"not really")
    assert D.detect_format(path) == "parquet"
    with pytest.raises(ValueError, match="no such file"):
        D.detect_format(tmp_path / "absent.csv")


def test_takes_lean_path_for_parquet_counts_and_large_csv():
    small = b"x\n" + b"1\n" * 100
    large = b"x\n" + b"1\n" * (D.FULL_READ_MAX_BYTES // 2)
    assert len(large) > D.FULL_READ_MAX_BYTES
    assert not D.takes_lean_path(small)
    assert D.takes_lean_path(large)
    assert not D.takes_lean_path(large, whole_at_any_size=True)      # a bundled sample
    assert D.takes_lean_path(small, counts_column="x")
    assert D.takes_lean_path(_parquet(pd.DataFrame({"x": [1]})), whole_at_any_size=True)
    with pytest.raises(ValueError, match="content"):
        D.takes_lean_path("x\n1\n")
    with pytest.raises(ValueError, match="counts_column"):
        D.takes_lean_path(small, counts_column="")


# --------------------------------------------------------------------------- heads
def test_read_file_head_of_parquet_and_csv():
    frame = pd.DataFrame({"a": np.arange(25), "b": ["u", "v", "w", "x", "y"] * 5})
    head = D.read_file_head(_parquet(frame), rows=10)
    assert head.file_format == "parquet" and head.decisions is None
    assert head.columns == ["a", "b"] and len(head.frame) == 10 and head.n_rows == 25 and not head.complete
    whole = D.read_file_head(_parquet(frame))
    assert whole.complete and len(whole.frame) == 25
    csv = D.read_file_head(b"a;b\n1;x\n2;y\n")
    assert csv.file_format == "csv" and csv.complete and csv.n_rows == 2 and csv.decisions.delimiter == ";"
    reading = D.read_table(b"a,b\n1,x\n2,y\n3,z\n")
    of_reading = D.FileHead.of_reading(reading)
    assert of_reading.complete and of_reading.n_rows == 3 and of_reading.frame is reading.frame
    with pytest.raises(ValueError, match="rows must be an integer"):
        D.read_file_head(b"a\n1\n", rows=0)
    with pytest.raises(ValueError, match="reading must be a ReadResult"):
        D.FileHead.of_reading(reading.frame)


def test_a_damaged_or_empty_parquet_file_is_named_by_the_caller():
    bad = b"PAR1" + b"\0" * 100
    with pytest.raises(ValueError, match=r"^'broken\.parquet' is not a readable Parquet file"):
        D.read_file_head(bad, name="broken.parquet")
    with pytest.raises(ValueError, match=r"^the uploaded data is not a readable Parquet file"):
        D.read_file_head(bad)
    with pytest.raises(ValueError, match=r"^'empty\.parquet' has no data rows$"):
        D.read_file_head(_parquet(pd.DataFrame({"x": pd.Series([], dtype=float)})), name="empty.parquet")


# --------------------------------------------------------------------------- name= in messages
def test_name_calls_the_bytes_in_messages_and_leaves_the_record_alone():
    ragged = b"a,b\n1,2\n3,4,5\n"
    with pytest.raises(ValueError) as unnamed:
        D.read_table(ragged)
    with pytest.raises(ValueError) as named:
        D.read_table(ragged, name="survey.csv")
    # What the dashboard used to make of the message by replacing the default name.
    assert str(named.value) == str(unnamed.value).replace("the uploaded data", repr("survey.csv"))
    assert str(named.value).startswith("'survey.csv' has rows of different lengths")
    good = b"a,b\n1,2\n3,4\n"
    assert D.read_table(good, name="survey.csv").decisions == D.read_table(good).decisions
    with pytest.raises(ValueError, match="name"):
        D.read_table(good, name="")
    with pytest.raises(ValueError, match=r"^'big\.csv' is .* above the limit"):
        D.read_table(good, name="big.csv", max_bytes=4)


def test_name_in_the_streaming_messages_of_distinct_values_and_aggregate():
    # A long row after the head: DuckDB's checked read finds it and names the file.
    content = b"a,b\n" + b"1,2\n" * (D.HEAD_BYTES // 4 + 1000) + b"1,2,3\n"
    assert len(content) > D.HEAD_BYTES
    with pytest.raises(ValueError) as unnamed:
        D.distinct_values(content, ["a"])
    with pytest.raises(ValueError) as named:
        D.distinct_values(content, ["a"], name="survey.csv")
    assert str(named.value) == str(unnamed.value).replace("the uploaded data", repr("survey.csv"))
    assert str(named.value).startswith("'survey.csv' has 1 row(s) with more fields")
    with pytest.raises(ValueError, match=r"^'survey\.csv' has 1 row"):
        D.aggregate(content, ["a"], name="survey.csv")
    good = b"a,b\n" + b"1,2\n" * 10
    plain, called = D.distinct_values(good, ["a"]), D.distinct_values(good, ["a"], name="survey.csv")
    assert called.decisions == plain.decisions and called.files == plain.files and called.notes == plain.notes


# --------------------------------------------------------------------------- default kinds and columns
def test_mostly_numeric():
    assert D.mostly_numeric(pd.Series([1.5, 2.0]))
    assert not D.mostly_numeric(pd.Series([True, False]))
    assert D.mostly_numeric(pd.Series(["1", "2", "x"], dtype=object))        # a stray label is reported later
    assert not D.mostly_numeric(pd.Series(["1", "x", "y"], dtype=object))
    assert not D.mostly_numeric(pd.Series([None, None], dtype=object))
    assert D.mostly_numeric(pd.Series([2**70, 3], dtype=object))             # beyond 64 bits, still whole numbers
    with pytest.raises(ValueError, match="series must be a pandas.Series"):
        D.mostly_numeric([1, 2])


def test_default_transform_reads_only_the_kind_off_the_data():
    numbers = pd.Series([3.0, 900.0])
    # no default bounds (never [0, 1], which would clip): empty until typed
    assert D.default_transform(numbers) == {"kind": "numeric", "log": False, "bounds_public": False, "lo": None,
                                            "hi": None, "decimals": None, "grid": None, "categories": None}
    assert D.default_transform(numbers, [0, 100]) == {"kind": "numeric", "log": False, "bounds_public": True,
                                                      "lo": 0.0, "hi": 100.0, "decimals": None, "grid": None,
                                                      "categories": None}
    assert D.default_transform(pd.Series(["a", "b"]))["kind"] == "categorical"
    with pytest.raises(ValueError, match="bounds must satisfy lo < hi"):
        D.default_transform(numbers, (5, 1))


def test_default_columns_and_counts_column():
    frame = pd.DataFrame({"label": ["a", "b", "c"], "few": [1, 1, 2], "many": [1, 2, 3], "count": [4, 5, 6]})
    assert D.default_columns(frame) == ["many"]                    # ties with "count": the first one
    assert D.default_columns(frame, exclude="many") == ["count"]
    assert D.default_columns(frame[["label"]]) == ["label"]
    assert D.default_columns(frame[["label"]], exclude="label") == ["label"]   # the only column
    assert D.default_counts_column(frame) == "count"
    assert D.default_counts_column(frame.rename(columns={"count": " N "})) == " N "
    assert D.default_counts_column(frame.drop(columns="count")) == "many"    # the last numeric column
    assert D.default_counts_column(frame[["label"]]) == "label"
    with pytest.raises(ValueError, match="at least one column"):
        D.default_columns(pd.DataFrame())
    with pytest.raises(ValueError, match="frame must be a pandas.DataFrame"):
        D.default_counts_column({"count": [1]})


# --------------------------------------------------------------------------- preparation
def test_prepare_frame_and_prepare_source_agree_with_the_file():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"w": np.round(rng.lognormal(3, 1, 500), 1), "g": rng.choice(["a", "b", "c"], 500)})
    table = frame.value_counts().rename("n").reset_index()
    specs = [D.ColumnSpec("w", bounds=(0.0, 500.0), decimals=0), D.ColumnSpec("g", kind="categorical")]
    coarsening = (D.ColumnTransform("g", "min_count", min_count=200),)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        rows = D.prepare_frame(frame, specs, coarsening=coarsening)
        counted = D.prepare_frame(table, specs, counts_column="n", coarsening=coarsening)
        from_source, reading = D.prepare_source(frame, specs, coarsening=coarsening)
        from_file, file_reading = D.prepare_source(frame.to_csv(index=False).encode(), specs, coarsening=coarsening)
        expected = D.prepare(D.apply_coarsening(frame, coarsening), specs)
    for prepared in (rows, counted, from_source, from_file):
        assert np.array_equal(prepared.table.counts, expected.table.counts)
        assert np.array_equal(np.asarray(prepared.table.atoms, dtype=object),
                              np.asarray(expected.table.atoms, dtype=object))
    assert reading is None and file_reading["format"] == "csv" and file_reading["engine"] == "duckdb"
    with pytest.raises(ValueError, match=r"^no counts column 'count'; the columns are 'w', 'g', 'n'$"):
        D.prepare_frame(table, specs, counts_column="count")


# --------------------------------------------------------------------------- the dashboard's upload message
def test_a_bad_upload_is_named_by_its_file_name_in_the_message():
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.radio(key="_w_source_kind").set_value("upload").run()
    at.file_uploader(key="uploader").set_value(("ragged.csv", b"a,b\n1,2\n3,4,5\n", "text/csv")).run()
    assert not at.exception
    with pytest.raises(ValueError) as core_message:
        D.read_table(b"a,b\n1,2\n3,4,5\n")
    expected = "Could not use ragged.csv: " + str(core_message.value).replace("the uploaded data", "'ragged.csv'")
    assert expected in [shown(e.value) for e in at.error]   # core's messages are shown as text


# --------------------------------------------------------------------------- limits before reading
def _gzip_members(header: bytes, line: bytes, rows: int, member_rows: int = 2**16) -> bytes:
    """A gzip file of ``header`` then ``rows`` copies of ``line``, built as one compressed
    member repeated (gzip files may be concatenated): a small file that decompresses to a
    large text, built in microseconds."""
    member = gzip.compress(line * member_rows, compresslevel=9)
    assert rows % member_rows == 0
    return gzip.compress(header) + member * (rows // member_rows)


def test_check_read_limits_counts_rows_before_reading():
    frame = pd.DataFrame({"x": np.zeros(1_000, dtype=np.int64)})
    D.check_read_limits(_parquet(frame), max_rows=1_000)
    with pytest.raises(ValueError, match=r"1,000 rows, above the limit of 999 \(max_rows=999\).*python -m core release"):
        D.check_read_limits(_parquet(frame), max_rows=999, name="big.parquet")
    csv = b"x\n" + b"1\n" * 1_000
    D.check_read_limits(csv, max_rows=1_000)                           # a header and 1 000 rows
    D.check_read_limits(csv[:-1], max_rows=1_000)                      # no line end after the last row
    D.check_read_limits(csv.replace(b"\n", b"\r\n"), max_rows=1_000)   # CRLF counts one line
    for text in (csv + b"1\n", (csv + b"1").replace(b"\n", b"\r")):     # one more row: LF, or old Mac CR
        with pytest.raises(ValueError, match=r"'big\.csv' has more than 1,000 rows.*max_rows=1000"):
            D.check_read_limits(text, max_rows=1_000, name="big.csv")
    D.check_read_limits(csv + b"1\n" * 10**5)                          # no limit given: nothing to check


def test_check_read_limits_bounds_what_a_gzip_file_decompresses_to():
    bomb = _gzip_members(b"x\n", b"1\n", 2**20)        # 2 MiB of text in a few kilobytes
    assert len(bomb) < 2**13
    D.check_read_limits(bomb, max_rows=2**20, max_decompressed_bytes=2**21 + 2)
    with pytest.raises(ValueError, match=r"decompresses to more than 2 MiB.*max_decompressed_bytes=2097152.*"
                                         r"uncompressed.*python -m core release"):
        D.check_read_limits(bomb, max_decompressed_bytes=2**21)
    with pytest.raises(ValueError, match=r"more than 1,000,000 rows, above the limit \(max_rows=1000000\)"):
        D.check_read_limits(bomb, max_rows=10**6)
    # it stops at the first limit crossed: a text far larger than memory is refused at once
    huge = _gzip_members(b"x\n", b"1\n", 2**29, member_rows=2**19)   # 1 GiB of text in ~1 MB
    assert len(huge) < 2**21
    with pytest.raises(ValueError, match="max_decompressed_bytes"):
        D.check_read_limits(huge, max_decompressed_bytes=2**22)
    with pytest.raises(ValueError, match="damaged gzip"):
        D.check_read_limits(bomb[:-100], max_rows=10**7)


def test_check_read_limits_names_bad_arguments():
    with pytest.raises(ValueError, match="content must be the bytes"):
        D.check_read_limits("x\n1\n")
    with pytest.raises(ValueError, match="max_rows"):
        D.check_read_limits(b"x\n1\n", max_rows=0)
    with pytest.raises(ValueError, match="max_decompressed_bytes"):
        D.check_read_limits(b"x\n1\n", max_decompressed_bytes=-1)
    with pytest.raises(ValueError, match="not a readable Parquet file"):
        D.check_read_limits(b"PAR1 and nothing else", max_rows=10)


def test_gzip_and_parquet_uploads_are_streamed_by_duckdb():
    """A gzip upload is handed to DuckDB compressed and a Parquet upload as a file: the
    table is the same as from the plain text (and from pandas)."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"x": rng.integers(0, 50, 5_000), "g": rng.choice(["a", "b", "NA-c"], 5_000)})
    text = frame.to_csv(index=False).encode()
    specs = [D.ColumnSpec("x", bounds=(0, 50)), D.ColumnSpec("g", kind="categorical")]
    expected = D.aggregate(text, specs, engine="pandas").table
    for content in (gzip.compress(text), _parquet(frame)):
        table = D.aggregate(content, specs, engine="duckdb").table
        np.testing.assert_array_equal(table.counts, expected.counts)
        np.testing.assert_array_equal(table.atoms, expected.atoms)
