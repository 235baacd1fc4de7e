"""Verdicts, verbatim risk and attack terms (core.privacy.verdict; docs/verdicts.md).

Every number is checked against an independent computation: the closed forms in rational
arithmetic or mpmath, enumeration of the Pólya urn, simulation of the release, and riskcal
(Kulynych & Gomez et al. 2024) on the privacy-loss distribution.
"""

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from riskcal import analysis as riskcal

from core import privacy as P
from core.mechanisms import py_predictive_counts
from core.privacy import pld
from core.privacy.verdict import (
    ATTACK_FPRS,
    composed_singleton_exact,
    composed_singleton_term,
    composed_singleton_term_at_most,
    expected_unique_records_copied,
    exposure_within_limit,
    largest_admissible,
    pure_attack_terms,
    pure_composition_holds,
    records_exposed,
    round_up,
    singleton_attack_terms,
    verdict_of,
)


def _spec(sigma, theta, m, n, eps, delta, k=1):
    return P.ReleaseSpec(sigma, theta, m, n, eps=eps, delta=delta, releases=k)


# ------------------------------------------------------------------ verbatim risk
@pytest.mark.parametrize("m, theta, n, k", [(1, 1.0, 3, 1), (39, 2.0, 3987, 1), (39, 2.0, 3987, 5),
                                            (5000, 0.5, 61395, 3), (10**6, 1e-3, 10**9, 1000)])
def test_composed_singleton_term_is_the_urn_probability(m, theta, n, k):
    # P(a weight-1 ball is never drawn in m steps of the Pólya urn) = Π (θ+n−1+j)/(θ+n+j),
    # telescoping to (θ+n−1)/(θ+n+m−1); k independent releases multiply.
    with mpmath.workdps(60):
        survive = (mpmath.mpf(theta) + n - 1) / (mpmath.mpf(theta) + n + m - 1)
        exact = 1 - survive**k
    got = composed_singleton_term(m, theta, n, k)
    assert got >= exact and got <= exact * (1 + 1e-9)


def test_urn_product_telescopes_by_enumeration():
    theta, n, m = Fraction(3, 2), 7, 9
    prod = Fraction(1)
    for j in range(m):
        prod *= (theta + n - 1 + j) / (theta + n + j)
    assert prod == (theta + n - 1) / (theta + n + m - 1)
    assert 1 - prod == Fraction(m) / (theta + n + m - 1)   # the singleton term T₁


def _urn_copies(tracked: int, n: int, theta: float, m: int, runs: int, rng) -> np.ndarray:
    """Simulate m steps of the Dirichlet-process predictive (the Pólya urn: a value's weight is
    its count in the data plus its copies so far, a new value has weight θ), tracking
    ``tracked`` values held once in the data; returns their copies, shape (runs, tracked)."""
    copies = np.zeros((runs, tracked))
    for j in range(m):
        weights = (1.0 + copies) / (theta + n + j)           # each tracked value's probability now
        u = rng.random(runs)[:, None]
        edges = np.cumsum(weights, axis=1)
        hit = (u < edges) & (u >= edges - weights)            # at most one tracked value per step
        copies += hit
    return copies


def test_verbatim_probability_by_simulation():
    # one singleton among n records: how often it appears in a release (and in one of three)
    n, theta, m, runs = 61, 2.0, 12, 200_000
    rng = np.random.default_rng(5)
    seen = _urn_copies(1, n, theta, m, runs, rng)[:, 0] >= 1
    p = composed_singleton_term(m, theta, n)
    assert abs(seen.mean() - p) < 5 * math.sqrt(p * (1 - p) / runs)
    three = seen.reshape(-1, 4)[:, :3].any(axis=1)
    p3 = composed_singleton_term(m, theta, n, 3)
    assert abs(three.mean() - p3) < 5 * math.sqrt(p3 * (1 - p3) / three.size)
    # the release itself (core's sampler) agrees, on fewer runs
    mult = np.array([1] + [3] * 20)
    drawn = np.array([py_predictive_counts(mult, 0.0, theta, m, rng)[0][0] >= 1 for _ in range(4000)])
    assert abs(drawn.mean() - p) < 5 * math.sqrt(p * (1 - p) / drawn.size)


def test_expected_unique_records_copied_by_simulation():
    mult = np.array([1] * 6 + [2] * 5 + [7])
    theta, m, runs = 1.5, 8, 100_000
    copied = (_urn_copies(6, int(mult.sum()), theta, m, runs, np.random.default_rng(11)) >= 1).sum(axis=1)
    expected = expected_unique_records_copied(mult, theta, m)
    assert expected == pytest.approx(6 * m / (theta + mult.sum() + m - 1), rel=1e-12)
    assert abs(copied.mean() - expected) < 5 * copied.std() / math.sqrt(runs)


def test_singleton_verdicts_are_exact_at_the_boundary():
    # θ = 1, n = 3, m = 1: T₁ = 1/4 exactly
    assert composed_singleton_term_at_most(1, 1.0, 3, 1, Fraction(1, 4))
    assert not composed_singleton_term_at_most(1, 1.0, 3, 1, Fraction(1, 4), strict=True)
    assert not composed_singleton_term_at_most(1, 1.0, 3, 1, np.nextafter(0.25, 0))
    # two releases: 1 − (3/4)² = 7/16
    assert composed_singleton_term_at_most(1, 1.0, 3, 2, Fraction(7, 16))
    assert not composed_singleton_term_at_most(1, 1.0, 3, 2, Fraction(7, 16) - Fraction(1, 10**30))


def test_round_up_is_the_smallest_double_at_or_above():
    for value in (Fraction(1, 3), Fraction(1, 100), Fraction(7, 16), Fraction(1, 10**9 + 7), Fraction(0),
                  Fraction(1), Fraction(10**400 + 1, 10**400)):
        x = round_up(value)
        assert Fraction(x) >= value and (x == 0 or Fraction(float(np.nextafter(x, 0.0))) < value)
    assert round_up(Fraction(1, 4)) == 0.25 and round_up(Fraction(1, 100)) == 0.01   # 0.01 is above 1/100


@pytest.mark.parametrize("answer, guess, hi", [(0, 5, 100), (1, 0, 100), (37, 36, 100), (37, 1000, 100),
                                               (100, 3, 100), (12345, 12000, 10**7), (9_999_999, 0, 10**7)])
def test_largest_admissible_bisects_from_the_guess(answer, guess, hi):
    asked = []

    def holds(m):
        asked.append(m)
        return m <= answer

    assert largest_admissible(holds, guess, 0, hi) == min(answer, hi)
    assert 0 not in asked and len(asked) <= 2 * math.log2(hi) + 4      # O(log), never one step at a time


# ------------------------------------------------------------------ verdicts
def test_verdict_words():
    assert verdict_of(pure=True, meets_target=True, exposure_ok=True) == "pure"
    assert verdict_of(pure=False, meets_target=True, exposure_ok=True) == "strong"
    assert verdict_of(pure=False, meets_target=True, exposure_ok=False) == "weak"
    for pure in (True, False):
        assert verdict_of(pure=pure, meets_target=False, exposure_ok=True) == "missed"
    assert "n·δ ≤ 0.01" in P.VERDICT_WORDS["strong"] and "n·δ > 0.01" in P.VERDICT_WORDS["weak"]
    assert not any("1/n" in words for words in P.VERDICT_WORDS.values())
    assert P.VERDICTS == ("pure", "strong", "weak", "missed")
    with pytest.raises(ValueError, match="verdict"):
        P.Guarantee("pure", "global", 1.0, 0.0, verdict="green")


def test_dirichlet_process_strong_and_weak_at_n_delta_one_in_100():
    # n = 4, m = 1, θ = 396: T₁ = 1/400 exactly, so n·δ = n·T₁ = 1/100 exactly (at every ε)
    n, m, theta = 4, 1, 396.0
    assert composed_singleton_exact(m, theta, n) * n == Fraction(1, 100)
    for eps in (0.1, 5.0):
        g = P.DIRICHLET_PROCESS.release_guarantee(_spec(0.0, theta, m, n, eps, 0.5))
        assert g.meets_target and g.verdict == "strong"          # n·δ = 0.01 is within 0.01
        assert g.records_exposed == 0.01 and Fraction(g.records_exposed) >= Fraction(1, 100)
    g = P.DIRICHLET_PROCESS.release_guarantee(_spec(0.0, theta - 2**-30, m, n, 5.0, 0.5))
    assert g.meets_target and g.verdict == "weak"                # T₁ a hair above 1/400: n·δ > 0.01
    assert g.records_exposed > 0.01
    g = P.DIRICHLET_PROCESS.release_guarantee(_spec(0.0, theta + 2**-30, m, n, 5.0, 0.5))
    assert g.verdict == "strong"
    # the δ target at T₁ = 1/400: the double 0.0025 is above 1/400 (met), the one below it is not
    assert P.DIRICHLET_PROCESS.release_guarantee(_spec(0.0, theta, m, n, 5.0, 0.0025)).verdict == "strong"
    below = float(np.nextafter(0.0025, 0))
    assert Fraction(below) < Fraction(1, 400)
    g = P.DIRICHLET_PROCESS.release_guarantee(_spec(0.0, theta, m, n, 5.0, below))
    assert not g.meets_target and g.verdict == "missed"
    # two releases: n·(1 − (1 − T₁)²) = 4·(799/160000) > 1/100 — weak, decided on the rational
    g = P.DIRICHLET_PROCESS.release_guarantee(_spec(0.0, theta, m, n, 5.0, 0.5, 2))
    assert g.verdict == "weak" and not exposure_within_limit(n, composed_singleton_exact(m, theta, n, 2))


def test_issue_example_one_record_in_expectation_is_weak():
    # n = 1000, θ = 1000, m = 2, ε = 5: δ = 2/2001 = 0.9995/n, about one record published outright
    # on average — strong under the old rule δ < 1/n, weak now
    g = P.DIRICHLET_PROCESS.release_guarantee(_spec(0.0, 1000.0, 2, 1000, 5.0, 0.01))
    assert g.meets_target and g.verdict == "weak"
    assert Fraction(g.delta) >= Fraction(2, 2001) and g.delta == round_up(Fraction(2, 2001))
    assert g.records_exposed == round_up(Fraction(2000, 2001)) and g.records_exposed < 1


def test_records_exposed_of_every_regime():
    dp = P.DIRICHLET_PROCESS.release_guarantee(_spec(0.0, 2.0, 39, 3987, 0.5, 0.05, 3))
    assert dp.records_exposed == records_exposed(3987, composed_singleton_exact(39, 2.0, 3987, 3))
    assert Fraction(dp.records_exposed) >= 3987 * composed_singleton_exact(39, 2.0, 3987, 3)
    assert P.DIRICHLET_MULTINOMIAL.release_guarantee(_spec(-1.0, 3.0, 39, 3987, 3.7, 0.01)).records_exposed == 0.0
    assert P.PITMAN_YOR.release_guarantee(_spec(0.3, 2.0, 10, 100, 2.0, 0.01)).records_exposed is None


def test_dirichlet_process_guarantee_is_the_exact_profile_at_every_eps():
    # δ_k = 1 − (1 − T₁)^k whatever ε, the attack advantage p_k itself: no statement prints a δ
    # above the advantage (the paper's δ*(ε) of Theorem 2 stays out of the guarantee)
    for eps in (0.05, 0.5, 2.5, 12.0, math.inf):
        for k in (1, 2, 5, 20, 100):
            g = P.DIRICHLET_PROCESS.release_guarantee(_spec(0.0, 2.0, 39, 3987, eps, 0.05, k))
            assert g.releases == k and g.delta == composed_singleton_term(39, 2.0, 3987, k)
            assert g.delta == g.attack.advantage == g.verbatim_probability
    star = P.global_delta(3987, 2.0, 39, 0.05)
    assert star > composed_singleton_term(39, 2.0, 3987)   # the paper's curve is above at small ε


def test_dirichlet_process_composition_never_falls_with_k():
    previous = 0.0
    for k in (1, 2, 5, 20, 100):
        g = P.DIRICHLET_PROCESS.release_guarantee(_spec(0.0, 2.0, 39, 3987, 0.5, 0.05, k))
        assert g.releases == k and g.delta >= previous
        previous = g.delta


def test_issue_example_sigma_negative_is_missed_below_the_pure_threshold():
    # 39 rows over 3 public categories, α = 1, ε = 2.5: global pure ε-DP needs ε ≥ log 40 ≈ 3.69
    g = P.DIRICHLET_MULTINOMIAL.release_guarantee(_spec(-1.0, 3.0, 39, 3987, 2.5, 0.01))
    assert g.kind == "pure" and g.verdict == "missed" and not g.meets_target
    assert g.eps >= math.log(40)
    g = P.DIRICHLET_MULTINOMIAL.release_guarantee(_spec(-1.0, 3.0, 39, 3987, 3.7, 0.01))
    assert g.verdict == "pure" and g.meets_target and g.delta == 0.0


def test_pitman_yor_has_no_global_guarantee():
    g = P.PITMAN_YOR.release_guarantee(_spec(0.3, 2.0, 10, 100, 2.0, 0.01))
    assert (g.kind, g.verdict, g.meets_target, g.attack) == ("none", "missed", False, None)


@pytest.mark.parametrize("alpha, k, eps", [(1.0, 1, 2.5), (0.5, 3, 4.0), (2.0, 10, 7.3), (1e-3, 2, 1.0)])
def test_pure_composition_boundary(alpha, k, eps):
    with mpmath.workdps(50):
        largest = int(mpmath.floor(mpmath.expm1(mpmath.mpf(eps) / k) * alpha))
    if largest >= 1:
        assert pure_composition_holds(largest, alpha, k, eps)
    assert not pure_composition_holds(largest + 1, alpha, k, eps)
    if k == 1 and largest >= 1:
        assert P.dirichlet_multinomial_is_pure([1], alpha, largest, eps, instance=False)
        assert not P.dirichlet_multinomial_is_pure([1], alpha, largest + 1, eps, instance=False)


# ------------------------------------------------------------------ attack terms
@pytest.mark.parametrize("m, theta, n, k", [(39, 2.0, 3987, 1), (200, 5.0, 1000, 1), (39, 2.0, 3987, 4)])
def test_singleton_attack_terms_against_riskcal(m, theta, n, k):
    terms = singleton_attack_terms(m, theta, n, k)
    loss = pld.pypp_global_loss(n, theta, m)
    (_, member), = loss.members(k)
    assert riskcal.get_advantage_from_pld(member) <= terms.advantage + 1e-9
    assert terms.advantage == pytest.approx(riskcal.get_advantage_from_pld(member), rel=1e-6, abs=1e-9)
    beta = riskcal.get_beta_from_pld(member, alpha=np.array(ATTACK_FPRS))
    for (fpr, tpr), b in zip(terms.tpr_at_fpr, beta):
        assert tpr >= 1 - b - 1e-9 and tpr == pytest.approx(1 - b, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("eps", [0.1, 1.0, 2.5, 3.6889, 8.0])
def test_pure_attack_terms_against_riskcal_and_mpmath(eps):
    terms = pure_attack_terms(eps)
    with mpmath.workdps(40):
        e = mpmath.exp(eps)
        assert terms.advantage >= (e - 1) / (e + 1)
        assert terms.advantage == pytest.approx(float((e - 1) / (e + 1)), rel=1e-10)
        for fpr, tpr in terms.tpr_at_fpr:
            exact = min(e * fpr, 1 - (1 - fpr) / e, 1)
            assert tpr >= exact and tpr == pytest.approx(float(exact), rel=1e-10)
    assert terms.advantage == pytest.approx(riskcal.get_advantage_from_adp(eps, 0.0), rel=1e-6)
    beta = riskcal.get_beta_from_adp(eps, 0.0, np.array(ATTACK_FPRS))
    for (fpr, tpr), b in zip(terms.tpr_at_fpr, beta):
        assert tpr == pytest.approx(1 - b, rel=1e-6, abs=1e-12)


def test_attack_terms_are_json_ready():
    d = singleton_attack_terms(39, 2.0, 3987).to_dict()
    assert set(d) == {"advantage", "tpr_at_fpr", "source"} and set(d["tpr_at_fpr"]) == {"0.01", "0.001"}
