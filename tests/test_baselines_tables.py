"""Tests of core.mechanisms' histogram baselines on frequency tables (issue 13) and on the
product domain of numeric bins and public categories (issue 24): the same releases from a
table as from its records, at a cost in k; categories released at their public positions."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from core import mechanisms as bl
from core.mechanisms import (
    Bootstrap,
    DirichletMultinomialHistogram,
    DirichletPosteriorSampling,
    GaussianHistogram,
    LaplaceHistogram,
    PseudoPosteriorMechanism,
    SmoothedHistogram,
    TruncatedDirichletPosteriorSampling,
    cells_to_points,
    histogram_counts,
)
from core.privacy import smoothed_histogram_lambda


# ------------------------------------------------------------------ releases from a frequency table (issue 13)
def _tied_rows(rng, n, d):
    """Records on [0, 1]^d with ties and singletons, and their table (sorted distinct rows, counts)."""
    x = np.round(rng.random((n, d)), 1 if d > 1 else 2)
    x = x[:, 0] if d == 1 else x
    atoms, counts = np.unique(x, axis=0 if d > 1 else None, return_counts=True)
    return x, atoms, counts


@pytest.mark.parametrize("d", [1, 2])
def test_histogram_counts_from_a_table_equal_those_of_the_records(d):
    rng = np.random.default_rng(90)
    x, atoms, counts = _tied_rows(rng, 3000, d)
    for bins in (1, 7, 10):
        want = bl.histogram_counts(x, bins)
        assert np.array_equal(bl.histogram_counts(atoms, bins, counts=counts), want)
        # a table need not have distinct rows: repeated rows add their counts
        i = int(np.argmax(counts))
        split_counts = np.concatenate([counts, [1]])
        split_counts[i] -= 1
        split_atoms = np.concatenate([atoms, atoms[i:i + 1]])
        assert np.array_equal(bl.histogram_counts(split_atoms, bins, counts=split_counts), want)


HISTOGRAM_MECHANISMS = [
    lambda: bl.LaplaceHistogram(1.0, 8), lambda: bl.GaussianHistogram(1.0, 1e-5, 8),
    lambda: bl.SmoothedHistogram(2.0, 8), lambda: bl.DirichletMultinomialHistogram(2.0, 8),
    lambda: bl.DirichletMultinomialHistogram(2.0, 8, alpha_rule="data-dependent"),
    lambda: bl.DirichletPosteriorSampling(2.0, 1e-5, 8), lambda: TruncatedDirichletPosteriorSampling(2.0, 8),
    lambda: PseudoPosteriorMechanism(2.0, 8), lambda: PseudoPosteriorMechanism(2.0, 8, weighting="scalar"),
]


@pytest.mark.parametrize("d", [1, 2])
@pytest.mark.parametrize("make", HISTOGRAM_MECHANISMS)
def test_histogram_mechanisms_release_the_same_from_the_table(make, d):
    # The mechanism sees only the cell counts, equal from the records and from their table:
    # the same generator gives the same release, bit for bit.
    rng = np.random.default_rng(91)
    x, atoms, counts = _tied_rows(rng, 2000, d)
    mech = make()
    from_rows = mech.release_runs(x, 40, 6, np.random.default_rng(5))
    from_table = mech.release_runs(atoms, 40, 6, np.random.default_rng(5), counts=counts)
    assert np.array_equal(from_rows, from_table)
    assert np.array_equal(mech.release(x, 9, np.random.default_rng(6)),
                          mech.release(atoms, 9, np.random.default_rng(6), counts=counts))


@pytest.mark.parametrize("d", [1, 2])
def test_bootstrap_from_a_table_is_the_bootstrap_of_the_repeated_rows(d):
    rng = np.random.default_rng(92)
    _, atoms, counts = _tied_rows(rng, 1500, d)
    repeated = np.repeat(atoms, counts, axis=0)
    # the same record indices: identical to resampling numpy.repeat(atoms, counts) ...
    want = Bootstrap().release_runs(repeated, 300, 20, np.random.default_rng(8))
    got = Bootstrap().release_runs(atoms, 300, 20, np.random.default_rng(8), counts=counts)
    assert np.array_equal(got, want)
    # ... and each distinct row is drawn with probability counts/n (chi-square on the row counts)
    draws = Bootstrap().release_runs(atoms, 20_000, 5, np.random.default_rng(9), counts=counts)
    flat = draws.reshape(-1, d)
    index = np.unique(np.concatenate([atoms.reshape(-1, d), flat]), axis=0, return_inverse=True)[1].ravel()
    observed = np.bincount(index[atoms.shape[0]:], minlength=atoms.shape[0])
    expected = counts / counts.sum() * flat.shape[0]
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_release_from_a_table_costs_k_not_n():
    # n = 10**12 records in 1000 distinct values: the rows could never be built (8 TB).
    atoms = np.linspace(0.0, 1.0, 1000)
    counts = np.full(1000, 10**9)
    for mech in (bl.LaplaceHistogram(1.0, 20), bl.SmoothedHistogram(1.0, 20), Bootstrap()):
        z = mech.release_runs(atoms, 500, 10, np.random.default_rng(1), counts=counts)
        assert z.shape == (10, 500) and np.all((z >= 0) & (z <= 1))
    cells = bl.histogram_counts(atoms, 20, counts=counts)
    assert cells.sum() == 10**12 and cells.dtype == np.int64


@pytest.mark.parametrize("counts, message", [
    ([1, 2], "counts must have one entry per row"),
    ([1, 0, 2], r"counts must be integers in \[1, ∞\], got 0"),
    ([1, 1.5, 2], "counts must be integers"),
    ([[1, 1, 1]], "counts"),
])
def test_bad_counts_are_a_value_error_naming_them(counts, message):
    atoms = np.array([0.1, 0.5, 0.9])
    with pytest.raises(ValueError, match=message):
        bl.LaplaceHistogram(1.0, 5).release_runs(atoms, 10, 1, np.random.default_rng(0), counts=counts)
    with pytest.raises(ValueError, match=message):
        Bootstrap().release(atoms, 10, np.random.default_rng(0), counts=counts)
    with pytest.raises(ValueError, match=message):
        bl.histogram_counts(atoms, 5, counts=counts)


# ------------------------------------------------------------------ product domain: numeric bins × public categories
def test_category_positions_and_codes_round_trip():
    from core.mechanisms import category_codes, category_positions

    for size in (1, 2, 3, 7, 1000):
        codes = np.arange(size)
        t = category_positions(codes, size)
        assert np.all((t > 0) & (t < 1))
        np.testing.assert_array_equal(category_codes(t, size), codes)
    # anything that is not exactly a midpoint is "another category" (code K), e.g. a uniform new value
    assert category_codes(np.array([0.0, 1.0, 0.3, np.nextafter(0.25, 1)]), 2).tolist() == [2, 2, 2, 2]


def test_histogram_counts_on_the_product_domain_equal_enumeration():
    # two numeric axes (3 bins) and a categorical axis with 4 public categories, one never observed
    from core.mechanisms import category_positions

    rng = np.random.default_rng(31)
    n, bins, size = 500, 3, 4
    x = np.column_stack([rng.random(n), category_positions(rng.integers(0, 3, n), size), rng.random(n)])
    x[0, 0], x[1, 2] = 1.0, 0.0                     # the closed last bin and the first edge
    counts = rng.integers(1, 5, n)
    levels = (None, size, None)
    got = histogram_counts(x, bins, counts=counts, levels=levels)
    assert got.shape == (bins * size * bins,)
    expected = np.zeros((bins, size, bins), dtype=np.int64)
    for row, c in zip(x, counts):     # literal definition: bin b of [b/B, (b+1)/B), last closed; cell = category
        a = min(int(row[0] * bins), bins - 1)
        k = int(round(row[1] * size - 0.5))
        b = min(int(row[2] * bins), bins - 1)
        expected[a, k, b] += c
    np.testing.assert_array_equal(got, expected.ravel())
    assert got.reshape(bins, size, bins)[:, 3, :].sum() == 0       # the unobserved public category
    # all-numeric levels are the old histogram exactly
    np.testing.assert_array_equal(histogram_counts(x[:, [0, 2]], bins, levels=(None, None)),
                                  histogram_counts(x[:, [0, 2]], bins))


def test_cells_to_points_puts_categories_at_their_positions():
    from core.mechanisms import category_codes, category_positions

    rng = np.random.default_rng(5)
    bins, size, m = 4, 3, 600
    cell_counts = rng.multinomial(m, np.full(bins * size, 1 / (bins * size)), size=2)
    pts = cells_to_points(cell_counts, bins, 2, rng, levels=(None, size))
    assert pts.shape == (2, m, 2)
    codes = category_codes(pts[..., 1], size)
    assert set(np.unique(pts[..., 1])) <= set(category_positions(np.arange(size), size))
    for r in range(2):                 # the points land in the cells they were counted in
        idx = np.minimum((pts[r, :, 0] * bins).astype(int), bins - 1) * size + codes[r]
        np.testing.assert_array_equal(np.bincount(idx, minlength=bins * size), cell_counts[r])
    # an all-numeric call draws exactly as before (same generator state, same points)
    numeric_counts = rng.multinomial(m, np.full(16, 1 / 16), size=2)
    a = cells_to_points(numeric_counts, 4, 2, np.random.default_rng(1))
    b = cells_to_points(numeric_counts, 4, 2, np.random.default_rng(1), levels=(None, None))
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("mechanism", [
    lambda levels: LaplaceHistogram(1.0, 5, levels=levels),
    lambda levels: GaussianHistogram(1.0, 1e-3, 5, levels=levels),
    lambda levels: SmoothedHistogram(1.0, 5, levels=levels),
    lambda levels: DirichletMultinomialHistogram(1.0, 5, levels=levels),
    lambda levels: DirichletPosteriorSampling(1.0, 1e-3, 5, levels=levels),
    lambda levels: bl.TruncatedDirichletPosteriorSampling(1.0, 5, levels=levels),
    lambda levels: bl.PseudoPosteriorMechanism(1.0, 5, levels=levels),
])
def test_histogram_mechanisms_on_mixed_columns_release_public_categories_only(mechanism):
    from core.mechanisms import category_codes, category_positions

    rng = np.random.default_rng(9)
    n, size = 300, 4
    x = np.column_stack([rng.beta(2, 5, n), category_positions(rng.integers(0, size, n), size)])
    mech = mechanism((None, size))
    assert mech.cells(2) == 5 * size        # k_B = bins per numeric axis × public categories
    z = mech.release_runs(x, 200, 3, rng)
    assert z.shape == (3, 200, 2)
    assert np.all((z[..., 0] >= 0) & (z[..., 0] <= 1))
    assert np.all(category_codes(z[..., 1], size) < size)   # only the public categories, at their positions


def test_smoothed_histogram_lambda_uses_the_product_cell_count():
    n, m, eps, bins, size = 1000, 50, 1.0, 10, 7
    mech = SmoothedHistogram(eps, bins, levels=(None, size, None))
    assert mech.smoothing(n, m, 3) == pytest.approx(smoothed_histogram_lambda(n, bins * size * bins, m, eps))
    with pytest.raises(ValueError, match="columns"):
        mech.cells(2)
    with pytest.raises(ValueError, match="cells"):
        LaplaceHistogram(1.0, 1000, levels=(None, None, 5)).cells(3)
    with pytest.raises(ValueError, match="levels"):
        LaplaceHistogram(1.0, 10, levels=(None, 0))
