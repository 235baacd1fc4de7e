"""Files at rest are private and cleaned (issue 33, docs/serving.md §1 and §2).

* DuckDB spills to a private :func:`tempfile.mkdtemp` directory (mode 0700) removed when its
  connection closes, never to ``./.tmp`` in the working directory (its default, 0644 files
  left behind when the process is killed).
* The entries of the CONFIDENTIAL curator zip carry mode 0600 (``unzip`` restores it whatever
  the umask); the public bundle's keep 0644.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import zipfile

import numpy as np
import pandas as pd
import pytest

from core import data as D
from core.data import engines
from core.release import ReleaseRecipe, build_bundles, run_recipe
from core.release.gate import ACKNOWLEDGEMENTS


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_duckdb_spills_into_a_private_directory_removed_on_close(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with engines._duckdb_connection(memory_limit="16MB", threads=1) as con:
        spill = con.sql("SELECT current_setting('temp_directory')").fetchall()[0][0]
        assert os.path.isabs(spill) and _mode(spill) == 0o700
        # a GROUP BY larger than the memory limit: DuckDB writes its spill files there
        con.sql("CREATE TABLE big AS SELECT 'x' || (i * 7919 % 400000)::VARCHAR || repeat('y', 20) AS v "
                "FROM range(400000) t(i)")
        assert con.sql("SELECT count(*) FROM (SELECT v, count(*) FROM big GROUP BY ALL)").fetchall()[0][0] == 400_000
        assert os.listdir(spill), "the aggregation did not spill: raise its size"
    assert not os.path.exists(spill)
    assert os.listdir(tmp_path) == []   # nothing in the working directory


def test_duckdb_directory_is_removed_when_the_query_fails(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(Exception, match="nope"):
        with engines._duckdb_connection() as con:
            spill = con.sql("SELECT current_setting('temp_directory')").fetchall()[0][0]
            raise RuntimeError("nope")
    assert not os.path.exists(spill) and os.listdir(tmp_path) == []


def test_every_duckdb_aggregation_uses_a_private_directory_gone_after_the_call(tmp_path, monkeypatch):
    """Every connection core.data opens (CSV, gzip and Parquet, from a path or an upload's bytes):
    its temp_directory is an absolute 0700 directory while it is open, removed after the call,
    and the working directory stays empty."""
    duckdb = pytest.importorskip("duckdb")
    real, seen = duckdb.connect, []

    def connect(*args, **kwargs):
        con = real(*args, **kwargs)
        spill = con.sql("SELECT current_setting('temp_directory')").fetchall()[0][0]
        seen.append((spill, os.path.isabs(spill) and os.path.isdir(spill) and _mode(spill)))
        return con

    monkeypatch.setattr(duckdb, "connect", connect)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.integers(0, 50, 2_000), "g": rng.choice(["a", "b"], 2_000)})
    text = frame.to_csv(index=False).encode()
    parquet = io.BytesIO()
    frame.to_parquet(parquet)
    path = tmp_path / "data.csv"
    path.write_bytes(text)
    specs = [D.ColumnSpec("x", bounds=(0, 50)), D.ColumnSpec("g", kind="categorical")]
    for source in (path, text, gzip.compress(text), parquet.getvalue()):
        assert D.aggregate(source, specs, engine="duckdb").table.n == 2_000
    assert seen and all(mode == 0o700 for _, mode in seen), seen
    assert not any(os.path.exists(spill) for spill, _ in seen)
    assert os.listdir(work) == []


def test_confidential_zip_entries_are_owner_only(tmp_path):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"amount": np.round(rng.normal(0, 3, 200), 1), "g": rng.choice(["a", "b"], 200)})
    recipe = ReleaseRecipe(source="upload", columns=(D.ColumnSpec("amount", bounds=(-10.0, 10.0), decimals=1),
                                                     D.ColumnSpec("g", kind="categorical")),
                           eps=2.0, delta=0.9, m=100, theta=2.0, seed=5)
    bundles = build_bundles(run_recipe(recipe, frame), acknowledged=tuple(ACKNOWLEDGEMENTS))
    for payload, mode in ((bundles.curator, 0o600), (bundles.public, 0o644)):
        with zipfile.ZipFile(io.BytesIO(payload)) as zf:
            infos = zf.infolist()
        assert infos and all((info.external_attr >> 16) & 0o777 == mode for info in infos), \
            [(info.filename, oct(info.external_attr >> 16)) for info in infos]
    # the curator's entries are told apart by their names (core.release.bundle._zip)
    with zipfile.ZipFile(io.BytesIO(bundles.curator)) as zf:
        assert all(info.filename.startswith("CONFIDENTIAL_") for info in zf.infolist())
