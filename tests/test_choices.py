"""Every data-dependent choice is named, gated one by one and keeps a verdict from green
(core.release.choices, core.release.gate; docs/verdicts.md §4), and the curator's verbatim
counts compare like with like (docs/verdicts.md §2)."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pandas as pd
import pytest

from core.data import ColumnSpec, ColumnTransform
from core.mechanisms import py_predictive_counts
from core.release import ReleaseRecipe, public_bundle, public_report, run_recipe
from core.release.card import release_card_html
from core.release.choices import CHOICE_TITLES, DataDependentChoice, data_dependent_choices
from core.release.gate import ACKNOWLEDGEMENTS, AcknowledgementRequired, check_publication, required_acknowledgements

PUBLIC_WAGE = ColumnSpec("wage", bounds=(0.0, 200.0), decimals=2, missing="value")
#: m = 1 of n = 400 at θ = 10⁵: n·δ = 400/(10⁵ + 400) < 0.01, a strong σ = 0 release
STRONG = dict(source="upload", columns=(PUBLIC_WAGE,), eps=1.0, delta=0.01, m=1, theta=1e5, seed=1)


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(5)
    wage = np.round(rng.lognormal(2.5, 0.6, 400), 2)
    wage[:7] = np.nan
    return pd.DataFrame({"wage": wage, "sex": rng.choice(["female", "male"], 400)})


def _recipe(**changes) -> ReleaseRecipe:
    return ReleaseRecipe(**{**STRONG, **changes})


#: One recipe per choice: the key the gate must ask for it.
CASES = {
    "bounds_from_data": dict(columns=(ColumnSpec("wage", decimals=2, missing="value"),)),
    "settings_from_data": dict(settings_chosen_from_data=True),
    "coarsening_from_data": dict(coarsening=(ColumnTransform("wage", "signif", digits=2),),
                                 coarsening_chosen_from_data=True),
    "dropped_missing": dict(columns=(ColumnSpec("wage", bounds=(0.0, 200.0), decimals=2, missing="drop"),)),
    "instance_size_rule": dict(m=None, size_rule="instance"),
}


def test_no_choice_no_banner():
    report = public_report(_recipe(columns=(ColumnSpec("wage", bounds=(0.0, 200.0), decimals=2,
                                                       missing="value"),)), n=400, m=1)
    assert report["strength"] == "strong"
    assert report["data_dependent_choices"] == [] and report["conditional_on"] == []
    assert report["statement_depends_on_data"] is False
    assert required_acknowledgements(report) == {}
    assert "Conditional on" not in release_card_html(report)


@pytest.mark.parametrize("key", sorted(CASES))
def test_each_choice_is_named_and_needs_its_own_acknowledgement(key):
    recipe = _recipe(**CASES[key])
    choices = data_dependent_choices(recipe, 400)
    assert [c.key for c in choices] == [key]
    report = public_report(recipe, n=400, m=1)
    (listed,) = report["data_dependent_choices"]
    assert listed == choices[0].to_dict() and listed["title"] == CHOICE_TITLES[key]
    assert listed["consequence"] and report["conditional_on"] == [CHOICE_TITLES[key]]
    # the verdict stays strong, but it is conditional: never green on the card
    assert report["strength"] == "strong"
    card = release_card_html(report)
    assert "Verdict: strong (conditional)" in card and "#1b7a3a" not in card and "Conditional on" in card
    # the gate asks this choice and no other; the acknowledgement of another does not do
    needed = required_acknowledgements(report)
    assert set(needed) == {key} and listed["consequence"] in needed[key]
    others = tuple(k for k in ACKNOWLEDGEMENTS if k != key)
    with pytest.raises(AcknowledgementRequired) as caught:
        check_publication(report, others)
    assert set(caught.value.missing) == {key} and ACKNOWLEDGEMENTS[key] in str(caught.value)
    assert check_publication(report, (key,)) == [key]


def test_choices_add_up_and_the_weak_verdict_is_one_more(frame):
    recipe = _recipe(columns=(ColumnSpec("wage", missing="drop"),), settings_chosen_from_data=True, theta=2.0,
                     m=10, delta=0.05)
    result = run_recipe(recipe, frame)
    report = result.public_report
    assert report["strength"] == "weak"
    assert set(required_acknowledgements(report)) == {"weak", "bounds_from_data", "settings_from_data",
                                                      "dropped_missing"}
    with pytest.raises(AcknowledgementRequired) as caught:
        public_bundle(result, acknowledged=("weak", "bounds_from_data"))
    assert set(caught.value.missing) == {"settings_from_data", "dropped_missing"}
    payload = public_bundle(result, acknowledged=tuple(ACKNOWLEDGEMENTS))
    with zipfile.ZipFile(io.BytesIO(payload)) as zf:
        released = json.loads(zf.read("release.json"))
        card = zf.read("release_card.html").decode()
        readme = zf.read("README.txt").decode()
    # only what was needed is recorded, each named on the card and in the README
    assert released["acknowledged"] == ["bounds_from_data", "dropped_missing", "settings_from_data", "weak"]
    assert released["conditional_on"] == [CHOICE_TITLES[k] for k in ("bounds_from_data", "settings_from_data",
                                                                     "dropped_missing")]
    for title in released["conditional_on"]:
        assert title in card and title in readme
    assert f"n = {393:,} counts the records left" in card


def test_sigma_in_0_1_is_instance_accounting():
    assert [c.key for c in data_dependent_choices(_recipe(sigma=0.3), 400)] == ["instance_accounting"]


def test_a_choice_key_is_checked():
    with pytest.raises(ValueError, match="key must be one of"):
        DataDependentChoice("seed", "x")
    assert set(ACKNOWLEDGEMENTS) == {"weak", *CHOICE_TITLES}


def test_records_exposed_is_n_delta_on_every_public_file(frame):
    result = run_recipe(_recipe(theta=2.0, m=10, delta=0.05), frame)
    report = result.public_report
    assert report["records_exposed"] >= report["data"]["n"] * report["guarantee"]["delta"]
    payload = public_bundle(result, acknowledged=tuple(ACKNOWLEDGEMENTS))
    with zipfile.ZipFile(io.BytesIO(payload)) as zf:
        assert "n·δ" in zf.read("release_card.html").decode() and "n·δ" in zf.read("README.txt").decode()


# ----------------------------------------------------------------------------- verbatim counts, like with like
def test_verbatim_expectations_match_simulation():
    """k₁·T₁ distinct unique records and k₁·m/(θ + n) rows per release (docs/verdicts.md §2),
    against the exact sampler: the singletons' copy counts S_i."""
    counts = np.array([1] * 30 + [2] * 10 + [5] * 4)   # k₁ = 30, n = 70
    theta, m, reps = 3.0, 25, 20000
    n, k1 = int(counts.sum()), 30
    rng = np.random.default_rng(11)
    distinct = np.empty(reps)
    rows = np.empty(reps)
    for r in range(reps):
        old, _ = py_predictive_counts(counts, 0.0, theta, m, rng)
        copies = old[:k1]
        distinct[r], rows[r] = np.count_nonzero(copies), copies.sum()
    t1 = m / (theta + n + m - 1)
    for observed, expected in ((distinct, k1 * t1), (rows, k1 * m / (theta + n))):
        assert abs(observed.mean() - expected) < 4 * observed.std() / np.sqrt(reps)
    # rows and records differ: each copied record is copied (θ + n + m − 1)/(θ + n) times on average
    assert rows.mean() > distinct.mean()


def test_a_pure_target_missed_is_refused_in_words():
    """σ < 0 with no δ target (pure): a missed release states its target without a δ (it once
    raised a TypeError formatting δ = None)."""
    recipe = _recipe(columns=(ColumnSpec("sex", kind="categorical", categories=("female", "male")),), sigma=-2.0,
                     theta=4.0, delta=None, m=50, eps=2.0)
    report = public_report(recipe, n=400, m=50)
    assert report["strength"] == "missed" and any("(ε = 2)" in w for w in report["warnings"])
    with pytest.raises(ValueError, match=r"misses the target \(ε = 2\)\. At α = 2 .* at most m = 12 rows"):
        check_publication(report)
