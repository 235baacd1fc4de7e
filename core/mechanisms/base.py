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
def _cell_shape(bins: int, d: int) -> int:
    cells = bins ** d
    if cells > MAX_CELLS:
        raise ValueError(f"bins must satisfy bins**d <= {MAX_CELLS} cells; got bins={bins} with d={d} "
                         f"columns ({cells} cells)")
    return cells


def histogram_counts(data, bins, *, counts=None) -> np.ndarray:
    """Cell counts :math:`C_j` of data on :math:`[0,1]^d` with ``bins`` equal bins per axis.

    Bin ``b`` of an axis is :math:`[b/B, (b+1)/B)`, the last one closed at 1. Cells are
    numbered in C order of the per-axis bin indices (``numpy.ravel_multi_index``).

    Parameters
    ----------
    data : array_like, shape (n,) or (n, d), values in [0, 1]
        Records, or the rows of a frequency table (with ``counts``).
    bins : int ≥ 1
    counts : array_like of int ≥ 1, shape (k,), optional
        Multiplicities of the rows of ``data``: :math:`C_j = \\sum_{i \\in j}` ``counts[i]``,
        the cell counts of the repeated rows at cost O(k).

    Returns
    -------
    ndarray of int64, shape (bins**d,)
    """
    x = check_unit_data(data)
    bins = check_bins(bins)
    counts = check_row_counts(counts, x.shape[0], minimum=1)
    x2 = x.reshape(x.shape[0], -1)
    d = x2.shape[1]
    cells = _cell_shape(bins, d)
    idx = np.minimum((x2 * bins).astype(np.int64), bins - 1)
    flat = np.ravel_multi_index(tuple(idx.T), (bins,) * d) if d > 1 else idx[:, 0]
    if counts is None:
        return np.bincount(flat, minlength=cells).astype(np.int64)
    # Float64 sums of integers are exact below 2**53 (counts sum to at most MAX_RECORDS).
    return np.bincount(flat, weights=counts.astype(np.float64), minlength=cells).astype(np.int64)


def cells_to_points(cell_counts, bins: int, d: int, rng: np.random.Generator, *,
                    squeeze: bool = True) -> np.ndarray:
    """Uniform points inside cells, given how many land in each cell, in random order.

    Parameters
    ----------
    cell_counts : ndarray of int ≥ 0, shape (runs, bins**d)
        Each row sums to the same ``m`` in [1, MAX_RELEASE_SIZE]; runs × m × d ≤ MAX_RELEASE_VALUES.
    bins, d : int
    rng : numpy.random.Generator
    squeeze : bool
        Return shape (runs, m) when ``d == 1``.

    Returns
    -------
    ndarray, shape (runs, m) or (runs, m, d)
    """
    counts = check_counts(cell_counts, "cell_counts", maximum=MAX_RELEASE_SIZE)
    bins = check_bins(bins)
    d = check_integer("d", d, minimum=1)
    rng = check_rng(rng)
    if counts.ndim != 2 or counts.shape[0] == 0 or counts.shape[1] != _cell_shape(bins, d):
        raise ValueError(f"cell_counts must have shape (runs, bins**d) = (runs, {bins}**{d}), got {counts.shape}")
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
        idx = np.stack(np.unravel_index(flat, (bins,) * d), axis=-1)
    points = (idx + rng.random(idx.shape)) / bins
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
    """A histogram baseline: cell probabilities from the counts, then ``m`` uniform-in-cell draws."""

    def __init__(self, bins):
        self.bins = check_bins(bins)

    @abstractmethod
    def cell_probabilities(self, counts: np.ndarray, m: int, runs: int,
                           rng: np.random.Generator) -> np.ndarray:
        """Released cell probabilities, shape (runs, cells), rows summing to one."""

    def release_runs(self, data, m, runs, rng, *, counts=None) -> np.ndarray:
        x, weights, m, runs, rng, d = check_release_arguments(data, m, runs, rng, counts)
        # The mechanism sees the cell counts only: from records or from a table they are equal.
        counts = histogram_counts(x, self.bins, counts=weights)
        # Runs are processed in blocks so that the (runs × cells) probability matrix stays
        # within ~32 MB however many cells there are.
        block = max(1, (1 << 22) // counts.size)
        parts = []
        for start in range(0, runs, block):
            size = min(block, runs - start)
            q = self.cell_probabilities(counts, m, size, rng)
            parts.append(cells_to_points(rng.multinomial(m, q), self.bins, d, rng, squeeze=x.ndim == 1))
        return parts[0] if len(parts) == 1 else np.concatenate(parts)
