"""AppTest of the Release planner's candidates side by side (issue 35 item 4, docs/verdicts.md §7):
on the bundled ``dyadic_geometric.csv`` (n = 10 000, column x on its public bounds [0, 1]) the
planner lays PYPP's best σ = 0 and pure releases next to AIM and MST measured on the confidential
data; "Release this one" for AIM makes AIM the Synthetic data page's mechanism at the plan's
target, and its release asks the ``mechanism_from_data`` acknowledgement (the choice read the
confidential comparison)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core.mechanisms import PEERS_MISSING, peers_available
from core.release.choices import CHOICE_TITLES
from test_app import APP, TIMEOUT
from ui.text import shown

DYADIC = "dyadic_geometric.csv"


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _planner() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["sample_name"] = DYADIC
    at.session_state["delta"] = 1e-6          # n·δ = 0.01: AIM and MST are strong
    _ok(at.run())
    _ok(at.switch_page("app_pages/planner.py").run())
    at.number_input(key="_plan_runs").set_value(5)
    at.number_input(key="_plan_evals").set_value(3)
    at.number_input(key="_plan_w1_x").set_value(0.05)
    return _ok(at.button(key="_plan_run").click().run())


def _table(at: AppTest):
    return next(d.value for d in at.dataframe if "candidate" in d.value.columns)


@pytest.mark.skipif(not peers_available(), reason="the optional extra 'peers' (OpenDP) is not installed")
def test_measure_and_release_aim_from_the_planner():
    at = _planner()
    assert not [d for d in at.dataframe if "candidate" in d.value.columns]   # laid out once measured
    assert any("Curator-only" in w.value for w in at.warning)
    _ok(at.button(key="_cand_measure").click().run())
    rows = _table(at).set_index("candidate")
    for label in ("AIM", "MST"):
        assert rows.loc[label, "verdict"] == "strong" and rows.loc[label, "m"] == 10_000
        assert rows.loc[label, "unavailable"] == "" and rows.loc[label, "W1[x]"] > 0
        assert rows.loc[label, "size"] == "10,000 rows, as many as the data's records"
    assert rows.loc["PYPP pure (Dirichlet–multinomial over public grids)", "verdict"] == "pure"
    assert any(i.icon == "🧭" and "Release " in shown(i.value) for i in (*at.info, *at.error))
    # the recommended candidate's verdict box names the comparison among its choices
    assert any(CHOICE_TITLES["mechanism_from_data"] in w.value for w in at.warning)

    _ok(at.button(key="_cand_load_aim").click().run())
    assert at.session_state["release_mechanism"] == "aim"
    assert at.session_state["mechanism_chosen_from_data"] is True
    assert at.session_state["delta"] == 1e-6 and at.session_state["eps"] == at.session_state["_plan_eps"]
    assert any("Loaded: **AIM**" in i.value for i in at.info)

    _ok(at.switch_page("app_pages/synthetic_data.py").run())
    assert at.selectbox(key="_w_release_mechanism").value == "aim"
    _ok(next(b for b in at.button if b.label == "Generate release").click().run())
    boxes = [box.key for box in at.checkbox if str(box.key or "").startswith("acknowledge_")]
    assert "acknowledge_mechanism_from_data" in boxes
    # the mechanism chosen by hand is no longer the comparison's choice
    _ok(at.selectbox(key="_w_release_mechanism").set_value("mst").run())
    assert at.session_state["mechanism_chosen_from_data"] is False


def test_peers_say_why_they_cannot_run_without_a_public_domain():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["columns"] = ["earnings", "degree"]   # degree: no public category list
    _ok(at.run())
    _ok(at.switch_page("app_pages/planner.py").run())
    at.number_input(key="_plan_runs").set_value(3)
    at.number_input(key="_plan_evals").set_value(2)
    _ok(at.button(key="_plan_run").click().run())
    _ok(at.button(key="_cand_measure").click().run())
    rows = _table(at).set_index("candidate")
    for label in ("AIM", "MST"):
        why = rows.loc[label, "unavailable"]
        assert ("'degree'" in why and "public category list" in why) or why == PEERS_MISSING
        assert rows.loc[label, "verdict"] == "—"
    assert not [b for b in at.button if b.key in ("_cand_load_aim", "_cand_load_mst")]
