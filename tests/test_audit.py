"""Empirical audit and disclosure risk (core.evaluation.audit, docs/audit.md §4–§5)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from core.evaluation import audit
from core import privacy
from core.mechanisms import GaussianHistogram, LaplaceHistogram
from core.mechanisms import py_predictive_counts


# --------------------------------------------------------------------------- statistics
def test_clopper_pearson_closed_forms():
    n, c = 200, 0.95
    lo, hi = audit.clopper_pearson(0, n, c, side="upper")
    assert lo == 0 and hi == pytest.approx(1 - (1 - c) ** (1 / n), rel=1e-9)
    assert hi >= 1 - (1 - c) ** (1 / n)
    lo, hi = audit.clopper_pearson(n, n, c, side="lower")
    assert hi == 1 and lo == pytest.approx((1 - c) ** (1 / n), rel=1e-9)
    assert lo <= (1 - c) ** (1 / n)
    lo, hi = audit.clopper_pearson(30, 100, 0.9)
    assert lo < 0.3 < hi
    assert stats.binom.sf(29, 100, lo) == pytest.approx(0.05, rel=1e-6)


def test_clopper_pearson_coverage():
    rng = np.random.default_rng(11)
    p, n = 0.03, 400
    k = rng.binomial(n, p, size=4000)
    lo, hi = audit.clopper_pearson(k, n, 0.95)
    assert np.mean((lo <= p) & (p <= hi)) >= 0.94


# --------------------------------------------------------------------------- sampling law
def chi2_gof(sample, pmf, support):
    counts = np.bincount(sample.astype(int), minlength=support.size)[: support.size]
    expected = pmf * sample.size
    keep = expected >= 5
    obs = np.append(counts[keep], counts[~keep].sum() + (sample.size - counts.sum()))
    exp = np.append(expected[keep], expected[~keep].sum() + sample.size * (1 - pmf.sum()))
    if exp[-1] < 5:
        obs[-2] += obs[-1]
        exp[-2] += exp[-1]
        obs, exp = obs[:-1], exp[:-1]
    return stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


@pytest.mark.parametrize("sigma", [0.0, 0.4])
def test_audit_statistics_have_the_mechanisms_law(sigma):
    mult, theta, m = np.array([3, 1, 5, 8, 2]), 1.5, 40
    n = int(mult.sum())
    s = audit.pypp_audit_samples(mult, sigma, theta, m, 40_000, np.random.default_rng(5), r=3)
    su_x = s["black box"][0]
    su_y = s["black box"][1]
    support = np.arange(m + 1)
    # x: S_u ~ BB(m, r − σ, θ + n − r + σ); y: BB(m, r − 1 − σ, θ + n − r + 1 + σ)
    assert chi2_gof(su_x, stats.betabinom.pmf(support, m, 3 - sigma, theta + n - 3 + sigma), support) > 1e-3
    assert chi2_gof(su_y, stats.betabinom.pmf(support, m, 2 - sigma, theta + n - 2 + sigma), support) > 1e-3
    # the likelihood-ratio score is −∞ exactly when y's new value v appears: P = 1 − P(S_v = 0)
    p_v = 1 - stats.betabinom.pmf(0, m, 1 - sigma, theta + n - 1 + sigma)
    frac = np.mean(np.isneginf(s["likelihood ratio"][1]))
    assert abs(frac - p_v) < 5 * math.sqrt(p_v * (1 - p_v) / su_y.size)
    assert not np.isneginf(s["likelihood ratio"][0]).any()
    # power check: the same test rejects a wrong law
    assert chi2_gof(su_x, stats.betabinom.pmf(support, m, 3.3 - sigma, theta + n - 3 + sigma), support) < 1e-3


def test_audit_statistics_match_the_full_sampler_for_sigma_positive():
    """K (new values) under x: grouped draw vs the full exact sampler, two-sample χ²."""
    mult, sigma, theta, m = np.array([1, 2, 2, 6]), 0.5, 2.0, 30
    rng = np.random.default_rng(8)
    s = audit.pypp_audit_samples(mult, sigma, theta, m, 6000, rng, r=1)
    # the LR score for r = 1 is +∞ iff the singleton appears
    full_su, full_k = [], []
    for _ in range(3000):
        old, new = py_predictive_counts(mult, sigma, theta, m, rng)
        full_su.append(old[0])
        full_k.append(new.size)
    appears = np.mean(np.isposinf(s["likelihood ratio"][0]))
    p = np.mean(np.array(full_su) >= 1)
    assert abs(appears - p) < 5 * math.sqrt(p * (1 - p) * (1 / 6000 + 1 / 3000))
    table = np.array([np.bincount(np.minimum(s["black box"][0].astype(int), 6), minlength=7),
                      np.bincount(np.minimum(np.array(full_su), 6), minlength=7)])
    table = table[:, table.sum(axis=0) > 0]
    assert stats.chi2_contingency(table).pvalue > 1e-3


# --------------------------------------------------------------------------- audits
def test_certified_bound_never_exceeds_true_epsilon_on_20_seeded_cases():
    # Each audit's largest certified bound holds with its (family-wise) confidence; at
    # 1 − 0.05/20 per case the 20 hold simultaneously with 95% confidence (Bonferroni).
    confidence = 1 - 0.05 / 20
    rng_cases = np.random.default_rng(2024)
    for case in range(20):
        k = int(rng_cases.integers(3, 30))
        mult = rng_cases.integers(2, 8, size=k)           # no singleton: finite true ε
        if case % 4 == 0:
            mult[0] = 1                                     # some with a singleton
        theta = float(rng_cases.choice([0.5, 1.0, 3.0]))
        m = int(rng_cases.choice([20, 60, 150]))
        eps = float(rng_cases.choice([0.5, 1.0, 2.0]))
        delta = float(privacy.instance_delta(mult, 0.0, theta, m, eps))
        if not 0 < delta < 1:
            continue
        res = audit.audit_pypp(mult, 0.0, theta, m, eps, delta, n_simulations=20_000,
                               rng=np.random.default_rng(case), confidence=confidence)
        assert res.theory_eps is not None
        assert res.certified_eps <= res.theory_eps, (case, res.certified_eps, res.theory_eps)
        assert res.certified_eps <= eps
        assert not res.contradicts_stated and not res.contradicts_theory


def test_each_attack_is_certified_at_the_bonferroni_level():
    """The audit reports the larger of two bounds, so each is computed at 1 − (1 − c)/2
    (docs/audit.md §5.3): the same draws evaluated attack by attack at that level give the
    audit's numbers exactly, and at the uncorrected level c they would certify more."""
    mult, theta, m, eps, delta, c = [2, 2, 3], 1.0, 100, 0.1, 1e-3, 0.9
    res = audit.audit_pypp(mult, 0.0, theta, m, eps, delta, n_simulations=20_000, rng=np.random.default_rng(1),
                           confidence=c)
    samples = audit.pypp_audit_samples(mult, 0.0, theta, m, 20_000, np.random.default_rng(1))
    assert res.confidence == c and res.attack_confidence == pytest.approx(0.95, abs=1e-15)
    uncorrected = []
    for att in res.attacks:
        ref = audit.evaluate_attack(att.name, *samples[att.name], delta, confidence=1 - (1 - c) / 2)
        assert (att.threshold, att.tpr, att.fpr, att.eps_lower) == (ref.threshold, ref.tpr, ref.fpr, ref.eps_lower)
        uncorrected.append(audit.evaluate_attack(att.name, *samples[att.name], delta, confidence=c).eps_lower)
    assert res.certified_eps > 0 and max(uncorrected) > res.certified_eps
    assert audit.attack_confidence(0.95, 2) == pytest.approx(0.975) and audit.attack_confidence(0.95, 1) == 0.95
    with pytest.raises(ValueError, match="attacks"):
        audit.attack_confidence(0.95, 0)
    with pytest.raises(ValueError, match="scores"):
        audit.evaluate_attacks({}, 0.1)


@pytest.mark.parametrize("confidence", [0.95, 0.5])
def test_false_alarm_rate_of_a_correct_mechanism_is_within_the_bound(confidence):
    """docs/audit.md §5.3: a correct mechanism is flagged with probability at most 1 − c.

    150 seeded audits of PYPP (σ = 0) on data with a singleton, each at the exact δ of its
    stated ε (the singleton term T₁ ≈ 0.052): the worst pair, where both attacks reach the
    boundary TPR = e^ε·FPR + δ through the singular event "the singleton is copied". The
    count of alarms must not exceed the 99.9% quantile of Bin(150, 1 − c), its largest
    plausible value if the false-alarm probability were exactly the bound. At c = 0.5 the
    alarms are frequent enough to see (the simulation is not vacuous); at c = 0.95 none occur.
    """
    mult, theta, m, eps = np.array([1] + [2] * 20 + [5] * 10), 1.0, 5, 1.0
    delta = float(privacy.instance_delta(mult, 0.0, theta, m, eps))   # exact for σ = 0, rounded up
    audits = 150
    alarms = sum(audit.audit_pypp(mult, 0.0, theta, m, eps, delta, n_simulations=10_000,
                                  rng=np.random.default_rng(seed), confidence=confidence).contradicts_stated
                 for seed in range(audits))
    assert alarms <= stats.binom.ppf(0.999, audits, 1 - confidence)
    if confidence == 0.5:
        assert alarms > 0
    else:
        assert alarms == 0


def test_audit_flags_a_misstated_epsilon():
    mult, theta, m = [2, 2, 3], 1.0, 100
    true_eps = None
    res = audit.audit_pypp(mult, 0.0, theta, m, 0.1, 1e-3, n_simulations=40_000, rng=np.random.default_rng(1))
    true_eps = res.theory_eps
    assert res.contradicts_stated                           # stated ε = 0.1 is false
    assert 0.1 < res.certified_eps <= true_eps              # and the audit stays below the truth
    # the same audit at the true ε does not fire
    ok = audit.audit_pypp(mult, 0.0, theta, m, true_eps, 1e-3, n_simulations=40_000, rng=np.random.default_rng(1))
    assert not ok.contradicts_stated


def test_audit_is_powerful_when_the_guarantee_is_weak():
    # a singleton copied with high probability: the black-box attack finds it
    res = audit.audit_pypp([1, 3, 4], 0.0, 0.5, 200, 1.0, 1e-4, n_simulations=20_000, rng=np.random.default_rng(2))
    bb = res.attacks[1]
    assert bb.name == "black box" and bb.fpr == 0.0 and bb.tpr > 0.9
    assert res.contradicts_stated   # δ = 1e-4 is far below the singleton term (≈ 0.97)


@pytest.mark.parametrize("cls", [LaplaceHistogram, GaussianHistogram])
def test_histogram_audit(cls):
    rng = np.random.default_rng(3)
    data = rng.beta(2, 5, size=300)
    mech = cls(1.0, 10) if cls is LaplaceHistogram else cls(1.0, 1e-3, 10)
    res = audit.audit_histogram(data, mech, 100, n_simulations=100_000, rng=rng)
    assert res.theory_eps <= 1.0 + 1e-3
    assert res.certified_eps <= res.theory_eps
    assert not res.contradicts_stated
    lr = res.attacks[0]
    assert lr.eps_lower > 0.3                              # the LR attack gets close to ε


def test_histogram_audit_from_a_frequency_table_equals_the_records():
    """counts=: the audit reads cell counts only, so the table gives the records' audit exactly."""
    rows = np.round(np.random.default_rng(8).beta(2, 5, size=400), 2)
    atoms, counts = np.unique(rows, return_counts=True)
    mech = LaplaceHistogram(1.0, 10)
    a = audit.audit_histogram(rows, mech, 50, n_simulations=5_000, rng=np.random.default_rng(1))
    b = audit.audit_histogram(atoms, mech, 50, counts=counts, n_simulations=5_000, rng=np.random.default_rng(1))
    assert [(x.name, x.tpr, x.fpr, x.eps_lower) for x in a.attacks] == \
        [(x.name, x.tpr, x.fpr, x.eps_lower) for x in b.attacks]
    with pytest.raises(ValueError, match="counts"):
        audit.audit_histogram(atoms, mech, 50, counts=counts[:-1], rng=np.random.default_rng(1))


def test_detector_catches_the_floating_point_laplace_leak():
    """Published noisy counts c + Laplace(b) leak through their last bits (Mironov 2012): the
    unrounded floating-point log-ratio separates x from y beyond e^ε, and the audit says so."""
    rng = np.random.default_rng(5)
    eps, n = 2.5, 200_000
    b = 2.0 / eps
    ca, cb = 6.0, 0.0
    scores = []
    for base_a, base_b in ((ca + 1, cb), (ca, cb + 1)):
        da = base_a + rng.laplace(0, b, n)
        db = base_b + rng.laplace(0, b, n)
        scores.append((np.abs(da - ca) - np.abs(da - ca - 1) + np.abs(db - cb - 1) - np.abs(db - cb)) / b)
    raw = audit.evaluate_attack("raw float LR", scores[0], scores[1], 0.0)
    assert raw.eps_lower > eps                      # the detector fires on the float leak
    fixed = audit.evaluate_attack("rounded LR", np.round(scores[0], 9), np.round(scores[1], 9), 0.0)
    assert fixed.eps_lower <= eps                   # the mechanism's mathematics is ε-DP


def test_audit_progress_and_vectorised_speed():
    calls = []
    import time

    t = time.perf_counter()
    audit.audit_pypp(np.full(5000, 2), 0.0, 1.0, 100, 2.0, 1e-6, n_simulations=100_000,
                     rng=np.random.default_rng(0), progress=lambda f, msg: calls.append(f))
    assert time.perf_counter() - t < 20
    assert calls and calls[-1] == 1.0


# --------------------------------------------------------------------------- disclosure
def test_exact_match_counts():
    conf = np.array([[1, "a"], [1, "a"], [2, "b"], [3, "c"]], dtype=object)
    rel = np.array([[1, "a"], [2, "b"], [2, "b"], [9, "z"], [3, "c"]], dtype=object)
    out = audit.exact_match_counts(conf, rel)
    assert out == {"released": 5, "equal_to_confidential": 4, "equal_to_singleton": 3,
                   "distinct_singletons_released": 2}
    one = audit.exact_match_counts(np.array([0.5, 0.5, 0.25]), np.array([0.25, 0.75]))
    assert one["equal_to_confidential"] == 1 and one["equal_to_singleton"] == 1


def test_holdout_split():
    tr, co = audit.holdout_split(100, 0.2, np.random.default_rng(0))
    assert co.size == 20 and tr.size == 80 and not set(tr) & set(co)
    with pytest.raises(ValueError):
        audit.holdout_split(100, 0.9, np.random.default_rng(0))


def population(n, rng):
    age = rng.integers(18, 90, size=n)
    height = np.round(rng.normal(170, 10, size=n), 1)
    income = np.round(rng.lognormal(10, 0.8, size=n), -2)
    region = rng.choice(["n", "s", "e", "w"], size=n)
    return pd.DataFrame({"age": age, "height": height, "region": region, "income": income})


def test_disclosure_risk_separates_a_copy_from_an_independent_sample():
    rng = np.random.default_rng(9)
    pop = population(3000, rng)
    train, control = pop.iloc[:2400].reset_index(drop=True), pop.iloc[2400:].reset_index(drop=True)
    copy = train.sample(1000, random_state=1).reset_index(drop=True)          # leaks training records
    fresh = population(1000, np.random.default_rng(10))                        # knows nothing about them
    leak = {r.attack: r for r in audit.disclosure_risk(train, control, copy, rng=np.random.default_rng(1))}
    safe = {r.attack: r for r in audit.disclosure_risk(train, control, fresh, rng=np.random.default_rng(1))}
    assert set(leak) == {"singling out", "linkability", "inference"}
    for name in ("linkability", "inference"):
        assert leak[name].risk > safe[name].risk
        assert leak[name].risk_interval[0] > 0.05, name
        assert safe[name].risk_interval[0] <= 0.05, name


def test_disclosure_risk_one_column_has_singling_out_only():
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"x": np.round(rng.normal(size=500), 2)})
    out = audit.disclosure_risk(df.iloc[:400], df.iloc[400:], df.iloc[:100], rng=rng)
    assert [r.attack for r in out] == ["singling out"]


@pytest.mark.parametrize("call", [
    lambda: audit.audit_pypp([2, 3], 0.0, 1.0, 10, 0.0, 0.1, rng=np.random.default_rng(0)),
    lambda: audit.audit_pypp([2, 3], 0.0, 1.0, 10, 1.0, 1.5, rng=np.random.default_rng(0)),
    lambda: audit.audit_pypp([2, 3], 0.0, 1.0, 10, 1.0, 0.1, n_simulations=10, rng=np.random.default_rng(0)),
    lambda: audit.audit_pypp([2, 3], 0.0, 1.0, 10, 1.0, 0.1, n_simulations=10**9, rng=np.random.default_rng(0)),
    lambda: audit.audit_pypp([2, 3], -0.5, 1.0, 10, 1.0, 0.1, rng=np.random.default_rng(0)),
    lambda: audit.audit_pypp([2, 3], 0.0, 1.0, 10, 1.0, 0.1, r=7, rng=np.random.default_rng(0)),
    lambda: audit.evaluate_attack("a", [1.0] * 5, [0.0] * 5, 0.1),
    lambda: audit.evaluate_attack("a", [np.nan] * 30, [0.0] * 30, 0.1),
    lambda: audit.clopper_pearson(5, 3),
    lambda: audit.exact_match_counts([], [1]),
    lambda: audit.audit_histogram(np.array([0.1, 0.2]), object(), 10, rng=np.random.default_rng(0)),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_histogram_audit_on_numeric_bins_times_public_categories():
    # the audit reads the cells of the mechanism's own domain: bins × public categories
    from core.mechanisms import LaplaceHistogram, category_positions, histogram_counts

    rng = np.random.default_rng(6)
    n, size = 200, 3
    x = np.column_stack([rng.random(n), category_positions(rng.integers(0, size, n), size)])
    mech = LaplaceHistogram(1.0, 4, levels=(None, size))
    assert histogram_counts(x, 4, levels=mech.levels).size == mech.cells(2) == 4 * size
    res = audit.audit_histogram(x, mech, 50, n_simulations=2000, rng=rng)
    assert res.stated_eps == 1.0 and not res.contradicts_stated
