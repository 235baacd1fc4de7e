"""The mechanism interface of the comparison (:class:`Mechanism`, :class:`Knob`; the
:class:`~core.privacy.Guarantee` each mechanism states) and the histogram machinery the baselines share: cell counts on the unit
box [0, 1]^d cut into B bins per axis, and points drawn uniformly inside cells
(docs/mathematics.md §4).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from ..validation import (
    MAX_RELEASE_SIZE,
    check_bins,
    check_counts,
    check_integer,
    check_levels,
    check_release_budget,
    check_release_size,
    check_rng,
    check_row_counts,
    check_unit_data,
)
from ..privacy import MAX_CELLS, Guarantee
from ..data import frequency_table


# ======================================================================= interface
@dataclass(frozen=True)
class Knob:
    """One calibrated parameter of a mechanism and why it has that value."""

    parameter: str
    value: float
    reason: str


class Mechanism(ABC):
    """Common interface of every mechanism compared in the dashboard.

    Subclasses set :attr:`name` (a stable key) and :attr:`label` (display name), state
    their :attr:`guarantee`, list their calibrated parameters with :meth:`knobs`, and
    release synthetic data from confidential data on :math:`[0,1]^d`.
    """

    name: str = ""
    label: str = ""
    #: A release size of the mechanism's own (the peers' m = n, :mod:`core.mechanisms.peers`):
    #: the comparison then draws this many records from it instead of the common m.
    release_size: int | None = None

    @property
    @abstractmethod
    def guarantee(self) -> Guarantee:
        """The guarantee stated for releases of any size this object accepts."""

    @abstractmethod
    def knobs(self, n: int, m: int, d: int = 1) -> list[Knob]:
        """Calibrated parameters for ``n`` confidential records, ``m`` released points, ``d`` columns."""

    @abstractmethod
    def release_runs(self, data, m, runs, rng, *, counts=None) -> np.ndarray:
        """``runs`` independent releases of ``m`` points.

        The confidential data are either the ``n`` records themselves (``counts=None``) or
        a frequency table: ``data`` holds rows (typically the ``k`` distinct rows,
        ``prepared.table.atoms``) and ``counts`` how many records each row stands for, so
        that the data are ``numpy.repeat(data, counts, axis=0)`` with
        :math:`n = \\sum_i` ``counts[i]``. From a table every mechanism costs
        :math:`O(k + \\text{runs}\\cdot m)` (never the ``n`` rows), and its release has the
        same law as from the repeated rows.

        Parameters
        ----------
        data : ndarray, shape (n,) or (n, d), values in [0, 1]
            Records, or the rows of a frequency table (then shape (k,) or (k, d)).
        m : int ≥ 1
        runs : int ≥ 1
        rng : numpy.random.Generator
        counts : array_like of int ≥ 1, shape (k,), optional
            Multiplicities of the rows of ``data``; ``None``: one record per row.

        Returns
        -------
        ndarray, shape (runs, m) for 1-D data, (runs, m, d) otherwise
        """

    def release(self, data, m, rng, *, counts=None) -> np.ndarray:
        """One release of ``m`` points: shape (m,) for 1-D data, (m, d) otherwise (``counts``
        as in :meth:`release_runs`)."""
        return self.release_runs(data, m, 1, rng, counts=counts)[0]


def check_release_arguments(data, m, runs, rng, counts=None) -> tuple[np.ndarray, np.ndarray | None, int, int,
                                                                      np.random.Generator, int]:
    """Validate the arguments of :meth:`Mechanism.release_runs` in one place.

    Returns ``(x, counts, m, runs, rng, d)``: the data on the unit box, their multiplicities
    (``None`` for records, else ``int64`` of shape (len(x),), each ≥ 1, summing to at most
    ``MAX_RECORDS``), the release size, the number of runs, the generator and the number of
    columns; refuses a call above ``MAX_RELEASE_VALUES``.
    """
    x = check_unit_data(data)
    counts = check_row_counts(counts, x.shape[0], minimum=1)
    m = check_release_size(m)
    runs = check_integer("runs", runs, minimum=1)
    rng = check_rng(rng)
    d = 1 if x.ndim == 1 else x.shape[1]
    check_release_budget(runs, m, d)
    return x, counts, m, runs, rng, d


def distinct_rows(x: np.ndarray, counts: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The frequency table (sorted distinct rows, multiplicities) of validated release data.

    One reduction for records and for tables (:func:`core.data.frequency_table`, which adds
    the counts of repeated rows), so a mechanism that works on the table gives the same
    release from the records as from their table.
    """
    # deferred: core.data imports core.mechanisms, which imports this module

    table = frequency_table(x, counts)
    return table.atoms, table.counts


# ================================================================ histogram helpers
def axis_sizes(bins: int, d: int, levels=None) -> tuple[int, ...]:
    """Cells per axis of the product domain: ``bins`` on a numeric axis, ``K`` on a categorical
    axis with K public categories (``levels[j] = K``; docs/mathematics.md §4.7)."""
    if levels is None:
        return (bins,) * d
    return tuple(bins if size is None else int(size) for size in levels)


def _cell_shape(bins: int, d: int, levels=None) -> int:
    sizes = axis_sizes(bins, d, levels)
    cells = 1
    for size in sizes:
        cells *= size
    if cells > MAX_CELLS:
        if levels is not None and any(size is not None for size in levels):
            raise ValueError(f"the histogram domain has {cells} cells (bins = {bins} per numeric axis times the "
                             f"public categories, per axis {list(sizes)}), more than {MAX_CELLS}; use fewer bins, "
                             "fewer columns or coarser categories")
        raise ValueError(f"bins must satisfy bins**d <= {MAX_CELLS} cells; got bins={bins} with d={d} "
                         f"columns ({cells} cells)")
    return cells


def category_positions(codes, size: int) -> np.ndarray:
    """Position on [0, 1] of category ``code`` among ``size`` public categories: the midpoint
    :math:`(c + 1/2)/K` of its cell, so that a categorical column lives on the unit box with
    the numeric ones and the histogram machinery puts category ``c`` in cell ``c``
    (docs/mathematics.md §4.7)."""
    return (np.asarray(codes, dtype=np.float64) + 0.5) / float(size)


def category_codes(positions, size: int) -> np.ndarray:
    """Inverse of :func:`category_positions`: the code ``c`` in [0, size) of each position that
    is exactly a category midpoint, and ``size`` ("another category") for any other value —
    e.g. a new value PYPP drew from its uniform base measure (a.s. no midpoint).

    Returns an ``int64`` array of the shape of ``positions``.
    """
    t = np.asarray(positions, dtype=np.float64)
    code = np.clip(np.floor(t * size), 0, size - 1).astype(np.int64)
    return np.where(category_positions(code, size) == t, code, size)


def histogram_counts(data, bins, *, counts=None, levels=None) -> np.ndarray:
    """Cell counts :math:`C_j` of data on :math:`[0,1]^d` with ``bins`` equal bins per numeric axis.

    Bin ``b`` of a numeric axis is :math:`[b/B, (b+1)/B)`, the last one closed at 1; a
    categorical axis with ``K`` public categories (``levels``) has one cell per category, its
    values being the positions :func:`category_positions` (cell ``floor(K t)``). Cells are
    numbered in C order of the per-axis indices (``numpy.ravel_multi_index``).

    Parameters
    ----------
    data : array_like, shape (n,) or (n, d), values in [0, 1]
        Records, or the rows of a frequency table (with ``counts``).
    bins : int ≥ 1
    counts : array_like of int ≥ 1, shape (k,), optional
        Multiplicities of the rows of ``data``: :math:`C_j = \\sum_{i \\in j}` ``counts[i]``,
        the cell counts of the repeated rows at cost O(k).
    levels : sequence of (None or int ≥ 1), length d, optional
        Per column: ``None`` for a numeric axis, ``K`` for a categorical one (default: all numeric).

    Returns
    -------
    ndarray of int64, shape (prod of the axis sizes,) — ``bins**d`` when every axis is numeric
    """
    x = check_unit_data(data)
    bins = check_bins(bins)
    counts = check_row_counts(counts, x.shape[0], minimum=1)
    x2 = x.reshape(x.shape[0], -1)
    d = x2.shape[1]
    levels = check_levels(levels, d)
    cells = _cell_shape(bins, d, levels)
    sizes = np.asarray(axis_sizes(bins, d, levels), dtype=np.int64)
    idx = np.minimum((x2 * sizes).astype(np.int64), sizes - 1)
    flat = np.ravel_multi_index(tuple(idx.T), tuple(sizes.tolist())) if d > 1 else idx[:, 0]
    if counts is None:
        return np.bincount(flat, minlength=cells).astype(np.int64)
    # Float64 sums of integers are exact below 2**53 (counts sum to at most MAX_RECORDS).
    return np.bincount(flat, weights=counts.astype(np.float64), minlength=cells).astype(np.int64)


def cells_to_points(cell_counts, bins: int, d: int, rng: np.random.Generator, *,
                    squeeze: bool = True, levels=None) -> np.ndarray:
    """Points inside cells, given how many land in each cell, in random order.

    Uniform inside the cell on a numeric axis; the category's position
    (:func:`category_positions`) on a categorical axis (``levels``).

    Parameters
    ----------
    cell_counts : ndarray of int ≥ 0, shape (runs, cells)
        ``cells`` = the product of the axis sizes (``bins**d`` when all axes are numeric).
        Each row sums to the same ``m`` in [1, MAX_RELEASE_SIZE]; runs × m × d ≤ MAX_RELEASE_VALUES.
    bins, d : int
    rng : numpy.random.Generator
    squeeze : bool
        Return shape (runs, m) when ``d == 1``.
    levels : sequence of (None or int ≥ 1), length d, optional
        As in :func:`histogram_counts`.

    Returns
    -------
    ndarray, shape (runs, m) or (runs, m, d)
    """
    counts = check_counts(cell_counts, "cell_counts", maximum=MAX_RELEASE_SIZE)
    bins = check_bins(bins)
    d = check_integer("d", d, minimum=1)
    rng = check_rng(rng)
    levels = check_levels(levels, d)
    sizes = axis_sizes(bins, d, levels)
    if counts.ndim != 2 or counts.shape[0] == 0 or counts.shape[1] != _cell_shape(bins, d, levels):
        raise ValueError(f"cell_counts must have shape (runs, cells) = (runs, {_cell_shape(bins, d, levels)}), "
                         f"got {counts.shape}")
    runs, cells = counts.shape
    totals = counts.sum(axis=1)
    m = int(totals[0])
    if m < 1 or np.any(totals != m):
        raise ValueError(f"every row of cell_counts must sum to the same m >= 1, got sums in "
                         f"[{int(totals.min())}, {int(totals.max())}]")
    check_release_budget(runs, check_release_size(m), d)
    occupied = np.flatnonzero(counts.ravel())  # memory O(runs·m), not O(runs·cells)
    flat = np.repeat(occupied % cells, counts.ravel()[occupied]).reshape(runs, m)
    flat = rng.permuted(flat, axis=1)
    if d == 1:
        idx = flat[..., None]
    else:
        idx = np.stack(np.unravel_index(flat, sizes), axis=-1)
    # One uniform per coordinate, also on categorical axes, so that an all-numeric domain
    # draws exactly as before; a categorical coordinate is then put on its category's position.
    points = (idx + rng.random(idx.shape)) / np.asarray(sizes, dtype=np.float64)
    if levels is not None:
        for j, size in enumerate(levels):
            if size is not None:
                points[..., j] = category_positions(idx[..., j], size)
    return points[..., 0] if (d == 1 and squeeze) else points


def _normalise_rows(weights: np.ndarray) -> np.ndarray:
    """Rows divided by their sums; an all-zero row becomes uniform (docs/mathematics.md §4.1)."""
    totals = weights.sum(axis=1, keepdims=True)
    empty = totals[:, 0] <= 0
    if empty.any():
        weights = weights.copy()
        weights[empty] = 1.0
        totals = weights.sum(axis=1, keepdims=True)
    return weights / totals


class HistogramMechanism(Mechanism):
    """A histogram baseline: cell probabilities from the counts, then ``m`` uniform-in-cell draws.

    The domain is the product of ``bins`` equal bins per numeric axis and, with ``levels``,
    the public categories of each categorical axis (docs/mathematics.md §4.7): a public
    partition fixed before the data are seen, so every guarantee of §4 holds with
    :math:`k_B` = the number of cells.

    Parameters
    ----------
    bins : int ≥ 1
    levels : sequence of (None or int ≥ 1), optional
        Per column: ``None`` (numeric) or the number K of public categories (categorical,
        values at :func:`category_positions`); default every column numeric.
    """

    def __init__(self, bins, levels=None):
        self.bins = check_bins(bins)
        self.levels = check_levels(levels)

    def cells(self, d: int = 1) -> int:
        """:math:`k_B`, the number of cells for ``d`` columns (``bins**d`` when all are numeric)."""
        if self.levels is not None and len(self.levels) != d:
            raise ValueError(f"this mechanism's domain has {len(self.levels)} columns, got d = {d}")
        return _cell_shape(self.bins, d, self.levels)

    @abstractmethod
    def cell_probabilities(self, counts: np.ndarray, m: int, runs: int,
                           rng: np.random.Generator) -> np.ndarray:
        """Released cell probabilities, shape (runs, cells), rows summing to one."""

    def release_runs(self, data, m, runs, rng, *, counts=None) -> np.ndarray:
        x, weights, m, runs, rng, d = check_release_arguments(data, m, runs, rng, counts)
        # The mechanism sees the cell counts only: from records or from a table they are equal.
        counts = histogram_counts(x, self.bins, counts=weights, levels=self.levels)
        # Runs are processed in blocks so that the (runs × cells) probability matrix stays
        # within ~32 MB however many cells there are.
        block = max(1, (1 << 22) // counts.size)
        parts = []
        for start in range(0, runs, block):
            size = min(block, runs - start)
            q = self.cell_probabilities(counts, m, size, rng)
            parts.append(cells_to_points(rng.multinomial(m, q), self.bins, d, rng, squeeze=x.ndim == 1,
                                         levels=self.levels))
        return parts[0] if len(parts) == 1 else np.concatenate(parts)
