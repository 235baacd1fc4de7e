"""End-to-end: AIM released from the Synthetic data page in Chromium (issue 35 item 1;
docs/verdicts.md §6).

The bundled ``dyadic_geometric.csv`` (n = 10 000, x on its public bounds [0, 1]) at the Privacy
page's smallest δ = 10⁻⁹ (n·δ = 10⁻⁵, within the strong limit 0.01): the curator chooses AIM, sees its
reference, generates a release of m = n rows with the verdict strong, and downloads the public
zip — charged once to the run's privacy ledger on the click — and the CONFIDENTIAL curator
record, whose recipe replays the release byte for byte through ``core.run_recipe``. A screenshot
of the page with AIM chosen goes to artifacts/peer_release.png.
"""

from __future__ import annotations

import io
import json
import zipfile

import st_waits as w
from core import ledger as L
from core.release import ReleaseRecipe, run_recipe

NAME = "peer e2e: dyadic AIM"
PUBLIC, CURATOR = "Download public release (zip)", "Download CONFIDENTIAL curator record (zip)"


def _choose(page, selectbox, option: str) -> None:
    """Pick ``option`` in a Streamlit selectbox (a react-aria combobox) and wait for the run."""
    selectbox.locator("input[role='combobox']").click()
    w.rerun_after(page, page.get_by_role("option", name=option, exact=True).click)
    w.wait_for_idle(page)


def _download(page, label: str) -> dict[str, bytes]:
    button = page.get_by_role("button", name=label, exact=True)
    assert button.is_enabled(), f"{label!r} is disabled: {w.alert_texts(page)}"
    with page.expect_download() as info:
        button.dispatch_event("click")
    with zipfile.ZipFile(info.value.path()) as z:
        return {name: z.read(name) for name in z.namelist()}


def test_aim_release_in_the_browser(page, app_url, run_ledger, artifacts_dir):
    w.open_app(page, app_url)
    _choose(page, page.locator('[data-testid="stSelectbox"]').filter(has_text="Bundled dataset"),
            "dyadic_geometric.csv")
    w.go_to_page(page, "Privacy")
    w.rerun_after(page, lambda: w.press_slider(page, "_w_delta", "Home"))   # δ = 10⁻⁹, the smallest offered
    w.wait_for_idle(page)
    assert w.select_slider_value(page, "_w_delta") == 1e-9

    w.go_to_page(page, "Synthetic data")
    _choose(page, page.locator(".st-key-_w_release_mechanism"), "AIM — (ε, δ)-DP")
    body = page.locator('[data-testid="stMain"]').inner_text()
    assert "McKenna" in body and "m = n = 10,000" in body, body[:2000]
    w.press(page, "Generate release", timeout=120_000)
    w.wait_for_idle(page)
    assert not w.has_exception(page)
    alerts = " ".join(w.alert_texts(page))
    assert "Verdict: strong" in alerts, alerts

    run_ledger(NAME)
    box = page.locator(".st-key-_w_ledger_dataset input").first
    w.rerun_after(page, lambda: (box.fill(NAME), box.press("Enter")))
    w.wait_for_idle(page)
    page.screenshot(path=str(artifacts_dir / "peer_release.png"), full_page=True)

    public = _download(page, PUBLIC)
    report = json.loads(public["release.json"])
    assert report["mechanism"]["name"] == "aim" and report["strength"] == "strong"
    assert report["release"]["m"] == 10_000 and report["ledger"]["dataset"] == NAME
    with L.open_ledger(run_ledger.location) as ledger:
        entry = ledger.dataset(NAME)
    assert len(entry.releases) == 1 and entry.releases[0].state == "complete"

    record = _download(page, CURATOR)
    recipe = ReleaseRecipe.from_json(record["CONFIDENTIAL_recipe.json"])
    assert recipe.mechanism == "aim" and recipe.seed is not None
    assert run_recipe(recipe).synthetic_csv() == public["synthetic.csv"]   # replays byte for byte
