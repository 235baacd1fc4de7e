"""End-to-end: real multi-column microdata in Chromium (issue 14).

Upload a 4-column CSV (two numeric, two categorical; 5 000 rows made in tmp_path), release
all four columns, open the coarsening advisor, evaluate and apply a candidate (the profile
shows fewer singletons and the applied coarsening), run the Release planner on the
advisor's frontier and load its settings, then generate a release on the Synthetic data
page and download the quality report (CSV).
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

import st_waits as w

N = 5000
COLUMNS = ["wage", "exper", "educ", "region"]
QUALITY_BUTTON = "Download quality report (CSV)"


@pytest.fixture(scope="module")
def wage_csv(tmp_path_factory):
    rng = np.random.default_rng(14)
    frame = pd.DataFrame({"wage": np.round(rng.lognormal(6.5, 0.6, N), 2),
                          "exper": rng.integers(0, 45, N),
                          "educ": rng.choice([f"level_{i}" for i in range(7)], N),
                          "region": rng.choice(["north", "south", "east", "west"], N)})
    path = tmp_path_factory.mktemp("microdata") / "wages.csv"
    frame.to_csv(path, index=False)
    return path


def _metric(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text().strip()


def _add_column(page, column: str) -> None:
    """Type the column's name in the columns multiselect and click its option."""
    combobox = page.locator(".st-key-_w_columns input[role='combobox']")
    combobox.click()
    combobox.fill(column)
    w.rerun_after(page, page.get_by_role("option", name=column, exact=True).click)
    page.keyboard.press("Escape")
    w.wait_for_idle(page)


def _click(page, name: str, timeout: float = 120_000) -> None:
    w.press(page, name, timeout=timeout)
    w.wait_for_idle(page)


def test_upload_advisor_planner_and_quality_report(page, app_url, wage_csv, tmp_path):
    w.open_app(page, app_url)
    w.choose_radio(page, "Upload a CSV", timeout=120_000)
    w.upload(page, wage_csv)
    page.get_by_text("Profile of the confidential data").first.wait_for()
    w.wait_for_idle(page)
    box = page.locator(".st-key-_w_columns")
    for column in COLUMNS:
        chosen = box.locator("[data-tag]").evaluate_all("els => els.map(e => e.getAttribute('aria-label'))")
        if column not in chosen:
            _add_column(page, column)
    assert _metric(page, "records n") == f"{N:,}"
    before = int(_metric(page, "singletons k₁").replace(",", ""))
    assert before > 0.9 * N   # four columns: almost every record is a singleton
    assert not w.has_exception(page)

    # ---------------------------------------------------------------- coarsening advisor
    page.get_by_text("Coarsening advisor (singleton-aware)", exact=True).click()
    _click(page, "Evaluate candidates")
    page.get_by_text("Best candidates").first.wait_for()
    alerts = " ".join(w.alert_texts(page))
    assert "looking at the" in alerts and "confidential data" in alerts   # the selection caveat
    fig = w.figure_with_title(page, "Coarsening candidates")
    assert len(w.trace(fig, "frontier")["x"]) >= 1
    _click(page, "Apply this coarsening")
    page.get_by_text("Coarsening applied before the transforms", exact=False).first.wait_for()
    after = int(_metric(page, "singletons k₁").replace(",", ""))
    assert after < before, (before, after)
    assert "depends on the confidential data" in " ".join(w.alert_texts(page))
    assert not w.has_exception(page)

    # ---------------------------------------------------------------- release planner
    w.go_to_page(page, "Release planner")
    assert "computed from the confidential data" in " ".join(w.alert_texts(page))
    w.choose_radio(page, "the advisor's frontier")
    _click(page, "Run planner")
    alerts = " ".join(w.alert_texts(page))
    # seeded plan on fixed data: the default targets (a quarter of each column's SD) are met
    assert "Recommended:" in alerts, alerts
    assert not w.has_exception(page)
    _click(page, "Load these settings")
    assert "Loaded:" in " ".join(w.alert_texts(page))

    # ---------------------------------------------------------------- quality report
    w.go_to_page(page, "Synthetic data")
    _click(page, "Generate release")
    assert not w.has_exception(page)
    button = page.get_by_role("button", name=QUALITY_BUTTON)
    button.wait_for()
    with page.expect_download() as info:
        button.click()
    target = tmp_path / info.value.suggested_filename
    info.value.save_as(str(target))
    text = target.read_text(encoding="utf-8")
    report = pd.read_csv(io.StringIO(text), comment="#")
    assert len(report) > 0
    assert all(c in text for c in COLUMNS), text[:500]
