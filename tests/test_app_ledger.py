"""The privacy ledger in the app (AppTest, the bundled sample; docs/audit.md §8): the Ledger page
sets a budget and lists releases; the Synthetic data page holds the public downloads back
without a budget, charges a release once on the click (never at page run), and refuses one
over budget — at page run, and on a click after another session spent the budget."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile

import pytest
from streamlit.runtime.media_file_storage import MediaFileStorageError
from streamlit.testing.v1 import AppTest

from core import ledger as L
from core.plots import ledger_figure
from test_app import APP, TIMEOUT, media_fetcher
from test_downloads_media import deferred_click

SAMPLE_NAME = "cps_earnings.csv"   # the default dataset name: the sample's file name
PUBLIC, CSV = "Download public release (zip)", "Download synthetic CSV"


def _app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _buttons(at: AppTest) -> dict:
    return {b.proto.label: b.proto for b in at.get("download_button")}


def _texts(at: AppTest) -> str:
    return "\n".join(e.value for kind in ("error", "warning", "success", "info", "caption") for e in getattr(at, kind))


def test_ledger_page_sets_a_budget_and_shows_which_ledger(own_ledger):
    at = _app()
    at.switch_page("app_pages/ledger.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(own_ledger.location in md.value for md in at.markdown)     # which ledger: shown
    assert any("No dataset has a budget yet" in i.value for i in at.info)
    at.get("text_input")[0].set_value("survey 2026")
    numbers = at.get("number_input")
    numbers[0].set_value(2.0)
    numbers[1].set_value(0.01)
    at.button[0].click().run()   # "Set budget", the form's submit button
    assert not at.exception, [e.value for e in at.exception]
    assert any("Budget of" in s.value for s in at.success)
    with L.open_ledger(own_ledger.location) as ledger:
        entry = ledger.dataset("survey 2026")
    assert (entry.budget_eps, entry.budget_delta, entry.set_by) == (2.0, 0.01, "local user")


def test_public_release_is_charged_on_the_click_once_and_refused_over_budget(own_ledger, monkeypatch):
    downloads = media_fetcher(monkeypatch)
    at = _app()
    at.session_state["m"] = 20   # σ = 0 on the sample, weak: the gate asks an acknowledgement
    at.switch_page("app_pages/synthetic_data.py").run()
    at.button[0].click().run()
    for box in at.checkbox:
        if str(box.key or "").startswith("acknowledge_"):
            box.check()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    # no budget: the public downloads are held back, the page says where to set one
    assert "no budget is set for the dataset" in _texts(at)
    assert _buttons(at)[PUBLIC].disabled and _buttons(at)[CSV].disabled
    assert at.text_input(key="_w_ledger_dataset").value == SAMPLE_NAME

    own_ledger(SAMPLE_NAME)
    at.run()
    buttons = _buttons(at)
    assert not buttons[PUBLIC].disabled and buttons[PUBLIC].deferred_file_id and not buttons[PUBLIC].url
    assert not buttons[CSV].disabled and buttons[CSV].deferred_file_id and not buttons[CSV].url
    with L.open_ledger(own_ledger.location) as ledger:
        assert ledger.release_count() == 0            # nothing recorded, nothing handed out at page run
    public = downloads(buttons[PUBLIC])
    csv = downloads(buttons[CSV])                     # the same drawn release: not charged again
    again = downloads(buttons[PUBLIC])
    assert again == public
    with zipfile.ZipFile(io.BytesIO(public)) as z:
        report = json.loads(z.read("release.json"))
        assert z.read("synthetic.csv") == csv
    with L.open_ledger(own_ledger.location) as ledger:
        entry = ledger.dataset(SAMPLE_NAME)
    assert len(entry.releases) == 1 and entry.releases[0].state == "complete"
    assert entry.releases[0].sha256 == hashlib.sha256(public).hexdigest()
    assert report["ledger"] == {"dataset": SAMPLE_NAME, "release_index": 1,
                                "cumulative": {"eps": entry.releases[0].cumulative_eps,
                                               "delta": entry.releases[0].cumulative_delta},
                                "budget": {"eps": 1e6, "delta": 0.999}}
    at.run()
    assert "recorded as release 1" in _texts(at)
    assert [m.value for m in at.metric if m.label == "ledger: releases so far"] == ["1"]

    # a new draw is a new release; another session spends the budget before the click
    at.button[0].click().run()
    buttons = _buttons(at)
    assert not buttons[PUBLIC].disabled
    spent = entry.releases[0].cumulative_delta
    own_ledger(SAMPLE_NAME, eps=1e6, delta=spent)    # exactly what is spent: nothing remains
    with pytest.raises(MediaFileStorageError, match="Failed to generate"):   # what the browser shows
        deferred_click(downloads.managers[-1], buttons[PUBLIC].deferred_file_id)
    with L.open_ledger(own_ledger.location) as ledger:
        assert ledger.release_count() == 1            # refused: nothing recorded
    at.run()
    shown = _texts(at)
    assert "the last download was refused" in shown and "over budget" in shown
    assert _buttons(at)[PUBLIC].disabled and _buttons(at)[CSV].disabled


def test_ledger_figure_draws_the_spend_and_the_budget():
    fig = ledger_figure([1, 2, 3], [0.5, 1.0, 1.5], [0.01, 0.0199, 0.029701], budget_eps=2.0, budget_delta=0.03,
                        incomplete=[False, False, True], dataset="<b>survey</b>")
    traces = {(t.name, t.xaxis): t for t in fig.data}
    assert list(traces[("cumulative δ", "x2")].y) == [0.0, 0.01, 0.0199, 0.029701]
    assert list(traces[("budget ε", "x")].y) == [2.0, 2.0] and list(traces[("budget δ", "x2")].y) == [0.03, 0.03]
    assert list(traces[("incomplete (counted)", "x")].x) == [3]
    assert "<b>" not in fig.layout.title.text          # the dataset's name is text, not markup
    with pytest.raises(ValueError, match="cumulative_eps"):
        ledger_figure([1, 2], [0.5], [0.1, 0.2], budget_eps=1.0, budget_delta=0.5)
    assert {t.name for t in ledger_figure([], [], [], budget_eps=1.0, budget_delta=0.1).data} == {
        "cumulative ε", "budget ε", "cumulative δ", "budget δ"}
