"""A peer mechanism released from the app (AppTest; issue 35 item 1, docs/verdicts.md §6): on the
Synthetic data page the curator chooses AIM instead of PYPP; the release is calibrated at the
Privacy page's target with m = n, shown with its verdict, charged once to the privacy ledger on
the public download's click, and its curator record's recipe replays it byte for byte through
``core.run_recipe``. Without a public domain the page names the column and what it needs, and
offers no Generate; a weak peer asks its acknowledgement like PYPP.

The strong release uses the bundled ``dyadic_geometric.csv`` (n = 10 000, column x on its public
bounds [0, 1]) at δ = 10⁻⁶, the Privacy page's smallest δ: n·δ = 0.01, exactly the strong limit
(the 13 501 records of ``cps_earnings.csv`` give n·δ > 0.01 at every δ the page offers).
"""

from __future__ import annotations

import io
import json
import zipfile

from streamlit.testing.v1 import AppTest

from core import ledger as L
from core.release import RELEASE_MECHANISMS, ReleaseRecipe, run_recipe
from test_app import APP, TIMEOUT, media_fetcher
from ui.text import shown

PUBLIC, CSV, CURATOR = ("Download public release (zip)", "Download synthetic CSV",
                        "Download CONFIDENTIAL curator record (zip)")
MECHANISM = "_w_release_mechanism"
DYADIC, N_DYADIC = "dyadic_geometric.csv", 10_000


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _page(*, sample: str = DYADIC, delta: float = 1e-6, columns=None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["sample_name"] = sample
    at.session_state["delta"] = delta
    if columns is not None:
        at.session_state["columns"] = list(columns)
    _ok(at.run())
    return _ok(at.switch_page("app_pages/synthetic_data.py").run())


def _buttons(at: AppTest) -> dict:
    return {b.proto.label: b.proto for b in at.get("download_button")}


def _zip(payload: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(payload)) as z:
        return {name: z.read(name) for name in z.namelist()}


def _verdicts(at: AppTest) -> list[str]:
    return [a.value for a in (*at.success, *at.warning, *at.error) if "Verdict:" in a.value]


def test_aim_release_is_strong_charged_once_and_replays_byte_for_byte(own_ledger, monkeypatch):
    fetch = media_fetcher(monkeypatch)
    at = _page()
    assert at.selectbox(key=MECHANISM).value == "pypp"             # the default: PYPP, unchanged
    assert any("Settings from the **Privacy** page" in md.value for md in at.markdown)
    assert list(at.selectbox(key=MECHANISM).options) == [
        at.selectbox(key=MECHANISM).format_func(k) for k in ["pypp", *[k for k in RELEASE_MECHANISMS if k != "pypp"]]]
    _ok(at.selectbox(key=MECHANISM).set_value("aim").run())
    captions = " ".join(shown(c.value) for c in at.caption)
    assert "McKenna" in captions and "PVLDB" in captions           # what it is, and its reference
    assert "before it is drawn: **strong**" in captions
    assert any(f"m = n = {N_DYADIC:,}" in md.value for md in at.markdown)

    _ok(at.button[0].click().run())                                  # Generate release
    assert not at.error, [e.value for e in at.error]
    assert len(_verdicts(at)) == 1 and "Verdict: strong" in _verdicts(at)[0]
    assert not [box for box in at.checkbox if str(box.key or "").startswith("acknowledge_")]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["released rows m"] == f"{N_DYADIC:,}" and metrics["mechanism"] == "AIM"
    assert "rows with a new value (drawn from H)" not in metrics    # PYPP's panels: not for a peer
    shown_command = " ".join(c.value for c in at.code)
    assert "release --recipe CONFIDENTIAL_recipe.json --out synthetic.csv" in shown_command

    own_ledger(DYADIC)                                               # the sample's name: the default dataset
    _ok(at.run())
    buttons = _buttons(at)
    assert not buttons[PUBLIC].disabled and buttons[PUBLIC].deferred_file_id
    with L.open_ledger(own_ledger.location) as ledger:
        assert ledger.release_count() == 0                           # nothing charged at page run
    public = _zip(fetch(buttons[PUBLIC]))                            # the deferred click: charged first
    report = json.loads(public["release.json"])
    assert report["mechanism"]["name"] == "aim" and report["strength"] == "strong"
    assert report["release"]["m"] == N_DYADIC and report["ledger"]["release_index"] == 1
    assert b"AIM" in public["release_card.html"]
    assert fetch(buttons[CSV]) == public["synthetic.csv"]            # the same release: not charged again
    with L.open_ledger(own_ledger.location) as ledger:
        entry = ledger.dataset(DYADIC)
    assert len(entry.releases) == 1 and entry.releases[0].state == "complete"

    record = _zip(fetch(buttons[CURATOR]))
    recipe = ReleaseRecipe.from_json(record["CONFIDENTIAL_recipe.json"])
    assert (recipe.mechanism, recipe.size_rule, recipe.eps, recipe.delta) == ("aim", "n", 2.5, 1e-6)
    assert recipe.seed is not None and json.loads(public["recipe.json"])["seed"] is None
    assert run_recipe(recipe).synthetic_csv() == public["synthetic.csv"]   # replays byte for byte

    # the Inference page evaluates the peer's release and says why it has no conjugate posterior for it
    _ok(at.switch_page("app_pages/inference.py").run())
    assert any("No conjugate posterior for AIM" in i.value for i in at.info)   # why, in words (issue 36)


def test_a_peer_names_the_missing_public_domain_and_a_weak_one_asks_its_acknowledgement():
    at = _page(sample="cps_earnings.csv", columns=["earnings", "degree"])
    _ok(at.selectbox(key=MECHANISM).set_value("mst").run())
    refusal = " ".join(shown(e.value) for e in at.error)
    assert "'degree'" in refusal and "public category list" in refusal and "'earnings'" not in refusal
    assert not [b for b in at.button if b.label == "Generate release"]   # no Generate offered
    # with a public category list typed, the peer can release: n·δ = 13 501·10⁻⁶ > 0.01, weak
    at.session_state["transforms"]["degree"]["categories"] = ("bachelor", "highschool")
    _ok(at.run())
    assert not at.error, [e.value for e in at.error]
    _ok(at.button[0].click().run())
    assert "Verdict: weak" in _verdicts(at)[0]
    assert [box.key for box in at.checkbox if str(box.key or "").startswith("acknowledge_")] == ["acknowledge_weak"]
    assert _buttons(at)[PUBLIC].disabled                            # until acknowledged (and a budget set)
    # back to PYPP: its settings and panels, unchanged
    _ok(at.selectbox(key=MECHANISM).set_value("pypp").run())
    assert any("Settings from the **Privacy** page" in md.value for md in at.markdown)
    assert any("press **Generate release** again" in i.value for i in at.info)
