"""End-to-end: the pure ε-DP release from the app (docs/mathematics.md §3.3.1).

A survey file of our own (integer ages, two categorical columns) is uploaded;
the Data page puts the released columns on a public domain (a grid step on the ages' public
bounds, typed category lists); the Privacy page picks the Dirichlet–multinomial (σ < 0) with z taken from
the columns and sets m to the largest globally pure m; the Synthetic data page releases it:
verdict pure, the public zip offered without an acknowledgement, release.json pure with δ = 0,
every released value on the grid or in the public lists, ages still integers.
"""

from __future__ import annotations

import json
import math
import zipfile

import numpy as np
import pandas as pd
import pytest

import st_waits as w

N = 3000
AGE_STEP = 10
SEX, REGION = ("F", "M", "X"), ("north", "south", "east", "west", "islands")


@pytest.fixture(scope="module")
def survey_csv(tmp_path_factory):
    rng = np.random.default_rng(2024)
    frame = pd.DataFrame({"age": rng.integers(16, 95, N),
                          "sex": rng.choice(SEX[:2], N), "region": rng.choice(REGION[:4], N)})
    path = tmp_path_factory.mktemp("pure") / "survey.csv"
    frame.to_csv(path, index=False)
    return path


def _add_column(page, column: str) -> None:
    combobox = page.locator(".st-key-_w_columns input[role='combobox']")
    combobox.click()
    combobox.fill(column)
    w.rerun_after(page, page.get_by_role("option", name=column, exact=True).click)
    page.keyboard.press("Escape")
    w.wait_for_idle(page)


def _type(page, key: str, value) -> None:
    """Type ``value`` into the input created with ``key``; a change must cause a rerun."""
    box = page.locator(f".st-key-{key} input").first
    box.wait_for()
    if box.input_value() == str(value):
        return                                       # already shown: typing it causes no run
    w.rerun_after(page, lambda: (box.fill(str(value)), box.press("Enter")))
    w.wait_for_idle(page)


def _open(page, column: str) -> None:
    page.get_by_text(f"Column '{column}'", exact=True).click()
    page.locator(f".st-key-_w_tf_{column}_bounds_public, .st-key-_w_tf_{column}_categories").first.wait_for()


def _public_grid(page, column: str, lo, hi, step) -> None:
    _open(page, column)
    w.rerun_after(page, lambda: page.locator(f".st-key-_w_tf_{column}_bounds_public label").click())
    w.wait_for_idle(page)
    _type(page, f"_w_tf_{column}_lo", lo)
    _type(page, f"_w_tf_{column}_hi", hi)
    _type(page, f"_w_tf_{column}_grid", step)


def test_pure_release_from_the_app(page, app_url, survey_csv, tmp_path, artifacts_dir, run_ledger):
    run_ledger("upload: age, sex, region")   # the public release is charged to the upload's budget (ui/ledger.py)
    w.open_app(page, app_url)
    w.choose_radio(page, "Upload a CSV or Parquet file", timeout=120_000)
    w.upload(page, survey_csv)
    page.get_by_text("Profile of the confidential data").first.wait_for()
    w.wait_for_idle(page)
    box = page.locator(".st-key-_w_columns")
    for column in ("age", "sex", "region"):
        chosen = box.locator("[data-tag]").evaluate_all("els => els.map(e => e.getAttribute('aria-label'))")
        if column not in chosen:
            _add_column(page, column)
    _public_grid(page, "age", 0, 120, AGE_STEP)
    for column, categories in (("sex", SEX), ("region", REGION)):
        _open(page, column)
        _type(page, f"_w_tf_{column}_categories", ", ".join(categories))
    assert not w.has_exception(page), w.alert_texts(page)
    page.screenshot(path=str(artifacts_dir / "pure_data_page.png"), full_page=True)

    # ------------------------------------------------------------- Privacy: σ < 0 over the columns' domain
    w.go_to_page(page, "Privacy")
    select = page.locator(".st-key-_w_regime")
    select.click()
    w.rerun_after(page, page.get_by_role("option", name="Dirichlet–multinomial", exact=False).first.click)
    w.wait_for_idle(page)
    z = 13 * len(SEX) * len(REGION)
    assert f"z = {z:,} public categories" in page.locator("body").inner_text()
    eps = w.slider_value(page, "_w_eps")
    largest = math.floor(math.expm1(eps) * 1.0)     # α = 1 (the default): ⌊(e^ε − 1)·α⌋
    w.press(page, f"Use the largest globally pure m = {largest:,}")
    w.wait_for_idle(page)
    verdict = " ".join(page.locator('[data-testid="stAlert"]').filter(has_text="Verdict:").first.inner_text().split())
    assert "Verdict: pure" in verdict, verdict
    page.screenshot(path=str(artifacts_dir / "pure_privacy_page.png"), full_page=True)

    # ------------------------------------------------------------- Synthetic data: release and publish
    w.go_to_page(page, "Synthetic data")
    w.press(page, "Generate release", timeout=120_000)
    w.wait_for_idle(page)
    assert not w.has_exception(page)
    assert page.get_by_role("checkbox").count() == 0        # pure, public bounds: nothing to acknowledge
    button = page.get_by_role("button", name="Download public release (zip)")
    assert button.is_enabled()
    page.screenshot(path=str(artifacts_dir / "pure_synthetic_page.png"), full_page=True)
    with page.expect_download() as info:
        button.click()
    target = tmp_path / "public.zip"
    info.value.save_as(str(target))
    archive = zipfile.ZipFile(target)
    release = json.loads(archive.read("release.json"))
    assert release["strength"] == "pure" and release["guarantee"]["delta"] == 0.0
    assert release["release"]["m"] == largest and release["acknowledged"] == []
    synthetic = pd.read_csv(archive.open("synthetic.csv"))
    assert len(synthetic) == largest
    assert set(synthetic["age"]) <= set(range(0, 121, AGE_STEP))
    assert set(synthetic["sex"]) <= set(SEX) and set(synthetic["region"]) <= set(REGION)
    assert synthetic["age"].dtype == np.int64
