"""End-to-end: no side door (issue 32, item 6; docs/serving.md §5), in headless Chromium.

A *missed* release (k = 1 000 planned releases from the sample) leaves no file through any
page: the Synthetic data page's public zip and synthetic CSV are disabled with nothing to
tick, the Inference page offers no file of the release, and no table's toolbar offers
Streamlit's own "Download as CSV". A *weak* release (one planned) needs its acknowledgement
wherever a public file can be had: both public downloads wait for the tick, and the replay
command the page shows carries ``--acknowledge weak`` (the command line's gate on ``--out``
is tests/test_side_doors.py). Two presses of "Generate release" with every default give two
different releases.
"""

from __future__ import annotations

import io
import json
import zipfile

import st_waits as w

PUBLIC = "Download public release (zip)"
CSV = "Download synthetic CSV"
RECORD = "Download CONFIDENTIAL curator record (zip)"


def _set_planned_releases(page, k: int) -> None:
    box = page.locator(".st-key-_w_releases_planned input").first
    w.rerun_after(page, lambda: (box.fill(str(k)), box.press("Enter")))
    w.wait_for_idle(page)


def _generate(page) -> None:
    w.press(page, "Generate release", timeout=120_000)
    w.wait_for_idle(page)
    assert not w.has_exception(page)


def _verdict(page) -> str:
    box = page.locator('[data-testid="stAlert"]').filter(has_text="Verdict:").first
    box.wait_for()
    text = " ".join(box.inner_text().split())
    return text[text.index("Verdict:"):]     # without the icon


def _download(page, label: str) -> bytes:
    button = page.get_by_role("button", name=label, exact=True)
    assert button.is_enabled(), f"{label!r} is disabled"
    with page.expect_download() as info:
        button.dispatch_event("click")
    with open(info.value.path(), "rb") as handle:
        return handle.read()


def _open_table(page, expander: str) -> None:
    """Open the expander labelled ``expander`` and wait for its table to show."""
    box = page.locator('[data-testid="stExpander"]').filter(has_text=expander).first
    box.get_by_text(expander, exact=True).click()
    box.locator('[data-testid="stDataFrame"]').first.wait_for(state="visible")


def _no_table_exports(page) -> int:
    """Hover every table on the page: its toolbar shows (Search), never "Download as CSV".
    Returns how many tables were checked."""
    tables = page.locator('[data-testid="stDataFrame"] >> visible=true')
    for i in range(tables.count()):
        table = tables.nth(i)
        table.scroll_into_view_if_needed()
        table.hover()
        toolbar = page.locator('[data-testid="stElementToolbar"]').filter(
            has=page.locator('button[aria-label="Search"]')).first
        toolbar.wait_for(state="visible")
        assert page.locator('button[aria-label="Download as CSV"]').count() == 0
    return tables.count()


def test_a_missed_release_leaves_no_file_and_a_weak_one_needs_its_acknowledgement(page, app_url, artifacts_dir,
                                                                                    run_ledger):
    run_ledger("cps_earnings.csv")   # the public releases are charged to the sample's budget (ui/ledger.py)
    w.open_app(page, app_url)
    _open_table(page, "Preview of the prepared data (curator-only: confidential)")
    assert _no_table_exports(page) >= 1            # the Data page's preview: the data's own values
    w.go_to_page(page, "Synthetic data")
    assert page.locator(".st-key-_w_release_seed_replay input").input_value() == ""

    # ------------------------------------------------------------ missed: k = 1 000 planned releases
    _set_planned_releases(page, 1000)
    _generate(page)
    assert _verdict(page).startswith("Verdict: missed")
    assert page.get_by_role("button", name=PUBLIC, exact=True).is_disabled()
    assert page.get_by_role("button", name=CSV, exact=True).is_disabled()
    assert page.get_by_role("checkbox").count() == 0                 # nothing to tick: refused outright
    assert page.locator('[data-testid="stCode"]').filter(has_text="--out").count() == 0   # no command writes it
    _open_table(page, "First rows of the release")   # the table of released rows
    assert _no_table_exports(page) >= 2
    page.screenshot(path=str(artifacts_dir / "side_doors_missed.png"), full_page=True)

    w.go_to_page(page, "Inference")
    assert not w.has_exception(page)
    page.get_by_text("The release Z", exact=True).wait_for()
    labels = page.get_by_role("button").evaluate_all("els => els.map(e => e.innerText.trim())")
    downloads = [label for label in labels if label.startswith("Download")]
    assert downloads and not [label for label in downloads if "release Z" in label or label == CSV], downloads
    assert _no_table_exports(page) >= 1
    page.screenshot(path=str(artifacts_dir / "side_doors_inference.png"), full_page=True)

    # ------------------------------------------------------------ weak: one release
    w.go_to_page(page, "Synthetic data")
    _set_planned_releases(page, 1)
    _generate(page)
    first = _download(page, RECORD)
    assert _verdict(page).startswith("Verdict: weak")
    for label in (PUBLIC, CSV):
        assert page.get_by_role("button", name=label, exact=True).is_disabled(), label
    command = page.locator('[data-testid="stCode"]').filter(has_text="--recipe").first.inner_text()
    assert "--out synthetic.csv --acknowledge weak" in command, command
    tick = page.get_by_role("checkbox")
    assert tick.count() == 1
    w.rerun_after(page, lambda: tick.first.dispatch_event("click"))
    w.wait_for_idle(page)
    csv = _download(page, CSV)
    with zipfile.ZipFile(io.BytesIO(_download(page, PUBLIC))) as public:
        assert public.read("synthetic.csv") == csv
        assert json.loads(public.read("release.json"))["acknowledged"] == ["weak"]
        assert json.loads(public.read("recipe.json"))["seed"] is None

    # a second press with every default: a fresh secret seed, another release
    _generate(page)
    second = _download(page, RECORD)
    seeds = []
    for record in (first, second):
        with zipfile.ZipFile(io.BytesIO(record)) as zf:
            seeds.append(json.loads(zf.read("CONFIDENTIAL_recipe.json"))["seed"])
    assert seeds[0] != seeds[1]
    assert str(seeds[1]) not in page.locator("body").inner_text()     # the seed is in the record only
    assert not w.has_exception(page)
