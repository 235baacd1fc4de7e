"""The dashboard's limit on distinct values (ui.state.MAX_DISTINCT): counted exactly by DuckDB
before the frequency table reaches Python, refused with a message naming the limit and the
command line; no limit by default (the command line)."""
from __future__ import annotations

import io

import pandas as pd
import pytest

from core import data as core_data
from core.data import engines
from ui import state


def _csv(values, name="x") -> bytes:
    return pd.DataFrame({name: values}).to_csv(index=False).encode()


def _parquet(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    return buffer.getvalue()


@pytest.mark.parametrize("engine", ["duckdb", "pandas"])
def test_csv_above_the_limit_is_refused_naming_the_limit_and_the_command_line(engine):
    content = _csv(range(50))
    with pytest.raises(ValueError) as caught:
        core_data.distinct_values(content, ["x"], engine=engine, name="wide.csv", max_distinct=49)
    message = str(caught.value)
    assert "'wide.csv' has 50 distinct values in column 'x'" in message
    assert "max_distinct=49" in message and "python -m core release" in message
    assert len(core_data.distinct_values(content, ["x"], engine=engine, max_distinct=50).frame) == 50


@pytest.mark.parametrize("engine", ["duckdb", "pandas"])
def test_parquet_above_the_limit_is_refused(engine):
    content = _parquet(pd.DataFrame({"x": range(30), "y": ["a"] * 30}))
    with pytest.raises(ValueError, match="30 distinct values in column 'x'"):
        core_data.distinct_values(content, ["x"], engine=engine, max_distinct=29)
    assert len(core_data.distinct_values(content, ["y"], engine=engine, max_distinct=1).frame) == 1


def test_the_limit_counts_the_released_columns_only():
    # a frequency table: value 1 on two rows; the counts column does not make values distinct
    frame = pd.DataFrame({"a": [1, 2, 3, 1], "b": ["x", "y", "z", "x"], "n": [1, 2, 3, 4]})
    for content in (frame.to_csv(index=False).encode(), _parquet(frame)):
        values = core_data.distinct_values(content, ["a"], counts_column="n", max_distinct=3)
        assert int(values.counts.sum()) == 10
        with pytest.raises(ValueError, match=r"3 distinct values in columns 'a', 'b'"):
            core_data.distinct_values(content, ["a", "b"], counts_column="n", max_distinct=2)


def test_ragged_file_counts_values_not_row_shapes():
    # one column (the checked path, with row-shape flags): blank lines are no values
    content = b"x\n1\n2\n\n3\n2\n"
    assert len(core_data.distinct_values(content, ["x"], max_distinct=3).frame) == 3


def test_refused_before_the_values_reach_python(monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("the distinct values were materialised")

    monkeypatch.setattr(engines, "_read_distinct_cells", never)
    monkeypatch.setattr(engines, "_typed_parquet_frame", never)
    with pytest.raises(ValueError, match="above the dashboard's limit"):
        core_data.distinct_values(_csv(range(20)), ["x"], max_distinct=10)
    with pytest.raises(ValueError, match="above the dashboard's limit"):
        core_data.distinct_values(_parquet(pd.DataFrame({"x": range(20)})), ["x"], max_distinct=10)


def test_no_limit_by_default_and_aggregate_passes_it_on():
    content = _csv(range(100))
    assert core_data.aggregate(content, [core_data.ColumnSpec("x", bounds=(0, 99))]).prepared.table.k == 100
    with pytest.raises(ValueError, match="max_distinct=99"):
        core_data.aggregate(content, [core_data.ColumnSpec("x", bounds=(0, 99))], max_distinct=99)


@pytest.mark.parametrize("bad", [0, -1, 1.5, "10", True])
def test_bad_limit_is_named(bad):
    with pytest.raises(ValueError, match="max_distinct"):
        core_data.distinct_values(_csv([1, 2]), ["x"], max_distinct=bad)


def test_the_exact_full_read_stays_below_the_limit():
    # a CSV read whole (at most FULL_READ_MAX_BYTES) holds at most one value per 2 bytes
    assert core_data.FULL_READ_MAX_BYTES // 2 < state.MAX_DISTINCT
