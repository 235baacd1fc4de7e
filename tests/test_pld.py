"""Privacy loss distributions (core.privacy.pld, docs/audit.md §1–§3).

References independent of the code under test: an mpmath sum of the hockey-stick
divergence over the beta-binomial law, brute-force enumeration of every output sequence
(tests/test_privacy_exact.py's enumerator is not shared: the σ = 0 hockey-stick here is
checked against :func:`core.privacy.tight_instance_delta`, itself enumeration-tested), the
closed form of the Gaussian mechanism under composition (μ√k-GDP), and dp_accounting's
own mechanisms.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from scipy import stats

from core.privacy import pld
from core import privacy
from core.evaluation.compare import calibrate

EPS = np.array([0.0, 0.01, 0.1, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0, np.inf])


def mp_hockey_stick(r, n, theta, m, eps, dps=40):
    """E[(1 − e^ε (r−1)/(r−1+S))_+], S ~ BB(m, r, θ+n−r), r ≥ 2; T₁ for r = 1 (mpmath)."""
    with mpmath.workdps(dps):
        N = mpmath.mpf(theta) + n
        if r == 1:
            return m / (m + N - 1)
        a, b = mpmath.mpf(r), N - r
        e = mpmath.exp(mpmath.mpf(float(eps))) if np.isfinite(eps) else mpmath.inf
        total = mpmath.mpf(0)
        for s in range(m + 1):
            logp = (mpmath.loggamma(m + 1) - mpmath.loggamma(s + 1) - mpmath.loggamma(m - s + 1)
                    + mpmath.loggamma(s + a) + mpmath.loggamma(m - s + b) - mpmath.loggamma(m + a + b)
                    - mpmath.loggamma(a) - mpmath.loggamma(b) + mpmath.loggamma(a + b))
            w = 1 - e * (r - 1) / (r - 1 + s) if e != mpmath.inf else -1
            if w > 0:
                total += mpmath.exp(logp) * w
        return total


CASES = [([2, 3, 5, 5, 8], 1.0, 100), ([2, 2, 4], 0.5, 40), ([3] * 50 + [7] * 10, 2.0, 300),
         ([1, 2, 6], 1.0, 50), ([2] * 500, 1.0, 100)]


@pytest.mark.parametrize("mult,theta,m", CASES)
def test_single_release_equals_exact_hockey_stick(mult, theta, m):
    loss = pld.pypp_instance_loss(mult, theta, m)
    got = loss.delta(EPS)
    tight = privacy.tight_instance_delta(mult, theta, m, EPS[EPS > 0])
    n = int(np.sum(mult))
    exact = np.array([float(max(mp_hockey_stick(int(r), n, theta, m, e) for r in np.unique(mult)))
                      for e in EPS])
    # never below the exact value, and within 1e-9 of it (grid 1e-10: each loss rounded up by < 1e-10)
    assert np.all(got >= exact), (got - exact)
    np.testing.assert_allclose(got, exact, rtol=0, atol=1e-9)
    np.testing.assert_allclose(got[EPS > 0], tight, rtol=0, atol=1e-9)


def test_tiny_delta_keeps_relative_accuracy():
    # δ ~ 1e-60: the single-release sum is term by term, no absolute floor
    mult, theta, m = [2] * 5000, 1.0, 100
    loss = pld.pypp_instance_loss(mult, theta, m)
    e = 3.5
    got = float(loss.delta(e))
    exact = float(mp_hockey_stick(2, 10_000, theta, m, e))
    assert 0 < exact < 1e-40
    # rounding each loss up by < 1e-10 moves a term p(1 − e^{ε−ℓ}) by < 1e-10·p: relative to
    # the terms' weights (ℓ − ε ≥ ~0.03 here) that is < 1e-8
    assert exact <= got <= exact * (1 + 1e-8)


def test_global_equals_maximisation_over_r():
    """Theorem 2's maximisation of the hockey-stick over every r = 1..n, by brute force."""
    for n, theta, m in [(12, 1.0, 30), (30, 0.5, 200), (7, 3.0, 5)]:
        glob = pld.pypp_global_loss(n, theta, m).delta(EPS)
        brute = np.max([privacy.tight_instance_delta([r, n - r] if r < n else [n], theta, m, EPS[EPS > 0])
                        for r in range(1, n + 1)], axis=0)
        np.testing.assert_allclose(glob[EPS > 0], brute, rtol=0, atol=1e-9)
        exact_t1 = m / (m + theta + n - 1)
        assert np.all(glob[EPS > 0] >= exact_t1)


@pytest.mark.parametrize("k", [1, 2, 5])
def test_singleton_dominates_every_r_under_composition(k):
    n, theta, m = 40, 1.0, 60
    single = pld.pypp_global_loss(n, theta, m)
    t1 = m / (m + theta + n - 1)
    closed = 1 - (1 - t1) ** k        # composed singleton: mass at +∞ only
    eps = np.array([0.0, 0.2, 1.0, 3.0, 8.0])
    np.testing.assert_allclose(single.delta(eps, releases=k), closed, rtol=1e-9)
    for r in (2, 3, 10, 39):
        other = pld.pypp_instance_loss([r] + [n - r] if r < n else [n], theta, m)
        # exact dominance; the composed PLD of r is pessimistic by at most ~k·grid in loss
        slack = 1e-9 if k == 1 else 2 * k * other.composition_discretization(k)
        assert np.all(other.delta(eps, releases=k) <= closed + slack)
    # and for the whole trade-off curve: β_r(α) ≥ (1 − T₁)^k − α
    alpha = np.linspace(0, 1, 41)
    for r in (2, 5):
        other = pld.pypp_instance_loss([r, n - r], theta, m)
        slack = 1e-6 if k == 1 else 2 * k * other.composition_discretization(k)
        assert np.all(other.tradeoff(alpha, releases=k) >= np.maximum(0, (1 - t1) ** k - alpha) - slack)


def test_singleton_tradeoff_closed_form():
    n, theta, m = 100, 2.0, 50
    t1 = m / (m + theta + n - 1)
    alpha = np.linspace(0, 1, 101)
    beta = pld.pypp_instance_loss([1, 3, 96], theta, m).tradeoff(alpha)
    np.testing.assert_allclose(beta, np.maximum(0.0, 1 - t1 - alpha), atol=1e-9)


def test_composition_of_one_release_is_the_identity():
    loss = pld.pypp_instance_loss([2, 3, 5], 1.0, 80)
    eps = np.linspace(0, 6, 61)
    base = loss.members(1, 1e-4)
    composed_once = [(name, p.self_compose(1)) for name, p in base]
    with_identity = [(name, p.compose(pld_lib.identity(value_discretization_interval=1e-4))) for name, p in base]
    for (_, a), (_, b), (_, c) in zip(base, composed_once, with_identity):
        da = np.asarray(a.get_delta_for_epsilon(eps))
        np.testing.assert_allclose(np.asarray(b.get_delta_for_epsilon(eps)), da, rtol=0, atol=1e-12)
        np.testing.assert_allclose(np.asarray(c.get_delta_for_epsilon(eps)), da, rtol=0, atol=1e-12)
    np.testing.assert_allclose(loss.delta(eps, releases=1, discretization=1e-4),
                               np.max([np.asarray(p.get_delta_for_epsilon(eps)) for _, p in base], axis=0),
                               rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("eps,k", [(1.0, 1), (0.5, 5), (2.0, 10)])
def test_laplace_composition_matches_dp_accounting(eps, k):
    ours = pld.laplace_histogram_loss(eps)
    ref = pld_lib.from_laplace_mechanism(2.0 / eps, sensitivity=1.0, value_discretization_interval=1e-4)
    ref = ref.self_compose(2 * k)
    grid = np.linspace(0.0, 2 * k * eps, 41)
    expected = np.asarray(ref.get_delta_for_epsilon(grid))
    got = ours.delta(grid, releases=k)
    assert np.all(got >= expected - 1e-13)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9)
    # pure ε-DP: nothing beyond kε up to the loss grid, except dp_accounting's pessimistic
    # tail truncation (a mass below 1e-9 put at +∞)
    assert ours.delta(k * eps * (1 + 1e-3) + 2 * k * 1e-4, releases=k) <= 1e-9


def gaussian_closed_form(mu, eps):
    """δ(ε) of μ-GDP (Balle & Wang 2018; Dong, Roth & Su 2022)."""
    return stats.norm.cdf(-eps / mu + mu / 2) - np.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)


@pytest.mark.parametrize("sd,k", [(3.0, 1), (5.0, 4), (10.0, 25)])
def test_gaussian_composition_matches_dp_accounting_and_closed_form(sd, k):
    ours = pld.gaussian_histogram_loss(sd)
    assert ours.mu_gdp == pytest.approx(math.sqrt(2) / sd)
    grid = np.linspace(0.05, 4.0, 40)
    got = ours.delta(grid, releases=k)
    ref = pld_lib.from_gaussian_mechanism(sd, sensitivity=math.sqrt(2), value_discretization_interval=1e-4)
    expected = np.asarray(ref.self_compose(k).get_delta_for_epsilon(grid))
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9)
    closed = gaussian_closed_form(math.sqrt(k) * math.sqrt(2) / sd, grid)
    # pessimistic: never below the exact δ; the loss grid costs at most ~k·1e-4 in ε
    assert np.all(got >= closed - 1e-12)
    assert np.all(got <= gaussian_closed_form(math.sqrt(k) * math.sqrt(2) / sd, grid - k * 2e-4) + 1e-9)


def test_gaussian_tradeoff_is_mu_gdp():
    sd = 2.0
    mu = math.sqrt(2) / sd
    alpha = np.linspace(0.001, 0.999, 50)
    beta = pld.gaussian_histogram_loss(sd).tradeoff(alpha)
    exact = stats.norm.cdf(stats.norm.ppf(1 - alpha) - mu)
    assert np.all(beta <= exact + 1e-9)          # conservative
    np.testing.assert_allclose(beta, exact, atol=2e-3)


def test_pure_eps_generic_pld():
    eps = 1.5
    loss = pld.dirichlet_multinomial_loss(eps)
    assert loss.kind == "bound"
    assert loss.delta(eps * 1.001) == 0.0
    # randomized response: δ(0) = (e^ε − 1)/(e^ε + 1)
    assert loss.delta(0.0) == pytest.approx(math.expm1(eps) / (math.exp(eps) + 1), abs=1e-4)
    assert loss.delta(0.0) >= math.expm1(eps) / (math.exp(eps) + 1)


def test_smoothed_histogram_is_pure_eps():
    n, cells, m, eps = 500, 20, 50, 1.0
    from core.privacy import smoothed_histogram_lambda

    lam = smoothed_histogram_lambda(n, cells, m, eps)
    loss = pld.smoothed_histogram_loss(n, cells, m, lam)
    # m draws, each loss ≤ ε/m rounded up to the grid; dp_accounting puts a truncated tail
    # of 1e-15 at +∞ when composing
    assert loss.delta(eps + m * 2e-4) <= 1e-14
    assert loss.delta(0.5 * eps) > 0


def test_naive_composition_is_never_better_than_pld():
    loss = pld.pypp_instance_loss([2, 3, 4], 1.0, 50)
    eps = np.linspace(0.1, 30, 60)
    for k in (2, 10):
        assert np.all(pld.naive_composition_delta(loss, eps, k) >= loss.delta(eps, releases=k) - 1e-9)


def test_epsilon_inverts_delta():
    loss = pld.pypp_instance_loss([2, 3, 5], 1.0, 100)
    for d in (0.3, 1e-3, 1e-8):
        e = loss.epsilon(d)
        assert loss.delta(e) <= d
        assert loss.delta(e * (1 - 1e-6)) > d or e == 0
    # global: δ(ε) = T₁ = 10/60 for every ε ≥ 0
    assert pld.pypp_global_loss(50, 1.0, 10).epsilon(0.5) == 0.0
    assert pld.pypp_global_loss(50, 1.0, 10).epsilon(0.1) == math.inf


def test_monte_carlo_pld_against_exact_singleton_mass():
    sigma, theta, m = 0.3, 1.0, 60
    mult = [1, 2, 4, 10, 10]
    n = sum(mult)
    loss = pld.pypp_monte_carlo_loss(mult, sigma, theta, m, n_mc=20000, rng=np.random.default_rng(3))
    assert loss.kind == "monte carlo"
    # the singleton type's mass at +∞ is P(S ≥ 1), S ~ BB(m, 1 − σ, θ + n − 1 + σ)
    p = 1 - stats.betabinom.pmf(0, m, 1 - sigma, theta + n - 1 + sigma)
    est = float(loss.delta(50.0))
    se = math.sqrt(p * (1 - p) / 20000)
    assert abs(est - p) < 5 * se + 1e-9
    # never above the Monte Carlo probabilistic δ upper bound by more than its sampling error
    mc = privacy.monte_carlo_delta(mult, sigma, theta, m, np.array([0.5, 2.0]), n_mc=20000,
                                   rng=np.random.default_rng(4))
    assert np.all(loss.delta(np.array([0.5, 2.0])) <= mc.upper + 0.02)


def test_calibration_losses_respect_stated_guarantees():
    cal = calibrate(5000, 1.0, 1e-3, 200, theta=5.0, bins=10)
    losses = pld.calibration_losses(cal)
    assert set(losses) == {m.name for m in cal.mechanisms if m.guarantee.kind != "none"}
    for mech in cal.mechanisms:
        if mech.name not in losses:
            continue
        g = mech.guarantee
        # δ read off the PLD at the stated ε (plus the loss grid) is within the stated δ
        assert losses[mech.name].delta(g.eps + 0.01) <= g.delta + 1e-9, mech.name
        assert losses[mech.name].tradeoff(np.array([0.0, 0.5])).shape == (2,)


@pytest.mark.parametrize("call", [
    lambda: pld.pypp_instance_loss([2, 0], 1.0, 10),
    lambda: pld.pypp_instance_loss([2, 3], -1.0, 10),
    lambda: pld.pypp_instance_loss([2, 3], 1.0, 0),
    lambda: pld.pypp_loss_values(5, 4, 1.0, 10),
    lambda: pld.pypp_global_loss(10, 1.0, 10).delta(-1.0),
    lambda: pld.pypp_global_loss(10, 1.0, 10).delta(float("nan")),
    lambda: pld.pypp_global_loss(10, 1.0, 10).delta(1.0, releases=0),
    lambda: pld.pypp_global_loss(10, 1.0, 10).delta(1.0, releases=10**6),
    lambda: pld.pypp_global_loss(10, 1.0, 10).epsilon(1.5),
    lambda: pld.pypp_global_loss(10, 1.0, 10).tradeoff([1.5]),
    lambda: pld.laplace_histogram_loss(0.0),
    lambda: pld.gaussian_histogram_loss(-1.0),
    lambda: pld.generic_loss("x", 1.0, 1.0),
    lambda: pld.pypp_monte_carlo_loss([1, 2], 0.0, 1.0, 10, rng=np.random.default_rng(0)),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
