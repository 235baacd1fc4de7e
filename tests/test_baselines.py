"""Tests of core.mechanisms (SPEC §4): calibration against external oracles and brute force,
samplers against their literal laws, statistical sanity, bad input."""

from __future__ import annotations

import itertools
import math
import warnings

import mpmath as mp
import numpy as np
import pytest
from scipy import optimize, special, stats

from core import mechanisms as bl
from core.privacy import calibration as cal
from core.mechanisms import (
    Bootstrap,
    DirichletMultinomialHistogram,
    DirichletPosteriorSampling,
    GaussianHistogram,
    LaplaceHistogram,
    SmoothedHistogram,
    cells_to_points,
    histogram_counts,
)
from core.privacy import (
    dirichlet_multinomial_alpha,
    dirichlet_sampling_alpha,
    dirichlet_sampling_epsilon,
    gaussian_sigma,
    smoothed_histogram_epsilon,
    smoothed_histogram_lambda,
    truncated_dirichlet_epsilon,
    truncated_dirichlet_p_min,
)
from core.evaluation import wasserstein1_runs

SQRT2 = math.sqrt(2.0)


# ------------------------------------------------------------------ helpers
def compositions(total: int, parts: int):
    """All vectors of `parts` non-negative integers summing to `total`."""
    for cuts in itertools.combinations(range(total + parts - 1), parts - 1):
        prev, out = -1, []
        for c in cuts:
            out.append(c - prev - 1)
            prev = c
        out.append(total + parts - 1 - prev - 1)
        yield np.array(out)


def neighbours(counts: np.ndarray):
    """Replacement neighbours: one record moves from cell a to another cell b."""
    for a in range(counts.size):
        if counts[a] == 0:
            continue
        for b in range(counts.size):
            if b != a:
                y = counts.copy()
                y[a] -= 1
                y[b] += 1
                yield y


# ------------------------------------------------------- API contract (SPEC §7)
def test_mechanisms_reexports_the_spec_names():
    from core import mechanisms
    assert mechanisms.gaussian_sigma is gaussian_sigma
    assert mechanisms.smoothed_histogram_lambda is smoothed_histogram_lambda
    assert mechanisms.dirichlet_sampling_epsilon is dirichlet_sampling_epsilon


def test_baselines_does_not_import_mechanisms():
    import ast
    import inspect
    tree = ast.parse(inspect.getsource(bl))
    imported = [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert "mechanisms" not in imported and "core.mechanisms" not in imported


# ------------------------------------------------------- analytic Gaussian
def _diffprivlib_scale(eps, delta, sensitivity):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from diffprivlib.mechanisms import GaussianAnalytic
        # The oracle's calibrated SD is only exposed as the private attribute `_scale`.
        return GaussianAnalytic(epsilon=eps, delta=delta, sensitivity=sensitivity)._scale


@pytest.mark.parametrize("sensitivity", [1.0, SQRT2, 3.0])
def test_gaussian_sigma_matches_diffprivlib(sensitivity):
    # diffprivlib evaluates Φ through erf, which loses precision for δ below ~1e-8 at large ε;
    # the grid stays where the oracle itself is accurate (the corners are checked with mpmath below).
    worst = 0.0
    for eps in [0.05, 0.1, 0.5, 1.0, 2.0, 5.0]:
        for delta in [1e-8, 1e-6, 1e-3, 0.05, 0.3]:
            ours = gaussian_sigma(eps, delta, sensitivity)
            ref = _diffprivlib_scale(eps, delta, sensitivity)
            worst = max(worst, abs(ours - ref) / ref)
    assert worst < 1e-6


def _mp_gaussian_delta(sigma, eps, sens):
    with mp.workdps(60):
        s, e, d = mp.mpf(sigma), mp.mpf(eps), mp.mpf(sens)
        return mp.ncdf(d / (2 * s) - e * s / d) - mp.exp(e) * mp.ncdf(-d / (2 * s) - e * s / d)


@pytest.mark.parametrize("eps,delta", [(0.01, 1e-12), (1.0, 1e-10), (5.0, 1e-12), (10.0, 1e-12),
                                       (20.0, 1e-8), (50.0, 1e-15), (1.0, 0.9)])
def test_gaussian_sigma_is_the_exact_calibration(eps, delta):
    # Balle & Wang (2018) Theorem 8 evaluated in 60-digit arithmetic: the returned σ meets
    # δ(σ) ≤ δ (up to the 1e-12 root tolerance) and any σ 1e-9 smaller violates it.
    sigma = gaussian_sigma(eps, delta, SQRT2)
    at = float(_mp_gaussian_delta(sigma, eps, SQRT2))
    below = float(_mp_gaussian_delta(sigma * (1 - 1e-9), eps, SQRT2))
    assert at <= delta * (1 + 1e-10)
    assert abs(at / delta - 1) < 1e-10
    assert below > delta


def test_gaussian_sigma_array_and_limits():
    eps = np.array([0.5, 1.0, 2.0])
    arr = gaussian_sigma(eps, 1e-5, SQRT2)
    assert arr.shape == (3,)
    assert np.all(np.diff(arr) < 0)  # more ε, less noise
    assert arr[1] == gaussian_sigma(1.0, 1e-5, SQRT2)
    assert gaussian_sigma(math.inf, 1e-5, SQRT2) == 0.0
    # Scale invariance: σ is proportional to the sensitivity.
    assert gaussian_sigma(1.0, 1e-5, 3.0) == pytest.approx(3.0 * gaussian_sigma(1.0, 1e-5, 1.0), rel=1e-12)
    assert cal.gaussian_delta(arr[1], 1.0, SQRT2) == pytest.approx(1e-5, rel=1e-10)


# ------------------------------------------------------- smoothed histogram
def test_smoothed_lambda_closed_form():
    n, cells, m, eps = 1000, 25, 200, 2.5
    lam = smoothed_histogram_lambda(n, cells, m, eps)
    assert lam == pytest.approx(cells / (cells + n * math.expm1(eps / m)), rel=1e-14)
    assert cal.smoothed_histogram_epsilon(n, cells, m, lam) <= eps
    arr = smoothed_histogram_lambda(n, cells, m, [0.5, 2.5, math.inf])
    assert arr[1] == lam and arr[2] == 0.0 and arr[0] > arr[1]


def _smoothed_worst_log_ratio(n, cells, m, lam):
    """Largest log-likelihood ratio of m iid draws over all datasets, neighbours and outputs."""
    worst = -math.inf
    outputs = list(compositions(m, cells))
    for counts in compositions(n, cells):
        fx = (1 - lam) * counts * cells / n + lam   # density of a draw in each cell
        for y in neighbours(counts):
            fy = (1 - lam) * y * cells / n + lam
            step = np.log(fx) - np.log(fy)
            worst = max(worst, max(float(s @ step) for s in outputs))
    return worst


@pytest.mark.parametrize("n,cells,m,eps", [(4, 3, 3, 0.5), (3, 4, 2, 1.0), (5, 2, 4, 3.0), (2, 3, 1, 0.1)])
def test_smoothed_lambda_is_tight_by_direct_computation(n, cells, m, eps):
    lam = smoothed_histogram_lambda(n, cells, m, eps)
    assert _smoothed_worst_log_ratio(n, cells, m, lam) == pytest.approx(eps, rel=1e-12)
    assert _smoothed_worst_log_ratio(n, cells, m, lam * (1 - 1e-6)) > eps


# ------------------------------------------------------- Dirichlet–multinomial
@pytest.mark.parametrize("eps,m", [(0.1, 1), (1.0, 50), (2.5, 2000), (8.0, 10**6), (50.0, 500)])
def test_dirichlet_multinomial_alpha_meets_spec_33_and_fails_just_below(eps, m):
    alpha = dirichlet_multinomial_alpha(eps, m)
    # SPEC §3.3 global pure-DP condition: m ≤ (e^ε − 1)·α.
    assert m <= math.expm1(eps) * alpha * (1 + 1e-15)
    assert alpha == pytest.approx(m / math.expm1(eps), rel=1e-14)
    assert m > math.expm1(eps) * alpha * (1 - 1e-9)
    # The same condition as core.privacy states it (which rounds ε up by a relative ~1e-12..1e-10).
    from core.privacy import dirichlet_multinomial_pure_epsilon
    assert dirichlet_multinomial_pure_epsilon([1, 5], alpha, m, instance=False) == pytest.approx(eps, rel=1e-9)
    assert dirichlet_multinomial_pure_epsilon([1, 5], alpha * (1 - 1e-6), m, instance=False) > eps


def _dirmult_worst_log_ratio(n, cells, m, alpha):
    worst = -math.inf
    outputs = np.array(list(compositions(m, cells)))
    for counts in compositions(n, cells):
        def logpmf(c):
            a = c + alpha
            return special.gammaln(a + outputs).sum(1) - special.gammaln(a).sum() \
                - special.gammaln(a.sum() + m) + special.gammaln(a.sum())
        lx = logpmf(counts)
        for y in neighbours(counts):
            worst = max(worst, float(np.max(lx - logpmf(y))))
    return worst


@pytest.mark.parametrize("n,cells,m,eps", [(3, 3, 3, 1.0), (4, 2, 5, 0.3), (2, 4, 2, 2.0)])
def test_dirichlet_multinomial_pure_dp_by_enumeration(n, cells, m, eps):
    alpha = dirichlet_multinomial_alpha(eps, m)
    assert _dirmult_worst_log_ratio(n, cells, m, alpha) == pytest.approx(eps, rel=1e-12)
    assert _dirmult_worst_log_ratio(n, cells, m, alpha * (1 - 1e-6)) > eps


def test_dirichlet_multinomial_extreme_eps_stays_valid():
    alpha = dirichlet_multinomial_alpha(1e4, 500)
    assert alpha > 0
    rng = np.random.default_rng(0)
    z = DirichletMultinomialHistogram(1e4, 10).release(rng.random(100), 50, rng)
    assert z.shape == (50,) and np.all((z >= 0) & (z < 1))


# ------------------------------------------------------- Dirichlet posterior sampling
def _eq6(gamma, alpha, log_inv_delta):
    rho = special.polygamma(1, alpha - gamma)  # ρ = ½Δ₂²ψ′ with Δ₂² = 2
    return np.where(log_inv_delta <= gamma ** 2 * rho,
                    rho + 2 * np.sqrt(rho * log_inv_delta),
                    rho * (gamma + 1) + log_inv_delta / gamma)


def _spec_nested_minimum(alpha, delta):
    """SPEC §4.5 literally: min over γ ∈ (0, α) of min over λ ∈ (1, γ + 1] of ρ(γ)λ + log(1/δ)/(λ − 1)."""
    L = -math.log(delta)

    def inner(gamma):
        rho = float(special.polygamma(1, alpha - gamma))
        res = optimize.minimize_scalar(lambda lam: rho * lam + L / (lam - 1), bounds=(1 + 1e-12, gamma + 1),
                                       method="bounded", options={"xatol": 1e-13})
        return min(res.fun, rho * (gamma + 1) + L / gamma)

    grid = np.linspace(0, alpha, 402)[1:-1]
    g0 = grid[np.argmin([inner(g) for g in grid])]
    step = alpha / 401
    res = optimize.minimize_scalar(inner, bounds=(max(g0 - step, 1e-12 * alpha), min(g0 + step, alpha * (1 - 1e-12))),
                                   method="bounded", options={"xatol": 1e-14 * max(1.0, alpha)})
    return res.fun


@pytest.mark.parametrize("alpha", [0.1, 0.5, 1.0, 2.0, 5.0, 20.0, 200.0, 1e4])
@pytest.mark.parametrize("delta", [1e-10, 1e-5, 1e-2, 0.3])
def test_dirichlet_sampling_epsilon_matches_seed003_eqs_6_to_8(alpha, delta):
    eps = dirichlet_sampling_epsilon(alpha, delta)
    L = -math.log(delta)
    # eq. (6) on a dense γ grid: ε is its minimum (never above it, at most 1e-7 below the grid).
    gammas = np.linspace(0.0, alpha, 400_001)[1:-1]
    grid_min = float(np.min(_eq6(gammas, alpha, L)))
    assert eps <= grid_min * (1 + 1e-12)
    assert eps == pytest.approx(grid_min, rel=1e-7)
    # the literal joint minimum of SPEC §4.5 by nested numerical optimisation
    assert eps == pytest.approx(_spec_nested_minimum(alpha, delta), rel=1e-8)


def _mp_bisect(fun, lo, hi, steps=200):
    """Root of a function with fun(lo) < 0 < fun(hi), by plain bisection (robust oracle)."""
    assert fun(lo) < 0 < fun(hi)
    for _ in range(steps):
        mid = (lo + hi) / 2
        if fun(mid) < 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


@pytest.mark.parametrize("alpha,delta", [(1.0, 1e-5), (20.0, 1e-6), (0.3, 0.05)])
def test_dirichlet_sampling_epsilon_gamma_m_identity(alpha, delta):
    # eq. (7)–(8): at γ_M (γ²ρ(γ) = log(1/δ)) both branches of eq. (6) coincide, and the
    # minimum over (0, γ_M] of f is ε. Checked in 40-digit arithmetic with mpmath.
    with mp.workdps(40):
        a, L = mp.mpf(alpha), -mp.log(mp.mpf(delta))
        rho = lambda g: mp.polygamma(1, a - g)  # noqa: E731
        gamma_m = _mp_bisect(lambda g: g ** 2 * rho(g) - L, a * mp.mpf("1e-6"), a * (1 - mp.mpf("1e-12")))
        f = lambda g: rho(g) * (g + 1) + L / g  # noqa: E731
        assert abs(f(gamma_m) - (rho(gamma_m) + 2 * mp.sqrt(rho(gamma_m) * L))) < mp.mpf("1e-30")
        # stationary point of f (eq. 8), or γ_M itself when f decreases all the way
        fp = lambda g: mp.diff(f, g)  # noqa: E731
        if fp(gamma_m) <= 0:
            best = f(gamma_m)
        else:
            best = f(_mp_bisect(fp, gamma_m * mp.mpf("1e-8"), gamma_m))
    assert dirichlet_sampling_epsilon(alpha, delta) == pytest.approx(float(best), rel=1e-10)


def test_dirichlet_sampling_epsilon_monotone_and_broadcast():
    alphas = np.geomspace(0.05, 1e3, 30)
    eps = dirichlet_sampling_epsilon(alphas, 1e-5)
    assert eps.shape == (30,) and np.all(np.diff(eps) < 0)
    deltas = np.array([1e-8, 1e-5, 1e-2])
    assert np.all(np.diff(dirichlet_sampling_epsilon(5.0, deltas)) < 0)
    assert isinstance(dirichlet_sampling_epsilon(5.0, 1e-5), float)


@pytest.mark.parametrize("eps,delta", [(0.5, 1e-6), (2.5, 1e-5), (10.0, 0.05), (1000.0, 1e-6)])
def test_dirichlet_sampling_alpha_inverts_epsilon(eps, delta):
    alpha = dirichlet_sampling_alpha(eps, delta)
    assert dirichlet_sampling_epsilon(alpha, delta) <= eps
    assert dirichlet_sampling_epsilon(alpha * (1 - 1e-9), delta) > eps
    mech = DirichletPosteriorSampling(eps, delta, 10)
    assert mech.alpha == alpha and mech.guarantee.eps <= eps and mech.guarantee.delta == delta


# ------------------------------------------------ safe-side rounding against 50-digit mpmath
# Each calibration must land on the conservative side of the exact value (docs/mathematics.md
# §9) and, away from subnormal results, within 1e-9 relative of it. The references below
# are written from the formulas of Wasserman & Zhou (2010), Balle & Wang (2018, Theorem 8),
# Machanavajjhala et al. (2008) and seed 003 directly, not from the module's code paths.
def _mp_lambda_min(n, cells, m, eps):
    with mp.workdps(50):
        return mp.mpf(cells) / (cells + n * mp.expm1(mp.mpf(eps) / m))


def _mp_smoothed_eps(n, cells, m, lam):
    """m·log((1 − λ)k_B/(nλ) + 1) at 50 digits (log1p keeps the digits of a tiny argument)."""
    with mp.workdps(50):
        lam = mp.mpf(lam)
        return m * mp.log1p((1 - lam) * cells / (n * lam))


def _within(value, exact, rel=1e-9, ulps=2):
    """value ≤ exact·(1 + rel), or value at most `ulps` floats above exact (subnormal results)."""
    below = value
    for _ in range(ulps):
        below = math.nextafter(below, 0.0)
    return mp.mpf(value) <= exact * (1 + mp.mpf(rel)) or mp.mpf(below) < exact


def test_smoothed_lambda_regression_is_not_below_the_exact_minimum():
    # The double-precision formula returned 7.1e-20 below λ_min here.
    lam = smoothed_histogram_lambda(100, 1000, 1, 12.0)
    exact = _mp_lambda_min(100, 1000, 1, 12.0)
    assert mp.mpf(lam) >= exact and _within(lam, exact)
    assert _mp_smoothed_eps(100, 1000, 1, lam) <= 12.0


SMOOTHED_EPS = [1e-6, 1e-3, 0.1, 1.0, 12.0, 100.0, 700.0]


@pytest.mark.parametrize("n", [1, 2, 37, 1000, 10**6, 10**9])
@pytest.mark.parametrize("cells", [1, 2, 100, 10**4, 10**6])
def test_smoothed_lambda_is_safe_and_tight_on_an_extreme_grid(n, cells):
    for m in (1, 3, 100, 10**4, 10**6):
        lams = smoothed_histogram_lambda(n, cells, m, SMOOTHED_EPS)
        for eps, lam in zip(SMOOTHED_EPS, lams):
            lam = float(lam)
            exact = _mp_lambda_min(n, cells, m, eps)
            case = (n, cells, m, eps, lam)
            assert 0.0 < lam <= 1.0, case
            assert mp.mpf(lam) >= exact, case                         # λ ≥ λ_min exactly
            assert _mp_smoothed_eps(n, cells, m, lam) <= eps, case    # the DP condition holds exactly
            assert _within(lam, exact), case                          # and λ is not needlessly large
            achieved = smoothed_histogram_epsilon(n, cells, m, lam)
            true = _mp_smoothed_eps(n, cells, m, lam)
            assert true <= achieved <= eps, case                      # ε(λ) rounded up, still ≤ ε
            assert _within(achieved, true), case


@pytest.mark.parametrize("lam", [5e-324, 1e-310, 1e-200, 1e-9, 0.3, 0.999999, 1 - 2**-53])
def test_smoothed_epsilon_is_rounded_up(lam):
    for n, cells, m in [(1, 1, 1), (10**9, 1, 10**6), (3, 10**6, 7), (10**6, 10**6, 1)]:
        value = smoothed_histogram_epsilon(n, cells, m, lam)
        exact = _mp_smoothed_eps(n, cells, m, lam)
        assert exact <= value and _within(value, exact), (n, cells, m, lam)


def _mp_delta(sigma, eps, sens, dps=60):
    """Balle & Wang (2018) Theorem 8 as written, Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ).

    60 digits: the difference cancels at most ~6 of them on the grid below (δ ≈ ε·Φ(a))."""
    with mp.workdps(dps):
        s, e, d = mp.mpf(sigma), mp.mpf(eps), mp.mpf(sens)
        return mp.ncdf(d / (2 * s) - e * s / d) - mp.exp(e) * mp.ncdf(-d / (2 * s) - e * s / d)


def test_gaussian_sigma_regression_meets_delta():
    # The double-precision root achieved δ = 1.0000000435e-300 > 1e-300 here.
    sigma = gaussian_sigma(0.001, 1e-300, SQRT2)
    assert _mp_delta(sigma, 0.001, SQRT2) <= mp.mpf(1e-300)
    assert _mp_delta(sigma * (1 - 1e-9), 0.001, SQRT2) > mp.mpf(1e-300)


GAUSS_EPS = [1e-4, 1e-3, 0.01, 0.1, 1.0, 5.0, 20.0, 50.0]


@pytest.mark.parametrize("delta", [1e-300, 1e-200, 1e-100, 1e-50, 1e-20, 1e-10, 1e-5, 1e-2, 0.1, 0.5])
@pytest.mark.parametrize("sensitivity", [1.0, SQRT2, 10.0])
def test_gaussian_sigma_is_safe_and_tight_on_an_extreme_grid(delta, sensitivity):
    sigmas = gaussian_sigma(GAUSS_EPS, delta, sensitivity)
    target = mp.mpf(delta)
    for eps, sigma in zip(GAUSS_EPS, sigmas):
        sigma = float(sigma)
        case = (eps, delta, sensitivity, sigma)
        achieved = _mp_delta(sigma, eps, sensitivity)
        assert 0 < achieved <= target, case                                        # (ε, δ)-DP exactly
        assert _mp_delta(sigma * (1 - 1e-9), eps, sensitivity) > target, case      # not more noise than needed
        reported = cal.gaussian_delta(sigma, eps, sensitivity)
        assert achieved <= reported <= delta and _within(reported, achieved), case  # δ(σ) rounded up


@pytest.mark.parametrize("eps", [200.0, 700.0, 1e4, 1e6])
def test_gaussian_sigma_is_safe_and_tight_at_large_epsilon(eps):
    # Here Δ/(2σ) + εσ/Δ exceeds 100 and the Mills ratio comes from its asymptotic series.
    for delta in (1e-300, 1e-10, 0.5):
        sigma = gaussian_sigma(eps, delta, 1.0)
        assert 0 < _mp_delta(sigma, eps, 1.0) <= mp.mpf(delta), (eps, delta, sigma)
        assert _mp_delta(sigma * (1 - 1e-9), eps, 1.0) > mp.mpf(delta), (eps, delta, sigma)


@pytest.mark.parametrize("m", [1, 3, 283, 10**6, 10**9])
def test_dirichlet_multinomial_alpha_is_safe_and_tight(m):
    tiny = float(np.finfo(float).tiny)
    for eps in (1e-6, 1e-3, 0.1, 1.0, 12.0, 100.0, 700.0, 714.022741823441, 2000.0):
        alpha = dirichlet_multinomial_alpha(eps, m)
        with mp.workdps(50):
            growth = mp.expm1(mp.mpf(eps))
            assert growth * mp.mpf(alpha) >= m, (eps, m, alpha)              # m ≤ (e^ε − 1)α exactly
            assert alpha == tiny or _within(alpha, m / growth), (eps, m, alpha)


def _mp_truncated_eps(p, cells):
    with mp.workdps(50):
        p = mp.mpf(p)
        return 2 * mp.log((1 - (cells - 1) * p) / p)


@pytest.mark.parametrize("cells", [2, 3, 100, 10**4, 10**6])
def test_truncated_dirichlet_calibration_is_safe_and_tight(cells):
    for p in (1 / cells, (1 / cells) * (1 - 1e-15), (1 / cells) * (1 - 1e-12), (1 / cells) * (1 - 1e-6),
              0.5 / cells, 1e-3 / cells, 1e-300):
        value = truncated_dirichlet_epsilon(p, cells)
        exact = _mp_truncated_eps(p, cells)
        assert value >= exact and (exact <= 0 or _within(value, exact)), (cells, p, value)
    for eps in (1e-6, 1e-3, 0.5, 10.0, 100.0, 700.0):
        p = truncated_dirichlet_p_min(eps, cells)
        with mp.workdps(50):
            exact = 1 / (cells - 1 + mp.exp(mp.mpf(eps) / 2))
        assert _mp_truncated_eps(p, cells) <= eps and mp.mpf(p) >= exact and _within(p, exact), (cells, eps, p)
    # An ε below what the float nearest 1/cells gives has no float p_min: refused, not rounded.
    if _mp_truncated_eps(1 / cells, cells) > 0:
        with pytest.raises(ValueError, match="eps"):
            truncated_dirichlet_p_min(float(_mp_truncated_eps(1 / cells, cells)) / 2, cells)


def _mp_dirichlet_sampling_epsilon(alpha, delta, dps=40):
    """Seed 003 eqs. 6–8 at 40 digits: min over γ ∈ (0, α) of the inner minimum over λ ∈ (1, γ + 1]
    (ρ + 2√(ρL) when λ* = 1 + √(L/ρ) ≤ γ + 1, else ρ(γ + 1) + L/γ), by golden-section search
    on γ (the function is convex up to γ_M and increasing after it, hence unimodal)."""
    with mp.workdps(dps):
        a, L = mp.mpf(alpha), -mp.log(mp.mpf(delta))

        def g(gamma):
            rho = mp.psi(1, a - gamma)   # ½Δ₂²ψ′ with Δ₂² = 2
            if 1 + mp.sqrt(L / rho) <= gamma + 1:
                return rho + 2 * mp.sqrt(rho * L)
            return rho * (gamma + 1) + L / gamma

        invphi = (mp.sqrt(5) - 1) / 2
        lo, hi = mp.mpf(0), a
        x1, x2 = hi - invphi * (hi - lo), lo + invphi * (hi - lo)
        g1, g2 = g(x1), g(x2)
        for _ in range(140):
            if g1 <= g2:
                hi, x2, g2 = x2, x1, g1
                x1 = hi - invphi * (hi - lo)
                g1 = g(x1)
            else:
                lo, x1, g1 = x1, x2, g2
                x2 = lo + invphi * (hi - lo)
                g2 = g(x2)
        return min(g1, g2)


@pytest.mark.parametrize("alpha", [1e-6, 1e-2, 0.5, 3.0, 100.0, 1e5, 1e9])
@pytest.mark.parametrize("delta", [1e-300, 1e-12, 1e-5, 0.1, 0.5])
def test_dirichlet_sampling_epsilon_is_safe_and_tight(alpha, delta):
    eps = dirichlet_sampling_epsilon(alpha, delta)
    best = _mp_dirichlet_sampling_epsilon(alpha, delta)   # within ~1e-25 above the exact minimum
    assert mp.mpf(eps) >= best * (1 - mp.mpf("1e-20")), (alpha, delta, eps)
    assert mp.mpf(eps) <= best * (1 + mp.mpf("1e-9")), (alpha, delta, eps)


def test_smallest_float_search_finds_the_threshold_from_any_guess():
    """The search behind every calibration: the smallest float where a monotone condition holds."""
    rng = np.random.default_rng(0)
    for _ in range(300):
        threshold = float(10 ** rng.uniform(-323, 307))
        guess = min(threshold * 10 ** rng.uniform(-8, 8), 1e308)
        assert cal._smallest_float_where(lambda v, t=threshold: v >= t, guess, 5e-324, 1.7e308) == threshold
    assert cal._smallest_float_where(lambda v: True, 0.5, 5e-324, 1.0) == 5e-324
    assert cal._smallest_float_where(lambda v: v >= 1.0, 1e-300, 5e-324, 1.0) == 1.0


def test_calibrations_agree_across_threads():
    """Each thread has its own mpmath context, so concurrent calibrations (Streamlit serves
    sessions in threads) cannot lower one another's working precision."""
    from concurrent.futures import ThreadPoolExecutor
    jobs = [(e, d) for e in (0.001, 0.1, 1.0, 5.0) for d in (1e-300, 1e-5, 0.3)]
    expected = [gaussian_sigma(e, d, SQRT2) for e, d in jobs]
    main_context = cal._mp()
    with ThreadPoolExecutor(6) as pool:
        got = list(pool.map(lambda job: gaussian_sigma(job[0], job[1], SQRT2), jobs * 3))
        others = list(pool.map(lambda _: cal._mp(), range(12)))
    assert got == expected * 3
    assert all(ctx is not main_context and ctx.dps == cal._MP_DPS for ctx in others)


# ------------------------------------------------------- histogram helpers
def test_histogram_counts_matches_histogramdd():
    rng = np.random.default_rng(3)
    x = rng.random((500, 2))
    x[0] = [1.0, 1.0]
    x[1] = [0.0, 0.5]
    counts = histogram_counts(x, 4)
    ref, _ = np.histogramdd(x, bins=(4, 4), range=((0, 1), (0, 1)))
    assert np.array_equal(counts, ref.astype(int).ravel())
    ref1, _ = np.histogram(x[:, 0], bins=7, range=(0, 1))
    assert np.array_equal(histogram_counts(x[:, 0], 7), ref1)


def test_cells_to_points_land_in_their_cells_uniformly():
    rng = np.random.default_rng(4)
    counts = np.array([[3, 0, 5, 2], [0, 10, 0, 0]])
    pts = cells_to_points(counts, 2, 2, rng)
    assert pts.shape == (2, 10, 2)
    back = np.array([histogram_counts(p, 2) for p in pts])
    assert np.array_equal(back, counts)
    many = cells_to_points(np.array([[20000, 0, 0]]), 3, 1, rng)[0]
    assert stats.kstest(many * 3, "uniform").pvalue > 1e-3


# ------------------------------------------------------- samplers vs their literal laws
def test_laplace_noise_law_and_literal_probabilities():
    mech = LaplaceHistogram(0.7, 5)
    counts = np.array([0, 3, 10, 0, 40])
    noisy = mech.noisy_counts(counts, 20000, np.random.default_rng(5))
    noise = (noisy - counts).ravel()
    assert stats.kstest(noise, "laplace", args=(0.0, 2 / 0.7)).pvalue > 1e-3
    q = mech.cell_probabilities(counts, 10, 3, np.random.default_rng(6))
    d = counts + np.random.default_rng(6).laplace(0.0, 2 / 0.7, size=(3, 5))
    literal = np.maximum(d, 0) / np.maximum(d, 0).sum(1, keepdims=True)
    assert np.allclose(q, literal, rtol=1e-14)
    # All noisy counts ≤ 0: uniform.
    tiny = LaplaceHistogram(1e-3, 4)
    rng = np.random.default_rng(7)
    q = tiny.cell_probabilities(np.zeros(4, int), 10, 4000, rng)
    assert np.all(np.isclose(q.sum(1), 1.0))
    assert np.any(np.all(q == 0.25, axis=1))


def test_gaussian_noise_law():
    mech = GaussianHistogram(1.0, 1e-5, 5)
    assert mech.sigma == gaussian_sigma(1.0, 1e-5, SQRT2)
    counts = np.array([1, 2, 3, 4, 5])
    noise = (mech.noisy_counts(counts, 20000, np.random.default_rng(8)) - counts).ravel()
    assert stats.kstest(noise, "norm", args=(0.0, mech.sigma)).pvalue > 1e-3


@pytest.mark.parametrize("mech", [DirichletMultinomialHistogram(1.5, 4), DirichletPosteriorSampling(1.5, 1e-4, 4)])
def test_dirichlet_cell_probabilities_have_beta_marginals(mech):
    counts = np.array([0, 2, 7, 1])
    m = 30
    alpha = mech.alpha(m) if callable(mech.alpha) else mech.alpha
    p = mech.cell_probabilities(counts, m, 20000, np.random.default_rng(9))
    total = counts.sum() + 4 * alpha
    for j in range(4):
        a = counts[j] + alpha
        assert stats.kstest(p[:, j], "beta", args=(a, total - a)).pvalue > 1e-3


def test_release_chi_square_against_the_released_probabilities():
    # Smoothed histogram: q is deterministic, so pooled cell counts of many releases are
    # multinomial(m·runs, q).
    rng = np.random.default_rng(10)
    x = rng.beta(2, 5, size=400)
    mech = SmoothedHistogram(1.0, 8)
    m, runs = 50, 400
    z = mech.release_runs(x, m, runs, rng)
    counts = histogram_counts(x, 8)
    lam = smoothed_histogram_lambda(400, 8, m, 1.0)
    q = (1 - lam) * counts / 400 + lam / 8
    observed = histogram_counts(z.ravel(), 8)
    assert stats.chisquare(observed, m * runs * q).pvalue > 1e-3
    # within-cell positions are uniform
    assert stats.kstest((z.ravel() * 8) % 1.0, "uniform").pvalue > 1e-3


def test_bootstrap_resamples_the_records():
    rng = np.random.default_rng(11)
    x = np.array([0.1, 0.1, 0.5, 0.9])
    z = Bootstrap().release_runs(x, 1000, 20, rng)
    assert set(np.unique(z)) <= {0.1, 0.5, 0.9}
    observed = np.array([(z == v).sum() for v in (0.1, 0.5, 0.9)])
    assert stats.chisquare(observed, 20000 * np.array([0.5, 0.25, 0.25])).pvalue > 1e-3


def test_two_column_release_shapes():
    rng = np.random.default_rng(12)
    x = rng.random((300, 2))
    for mech in (LaplaceHistogram(1.0, 4), GaussianHistogram(1.0, 1e-3, 4), SmoothedHistogram(1.0, 4),
                 DirichletMultinomialHistogram(1.0, 4), DirichletPosteriorSampling(1.0, 1e-3, 4), Bootstrap()):
        z = mech.release_runs(x, 25, 3, rng)
        assert z.shape == (3, 25, 2)
        assert mech.release(x, 7, rng).shape == (7, 2)
        assert np.all((z >= 0) & (z <= 1))


# ------------------------------------------------------- guarantees
def test_each_baseline_states_its_guarantee():
    cases = {
        LaplaceHistogram(1.0, 5): ("pure", "global"),
        GaussianHistogram(1.0, 1e-5, 5): ("approximate", "global"),
        SmoothedHistogram(1.0, 5): ("pure", "global"),
        DirichletMultinomialHistogram(1.0, 5): ("pure", "global"),
        DirichletPosteriorSampling(1.0, 1e-5, 5): ("approximate", "global"),
        Bootstrap(): ("none", "none"),
        DirichletMultinomialHistogram(1.0, 5, alpha_rule="data-dependent"): ("none", "none"),
    }
    for mech, (kind, scope) in cases.items():
        g = mech.guarantee
        assert (g.kind, g.scope) == (kind, scope), mech.name
        assert mech.label and mech.name
        assert all(k.reason for k in mech.knobs(100, 10))
    assert "not DP" in DirichletMultinomialHistogram(1.0, 5, alpha_rule="data-dependent").label
    assert Bootstrap().guarantee.label == "no privacy"
    assert "pure ε-DP" in LaplaceHistogram(1.0, 5).guarantee.label


# ------------------------------------------------------- statistical sanity
def _mean_w1(mech, x, m, runs, seed):
    return float(wasserstein1_runs(mech.release_runs(x, m, runs, np.random.default_rng(seed)), x).mean())


def test_large_eps_approaches_bootstrap_small_eps_is_noise():
    rng = np.random.default_rng(13)
    x = rng.beta(2, 5, size=2000)
    bins, m, runs = 20, 500, 40
    boot = _mean_w1(Bootstrap(), x, m, runs, 1)
    binning = 1 / (2 * bins)  # W1 cost of spreading each record uniformly over its cell
    large = {
        "laplace": LaplaceHistogram(1e3, bins), "gaussian": GaussianHistogram(1e3, 1e-6, bins),
        "smoothed": SmoothedHistogram(1e4, bins), "dirmult": DirichletMultinomialHistogram(50.0, bins),
        "dps": DirichletPosteriorSampling(1e3, 1e-6, bins),
    }
    small = {
        "laplace": LaplaceHistogram(0.01, bins), "gaussian": GaussianHistogram(0.01, 1e-6, bins),
        "smoothed": SmoothedHistogram(0.01, bins), "dirmult": DirichletMultinomialHistogram(0.01, bins),
        "dps": DirichletPosteriorSampling(0.01, 1e-6, bins),
    }
    # Uniform data on [0,1] is the limit of overwhelming noise/smoothing.
    uniform_w1 = float(wasserstein1_runs(np.linspace(0, 1, 2001)[None, :], x)[0])
    for key in large:
        w_large = _mean_w1(large[key], x, m, runs, 2)
        w_small = _mean_w1(small[key], x, m, runs, 3)
        assert w_large <= boot + binning, key
        assert w_large <= 1.5 * boot, key  # in practice the binning cost is far below its bound
        assert w_small > 3 * w_large, key
        assert w_small > 0.5 * uniform_w1, key


# ------------------------------------------------------- bad input
@pytest.mark.parametrize("call,name", [
    (lambda: LaplaceHistogram(1.0, 0), "bins"),
    (lambda: SmoothedHistogram(1.0, 2.5), "bins"),
    (lambda: LaplaceHistogram(0.0, 5), "eps"),
    (lambda: GaussianHistogram(-1.0, 1e-5, 5), "eps"),
    (lambda: GaussianHistogram(1.0, 0.0, 5), "delta"),
    (lambda: GaussianHistogram(1.0, 1.0, 5), "delta"),
    (lambda: DirichletPosteriorSampling(1.0, 1.5, 5), "delta"),
    (lambda: gaussian_sigma(0.0, 1e-5, 1.0), "eps"),
    (lambda: gaussian_sigma(1.0, 1e-5, 0.0), "l2_sensitivity"),
    (lambda: smoothed_histogram_lambda(10, 5, 0, 1.0), "m"),
    (lambda: smoothed_histogram_lambda(0, 5, 1, 1.0), "n"),
    (lambda: smoothed_histogram_lambda(10, 5, 3, -1.0), "eps"),
    (lambda: dirichlet_sampling_epsilon(0.0, 1e-5), "alpha"),
    (lambda: dirichlet_sampling_epsilon(1.0, 0.0), "delta"),
    (lambda: dirichlet_multinomial_alpha(1.0, 0), "m"),
    (lambda: LaplaceHistogram(1.0, 5).release(np.array([]), 10, np.random.default_rng()), "data"),
    (lambda: LaplaceHistogram(1.0, 5).release(np.array([0.2, np.nan]), 10, np.random.default_rng()), "data"),
    (lambda: LaplaceHistogram(1.0, 5).release(np.array([0.2, 1.5]), 10, np.random.default_rng()), "data"),
    (lambda: LaplaceHistogram(1.0, 5).release(np.array([0.2, 0.5]), 0, np.random.default_rng()), "m"),
    (lambda: Bootstrap().release(np.array([0.2]), 3, 42), "rng"),
    (lambda: LaplaceHistogram(1.0, 1001).release(np.random.default_rng(0).random((5, 2)), 3,
                                                  np.random.default_rng()), "bins"),
    (lambda: DirichletMultinomialHistogram(1.0, 5, alpha_rule="thesis"), "alpha_rule"),
])
def test_bad_input_raises_value_error_naming_it(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_release_in_blocks_when_there_are_many_cells():
    # 50³ = 125 000 cells: runs are generated in blocks of 33; the result must not depend on it.
    rng = np.random.default_rng(14)
    x = rng.random((100, 3))
    z = SmoothedHistogram(2.0, 50).release_runs(x, 20, 70, rng)
    assert z.shape == (70, 20, 3) and np.all((z >= 0) & (z < 1))
    assert len({tuple(row.ravel()) for row in np.round(z, 12)}) == 70  # independent runs, not copies


# ---------------------------------------------------------- extreme parameters (issue 9)
def test_calibrations_at_extreme_parameters_answer_or_refuse_clearly():
    # ε far beyond the float range of e^{ε/m}: λ underflows to the smallest float and still satisfies the condition.
    lam = smoothed_histogram_lambda(10, 10, 10, 1e300)
    assert 0 < lam <= 1e-300 and cal.smoothed_histogram_epsilon(10, 10, 10, lam) <= 1e300
    with pytest.raises(ValueError, match=r"cells must be an integer in \[1, 9007199254740992\]"):
        smoothed_histogram_lambda(10, 10**400, 10, 1.0)
    assert 0 < gaussian_sigma(1e300, 0.1, 1.0) < 1e-140
    # δ(σ) is positive but below every float: rounded up, it is the smallest positive float.
    assert cal.gaussian_delta(1e300, 1e300, 1.0) == 5e-324
    with pytest.raises(ValueError, match=r"l2_sensitivity must be in \[1e-100, 1e\+100\]"):
        gaussian_sigma(1.0, 0.1, 1e308)
    for alpha in (1e-300, 1e300, math.inf, math.nan):
        with pytest.raises(ValueError, match="alpha"):
            dirichlet_sampling_epsilon(alpha, 0.1)
    with pytest.raises(ValueError, match="l2_sq"):
        dirichlet_sampling_epsilon(1.0, 0.1, l2_sq=1e308)
    with pytest.raises(ValueError, match="DIRICHLET_ALPHA_RANGE"):
        cal.dirichlet_sampling_alpha(1e-300, 0.5)
    assert cal.dirichlet_sampling_alpha(1e300, 0.5) == cal.DIRICHLET_ALPHA_RANGE[0]
    alpha = cal.dirichlet_multinomial_alpha(714.022741823441, 283)  # used to step ulp by ulp for minutes
    assert cal._log1p_ratio(283, alpha) <= 714.022741823441


def test_guarantee_label_rounds_delta_up():
    g = bl.Guarantee("approximate", "global", 1.0, 0.029112, "x")
    assert g.label == "approximate (ε, δ)-DP, global (ε = 1, δ = 0.0292)"


def test_release_limits_are_stated():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="MAX_RELEASE_SIZE"):
        bl.Bootstrap().release_runs([0.5], 10**8, 1, rng)
    with pytest.raises(ValueError, match="MAX_RELEASE_VALUES"):
        bl.LaplaceHistogram(1.0, 5).release_runs([0.5], 10**7, 10, rng)
    with pytest.raises(ValueError, match="cell_counts"):
        bl.cells_to_points([[1, -1]], 2, 1, rng)
    with pytest.raises(ValueError, match="sum to the same m"):
        bl.cells_to_points([[1, 0], [0, 2]], 2, 1, rng)


# ================================================ issue 11: truncated Dirichlet (seed 001)
from scipy import integrate  # noqa: E402

from core.mechanisms import (
    PseudoPosteriorMechanism,
    TruncatedDirichlet,
    TruncatedDirichletPosteriorSampling,
    truncated_dirichlet,
)


def test_truncated_dirichlet_epsilon_closed_form_and_inverse():
    for cells in (2, 3, 25, 10**4):
        for eps in (0.01, 0.5, 2.5, 10.0, 80.0):
            p = truncated_dirichlet_p_min(eps, cells)
            assert p == pytest.approx(1 / (cells - 1 + math.exp(eps / 2)), rel=1e-12)
            assert truncated_dirichlet_epsilon(p, cells) <= eps
            # tighter than the seed's 2·ln(1/p_min) (Lemma 24 with connectivity 1)
            assert truncated_dirichlet_epsilon(p, cells) <= 2 * math.log(1 / p) * (1 + 1e-11)
            if eps <= 10:
                assert truncated_dirichlet_epsilon(p, cells) < 2 * math.log(1 / p) - 1e-3
    assert truncated_dirichlet_epsilon(0.5, 2) < 1e-200     # p_min = 1/K: only the uniform p


def _log_z_2(a1, a2, q):
    """log ∫_q^{1−q} p^{a1−1}(1−p)^{a2−1} dp by mpmath quadrature at 30 digits (split where
    the integrand falls steeply from its end points)."""
    with mp.workdps(30):
        a1, a2, q = mp.mpf(float(a1)), mp.mpf(float(a2)), mp.mpf(q)
        f = lambda p: p ** (a1 - 1) * (1 - p) ** (a2 - 1)  # noqa: E731
        pts = sorted({q, q + (1 - 2 * q) * mp.mpf("1e-4"), q + (1 - 2 * q) * mp.mpf("1e-2"), mp.mpf(0.5),
                      1 - q - (1 - 2 * q) * mp.mpf("1e-2"), 1 - q - (1 - 2 * q) * mp.mpf("1e-4"), 1 - q})
        return float(mp.log(mp.quad(f, pts)))


def _log_z_3(a, q):
    """log of the Dirichlet kernel's integral over {p_j ≥ q}, K = 3 (adaptive quadrature)."""
    f = lambda p2, p1: p1 ** (a[0] - 1) * p2 ** (a[1] - 1) * (1 - p1 - p2) ** (a[2] - 1)  # noqa: E731
    val, err = integrate.dblquad(f, q, 1 - 2 * q, lambda p1: q, lambda p1: 1 - p1 - q, epsabs=0, epsrel=1e-11)
    return math.log(val)


def _sup_ratio(log_z_x, log_z_y, a, b, q, cells):
    """sup over the truncated simplex of ξ(p|x)/ξ(p|y) = (p_a/p_b)·Z_y/Z_x, on a grid plus its vertices."""
    best = -math.inf
    grid = np.linspace(q, 1 - (cells - 1) * q, 401)
    for pa in grid:
        pb = np.linspace(q, 1 - (cells - 2) * q - pa, 101) if cells > 2 else np.array([1 - pa])
        pb = pb[pb >= q * (1 - 1e-12)]
        if pb.size:
            best = max(best, float(np.max(np.log(pa) - np.log(pb))))
    return best + log_z_y - log_z_x


@pytest.mark.parametrize("prior", [1.0, 1.7])
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_truncated_posterior_density_ratio_2_cells(eps, prior):
    """Every dataset of n = 6 records, every replacement neighbour: sup ratio ≤ e^ε; and the
    constant is nearly attained for an extreme dataset with large n."""
    q = truncated_dirichlet_p_min(eps, 2)
    worst = 0.0
    for counts in compositions(6, 2):
        for y in neighbours(counts):
            a, b = int(np.flatnonzero(counts - y > 0)[0]), int(np.flatnonzero(y - counts > 0)[0])
            ax, ay = counts + prior, y + prior
            log_sup = _sup_ratio(_log_z_2(*ax, q), _log_z_2(*ay, q), a, b, q, 2)
            worst = max(worst, log_sup)
    assert worst <= eps * (1 + 1e-9)
    n = 4000
    counts, y = np.array([1, n - 1]), np.array([0, n])
    near = _sup_ratio(_log_z_2(*(counts + prior), q), _log_z_2(*(y + prior), q), 0, 1, q, 2)
    assert 0.95 * eps < near <= eps * (1 + 1e-9)


@pytest.mark.parametrize("eps", [1.0, 3.0])
def test_truncated_posterior_density_ratio_3_cells(eps):
    q = truncated_dirichlet_p_min(eps, 3)
    worst = 0.0
    for counts in compositions(4, 3):
        ax = counts + 1.0
        log_zx = _log_z_3(ax, q)
        for y in neighbours(counts):
            a, b = int(np.flatnonzero(counts - y > 0)[0]), int(np.flatnonzero(y - counts > 0)[0])
            worst = max(worst, _sup_ratio(log_zx, _log_z_3(y + 1.0, q), a, b, q, 3))
    assert 0.3 * eps < worst <= eps * (1 + 1e-9)


def _rejection(alpha, lower, size, rng):
    """Literal reference: untruncated Dirichlet draws kept when every p_j ≥ lower_j."""
    out = []
    while sum(len(o) for o in out) < size:
        p = rng.dirichlet(alpha, size=20000)
        out.append(p[np.all(p >= lower, axis=1)])
    return np.concatenate(out)[:size]


@pytest.mark.parametrize("alpha, lower", [
    ([1.0, 3.0, 6.0], [0.08, 0.08, 0.08]),             # integer exponents, truncation binds on cell 0
    ([1.5, 2.25, 5.7], [0.1, 0.12, 0.0]),              # fractional exponents, one cell untruncated
    ([2.5, 1.0, 1.0, 4.5], [0.15, 0.05, 0.2, 0.1]),    # per-cell thresholds
])
def test_truncated_dirichlet_sampler_against_rejection(alpha, lower):
    alpha, lower = np.array(alpha), np.array(lower)
    size = 6000
    exact = truncated_dirichlet(alpha, lower, size, np.random.default_rng(1))
    ref = _rejection(alpha, lower, size, np.random.default_rng(2))
    assert np.all(exact >= lower) and np.allclose(exact.sum(axis=1), 1.0)
    for j in range(alpha.size):
        assert stats.ks_2samp(exact[:, j], ref[:, j]).pvalue > 1e-3
    # joint: chi-square homogeneity on the cell of (p_0, p_1) in a 4 × 4 grid of reference quantiles
    edges = [np.quantile(ref[:, j], [0.25, 0.5, 0.75]) for j in (0, 1)]
    def cell(p):
        return np.searchsorted(edges[0], p[:, 0]) * 4 + np.searchsorted(edges[1], p[:, 1])
    table = np.array([np.bincount(cell(exact), minlength=16), np.bincount(cell(ref), minlength=16)])
    assert stats.chi2_contingency(table[:, table.sum(0) > 0])[1] > 1e-3


def test_truncated_dirichlet_sampler_where_rejection_is_hopeless():
    """K = 2, Beta(1, 600) truncated to [0.2, 0.8] (untruncated acceptance ~e^-134): KS against
    the exact truncated CDF 1 − ((1 − x)/(1 − q))^600 / (1 − ((1−(1−q))/(1−q))^600)."""
    q, b = 0.2, 600.0
    p = truncated_dirichlet([1.0, b], [q, q], 5000, np.random.default_rng(4))[:, 0]
    tail = ((q) / (1 - q)) ** b

    def cdf(x):
        return (1 - ((1 - x) / (1 - q)) ** b) / (1 - tail)

    assert p.min() >= q and p.max() <= 1 - q
    assert stats.kstest(p, cdf).pvalue > 1e-3
    # fractional exponent, same regime: Beta(2.5, 600.5) truncated to [0.2, 0.8]
    a1, a2 = 2.5, 600.5
    p = truncated_dirichlet([a1, a2], [q, q], 5000, np.random.default_rng(5))[:, 0]
    lo, hi = stats.beta.logsf(q, a1, a2), stats.beta.logsf(1 - q, a1, a2)

    def cdf2(x):
        return -np.expm1(stats.beta.logsf(x, a1, a2) - lo) / -math.expm1(hi - lo)

    assert stats.kstest(p, cdf2).pvalue > 1e-3


def test_truncated_dirichlet_mechanism_release_and_guarantee():
    rng = np.random.default_rng(9)
    x = rng.beta(2, 5, size=3000)
    mech = TruncatedDirichletPosteriorSampling(2.0, 10)
    g = mech.guarantee
    assert (g.kind, g.scope, g.eps, g.delta) == ("pure", "global", 2.0, 0.0)
    q = mech.cell_probabilities(histogram_counts(x, 10), 50, 200, rng)
    assert q.shape == (200, 10) and np.all(q >= mech.p_min()) and np.allclose(q.sum(1), 1)
    z = mech.release_runs(x, 40, 5, rng)
    assert z.shape == (5, 40) and np.all((z >= 0) & (z <= 1))
    (knob,) = mech.knobs(3000, 40)
    assert knob.parameter == "p_min" and knob.value == truncated_dirichlet_p_min(2.0, 10)
    z2 = mech.release_runs(rng.random((500, 2)), 30, 3, rng)
    assert z2.shape == (3, 30, 2)


def test_truncated_dirichlet_bad_input():
    rng = np.random.default_rng(0)
    for call, name in [
        (lambda: TruncatedDirichlet([0.5, 2.0], [0.1, 0.1]), "alpha"),
        (lambda: TruncatedDirichlet([1.0, 2.0], [0.6, 0.5]), "lower"),
        (lambda: TruncatedDirichlet([1.0, 2.0], [-0.1, 0.1]), "lower"),
        (lambda: TruncatedDirichlet([1.0, math.nan], [0.1, 0.1]), "alpha"),
        (lambda: truncated_dirichlet_p_min(-1.0, 3), "eps"),
        (lambda: truncated_dirichlet_epsilon(0.6, 2), "p_min"),
        (lambda: TruncatedDirichletPosteriorSampling(math.inf, 5), "eps"),
        (lambda: TruncatedDirichletPosteriorSampling(1.0, 5, prior=0.5), "prior"),
        (lambda: TruncatedDirichletPosteriorSampling(1.0, 5, prior=1.5), "prior"),
        (lambda: PseudoPosteriorMechanism(1.0, 5, prior=2.5), "prior"),
        (lambda: TruncatedDirichlet([1.0, 2.0], [0.1, 0.1]).sample(0, rng), "size"),
    ]:
        with pytest.raises(ValueError, match=name):
            call()


# ================================================ issue 11: pseudo-posterior (seed 004)
def _beta_quantile_mp(a, b, tau):
    """τ-quantile of Beta(a, b) by bisection on mpmath's regularised incomplete beta (no scipy)."""
    with mp.workdps(40):
        lo, hi = mp.mpf(0), mp.mpf(1)
        for _ in range(80):                                   # bisection: the CDF increases
            mid = (lo + hi) / 2
            if mp.betainc(a, b, 0, mid, regularized=True) < tau:
                lo = mid
            else:
                hi = mid
        return float((lo + hi) / 2)


def test_pseudo_posterior_weights_hand_computed():
    """counts (40, 10), β = 1, τ = 0.01, ε = 2 (Δ_α = 1). Marginals Beta(41, 11) and Beta(11, 41):
    L = −log of their 1% quantiles ≈ (0.43, 2.3); weights min(1, Δ_α/L) = (1, 0.43), rounded
    down to integer weighted counts (40, 4) → (1, 0.4); truncation e^{−Δ_α/α} = (e^−1, e^−2.5);
    Δ_α = 1 and ε = 2Δ_α = 2. Scalar weight 1/L_max ≈ 0.43 → counts (17, 4) → (0.425, 0.4)."""
    L = np.array([-math.log(_beta_quantile_mp(41, 11, 0.01)), -math.log(_beta_quantile_mp(11, 41, 0.01))])
    assert 0.3 < L[0] < 0.6 and 2.0 < L[1] < 2.6
    mech = PseudoPosteriorMechanism(2.0, 2)
    lw = mech.local_weights(np.array([40, 10]))
    np.testing.assert_allclose(lw.lipschitz, L, rtol=1e-9)
    w = np.floor(np.minimum(1.0, 1.0 / L) * [40, 10]) / [40, 10]
    np.testing.assert_allclose(lw.weights, w, rtol=1e-12)
    np.testing.assert_allclose(lw.weights, [1.0, 0.4], rtol=1e-12)
    np.testing.assert_allclose(lw.lower, [math.exp(-1.0), math.exp(-2.5)], rtol=1e-12)
    assert lw.delta_alpha == pytest.approx(1.0, rel=1e-12) and lw.eps_local == pytest.approx(2.0, rel=1e-12)
    assert lw.delta_unweighted == pytest.approx(L.max(), rel=1e-9)
    np.testing.assert_array_equal(mech.weighted_counts([40, 10]), [40, 4])
    scalar = PseudoPosteriorMechanism(2.0, 2, weighting="scalar").local_weights(np.array([40, 10]))
    alpha = 1.0 / L.max()
    np.testing.assert_allclose(scalar.weights, np.floor(alpha * np.array([40, 10])) / [40, 10], rtol=1e-12)
    np.testing.assert_allclose(scalar.weights, [0.425, 0.4], rtol=1e-12)
    assert scalar.delta_alpha == pytest.approx(1.0, rel=1e-12)
    # empty cells carry no weight and no truncation
    lw3 = mech.local_weights(np.array([40, 0, 10]))
    assert lw3.weights[1] == 0.0 and lw3.lower[1] == 0.0 and math.isnan(lw3.lipschitz[1])


def test_pseudo_posterior_weighted_count_conjugacy():
    """prior × ∏_i p_{c(i)}^{α_i} ∝ Dir(β + W): the log-density difference is constant in p."""
    rng = np.random.default_rng(3)
    cells = rng.integers(0, 4, size=40)
    counts = np.bincount(cells, minlength=4)
    mech = PseudoPosteriorMechanism(1.5, 4)
    alpha_cell = mech.local_weights(counts).weights
    record_weights = alpha_cell[cells]
    beta = mech.prior
    W = np.bincount(cells, weights=record_weights, minlength=4)
    np.testing.assert_allclose(W, mech.weighted_counts(counts), atol=1e-12)
    ps = rng.dirichlet(np.ones(4), size=50)
    direct = (np.log(ps[:, cells]) * record_weights).sum(1) + ((beta - 1) * np.log(ps)).sum(1)
    conj = np.array([stats.dirichlet.logpdf(p, beta + W) for p in ps])
    assert np.ptp(direct - conj) < 1e-9
    # and the released draws follow Dir(β + W) restricted to the truncation (no binding here:
    # compare with rejection from the untruncated conjugate posterior)
    lw = mech.local_weights(counts)
    draws = mech.cell_probabilities(counts, 10, 4000, np.random.default_rng(4))
    ref = _rejection(beta + W, lw.lower, 4000, np.random.default_rng(5))
    for j in range(4):
        assert stats.ks_2samp(draws[:, j], ref[:, j]).pvalue > 1e-3


def test_pseudo_posterior_release_respects_delta_alpha_and_is_labelled_local():
    rng = np.random.default_rng(6)
    x = np.clip(rng.normal(0.5, 0.15, size=5000), 0, 1)
    for weighting in ("vector", "scalar"):
        mech = PseudoPosteriorMechanism(2.0, 20, weighting=weighting)
        counts = histogram_counts(x, 20)
        lw = mech.local_weights(counts)
        q = mech.cell_probabilities(counts, 100, 300, rng)
        occupied = counts > 0
        assert np.all(lw.weights[occupied] * -np.log(q[:, occupied]) <= lw.delta_alpha * (1 + 1e-12))
        g = mech.guarantee
        assert g.scope == "local" and g.eps == 2.0 and "local" in g.label and "not a DP guarantee" in g.label
        assert mech.release_runs(x, 50, 4, rng).shape == (4, 50)
    vec = PseudoPosteriorMechanism(2.0, 20).local_weights(counts)
    sca = PseudoPosteriorMechanism(2.0, 20, weighting="scalar").local_weights(counts)
    # record weights downweight only the risky cells; the scalar weight downweights all
    assert vec.weights[occupied].sum() > sca.weights[occupied].sum()
    with pytest.raises(ValueError, match="weighting"):
        PseudoPosteriorMechanism(1.0, 5, weighting="both")
    with pytest.raises(ValueError, match="tau"):
        PseudoPosteriorMechanism(1.0, 5, tau=0.7)
    with pytest.raises(ValueError, match="counts"):
        PseudoPosteriorMechanism(1.0, 5).local_weights(np.zeros(5, int))
