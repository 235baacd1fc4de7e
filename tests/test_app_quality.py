"""AppTest of the quality report on the Synthetic data and Compare pages (issue 14 §2).

What the page shows is checked against an independent computation: the quality report of
the release (the page's own synthetic CSV) against the confidential rows read with pandas.
"""

from __future__ import annotations

import io

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from test_app import APP, SAMPLE, TIMEOUT, _accept_the_gate, downloads  # noqa: F401  (downloads is a fixture)

from core.evaluation.quality import quality_report

QUALITY_LABEL = "Download quality report (CSV)"


EARNINGS = {"kind": "numeric", "log": False, "bounds_public": True, "lo": 0.0, "hi": 100.0, "decimals": 1}


def _two_columns(second: str, spec: dict, page: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["columns"] = ["earnings", second]
    at.session_state["transforms"] = {"earnings": EARNINGS, second: spec}
    at.session_state["m"] = 130   # ≤ 136, the largest m meeting δ = 0.01 at θ = 50: the CSV is offered
    at.session_state["theta"] = 50.0
    at.session_state["runs"] = 5
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    at.switch_page(f"app_pages/{page}").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_synthetic_page_shows_the_quality_report_and_its_confidential_download(downloads):  # noqa: F811
    at = _two_columns("gender", {"kind": "categorical", "log": False, "bounds_public": False, "lo": 0.0, "hi": 1.0,
                                 "decimals": None}, "synthetic_data.py")
    at.button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    _accept_the_gate(at)   # so that the public CSV is offered
    assert not at.get("download_button")[2].proto.disabled, [a.value for a in at.error]
    assert any(h.value == "Quality report" for h in at.subheader)
    buttons = {b.proto.label: b for b in at.get("download_button")}
    assert QUALITY_LABEL in buttons
    payload = downloads(buttons[QUALITY_LABEL].proto).decode("utf-8")
    assert payload.splitlines()[0].startswith("# CONFIDENTIAL")
    shown = pd.read_csv(io.StringIO(payload), comment="#")
    # independently: the page's synthetic CSV against the confidential rows (earnings rounded to 1 decimal)
    synthetic = pd.read_csv(io.BytesIO(downloads(buttons["Download synthetic CSV"].proto)))
    real = pd.read_csv(SAMPLE)[["earnings", "gender"]].assign(earnings=lambda f: f["earnings"].round(1))
    expected = quality_report(real, synthetic, {"earnings": "numeric", "gender": "categorical"})
    overall = shown.loc[shown["property"] == "Overall", "score"].item()
    assert overall == pytest.approx(expected.overall, abs=1e-9)
    pair = shown[shown["property"] == "Column Pair Trends"].dropna(subset=["column_2"])
    assert list(pair["metric"]) == ["ContingencySimilarity"]
    assert {m.label for m in at.metric} >= {"overall quality", "column shapes", "column pair trends"}
    assert any("curator-only" in w.value for w in at.warning)
    assert not any("Column shapes" in el.proto.spec for el in at.get("plotly_chart"))   # charts on request
    at.toggle(key="quality_charts").set_value(True).run()
    titles = [el.proto.spec for el in at.get("plotly_chart")]
    assert sum("Column pair trends" in t for t in titles) == 1 and sum("Column shapes" in t for t in titles) == 1


def test_compare_page_quality_table_heatmap_and_joint_w1_method():
    at = _two_columns("age", {"kind": "numeric", "log": False, "bounds_public": True, "lo": 25.0, "hi": 34.0,
                              "decimals": None}, "compare.py")
    at.button(key="run_compare").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(h.value == "Quality report of one release per mechanism" for h in at.subheader)
    assert not any("column_pair_trends" in df.value.columns for df in at.dataframe)   # on request only
    at.toggle(key="compare_quality").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    table = next(df.value for df in at.dataframe if "column_pair_trends" in df.value.columns)
    assert list(table.columns) == ["label", "overall", "column_shapes", "column_pair_trends", "earnings", "age"]
    assert len(table) == len(at.selectbox(key="compare_quality_mechanism").options)
    assert table[["overall", "earnings", "age"]].apply(lambda s: s.between(0, 1)).all().all()
    assert any("Joint W1 method: **exact-emd**" in c.value or "Joint W1 method: **sliced" in c.value
               for c in at.caption)
    chosen = at.selectbox(key="compare_quality_mechanism").options[-1]
    at.selectbox(key="compare_quality_mechanism").select(chosen).run()
    assert not at.exception
    assert any(f"{chosen}: column pair trends" in el.proto.spec for el in at.get("plotly_chart"))
