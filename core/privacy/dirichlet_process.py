"""σ = 0 (Dirichlet process): the instance-level δ and the exact privacy profile in closed form
(docs/mathematics.md §3.1; Menicucci, Beraha, Favaro and Lazzarini 2026, Theorem 1).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from . import betabinom
from .betabinom import UNIT_ROUNDOFF
from ..validation import (
    check_py_parameters,
)
from .common import (
    _check_m_accounting,
    _eps_values,
    _first_bad,
    _multiplicity_profile,
    _offset,
    _shaped,
    _upper_from_log,
)


# ------------------------------------------------------------------------ σ = 0
def _second_shape(theta: float, n: int, r) -> np.ndarray:
    """b = θ + n − r of S_r ~ BB(m, r, θ + n − r), computed as θ + (n − r).

    n − r is an exact integer, so b carries a single rounding; (θ + n) − r would lose the
    digits of θ below the spacing of θ + n (all of them for θ = 10^-3, n = 10^12), exactly
    where the row r = n makes b = θ decide δ.
    """
    return theta + (float(n) - np.asarray(r, dtype=float))


def _singleton_term_up(m, N) -> float:
    """T_1 = m/(m + N − 1) (N = θ + n) rounded up: at most four roundings of 2^-53 each."""
    return min(1.0, m / (m + (N - 1.0)) * (1.0 + 8 * UNIT_ROUNDOFF))


def _singleton_term_at_most(m: int, theta: float, n: int, delta: float) -> bool:
    """Exact verdict m/(m + θ + n − 1) ≤ δ in rational arithmetic (θ and δ as exact binary values)."""
    d = Fraction(delta)
    return Fraction(m) * (1 - d) <= d * (Fraction(theta) + n - 1)


def _dp_pairs(values, m, eps_arr):
    """The (row, column) pairs r ≥ 2 × ε with a bad count reachable in m draws, and their first bad counts."""
    r = values.astype(float)
    start, x = _first_bad(eps_arr, r - 1.0)
    rows, cols = np.nonzero((r[:, None] >= 2) & (start <= m))
    return r, start, x, rows, cols


def _column_max(values_of, rows, cols, bound, best):
    """best[j] ← max(best[j], value of every pair in column j that can exceed it).

    ``bound[p]`` upper-bounds pair p's value; ``values_of(idx)`` returns the upper-rounded
    values of the pairs ``idx``. Pairs are evaluated in two sweeps — the best bound of
    each column first, then every pair whose bound still beats its column's maximum — so
    rows that cannot matter (by a one-sided Chebyshev bound) are never summed.
    """
    if rows.size == 0:
        return best
    order = np.lexsort((-bound, cols))
    first = order[np.r_[True, cols[order][1:] != cols[order][:-1]]]
    for sweep in (first, None):
        if sweep is None:
            sweep = np.flatnonzero(bound * (1 + 1e-9) > best[cols] / (1 + 1e-6))
        if sweep.size:
            np.maximum.at(best, cols[sweep], values_of(sweep))
    return best


def _dp_instance_max(values, theta, n, m, eps_arr):
    """δ_x(ε) for σ = 0: the per-ε maximum over multiplicities r of T_r(ε), upper-rounded."""
    r, start, _, rows, cols = _dp_pairs(values, m, eps_arr)
    best = np.full(eps_arr.size, _singleton_term_up(m, theta + n) if values[0] == 1 else 0.0)

    def values_of(idx):
        pairs, inverse = np.unique(np.stack([r[rows[idx]], start[rows[idx], cols[idx]]], axis=1),
                                   axis=0, return_inverse=True)
        log_t, rel = betabinom.log_tail(m, pairs[:, 0], _second_shape(theta, n, pairs[:, 0]), pairs[:, 1])
        return _upper_from_log(log_t, rel)[inverse.ravel()]

    bound = _cantelli(m, r[rows], _second_shape(theta, n, r[rows]), start[rows, cols])
    return _column_max(values_of, rows, cols, bound, best)


def tight_instance_delta(multiplicities, theta, m, eps):
    """Tight instance-level privacy profile for σ = 0 (docs/mathematics.md §3.1).

    The exact one-sided hockey-stick divergence

    .. math::

        \\delta^{\\mathrm{tight}}_x(\\varepsilon) = \\max_{y\\sim x}
        E_x\\big[(1-e^{\\varepsilon} q_y(Z)/q_x(Z))_+\\big]
        = \\max_{r\\in\\{n_i\\}} \\begin{cases}
        \\frac{m}{m+\\theta+n-1} & r = 1\\\\
        E\\big[\\tfrac{S - (e^{\\varepsilon}-1)(r-1)}{S + r - 1};\\ S > (e^{\\varepsilon}-1)(r-1)\\big],
        \\ S\\sim\\mathrm{BB}(m,r,\\theta+n-r) & r\\ge 2
        \\end{cases}

    (the integrand :math:`(1 - e^\\varepsilon\\frac{r-1}{r-1+S})_+` written without
    cancellation). It is the smallest δ for which the release is (ε, δ)-DP at ``x``
    against every neighbour, and never exceeds :func:`instance_delta` (also after
    rounding). The singleton term holds at every ε, including ε = ∞.

    Parameters
    ----------
    multiplicities : array_like of int ≥ 1, shape (k,)
    theta : float > 0
    m : int in [1, MAX_ACCOUNTING_M]
    eps : float or array_like of float > 0 (``inf`` allowed)

    Returns
    -------
    float or ndarray, same shape as ``eps``
    """
    counts, values, _ = _multiplicity_profile(multiplicities)
    _, theta, _ = check_py_parameters(0.0, theta, counts.size)
    m = _check_m_accounting(m)
    eps_arr, shape = _eps_values(eps)
    n = int(counts.sum())
    N = theta + n
    probabilistic = _dp_instance_max(values, theta, n, m, eps_arr)
    r, start, x, rows, cols = _dp_pairs(values, m, eps_arr)
    best = np.full(eps_arr.size, _singleton_term_up(m, N) if values[0] == 1 else 0.0)

    def values_of(idx):
        rr, cc = rows[idx], cols[idx]
        d0 = _offset(eps_arr, r - 1.0, start, x, rr, cc)
        # E[(S − x)/(S + r − 1)] over all S is 1 − e^ε (N − 1)/(m + N − 1) in closed form
        # (E[1/(S + r − 1)] = (N − 1)/((r − 1)(m + N − 1)) for S ~ BB(m, r, N − r)).
        with np.errstate(over="ignore", invalid="ignore"):
            scaled = np.exp(eps_arr[cc]) * ((N - 1.0) / (m + N - 1.0))
        total = np.where(np.isfinite(scaled), 1.0 - scaled, -np.inf)
        total_err = np.where(np.isfinite(scaled), 8 * UNIT_ROUNDOFF * (1.0 + np.abs(scaled)), np.inf)
        log_t, rel = betabinom.log_tail(m, r[rr], _second_shape(theta, n, r[rr]), start[rr, cc], offset=d0,
                                        shift=r[rr] - 1.0, total=total, total_err=total_err)
        # the offset d0 carries ≤ 1e-10 relative error (see _offset); weights ≤ 1
        return _upper_from_log(log_t, rel + 1e-10)

    # each tight term is ≤ its T_r ≤ the Cantelli bound of T_r
    tight = _column_max(values_of, rows, cols,
                        _cantelli(m, r[rows], _second_shape(theta, n, r[rows]), start[rows, cols]), best)
    # the profile is never above the probabilistic δ: both are upper bounds of it
    return _shaped(np.minimum(tight, probabilistic), shape)


def _dp_moments(m, a, b):
    """Mean and variance of BB(m, a, b), in an order that cannot overflow for huge a + b."""
    N = a + b
    mean = m * (a / N)
    var = mean * (b / N) * ((N + m) / (N + 1.0))
    return mean, var


def _cantelli(m, a, b, start) -> np.ndarray:
    """One-sided Chebyshev bound on P(S ≥ start), S ~ BB(m, a, b) (1 below the mean)."""
    mean, var = _dp_moments(m, a, b)
    gap = start - mean
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(gap > 0, var / (var + gap * gap), 1.0)
