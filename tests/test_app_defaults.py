"""AppTests of the defaults that must never destroy data or mislead (issue 25).

* Ticking "I know public bounds" leaves the bounds empty until typed: nothing is clipped,
  the bounds stay read off the data (with the warning), and log gives no error.
* Messages of an earlier run or upload do not outlive their cause.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from test_app import _upload   # the app on an upload, as a session gets it
from ui.selection import content_hash

REPO = Path(__file__).resolve().parents[1]
APP = str(REPO / "app.py")
TIMEOUT = 120
LEAK = "read off the"


@pytest.fixture(scope="module")
def sample_earnings() -> pd.Series:
    return pd.read_csv(REPO / "sample_data" / "cps_earnings.csv")["earnings"]


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def test_ticking_public_bounds_never_fills_in_a_default_nor_clips():
    rng = np.random.default_rng(3)
    age = rng.integers(17, 91, 400).astype(float)
    at = _upload(pd.DataFrame({"age": age}).to_csv(index=False).encode(), "mine.csv")
    metrics = {m.label: m.value for m in at.metric}
    _ok(at.checkbox(key="_w_tf_age_bounds_public").check().run())
    # both bounds empty, nothing clipped: the profile is the data's, the bounds still the data's (said so)
    assert at.number_input(key="_w_tf_age_lo").value is None
    assert at.number_input(key="_w_tf_age_hi").value is None
    assert {m.label: m.value for m in at.metric} == metrics
    assert not any("were clipped" in x.value for x in [*at.info, *at.warning])
    assert any(LEAK in w.value and f"({age.min():g}, {age.max():g})" in w.value for w in at.warning)
    assert any("Type both public bounds" in i.value for i in at.info)
    # log on with empty bounds: no "lo > 0" error from a default
    _ok(at.checkbox(key="_w_tf_age_log").check().run())
    # one bound typed: still pending, still nothing clipped
    _ok(at.number_input(key="_w_tf_age_lo").set_value(1.0).run())
    assert {m.label: m.value for m in at.metric} == metrics
    # both typed: public bounds, no leak warning; values outside are clipped and said so
    _ok(at.number_input(key="_w_tf_age_hi").set_value(60.0).run())
    assert not any(LEAK in w.value for w in at.warning)
    assert any("were clipped" in w.value and "check the bounds" in w.value for w in at.warning)


def _loaded(at: AppTest) -> bool:
    return any("Loaded:" in i.value for i in at.info)


def test_the_planners_loaded_message_goes_when_a_later_run_fails_or_the_data_change(sample_earnings):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["columns"] = ["earnings"]
    _ok(at.run())
    _ok(at.switch_page("app_pages/planner.py").run())
    at.number_input(key="_plan_evals").set_value(2)
    at.number_input(key="_plan_w1_earnings").set_value(float(sample_earnings.std()))   # a generous target
    _ok(at.button(key="_plan_run").click().run())
    _ok(at.button(key="_plan_load").click().run())
    assert _loaded(at)
    # a later run that meets no target: its error, and no word of settings loaded from another plan
    at.number_input(key="_plan_w1_earnings").set_value(1e-9)
    at.button(key="_plan_run").click().run()
    assert not at.exception and at.error and not _loaded(at)
    # loaded again, then a new file: nothing of the previous data is said to be loaded
    at.number_input(key="_plan_w1_earnings").set_value(float(sample_earnings.std()))
    _ok(at.button(key="_plan_run").click().run())
    _ok(at.button(key="_plan_load").click().run())
    assert _loaded(at)
    content = b"earnings\n" + b"\n".join(str(v).encode() for v in range(1, 61)) + b"\n"
    at.session_state["source_kind"] = "upload"
    at.session_state["upload"] = {"name": "next.csv", "bytes": content, "hash": content_hash(content)}
    _ok(at.switch_page("app_pages/data.py").run())
    _ok(at.switch_page("app_pages/planner.py").run())
    assert not _loaded(at)
