"""The PYPP sampler (core.mechanisms) against the literal Algorithm 1 and exact laws.

Goodness of fit with fixed seeds: the fast sampler and the literal sequential algorithm
must give the same laws of S_1, L and K in all three regimes (two-sample chi-square),
and S_1 and L must follow their exact beta-binomial marginals (one-sample chi-square).
A power check shows the same tests reject a sampler with a wrong σ.
"""

import numpy as np
import pytest
from scipy import stats

from core.mechanisms import (CategoricalBase, UniformBase, crp_tables, py_predictive_counts,
                             pypp_release)
from reference_pypp import literal_algorithm_1

REPLICATES = 3000
P_MIN = 1e-3  # fixed seeds make each verdict deterministic; this is the rejection level

REGIMES = {
    "dirichlet-process": ([3, 1, 1, 2, 5], 0.0, 2.0, 25),
    "pitman-yor": ([3, 1, 1, 2, 5], 0.45, 1.5, 25),
    "dirichlet-multinomial": ([3, 1, 1, 2, 5], -0.7, 0.7 * 8, 25),
}


def fast_draws(mult, sigma, theta, m, seed, reps=REPLICATES):
    rng = np.random.default_rng(seed)
    out = np.empty((reps, 3), dtype=int)
    for i in range(reps):
        old, new = py_predictive_counts(mult, sigma, theta, m, rng)
        out[i] = old[0], new.sum(), new.size
    return out


def literal_draws(mult, sigma, theta, m, seed, reps=REPLICATES):
    rng = np.random.default_rng(seed)
    out = np.empty((reps, 3), dtype=int)
    for i in range(reps):
        S, L, K = literal_algorithm_1(mult, sigma, theta, m, rng)
        out[i] = S[0], L, K
    return out


def two_sample_pvalue(a, b):
    values = np.union1d(a, b)
    table = np.array([[np.sum(a == v) for v in values], [np.sum(b == v) for v in values]])
    # pool sparse cells so that expected counts stay ≥ 5
    keep, pooled = [], np.zeros(2, dtype=int)
    for col in table.T:
        pooled += col
        if pooled.sum() >= 10:
            keep.append(pooled.copy())
            pooled[:] = 0
    if pooled.sum():
        keep[-1] = keep[-1] + pooled
    table = np.array(keep).T
    if table.shape[1] < 2:
        return 1.0
    return stats.chi2_contingency(table)[1]


def exact_gof_pvalue(sample, pmf):
    observed = np.bincount(sample, minlength=pmf.size)[: pmf.size]
    expected = pmf * sample.size
    obs, exp, o_acc, e_acc = [], [], 0, 0.0
    for o, e in zip(observed, expected):
        o_acc += o
        e_acc += e
        if e_acc >= 5:
            obs.append(o_acc)
            exp.append(e_acc)
            o_acc, e_acc = 0, 0.0
    obs[-1] += o_acc
    exp[-1] += e_acc
    exp = np.array(exp) * (sample.size / np.sum(exp))
    return stats.chisquare(obs, exp).pvalue


def exact_marginals(mult, sigma, theta, m):
    n, k, n1 = sum(mult), len(mult), mult[0]
    s = np.arange(m + 1)
    if sigma < 0:
        alpha = -sigma
        z = round(theta / alpha)
        s1 = stats.betabinom.pmf(s, m, n1 + alpha, n + z * alpha - n1 - alpha)
        L = stats.betabinom.pmf(s, m, (z - k) * alpha, n + k * alpha)
    else:
        s1 = stats.betabinom.pmf(s, m, n1 - sigma, theta + n - n1 + sigma)
        L = stats.betabinom.pmf(s, m, theta + k * sigma, n - k * sigma)
    return s1, L


@pytest.fixture(scope="module", params=list(REGIMES))
def regime(request):
    mult, sigma, theta, m = REGIMES[request.param]
    return request.param, (mult, sigma, theta, m), fast_draws(mult, sigma, theta, m, 11), \
        literal_draws(mult, sigma, theta, m, 12)


def test_fast_sampler_matches_literal_algorithm_1(regime):
    name, _, fast, literal = regime
    for j, what in enumerate(["S_1", "L", "K"]):
        p = two_sample_pvalue(fast[:, j], literal[:, j])
        assert p > P_MIN, f"{name}: law of {what} differs (p = {p:.2g})"


def test_both_samplers_follow_exact_beta_binomial_marginals(regime):
    name, params, fast, literal = regime
    s1_pmf, L_pmf = exact_marginals(*params)
    for sample, label in [(fast, "fast"), (literal, "literal")]:
        assert exact_gof_pvalue(sample[:, 0], s1_pmf) > P_MIN, f"{name} {label}: S_1"
        assert exact_gof_pvalue(sample[:, 1], L_pmf) > P_MIN, f"{name} {label}: L"


def test_goodness_of_fit_has_power_against_a_wrong_discount():
    mult, sigma, theta, m = REGIMES["pitman-yor"]
    wrong = fast_draws(mult, 0.0, theta, m, 13)
    right = literal_draws(mult, sigma, theta, m, 14)
    assert two_sample_pvalue(wrong[:, 2], right[:, 2]) < 1e-6
    s1_pmf, _ = exact_marginals(mult, sigma, theta, m)
    assert exact_gof_pvalue(wrong[:, 0], s1_pmf) < 1e-6


def test_crp_table_count_law_matches_sequential_seating():
    """K of the size-biased table loop vs customers seated one by one (σ = 0.6)."""
    sigma, strength, L = 0.6, 2.5, 30
    rng = np.random.default_rng(3)
    fast = crp_tables(np.full(4000, L), sigma, strength, rng)
    seq = np.empty(4000, dtype=int)
    for i in range(seq.size):
        sizes = []
        for c in range(L):
            w = np.array([s - sigma for s in sizes] + [strength + len(sizes) * sigma])
            j = rng.choice(w.size, p=w / w.sum())
            if j == len(sizes):
                sizes.append(1)
            else:
                sizes[j] += 1
        seq[i] = len(sizes)
    assert two_sample_pvalue(fast, seq) > P_MIN
    k, sizes = crp_tables(L, sigma, strength, rng, return_sizes=True)
    assert sizes.sum() == L and sizes.size == k and np.all(sizes >= 1)


def test_counts_are_consistent_and_reproducible():
    mult = np.array([4, 1, 2, 2, 9])
    for sigma, theta in [(0.0, 1.0), (0.3, 0.5), (-0.5, 4.0)]:
        a = py_predictive_counts(mult, sigma, theta, 500, np.random.default_rng(7))
        b = py_predictive_counts(mult, sigma, theta, 500, np.random.default_rng(7))
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
        assert a[0].sum() + a[1].sum() == 500 and a[0].size == mult.size and np.all(a[1] > 0)
    _, new = py_predictive_counts(mult, -0.5, 3.5, 500, np.random.default_rng(1))
    assert new.size <= 2  # z − k = 7 − 5 unobserved categories at most


def test_value_release_numeric_1d():
    atoms = np.array([0.1, 0.25, 0.5, 0.9])
    rel = pypp_release(atoms, [5, 1, 3, 2], 0.2, 3.0, 2000, np.random.default_rng(2),
                       base=UniformBase(0.0, 1.0), decimals=3)
    assert rel.values.shape == (2000,) and rel.m == 2000
    old = rel.values[~rel.is_new]
    assert np.isin(old, atoms).all()
    for i, a in enumerate(atoms):
        assert np.sum(rel.values[~rel.is_new] == a) == rel.old_counts[i]
    new = rel.values[rel.is_new]
    assert np.all((new >= 0) & (new <= 1)) and np.all(np.round(new, 3) == new)
    assert rel.is_new.sum() == rel.new_counts.sum() and len(np.unique(new)) <= rel.n_new_values
    # uniformly random order: the first half holds about half of the old values
    assert abs(np.sum(~rel.is_new[:1000]) - np.sum(~rel.is_new) / 2) < 5 * np.sqrt(500)


def test_value_release_rows_and_categories():
    atoms = np.array([["a", 1.0], ["b", 2.0], ["a", 3.0]], dtype=object)
    rel = pypp_release(atoms, [2, 1, 4], 0.0, 5.0, 300, np.random.default_rng(4),
                       base=[CategoricalBase(), UniformBase(0.0, 10.0)])
    assert rel.values.shape == (300, 2)
    new_labels = set(rel.values[rel.is_new, 0])
    assert all(lbl.startswith("new_category_") for lbl in new_labels)
    assert len(new_labels) == rel.n_new_values
    old_rows = {tuple(r) for r in rel.values[~rel.is_new]}
    assert old_rows <= {tuple(r) for r in atoms}
    # σ < 0 with a public category list: new blocks are unobserved public categories
    rel = pypp_release(np.array(["a", "b"], dtype=object), [3, 2], -1.0, 5.0, 400, np.random.default_rng(5),
                       base=CategoricalBase(categories=("a", "b", "c", "d", "e")))
    assert set(rel.values) <= {"a", "b", "c", "d", "e"} and len(set(rel.values[rel.is_new])) == rel.n_new_values


@pytest.mark.parametrize("kwargs,name", [
    (dict(sigma=1.0), "sigma"), (dict(sigma=0.5, theta=-0.6), "theta"),
    (dict(sigma=-0.5, theta=1.0), "theta"), (dict(m=0), "m"), (dict(m=2.5), "m"),
    (dict(multiplicities=[]), "multiplicities"), (dict(multiplicities=[1, -1]), "multiplicities"),
    (dict(rng=42), "rng"),
])
def test_invalid_parameters(kwargs, name):
    args = dict(multiplicities=[1, 2, 3], sigma=0.0, theta=1.0, m=10, rng=np.random.default_rng(0))
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        py_predictive_counts(**args)


def test_release_requires_base_measure_when_new_values_appear():
    with pytest.raises(ValueError, match="base"):
        pypp_release(np.array([1.0, 2.0]), [1, 1], 0.0, 1e6, 50, np.random.default_rng(0))
