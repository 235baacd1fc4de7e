"""End-to-end: the real app in headless Chromium, as a user would drive it (issues 4, 8, 9, 10).

Check the singleton plateau on the sample's ``earnings`` column and its absence on ``age``
(no singleton), upload a CSV (and two bad ones), move the ε and m sliders on the Privacy
page and watch the δ curve and its singleton plateau update, timing slider-change-to-updated-chart
on the upload (recorded in ``artifacts/latency.json``; the 1 s target is
benchmarks/bench_dashboard.py's; e2e/test_live.py times every control on real-shaped data), screenshot the Privacy page for the README (only with
``BNP_SYNTH_SCREENSHOT=1``: the suite leaves the checkout clean), then generate a release,
download the CSV and both bundles, and replay the curator record's recipe with the command
line: it writes the same CSV, byte for byte. A separate test uploads 10^6 rows and times
the profile (``artifacts/upload.json``; target 5 s in the benchmark).
"""

from __future__ import annotations

import io
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import st_waits as w

REPO = Path(__file__).resolve().parents[2]
SCREENSHOT = REPO / "docs" / "privacy_page.png"
PLATEAU = "singleton plateau m/(m+θ+n−1)"
INSTANCE = "instance-level δ_x(ε) (paper)"
SELECTED = "selected (ε, m)"
LEAK = "read off the"       # the warning shown when bounds come from the confidential data
# Speed targets are benchmarks/bench_dashboard.py's (it runs these tests and reads the
# figures they record in artifacts/); the tests assert only hang guards, 10x those targets.
SLIDER_HANG_GUARD_S = 20.0  # one slider move to the redrawn chart (target: median 1 s)
PROFILE_HANG_GUARD_S = 50.0  # a 10^6-row upload to its profile (target: 5 s)
MILLION = 1_000_000


@pytest.fixture(scope="module")
def csv_files(tmp_path_factory):
    """A good upload with ties and singletons, and two bad ones."""
    d = tmp_path_factory.mktemp("uploads")
    rng = np.random.default_rng(20240601)
    income = np.round(rng.lognormal(2.5, 0.5, size=3000), 1)
    good = pd.DataFrame({"income": income, "region": rng.choice(["north", "south"], size=3000)})
    (d / "incomes.csv").write_text(good.to_csv(index=False))
    (d / "empty.csv").write_bytes(b"")
    (d / "text_in_numbers.csv").write_text("income\n12.5\n13.0\nabc\n9.5\n" + "11.0\n" * 20)
    return {"dir": d, "good": good}


def _upload(page, path: Path, expect_text: str) -> None:
    """Upload ``path`` and wait until the page shows ``expect_text`` (the run is over)."""
    w.upload(page, path)
    page.get_by_text(expect_text).first.wait_for()
    w.wait_for_idle(page)


def _metric(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text().strip()


def _measure_slider_latency(page, n: int, presses: int, *, singletons: bool = True) -> dict:
    """Press the m and ε sliders one step at a time; seconds from each key press until the
    charts show the new numbers: the "selected (ε, m)" marker of the ε-vs-m chart, drawn
    after the δ(ε) chart in the same run. Also checks the numbers: with singletons, the
    plateau is the singleton term of the new m; without, there is no plateau."""
    theta, m = _check_plateau(page, n, singletons)
    latencies = {"m": [], "eps": []}
    for i in range(presses):
        # up and down the log scale in turn: m stays near where it was (the later δ check needs it small)
        up = i % 2 == 0
        old_m, old_instance = w.first_value(page, SELECTED), w.first_value(page, INSTANCE)
        start = time.perf_counter()
        w.press_slider(page, "_w_m", "ArrowRight" if up else "ArrowLeft")
        w.wait_for_trace_change(page, SELECTED, old_m)
        latencies["m"].append(time.perf_counter() - start)
        w.wait_for_idle(page)
        old_value, m = m, int(w.select_slider_value(page, "_w_m"))    # the next point of the log scale
        assert (m > old_value if up else m < old_value) and w.first_value(page, SELECTED) == m
        if singletons:
            # the plateau moved to the singleton term of the new m, and δ moved with m
            assert w.first_value(page, PLATEAU) == pytest.approx(m / (m + theta + n - 1), rel=1e-9)
        new_instance = w.first_value(page, INSTANCE)
        # δ_x(ε) grows with m (NaN: 0, not drawable)
        assert not (new_instance < old_instance if up else new_instance > old_instance)
    eps = w.slider_value(page, "_w_eps")
    for _ in range(presses):
        old_eps = w.first_value(page, SELECTED, axis="x")
        start = time.perf_counter()
        w.press_slider(page, "_w_eps")
        w.wait_for_trace_change(page, SELECTED, old_eps, axis="x")
        latencies["eps"].append(time.perf_counter() - start)
        w.wait_for_idle(page)
    eps_now = w.slider_value(page, "_w_eps")
    assert eps_now == pytest.approx(eps + presses * 0.05)
    assert w.first_value(page, SELECTED, axis="x") == pytest.approx(eps_now)
    assert f"Guarantee at ε = {eps_now:g}, m = {m:,}" in page.locator("body").inner_text()
    assert not w.has_exception(page)
    every = latencies["m"] + latencies["eps"]
    return {"median_s": statistics.median(every), "max_s": max(every),
            "m_slider_s": latencies["m"], "eps_slider_s": latencies["eps"], "m": m}


def _check_plateau(page, n: int, singletons: bool) -> tuple[float, int]:
    """With singletons, the δ chart's plateau is the singleton term m/(m + θ + n − 1) of the
    page's θ and m; without, there is none. Returns (θ, m)."""
    w.wait_for_trace_change(page, INSTANCE, float("nan"))    # the δ chart is drawn (any value differs from NaN)
    theta = w.select_slider_value(page, "_w_theta")    # θ and m move on log scales
    m = int(w.select_slider_value(page, "_w_m"))
    if singletons:
        assert w.first_value(page, PLATEAU) == pytest.approx(m / (m + theta + n - 1), rel=1e-9)
    else:
        assert not w.has_trace(page, PLATEAU)
        assert w.has_trace(page, INSTANCE)
    return theta, m


def _check_no_hang(record: dict) -> None:
    for label, measured in record.items():
        if isinstance(measured, dict):
            assert measured["max_s"] <= SLIDER_HANG_GUARD_S, (label, record)


def _chosen_columns(box) -> list[str]:
    return box.locator("[data-tag]").evaluate_all("els => els.map(e => e.getAttribute('aria-label'))")


def _choose_column(page, column: str) -> None:
    """On the Data page, release ``column`` instead of the chosen one(s): pick it in the
    column multiselect (a react-aria combobox with one tag per chosen column), then remove
    every other tag."""
    box = page.locator(".st-key-_w_columns")
    field = box.locator('input[role="combobox"]')

    def add():
        field.click()
        field.fill(column)
        page.get_by_role("option", name=column, exact=True).click()

    w.rerun_after(page, add)
    page.keyboard.press("Escape")
    for other in [c for c in _chosen_columns(box) if c != column]:
        w.rerun_after(page, lambda: box.locator(f'button[aria-label="Remove {other}"]').click())
    w.wait_for_idle(page)
    assert _chosen_columns(box) == [column]


def test_dashboard_end_to_end(page, app_url, csv_files, artifacts_dir, tmp_path, run_ledger):
    run_ledger("upload: income")   # the public release is charged to the upload's budget (ui/ledger.py)
    good: pd.DataFrame = csv_files["good"]
    n = len(good)
    w.open_app(page, app_url)
    # the sidebar names every page by its title (no page shows as "app")
    nav = page.locator('[data-testid="stSidebarNav"] a').all_inner_texts()
    titles = [t.strip().splitlines()[-1].strip() for t in nav]    # the icon is on a line of its own
    assert titles[:6] == ["Data", "Privacy", "Synthetic data", "Compare", "Informativity", "Inference"], nav
    # served on localhost without a login: no refusal (issue 33: refused only when reachable by others)
    assert not [a for a in w.alert_texts(page) if "Not served" in a or "Refused" in a]
    # opens on the bundled earnings sample, with its shipped public bounds: no leak warning
    assert _metric(page, "records n") == "13,501"
    assert not [a for a in w.alert_texts(page) if LEAK in a]
    assert not w.has_exception(page)

    # ---------------------------------------------------------------- the Privacy page on the sample
    # (the sliders are moved on the upload below: slider latency is timed on real-shaped data
    # by e2e/test_live.py, issue 25; here one dataset is enough for the function)
    w.go_to_page(page, "Privacy")
    _check_plateau(page, 13_501, singletons=True)

    # ---------------------------------------------------------------- screenshot for the README
    # Written on request only (README): a test run must not rewrite a tracked file.
    shot = SCREENSHOT if os.environ.get("BNP_SYNTH_SCREENSHOT") else artifacts_dir / "privacy_page.png"
    height = page.evaluate("() => document.querySelector('[data-testid=stMainBlockContainer]').scrollHeight")
    page.set_viewport_size({"width": 1400, "height": int(height) + 120})
    w.wait_for_idle(page)
    w.wait_for_plots_to_fit(page)   # plotly relayouts after the resize
    page.screenshot(path=str(shot), full_page=True)
    page.set_viewport_size({"width": 1400, "height": 1000})
    assert shot.stat().st_size > 10_000

    # ---------------------------------------------------------------- the sample's age column
    # k = 10 values with multiplicities of 1 085 to 1 516 and no singleton (issue 8): no plateau.
    w.go_to_page(page, "Data")
    _choose_column(page, "age")
    age = pd.read_csv(REPO / "sample_data" / "cps_earnings.csv")["age"].value_counts()
    assert _metric(page, "distinct values k") == f"{age.size:,}" and _metric(page, "singletons k₁") == "0"
    w.go_to_page(page, "Privacy")
    _check_plateau(page, 13_501, singletons=False)
    assert not w.has_exception(page)

    # ---------------------------------------------------------------- bad uploads
    w.go_to_page(page, "Data")
    w.choose_radio(page, "Upload a CSV or Parquet file")
    _upload(page, csv_files["dir"] / "empty.csv", "is empty")
    alerts = " ".join(w.alert_texts(page))
    assert "empty" in alerts, alerts
    assert not w.has_exception(page)
    _upload(page, csv_files["dir"] / "text_in_numbers.csv", "non-numeric")
    alerts = " ".join(w.alert_texts(page))
    assert "non-numeric" in alerts and "'abc'" in alerts, alerts
    assert not w.has_exception(page)

    # ---------------------------------------------------------------- good upload
    _upload(page, csv_files["dir"] / "incomes.csv", "Profile of the confidential data")
    counts = good["income"].value_counts()
    assert _metric(page, "records n") == f"{n:,}"
    assert _metric(page, "distinct values k") == f"{counts.size:,}"
    assert _metric(page, "singletons k₁") == f"{int((counts == 1).sum()):,}"
    # an upload has no public bounds until the user types them: they are read off the data, and said so
    income = good["income"]
    leak = [a for a in w.alert_texts(page) if LEAK in a]
    assert len(leak) == 1 and f"({income.min():g}, {income.max():g})" in leak[0], leak
    assert not w.has_exception(page)

    # ---------------------------------------------------------------- privacy page on the upload
    w.go_to_page(page, "Privacy")
    assert "incomes.csv" in page.locator('[data-testid="stSidebar"]').inner_text()
    on_upload = _measure_slider_latency(page, n, presses=2)
    m = on_upload["m"]

    record = {f"upload incomes.csv (n = {n})": on_upload}
    (artifacts_dir / "latency.json").write_text(json.dumps(record, indent=2))
    print("slider-change-to-updated-chart latency:", json.dumps(record))
    _check_no_hang(record)

    # The δ target to its largest option, 0.1: T₁ = m/(m + θ + n − 1) ≈ 0.03 meets it, weakly
    # (n·δ > 0.01), so the public files are offered once the curator accepts that.
    w.rerun_after(page, lambda: w.press_slider(page, "_w_delta", "End"))
    assert "Verdict: weak" in page.locator('[data-testid="stAlert"]').filter(has_text="Verdict:").first.inner_text()

    # ---------------------------------------------------------------- synthetic data page
    w.go_to_page(page, "Synthetic data")
    w.press(page, "Generate release")
    w.wait_for_idle(page)
    assert _metric(page, "released rows m") == f"{m:,}"
    assert page.get_by_role("button", name="Download public release (zip)").is_disabled()
    for consequence in ("the guarantee is weak", "the bounds were read off the confidential data"):
        w.rerun_after(page, lambda: page.get_by_text(f"I accept that {consequence}").click())
    assert page.get_by_role("button", name="Download public release (zip)").is_enabled()
    downloaded = {}
    for button, name in (("Download synthetic CSV", "synthetic.csv"),
                         ("Download public release (zip)", "public_release.zip"),
                         ("Download CONFIDENTIAL curator record (zip)", "CONFIDENTIAL_curator_record.zip")):
        with page.expect_download() as info:
            page.get_by_role("button", name=button).click()
        assert info.value.suggested_filename == name
        target = tmp_path / name
        info.value.save_as(str(target))
        downloaded[name] = target.read_bytes()
    synthetic = pd.read_csv(io.BytesIO(downloaded["synthetic.csv"]))
    assert list(synthetic.columns) == ["income"]
    assert len(synthetic) == m
    values = synthetic["income"].to_numpy(float)
    assert np.all(np.isfinite(values))
    # bounds were read off the data (the app warns): H = uniform on [min, max]
    assert values.min() >= good["income"].min() and values.max() <= good["income"].max()
    # θ = 2 and n = 3000: almost every released value is an old one
    assert np.isin(values, good["income"].to_numpy()).mean() > 0.9
    assert not w.has_exception(page)

    # ---------------------------------------------------------------- the command line replays the bundle
    # The public release carries the same synthetic.csv; the curator record carries the full
    # recipe (with its seed), which the command line runs on the same file (issue 10).
    with zipfile.ZipFile(io.BytesIO(downloaded["public_release.zip"])) as public:
        assert public.read("synthetic.csv") == downloaded["synthetic.csv"]
        release_json = json.loads(public.read("release.json"))
        assert release_json["strength"] == "weak"
        assert release_json["acknowledged"] == ["bounds_from_data", "weak"]
    with zipfile.ZipFile(io.BytesIO(downloaded["CONFIDENTIAL_curator_record.zip"])) as curator:
        recipe = tmp_path / "CONFIDENTIAL_recipe.json"
        recipe.write_bytes(curator.read("CONFIDENTIAL_recipe.json"))
    shown = page.locator('[data-testid="stCode"]').filter(has_text="--recipe").first.inner_text()
    assert "release --recipe CONFIDENTIAL_recipe.json incomes.csv --out synthetic.csv" in shown, shown
    # the command as shown, with the acknowledgements --out needs (it passes the publication gate)
    replay = tmp_path / "replayed.csv"
    files = {"CONFIDENTIAL_recipe.json": str(recipe), "incomes.csv": str(csv_files["dir"] / "incomes.csv"),
             "synthetic.csv": str(replay)}
    command = shlex.split(" ".join(shown.split()))
    assert command[:3] == ["python", "-m", "core"] and "--acknowledge" in command, command
    done = subprocess.run([sys.executable, "-m", "core", *[files.get(arg, arg) for arg in command[3:]]],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert done.returncode == 0, done.stderr
    assert replay.read_bytes() == downloaded["synthetic.csv"]


def test_million_row_upload_is_profiled_quickly(page, app_url, artifacts_dir, tmp_path):
    """A 10^6-row upload (about 3·10^4 distinct values, large counts) is profiled within
    a hang guard (the target is benchmarks/bench_dashboard.py's), counted from handing the file to the browser to the profile shown."""
    rng = np.random.default_rng(7)
    values = np.round(rng.lognormal(9.0, 1.0, size=MILLION)).astype(np.int64) // 3   # 34 045 distinct
    path = tmp_path / "million.csv"
    path.write_text("amount\n" + "\n".join(map(str, values.tolist())) + "\n")
    counts = pd.Series(values).value_counts()
    w.open_app(page, app_url)
    w.choose_radio(page, "Upload a CSV or Parquet file")
    uploader = page.locator(w.UPLOADER)
    uploader.wait_for(state="attached", timeout=90_000)
    w.wait_for_idle(page)
    start = time.perf_counter()
    uploader.set_input_files(str(path))
    page.locator('[data-testid="stMetric"]').filter(has_text="records n").filter(
        has_text=f"{MILLION:,}").first.wait_for(timeout=120_000)
    profiled = time.perf_counter() - start
    w.wait_for_idle(page, 120_000)
    idle = time.perf_counter() - start
    assert _metric(page, "distinct values k") == f"{counts.size:,}"
    assert _metric(page, "singletons k₁") == f"{int((counts == 1).sum()):,}"
    assert _metric(page, "largest multiplicity") == f"{int(counts.max()):,}"
    assert not w.has_exception(page)
    record = {"rows": MILLION, "distinct": int(counts.size), "file_bytes": path.stat().st_size,
              "seconds_to_profile": round(profiled, 2), "seconds_to_idle": round(idle, 2),
              "hang_guard_s": PROFILE_HANG_GUARD_S}
    (artifacts_dir / "upload.json").write_text(json.dumps(record, indent=2))
    print("10^6-row upload:", json.dumps(record))
    assert profiled <= PROFILE_HANG_GUARD_S, record
