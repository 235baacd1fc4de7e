"""Browser test: a file with missing values, chosen column by column on the Data page and
released (docs/mathematics.md §2.5).

The upload has 40 % missing cells in a numeric column and 12 in a categorical one. The page
blocks each column until its panel says what a missing cell means, shows the count, and
releases under "missing is a value" (n kept) and "drop records with a missing value" (n
counted after dropping, said on the page). Screenshots go to ``tests/e2e/artifacts/``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from st_waits import (
    alert_texts,
    choose_radio,
    go_to_page,
    has_exception,
    open_app,
    press,
    rerun_after,
    upload,
    wait_for_idle,
)

N = 400


@pytest.fixture(scope="module")
def wages_csv(tmp_path_factory):
    rng = np.random.default_rng(8)
    wage = pd.array(rng.integers(10, 60, N), dtype="Int64")
    wage[rng.choice(N, 160, replace=False)] = pd.NA
    lang = pd.Series(rng.choice(["en", "fr", "de"], N), dtype=object)
    lang[rng.choice(N, 12, replace=False)] = None
    path = tmp_path_factory.mktemp("missing") / "wages_with_gaps.csv"
    pd.DataFrame({"wage": wage, "lang": lang}).to_csv(path, index=False)
    return path, int((wage.isna() | lang.isna()).sum())


def _choose_in_panel(page, column: str, count_text: str, option: str) -> None:
    """Click ``option`` in the missing-value radio of ``column``'s panel (opened first if it
    is closed), whose label holds ``count_text``."""
    wait_for_idle(page)
    radio = page.locator('[data-testid="stRadio"]', has_text=count_text)
    radio.wait_for(state="attached")
    if not radio.is_visible():   # a panel with its choice made is closed when several columns are
        page.locator('[data-testid="stExpander"] summary', has_text=f"Column '{column}'").click()
        radio.wait_for(state="visible")
    rerun_after(page, lambda: radio.get_by_text(option, exact=False).first.click())


def _records_n(page) -> str:
    metric = page.locator('[data-testid="stMetric"]', has_text="records n")
    metric.wait_for(state="visible")
    return metric.locator('[data-testid="stMetricValue"]').inner_text().strip()


def test_missing_values_are_chosen_per_column_and_released(page, app_url, wages_csv, artifacts_dir):
    path, with_a_gap = wages_csv
    open_app(page, app_url)
    choose_radio(page, "Upload a CSV", timeout=120_000)
    upload(page, path)
    assert not has_exception(page)
    alerts = " ".join(alert_texts(page))
    assert "missing is a value" in alerts and "drop records with a missing value" in alerts
    panel = page.locator('[data-testid="stExpander"]', has_text="Column 'wage'")
    panel.screenshot(path=str(artifacts_dir / "missing_values_panel.png"))
    page.locator('[data-testid="stAlert"]', has_text="missing is a value").first.screenshot(
        path=str(artifacts_dir / "missing_values_message.png"))

    _choose_in_panel(page, "wage", "160 record(s)", "missing is a value")
    assert _records_n(page) == f"{N:,}"

    # add the categorical column: blocked until its own panel says what a gap means
    combobox = page.locator(".st-key-_w_columns input[role='combobox']")
    combobox.click()
    combobox.fill("lang")
    rerun_after(page, page.get_by_role("option", name="lang", exact=True).click)
    page.keyboard.press("Escape")
    wait_for_idle(page)
    assert "column 'lang' has 12 missing value(s)" in " ".join(alert_texts(page))
    _choose_in_panel(page, "lang", "12 record(s)", "drop records with a missing value")
    assert _records_n(page) == f"{N - 12:,}"
    assert any("12 of the 400 records were dropped" in text for text in alert_texts(page))
    page.screenshot(path=str(artifacts_dir / "missing_values_data_page.png"), full_page=True)

    _choose_in_panel(page, "wage", "160 record(s)", "drop records with a missing value")
    assert _records_n(page) == f"{N - with_a_gap:,}"

    go_to_page(page, "Synthetic data")
    press(page, "Generate release")
    assert not has_exception(page)
    assert any(f"{with_a_gap:,} of the {N:,} records read were dropped" in text for text in alert_texts(page))
    page.screenshot(path=str(artifacts_dir / "missing_values_release.png"), full_page=True)
