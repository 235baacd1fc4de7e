"""Privacy numbers at realistic sizes against an independent mpmath reference (issue 8).

Every δ returned must be ≥ the exact value and within 1e-8 relative of it (n up to 10^6,
m up to 10^4, δ down to 1e-300); every verdict (meets the target, largest admissible m,
pure ε-DP) must equal the exact one, including at constructed borderline targets. The
reference sums beta-binomial terms at 50 digits from exact log-gamma anchors
(core.privacy.betabinom.log_tail_mp), with first bad counts from mpmath's e^ε.
"""

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from core.privacy import betabinom
from core import privacy as P

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
    # three ε per profile (small, moderate, large): every distinct multiplicity is summed in
    # 50 digits for each, thousands of them in the first profile
    eps = np.array([0.05, 1.0, 6.0]) if i == 0 else np.array([0.05, 0.3, 1.0, 2.5, 6.0])
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


# ------------------------------------------------ singleton limit: exact at any size
def _m_sing_mpmath(n, theta, delta):
    """⌊δ(θ + n − 1)/(1 − δ)⌋ with enough digits for θ up to 1e300 (an independent route)."""
    with mpmath.workdps(800):
        d = mpmath.mpf(delta)
        return int(mpmath.floor(d * (mpmath.mpf(theta) + n - 1) / (1 - d)))


@pytest.mark.parametrize("n", [1, 2, 13_501, 10**12])
@pytest.mark.parametrize("theta", [1e-300, 1e-3, 2.0, 1e18, 1e300])
@pytest.mark.parametrize("delta", [1e-300, 1e-12, 0.5, 0.999999, 1 - 2.0**-53])
def test_singleton_limit_is_an_exact_python_int_at_extreme_sizes(n, theta, delta):
    got = P.singleton_limit(n, theta, delta)
    assert type(got) is int and got >= 0
    assert got == _m_sing_mpmath(n, theta, delta)
    # the verdict m/(m + θ + n − 1) ≤ δ holds at m_sing and fails at m_sing + 1, exactly
    d, base = Fraction(delta), Fraction(theta) + n - 1
    assert Fraction(got, 1) * (1 - d) <= d * base < Fraction(got + 1, 1) * (1 - d)


@pytest.mark.parametrize("n,theta", [(2, 20.0), (13_501, 3.0), (10**12, 3 * 2.0**58), (6, 2.0**900)])
@pytest.mark.parametrize("delta", [0.5, 0.75, 0.875, 0.25])
def test_singleton_limit_when_the_quotient_is_an_integer(n, theta, delta):
    """δ(θ + n − 1)/(1 − δ) is an integer for these binary δ and θ + n − 1: m_sing is that
    integer (m/(m + θ + n − 1) = δ exactly is admissible)."""
    value = Fraction(delta) / (1 - Fraction(delta)) * (Fraction(theta) + n - 1)
    assert value.denominator == 1
    assert P.singleton_limit(n, theta, delta) == int(value)
    assert P.max_synthetic_size(n, theta, math.inf, delta, m_cap=P.MAX_ACCOUNTING_M) == min(
        int(value), P.MAX_ACCOUNTING_M)


# ------------------------------------------- the CLI case: δ close to 1, n = 13 501
def _cps_n():
    import pandas as pd
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "sample_data" / "cps_earnings.csv"
    return int(pd.read_csv(path, usecols=["earnings"])["earnings"].notna().sum())


@pytest.mark.slow
def test_max_synthetic_size_near_delta_one_is_exact_at_the_cli_example():
    """`python -m core release sample_data/cps_earnings.csv --theta 2 --eps 2.5 --delta 0.999999`:
    m* from the branch and bound equals the scan of every row r = 2..n with float tails,
    the binding rows rechecked in 50 digits on both sides of m*."""
    n, theta, eps, delta = _cps_n(), 2.0, 2.5, 0.999999
    assert n == 13_501
    m_star = P.max_synthetic_size(n, theta, eps, delta, m_cap=10**6)
    assert m_star == 151_157
    N = theta + n
    r = np.arange(2, n + 1, dtype=float)
    c = mpmath.expm1(mpmath.mpf(eps))
    s0 = np.array([float(mpmath.floor(c * (x - 1))) + 1 for x in r])
    # m*: every row is within δ (scanned in floating point, the five largest in 50 digits)
    live = s0 <= m_star
    log_t, rel = betabinom.log_tail(m_star, r[live], theta + (n - r[live]), s0[live])
    top = np.argsort(log_t)[-5:]
    rest = np.ones(log_t.size, dtype=bool)
    rest[top] = False
    assert np.all(log_t[rest] + np.log1p(rel[rest]) + 1e-12 < math.log(delta))
    exact = max(tail_exact(m_star, float(x), float(N - x), int(s)) for x, s in zip(r[live][top], s0[live][top]))
    assert exact <= delta
    # m* + 1: one row beyond δ is enough, and the scan above found the binding rows among the
    # largest r (the tails grow with r here); a second full scan would add nothing
    binding = r[live][top]
    exact_next = max(tail_exact(m_star + 1, float(x), float(N - x), int(s))
                     for x, s in zip(binding, s0[np.isin(r, binding)]))
    assert exact_next > delta
    for m, admissible, worst in ((m_star, True, exact), (m_star + 1, False, exact_next)):
        assert P.global_delta_at_most(n, theta, m, eps, delta) is admissible
        assert P.global_delta(n, theta, m, eps) >= float(worst)


# ------------------------------------- tails with a shape parameter below 1 (θ < 1)
def _tail_full_sum(m, a, b, s0):
    """P(S ≥ s0), S ~ BB(m, a, b), summed term by term in 50 digits (no early stop)."""
    with mpmath.workdps(50):
        a, b = mpmath.mpf(a), mpmath.mpf(b)
        total = mpmath.mpf(0)
        for s in range(int(s0), m + 1):
            total += mpmath.exp(mpmath.log(mpmath.binomial(m, s)) + mpmath.log(mpmath.beta(s + a, m - s + b))
                                - mpmath.log(mpmath.beta(a, b)))
        return total


@pytest.mark.parametrize("m,a,b,s0", [
    (2000, 13_501.0, 0.001, 1), (2000, 13_501.0, 0.001, 1990), (2000, 13_501.0, 0.001, 2000),
    (3000, 5.0, 0.3, 2500), (3000, 2.0, 0.99, 10), (2500, 1e6, 0.5, 2499), (1500, 0.2, 2.0, 3),
    (1500, 0.999, 40.0, 100), (1800, 1e-6, 1e4, 1), (1200, 3e4, 1e-6, 1199),
])
def test_tails_with_one_shape_below_one_match_a_full_mpmath_sum(m, a, b, s0):
    """Rows with b < 1 ≤ a (the row r = n when θ < 1) and a < 1 ≤ b are summed over a window
    with a geometric remainder bound (docs/mathematics.md §3.1), not over [s0, m]."""
    exact = _tail_full_sum(m, a, b, s0)
    log_t, rel = betabinom.log_tail(m, a, b, s0)
    got = mpmath.exp(mpmath.mpf(float(log_t)))
    assert abs(got / exact - 1) <= float(rel) + 1e-15
    assert float(rel) < 1e-9
    # the complement, which a target δ close to 1 depends on, is accurate too
    if exact > 0.5:
        assert abs((1 - got) - (1 - exact)) <= float(rel) * float(got) + 1e-15


@pytest.mark.parametrize("m,a,b,s0", [
    (10**7, 13_501.0, 0.001, 150_964), (10**7, 13_501.0, 0.001, 9_999_990), (3_744_012, 13_501.0, 0.001, 150_964),
    (10**6, 1e9, 0.9, 999_999), (10**6, 2.0, 0.2, 999_000),
])
def test_tails_with_one_shape_below_one_at_large_m_match_mpmath(m, a, b, s0):
    import time

    start = time.perf_counter()
    log_t, rel = betabinom.log_tail(m, a, b, s0)
    assert time.perf_counter() - start < 10.0     # hang guard: these used to sum all m terms
    exact = betabinom.log_tail_mp(m, a, b, s0, dps=50)
    assert abs(mpmath.exp(mpmath.mpf(float(log_t)) - exact) - 1) <= float(rel) + 1e-15


# ------------------------------------- θ far below the spacing of θ + n (θ ≪ n)
def test_global_delta_keeps_theta_when_it_is_below_the_spacing_of_theta_plus_n():
    """n = 10^12, θ = 0.00106: fl(θ + n) − n = 0.0011 (the spacing of 10^12 is 1.2e-4),
    so a second shape computed as (θ + n) − r would be 4% too large for r = n and make
    δ* = P(S_n = m) ≈ 1 − 1.06e-7 come out *below* its exact value. The row r = n binds
    here (first bad count s(n) = m), and δ* must stay ≥ its 60-digit value."""
    n, theta, m = 10**12, 0.00106, 10**8
    with mpmath.workdps(60):
        eps = float(mpmath.log1p((mpmath.mpf(m) - mpmath.mpf("0.5")) / (n - 1)))
        assert start_exact(eps, n - 1) == m
        a, b = mpmath.mpf(n), mpmath.mpf(theta)
        exact = mpmath.exp(mpmath.loggamma(m + a) - mpmath.loggamma(a) + mpmath.loggamma(a + b)
                           - mpmath.loggamma(m + a + b))       # P(S_n = m), S_n ~ BB(m, n, θ)
    assert (theta + n) - n != theta
    got = P.global_delta(n, theta, m, eps)
    assert got >= exact and got - exact <= 1e-10 * exact
    below = float(exact)
    if below >= exact:
        below = math.nextafter(below, 0.0)
    assert P.global_delta_at_most(n, theta, m, eps, below) is False
    assert P.global_delta_at_most(n, theta, m, eps, math.nextafter(below, 1.0)) is True


# ------------------------------------------------ verdicts inside the error band
@pytest.mark.parametrize("m,a,b,s0", [
    (200_000, 15.0, 87.0, 6_500), (50_000, 13_501.0, 2.0, 49_990), (40_000, 30.0, 0.001, 39_000),
    (100_000, 3.0, 1e6, 2), (20_000, 0.5, 40.0, 3),
])
def test_verdicts_inside_the_float_band_are_settled_exactly(m, a, b, s0):
    """A target on the computed tail itself lies inside its error band: the verdict comes
    from the extended-precision recheck (or mpmath) and equals the 50-digit one, on both
    sides of the exact value."""
    log_t, rel = betabinom.log_tail(m, a, b, s0)
    exact = tail_exact(m, a, b, s0)
    for target in (float(exact), math.nextafter(float(exact), 0.0), math.nextafter(float(exact), 1.0),
                   float(exact) * (1 + 4e-16), float(exact) * (1 - 4e-16)):
        if not 0 < target < 1:
            continue
        got = bool(betabinom.verdicts_at_most(log_t, rel, target, m, a, b, s0))
        assert got is bool(exact <= target), (target, float(exact))
    log_r, rel_r = betabinom.log_tail(m, a, b, s0, refined=True)
    assert abs(mpmath.exp(mpmath.mpf(float(log_r))) / exact - 1) <= float(rel_r) + 1e-15
    assert float(rel_r) <= float(rel)


def test_mpmath_reference_keeps_its_digits_for_huge_shapes():
    """θ = 1e300: the log-gamma sums of a log-pmf are ~1e302 and cancel to ~-686; the
    reference raises its working precision by the digits they take (the binomial limit
    m·a/b·(1 + O(m/b)) is then matched to 1e-12)."""
    m, a, b = 50, 3.0, 1e300
    ref = betabinom.log_tail_mp(m, a, b, 1)
    assert abs(float(ref) - math.log(m * a / b)) < 1e-12 * abs(math.log(m * a / b))
    log_t, rel = betabinom.log_tail(m, a, b, 1)
    assert abs(mpmath.exp(mpmath.mpf(float(log_t)) - ref) - 1) <= float(rel) + 1e-15
