"""Parquet bombs are refused from the footer, before any data page is read (issue 33 §4a).

Two shapes from the report: one row whose text cell is 200 MiB of one byte (a few kilobytes
compressed), and 200 distinct 1 MiB strings. Both pass the row limit; both are refused by
the uncompressed sizes the footer states (``core.data.check_read_limits`` with the app's
``ui.state.MAX_DECOMPRESSED_BYTES``, as ``ui.selection.set_source_upload`` calls it), in
bounded memory. The command line calls no such check (it has no size limit). A normal
Parquet file of several columns still passes and is read through the same path.
"""

from __future__ import annotations

import inspect
import io
import tracemalloc

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from core import data as core_data
from ui import selection, state

MiB = 2**20


def _parquet(table: pa.Table) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="zstd", use_dictionary=False)   # plain pages: quicker to write
    return buffer.getvalue()


@pytest.fixture(scope="module")
def one_wide_cell() -> bytes:
    """One row: an id and a text cell of 200 MiB of one repeated byte."""
    content = _parquet(pa.table({"id": pa.array([1], pa.int64()),
                                 "note": pa.array([b"a" * (200 * MiB)], pa.binary()).cast(pa.string())}))
    assert len(content) < 10**6, len(content)
    return content


@pytest.fixture(scope="module")
def many_distinct() -> bytes:
    """200 rows, each a distinct 1 MiB string (a unique prefix and a repeated pattern)."""
    body = b"0123456789abcdef" * (MiB // 16 - 1)
    values = pa.array([b"%016d" % i + body for i in range(200)], pa.binary()).cast(pa.string())
    content = _parquet(pa.table({"blob": values}))
    assert len(content) < 10**6, len(content)
    return content


def _app_check(content: bytes, name: str) -> None:
    """The check the Data page runs on an upload before reading it."""
    core_data.check_read_limits(content, max_rows=state.MAX_ROWS, max_decompressed_bytes=state.MAX_DECOMPRESSED_BYTES,
                                name=name)


@pytest.mark.parametrize("shape, column", [("one_wide_cell", "note"), ("many_distinct", "blob")])
def test_a_parquet_bomb_is_refused_from_its_footer(shape, column, request):
    content = request.getfixturevalue(shape)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError) as refused:
            _app_check(content, "bomb.parquet")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(refused.value)
    assert message.startswith("'bomb.parquet' is a Parquet file whose column")
    assert repr(column) in message and "uncompressed" in message
    assert f"above the limit of 128 MiB (max_decompressed_bytes={state.MAX_DECOMPRESSED_BYTES})" in message
    assert "python -m core release" in message
    assert peak < 20 * MiB, peak


def test_the_message_gives_the_column_size(one_wide_cell):
    size = sum(pq.ParquetFile(io.BytesIO(one_wide_cell)).metadata.row_group(g).column(1).total_uncompressed_size
               for g in range(pq.ParquetFile(io.BytesIO(one_wide_cell)).metadata.num_row_groups))
    assert size > 200 * MiB
    with pytest.raises(ValueError, match=rf"column 'note' holds {size:,} bytes uncompressed"):
        _app_check(one_wide_cell, "bomb.parquet")


def test_the_total_over_columns_is_bounded():
    """Several columns each under the limit, together over it: refused, naming the largest."""
    columns = {f"c{j}": pa.array([b"%08d%08d" % (j, i) + b"x" * (MiB - 16 + j * 2**14) for i in range(50)],
                                 pa.binary()).cast(pa.string()) for j in range(3)}   # about 50 MiB each
    content = _parquet(pa.table(columns))
    with pytest.raises(ValueError, match=r"its columns hold [\d,]+ bytes uncompressed \(the largest, 'c2'"):
        _app_check(content, "wide.parquet")


def test_a_normal_parquet_file_still_loads_through_the_same_path():
    rng = np.random.default_rng(33)
    frame = pd.DataFrame({"amount": rng.integers(0, 1000, 5000), "region": rng.choice(["n", "s", "e", "w"], 5000),
                          "score": np.round(rng.normal(size=5000), 2), "flag": rng.integers(0, 2, 5000) == 1})
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    content = buffer.getvalue()
    _app_check(content, "normal.parquet")          # passes
    head = core_data.read_file_head(content, name="normal.parquet")
    assert head.columns == list(frame.columns) and head.n_rows == 5000
    pd.testing.assert_frame_equal(head.frame, frame)


def test_the_app_runs_the_check_and_the_command_line_does_not():
    """The Data page passes the decompression limit; the command line never calls the check."""
    source = inspect.getsource(selection.set_source_upload)
    assert "check_read_limits" in source and "max_decompressed_bytes=state.MAX_DECOMPRESSED_BYTES" in source
    import core.__main__
    import core.cli

    assert not any("check_read_limits" in inspect.getsource(m) for m in (core.__main__, core.cli))
