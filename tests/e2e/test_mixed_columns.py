"""End-to-end: Compare, Inference and Audit on a mixed selection (2 numeric + 1 categorical column).

Upload a CSV made in tmp_path (wage and exper numeric, region categorical, with singletons:
distinct wages and one record in a region of its own), choose the three columns and run,
in headless Chromium: the Compare page with a small R (numeric columns by W1 in original
units, the categorical one by total variation, the histogram baselines skipped with a message
naming the column without a public category list), the Inference page on the categorical
column (posterior of P(X = c)) and the Audit page's trade-off curves and disclosure risk.
No exception anywhere.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

import st_waits as w

N = 200
COLUMNS = ["wage", "exper", "region"]


@pytest.fixture(scope="module")
def mixed_csv(tmp_path_factory):
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"wage": np.round(rng.lognormal(6.5, 0.6, N), 2),     # nearly all distinct: singletons
                          "exper": rng.integers(0, 45, N),
                          "region": rng.choice(["north", "south", "east", "west"], N)})
    frame.loc[0, "region"] = "island"                                         # a singleton category
    path = tmp_path_factory.mktemp("mixed") / "mixed.csv"
    frame.to_csv(path, index=False)
    return path


def _add_column(page, column: str) -> None:
    combobox = page.locator(".st-key-_w_columns input[role='combobox']")
    combobox.click()
    combobox.fill(column)
    w.rerun_after(page, page.get_by_role("option", name=column, exact=True).click)
    page.keyboard.press("Escape")
    w.wait_for_idle(page)


def _shot(page, name: str, artifacts_dir) -> None:
    """A full-page screenshot to look at, on request (BNP_SYNTH_SCREENSHOT=1)."""
    if os.environ.get("BNP_SYNTH_SCREENSHOT"):
        # the app scrolls inside its main container: a tall viewport shows the whole page
        size = page.viewport_size
        page.set_viewport_size({"width": size["width"], "height": 7000})
        height = page.evaluate("() => Math.max(...Array.from(document.querySelectorAll('[data-testid=stMain] *'),"
                               " e => e.getBoundingClientRect().bottom))")
        for i in range(int(min(height, 7000) // 1000) + 1):   # bands of 1000 px, readable one by one
            page.screenshot(path=str(artifacts_dir / f"mixed_{name}_{i}.png"),
                            clip={"x": 0, "y": 1000 * i, "width": size["width"], "height": 1000})
        page.set_viewport_size(size)


def test_compare_inference_and_audit_on_mixed_columns(page, app_url, mixed_csv, artifacts_dir):
    w.open_app(page, app_url)
    w.choose_radio(page, "Upload a CSV or Parquet file", timeout=120_000)
    w.upload(page, mixed_csv)
    page.get_by_text("Profile of the confidential data").first.wait_for()
    w.wait_for_idle(page)
    box = page.locator(".st-key-_w_columns")
    for column in COLUMNS:
        chosen = box.locator("[data-tag]").evaluate_all("els => els.map(e => e.getAttribute('aria-label'))")
        if column not in chosen:
            _add_column(page, column)
    assert not w.has_exception(page)

    # ---------------------------------------------------------------- Compare
    w.go_to_page(page, "Compare")
    w.rerun_after(page, lambda: w.press_slider(page, "_w_runs", "Home"))     # the smallest R
    alerts = " ".join(w.alert_texts(page))
    assert "'region'" in alerts and "public category list" in alerts, alerts
    assert "choose numeric columns" not in alerts
    w.press(page, "Run comparison", timeout=120_000)
    tv = w.figure_with_title(page, "region: total variation", timeout=60.0)
    labels = {t["name"] for t in tv["traces"] if t["name"]}
    assert any("PYPP" in label for label in labels) and any("Bootstrap" in label for label in labels), labels
    assert all(0.0 <= v <= 1.0 for t in tv["traces"] for v in t["x"])        # horizontal boxes: values on x
    wage = w.figure_with_title(page, "wage: W1 in original units", timeout=30.0)
    assert max(v for t in wage["traces"] for v in t["x"]) > 1.0   # original units, not [0, 1]
    w.figure_with_title(page, "joint W1 over all columns", timeout=30.0)
    shares = w.figure_with_title(page, "region: category shares", timeout=30.0)
    assert "north" in shares["traces"][0]["x"]
    assert not w.has_exception(page)
    _shot(page, "compare", artifacts_dir)

    # ---------------------------------------------------------------- Inference on the categorical column
    w.go_to_page(page, "Synthetic data")   # the Inference page analyses the release drawn there
    w.press(page, "Generate release", timeout=120_000)
    w.wait_for_idle(page)
    w.go_to_page(page, "Inference")
    page.get_by_text("Evaluating:", exact=False).first.wait_for()   # the banner names the release (issue 36)
    select = page.locator(".st-key-_w_post_column")
    # the banner moved the select to the fold: bring it into view before opening its list
    select.scroll_into_view_if_needed()
    w.wait_for_idle(page)
    select.click()
    w.rerun_after(page, page.get_by_role("option", name="region", exact=True).click)
    w.wait_for_idle(page)
    fig = w.figure_with_title(page, "Posterior of the functionals of region", timeout=60.0)
    names = {y for t in fig["traces"] for y in t["y"]}
    assert any(str(y).startswith("P(X = ") for y in names), names
    w.figure_with_title(page, "Coverage of the 95% credible intervals", timeout=120.0)
    assert not w.has_exception(page)
    _shot(page, "inference", artifacts_dir)

    # ---------------------------------------------------------------- Audit
    w.go_to_page(page, "Audit")
    page.get_by_role("tab", name="Trade-off curves").click()
    w.figure_with_title(page, "rade-off", timeout=60.0)
    page.get_by_role("tab", name="Disclosure risk").click()
    w.press(page, "Compute disclosure risk", timeout=120_000)
    page.get_by_text("released rows equal a confidential row", exact=False).first.wait_for(timeout=120_000)
    assert not w.has_exception(page)
    _shot(page, "audit", artifacts_dir)
