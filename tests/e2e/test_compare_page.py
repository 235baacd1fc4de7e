"""End-to-end: the Compare page and its ε sweep on the CPS sample with every mechanism (issue 11).

Run the comparison and the utility frontier over ε in headless Chromium: PYPP, the
histogram baselines, the Bayesian family and the bootstrap all appear, and no exception
is shown.
"""

from __future__ import annotations

import st_waits as w

from core.evaluation.compare import DEFAULT_MECHANISMS


def test_compare_page_and_eps_sweep_with_every_mechanism(page, app_url):
    w.open_app(page, app_url)
    w.go_to_page(page, "Compare")
    page.get_by_role("button", name="Run comparison").wait_for()
    w.press(page, "Run comparison", timeout=180_000)
    fig = w.figure_with_title(page, "W1 in original units to the confidential data", timeout=120.0)
    labels = {t["name"] for t in fig["traces"] if t["name"]}
    assert len(labels) >= len(DEFAULT_MECHANISMS), labels
    assert any("Truncated" in label or "truncated" in label for label in labels), labels
    assert any("old values" in label for label in labels), labels
    assert not w.has_exception(page)

    page.get_by_role("tab", name="Utility frontier over ε").click()   # tabs switch in the browser, no rerun
    w.rerun_after(page, lambda: w.press_slider(page, "sweep_runs", "Home"))
    w.press(page, "Run ε sweep", timeout=300_000)
    fig = w.figure_with_title(page, "median W1 against ε", timeout=300.0)
    assert len({t["name"] for t in fig["traces"] if t["name"]}) >= len(DEFAULT_MECHANISMS) - 1
    assert not w.has_exception(page)
