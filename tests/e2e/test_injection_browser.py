"""End-to-end: a hostile file's names and cells are shown as text in the browser.

The file's name, a column name and the cells carry Markdown, LaTeX, HTML, directives and
an image whose URL points at a closed local port. After the upload (the error that quotes
a bad cell), choosing the hostile column (the multiselect's options, the expander, the
sidebar summary) and a release (the Synthetic data page), no element renders it: no
``<img>``, no ``<strong>`` or link made of user text, no KaTeX; the raw text is visible; and
the browser never requests the injected URL.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import st_waits as w

COLUMN = "**bold** $x$ <b>"
IMAGE = "![t](http://127.0.0.1:9/x.png)"
CELLS = [IMAGE, "**b** $y$", ":red[spoof] :material/home:", "<img src=http://127.0.0.1:9/y.png>",
         "[click](http://127.0.0.1:9/z)"]
FILE_NAME = "**file** $z$ <b>f<b> :red[r] [l](x).csv"


def _hostile_file(tmp_path):
    rng = np.random.default_rng(0)
    n = 300
    wage = [f"{v:.2f}" for v in rng.lognormal(3, 0.5, n)]
    wage[5] = IMAGE   # a bad cell in a numeric column: quoted by the error message
    path = tmp_path / FILE_NAME
    path.write_text(pd.DataFrame({"wage": wage, COLUMN: rng.choice(CELLS, n)}).to_csv(index=False))
    return path


def _assert_rendered_as_text(page, where: str, requests: list[str]) -> None:
    scope = page.locator('[data-testid="stMain"], [data-testid="stSidebar"]')
    assert not w.has_exception(page), where
    assert scope.locator("img").count() == 0, where
    assert page.locator(".katex, .katex-display").count() == 0, where
    strong = page.locator("strong, b").all_inner_texts()
    assert not {"bold", "b", "file", "f"} & {s.strip() for s in strong}, (where, strong)
    links = page.locator('[data-testid="stMain"] a, [data-testid="stSidebar"] a[href*="127.0.0.1:9"]')
    assert not [t for t in links.all_inner_texts() if "127.0.0.1" in t or t.strip() in ("click", "l", "t")], where
    assert page.locator('[data-testid="stMain"] a[href*="127.0.0.1:9"]').count() == 0, where
    assert not [url for url in requests if "127.0.0.1:9" in url], (where, requests)


def test_hostile_names_and_cells_are_shown_as_text(page, app_url, tmp_path, artifacts_dir):
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    path = _hostile_file(tmp_path)
    w.open_app(page, app_url)
    w.choose_radio(page, "Upload a CSV or Parquet file", timeout=120_000)
    w.upload(page, path)
    # the default column, wage, has a bad cell: the error quotes it, as text (the invisible word
    # joiner inside "://" keeps Markdown from making it a link)
    assert any(f"e.g. '{IMAGE}'" in text.replace("\u2060", "") for text in w.alert_texts(page)), w.alert_texts(page)
    _assert_rendered_as_text(page, "upload", requests)

    # the multiselect's options show the hostile name as text; choose it, drop wage
    page.locator('[data-testid="stMultiSelect"] input').first.click()
    option = page.get_by_role("option", name=COLUMN)
    option.wait_for()
    assert option.locator("strong, b, img, .katex").count() == 0
    w.rerun_after(page, option.click)
    page.keyboard.press("Escape")
    w.rerun_after(page, lambda: page.get_by_role("button", name="Remove wage").click())
    w.wait_for_idle(page)
    sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
    assert FILE_NAME in sidebar and COLUMN in sidebar, sidebar
    assert page.locator('[data-testid="stExpander"] summary').filter(has_text=f"Column '{COLUMN}'").count() == 1
    _assert_rendered_as_text(page, "Data page", requests)
    page.screenshot(path=str(artifacts_dir / "injection_data_page.png"), full_page=True)

    # a release of the hostile column: its counts' heading and the warnings name it as text
    w.go_to_page(page, "Synthetic data")
    w.press(page, "Generate release")
    assert page.get_by_text(f"{COLUMN} (categorical): counts", exact=False).count() >= 1
    _assert_rendered_as_text(page, "Synthetic data page", requests)
    page.screenshot(path=str(artifacts_dir / "injection_synthetic_page.png"), full_page=True)

    # the Compare page names the columns that have no public category list (issue 33: that list,
    # built by joining names, fetched a URL written in a name): as text too
    w.go_to_page(page, "Compare")
    page.get_by_text(COLUMN, exact=False).first.wait_for()
    _assert_rendered_as_text(page, "Compare page", requests)
