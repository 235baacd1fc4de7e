"""Utility metrics of a synthetic release against the confidential data (SPEC §5).

* :func:`wasserstein1` — the 1-Wasserstein distance between two empirical measures
  (POT): exact in 1-D (``ot.wasserstein_1d``); with several columns exact
  (``ot.emd2`` on the distinct rows with their weights, Euclidean ground cost) while the
  cost matrix fits a memory budget, otherwise the sliced W1 (``ot.sliced_wasserstein_distance``).
  The result is a ``float`` that also says which one was computed (:class:`W1Distance`).
* :func:`wasserstein1_runs` — exact 1-D W1 of many releases at once (the comparison).
* KDE: :func:`kde_grid`, :func:`kde_on_grid` (``scipy.stats.gaussian_kde``),
  :func:`kde_l2` :math:`=\\big(\\int(\\hat f_x-\\hat f_Z)^2\\big)^{1/2}` (thesis §7), and the
  vectorised :func:`binned_kde_runs` / :func:`kde_l2_runs` for many releases.
* :func:`column_summary` and :func:`summary_table` — mean, SD, Q1, median, Q3, W1 and
  KDE-L2 per numeric column, as a pandas DataFrame.
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np
import ot
import pandas as pd
from scipy import stats
from scipy.spatial import distance

from .validation import (
    KDE_MIN_BANDWIDTH,
    check_finite_array,
    check_integer,
    check_metric_sample,
    check_multiplicities,
    check_real,
    check_rng,
    check_sample,
    check_sample_weights,
)

__all__ = [
    "MAX_COST_BYTES",
    "MAX_KDE_GRID",
    "MAX_PROJECTIONS",
    "MAX_SLICED_WORK",
    "W1Distance",
    "batched_wasserstein1",
    "binned_kde_runs",
    "column_summary",
    "joint_w1_runs",
    "kde_grid",
    "kde_l2",
    "kde_l2_runs",
    "kde_on_grid",
    "random_directions",
    "repeated_quantiles",
    "scott_bandwidth",
    "signed_wasserstein1",
    "sliced_wasserstein1_runs",
    "summary_runs",
    "summary_table",
    "wasserstein1",
    "wasserstein1_runs",
]

#: Default memory budget of the exact multi-column W1 cost matrix (bytes).
DEFAULT_MAX_COST_BYTES = 32 * 2**20
#: Default number of random directions of the sliced W1.
DEFAULT_N_PROJECTIONS = 200
#: Seed of the sliced W1 projections when no generator is given (deterministic result).
DEFAULT_SLICED_SEED = 0
#: Largest memory budget of the exact multi-column W1 cost matrix a caller may grant (bytes).
MAX_COST_BYTES = 2**30
#: Largest number of random directions of a sliced W1.
MAX_PROJECTIONS = 10_000
#: Largest work of one :func:`sliced_wasserstein1_runs` call, directions × (R·m + n) projected
#: values (a few seconds); larger requests are refused rather than left to run for minutes.
MAX_SLICED_WORK = 2 * 10**9
#: Largest number of points of a KDE evaluation grid.
MAX_KDE_GRID = 2**20


class W1Distance(float):
    """A W1 value that remembers how it was computed.

    Behaves as a ``float``. Attributes:

    method : {"exact-1d", "exact-emd", "sliced"}
    n_projections : int or None
        Number of random directions (sliced only).
    seed : int or None
        Seed of the random directions (sliced only).
    """

    method: str
    n_projections: int | None
    seed: int | None

    def __new__(cls, value, method: str, n_projections: int | None = None, seed: int | None = None):
        obj = super().__new__(cls, value)
        obj.method = method
        obj.n_projections = n_projections
        obj.seed = seed
        return obj

    @property
    def label(self) -> str:
        """How to name the number in the UI."""
        if self.method == "sliced":
            return f"sliced W1 ({self.n_projections} random directions)"
        return "W1 (exact)"

    def __repr__(self) -> str:
        return f"W1Distance({float(self)!r}, method={self.method!r})"


def _metric_sample(values, name: str, **kwargs) -> np.ndarray:
    """:func:`check_sample` plus the magnitude limit ``MAX_ABS_VALUE`` of the utility metrics."""
    return check_metric_sample(check_sample(values, name, **kwargs), name)


def _as_points(values, name: str) -> np.ndarray:
    arr = _metric_sample(values, name)
    return arr.reshape(arr.shape[0], -1)


def _distinct_rows(points: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    atoms, inverse = np.unique(points, axis=0, return_inverse=True)
    return atoms, np.bincount(inverse.ravel(), weights=weights, minlength=atoms.shape[0])


def wasserstein1(a, b, a_weights=None, b_weights=None, *, max_cost_bytes: float = DEFAULT_MAX_COST_BYTES,
                 n_projections: int = DEFAULT_N_PROJECTIONS,
                 rng: np.random.Generator | None = None) -> W1Distance:
    """1-Wasserstein distance between two (weighted) empirical measures (SPEC §5, §7).

    .. math:: W_1(\\mu,\\nu) = \\min_{\\pi\\in\\Pi(\\mu,\\nu)} \\int \\lVert u-v\\rVert_2\\, d\\pi(u,v)

    * one column: exact, ``ot.wasserstein_1d`` (:math:`\\int|F_\\mu-F_\\nu|`);
    * several columns: exact linear program ``ot.emd2`` on the distinct rows of each
      sample with their total weights, while the ``k_a × k_b`` cost matrix takes at most
      ``max_cost_bytes``; beyond that the sliced W1
      :math:`\\frac1P\\sum_{p}W_1(\\langle\\theta_p,\\mu\\rangle,\\langle\\theta_p,\\nu\\rangle)`
      over ``n_projections`` random directions (a lower bound of W1). The returned
      :class:`W1Distance` says which was computed.

    Parameters
    ----------
    a : array_like, shape (n_a,) or (n_a, d)
    b : array_like, shape (n_b,) or (n_b, d)
    a_weights, b_weights : array_like, shape (n_a,) / (n_b,), optional
        Non-negative weights (normalised here); uniform by default.
    max_cost_bytes : float in (0, MAX_COST_BYTES]
        Memory budget of the exact multi-column cost matrix (8 bytes per entry).
    n_projections : int in [1, MAX_PROJECTIONS]
    rng : numpy.random.Generator, optional
        Draws the seed of the sliced directions; without it the seed is
        ``DEFAULT_SLICED_SEED`` (a deterministic result).

    Returns
    -------
    W1Distance
        A ``float`` with ``method`` in {"exact-1d", "exact-emd", "sliced"}.
    """
    pa = _as_points(a, "a")
    pb = _as_points(b, "b")
    if pa.shape[1] != pb.shape[1]:
        raise ValueError(f"a and b must have the same number of columns, got {pa.shape[1]} and {pb.shape[1]}")
    wa = np.full(pa.shape[0], 1.0 / pa.shape[0]) if a_weights is None else \
        check_sample_weights(a_weights, pa.shape[0], "a_weights")
    wb = np.full(pb.shape[0], 1.0 / pb.shape[0]) if b_weights is None else \
        check_sample_weights(b_weights, pb.shape[0], "b_weights")
    max_cost_bytes = check_real("max_cost_bytes", max_cost_bytes, low=0.0, high=MAX_COST_BYTES, low_open=True)
    n_projections = check_integer("n_projections", n_projections, minimum=1, maximum=MAX_PROJECTIONS)
    if pa.shape[1] == 1:
        value = ot.wasserstein_1d(pa[:, 0], pb[:, 0], wa, wb, p=1)
        return W1Distance(float(value), "exact-1d")
    atoms_a, wa = _distinct_rows(pa, wa)
    atoms_b, wb = _distinct_rows(pb, wb)
    if 8.0 * atoms_a.shape[0] * atoms_b.shape[0] <= max_cost_bytes:
        # scipy's cdist, not ot.dist: POT expands |u − v|² = |u|² + |v|² − 2u·v, which
        # leaves ~1e-9 instead of 0 on coincident points after the square root.
        cost = distance.cdist(atoms_a, atoms_b, metric="euclidean")
        # The network simplex needs O(k_a k_b) pivots on hard instances; POT's default
        # cap (1e5) would stop early and return a non-optimal plan.
        iterations = int(max(100_000, 50 * atoms_a.shape[0] * atoms_b.shape[0]))
        value, log = ot.emd2(wa / wa.sum(), wb / wb.sum(), cost, numItermax=iterations, log=True)
        if log.get("warning") is None:
            return W1Distance(float(value), "exact-emd")
    seed = DEFAULT_SLICED_SEED if rng is None else int(check_rng(rng).integers(0, 2**31 - 1))
    value = ot.sliced_wasserstein_distance(atoms_a, atoms_b, wa / wa.sum(), wb / wb.sum(),
                                           n_projections=n_projections, p=1, seed=seed)
    return W1Distance(float(value), "sliced", n_projections=n_projections, seed=seed)


class _QuantileReference:
    """A 1-D reference measure prepared for exact W1 against many samples of size ``m``.

    With :math:`Q_x` the reference quantile function, :math:`W_1 = \\int_0^1|Q_x(u)-Q_Z(u)|du`.
    :math:`Q_Z` equals the i-th order statistic :math:`z_{(i)}` on :math:`[i/m,(i+1)/m)`,
    and :math:`Q_x` is a non-decreasing step function, so on the merged breakpoints
    (the reference's cumulative weights and :math:`i/m`, the same for every sample)

    .. math:: \\int_{i/m}^{(i+1)/m}|Q_x-c|\\,du = c\\,W_<-S_< + S_\\ge - c\\,W_\\ge ,\\quad c = z_{(i)},

    where :math:`W, S` are partial sums of the widths and width × value of the steps of
    :math:`Q_x` in that slot below / above ``c``: prefix sums plus one ``searchsorted``.
    Cost :math:`O(n + m)` once, then :math:`O(m\\log(n+m))` per sample.
    """

    def __init__(self, reference, reference_weights, m: int):
        ref = _metric_sample(reference, "reference")
        if ref.ndim == 2:
            if ref.shape[1] != 1:
                raise ValueError(f"reference must be one column, got shape {ref.shape}")
            ref = ref[:, 0]
        w = np.full(ref.size, 1.0 / ref.size) if reference_weights is None else \
            check_sample_weights(reference_weights, ref.size, "reference_weights")
        atoms, inverse = np.unique(ref, return_inverse=True)
        cum = np.cumsum(np.bincount(inverse, weights=w, minlength=atoms.size))
        cum /= cum[-1]
        # Centre the values so the prefix sums below lose no precision to a large offset.
        self.shift = float(atoms[atoms.size // 2])
        inner = np.union1d(cum[:-1], np.arange(1, m) / m)
        edges = np.concatenate([[0.0], inner[(inner > 0.0) & (inner < 1.0)], [1.0]])
        widths = np.diff(edges)
        mid = 0.5 * (edges[:-1] + edges[1:])
        self.values = atoms[np.minimum(np.searchsorted(cum, mid), atoms.size - 1)] - self.shift
        slot = np.minimum((mid * m).astype(np.int64), m - 1)
        i = np.arange(m)
        self.start = np.searchsorted(slot, i, side="left")
        self.end = np.searchsorted(slot, i, side="right")
        self.cum_w = np.concatenate([[0.0], np.cumsum(widths)])
        self.cum_wv = np.concatenate([[0.0], np.cumsum(widths * self.values)])
        self.m = m

    def _positions(self, c: np.ndarray) -> np.ndarray:
        """``clip(searchsorted(values, c), start, end)``: the steps of slot i below ``c[:, i]``.

        A slot holds ``end − start`` steps, about n/m + 1: when that is small, counting the
        steps below ``c`` with a few vectorised comparisons is several times faster than
        a binary search over all the steps.
        """
        width = self.end - self.start
        most = int(width.max()) if width.size else 0
        if most > 8:
            return np.clip(np.searchsorted(self.values, c, side="left"), self.start, self.end)
        p = np.repeat(self.start[None, :], c.shape[0], axis=0)
        last = self.values.size - 1
        for j in range(most):
            step = self.values[np.minimum(self.start + j, last)]
            p += (c > step) & (j < width)
        return p

    def distances(self, samples: np.ndarray) -> np.ndarray:
        c = np.sort(samples, axis=1) - self.shift                     # (R, m)
        p = self._positions(c)
        # Slot i contributes c (W_< − W_≥) − S_< + S_≥ with W_< = cw[p] − cw[start_i],
        # W_≥ = cw[end_i] − cw[p] (same for S): the slot ends enter through constants only,
        # which saves four gathers of shape (R, m) — this is the hot loop of the sliced W1.
        ends_w = self.cum_w[self.start] + self.cum_w[self.end]
        ends_wv = float((self.cum_wv[self.start] + self.cum_wv[self.end]).sum())
        term = 2.0 * self.cum_w[p]
        term -= ends_w
        term *= c
        term -= 2.0 * self.cum_wv[p]
        return term.sum(axis=1) + ends_wv


def wasserstein1_runs(samples, reference, reference_weights=None) -> np.ndarray:
    """Exact 1-D W1 between each row of ``samples`` and one reference measure, vectorised.

    .. math:: W_1(x, Z_r) = \\int_0^1 |F_x^{-1}(u) - F_{Z_r}^{-1}(u)|\\,du

    computed for all rows at once through prefix sums over breakpoints shared by every
    row (see :class:`_QuantileReference`); agrees with ``scipy.stats.wasserstein_distance``
    row by row.

    Parameters
    ----------
    samples : array_like, shape (R, m)
        One release per row.
    reference : array_like, shape (n,)
    reference_weights : array_like, shape (n,), optional

    Returns
    -------
    ndarray, shape (R,)
    """
    z = check_metric_sample(samples, "samples", ndim=2, min_size=1)
    return _QuantileReference(reference, reference_weights, z.shape[1]).distances(z)


def random_directions(d: int, n_projections: int, rng: np.random.Generator) -> np.ndarray:
    """``n_projections`` uniform random unit vectors of R^d, as columns: shape (d, n_projections).

    ``1 ≤ d ≤ 10**5``, ``1 ≤ n_projections ≤ MAX_PROJECTIONS``.
    """
    d = check_integer("d", d, minimum=1, maximum=10**5)
    n_projections = check_integer("n_projections", n_projections, minimum=1, maximum=MAX_PROJECTIONS)
    directions = check_rng(rng).standard_normal((d, n_projections))
    return directions / np.linalg.norm(directions, axis=0, keepdims=True)


def sliced_wasserstein1_runs(samples, reference, *, n_projections: int = DEFAULT_N_PROJECTIONS,
                             rng: np.random.Generator, projections=None, reference_weights=None) -> np.ndarray:
    """Sliced W1 between each release and a multi-column reference, vectorised across runs.

    .. math:: SW_1(\\mu,\\nu) = \\frac1P\\sum_{p=1}^{P} W_1(\\langle\\theta_p,\\mu\\rangle,\\langle\\theta_p,\\nu\\rangle)

    with the same random directions :math:`\\theta_p` for every run (drawn from ``rng``
    unless ``projections`` is given), each 1-D term computed exactly by
    :func:`wasserstein1_runs`. Equals ``ot.sliced_wasserstein_distance(..., p=1)`` with the
    same directions.

    Parameters
    ----------
    samples : array_like, shape (R, m, d), values within ±MAX_ABS_VALUE
    reference : array_like, shape (n, d)
    n_projections : int in [1, MAX_PROJECTIONS]
    rng : numpy.random.Generator
    projections : array_like, shape (d, P), optional
        Finite directions, each of Euclidean norm at most 1 (a longer one would scale its
        term), ``P ≤ MAX_PROJECTIONS``.
    reference_weights : array_like, shape (n,), optional
        Non-negative weights of the reference rows (e.g. the counts of a frequency table);
        uniform by default.

    The work, ``P × (R·m + n)`` projected values, is limited to ``MAX_SLICED_WORK``.

    Returns
    -------
    ndarray, shape (R,)
    """
    z = check_metric_sample(samples, "samples", ndim=3, min_size=1)
    ref = _metric_sample(reference, "reference")
    ref = ref.reshape(ref.shape[0], -1)
    if z.shape[2] != ref.shape[1]:
        raise ValueError(f"samples must have shape (R, m, {ref.shape[1]}), got {z.shape}")
    weights = None if reference_weights is None else \
        check_sample_weights(reference_weights, ref.shape[0], "reference_weights")
    if projections is None:
        projections = random_directions(ref.shape[1], n_projections, rng)
    proj = check_finite_array(projections, "projections", ndim=2, min_size=1)
    if proj.shape[0] != ref.shape[1] or proj.shape[1] > MAX_PROJECTIONS:
        raise ValueError(f"projections must have shape ({ref.shape[1]}, P) with 1 <= P <= {MAX_PROJECTIONS}, "
                         f"got {proj.shape}")
    if np.any(np.sum(proj * proj, axis=0) > 1.0 + 1e-9):
        raise ValueError("projections must be directions of Euclidean norm at most 1")
    work = proj.shape[1] * (z.shape[0] * z.shape[1] + ref.shape[0])
    if work > MAX_SLICED_WORK:
        raise ValueError(f"sliced W1 of {z.shape[0]} runs of m = {z.shape[1]} against n = {ref.shape[0]} on "
                         f"{proj.shape[1]} directions projects {work} values, more than MAX_SLICED_WORK = "
                         f"{MAX_SLICED_WORK}; use fewer directions or runs")
    total = np.zeros(z.shape[0])
    for p in range(proj.shape[1]):
        # One direction at a time keeps memory at O(R m) instead of O(R m P).
        total += _QuantileReference(ref @ proj[:, p], weights, z.shape[1]).distances(z @ proj[:, p])
    return total / proj.shape[1]


# ======================================================================== joint W1 of many runs
#: Default time budget of the exact joint W1 of :func:`joint_w1_runs`: residual cost-matrix
#: entries summed over all runs (the network simplex takes ~0.1 µs per entry on these problems).
DEFAULT_MAX_EXACT_ENTRIES = 1.5e7


def _row_ids(rows: np.ndarray) -> np.ndarray:
    """Integer id per row, equal ids for equal rows (the bytes of the float64 row)."""
    rows = np.ascontiguousarray(rows, dtype=np.float64) + 0.0   # + 0.0 makes -0.0 equal to 0.0
    view = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
    return pd.factorize(view)[0].astype(np.int64)


def joint_w1_runs(samples, reference, *, max_exact_entries: float = DEFAULT_MAX_EXACT_ENTRIES,
                  max_cost_bytes: float = DEFAULT_MAX_COST_BYTES, n_projections: int = 50,
                  rng: np.random.Generator, reference_counts=None) -> tuple[np.ndarray, str]:
    """Multi-column W1 of each of R releases against the data: exact when it fits the budget.

    .. math:: W_1(\\mu_x, \\mu_{Z_r}) = W_1\\big((\\mu_x-\\mu_{Z_r})_+,\\ (\\mu_x-\\mu_{Z_r})_-\\big)

    W1 depends on the signed difference of the two measures only (Kantorovich–Rubinstein
    duality), so mass that a release puts exactly on a data row cancels, and the exact
    linear program (``ot.emd2``, Euclidean cost) runs on the rows where the two empirical
    measures differ, with weights computed exactly in integers,
    :math:`n_x(u)\\,m - n_Z(u)\\,n` (in units of :math:`1/(nm)`). For releases that copy
    confidential rows (PYPP, the bootstrap) these residual problems are small even when
    every data row is distinct.

    When the residual cost matrices of all runs exceed ``max_exact_entries`` entries in
    total, one of them exceeds ``max_cost_bytes`` (8 bytes per entry), or a solve stops
    early, *every* run gets the sliced W1 (a lower bound of W1) with one set of
    ``n_projections`` directions shared by all runs (common random numbers,
    :func:`sliced_wasserstein1_runs`): one method for all runs, so they stay comparable.

    Parameters
    ----------
    samples : array_like, shape (R, m, d), within ±MAX_ABS_VALUE
    reference : array_like, shape (n, d)
        The data's rows, or the rows of its frequency table (with ``reference_counts``).
    max_exact_entries : float in [0, 1e12]
        Time budget of the exact path (total residual cost-matrix entries).
    max_cost_bytes : float in (0, MAX_COST_BYTES]
        Memory budget of one residual cost matrix.
    n_projections : int in [1, MAX_PROJECTIONS]
        Directions of the sliced fallback.
    rng : numpy.random.Generator
        Draws the directions of the sliced fallback.
    reference_counts : array_like of int ≥ 1, shape (k,), optional
        Multiplicities of the reference rows (a frequency table): the reference is then the
        rows repeated by their counts, with :math:`n = \\sum` counts. The integer weights of
        the exact path are the same as from the repeated rows (identical values); the
        sliced fallback weights each row by its count. Cost in k, not n.

    Returns
    -------
    values : ndarray, shape (R,)
    method : str — ``"exact-emd"`` or ``"sliced (P directions)"``
    """
    z = check_metric_sample(samples, "samples", ndim=3, min_size=1)
    x = check_metric_sample(reference, "reference", ndim=2, min_size=1)
    if z.shape[2] != x.shape[1]:
        raise ValueError(f"samples must have shape (R, m, {x.shape[1]}), got {z.shape}")
    max_exact_entries = check_real("max_exact_entries", max_exact_entries, low=0.0, high=1e12)
    max_cost_bytes = check_real("max_cost_bytes", max_cost_bytes, low=0.0, high=MAX_COST_BYTES, low_open=True)
    n_projections = check_integer("n_projections", n_projections, minimum=1, maximum=MAX_PROJECTIONS)
    R, m, d = z.shape
    k = x.shape[0]
    row_counts = None if reference_counts is None else _counts(reference_counts, (k,), "reference_counts")
    n = k if row_counts is None else int(row_counts.sum())
    points = np.concatenate([x, z.reshape(R * m, d)])
    ids = _row_ids(points)
    rows_of = np.empty(int(ids.max()) + 1, dtype=np.int64)
    rows_of[ids] = np.arange(ids.size)          # one row index per id, to read the point back
    if row_counts is None:
        x_ids, x_counts = np.unique(ids[:k], return_counts=True)
    else:  # the counts of equal rows add up, exactly in integers
        x_ids, x_inverse = np.unique(ids[:k], return_inverse=True)
        x_counts = np.zeros(x_ids.size, dtype=np.int64)
        np.add.at(x_counts, x_inverse.ravel(), row_counts)
    z_ids = ids[k:].reshape(R, m)
    problems, entries, fits = [], 0.0, True
    for r in range(R):  # one run at a time, O((k_x + m) log) each: a loop over runs only
        u, c = np.unique(z_ids[r], return_counts=True)
        all_ids, inverse = np.unique(np.concatenate([x_ids, u]), return_inverse=True)
        net = np.zeros(all_ids.size, dtype=np.int64)
        np.add.at(net, inverse[:x_ids.size], x_counts * m)
        np.add.at(net, inverse[x_ids.size:], -c * n)
        pos, neg = net > 0, net < 0
        size = float(pos.sum()) * float(neg.sum())
        problems.append((all_ids[pos], net[pos], all_ids[neg], -net[neg]))
        entries += size
        if entries > max_exact_entries or 8.0 * size > max_cost_bytes:
            fits = False
            break
    if fits:
        out = np.zeros(R)
        for r, (a_ids, a_w, b_ids, b_w) in enumerate(problems):
            if a_ids.size == 0:
                continue                          # the release equals the data: W1 = 0
            total = float(a_w.sum())              # = b_w.sum(), in units of 1/(n m)
            # scipy's cdist, not ot.dist (see wasserstein1): exact zeros on coincident points.
            cost = distance.cdist(points[rows_of[a_ids]], points[rows_of[b_ids]])
            value, log = ot.emd2(a_w / total, b_w / total, cost,
                                 numItermax=int(max(100_000, 50 * cost.size)), log=True)
            if log.get("warning") is not None:
                break
            out[r] = value * total / (float(n) * float(m))
        else:
            return out, "exact-emd"
    values = sliced_wasserstein1_runs(z, x, n_projections=n_projections, rng=rng, reference_weights=row_counts)
    return values, f"sliced ({n_projections} directions)"


# ======================================================================== KDE
def _counts(counts, shape: tuple, name: str = "counts") -> np.ndarray:
    """Multiplicities of the values of a 1-D sample: positive integers, one per value."""
    c = check_multiplicities(counts, name)
    if len(shape) != 1 or c.shape != shape:
        raise ValueError(f"{name} must have one count per value, shape {shape}, got {c.shape}")
    return c


def _counted_moments(x: np.ndarray, counts: np.ndarray) -> tuple[float, float]:
    """Mean and SD (ddof = 1; 0 for n = 1) of the values repeated by their counts."""
    n = float(counts.sum())
    mean = float(counts @ x) / n
    var = float(counts @ (x - mean) ** 2) / (n - 1.0) if n > 1 else 0.0
    return mean, math.sqrt(max(0.0, var))


def _counted_scott_bandwidth(x: np.ndarray, counts: np.ndarray) -> float:
    """:func:`scott_bandwidth` of the values repeated by their counts, :math:`s\\,n^{-1/5}`."""
    return _counted_moments(x, counts)[1] * float(counts.sum()) ** (-0.2)


def scott_bandwidth(values, counts=None) -> np.ndarray | float:
    """Scott's bandwidth of ``scipy.stats.gaussian_kde`` in 1-D: :math:`h = s\\,m^{-1/5}`.

    ``s`` is the sample SD (ddof = 1). Rows of a 2-D array are separate samples.

    Parameters
    ----------
    values : array_like, shape (m,) or (R, m), m ≥ 2, finite, within ±MAX_ABS_VALUE
    counts : array_like of int ≥ 1, shape (m,), optional
        Multiplicities of the values of a 1-D sample (a frequency table): the bandwidth of
        the values repeated by their counts, :math:`s\\,n^{-1/5}` with :math:`n = \\sum` counts
        (then one value is enough).

    Returns
    -------
    float or ndarray, shape (R,); 0 for a sample with a single distinct value
    """
    if counts is not None:
        x = check_metric_sample(values, "values", ndim=1, min_size=1)
        return _counted_scott_bandwidth(x, _counts(counts, x.shape))
    z = check_metric_sample(values, "values", min_size=1)
    if z.ndim not in (1, 2) or z.shape[-1] < 2:
        raise ValueError(f"values must have shape (m,) or (R, m) with m >= 2 (a KDE needs at least 2 values), "
                         f"got shape {z.shape}")
    h = z.std(axis=-1, ddof=1) * z.shape[-1] ** (-0.2)
    return float(h) if z.ndim == 1 else h


def _has_kde(h) -> np.ndarray:
    """Whether a sample with Scott bandwidth ``h`` has a KDE in double precision (h ≥ KDE_MIN_BANDWIDTH)."""
    return np.asarray(h) >= KDE_MIN_BANDWIDTH


def kde_grid(*samples, size: int = 512, pad: float = 4.0, first_counts=None) -> np.ndarray:
    """Common evaluation grid of 1-D KDEs: the range of all samples widened by ``pad`` bandwidths.

    Parameters
    ----------
    *samples : array_like, each shape (m_i,) or (R, m_i), within ±MAX_ABS_VALUE
        2-D arrays are several samples (one per row).
    size : int in [2, MAX_KDE_GRID]
    pad : float in [0, 100]
        Widening on each side, in units of the largest Scott bandwidth, so that the
        Gaussian kernels' mass outside the grid is negligible (< 1e-4 for ``pad = 4``).
        Samples without a KDE (one distinct value, or a bandwidth below
        ``KDE_MIN_BANDWIDTH``) only contribute their range.
    first_counts : array_like of int ≥ 1, optional
        Multiplicities of the values of the first sample (1-D): it then stands for its
        values repeated by their counts (a frequency table), and the grid is the one of
        the repeated values.

    Returns
    -------
    ndarray, shape (size,), finite and increasing
    """
    if not samples:
        raise ValueError("kde_grid needs at least one sample")
    size = check_integer("size", size, minimum=2, maximum=MAX_KDE_GRID)
    pad = check_real("pad", pad, low=0.0, high=100.0)
    lo, hi, h = math.inf, -math.inf, 0.0
    for i, s in enumerate(samples):
        arr = check_metric_sample(s, f"sample {i}", min_size=1)
        if arr.ndim not in (1, 2):
            raise ValueError(f"sample {i} must have shape (m,) or (R, m), got shape {arr.shape}")
        lo, hi = min(lo, float(arr.min())), max(hi, float(arr.max()))
        if i == 0 and first_counts is not None:
            hs = np.atleast_1d(_counted_scott_bandwidth(arr, _counts(first_counts, arr.shape)))
            hs = hs[_has_kde(hs)]
            if hs.size:
                h = max(h, float(hs.max()))
        elif arr.shape[-1] >= 2:
            hs = np.atleast_1d(scott_bandwidth(arr))
            hs = hs[_has_kde(hs)]
            if hs.size:
                h = max(h, float(hs.max()))
    width = pad * h if h > 0 else 0.5
    if hi - lo + 2 * width <= 0:
        width = 0.5
    return np.linspace(lo - width, hi + width, size)


def _kde_sample(values, name: str) -> np.ndarray:
    arr = _metric_sample(values, name, min_size=2)
    if arr.ndim == 2:
        if arr.shape[1] != 1:
            raise ValueError(f"{name} must be one column for a 1-D KDE, got shape {arr.shape}")
        arr = arr[:, 0]
    if np.all(arr == arr[0]):
        raise ValueError(f"{name} has a single distinct value ({arr[0]!r}): its KDE is undefined")
    _check_bandwidth(scott_bandwidth(arr), name)
    return arr


def _check_bandwidth(h: float, name: str) -> None:
    if not h >= KDE_MIN_BANDWIDTH:
        raise ValueError(f"{name} is too concentrated for a KDE in double precision: its Scott bandwidth {h!r} "
                         f"is below KDE_MIN_BANDWIDTH = {KDE_MIN_BANDWIDTH:g} (the density would overflow); "
                         f"rescale the column")


def _kde_grid_points(grid, name: str = "grid") -> np.ndarray:
    g = check_metric_sample(grid, name, ndim=1, min_size=2)
    if g.size > MAX_KDE_GRID:
        raise ValueError(f"{name} must have at most MAX_KDE_GRID = {MAX_KDE_GRID} points, got {g.size}")
    return g


def kde_on_grid(values, grid, weights=None, *, counts=None) -> np.ndarray:
    """Gaussian KDE (``scipy.stats.gaussian_kde``, Scott's rule) evaluated on a grid (SPEC §5).

    Parameters
    ----------
    values : array_like, shape (m,), at least 2 distinct values, within ±MAX_ABS_VALUE,
        Scott bandwidth at least ``KDE_MIN_BANDWIDTH``
    grid : array_like, shape (G,), 2 ≤ G ≤ MAX_KDE_GRID
    weights : array_like, shape (m,), optional
        With weights, the weighted sample must also have a bandwidth of at least
        ``KDE_MIN_BANDWIDTH`` (weights on a single value have no KDE).
    counts : array_like of int ≥ 1, shape (m,), optional
        Multiplicities of the values (a frequency table; not with ``weights``): the KDE
        of the values repeated by their counts — Scott's bandwidth of the n repeated
        values — at a cost in the distinct values only.

    Returns
    -------
    ndarray, shape (G,), finite and ≥ 0
    """
    if counts is not None:
        if weights is not None:
            raise ValueError("give weights or counts, not both")
        x = _metric_sample(values, "values", min_size=2)
        x = x.reshape(-1) if x.ndim == 2 and x.shape[1] == 1 else x
        c = _counts(counts, x.shape)
        h = _counted_scott_bandwidth(x, c)
        _check_bandwidth(h, "values (repeated by their counts)")
        g = _kde_grid_points(grid)
        w = c / c.sum()
        # gaussian_kde's weighted covariance is Σw(x−μ)²/(1 − Σw²); choose its factor so that
        # the kernel's SD is h, the bandwidth of the repeated values.
        mean = float(w @ x)
        data_sd = math.sqrt(float(w @ (x - mean) ** 2) / (1.0 - float(w @ w)))
        return stats.gaussian_kde(x, bw_method=h / data_sd, weights=w).evaluate(g)
    x = _kde_sample(values, "values")
    w = None if weights is None else check_sample_weights(weights, x.size, "weights")
    g = _kde_grid_points(grid)
    if w is not None:
        mean = float(w @ x)
        sd = math.sqrt(max(0.0, float(w @ (x - mean) ** 2)))
        _check_bandwidth(sd * (1.0 / float(w @ w)) ** (-0.2), "values (with their weights)")
    return stats.gaussian_kde(x, weights=w).evaluate(g)


def kde_l2(a, b, grid=None, *, a_weights=None, b_weights=None, size: int = 512) -> float:
    """KDE-L2 distance :math:`\\big(\\int(\\hat f_a-\\hat f_b)^2\\big)^{1/2}` (SPEC §5, thesis §7).

    Both densities are ``scipy.stats.gaussian_kde`` estimates evaluated on a common grid
    (:func:`kde_grid` of both samples by default); the integral is the trapezoidal rule.

    Parameters
    ----------
    a, b : array_like, shape (m_a,), (m_b,)
    grid : array_like, shape (G,), optional
    a_weights, b_weights : array_like, optional
    size : int
        Grid size when ``grid`` is not given.

    Returns
    -------
    float ≥ 0
    """
    xa = _kde_sample(a, "a")
    xb = _kde_sample(b, "b")
    g = kde_grid(xa, xb, size=size) if grid is None else _kde_grid_points(grid)
    diff = kde_on_grid(xa, g, a_weights) - kde_on_grid(xb, g, b_weights)
    return float(math.sqrt(max(0.0, np.trapezoid(diff * diff, g))))


def binned_kde_runs(samples, grid, bandwidths=None, *, counts=None) -> np.ndarray:
    """Gaussian KDEs of many 1-D samples on one equally spaced grid, vectorised.

    The same estimator as ``gaussian_kde`` (Scott bandwidth per row unless given),
    evaluated by linear binning of each sample onto the grid and one FFT convolution with
    the sampled Gaussian kernel. The binning error is :math:`O((\\Delta/h)^2)` relative
    (Δ the grid step, h the bandwidth): below 1e-3 for the default grids of the
    comparison, checked against ``gaussian_kde`` in the tests. Values outside the grid
    are clamped to its ends (the grids of :func:`kde_grid` contain every sample).

    Parameters
    ----------
    samples : array_like, shape (R, m), m ≥ 2, within ±MAX_ABS_VALUE
    grid : array_like, shape (G,), equally spaced, 2 ≤ G ≤ MAX_KDE_GRID
    bandwidths : array_like, shape (R,), optional
        Each at least ``KDE_MIN_BANDWIDTH`` and finite.
    counts : array_like of int ≥ 1, shape (m,), optional
        Multiplicities of the columns of ``samples`` (a frequency table, e.g. the distinct
        confidential values): each row is the KDE of its values repeated by these counts —
        binned with weights ``counts / n`` and Scott's bandwidth of the repeated values —
        at cost O(m + G log G), not O(n). Then m ≥ 1.

    Returns
    -------
    ndarray, shape (R, G)
    """
    z = check_metric_sample(samples, "samples", ndim=2, min_size=1)
    c = None if counts is None else _counts(counts, (z.shape[1],))
    if z.shape[1] < 2 and c is None:
        raise ValueError(f"samples must have shape (R, m) with m >= 2, got {z.shape}")
    g = _kde_grid_points(grid)
    step = (g[-1] - g[0]) / (g.size - 1)
    if not step > 0 or not np.allclose(np.diff(g), step, rtol=1e-9, atol=0.0):
        raise ValueError("grid must be equally spaced and increasing")
    runs, m = z.shape
    size = g.size
    if bandwidths is not None:
        h = np.asarray(bandwidths, dtype=np.float64)
    elif c is None:
        h = scott_bandwidth(z)
    else:
        h = np.array([_counted_scott_bandwidth(row, c) for row in z])  # a loop over runs only
    if h.shape != (runs,) or not np.all(np.isfinite(h)) or not np.all(_has_kde(h)):
        raise ValueError(f"bandwidths must be finite and >= KDE_MIN_BANDWIDTH = {KDE_MIN_BANDWIDTH:g}, one per row "
                         "(a row with a single distinct value has no KDE)")
    pos = np.clip((z - g[0]) / step, 0.0, size - 1.0)
    left = np.minimum(pos.astype(np.int64), size - 2)
    frac = pos - left
    offset = (np.arange(runs) * size)[:, None]
    if c is None:
        low, high, total = 1.0 - frac, frac, m
    else:
        low, high, total = (1.0 - frac) * c, frac * c, float(c.sum())
    mass = np.bincount((offset + left).ravel(), weights=low.ravel(), minlength=runs * size)
    mass += np.bincount((offset + left + 1).ravel(), weights=high.ravel(), minlength=runs * size)
    mass = mass.reshape(runs, size) / total
    # Kernel support: lags up to 9 bandwidths (mass beyond is < 1e-18), at most the grid.
    reach = int(min(size - 1, math.ceil(min(9.0 * float(h.max()) / step, float(size)))))
    lags = np.arange(-reach, reach + 1) * step
    n_fft = 1 << int(math.ceil(math.log2(size + 2 * reach)))
    out = np.empty((runs, size))
    rows = max(1, (1 << 22) // n_fft)  # bounds the FFT work arrays to ~64 MB
    for start in range(0, runs, rows):
        hh = h[start:start + rows, None]
        kernel = np.exp(-0.5 * (lags[None, :] / hh) ** 2) / (hh * math.sqrt(2 * math.pi))
        full = np.fft.irfft(np.fft.rfft(mass[start:start + rows], n_fft, axis=1)
                            * np.fft.rfft(kernel, n_fft, axis=1), n_fft, axis=1)
        out[start:start + rows] = full[:, reach:reach + size]
    return out


def kde_l2_runs(samples, reference_density, grid) -> np.ndarray:
    """KDE-L2 of each row of ``samples`` against a reference density on the same grid.

    Parameters
    ----------
    samples : array_like, shape (R, m), m ≥ 2, within ±MAX_ABS_VALUE
    reference_density : array_like, shape (G,), finite
    grid : array_like, shape (G,), equally spaced

    Returns
    -------
    ndarray, shape (R,); NaN exactly for a row without a KDE: a single distinct value, or
    a Scott bandwidth below ``KDE_MIN_BANDWIDTH`` (the KDE-L2 is then undefined)
    """
    z = check_metric_sample(samples, "samples", ndim=2, min_size=1)
    g = _kde_grid_points(grid)
    ref = check_finite_array(reference_density, "reference_density")
    if ref.shape != g.shape:
        raise ValueError(f"reference_density must have the grid's shape {g.shape}, got {ref.shape}")
    # An FFT-binned density may carry rounding residues of either sign (~1e-18): only the
    # magnitude is limited, so that squared differences stay finite.
    if float(np.abs(ref).max()) > 1.0 / KDE_MIN_BANDWIDTH:
        raise ValueError(f"reference_density must be a density on the grid, of magnitude at most "
                         f"{1.0 / KDE_MIN_BANDWIDTH:g}")
    h = scott_bandwidth(z)
    ok = _has_kde(h)
    out = np.full(z.shape[0], np.nan)
    if ok.any():
        dens = binned_kde_runs(z[ok], g, h[ok])
        out[ok] = np.sqrt(np.maximum(0.0, np.trapezoid((dens - ref) ** 2, g, axis=1)))
    return out


# ==================================================================== summaries
def column_summary(values, counts=None) -> dict[str, float]:
    """Mean, SD (ddof = 1; 0 for one value), Q1, median and Q3 of one numeric column.

    Quantiles use numpy's default (linear interpolation). Values within ±MAX_ABS_VALUE.
    ``counts`` (positive integers, one per value): the summary of the values repeated by
    their counts (a frequency table), at a cost in the distinct values only.
    """
    x = _metric_sample(values, "values")
    if x.ndim == 2:
        if x.shape[1] != 1:
            raise ValueError(f"values must be one column, got shape {x.shape}")
        x = x[:, 0]
    if counts is None:
        q1, med, q3 = np.quantile(x, [0.25, 0.5, 0.75])
        return {"mean": float(x.mean()), "sd": float(x.std(ddof=1)) if x.size > 1 else 0.0,
                "q1": float(q1), "median": float(med), "q3": float(q3)}
    c = _counts(counts, x.shape)
    mean, sd = _counted_moments(x, c)
    order = np.argsort(x, kind="stable")
    q1, med, q3 = repeated_quantiles(x[order], np.cumsum(c[order]))
    return {"mean": mean, "sd": sd, "q1": q1, "median": med, "q3": q3}


def repeated_quantiles(sorted_values: np.ndarray, cumulative_counts: np.ndarray,
                       probabilities=(0.25, 0.5, 0.75)) -> list[float]:
    """``numpy.quantile`` (linear) of sorted values repeated by their counts, without repeating them.

    numpy's position of probability q among n order statistics is :math:`h = (n-1)q`;
    the result is :math:`x_{(\\lfloor h\\rfloor)} + (h-\\lfloor h\\rfloor)(x_{(\\lfloor h\\rfloor+1)} - x_{(\\lfloor h\\rfloor)})`
    and the j-th order statistic (from 0) is the value whose cumulative count first exceeds j.

    Parameters
    ----------
    sorted_values : ndarray, shape (k,), non-decreasing
    cumulative_counts : ndarray of int, shape (k,)
        ``cumsum`` of the counts (counts ≥ 0; a zero count is a value absent from the sample);
        n = ``cumulative_counts[-1]`` ≥ 1.
    probabilities : sequence of float in [0, 1]

    Returns
    -------
    list of float, one per probability
    """
    cum = np.asarray(cumulative_counts)
    n = int(cum[-1])
    out = []
    for q in probabilities:
        h = (n - 1) * q
        j = math.floor(h)
        lo = sorted_values[np.searchsorted(cum, j, side="right")]
        hi = sorted_values[np.searchsorted(cum, min(j + 1, n - 1), side="right")]
        out.append(float(lo + (h - j) * (hi - lo)))
    return out


def summary_runs(samples) -> dict[str, np.ndarray]:
    """:func:`column_summary` of each row of ``samples`` (shape (R, m)), vectorised."""
    z = check_metric_sample(samples, "samples", ndim=2, min_size=1)
    q1, med, q3 = np.quantile(z, [0.25, 0.5, 0.75], axis=1)
    sd = z.std(axis=1, ddof=1) if z.shape[1] > 1 else np.zeros(z.shape[0])
    return {"mean": z.mean(axis=1), "sd": sd, "q1": q1, "median": med, "q3": q3}


def _columns_of(data, columns) -> tuple[list[str], np.ndarray]:
    if isinstance(data, pd.DataFrame):
        names = list(data.columns) if columns is None else list(columns)
        missing = [c for c in names if c not in data.columns]
        if missing:
            raise ValueError(f"columns {missing} are not in the data (columns: {list(data.columns)})")
        non_numeric = [c for c in names if not pd.api.types.is_numeric_dtype(data[c])]
        if non_numeric:
            raise ValueError(f"columns {non_numeric} are not numeric")
        return [str(c) for c in names], _metric_sample(data[names].to_numpy(dtype=np.float64), "data")
    arr = _metric_sample(data, "data")
    arr = arr.reshape(arr.shape[0], -1)
    names = [f"x{j}" for j in range(arr.shape[1])] if columns is None else [str(c) for c in columns]
    if len(names) != arr.shape[1]:
        raise ValueError(f"columns must name the {arr.shape[1]} columns, got {len(names)} names")
    return names, arr


def summary_table(data, releases: Mapping[str, object], *, columns=None, grid_size: int = 512,
                  reference_name: str = "confidential", counts=None) -> pd.DataFrame:
    """Per-column summary of the confidential data and of each release (SPEC §5).

    One row per (mechanism, column) with mean, SD, Q1, median, Q3, W1 (exact 1-D, per
    column) and KDE-L2 (``gaussian_kde`` on a common grid per column); the confidential
    data itself is the first row of each column, with W1 = KDE-L2 = 0.

    **Samples without a density.** A column with a single distinct value v (one record, or
    all equal) has Scott bandwidth :math:`h = s\\,n^{-1/5} = 0`: its Gaussian KDE
    :math:`\\hat f_h = \\frac1n\\sum_i\\varphi_h(\\cdot - x_i)` is the point mass
    :math:`\\delta_v`, the limit h → 0, which has no density. KDE-L2 is then the limit of its
    definition (:func:`_kde_l2_degenerate_aware`): since
    :math:`\\lVert\\varphi_h\\rVert_2 = (2\\sqrt\\pi\\,h)^{-1/2} \\to \\infty`,

    .. math:: \\mathrm{KDE\\text{-}L2} = \\begin{cases} 0 & \\text{both samples are the same point mass,}\\\\
              +\\infty & \\text{otherwise (against a density, or another point mass).}\\end{cases}

    A sample with several values whose Scott bandwidth is below ``KDE_MIN_BANDWIDTH``
    (values within ~1e-139 of each other, e.g. subnormals) has a KDE that double precision
    cannot evaluate (its peak exceeds 1e139, its L2 norm grows like :math:`h^{-1/2}`); it is
    taken at the same limit: 0 against the very same values with the same multiplicities
    (identical KDEs), +∞ otherwise. So KDE-L2 is never NaN and the call never fails on
    such a column; W1 (always finite) is the distance to read for it, and the summaries are
    always defined. Values must lie within ±MAX_ABS_VALUE.

    Parameters
    ----------
    data : pandas.DataFrame or array_like, shape (n,) or (n, d)
        Confidential data (numeric columns).
    releases : mapping of str to DataFrame or array_like, shape (m,) or (m, d)
        One synthetic release per mechanism, with the data's columns.
    columns : sequence of str, optional
        Columns to summarise (DataFrame) or names of the array's columns.
    grid_size : int in [2, MAX_KDE_GRID]
    counts : array_like of int ≥ 1, shape (n,), optional
        Multiplicities of the rows of ``data`` when it is a frequency table (its distinct
        rows): every number is then that of the rows repeated by their counts (the same
        grid, bandwidths, quantiles and W1), at a cost in the distinct rows only.

    Returns
    -------
    pandas.DataFrame with columns ``mechanism, column, mean, sd, q1, median, q3, W1, KDE_L2``
    """
    names, x = _columns_of(data, columns)
    c = None if counts is None else _counts(counts, (x.shape[0],))
    grid_size = check_integer("grid_size", grid_size, minimum=2, maximum=MAX_KDE_GRID)
    if not isinstance(releases, Mapping):
        raise ValueError(f"releases must be a mapping of mechanism name to release, got {type(releases).__name__}")
    released = {}
    for key, value in releases.items():
        if isinstance(value, pd.DataFrame):
            missing = [c for c in names if c not in value.columns]
            if missing:
                raise ValueError(f"release {key!r} lacks columns {missing}")
            non_numeric = [c for c in names if not pd.api.types.is_numeric_dtype(value[c])]
            if non_numeric:
                raise ValueError(f"release {key!r}: columns {non_numeric} are not numeric")
            z = _metric_sample(value[names].to_numpy(dtype=np.float64), f"release {key!r}")
        else:
            z = _metric_sample(value, f"release {key!r}")
        z = z.reshape(z.shape[0], -1)
        if z.shape[1] != x.shape[1]:
            raise ValueError(f"release {key!r} has {z.shape[1]} columns, the data has {x.shape[1]}")
        released[str(key)] = z
    rows = []
    for j, col in enumerate(names):
        xs = x[:, j]
        grid = kde_grid(xs, *[z[:, j] for z in released.values()], size=grid_size, first_counts=c)
        fx = _kde_or_point_masses(xs, grid, c)
        rows.append({"mechanism": reference_name, "column": col, **column_summary(xs, c), "W1": 0.0,
                     "KDE_L2": 0.0})
        for key, z in released.items():
            zs = z[:, j]
            rows.append({"mechanism": key, "column": col, **column_summary(zs),
                         "W1": float(wasserstein1(xs, zs, a_weights=c)),
                         "KDE_L2": _kde_l2_degenerate_aware(fx, _kde_or_point_masses(zs, grid), grid)})
    return pd.DataFrame(rows, columns=["mechanism", "column", "mean", "sd", "q1", "median", "q3", "W1", "KDE_L2"])


class _PointMasses:
    """A sample whose KDE is its h → 0 limit: its distinct values and their multiplicities."""

    def __init__(self, values: np.ndarray, counts=None):
        self.atoms, inverse = np.unique(values, return_inverse=True)
        weights = np.ones(values.size, dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
        self.counts = np.bincount(inverse.ravel(), weights=weights).astype(np.int64)

    def same_kde(self, other: "_PointMasses") -> bool:
        """Whether the two KDEs coincide: one and the same point mass (any sizes), or the same
        values with the same multiplicities (then the bandwidths, too, are equal)."""
        if self.atoms.size == 1 and other.atoms.size == 1:
            return bool(self.atoms[0] == other.atoms[0])
        return (np.array_equal(self.atoms, other.atoms) and np.array_equal(self.counts, other.counts))


def _kde_or_point_masses(values: np.ndarray, grid: np.ndarray, counts=None) -> np.ndarray | _PointMasses:
    """The KDE of a 1-D sample on ``grid`` (``counts``: multiplicities, optional), or
    :class:`_PointMasses` when Scott's bandwidth is below ``KDE_MIN_BANDWIDTH`` — 0 for a
    single distinct value, whose KDE is the point mass itself."""
    if np.all(values == values[0]):
        return _PointMasses(values[:1], None if counts is None else [int(np.sum(counts))])
    h = scott_bandwidth(values) if counts is None else _counted_scott_bandwidth(values, counts)
    if not _has_kde(h):
        return _PointMasses(values, counts)
    return kde_on_grid(values, grid) if counts is None else kde_on_grid(values, grid, counts=counts)


def _kde_l2_degenerate_aware(fa, fb, grid: np.ndarray) -> float:
    """KDE-L2 of two outputs of :func:`_kde_or_point_masses`.

    Two densities: the trapezoidal :math:`(\\int(\\hat f_a - \\hat f_b)^2)^{1/2}` on ``grid``.
    Otherwise the limit of the definition as the degenerate sample's bandwidth h → 0: a
    Gaussian kernel has :math:`\\lVert\\varphi_h\\rVert_2 = (2\\sqrt\\pi\\,h)^{-1/2} \\to \\infty`,
    so the distance is +∞ — unless the two KDEs coincide (:meth:`_PointMasses.same_kde`),
    when it is 0 at every h.
    """
    a_points, b_points = isinstance(fa, _PointMasses), isinstance(fb, _PointMasses)
    if a_points and b_points and fa.same_kde(fb):
        return 0.0
    if a_points or b_points:
        return math.inf
    diff = fa - fb
    return float(math.sqrt(max(0.0, np.trapezoid(diff * diff, grid))))


def batched_wasserstein1(a_values, a_groups, b_values, b_groups, n_groups, *,
                         a_weights=None, b_weights=None) -> np.ndarray:
    """1-D Wasserstein-1 distances for many pairs of discrete measures at once.

    Group ``r`` pairs the points of ``a`` with ``a_groups == r`` and the points of ``b``
    with ``b_groups == r``; within a group the weights are normalised to one. In one
    dimension

    .. math:: W_1(\\mu, \\nu) = \\int_{\\mathbb R} |F_\\mu(t) - F_\\nu(t)|\\,dt,

    evaluated exactly on the sorted union of the support points. This is the same number
    as :func:`core.utility.wasserstein1` (POT) for each group, but for ``R`` groups it
    costs a single sort of all points instead of ``R`` Python-level calls: the
    informativity experiment needs thousands of distances per grid point.

    Parameters
    ----------
    a_values, b_values : array_like of float, shapes (A,), (B,)
    a_groups, b_groups : array_like of int in [0, n_groups), shapes (A,), (B,)
    n_groups : int in [1, A]
        Every group must contain at least one point of ``a`` and one of ``b``.
    a_weights, b_weights : array_like of float ≥ 0, optional
        Point masses (uniform if omitted), normalised within each group.

    Returns
    -------
    ndarray of float, shape (n_groups,)
    """
    n_groups = check_integer("n_groups", n_groups, minimum=1)
    sides = []
    for label, values, groups, weights in (("a", a_values, a_groups, a_weights),
                                           ("b", b_values, b_groups, b_weights)):
        v = _metric_sample(values, f"{label}_values", one_column=True)
        g = np.asarray(groups)
        if g.shape != v.shape or g.dtype.kind not in "iu":
            raise ValueError(f"{label}_groups must be integers with the shape of {label}_values {v.shape}")
        if g.min() < 0 or g.max() >= n_groups:
            raise ValueError(f"{label}_groups must be in [0, {n_groups - 1}], "
                             f"got values in [{int(g.min())}, {int(g.max())}]")
        if n_groups > v.size:  # before bincount(minlength=n_groups) allocates n_groups cells
            raise ValueError(f"n_groups must be in [1, {v.size}] (every group needs a point of {label}), "
                             f"got {n_groups}")
        w = np.ones_like(v) if weights is None else np.asarray(weights, dtype=np.float64)
        if w.shape != v.shape or not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError(f"{label}_weights must be finite, >= 0 and have the shape of {label}_values")
        totals = np.bincount(g, weights=w, minlength=n_groups)
        if np.any(totals <= 0):
            raise ValueError(f"every group needs positive total weight in {label}; "
                             f"group {int(np.flatnonzero(totals <= 0)[0])} has none")
        sides.append((v, g.astype(np.int64), w / totals[g]))
    (av, ag, aw), (bv, bg, bw) = sides
    return signed_wasserstein1(np.concatenate([av, bv]), np.concatenate([aw, -bw]),
                      np.concatenate([ag, bg]), n_groups)


def signed_wasserstein1(values: np.ndarray, signed_weights: np.ndarray, groups: np.ndarray,
                        n_groups: int) -> np.ndarray:
    """:math:`\\int |F_\\mu - F_\\nu|` per group, for ``signed_weights`` = μ − ν (zero total per group).

    Parameters
    ----------
    values : ndarray of float, shape (N,), within ±MAX_ABS_VALUE
    signed_weights : ndarray of float, shape (N,), finite
    groups : ndarray of int in [0, n_groups), shape (N,)
    n_groups : int in [1, N]

    Returns
    -------
    ndarray, shape (n_groups,)
    """
    values = check_metric_sample(values, "values", ndim=1, min_size=1)
    signed_weights = check_finite_array(signed_weights, "signed_weights", ndim=1)
    groups = np.asarray(groups)
    n_groups = check_integer("n_groups", n_groups, minimum=1, maximum=values.size)
    if signed_weights.shape != values.shape or groups.shape != values.shape or groups.dtype.kind not in "iu":
        raise ValueError(f"signed_weights and groups (integers) must have the shape of values {values.shape}")
    if groups.min() < 0 or groups.max() >= n_groups:
        raise ValueError(f"groups must be in [0, {n_groups - 1}], got values in [{int(groups.min())}, "
                         f"{int(groups.max())}]")
    order = np.lexsort((values, groups))
    v, w, g = values[order], signed_weights[order], groups[order]
    cum = np.cumsum(w)
    same_group = g[1:] == g[:-1]
    starts = np.flatnonzero(np.concatenate([[True], ~same_group]))
    # Subtract what the previous groups accumulated, so each group's CDF gap starts at 0.
    before = np.concatenate([[0.0], cum])[starts]
    cum -= np.repeat(before, np.diff(np.append(starts, v.size)))
    contributions = np.abs(cum[:-1]) * np.where(same_group, np.diff(v), 0.0)
    return np.bincount(g[:-1], weights=contributions, minlength=n_groups)
