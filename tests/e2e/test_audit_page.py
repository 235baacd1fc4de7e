"""End-to-end: the Audit page on the bundled CPS earnings sample, in headless Chromium (issue 12).

Open the page, read the PLD, move the k slider, run the empirical audit and the
disclosure risk, and check that no exception is shown and the figures are drawn.
"""

from __future__ import annotations

import st_waits as w


def test_audit_page_on_cps_sample(page, app_url):
    w.open_app(page, app_url)
    w.go_to_page(page, "Audit")
    page.get_by_text("Settings of the evaluated release").first.wait_for()
    assert not w.has_exception(page)
    # the banner names the release evaluated: the current settings, nothing drawn yet (issue 36)
    assert "no release drawn yet" in " ".join(w.alert_texts(page))
    assert "hockey-stick" in page.locator('[data-testid="stMarkdown"]').all_inner_texts().__str__()

    # repeated releases: move k and read the composed ε
    page.get_by_role("tab", name="Repeated releases").click()   # tabs switch in the browser, no rerun
    w.rerun_after(page, lambda: w.press_slider(page, "audit_k", "End"))
    page.get_by_text("After k = 100 releases", exact=False).first.wait_for()
    assert not w.has_exception(page)

    # trade-off curves of every calibrated mechanism
    page.get_by_role("tab", name="Trade-off curves").click()
    fig = w.figure_with_title(page, "Trade-off curves")
    labels = [t["name"] for t in fig["traces"]]
    assert any(label.startswith("PYPP") for label in labels), labels
    assert any("Gaussian" in label for label in labels), labels

    # the empirical audit
    page.get_by_role("tab", name="Empirical audit").click()
    w.press(page, "Run audit")
    page.get_by_text("The audit certifies", exact=False).first.wait_for(timeout=120_000)
    assert not w.has_exception(page)
    fig = w.figure_with_title(page, "Audit:")
    assert any(t["name"] == "likelihood ratio operating point" for t in fig["traces"])
    alerts = " ".join(w.alert_texts(page))
    assert "Consistent with the" in alerts, alerts   # green ("… guarantee") only on a pure or strong release

    # disclosure risk (curator only)
    page.get_by_role("tab", name="Disclosure risk").click()
    w.press(page, "Compute disclosure risk")
    page.get_by_text("released rows equal a confidential row", exact=False).first.wait_for(timeout=120_000)
    assert "Curator-only" in " ".join(w.alert_texts(page))
    assert not w.has_exception(page)
