"""Quality report (SDMetrics definitions) against hand-computed cases (issue 14 §2).

SDMetrics itself is not installed (it downgrades pandas); every metric is checked against a
case computed by hand from the documented formula.
"""

import io
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from core.evaluation.quality import (
    contingency_similarity,
    correlation_similarity,
    ks_complement,
    quality_report,
    tv_complement,
)


def test_ks_complement_by_hand():
    assert ks_complement([1, 2, 3, 4], [4, 3, 2, 1]) == 1.0
    assert ks_complement([0, 1], [2, 3]) == 0.0
    # F_R - F_S is largest at t in [2, 3): 2/4 - 0 = 1/2
    assert ks_complement([1, 2, 3, 4], [3, 4, 5, 6]) == pytest.approx(0.5)
    # unequal sizes: R = {0, 1, 2}, S = {1}: sup at t in [0, 1): 1/3 - 0; at t in [1,2): 2/3 - 1 → 1/3
    assert ks_complement([0, 1, 2], [1]) == pytest.approx(2 / 3)


def test_tv_complement_by_hand():
    # R = (a .5, b .5, c 0), S = (a .75, b 0, c .25): TV = (.25 + .5 + .25)/2 = .5
    assert tv_complement(["a", "a", "b", "b"], ["a", "a", "a", "c"]) == pytest.approx(0.5)
    assert tv_complement(["x", "y"], ["y", "x"]) == 1.0
    assert tv_complement(["x"], ["y"]) == 0.0


def test_correlation_similarity_by_hand():
    up = np.column_stack([[1.0, 2, 3, 4], [2.0, 4, 6, 8]])
    down = np.column_stack([[1.0, 2, 3, 4], [8.0, 6, 4, 2]])
    assert correlation_similarity(up, down) == pytest.approx(0.0)
    assert correlation_similarity(up, up) == pytest.approx(1.0)
    # R: pearson of (1,2,3) with (1,3,2) = 0.5; S: 1 → 1 - 0.5/2
    real = np.column_stack([[1.0, 2, 3], [1.0, 3, 2]])
    assert correlation_similarity(real, up) == pytest.approx(0.75)
    # Spearman of (1,2,3,4) with (1,4,9,100) is 1, Pearson is not
    curved = np.column_stack([[1.0, 2, 3, 4], [1.0, 4, 9, 100]])
    assert correlation_similarity(curved, up, method="spearman") == pytest.approx(1.0)
    assert np.isnan(correlation_similarity(np.column_stack([[1.0, 1, 1], [1.0, 2, 3]]), up))
    with pytest.raises(ValueError, match="shape"):
        correlation_similarity([1.0, 2.0], up)


def test_contingency_similarity_by_hand():
    real = pd.DataFrame({"a": ["x", "x", "y", "y"], "b": ["u", "v", "u", "v"]})
    syn = pd.DataFrame({"a": ["x", "x", "x", "y"], "b": ["u", "u", "v", "v"]})
    # R: xu xv yu yv = .25 each; S: xu .5, xv .25, yv .25 → TV = (.25 + 0 + .25 + 0)/2
    assert contingency_similarity(real, syn) == pytest.approx(0.75)


def test_contingency_discretises_numeric_with_real_edges():
    # real 0..10: edges 0, 1, ..., 10 (10 bins); outer edges open, so -5 joins the first
    # bin and 99 the last; 9.5 and 10 both fall in the last bin.
    real = pd.DataFrame({"x": [0.0, 10.0], "c": ["a", "a"]})
    syn = pd.DataFrame({"x": [-5.0, 99.0], "c": ["a", "a"]})
    assert contingency_similarity(real, syn, continuous=("x",)) == pytest.approx(1.0)
    syn2 = pd.DataFrame({"x": [0.5, 1.5], "c": ["a", "a"]})   # bins 1 and 2 vs 1 and 10
    assert contingency_similarity(real, syn2, continuous=("x",)) == pytest.approx(0.5)


def test_report_averages_and_csv():
    real = pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [2.0, 4, 6, 8], "c": ["x", "x", "y", "y"]})
    syn = pd.DataFrame({"a": [3.0, 4, 5, 6], "b": [8.0, 6, 4, 2], "c": ["x", "x", "x", "y"]})
    rep = quality_report(real, syn, {"a": "numeric", "b": "numeric", "c": "categorical"})
    cols = dict(zip(rep.columns["column"], rep.columns["score"]))
    assert cols["a"] == pytest.approx(0.5) and cols["c"] == pytest.approx(0.75)
    assert cols["b"] == pytest.approx(ks_complement(real["b"], syn["b"]))
    assert rep.column_shapes == pytest.approx(np.mean(list(cols.values())))
    pairs = {(r.column_1, r.column_2): (r.metric, r.score) for r in rep.pairs.itertuples()}
    assert pairs[("a", "b")] == ("CorrelationSimilarity", pytest.approx(0.0))  # +1 vs -1
    assert pairs[("a", "c")][0] == "ContingencySimilarity"
    assert rep.column_pair_trends == pytest.approx(np.mean([s for _, s in pairs.values()]))
    assert rep.overall == pytest.approx((rep.column_shapes + rep.column_pair_trends) / 2)
    raw = rep.to_csv()
    assert raw.decode("utf-8").splitlines()[0].startswith("# CONFIDENTIAL")
    assert not rep.to_csv(confidential=False).decode("utf-8").startswith("#")
    back = pd.read_csv(io.BytesIO(raw), comment="#")
    assert list(back.columns) == ["property", "column_1", "column_2", "metric", "score"]
    assert back.loc[back["property"] == "Overall", "score"].item() == pytest.approx(rep.overall)
    mat = rep.pair_matrix()
    assert np.allclose(mat.to_numpy(), mat.to_numpy().T) and np.allclose(np.diag(mat), 1.0)
    with pytest.raises(ValueError, match="lacks"):
        quality_report(real, syn.drop(columns="c"), {"c": "categorical"})
    with pytest.raises(ValueError, match="kind"):
        quality_report(real, syn, {"c": "text"})


def test_report_binning_reproduces_sdmetrics_report_code():
    # Each table binned by its own 10 equal-width edges; numpy.digitize puts each maximum in bin 11.
    real = pd.DataFrame({"x": [0.0, 10.0], "c": ["a", "a"]})
    syn = pd.DataFrame({"x": [100.0, 200.0], "c": ["a", "a"]})
    # own edges: real -> bins 1 and 11; synthetic -> bins 1 and 11 as well: identical tables
    assert contingency_similarity(real, syn, continuous=("x",), binning="sdmetrics-report") == 1.0
    # with the real column's edges (opened to ±∞) both synthetic values fall in the last bin
    assert contingency_similarity(real, syn, continuous=("x",)) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="binning"):
        contingency_similarity(real, syn, continuous=("x",), binning="own")


def test_ks_complement_ignores_float_noise_like_sdmetrics():
    assert ks_complement([0.1 + 0.2, 1.0], [0.3, 1.0]) == 1.0


small_samples = st.lists(st.integers(-5, 5), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(small_samples, small_samples)
def test_ks_and_tv_complements_against_brute_force(real, syn):
    r, s = np.array(real, float), np.array(syn, float)
    grid = np.union1d(r, s)
    d = max(abs((r <= t).mean() - (s <= t).mean()) for t in grid)   # sup over the jumps
    assert ks_complement(r, s) == pytest.approx(1.0 - d, abs=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # scipy's p-value on tiny samples; only D is compared
        assert ks_complement(r, s) == pytest.approx(1.0 - stats.ks_2samp(r, s).statistic, abs=1e-12)
    labels = sorted(set(real) | set(syn))
    tv = 0.5 * sum(abs(real.count(v) / len(real) - syn.count(v) / len(syn)) for v in labels)
    assert tv_complement([f"c{v}" for v in real], [f"c{v}" for v in syn]) == pytest.approx(1.0 - tv, abs=1e-12)


# ------------------------------------------------------------------ weighted (frequency table) path
def test_weighted_metrics_by_hand():
    # real values 1 (count 3) and 2 (count 1); synthetic 1, 2: F_R(1) = 3/4, F_S(1) = 1/2 → D = 1/4
    assert ks_complement([1.0, 2.0], [1.0, 2.0], real_weights=[3, 1]) == pytest.approx(0.75)
    # R = (a 3/4, b 1/4), S = (a 1/2, b 1/2): TV = 1/4
    assert tv_complement(["a", "b"], ["a", "b"], real_weights=[3, 1]) == pytest.approx(0.75)
    # rows (0,0) ×2, (1,1) ×1, (1,0) ×1 — by hand: means 1/2, 1/4; cov = Σw(x-½)(y-¼) = 1/8,
    # var x = 1/4, var y = 3/16 → r = (1/8)/sqrt(3/64) = 1/√3; synthetic r = 1
    real = np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]])
    syn = np.array([[0.0, 0.0], [1.0, 1.0]])
    assert correlation_similarity(real, syn, real_weights=[2, 1, 1]) == pytest.approx(1 - (1 - 3 ** -0.5) / 2)
    # cells: R (x,u) 3/4, (y,v) 1/4; S (x,u) 1/2, (y,v) 1/2 → TV = 1/4
    r2 = pd.DataFrame({"a": ["x", "y"], "b": ["u", "v"]})
    assert contingency_similarity(r2, r2, real_weights=[3, 1]) == pytest.approx(0.75)
    with pytest.raises(ValueError, match="real_weights"):
        ks_complement([1.0, 2.0], [1.0], real_weights=[1])
    with pytest.raises(ValueError, match="real_counts"):
        quality_report(r2, r2, {"a": "categorical"}, real_counts=[1, -1])


@pytest.mark.parametrize("correlation", ["pearson", "spearman"])
def test_weighted_report_equals_repeated_rows(correlation):
    rng = np.random.default_rng(31)
    atoms = pd.DataFrame({"w": np.round(rng.lognormal(1, 0.5, 25), 1), "x": rng.integers(0, 4, 25).astype(float),
                          "c": rng.choice(["p", "q", "r"], 25)}).drop_duplicates(ignore_index=True)
    counts = rng.integers(1, 6, len(atoms))
    rows = atoms.loc[np.repeat(np.arange(len(atoms)), counts)].reset_index(drop=True)
    syn = pd.DataFrame({"w": np.round(rng.lognormal(1, 0.6, 40), 1), "x": rng.integers(0, 5, 40).astype(float),
                        "c": rng.choice(["p", "q", "s"], 40)})
    kinds = {"w": "numeric", "x": "numeric", "c": "categorical"}
    weighted = quality_report(atoms, syn, kinds, real_counts=counts, correlation=correlation)
    repeated = quality_report(rows, syn, kinds, correlation=correlation)
    pd.testing.assert_frame_equal(weighted.to_frame(), repeated.to_frame(), rtol=1e-12, atol=1e-12)
