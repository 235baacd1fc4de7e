"""Wasserstein distances between a release and the data (POT): exact in 1-D, exact on the
distinct rows while the cost matrix fits, sliced otherwise, and batched over many
releases (docs/mathematics.md §5).
"""
from __future__ import annotations

import os
import warnings

# POT looks for JAX, PyTorch, CuPy and TensorFlow when it is imported and imports each one it
# finds (JAX alone takes about a second; the optional ``peers`` extra installs it). Every
# array here is numpy, so those backends are never used: skip them unless the user's own
# environment asks otherwise (setdefault keeps an explicit setting).
for _backend in ("JAX", "PYTORCH", "CUPY", "TENSORFLOW"):
    os.environ.setdefault(f"POT_BACKEND_DISABLE_{_backend}", "1")

import numpy as np  # noqa: E402  (after the environment POT reads at import)
import ot  # noqa: E402
import pandas as pd
from scipy.spatial import distance

from ..validation import (
    check_finite_array,
    check_integer,
    check_levels,
    check_metric_sample,
    check_multiplicities,
    check_real,
    check_rng,
    check_sample,
    check_sample_weights,
)



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
    """1-Wasserstein distance between two (weighted) empirical measures (docs/mathematics.md §5, §7).

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
        with warnings.catch_warnings():   # a stop at the cap is read from the log and falls back below
            warnings.simplefilter("ignore", UserWarning)
            value, log = ot.emd2(wa / wa.sum(), wb / wb.sum(), cost, numItermax=iterations, log=True)
        if log.get("warning") is None:
            return W1Distance(float(value), "exact-emd")
    seed = DEFAULT_SLICED_SEED if rng is None else int(check_rng(rng).integers(0, 2**31 - 1))
    value = ot.sliced_wasserstein_distance(atoms_a, atoms_b, wa / wa.sum(), wb / wb.sum(),
                                           n_projections=n_projections, p=1, seed=seed)
    return W1Distance(float(value), "sliced", n_projections=n_projections, seed=seed)


#: From this many samples on, :class:`_QuantileReference` searches slot by slot (a call per
#: slot pays off once it serves enough samples).
_SLOT_SEARCH_ROWS = 128


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
        # One sort per reference (this runs once per direction of the sliced W1): the atoms and
        # their cumulative weights, each atom's weights summed in its group of equal values.
        order = np.argsort(ref)
        ordered = ref[order]
        first = np.flatnonzero(np.concatenate([[True], ordered[1:] != ordered[:-1]]))
        atoms = ordered[first]
        cum = np.cumsum(np.add.reduceat(w[order], first))
        cum /= cum[-1]
        # Centre the values so the prefix sums below lose no precision to a large offset.
        self.shift = float(atoms[atoms.size // 2])
        # The union of two sorted sets: a stable sort of their concatenation merges two runs in
        # linear time (np.union1d would sort from scratch).
        inner = np.concatenate([cum[:-1], np.arange(1, m) / m])
        inner.sort(kind="stable")
        if inner.size:
            inner = inner[np.concatenate([[True], inner[1:] != inner[:-1]])]
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
        a binary search over all the steps; otherwise, with many samples, each slot's steps
        are searched on their own.
        """
        width = self.end - self.start
        most = int(width.max()) if width.size else 0
        if most > 8 and c.shape[0] >= _SLOT_SEARCH_ROWS:
            # Many samples: search each slot's own steps (a short array in cache) for the
            # samples' values in that slot — the same positions, several times faster than
            # searching all the steps; one call per slot, vectorised over the samples.
            p = np.empty(c.shape, dtype=np.intp)
            for i in range(self.m):
                lo, hi = self.start[i], self.end[i]
                p[:, i] = lo + np.searchsorted(self.values[lo:hi], c[:, i], side="left")
            return p
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
                  rng: np.random.Generator, reference_counts=None, levels=None) -> tuple[np.ndarray, str]:
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
    levels : sequence of (None or int ≥ 1), length d, optional
        Categorical columns (docs/quality.md §8): ``levels[j] = K`` makes column ``j`` hold
        category codes in {0, …, K} (K: any category outside the K listed, e.g. new labels),
        compared by the discrete metric. The ground cost is then
        :math:`\\lVert u-v\\rVert = \\big(\\sum_{\\text{numeric}}(u_j-v_j)^2 +
        \\sum_{\\text{categorical}}\\mathbf 1[u_j\\ne v_j]\\big)^{1/2}`, the Euclidean
        distance of the embedding that puts category ``c`` at :math:`e_c/\\sqrt2`; the
        sliced fallback projects that embedding.

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
    levels = check_levels(levels, d)
    categorical = None if levels is None or all(size is None for size in levels) else \
        np.array([size is not None for size in levels])
    row_counts = None if reference_counts is None else _counts(reference_counts, (k,), "reference_counts")
    n = k if row_counts is None else int(row_counts.sum())
    # Every run's residual problem has at least (distinct data rows − m) rows on one side
    # and one on the other: when that alone exceeds the budget the exact path cannot fit,
    # and the runs' rows need not be identified (the sliced W1 below, as the loop would decide).
    distinct_x = int(np.unique(_row_ids(x)).size)
    if distinct_x > m and R * float(distinct_x - m) > max_exact_entries:
        return _sliced_runs(z, x, row_counts, levels, categorical, n_projections, rng)
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
            cost = _ground_cost(points[rows_of[a_ids]], points[rows_of[b_ids]], categorical)
            with warnings.catch_warnings():   # a stop at the cap is read from the log: sliced W1 instead
                warnings.simplefilter("ignore", UserWarning)
                value, log = ot.emd2(a_w / total, b_w / total, cost,
                                     numItermax=int(max(100_000, 50 * cost.size)), log=True)
            if log.get("warning") is not None:
                break
            out[r] = value * total / (float(n) * float(m))
        else:
            return out, "exact-emd"
    return _sliced_runs(z, x, row_counts, levels, categorical, n_projections, rng)


def _sliced_runs(z, x, row_counts, levels, categorical, n_projections, rng) -> tuple[np.ndarray, str]:
    """The sliced fallback of :func:`joint_w1_runs`, with its method label."""
    if categorical is None:
        values = sliced_wasserstein1_runs(z, x, n_projections=n_projections, rng=rng, reference_weights=row_counts)
    else:
        values = _sliced_mixed_runs(z, x, row_counts, levels, n_projections, rng)
    return values, f"sliced ({n_projections} directions)"


def _ground_cost(a: np.ndarray, b: np.ndarray, categorical: np.ndarray | None) -> np.ndarray:
    """Cost matrix of the joint W1: Euclidean on numeric columns, plus 1 per differing category
    under the square root (see :func:`joint_w1_runs`)."""
    if categorical is None:
        return distance.cdist(a, b)
    numeric = ~categorical
    squared = (distance.cdist(a[:, numeric], b[:, numeric], metric="sqeuclidean") if numeric.any()
               else np.zeros((a.shape[0], b.shape[0])))
    squared += distance.cdist(a[:, categorical], b[:, categorical], metric="hamming") * int(categorical.sum())
    return np.sqrt(squared)


def _sliced_mixed_runs(z: np.ndarray, x: np.ndarray, weights, levels: tuple, n_projections: int,
                       rng: np.random.Generator) -> np.ndarray:
    """Sliced W1 of the embedding of :func:`joint_w1_runs` with categorical columns.

    A direction :math:`\\theta` of the embedding space (one coordinate per numeric column and
    K + 1 per categorical one) projects a row to
    :math:`\\sum_{\\text{numeric}}\\theta_j u_j + \\sum_{\\text{categorical}}\\theta_{j,u_j}/\\sqrt2`:
    a look-up, so the one-hot embedding is never built (memory O(R m), not O(R m K)).
    """
    sizes = [1 if size is None else size + 1 for size in levels]
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    directions = random_directions(int(sum(sizes)), n_projections, rng)
    work = n_projections * (z.shape[0] * z.shape[1] + x.shape[0])
    if work > MAX_SLICED_WORK:
        raise ValueError(f"sliced W1 of {z.shape[0]} runs of m = {z.shape[1]} against n = {x.shape[0]} on "
                         f"{n_projections} directions projects {work} values, more than MAX_SLICED_WORK = "
                         f"{MAX_SLICED_WORK}; use fewer directions or runs")

    def project(rows: np.ndarray, theta: np.ndarray) -> np.ndarray:
        out = np.zeros(rows.shape[:-1])
        for j, size in enumerate(levels):
            if size is None:
                out += rows[..., j] * theta[offsets[j]]
            else:
                out += theta[offsets[j] + rows[..., j].astype(np.int64)] / np.sqrt(2.0)
        return out

    total = np.zeros(z.shape[0])
    for p in range(n_projections):
        theta = directions[:, p]
        total += _QuantileReference(project(x, theta), weights, z.shape[1]).distances(project(z, theta))
    return total / n_projections


def total_variation_runs(samples, reference, size: int, reference_counts=None) -> np.ndarray:
    """Total variation between the categorical column of each release and of the data (docs/quality.md §8).

    .. math:: \\mathrm{TV}(x, Z_r) = \\tfrac12 \\sum_{c} \\big|\\hat p_x(c) - \\hat p_{Z_r}(c)\\big|
              \\in [0, 1]

    over the categories ``0 … size − 1`` and ``size`` (every value outside them, e.g. new
    labels: the data put no mass there, so merging them changes nothing). Cost
    O(R·(m + size) + k), vectorised over runs.

    Parameters
    ----------
    samples : array_like of int, shape (R, m)
        Category codes of each release, in {0, …, size}.
    reference : array_like of int, shape (k,)
        Category codes of the data (or of its frequency table, with ``reference_counts``).
    size : int ≥ 1
        Number of listed categories.
    reference_counts : array_like of int ≥ 1, shape (k,), optional
        Multiplicities of ``reference``.

    Returns
    -------
    ndarray, shape (R,)
    """
    size = check_integer("size", size, minimum=1)
    z = check_finite_array(samples, "samples", ndim=2, min_size=1)
    ref = check_finite_array(reference, "reference", ndim=1, min_size=1)
    for name, codes in (("samples", z), ("reference", ref)):
        if np.any((codes != np.round(codes)) | (codes < 0) | (codes > size)):
            raise ValueError(f"{name} must hold category codes in 0..{size}")
    weights = np.ones(ref.size) if reference_counts is None else \
        _counts(reference_counts, ref.shape, "reference_counts").astype(np.float64)
    p = np.bincount(ref.astype(np.int64), weights=weights, minlength=size + 1)
    p /= p.sum()
    runs, m = z.shape
    flat = (np.arange(runs)[:, None] * (size + 1) + z.astype(np.int64)).ravel()
    q = np.bincount(flat, minlength=runs * (size + 1)).reshape(runs, size + 1) / float(m)
    return 0.5 * np.abs(q - p[None, :]).sum(axis=1)


# ======================================================================== KDE
def _counts(counts, shape: tuple, name: str = "counts") -> np.ndarray:
    """Multiplicities of the values of a 1-D sample: positive integers, one per value."""
    c = check_multiplicities(counts, name)
    if len(shape) != 1 or c.shape != shape:
        raise ValueError(f"{name} must have one count per value, shape {shape}, got {c.shape}")
    return c


def batched_wasserstein1(a_values, a_groups, b_values, b_groups, n_groups, *,
                         a_weights=None, b_weights=None) -> np.ndarray:
    """1-D Wasserstein-1 distances for many pairs of discrete measures at once.

    Group ``r`` pairs the points of ``a`` with ``a_groups == r`` and the points of ``b``
    with ``b_groups == r``; within a group the weights are normalised to one. In one
    dimension

    .. math:: W_1(\\mu, \\nu) = \\int_{\\mathbb R} |F_\\mu(t) - F_\\nu(t)|\\,dt,

    evaluated exactly on the sorted union of the support points. This is the same number
    as :func:`core.evaluation.wasserstein1` (POT) for each group, but for ``R`` groups it
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
