"""The release planner's candidates side by side and which to release (core.planning.candidates,
docs/verdicts.md §7), and the data-dependent choice of a mechanism chosen on that comparison
(``mechanism_from_data``: recipe JSON, public report, gate)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

import core.planning.candidates as candidates_module
from core.data import ColumnSpec, prepare
from core.mechanisms import PEERS_MISSING, peers_available
from core.planning import (
    Candidate,
    GuaranteeTarget,
    PureSearch,
    UtilityTarget,
    candidates_side_by_side,
    peer_candidates,
    plan_release,
    recommend,
    size_in_words,
)
from core.release import RELEASE_MECHANISMS, ReleaseRecipe, public_report
from core.release.choices import CHOICE_TITLES, data_dependent_choices
from core.validation import PrivacyLeakWarning
from core.release.gate import ACKNOWLEDGEMENTS, AcknowledgementRequired, check_publication, required_acknowledgements

needs_peers = pytest.mark.skipif(not peers_available(), reason="the optional extra 'peers' is not installed")


# ----------------------------------------------------------------------------- m in words
@pytest.mark.parametrize("m, n, words", [
    (11, 13_501, "11 rows: too few for most uses"),
    (1, 5, "1 row: too few for most uses"),
    (99, 99, "99 rows: too few for most uses"),          # too few comes first, even at m = n
    (100, 13_501, "100 rows: a small sample of the 13,501 records"),
    (1_350, 13_501, "1,350 rows: a small sample of the 13,501 records"),   # 1 350 < n/10 = 1 350.1
    (1_351, 13_501, "1,351 rows, like the data's 13,501 records"),
    (13_501, 13_501, "13,501 rows, as many as the data's records"),
    (20_000, 13_501, "20,000 rows, like the data's 13,501 records"),
])
def test_size_in_words_thresholds(m, n, words):
    assert size_in_words(m, n) == words


def test_size_in_words_checks_its_arguments():
    with pytest.raises(ValueError, match="n"):
        size_in_words(5, 0)
    with pytest.raises(ValueError, match="m"):
        size_in_words(-1, 10)


# ----------------------------------------------------------------------------- the rule
def _cand(key, verdict, *, m=1000, ratio=0.5, unavailable=None, n=10_000):
    meets = None if unavailable else ratio <= 1
    return Candidate(key, key.upper(), "aim", {}, m, n,
                     verdict=None if unavailable else verdict, size_words=size_in_words(m, n),
                     metrics={"x": {"w1": ratio}}, utility={"x": ratio}, ratio=ratio, meets_utility=meets,
                     unavailable=unavailable)


def test_verdict_first_among_those_meeting_the_target():
    weak = _cand("weak_big", "weak", m=10_000, ratio=0.1)      # more margin and more rows, but weak
    strong = _cand("strong", "strong", m=500, ratio=0.9)
    pure = _cand("pure", "pure", m=50, ratio=0.95)
    advice = recommend([weak, strong, pure])
    assert advice.candidate is pure and advice.meets_utility
    assert [c.key for c in advice.ranked] == ["pure", "strong", "weak_big"]
    # never weak while a strong one meets the target
    advice = recommend([weak, strong])
    assert advice.candidate is strong and "Also meeting it" in advice.message


def test_weak_only_when_no_pure_or_strong_one_meets_and_it_says_so():
    weak = _cand("weak", "weak", ratio=0.5)
    strong = _cand("strong", "strong", ratio=3.0)               # misses the target
    advice = recommend([strong, weak], UtilityTarget(w1=1.0))
    assert advice.candidate is weak
    assert advice.message.startswith("No pure or strong candidate meets the utility target")
    assert "STRONG (strong: w1 of 'x' is 3 against a target of 1 (3× the target))" in advice.message
    # the order itself stays verdict first: the strong one is listed before the weak one
    assert [c.key for c in advice.ranked] == ["strong", "weak"]


def test_ties_go_to_the_larger_m_then_the_smaller_ratio():
    a = _cand("a", "strong", m=500, ratio=0.2)
    b = _cand("b", "strong", m=800, ratio=0.6)
    c = _cand("c", "strong", m=800, ratio=0.4)
    assert recommend([a, b, c]).candidate is c


def test_none_meets_says_so_plainly():
    pure = _cand("pure", "pure", ratio=2.0)
    weak = _cand("weak", "weak", ratio=1.5)
    advice = recommend([weak, pure], UtilityTarget(w1=1.0))
    assert not advice.meets_utility and advice.candidate is pure     # privacy first
    assert advice.message.startswith("None of the candidates meets the utility target")
    assert "2× the target" in advice.message


def test_missed_and_unavailable_are_never_recommended():
    missed = _cand("missed", "missed", ratio=0.1)
    gone = _cand("gone", None, unavailable="the peers library is missing")
    advice = recommend([missed, gone])
    assert advice.candidate is None and "No candidate can be released" in advice.message
    assert "the peers library is missing" in advice.message
    assert [c.key for c in advice.ranked] == ["missed", "gone"]


# ----------------------------------------------------------------------------- the plan and the peers
@pytest.fixture(scope="module")
def dyadic():
    rng = np.random.default_rng(3)
    x = np.round(rng.beta(2, 5, 2_000), 3)
    return pd.DataFrame({"x": x})


@pytest.fixture(scope="module")
def targets():
    return GuaranteeTarget(2.5, 1e-6), UtilityTarget(w1=0.05)


def test_plan_options_become_candidates_with_the_regimes_verdicts(dyadic, targets):
    guarantee, utility = targets
    plan = plan_release(dyadic, {"x": "numeric"}, GuaranteeTarget(2.5, 0.05), utility, runs=4, max_evaluations=3,
                        rng=np.random.default_rng(1), bounds={"x": (0.0, 1.0)},
                        pure=PureSearch({"x": (0.01, 0.1)}, max_evaluations=3))
    sigma0, pure = candidates_side_by_side(plan, n=len(dyadic))
    best0 = next(o for o in plan.options if not o.pure)
    best_pure = next(o for o in plan.options if o.pure)
    assert (sigma0.key, sigma0.m, sigma0.verdict, sigma0.settings["theta"]) == (
        "pypp_sigma0", best0.m, best0.verdict, best0.theta)
    assert (pure.key, pure.m, pure.verdict, pure.settings["alpha"]) == ("pypp_pure", best_pure.m, "pure",
                                                                        best_pure.alpha)
    assert sigma0.utility == {"x": best0.predicted["x"]["w1"]} and sigma0.meets_utility == best0.meets_utility
    assert sigma0.guarantee.releases == 1 and sigma0.size_words == size_in_words(best0.m, len(dyadic))
    # a plan without a kind lists it as unavailable, saying why
    only0 = plan_release(dyadic, {"x": "numeric"}, GuaranteeTarget(2.5, 0.05), utility, runs=3, max_evaluations=2,
                         rng=np.random.default_rng(1), bounds={"x": (0.0, 1.0)})
    _, missing = candidates_side_by_side(only0, n=len(dyadic))
    assert missing.unavailable and "no pure option" in missing.unavailable and not missing.releasable


@needs_peers
def test_peer_verdicts_are_the_mechanism_spec_guarantees(dyadic, targets):
    guarantee, utility = targets
    prepared = prepare(dyadic, [ColumnSpec("x", bounds=(0.0, 1.0))])
    progress = []
    aim, mst = peer_candidates(prepared, dyadic, GuaranteeTarget(2.5, 1e-6, releases=2), utility, bins=10,
                               rng=np.random.default_rng(7), runs=2, progress=lambda f, msg: progress.append(f))
    assert progress[-1] == 1.0 and progress == sorted(progress)
    for cand in (aim, mst):
        recipe = ReleaseRecipe(source="upload", columns=(ColumnSpec("x", bounds=(0.0, 1.0)),), eps=2.5, delta=1e-6,
                               mechanism=cand.key, bins=10, sigma=None, theta=None, m=None, releases=2)
        expected = RELEASE_MECHANISMS[cand.key].spec(recipe, 2_000, 2_000).global_guarantee()
        assert cand.guarantee == expected and cand.verdict == expected.verdict
        assert cand.m == cand.n == 2_000 and cand.settings == {"bins": 10}
        assert cand.seconds > 0 and 0 < cand.utility["x"] < 1 and cand.utility["x"] == cand.metrics["x"]["w1"]
        assert cand.meets_utility == (cand.ratio <= 1)
    # the same seed, the same measurement
    again = peer_candidates(prepared, dyadic, GuaranteeTarget(2.5, 1e-6, releases=2), utility, bins=10,
                            rng=np.random.default_rng(7), runs=2)
    assert [c.utility for c in again] == [aim.utility, mst.utility]


@needs_peers
def test_a_peer_without_a_public_domain_says_why(dyadic, targets):
    guarantee, utility = targets
    with pytest.warns(PrivacyLeakWarning):
        no_bounds = prepare(dyadic, [ColumnSpec("x")])    # bounds read off the data: no public domain
    (aim,) = peer_candidates(no_bounds, dyadic, guarantee, utility, bins=10, rng=np.random.default_rng(1),
                             mechanisms=("aim",))
    assert not aim.available and aim.verdict is None
    assert "'x'" in aim.unavailable and "public bounds" in aim.unavailable
    holed = dyadic.assign(x=dyadic["x"].where(dyadic.index % 50 > 0))   # missing kept as a value: no cell
    kept = prepare(holed, [ColumnSpec("x", bounds=(0.0, 1.0), missing="value")])
    (mst,) = peer_candidates(kept, holed, guarantee, utility, bins=10, rng=np.random.default_rng(1),
                             mechanisms=("mst",))
    assert "no cell for a missing value" in mst.unavailable and not mst.releasable


def test_without_the_peers_library_the_peers_say_so(dyadic, targets, monkeypatch):
    guarantee, utility = targets
    monkeypatch.setattr(candidates_module, "peers_available", lambda: False)
    prepared = prepare(dyadic, [ColumnSpec("x", bounds=(0.0, 1.0))])
    (mst,) = peer_candidates(prepared, dyadic, guarantee, utility, bins=10, rng=np.random.default_rng(1),
                             mechanisms=("mst",))
    assert mst.unavailable == PEERS_MISSING and math.isnan(mst.ratio) and mst.meets_utility is None


# ----------------------------------------------------------------------------- the data-dependent choice
PUBLIC_X = ColumnSpec("x", bounds=(0.0, 1.0))
STRONG = dict(source="upload", columns=(PUBLIC_X,), eps=1.0, delta=0.01, m=1, theta=1e5, seed=1)


def test_mechanism_from_data_round_trips_and_is_gated():
    chosen = ReleaseRecipe(**STRONG, mechanism_chosen_from_data=True)
    text = chosen.to_json()
    assert json.loads(text)["data"]["mechanism_chosen_from_data"] is True
    assert ReleaseRecipe.from_json(text) == chosen
    assert chosen.public().mechanism_chosen_from_data is True            # published: the choice is public
    plain = ReleaseRecipe(**STRONG)
    assert ReleaseRecipe.from_json(plain.to_json()).mechanism_chosen_from_data is False
    old = json.loads(plain.to_json())
    del old["data"]["mechanism_chosen_from_data"]                         # written before the field existed
    assert ReleaseRecipe.from_dict(old).mechanism_chosen_from_data is False
    with pytest.raises(ValueError, match="mechanism_chosen_from_data"):
        ReleaseRecipe(**STRONG, mechanism_chosen_from_data="yes")
    assert [c.key for c in data_dependent_choices(chosen, 400)] == ["mechanism_from_data"]
    report = public_report(chosen, n=400, m=1)
    assert report["strength"] == "strong" and report["conditional_on"] == [CHOICE_TITLES["mechanism_from_data"]]
    needed = required_acknowledgements(report)
    assert set(needed) == {"mechanism_from_data"} and "confidential data" in needed["mechanism_from_data"]
    with pytest.raises(AcknowledgementRequired) as caught:
        check_publication(report, tuple(k for k in ACKNOWLEDGEMENTS if k != "mechanism_from_data"))
    assert set(caught.value.missing) == {"mechanism_from_data"}
    assert check_publication(report, ("mechanism_from_data",)) == ["mechanism_from_data"]


@needs_peers
def test_a_peer_recipe_carries_the_choice_too():
    recipe = ReleaseRecipe(source="upload", columns=(PUBLIC_X,), eps=1.0, delta=1e-6, mechanism="aim", bins=10,
                           sigma=None, theta=None, m=None, mechanism_chosen_from_data=True)
    assert ReleaseRecipe.from_json(recipe.to_json()) == recipe
    report = public_report(recipe, n=1_000, m=1_000)
    assert "mechanism_from_data" in required_acknowledgements(report)
