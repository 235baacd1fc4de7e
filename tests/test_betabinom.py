"""core.privacy.betabinom: log-gamma ratios and beta-binomial tails against mpmath, with their stated error bounds."""

import mpmath
import numpy as np
import pytest

from core.privacy import betabinom

mpmath.mp.dps = 50


@pytest.mark.parametrize("m,a,b", [(10_000, 2.0, 999_999.0), (50, 3.0, 7.5), (10_000, 1516.0, 11987.0),
                                   (2_000, 1000.05, 9000.45)])
def test_beta_binomial_tails_match_mpmath_with_the_stated_error_bound(m, a, b):
    for s0 in sorted({1, 2, 5, int(m * a / (a + b)), min(m, int(m * a / (a + b)) + 40), m}):
        got, rel = betabinom.log_tail(m, a, b, s0)
        ref = betabinom.log_tail_mp(m, a, b, s0, dps=50)
        actual = abs(float(mpmath.expm1(mpmath.mpf(float(got)) - ref)))
        assert actual <= float(rel), (s0, actual, float(rel))
        assert float(rel) < 1e-8


def test_log_gamma_ratio_matches_mpmath():
    rng = np.random.default_rng(3)
    x = 10 ** rng.uniform(-3, 9, size=200)
    h = np.floor(10 ** rng.uniform(0, 7, size=200))
    got = betabinom.log_gamma_ratio(x, h)
    for xi, hi, g in zip(x, h, got):
        ref = mpmath.loggamma(mpmath.mpf(xi) + hi) - mpmath.loggamma(mpmath.mpf(xi))
        err = abs(float(g - ref))
        assert err <= 4 * betabinom.UNIT_ROUNDOFF * float(betabinom._magnitude(xi, hi))


def test_verdicts_are_exact_inside_the_error_band():
    """A target inside the floating-point band is settled by mpmath, on the right side of the exact tail."""
    m, a, b, s0 = 10_000, 2.0, 999_999.0, 5
    exact = mpmath.exp(betabinom.log_tail_mp(m, a, b, s0, dps=50))
    below = float(exact)
    if below >= exact:
        below = np.nextafter(below, 0.0)
    above = np.nextafter(below, 1.0)
    assert betabinom.tail_at_most(m, a, b, s0, above)
    assert not betabinom.tail_at_most(m, a, b, s0, below)


def test_windows_stay_bounded_for_huge_m():
    """m = 10^8 with a tail far below the mean (complement path) and a non-log-concave row."""
    value, rel = betabinom.log_tail(10**8, 5.0, 12.0, 7)
    assert value <= 0 and rel < 1e-6
    value, rel = betabinom.log_tail(10**6, 7.0, 0.3, 10**6 - 3)
    ref = betabinom.log_tail_mp(10**6, 7.0, 0.3, 10**6 - 3)
    assert abs(float(mpmath.expm1(mpmath.mpf(float(value)) - ref))) <= rel
