"""The yardsticks' cost is capped on wide tables (issue 33, item 6; docs/peers.md §4).

The k-marginal score scored every set of 3 columns (1 313 400 sets at 200 columns, past 240 s)
and pMSE fitted a logistic model as wide as all one-hot columns together (cubic in the width).
Past a fixed budget each now works on a uniform sample drawn with the caller's Generator, states
the count, and leaves narrow tables exactly as before.
"""

from __future__ import annotations

import contextlib
import itertools
import signal

import numpy as np
import pandas as pd
import pytest

from core.evaluation import yardsticks as Y
from guards import HANG_GUARD_S


@contextlib.contextmanager
def _hang_guard(seconds: float):
    """Raise inside the block once ``seconds`` have passed (the old code ran for minutes)."""
    def _raise(*_):
        raise TimeoutError(f"still running after {seconds} s")
    previous = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _wide(rng, n, d):
    return pd.DataFrame({f"c{j}": rng.integers(0, 5, n) if j % 2 else rng.normal(size=n) for j in range(d)})


def test_two_hundred_columns_finish_and_state_the_sample():
    rng, d = np.random.default_rng(0), 200
    kinds = {f"c{j}": "categorical" if j % 2 else "numeric" for j in range(d)}
    with _hang_guard(HANG_GUARD_S):
        marks = Y.frame_yardsticks(_wide(rng, 300, d), _wide(rng, 300, d), kinds, rng=np.random.default_rng(1))
        runs = Y.yardstick_runs(rng.random((300, d)), np.ones(300, dtype=int), rng.random((2, 300, d)), bins=10,
                                levels=[4 if j % 2 else None for j in range(d)], rng=np.random.default_rng(1))
    total = 200 * 199 * 198 // 6
    assert (marks.k_marginal_sets, marks.k_marginal_sets_total) == (Y.MAX_COLUMN_SETS, total)
    assert (runs.attrs["k_marginal_sets"], runs.attrs["k_marginal_sets_total"]) == (Y.MAX_COLUMN_SETS, total)
    assert marks.to_dict()["k_marginal_sets"] == Y.MAX_COLUMN_SETS
    assert 0 < marks.pmse_columns < marks.pmse_columns_total == d
    assert 0 < runs.attrs["pMSE_columns"] < runs.attrs["pMSE_columns_total"] == d
    assert 0.0 <= marks.k_marginal <= 1000.0 and np.isfinite(runs.to_numpy()).all()


def _all_sets_score(codes_x, codes_z, sizes, k):
    tvs = []
    for sub in itertools.combinations(range(len(sizes)), k):
        shape = [sizes[a] for a in sub]
        p = np.bincount(np.ravel_multi_index(codes_x[:, sub].T, shape), minlength=int(np.prod(shape))) / len(codes_x)
        q = np.bincount(np.ravel_multi_index(codes_z[:, sub].T, shape), minlength=int(np.prod(shape))) / len(codes_z)
        tvs.append(0.5 * np.abs(p - q).sum())
    return 1000.0 * (1.0 - np.mean(tvs))


def test_few_columns_score_every_set_as_before():
    rng = np.random.default_rng(2)
    x, z = rng.integers(0, 3, (40, 5)), rng.integers(0, 3, (30, 5))
    # no Generator needed, none consumed, and the score is the mean over all 10 triples
    assert Y.k_marginal_score(x, z, [3] * 5) == pytest.approx(_all_sets_score(x, z, [3] * 5, 3))
    marks = Y.frame_yardsticks(pd.DataFrame(x).add_prefix("c"), pd.DataFrame(z).add_prefix("c"),
                               {f"c{j}": "categorical" for j in range(5)}, rng=np.random.default_rng(0))
    assert (marks.k_marginal_sets, marks.k_marginal_sets_total) == (10, 10)
    assert (marks.pmse_columns, marks.pmse_columns_total) == (5, 5)
    assert marks.k_marginal == pytest.approx(_all_sets_score(x, z, [3] * 5, 3))


def test_sampled_sets_are_distinct_and_an_unbiased_estimate():
    rng = np.random.default_rng(3)
    d = 14                                       # 364 triples > MAX_COLUMN_SETS
    x, z = rng.integers(0, 2, (60, d)), rng.integers(0, 2, (60, d))
    z[:, :4] = x[:, :4]                          # some triples fit well, others not: the TVs differ
    full = _all_sets_score(x, z, [2] * d, 3)
    with pytest.raises(ValueError, match="rng"):
        Y.k_marginal_score(x, z, [2] * d)
    sets, total = Y._subsets(d, 3, np.random.default_rng(0))
    assert total == 364 and len(set(sets)) == len(sets) == Y.MAX_COLUMN_SETS
    estimates = [Y.k_marginal_score(x, z, [2] * d, rng=np.random.default_rng(s)) for s in range(40)]
    # a sample without replacement of 200 of 364: mean of 40 estimates within 4 standard errors
    assert abs(np.mean(estimates) - full) < 4 * np.std(estimates) / np.sqrt(40) + 1e-9
    assert np.std(estimates) > 0


def test_pmse_design_keeps_at_most_max_levels_of_a_wide_category():
    rng = np.random.default_rng(4)
    real = pd.DataFrame({"a": rng.integers(0, 1000, 2000)})
    marks = Y.frame_yardsticks(real, real.sample(500, random_state=0), {"a": "categorical"},
                               rng=np.random.default_rng(0))
    assert Y._kept_levels(real["a"].to_numpy(), 1000).size == Y.MAX_LEVELS
    assert marks.pmse_columns == 1 and 0.0 <= marks.pmse < 0.25


def test_high_cardinality_columns_keep_sparse_tables_with_the_same_score():
    rng = np.random.default_rng(5)
    x, z = rng.integers(0, 4, (50, 3)), rng.integers(0, 4, (40, 3))
    dense = Y.k_marginal_score(x, z, [4, 4, 4])
    # the same cells in columns declared 200 000 categories wide: 8·10^15 cells, never allocated
    assert Y.k_marginal_score(x, z, [200_000] * 3) == pytest.approx(dense, abs=1e-9)
    x2, z2 = rng.integers(0, 200_000, (300, 3)), rng.integers(0, 200_000, (300, 3))
    with _hang_guard(HANG_GUARD_S):
        assert Y.k_marginal_score(x2, z2, [200_000] * 3) == pytest.approx(0.0)   # no cell in common
