"""End-to-end: the Informativity and Inference pages (issue 5) in headless Chromium.

Open each page, run it with small settings through its form, check the plot and the
table the browser shows, and download the tables. The numbers are cross-checked inside
the browser's own data: the slope shown against a refit of the plotted curve, the
downloaded tables against the plotted points and against the bundled sample.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import st_waits as w
from core.release import ReleaseRecipe, run_recipe

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_data" / "cps_earnings.csv"
PUBLIC_BOUNDS_FILE = REPO / "sample_data" / "public_bounds.json"


def _metric(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text().strip()


def _set_number(page, key: str, value) -> None:
    """Type into the number input created with ``key`` and leave it (inside a form the value
    is only sent with the form, so no rerun is expected)."""
    box = page.locator(f'.st-key-{key} input').first
    box.fill(str(value))
    box.press("Tab")


def _set_number_now(page, key: str, value) -> None:
    """Type into a number input outside a form and wait for the rerun it causes."""
    box = page.locator(f'.st-key-{key} input').first
    w.rerun_after(page, lambda: (box.fill(str(value)), box.press("Enter")))
    w.wait_for_idle(page)


def _download(page, label: str, target: Path, *, confidential: bool = True) -> pd.DataFrame:
    with page.expect_download() as info:
        page.get_by_role("button", name=label).click()
    info.value.save_as(str(target))
    # a curator-only table starts with a "# CONFIDENTIAL" line; the analyst's (from the release) does not
    assert target.read_text(encoding="utf-8").startswith("# CONFIDENTIAL") is confidential
    return pd.read_csv(target, comment="#" if confidential else None)


def _generated_release(page, target: Path) -> pd.DataFrame:
    """Press "Generate release" on the Synthetic data page: the release, as its CONFIDENTIAL curator
    record states it (the record's recipe, secret seed included, run by core). No page offers a
    file of released rows outside the publication gate, the Inference page none at all."""
    w.go_to_page(page, "Synthetic data")
    w.press(page, "Generate release", timeout=120_000)
    w.wait_for_idle(page)
    with page.expect_download() as info:
        page.get_by_role("button", name="Download CONFIDENTIAL curator record (zip)").click()
    info.value.save_as(str(target))
    with zipfile.ZipFile(target) as zf:
        recipe = ReleaseRecipe.from_json(zf.read("CONFIDENTIAL_recipe.json").decode("utf-8"))
    return run_recipe(recipe).synthetic


def _tables_visible(page) -> int:
    return page.locator('[data-testid="stDataFrame"]').count()


def test_informativity_page(page, app_url, artifacts_dir):
    w.open_app(page, app_url)
    w.go_to_page(page, "Informativity")
    assert not w.has_exception(page)
    # the page runs once with its defaults
    w.figure_with_title(page, "Informativity")

    # small settings: m = ⌈0.1·n⌉, n from 100 to 3 000 on 4 points, 30 runs
    w.rerun_after(page, lambda: page.get_by_text("m = ⌈c·n^a⌉", exact=True).click())
    w.wait_for_idle(page)
    _set_number(page, "_w_inf_n_max", 3000)
    _set_number(page, "_w_inf_points", 4)
    _set_number(page, "_w_inf_runs", 30)
    w.press(page, "Run experiment")
    w.wait_for_idle(page)
    assert not w.has_exception(page)
    assert not [a for a in w.alert_texts(page) if "cannot be run" in a]

    fig = w.figure_with_title(page, "Informativity")
    curve = next(t for t in fig["traces"]
                 if t["name"].startswith("m = ⌈0.1·n^1⌉ (slope") and not t["name"].endswith("band"))
    n, mean = np.asarray(curve["x"]), np.asarray(curve["y"])
    assert n.tolist() == np.rint(np.geomspace(100, 3000, 4)).tolist()   # 100, 311, 965, 3000
    slope = float(_metric(page, "fitted log–log slope"))
    assert slope == pytest.approx(np.polyfit(np.log(n), np.log(mean), 1)[0], abs=5e-4)
    assert -0.8 < slope < -0.2
    reference = w.trace(fig, "reference n^-0.5")
    assert np.diff(np.log(reference["y"]))[0] / np.diff(np.log(reference["x"]))[0] == pytest.approx(-0.5)
    assert _tables_visible(page) >= 1

    table = _download(page, "Download the table (CSV)", artifacts_dir / "informativity.csv")
    assert table["n"].tolist() == n.tolist()
    assert table["m"].tolist() == [-(-int(v) // 10) for v in n]
    assert (table["runs"] == 30).all()
    np.testing.assert_allclose(table["mean"], mean, rtol=1e-9)
    assert (table["lower"] < table["mean"]).all() and (table["mean"] < table["upper"]).all()
    assert not w.has_exception(page)


def test_inference_page(page, app_url, artifacts_dir):
    earnings = pd.read_csv(SAMPLE)["earnings"].to_numpy(float)
    lo, hi = json.loads(PUBLIC_BOUNDS_FILE.read_text())["cps_earnings.csv"]["earnings"]
    w.open_app(page, app_url)
    w.go_to_page(page, "Inference")
    assert "Generate a release on the Synthetic data page first" in " ".join(w.alert_texts(page))
    before = _generated_release(page, artifacts_dir / "CONFIDENTIAL_record_before.zip")
    w.go_to_page(page, "Inference")
    assert not w.has_exception(page)
    # the sample's public bounds are the base measure's support, not the data's range
    assert f"H is uniform on [{lo:.6g}, {hi:.6g}]" in page.locator("body").inner_text()
    assert not [a for a in w.alert_texts(page) if "read off the" in a]
    assert _metric(page, "released values m") == "100"
    assert any("Curator-only" in a for a in w.alert_texts(page))
    w.figure_with_title(page, "Posterior of the functionals")

    assert page.get_by_role("button", name="Download the release Z (CSV)").count() == 0

    # another press of "Generate release": a fresh secret seed, another release analysed
    release = _generated_release(page, artifacts_dir / "CONFIDENTIAL_record.zip")
    w.go_to_page(page, "Inference")
    assert len(release) == 100 and not release.equals(before)
    z = release["earnings"].to_numpy(float)
    assert lo <= z.min() and z.max() <= hi

    # a user-chosen threshold t
    _set_number_now(page, "_w_post_threshold", 20)
    curator = _download(page, "Download the posterior summary with the confidential values (CSV, curator only)",
                        artifacts_dir / "posterior_curator.csv")
    assert curator["functional"].tolist() == ["mean", "Q1 (25%)", "median", "Q3 (75%)", "P(X > 20)"]
    truth = [earnings.mean(), *np.quantile(earnings, [0.25, 0.5, 0.75], method="inverted_cdf"),
             (earnings > 20).mean()]
    np.testing.assert_allclose(curator["confidential"], truth, rtol=1e-9)
    assert (curator["lower"] <= curator["posterior_mean"]).all()
    assert (curator["posterior_mean"] <= curator["upper"]).all()
    analyst = _download(page, "Download the posterior summary (CSV)", artifacts_dir / "posterior.csv",
                        confidential=False)
    assert "confidential" not in analyst.columns
    np.testing.assert_allclose(analyst["posterior_mean"], curator["posterior_mean"], rtol=1e-12)
    fig = w.figure_with_title(page, "Posterior of the functionals")
    np.testing.assert_allclose(w.trace(fig, "confidential value (curator only)")["x"], truth[:4], rtol=1e-9)

    # repeated releases with small settings
    _set_number(page, "_w_rep_replicates", 20)
    _set_number(page, "_w_rep_draws", 200)
    w.press(page, "Run repeated releases")
    w.wait_for_idle(page)
    assert not w.has_exception(page)
    assert "R = 20 releases" in page.locator("body").inner_text()
    coverage = w.figure_with_title(page, "Coverage")
    repeated = _download(page, "Download the repeated-release table (CSV, curator only)",
                         artifacts_dir / "repeated_releases.csv")
    assert repeated["functional"].tolist() == curator["functional"].tolist()
    np.testing.assert_allclose(repeated["confidential"], truth, rtol=1e-9)
    np.testing.assert_allclose(w.trace(coverage, "coverage")["y"], repeated["coverage"], rtol=1e-12)
    assert ((repeated["coverage"] >= 0) & (repeated["coverage"] <= 1)).all()
    assert (repeated["rmse"] >= repeated["bias"].abs() - 1e-12).all()
    assert _tables_visible(page) >= 3
    assert not w.has_exception(page)
