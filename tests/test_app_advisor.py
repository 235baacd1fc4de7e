"""AppTest of the coarsening advisor (Data page) and the Release planner page (issue 14 §1, §3).

Checks what the pages show against independent computations on the bundled sample:
the advisor's k, singletons and m* against ``core.data.frequency_table`` and
``core.privacy.max_instance_synthetic_size`` of the coarsened rows; the profile after
"Apply" against ``core.data.prepare`` of the coarsened rows; the planner's loaded settings
against the plan it shows.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from core.data import apply_coarsening
from core.data import ColumnSpec, frequency_table, prepare
from core.privacy import max_instance_synthetic_size, max_synthetic_size
from ui.advisor import GLOBAL_M, INSTANCE_M
from ui.text import shown as shown_text
# The download recorder and the command-line replay of the app's release tests.
from test_app import _release_downloads, _replay, downloads  # noqa: F401

REPO = Path(__file__).resolve().parents[1]
APP = str(REPO / "app.py")
SAMPLE = REPO / "sample_data" / "cps_earnings.csv"
COLUMNS = ["earnings", "degree", "gender", "age"]
TIMEOUT = 120


@pytest.fixture(scope="module")
def sample() -> pd.DataFrame:
    return pd.read_csv(SAMPLE)


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _advisor(at: AppTest | None = None) -> AppTest:
    """The Data page with four released columns and the advisor evaluated."""
    if at is None:
        at = AppTest.from_file(APP, default_timeout=TIMEOUT)
        at.session_state["columns"] = COLUMNS
        _ok(at.run())
    assert "Coarsening advisor (singleton-aware)" in [e.label for e in at.expander]
    return _ok(at.button(key="_adv_run").click().run())


def _metric(at: AppTest, label: str) -> int:
    return int(next(m.value for m in at.metric if m.label == label).replace(",", ""))


def _specs(sample):
    # the sample's public bounds (sample_data/public_bounds.json), as the Data page uses them
    return [ColumnSpec("earnings", bounds=(0.0, 100.0)), ColumnSpec("degree", kind="categorical"),
            ColumnSpec("gender", kind="categorical"), ColumnSpec("age", bounds=(25.0, 34.0))]


def test_advisor_numbers_and_apply_change_the_profile(sample, downloads, tmp_path):  # noqa: F811 (fixture)
    at = _advisor()
    eps, delta, theta = (float(at.session_state[k]) for k in ("eps", "delta", "theta"))
    assert any("looking at the confidential data" in w.value for w in at.warning)   # SELECTION_CAVEAT
    shown = at.dataframe[-1].value
    # the table leads with the global m* (what limits a public release; one number for every candidate)
    assert list(shown.columns[:2]) == ["candidate", GLOBAL_M]
    assert {"data-dependent", "k", "singletons", INSTANCE_M, "frontier"} <= set(shown.columns)
    assert set(shown[GLOBAL_M]) == {max_synthetic_size(len(sample), theta, eps, delta)}
    assert any(f"Global m\\* = {max_synthetic_size(len(sample), theta, eps, delta):,}" in md.value
               for md in at.markdown)
    assert any(c.startswith("cost[") for c in shown.columns)
    labels = at.selectbox(key="_adv_pick").options
    assert list(shown["candidate"]) == labels and len(labels) >= 2
    # The row applied equals an independent computation on the coarsened rows (below).
    before = _metric(at, "singletons k₁")
    pick = next(label for label, k1 in zip(shown["candidate"], shown["singletons"]) if k1 < before)
    at.selectbox(key="_adv_pick").set_value(pick)
    _ok(at.button(key="_adv_apply").click().run())
    applied = at.session_state["coarsening"]
    assert applied and at.session_state["coarsening_chosen_from_data"] is True
    assert all(t.kind != "identity" for t in applied)
    coarse = apply_coarsening(sample[COLUMNS], applied)
    table = frequency_table(coarse.to_numpy(dtype=object))
    row = shown[shown["candidate"] == pick].iloc[0]
    assert (row["k"], row["singletons"]) == (table.k, table.singletons)
    assert row[INSTANCE_M] == max_instance_synthetic_size(table.counts, theta, eps, delta)
    # The profile reflects the coarsening (prepare runs after it).
    expected = prepare(coarse, _specs(sample)).table
    assert _metric(at, "singletons k₁") == expected.singletons < before
    assert _metric(at, "distinct values k") == expected.k
    assert any("Coarsening applied before the transforms" in i.value for i in at.info)
    assert any("depends on the confidential data" in w.value for w in at.warning)
    # The release of the app records it: the recipe carries the coarsening, the public report
    # states the data-dependent choice, and the command line replays the release byte for byte.
    _ok(at.switch_page("app_pages/synthetic_data.py").run())
    _ok(next(b for b in at.button if b.label == "Generate release").click().run())
    csv_bytes, public, curator = _release_downloads(at, downloads)
    recipe = json.loads(curator["CONFIDENTIAL_recipe.json"])
    assert recipe["data"]["coarsening"] == [t.to_dict() for t in applied]
    assert recipe["data"]["coarsening_chosen_from_data"] is True
    assert json.loads(public["recipe.json"])["data"]["coarsening"] == recipe["data"]["coarsening"]
    release = json.loads(public["release.json"])
    assert release["statement_depends_on_data"] is True
    assert any("coarsening advisor" in t for t in (c["statement"] + " " + c["consequence"] for c in release["data_dependent_choices"]))
    assert _replay(curator["CONFIDENTIAL_recipe.json"], tmp_path) == csv_bytes
    _ok(at.switch_page("app_pages/data.py").run())
    _ok(at.button(key="_adv_clear").click().run())
    assert at.session_state["coarsening"] == () and at.session_state["coarsening_chosen_from_data"] is False
    assert _metric(at, "singletons k₁") == before


def test_advisor_user_steps_keep_list_and_min_count(sample):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["columns"] = ["earnings", "degree"]
    _ok(at.run())
    at.multiselect(key="_adv_menu_earnings").set_value([])
    at.text_input(key="_adv_steps_earnings").input("5, 20")
    at.text_input(key="_adv_keep_degree").input("bachelor")
    at.number_input(key="_adv_min_degree").set_value(1000)
    at = _advisor(_ok(at.run()))
    shown = at.dataframe[-1].value
    assert len(shown) == 3 * 3   # (as recorded, 5, 20) × (as recorded, keep, min_count)
    flagged = shown[shown["data-dependent"] != ""]["candidate"]
    assert len(flagged) == 3 and all("(data-dependent)" in c for c in flagged)
    at.text_input(key="_adv_steps_earnings").input("five").run()
    assert any("rounding step 'five'" in shown_text(e.value) for e in at.error) and not at.exception


def test_planner_runs_and_loads_the_settings(sample, downloads):  # noqa: F811 (fixture)
    at = _advisor()
    _ok(at.switch_page("app_pages/planner.py").run())
    assert any("computed from the confidential data" in w.value for w in at.warning)
    at.radio(key="_plan_candidates").set_value("frontier")
    for col in ("earnings", "age"):   # generous W1 targets, in the column's units
        at.number_input(key=f"_plan_w1_{col}").set_value(float(sample[col].std()))
    _ok(at.button(key="_plan_run").click().run())
    assert any(i.icon == "🧭" for i in at.info), "the plan should meet these targets"
    # the recommended release's verdict, never green when weak
    verdicts = [a.value for a in (*at.success, *at.warning, *at.error) if "Verdict:" in a.value]
    assert len(verdicts) == 1 and not any("Verdict: weak" in s.value for s in at.success)
    plan_rows = at.dataframe[-1].value
    assert {"coarsening", "theta", "m", "ratio", "meets_utility"} <= set(plan_rows.columns)
    recommended = plan_rows[plan_rows["meets_utility"]].sort_values("ratio").iloc[0]
    _ok(at.button(key="_plan_load").click().run())
    assert at.session_state["regime"] == "dp"
    assert at.session_state["theta"] == pytest.approx(recommended["theta"])
    assert at.session_state["m"] == int(recommended["m"])
    assert at.session_state["eps"] == pytest.approx(at.session_state["_plan_eps"])
    assert at.session_state["delta"] == at.session_state["_plan_delta"]
    assert "Next: **Privacy**" in " ".join(i.value for i in at.info)
    # The Privacy and Synthetic data pages read the loaded settings.
    _ok(at.switch_page("app_pages/privacy.py").run())
    assert at.select_slider(key="_w_theta").value == pytest.approx(recommended["theta"])
    assert at.select_slider(key="_w_m").value == int(recommended["m"])
    _ok(at.switch_page("app_pages/synthetic_data.py").run())
    # θ and m were searched on the confidential data: the release's recipe and public report say so.
    assert at.session_state["settings_chosen_from_data"] is True
    _ok(next(b for b in at.button if b.label == "Generate release").click().run())
    _, public, curator = _release_downloads(at, downloads)
    assert json.loads(curator["CONFIDENTIAL_recipe.json"])["data"]["settings_chosen_from_data"] is True
    release = json.loads(public["release.json"])
    assert release["statement_depends_on_data"] is True
    assert any("release planner" in t for t in (c["statement"] + " " + c["consequence"] for c in release["data_dependent_choices"]))


def test_planner_refuses_bad_input_with_a_message():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["columns"] = ["earnings"]
    _ok(at.run())
    _ok(at.switch_page("app_pages/planner.py").run())
    at.text_input(key="_plan_thetas").input("1, lots")
    at.button(key="_plan_run").click().run()
    assert not at.exception
    assert any("θ grid: 'lots' is not a number" in shown_text(e.value) for e in at.error)
    at.text_input(key="_plan_thetas").input("1")
    at.radio(key="_plan_candidates").set_value("frontier")
    at.button(key="_plan_run").click().run()
    assert any("the advisor has no frontier yet" in shown_text(e.value) for e in at.error) and not at.exception


def test_planner_default_transforms_one_column_at_a_time_when_the_grid_is_large():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["columns"] = ["earnings", "age", "year"]   # 7 × 7 × 7 default transforms > 200
    _ok(at.run())
    _ok(at.switch_page("app_pages/planner.py").run())
    at.radio(key="_plan_candidates").set_value("defaults")
    at.number_input(key="_plan_evals").set_value(3)
    _ok(at.button(key="_plan_run").click().run())
    table = at.dataframe[-1].value
    rows = table[table["verdict"] != "pure"]          # the σ = 0 settings (the pure options come on top)
    assert len(rows) == 3 and len(table) == 6 and any(i.icon == "🧭" for i in at.info)
    # each evaluated setting coarsens at most one column
    assert all(str(label).count("as recorded") >= 2 for label in rows["coarsening"])


def test_planner_on_a_large_upload_works_on_its_frequency_table(monkeypatch):
    """A large upload keeps distinct rows only: the planner plans on them with their counts
    (never expanding to the records), and its default m is the number of records."""
    import numpy as np

    from core.planning import planner as core_planner
    from core.data import FULL_READ_MAX_BYTES
    from ui.selection import content_hash

    rng = np.random.default_rng(2)
    n = 120_000
    frame = pd.DataFrame({"amount": np.round(rng.lognormal(5.0, 0.5, n), -1),
                          "region": rng.choice(["north", "south", "east"], n),
                          "note": rng.choice(["x" * 20, "y" * 20], n)})   # pads the file past the full-read size
    content = frame.to_csv(index=False).encode()
    assert len(content) > FULL_READ_MAX_BYTES
    seen = {}
    real = core_planner.plan_release

    def spy(data, *args, counts=None, **kwargs):
        seen.update(rows=len(data), records=None if counts is None else int(np.sum(counts)))
        return real(data, *args, counts=counts, **kwargs)

    monkeypatch.setattr(core_planner, "plan_release", spy)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["source_kind"] = "upload"
    at.session_state["upload"] = {"name": "big.csv", "bytes": content, "hash": content_hash(content)}
    at.session_state["columns"] = ["amount", "region"]
    _ok(at.run())
    _ok(at.switch_page("app_pages/planner.py").run())
    assert at.number_input(key="_plan_m_max").value == min(n, at.number_input(key="_plan_m_max").max)
    _ok(at.button(key="_plan_run").click().run())
    assert seen["records"] == n and seen["rows"] < n / 10
