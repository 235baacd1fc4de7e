"""Peak memory of the dashboard's lean read path on high- and low-cardinality uploads.

The README promises that one 1 GB upload peaks at about 3-4 GB of the server's memory and
that an upload with more than ``ui.state.MAX_DISTINCT`` distinct values is refused before
they reach the session. This drives, in a fresh subprocess per case, the functions the app
runs on an upload (``ui/selection.py``: ``core.data.check_read_limits``, the bounded head,
``core.data.distinct_values`` with the app's limit, the frequency table, and the distinct
rows in original units the Data page's advisor uses) on the upload's bytes held in memory,
and reads the process's peak resident set (``VmHWM`` of ``/proc/<pid>/status``).

It measures the app path, not the browser upload: Streamlit's own copies of a file while it
arrives (about two) come on top, as the README says.

Cases (generated in a temporary directory, removed afterwards):

* ``high``: 10^7 rows of distinct numbers (~88 MB), refused by the limit;
* ``limit``: exactly ``MAX_DISTINCT`` distinct numbers, accepted;
* ``low``: the README's low-cardinality case, 10^8 rows of 1000 values (~740 MB);
  ``--low-rows`` makes it smaller.

Usage::

    python benchmarks/bench_memory_cardinality.py [--low-rows 100000000] [--high-rows 10000000]

Prints JSON: ``figure`` (the largest peak RSS, GB), ``target`` (4 GB), ``met``, and per case
the peak, the seconds and the outcome.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TARGET_GB = 4.0

#: Run in the subprocess: the app's steps on one file, then its peak RSS.
_CHILD = r"""
import json, sys, time, warnings
sys.path.insert(0, sys.argv[2])
from core import data as core_data
from ui import state
def peak():
    for line in open('/proc/self/status'):
        if line.startswith('VmHWM'):
            return int(line.split()[1]) * 1024
start = time.perf_counter()
content = open(sys.argv[1], 'rb').read()
outcome = 'accepted'
try:
    core_data.check_read_limits(content, max_rows=state.MAX_ROWS, max_decompressed_bytes=state.MAX_DECOMPRESSED_BYTES,
                                name='upload.csv')
    head = core_data.read_file_head(content, name='upload.csv')
    values = core_data.distinct_values(content, ['x'], engine='duckdb', name='upload.csv',
                                       max_distinct=state.MAX_DISTINCT)
    warnings.simplefilter('ignore')
    table = values.aggregated([core_data.ColumnSpec('x')]).prepared.table
    rows = values.aggregated([core_data.ColumnSpec('x', kind='categorical', missing='value')])
    original = rows.prepared.to_original(rows.table.atoms)
    outcome = f'accepted: n = {table.n:,}, k = {table.k:,}'
except ValueError as exc:
    outcome = 'refused: ' + str(exc)[:160]
print(json.dumps({'peak_bytes': peak(), 'seconds': time.perf_counter() - start, 'outcome': outcome}))
"""


def _write_numbers(path: Path, values: np.ndarray) -> None:
    """A one-column CSV ``x`` of ``values``, written in pieces."""
    with path.open("w") as out:
        out.write("x\n")
        for piece in np.array_split(values, max(1, len(values) // 10**6)):
            out.write("\n".join(map(str, piece.tolist())))
            out.write("\n")


def _write_low(path: Path, rows: int) -> None:
    """``rows`` rows of 1000 distinct values, by repeating one block of 10^6 rows."""
    rng = np.random.default_rng(1)
    block = ("\n".join(map(str, rng.integers(1000, 2000, 10**6).tolist())) + "\n").encode()
    with path.open("wb") as out:
        out.write(b"x\n")
        whole, rest = divmod(rows, 10**6)
        for _ in range(whole):
            out.write(block)
        if rest:
            out.write(b"".join(block.splitlines(keepends=True)[:rest]))


def _measure(path: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", _CHILD, str(path), str(ROOT)], capture_output=True, text=True,
                          check=True, cwd=ROOT)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return {"file_mb": round(path.stat().st_size / 10**6, 1), "peak_gb": round(result["peak_bytes"] / 10**9, 2),
            "seconds": round(result["seconds"], 1), "outcome": result["outcome"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--high-rows", type=int, default=10**7)
    parser.add_argument("--low-rows", type=int, default=10**8)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from ui.state import MAX_DISTINCT

    rng = np.random.default_rng(0)
    cases = {}
    with tempfile.TemporaryDirectory(prefix="bench-cardinality-") as tmp:
        tmp = Path(tmp)
        for label, rows in (("high", args.high_rows), ("limit", MAX_DISTINCT)):
            path = tmp / f"{label}.csv"
            _write_numbers(path, rng.permutation(rows) * 7 + 12345)   # distinct numbers, shuffled
            cases[label] = {"rows": rows, **_measure(path)}
            path.unlink()
        path = tmp / "low.csv"
        started = time.perf_counter()
        _write_low(path, args.low_rows)
        cases["low"] = {"rows": args.low_rows, "written_s": round(time.perf_counter() - started, 1), **_measure(path)}
    figure = max(case["peak_gb"] for case in cases.values())
    print(json.dumps({"figure": figure, "unit": "GB peak RSS of the app's read path (VmHWM)",
                      "target": TARGET_GB, "met": figure <= TARGET_GB, "max_distinct": MAX_DISTINCT,
                      "cases": cases}, indent=2))


if __name__ == "__main__":
    main()
