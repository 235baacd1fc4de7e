"""The release Compare, Inference and Audit evaluate (issue 36 items 2 and 4; AppTest).

After a σ < 0 pure release (Dirichlet–multinomial over a public grid) and after an AIM release drawn
on the Synthetic data page, each of the three pages says at the top which release it evaluates,
runs without an exception or an error box, and reads that release: the Audit page's verdict is the
Synthetic data page's, Compare's first row is the release's mechanism, Inference gives the Dirichlet
posterior (σ < 0) or says why there is no conjugate one (AIM). Small sizes: the bundled
``dyadic_geometric.csv`` (n = 10 000, x on [0, 1]) with R = 5.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core.mechanisms import peers_available
from test_app import APP, TIMEOUT

DYADIC = "dyadic_geometric.csv"
PAGES = ("app_pages/compare.py", "app_pages/inference.py", "app_pages/audit.py")


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _banner(at: AppTest) -> str:
    found = [i.value for i in at.info if i.value.startswith("**Evaluating:**")]
    assert len(found) == 1, [i.value for i in at.info]
    return found[0]


def _verdict(at: AppTest) -> str:
    found = [a.value for a in (*at.success, *at.warning, *at.error) if "Verdict:" in a.value]
    assert len(found) == 1, found
    return found[0]


def _drawn(mechanism: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["sample_name"] = DYADIC
    at.session_state["delta"] = 1e-6
    at.session_state["runs"] = 5
    _ok(at.run())
    if mechanism == "dm":   # σ < 0 over the public grid of x: step 1/8 on [0, 1], z = 9
        at.session_state["transforms"]["x"]["grid"] = 0.125
        at.session_state["regime"] = "dm"
        at.session_state["alpha_dm"] = 1.0
        at.session_state["m"] = 10   # within the pure limit (at most 11 rows at α = 1, ε = 2.5)
    _ok(at.switch_page("app_pages/synthetic_data.py").run())
    if mechanism != "dm":
        _ok(at.selectbox(key="_w_release_mechanism").set_value(mechanism).run())
    _ok(at.button[0].click().run())   # Generate release
    return at


def _check_pages(at: AppTest, label: str) -> dict:
    verdict = _verdict(at)
    banners = {}
    for page in PAGES:
        _ok(at.switch_page(page).run())
        assert not at.error, (page, [e.value for e in at.error])
        banners[page] = _banner(at)
        assert label in banners[page] and "the release drawn on the Synthetic data page" in banners[page]
    # Audit: the same verdict as the Synthetic data page's
    assert _verdict(at).split("**")[1] == verdict.split("**")[1]
    return banners


def test_pure_release_is_evaluated_on_every_page():
    at = _drawn("dm")
    banners = _check_pages(at, "Dirichlet–multinomial")
    assert "verdict **pure**" in banners["app_pages/compare.py"]
    # Compare: the release's own mechanism is the first row, at its size, with its estimate before the run
    _ok(at.switch_page("app_pages/compare.py").run())
    assert any("Estimated time of a run" in c.value for c in at.caption)
    table = at.dataframe[0].value
    assert table["label"].iloc[1] == "PYPP (Dirichlet–multinomial, σ = -1)"
    _ok(at.button(key="run_compare").click().run())
    assert not at.error, [e.value for e in at.error]
    # Inference: the Dirichlet posterior over the public domain, with coverage columns
    _ok(at.switch_page("app_pages/inference.py").run())
    frames = [f.value for f in at.dataframe if "posterior mean" in f.value.columns]
    assert frames and set(frames[0]["quantity"]) >= {"mean", "median"}


@pytest.mark.skipif(not peers_available(), reason="the peers need OpenDP")
def test_aim_release_is_evaluated_on_every_page():
    at = _drawn("aim")
    banners = _check_pages(at, "AIM")
    assert "verdict **strong**" in banners["app_pages/audit.py"]
    _ok(at.switch_page("app_pages/inference.py").run())
    assert any("No conjugate posterior for AIM" in i.value for i in at.info)
    _ok(at.switch_page("app_pages/compare.py").run())
    table = at.dataframe[0].value
    assert table["label"].iloc[1] == "AIM, the evaluated release (m = n)"


def test_current_settings_are_evaluated_before_any_draw():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["sample_name"] = DYADIC
    at.session_state["runs"] = 5
    _ok(at.run())
    at.session_state["transforms"]["x"]["grid"] = 0.125
    at.session_state["regime"] = "dm"
    at.session_state["m"] = 10
    for page in PAGES:
        _ok(at.switch_page(page).run())
        assert not at.error, (page, [e.value for e in at.error])
        assert "the current settings (no release drawn yet)" in _banner(at)
    if peers_available():   # a peer chosen on the Synthetic data page, not drawn
        at.session_state["release_mechanism"] = "mst"
        for page in PAGES:
            _ok(at.switch_page(page).run())
            assert "MST" in _banner(at) and "no release drawn yet" in _banner(at)
