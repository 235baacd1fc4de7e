"""Agency scale (issue 13): the frequency table of a 10^8-row file with DuckDB.

Generates its own data in a temporary directory (deleted at the end): one numeric column
with ~10^5 distinct values (amounts in cents, 0.00 to 999.99), written by DuckDB as a
10^8-row Parquet file and a 10^8-row CSV file, plus a 10^7-row CSV for the reference.
Measures, in this run:

* ``core.data.aggregate(..., engine="duckdb")`` on the Parquet file (target <= 60 s) and
  on the CSV file (target <= 120 s), each in a fresh subprocess whose peak resident
  memory (``ru_maxrss``) is reported (target <= 2 GiB);
* on 10^7-row CSVs, pandas ``read_csv`` + ``value_counts`` (the reference) against
  ``aggregate`` (target: at least 3x faster), best of 3 each, in the same process, on two
  files: the one-column file above, and an agency-shaped file of six columns (record id,
  amount, age, region code, weight, interview date) of which ``amount`` is released.
  ``duckdb_query_floor_seconds`` times DuckDB's own ``GROUP BY`` of the column as text
  with no checks: no reader built on DuckDB can be faster on this machine.

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


WIDE_COLUMNS = ("i AS person_id, (hash(i) % 100000)::BIGINT / 100.0 AS amount, (hash(i + 1) % 90)::INT AS age, "
                "'R' || lpad((hash(i + 2) % 50)::VARCHAR, 2, '0') AS region, "
                "round((hash(i + 3) % 100000)::DOUBLE / 1000.0, 3) AS weight, "
                "DATE '2020-01-01' + (hash(i + 4) % 1000)::INT AS interview_date")


def _write(path: Path, rows: int, fmt: str, wide: bool = False) -> None:
    import duckdb

    con = duckdb.connect()
    # hash() spreads 10^5 values (cents) over the rows; deterministic.
    columns = WIDE_COLUMNS if wide else "(hash(i) % 100000)::BIGINT / 100.0 AS amount"
    query = f"SELECT {columns} FROM range({rows}) t(i)"
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


def _query_floor(path: str, column: int, width: int) -> None:
    """DuckDB's GROUP BY of one column read as text, no checks (the floor of any DuckDB reader)."""
    import duckdb

    columns = ", ".join(f"'c{j}': 'VARCHAR'" for j in range(width))
    con = duckdb.connect(config={"preserve_insertion_order": False})
    con.sql(f"SELECT c{column}, count(*) FROM read_csv('{path}', columns={{{columns}}}, header=true, "
            "auto_detect=false, delimiter=',') GROUP BY ALL").df()
    con.close()


def _compare(path: Path, spec, width: int) -> dict:
    """pandas read_csv + value_counts against aggregate on one file, best of 3, same process."""
    import pandas as pd

    from core.data import aggregate

    ref = str(path)
    pandas_counts = pd.read_csv(ref)["amount"].value_counts()  # warms the page cache for both
    duck = aggregate(ref, spec, engine="duckdb")
    if duck.table.n != int(pandas_counts.sum()) or duck.table.k != pandas_counts.size:
        raise RuntimeError(f"aggregate and pandas disagree on {ref}")
    pandas_seconds = _best(lambda: pd.read_csv(ref)["amount"].value_counts())
    duckdb_seconds = _best(lambda: aggregate(ref, spec, engine="duckdb"))
    floor = _best(lambda: _query_floor(ref, 1 if width > 1 else 0, width))
    return {"columns": width, "bytes": os.path.getsize(ref),
            "pandas_read_csv_value_counts_seconds": round(pandas_seconds, 3),
            "duckdb_aggregate_seconds": round(duckdb_seconds, 3),
            "speedup_vs_pandas": round(pandas_seconds / duckdb_seconds, 2),
            "duckdb_query_floor_seconds": round(floor, 3),
            "speedup_ceiling_of_duckdb": round(pandas_seconds / floor, 2),
            "target_speedup": TARGETS["ratio_vs_pandas"]}


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

    from core.data import ColumnSpec

    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory(prefix="bench_scale_") as tmp:
        tmp = Path(tmp)
        paths = {"parquet": tmp / "big.parquet", "csv": tmp / "big.csv", "reference": tmp / "ref.csv",
                 "reference_wide": tmp / "ref_wide.csv"}
        start = time.perf_counter()
        _write(paths["parquet"], args.rows, "parquet")
        _write(paths["csv"], args.rows, "csv")
        _write(paths["reference"], args.reference_rows, "csv")
        _write(paths["reference_wide"], args.reference_rows, "csv", wide=True)
        generated = time.perf_counter() - start
        parquet = _measure(paths["parquet"])
        csv_big = _measure(paths["csv"])
        spec = [ColumnSpec("amount", bounds=(0.0, 1000.0))]
        narrow = _compare(paths["reference"], spec, 1)
        wide = _compare(paths["reference_wide"], spec, 6)
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
        "reference_rows": args.reference_rows,
        "reference_one_column": narrow,
        "reference_six_columns": wide,
        "meets_time_and_memory_targets": bool(parquet["seconds"] <= TARGETS["parquet_seconds"]
                                              and csv_big["seconds"] <= TARGETS["csv_seconds"]
                                              and peak <= TARGETS["peak_rss_gib"]),
        "meets_speedup_target": {"one_column": narrow["speedup_vs_pandas"] >= TARGETS["ratio_vs_pandas"],
                                 "six_columns": wide["speedup_vs_pandas"] >= TARGETS["ratio_vs_pandas"]},
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
