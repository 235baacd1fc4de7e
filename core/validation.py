"""Input validation for the whole package: the one place parameters are checked.

Every public function of :mod:`core` validates its inputs here, so that a bad value
always raises :class:`ValueError` with the parameter's name, the value received and
the admissible range (docs/mathematics.md §7), never an ``assert`` or a silent wrong answer.
"""

from __future__ import annotations

import math
from fractions import Fraction
import numbers
import warnings

import numpy as np

__all__ = [
    "PrivacyLeakWarning",
    "check_bins",
    "check_budget_value",
    "check_delta",
    "check_eps",
    "check_integer",
    "check_m",
    "check_name",
    "check_multiplicities",
    "check_positive",
    "check_py_parameters",
    "check_rng",
    "warn_bounds_from_data",
]


class PrivacyLeakWarning(RuntimeWarning):
    """A choice that weakens the stated privacy guarantee (as in diffprivlib).

    Raised, for example, when the bounds of the base measure or of the histogram grid
    are read off the confidential data instead of being supplied as public knowledge.
    """


def warn_bounds_from_data(what: str = "bounds") -> None:
    """Emit a :class:`PrivacyLeakWarning` for bounds computed from the data."""
    warnings.warn(
        f"The {what} were computed from the confidential data. They are not private: "
        "the stated differential-privacy guarantee does not cover them. Supply public "
        "bounds to remove this leak.",
        PrivacyLeakWarning,
        stacklevel=3,
    )


def _is_real_scalar(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_integer(name: str, value, *, minimum: int | None = None,
                  maximum: int | None = None) -> int:
    """Return ``value`` as ``int`` if it is an integer in ``[minimum, maximum]``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if isinstance(value, numbers.Integral):
        ivalue = int(value)
    else:
        if not math.isfinite(value) or float(value) != math.floor(value):
            raise ValueError(f"{name} must be an integer, got {value!r}")
        ivalue = int(value)
    if minimum is not None and ivalue < minimum:
        hi = "∞" if maximum is None else str(maximum)
        raise ValueError(f"{name} must be an integer in [{minimum}, {hi}], got {value!r}")
    if maximum is not None and ivalue > maximum:
        lo = "-∞" if minimum is None else str(minimum)
        raise ValueError(f"{name} must be an integer in [{lo}, {maximum}], got {value!r}")
    return ivalue


def check_m(m, name: str = "m") -> int:
    """Synthetic sample size: an integer ``m >= 1``."""
    return check_integer(name, m, minimum=1)


def check_positive(name: str, value, *, allow_zero: bool = False) -> float:
    """A finite real number ``> 0`` (``>= 0`` with ``allow_zero``)."""
    if not _is_real_scalar(value) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    if value < 0 or (value == 0 and not allow_zero):
        rng = "[0, ∞)" if allow_zero else "(0, ∞)"
        raise ValueError(f"{name} must be in {rng}, got {value!r}")
    return float(value)


def check_eps(eps, name: str = "eps", *, allow_zero: bool = False) -> tuple[np.ndarray, bool]:
    """Privacy parameter ε > 0 (ε ≥ 0 with ``allow_zero``), scalar or array.

    Returns
    -------
    eps : ndarray of float, at least 1-D
    scalar : bool
        Whether the input was a scalar, so callers can return a scalar back.
    ``ε = +inf`` is admitted (the limit ε → ∞); NaN and ε ≤ 0 (ε < 0) are not.
    """
    scalar = np.ndim(eps) == 0
    lo = "[0" if allow_zero else "(0"
    try:
        if isinstance(eps, (str, bytes)) or np.asarray(eps).dtype.kind not in "iuf":
            raise TypeError
        arr = np.atleast_1d(np.asarray(eps, dtype=float))
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number or array in {lo}, ∞], got {eps!r}") from None
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    bad = ~(arr >= 0) if allow_zero else ~(arr > 0)  # catches NaN too
    if bad.any():
        raise ValueError(f"{name} must be in {lo}, ∞], got {float(arr[bad][0])!r}")
    return arr, scalar


def check_delta(delta, name: str = "delta") -> float:
    """Privacy parameter δ in the open interval (0, 1)."""
    if not _is_real_scalar(delta) or not (0.0 < float(delta) < 1.0):
        raise ValueError(f"{name} must be in (0, 1), got {delta!r}")
    return float(delta)


def check_bins(bins, name: str = "bins") -> int:
    """Number of histogram bins per axis: an integer ``B >= 1``."""
    return check_integer(name, bins, minimum=1)


def check_levels(levels, d: int | None = None, name: str = "levels") -> tuple | None:
    """Axes of a product histogram domain: ``None`` (every axis numeric), or one entry per
    column, ``None`` for a numeric axis (equal bins on [0, 1]) and an integer ``K >= 1`` for a
    categorical axis with K public categories (docs/mathematics.md §4.7).

    ``d``: the number of columns the entries must match, if known.
    """
    if levels is None:
        return None
    try:
        entries = tuple(levels)
    except TypeError:
        raise ValueError(f"{name} must be None or a sequence with one entry per column, got {levels!r}") from None
    if not entries:
        raise ValueError(f"{name} must have one entry per column, got an empty sequence")
    out = tuple(None if e is None else check_integer(f"{name}[{j}]", e, minimum=1) for j, e in enumerate(entries))
    if d is not None and len(out) != d:
        raise ValueError(f"{name} must have one entry per column ({d}), got {len(out)}")
    return out


def check_multiplicities(multiplicities, name: str = "multiplicities") -> np.ndarray:
    """Multiplicities n_1..n_k of the distinct values: positive integers, k ≥ 1.

    Returns an ``int64`` array of shape ``(k,)``.
    """
    try:
        arr = np.asarray(multiplicities)
    except Exception:  # pragma: no cover - exotic inputs
        raise ValueError(f"{name} must be a 1-D array of positive integers") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of positive integers, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty: the confidential data must have at least one record")
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.floor(arr)):
            raise ValueError(f"{name} must be integers, got {arr[~(arr == np.floor(arr))][:1]!r}")
    if arr.dtype.kind == "f" and float(arr.max()) > MAX_RECORDS or \
            arr.dtype.kind == "u" and int(arr.max()) > MAX_RECORDS:
        raise ValueError(f"{name} must sum to at most MAX_RECORDS = 2**53 records, got a multiplicity "
                         f"{arr.max()!r}")
    arr = arr.astype(np.int64)
    if np.any(arr < 1):
        raise ValueError(f"{name} must all be >= 1, got {int(arr.min())}")
    # Sum in Python integers: an int64 sum could wrap around silently.
    if arr.max() > MAX_RECORDS or arr.size * int(arr.max()) > MAX_RECORDS and sum(arr.tolist()) > MAX_RECORDS:
        raise ValueError(f"{name} must sum to at most MAX_RECORDS = 2**53 records (n stays exact in "
                         f"double precision), got a larger total")
    return arr


#: Largest |θ| accepted: θ + n + m and the beta-binomial moments must stay finite floats.
MAX_THETA = 1e300


def check_py_parameters(sigma, theta, k: int | None = None) -> tuple[float, float, int | None]:
    """Admissible Pitman–Yor parameters (docs/mathematics.md §2).

    * ``σ ∈ [0, 1)`` with ``θ > −σ``;
    * ``σ < 0`` with ``θ = z·|σ|`` for an integer ``z ≥ k`` (the size of a public
      category domain).

    Returns
    -------
    sigma, theta : float
    z : int or None
        The number of public categories when ``σ < 0``, else ``None``.
    """
    if not _is_real_scalar(sigma) or not math.isfinite(sigma):
        raise ValueError(f"sigma must be a finite real number in (-∞, 1), got {sigma!r}")
    if not _is_real_scalar(theta) or not math.isfinite(theta):
        raise ValueError(f"theta must be a finite real number, got {theta!r}")
    sigma, theta = float(sigma), float(theta)
    if abs(theta) > MAX_THETA:
        raise ValueError(f"theta must be in [-1, {MAX_THETA:g}] (θ + n + m must stay a finite float), got {theta!r}")
    if sigma >= 1:
        raise ValueError(f"sigma must be < 1, got {sigma!r}")
    if sigma >= 0:
        if theta <= -sigma:
            raise ValueError(f"theta must be > -sigma = {-sigma!r} when sigma is in [0, 1), got {theta!r}")
        return sigma, theta, None
    z_real = theta / abs(sigma)
    if not abs(z_real) <= 2.0**53:  # also catches ±inf (theta / subnormal sigma)
        raise ValueError(
            f"theta/|sigma| = z, the number of public categories when sigma < 0, must be at most "
            f"2**53, got theta={theta!r}, sigma={sigma!r} (theta/|sigma| = {z_real!r})")
    z = int(round(z_real))
    if z < 1 or abs(z_real - z) > 1e-9 * max(1.0, abs(z_real)):
        raise ValueError(
            f"theta must equal z*|sigma| for an integer z >= 1 when sigma < 0 "
            f"(z = number of public categories), got theta={theta!r}, sigma={sigma!r} "
            f"(theta/|sigma| = {z_real!r})")
    if k is not None and z < k:
        raise ValueError(
            f"theta must equal z*|sigma| with z >= k = {k} observed categories when sigma < 0, "
            f"got z = theta/|sigma| = {z}")
    return sigma, theta, z


def check_rng(rng, name: str = "rng") -> np.random.Generator:
    """A :class:`numpy.random.Generator` (never the global ``np.random`` state)."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            f"{name} must be a numpy.random.Generator (make one with numpy.random.default_rng(seed)), "
            f"got {type(rng).__name__}")
    return rng


__all__ += ["check_bounds"]


def check_bounds(bounds, name: str = "bounds", *, positive: bool = False,
                 keep_integers: bool = False) -> tuple[float, float]:
    """Public bounds ``(lo, hi)`` of a numeric column: finite reals with ``lo < hi``.

    With ``positive`` (the column is log-transformed) also ``lo > 0``. With
    ``keep_integers`` a pair of whole numbers is compared and returned as exact ``int``
    (``float()`` would move ``2**53 + 1`` to ``2**53``, and make ``(10**29, 10**29 + 6)``
    look empty).

    Returns
    -------
    lo, hi : float (or int, see ``keep_integers``)
    """
    try:
        lo, hi = bounds
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (lo, hi) of finite numbers with lo < hi, got {bounds!r}") from None
    exact = keep_integers and all(isinstance(b, numbers.Integral) and not isinstance(b, (bool, np.bool_))
                                  for b in (lo, hi))
    if exact:
        lo, hi = int(lo), int(hi)
    elif _is_real_scalar(lo) and _is_real_scalar(hi) and math.isfinite(lo) and math.isfinite(hi):
        lo, hi = float(lo), float(hi)
    else:
        raise ValueError(f"{name} must be a pair (lo, hi) of finite numbers with lo < hi, got {bounds!r}")
    if not lo < hi:
        raise ValueError(f"{name} must satisfy lo < hi, got lo={lo!r}, hi={hi!r}")
    if positive and lo <= 0:
        raise ValueError(f"{name} must have lo > 0 for a log-transformed column (log needs positive values), "
                         f"got lo={lo!r}")
    return lo, hi


__all__ += ["MAX_GRID_POINTS", "check_grid_step"]

#: Largest number of points of one column's public grid (docs/mathematics.md §3.3.1): the grid
#: is an array of this many floats at most (80 MB).
MAX_GRID_POINTS = 10**7


def check_grid_step(step, bounds, *, log: bool = False, name: str = "grid") -> tuple[float, int]:
    """A public grid step ``s > 0`` on validated ``bounds`` and the number of grid points ``z``.

    The points are ``g(lo) + j·s`` for ``j = 0 … z − 1`` with ``g`` = log (``log``) or the
    identity, and ``z = ⌊(g(hi) − g(lo))/s⌋ + 1``. On a linear grid the bounds and the step
    count as the decimal numbers they print as (``0.1`` is one tenth), so the grid
    ``[0, 1]`` with step ``0.1`` has its 11 points; on a log grid ``z`` is computed in
    floating point with a relative slack of 1e-9 (``g(hi)`` itself is rounded).

    Returns
    -------
    step : float
    z : int in [1, MAX_GRID_POINTS]
    """
    if not _is_real_scalar(step) or not math.isfinite(step) or not step > 0:
        raise ValueError(f"{name} step must be a finite real number > 0, got {step!r}")
    step = float(step)
    lo, hi = bounds
    if log:
        span = (math.log(hi) - math.log(lo)) / step
        z = math.floor(span * (1 + 1e-9)) + 1 if span < MAX_GRID_POINTS else MAX_GRID_POINTS + 1
    else:
        span = (Fraction(repr(float(hi))) - Fraction(repr(float(lo)))) / Fraction(repr(step))
        z = math.floor(span) + 1
    if z > MAX_GRID_POINTS:
        raise ValueError(f"{name} step {step!r} makes more than {MAX_GRID_POINTS:,} grid points on "
                         f"[{lo!r}, {hi!r}]{' (log scale)' if log else ''}: choose a coarser step")
    return step, int(z)


__all__ += ["check_finite_eps", "check_sample", "check_sample_weights", "check_unit_data"]


def check_finite_eps(eps, name: str = "eps") -> float:
    """A scalar privacy parameter ε in (0, ∞): finite, for mechanisms whose noise scale is 1/ε."""
    if not _is_real_scalar(eps) or not math.isfinite(eps) or not eps > 0:
        raise ValueError(f"{name} must be a finite real number in (0, ∞), got {eps!r}")
    return float(eps)


def check_sample(values, name: str = "data", *, min_size: int = 1, one_column: bool = False) -> np.ndarray:
    """A numeric sample: shape ``(n,)`` or ``(n, d)``, ``n ≥ min_size``, ``d ≥ 1``, finite values.

    With ``one_column`` only shape ``(n,)`` is admitted. Returns a ``float64`` array of
    the same shape.
    """
    try:
        arr = np.asarray(values)
    except Exception:  # pragma: no cover - exotic inputs
        raise ValueError(f"{name} must be a numeric array of shape (n,) or (n, d)") from None
    if arr.ndim not in (1, 2):
        raise ValueError(f"{name} must have shape (n,) or (n, d), got shape {arr.shape}")
    if one_column and arr.ndim != 1:
        raise ValueError(f"{name} must be one numeric column, shape (n,), got shape {arr.shape}")
    if arr.shape[0] < min_size:
        what = "is empty" if arr.shape[0] == 0 else f"has {arr.shape[0]} rows"
        raise ValueError(f"{name} {what}: at least {min_size} value(s) are needed")
    if arr.ndim == 2 and arr.shape[1] == 0:
        raise ValueError(f"{name} has no columns: shape {arr.shape}")
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
    arr = arr.astype(np.float64, copy=False)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or infinity); "
                         f"{int(np.count_nonzero(~np.isfinite(arr)))} non-finite value(s) found")
    return arr


def check_sample_weights(weights, size: int, name: str = "weights") -> np.ndarray:
    """Non-negative finite weights of a sample of ``size`` points, with a positive total.

    Returns a ``float64`` array of shape ``(size,)`` normalised to sum to one.
    """
    try:
        arr = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a 1-D array of non-negative numbers") from None
    if arr.shape != (size,):
        raise ValueError(f"{name} must have shape ({size},) to match its sample, got {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must be finite and >= 0")
    total = arr.sum()
    if not total > 0:
        raise ValueError(f"{name} must have a positive sum, got {total!r}")
    return arr / total


def check_unit_data(data, name: str = "data") -> np.ndarray:
    """Confidential data already scaled to the unit box: shape ``(n,)`` or ``(n, d)``, values in [0, 1].

    The scaling must use public bounds (docs/mathematics.md §4); a value outside [0, 1] means the bounds
    did not cover the data.
    """
    arr = check_sample(data, name)
    lo, hi = float(arr.min()), float(arr.max())
    if lo < 0.0 or hi > 1.0:
        raise ValueError(f"{name} must lie in [0, 1] after scaling by public bounds, got values in "
                         f"[{lo!r}, {hi!r}]")
    return arr


__all__ += ["check_positive_integer_array", "check_probability"]


def check_positive_integer_array(values, name: str, *, maximum: int | None = None) -> np.ndarray:
    """Integers ``>= 1`` (and ``<= maximum``), scalar or array of any shape, non-empty.

    Returns an ``int64`` array (at least 0-D) of the same shape.
    """
    return _integer_array(values, name, minimum=1, maximum=maximum, allow_empty=False)


def _integer_array(values, name: str, *, minimum: int, maximum: int | None, allow_empty: bool) -> np.ndarray:
    """Integers in ``[minimum, maximum]`` (below 2**62), any shape, as an ``int64`` array."""
    kind = "positive" if minimum >= 1 else "non-negative"
    try:
        arr = np.asarray(values)
    except Exception:  # pragma: no cover - exotic inputs
        raise ValueError(f"{name} must be {kind} integers") from None
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"{name} must not be empty")
    if arr.dtype.kind not in "iuf" or arr.dtype == bool:
        raise ValueError(f"{name} must be {kind} integers, got dtype {arr.dtype}")
    if arr.size == 0:
        return arr.astype(np.int64)
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.floor(arr))
        if bad.any():
            raise ValueError(f"{name} must be integers, got {arr[bad].ravel()[0]!r}")
    if (arr.dtype.kind == "f" and float(np.abs(arr).max()) >= 2.0**62) or \
            (arr.dtype.kind == "u" and int(arr.max()) >= 2**62):
        raise ValueError(f"{name} must be integers below 2**62, got {arr.max()!r}")
    arr = arr.astype(np.int64)
    hi = "∞" if maximum is None else str(maximum)
    if np.any(arr < minimum):
        raise ValueError(f"{name} must be integers in [{minimum}, {hi}], got {int(arr.min())}")
    if maximum is not None and np.any(arr > maximum):
        raise ValueError(f"{name} must be integers in [{minimum}, {maximum}], got {int(arr.max())}")
    return arr


def check_probability(value, name: str, *, allow_zero: bool = False, allow_one: bool = False) -> float:
    """A probability or level: a real number in (0, 1), optionally closed at either end."""
    left, right = ("[" if allow_zero else "("), ("]" if allow_one else ")")
    ok = _is_real_scalar(value) and math.isfinite(value)
    if ok:
        v = float(value)
        ok = (v > 0 or (allow_zero and v == 0)) and (v < 1 or (allow_one and v == 1))
    if not ok:
        raise ValueError(f"{name} must be in {left}0, 1{right}, got {value!r}")
    return float(value)


# ------------------------------------------------------ resource limits and generic checks
__all__ += ["KDE_MIN_BANDWIDTH", "MAX_ABS_VALUE", "MAX_RECORDS", "MAX_RELEASE_SIZE",
            "MAX_RELEASE_VALUES", "check_counts", "check_finite_array", "check_metric_sample",
            "check_real", "check_release_budget", "check_release_size", "check_row_counts"]

#: Largest number of confidential records ``n = Σ n_i``: counts and ``n`` stay exact in
#: float64 (2**53), so every formula of docs/mathematics.md §3 sees the integers it was given.
MAX_RECORDS = 2**53
#: Largest synthetic sample size ``m`` of one release. A release needs about 25 bytes per
#: value (index, flag and value), so the limit keeps one release below ~250 MB.
MAX_RELEASE_SIZE = 10**7
#: Largest number of synthetic values one call produces, ``runs × m × d`` (400 MB of float64).
MAX_RELEASE_VALUES = 5 * 10**7
#: Largest magnitude of a value the utility metrics accept (W1, KDE, summaries): sums of
#: up to 2**53 squared deviations, (2·1e140)² · 2**53 < 1e298, stay finite in double precision.
MAX_ABS_VALUE = 1e140
#: Smallest Scott bandwidth of a KDE: the density (~1/h) and its square (the KDE-L2
#: integrand, ~1/h² ≤ 1e280) stay inside the double-precision range.
KDE_MIN_BANDWIDTH = 1e-140


def check_real(name: str, value, *, low: float = -math.inf, high: float = math.inf,
               low_open: bool = False, high_open: bool = False) -> float:
    """A finite real number in the interval from ``low`` to ``high`` (open or closed ends)."""
    left = "(" if low_open or low == -math.inf else "["
    right = ")" if high_open or high == math.inf else "]"
    lo_txt = "-∞" if low == -math.inf else repr(low)
    hi_txt = "∞" if high == math.inf else repr(high)
    if not _is_real_scalar(value) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite real number in {left}{lo_txt}, {hi_txt}{right}, got {value!r}")
    v = float(value)
    if v < low or (low_open and v == low) or v > high or (high_open and v == high):
        raise ValueError(f"{name} must be in {left}{lo_txt}, {hi_txt}{right}, got {value!r}")
    return v


def check_counts(values, name: str, *, maximum: int | None = None) -> np.ndarray:
    """Non-negative integers (``<= maximum``), scalar or array of any shape.

    Returns an ``int64`` array (at least 0-D) of the same shape; an empty array is allowed.
    """
    return _integer_array(values, name, minimum=0, maximum=maximum, allow_empty=True)


def check_row_counts(counts, rows: int, *, minimum: int = 0, name: str = "counts") -> np.ndarray | None:
    """Records per row of a frequency table, or ``None`` (each row is one record).

    Whole numbers ``>= minimum`` (0: a row may hold no record; 1: distinct rows of data),
    one per row: returns ``int64`` of shape ``(rows,)``.
    """
    if counts is None:
        return None
    arr = _integer_array(counts, name, minimum=minimum, maximum=None, allow_empty=True)
    if arr.shape != (rows,):
        raise ValueError(f"{name} must have one entry per row ({rows}), got shape {arr.shape}")
    return arr


def check_release_size(m, name: str = "m") -> int:
    """Size of one synthetic release: an integer in ``[1, MAX_RELEASE_SIZE]``.

    The limit is a resource limit, stated up front rather than discovered as a
    ``MemoryError``: a release holds its ``m`` values in memory.
    """
    if isinstance(m, bool) or not isinstance(m, numbers.Real) or (
            not isinstance(m, numbers.Integral) and (not math.isfinite(m) or m != math.floor(m))):
        raise ValueError(f"{name} must be an integer in [1, {MAX_RELEASE_SIZE}], got {m!r}")
    if not 1 <= int(m) <= MAX_RELEASE_SIZE:
        raise ValueError(f"{name} must be an integer in [1, {MAX_RELEASE_SIZE}] (MAX_RELEASE_SIZE: one release "
                         f"is held in memory), got {m!r}")
    return int(m)


def check_release_budget(runs: int, m: int, d: int = 1) -> None:
    """Refuse a call that would produce more than ``MAX_RELEASE_VALUES`` synthetic values."""
    total = int(runs) * int(m) * int(d)
    if total > MAX_RELEASE_VALUES:
        raise ValueError(f"runs × m × d = {runs} × {m} × {d} = {total} synthetic values exceed the limit "
                         f"MAX_RELEASE_VALUES = {MAX_RELEASE_VALUES}; lower runs or m")


def check_finite_array(values, name: str, *, ndim: int | None = None, min_size: int = 0) -> np.ndarray:
    """A ``float64`` array of finite numbers (optionally of a given ``ndim`` and non-trivial size)."""
    try:
        arr = np.asarray(values)
    except Exception:  # pragma: no cover - exotic inputs
        raise ValueError(f"{name} must be an array of finite numbers") from None
    if arr.dtype.kind not in "iuf" or arr.dtype == bool:
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {arr.shape}")
    if arr.size < min_size or (ndim is not None and min_size and min(arr.shape, default=0) == 0):
        raise ValueError(f"{name} must have at least {min_size} value(s), got shape {arr.shape}")
    arr = arr.astype(np.float64, copy=False)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or infinity); "
                         f"{int(np.count_nonzero(~np.isfinite(arr)))} non-finite value(s) found")
    return arr


def check_metric_sample(values, name: str, *, ndim: int | None = None, min_size: int = 1) -> np.ndarray:
    """Values a utility metric (W1, KDE, summaries) can process: finite, ``|x| <= MAX_ABS_VALUE``."""
    arr = check_finite_array(values, name, ndim=ndim, min_size=min_size)
    if arr.size:
        top = float(np.abs(arr).max())
        if top > MAX_ABS_VALUE:
            raise ValueError(f"{name} must lie within ±{MAX_ABS_VALUE:g} for the utility metrics (means, "
                             f"squared deviations and distances must stay finite), got a value of magnitude "
                             f"{top:g}; rescale the column (e.g. change its units)")
    return arr


# ---------------------------------------------------------------- release recipes (core.release.recipe)
__all__ += ["check_choice", "check_fields", "check_flag", "check_seed"]


def check_flag(name: str, value) -> bool:
    """A yes/no setting: ``True`` or ``False`` (not 0/1 or a string, which a JSON file may hold by mistake)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be true or false, got {value!r}")
    return bool(value)


def check_choice(name: str, value, choices) -> str:
    """One of a fixed set of names (e.g. a mechanism or a release-size rule)."""
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(repr(c) for c in choices)}, got {value!r}")
    return value


def check_fields(name: str, mapping, known, required=()) -> dict:
    """A JSON object with only ``known`` keys and every ``required`` one.

    Unknown keys are refused rather than ignored: a misspelt field (``"decimal"`` for
    ``"decimals"``) would otherwise silently change what a recipe releases.
    """
    if not isinstance(mapping, dict):
        raise ValueError(f"{name} must be a JSON object (a mapping of field names to values), "
                         f"got {type(mapping).__name__}")
    unknown = [k for k in mapping if k not in known]
    if unknown:
        raise ValueError(f"unknown field(s) in {name}: {', '.join(repr(k) for k in unknown)}; "
                         f"the known fields are {', '.join(repr(k) for k in known)}")
    missing = [k for k in required if k not in mapping]
    if missing:
        raise ValueError(f"{name} lacks the required field(s) {', '.join(repr(k) for k in missing)}")
    return mapping


def check_seed(seed, name: str = "seed") -> int:
    """Seed of a ``numpy.random.default_rng``: an integer in [0, 2**128)."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= int(seed) < 2**128:
        raise ValueError(f"{name} must be an integer >= 0 (below 2**128), got {seed!r}")
    return int(seed)


def check_name(name: str, value, *, max_length: int = 200) -> str:
    """A name a person types and others read (a ledger's dataset, who releases): a non-empty
    string of at most ``max_length`` printable characters, surrounding spaces removed."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    value = value.strip()
    if len(value) > max_length or any(ord(c) < 32 for c in value):
        raise ValueError(f"{name} must be at most {max_length} printable characters, got {value[:40]!r}…")
    return value


def check_budget_value(name: str, value, upper: float) -> float:
    """One coordinate of a privacy budget (docs/audit.md §8): a finite number in [0, ``upper``)
    (``math.inf`` for ε, 1 for δ)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)) \
            or not 0 <= float(value) < upper:
        raise ValueError(f"{name} must be a number in [0, {upper:g}), got {value!r}")
    return float(value)
