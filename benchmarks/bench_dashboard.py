"""Latency of the dashboard in headless Chromium. Prints JSON; not a test.

Run: python benchmarks/bench_dashboard.py

Runs the browser tests that record timings (``tests/e2e/test_dashboard.py`` and
``tests/e2e/test_large_upload.py``; they need Debian's ``chromium``) and reads the figures
they write to ``tests/e2e/artifacts/``. The tests assert only hang guards; the targets are
here:

* a Privacy-page slider move (ε or m) to the redrawn chart: median ≤ 1 s, none above 2.5 s,
  on the sample's ``earnings`` and ``age`` columns and on an upload;
* a 10^6-row upload, from handing the file to the browser to its profile: ≤ 5 s (one
  column, ``upload.json``; four columns on the lean path, ``large_upload.json``);
* an m-slider move on the 10^6-row upload: ≤ 1 s.
"""

import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "tests" / "e2e" / "artifacts"
TARGETS = {"slider_median_s": 1.0, "slider_max_s": 2.5, "profile_s": 5.0}
TESTS = ["tests/e2e/test_dashboard.py", "tests/e2e/test_large_upload.py"]


def main():
    for name in ("latency.json", "upload.json", "large_upload.json"):
        (ARTIFACTS / name).unlink(missing_ok=True)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *TESTS], cwd=ROOT,
                          capture_output=True, text=True)
    out = {"targets": TARGETS, "tests_passed": done.returncode == 0}
    if done.returncode != 0:
        out["pytest_tail"] = done.stdout[-2000:]
    met = []
    latency_path = ARTIFACTS / "latency.json"
    if latency_path.exists():
        sliders = {label: {"median_s": round(v["median_s"], 3), "max_s": round(v["max_s"], 3)}
                   for label, v in json.loads(latency_path.read_text()).items() if isinstance(v, dict)}
        out["privacy_sliders"] = sliders
        met += [v["median_s"] <= TARGETS["slider_median_s"] and v["max_s"] <= TARGETS["slider_max_s"]
                for v in sliders.values()]
    upload_path = ARTIFACTS / "upload.json"
    if upload_path.exists():
        upload = json.loads(upload_path.read_text())
        out["million_row_upload_one_column_s"] = upload["seconds_to_profile"]
        met.append(upload["seconds_to_profile"] <= TARGETS["profile_s"])
    large_path = ARTIFACTS / "large_upload.json"
    if large_path.exists():
        large = json.loads(large_path.read_text())
        out["million_row_upload_four_columns_s"] = large["csv"]["seconds_to_profile"]
        out["million_row_upload_m_slider_median_s"] = statistics.median(large["privacy_m_slider_s"])
        met += [large["csv"]["seconds_to_profile"] <= TARGETS["profile_s"],
                out["million_row_upload_m_slider_median_s"] <= TARGETS["slider_median_s"]]
    out["meets_targets"] = bool(met) and all(met) and out["tests_passed"]
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
