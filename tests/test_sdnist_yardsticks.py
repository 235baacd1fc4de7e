"""SDNist's own yardsticks (core.evaluation.yardsticks.sdnist_*; docs/quality.md §9): hand examples
worked from SDNist v2.5's published code, and SDNist's own outputs on small tables
(tests/sdnist_fixtures.json: inputs, SDNist's numbers and the script that produced them)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.evaluation.yardsticks import (
    SDNIST_TREE_DEPTH,
    frame_yardsticks,
    k_marginal_score,
    sdnist_apparent_match,
    sdnist_bin,
    sdnist_k_marginal,
    sdnist_marginal_pairs,
    sdnist_pmse,
    sdnist_unique_exact_match,
    yardstick_runs,
)

FIXTURES = json.loads((Path(__file__).parent / "sdnist_fixtures.json").read_text())


def _cases(metric):
    return [c for c in FIXTURES["cases"] if c["metric"] == metric]


def test_k_marginal_scores_every_pair_by_hand_not_the_triple():
    # target (a, b, c): 000, 010, 101, 111; deid: 000, 000, 111, 110
    t = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 0, 1], "c": [0, 0, 1, 1]})
    d = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 0, 1, 1], "c": [0, 0, 1, 0]})
    # (a, b): t = ¼ each of 00 01 10 11, d = ½ 00, ½ 11 -> L1 = ¼ + ¼ + ¼ + ¼ = 1
    # (a, c): t = ½ 00, ½ 11; d = ½ 00, ¼ 11, ¼ 10 -> L1 = 0 + ¼ + ¼ = ½
    # (b, c): t = ¼ each of 00 10 01 11; d = ½ 00, ¼ 11, ¼ 10 -> L1 = ¼ + 0 + ¼ + 0 = ½
    # score = (2 − mean L1)·500 = (2 − 2/3)·500 = 2000/3
    assert sdnist_marginal_pairs(["c", "a", "b"]) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert sdnist_k_marginal(t, d) == pytest.approx(2000 / 3, abs=1e-9)
    # The project's 3-way marginal score is another number: the one triple,
    # t = ¼ 000, 010, 101, 111; d = ½ 000, ¼ 111, ¼ 110 -> L1 = ¼ + ¼ + ¼ + 0 + ¼ = 1 -> 500
    assert k_marginal_score(t.to_numpy(), d.to_numpy(), [2, 2, 2]) == pytest.approx(500.0)
    # one column: the pair (a, a), i.e. its 1-way table: t = ½ ½, d = ½ ½ -> 1000
    assert sdnist_marginal_pairs(["a"]) == [("a", "a")]
    assert sdnist_k_marginal(t[["a"]], d[["a"]]) == pytest.approx(1000.0)
    # a frequency table scores as its repeated rows
    assert sdnist_k_marginal(t.iloc[[0, 2]], d, target_counts=[3, 1]) == pytest.approx(
        sdnist_k_marginal(t.iloc[[0, 0, 0, 2]], d))


def test_thirty_features_draw_two_hundred_pairs_with_replacement():
    names = [f"f{i:02d}" for i in range(30)]
    pairs = sdnist_marginal_pairs(names)
    assert len(pairs) == 200 and len(sdnist_marginal_pairs(names[:29])) == 29 * 28 // 2
    rng = np.random.default_rng(seed=0)           # SDNist: default_rng(seed).choice(marginals, size=2)
    assert pairs == [tuple(rng.choice(sorted(names), size=2)) for _ in range(200)]


def test_binning_by_hand_twenty_percentile_bins_of_the_target():
    # target 1..100 once each, range 0..1000 (> 20: binned). Percentiles q = 0, 5, …, 95 with
    # method 'higher': index ceil(q/100·99) -> 0, 5, 10, …, 95 -> values 1, 6, 11, …, 96; plus the
    # target's max 100. Cells [1, 6], (6, 11], …, (96, 100] -> 0 … 19.
    t = pd.DataFrame({"x": np.arange(1, 101)})
    d = pd.DataFrame({"x": [1, 6, 7, 11, 12, 96, 97, 100]})
    tb, db = sdnist_bin(t, d, ["x"], ranges={"x": (0, 1000)})
    assert db["x"].tolist() == [0, 0, 1, 1, 2, 18, 19, 19]
    assert np.bincount(tb["x"]).tolist() == [6] + [5] * 18 + [4]
    # a deidentified value above the target's max takes a bin of its own (19 percentile bins + it)
    tb, db = sdnist_bin(t, pd.DataFrame({"x": [100, 150]}), ["x"], ranges={"x": (0, 1000)})
    assert db["x"].tolist() == [tb["x"].max(), tb["x"].max() + 1]
    # range ≤ 20: left as it is; missing: SDNist's null code −1; categories: sorted codes
    t = pd.DataFrame({"n": [3.0, 7.0, np.nan], "k": ["b", "a", None]})
    tb, db = sdnist_bin(t, t.iloc[:1], ["n"], ranges={"n": (0, 20)})
    assert tb["n"].tolist() == [3, 7, -1] and tb["k"].tolist() == [1, 0, -1] and db["k"].tolist() == [1]


def test_unique_exact_match_by_hand():
    # target A, A, B, C: unique B and C (2 of 4 = 50 %); deid B, B, D: B matched (1 of 2 = 50 %)
    t = pd.DataFrame({"v": ["A", "A", "B", "C"]})
    d = pd.DataFrame({"v": ["B", "B", "D"]})
    assert sdnist_unique_exact_match(t, d) == (1, 50.0, 2, 50.0)
    assert sdnist_unique_exact_match(t.iloc[[0, 2, 3]], d, target_counts=[2, 1, 1]) == (1, 50.0, 2, 50.0)
    assert sdnist_unique_exact_match(t.iloc[[0]], d, target_counts=[2])[:3] == (0, 0, 0)


def test_apparent_match_by_hand():
    # quasi-identifier q: target q = 1, 2, 2, 3 (unique: 1 and 3); deid q = 1, 2, 3, 4 (all unique)
    t = pd.DataFrame({"q": [1, 2, 2, 3], "x": [1, 1, 2, 5], "y": [1, 1, 2, 6]})
    d = pd.DataFrame({"q": [1, 2, 3, 4], "x": [1, 1, 5, 0], "y": [0, 1, 6, 0]})
    r = sdnist_apparent_match(t, d, ["q"])
    # q = 1: x equal, y not -> 50 %; q = 3: both -> 100 %; matched 2 of the 4 target records
    assert (r.matched, r.percent, sorted(r.similarity)) == (2, 50.0, [50.0, 100.0])
    assert sdnist_apparent_match(t, d, ["q"], exclude=["y"]).similarity.tolist() == [100.0, 100.0]
    assert math.isnan(sdnist_apparent_match(t, d, ["q", "x", "y"]).similarity[0])
    with pytest.raises(ValueError, match="quasi_identifiers"):
        sdnist_apparent_match(t, d, ["nope"])


def test_pmse_by_hand_and_its_depth():
    # x: target 0, 0, 0, 1; deid 0, 1, 1, 1. Root split at 0.5: left 3 target + 1 deid -> p̂ = ¼,
    # right 1 + 3 -> ¾; c = 4/8 = ½; pMSE = mean (p̂ − ½)² = 1/16
    t, d = pd.DataFrame({"x": [0, 0, 0, 1]}), pd.DataFrame({"x": [0, 1, 1, 1]})
    assert sdnist_pmse(t, d) == pytest.approx(1 / 16, abs=1e-15)
    assert sdnist_pmse(t.iloc[[0, 3]], d, target_counts=[3, 1]) == pytest.approx(1 / 16, abs=1e-15)
    # identical tables: every leaf p̂ = c -> 0; disjoint: p̂ ∈ {0, 1} -> c(1 − c) = 0.6·0.4
    assert sdnist_pmse(t, t) == pytest.approx(0.0, abs=1e-15)
    assert sdnist_pmse(pd.DataFrame({"x": [0] * 3}), pd.DataFrame({"x": [1] * 2})) == pytest.approx(0.24)
    # depth: x = 0..7 labelled 0 1 0 1 …: greedy Gini splits never separate it; SDNist's depth 6
    # gives 3/16, a depth-5 tree 1/6 (scikit-learn's own tree agrees: the test below)
    assert SDNIST_TREE_DEPTH == 6
    alt_t, alt_d = pd.DataFrame({"x": [0, 2, 4, 6]}), pd.DataFrame({"x": [1, 3, 5, 7]})
    assert sdnist_pmse(alt_t, alt_d) == pytest.approx(3 / 16, abs=1e-15)
    assert sdnist_pmse(alt_t, alt_d, depth=5) == pytest.approx(1 / 6, abs=1e-15)
    with pytest.raises(ValueError, match="NaN"):
        sdnist_pmse(pd.DataFrame({"x": [np.nan]}), d)


def test_tree_equals_scikit_learn_when_installed():
    """scikit-learn is a test extra only; where it is installed, its tree (any random_state: these
    tables have no tied splits) gives the same pMSE."""
    tree = pytest.importorskip("sklearn.tree")
    rng = np.random.default_rng(7)
    for depth, n, m in ((6, 40, 30), (5, 40, 30), (6, 25, 60)):
        t = pd.DataFrame({"x": rng.normal(size=n), "y": rng.integers(0, 4, n)})
        d = pd.DataFrame({"x": rng.normal(0.4, 1.2, m), "y": rng.integers(0, 4, m)})
        X, y = np.vstack([t.to_numpy(), d.to_numpy()]), np.r_[np.zeros(n), np.ones(m)]
        p = tree.DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y).predict_proba(X)[:, 1]
        assert sdnist_pmse(t, d, depth=depth) == pytest.approx(np.mean((p - m / (n + m)) ** 2), rel=1e-12)


@pytest.mark.parametrize("case", _cases("k_marginal"), ids=lambda c: f"{len(c['target'])}cols")
def test_k_marginal_equals_sdnist_own(case):
    t, d = pd.DataFrame(case["target"]), pd.DataFrame(case["deid"])
    assert sdnist_k_marginal(t, d) == pytest.approx(case["sdnist"], rel=1e-12)
    if "pairs" in case:
        assert [list(p) for p in sdnist_marginal_pairs(t.columns)] == case["pairs"]


@pytest.mark.parametrize("case", _cases("bin"), ids=lambda c: f"null={c['null_code']}")
def test_binning_equals_sdnist_own(case):
    t, d = pd.DataFrame(case["target"]), pd.DataFrame(case["deid"])
    if case["null_code"] is not None:               # SDNist's coded nulls are missing values here
        t, d = t.replace(case["null_code"], np.nan), d.replace(case["null_code"], np.nan)
    tb, db = sdnist_bin(t, d, ["x"], ranges={"x": tuple(case["range"])})
    assert tb["x"].tolist() == case["sdnist_target"] and db["x"].tolist() == case["sdnist_deid"]


def test_unique_exact_match_and_apparent_match_equal_sdnist_own():
    (uem,) = _cases("unique_exact_match")
    assert list(sdnist_unique_exact_match(pd.DataFrame(uem["target"]), pd.DataFrame(uem["deid"]))) == uem["sdnist"]
    (am,) = _cases("apparent_match")
    r = sdnist_apparent_match(pd.DataFrame(am["target"]), pd.DataFrame(am["deid"]), am["quasi"])
    assert (r.matched, r.percent) == (am["sdnist_matched"], am["sdnist_percent"])
    assert sorted(r.similarity.tolist()) == am["sdnist_similarity"]


@pytest.mark.parametrize("case", _cases("pmse"), ids=lambda c: f"{len(c['target']['x'])}+{len(c['deid']['x'])}")
def test_pmse_equals_sdnist_own(case):
    t, d = pd.DataFrame(case["target"]), pd.DataFrame(case["deid"])
    assert sdnist_pmse(t, d) == pytest.approx(case["sdnist"], rel=1e-12, abs=1e-15)


def test_the_reports_carry_sdnist_own_numbers():
    real = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0, 50.0], "b": ["x", "y", "x", "y", "x"]})
    syn = pd.DataFrame({"a": [1.0, 2.5, 3.0, 60.0], "b": ["x", "x", "y", "y"]})
    kinds = {"a": "numeric", "b": "categorical"}
    marks = frame_yardsticks(real, syn, kinds, bounds={"a": (0, 100)})
    tb, db = sdnist_bin(real, syn, ["a"], ranges={"a": (0, 100)})
    assert marks.sdnist_k_marginal == pytest.approx(sdnist_k_marginal(tb, db))
    assert marks.sdnist_pmse == pytest.approx(sdnist_pmse(real.assign(b=tb["b"]), syn.assign(b=db["b"])))
    assert {"SDNist_k_marginal", "SDNist_pMSE"} <= set(marks.to_dict())
    atoms = np.array([[0.1, 0.0], [0.5, 1.0], [0.9, 0.0]])
    runs = yardstick_runs(atoms, [2, 1, 1], np.array([atoms[[0, 1, 1]]]), bins=4, levels=(None, 2),
                          rng=np.random.default_rng(0))
    t = pd.DataFrame(atoms, columns=["c0", "c1"])
    d = t.iloc[[0, 1, 1]].reset_index(drop=True)
    tb, db = sdnist_bin(t, d, ["c0"], ranges={"c0": (0, math.inf)}, target_counts=[2, 1, 1])
    assert runs["SDNist_k_marginal"][0] == pytest.approx(sdnist_k_marginal(tb, db, target_counts=[2, 1, 1]))
    assert runs["SDNist_pMSE"][0] == pytest.approx(sdnist_pmse(t, d, target_counts=[2, 1, 1]))
