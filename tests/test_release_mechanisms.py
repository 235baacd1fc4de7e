"""Any mechanism is a release (docs/verdicts.md §6): AIM, MST, the OpenDP and the seed papers'
histograms go through run_recipe, the verdict, the gate, the card, the replay and the ledger."""

from __future__ import annotations

import json
import zipfile
from html import escape
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from core.cli import build_parser, main
from core.data import ColumnSpec
from core.ledger import Charge, charge_of_spec
from core.mechanisms import peers_available
from core.release import MECHANISMS, ReleaseRecipe, public_bundle, run_recipe
from core.release.card import release_card_html
from core.release.gate import AcknowledgementRequired, PublicationRefused, check_publication, spec_of_public_report
from core.release.mechanisms import RELEASE_MECHANISMS, MechanismSpec

pytestmark = pytest.mark.skipif(not peers_available(), reason="OpenDP is not installed")

N = 60
HISTOGRAMS = tuple(key for key in RELEASE_MECHANISMS if key != "pypp")


def _frame(n: int = N) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    return pd.DataFrame({"age": rng.integers(20, 60, n), "region": rng.choice(["north", "south", "east"], n)})


def _columns():
    return (ColumnSpec("age", bounds=(18.0, 65.0), decimals=0),
            ColumnSpec("region", kind="categorical", categories=("north", "south", "east")))


def _recipe(mechanism: str = "aim", **changes) -> ReleaseRecipe:
    fields = dict(source="upload", columns=_columns(), eps=1.0, delta=1e-9, mechanism=mechanism, bins=4, seed=11,
                  sigma=None, theta=None)
    fields.update(changes)
    return ReleaseRecipe(**fields)


@pytest.mark.parametrize("key", HISTOGRAMS)
def test_every_mechanism_releases_through_run_recipe(key):
    result = run_recipe(_recipe(key), _frame())
    report = result.public_report
    assert result.m == N and report["release"]["size_rule"] == "n"   # m = n by default
    assert list(result.synthetic.columns) == ["age", "region"] and len(result.synthetic) == N
    assert result.synthetic["age"].between(18, 65).all()
    assert set(result.synthetic["region"]) <= {"north", "south", "east"}
    mechanism = RELEASE_MECHANISMS[key]
    assert report["mechanism"]["name"] == key and report["mechanism"]["citation"] == mechanism.citation
    assert report["strength"] == ("pure" if mechanism.pure else "strong")
    assert result.curator_report["CONFIDENTIAL"] and result.curator_report["release"]["m_chosen_by"]
    card = release_card_html(dict(report, acknowledged=[]))
    assert escape(mechanism.label) in card and escape(mechanism.citation.split(",")[0]) in card


def test_verdict_weak_and_missed_go_through_the_gate():
    strong = run_recipe(_recipe(delta=1e-9 * 3), _frame()).public_report
    assert strong["strength"] == "strong" and check_publication(strong) == []
    assert strong["records_exposed"] == pytest.approx(N * 3e-9, rel=1e-6)
    weak = run_recipe(_recipe(delta=1e-3), _frame()).public_report   # n·δ = 0.06 > 0.01
    assert weak["strength"] == "weak"
    with pytest.raises(AcknowledgementRequired):
        check_publication(weak)
    assert check_publication(weak, ["weak"]) == ["weak"]
    missed = run_recipe(_recipe("mst", releases=2), _frame()).public_report   # 2 releases: ε = 2 > 1
    assert missed["strength"] == "missed"
    with pytest.raises(PublicationRefused, match="plan one release"):
        check_publication(missed)


def test_replay_is_byte_for_byte_from_the_recorded_recipe():
    first = run_recipe(_recipe(seed=None), _frame())
    again = run_recipe(ReleaseRecipe.from_json(first.recipe.to_json(confidential=True)), _frame())
    assert first.recipe.seed is not None
    assert again.synthetic_csv() == first.synthetic_csv()
    other = run_recipe(first.recipe.with_seed(first.recipe.seed + 1), _frame())
    assert other.synthetic_csv() != first.synthetic_csv()


def test_recipe_json_names_the_mechanism_and_its_parameters():
    recipe = _recipe("mst", delta=1e-6)
    obj = recipe.to_dict()
    assert obj["mechanism"] == {"name": "mst", "bins": 4} and obj["release_size"] == {"rule": "n", "m": None}
    assert ReleaseRecipe.from_dict(obj) == recipe
    assert MECHANISMS["pypp"] == ("sigma", "theta") and MECHANISMS["aim"] == ("bins",)
    pure = _recipe("opendp_laplace_histogram", delta=None).to_dict()
    assert ReleaseRecipe.from_dict(pure).delta is None   # pure: no δ target needed
    with pytest.raises(ValueError, match="recipe.mechanism"):
        ReleaseRecipe.from_dict({**obj, "mechanism": {"name": "aim", "sigma": 0.0}})


def test_missing_public_domain_and_unknown_mechanism_are_refused():
    with pytest.raises(ValueError, match=r"'age' \(public bounds: --bounds LO HI\)"):
        _recipe(columns=(ColumnSpec("age"),))
    with pytest.raises(ValueError, match=r"'region' \(a public category list: --public-categories region"):
        _recipe(columns=(ColumnSpec("region", kind="categorical"),))
    with pytest.raises(ValueError, match="no cell for a missing value: for 'region' choose missing = 'drop'"):
        _recipe(columns=(ColumnSpec("region", kind="categorical", categories=("a",), missing="value"),))
    with pytest.raises(ValueError, match="mechanism must be one of 'pypp', 'aim'"):
        _recipe("nonesuch")
    with pytest.raises(ValueError, match="size_rule 'global' is not available"):
        _recipe(size_rule="global")


def test_ledger_charges_the_peer_as_its_accounting_states_it():
    report = run_recipe(_recipe(delta=2e-9), _frame()).public_report
    spec = spec_of_public_report(report)
    assert isinstance(spec, MechanismSpec) and spec.sigma is None
    assert charge_of_spec(spec) == Charge("approximate", Fraction(1), 1 - Fraction(2e-9))
    pure = run_recipe(_recipe("opendp_laplace_histogram", delta=None), _frame()).public_report
    assert charge_of_spec(spec_of_public_report(pure)) == Charge("pure", Fraction(1), Fraction(1))


def test_pypp_public_report_keeps_its_form():
    recipe = ReleaseRecipe(source="upload", columns=_columns()[:1], eps=1.0, delta=0.5, m=5, theta=2.0, seed=3)
    assert recipe.to_dict()["mechanism"] == {"name": "pypp", "sigma": 0.0, "theta": 2.0}
    report = run_recipe(recipe, _frame()).public_report
    assert report["mechanism"] == {"name": "pypp", "description": "Pitman–Yor posterior predictive (PYPP)",
                                   "regime": report["mechanism"]["regime"], "sigma": 0.0, "theta": 2.0}


def test_help_lists_every_mechanism_with_its_reference():
    release = build_parser()._subparsers._group_actions[0].choices["release"]
    text = " ".join(release.format_help().split())
    for mechanism in RELEASE_MECHANISMS.values():
        assert f"{mechanism.key}: {mechanism.label}" in text
    assert "McKenna, Mullins, Sheldon & Miklau 2022" in text and "McKenna, Miklau & Sheldon 2021" in text


def _exit_code(call) -> int:
    with pytest.raises(SystemExit) as stopped:
        call()
    return stopped.value.code


def test_cli_aim_release_strong_bundle_replay_and_ledger(tmp_path, capsys):
    data = tmp_path / "public.csv"
    _frame(80).to_csv(data, index=False)
    ledger, bundle, recipe = str(tmp_path / "ledger.sqlite"), tmp_path / "public.zip", tmp_path / "CONFIDENTIAL_r.json"
    common = ["release", str(data), "--mechanism", "aim", "--column", "age", "--categorical", "region",
              "--bounds", "18", "65", "--decimals", "0", "--public-categories", "region", "north,south,east",
              "--eps", "1", "--delta", "1e-9", "--bins", "4"]
    assert main(["ledger", ledger, "budget", "survey", "--eps", "2", "--delta", "1e-6"]) == 0
    assert main([*common, "--public-bundle", str(bundle), "--save-recipe", str(recipe),
                 "--curator-bundle", str(tmp_path / "CONFIDENTIAL_record.zip"),
                 "--ledger", ledger, "--dataset", "survey"]) == 0
    with zipfile.ZipFile(bundle) as zf:
        release = json.loads(zf.read("release.json"))
        synthetic, card = zf.read("synthetic.csv"), zf.read("release_card.html").decode()
        public_recipe = json.loads(zf.read("recipe.json"))
    assert release["mechanism"]["name"] == "aim" and release["strength"] == "strong"
    assert release["release"]["m"] == 80 and release["ledger"]["release_index"] == 1
    assert "McKenna, Mullins, Sheldon &amp; Miklau 2022" in card and public_recipe["seed"] is None
    # replay from the CONFIDENTIAL recipe (with its seed): the same bytes
    assert main(["release", "--recipe", str(recipe), str(data), "--out", str(tmp_path / "again.csv")]) == 0
    assert (tmp_path / "again.csv").read_bytes() == synthetic
    capsys.readouterr()
    assert main(["ledger", ledger, "show", "survey", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["datasets"][0]["releases"]
    assert [r["mechanism"] for r in shown] == ["aim"]
    # a peer without a public domain, or with PYPP's parameters: exit 2 naming what is missing
    assert _exit_code(lambda: main(["release", str(data), "--mechanism", "mst", "--column", "age", "--eps", "1",
                                    "--delta", "1e-9", "--out", str(tmp_path / "x.csv")])) == 2
    assert "'age' (public bounds: --bounds LO HI)" in capsys.readouterr().err
    assert _exit_code(lambda: main([*common, "--theta", "2", "--out", str(tmp_path / "x.csv")])) == 2
    assert "--theta do not apply to --mechanism aim" in capsys.readouterr().err
