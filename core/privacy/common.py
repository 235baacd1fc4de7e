"""Shared helpers of the accounting: ε arrays, safe-side rounding of δ, the first bad count
⌊(e^ε − 1)w⌋ + 1 and the beta-binomial tail (docs/mathematics.md §3, docs/accuracy.md).
"""
from __future__ import annotations


import numpy as np

from . import betabinom
from .betabinom import UNIT_ROUNDOFF
from ..validation import (
    check_eps,
    check_integer,
    check_multiplicities,
)



#: Largest release size the accounting evaluates (and the default cap of every m*
#: search): a tail costs O(sd) ≤ O(√m·m/√n) terms, bounded in memory by core.privacy.betabinom's
#: chunking; beyond 10^8 synthetic records a release is not something this tool produces.
MAX_ACCOUNTING_M = 10**8


_DEFAULT_M_CAP = 10**7


_TINY = float(np.nextafter(0.0, 1.0))   # a positive exact δ is never returned as 0


_MP_DPS = 60


# --------------------------------------------------------------------------- helpers
def _eps_values(eps, name: str = "eps") -> tuple[np.ndarray, tuple | None]:
    """ε values as a flat array, and the shape to give the result (``None``: a scalar).

    Any array shape is accepted; results are computed on the flattened values and given
    back in the shape of ``eps`` (docs/mathematics.md §7: "same shape as eps").
    """
    arr, scalar = check_eps(eps, name)
    return arr.ravel(), (None if scalar else tuple(np.shape(eps)))


def _shaped(values, shape):
    """A Python float for a scalar ε (``shape`` None), else the values in ε's shape."""
    values = np.asarray(values, dtype=float)
    return float(values.ravel()[0]) if shape is None else values.reshape(shape)


def _round_up_mc(delta):
    """Clopper–Pearson bounds from ``scipy.stats.beta.ppf`` (≈1e-12 relative), rounded up by 1e-10."""
    return np.minimum(1.0, np.asarray(delta, dtype=float) * (1.0 + 1e-10))


def _upper_from_log(log_value, rel):
    """exp(log_value) rounded up by its relative error bound; ≥ TINY if the value is > 0."""
    log_value = np.asarray(log_value, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        up = np.exp(log_value + np.log1p(rel) + 4 * UNIT_ROUNDOFF * (np.abs(log_value) + 1.0))
    up = np.where(log_value > -np.inf, np.maximum(up, _TINY), 0.0)
    return np.minimum(up, 1.0)


def _check_m_accounting(m, name: str = "m") -> int:
    return check_integer(name, m, minimum=1, maximum=MAX_ACCOUNTING_M)


def _check_n(n) -> int:
    return check_integer("n", n, minimum=1, maximum=10**12)


def _first_bad(eps_arr: np.ndarray, weight) -> tuple[np.ndarray, np.ndarray]:
    """Exact first bad count ``⌊(e^ε − 1)·w⌋ + 1`` and the threshold, shape (R, E).

    The bad event of docs/mathematics.md §3 is ``S > (e^ε − 1)·w`` (w = r − 1 for σ = 0, n_l − 1 + α for
    σ < 0); w = 0 makes every ``S ≥ 1`` bad, at every ε (the singleton term). ``inf``
    means no count is bad. (e^ε − 1)·w is never an integer for ε > 0 (e^q is
    transcendental for rational q ≠ 0), so a floating-point product within rounding of
    an integer is settled by mpmath at 60 digits.
    """
    w = np.asarray(weight, dtype=float)[:, None]
    with np.errstate(over="ignore", invalid="ignore"):
        c = np.expm1(eps_arr)[None, :]
        x = np.where(w == 0, 0.0, c * w)
        fl = np.floor(x)
        start = fl + 1.0
        frac = x - fl
        near = (np.isfinite(x) & (x > 0) & (x < 2.0**52)
                & (np.minimum(frac, 1.0 - frac) <= 16 * UNIT_ROUNDOFF * (x + 1.0)))
    start = np.where(np.isfinite(x) & (x < 2.0**52), start, np.inf)
    if near.any():
        import mpmath

        rows, cols = np.nonzero(near)
        with mpmath.workdps(_MP_DPS):
            for i, j in zip(rows, cols):
                exact = mpmath.expm1(mpmath.mpf(float(eps_arr[j]))) * mpmath.mpf(float(w[i, 0]))
                start[i, j] = float(mpmath.floor(exact)) + 1.0
    return start, x


def _offset(eps_arr, weight, start, x, rows, cols) -> np.ndarray:
    """start − (e^ε − 1)·w ∈ (0, 1] at the pairs (rows, cols), accurate to 1e-10 relative
    (mpmath where floating point would leave it less accurate)."""
    d0 = start[rows, cols] - x[rows, cols]
    small = 4 * UNIT_ROUNDOFF * (x[rows, cols] + 1.0) > 1e-10 * d0
    if small.any():
        import mpmath

        w = np.asarray(weight, dtype=float)
        with mpmath.workdps(_MP_DPS):
            for k in np.flatnonzero(small):
                i, j = rows[k], cols[k]
                exact = mpmath.expm1(mpmath.mpf(float(eps_arr[j]))) * mpmath.mpf(float(w[i]))
                d0[k] = float(start[i, j] - exact)
    return d0


def beta_binomial_log_tail(m: int, a, b, s_min: int = 0) -> np.ndarray:
    """Log upper tails of beta-binomial laws on a grid of counts.

    .. math:: \\log P(S \\ge s),\\quad S\\sim\\mathrm{BB}(m, a_j, b_j),\\quad s = s_{\\min},\\dots,m.

    Computed by :func:`core.privacy.betabinom.log_tail` (accurate at large arguments, never
    ``1 − cdf``), so tails far below 1e-300 stay accurate in relative terms.

    Parameters
    ----------
    m : int ≥ 1
    a, b : array_like of float > 0, shape (R,)
    s_min : int in [0, m]

    Returns
    -------
    ndarray, shape (R, m − s_min + 1), every entry ≤ 0
        Entry ``[j, i]`` is :math:`\\log P(S_j \\ge s_{\\min} + i)`.
    """
    m = check_integer("m", m, minimum=1, maximum=10**6)
    s_min = check_integer("s_min", s_min, minimum=0, maximum=m)
    a = np.atleast_1d(np.asarray(a, dtype=float))
    b = np.atleast_1d(np.asarray(b, dtype=float))
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"a and b must be 1-D arrays of the same length, got shapes {a.shape} and {b.shape}")
    if not (np.all(a > 0) and np.all(b > 0) and np.all(a <= 1e300) and np.all(b <= 1e300)):
        raise ValueError("a and b must be in (0, 1e300]")
    if a.size * (m - s_min + 1) > 10**8:
        raise ValueError(f"the table would have {a.size * (m - s_min + 1):,} entries; at most 10^8 are computed")
    s = np.arange(s_min, m + 1, dtype=float)[None, :]
    log_t, _ = betabinom.log_tail(m, a[:, None], b[:, None], s)
    return np.minimum(log_t, 0.0)


def _multiplicity_profile(multiplicities):
    counts = check_multiplicities(multiplicities)
    values, how_many = np.unique(counts, return_counts=True)
    return counts, values, how_many


def _check_scalar_eps(eps, purpose: str = "this call; use synthetic_size_curve for arrays") -> float:
    eps_arr, shape = _eps_values(eps)
    if shape is not None:
        raise ValueError(f"eps must be a scalar for {purpose}, got an array of shape {shape}")
    return float(eps_arr[0])
