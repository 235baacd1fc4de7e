"""Input validation for the whole package: the one place parameters are checked.

Every public function of :mod:`core` validates its inputs here, so that a bad value
always raises :class:`ValueError` with the parameter's name, the value received and
the admissible range (SPEC §7), never an ``assert`` or a silent wrong answer.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

__all__ = [
    "PrivacyLeakWarning",
    "check_bins",
    "check_delta",
    "check_eps",
    "check_integer",
    "check_m",
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


def check_eps(eps, name: str = "eps") -> tuple[np.ndarray, bool]:
    """Privacy parameter ε > 0, scalar or array.

    Returns
    -------
    eps : ndarray of float, at least 1-D
    scalar : bool
        Whether the input was a scalar, so callers can return a scalar back.
    ``ε = +inf`` is admitted (the limit ε → ∞); NaN and ε ≤ 0 are not.
    """
    scalar = np.ndim(eps) == 0
    try:
        arr = np.atleast_1d(np.asarray(eps, dtype=float))
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive real number or array, got {eps!r}") from None
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    bad = ~(arr > 0)  # catches NaN too
    if bad.any():
        raise ValueError(f"{name} must be in (0, ∞], got {arr[bad][0]!r}")
    return arr, scalar


def check_delta(delta, name: str = "delta") -> float:
    """Privacy parameter δ in the open interval (0, 1)."""
    if not _is_real_scalar(delta) or not (0.0 < float(delta) < 1.0):
        raise ValueError(f"{name} must be in (0, 1), got {delta!r}")
    return float(delta)


def check_bins(bins, name: str = "bins") -> int:
    """Number of histogram bins per axis: an integer ``B >= 1``."""
    return check_integer(name, bins, minimum=1)


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
    arr = arr.astype(np.int64)
    if np.any(arr < 1):
        raise ValueError(f"{name} must all be >= 1, got {int(arr.min())}")
    return arr


def check_py_parameters(sigma, theta, k: int | None = None) -> tuple[float, float, int | None]:
    """Admissible Pitman–Yor parameters (SPEC §2).

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
    if sigma >= 1:
        raise ValueError(f"sigma must be < 1, got {sigma!r}")
    if sigma >= 0:
        if theta <= -sigma:
            raise ValueError(f"theta must be > -sigma = {-sigma!r} when sigma is in [0, 1), got {theta!r}")
        return sigma, theta, None
    z_real = theta / abs(sigma)
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


def check_bounds(bounds, name: str = "bounds", *, positive: bool = False) -> tuple[float, float]:
    """Public bounds ``(lo, hi)`` of a numeric column: finite reals with ``lo < hi``.

    With ``positive`` (the column is log-transformed) also ``lo > 0``.

    Returns
    -------
    lo, hi : float
    """
    try:
        lo, hi = bounds
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (lo, hi) of finite numbers with lo < hi, got {bounds!r}") from None
    if not (_is_real_scalar(lo) and _is_real_scalar(hi) and math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"{name} must be a pair (lo, hi) of finite numbers with lo < hi, got {bounds!r}")
    lo, hi = float(lo), float(hi)
    if not lo < hi:
        raise ValueError(f"{name} must satisfy lo < hi, got lo={lo!r}, hi={hi!r}")
    if positive and lo <= 0:
        raise ValueError(f"{name} must have lo > 0 for a log-transformed column (log needs positive values), "
                         f"got lo={lo!r}")
    return lo, hi


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

    The scaling must use public bounds (SPEC §4); a value outside [0, 1] means the bounds
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
    try:
        arr = np.asarray(values)
    except Exception:  # pragma: no cover - exotic inputs
        raise ValueError(f"{name} must be positive integers") from None
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be positive integers, got dtype {arr.dtype}")
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.floor(arr))
        if bad.any():
            raise ValueError(f"{name} must be integers, got {arr[bad].ravel()[0]!r}")
        if np.any(np.abs(arr) >= 2.0**62):
            raise ValueError(f"{name} must be integers below 2**62")
    arr = arr.astype(np.int64)
    if np.any(arr < 1):
        hi = "∞" if maximum is None else str(maximum)
        raise ValueError(f"{name} must be integers in [1, {hi}], got {int(arr.min())}")
    if maximum is not None and np.any(arr > maximum):
        raise ValueError(f"{name} must be integers in [1, {maximum}], got {int(arr.max())}")
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
