"""The README's memory promise, measured as the server's resident memory on real uploads.

``benchmarks/bench_memory_cardinality.py`` measures the app's read path in a bare process;
this drives the real thing: ``streamlit run app.py`` (a fresh server per case, so the peak is
that case's), an upload through headless Debian Chromium on the Data page, and the server's
peak resident set read from ``/proc/<pid>/status`` (``VmHWM``: the peak since the server
started, Streamlit's copies of the arriving file included) once the page has answered.

Cases (generated in a temporary directory, removed afterwards):

* ``high``: 10^7 distinct numbers (~88 MB): refused by the limit on distinct values
  (``ui.state.MAX_DISTINCT``), the page says so;
* ``limit``: 10^6 distinct numbers, the limit: accepted;
* ``low``: ``--low-rows`` rows (default 2·10^7, ~150 MB) of 1000 values.

Usage::

    python benchmarks/bench_server_memory.py [--low-rows 20000000]

Prints JSON: ``figure`` (the largest peak, GB), ``target`` (the README's 4 GB for one upload),
``met``, and per case the file size, the peak, the seconds from the upload to the answer and
what the page said.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

import st_waits as w                                          # noqa: E402
from conftest import CHROMIUM, CHROMIUM_ARGS, streamlit_server  # noqa: E402
from playwright.sync_api import sync_playwright              # noqa: E402

TARGET_GB = 4.0


def _peak_bytes(pid: int) -> int:
    """The peak resident set of the server and its children (the script runner is a thread)."""
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM")


def _write(path: Path, values: np.ndarray) -> Path:
    with open(path, "w") as out:
        out.write("x\n")
        np.savetxt(out, values, fmt="%d")
    return path


def _case(browser, path: Path, log: Path) -> dict:
    with streamlit_server(log) as (url, proc):
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        context.set_default_timeout(600_000)
        page = context.new_page()
        try:
            w.open_app(page, url)
            w.choose_radio(page, "Upload a CSV or Parquet file", timeout=600_000)
            start = time.perf_counter()
            w.upload(page, path, timeout=600_000)
            # done when the sidebar names the file (read and profiled) or the page refuses it
            named = page.locator('[data-testid="stSidebar"]').get_by_text(path.name)
            refused = page.locator('[data-testid="stAlert"]').filter(has_text="distinct values")
            named.or_(refused).first.wait_for(timeout=600_000)
            w.wait_for_idle(page, 600_000)
            seconds = time.perf_counter() - start
            alerts = [a for a in w.alert_texts(page) if "distinct values" in a]
            outcome = "refused: " + alerts[0][:160] if alerts else "accepted"
            peak = _peak_bytes(proc.pid)
        finally:
            context.close()
    return {"file_mb": round(path.stat().st_size / 1e6, 1), "peak_gb": round(peak / 1e9, 2),
            "seconds": round(seconds, 1), "outcome": outcome}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--low-rows", type=int, default=20_000_000)
    args = parser.parse_args()
    rng = np.random.default_rng(33)
    results = {}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        d = Path(tmp)
        files = {"high": _write(d / "high.csv", rng.permutation(10**7)),
                 "limit": _write(d / "limit.csv", rng.permutation(10**6)),
                 "low": _write(d / "low.csv", rng.integers(0, 1000, args.low_rows))}
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            for name, path in files.items():
                results[name] = _case(browser, path, d / f"{name}.log")
        finally:
            browser.close()
    figure = max(r["peak_gb"] for r in results.values())
    print(json.dumps({"benchmark": "server memory on uploads (peak RSS, GB)", "figure": figure,
                      "target": TARGET_GB, "met": figure <= TARGET_GB,
                      "refused_high": results["high"]["outcome"].startswith("refused"),
                      "cases": results}, indent=2))


if __name__ == "__main__":
    main()
