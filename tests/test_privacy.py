"""Privacy accounting (core.privacy) against brute-force enumeration (SPEC §8),
mpmath reference values, closed forms and edge cases.

Every δ that core.privacy returns is rounded up by a relative 1e-10 (conservative
side), so comparisons with closed forms use ``ROUNDING = 2e-10`` relative.
"""

import contextlib
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from core.privacy import betabinom
from core import privacy as P
from core.privacy import global_accounting
from core.privacy.monte_carlo import PYPP_ROWS
from core.privacy.old_values import OLD_VALUES_ROWS
from reference_pypp import enumerate_outputs, enumerated_deltas

ROUNDING = 2e-10


def tiny_cases(n_cases, seed, sigma_kind):
    """Random tiny datasets (k ≤ 3, n_i ≤ 4, m ≤ 4) with parameters and an ε grid."""
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(n_cases):
        k = int(rng.integers(1, 4))
        mult = [int(v) for v in rng.integers(1, 5, size=k)]
        m = int(rng.integers(1, 5))
        if sigma_kind == "dp":
            sigma, theta = 0.0, float(rng.uniform(0.05, 5.0))
        elif sigma_kind == "py":
            sigma = float(rng.uniform(0.05, 0.9))
            theta = float(rng.uniform(-sigma + 0.05, 4.0))
        else:
            alpha = float(rng.uniform(0.1, 3.0))
            z = k + int(rng.integers(0, 3))
            sigma, theta = -alpha, z * alpha
        eps = np.sort(rng.uniform(0.01, 4.0, size=6))
        cases.append((mult, sigma, theta, m, eps))
    return cases


DP_CASES = tiny_cases(60, 20261121, "dp")


@pytest.mark.parametrize("mult,sigma,theta,m,eps", DP_CASES)
def test_dp_instance_and_tight_delta_match_enumeration(mult, sigma, theta, m, eps):
    delta, tight = enumerated_deltas(mult, sigma, theta, m, eps)
    np.testing.assert_allclose(P.instance_delta(mult, 0.0, theta, m, eps), delta, rtol=0, atol=1e-10)
    np.testing.assert_allclose(P.tight_instance_delta(mult, theta, m, eps), tight, rtol=0, atol=1e-10)
    # the hockey-stick profile is never above the probabilistic-DP curve
    assert np.all(P.tight_instance_delta(mult, theta, m, eps) <= P.instance_delta(mult, 0.0, theta, m, eps))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_global_delta_is_the_worst_instance_over_all_datasets_of_size_n(n):
    """Theorem 2 holds for every dataset of size n, with equality for the worst one."""
    theta, m, eps = 0.7, 3, np.array([0.05, 0.3, 0.9, 2.0])

    def partitions(total, largest):
        if total == 0:
            yield []
            return
        for first in range(min(total, largest), 0, -1):
            for rest in partitions(total - first, first):
                yield [first] + rest

    worst = np.zeros(eps.size)
    for mult in partitions(n, n):
        if len(mult) > 3:
            continue  # keep enumeration tiny; every multiplicity r ≤ n still occurs
        worst = np.maximum(worst, enumerated_deltas(mult, 0.0, theta, m, eps)[0])
    np.testing.assert_allclose(P.global_delta(n, theta, m, eps), worst, rtol=0, atol=1e-10)


def _tail_mpmath(m, a, b, s0):
    """P(S ≥ s0), S ~ BB(m, a, b), in 50-digit arithmetic."""
    mpmath.mp.dps = 50
    total = mpmath.mpf(0)
    for s in range(int(s0), m + 1):
        total += mpmath.binomial(m, s) * mpmath.beta(s + a, m - s + b) / mpmath.beta(a, b)
    return total


@pytest.mark.parametrize("m,a,b,s0", [
    (50, 1.0, 1e5, 1), (2000, 3.0, 4e4, 40), (2000, 7.0, 4e4, 2000), (300, 2.5, 0.3, 1),
    (10_000, 50.0, 1e6, 100), (10_000, 1.0, 2.0, 9_990), (129, 4.0, 17.0, 64),
])
def test_beta_binomial_log_tail_matches_mpmath_including_tiny_tails(m, a, b, s0):
    got = P.beta_binomial_log_tail(m, [a], [b], s0)[0, 0]
    ref = float(mpmath.log(_tail_mpmath(m, a, b, s0)))
    assert abs(got - ref) <= 1e-11 * max(1.0, abs(ref))


def test_tails_far_below_double_cdf_resolution_are_not_zero():
    # scipy's betabinom.sf returns 0 here; the product must not.
    from scipy.stats import betabinom
    m, r, b = 200, 3.0, 1e5
    assert betabinom.sf(60, m, r, b) == 0.0
    assert P.instance_delta([r, r, 5], 0.0, 2.0, m, 0.0001 + math.log1p(60 / 2)) > 0


def _global_bruteforce(n, theta, m, eps):
    """max over every r = 1..n of T_r, with mpmath tails (independent of the pruning)."""
    c = math.expm1(eps)
    best = mpmath.mpf(0)
    for r in range(1, n + 1):
        x = c * (r - 1)
        s0 = math.floor(x) + 1
        if s0 <= m:
            best = max(best, _tail_mpmath(m, r, theta + n - r, s0))
    return float(best)


@pytest.mark.parametrize("n,theta,m,eps", [
    (40, 2.0, 12, 0.05), (40, 2.0, 12, 0.4), (60, 0.5, 30, 1.3), (25, 10.0, 25, 0.02),
    (80, 1.0, 5, 0.7), (30, 3.0, 40, 2.5), (50, 0.1, 8, 0.15),
])
def test_global_delta_pruned_search_equals_bruteforce_max(n, theta, m, eps):
    assert P.global_delta(n, theta, m, eps) == pytest.approx(_global_bruteforce(n, theta, m, eps), rel=ROUNDING, abs=1e-14)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 3000), theta=st.floats(0.05, 50), m=st.integers(1, 400), eps=st.floats(0.01, 12))
def test_global_delta_within_theorem_2_bounds(n, theta, m, eps):
    value = P.global_delta(n, theta, m, eps)
    singleton = m / (m + theta + n - 1)
    assert value >= singleton
    assert value <= P.global_delta_simple_bound(n, theta, m, eps) * (1 + 1e-9)
    if eps >= math.log1p(m):
        assert value == pytest.approx(singleton, rel=ROUNDING)


def test_singleton_plateau_and_singleton_limit():
    n, theta, m = 1000, 2.0, 50
    t1 = m / (m + theta + n - 1)
    eps = np.array([0.5, 2, 5, 20, np.inf])
    inst = P.instance_delta([1] + [3] * 333, 0.0, theta, m, eps)
    assert np.all(inst >= t1 * (1 - 1e-12))
    assert inst[-1] == pytest.approx(t1, rel=ROUNDING)
    # m_sing is the largest m whose singleton term is ≤ δ, whatever ε
    delta = 1e-2
    ms = P.singleton_limit(n, theta, delta)
    assert ms / (ms + theta + n - 1) <= delta < (ms + 1) / (ms + 1 + theta + n - 1)
    assert P.max_synthetic_size(n, theta, 50.0, delta) == ms
    assert P.max_synthetic_size(n, theta, 1000.0, delta) == ms


def test_max_synthetic_size_is_the_largest_feasible_m():
    n, theta, delta = 5000, 2.0, 1e-3
    for eps in (0.3, 1.0, 3.0):
        m_star = P.max_synthetic_size(n, theta, eps, delta)
        assert 1 <= m_star <= P.singleton_limit(n, theta, delta)
        assert P.global_delta(n, theta, m_star, eps) <= delta
        if m_star < P.singleton_limit(n, theta, delta):
            assert P.global_delta(n, theta, m_star + 1, eps) > delta
    curve = P.synthetic_size_curve(n, theta, [0.3, 1.0, 3.0, 30.0], delta)
    assert np.all(np.diff(curve) >= 0) and curve[-1] == P.singleton_limit(n, theta, delta)


def test_max_synthetic_size_zero_when_nothing_can_be_released():
    assert P.max_synthetic_size(10, 1.0, 0.5, 1e-6) == 0


def test_instance_size_curve_without_singletons_can_exceed_singleton_limit():
    mult = [5] * 200
    n, theta, delta = 1000, 2.0, 1e-3
    m_inst = P.max_instance_synthetic_size(mult, theta, 5.0, delta)
    assert m_inst > P.singleton_limit(n, theta, delta)
    assert P.instance_delta(mult, 0.0, theta, m_inst, 5.0) <= delta
    assert P.instance_delta(mult, 0.0, theta, m_inst + 1, 5.0) > delta


# -------------------------------------------------------------------- σ < 0
DM_CASES = tiny_cases(40, 7, "dm")


@pytest.mark.parametrize("mult,sigma,theta,m,eps", DM_CASES)
def test_dirichlet_multinomial_bound_and_pure_condition_match_enumeration(mult, sigma, theta, m, eps):
    alpha = -sigma
    seqs, px, _ = enumerate_outputs(mult, sigma, theta, m)
    # the bound's event, enumerated: max_l P_x(S_l > (e^ε − 1)(n_l − 1 + α))
    S = np.array([[seq.count(l) for seq in seqs] for l in range(len(mult))])
    bound_enum = np.array([max(px[S[l] > math.expm1(e) * (mult[l] - 1 + alpha)].sum()
                               for l in range(len(mult))) for e in eps])
    bound = P.instance_delta(mult, sigma, theta, m, eps)
    exact, _ = enumerated_deltas(mult, sigma, theta, m, eps)
    if round(theta / alpha) == 1:
        # one public category: no neighbour differs from x, so δ = 0 exactly (not the vacuous 1)
        np.testing.assert_array_equal(bound, 0.0)
        np.testing.assert_array_equal(exact, 0.0)
        return
    np.testing.assert_allclose(bound, bound_enum, rtol=1e-9, atol=0)  # rounded up by its error bound
    assert np.all(bound >= bound_enum)
    assert np.all(exact <= bound)
    pure = m <= np.expm1(eps) * (min(mult) - 1 + alpha)
    np.testing.assert_array_equal(exact == 0, pure)
    np.testing.assert_array_equal(bound == 0, pure)
    np.testing.assert_array_equal([P.dirichlet_multinomial_is_pure(mult, alpha, m, float(e)) for e in eps], pure)
    eps_pure = P.dirichlet_multinomial_pure_epsilon(mult, alpha, m)
    assert m <= math.expm1(eps_pure) * (min(mult) - 1 + alpha)
    assert enumerated_deltas(mult, sigma, theta, m, [eps_pure])[0][0] == 0
    assert enumerated_deltas(mult, sigma, theta, m, [eps_pure * 0.98])[0][0] > 0


def test_dirichlet_multinomial_global_condition_is_the_singleton_worst_case():
    alpha, m = 0.8, 3
    eps_global = P.dirichlet_multinomial_pure_epsilon([1], alpha, m, instance=False)
    assert eps_global == pytest.approx(math.log1p(m / alpha), rel=ROUNDING)
    assert enumerated_deltas([1, 2], -alpha, 3 * alpha, m, [eps_global])[0][0] == 0
    assert enumerated_deltas([1, 2], -alpha, 3 * alpha, m, [eps_global * 0.97])[0][0] > 0


# ------------------------------------------------------------------ σ ∈ (0,1)
PY_CASES = tiny_cases(8, 99, "py")


@pytest.mark.parametrize("case_id", range(len(PY_CASES)))
def test_monte_carlo_delta_agrees_with_enumeration_within_its_interval(case_id):
    mult, sigma, theta, m, eps = PY_CASES[case_id]
    exact, _ = enumerated_deltas(mult, sigma, theta, m, eps)
    # 99.9% here so that eight fixed-seed cases do not miss by design (a 95% bound
    # misses one time in twenty); the product's default is 95%.
    mc = P.monte_carlo_delta(mult, sigma, theta, m, eps, n_mc=20000, rng=np.random.default_rng(case_id),
                             confidence=0.999)
    assert np.all(exact <= mc.upper + 1e-12)
    assert np.all(np.abs(mc.estimate - exact) <= 5 * mc.std_error + 5 / mc.n_mc)
    mc95 = P.monte_carlo_delta(mult, sigma, theta, m, eps, n_mc=20000, rng=np.random.default_rng(case_id))
    np.testing.assert_array_equal(mc95.estimate, mc.estimate)
    assert np.all(mc95.upper <= mc.upper)
    assert np.allclose(P.instance_delta(mult, sigma, theta, m, eps, n_mc=20000, seed=case_id), mc95.upper)


def test_pruned_monte_carlo_equals_evaluating_every_type():
    """Skipping dominated old-to-old types must not change any estimate."""
    mult = [1, 2, 2, 3, 5, 5, 9, 14, 30]
    eps = np.geomspace(0.05, 4, 12)
    fast = P.monte_carlo_delta(mult, 0.35, 1.0, 20, eps, n_mc=3000, rng=np.random.default_rng(8))
    full = P.monte_carlo_delta(mult, 0.35, 1.0, 20, eps, n_mc=3000, rng=np.random.default_rng(8), prune=False)
    np.testing.assert_array_equal(fast.estimate, full.estimate)
    np.testing.assert_array_equal(fast.upper, full.upper)
    values, how_many = np.unique(mult, return_counts=True)
    assert fast.n_types == full.n_types == sum(len(values) - 1 + (h >= 2) for h in how_many) + len(values)
    # an independent evaluation of every concrete neighbour on fresh replicates agrees
    ref = _all_types_reference(mult, 0.35, 1.0, 20, eps, 3000, 9)
    assert np.all(np.abs(ref - fast.estimate) <= 5 * np.sqrt(2 * fast.estimate * (1 - fast.estimate) / 3000) + 2e-3)


def _all_types_reference(mult, sigma, theta, m, eps, n_mc, seed):
    """Max over every concrete neighbour (k·(k−1) + k of them, no pruning, no grouping by
    multiplicity) of the bad-event frequency, on fresh replicates of the release sampler."""
    from core.mechanisms import py_predictive_counts
    rng = np.random.default_rng(seed)
    counts = np.array(mult, dtype=float)
    k = counts.size
    bad = np.zeros((k * k, len(eps)))
    for _ in range(n_mc):
        S, new = py_predictive_counts(mult, sigma, theta, m, rng)
        K = new.size
        row = 0
        for l in range(k):
            nl = counts[l]
            for t in list(range(k)) + [None]:
                if t == l:
                    continue
                if nl == 1 and S[l] >= 1:
                    lr = np.inf
                elif t is None:
                    lr = (np.log((nl + S[l] - 1 - sigma) / (nl - 1 - sigma))
                          + np.log((theta + k * sigma) / (theta + (k + K) * sigma))) if nl >= 2 else 0.0
                else:
                    head = (np.log((nl + S[l] - 1 - sigma) / (nl - 1 - sigma)) if nl >= 2 else
                            np.log((theta + (k + K - 1) * sigma) / (theta + (k - 1) * sigma)))
                    lr = head + np.log((counts[t] - sigma) / (counts[t] + S[t] - sigma))
                bad[row] += lr > eps
                row += 1
    return bad.max(axis=0) / n_mc


def test_replicates_answer_a_new_eps_as_a_full_evaluation_and_are_kept_by_seed():
    """A move of ε reuses the counts made at the first ε (core.privacy.MonteCarloReplicates): the
    maximum it finds is the one evaluating every type gives, for both mechanisms."""
    mult = [1, 2, 2, 3, 5, 5, 9, 14, 30, 30, 31]
    reps = P.monte_carlo_replicates(mult, 0.35, 1.0, 40, n_mc=2000, seed=21)
    assert P.monte_carlo_replicates(mult, 0.35, 1.0, 40, n_mc=2000, seed=21) is reps
    grid = np.geomspace(0.05, 6, 15)
    for rows in (PYPP_ROWS, OLD_VALUES_ROWS):
        first = reps.delta(grid, rows=rows)
        np.testing.assert_array_equal(first.upper, reps.delta(grid, rows=rows, prune=False).upper)
        for eps in (0.01, 0.07, 0.4, 1.3, 5.0, 9.0, math.inf):
            moved = reps.delta([eps], rows=rows)
            assert moved.estimate[0] == reps.delta([eps], rows=rows, prune=False).estimate[0]
            assert moved.n_types == first.n_types
    fresh = P.monte_carlo_delta(mult, 0.35, 1.0, 40, grid, n_mc=2000, rng=np.random.default_rng(21))
    np.testing.assert_array_equal(fresh.upper, reps.delta(grid).upper)


def test_clopper_pearson_upper_bound_closed_form_at_zero_and_all_counts():
    # x = 0 bad events out of N: the one-sided bound solves (1 − p)^N = α/T.
    mc = P.monte_carlo_delta([4, 4], 0.5, 1.0, 1, [50.0], n_mc=4000, rng=np.random.default_rng(1))
    assert mc.estimate[0] == 0
    alpha_t = 0.05 / mc.n_types
    assert mc.upper[0] == pytest.approx(1 - alpha_t ** (1 / 4000), rel=ROUNDING)


def test_monte_carlo_reports_progress_and_is_reproducible():
    seen = []
    a = P.monte_carlo_delta([1, 3, 3, 6], 0.4, 1.0, 5, [0.5, 2.0], n_mc=3000, batch=1000,
                            rng=np.random.default_rng(5), progress=lambda f, msg: seen.append(f))
    b = P.monte_carlo_delta([1, 3, 3, 6], 0.4, 1.0, 5, [0.5, 2.0], n_mc=3000, batch=1000,
                            rng=np.random.default_rng(5))
    # sampling reports the first half, type evaluation the second
    assert seen[:3] == pytest.approx([1 / 6, 2 / 6, 3 / 6]) and seen[-1] == 1.0
    assert all(b >= a for a, b in zip(seen, seen[1:]))
    np.testing.assert_array_equal(a.upper, b.upper)
    assert np.all(a.upper >= a.estimate)
    via_api = []
    P.instance_delta([1, 3, 3, 6], 0.4, 1.0, 5, [0.5, 2.0], n_mc=3000, seed=5, progress=lambda f, _: via_api.append(f))
    assert via_api and via_api[-1] == 1.0


# -------------------------------------------------------------- edge cases
def test_eps_limits_and_m_equal_one():
    mult, theta = [2, 3], 1.0
    n = 5
    # ε → ∞: only singular events remain (none here), so δ → 0
    assert P.instance_delta(mult, 0.0, theta, 4, np.inf) == 0.0
    # ε → 0: δ tends to P(S_l ≥ 1) maximised over l
    small = P.instance_delta(mult, 0.0, theta, 4, 1e-9)
    ref = max(1 - float(_tail_mpmath(4, r, theta + n - r, 0) - _tail_mpmath(4, r, theta + n - r, 1)) for r in mult)
    assert small == pytest.approx(ref, rel=ROUNDING)
    # m = 1: one draw; the bad event for r ≥ 2 is S = 1 > (e^ε − 1)(r − 1)
    eps = 0.2
    expect = max(r / (theta + n) if math.expm1(eps) * (r - 1) < 1 else 0.0 for r in mult)
    assert P.instance_delta(mult, 0.0, theta, 1, eps) == pytest.approx(expect, rel=ROUNDING)


def test_scalar_in_scalar_out_and_array_in_array_out():
    assert isinstance(P.instance_delta([1, 2], 0.0, 1.0, 3, 1.0), float)
    assert isinstance(P.global_delta(10, 1.0, 3, 1.0), float)
    out = P.tight_instance_delta([1, 2], 1.0, 3, [1.0, 2.0])
    assert isinstance(out, np.ndarray) and out.shape == (2,)


@pytest.mark.parametrize("call,name", [
    (lambda: P.instance_delta([1, 2], 1.0, 1.0, 3, 1.0), "sigma"),
    (lambda: P.instance_delta([1, 2], 1.5, 1.0, 3, 1.0), "sigma"),
    (lambda: P.instance_delta([1, 2], 0.3, -0.3, 3, 1.0), "theta"),
    (lambda: P.instance_delta([1, 2], -0.5, 1.2, 3, 1.0), "theta"),
    (lambda: P.instance_delta([1, 2, 3], -0.5, 1.0, 3, 1.0), "theta"),
    (lambda: P.instance_delta([1, 2], 0.0, 1.0, 0, 1.0), "m"),
    (lambda: P.instance_delta([1, 2], 0.0, 1.0, 3, 0.0), "eps"),
    (lambda: P.instance_delta([1, 2], 0.0, 1.0, 3, [1.0, -1.0]), "eps"),
    (lambda: P.instance_delta([1, 2], 0.0, 1.0, 3, float("nan")), "eps"),
    (lambda: P.instance_delta([], 0.0, 1.0, 3, 1.0), "multiplicities"),
    (lambda: P.instance_delta([0, 2], 0.0, 1.0, 3, 1.0), "multiplicities"),
    (lambda: P.tight_instance_delta([1, 2], 0.0, 3, 1.0), "theta"),
    (lambda: P.global_delta(0, 1.0, 3, 1.0), "n"),
    (lambda: P.global_delta(10, 1.0, 2.5, 1.0), "m"),
    (lambda: P.max_synthetic_size(10, 1.0, 1.0, 0.0), "delta"),
    (lambda: P.max_synthetic_size(10, 1.0, 1.0, 1.0), "delta"),
    (lambda: P.max_synthetic_size(10, 1.0, -1.0, 0.1), "eps"),
    (lambda: P.singleton_limit(10, 1.0, 1.5), "delta"),
    (lambda: P.monte_carlo_delta([1, 2], 0.0, 1.0, 3, 1.0, rng=np.random.default_rng(0)), "sigma"),
    (lambda: P.monte_carlo_delta([1, 2], 0.5, 1.0, 3, 1.0, rng=np.random.RandomState(0)), "rng"),
    (lambda: P.ReleaseSpec(sigma=0.0, theta=1.0, m=0, n=5), "m"),
])
def test_invalid_parameters_raise_value_error_naming_them(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 400), theta=st.floats(0.05, 20), m=st.integers(1, 150), eps=st.floats(0.02, 6))
def test_global_delta_grows_with_m_as_the_bisection_assumes(n, theta, m, eps):
    assert P.global_delta(n, theta, m, eps) <= P.global_delta(n, theta, m + 1, eps)


@settings(max_examples=40, deadline=None)
@given(mult=st.lists(st.integers(1, 30), min_size=1, max_size=12), theta=st.floats(0.05, 20),
       m=st.integers(1, 150), eps=st.floats(0.02, 6))
def test_instance_curves_grow_with_m_and_are_ordered(mult, theta, m, eps):
    a = P.instance_delta(mult, 0.0, theta, m, eps)
    assert a <= P.instance_delta(mult, 0.0, theta, m + 1, eps)
    assert P.tight_instance_delta(mult, theta, m, eps) <= a
    # instance and global take different floating-point routes to the same tails
    assert a <= P.global_delta(sum(mult), theta, m, eps) * (1 + 1e-9)


def _row_starts(n, eps):
    """r = 2..n and their first bad counts ⌊(e^ε − 1)(r − 1)⌋ + 1 in 50-digit arithmetic."""
    c = mpmath.expm1(mpmath.mpf(eps))
    r = np.arange(2, n + 1, dtype=float)
    return r, np.array([float(mpmath.floor(c * (x - 1)) + 1) for x in r])


def _global_brute_force(n, theta, m, eps, rows=None):
    """max over every r = 1..n of T_r(ε) from core.privacy.betabinom's tails, with their error
    bounds: a (lower, upper) bracket of the exact δ*, independent of the candidate search."""
    single = m / (m + theta + n - 1)
    lo = hi = single
    r, s0 = rows if rows is not None else _row_starts(n, eps)
    live = s0 <= m
    if live.any():
        log_t, rel = betabinom.log_tail(m, r[live], theta + (n - r[live]), s0[live])
        j = np.argmax(log_t)
        lo = max(lo, math.exp(log_t[j]) * (1 - rel[j]) * (1 - 1e-13))
        hi = max(hi, float(np.max(np.exp(log_t) * (1 + rel))) * (1 + 1e-13))
    return lo, hi


@contextlib.contextmanager
def _search_constants(tiny: bool):
    """Shrink the thresholds of the global search so that small cases take every path of
    the branch and bound (splits by 16 and by 4, intervals without exact tails, the
    bracketed m* loop) instead of the shortcuts for few rows."""
    names = {"_DIRECT_ROWS": 1, "_EXACT_WIDE": 2, "_VALUE_ROWS": 1, "_FINE_WIDTH": 20, "_DIRECT_SIZE_ROWS": 0}
    saved = {k: getattr(global_accounting, k) for k in names}
    if tiny:
        for k, v in names.items():
            setattr(global_accounting, k, v)
    try:
        yield
    finally:
        for k, v in saved.items():
            setattr(global_accounting, k, v)


@pytest.mark.parametrize("tiny", [False, True])
@settings(max_examples=150, deadline=None, derandomize=True)
@given(n=st.integers(1, 1500), theta=st.floats(0.01, 1e5), m=st.integers(1, 3000),
       eps=st.floats(1e-3, 30.0), where=st.floats(-3.0, 3.0))
def test_branch_and_bound_maximum_and_verdicts_equal_every_row(tiny, n, theta, m, eps, where):
    """The branch and bound over candidate rows (core.privacy.global_accounting._global_search) gives the same
    δ* and the same verdicts as evaluating every r = 1..n (docs/mathematics.md §3.1)."""
    with _search_constants(tiny):
        _check_against_every_row(n, theta, m, eps, where)


def _check_against_every_row(n, theta, m, eps, where):
    lo, hi = _global_brute_force(n, theta, m, eps)
    got = P.global_delta(n, theta, m, eps)
    assert lo <= got <= hi * (1 + 2e-12)
    # a target on either side of δ*, outside the error band: the verdict is known
    target = min(0.999, lo * math.exp(where)) if where < 0 else min(0.999, hi * math.exp(where))
    if target > 0 and not lo <= target <= hi * (1 + 1e-9):
        assert P.global_delta_at_most(n, theta, m, eps, float(target)) is bool(target >= hi)


@pytest.mark.parametrize("tiny", [False, True])
@settings(max_examples=50, deadline=None, derandomize=True)
@given(n=st.integers(1, 60), theta=st.floats(0.01, 100.0), eps=st.floats(1e-3, 12.0),
       delta=st.floats(1e-4, 0.999999), cap=st.integers(1, 250))
def test_max_synthetic_size_equals_a_scan_over_every_m(tiny, n, theta, eps, delta, cap):
    """m* of the bracketed search equals the largest m found by scanning m = 1..cap with δ*
    from every row (skipped when a δ*(m) lies inside the float error band of δ)."""
    best, rows = 0, _row_starts(n, eps)
    for m in range(1, cap + 1):
        lo, hi = _global_brute_force(n, theta, m, eps, rows)
        if lo <= delta <= hi * (1 + 1e-9):
            return                       # borderline: the exact verdict needs mpmath
        if hi > delta:
            break
        best = m
    with _search_constants(tiny):
        assert P.max_synthetic_size(n, theta, eps, delta, m_cap=cap) == best


def test_agency_scale_accounting_does_not_hang():
    """n = 10^8: max_synthetic_size never walks the 10^7 first bad counts. Hang guard only:
    the speed target (2 s for these six calls) is in benchmarks/bench_privacy.py."""
    import time

    start = time.perf_counter()
    for eps in (0.05, 0.1, 0.5, 1.0, 2.0, 5.0):
        assert P.max_synthetic_size(10**8, 2.0, eps, 1e-3) >= 1
    assert time.perf_counter() - start < 20.0


# ------------------------------------------------------- one distinct value, σ ∈ (0, 1)
def _enumerated_with_singular(mult, sigma, theta, m, eps):
    """δ_x(ε) by enumeration, ε = ∞ included (then only outputs impossible under y count)."""
    _, px, pys = enumerate_outputs(mult, sigma, theta, m)
    out = np.zeros(len(eps))
    for py in pys.values():
        for j, e in enumerate(eps):
            bad = (py == 0) & (px > 0) if math.isinf(e) else px > math.exp(e) * py
            out[j] = max(out[j], px[bad].sum())
    return out


@pytest.mark.parametrize("mult,sigma,theta,m", [
    ([2], 0.3, 1.0, 4), ([3], 0.5, 0.2, 4), ([3], 0.8, -0.5, 3), ([4], 0.25, 3.0, 4), ([5], 0.6, 1.0, 3),
    ([1], 0.3, 1.0, 4), ([1], 0.7, -0.5, 3),
])
def test_monte_carlo_with_a_single_distinct_value_matches_enumeration(mult, sigma, theta, m):
    """k = 1: the only neighbours replace a record by a new value (and, for n_1 = 1, every
    output with S_1 ≥ 1 is singular). This used to raise on the empty list of old targets."""
    eps = np.array([0.05, 0.3, 0.8, 1.5, 3.0, np.inf])
    exact = _enumerated_with_singular(mult, sigma, theta, m, eps)
    mc = P.monte_carlo_delta(mult, sigma, theta, m, eps, n_mc=20000, rng=np.random.default_rng(17),
                             confidence=0.999)
    assert mc.n_types == 1 and all(t.endswith("-> new") for t in mc.worst_type)
    assert np.all(exact <= mc.upper + 1e-12)
    assert np.all(np.abs(mc.estimate - exact) <= 5 * np.sqrt(exact * (1 - exact) / mc.n_mc) + 5 / mc.n_mc)
    full = P.monte_carlo_delta(mult, sigma, theta, m, eps, n_mc=20000, rng=np.random.default_rng(17),
                               confidence=0.999, prune=False)
    np.testing.assert_array_equal(full.estimate, mc.estimate)
    # the public entry points, scalar and array ε
    assert isinstance(P.instance_delta(mult, sigma, theta, m, 1.0, n_mc=2000, seed=1), float)
    assert P.instance_delta(mult, sigma, theta, m, eps, n_mc=2000, seed=1).shape == eps.shape


# ------------------------------------------------------------ ε near and beyond overflow
HUGE_EPS = [700.0, 705.0, 708.5, 709.0, 709.5, 709.78, 709.79, 709.8, 710.0, 1e3, 1e308, np.inf]


@pytest.mark.parametrize("n,theta,m", [(6, 2.0, 5), (100, 2.0, 50), (10**6, 2.0, 1000), (10**12, 0.5, 10**8),
                                       (2, 1e300, 7)])
def test_global_accounting_at_eps_near_and_beyond_exp_overflow(n, theta, m):
    """e^ε − 1 overflows near ε = 709.78; every r ≥ 2 has its first bad count above m long
    before (ε ≥ log(1 + m)), so δ* is the singleton term, exactly, at every such ε."""
    exact = Fraction(m) / (m + Fraction(theta) + n - 1)
    eps = np.array(HUGE_EPS)
    got = P.global_delta(n, theta, m, eps)
    assert got.shape == eps.shape
    for value in got:
        assert Fraction(float(value)) >= exact and float(value) <= float(exact) * (1 + 1e-14)
    for e in HUGE_EPS:
        assert P.global_delta(n, theta, m, e) == got[HUGE_EPS.index(e)]
        for delta in (float(exact) * (1 - 1e-9), min(float(exact) * (1 + 1e-9), 0.999)):
            assert P.global_delta_at_most(n, theta, m, e, delta) is (Fraction(delta) >= exact)
    grid = eps.reshape(3, 4)
    np.testing.assert_array_equal(P.global_delta(n, theta, m, grid), got.reshape(3, 4))
    np.testing.assert_array_equal(P.global_delta_simple_bound(n, theta, m, grid).shape, (3, 4))


@pytest.mark.parametrize("n,theta,delta", [(6, 2.0, 0.5), (100, 2.0, 0.3), (10**6, 2.0, 1e-3), (10**12, 2.0, 0.999999)])
def test_max_synthetic_size_at_huge_eps_is_the_singleton_limit(n, theta, delta):
    m_sing = P.singleton_limit(n, theta, delta)
    cap = 10**6
    for e in HUGE_EPS:
        assert P.max_synthetic_size(n, theta, e, delta, m_cap=cap) == min(m_sing, cap)
    curve = P.synthetic_size_curve(n, theta, np.array(HUGE_EPS), delta, m_cap=cap)
    np.testing.assert_array_equal(curve, min(m_sing, cap))


@pytest.mark.parametrize("eps", [[1.0], np.array([1.0]), np.array(1.0), 1.0, np.array([[0.5], [709.0]]),
                                 [709.0], [np.inf]])
def test_size_curve_and_delta_accept_any_eps_shape(eps):
    """One-element, 0-d and 2-D ε arrays: each value as the scalar call gives it, in ε's shape."""
    n, theta, delta, mult = 60, 2.0, 0.2, [1, 2, 3, 4, 5, 5, 40]
    values = np.atleast_1d(np.asarray(eps, dtype=float))
    shape = np.shape(eps) if np.ndim(eps) else (1,)
    glob = P.synthetic_size_curve(n, theta, eps, delta)
    inst = P.synthetic_size_curve(n, theta, eps, delta, multiplicities=mult)
    assert glob.shape == inst.shape == shape and glob.dtype == np.int64
    np.testing.assert_array_equal(glob.ravel(), [P.max_synthetic_size(n, theta, float(e), delta, m_cap=10**6)
                                                 for e in values.ravel()])
    np.testing.assert_array_equal(inst.ravel(), [P.max_instance_synthetic_size(mult, theta, float(e), delta)
                                                 for e in values.ravel()])
    for fn in (lambda e: P.global_delta(n, theta, 20, e), lambda e: P.instance_delta(mult, 0.0, theta, 20, e),
               lambda e: P.tight_instance_delta(mult, theta, 20, e),
               lambda e: P.instance_delta(mult, -0.5, 5.0, 20, e)):
        out = fn(eps)
        if np.ndim(eps) == 0:
            assert isinstance(out, float)
        else:
            assert out.shape == np.shape(eps)
            np.testing.assert_array_equal(out.ravel(), [fn(float(e)) for e in values.ravel()])


@pytest.mark.parametrize("call,name", [
    (lambda: P.synthetic_size_curve(np.array([60]), 2.0, [1.0], 0.2), "n"),
    (lambda: P.synthetic_size_curve(60, np.array([2.0]), [1.0], 0.2), "theta"),
    (lambda: P.synthetic_size_curve(60, 2.0, [1.0], np.array([0.2])), "delta"),
    (lambda: P.synthetic_size_curve(60, 2.0, [], 0.2), "eps"),
    (lambda: P.synthetic_size_curve(60, 2.0, [[1.0, -1.0]], 0.2), "eps"),
    (lambda: P.max_synthetic_size(60, 2.0, [1.0], 0.2), "eps"),
    (lambda: P.global_delta_at_most(60, 2.0, 5, np.array([[1.0]]), 0.2), "eps"),
    (lambda: P.max_synthetic_size(10**13, 2.0, 1.0, 0.2), "n"),
    (lambda: P.singleton_limit(10, 1e301, 0.5), "theta"),
])
def test_size_functions_reject_bad_input_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# ------------------------------------------------------------- δ close to 1, extremes
def _check_max_synthetic_size_at(n, theta, eps, delta, guard):
    import time

    start = time.perf_counter()
    cap = 10**7
    m_star = P.max_synthetic_size(n, theta, eps, delta, m_cap=cap)
    assert time.perf_counter() - start < guard
    assert isinstance(m_star, int) and 0 <= m_star <= min(cap, P.singleton_limit(n, theta, delta))
    if m_star >= 1:
        assert P.global_delta_at_most(n, theta, m_star, eps, delta) is True
    if m_star < min(cap, P.singleton_limit(n, theta, delta)):
        assert P.global_delta_at_most(n, theta, m_star + 1, eps, delta) is False
    return m_star


@pytest.mark.parametrize("n,theta,eps,delta", [
    (13501, 2.0, 2.5, 0.999999), (13501, 0.001, 2.5, 0.999999), (10**6, 0.001, 0.1, 0.999999),
    (10**9, 2.0, 1e-3, 0.999999), (10**12, 2.0, 1e-12, 0.999999), (10**6, 1e6, 0.1, 0.999999),
    (100, 1e-3, 1e-12, 0.999999), (10**12, 1e300, 1.0, 0.5), (2, 1e6, 30.0, 0.999999),
])
def test_max_synthetic_size_at_extreme_parameters_is_exact_and_does_not_hang(n, theta, eps, delta):
    """Each of these took over 30 s (or raised) before the branch-and-bound search. The verdict
    is checked on both sides of m*; the hang guard is 20 s per call (the speed target, 2 s,
    is in benchmarks/bench_privacy.py)."""
    _check_max_synthetic_size_at(n, theta, eps, delta, guard=20.0)


@pytest.mark.slow
@pytest.mark.parametrize("n,theta,eps,delta,expected", [
    (100, 2.0, 7.5, 0.999999, 211_223), (300, 2.0, 10.0, 0.999999, None),
])
def test_max_synthetic_size_of_a_release_that_dwarfs_the_data(n, theta, eps, delta, expected):
    """m* of millions from a few hundred records (m ≫ θ + n: every tail spans ~m/(θ + n)
    terms per decay length). 211 223 is also what the walk over every candidate gave. Hang
    guard 300 s (the target, 30 s per call, is in benchmarks/bench_privacy.py)."""
    m_star = _check_max_synthetic_size_at(n, theta, eps, delta, guard=300.0)
    if expected is not None:
        assert m_star == expected
