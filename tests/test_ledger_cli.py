"""``python -m core ledger …`` and ``release --ledger PATH --dataset NAME`` (docs/audit.md §8.4)."""

from __future__ import annotations

import json
import zipfile

import pytest

from core.cli import main
from core.ledger import LEDGER_ENV, open_ledger


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("x\n" + "\n".join(str(v % 17) for v in range(50)) + "\n")
    return path


def _release(tmp_path, data, out, *extra):
    return main(["release", str(data), "--column", "x", "--bounds", "0", "20", "--theta", "2", "--m", "5",
                 "--eps", "1", "--delta", "0.2", "--accept-weak", "--public-bundle", str(tmp_path / out), *extra])


def _exit_code(call) -> int:
    with pytest.raises(SystemExit) as stopped:
        call()
    return stopped.value.code


def test_budget_releases_refusal_and_show(tmp_path, data, capsys):
    ledger = str(tmp_path / "ledger.sqlite")
    assert main(["ledger", ledger, "budget", "survey", "--eps", "1", "--delta", "0.18", "--by", "board"]) == 0
    # T₁ = 5/56 per release: two fit in δ = 0.18 (1 − (51/56)² ≈ 0.171), a third does not
    for name in ("one.zip", "two.zip"):
        assert _release(tmp_path, data, name, "--ledger", ledger, "--dataset", "survey") == 0
    capsys.readouterr()
    assert _exit_code(lambda: _release(tmp_path, data, "three.zip", "--ledger", ledger, "--dataset", "survey",
                                       "--curator-bundle", str(tmp_path / "CONFIDENTIAL_three.zip"))) == 2
    err = capsys.readouterr().err
    assert "exceed the budget" in err and "Remaining: ε = 1" in err and "Nothing was recorded" in err
    assert not (tmp_path / "three.zip").exists() and not (tmp_path / "CONFIDENTIAL_three.zip").exists()

    with zipfile.ZipFile(tmp_path / "two.zip") as bundle:
        report = json.loads(bundle.read("release.json"))
        card = bundle.read("release_card.html").decode()
        readme = bundle.read("README.txt").decode()
    block = report["ledger"]
    assert block["dataset"] == "survey" and block["release_index"] == 2
    assert block["budget"] == {"eps": 1.0, "delta": 0.18}
    assert block["cumulative"]["eps"] == 0.0 and 0.1705 < block["cumulative"]["delta"] < 0.1707
    assert "Privacy ledger" in card and "Privacy ledger: release 2 of dataset survey" in readme

    assert main(["ledger", ledger, "show"]) == 0
    text = capsys.readouterr().out
    assert "dataset 'survey': budget eps = 1, delta = 0.18 (set by board" in text and "complete" in text
    assert main(["ledger", ledger, "show", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["datasets"][0]
    assert [r["release_index"] for r in shown["releases"]] == [1, 2]
    assert all(r["state"] == "complete" and len(r["bundle_sha256"]) == 64 for r in shown["releases"])
    assert shown["remaining"]["eps"] == 1.0 and shown["releases"][1]["cumulative"] == block["cumulative"]


def test_the_default_ledger_is_found_by_the_environment(tmp_path, data, monkeypatch, capsys):
    monkeypatch.setenv(LEDGER_ENV, str(tmp_path / "team.sqlite"))
    assert main(["ledger", "default", "budget", "survey", "--eps", "2", "--delta", "0.5"]) == 0
    assert _release(tmp_path, data, "one.zip", "--ledger", "--dataset", "survey") == 0
    with open_ledger(tmp_path / "team.sqlite") as ledger:
        assert len(ledger.dataset("survey").releases) == 1


def test_ledger_usage_errors(tmp_path, data, capsys):
    ledger = str(tmp_path / "ledger.sqlite")
    assert _exit_code(lambda: _release(tmp_path, data, "a.zip", "--ledger", ledger)) == 2
    assert "--ledger and --dataset go together" in capsys.readouterr().err
    assert _exit_code(lambda: _release(tmp_path, data, "a.zip", "--ledger", ledger, "--dataset", "nobudget")) == 2
    assert "no budget is set for dataset 'nobudget'" in capsys.readouterr().err
    assert not (tmp_path / "a.zip").exists()
    assert _exit_code(lambda: main(["ledger", ledger, "budget", "d", "--eps", "-1"])) == 2
    assert _exit_code(lambda: main(["ledger", ledger, "show", "missing"])) == 2
    # a confidential output alone is no release: nothing is charged
    assert main(["ledger", ledger, "budget", "d", "--eps", "1", "--delta", "0.5"]) == 0
    assert main(["release", str(data), "--column", "x", "--bounds", "0", "20", "--theta", "2", "--m", "5", "--eps",
                 "1", "--delta", "0.2", "--report", str(tmp_path / "CONFIDENTIAL_r.json"), "--ledger", ledger,
                 "--dataset", "d"]) == 0
    assert "nothing is charged" in capsys.readouterr().err
    with open_ledger(ledger) as opened:
        assert opened.dataset("d").releases == ()
