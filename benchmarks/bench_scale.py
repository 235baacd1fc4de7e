"""Agency scale (issue 13): the frequency table of a 10^8-row file with DuckDB.

Generates its own data in a temporary directory (deleted at the end): one numeric column
with ~10^5 distinct values (amounts in cents, 0.00 to 999.99), written by DuckDB as a
10^8-row Parquet file and a 10^8-row CSV file, plus a 10^7-row CSV for the reference.
Measures, in this run:

* ``core.data.aggregate(..., engine="duckdb")`` on the Parquet file (target <= 60 s) and
  on the CSV file (target <= 120 s), each in a fresh subprocess whose peak resident
  memory (``ru_maxrss``) is reported (target <= 2 GiB);
* on the 10^7-row CSV, pandas ``read_csv`` + ``value_counts`` (the reference) against
  ``aggregate`` (target: at least 3x faster), best of 3 each, in the same process.

Prints JSON. Not a test: it takes minutes and ~3 GB of disk. ``--rows N`` shrinks it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGETS = {"parquet_seconds": 60.0, "csv_seconds": 120.0, "peak_rss_gib": 2.0, "ratio_vs_pandas": 3.0}


def _write(path: Path, rows: int, fmt: str) -> None:
    import duckdb

    con = duckdb.connect()
    # hash() spreads 10^5 values (cents) over the rows; deterministic.
    query = f"SELECT (hash(i) % 100000)::BIGINT / 100.0 AS amount FROM range({rows}) t(i)"
    options = "(FORMAT parquet)" if fmt == "parquet" else "(HEADER, DELIMITER ',')"
    con.sql(f"COPY ({query}) TO '{path}' {options}")
    con.close()


def _child(path: str) -> None:
    """Aggregate one file and print seconds, k, n and the peak RSS of this process."""
    from core.data import ColumnSpec, aggregate

    warnings.simplefilter("ignore")
    start = time.perf_counter()
    result = aggregate(path, [ColumnSpec("amount", bounds=(0.0, 1000.0))], engine="duckdb")
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux
    print(json.dumps({"seconds": seconds, "k": result.table.k, "n": result.table.n, "peak_rss_bytes": peak}))


def _measure(path: Path) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", str(path)], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _best(fn, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10**8, help="rows of the large files (default 10^8)")
    parser.add_argument("--reference-rows", type=int, default=10**7, help="rows of the pandas comparison CSV")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child)
        return

    import pandas as pd

    from core.data import ColumnSpec, aggregate

    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory(prefix="bench_scale_") as tmp:
        tmp = Path(tmp)
        paths = {"parquet": tmp / "big.parquet", "csv": tmp / "big.csv", "reference": tmp / "ref.csv"}
        start = time.perf_counter()
        _write(paths["parquet"], args.rows, "parquet")
        _write(paths["csv"], args.rows, "csv")
        _write(paths["reference"], args.reference_rows, "csv")
        generated = time.perf_counter() - start
        parquet = _measure(paths["parquet"])
        csv_big = _measure(paths["csv"])

        ref = str(paths["reference"])
        spec = [ColumnSpec("amount", bounds=(0.0, 1000.0))]
        pandas_counts = pd.read_csv(ref)["amount"].value_counts()  # warm the page cache for both
        duck = aggregate(ref, spec, engine="duckdb")
        assert duck.table.n == int(pandas_counts.sum()) and duck.table.k == pandas_counts.size
        pandas_seconds = _best(lambda: pd.read_csv(ref)["amount"].value_counts())
        duckdb_seconds = _best(lambda: aggregate(ref, spec, engine="duckdb"))
        sizes = {name: os.path.getsize(p) for name, p in paths.items()}

    peak = max(parquet["peak_rss_bytes"], csv_big["peak_rss_bytes"]) / 2**30
    result = {
        "benchmark": "bench_scale",
        "machine": {"cpus": os.cpu_count()},
        "rows": args.rows,
        "distinct_values": parquet["k"],
        "file_bytes": sizes,
        "generation_seconds": round(generated, 1),
        "parquet": {"seconds": round(parquet["seconds"], 2), "peak_rss_gib": round(parquet["peak_rss_bytes"] / 2**30, 3),
                    "target_seconds": TARGETS["parquet_seconds"]},
        "csv": {"seconds": round(csv_big["seconds"], 2), "peak_rss_gib": round(csv_big["peak_rss_bytes"] / 2**30, 3),
                "target_seconds": TARGETS["csv_seconds"]},
        "peak_rss_gib": round(peak, 3),
        "reference": {"rows": args.reference_rows, "pandas_read_csv_value_counts_seconds": round(pandas_seconds, 3),
                      "duckdb_aggregate_seconds": round(duckdb_seconds, 3),
                      "speedup_vs_pandas": round(pandas_seconds / duckdb_seconds, 2),
                      "target_speedup": TARGETS["ratio_vs_pandas"]},
        "meets_targets": bool(parquet["seconds"] <= TARGETS["parquet_seconds"]
                              and csv_big["seconds"] <= TARGETS["csv_seconds"] and peak <= TARGETS["peak_rss_gib"]
                              and pandas_seconds / duckdb_seconds >= TARGETS["ratio_vs_pandas"]),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
