"""Simulated confidential populations for the experiments of docs/mathematics.md §6.

* The **dyadic-geometric population** of the informativity experiment (paper §4.2 and
  Appendix C.2 of Menicucci, Beraha, Favaro and Lazzarini, 2026): :math:`g(Y)` with
  :math:`Y\\sim\\mathrm{Geometric}(p)` on :math:`\\{1,2,\\dots\\}` and :math:`g` the map of
  the positive integers onto the dyadic midpoints of :math:`(0,1)` in order of increasing
  resolution. The law has ties by construction and a large but sparse support.
* A **discretised beta mixture on a regular grid** of :math:`(0,1)`, the kind of
  confidential data of the repeated-release experiment (paper §4.1, Appendix C.1). The
  paper does not print its mixture parameters; the defaults here are ours.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats

from ..validation import (
    MAX_RELEASE_VALUES,
    check_integer,
    check_positive,
    check_positive_integer_array,
    check_probability,
    check_real,
    check_rng,
)

__all__ = [
    "DYADIC_MAX_INDEX",
    "dyadic_midpoint",
    "grid_beta_mixture",
    "sample_dyadic_geometric",
    "sample_grid_beta_mixture",
]

#: Largest index ``j`` for which :math:`g(j)` is exact in double precision.
DYADIC_MAX_INDEX = 2**52


def dyadic_midpoint(j):
    """The dyadic map :math:`g` of docs/mathematics.md §6: positive integers onto dyadic midpoints.

    .. math::
        \\ell = \\lfloor \\log_2 j \\rfloor,\\qquad i = j - 2^{\\ell},\\qquad
        g(j) = \\frac{2i + 1}{2^{\\ell + 1}},

    so :math:`g(1..7) = 1/2, 1/4, 3/4, 1/8, 3/8, 5/8, 7/8`: level :math:`\\ell` lists the
    :math:`2^{\\ell}` midpoints of the dyadic intervals of length :math:`2^{-\\ell}` from
    left to right. :math:`g` is a bijection onto the dyadic rationals of :math:`(0, 1)`.

    Parameters
    ----------
    j : int or array_like of int, any shape
        Indices :math:`1 \\le j \\le 2^{52}` (beyond that :math:`g(j)` is not exact in
        double precision).

    Returns
    -------
    float or ndarray of float, same shape as ``j``
        Exact values (dyadic rationals are represented exactly).
    """
    scalar = np.ndim(j) == 0
    idx = check_positive_integer_array(j, "j", maximum=DYADIC_MAX_INDEX)
    # frexp is exact on integers below 2**53: j = mantissa * 2**e with mantissa in [0.5, 1).
    _, exponent = np.frexp(idx.astype(np.float64))
    level = exponent.astype(np.int64) - 1
    numerator = 2 * (idx - np.left_shift(np.int64(1), level)) + 1
    out = np.ldexp(numerator.astype(np.float64), -(level + 1))
    return float(out) if scalar else out


def sample_dyadic_geometric(size, p, rng):
    """Draw ``size`` iid values of :math:`g(Y)`, :math:`Y \\sim \\mathrm{Geometric}(p)`.

    .. math:: P\\{g(Y) = g(j)\\} = p\\,(1 - p)^{j - 1},\\qquad j = 1, 2, \\dots

    This is the confidential population of the informativity experiment (docs/mathematics.md §6;
    paper §4.2, Appendix C.2). The values lie in :math:`(0, 1)`, so the public bounds of
    the base measure are ``[0, 1]``.

    Parameters
    ----------
    size : int in [1, MAX_RELEASE_VALUES]
        Population size ``N``.
    p : float in (0, 1]
        Success probability of the geometric law on :math:`\\{1, 2, \\dots\\}`.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of float, shape (size,)
    """
    size = check_integer("size", size, minimum=1, maximum=MAX_RELEASE_VALUES)
    p = check_probability(p, "p", allow_one=True)
    rng = check_rng(rng)
    if p < 1e-12:  # the draws would exceed 2**52 (g(j) inexact) or overflow int64
        raise ValueError(f"p must be in [1e-12, 1] (smaller p draws indices beyond 2**52, where g(j) is not "
                         f"exact), got {p!r}")
    # Generator.geometric counts trials up to and including the first success: support {1, 2, ...}.
    index = rng.geometric(p, size=size)
    if index.max() > DYADIC_MAX_INDEX:
        raise ValueError(f"p = {p!r} is too small: a geometric draw exceeded 2**52, "
                         "beyond which g(j) is not exact; use a larger p")
    return dyadic_midpoint(index)


def grid_beta_mixture(grid_size: int = 101, weights=(0.7, 0.3),
                      shapes=((2.0, 5.0), (6.0, 2.0))) -> tuple[np.ndarray, np.ndarray]:
    """A discrete law on a regular grid of (0, 1) from a beta-mixture density.

    The grid is the set of cell midpoints :math:`u_i = (i + 1/2)/G`,
    :math:`i = 0..G-1` (midpoints avoid the endpoints, where a beta density may be 0
    or infinite), and

    .. math:: \\pi_i \\propto \\sum_c w_c\\,\\mathrm{Beta}(u_i;\\ a_c, b_c).

    As in the paper's Appendix C.1 (whose parameter values are not printed there; these
    defaults give an asymmetric, non-uniform law with non-negligible tail mass).

    Parameters
    ----------
    grid_size : int in [2, 10**7]
    weights : sequence of float > 0, shape (C,), C ≤ 100
        Mixture weights (normalised here).
    shapes : sequence of (a, b) pairs, a, b in [1e-6, 1e6], shape (C, 2)

    Returns
    -------
    grid : ndarray, shape (grid_size,)
    probabilities : ndarray, shape (grid_size,), summing to 1
    """
    grid_size = check_integer("grid_size", grid_size, minimum=2, maximum=10**7)
    try:
        w = [check_positive("weights", float(v)) for v in np.ravel(weights)]
        pairs = np.asarray(shapes, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"weights and shapes must be numbers: {exc}") from None
    if not 1 <= len(w) <= 100:
        raise ValueError(f"weights must have 1 to 100 components, got {len(w)}")
    if pairs.ndim != 2 or pairs.shape != (len(w), 2):
        raise ValueError(f"shapes must be one (a, b) pair per weight ({len(w)} pairs), got shape {pairs.shape}")
    for a, b in pairs:
        # below 1e-6 scipy's beta log-density loses all precision (NaN at subnormal shapes)
        check_real("shapes", float(a), low=1e-6, high=1e6)
        check_real("shapes", float(b), low=1e-6, high=1e6)
    grid = (np.arange(grid_size) + 0.5) / grid_size
    # In log space: a component's density can underflow on the whole grid for large shapes.
    log_terms = np.stack([math.log(wc) + stats.beta.logpdf(grid, a, b) for wc, (a, b) in zip(w, pairs)])
    log_density = special.logsumexp(log_terms, axis=0)
    return grid, np.exp(log_density - special.logsumexp(log_density))


def sample_grid_beta_mixture(size, rng, *, grid_size: int = 101, weights=(0.7, 0.3),
                             shapes=((2.0, 5.0), (6.0, 2.0))) -> np.ndarray:
    """Draw ``size`` iid values from :func:`grid_beta_mixture` (public bounds ``[0, 1]``).

    Parameters
    ----------
    size : int in [1, MAX_RELEASE_VALUES]
    rng : numpy.random.Generator
    grid_size, weights, shapes
        As in :func:`grid_beta_mixture`.

    Returns
    -------
    ndarray of float, shape (size,)
    """
    size = check_integer("size", size, minimum=1, maximum=MAX_RELEASE_VALUES)
    rng = check_rng(rng)
    grid, prob = grid_beta_mixture(grid_size, weights, shapes)
    return grid[rng.choice(grid.size, size=size, p=prob)]
