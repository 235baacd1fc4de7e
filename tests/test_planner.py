"""Release planner (issue 14 §3): exact per-run metrics, recommendation checked by an independent MC, shortfalls."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from core.data import ColumnTransform
from core.planning import candidate_grid
from core.planning import GuaranteeTarget, UtilityTarget, plan_release, predict_utility
from core.planning.planner import _prepare_column, _run_metrics
from core.formatting import format_upper
from core.privacy import global_delta, instance_delta, max_instance_synthetic_size, max_synthetic_size
from core.validation import PrivacyLeakWarning


def test_run_metrics_equal_expanded_sample():
    """W1, mean and quartiles of a release given by counts equal those of the expanded sample."""
    rng = np.random.default_rng(0)
    original = rng.normal(size=300)
    atoms = np.round(original[:200], 1)               # coarsened atom values (with ties)
    col = _prepare_column(original, atoms, -5.0, 5.0, False)
    old = rng.integers(0, 4, 200)
    new_values = rng.uniform(-5, 5, 7)
    new_counts = rng.integers(1, 3, 7)
    m = int(old.sum() + new_counts.sum())
    got = _run_metrics(col, old, new_values, new_counts, m)
    sample = np.concatenate([np.repeat(atoms, old), np.repeat(new_values, new_counts)])
    assert sample.size == m
    assert got["w1"] == pytest.approx(stats.wasserstein_distance(sample, original), rel=1e-10)
    assert got["mean"] == pytest.approx(abs(sample.mean() - original.mean()), abs=1e-12)
    for key, q in (("q1", 0.25), ("median", 0.5), ("q3", 0.75)):
        assert got[key] == pytest.approx(abs(np.quantile(sample, q) - np.quantile(original, q)), abs=1e-12)


@pytest.fixture
def frame():
    rng = np.random.default_rng(11)
    n = 3000
    return pd.DataFrame({"x": np.round(rng.uniform(0, 100, n), 2), "y": np.round(rng.uniform(20, 80, n), 2),
                         "g": rng.choice(["a", "b", "c"], n)})


KINDS = {"x": "numeric", "y": "numeric", "g": "categorical"}
BOUNDS = {"x": (0.0, 100.0), "y": (0.0, 100.0)}


def _grid():
    return candidate_grid({"x": [ColumnTransform("x"), ColumnTransform("x", "round", step=20)],
                           "y": [ColumnTransform("y"), ColumnTransform("y", "round", step=20)]})


def test_recommendation_meets_both_targets_in_an_independent_monte_carlo(frame):
    guarantee = GuaranteeTarget(eps=1.0, delta=1e-3, scope="instance")
    utility = UtilityTarget(w1=8.0, mean_error=4.0, quartile_error=15.0, level=0.9)
    seen = []
    plan = plan_release(frame, KINDS, guarantee, utility, candidates=_grid(), thetas=(1.0, 10.0), runs=30,
                        rng=np.random.default_rng(1), bounds=BOUNDS, progress=lambda f, msg: seen.append(f))
    assert plan.privacy_met and plan.utility_met, plan.message
    rec = plan.recommended
    assert seen[-1] == 1.0 and rec is not None and "Recommended" in plan.message
    # privacy: the recommended m is admissible at the instance level for the coarsened data
    coarse = frame.copy()
    for t in rec.transforms:
        coarse[t.column] = t.apply(frame[t.column].to_numpy())
    counts = coarse.value_counts().to_numpy()
    assert rec.m <= max_instance_synthetic_size(counts, rec.theta, 1.0, 1e-3) == rec.m_allowed
    # utility: an independent Monte Carlo with another seed meets every target at the 0.9 quantile
    sim = predict_utility(frame, KINDS, rec.transforms, theta=rec.theta, m=rec.m, runs=60,
                          rng=np.random.default_rng(987), bounds=BOUNDS)
    for c in ("x", "y"):
        assert np.quantile(sim[c]["w1"], 0.9) <= 8.0
        assert np.quantile(sim[c]["mean"], 0.9) <= 4.0
        for q in ("q1", "median", "q3"):
            assert np.quantile(sim[c][q], 0.9) <= 15.0
    assert "data-dependent" in plan.caveat
    assert len(plan.table()) == len(plan.options)


def test_global_scope_uses_theorem_2_sizes(frame):
    plan = plan_release(frame, KINDS, GuaranteeTarget(1.0, 1e-2, "global"), UtilityTarget(w1=50.0),
                        thetas=(2.0,), runs=5, rng=np.random.default_rng(2), bounds=BOUNDS)
    assert plan.options[0].m_allowed == max_synthetic_size(len(frame), 2.0, 1.0, 1e-2, m_cap=len(frame))


def test_privacy_target_that_cannot_be_met_says_by_how_much(frame):
    n = len(frame)
    plan = plan_release(frame, KINDS, GuaranteeTarget(1.0, 1e-6, "global"), UtilityTarget(w1=1.0), thetas=(1.0,),
                        m_min=100, runs=5, rng=np.random.default_rng(3), bounds=BOUNDS)
    assert not plan.privacy_met and plan.recommended is None
    needed = float(global_delta(n, 1.0, 100, 1.0))
    assert "privacy target cannot be met" in plan.message and f"δ ≥ {format_upper(needed)} " in plan.message


def test_instance_privacy_shortfall_uses_the_instance_curve(frame):
    plan = plan_release(frame, KINDS, GuaranteeTarget(1.0, 1e-4, "instance"), UtilityTarget(w1=1.0), thetas=(1.0,),
                        m_min=10, runs=3, rng=np.random.default_rng(3), bounds=BOUNDS)
    counts = frame.value_counts().to_numpy()      # all rows distinct: every record a singleton
    assert not plan.privacy_met
    assert f"at most m = {max_instance_synthetic_size(counts, 1.0, 1.0, 1e-4)} records" in plan.message
    assert f"δ ≥ {format_upper(float(instance_delta(counts, 0.0, 1.0, 10, 1.0)))} " in plan.message


def test_utility_target_that_cannot_be_met_says_by_how_much(frame):
    plan = plan_release(frame, KINDS, GuaranteeTarget(1.0, 1e-3, "instance"), UtilityTarget(w1=1e-3),
                        candidates=_grid(), thetas=(1.0,), runs=5, rng=np.random.default_rng(4), bounds=BOUNDS)
    assert plan.privacy_met and not plan.utility_met and plan.recommended is None
    assert "utility target cannot be met" in plan.message and "× the target" in plan.message
    assert min(o.ratio for o in plan.options) > 1.0


def test_bounds_from_data_warn_and_are_recorded(frame):
    with pytest.warns(PrivacyLeakWarning):
        plan = plan_release(frame, KINDS, GuaranteeTarget(1.0, 1e-3), UtilityTarget(w1=50.0), thetas=(1.0,),
                            runs=3, rng=np.random.default_rng(5))
    assert plan.bounds_from_data == ("x", "y")


@pytest.mark.parametrize("kwargs, match", [
    ({"thetas": (-1.0,)}, "theta"),
    ({"runs": 1}, "runs"),
    ({"m_min": 0}, "m_min"),
    ({"candidates": ()}, "candidates"),
])
def test_bad_arguments_name_the_parameter(frame, kwargs, match):
    args = dict(thetas=(1.0,), runs=3, rng=np.random.default_rng(0), bounds=BOUNDS)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        plan_release(frame, KINDS, GuaranteeTarget(1.0, 1e-3), UtilityTarget(w1=1.0), **args)


def test_targets_validate():
    with pytest.raises(ValueError, match="scope"):
        GuaranteeTarget(1.0, 1e-3, "local")
    with pytest.raises(ValueError, match="delta"):
        GuaranteeTarget(1.0, 0.0)
    with pytest.raises(ValueError, match="utility target"):
        UtilityTarget()
    with pytest.raises(ValueError, match="w1"):
        UtilityTarget(w1=-1.0).bounds_for("x")


def test_utility_target_for_unknown_column_is_refused(frame):
    with pytest.raises(ValueError, match="not numeric columns"):
        plan_release(frame, KINDS, GuaranteeTarget(1.0, 1e-3), UtilityTarget(w1={"g": 1.0}), thetas=(1.0,),
                     runs=3, rng=np.random.default_rng(0), bounds=BOUNDS)


def test_bad_bounds_name_the_column(frame):
    with pytest.raises(ValueError, match="bounds of column 'x'"):
        predict_utility(frame, KINDS, (), theta=1.0, m=10, runs=2, rng=np.random.default_rng(0),
                        bounds={"x": (5.0, 5.0), "y": (0.0, 100.0)})
    with pytest.raises(ValueError, match="lo > 0"):
        predict_utility(frame, KINDS, (), theta=1.0, m=10, runs=2, rng=np.random.default_rng(0),
                        bounds={"x": (0.0, 100.0), "y": (0.0, 100.0)}, log={"x": True})


def test_columns_must_match(frame):
    with pytest.raises(ValueError, match="not in frame"):
        predict_utility(frame, {"zz": "numeric"}, (), theta=1.0, m=5, runs=2, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="not named in kinds"):
        predict_utility(frame, KINDS, (ColumnTransform("q", "round", step=1.0),), theta=1.0, m=5, runs=2,
                        rng=np.random.default_rng(0), bounds=BOUNDS)


def test_a_frequency_table_plans_as_its_rows(frame):
    """counts=: the distinct rows with their counts give the same plan as the rows repeated in
    that order (same atoms, same random stream), and refuse bad counts by name."""
    data = frame.assign(x=frame["x"].round(-1), y=frame["y"].round(-1))   # repeated rows
    distinct = data.value_counts(sort=False).reset_index()
    counts = distinct.pop("count").to_numpy()
    distinct.loc[len(distinct)] = [55.0, 50.0, "a"]       # a row holding no record is ignored
    counts = np.append(counts, 0)
    assert counts.sum() == len(frame) and len(distinct) < len(frame) / 2
    rows = distinct.loc[distinct.index.repeat(counts)].reset_index(drop=True)
    args = dict(candidates=_grid(), thetas=(1.0, 5.0), runs=8, max_evaluations=3, bounds=BOUNDS)
    target = UtilityTarget(w1={"x": 5.0, "y": 5.0})
    guarantee = GuaranteeTarget(eps=2.0, delta=0.05, scope="instance")
    a = plan_release(rows, KINDS, guarantee, target, rng=np.random.default_rng(4), **args)
    b = plan_release(distinct, KINDS, guarantee, target, rng=np.random.default_rng(4), counts=counts, **args)
    assert len(a.options) == len(b.options) > 0
    for x, y in zip(a.options, b.options):
        assert (x.transforms, x.theta, x.m, x.m_allowed) == (y.transforms, y.theta, y.m, y.m_allowed)
        for c in x.predicted:
            for k in x.predicted[c]:
                assert y.predicted[c][k] == pytest.approx(x.predicted[c][k], rel=1e-9, abs=1e-9)
    with pytest.raises(ValueError, match="counts must have one entry per row"):
        plan_release(distinct, KINDS, guarantee, target, rng=np.random.default_rng(4), counts=counts[:-1], **args)
    with pytest.raises(ValueError, match="at least one record"):
        plan_release(distinct, KINDS, guarantee, target, rng=np.random.default_rng(4), counts=0 * counts, **args)
    with pytest.raises(ValueError, match=r"counts must be integers in \[0, ∞\]"):
        predict_utility(distinct, KINDS, (), theta=1.0, m=10, rng=np.random.default_rng(0), bounds=BOUNDS,
                        counts=-counts)


# ---------------------------------------------------------------- verdict first (issue 36 item 3)
def test_a_strong_release_that_meets_the_utility_target_beats_a_weak_one_with_more_margin(frame):
    # θ = 3·10⁷ sizes a strong σ = 0 release (n·δ ≤ 0.01 at m = 100) beside the weak largest m
    plan = plan_release(frame, KINDS, GuaranteeTarget(1.0, 1e-3), UtilityTarget(w1=30.0), thetas=(1.0, 3e7), runs=5,
                        rng=np.random.default_rng(2), bounds=BOUNDS)
    weak = [o for o in plan.options if o.verdict == "weak" and o.meets_utility]
    assert weak and plan.recommended.verdict == "strong" and plan.recommended.m == 100
    assert min(o.ratio for o in weak) < plan.recommended.ratio          # verdict first, margin second
    assert "A weak release that meets the utility target is not recommended" in plan.message
    table = plan.table()
    assert list(table["verdict"]) == sorted(table["verdict"], key=["pure", "strong", "weak", "missed"].index)
    assert table["copied_rows"].iloc[0] == pytest.approx(100 * 3000 / (3000 + 3e7), rel=1e-12)


def test_a_weak_recommendation_says_plainly_that_no_strong_one_meets_and_how_much_it_copies(frame):
    plan = plan_release(frame, KINDS, GuaranteeTarget(1.0, 0.2), UtilityTarget(w1=6.0), thetas=(1.0, 3e7), runs=5,
                        rng=np.random.default_rng(2), bounds=BOUNDS)
    best = plan.recommended
    assert best.verdict == "weak" and best.theta == 1.0
    assert not any(o.meets_utility for o in plan.options if o.verdict in ("pure", "strong"))
    assert plan.message.startswith("No strong or pure release meets the utility target; the best weak one copies "
                                   f"about {best.m} of the {best.m} released rows verbatim")
    assert "identifies its record" in plan.message and "Recommended:" in plan.message
    assert best.copied_rows == pytest.approx(best.m * 3000 / 3001, rel=1e-12)


def test_the_evaluation_budget_holds_with_and_without_strong_settings(frame):
    for thetas, strong in (((0.5, 1.0, 5.0, 25.0), 0), ((1.0, 3e7, 6e7), 2)):
        plan = plan_release(frame, KINDS, GuaranteeTarget(1.0, 1e-3), UtilityTarget(w1=30.0), candidates=_grid(),
                            thetas=thetas, runs=2, max_evaluations=3, rng=np.random.default_rng(3), bounds=BOUNDS)
        assert len(plan.options) == 3
        assert sum(o.verdict == "strong" for o in plan.options) == strong   # a third of the budget stays for weak
