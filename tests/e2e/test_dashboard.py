"""End-to-end: the real app in headless Chromium, as a user would drive it (issue 4).

Upload a CSV (and two bad ones), move the ε and m sliders on the Privacy page and watch
the δ curve and its singleton plateau update, time slider-change-to-updated-chart,
screenshot the Privacy page for the README (only with ``BNP_SYNTH_SCREENSHOT=1``: the
suite leaves the checkout clean), then generate and download a release and check the
downloaded CSV has m rows of plausible values.
"""

from __future__ import annotations

import json
import os
import statistics
import time
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
LATENCY_TARGET_S = 1.0      # issue 4 target; recorded in artifacts/latency.json
LATENCY_LIMIT_S = 2.0       # regression guard on a shared 2-core machine


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
    w.rerun_after_idempotent(page, lambda: page.locator('[data-testid="stFileUploader"] input[type="file"]')
                             .set_input_files(str(path)))
    page.get_by_text(expect_text).first.wait_for()
    w.wait_for_idle(page)


def _metric(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text().strip()


def _measure_slider_latency(page, n: int, presses: int) -> dict:
    """Press the m and ε sliders one step at a time; seconds from each key press until the
    chart shows the new numbers. Also checks those numbers (plateau, selected ε)."""
    theta = w.slider_value(page, "_w_theta")
    m = int(w.slider_value(page, "_w_m"))
    assert w.first_value(page, PLATEAU) == pytest.approx(m / (m + theta + n - 1), rel=1e-9)
    latencies = {"m": [], "eps": []}
    for _ in range(presses):
        old_plateau, old_instance = w.first_value(page, PLATEAU), w.first_value(page, INSTANCE)
        start = time.perf_counter()
        w.press_slider(page, "_w_m")
        w.wait_for_trace_change(page, PLATEAU, old_plateau)
        latencies["m"].append(time.perf_counter() - start)
        w.wait_for_idle(page)
        m += 1
        assert int(w.slider_value(page, "_w_m")) == m
        # the plateau moved to the singleton term of the new m, and δ grew with m
        assert w.first_value(page, PLATEAU) == pytest.approx(m / (m + theta + n - 1), rel=1e-9)
        assert w.first_value(page, INSTANCE) >= old_instance
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


def test_dashboard_end_to_end(page, app_url, csv_files, artifacts_dir):
    good: pd.DataFrame = csv_files["good"]
    n = len(good)
    w.open_app(page, app_url)
    # the sidebar names every page by its title (no page shows as "app")
    nav = page.locator('[data-testid="stSidebarNav"] a').all_inner_texts()
    titles = [t.strip().splitlines()[-1].strip() for t in nav]    # the icon is on a line of its own
    assert titles == ["Data", "Privacy", "Synthetic data", "Compare", "Informativity", "Inference"], nav
    # served on localhost without a login: no warning banner
    assert not [a for a in w.alert_texts(page) if "Not protected" in a]
    # opens on the bundled earnings sample, with its shipped public bounds: no leak warning
    assert _metric(page, "records n") == "13,501"
    assert not [a for a in w.alert_texts(page) if LEAK in a]
    assert not w.has_exception(page)

    # ---------------------------------------------------------------- latency on the sample data
    w.go_to_page(page, "Privacy")
    on_sample = _measure_slider_latency(page, 13_501, presses=5)

    # ---------------------------------------------------------------- screenshot for the README
    # Written on request only (README): a test run must not rewrite a tracked file.
    shot = SCREENSHOT if os.environ.get("BNP_SYNTH_SCREENSHOT") else artifacts_dir / "privacy_page.png"
    height = page.evaluate("() => document.querySelector('[data-testid=stMainBlockContainer]').scrollHeight")
    page.set_viewport_size({"width": 1400, "height": int(height) + 120})
    w.wait_for_idle(page)
    page.wait_for_timeout(1000)   # plotly relayout after the resize
    page.screenshot(path=str(shot), full_page=True)
    page.set_viewport_size({"width": 1400, "height": 1000})
    assert shot.stat().st_size > 10_000

    # ---------------------------------------------------------------- bad uploads
    w.go_to_page(page, "Data")
    w.rerun_after_idempotent(page, lambda: page.get_by_text("Upload a CSV", exact=True).click())
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
    on_upload = _measure_slider_latency(page, n, presses=3)
    m = on_upload["m"]

    record = {"target_s": LATENCY_TARGET_S,
              "sample cps_earnings.csv (n = 13501)": on_sample,
              f"upload incomes.csv (n = {n})": on_upload}
    (artifacts_dir / "latency.json").write_text(json.dumps(record, indent=2))
    print("slider-change-to-updated-chart latency:", json.dumps(record))
    assert on_sample["median_s"] <= LATENCY_LIMIT_S, record
    assert on_upload["median_s"] <= LATENCY_LIMIT_S, record

    # ---------------------------------------------------------------- synthetic data page
    w.go_to_page(page, "Synthetic data")
    w.rerun_after(page, lambda: page.get_by_role("button", name="Generate release").click())
    w.wait_for_idle(page)
    assert _metric(page, "released rows m") == f"{m:,}"
    with page.expect_download() as info:
        page.get_by_role("button", name="Download synthetic CSV").click()
    target = artifacts_dir / "synthetic.csv"
    info.value.save_as(str(target))
    synthetic = pd.read_csv(target)
    assert list(synthetic.columns) == ["income"]
    assert len(synthetic) == m
    values = synthetic["income"].to_numpy(float)
    assert np.all(np.isfinite(values))
    # bounds were read off the data (the app warns): H = uniform on [min, max]
    assert values.min() >= good["income"].min() and values.max() <= good["income"].max()
    # θ = 2 and n = 3000: almost every released value is an old one
    assert np.isin(values, good["income"].to_numpy()).mean() > 0.9
    assert not w.has_exception(page)
