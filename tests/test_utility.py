"""Tests of core.evaluation (SPEC §5): W1 against scipy / an independent LP / POT, KDE against
gaussian_kde and a closed form, summaries, bad input."""

from __future__ import annotations

import math
import time

import numpy as np
import ot
import pandas as pd
import pytest
from guards import HANG_GUARD_S
from hypothesis import given, settings, strategies as st
from scipy import optimize, stats

from core.data import UniformBase
from core.mechanisms import pypp_release

from core.evaluation import (
    batched_wasserstein1,
    W1Distance,
    binned_kde_runs,
    column_summary,
    joint_w1_runs,
    kde_curves,
    kde_grid,
    kde_l2,
    kde_l2_runs,
    kde_on_grid,
    random_directions,
    repeated_quantiles,
    scott_bandwidth,
    sliced_wasserstein1_runs,
    summary_runs,
    summary_table,
    wasserstein1,
    wasserstein1_runs,
)


def _lp_w1(a, b, wa, wb):
    """W1 as the transport linear program, solved by scipy's HiGHS (independent of POT)."""
    cost = np.linalg.norm(a[:, None, :] - b[None, :, :], axis=2)
    na, nb = cost.shape
    rows = np.zeros((na + nb, na * nb))
    for i in range(na):
        rows[i, i * nb:(i + 1) * nb] = 1
    for j in range(nb):
        rows[na + j, j::nb] = 1
    res = optimize.linprog(cost.ravel(), A_eq=rows, b_eq=np.concatenate([wa, wb]), bounds=(0, None),
                           method="highs")
    assert res.status == 0
    return res.fun


# ------------------------------------------------------------------ W1
def test_wasserstein1_one_column_matches_scipy():
    rng = np.random.default_rng(0)
    for _ in range(5):
        a = np.round(rng.normal(size=rng.integers(1, 300)), 1)
        b = rng.exponential(size=rng.integers(1, 300))
        wa = rng.random(a.size)
        w = wasserstein1(a, b)
        assert isinstance(w, float) and w.method == "exact-1d" and w.label == "W1 (exact)"
        assert w == pytest.approx(stats.wasserstein_distance(a, b), rel=1e-9, abs=1e-12)
        assert wasserstein1(a, b, a_weights=wa) == pytest.approx(stats.wasserstein_distance(a, b, wa), rel=1e-9)
        assert wasserstein1(a[:, None], b[:, None]) == pytest.approx(float(w), rel=1e-12)


def test_wasserstein1_multi_column_matches_lp_and_emd():
    rng = np.random.default_rng(1)
    for d in (2, 3):
        a = np.round(rng.random((12, d)), 1)          # rounding creates duplicate rows
        b = np.round(rng.random((9, d)) * 1.3, 1)
        wa, wb = rng.random(12), rng.random(9)
        w = wasserstein1(a, b, wa, wb)
        assert w.method == "exact-emd"
        lp = _lp_w1(a, b, wa / wa.sum(), wb / wb.sum())
        raw = ot.emd2(wa / wa.sum(), wb / wb.sum(), np.linalg.norm(a[:, None] - b[None], axis=2))
        assert w == pytest.approx(lp, rel=1e-8, abs=1e-12)
        assert w == pytest.approx(raw, rel=1e-10, abs=1e-14)
    # a constant second column leaves the 1-D distance unchanged
    x, y = rng.random(40), rng.random(30)
    two = wasserstein1(np.column_stack([x, np.zeros(40)]), np.column_stack([y, np.zeros(30)]))
    assert two == pytest.approx(stats.wasserstein_distance(x, y), rel=1e-9)


def test_wasserstein1_switches_to_sliced_beyond_the_budget_and_says_so():
    rng = np.random.default_rng(2)
    a, b = rng.random((200, 2)), rng.random((150, 2)) ** 2
    exact = wasserstein1(a, b)
    assert exact.method == "exact-emd"
    sliced = wasserstein1(a, b, max_cost_bytes=1000, n_projections=64, rng=np.random.default_rng(5))
    assert sliced.method == "sliced" and sliced.n_projections == 64
    assert "sliced" in sliced.label and "64" in sliced.label
    # Each projection is 1-Lipschitz, so the sliced W1 never exceeds the exact one.
    assert 0 < sliced <= exact
    again = wasserstein1(a, b, max_cost_bytes=1000, n_projections=64, rng=np.random.default_rng(5))
    assert float(again) == float(sliced)
    pot = ot.sliced_wasserstein_distance(a, b, n_projections=64, p=1, seed=sliced.seed)
    assert sliced == pytest.approx(pot, rel=1e-12)
    # without a generator the directions are fixed (deterministic)
    assert float(wasserstein1(a, b, max_cost_bytes=1000)) == float(wasserstein1(a, b, max_cost_bytes=1000))


def test_wasserstein1_identical_and_shifted():
    rng = np.random.default_rng(3)
    a = rng.random((50, 2))
    assert wasserstein1(a, a) == pytest.approx(0.0, abs=1e-12)
    shift = np.array([0.3, 0.4])
    assert wasserstein1(a, a + shift) == pytest.approx(0.5, rel=1e-9)


def test_wasserstein1_runs_matches_scipy_row_by_row():
    rng = np.random.default_rng(4)
    cases = [
        (np.round(rng.beta(2, 5, 5000), 3), None),       # many ties
        (rng.normal(1e5, 3e4, 3000), None),              # large offset
        (rng.random(800), rng.random(800)),              # weighted reference
        (np.array([0.25]), None),                        # a single atom
    ]
    for ref, w in cases:
        z = rng.random((7, 333)) * (np.ptp(ref) + 1) + ref.min()
        got = wasserstein1_runs(z, ref, w)
        want = [stats.wasserstein_distance(ref, row, w) for row in z]
        assert np.allclose(got, want, rtol=1e-10, atol=1e-12)
    assert wasserstein1_runs(np.array([[0.1, 0.2, 0.3]]), np.array([0.1, 0.2, 0.3]))[0] == pytest.approx(0, abs=1e-15)


def test_sliced_runs_match_pot_with_the_same_directions():
    rng = np.random.default_rng(5)
    ref = rng.random((400, 3))
    z = rng.random((4, 120, 3)) ** 1.5
    proj = random_directions(3, 25, rng)
    assert np.allclose(np.linalg.norm(proj, axis=0), 1.0)
    got = sliced_wasserstein1_runs(z, ref, rng=rng, projections=proj)
    want = [ot.sliced_wasserstein_distance(ref, row, projections=proj, p=1) for row in z]
    assert np.allclose(got, want, rtol=1e-10)


# ------------------------------------------------------------------ KDE
def test_kde_on_grid_is_gaussian_kde():
    rng = np.random.default_rng(6)
    x = rng.normal(size=300)
    g = kde_grid(x)
    assert np.allclose(kde_on_grid(x, g), stats.gaussian_kde(x)(g), rtol=1e-14)
    assert scott_bandwidth(x) == pytest.approx(math.sqrt(stats.gaussian_kde(x).covariance[0, 0]), rel=1e-12)


def test_kde_l2_matches_the_gaussian_closed_form():
    # ∫(f_a − f_b)² for Gaussian KDEs: mean of N(a_i − a_j; 0, 2h_a²) − 2·N(a_i − b_j; 0, h_a² + h_b²) + ...
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=6), rng.normal(0.5, 1.5, size=9)
    ha, hb = scott_bandwidth(a), scott_bandwidth(b)

    def cross(u, v, hu, hv):
        return stats.norm.pdf(u[:, None] - v[None, :], scale=math.sqrt(hu ** 2 + hv ** 2)).mean()

    exact = math.sqrt(cross(a, a, ha, ha) - 2 * cross(a, b, ha, hb) + cross(b, b, hb, hb))
    grid = kde_grid(a, b, size=8001, pad=10.0)
    assert kde_l2(a, b, grid) == pytest.approx(exact, rel=1e-7)
    assert kde_l2(a, a) == 0.0


def test_kde_curves_are_the_kdes_of_each_sample():
    """Binned on a refined grid where it resolves the kernel: within 2e-3 of the peak of the exact KDE."""
    rng = np.random.default_rng(9)
    values, counts = np.unique(np.round(rng.lognormal(3, 1.2, 20_000), 2), return_counts=True)
    samples = [values] + [rng.choice(values, 300) for _ in range(3)] + [np.full(5, 2.0)]
    grid = kde_grid(*samples[:-1], first_counts=counts)
    curves = kde_curves(samples, grid, first_counts=counts)
    exact = [kde_on_grid(values, grid, counts=counts)] + [kde_on_grid(z, grid) for z in samples[1:4]]
    for got, want in zip(curves, exact):
        assert np.max(np.abs(got - want)) < 2e-3 * want.max()
    assert curves[-1] is None   # one distinct value: no KDE
    uneven = np.sort(rng.uniform(0, 60, 50))
    np.testing.assert_array_equal(kde_curves(samples[1:2], uneven)[0], kde_on_grid(samples[1], uneven))


def test_binned_kde_agrees_with_gaussian_kde():
    rng = np.random.default_rng(8)
    x = rng.beta(2, 5, size=5000)
    z = rng.beta(2, 4, size=(6, 2000))
    grid = kde_grid(x, z, size=1024)
    dens = binned_kde_runs(z, grid)
    exact = np.array([stats.gaussian_kde(row)(grid) for row in z])
    assert np.max(np.abs(dens - exact)) < 1e-3 * exact.max()
    fx = binned_kde_runs(x[None, :], grid)[0]
    got = kde_l2_runs(z, fx, grid)
    want = [kde_l2(x, row, grid) for row in z]
    assert np.allclose(got, want, rtol=1e-3)
    # a row with a single distinct value has no KDE
    z[0] = 0.5
    assert np.isnan(kde_l2_runs(z, fx, grid)[0]) and np.all(np.isfinite(kde_l2_runs(z, fx, grid)[1:]))


# ------------------------------------------------------------------ summaries
def test_column_summary_and_runs():
    rng = np.random.default_rng(9)
    x = rng.random(101)
    s = column_summary(x)
    assert s == pytest.approx({"mean": x.mean(), "sd": x.std(ddof=1), "q1": np.quantile(x, 0.25),
                               "median": np.median(x), "q3": np.quantile(x, 0.75)})
    z = rng.random((3, 50))
    runs = summary_runs(z)
    for r in range(3):
        assert {k: v[r] for k, v in runs.items()} == pytest.approx(column_summary(z[r]))


def test_summary_table():
    rng = np.random.default_rng(10)
    data = pd.DataFrame({"income": rng.random(500), "age": rng.random(500)})
    releases = {"A": rng.random((200, 2)), "B": pd.DataFrame({"age": rng.random(300), "income": rng.random(300)})}
    table = summary_table(data, releases)
    assert list(table.columns) == ["mechanism", "column", "mean", "sd", "q1", "median", "q3", "W1", "KDE_L2"]
    assert len(table) == 2 * 3
    conf = table[(table.mechanism == "confidential") & (table.column == "income")].iloc[0]
    assert conf["mean"] == pytest.approx(data["income"].mean()) and conf["W1"] == 0 and conf["KDE_L2"] == 0
    b_age = table[(table.mechanism == "B") & (table.column == "age")].iloc[0]
    assert b_age["W1"] == pytest.approx(stats.wasserstein_distance(data["age"], releases["B"]["age"]))
    assert b_age["KDE_L2"] == pytest.approx(kde_l2(data["age"], releases["B"]["age"],
                                                   kde_grid(data["age"], releases["A"][:, 1],
                                                            releases["B"]["age"])), rel=1e-12)
    # 1-D array input
    t1 = summary_table(rng.random(50), {"x": rng.random(20)}, columns=["v"])
    assert list(t1.column.unique()) == ["v"]


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("call,name", [
    (lambda: wasserstein1([], [1.0]), "a"),
    (lambda: wasserstein1([1.0, np.nan], [1.0]), "a"),
    (lambda: wasserstein1([1.0], ["x"]), "b"),
    (lambda: wasserstein1(np.ones((3, 2)), np.ones((3, 3))), "columns"),
    (lambda: wasserstein1([1.0, 2.0], [1.0], a_weights=[1.0]), "a_weights"),
    (lambda: wasserstein1([1.0, 2.0], [1.0], a_weights=[-1.0, 2.0]), "a_weights"),
    (lambda: wasserstein1([1.0], [1.0], max_cost_bytes=0), "max_cost_bytes"),
    (lambda: wasserstein1_runs(np.ones(3), [1.0]), "samples"),
    (lambda: kde_on_grid([0.3, 0.3, 0.3], np.linspace(0, 1, 5)), "single distinct value"),
    (lambda: kde_on_grid([0.3], np.linspace(0, 1, 5)), "values"),
    (lambda: kde_l2([], [0.1, 0.2]), "a"),
    (lambda: binned_kde_runs(np.ones((2, 5)), np.array([0.0, 0.1, 0.5])), "grid"),
    (lambda: summary_table(pd.DataFrame({"a": ["x", "y"]}), {}), "not numeric"),
    (lambda: summary_table(np.ones((4, 2)), {"r": np.ones((4, 3))}), "columns"),
    (lambda: summary_table(pd.DataFrame({"a": [0.1, 0.2]}), {}, columns=["b"]), "not in the data"),
])
def test_bad_input_raises_value_error_naming_it(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_w1distance_behaves_as_a_float():
    w = W1Distance(0.25, "exact-emd")
    assert w + 1 == 1.25 and float(w) == 0.25 and "exact-emd" in repr(w)


# ---- batched 1-D W1 (used by the informativity experiment for many runs at once)
def test_batched_wasserstein1_agrees_with_pot_per_group():
    rng = np.random.default_rng(0)
    groups = 25
    sizes_a, sizes_b = rng.integers(1, 40, groups), rng.integers(1, 40, groups)
    ga, gb = np.repeat(np.arange(groups), sizes_a), np.repeat(np.arange(groups), sizes_b)
    # ties within and across the two samples, and weights
    a = np.round(rng.normal(size=ga.size), 1)
    b = np.round(rng.normal(0.3, 1.2, size=gb.size), 1)
    wa, wb = rng.random(ga.size), rng.random(gb.size)
    perm_a, perm_b = rng.permutation(ga.size), rng.permutation(gb.size)  # groups need not be contiguous
    got = batched_wasserstein1(a[perm_a], ga[perm_a], b[perm_b], gb[perm_b], groups,
                                 a_weights=wa[perm_a], b_weights=wb[perm_b])
    want = [wasserstein1(a[ga == r], b[gb == r], wa[ga == r], wb[gb == r]) for r in range(groups)]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    unweighted = batched_wasserstein1(a, ga, b, gb, groups)
    np.testing.assert_allclose(unweighted, [ot.wasserstein_1d(a[ga == r], b[gb == r]) for r in range(groups)],
                               rtol=1e-12, atol=1e-14)


def test_batched_wasserstein1_validates():
    with pytest.raises(ValueError, match="group 1"):
        batched_wasserstein1([0.0, 1.0], [0, 0], [0.5, 0.2], [0, 1], 2)
    with pytest.raises(ValueError, match="a_groups"):
        batched_wasserstein1([0.0], [3], [0.5], [0], 2)
    with pytest.raises(ValueError, match="b_weights"):
        batched_wasserstein1([0.0], [0], [0.5], [0], 1, b_weights=[-1.0])


# ------------------------------------------------------- extreme inputs (issue 9)
def test_kde_on_extreme_columns_gives_a_clear_error_not_a_scipy_traceback():
    from core import evaluation as U

    for values in ([-1e308, 1e308, 0.0], [1e141, 0.0, 1.0]):
        for call in (lambda v=values: U.kde_grid(v), lambda v=values: U.scott_bandwidth(v),
                     lambda v=values: U.kde_l2(v, [0.0, 1.0]), lambda v=values: U.wasserstein1(v, [0.0])):
            with pytest.raises(ValueError, match=r"within ±1e\+140"):
                call()
    tiny = [0.0, 1e-308, 2e-308, 3e-308]
    with pytest.raises(ValueError, match="too concentrated for a KDE"):
        U.kde_on_grid(tiny, np.linspace(0.0, 3e-308, 5))
    grid = U.kde_grid(tiny, [0.0, 1.0])  # the concentrated sample only contributes its range
    assert np.all(np.isfinite(grid))
    with pytest.raises(ValueError, match="single distinct value"):
        U.kde_on_grid([2.0, 2.0], grid)
    with pytest.raises(ValueError, match="too concentrated"):
        U.kde_on_grid([0.0, 1.0, 2.0], grid, weights=[1.0, 0.0, 0.0])


def test_summary_table_kde_l2_of_samples_without_a_density():
    """A single distinct value (Scott bandwidth 0) is a point mass: KDE-L2 is the h → 0 limit,
    +∞ against a density or another point mass and 0 against the same one; a bandwidth below
    KDE_MIN_BANDWIDTH is taken at the same limit. Never NaN; W1 and the summaries stay finite."""
    from core import evaluation as U

    x = np.array([0.1, 0.4, 0.5, 0.9])
    table = U.summary_table(x, {"one value": np.array([0.3, 0.3]), "one record": np.array([0.3]),
                                "spread": np.array([0.2, 0.6, 0.7]),
                                "subnormal": np.array([0.0, 1e-300, 2e-300])})
    by = table.set_index("mechanism")["KDE_L2"]
    assert by["one value"] == by["one record"] == by["subnormal"] == math.inf
    assert math.isfinite(by["spread"]) and by["spread"] > 0
    assert not table["KDE_L2"].isna().any()
    assert np.all(np.isfinite(table[["mean", "sd", "q1", "median", "q3", "W1"]].to_numpy(float)))
    # a constant column of the data: the same point mass (any size) is at 0, anything else at +∞
    constant = U.summary_table(np.array([2.0, 2.0, 2.0]), {"z": np.array([1.0, 3.0]), "same": np.array([2.0]),
                                                          "same, more": np.full(7, 2.0), "other": np.array([3.0, 3.0])})
    by = constant.set_index("mechanism")["KDE_L2"]
    assert by["confidential"] == 0.0 and by["same"] == 0.0 and by["same, more"] == 0.0
    assert by["z"] == by["other"] == math.inf
    assert constant.set_index("mechanism")["W1"]["z"] == pytest.approx(1.0)
    # the same through a frequency table (counts=)
    counted = U.summary_table(np.array([2.0]), {"same": np.array([2.0, 2.0]), "z": np.array([1.0, 3.0])}, counts=[5])
    assert list(counted["KDE_L2"]) == [0.0, 0.0, math.inf]
    # too concentrated for double precision: identical samples (values and multiplicities) at 0
    tiny = np.array([0.0, 1e-300, 2e-300])
    both = U.summary_table(tiny, {"same": tiny[::-1].copy(), "other": np.array([0.0, 1e-300]),
                                  "density": np.array([0.0, 0.5, 1.0])})
    assert list(both["KDE_L2"]) == [0.0, 0.0, math.inf, math.inf]
    # the finite values grow without bound as the release's spread goes to 0 (on a grid fine
    # enough to resolve its kernels): the +∞ above is their limit
    spreads = [1e-1, 1e-2, 1e-3]
    grown = [U.summary_table(x, {"z": 0.5 + s * np.array([-1.0, 0.0, 1.0])}, grid_size=1 << 16)["KDE_L2"].iloc[1]
             for s in spreads]
    assert grown[0] < grown[1] < grown[2] and grown[2] > 5 * grown[0]


def test_kde_l2_runs_validates_and_marks_rows_without_a_kde():
    from core import evaluation as U

    grid = np.linspace(-1, 2, 64)
    ref = U.binned_kde_runs(np.array([[0.1, 0.5, 0.9]]), grid)[0]
    out = U.kde_l2_runs(np.array([[0.2, 0.4, 0.8], [0.5, 0.5, 0.5]]), ref, grid)
    assert math.isfinite(out[0]) and math.isnan(out[1])
    for bad in ([0.2, 0.4], [[0.2, math.nan]], [[1e300, 0.0]]):
        with pytest.raises(ValueError, match="samples"):
            U.kde_l2_runs(bad, ref, grid)


def test_sliced_w1_refuses_unbounded_work_and_bad_directions():
    from core import evaluation as U

    rng = np.random.default_rng(0)
    z, x = rng.random((2, 5, 2)), rng.random((6, 2))
    with pytest.raises(ValueError, match="n_projections must be an integer in"):
        U.sliced_wasserstein1_runs(z, x, n_projections=10**9, rng=rng)
    with pytest.raises(ValueError, match="MAX_SLICED_WORK"):
        U.sliced_wasserstein1_runs(np.zeros((2000, 1000, 2)), x, n_projections=U.MAX_PROJECTIONS, rng=rng)
    with pytest.raises(ValueError, match="norm at most 1"):
        U.sliced_wasserstein1_runs(z, x, rng=rng, projections=np.full((2, 3), 5.0))
    with pytest.raises(ValueError, match="projections must be finite"):
        U.sliced_wasserstein1_runs(z, x, rng=rng, projections=np.full((2, 3), math.nan))
    with pytest.raises(ValueError, match="samples must be finite"):
        U.sliced_wasserstein1_runs(np.full((1, 3, 2), math.nan), x, rng=rng)


# ------------------------------------------------------------------ joint W1 of many runs (issue 14 §4)
def _pypp_runs(x, runs, m, theta, rng):
    d = x.shape[1]
    counts = np.ones(x.shape[0], dtype=int)
    return np.stack([pypp_release(x, counts, 0.0, theta, m, rng, base=[UniformBase(0.0, 1.0)] * d).values
                     for _ in range(runs)])


def test_joint_w1_exact_equals_full_linear_program():
    rng = np.random.default_rng(5)
    x = np.round(rng.random((120, 3)), 1)          # with ties, so multiplicities > 1 occur
    z = _pypp_runs(x, 6, 90, 3.0, rng)
    values, method = joint_w1_runs(z, x, rng=rng)
    assert method == "exact-emd"
    ref = [float(wasserstein1(x, zr)) for zr in z]
    assert np.allclose(values, ref, rtol=1e-9, atol=1e-12)
    same, _ = joint_w1_runs(x[None, :, :], x, rng=rng)
    assert same[0] == 0.0


def test_joint_w1_falls_back_to_sliced_with_label():
    rng = np.random.default_rng(6)
    x = rng.random((50, 2))
    z = rng.random((4, 40, 2))
    values, method = joint_w1_runs(z, x, max_exact_entries=0, n_projections=30, rng=np.random.default_rng(1))
    assert method == "sliced (30 directions)"
    ref = sliced_wasserstein1_runs(z, x, n_projections=30, rng=np.random.default_rng(1))
    assert np.allclose(values, ref)
    with pytest.raises(ValueError, match="samples"):
        joint_w1_runs(rng.random((2, 5, 3)), x, rng=rng)


@pytest.mark.slow
def test_joint_w1_hundred_runs_all_distinct_exact():
    """100 runs against 1000 all-distinct rows stay on the exact path. Its speed target
    (2 s) is in benchmarks/bench_core.py; here only a hang guard (tests/guards.py)."""
    rng = np.random.default_rng(7)
    x = rng.random((1000, 3))
    z = _pypp_runs(x, 100, 1000, 5.0, rng)
    start = time.perf_counter()
    values, method = joint_w1_runs(z, x, rng=rng)
    elapsed = time.perf_counter() - start
    assert method == "exact-emd"
    assert elapsed <= HANG_GUARD_S, f"joint W1 of 100 runs took {elapsed:.1f} s: hung?"
    assert values[0] == pytest.approx(float(wasserstein1(x, z[0])), rel=1e-9)
    assert values[-1] == pytest.approx(float(wasserstein1(x, z[-1])), rel=1e-9)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.integers(2, 25), st.integers(1, 25))
def test_joint_w1_exact_on_random_small_cases(seed, runs, n, m):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, (n, 2)).astype(float)            # many ties between data and releases
    z = rng.integers(0, 4, (runs, m, 2)).astype(float)
    values, method = joint_w1_runs(z, x, rng=rng)
    assert method == "exact-emd"
    assert np.allclose(values, [float(wasserstein1(x, zr)) for zr in z], rtol=1e-9, atol=1e-12)


def test_joint_w1_memory_budget_and_bad_input():
    rng = np.random.default_rng(8)
    x = rng.random((30, 2))
    z = rng.random((2, 20, 2))
    # 30 × 20 residual entries of 8 bytes exceed 1000 bytes: sliced, and labelled so
    _, method = joint_w1_runs(z, x, max_cost_bytes=1000, n_projections=7, rng=rng)
    assert method == "sliced (7 directions)"
    with pytest.raises(ValueError, match="max_exact_entries"):
        joint_w1_runs(z, x, max_exact_entries=-1, rng=rng)
    with pytest.raises(ValueError, match="n_projections"):
        joint_w1_runs(z, x, n_projections=0, rng=rng)
    # -0.0 and 0.0 are the same point
    values, _ = joint_w1_runs(np.array([[[-0.0, 1.0]]]), np.array([[0.0, 1.0]]), rng=rng)
    assert values[0] == 0.0


def test_quantile_positions_fast_path_equals_binary_search():
    # wasserstein1_runs counts the steps of each slot by comparisons when slots are narrow
    # (n ≈ m) and by binary search otherwise: both must equal scipy.
    rng = np.random.default_rng(9)
    for n, m in ((40, 40), (400, 13), (7, 50)):
        x = np.round(rng.normal(size=n), 1)
        z = np.round(rng.normal(size=(5, m)), 1)
        assert np.allclose(wasserstein1_runs(z, x), [stats.wasserstein_distance(x, zr) for zr in z],
                           rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------ frequency-table (counts) path
def test_column_summary_with_counts_by_hand():
    # values 1 ×3, 5 ×1: n = 4, mean 2, SD² = (3·1 + 9)/3 = 4; numpy positions (n−1)q = .75, 1.5, 2.25
    # of (1, 1, 1, 5): Q1 = 1, median = 1, Q3 = 1 + .25·4 = 2
    s = column_summary([5.0, 1.0], counts=[1, 3])
    assert s == pytest.approx({"mean": 2.0, "sd": 2.0, "q1": 1.0, "median": 1.0, "q3": 2.0})
    assert column_summary([5.0, 1.0], counts=[1, 3]) == pytest.approx(column_summary([1.0, 1.0, 1.0, 5.0]))
    with pytest.raises(ValueError, match="counts"):
        column_summary([1.0, 2.0], counts=[1, 0])


def test_summary_table_with_counts_equals_repeated_rows():
    rng = np.random.default_rng(41)
    atoms = pd.DataFrame({"a": np.round(rng.normal(10, 3, 30), 1), "b": rng.integers(0, 9, 30).astype(float)})
    counts = rng.integers(1, 7, 30)
    rows = atoms.loc[np.repeat(np.arange(30), counts)].reset_index(drop=True)
    release = pd.DataFrame({"a": rng.normal(10, 3, 50), "b": rng.integers(0, 9, 50).astype(float)})
    weighted = summary_table(atoms, {"PYPP": release}, counts=counts)
    repeated = summary_table(rows, {"PYPP": release})
    pd.testing.assert_frame_equal(weighted, repeated, rtol=1e-10, atol=1e-12)
    grid = kde_grid(atoms["a"], release["a"], first_counts=counts)
    assert np.array_equal(grid, kde_grid(rows["a"], release["a"]))
    assert np.allclose(kde_on_grid(atoms["a"], grid, counts=counts), kde_on_grid(rows["a"], grid),
                       rtol=1e-10, atol=1e-14)
    with pytest.raises(ValueError, match="not both"):
        kde_on_grid(atoms["a"], grid, weights=counts, counts=counts)


def test_repeated_quantiles_equal_numpy_on_the_repeated_values():
    rng = np.random.default_rng(42)
    for _ in range(20):
        values = np.sort(np.round(rng.normal(size=12), 1))
        counts = rng.integers(0, 4, 12)          # zero counts: values absent from the sample
        counts[rng.integers(0, 12)] += 1
        probs = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)
        assert repeated_quantiles(values, np.cumsum(counts), probs) == pytest.approx(
            list(np.quantile(np.repeat(values, counts), probs)), rel=1e-12, abs=1e-12)


# ------------------------------------------------------------------ a frequency table as the reference (issue 13)
def _table_and_records(rng, k=60, d=1):
    atoms = rng.random((k, d)) if d > 1 else np.sort(rng.random(k))
    counts = rng.integers(1, 30, k)
    return atoms, counts, np.repeat(atoms, counts, axis=0)


def test_w1_runs_against_a_weighted_table_equal_the_repeated_records():
    from core.evaluation import wasserstein1_runs

    rng = np.random.default_rng(70)
    atoms, counts, records = _table_and_records(rng)
    z = rng.random((8, 45))
    got = wasserstein1_runs(z, atoms, reference_weights=counts)
    # scipy's exact 1-D W1 with the counts as weights, and on the repeated records
    want = [stats.wasserstein_distance(zr, atoms, v_weights=counts) for zr in z]
    assert np.allclose(got, want, rtol=1e-12, atol=1e-15)
    assert np.allclose(got, wasserstein1_runs(z, records), rtol=1e-12, atol=1e-15)


def test_joint_w1_against_a_table_equals_the_repeated_records():
    from scipy.spatial import distance

    from core.evaluation import joint_w1_runs, sliced_wasserstein1_runs

    rng = np.random.default_rng(71)
    atoms = np.round(rng.random((40, 2)), 1)
    atoms = np.unique(atoms, axis=0)
    counts = rng.integers(1, 9, atoms.shape[0])
    records = np.repeat(atoms, counts, axis=0)
    z = np.concatenate([records[rng.integers(0, records.shape[0], (4, 20))], rng.random((4, 10, 2))], axis=1)
    exact, method = joint_w1_runs(z, atoms, reference_counts=counts, rng=np.random.default_rng(1))
    assert method == "exact-emd"
    # the integer residual weights are those of the records: identical values
    assert np.array_equal(exact, joint_w1_runs(z, records, rng=np.random.default_rng(1))[0])
    want = [ot.emd2(counts / counts.sum(), np.full(30, 1 / 30), distance.cdist(atoms, zr)) for zr in z]
    assert np.allclose(exact, want, rtol=1e-9, atol=1e-12)
    # the sliced fallback weights each row by its count (same directions: same values up to rounding)
    sliced, method = joint_w1_runs(z, atoms, reference_counts=counts, max_cost_bytes=8, n_projections=12,
                                   rng=np.random.default_rng(2))
    assert method == "sliced (12 directions)"
    on_records = sliced_wasserstein1_runs(z, records, n_projections=12, rng=np.random.default_rng(2))
    assert np.allclose(sliced, on_records, rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="reference_counts"):
        joint_w1_runs(z, atoms, reference_counts=counts[:-1], rng=np.random.default_rng(1))


def test_binned_kde_and_scott_bandwidth_of_a_table_equal_the_repeated_records():
    from core.evaluation import binned_kde_runs, scott_bandwidth

    rng = np.random.default_rng(72)
    atoms, counts, records = _table_and_records(rng)
    assert scott_bandwidth(atoms, counts) == pytest.approx(scott_bandwidth(records), rel=1e-12)
    grid = kde_grid(records, size=700)
    from_table = binned_kde_runs(atoms[None, :], grid, counts=counts)[0]
    assert np.allclose(from_table, binned_kde_runs(records[None, :], grid)[0], rtol=1e-10, atol=1e-12)
    # one distinct value standing for many records is a table too (its KDE needs a spread)
    with pytest.raises(ValueError, match="bandwidths"):
        binned_kde_runs(np.array([[0.5]]), grid, counts=[10])
    with pytest.raises(ValueError, match="counts"):
        binned_kde_runs(atoms[None, :], grid, counts=counts[:-1])


# ------------------------------------------------------------------ categorical columns: TV and the joint W1
def test_total_variation_runs_equals_the_definition():
    from core.evaluation import total_variation_runs

    rng = np.random.default_rng(17)
    size = 5
    ref = rng.integers(0, size, 40)                 # a frequency table's codes (repeats allowed)
    counts = rng.integers(1, 6, 40)
    samples = rng.integers(0, size + 1, (6, 30))    # code `size`: a new label, absent from the data
    got = total_variation_runs(samples, ref, size, reference_counts=counts)
    p = pd.Series(counts).groupby(ref).sum().reindex(range(size + 1), fill_value=0) / counts.sum()
    for r in range(6):
        q = pd.Series(samples[r]).value_counts().reindex(range(size + 1), fill_value=0) / samples.shape[1]
        assert got[r] == pytest.approx(0.5 * np.abs(p - q).sum(), abs=1e-15)
    # same sample as the data: 0; disjoint: 1
    assert total_variation_runs(np.repeat(ref[None, :], 2, 0), ref, size)[0] == pytest.approx(0.0, abs=1e-15)
    assert total_variation_runs(np.full((1, 3), size), np.zeros(4), size)[0] == 1.0
    with pytest.raises(ValueError, match="codes"):
        total_variation_runs(np.full((1, 3), size + 1), np.zeros(4), size)


def _embedded(rows: np.ndarray, levels) -> np.ndarray:
    """The one-hot embedding of joint_w1_runs, built explicitly: category c at e_c/√2."""
    parts = []
    for j, size in enumerate(levels):
        if size is None:
            parts.append(rows[..., j:j + 1])
        else:
            parts.append(np.eye(size + 1)[rows[..., j].astype(int)] / math.sqrt(2.0))
    return np.concatenate(parts, axis=-1)


def test_joint_w1_with_categorical_columns_equals_emd_on_the_embedding():
    rng = np.random.default_rng(23)
    levels = (None, 3, None)
    k, R, m = 25, 3, 20
    x = np.column_stack([rng.random(k), rng.integers(0, 3, k), rng.random(k)])
    counts = rng.integers(1, 4, k)
    z = np.stack([np.column_stack([rng.random(m), rng.integers(0, 4, m), rng.random(m)]) for _ in range(R)])
    z[0, :5] = x[:5]                                  # some released rows copy data rows
    values, method = joint_w1_runs(z, x, rng=rng, reference_counts=counts, levels=levels)
    assert method == "exact-emd"
    ex = _embedded(x, levels)
    for r in range(R):
        ez = _embedded(z[r], levels)
        cost = np.sqrt(((ex[:, None, :] - ez[None, :, :]) ** 2).sum(-1))
        expected = ot.emd2(counts / counts.sum(), np.full(m, 1 / m), cost, numItermax=10**7)
        assert values[r] == pytest.approx(expected, abs=1e-9)
    # the sliced fallback is the sliced W1 of the same embedding, a lower bound of the exact value
    sliced, method = joint_w1_runs(z, x, rng=np.random.default_rng(0), reference_counts=counts, levels=levels,
                                   max_exact_entries=0, n_projections=400)
    assert method.startswith("sliced") and np.all(sliced <= values + 1e-12) and np.all(sliced > 0)
    directions = random_directions(1 + 4 + 1, 400, np.random.default_rng(0))
    direct = sliced_wasserstein1_runs(_embedded(z, levels), ex, rng=np.random.default_rng(1),
                                      projections=directions, reference_weights=counts)
    np.testing.assert_allclose(sliced, direct, rtol=1e-10)
