"""Old-values-only PYPP (thesis Algorithm 3; core.privacy.old_values, core.privacy.old_values_delta).

The released output is enumerated literally: every m-step predictive sequence of the
reference (tests/reference_pypp.py, no code shared with core) is mapped to its subsequence
of confidential values, and probabilities are aggregated per released sequence, under x and
under every neighbour (SPEC §8). The closed form (σ = 0) must match to 1e-10; the Monte
Carlo bound (σ ∈ (0, 1)) must cover the exact value.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest
from scipy import special, stats

from core.privacy import old_values as ov
from core import privacy
from reference_pypp import enumerate_outputs, enumerated_deltas, literal_algorithm_1

CASES = [([1, 2], 2.0), ([2, 2], 0.5), ([1, 1, 3], 1.0), ([2, 3], 2.0), ([4], 0.5), ([1, 3, 2], 0.7),
         ([3, 1], 5.0)]
EPS = np.array([0.05, 0.3, 0.7, 1.0, 1.5, 2.2, 3.0, np.inf])


def released(seq, k):
    """Algorithm 3's output: the draws equal to confidential values, in order."""
    return tuple(a for a in seq if isinstance(a, int) and a < k)


def released_law(multiplicities, sigma, theta, m):
    """{output: p_x} and {neighbour: {output: p_y}} by literal enumeration."""
    k = len(multiplicities)
    seqs, px, pys = enumerate_outputs(multiplicities, sigma, theta, m)
    law_x = defaultdict(float)
    for s, p in zip(seqs, px):
        law_x[released(s, k)] += p
    law_y = {}
    for desc, py in pys.items():
        acc = defaultdict(float)
        for s, p in zip(seqs, py):
            acc[released(s, k)] += p
        law_y[desc] = acc
    return dict(law_x), law_y


def enumerated_old_values_deltas(multiplicities, sigma, theta, m, eps):
    """(δ_x(ε), tight δ_x(ε)) of Algorithm 3 by brute force."""
    law_x, law_y = released_law(multiplicities, sigma, theta, m)
    outs = list(law_x)
    px = np.array([law_x[o] for o in outs])
    delta, tight = np.zeros(eps.size), np.zeros(eps.size)
    for acc in law_y.values():
        py = np.array([acc.get(o, 0.0) for o in outs])
        for j, e in enumerate(eps):
            bad = (py == 0) & (px > 0) if math.isinf(e) else px > math.exp(e) * py
            delta[j] = max(delta[j], px[bad].sum())
            if not math.isinf(e):
                tight[j] = max(tight[j], np.clip(px - math.exp(e) * py, 0, None).sum())
            else:
                tight[j] = max(tight[j], px[bad].sum())
    return delta, tight


def log_rf(a, n):
    return special.gammaln(a + n) - special.gammaln(a)


def closed_form_law(s, counts, sigma, theta, m):
    """P_x(released sequence) = DirMult pmf of (S, L) × one ordering (∏ s_i!/(Σ s_i)!)."""
    s = np.asarray(s, dtype=float)
    counts = np.asarray(counts, dtype=float)
    k, n, L = counts.size, counts.sum(), m - s.sum()
    log_p = (special.gammaln(m + 1) - special.gammaln(L + 1) - log_rf(theta + n, m)
             + log_rf(theta + k * sigma, L) + np.sum(log_rf(counts - sigma, s) - special.gammaln(s + 1)))
    log_order = np.sum(special.gammaln(s + 1)) - special.gammaln(s.sum() + 1)
    return math.exp(log_p + log_order)


# ------------------------------------------------------------------ law and ratios
@pytest.mark.parametrize("sigma", [0.0, 0.4])
@pytest.mark.parametrize("mult, theta", CASES[:5])
def test_release_law_is_the_dirichlet_multinomial_of_the_old_counts(mult, theta, sigma):
    """Enumerated law of the released sequence = DirMult(m; n_i − σ, θ + kσ) × uniform order."""
    for m in (1, 2, 3, 4):
        law_x, _ = released_law(mult, sigma, theta, m)
        assert math.isclose(sum(law_x.values()), 1.0, rel_tol=1e-12)
        for out, p in law_x.items():
            s = np.bincount(np.array(out, dtype=int), minlength=len(mult)) if out else np.zeros(len(mult))
            assert p == pytest.approx(closed_form_law(s, mult, sigma, theta, m), rel=1e-11, abs=1e-15)


@pytest.mark.parametrize("sigma", [0.0, 0.35])
def test_likelihood_ratios_a_to_d_match_enumeration(sigma):
    """Every neighbour's ratio p_x/p_y per output equals the derived (a)–(d), L-factors included."""
    mult, theta, m = [1, 2, 3], 1.3, 4
    k = len(mult)
    law_x, law_y = released_law(mult, sigma, theta, m)
    checked = 0
    for (l, v), acc in law_y.items():
        for out, px in law_x.items():
            s = np.bincount(np.array(out, dtype=int), minlength=k) if out else np.zeros(k, int)
            L = m - s.sum()
            py = acc.get(out, 0.0)
            if mult[l] == 1 and s[l] >= 1:
                assert py == 0.0      # singular
                continue
            if mult[l] >= 2:
                ratio = (mult[l] + s[l] - 1 - sigma) / (mult[l] - 1 - sigma)
            else:
                ratio = 1.0 if v == "V" else math.exp(log_rf(theta + k * sigma, L) - log_rf(theta + (k - 1) * sigma, L))
            if v == "V":
                if mult[l] >= 2:
                    ratio *= math.exp(log_rf(theta + k * sigma, L) - log_rf(theta + (k + 1) * sigma, L))
            else:
                ratio *= (mult[v] - sigma) / (mult[v] + s[v] - sigma)
            assert px / py == pytest.approx(ratio, rel=1e-10)
            checked += 1
    assert checked > 100


# ----------------------------------------------------------------- σ = 0: exact
@pytest.mark.parametrize("mult, theta", CASES)
def test_sigma0_delta_matches_enumeration_of_algorithm_3(mult, theta):
    for m in (1, 2, 3, 4):
        exact, _ = enumerated_old_values_deltas(mult, 0.0, theta, m, EPS)
        got = privacy.old_values_delta(mult, 0.0, theta, m, EPS)
        assert got.shape == EPS.shape
        np.testing.assert_allclose(got, exact, rtol=1e-10, atol=1e-14)
        assert np.all(got >= exact * (1 - 1e-15))            # rounded to the safe side
        for j, e in enumerate(EPS):                           # scalar ε gives the same number
            assert privacy.old_values_delta(mult, 0.0, theta, m, float(e)) == got[j]


@pytest.mark.parametrize("mult, theta", CASES)
def test_sigma0_suppressing_new_values_buys_nothing(mult, theta):
    """At σ = 0 Algorithm 3 and full PYPP have the same δ and the same tight profile."""
    m = 3
    finite = EPS[np.isfinite(EPS)]
    old_delta, old_tight = enumerated_old_values_deltas(mult, 0.0, theta, m, finite)
    full_delta, full_tight = enumerated_deltas(mult, 0.0, theta, m, finite)
    np.testing.assert_allclose(old_delta, full_delta, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(old_tight, full_tight, rtol=1e-9, atol=1e-14)


def test_sigma0_equals_instance_delta_at_realistic_size():
    rng = np.random.default_rng(3)
    mult = rng.integers(1, 40, size=400)
    eps = np.linspace(0.2, 6.0, 12)
    np.testing.assert_array_equal(privacy.old_values_delta(mult, 0.0, 2.0, 500, eps),
                                  privacy.instance_delta(mult, 0.0, 2.0, 500, eps))


# ----------------------------------------------------------- σ ∈ (0, 1): Monte Carlo
@pytest.mark.parametrize("mult, theta, sigma", [([1, 2], 1.0, 0.3), ([2, 3], 0.5, 0.5), ([1, 1, 3], 2.0, 0.25),
                                                ([2, 2], -0.2, 0.6)])
def test_monte_carlo_covers_the_enumerated_delta(mult, theta, sigma):
    m = 4
    exact, _ = enumerated_old_values_deltas(mult, sigma, theta, m, EPS)
    mc = ov.old_values_monte_carlo(mult, sigma, theta, m, EPS, n_mc=40000, rng=np.random.default_rng(11))
    assert np.all(np.abs(mc.estimate - exact) <= 4.5 * np.sqrt(exact * (1 - exact) / mc.n_mc) + 2.0 / mc.n_mc)
    assert np.all(mc.upper >= exact)
    upper = privacy.old_values_delta(mult, sigma, theta, m, EPS, n_mc=40000, seed=11)
    np.testing.assert_array_equal(upper, mc.upper)


@pytest.mark.parametrize("mult, theta, sigma, m", [([3], 1.0, 0.5, 4), ([2], 0.5, 0.3, 4), ([4], 2.0, 0.7, 3),
                                                   ([5], -0.2, 0.4, 3), ([1], 1.0, 0.5, 4)])
def test_monte_carlo_with_a_single_distinct_value_covers_the_enumerated_delta(mult, theta, sigma, m):
    """k = 1: the only neighbour type replaces a record by a new value (this used to raise on
    the empty list of old targets); estimate and upper bound against literal enumeration."""
    exact, _ = enumerated_old_values_deltas(mult, sigma, theta, m, EPS)
    for prune in (True, False):
        mc = ov.old_values_monte_carlo(mult, sigma, theta, m, EPS, n_mc=40000, rng=np.random.default_rng(11),
                                       prune=prune, confidence=0.999)
        assert mc.n_types == 1
        assert np.all(np.abs(mc.estimate - exact) <= 4.5 * np.sqrt(exact * (1 - exact) / mc.n_mc) + 2.0 / mc.n_mc)
        assert np.all(mc.upper >= exact)
    upper = privacy.old_values_delta(mult, sigma, theta, m, EPS, n_mc=40000, seed=11)
    assert upper.shape == EPS.shape and np.all(upper >= mc.estimate)
    assert isinstance(privacy.old_values_delta(mult, sigma, theta, m, 1.0, n_mc=2000, seed=1), float)
    grid = privacy.old_values_delta(mult, sigma, theta, m, EPS.reshape(2, 4), n_mc=40000, seed=11)
    np.testing.assert_array_equal(grid, upper.reshape(2, 4))


def test_monte_carlo_pruning_is_exact():
    mult = [2, 2, 3, 5, 5, 9, 1]
    args = (mult, 0.4, 1.5, 30, np.array([0.3, 0.8, 2.0]))
    a = ov.old_values_monte_carlo(*args, n_mc=3000, rng=np.random.default_rng(5), prune=True)
    b = ov.old_values_monte_carlo(*args, n_mc=3000, rng=np.random.default_rng(5), prune=False)
    np.testing.assert_array_equal(a.estimate, b.estimate)
    np.testing.assert_array_equal(a.upper, b.upper)


def test_suppression_at_positive_sigma_tight_profile_improves_probabilistic_delta_need_not():
    """σ > 0: Algorithm 3 is a post-processing of full PYPP (drop the new values), so its
    tight profile (hockey-stick divergence) is never larger. The paper's probabilistic δ —
    P(privacy loss > ε) — is not monotone under post-processing: averaging over K can push
    more outputs past e^ε. This case shows it is larger at ε = 0.6 (docs §3.4)."""
    mult, theta, sigma, m = [1, 2, 2], 0.5, 0.5, 4
    eps = np.array([0.3, 0.6, 1.2])
    old, old_tight = enumerated_old_values_deltas(mult, sigma, theta, m, eps)
    full, full_tight = enumerated_deltas(mult, sigma, theta, m, eps)
    assert np.all(old_tight <= full_tight + 1e-12)
    assert old[1] > full[1] + 0.01


# --------------------------------------------------------------------- the sampler
def test_released_counts_match_the_literal_algorithm():
    """old_values_counts against literal Algorithm 1's old counts (Algorithm 3 releases exactly those)."""
    mult, sigma, theta, m = [1, 3, 6], 0.3, 2.0, 12
    rng = np.random.default_rng(7)
    literal = np.array([literal_algorithm_1(mult, sigma, theta, m, rng)[0] for _ in range(4000)])
    fast = ov.old_values_counts(mult, sigma, theta, m, np.random.default_rng(8), size=4000)
    for col in range(len(mult)):
        table = np.array([np.bincount(literal[:, col], minlength=m + 1), np.bincount(fast[:, col], minlength=m + 1)])
        table = table[:, table.sum(axis=0) > 0]
        assert stats.chi2_contingency(table)[1] > 1e-3
    h = np.array([np.bincount(literal.sum(1), minlength=m + 1), np.bincount(fast.sum(1), minlength=m + 1)])
    assert stats.chi2_contingency(h[:, h.sum(axis=0) > 0])[1] > 1e-3
    assert fast.sum(1).mean() == pytest.approx(ov.expected_release_size(mult, sigma, theta, m), rel=0.02)


# ------------------------------------------------------------------- API and input
def test_api_contract_and_bad_input():
    assert privacy.old_values_delta is ov.old_values_delta and "old_values_delta" in privacy.__all__
    assert isinstance(privacy.old_values_delta([2, 3], 0.0, 1.0, 5, 1.0), float)
    assert privacy.old_values_delta([1, 3], 0.0, 1.0, 5, math.inf) == pytest.approx(5 / (5 + 1.0 + 4 - 1))
    with pytest.raises(ValueError, match="sigma"):
        privacy.old_values_delta([2, 3], -0.5, 1.0, 5, 1.0)
    with pytest.raises(ValueError, match="eps"):
        privacy.old_values_delta([2, 3], 0.0, 1.0, 5, -1.0)
    with pytest.raises(ValueError, match="eps"):
        privacy.old_values_delta([2, 3], 0.3, 1.0, 5, [1.0, math.nan])
    with pytest.raises(ValueError, match="m"):
        privacy.old_values_delta([2, 3], 0.3, 1.0, 0, 1.0)
    with pytest.raises(ValueError, match="theta"):
        privacy.old_values_delta([2, 3], 0.3, -0.5, 5, 1.0)
    with pytest.raises(ValueError, match="multiplicities"):
        privacy.old_values_delta([], 0.0, 1.0, 5, 1.0)
