"""End-to-end: the privacy ledger across two browser tabs (issue 34; docs/audit.md §8).

The bundled sample is released (σ = 0, one planned release, weak: one acknowledgement) under
one dataset name in two tabs — two sessions — of the same server, whose ledger is the test
run's (tests/conftest.py points ``BNP_SYNTH_LEDGER`` at a temporary file). The dataset's
budget is chosen so that exactly two releases fit: δ = 1 − (1 − T₁)² of the release's T₁, the
exact σ = 0 composition. Each tab downloads one public file (the zip in one, the CSV in the
other): both releases are in the ledger, complete, the zip's SHA-256 recorded. A third release,
drawn in the first tab, is refused on the page: over budget, both public downloads disabled.
Screenshots of the Synthetic data page (refused) and of the Ledger page go to artifacts/.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from fractions import Fraction
from pathlib import Path

import pandas as pd

import st_waits as w
from core import ledger as L
from core.ledger import Charge

NAME = "ledger e2e: cps earnings"
PUBLIC, CSV = "Download public release (zip)", "Download synthetic CSV"
SAMPLE_ROWS = len(pd.read_csv(Path(__file__).resolve().parents[2] / "sample_data" / "cps_earnings.csv"))


def _type(page, key: str, value) -> None:
    box = page.locator(f".st-key-{key} input").first
    box.wait_for()
    if box.input_value() == str(value):
        return
    w.rerun_after(page, lambda: (box.fill(str(value)), box.press("Enter")))
    w.wait_for_idle(page)


def _release(page, app_url) -> tuple[float, int]:
    """Open the app in ``page``, draw a release of the sample (one planned) under NAME; the θ and m shown."""
    w.open_app(page, app_url)
    w.go_to_page(page, "Synthetic data")
    _type(page, "_w_releases_planned", 1)
    w.press(page, "Generate release", timeout=120_000)
    w.wait_for_idle(page)
    settings = page.get_by_text("Settings from the").first.inner_text()
    match = re.search(r"σ = ([-\d.e+]+), θ = ([\d.e+]+), m = ([\d,]+)", settings)
    assert match and float(match[1]) == 0.0, settings
    return float(match[2]), int(match[3].replace(",", ""))


def _publishable(page) -> None:
    """Name the dataset and tick the acknowledgement(s) the gate asks; each tick is seen checked."""
    _type(page, "_w_ledger_dataset", NAME)
    # only the gate's acknowledgements: any other checkbox on the page is a setting
    ticks = page.locator('[data-testid="stCheckbox"]').filter(has_text="I accept that")
    ticks.first.wait_for()
    for i in range(ticks.count()):
        box = ticks.nth(i).locator("input")
        if not box.is_checked():
            w.rerun_after(page, lambda box=box: box.dispatch_event("click"))
    w.wait_for_idle(page)
    assert all(ticks.nth(i).locator("input").is_checked() for i in range(ticks.count()))


def _download(page, label: str) -> bytes:
    button = page.get_by_role("button", name=label, exact=True)
    try:   # the rerun that follows the last tick enables it
        button.wait_for(state="visible")
        page.wait_for_function("""(label) => [...document.querySelectorAll('button')]
            .some(b => b.innerText.trim() === label && !b.disabled)""", arg=label, timeout=30_000)
    except w.PlaywrightTimeoutError:
        raise AssertionError(f"{label!r} stayed disabled: {w.alert_texts(page)}") from None
    with page.expect_download() as info:
        button.dispatch_event("click")
    with open(info.value.path(), "rb") as handle:
        return handle.read()


def test_two_tabs_release_within_the_budget_and_a_third_is_refused(shared_context, app_url, run_ledger,
                                                                   artifacts_dir):
    first, second = shared_context.new_page(), shared_context.new_page()
    try:
        theta, m = _release(first, app_url)
        # the budget that fits exactly two such releases: δ = 1 − (1 − T₁)², T₁ = m/(m + θ + n − 1)
        t1 = Fraction(m) / (Fraction(m) + Fraction(theta) + SAMPLE_ROWS - 1)
        two = L.compose([Charge("singleton", Fraction(0), 1 - t1)] * 2)
        assert not L.compose([Charge("singleton", Fraction(0), 1 - t1)] * 3).within(1.0, two.delta_up)
        run_ledger(NAME, eps=1.0, delta=two.delta_up)
        _publishable(first)
        public = _download(first, PUBLIC)

        _release(second, app_url)
        _publishable(second)
        csv = _download(second, CSV)

        with L.open_ledger(run_ledger.location) as ledger:
            entry = ledger.dataset(NAME)
        assert [r.index for r in entry.releases] == [1, 2]
        assert [r.state for r in entry.releases] == ["complete", "complete"]
        assert entry.releases[0].sha256 == hashlib.sha256(public).hexdigest()
        assert entry.releases[0].charge == entry.releases[1].charge == Charge("singleton", Fraction(0), 1 - t1)
        with zipfile.ZipFile(io.BytesIO(public)) as z:
            block = json.loads(z.read("release.json"))["ledger"]
        assert block["dataset"] == NAME and block["release_index"] == 1
        assert csv.splitlines()[0] == b"earnings"

        # a third release, drawn in the first tab, is over the budget: refused on the page
        w.press(first, "Generate release", timeout=120_000)
        w.wait_for_idle(first)
        alerts = " ".join(w.alert_texts(first))
        assert "over budget" in alerts, alerts
        for label in (PUBLIC, CSV):
            assert first.get_by_role("button", name=label, exact=True).is_disabled(), label
        first.screenshot(path=str(artifacts_dir / "ledger_synthetic_page.png"), full_page=True)
        with L.open_ledger(run_ledger.location) as ledger:
            assert len(ledger.dataset(NAME).releases) == 2

        w.go_to_page(first, "Ledger")
        assert not w.has_exception(first)
        table = first.locator('[data-testid="stTable"]').first
        table.wait_for()
        assert table.locator("tbody tr").count() == 2 and "complete" in table.inner_text()
        first.locator(".js-plotly-plot").first.wait_for()
        assert w.has_trace(first, "budget δ") and w.has_trace(first, "cumulative δ")
        first.set_viewport_size({"width": 1400, "height": 1700})   # the table and the figure in one picture
        first.screenshot(path=str(artifacts_dir / "ledger_page.png"), full_page=True)
    finally:
        first.close()
        second.close()
