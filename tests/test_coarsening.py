"""Coarsening advisor (issue 14 §1): transforms by hand, k/k_1/m* against the core functions, W1 cost, frontier."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from core.planning import (
    AdvisorResult,
    CoarseningCandidate,
    advise,
    apply_candidate,
    candidate_grid,
    default_transforms,
    frontier,
)
from core.data import ColumnTransform
from core.data import frequency_table
from core import privacy
from core.privacy import max_instance_synthetic_size


def test_round_step_and_power_of_ten_by_hand():
    x = np.array([1120.0, 1130.0, 1374.0, -10.0])
    assert ColumnTransform("w", "round", step=250).apply(x).tolist() == [1000.0, 1250.0, 1250.0, -0.0]
    # powers of ten use decimal rounding: no 0.30000000000000004
    assert ColumnTransform("w", "round", step=0.1).apply(np.array([0.31, 0.26])).tolist() == [0.3, 0.3]


def test_significant_digits_by_hand():
    x = np.array([1234.0, 0.01567, -987.0, 0.0, 5.0])
    out = ColumnTransform("w", "signif", digits=2).apply(x)
    assert np.allclose(out, [1200.0, 0.016, -990.0, 0.0, 5.0], rtol=0, atol=1e-12)


def test_log_round_and_clip_by_hand():
    x = np.array([1.0, np.e ** 0.26, np.e ** 0.24])
    out = ColumnTransform("w", "log_round", step=0.5).apply(x)
    assert np.allclose(out, [1.0, np.e ** 0.5, 1.0])
    with pytest.raises(ValueError, match="> 0"):
        ColumnTransform("w", "log_round", step=0.5).apply(np.array([0.0, 1.0]))
    assert ColumnTransform("w", "clip", bounds=(0, 10)).apply(np.array([-3.0, 4.0, 12.0])).tolist() == [0, 4, 10]


def test_category_merges_and_data_dependence_flag():
    labels = np.array(["a", "b", "c", "a", "a", "b"], dtype=object)
    keep = ColumnTransform("r", "keep", keep=("a",))
    assert keep.apply(labels).tolist() == ["a", "other", "other", "a", "a", "other"]
    assert not keep.data_dependent
    rare = ColumnTransform("r", "min_count", min_count=2)
    assert rare.apply(labels).tolist() == ["a", "b", "other", "a", "a", "b"]
    assert rare.data_dependent and "data-dependent" in rare.label
    assert ColumnTransform("x", "clip", bounds=(0, 1), bounds_from_data=True).data_dependent
    assert not ColumnTransform("x", "clip", bounds=(0, 1)).data_dependent


@pytest.mark.parametrize("kwargs, match", [
    ({"kind": "bogus"}, "kind"),
    ({"kind": "round"}, "needs step"),
    ({"kind": "round", "step": -1.0}, "step"),
    ({"kind": "signif", "digits": 0}, "digits"),
    ({"kind": "clip", "bounds": (2, 1)}, "lo < hi"),
    ({"kind": "min_count", "min_count": 1}, "min_count"),
])
def test_bad_transforms_name_the_parameter(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ColumnTransform("x", **kwargs)


@pytest.fixture
def frame():
    rng = np.random.default_rng(3)
    n = 2000
    return pd.DataFrame({"wage": np.round(rng.lognormal(7, 0.5, n), 2), "exper": rng.integers(0, 40, n),
                         "educ": rng.choice(list("ABCDE"), n, p=[0.4, 0.3, 0.2, 0.09, 0.01]),
                         "region": rng.choice(["N", "S"], n)})


def _grid():
    return candidate_grid({
        "wage": [ColumnTransform("wage"), ColumnTransform("wage", "signif", digits=1),
                 ColumnTransform("wage", "log_round", step=0.2), ColumnTransform("wage", "round", step=100000)],
        "exper": [ColumnTransform("exper"), ColumnTransform("exper", "round", step=50)],
        "educ": [ColumnTransform("educ"), ColumnTransform("educ", "keep", keep=("A", "B")),
                 ColumnTransform("educ", "min_count", min_count=50)],
    })


def test_advisor_numbers_equal_core_functions(frame):
    eps, delta, theta = 1.0, 1e-3, 2.0
    grid = _grid()
    result = advise(frame, grid, eps=eps, delta=delta, theta=theta)
    assert isinstance(result, AdvisorResult) and len(result.candidates) == len(grid) == 24
    for cand in result.candidates:
        coarse = apply_candidate(frame, cand)
        table = frequency_table(coarse.to_numpy(dtype=object))
        assert (cand.k, cand.singletons, cand.n) == (table.k, table.singletons, len(frame))
        assert cand.m_star == max_instance_synthetic_size(table.counts, theta, eps, delta)
        assert cand.data_dependent == any(t.kind == "min_count" for t in cand.transforms)
        for t, cost in zip(cand.transforms, cand.cost):
            if t.column in ("wage", "exper"):  # exact 1-D W1 (scipy) of coarsened vs original
                ref = stats.wasserstein_distance(frame[t.column].to_numpy(float), coarse[t.column].to_numpy(float))
                assert cost == pytest.approx(ref, rel=1e-9, abs=1e-12)
            elif t.column == "educ":  # total variation by hand
                p = frame["educ"].value_counts(normalize=True)
                q = coarse["educ"].value_counts(normalize=True)
                p, q = p.align(q, fill_value=0.0)
                assert cost == pytest.approx(0.5 * float(np.abs(p - q).sum()), abs=1e-12)
            else:
                assert cost == 0.0
    # coarsening removes singletons here and so raises m*
    ms = [c.m_star for c in result.candidates]
    assert max(ms) > min(ms)
    table = result.table()
    assert {"candidate", "k", "singletons", "m_star", "relative_cost", "data_dependent", "on_frontier",
            "on_relative_frontier"} <= set(table.columns)
    sd = {c: float(frame[c].std(ddof=0)) for c in ("wage", "exper")}
    for cand in result.candidates:
        scale = [sd.get(t.column, 1.0) for t in cand.transforms]
        assert cand.relative_cost == pytest.approx(max(c / s for c, s in zip(cand.cost, scale)))
    assert "looking at the confidential data" in result.caveat


def test_frequency_table_gives_the_numbers_of_its_rows(frame):
    """advise(distinct rows, counts) equals advise(rows): k, singletons, m*, costs, min_count."""
    grid = _grid()
    frame = pd.concat([frame, frame.iloc[:700], frame.iloc[:50]], ignore_index=True)  # repeated records
    rows = advise(frame, grid, eps=1.0, delta=1e-3, theta=2.0)
    grouped = frame.groupby(list(frame.columns), sort=False).size().reset_index(name="n_records")
    distinct = grouped.drop(columns="n_records")
    counts = grouped["n_records"].to_numpy(np.int64)
    assert len(distinct) < len(frame)   # the fixture has repeated rows: the weights matter
    table = advise(distinct, grid, eps=1.0, delta=1e-3, theta=2.0, counts=counts)
    for a, b in zip(rows.candidates, table.candidates):
        assert (a.k, a.singletons, a.n, a.m_star, a.data_dependent) == (b.k, b.singletons, b.n, b.m_star,
                                                                         b.data_dependent)
        assert b.cost == pytest.approx(a.cost, rel=1e-9, abs=1e-12)
        assert b.relative_cost == pytest.approx(a.relative_cost, rel=1e-9)
    with pytest.raises(ValueError, match=r"counts must be integers in \[1, ∞\], got 0"):
        advise(distinct, grid, eps=1.0, delta=1e-3, theta=2.0, counts=np.zeros(len(distinct), int))


def _dominates(a, b):
    sa = (-a.m_star, a.singletons) + tuple(a.cost)
    sb = (-b.m_star, b.singletons) + tuple(b.cost)
    return all(x <= y for x, y in zip(sa, sb)) and any(x < y for x, y in zip(sa, sb))


def test_frontier_equals_brute_force_dominance():
    rng = np.random.default_rng(0)
    cands = [CoarseningCandidate((ColumnTransform("a"), ColumnTransform("b")), k=10, singletons=int(s), n=20,
                                 m_star=int(m), cost=(float(c1), float(c2)), relative_cost=float(max(c1, c2 / 2)),
                                 data_dependent=False, eps=1.0, delta=1e-3, theta=1.0)
             for s, m, c1, c2 in zip(rng.integers(0, 5, 60), rng.integers(0, 5, 60), rng.integers(0, 4, 60),
                                     rng.integers(0, 4, 60))]
    front = frontier(cands)
    expected = [c for c in cands if not any(_dominates(o, c) for o in cands)]
    assert {id(c) for c in front} == {id(c) for c in expected}
    assert [c.m_star for c in front] == sorted((c.m_star for c in front), reverse=True)
    assert frontier([]) == []
    relative = frontier(cands, by="relative")
    rel_key = [(-c.m_star, c.singletons, c.relative_cost) for c in cands]
    expected = [c for c, kc in zip(cands, rel_key)
                if not any(all(a <= b for a, b in zip(ko, kc)) and ko != kc for ko in rel_key)]
    assert {id(c) for c in relative} == {id(c) for c in expected}
    with pytest.raises(ValueError, match="by"):
        frontier(cands, by="sum")


def test_default_transforms_are_data_independent():
    menu = default_transforms("wage", "numeric", bounds=(0, 10000), log=True)
    assert not any(t.data_dependent for t in menu)
    assert {t.kind for t in menu} == {"identity", "signif", "log_round", "round"}
    assert [t.step for t in menu if t.kind == "round"] == [10.0, 100.0, 1000.0]
    assert default_transforms("r", "categorical") == [ColumnTransform("r")]


def test_grid_and_advise_validation(frame):
    with pytest.raises(ValueError, match="max_candidates"):
        candidate_grid({"a": [ColumnTransform("a")] * 5, "b": [ColumnTransform("b")] * 5}, max_candidates=10)
    with pytest.raises(ValueError, match="not among"):
        advise(frame, [(ColumnTransform("nope"),)], eps=1.0, delta=1e-3, theta=1.0)
    with pytest.raises(ValueError, match="two transforms"):
        advise(frame, [(ColumnTransform("wage"), ColumnTransform("wage", "signif", digits=1))], eps=1.0,
               delta=1e-3, theta=1.0)
    with pytest.raises(ValueError, match="delta"):
        advise(frame, [()], eps=1.0, delta=1.5, theta=1.0)


def test_a_missing_cell_is_one_more_value(frame):
    """docs/mathematics.md §2.5: missing is a value; the costs are over the records with a value."""
    holed = frame.copy()
    holed.loc[::7, "wage"] = np.nan
    holed.loc[::11, "educ"] = None
    eps, delta, theta = 1.0, 1e-3, 2.0
    grid = [(ColumnTransform("wage", "signif", digits=1), ColumnTransform("educ", "keep", keep=("A",))),
            (ColumnTransform("wage"), ColumnTransform("educ"))]
    result = advise(holed[["wage", "educ"]], grid, eps=eps, delta=delta, theta=theta)
    for cand in result.candidates:
        coarse = apply_candidate(holed[["wage", "educ"]], cand)
        # NaN and None as one value each (one key per row), as frequency_table of labels counts them
        keys = coarse.astype(object).where(coarse.notna(), "<missing>").to_numpy(dtype=object)
        table = frequency_table(keys)
        assert (cand.k, cand.singletons, cand.n) == (table.k, table.singletons, len(holed))
        assert cand.m_star == max_instance_synthetic_size(table.counts, theta, eps, delta)
    rounded = result.candidates[0]
    present = holed["wage"].notna().to_numpy()
    x = holed["wage"].to_numpy()[present]
    one_digit = ColumnTransform("wage", "signif", digits=1).apply(x)
    assert rounded.cost[0] == pytest.approx(stats.wasserstein_distance(x, one_digit))
    assert result.global_m_star == privacy.max_synthetic_size(len(holed), theta, eps, delta)


def test_progress_is_reported(frame):
    seen = []
    advise(frame, _grid()[:3], eps=1.0, delta=1e-3, theta=1.0, progress=lambda f, msg: seen.append(f))
    assert seen == pytest.approx([1 / 3, 2 / 3, 1.0])


def test_extreme_magnitudes():
    tiny = np.array([1.234e-300, 9.87e300, -4.56e-305])
    out = ColumnTransform("w", "signif", digits=2).apply(tiny)
    assert np.allclose(out, [1.2e-300, 9.9e300, -4.6e-305], rtol=1e-12, atol=0)
    with pytest.raises(ValueError, match="overflows"):
        ColumnTransform("w", "round", step=1e-300).apply(np.array([1e300]))
    with pytest.raises(ValueError, match="numeric"):
        ColumnTransform("w", "round", step=1.0).apply(np.array(["a", "b"], dtype=object))


@pytest.mark.parametrize("transform", [
    ColumnTransform("v", "round", step=0.5), ColumnTransform("v", "round", step=250), ColumnTransform("v", "round",
                                                                                                     step=0.01),
    ColumnTransform("v", "signif", digits=1), ColumnTransform("v", "signif", digits=3),
    ColumnTransform("v", "clip", bounds=(-50, 400)),
])
def test_transforms_are_monotone_and_cost_is_exact_w1(transform):
    rng = np.random.default_rng(9)
    x = np.concatenate([rng.normal(0, 300, 2000), [99.5, 99.95, 100.0, 0.0, -99.95, 1e-7, 9.96, 10.04]])
    y = transform.apply(x)
    order = np.argsort(x, kind="stable")
    assert np.all(np.diff(y[order]) >= 0)  # non-decreasing: the identity coupling is optimal
    result = advise(pd.DataFrame({"v": x}), [(transform,)], eps=1.0, delta=1e-3, theta=1.0)
    assert result.candidates[0].cost[0] == pytest.approx(stats.wasserstein_distance(x, y), rel=1e-9)
