"""core.evaluation: the analyst's DP posterior given a release (SPEC §6, paper §4.1 / C.1)."""

import functools
import math

import numpy as np
import pytest
from scipy import stats

from core import evaluation as F
from core.evaluation import discovery as FD
from core.data import UniformBase
from core.mechanisms import pypp_release
from core.evaluation.simulation import sample_grid_beta_mixture

LO, HI = 0.0, 1.0


def _release(n_conf, m, theta, seed):
    rng = np.random.default_rng(seed)
    x = sample_grid_beta_mixture(n_conf, rng, grid_size=21)
    atoms, counts = np.unique(x, return_counts=True)
    return pypp_release(atoms, counts, 0.0, theta, m, rng, base=UniformBase(LO, HI)).values


def _naive_functionals(atoms, weights, extra_atoms, extra_weights, levels, thresholds):
    """One measure at a time: merge, sort, and read off mean / inverted-CDF quantiles / tails."""
    out = []
    for d in range(weights.shape[0]):
        pts = np.concatenate([atoms, extra_atoms[d]])
        w = np.concatenate([weights[d], extra_weights[d]])
        w = w / w.sum()
        order = np.argsort(pts, kind="stable")
        pts, w = pts[order], w[order]
        q = [np.quantile(pts, level, weights=w, method="inverted_cdf") for level in levels]
        tails = [w[pts > t].sum() for t in thresholds]
        out.append([np.dot(pts, w), *q, *tails])
    return np.array(out)


@pytest.mark.parametrize("J, L", [(1, 0), (6, 0), (1, 5), (40, 7), (300, 25), (5, 1)])
def test_measure_functionals_match_a_per_measure_merge(J, L):
    rng = np.random.default_rng(J * 100 + L)
    D = 60
    atoms = np.sort(rng.choice(np.linspace(-2, 3, 2000), size=J, replace=False))
    weights = rng.exponential(size=(D, J)) * (rng.random((D, J)) < 0.7)
    weights[:, 0] += 1e-3  # positive total
    extra_atoms = rng.uniform(-2, 3, size=(D, L))
    extra_weights = rng.exponential(size=(D, L)) * rng.uniform(0, 3, size=(D, 1))
    levels = (0.05, 0.25, 0.5, 0.75, 0.99)
    thresholds = (-1.0, 0.3, 2.5, atoms[J // 2])  # one threshold exactly at an atom
    mean, quant, tails = F.measure_functionals(atoms, weights, extra_atoms, extra_weights,
                                               quantile_levels=levels, thresholds=thresholds)
    want = _naive_functionals(atoms, weights, extra_atoms, extra_weights, levels, thresholds)
    np.testing.assert_allclose(mean, want[:, 0], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(quant, want[:, 1:1 + len(levels)])
    np.testing.assert_allclose(tails, want[:, 1 + len(levels):], rtol=1e-10, atol=1e-12)


def test_measure_functionals_at_exact_cdf_jumps():
    """Q(q) = min{x : F(x) ≥ q}: at F(1) = 1/2 exactly, the median is 1."""
    mean, quant, tails = F.measure_functionals([0.0, 1.0, 2.0], [[1.0, 1.0, 2.0]], np.zeros((1, 0)),
                                               np.zeros((1, 0)), thresholds=[1.0, 2.0])
    assert mean[0] == 1.25
    assert quant[0].tolist() == [0.0, 1.0, 2.0]
    assert tails[0].tolist() == [0.5, 0.0]


def test_stick_breaking_truncation_and_law():
    theta, D = 3.0, 4000
    atoms, weights = F.stick_breaking_dp(theta, (LO, HI), D, np.random.default_rng(1))
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert weights.min() >= 0 and weights[:, -1].max() < 1e-6  # truncation error < 1e-6 of mass
    assert atoms.min() >= LO and atoms.max() <= HI
    # β_1 = V_1 ~ Beta(1, θ)
    assert stats.kstest(weights[:, 0], stats.beta(1, theta).cdf).pvalue > 1e-3
    # P_H(A) ~ Beta(θH(A), θ(1 − H(A))) for A = [0, 0.3]: the law of the random measure itself
    mass = (weights * (atoms <= 0.3)).sum(axis=1)
    assert stats.kstest(mass, stats.beta(theta * 0.3, theta * 0.7).cdf).pvalue > 1e-3
    # and the test has power: the wrong strength is rejected
    assert stats.kstest(mass, stats.beta(1.5 * 0.3, 1.5 * 0.7).cdf).pvalue < 1e-6


@pytest.mark.parametrize("theta, tol", [(0.2, 1e-6), (40.0, 1e-6), (1.0, 1e-12)])
def test_stick_breaking_truncation_holds_for_every_draw(theta, tol):
    _, weights = F.stick_breaking_dp(theta, (-1.0, 1.0), 500, np.random.default_rng(2), truncation=tol)
    assert weights[:, -1].max() < tol
    # about θ log(1/tol) sticks are enough (Σ of T unit exponentials must pass it): no waste
    assert weights.shape[1] <= 1.5 * theta * math.log(1 / tol) + 40
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-12)


CASES = {
    # few atoms with ties, θ comparable to m: the base measure carries real mass
    "ties, small m": dict(release=lambda: _release(300, 40, 5.0, 3), theta=5.0, draws=20000),
    # 3000 distinct values: several blocks of draws in dp_posterior_functionals
    "distinct, large m": dict(release=lambda: np.random.default_rng(4).beta(2, 5, size=3000), theta=2.0,
                              draws=4000),
}


@pytest.mark.parametrize("case", list(CASES))
def test_posterior_mean_and_variance_of_p_of_A_match_the_closed_form(case):
    """E p̃(A) = (θH(A) + #{Z_i ∈ A})/(θ + m), Var p̃(A) = μ(1 − μ)/(θ + m + 1).

    Tolerance: 4 Monte Carlo standard errors, SE = sqrt(Var/D) for the mean; for the
    variance, the sample variance of D draws has relative SE ≈ sqrt(2/D) (Beta-like
    kurtosis is close to normal here), allowed 5 of them.
    """
    spec = CASES[case]
    z, theta, D = spec["release"](), spec["theta"], spec["draws"]
    m = z.size
    a, b, t = 0.2, 0.45, 0.7
    post = F.dp_posterior_functionals(z, theta, (LO, HI), D, np.random.default_rng(5), thresholds=[a, b, t])
    tail_a, tail_b, tail_t = post.draws[:, -3], post.draws[:, -2], post.draws[:, -1]
    for draws, h_mass, count in [
        (tail_a - tail_b, b - a, np.sum((z > a) & (z <= b))),  # A = (a, b]
        (tail_t, HI - t, np.sum(z > t)),                       # A = (t, ∞)
        (1 - tail_a, a - LO, np.sum(z <= a)),                  # A = (-∞, a]
    ]:
        mu = (theta * h_mass / (HI - LO) + count) / (theta + m)
        var = mu * (1 - mu) / (theta + m + 1)
        assert abs(draws.mean() - mu) <= 4 * math.sqrt(var / D), (draws.mean(), mu)
        assert abs(draws.var() / var - 1) <= 5 * math.sqrt(2 / D)


@pytest.mark.parametrize("case", list(CASES))
def test_posterior_of_the_mean_matches_the_closed_form(case):
    """E[∫x dp̃] = ∫x dG, Var = Var_G(X)/(θ + m + 1), G = (θH + Σδ_Z)/(θ + m); 4-SE tolerance."""
    spec = CASES[case]
    z, theta, D = spec["release"](), spec["theta"], spec["draws"]
    m = z.size
    post = F.dp_posterior_functionals(z, theta, (LO, HI), D, np.random.default_rng(6))
    h_mean, h_second = (LO + HI) / 2, (LO**2 + LO * HI + HI**2) / 3
    g_mean = (theta * h_mean + z.sum()) / (theta + m)
    g_second = (theta * h_second + (z**2).sum()) / (theta + m)
    var = (g_second - g_mean**2) / (theta + m + 1)
    draws = post.draws[:, 0]
    assert abs(draws.mean() - g_mean) <= 4 * math.sqrt(var / D)
    assert abs(draws.var() / var - 1) <= 5 * math.sqrt(2 / D)


@pytest.mark.parametrize("case", list(CASES))
def test_posterior_quantile_law_matches_the_beta_marginal_of_the_cdf(case):
    """P(Q(q) ≤ x) = P(F(x) ≥ q) with F(x) ~ Beta(θH(≤x) + #{Z ≤ x}, rest); 4 binomial SEs."""
    spec = CASES[case]
    z, theta, D = spec["release"](), spec["theta"], spec["draws"]
    m = z.size
    post = F.dp_posterior_functionals(z, theta, (LO, HI), D, np.random.default_rng(7))
    for column, q in enumerate((0.25, 0.5, 0.75), start=1):
        centre = np.quantile(z, q)
        for x in centre + np.array([-0.03, -0.01, 0.0, 0.01, 0.03]):
            alpha = theta * (x - LO) / (HI - LO) + np.sum(z <= x)
            p = stats.beta.sf(q, alpha, theta + m - alpha)
            freq = np.mean(post.draws[:, column] <= x)
            assert abs(freq - p) <= 4 * math.sqrt(max(p * (1 - p), 1 / D) / D), (q, x, freq, p)


def test_posterior_with_huge_theta_is_the_base_measure():
    post = F.dp_posterior_functionals([0.9, 0.9, 0.95], 1000.0, (0.0, 2.0), 200, np.random.default_rng(8),
                                      thresholds=[1.5])
    np.testing.assert_allclose(post.posterior_mean(), [1.0, 0.5, 1.0, 1.5, 0.25], atol=0.02)


def test_coverage_of_the_mean_interval_on_a_simulated_case():
    """Issue 5: coverage of the 95% interval for the mean within [0.9, 1.0].

    Confidential data: 20 000 draws of the grid beta mixture; releases of m = 200 (θ = 1),
    300 replicates, 400 posterior draws each. The binomial SE of the coverage is ≈ 0.013.
    """
    x = sample_grid_beta_mixture(20_000, np.random.default_rng(9))
    result = F.repeated_release_experiment(x, 1.0, 200, (LO, HI), np.random.default_rng(10), replicates=300,
                                           n_draws=400, thresholds=[0.8])
    table = result.table().set_index("functional")
    assert 0.9 <= table.loc["mean", "coverage"] <= 1.0, table
    assert abs(table.loc["mean", "bias"]) < 3 * table.loc["mean", "rmse"] / math.sqrt(300) + 1e-3
    assert table.loc["mean", "confidential"] == pytest.approx(x.mean(), rel=1e-12)
    assert list(table.index) == ["mean", "Q1 (25%)", "median", "Q3 (75%)", "P(X > 0.8)"]
    assert np.all(table["ci_length"] > 0) and np.all(table["seconds"] > 0)


def test_coverage_is_not_automatic():
    """A posterior that ignores most of the release (tiny m, huge θ) misses the truth."""
    x = sample_grid_beta_mixture(5000, np.random.default_rng(11))
    result = F.repeated_release_experiment(x, 20.0, 20, (0.0, 3.0), np.random.default_rng(12), replicates=40,
                                           n_draws=200)
    assert result.table().set_index("functional").loc["mean", "coverage"] < 0.5


def test_empirical_functionals_match_numpy():
    x = np.random.default_rng(13).integers(0, 50, size=999) / 7.0
    got = F.empirical_functionals(x, thresholds=[2.0, 5.5])
    want = [x.mean(), *np.quantile(x, [0.25, 0.5, 0.75], method="inverted_cdf"), np.mean(x > 2.0),
            np.mean(x > 5.5)]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_summary_table_and_reproducibility():
    z = _release(500, 80, 1.0, 14)
    post = F.dp_posterior_functionals(z, 1.0, (LO, HI), 300, np.random.default_rng(15), thresholds=[0.6],
                                      quantile_levels=[0.1, 0.5])
    again = F.dp_posterior_functionals(z, 1.0, (LO, HI), 300, np.random.default_rng(15), thresholds=[0.6],
                                       quantile_levels=[0.1, 0.5])
    np.testing.assert_array_equal(post.draws, again.draws)
    truth = F.empirical_functionals(z, quantile_levels=[0.1, 0.5], thresholds=[0.6])
    table = post.summary(confidential=truth)
    assert table["functional"].tolist() == ["mean", "quantile 0.1", "median", "P(X > 0.6)"]
    assert np.all(table["lower"] <= table["posterior_mean"]) and np.all(table["posterior_mean"] <= table["upper"])
    # the levels as summary computes them (0.5 ∓ 0.95/2 is 0.025 only up to one rounding)
    lower, upper = np.quantile(post.draws, [0.5 - 0.95 / 2, 0.5 + 0.95 / 2], axis=0)
    np.testing.assert_array_equal(table["lower"], lower)
    np.testing.assert_array_equal(table["upper"], upper)
    with pytest.raises(ValueError, match="confidential"):
        post.summary(confidential=[1.0])


@pytest.mark.parametrize("kwargs, match", [
    (dict(release=[]), "release"),
    (dict(release=[0.1, np.inf]), "release"),
    (dict(release=np.zeros((3, 2))), "release"),
    (dict(theta=0.0), "theta"),
    (dict(bounds=(1.0, 1.0)), "bounds"),
    (dict(n_draws=0), "n_draws"),
    (dict(quantile_levels=[0.5, 1.0]), "quantile_levels"),
    (dict(thresholds=[np.nan]), "thresholds"),
    (dict(truncation=0.0), "truncation"),
    (dict(rng=None), "rng"),
])
def test_posterior_validates(kwargs, match):
    args = dict(release=[0.2, 0.4, 0.4], theta=1.0, bounds=(0.0, 1.0), n_draws=10, rng=np.random.default_rng(0))
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        F.dp_posterior_functionals(**args)


@pytest.mark.parametrize("kwargs, match", [
    (dict(confidential=[]), "confidential"),
    (dict(m=0), "m"),
    (dict(replicates=0), "replicates"),
    (dict(level=0.0), "level"),
])
def test_repeated_release_validates(kwargs, match):
    args = dict(confidential=[0.2, 0.4, 0.4], theta=1.0, m=5, bounds=(0.0, 1.0), rng=np.random.default_rng(0))
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        F.repeated_release_experiment(**args)


# ====================================================== discovery probability (thesis §6.3)
import mpmath as mp  # noqa: E402


def _gfc(a, b, c, gamma=0):
    """Generalized factorial coefficient by its definition (35): an alternating sum, at high precision."""
    return mp.fsum((-1) ** i * mp.binomial(b, i) * mp.rf(-c * i - gamma, a) for i in range(b + 1)) / mp.factorial(b)


def _thesis_estimate(n, m, k, sigma, theta):
    """The thesis's D-hat = (θ + kσ + σ E[Y]) / (θ + n + m), P(Y = j) ∝ (θ/σ+1)_{j+k−1} C(n,j;σ) C(m,k;σ,−n+jσ)."""
    with mp.workdps(80):
        s, th = mp.mpf(sigma), mp.mpf(theta)
        num = den = mp.mpf(0)
        for j in range(1, n + 1):
            w = mp.rf(th / s + 1, j + k - 1) * _gfc(n, j, s) * _gfc(m, k, s, -n + j * s)
            num += j * w
            den += w
        return float((th + k * s + s * num / den) / (th + n + m))


@pytest.mark.parametrize("n, m, k, sigma, theta", [
    (1, 1, 0, 0.5, 1.0), (1, 2, 1, 0.5, 0.1), (5, 3, 0, 0.3, 1.0), (5, 3, 2, 0.3, 1.0), (8, 6, 3, 0.6, 0.5),
    (12, 10, 5, 0.25, -0.2), (10, 4, 4, 0.9, 3.0), (15, 8, 8, 0.5, 2.0), (20, 12, 1, 0.1, 10.0)])
def test_discovery_probability_matches_the_thesis_sum_in_mpmath(n, m, k, sigma, theta):
    assert F.discovery_probability(n, m, k, sigma, theta) == pytest.approx(
        _thesis_estimate(n, m, k, sigma, theta), rel=1e-10)


def test_discovery_probability_dirichlet_process_and_confidential_value():
    assert F.discovery_probability(100, 40, 3, 0.0, 2.0) == 2.0 / (2.0 + 100 + 40)
    assert F.confidential_discovery_probability(100, 17, 0.5, 2.0) == (2.0 + 17 * 0.5) / 102.0


def test_discovery_probability_against_monte_carlo():
    """E[(θ + (K_n + k)σ)/(θ + n + m) | K_m^{(n)} = k] by simulating the PY chain of distinct values."""
    n, m, sigma, theta, reps = 30, 20, 0.5, 1.0, 400_000
    rng = np.random.default_rng(12)
    K = np.ones(reps)
    for t in range(1, n):
        K += rng.random(reps) < (theta + K * sigma) / (theta + t)
    new = np.zeros(reps)
    for t in range(m):
        new += rng.random(reps) < (theta + (K + new) * sigma) / (theta + n + t)
    D = (theta + (K + new) * sigma) / (theta + n + m)
    for k in (2, 4, 6, 9):
        sel = new == k
        assert sel.sum() > 2000
        se = D[sel].std() / math.sqrt(sel.sum())
        assert abs(D[sel].mean() - F.discovery_probability(n, m, k, sigma, theta)) < 4.5 * se


def test_discovery_probability_is_stable_for_large_n():
    """n up to 10^5: finite, within its a-priori range, and continuous in n (no cancellation)."""
    sigma, theta, m, k = 0.5, 1.0, 500, 12
    values = {n: F.discovery_probability(n, m, k, sigma, theta) for n in (99_990, 100_000)}
    for n, v in values.items():
        lo = (theta + k * sigma + sigma) / (theta + n + m)
        hi = (theta + k * sigma + sigma * n) / (theta + n + m)
        assert math.isfinite(v) and lo < v < hi
    assert values[99_990] == pytest.approx(values[100_000], rel=1e-3)
    # against the same sum evaluated from generalized factorial coefficients computed by their
    # recursion in mpmath (no alternating sum for C(n, j)) at a size where that is still quick
    n, m2, k2 = 60, 10, 3
    with mp.workdps(50):
        s, th = mp.mpf(sigma), mp.mpf(theta)
        C = [[mp.mpf(0)] * (n + 1) for _ in range(n + 1)]
        C[0][0] = mp.mpf(1)
        for ell in range(n):
            for j in range(1, ell + 2):
                C[ell + 1][j] = s * C[ell][j - 1] + (ell - j * s) * C[ell][j]
        num = den = mp.mpf(0)
        for j in range(1, n + 1):
            w = mp.rf(th / s + 1, j + k2 - 1) * C[n][j] * _gfc(m2, k2, s, -n + j * s)
            num += j * w
            den += w
        ref = float((th + k2 * s + s * num / den) / (th + n + m2))
    assert F.discovery_probability(n, m2, k2, sigma, theta) == pytest.approx(ref, rel=1e-10)


def test_discovery_probability_bad_input():
    for call, name in [(lambda: F.discovery_probability(0, 5, 1, 0.5, 1.0), "n"),
                       (lambda: F.discovery_probability(10, 5, 6, 0.5, 1.0), "new_values"),
                       (lambda: F.discovery_probability(10, 0, 0, 0.5, 1.0), "m"),
                       (lambda: F.discovery_probability(10, 5, 1, -0.5, 1.0), "sigma"),
                       (lambda: F.discovery_probability(10, 5, 1, 0.5, -0.6), "theta"),
                       (lambda: F.discovery_probability(10, 5, 1, 1.0, 1.0), "sigma"),
                       (lambda: F.confidential_discovery_probability(10, 11, 0.5, 1.0), "k")]:
        with pytest.raises(ValueError, match=name):
            call()


# ------------------------------------------------------------------ discovery probability where k is unlikely a priori
# Reference: the thesis's weights P(Y = j) ∝ (θ/σ+1)_{j+k−1} C(n, j; σ) C(m, k; σ, −n + jσ) in
# 40-digit mpmath, with the central coefficients from their recursion and the noncentral one from
# its expansion C(m, k; σ, −b) = Σ_l binom(m, l) C(l, k; σ) (b)_{m−l} (all terms ≥ 0, so 40 digits
# are 40 correct digits). No Markov chain, no beta-binomial and no truncation: every j and every l.
@functools.lru_cache(maxsize=None)
def _central_gfc_40(size, sigma):
    """Rows l = 0..size of C(l, j; σ), j = 0..l, by C(l+1, j) = σ C(l, j−1) + (l − jσ) C(l, j)."""
    with mp.workdps(40):
        s = mp.mpf(sigma)
        rows = [(mp.mpf(1),)]
        for ell in range(size):
            prev = rows[-1]
            rows.append(tuple([mp.mpf(0)] + [s * prev[j - 1] + ((ell - j * s) * prev[j] if j <= ell else 0)
                                             for j in range(1, ell + 2)]))
        return rows


def _discovery_mp40(n, m, k, sigma, theta, size=None):
    rows = _central_gfc_40(size or max(n, m), sigma)
    with mp.workdps(40):
        s, th = mp.mpf(sigma), mp.mpf(theta)
        # C(m, k; σ, −b) = Σ_r c_r (b)_r with r = m − l, evaluated by Horner in the rising-factorial basis
        coef = [mp.binomial(m, m - r) * (rows[m - r][k] if k <= m - r else 0) for r in range(m - k + 1)]
        num = den = mp.mpf(0)
        for j in range(1, n + 1):
            b = n - j * s
            acc = coef[-1]
            for r in range(len(coef) - 2, -1, -1):
                acc = coef[r] + (b + r) * acc
            w = mp.rf(th / s + 1, j + k - 1) * rows[n][j] * acc
            num += j * w
            den += w
        return (th + k * s + s * num / den) / (th + n + m)


# (n, m, k, σ, θ). The first row is where dropping prior terms below e^-80 of the largest gave
# 0.188049 instead of 0.199341: k = 300 distinct new values in 300 draws is so unlikely at σ = 0.3,
# θ = 1 that the posterior of K_n lies where the prior is ~e^-55 … e^-600 of its mode.
_UNLIKELY_K_CASES = [
    (500, 300, 300, 0.3, 1.0),      # the reported point: every released draw new and distinct
    (500, 300, 290, 0.3, 1.0),      # just below it
    (500, 300, 1, 0.3, 1.0),        # k = 1
    (500, 300, 0, 0.3, 1.0),        # k = 0
    (200, 400, 200, 0.3, 1.0),      # k = n (m > n)
    (200, 400, 400, 0.3, 1.0),      # k = m = 2n: beyond it
    (300, 50, 50, 0.3, 100.0),      # large θ
    (400, 1, 1, 0.3, 1.0),          # m = 1
    (150, 450, 3, 0.3, 0.5),        # m = 3n with k tiny: the posterior in the prior's low tail
    (150, 150, 150, 0.05, 0.01),    # small σ and θ, k = n = m
    (150, 150, 145, 0.9, -0.5),     # large σ, negative θ, k near n
    (120, 100, 60, 0.5, 0.5),
    (120, 30, 0, 0.99, -0.98),      # σ near 1, θ near −σ
    (100, 50, 0, 0.7, 1e4),         # huge θ
    (150, 120, 120, 0.95, 0.1),
]


@pytest.mark.parametrize("n, m, k, sigma, theta", _UNLIKELY_K_CASES)
def test_discovery_probability_matches_40_digit_mpmath_where_k_is_unlikely(n, m, k, sigma, theta):
    size = 500 if sigma == 0.3 else None   # one table of central coefficients for the σ = 0.3 rows
    exact = float(_discovery_mp40(n, m, k, sigma, theta, size))
    assert F.discovery_probability(n, m, k, sigma, theta) == pytest.approx(exact, rel=1e-12)


def test_discovery_probability_sigma_zero_and_negative():
    """σ = 0: θ/(θ + n + m) whatever k (the new-value probability does not involve K_n);
    σ < 0 (Dirichlet–multinomial, z public categories) has no new values: refused."""
    for n, m, k, theta in [(500, 300, 300, 1.0), (500, 300, 0, 1.0), (10, 10**6, 10**6, 1e-9), (10**6, 1, 1, 1e9)]:
        assert F.discovery_probability(n, m, k, 0.0, theta) == theta / (theta + n + m)
    with pytest.raises(ValueError, match="sigma"):
        F.discovery_probability(500, 300, 3, -0.5, 0.5 * 40)


def test_discovery_probability_keeps_every_term_that_matters_at_larger_n():
    """n = 1500 against a float64 log-sum-exp of *every* term (independent of the code: the whole
    triangle of the K_n chain in log space, and the noncentral coefficient of the thesis for each
    j over every l), where the posterior of K_n sits ~e^-60 below the prior's mode."""
    from scipy import special

    n, m, k, sigma, theta = 1500, 400, 120, 0.3, 2.0
    log_p = np.array([0.0])                            # log P(K_t = j), j = 1..t
    for t in range(1, n):
        j = np.arange(1, t + 1)
        stay = log_p + np.log(t - j * sigma)
        move = log_p + np.log(theta + j * sigma)
        log_p = np.logaddexp(np.append(stay, -np.inf), np.insert(move, 0, -np.inf)) - math.log(theta + t)
    j = np.arange(1, n + 1, dtype=float)
    # log C(l, k; σ) for l ≤ m by the recursion, in log space
    log_c = np.full(m + 1, -np.inf)
    rows = np.full(k + 1, -np.inf)
    rows[0] = 0.0
    for ell in range(m):
        i = np.arange(1, k + 1)
        rows[1:] = np.logaddexp(math.log(sigma) + rows[:-1],
                                np.log(np.maximum(ell - i * sigma, 1e-300)) + rows[1:])
        rows[0] = -np.inf
        log_c[ell + 1] = rows[k]
    r = np.arange(0, m - k + 1)                           # r = m − l
    b = (n - j * sigma)[:, None]
    log_terms = (special.gammaln(m + 1) - special.gammaln(r + 1) - special.gammaln(m - r + 1)
                 + log_c[m - r][None, :] + special.gammaln(b + r) - special.gammaln(b))
    log_noncentral = special.logsumexp(log_terms, axis=1)
    # (θ/σ+1)_{j+k−1} C(n, j) ∝ P(K_n = j)·(θ/σ + j)_k: the thesis's weights with the chain's law
    log_w = log_p + special.gammaln(theta / sigma + j + k) - special.gammaln(theta / sigma + j) + log_noncentral
    post = np.exp(log_w - special.logsumexp(log_w))
    assert post[np.argmax(log_p)] < 1e-20               # the posterior is far from the prior's mode
    want = (theta + k * sigma + sigma * float(post @ j)) / (theta + n + m)
    assert F.discovery_probability(n, m, k, sigma, theta) == pytest.approx(want, rel=1e-10)


def test_discovery_probability_log_space_chain_agrees(monkeypatch):
    """The log-space chain (used when the scaled chain cannot rule out under/overflow) gives the
    same numbers; and extreme parameters that need it agree with mpmath."""
    cases = [(500, 300, 300, 0.3, 1.0), (150, 150, 145, 0.9, -0.5), (120, 30, 0, 0.99, -0.98)]
    scaled = [F.discovery_probability(*c) for c in cases]
    used = []

    class NoScaledChain(FD._ScaledChain):
        def __init__(self, *args):
            raise FD._NeedsLogSpace

    class CountedLogChain(FD._LogChain):
        def __init__(self, *args):
            used.append(args)
            super().__init__(*args)

    monkeypatch.setattr(FD, "_ScaledChain", NoScaledChain)
    monkeypatch.setattr(FD, "_LogChain", CountedLogChain)
    for c, want in zip(cases, scaled):
        assert F.discovery_probability(*c) == pytest.approx(want, rel=1e-12)
    assert len(used) >= len(cases)
    monkeypatch.undo()
    monkeypatch.setattr(FD, "_LogChain", CountedLogChain)
    used.clear()
    # θ + σ ≈ 1e-300: a birth from one value has probability ~1e-300, beyond what the scaled chain can hold
    exact = float(_discovery_mp40(60, 40, 3, 1e-300, 1e-300))
    assert F.discovery_probability(60, 40, 3, 1e-300, 1e-300) == pytest.approx(exact, rel=1e-12)
    assert used


def test_discovery_probability_refuses_what_it_cannot_bound():
    """m = 10^7 new draws after n = 2000 with k = 3: the likelihood needs more than 10^8 terms."""
    with pytest.raises(ValueError, match="not computed"):
        F.discovery_probability(2000, 10**7, 3, 0.5, 1.0)


# ------------------------------------------------------------------ the confidential data as a frequency table (issue 13)
def test_empirical_functionals_of_a_table_equal_those_of_the_records():
    rng = np.random.default_rng(80)
    records = np.round(rng.lognormal(1.0, 0.7, 5000), 1)
    atoms, counts = np.unique(records, return_counts=True)
    kwargs = {"quantile_levels": (0.1, 0.5, 0.9), "thresholds": (2.0, 3.5)}
    want = F.empirical_functionals(records, **kwargs)
    assert np.array_equal(F.empirical_functionals(atoms, counts=counts, **kwargs), want)
    # an unsorted table with a repeated value is the same table
    order = rng.permutation(atoms.size)
    i = int(np.argmax(counts))
    assert counts[i] > 1
    split_counts = counts.copy()
    split_counts[i] -= 1
    split_atoms = np.concatenate([atoms[order], atoms[i:i + 1]])
    split_counts = np.concatenate([split_counts[order], [1]])
    assert np.array_equal(F.empirical_functionals(split_atoms, counts=split_counts, **kwargs), want)
    # against numpy on the records: mean, inverted-cdf quantiles, tail frequency
    assert want[0] == pytest.approx(records.mean(), rel=1e-12)
    assert np.array_equal(want[1:4], np.quantile(records, [0.1, 0.5, 0.9], method="inverted_cdf"))
    assert want[4] == pytest.approx(np.mean(records > 2.0), rel=1e-12)
    with pytest.raises(ValueError, match="counts"):
        F.empirical_functionals(atoms, counts=counts[:-1])
    with pytest.raises(ValueError, match="counts"):
        F.empirical_functionals(atoms, counts=np.zeros_like(counts))


def test_repeated_release_experiment_from_a_table_equals_the_records():
    rng = np.random.default_rng(81)
    records = np.round(rng.uniform(0, 10, 400), 0)
    atoms, counts = np.unique(records, return_counts=True)
    kwargs = {"replicates": 4, "n_draws": 50, "thresholds": (5.0,)}
    a = F.repeated_release_experiment(records, 2.0, 30, (0.0, 10.0), np.random.default_rng(82), **kwargs)
    b = F.repeated_release_experiment(atoms, 2.0, 30, (0.0, 10.0), np.random.default_rng(82), counts=counts,
                                      **kwargs)
    for field in ("truth", "posterior_mean", "lower", "upper"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    assert a.names == b.names


# ------------------------------------------------------------------ categorical columns: the posterior of P(X = c)
def test_dp_posterior_shares_are_the_dirichlet_of_the_release_counts():
    # (p(a), p(b), p(c), rest) | Z ~ Dir(n_a, n_b, 0, θ + m − n_a − n_b): Beta marginals, c never released
    theta = 3.0
    z = np.array(["a"] * 30 + ["b"] * 12 + ["new_category_1"] * 2 + ["d"] * 6, dtype=object)
    m = z.size
    post = F.dp_posterior_shares(z, theta, ["a", "b", "c"], 200_000, np.random.default_rng(0))
    assert post.names == ("P(X = a)", "P(X = b)", "P(X = c)")
    for j, n_c in enumerate((30, 12)):
        beta = stats.beta(n_c, theta + m - n_c)
        assert post.posterior_mean()[j] == pytest.approx(beta.mean(), abs=4 * beta.std() / math.sqrt(200_000))
        assert post.draws[:, j].var() == pytest.approx(beta.var(), rel=0.02)
        lower, upper = post.credible_interval(0.9)
        assert lower[j] == pytest.approx(beta.ppf(0.05), abs=0.005) and upper[j] == pytest.approx(beta.ppf(0.95),
                                                                                                    abs=0.005)
    assert np.all(post.draws[:, 2] == 0.0)                       # H has no atom at "c": share 0
    assert np.all(post.draws.sum(axis=1) < 1.0)                  # the rest (θ and the other labels) keeps mass
    summary = post.summary(0.95, confidential=F.empirical_shares(["a", "b", "c", "e"], ["a", "b", "c"],
                                                                 counts=[5, 3, 1, 1]))
    assert summary["confidential"].tolist() == [0.5, 0.3, 0.1]
    with pytest.raises(ValueError, match="categories"):
        F.dp_posterior_shares(z, theta, ["a", "a"], 10, np.random.default_rng(0))
    with pytest.raises(ValueError, match="categories"):
        F.dp_posterior_shares(z, theta, [], 10, np.random.default_rng(0))


def test_repeated_share_experiment_from_a_frequency_table():
    labels = np.array(["a", "b", "c", "d"], dtype=object)
    counts = np.array([500, 300, 150, 50])
    result = F.repeated_share_experiment(labels, 5.0, 400, ["a", "d"], np.random.default_rng(4), counts=counts,
                                         replicates=200, n_draws=400)
    table = result.table()
    assert table["functional"].tolist() == ["P(X = a)", "P(X = d)"]
    np.testing.assert_allclose(table["confidential"], [0.5, 0.05])
    # the posterior mean n_c/(θ + m) is nearly unbiased for m ≫ θ, and the intervals cover about 95%
    assert np.all(np.abs(table["bias"]) < 0.02)
    assert np.all(table["coverage"] > 0.85)
    # records and their table give the same experiment for the same generator
    records = np.repeat(labels, counts)
    again = F.repeated_share_experiment(records, 5.0, 400, ["a", "d"], np.random.default_rng(4), replicates=200,
                                        n_draws=400)
    np.testing.assert_array_equal(again.posterior_mean, result.posterior_mean)


def test_coverage_notes_say_why_coverage_falls_short():
    """Issue 25: P(X > 50) = 0 in the data is degenerate (coverage 0 however small the bias); a
    bias toward H explains the rest; coverage within its Monte Carlo error is not flagged."""
    import pandas as pd

    table = pd.DataFrame({
        "functional": ["mean", "median", "Q3 (75%)", "P(X > 50)", "P(X = a)"],
        "confidential": [12.66, 11.5, 15.9, 0.0, 1.0],
        "bias": [0.866, 0.05, 0.02, 0.0099, -0.02],
        "rmse": [1.14, 1.4, 1.1, 0.0099, 0.02],
        "ci_length": [3.46, 2.76, 3.86, 0.035, 0.05],
        "coverage": [0.80, 0.70, 0.93, 0.0, 0.0],
        "coverage_se": [0.04, 0.046, 0.0255, 0.0, 0.0],
    })
    notes = F.coverage_notes(table, theta=2.0, n=13_501, m=100, bounds=(0.0, 100.0))
    assert list(notes) == ["mean", "median", "P(X > 50)", "P(X = a)"]          # Q3 is within its error
    assert "pull toward H" in notes["mean"] and "uniform on the public bounds [0, 100]" in notes["mean"]
    assert "short for the spread" in notes["median"]
    assert "degenerate" in notes["P(X > 50)"] and "exactly 0" in notes["P(X > 50)"]
    assert "every confidential record satisfies X = a" in notes["P(X = a)"]
    shares = F.coverage_notes(table.iloc[[4]], theta=2.0, n=10, m=5, categorical=True)
    assert "fresh label" in shares["P(X = a)"]
    with pytest.raises(ValueError, match="coverage_se"):
        F.coverage_notes(table.drop(columns="coverage_se"), theta=2.0, n=10, m=5)
