"""The field's yardsticks (core.evaluation.yardsticks): the project's own (3-way marginal score, UEM, row match
share, logistic pMSE), each against a hand-computed example; SDNist's own are in test_sdnist_yardsticks.py."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from core.evaluation.yardsticks import (
    apparent_match,
    frame_yardsticks,
    k_marginal_score,
    propensity_mse,
    subsample_k_marginal_score,
    unique_exact_match,
    yardstick_runs,
)


def test_k_marginal_score_by_hand():
    # two binary columns: data (0,0),(0,0),(1,1),(1,1); release (0,0),(0,1),(1,1),(1,1)
    # 2-way shares [.5, 0, 0, .5] vs [.25, .25, 0, .5]: TV = .25, score 750
    data, release = [[0, 0], [1, 1]], [[0, 0], [0, 1], [1, 1], [1, 1]]
    assert k_marginal_score(data, release, [2, 2], data_counts=[2, 2]) == pytest.approx(750.0)
    # three columns, k = 2: the pairs (0,1), (0,2), (1,2) have TVs 1, 0, 1 → 1000·(1 − 2/3)
    data3, release3 = [[0, 0, 0], [1, 1, 1]], [[0, 1, 0], [1, 0, 1]]
    assert k_marginal_score(data3, release3, [2, 2, 2], k=2) == pytest.approx(1000 / 3)
    # k = 3 on three columns: one 3-way table, disjoint supports → TV 1, score 0
    assert k_marginal_score(data3, release3, [2, 2, 2]) == pytest.approx(0.0)
    # the reference: a subsample of all n records is the data (1000); of identical records too
    rng = np.random.default_rng(0)
    assert subsample_k_marginal_score(data, [2, 2], 4, rng, data_counts=[2, 2]) == pytest.approx(1000.0)
    assert subsample_k_marginal_score([[1, 0]], [2, 2], 3, rng, data_counts=[9]) == pytest.approx(1000.0)
    # one of the two records: one of the two cells, TV 1/2 → 500
    assert subsample_k_marginal_score([[0], [1]], [2], 1, rng) == pytest.approx(500.0)


def test_unique_exact_match_and_apparent_match_by_hand():
    data = np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]])   # counts 2, 1, 1: two unique records
    release = np.array([[0.3, 0.4], [0.3, 0.4], [0.9, 0.9]])
    share, unique = unique_exact_match(data, release, data_counts=[2, 1, 1])
    assert (share, unique) == (0.5, 2)
    assert apparent_match(data, release) == pytest.approx(2 / 3)
    # a value differing in the last bit is not a match; -0.0 is 0.0
    assert unique_exact_match([[0.3]], [[np.nextafter(0.3, 1)]]) == (0.0, 1)
    assert apparent_match([[0.0]], [[-0.0]]) == 1.0
    assert math.isnan(unique_exact_match(data, release, data_counts=[2, 2, 2])[0])


def test_pmse_by_hand():
    # one binary column: the logistic model is saturated, p̂ = m_g/(n_g + m_g) per group.
    # data 0,0,0,1; release 0,1,1,1: p̂ = 1/4 and 3/4, c = 1/2 → pMSE = (4·(1/4)² + 4·(1/4)²)/8 = 1/16
    assert propensity_mse([[0], [0], [0], [1]], [[0], [1], [1], [1]]) == pytest.approx(1 / 16, abs=1e-12)
    assert propensity_mse([[0], [1]], [[0], [1], [1], [1]], data_counts=[3, 1]) == pytest.approx(1 / 16, abs=1e-12)
    # identical data and release: 0; perfectly separated: c(1 − c)
    assert propensity_mse([[0.2], [0.7]], [[0.2], [0.7]]) == pytest.approx(0.0, abs=1e-15)
    assert propensity_mse([[0]] * 3, [[1]] * 2) == pytest.approx(0.6 * 0.4, abs=1e-9)


def test_frame_yardsticks_with_missing_cells_by_hand():
    real = pd.DataFrame({"a": [1.0, 2.0, np.nan, 4.0], "b": ["x", "y", "x", None]})
    synthetic = pd.DataFrame({"a": [1.0, 2.5, np.nan], "b": ["x", "y", "x"]})
    y = frame_yardsticks(real, synthetic, {"a": "numeric", "b": "categorical"}, real_counts=[1, 2, 1, 1], bins=3,
                         bounds={"a": (1.0, 4.0)})
    # unique records (count 1): (1, x), (nan, x), (4, None); the release holds (1, x) and (nan, x)
    assert (y.unique_exact_match, y.unique_records) == (pytest.approx(2 / 3), 3)
    assert y.apparent_match == pytest.approx(2 / 3)   # (2.5, y) matches no record
    # bins [1,2), [2,3), [3,4] and "missing": data cells (0,x):1 (1,y):2 (miss,x):1 (2,None):1 over n = 5;
    # release (0,x), (1,y), (miss,x) a third each: TV = ½(|.2−⅓| + |.4−⅓| + |.2−⅓| + .2) = 4/15
    assert y.k == 2 and y.k_marginal == pytest.approx(1000 * 11 / 15)


def test_yardstick_runs_equal_the_functions_run_by_run():
    rng = np.random.default_rng(5)
    atoms = np.column_stack([rng.random(40), (rng.integers(0, 3, 40) + 0.5) / 3])
    counts = rng.integers(1, 3, 40)
    releases = np.concatenate([atoms[rng.integers(0, 40, (3, 10, 1))][:, :, 0], rng.random((3, 5, 2))], axis=1)
    table = yardstick_runs(atoms, counts, releases, bins=4, levels=(None, 3), rng=np.random.default_rng(1))
    codes = np.column_stack([np.minimum((atoms[:, 0] * 4).astype(int), 3), (atoms[:, 1] * 3).astype(int)])
    for r, z in enumerate(releases):
        zc = np.column_stack([np.minimum((z[:, 0] * 4).astype(int), 3),
                              np.where(np.isin(z[:, 1], (np.arange(3) + 0.5) / 3), (z[:, 1] * 3).astype(int), 3)])
        assert table["marginal3"][r] == pytest.approx(k_marginal_score(codes, zc, [4, 4], data_counts=counts))
        assert table["UEM"][r] == pytest.approx(unique_exact_match(atoms, z, data_counts=counts)[0])
        assert table["row_match"][r] == pytest.approx(apparent_match(atoms, z))
    assert (table["marginal3_reference"] <= 1000).all() and (table["pMSE_logistic"] >= 0).all()
