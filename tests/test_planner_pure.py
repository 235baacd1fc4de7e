"""The planner's pure ε-DP options (docs/mathematics.md §3.3.1, §3.6): the Dirichlet–multinomial
over public grids and category lists, its m, θ and verdict, its predicted utility against a direct
simulation with ``pypp_release``, the recommendation's preference for pure, and the utility cost."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from core.data import ColumnSpec, PublicGrid, prepare
from core.mechanisms import pypp_release
from core.planning import (
    DEFAULT_ALPHAS,
    GuaranteeTarget,
    PureSearch,
    UtilityTarget,
    default_grid_steps,
    plan_release,
    predict_pure_utility,
    predict_utility,
    public_domain_gaps,
    pure_utility_cost,
)
from core.planning.planner import _setup_pure, _unobserved_codes
from core.privacy import DIRICHLET_MULTINOMIAL, DIRICHLET_PROCESS, ReleaseSpec

KINDS = {"x": "numeric", "y": "numeric", "g": "categorical"}
BOUNDS = {"x": (0.0, 100.0), "y": (0.0, 100.0)}
CATEGORIES = {"g": ("a", "b", "c", "d")}


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(11)
    n = 2000
    return pd.DataFrame({"x": np.round(rng.uniform(0, 100, n), 2), "y": np.round(rng.normal(50, 8, n), 2).clip(0, 100),
                         "g": rng.choice(["a", "b", "c"], n)})


def _search(**kwargs):
    steps = {c: default_grid_steps(c, BOUNDS[c])[:2] for c in ("x", "y")}
    return PureSearch(steps, categories=CATEGORIES, **kwargs)


def test_default_grid_steps_come_from_the_public_bounds_only():
    assert default_grid_steps("x", (0, 100)) == (10.0, 1.0, 0.1)
    assert default_grid_steps("x", (1992, 1998)) == (0.1, 0.01, 0.001)
    assert default_grid_steps("x", (1.0, 1e6), log=True) == (0.2, 0.1, 0.05)
    with pytest.raises(ValueError, match="needs public bounds"):
        default_grid_steps("x", None)
    with pytest.raises(ValueError, match="lo > 0"):
        default_grid_steps("x", (0.0, 10.0), log=True)


def test_public_domain_gaps_name_what_each_column_lacks():
    gaps = public_domain_gaps(KINDS, {"x": (0, 1)}, {})
    assert set(gaps) == {"y", "g"}
    assert "public bounds" in gaps["y"] and "cannot be on a pure path" in gaps["g"]
    assert public_domain_gaps(KINDS, BOUNDS, CATEGORIES) == {}


@pytest.mark.parametrize("releases", [1, 3])
def test_pure_options_take_the_largest_globally_pure_m_and_theta_z_alpha(frame, releases):
    n, eps, m_max = len(frame), 2.5, 400
    plan = plan_release(frame, KINDS, GuaranteeTarget(eps, 1e-3, releases=releases), UtilityTarget(w1=5.0),
                        thetas=(1.0,), runs=3, m_max=m_max, rng=np.random.default_rng(1), bounds=BOUNDS,
                        pure=_search(max_evaluations=50))
    pure = [o for o in plan.options if o.pure]
    admissible = [a for a in DEFAULT_ALPHAS if math.expm1(eps / releases) * a >= 1]   # some m ≥ 1 is pure
    assert len(pure) == 4 * len(admissible) > 0       # 2 × 2 grids × the admissible α
    for o in pure:
        sizes = {c: PublicGrid(*BOUNDS[c], step).size for c, step in o.grid_steps.items()}
        assert o.z == sizes["x"] * sizes["y"] * len(CATEGORIES["g"])
        assert o.theta == o.z * o.alpha
        assert o.m_allowed == DIRICHLET_MULTINOMIAL.largest_m(n, -o.alpha, o.theta, eps, None, releases=releases,
                                                              m_cap=m_max)
        assert o.m == min(o.m_allowed, m_max)
        # m ≤ (e^{ε/k} − 1)·α, and m + 1 is not: the largest pure m
        assert releases * math.log1p(o.m / o.alpha) <= eps < releases * math.log1p((o.m + 1) / o.alpha) or o.m == m_max
        spec = ReleaseSpec(-o.alpha, o.theta, o.m, n, eps=eps, delta=1e-3, releases=releases)
        assert o.verdict == DIRICHLET_MULTINOMIAL.release_guarantee(spec).verdict == "pure"
        assert o.to_dict()["verdict"] == "pure" and "grid step" in o.label
    for o in plan.options:
        if not o.pure:
            spec = ReleaseSpec(0.0, o.theta, o.m, n, eps=eps, delta=1e-3, releases=releases)
            assert o.verdict == DIRICHLET_PROCESS.release_guarantee(spec).verdict
            assert o.m_allowed == DIRICHLET_PROCESS.largest_m(n, 0.0, o.theta, eps, 1e-3, releases=releases,
                                                              m_cap=m_max)


def _direct_w1(frame, specs, alpha, m, runs, seed):
    """W1, mean error and median error of ``runs`` releases drawn with pypp_release on the prepared data."""
    prepared = prepare(frame, specs)
    z = prepared.public_domain
    rng = np.random.default_rng(seed)
    out = {"w1": [], "mean": [], "median": []}
    original = frame["x"].to_numpy(float)
    for _ in range(runs):
        rel = pypp_release(prepared.table.atoms, prepared.table.counts, -alpha, z * alpha, m, rng,
                           base=prepared.bases)
        x = prepared.to_original(rel.values)["x"].to_numpy(float)
        out["w1"].append(stats.wasserstein_distance(x, original))
        out["mean"].append(abs(x.mean() - original.mean()))
        out["median"].append(abs(np.median(x) - np.median(original)))
    return {k: np.array(v) for k, v in out.items()}


@pytest.mark.parametrize("categories, step", [(("a", "b"), 2.0),        # z = 12, mostly observed: free rows listed
                                              (("a", "b") + tuple("cdefghijklmnopqrstuvwxyz"), 0.5)])  # rejection
def test_pure_prediction_matches_a_direct_simulation_with_pypp_release(categories, step):
    """The counts-based prediction has the law of the release pypp_release draws: same mean and
    spread of W1 and of the mean and median errors, on a small case with unobserved rows."""
    rng = np.random.default_rng(5)
    n = 60
    frame = pd.DataFrame({"x": np.round(rng.normal(4.0, 1.5, n), 2), "g": rng.choice(["a", "b"], n)})
    kinds = {"x": "numeric", "g": "categorical"}
    specs = [ColumnSpec("x", bounds=(0.0, 10.0), grid=step), ColumnSpec("g", kind="categorical", categories=categories)]
    alpha, m, runs = 2.0, 25, 600
    direct = _direct_w1(frame, specs, alpha, m, runs, seed=1)
    dom = _setup_pure(frame, kinds, {"x": step}, {"g": categories}, {"x": (0.0, 10.0)}, {})
    assert (dom.free is not None) == (len(categories) == 2)
    predicted = predict_pure_utility(frame, kinds, {"x": step}, alpha=alpha, m=m, runs=runs,
                                     rng=np.random.default_rng(2), bounds={"x": (0.0, 10.0)},
                                     categories={"g": categories})["x"]
    for metric in ("w1", "mean", "median"):
        a, b = direct[metric], predicted[metric]
        se = math.sqrt(a.var(ddof=1) / runs + b.var(ddof=1) / runs)
        assert abs(a.mean() - b.mean()) <= 4.5 * se, (metric, a.mean(), b.mean(), se)
    # the whole law of W1, not only its mean
    assert stats.ks_2samp(direct["w1"], predicted["w1"]).pvalue > 1e-4


def test_unobserved_rows_are_distinct_unobserved_and_uniform():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"x": rng.uniform(0, 10, 40), "g": rng.choice(["a", "b"], 40)})
    kinds = {"x": "numeric", "g": "categorical"}
    for cats, expect_listed in ((("a", "b"), True), (tuple("abcdefghijklmnop"), False)):
        dom = _setup_pure(frame, kinds, {"x": 1.0}, {"g": cats}, {"x": (0.0, 10.0)}, {})
        assert (dom.free is not None) == expect_listed
        free = np.setdiff1d(np.arange(dom.z), dom.codes)
        hits = np.zeros(dom.z, dtype=np.int64)
        size = min(5, free.size)
        for _ in range(1500):
            codes = _unobserved_codes(dom, size, rng)
            assert np.unique(codes).size == size and not np.isin(codes, dom.codes).any()
            hits[codes] += 1
        assert hits[dom.codes].sum() == 0
        assert stats.chisquare(hits[free]).pvalue > 1e-4


def test_recommendation_prefers_a_pure_option_that_meets(frame):
    plan = plan_release(frame, KINDS, GuaranteeTarget(4.0, 0.05, "instance"), UtilityTarget(w1=25.0),
                        thetas=(1.0,), runs=10, rng=np.random.default_rng(4), bounds=BOUNDS,
                        pure=_search(alphas=(5.0, 25.0), max_evaluations=3))
    assert plan.utility_met and plan.recommended is not None
    assert any(o.meets_utility and not o.pure for o in plan.options)   # a σ = 0 setting meets too …
    best = plan.recommended
    assert best.pure and best.verdict == "pure"                         # … but the board prefers pure
    assert best.ratio == min(o.ratio for o in plan.options if o.pure and o.meets_utility)
    assert "pure ε-DP release" in plan.message and "A pure release is preferred" in plan.message
    table = plan.table()
    assert {"release", "verdict", "alpha", "z"} <= set(table.columns)
    assert set(table["verdict"]) >= {"pure"} and (table["verdict"] != "pure").any()


def test_without_a_pure_option_that_meets_the_best_sigma_zero_option_is_recommended(frame):
    plan = plan_release(frame, KINDS, GuaranteeTarget(3.0, 0.05, "instance"), UtilityTarget(w1=6.0),
                        thetas=(1.0,), runs=10, rng=np.random.default_rng(4), bounds=BOUNDS,
                        pure=_search(alphas=(0.5,), max_evaluations=2))
    assert plan.recommended is not None and not plan.recommended.pure, plan.message
    assert "No pure option meets the utility target" in plan.message
    # an independent simulation of the recommended σ = 0 setting meets the target
    sim = predict_utility(frame, KINDS, plan.recommended.transforms, theta=plan.recommended.theta,
                          m=plan.recommended.m, runs=40, rng=np.random.default_rng(8), bounds=BOUNDS)
    assert all(np.quantile(sim[c]["w1"], 0.9) <= 6.0 for c in ("x", "y"))


def test_pure_options_alone_when_no_sigma_zero_setting_is_admissible(frame):
    # δ = 1e-6 at n = 2000 admits no σ = 0 release of m_min = 5 records; a pure release needs no δ
    plan = plan_release(frame, KINDS, GuaranteeTarget(3.0, 1e-6), UtilityTarget(w1=50.0), thetas=(1.0,),
                        m_min=5, runs=5, rng=np.random.default_rng(6), bounds=BOUNDS,
                        pure=_search(max_evaluations=4))
    assert plan.privacy_met and all(o.pure for o in plan.options) and plan.recommended.pure
    assert "No σ = 0 setting is admissible" in plan.message
    none = plan_release(frame, KINDS, GuaranteeTarget(0.1, 1e-6), UtilityTarget(w1=50.0), thetas=(1.0,),
                        m_min=5, runs=5, rng=np.random.default_rng(6), bounds=BOUNDS,
                        pure=_search(alphas=(1.0,)))
    assert not none.privacy_met and "No pure option is admissible either" in none.message


def test_a_column_without_a_public_domain_is_refused_by_name(frame):
    with pytest.raises(ValueError, match="column 'g': categorical column without a public category list"):
        plan_release(frame, KINDS, GuaranteeTarget(2.0, 1e-3), UtilityTarget(w1=5.0), thetas=(1.0,), runs=3,
                     rng=np.random.default_rng(0), bounds=BOUNDS, pure=PureSearch({"x": (10.0,), "y": (10.0,)}))
    with pytest.raises(ValueError, match="outside its public category list"):
        predict_pure_utility(frame, KINDS, {"x": 10.0, "y": 10.0}, alpha=1.0, m=5, runs=2,
                             rng=np.random.default_rng(0), bounds=BOUNDS, categories={"g": ("a", "b")})
    with pytest.raises(ValueError, match="alpha"):
        PureSearch({"x": (1.0,)}, alphas=(0.0,))


def test_a_frequency_table_predicts_as_its_rows(frame):
    data = frame.assign(x=frame["x"].round(-1), y=frame["y"].round(0))
    distinct = data.value_counts(sort=False).reset_index()
    counts = distinct.pop("count").to_numpy()
    rows = distinct.loc[distinct.index.repeat(counts)].reset_index(drop=True)
    args = dict(alpha=2.0, m=30, runs=20, bounds=BOUNDS, categories=CATEGORIES)
    a = predict_pure_utility(rows, KINDS, {"x": 10.0, "y": 1.0}, rng=np.random.default_rng(3), **args)
    b = predict_pure_utility(distinct, KINDS, {"x": 10.0, "y": 1.0}, rng=np.random.default_rng(3), counts=counts,
                             **args)
    for c in ("x", "y"):
        for k in a[c]:
            np.testing.assert_allclose(a[c][k], b[c][k], rtol=1e-9, atol=1e-9)


def test_utility_cost_puts_the_pure_release_next_to_the_sigma_zero_release(frame):
    cost = pure_utility_cost(frame, KINDS, {"x": 10.0, "y": 10.0}, alpha=1.0, m_pure=11, theta=2.0, m=500, runs=20,
                             rng=np.random.default_rng(9), bounds=BOUNDS, categories=CATEGORIES)
    assert set(cost) == {"x", "y"}
    for c in cost:
        assert cost[c]["pure"] > cost[c]["dp"] > 0      # 11 grid rows against 500 near-copies of the data
        assert cost[c]["pure_se"] > 0 and cost[c]["dp_se"] > 0
    again = pure_utility_cost(frame, KINDS, {"x": 10.0, "y": 10.0}, alpha=1.0, m_pure=11, theta=2.0, m=500, runs=20,
                              rng=np.random.default_rng(9), bounds=BOUNDS, categories=CATEGORIES)
    assert again == cost                                  # seeded
