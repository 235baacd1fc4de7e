"""core.evaluation.simulation: the dyadic map g and the simulated populations of SPEC §6."""

import importlib.util
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from core.evaluation.simulation import (
    DYADIC_MAX_INDEX,
    dyadic_midpoint,
    grid_beta_mixture,
    sample_dyadic_geometric,
    sample_grid_beta_mixture,
)

SAMPLE_DIR = Path(__file__).resolve().parents[1] / "sample_data"


def g_reference(j: int) -> Fraction:
    """SPEC §6 literally, in exact integer arithmetic: ℓ = ⌊log₂ j⌋, i = j − 2^ℓ, (2i+1)/2^(ℓ+1)."""
    level = j.bit_length() - 1
    return Fraction(2 * (j - 2**level) + 1, 2 ** (level + 1))


def test_g_of_one_to_seven_is_the_first_dyadic_midpoints():
    got = dyadic_midpoint(np.arange(1, 8))
    assert got.tolist() == [1 / 2, 1 / 4, 3 / 4, 1 / 8, 3 / 8, 5 / 8, 7 / 8]


def test_g_matches_exact_definition_and_enumerates_each_level_left_to_right():
    j = np.arange(1, 2**13)
    got = dyadic_midpoint(j)
    assert [Fraction(v) for v in got] == [g_reference(int(v)) for v in j]
    for level in range(13):
        block = got[2**level - 1: 2 ** (level + 1) - 1]
        np.testing.assert_array_equal(block, (2 * np.arange(2**level) + 1) / 2 ** (level + 1))
    assert np.unique(got).size == got.size  # injective


@pytest.mark.parametrize("j", [2**40 + 12345, 2**52 - 1, 2**52, 3 * 2**30 + 7])
def test_g_is_exact_for_large_indices(j):
    assert Fraction(dyadic_midpoint(j)) == g_reference(j)


def test_g_scalar_and_shape():
    assert isinstance(dyadic_midpoint(5), float) and dyadic_midpoint(5) == 3 / 8
    assert dyadic_midpoint(np.float64(6.0)) == 5 / 8
    grid = np.array([[1, 2], [3, 4]])
    np.testing.assert_array_equal(dyadic_midpoint(grid), [[0.5, 0.25], [0.75, 0.125]])


@pytest.mark.parametrize("bad", [0, -3, 1.5, np.nan, [1, 0], DYADIC_MAX_INDEX + 1, "a", []])
def test_g_rejects_non_positive_integers(bad):
    with pytest.raises(ValueError, match="j"):
        dyadic_midpoint(bad)


def _geometric_chi_square(values, p, bins=30):
    """Chi-square of the geometric index j = g^{-1}(x) against p(1-p)^(j-1), tail pooled."""
    lookup = {float(dyadic_midpoint(j)): j for j in range(1, 2**12)}
    j = np.array([lookup[v] for v in values])
    observed = np.bincount(np.minimum(j, bins + 1), minlength=bins + 2)[1:]
    pmf = p * (1 - p) ** np.arange(bins)
    expected = values.size * np.append(pmf, 1 - pmf.sum())
    return stats.chisquare(observed, expected)


def test_dyadic_geometric_sampler_goodness_of_fit():
    p = 0.1
    x = sample_dyadic_geometric(20000, p, np.random.default_rng(11))
    assert x.shape == (20000,) and np.all((x > 0) & (x < 1))
    assert _geometric_chi_square(x, p).pvalue > 1e-3
    # the same test has power: data from p = 0.12 are rejected as p = 0.1
    y = sample_dyadic_geometric(20000, 0.12, np.random.default_rng(11))
    assert _geometric_chi_square(y, p).pvalue < 1e-6


def test_dyadic_geometric_sampler_matches_literal_bernoulli_trials():
    """Two-sample chi-square against Y = number of Bernoulli(p) trials up to the first success."""
    p, size = 0.3, 4000
    rng = np.random.default_rng(5)
    literal = []
    for _ in range(size):
        j = 1
        while rng.random() >= p:
            j += 1
        literal.append(float(dyadic_midpoint(j)))
    fast = sample_dyadic_geometric(size, p, np.random.default_rng(6))
    support = np.union1d(literal, fast)
    table = np.array([[np.sum(np.asarray(literal) == v) for v in support],
                      [np.sum(fast == v) for v in support]])
    keep = table.sum(axis=0) >= 20
    pooled = np.column_stack([table[:, keep], table[:, ~keep].sum(axis=1)])
    assert stats.chi2_contingency(pooled).pvalue > 1e-3


def test_dyadic_geometric_sampler_is_seeded_and_validates():
    a = sample_dyadic_geometric(100, 0.2, np.random.default_rng(3))
    b = sample_dyadic_geometric(100, 0.2, np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(sample_dyadic_geometric(10, 1.0, np.random.default_rng(0)), 0.5)
    for bad_p in (0.0, -0.1, 1.5, np.nan):
        with pytest.raises(ValueError, match="p"):
            sample_dyadic_geometric(10, bad_p, np.random.default_rng(0))
    with pytest.raises(ValueError, match="size"):
        sample_dyadic_geometric(0, 0.1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="rng"):
        sample_dyadic_geometric(10, 0.1, 42)


def test_grid_beta_mixture_law_and_sampler():
    grid, prob = grid_beta_mixture(50, weights=(2, 1), shapes=((2, 5), (6, 2)))
    np.testing.assert_allclose(grid, (np.arange(50) + 0.5) / 50)
    density = 2 / 3 * stats.beta.pdf(grid, 2, 5) + 1 / 3 * stats.beta.pdf(grid, 6, 2)
    np.testing.assert_allclose(prob, density / density.sum(), rtol=1e-12)
    x = sample_grid_beta_mixture(20000, np.random.default_rng(2), grid_size=50, weights=(2, 1),
                                 shapes=((2, 5), (6, 2)))
    observed = np.array([np.sum(x == v) for v in grid])
    assert observed.sum() == x.size  # every draw is a grid point
    assert stats.chisquare(observed, 20000 * prob).pvalue > 1e-3
    with pytest.raises(ValueError, match="shapes"):
        grid_beta_mixture(10, weights=(1, 1), shapes=((1, 1),))
    with pytest.raises(ValueError, match="grid_size"):
        grid_beta_mixture(1)


def test_shipped_dyadic_csv_is_reproducible_and_matches_readme():
    spec = importlib.util.spec_from_file_location("make_dyadic", SAMPLE_DIR / "make_dyadic.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    frame = pd.read_csv(SAMPLE_DIR / "dyadic_geometric.csv")
    assert list(frame.columns) == ["x"] and len(frame) == 10_000
    regenerated = sample_dyadic_geometric(script.SIZE, script.P, np.random.default_rng(script.SEED))
    np.testing.assert_array_equal(frame["x"].to_numpy(), regenerated)
    atoms, counts = np.unique(regenerated, return_counts=True)
    # the figures stated in sample_data/README.md
    assert (atoms.size, int((counts == 1).sum()), int(counts.max())) == (74, 13, 987)
    readme = (SAMPLE_DIR / "README.md").read_text()
    assert "74 distinct values" in readme and "13 singletons" in readme
