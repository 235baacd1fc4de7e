"""The PYPP sampler (core.mechanisms) against the literal Algorithm 1 and exact laws.

Goodness of fit with fixed seeds: the fast sampler and the literal sequential algorithm
must give the same laws of S_1, L and K in all three regimes (two-sample chi-square),
and S_1 and L must follow their exact beta-binomial marginals (one-sample chi-square).
A power check shows the same tests reject a sampler with a wrong σ.
"""

import math

import numpy as np
import pytest
from scipy import stats

from core.data import CategoricalBase, UniformBase
from core.privacy import crp_table_counts, crp_tables
from core.mechanisms import py_predictive_counts, pypp_release
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


def test_crp_table_counts_draw_the_exact_law_of_k():
    """The inverse-CDF draws of K given L: the exact law at L = 3, and the table-by-table sampler's law."""
    rng = np.random.default_rng(4)
    sigma, s = 0.4, 1.3
    pmf = np.array([0.0, (1 - sigma) * (2 - sigma), 0.0, (s + sigma) * (s + 2 * sigma)]) / ((s + 1) * (s + 2))
    pmf[2] = 1.0 - pmf.sum()
    assert exact_gof_pvalue(crp_table_counts(np.full(20000, 3), sigma, s, rng), pmf) > P_MIN
    customers = np.repeat([0, 1, 7, 40], 3000)
    k = crp_table_counts(customers, 0.6, 2.5, rng)
    assert np.all(k[customers == 0] == 0) and np.all(k[customers == 1] == 1)
    assert np.all((k >= 1) <= (customers >= 1)) and np.all(k <= customers)
    assert two_sample_pvalue(k[customers == 40], crp_tables(np.full(3000, 40), 0.6, 2.5, rng)) > P_MIN


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


# ------------------------------------------------------------- large sizes (issue 9)
def test_feller_coupling_matches_table_by_table_seating():
    """σ = 0, one restaurant with many expected tables: the Feller-coupling path has the law
    of the size-biased loop (K, the first table's size, the largest table)."""
    from core.privacy import crp

    L, strength, reps = 400, 150.0, 3000
    assert crp._expected_tables(L, 0.0, strength) > crp._FELLER_TABLES / 10
    rng = np.random.default_rng(21)
    feller = [crp._feller_table_sizes(L, strength, rng) for _ in range(reps)]
    _, owners, sizes = crp_tables(np.full(reps, L), 0.0, strength, rng, return_sizes=True)
    loop = np.split(sizes[np.argsort(owners, kind="stable")], np.cumsum(np.bincount(owners, minlength=reps))[:-1])
    for stat in (len, lambda s: s[0], max):
        assert two_sample_pvalue(np.array([stat(s) for s in feller]), np.array([stat(s) for s in loop])) > P_MIN
    assert all(s.sum() == L and np.all(s >= 1) for s in feller)
    # E[K] exactly: Σ_{i<L} θ/(θ + i).
    k_mean = np.mean([s.size for s in feller])
    exact = np.sum(strength / (strength + np.arange(L)))
    assert abs(k_mean - exact) < 4 * np.std([s.size for s in feller]) / np.sqrt(reps)


def test_crp_tables_seats_ten_million_customers_and_refuses_runaway_tables():
    rng = np.random.default_rng(0)
    k, sizes = crp_tables(10**7, 0.0, 5.0, rng, return_sizes=True)
    assert sizes.sum() == 10**7 and k == sizes.size
    assert crp_tables(10**6, 0.0, 1e300, rng) == 10**6  # every customer opens a table (Feller path)
    with pytest.raises(ValueError, match="MAX_CRP_TABLES"):
        crp_tables(10**7, 0.95, 1.0, rng)
    with pytest.raises(ValueError, match=r"customers must be integers in \[0, 10000000\]"):
        crp_tables(10**7 + 1, 0.0, 1.0, rng)
    for kwargs, name in [(dict(sigma=1.0), "sigma"), (dict(sigma=float("nan")), "sigma"),
                         (dict(strength=0.0), "strength"), (dict(strength=float("inf")), "strength"),
                         (dict(rng=None), "rng")]:
        args = dict(customers=5, sigma=0.0, strength=1.0, rng=rng) | kwargs
        with pytest.raises(ValueError, match=name):
            crp_tables(args["customers"], args["sigma"], args["strength"], args["rng"])


def test_split_dirichlet_multinomial_matches_dense_draws(monkeypatch):
    """σ < 0: the halving split of the unobserved categories has the law of the dense
    Dirichlet draw (S_1, L, K and the largest new count), forced here on z = 9 categories."""
    from core.mechanisms import pypp as mechanisms

    mult, alpha, z, m, reps = [3, 1, 2], 0.6, 9, 30, 3000
    dense = np.empty((reps, 4), dtype=int)
    rng = np.random.default_rng(5)
    for i in range(reps):
        old, new = py_predictive_counts(mult, -alpha, z * alpha, m, rng)
        dense[i] = old[0], new.sum(), new.size, new.max(initial=0)
    monkeypatch.setattr(mechanisms, "_DENSE_CATEGORIES", 0)
    split = np.empty_like(dense)
    rng = np.random.default_rng(6)
    for i in range(reps):
        old, new = py_predictive_counts(mult, -alpha, z * alpha, m, rng)
        split[i] = old[0], new.sum(), new.size, new.max(initial=0)
    for j in range(4):
        assert two_sample_pvalue(dense[:, j], split[:, j]) > P_MIN
    s1_pmf, l_pmf = exact_marginals(mult, -alpha, z * alpha, m)
    assert exact_gof_pvalue(split[:, 0], s1_pmf) > P_MIN
    assert exact_gof_pvalue(split[:, 1], l_pmf) > P_MIN


def test_many_public_categories_release_without_allocating_z():
    """σ < 0 with z = 10**9 public categories: only categories that receive draws exist."""
    import tracemalloc

    rng = np.random.default_rng(1)
    tracemalloc.start()
    old, new = py_predictive_counts([5, 2, 1], -1.0, 1e9, 10_000, rng)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert old.sum() + new.sum() == 10_000 and np.all(new >= 1)
    assert peak < 50 * 2**20  # z cells would be 8 GB


def test_release_size_limit_is_stated():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="MAX_RELEASE_SIZE"):
        py_predictive_counts([1, 2], 0.0, 1.0, 10**7 + 1, rng)
    with pytest.raises(ValueError, match="MAX_RELEASE_SIZE"):
        pypp_release(np.arange(2.0), [1, 2], 0.0, 1.0, 10**12, rng, base=UniformBase(0, 1))


def test_base_measures_validate_size_and_rng():
    rng = np.random.default_rng(0)
    for bad in (-1, 2.5, 10**12, [1, 2]):
        with pytest.raises(ValueError, match="size"):
            UniformBase(0, 1).sample(bad, rng)
        with pytest.raises(ValueError, match="size"):
            CategoricalBase(("a", "b")).sample(bad, rng)
    with pytest.raises(ValueError, match="rng"):
        CategoricalBase(("a", "b")).sample(1, None)
    with pytest.raises(ValueError, match="finite width"):
        UniformBase(-1e308, 1e308)


def test_categorical_base_is_fixed_before_the_data():
    """σ ≥ 0: new labels are iid uniform over the whole public list (the missing marker excluded),
    or fresh names without a list — the law takes no argument about the data (docs/mathematics.md §2.4)."""
    rng = np.random.default_rng(3)
    drawn = CategoricalBase(("a", "b", "c", None)).sample(30_000, rng)
    counts = np.array([np.count_nonzero(drawn == c) for c in "abc"])
    assert counts.sum() == drawn.size and stats.chisquare(counts).pvalue > 1e-3
    assert CategoricalBase().sample(3, rng).tolist() == ["new_category_1", "new_category_2", "new_category_3"]
    # through the mechanism: x = one A and 19 B, the list (A, B); a new value is A or B, each with 1/2
    new = []
    for seed in range(400):
        rel = pypp_release(np.array(["A", "B"], dtype=object), [1, 19], 0.0, 20.0, 3, np.random.default_rng(seed),
                           base=CategoricalBase(("A", "B")))
        new += rel.values[rel.is_new].tolist()
    assert set(new) == {"A", "B"} and abs(new.count("A") / len(new) - 0.5) < 4 * math.sqrt(0.25 / len(new))


def test_negative_sigma_names_unobserved_public_categories_uniformly():
    """σ < 0: new blocks are distinct unobserved public categories, each equally likely (exchangeable)."""
    public = tuple("abcdefgh")
    counts = np.zeros(len(public))
    rng = np.random.default_rng(11)
    runs = 3000
    for _ in range(runs):
        rel = pypp_release(np.array(["a", "b"], dtype=object), [3, 2], -1.0, 8.0, 3, rng,
                           base=CategoricalBase(categories=public))
        new = rel.values[rel.is_new]
        assert set(new) <= set(public) - {"a", "b"}
        assert len(set(new)) == rel.n_new_values            # one category per new block
        for label in set(new):
            counts[public.index(label)] += 1
    observed = counts[2:]
    assert stats.chisquare(observed).pvalue > 1e-3           # uniform over the six unobserved categories


def test_negative_sigma_product_domain_and_refusals():
    cats = [CategoricalBase(categories=("x", "y", "z")), CategoricalBase(categories=(1, 2))]
    atoms = np.array([["x", 1], ["y", 2]], dtype=object)
    rel = pypp_release(atoms, [4, 4], -0.5, 6 * 0.5, 200, np.random.default_rng(2), base=cats)
    rows = {tuple(r) for r in rel.values.tolist()}
    assert rows <= {(a, b) for a in ("x", "y", "z") for b in (1, 2)}
    with pytest.raises(ValueError, match="public category list"):
        pypp_release(np.array([0.1, 0.5]), [3, 2], -1.0, 5.0, 10, np.random.default_rng(0), base=UniformBase(0, 1))
    with pytest.raises(ValueError, match="size of the public category domain"):
        pypp_release(atoms, [4, 4], -0.5, 7 * 0.5, 10, np.random.default_rng(0), base=cats)
