"""AppTest of the pure path in the app (docs/mathematics.md §3.3.1, §3.6): the Release planner
shows pure options (Dirichlet–multinomial over public grids) with their verdicts next to the
σ = 0 ones and loads one (regime, α, m, grid steps, planner-chosen until changed by hand); the
Privacy page points a weak σ = 0 release to the pure path with its largest m and utility cost,
checked against core's own numbers."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from core import privacy
from core.planning import pure_utility_cost
from ui.text import shown

REPO = Path(__file__).resolve().parents[1]
APP = str(REPO / "app.py")
SAMPLE = REPO / "sample_data" / "cps_earnings.csv"
TIMEOUT = 120
N = 13_501   # records of the sample


@pytest.fixture(scope="module")
def sample() -> pd.DataFrame:
    return pd.read_csv(SAMPLE)


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _app(columns) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["columns"] = list(columns)
    return _ok(at.run())


def _verdicts(at: AppTest) -> list[str]:
    return [a.value for a in (*at.success, *at.warning, *at.error) if "Verdict:" in a.value]


def test_planner_shows_and_loads_a_pure_option(sample):
    at = _app(["earnings", "age"])        # both numeric, with the sample's public bounds
    _ok(at.switch_page("app_pages/planner.py").run())
    assert at.text_input(key="_plan_steps_earnings").value == "10, 1, 0.1"    # from the public bounds [0, 100]
    at.text_input(key="_plan_steps_age").input("1, 3")                        # public steps typed by the user
    at.text_input(key="_plan_alphas").input("1, 2, 10")
    at.number_input(key="_plan_w1_earnings").set_value(10.0)
    at.number_input(key="_plan_w1_age").set_value(2.0)
    _ok(at.button(key="_plan_run").click().run())
    rows = at.dataframe[-1].value
    assert {"release", "verdict", "alpha", "z", "theta", "m", "ratio"} <= set(rows.columns)
    pure = rows[rows["verdict"] == "pure"]
    assert len(pure) and len(rows[rows["verdict"] != "pure"])       # both kinds, each with its verdict
    assert (rows.loc[rows["alpha"].isna(), "verdict"] == "weak").all()
    for _, row in pure.iterrows():
        assert row["theta"] == pytest.approx(row["z"] * row["alpha"])
        assert row["m_allowed"] == privacy.DIRICHLET_MULTINOMIAL.largest_m(N, -row["alpha"], row["theta"], 2.5,
                                                                           None, m_cap=N)
    # the recommendation: the pure option that meets with the smallest ratio, shown with its verdict
    best = pure[pure["meets_utility"]].sort_values("ratio").iloc[0]
    assert any(i.icon == "🧭" and "pure ε-DP release" in shown(i.value) for i in at.info)
    assert len(_verdicts(at)) == 1 and "Verdict: pure" in _verdicts(at)[0]
    _ok(at.button(key="_plan_load").click().run())
    assert at.session_state["regime"] == "dm"
    assert at.session_state["alpha_dm"] == pytest.approx(best["alpha"])
    assert at.session_state["m"] == int(best["m"])
    grids = {c: at.session_state["transforms"][c]["grid"] for c in ("earnings", "age")}
    label = best["coarsening"]
    assert all(f"{c}: grid step {step:g} " in label for c, step in grids.items())
    assert at.session_state["settings_chosen_from_data"] is True
    assert "each numeric column's public grid step are set" in " ".join(shown(i.value) for i in at.info)
    # the Privacy page reads them: z from the grids, the verdict pure
    _ok(at.switch_page("app_pages/privacy.py").run())
    z = math.prod(math.floor((hi - lo) / grids[c]) + 1 for c, (lo, hi) in (("earnings", (0, 100)), ("age", (25, 34))))
    assert int(best["z"]) == z
    assert f"z = **{z:,}** public categories" in " ".join(md.value for md in at.markdown)
    assert "Verdict: pure" in _verdicts(at)[0]
    assert at.session_state["settings_chosen_from_data"] is True
    # a grid step changed by hand ends the planner's say (as θ, m and α do)
    _ok(at.switch_page("app_pages/data.py").run())
    at.number_input(key="_w_tf_age_grid").set_value(grids["age"] + 1.0).run()
    assert at.session_state["transforms"]["age"]["grid"] == grids["age"] + 1.0
    assert at.session_state["settings_chosen_from_data"] is False


def test_planner_says_which_columns_keep_the_pure_path_closed():
    at = _app(["earnings", "degree"])    # degree: categorical without a public category list
    _ok(at.switch_page("app_pages/planner.py").run())
    assert any("cannot be on a pure path" in i.value for i in at.info)
    gaps = at.dataframe[0].value
    assert list(gaps["column"]) == ["degree"] and "public category list" in gaps["what it lacks"].iloc[0]
    _ok(at.button(key="_plan_run").click().run())
    assert (at.dataframe[-1].value["verdict"] != "pure").all()
    # with a typed public list the pure options are searched
    at.session_state["transforms"]["degree"]["categories"] = ("highschool", "bachelor", "master", "doctorate")
    _ok(at.run())
    assert not any("cannot be on a pure path" in i.value for i in at.info)
    assert at.checkbox(key="_plan_pure").value is True


def test_privacy_page_points_a_weak_release_to_the_pure_path(sample):
    at = _app(["earnings"])
    _ok(at.switch_page("app_pages/privacy.py").run())
    assert "Verdict: weak" in _verdicts(at)[0]
    pointer = next(i.value for i in at.info if "A pure ε-DP release would have the verdict pure" in i.value)
    m_pure = privacy.DIRICHLET_MULTINOMIAL.largest_m(N, -1.0, 11.0, 2.5, None, m_cap=5000)
    assert m_pure == math.floor(math.expm1(2.5)) == 11
    assert f"over z = 11 public rows (θ = z·α = 11), the largest pure m is **{m_pure}**" in pointer
    assert "grid steps proposed from the public bounds for 1 numeric column(s)" in pointer
    # the utility cost: core's own numbers for the same releases (seed 1, 20 runs each)
    cost = pure_utility_cost(sample[["earnings"]], {"earnings": "numeric"}, {"earnings": 10.0}, alpha=1.0,
                             m_pure=m_pure, theta=2.0, m=100, runs=20, rng=np.random.default_rng(1),
                             bounds={"earnings": (0.0, 100.0)}, log={"earnings": False})
    table = at.dataframe[0].value
    row = table.iloc[0]
    assert row["column"] == "earnings" and row["public domain"] == "grid step 10 (proposed): 11 points"
    assert row["expected W1, pure release"] == f"{cost['earnings']['pure']:.3g}"
    assert row["expected W1, σ = 0 release now"] == f"{cost['earnings']['dp']:.3g}"
    assert cost["earnings"]["pure"] > cost["earnings"]["dp"]          # the price of pure, in dollars per hour
    # one click: the Dirichlet–multinomial at the largest pure m on the proposed grid
    _ok(at.button(key="switch_to_pure").click().run())
    assert at.session_state["regime"] == "dm" and at.session_state["m"] == m_pure
    assert at.session_state["transforms"]["earnings"]["grid"] == 10.0
    assert "Verdict: pure" in _verdicts(at)[0]
    assert not any("A pure ε-DP release would have" in i.value for i in at.info)


def test_privacy_page_names_the_columns_without_a_public_domain():
    at = _app(["earnings", "gender"])
    _ok(at.switch_page("app_pages/privacy.py").run())
    assert any("1 of the released columns lack one" in i.value for i in at.info)
    gaps = at.dataframe[0].value
    assert list(gaps["column"]) == ["gender"] and "cannot be on a pure path" in gaps["what it lacks"].iloc[0]
