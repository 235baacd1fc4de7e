"""Kernel density estimates and their L2 distance (thesis §7; docs/mathematics.md §5).
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ..validation import (
    KDE_MIN_BANDWIDTH,
    check_finite_array,
    check_integer,
    check_metric_sample,
    check_real,
    check_sample_weights,
)
from .distances import _counts, _metric_sample


#: Largest number of points of a KDE evaluation grid.
MAX_KDE_GRID = 2**20


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
    """Gaussian KDE (``scipy.stats.gaussian_kde``, Scott's rule) evaluated on a grid (docs/mathematics.md §5).

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
        return _evaluate(stats.gaussian_kde(x, bw_method=h / data_sd, weights=w), g)
    x = _kde_sample(values, "values")
    w = None if weights is None else check_sample_weights(weights, x.size, "weights")
    g = _kde_grid_points(grid)
    if w is not None:
        mean = float(w @ x)
        sd = math.sqrt(max(0.0, float(w @ (x - mean) ** 2)))
        _check_bandwidth(sd * (1.0 / float(w @ w)) ** (-0.2), "values (with their weights)")
    return _evaluate(stats.gaussian_kde(x, weights=w), g)


def _evaluate(kde: stats.gaussian_kde, grid: np.ndarray) -> np.ndarray:
    """``kde.evaluate(grid)`` of a 1-D ``gaussian_kde``: its bandwidth and weights, and the sums
    of scipy's kernel estimate — :math:`\\frac{1}{\\sqrt{2\\pi}s}\\sum_i w_i
    e^{-(x_i/s - g/s)^2/2}`, s the kernel's SD — by blocks of numpy operations and a
    matrix-vector product, several times faster than scipy's loop (equal to rounding)."""
    sd = math.sqrt(float(kde.covariance[0, 0]))
    points, at, weights = kde.dataset[0] / sd, grid / sd, kde.weights
    out = np.zeros(at.size)
    block = max(1, (1 << 22) // at.size)             # ~32 MB of work array
    for start in range(0, points.size, block):
        d = at[:, None] - points[None, start:start + block]
        np.square(d, out=d)
        d *= -0.5
        np.exp(d, out=d)
        out += d @ weights[start:start + block]
    return out * ((2.0 * math.pi) ** -0.5 / sd)


#: Largest refined grid :func:`kde_curves` bins on (beyond it the KDE is evaluated exactly).
_CURVE_GRID = 1 << 16


def kde_curves(samples, grid, *, first_counts=None) -> list:
    """The KDE of each sample on one grid (docs/mathematics.md §5), or ``None`` for a sample
    without one (a single distinct value): for pictures of several samples at once.

    On an equally spaced ``grid`` each KDE is the binned one of :func:`binned_kde_runs` on
    the grid refined s times, s the smallest step count that makes the refined step at
    most a sixth of the sample's Scott bandwidth (error about 1e-3 of the density's peak),
    read at the grid's own points; samples of equal size and refinement in one call. A refined grid of
    more than 2^16 points, or an uneven grid, gets the exact :func:`kde_on_grid`.

    Parameters
    ----------
    samples : sequence of array_like, each shape (m_i,)
    grid : array_like, shape (G,) (e.g. :func:`kde_grid`)
    first_counts : array_like of int ≥ 1, optional
        Multiplicities of the values of the first sample (a frequency table).

    Returns
    -------
    list of (ndarray, shape (G,)) or None
    """
    g = _kde_grid_points(grid)
    step = (g[-1] - g[0]) / (g.size - 1)
    even = step > 0 and np.allclose(np.diff(g), step, rtol=1e-9, atol=0.0)
    out: list = [None] * len(samples)
    groups: dict[tuple, list] = {}
    for i, values in enumerate(samples):
        counts = first_counts if i == 0 else None
        x = _metric_sample(values, f"sample {i}", min_size=1).reshape(-1)
        if counts is None and (x.size < 2 or np.all(x == x[0])):
            continue
        h = scott_bandwidth(x, counts) if counts is not None else scott_bandwidth(x)
        if not _has_kde(h):
            continue
        refine = max(1, math.ceil(6.0 * step / h)) if even else 0
        if not even or (g.size - 1) * refine + 1 > _CURVE_GRID:
            out[i] = kde_on_grid(x, g, counts=counts)
        elif counts is not None:
            fine = np.linspace(g[0], g[-1], (g.size - 1) * refine + 1)
            out[i] = binned_kde_runs(x[None, :], fine, counts=counts)[0, ::refine]
        else:
            groups.setdefault((x.size, refine), []).append((i, x))
    for (_, refine), members in groups.items():
        fine = np.linspace(g[0], g[-1], (g.size - 1) * refine + 1)
        for (i, _), density in zip(members, binned_kde_runs(np.stack([x for _, x in members]), fine)):
            out[i] = density[::refine]
    return out


def kde_l2(a, b, grid=None, *, a_weights=None, b_weights=None, size: int = 512) -> float:
    """KDE-L2 distance :math:`\\big(\\int(\\hat f_a-\\hat f_b)^2\\big)^{1/2}` (docs/mathematics.md §5, thesis §7).

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
