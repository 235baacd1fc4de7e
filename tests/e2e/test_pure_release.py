"""End-to-end: a first-time user's path to a pure ε-DP release on a file with missing values
(issue 36; docs/mathematics.md §2.5, §3.3.1), timed from the upload to the Audit page.

A survey file of our own (integer ages, two categorical columns) with missing cells in every
column is uploaded; the Data page keeps missing cells as a value in each column and puts the
columns on a public domain (a grid step on the ages' public bounds, typed category lists), so
each domain gains the missing cell as one more public category; the Privacy page picks the
Dirichlet–multinomial (σ < 0) with z taken from the columns and sets m to the largest globally
pure m; the Synthetic data page releases it: verdict pure, the public zip offered without an
acknowledgement, release.json pure with δ = 0, the release card in the zip, every released
value on the grid, in the public lists or an empty cell, ages still integers. Then Compare runs
that release against the histogram baselines and the field's peers (AIM, MST), and Inference and
Audit evaluate it — each page naming it in its banner — without an error. The seconds from the
upload to the Audit page go to ``artifacts/first_release.json`` (the issue's bound: five minutes).
"""

from __future__ import annotations

import json
import math
import time
import zipfile

import numpy as np
import pandas as pd
import pytest

import st_waits as w

N = 3000
AGE_STEP = 10
SEX, REGION = ("F", "M", "X"), ("north", "south", "east", "west", "islands")
MISSING = {"age": 90, "sex": 60, "region": 150}     # missing cells per column
PEERS = ("AIM", "MST")


@pytest.fixture(scope="module")
def survey_csv(tmp_path_factory):
    rng = np.random.default_rng(2024)
    frame = pd.DataFrame({"age": pd.array(rng.integers(16, 95, N), dtype="Int64"),
                          "sex": pd.array(rng.choice(SEX[:2], N), dtype=object),
                          "region": pd.array(rng.choice(REGION[:4], N), dtype=object)})
    for column, count in MISSING.items():
        frame.loc[rng.choice(N, count, replace=False), column] = None   # written as empty cells
    path = tmp_path_factory.mktemp("pure") / "survey_with_gaps.csv"
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
    """Open the column's panel (an expander: a ``details`` element) unless it is open."""
    details = page.locator("details").filter(has=page.get_by_text(f"Column '{column}'", exact=True)).first
    details.wait_for()
    if details.get_attribute("open") is None:
        details.locator("summary").first.click()
    page.locator(f".st-key-_w_tf_{column}_kind").first.wait_for(state="visible")


def _missing_is_a_value(page, column: str) -> None:
    """Choose "missing is a value" in the column's panel (the second option); the panel may close
    once every column's choice is made (its input is then hidden, still checked)."""
    radio = page.locator(f".st-key-_w_tf_{column}_missing")
    radio.first.wait_for()
    option = radio.locator('input[type="radio"]').nth(1)
    if not option.is_checked():
        w.rerun_after(page, lambda: radio.get_by_text("missing is a value", exact=False).first.click())
        w.wait_for_idle(page)
    assert option.is_checked(), column


def _public_grid(page, column: str, lo, hi, step) -> None:
    _open(page, column)
    w.rerun_after(page, lambda: page.locator(f".st-key-_w_tf_{column}_bounds_public label").click())
    w.wait_for_idle(page)
    _type(page, f"_w_tf_{column}_lo", lo)
    _type(page, f"_w_tf_{column}_hi", hi)
    _type(page, f"_w_tf_{column}_grid", step)


def _banner(page) -> str:
    banner = page.locator('[data-testid="stAlert"]').filter(has_text="Evaluating:").first
    banner.wait_for()
    return " ".join(banner.inner_text().split())


_GRID_WITH_TEXT_JS = """(text) => Array.from(document.querySelectorAll('[data-testid="stDataFrame"] table'))
  .some(t => t.innerText.includes(text))"""


def _choose_peer(page, label: str) -> None:
    combobox = page.locator(".st-key-compare_peers input[role='combobox']")
    combobox.click()
    combobox.fill(label)
    w.rerun_after(page, page.get_by_role("option", name=label, exact=True).click)
    page.keyboard.press("Escape")
    w.wait_for_idle(page)


def test_first_release_with_missing_values_from_upload_to_audit(page, app_url, survey_csv, tmp_path,
                                                                artifacts_dir, run_ledger):
    run_ledger("upload: age, sex, region")   # the public release is charged to the upload's budget (ui/ledger.py)
    w.open_app(page, app_url)
    start = time.perf_counter()
    w.choose_radio(page, "Upload a CSV or Parquet file", timeout=120_000)
    w.upload(page, survey_csv)
    box = page.locator(".st-key-_w_columns")
    box.wait_for()          # the profile waits until every released column's missing cells have a meaning
    w.wait_for_idle(page)
    for column in ("age", "sex", "region"):
        chosen = box.locator("[data-tag]").evaluate_all("els => els.map(e => e.getAttribute('aria-label'))")
        if column not in chosen:
            _add_column(page, column)
    for column in ("age", "sex", "region"):
        _open(page, column)
        _missing_is_a_value(page, column)
    page.get_by_text("Profile of the confidential data").first.wait_for()
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
    # each column's domain holds the missing cell: 13 grid points + 1, 3 + 1, 5 + 1
    z = (13 + 1) * (len(SEX) + 1) * (len(REGION) + 1)
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
    assert page.get_by_role("checkbox").count() == 0        # pure, public domains: nothing to acknowledge
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
    card = archive.read("release_card.html").decode("utf-8")
    assert "pure" in card and "Dirichlet" in card
    synthetic = pd.read_csv(archive.open("synthetic.csv"), keep_default_na=False, dtype=str)
    assert len(synthetic) == largest
    assert set(synthetic["age"]) <= {str(a) for a in range(0, 121, AGE_STEP)} | {""}   # integers or empty
    assert set(synthetic["sex"]) <= set(SEX) | {""} and set(synthetic["region"]) <= set(REGION) | {""}

    # ------------------------------------------------------------- Compare: that release against the field
    w.go_to_page(page, "Compare")
    evaluated = _banner(page)
    assert "Dirichlet" in evaluated and "drawn on the Synthetic data page" in evaluated, evaluated
    w.rerun_after(page, lambda: w.press_slider(page, "_w_runs", "Home"))
    for label in PEERS:
        _choose_peer(page, label)
    w.press(page, "Run comparison", timeout=300_000)
    assert not w.has_exception(page), w.alert_texts(page)
    assert page.locator('[data-testid="stAlertContentError"]').count() == 0, w.alert_texts(page)
    fig = w.figure_with_title(page, "W1 in original units to the confidential data", timeout=120.0)
    labels = {t["name"] for t in fig["traces"] if t["name"]}
    for peer in PEERS:
        assert any(label.startswith(peer) for label in labels), (peer, labels)
    page.screenshot(path=str(artifacts_dir / "first_release_compare.png"), full_page=True)

    # ------------------------------------------------------------- Inference and Audit on that release
    for name in ("Inference", "Audit"):
        w.go_to_page(page, name)
        evaluated = _banner(page)
        assert "Dirichlet" in evaluated, (name, evaluated)
        w.wait_for_idle(page)
        assert not w.has_exception(page), (name, w.alert_texts(page))
        if name == "Inference":   # the analyst's Dirichlet posterior of the ages: the missing cell is its own
            page.wait_for_function(_GRID_WITH_TEXT_JS, arg="P(missing)", timeout=60_000, polling="raf")
        page.screenshot(path=str(artifacts_dir / f"first_release_{name.lower()}.png"), full_page=True)
    verdict = " ".join(page.locator('[data-testid="stAlert"]').filter(has_text="Verdict:").first.inner_text().split())
    assert "Verdict: pure" in verdict, verdict
    seconds = time.perf_counter() - start
    record = {"rows": N, "missing_cells": MISSING, "seconds_upload_to_audit": round(seconds, 1), "bound_s": 300}
    (artifacts_dir / "first_release.json").write_text(json.dumps(record, indent=2))
    print("a first release with missing values, upload to Audit:", json.dumps(record))
