"""core.evaluation.informativity: the informativity experiment of SPEC §6 (paper §4.2)."""

import math

import numpy as np
import ot
import pytest
from scipy import special, stats

from core.evaluation import informativity as I
from core.data import UniformBase
from core.privacy import crp_tables
from core.mechanisms import pypp_release
from core.privacy import global_delta, max_synthetic_size
from core.evaluation.simulation import sample_dyadic_geometric


@pytest.fixture(scope="module")
def dyadic_population():
    return sample_dyadic_geometric(200_000, 0.1, np.random.default_rng(20260402))


def test_fitted_slope_is_minus_one_half_for_m_equal_n_over_10(dyadic_population):
    """Issue 5: m = ⌈n/10⌉, n from 1e2 to 1e5, p = 0.1, θ = 1: slope within 0.1 of −1/2."""
    n = I.log_grid(100, 100_000, 7)
    result = I.informativity_experiment(dyadic_population, n, I.PowerSizeRule(0.1, 1.0), 1.0, 100,
                                        np.random.default_rng(7))
    np.testing.assert_array_equal(result.m, np.ceil(n / 10).astype(int))
    assert abs(result.slope + 0.5) <= 0.1, (result.slope, result.table())
    assert np.all(np.diff(result.mean) < 0)
    assert np.all((result.lower < result.mean) & (result.mean < result.upper))


def test_slope_responds_to_the_release_size_rule(dyadic_population):
    """A release that does not grow with n stops improving: the fit must see it (slope ≈ 0)."""
    n = I.log_grid(1000, 100_000, 5)
    result = I.informativity_experiment(dyadic_population, n, I.PowerSizeRule(20.0, 0.0), 1.0, 60,
                                        np.random.default_rng(8))
    assert np.all(result.m == 20)
    assert abs(result.slope) < 0.1


def test_vectorised_runs_have_the_law_of_the_literal_mechanism():
    """W1 of the batched count-level runs vs subsample + pypp_release + POT, run by run (KS test)."""
    population = sample_dyadic_geometric(400, 0.25, np.random.default_rng(1))
    n, m, theta, runs = 40, 25, 2.0, 1500
    fast = I.informativity_experiment(population, [n], I.PowerSizeRule(m / n, 1.0), theta, runs,
                                      np.random.default_rng(2)).w1[0]
    rng = np.random.default_rng(3)
    literal = np.empty(runs)
    for r in range(runs):
        x = rng.choice(population, size=n, replace=False)
        atoms, counts = np.unique(x, return_counts=True)
        z = pypp_release(atoms, counts, 0.0, theta, m, rng, base=UniformBase(0.0, 1.0)).values
        literal[r] = ot.wasserstein_1d(z, x)
    assert stats.ks_2samp(fast, literal).pvalue > 1e-3
    # the comparison has power: a different θ changes the law detectably
    other = I.informativity_experiment(population, [n], I.PowerSizeRule(m / n, 1.0), 40.0, runs,
                                       np.random.default_rng(4)).w1[0]
    assert stats.ks_2samp(other, literal).pvalue < 1e-6


def _unsigned_stirling_first(L):
    s = np.zeros((L + 1, L + 1), dtype=object)
    s[0, 0] = 1
    for i in range(1, L + 1):
        for k in range(1, i + 1):
            s[i, k] = s[i - 1, k - 1] + (i - 1) * s[i - 1, k]
    return s[L]


def test_new_value_blocks_follow_the_chinese_restaurant():
    """Number of tables: P(K = k) = |s(L, k)| θ^k / θ^(L rising) (Ewens); sizes sum to L."""
    L, theta, reps = 8, 1.7, 20000
    customers = np.full(reps, L)
    _, owner, sizes = crp_tables(customers, 0.0, theta, np.random.default_rng(9), return_sizes=True)
    np.testing.assert_array_equal(np.bincount(owner, weights=sizes, minlength=reps), L)
    assert sizes.min() >= 1
    tables = np.bincount(owner, minlength=reps)
    stirling = _unsigned_stirling_first(L)
    pmf = np.array([float(stirling[k]) * theta**k for k in range(1, L + 1)])
    pmf /= math.exp(special.gammaln(theta + L) - special.gammaln(theta))
    assert abs(pmf.sum() - 1) < 1e-12
    observed = np.bincount(tables, minlength=L + 1)[1:]
    # pool the improbable large K (expected count < 5) into the last bin
    cut = int(np.flatnonzero(pmf * reps >= 5)[-1])
    expected = np.append(pmf[:cut], pmf[cut:].sum()) * reps
    assert stats.chisquare(np.append(observed[:cut], observed[cut:].sum()), expected).pvalue > 1e-3
    # agrees with the scalar sampler of core.mechanisms on the first block size
    rng = np.random.default_rng(10)
    first_ref = [crp_tables(L, 0.0, theta, rng, return_sizes=True)[1][0] for _ in range(4000)]
    first = sizes[:reps]  # the first loop pass opens one table in every restaurant, in order
    table = np.array([np.bincount(first, minlength=L + 1)[1:], np.bincount(first_ref, minlength=L + 1)[1:]])
    assert stats.chi2_contingency(table[:, table.sum(axis=0) > 0]).pvalue > 1e-3
    empty = crp_tables(np.zeros(3, dtype=int), 0.0, theta, rng, return_sizes=True)
    assert empty[1].size == 0 and empty[2].size == 0


def test_release_sizes_rules():
    n = np.array([100, 1000, 10_000, 100_000])
    np.testing.assert_array_equal(I.release_sizes(n, I.PowerSizeRule(0.1, 1.0), 1.0), n // 10)
    np.testing.assert_array_equal(I.release_sizes([10, 30], I.PowerSizeRule(0.5, 0.5), 1.0), [2, 3])
    np.testing.assert_array_equal(I.release_sizes([1], I.PowerSizeRule(1e-6, 1.0), 1.0), [1])
    rule = I.PrivacySizeRule(1.0, 1e-3)
    m = I.release_sizes(n, rule, 2.0)
    np.testing.assert_array_equal(m, [max_synthetic_size(int(v), 2.0, 1.0, 1e-3) for v in n])
    for nv, mv in zip(n, m):
        if mv > 0:
            assert global_delta(int(nv), 2.0, int(mv), 1.0) <= 1e-3 < global_delta(int(nv), 2.0, int(mv) + 1, 1.0)
    with pytest.raises(ValueError, match="rule"):
        I.release_sizes(n, "n/10", 1.0)
    with pytest.raises(ValueError, match="c"):
        I.PowerSizeRule(0.0, 1.0)
    with pytest.raises(ValueError, match="delta"):
        I.PrivacySizeRule(1.0, 1.5)


def test_log_grid():
    grid = I.log_grid(100, 100_000, 7)
    np.testing.assert_array_equal(grid, [100, 316, 1000, 3162, 10000, 31623, 100000])
    assert I.log_grid(1, 3, 10).tolist() == [1, 2, 3]
    assert I.log_grid(5, 50, 1).tolist() == [50]
    with pytest.raises(ValueError, match="n_max"):
        I.log_grid(10, 5, 3)


def test_fit_loglog_slope_recovers_a_power_law():
    n = np.array([10.0, 100.0, 1000.0, 1e4])
    slope, intercept, se = I.fit_loglog_slope(n, 3.0 * n ** -0.7)
    assert slope == pytest.approx(-0.7, abs=1e-12) and intercept == pytest.approx(math.log(3.0), abs=1e-12)
    assert se < 1e-6
    slope, _, _ = I.fit_loglog_slope(n, [np.nan, 1.0, 0.1, 0.01])
    assert slope == pytest.approx(-1.0)
    assert math.isnan(I.fit_loglog_slope(n, [np.nan, np.nan, np.nan, 1.0])[0])


def test_inadmissible_points_progress_band_and_table():
    population = sample_dyadic_geometric(50_000, 0.1, np.random.default_rng(0))
    calls = []
    result = I.informativity_experiment(population, [100, 1000, 10_000, 50_000], I.PrivacySizeRule(1.0, 1e-3),
                                        1.0, 30, np.random.default_rng(1),
                                        progress=lambda f, msg: calls.append((f, msg)))
    assert result.m[0] == 0 and np.all(np.isnan(result.w1[0])) and np.all(result.m[1:] > 0)
    assert np.isfinite(result.slope)
    fractions = [f for f, _ in calls]
    assert fractions == sorted(fractions) and fractions[-1] == pytest.approx(1.0)
    assert "skipped" in calls[0][1]
    ok = result.m > 0
    half = stats.t.ppf(0.975, 29) * result.w1[ok].std(axis=1, ddof=1) / math.sqrt(30)
    np.testing.assert_allclose(result.upper[ok] - result.mean[ok], half, rtol=1e-12)
    table = result.table()
    assert list(table.columns) == ["series", "n", "m", "runs", "mean", "sd", "lower", "upper"]
    assert table["series"].iloc[0] == "(ε, δ) = (1, 0.001)" and table["runs"].iloc[0] == 30


def test_works_on_continuous_uploaded_data_with_small_blocks(monkeypatch):
    """All-distinct population (as an uploaded column); force several run blocks per grid point."""
    monkeypatch.setattr(I, "_BLOCK_ENTRIES", 20_000)
    population = np.random.default_rng(4).lognormal(size=5000)
    result = I.informativity_experiment(population, [50, 500, 5000], I.PowerSizeRule(0.2, 1.0), 1.0, 12,
                                        np.random.default_rng(5), bounds=(0.0, 60.0))
    assert np.all(np.isfinite(result.w1)) and np.all(result.w1 > 0)
    assert result.mean[0] > result.mean[-1]


@pytest.mark.parametrize("kwargs, match", [
    (dict(population=[]), "population"),
    (dict(population=[[0.1, 0.2]]), "population"),
    (dict(population=[0.1, np.nan]), "population"),
    (dict(n_values=[5000]), "n_values"),
    (dict(n_values=[0]), "n_values"),
    (dict(runs=1), "runs"),
    (dict(theta=0.0), "theta"),
    (dict(bounds=(1.0, 0.0)), "bounds"),
    (dict(level=1.0), "level"),
    (dict(rng=1), "rng"),
])
def test_informativity_validates(kwargs, match):
    args = dict(population=np.linspace(0, 1, 100), n_values=[10, 50], rule=I.PowerSizeRule(0.1, 1.0),
                theta=1.0, runs=5, rng=np.random.default_rng(0))
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        I.informativity_experiment(**args)
