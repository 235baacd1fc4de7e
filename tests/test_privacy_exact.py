"""Privacy numbers at realistic sizes against an independent mpmath reference (issue 8).

Every δ returned must be ≥ the exact value and within 1e-8 relative of it (n up to 10^6,
m up to 10^4, δ down to 1e-300); every verdict (meets the target, largest admissible m,
pure ε-DP) must equal the exact one, including at constructed borderline targets. The
reference sums beta-binomial terms at 50 digits from exact log-gamma anchors
(core.betabinom.log_tail_mp), with first bad counts from mpmath's e^ε.
"""

import math

import mpmath
import numpy as np
import pytest

from core import betabinom, privacy as P

mpmath.mp.dps = 50
REL = 1e-8


def start_exact(eps, w):
    if w == 0:
        return 1
    if math.isinf(eps):
        return math.inf
    return int(mpmath.floor(mpmath.expm1(mpmath.mpf(eps)) * mpmath.mpf(w))) + 1


def tail_exact(m, a, b, s0):
    if s0 > m:
        return mpmath.mpf(0)
    return mpmath.exp(betabinom.log_tail_mp(m, a, b, s0, dps=50))


def _rows(mult, theta):
    """N = θ + n and the distinct multiplicities of a profile."""
    mult = np.asarray(mult)
    return mpmath.mpf(theta) + int(mult.sum()), [int(r) for r in np.unique(mult)]


def _log_pmf_mp(m, a, b, s):
    return (mpmath.loggamma(m + 1) - mpmath.loggamma(s + 1) - mpmath.loggamma(m - s + 1)
            + mpmath.loggamma(s + a) + mpmath.loggamma(m - s + b) - mpmath.loggamma(m + a + b)
            - mpmath.loggamma(a) - mpmath.loggamma(b) + mpmath.loggamma(a + b))


def instance_exact(mult, theta, m, eps):
    N, values = _rows(mult, theta)
    terms = [m / (m + N - 1) if r == 1 else tail_exact(m, r, float(N - r), start_exact(eps, r - 1))
             for r in values]
    return max(terms)


def tight_exact(mult, theta, m, eps):
    """max_r E[(S − x)/(S + r − 1); S ≥ s0] at 50 digits, summed until the terms are negligible."""
    N, values = _rows(mult, theta)
    best = mpmath.mpf(0)
    for r in values:
        if r == 1:
            best = max(best, m / (m + N - 1))
            continue
        s0 = start_exact(eps, r - 1)
        if s0 > m:
            continue
        x = mpmath.expm1(mpmath.mpf(eps)) * (r - 1)
        a, b = mpmath.mpf(r), N - r
        term = mpmath.exp(_log_pmf_mp(m, a, b, s0))
        total = term * (s0 - x) / (s0 + r - 1)
        s = s0
        while s < m:
            term *= (m - s) * (s + a) / ((s + 1) * (m - s - 1 + b))
            s += 1
            add = term * (s - x) / (s + r - 1)
            total += add
            if add < total * mpmath.mpf(10) ** -30 and s > m * r / N:
                break
        best = max(best, total)
    return best


def check_close_above(got, exact):
    exact = float(exact)
    assert got >= exact, (got, exact)
    assert got <= exact * (1 + REL) or exact == 0, (got, exact, got / exact - 1)


# ------------------------------------------------------------- issue 8 §1 calls
def test_pitman_yor_at_infinite_eps_counts_singular_outputs():
    # P(S_l ≥ 1) for the singleton is ≈ 0.31: δ at ε = ∞ can never be below it
    got = P.instance_delta([1, 2, 3], 0.3, 2.0, 5, math.inf, seed=1)
    assert got >= 0.3
    mc = P.monte_carlo_delta([1, 2, 3], 0.3, 2.0, 5, [1.0, math.inf], rng=np.random.default_rng(1))
    assert mc.estimate[1] > 0.28 and mc.upper[1] >= mc.estimate[1]


@pytest.mark.parametrize("mult,sigma,theta,m,eps", [
    ([1000] * 10, -0.05, 0.5, 2003, 1.1),
    ([1000] * 10, -1.0, 10.0, 2000, 1.09845),
])
def test_negative_sigma_pure_only_from_the_exact_inequality(mult, sigma, theta, m, eps):
    alpha = -sigma
    holds = m <= mpmath.expm1(mpmath.mpf(eps)) * (min(mult) - 1 + mpmath.mpf(alpha))
    assert not holds
    assert P.dirichlet_multinomial_is_pure(mult, alpha, m, eps) is False
    d = P.instance_delta(mult, sigma, theta, m, eps)
    assert d > 0          # never 0 when the pure condition fails, even if the tail underflows


def test_tight_profile_keeps_the_singleton_term_when_exp_overflows():
    for eps in (709.9, 710.0, 1e5, math.inf):
        got = P.tight_instance_delta([1, 2, 3], 2.0, 5, eps)
        check_close_above(got, mpmath.mpf(5) / 12)


def test_subnormal_delta_is_positive_and_above_exact():
    got = P.instance_delta([2] * 1500, 0.0, 2.0, 5000, 7.25)
    exact = instance_exact([2] * 1500, 2.0, 5000, 7.25)
    assert exact > 0 and got >= float(exact) and got > 0


@pytest.mark.parametrize("n,theta,m,eps", [(1_000_000, 0.05, 10_000, 18.42), (100_000, 2.0, 10_000, 1.0)])
def test_global_delta_never_below_the_singleton_term(n, theta, m, eps):
    exact = mpmath.mpf(m) / (m + mpmath.mpf(theta) + n - 1)
    got = P.global_delta(n, theta, m, eps)
    assert got >= float(exact)


def test_max_synthetic_size_issue_example():
    # δ*(0.1; 500) = 0.00498629485951… exceeds this target, so 500 is not admissible
    assert P.max_synthetic_size(1_000_000, 2.0, 0.1, 0.004986294857021723) == 499
    assert P.global_delta_at_most(1_000_000, 2.0, 500, 0.1, 0.004986294857021723) is False
    assert P.global_delta_at_most(1_000_000, 2.0, 499, 0.1, 0.004986294857021723) is True


def test_singleton_limit_is_exact_at_the_boundary():
    assert P.singleton_limit(2, 1.0, 0.5) == 2      # 2/(2 + 2) = 0.5 ≤ 0.5
    assert P.singleton_limit(9, 1.0, 0.1) == 1      # 1/(1 + 9) = 0.1 ≤ 0.1
    assert P.singleton_limit(10**12, 1e300, 0.5) > 10**299   # constant time, no overflow


# ------------------------------------------------------- realistic sizes vs mpmath
def realistic_profiles():
    rng = np.random.default_rng(20261122)
    out = []
    for n_target, k in [(10**6, 3000), (10**5, 500), (13_501, 10), (10**6, 40)]:
        w = rng.pareto(1.1, size=k) + 0.05
        counts = 1 + rng.multinomial(n_target - k, w / w.sum())
        out.append(counts)
    out.append(np.full(10, 1000))
    return out


PROFILES = realistic_profiles()


@pytest.mark.slow
@pytest.mark.parametrize("i", range(len(PROFILES)))
@pytest.mark.parametrize("m", [100, 10_000])
def test_instance_and_tight_delta_match_mpmath(i, m):
    counts = PROFILES[i]
    eps = np.array([0.05, 0.3, 1.0, 2.5, 6.0])
    got = P.instance_delta(counts, 0.0, 2.0, m, eps)
    got_tight = P.tight_instance_delta(counts, 2.0, m, eps)
    for j, e in enumerate(eps):
        check_close_above(got[j], instance_exact(counts, 2.0, m, e))
        check_close_above(got_tight[j], tight_exact(counts, 2.0, m, e))
        assert got_tight[j] <= got[j]


@pytest.mark.slow
@pytest.mark.parametrize("n,m,theta", [(10**6, 10**4, 2.0), (10**5, 2_000, 0.5), (13_501, 100, 2.0)])
def test_global_delta_matches_brute_force_over_every_r(n, m, theta):
    # independent of the candidate logic: every r = 2..n, float tails, then mpmath on the top rows
    N = theta + n
    r = np.arange(2, n + 1, dtype=float)
    for eps in (0.05, 0.5, 2.5):
        starts = np.array([start_exact(eps, int(x) - 1) for x in r[:3]] + [0] * 0)  # spot-check threshold
        assert starts.size == 3
        c = math.expm1(eps)
        s0 = np.floor(c * (r - 1)) + 1
        live = s0 <= m
        log_t, _ = betabinom.log_tail(m, r[live], N - r[live], s0[live])
        top = r[live][np.argsort(log_t)[-3:]]
        exact = max([mpmath.mpf(m) / (m + N - 1)]
                    + [tail_exact(m, float(x), N - x, start_exact(eps, int(x) - 1)) for x in top])
        check_close_above(P.global_delta(n, theta, m, eps), exact)


def test_tiny_delta_near_1e_minus_300_is_accurate():
    # a tail of about 1e-300: r = 2, start far above the mean
    m, n, theta = 10_000, 10**6, 2.0
    counts = np.array([2] * 10 + [n - 20])
    for eps in (math.log1p(140.5), math.log1p(150.5)):   # δ ≈ 1e-281 and 1e-301
        exact = instance_exact(counts, theta, m, eps)
        got = P.instance_delta(counts, 0.0, theta, m, eps)
        assert 1e-305 < exact < 1e-280
        check_close_above(got, exact)


@pytest.mark.slow
@pytest.mark.parametrize("n,theta,eps,m0", [(10**6, 2.0, 0.1, 500), (10**5, 0.5, 1.0, 3000), (13_501, 2.0, 2.5, 60)])
def test_max_synthetic_size_at_constructed_borderline_targets(n, theta, eps, m0):
    """δ target = δ*(ε; m0) rounded down / up to a float: m* must be below / at least m0."""
    N = theta + n
    r = np.arange(2, n + 1, dtype=float)
    c = math.expm1(eps)
    s0 = np.floor(c * (r - 1)) + 1
    live = s0 <= m0
    log_t, _ = betabinom.log_tail(m0, r[live], N - r[live], s0[live])
    top = r[live][np.argsort(log_t)[-3:]]
    exact = max([mpmath.mpf(m0) / (m0 + N - 1)]
                + [tail_exact(m0, float(x), N - x, start_exact(eps, int(x) - 1)) for x in top])
    below = float(exact)
    if below >= exact:
        below = math.nextafter(below, 0.0)
    above = math.nextafter(below, 1.0)
    assert below < exact <= above
    assert P.max_synthetic_size(n, theta, eps, above) >= m0
    assert P.max_synthetic_size(n, theta, eps, below) < m0
    assert P.global_delta_at_most(n, theta, m0, eps, above) is True
    assert P.global_delta_at_most(n, theta, m0, eps, below) is False
    assert P.global_delta(n, theta, m0, eps) >= above


@pytest.mark.parametrize("i", [2, 4])
def test_max_instance_synthetic_size_at_constructed_borderline_targets(i):
    counts = PROFILES[i]
    eps, theta = 0.8, 2.0
    m0 = P.max_instance_synthetic_size(counts, theta, eps, 0.01) + 1   # first m above the 0.01 target
    exact = instance_exact(counts, theta, m0, eps)
    below = float(exact)
    if below >= exact:
        below = math.nextafter(below, 0.0)
    above = math.nextafter(below, 1.0)
    assert P.max_instance_synthetic_size(counts, theta, eps, above) >= m0
    assert P.max_instance_synthetic_size(counts, theta, eps, below) == m0 - 1
    assert P.instance_delta_at_most(counts, 0.0, theta, m0, eps, above) is True
    assert P.instance_delta_at_most(counts, 0.0, theta, m0, eps, below) is False


@pytest.mark.parametrize("mult,alpha,m", [([3, 5, 9], 0.5, 40), ([1000] * 10, 1.0, 2000), ([1, 7], 2.0, 10)])
def test_pure_verdict_exact_at_the_threshold(mult, alpha, m):
    w = min(mult) - 1 + alpha
    threshold = mpmath.log1p(mpmath.mpf(m) / w)
    lo = float(threshold)
    if lo >= threshold:
        lo = math.nextafter(lo, 0.0)
    hi = math.nextafter(lo, math.inf)
    assert P.dirichlet_multinomial_is_pure(mult, alpha, m, lo) is False
    assert P.dirichlet_multinomial_is_pure(mult, alpha, m, hi) is True
    assert P.dirichlet_multinomial_pure_epsilon(mult, alpha, m) >= hi
    z = len(mult) + 2
    assert P.instance_delta(mult, -alpha, z * alpha, m, hi) == 0
    assert P.instance_delta(mult, -alpha, z * alpha, m, lo) > 0
