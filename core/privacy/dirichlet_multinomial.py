"""σ < 0 (Dirichlet–multinomial over z public categories): the δ tails and the exact pure-ε
conditions, instance-level and global (docs/mathematics.md §3.3).
"""
from __future__ import annotations

import math

import numpy as np

from . import betabinom
from .betabinom import UNIT_ROUNDOFF
from ..validation import (
    check_multiplicities,
    check_positive,
)
from .common import _check_m_accounting, _check_scalar_eps, _first_bad, _upper_from_log


# ------------------------------------------------------------------------ σ < 0
def _dm_tails(values, alpha, z, n, m, eps_arr):
    """Upper-rounded §3.3 bound terms P(S_l > (e^ε − 1)(n_l − 1 + α)): rows n_l, columns ε."""
    r = values.astype(float)
    out = np.zeros((r.size, eps_arr.size))
    if z == 1:   # one public category: every neighbour equals x, δ = 0 exactly
        return out
    start, _ = _first_bad(eps_arr, r - 1.0 + alpha)
    rows, cols = np.nonzero(start <= m)
    if rows.size:
        a = r[rows] + alpha
        b = (n - r[rows]) + (z - 1) * alpha       # n − r exact: no digits of (z − 1)α lost
        log_t, rel = betabinom.log_tail(m, a, b, start[rows, cols])
        out[rows, cols] = _upper_from_log(log_t, rel)
    return out


def dirichlet_multinomial_pure_epsilon(multiplicities, alpha, m, *, instance: bool = True) -> float:
    """Smallest ε for which the σ < 0 release is pure ε-DP (docs §3.3), rounded up.

    Instance level (at ``x``): :math:`m \\le (e^{\\varepsilon}-1)(\\min_i n_i - 1 + \\alpha)`,
    i.e. :math:`\\varepsilon = \\log\\big(1 + m/(\\min_i n_i - 1 + \\alpha)\\big)`;
    global: :math:`\\varepsilon = \\log(1 + m/\\alpha)` (Machanavajjhala et al. 2008).
    The returned float is ≥ the exact threshold; use :func:`dirichlet_multinomial_is_pure`
    for the exact verdict at a given ε.
    """
    counts = check_multiplicities(multiplicities)
    alpha = check_positive("alpha", alpha)
    m = _check_m_accounting(m)
    floor = (counts.min() - 1 + alpha) if instance else alpha
    # log(1 + m/w) without overflowing m/w for a tiny α: log m − log w + log1p(w/m)
    value = math.log1p(m / floor) if floor >= m else math.log(m) - math.log(floor) + math.log1p(floor / m)
    return value * (1.0 + 8 * UNIT_ROUNDOFF)


def dirichlet_multinomial_is_pure(multiplicities, alpha, m, eps, *, instance: bool = True) -> bool:
    """Exact verdict of the pure ε-DP condition of docs §3.3 at ``eps``.

    Instance level: :math:`m \\le (e^{\\varepsilon}-1)(\\min_i n_i - 1 + \\alpha)`; global:
    :math:`m \\le (e^{\\varepsilon}-1)\\alpha`. Decided exactly (mpmath when the two sides
    are within rounding), never from a δ that underflowed to 0.
    """
    counts = check_multiplicities(multiplicities)
    alpha = check_positive("alpha", alpha)
    m = _check_m_accounting(m)
    eps = _check_scalar_eps(eps)
    w = (counts.min() - 1 + alpha) if instance else alpha
    start = _first_bad(np.array([eps]), np.array([w]))[0][0, 0]
    return bool(start > m)
