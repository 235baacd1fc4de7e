"""Latency of the dashboard in headless Chromium. Prints JSON; not a test.

Run: python benchmarks/bench_dashboard.py           (a quiet machine)
     python benchmarks/bench_dashboard.py --busy    (two CPU-bound processes run alongside)

Runs the browser tests that record timings (``tests/e2e/test_dashboard.py`` and
``tests/e2e/test_large_upload.py``; they need Debian's ``chromium``) and reads the figures
they write to ``tests/e2e/artifacts/``. The tests assert only hang guards; the targets are
here:

* a Privacy-page slider move (ε or m) to the redrawn chart: median ≤ 1 s, none above 2.5 s,
  on a 3 000-row upload (``latency.json``; every control on a 60 000-row upload is
  ``live.json``'s, below);
* a 10^6-row upload, from handing the file to the browser to its profile: ≤ 5 s (one
  column, ``upload.json``; four columns on the lean path, ``large_upload.json``);
* an m-slider move on the 10^6-row upload: ≤ 1 s;
* on a 60 000-row, 4-column upload (``tests/e2e/test_live.py``, ``live.json``, issue 25):
  every slider and the family selector of the Privacy page in all three families ≤ 1 s
  quiet, ≤ 2 s busy; Compare with two numeric columns and R = 100 ≤ 3 s; Generate release
  ≤ 1 s (the ε sweep's 5 s target is benchmarks/bench_live.py's). The issue sets the busy
  target for the controls only: with ``--busy`` Compare and Generate are reported with their
  quiet-machine targets and ``"met": null``.
"""

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "tests" / "e2e" / "artifacts"
TARGETS = {"slider_median_s": 1.0, "slider_max_s": 2.5, "profile_s": 5.0}
LIVE_TARGETS = {"control_quiet_s": 1.0, "control_busy_s": 2.0, "compare_s": 3.0, "generate_s": 1.0}
TESTS = ["tests/e2e/test_dashboard.py", "tests/e2e/test_large_upload.py", "tests/e2e/test_live.py"]
BURN = "while True: pass"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", action="store_true", help="keep both cores busy with two other processes")
    busy = parser.parse_args().busy
    for name in ("latency.json", "upload.json", "large_upload.json", "live.json"):
        (ARTIFACTS / name).unlink(missing_ok=True)
    burners = [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(2 if busy else 0)]
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", *TESTS],
                              cwd=ROOT, capture_output=True, text=True)
    finally:
        for burner in burners:
            burner.kill()
    out = {"machine": "busy (two CPU-bound processes alongside)" if busy else "quiet",
           "targets": {**TARGETS, **LIVE_TARGETS}, "tests_passed": done.returncode == 0}
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
    live_path = ARTIFACTS / "live.json"
    if live_path.exists():
        live = json.loads(live_path.read_text())
        control_target = LIVE_TARGETS["control_busy_s" if busy else "control_quiet_s"]
        figures = {"privacy_controls_max_s": (live["privacy_max_s"], control_target),
                   "compare_two_numeric_columns_R100_s": (live["compare_s"], LIVE_TARGETS["compare_s"]),
                   "generate_release_s": (live["generate_s"], LIVE_TARGETS["generate_s"])}
        # Issue 25 gives a busy-machine target for the controls only (2 s); Compare's 3 s and
        # Generate's 1 s are quiet-machine targets: on a busy machine they are reported, not judged.
        quiet_only = {"compare_two_numeric_columns_R100_s", "generate_release_s"} if busy else set()
        out["live_60000_rows_4_columns"] = {
            name: ({"figure": round(value, 3), "quiet_machine_target": target, "met": None} if name in quiet_only
                   else {"figure": round(value, 3), "target": target, "met": value <= target})
            for name, (value, target) in figures.items()}
        out["live_60000_rows_4_columns"]["privacy_controls_s"] = live["privacy_controls_s"]
        met += [value <= target for name, (value, target) in figures.items() if name not in quiet_only]
    out["meets_targets"] = bool(met) and all(met) and out["tests_passed"]
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
