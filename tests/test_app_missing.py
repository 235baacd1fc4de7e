"""AppTest (streamlit.testing.v1): a file with missing values released from the dashboard under
both choices, on the exact path (a small CSV) and the lean path (Parquet, DuckDB).

The file has 40 % missing cells in a numeric column and a few in a categorical one. Until the
user chooses, the page names both options; "missing is a value" keeps n and releases empty
cells; "drop records with a missing value" counts n after dropping and the public report says
so. Expected counts come from pandas on the data the test wrote, never from ``core``.
"""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from ui.selection import content_hash
from ui.text import shown

from test_app import APP, _ledger_budget, _replay, _zip_files, downloads  # noqa: F401  (downloads is a fixture)

TIMEOUT = 180
N = 400


@pytest.fixture(scope="module")
def records() -> pd.DataFrame:
    """wage: whole numbers, 40 % missing; lang: 12 missing labels; age: complete."""
    rng = np.random.default_rng(21)
    wage = pd.array(rng.integers(10, 60, N), dtype="Int64")
    wage[rng.choice(N, int(0.4 * N), replace=False)] = pd.NA
    lang = pd.Series(rng.choice(["en", "fr", "de"], N), dtype=object)
    lang[rng.choice(N, 12, replace=False)] = None
    return pd.DataFrame({"wage": wage, "lang": lang, "age": rng.integers(18, 70, N)})


def _content(records: pd.DataFrame, file_format: str) -> bytes:
    if file_format == "csv":
        return records.to_csv(index=False).encode()
    buffer = io.BytesIO()
    records.to_parquet(buffer, index=False)
    return buffer.getvalue()


def _uploaded(name: str, content: bytes) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["source_kind"] = "upload"
    at.session_state["upload"] = {"name": name, "bytes": content, "hash": content_hash(content)}
    at.session_state["columns"] = ["wage", "lang"]
    # a release small enough for the gate: δ target 0.1, θ = 100, m = 30 (both n)
    at.session_state["delta"], at.session_state["theta"], at.session_state["m"] = 0.1, 100.0, 30
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _choose(at: AppTest, choice: str) -> None:
    for column in ("wage", "lang"):
        at.radio(key=f"_w_tf_{column}_missing").set_value(choice)
    at.run()
    assert not at.exception, [e.value for e in at.exception]


def _release(at: AppTest, downloads) -> tuple[pd.DataFrame, bytes, dict, dict]:  # noqa: F811
    at.switch_page("app_pages/synthetic_data.py").run()
    at.button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    boxes = [box for box in at.checkbox if str(box.key or "").startswith("acknowledge_")]
    for box in boxes:
        box.check()
    at.run()
    _ledger_budget(at)
    buttons = {b.proto.label: b.proto for b in at.get("download_button")}
    assert not buttons["Download synthetic CSV"].disabled
    csv = downloads(buttons["Download synthetic CSV"])
    public = _zip_files(downloads(buttons["Download public release (zip)"]))
    curator = _zip_files(downloads(buttons["Download CONFIDENTIAL curator record (zip)"]))   # built on the click
    return pd.read_csv(io.BytesIO(csv), keep_default_na=False, dtype=str), csv, public, curator


@pytest.mark.parametrize("file_format", ["csv", "parquet"])
def test_missing_values_block_until_chosen_then_release_under_both_choices(records, file_format,
                                                                          downloads, tmp_path):  # noqa: F811
    content = _content(records, file_format)
    at = _uploaded(f"wages.{file_format}", content)
    n_wage, n_lang = int(records["wage"].isna().sum()), int(records["lang"].isna().sum())
    assert (n_wage, n_lang) == (160, 12)

    # No choice yet: blocked, and the message names both options and where to choose.
    errors = " ".join(shown(e.value) for e in at.error)
    assert "missing is a value" in errors and "drop records with a missing value" in errors
    assert "column's panel on the Data page" in errors
    radio = at.radio(key="_w_tf_wage_missing")
    assert f"{n_wage:,} record(s)" in radio.label and radio.value == "not chosen"
    assert f"{n_lang:,} record(s)" in at.radio(key="_w_tf_lang_missing").label
    assert not [r for r in at.radio if r.key == "_w_tf_age_missing"]   # shown only with missing cells

    # Missing is a value: n is every record; the missing atoms are atoms.
    _choose(at, "value")
    assert not at.error, [e.value for e in at.error]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["records n"] == f"{N:,}"
    expected_k = len(records[["wage", "lang"]].astype(object).fillna("<missing>").drop_duplicates())
    assert metrics["distinct values k"] == f"{expected_k:,}"
    synthetic, csv, public, curator = _release(at, downloads)
    assert len(synthetic) == 30 and list(synthetic.columns) == ["wage", "lang"]
    assert (synthetic["wage"] == "").sum() > 0                        # released as empty cells
    assert set(synthetic["wage"][synthetic["wage"] != ""].str.fullmatch(r"\d+(\.\d+)?")) == {True}
    release = json.loads(public["release.json"])
    assert release["data"]["n"] == N
    assert [c["missing"] for c in release["data"]["column_transforms"]] == ["value", "value"]
    assert not any("dropped" in text for text in (c["statement"] + " " + c["consequence"] for c in release["data_dependent_choices"]))
    report = json.loads(curator["CONFIDENTIAL_report.json"])
    assert report["data"]["missing_values"]["records_dropped"] == 0
    assert [c["missing_records"] for c in report["data"]["missing_values"]["columns"]] == [n_wage, n_lang]
    recipe = json.loads(curator["CONFIDENTIAL_recipe.json"])
    assert [c["missing"] for c in recipe["data"]["columns"]] == ["value", "value"]
    # the command line replays the app's recipe on the same file: the same bytes
    data = tmp_path / f"wages.{file_format}"
    data.write_bytes(content)
    assert _replay(curator["CONFIDENTIAL_recipe.json"], tmp_path, data) == csv

    # Drop records with a missing value: n counts the records left, and the reports say so.
    at.switch_page("app_pages/data.py").run()
    _choose(at, "drop")
    kept = int((records["wage"].notna() & records["lang"].notna()).sum())
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["records n"] == f"{kept:,}"
    assert any(f"{N - kept:,} of the {N:,} records were dropped" in i.value for i in at.info)
    synthetic, csv, public, curator = _release(at, downloads)
    assert len(synthetic) == 30 and (synthetic["wage"] == "").sum() == 0 and (synthetic["lang"] == "").sum() == 0
    release = json.loads(public["release.json"])
    assert release["data"]["n"] == kept
    dropped = [text for text in (c["statement"] + " " + c["consequence"] for c in release["data_dependent_choices"]) if "dropped" in text]
    assert len(dropped) == 1 and "'wage', 'lang'" in dropped[0] and f"n = {kept:,}" in dropped[0]
    assert release["statement_depends_on_data"] is True
    assert "dropped" in public["release_card.html"].decode()
    report = json.loads(curator["CONFIDENTIAL_report.json"])
    record = report["data"]["missing_values"]
    assert (record["records_read"], record["records_dropped"], record["records_released_from"]) == \
        (N, N - kept, kept)
    assert [c["records_dropped"] for c in record["columns"]] == [n_wage, n_lang]
    assert any(f"{N - kept:,} of the {N:,} records read were dropped" in w for w in report["warnings"])
    assert _replay(curator["CONFIDENTIAL_recipe.json"], tmp_path, data) == csv
    with zipfile.ZipFile(io.BytesIO(downloads(
            {b.proto.label: b.proto for b in at.get("download_button")}["Download public release (zip)"]))) as z:
        assert "synthetic.csv" in z.namelist()
