"""Table counts of a Chinese restaurant with discount σ and strength θ: the law of the number
of new values of a Pitman–Yor release (docs/mathematics.md §2; Pitman 2006, §3.2).
"""
from __future__ import annotations


import math

import numpy as np
from scipy import special

from ..validation import (
    MAX_RELEASE_SIZE,
    check_counts,
    check_real,
    check_rng,
)



#: Largest expected number of tables :func:`crp_tables` seats table by table (about 1 s of
#: work); beyond it a request is refused, except for one restaurant with σ = 0, which is
#: seated by the vectorised Feller coupling at any size.
MAX_CRP_TABLES = 100_000


# σ = 0, one restaurant: above this many expected tables the Feller coupling is faster.
_FELLER_TABLES = 1_000

#: Largest number of customers :func:`crp_table_counts` builds the law of the table count
#: for (its recursion over customers costs about 10 µs a customer, whatever the number of
#: restaurants); beyond it restaurants are seated table by table (:func:`crp_tables`).
CDF_MAX_CUSTOMERS = 200_000
#: Tails of the table-count law below this fraction of its peak are dropped by
#: :func:`crp_table_counts` (a total mass below 1e-35: no draw can tell).
_TAIL = 1e-40


def _expected_tables(customers: int, sigma: float, strength: float) -> float:
    """An upper bound of :math:`E[K_L]`, the expected number of tables of a CRP with L customers.

    σ = 0: :math:`E[K_L] = \\sum_{i<L}\\theta/(\\theta+i) \\le 1 + \\theta\\log(1+L/\\theta)`;
    σ ∈ (0, 1): :math:`E[K_L] = \\frac{\\theta}{\\sigma}\\big(\\frac{(\\theta+\\sigma)_L}{(\\theta)_L}-1\\big)`
    (Pitman 2006, eq. 3.47) evaluated in log space; both capped at ``L``.
    """
    if customers <= 0:
        return 0.0
    L = float(customers)
    if sigma == 0:
        return min(L, 1.0 + strength * math.log1p(L / strength))
    log_ratio = float(special.gammaln(strength + sigma + L) - special.gammaln(strength + sigma)
                      - special.gammaln(strength + L) + special.gammaln(strength))
    log_value = math.log(strength) - math.log(sigma) + log_ratio + math.log(-math.expm1(-log_ratio)) \
        if log_ratio > 0 else -math.inf
    return min(L, math.exp(min(log_value, 700.0)))


def _feller_table_sizes(customers: int, strength: float, rng: np.random.Generator) -> np.ndarray:
    """Table sizes of a CRP with σ = 0 and L customers, in order of appearance, vectorised.

    Feller coupling (Arratia, Barbour & Tavaré 1992): with independent
    :math:`\\xi_i\\sim\\mathrm{Bernoulli}(\\theta/(\\theta+i-1))`, ``i = 1..L``, the spacings
    between successive ones of :math:`\\xi_1\\cdots\\xi_L 1` are the block sizes of the
    Ewens(θ) partition. The blocks of an exchangeable partition appear in a size-biased
    random order, drawn here by sorting Exp(1)/size. Cost O(L) in chunks of 2**20.
    """
    ones = [np.zeros(1, dtype=np.int64)]
    chunk = 1 << 20
    for start in range(1, customers, chunk):
        i = np.arange(start, min(customers, start + chunk), dtype=np.int64)
        u = rng.random(i.size)
        ones.append(i[u * (strength + i) < strength])
    positions = np.concatenate(ones)
    sizes = np.diff(np.append(positions, customers))
    keys = rng.standard_exponential(sizes.size) / sizes
    return sizes[np.argsort(keys, kind="stable")]


def crp_tables(customers, sigma: float, strength: float, rng: np.random.Generator,
               *, return_sizes: bool = False):
    """Seat customers in a Chinese restaurant with discount σ and a given strength.

    Vectorised over independent restaurants. Tables are generated in order of
    appearance through the size-biased (GEM) representation: table ``j`` receives its
    opening customer plus a :math:`\\mathrm{Bin}(L_{\\text{rem}}-1, V_j)` share of the
    remaining ones, with

    .. math:: V_j \\sim \\mathrm{Beta}(1-\\sigma,\\ \\text{strength}+j\\sigma),\\quad j=1,2,\\dots

    which is exactly the CRP law (the PY partition in order of appearance). The loop
    runs over tables, not customers, so its length is the number of tables ``K``.

    One restaurant with σ = 0 and many expected tables is seated by the Feller coupling
    instead (:func:`_feller_table_sizes`, the same law, vectorised over customers).

    Parameters
    ----------
    customers : int or ndarray of int, shape (N,)
        Number of customers ``0 ≤ L ≤ MAX_RELEASE_SIZE`` in each restaurant.
    sigma : float in [0, 1)
    strength : float in (0, ∞)
        ``θ + kσ`` when seating the new values of the PYPP mechanism.
    rng : numpy.random.Generator
    return_sizes : bool
        Also return the table sizes.

    Raises
    ------
    ValueError
        For parameters out of range, or when the expected number of tables of some
        restaurant seated table by table exceeds ``MAX_CRP_TABLES`` (a time limit).

    Returns
    -------
    tables : int or ndarray of int, shape (N,)
        Number of occupied tables ``K``.
    owners : ndarray of int, shape (ΣK,)
        Only with ``return_sizes`` and an array ``customers``: the restaurant of each
        table. (Omitted for a scalar ``customers``.)
    sizes : ndarray of int, shape (K,) or (ΣK,)
        Only with ``return_sizes``: table sizes; for one restaurant in order of
        appearance, for many grouped by the round in which the table opened.
    """
    scalar = np.ndim(customers) == 0
    remaining = check_counts(customers, "customers", maximum=MAX_RELEASE_SIZE)
    if remaining.ndim > 1:
        raise ValueError(f"customers must be an integer or a 1-D array, got shape {remaining.shape}")
    remaining = np.atleast_1d(remaining).copy()
    sigma = check_real("sigma", sigma, low=0.0, high=1.0, high_open=True)
    strength = check_real("strength", strength, low=0.0, low_open=True)
    rng = check_rng(rng)
    largest = int(remaining.max()) if remaining.size else 0
    expected = _expected_tables(largest, sigma, strength)
    if scalar and sigma == 0 and expected > _FELLER_TABLES:
        sizes_arr = _feller_table_sizes(largest, strength, rng)
        return (int(sizes_arr.size), sizes_arr) if return_sizes else int(sizes_arr.size)
    if expected > MAX_CRP_TABLES:
        raise ValueError(f"customers = {largest} with sigma = {sigma!r} and strength = {strength!r} would open about "
                         f"{expected:.3g} tables, more than the limit MAX_CRP_TABLES = {MAX_CRP_TABLES} of "
                         f"table-by-table seating; lower m, theta or sigma")
    tables = np.zeros(remaining.shape, dtype=np.int64)
    sizes: list[np.ndarray] = []
    owners: list[np.ndarray] = []
    j = 0
    while True:
        active = np.flatnonzero(remaining > 0)
        if active.size == 0:
            break
        j += 1
        v = rng.beta(1.0 - sigma, strength + j * sigma, size=active.size)
        size = 1 + rng.binomial(remaining[active] - 1, v)
        remaining[active] -= size
        tables[active] += 1
        if return_sizes:
            sizes.append(size)
            owners.append(active)
    if return_sizes:
        sizes_arr = np.concatenate(sizes) if sizes else np.zeros(0, dtype=np.int64)
        if scalar:
            return int(tables[0]), sizes_arr
        owners_arr = np.concatenate(owners) if owners else np.zeros(0, dtype=np.int64)
        return tables, owners_arr, sizes_arr
    return int(tables[0]) if scalar else tables


def crp_table_counts(customers, sigma: float, strength: float, rng: np.random.Generator) -> np.ndarray:
    """Numbers of tables of independent Chinese restaurants, drawn from their exact law.

    The same law as :func:`crp_tables` (docs/mathematics.md §2; Pitman 2006, §3.2), drawn by
    inverse transform instead of seating the restaurants: the law of the table count
    :math:`K_i` after :math:`i` customers follows the forward recursion

    .. math:: P(K_{i+1}=j) = P(K_i=j)\\,\\frac{i-j\\sigma}{\\text{strength}+i}
              + P(K_i=j-1)\\,\\frac{\\text{strength}+(j-1)\\sigma}{\\text{strength}+i},
              \\qquad K_1 = 1,

    (a new customer opens a table with probability :math:`(\\text{strength}+K_i\\sigma)/
    (\\text{strength}+i)`), whose terms are all non-negative, so it is stable in floating
    point; tails below 1e-40 of the peak are dropped (a mass below 1e-35). Each restaurant
    with :math:`L` customers gets :math:`K = F_L^{-1}(U)` with one uniform U. Cost: the
    recursion, L_max steps over the law's support (a few dozen standard deviations of K),
    independent of the number of restaurants; then O(log L_max) per restaurant — against O(K)
    beta and binomial draws per restaurant for seating them. Above :data:`CDF_MAX_CUSTOMERS` customers the
    restaurants are seated by :func:`crp_tables` (same law).

    Parameters
    ----------
    customers : array_like of int ≥ 0, shape (N,)
    sigma : float in [0, 1)
    strength : float > 0
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of int64, shape (N,)
    """
    remaining = check_counts(customers, "customers", maximum=MAX_RELEASE_SIZE)
    if remaining.ndim != 1:
        raise ValueError(f"customers must be a 1-D array, got shape {remaining.shape}")
    sigma = check_real("sigma", sigma, low=0.0, high=1.0, high_open=True)
    strength = check_real("strength", strength, low=0.0, low_open=True)
    rng = check_rng(rng)
    largest = int(remaining.max()) if remaining.size else 0
    if largest > CDF_MAX_CUSTOMERS:
        return np.asarray(crp_tables(remaining, sigma, strength, rng), dtype=np.int64)
    order = np.argsort(remaining, kind="stable")
    sizes = remaining[order]
    u = rng.random(remaining.size)
    out = np.zeros(remaining.size, dtype=np.int64)
    # restaurants grouped by their number of customers: [starts[g], starts[g + 1]) have sizes[starts[g]]
    starts = np.flatnonzero(np.r_[True, sizes[1:] != sizes[:-1]]) if sizes.size else np.zeros(0, dtype=np.int64)
    bounds = np.r_[starts, sizes.size]
    tables = np.arange(largest + 2, dtype=float)
    join = tables * sigma                    # i − jσ is the weight of staying at j tables
    open_ = strength + tables * sigma        # strength + jσ: the weight of opening table j + 1
    law = np.zeros(largest + 2)
    lo = hi = 1                               # the law's support kept: [lo, hi]
    law[1] = 1.0                              # one customer, one table
    group = 1 if sizes.size and sizes[0] == 0 else 0   # no customer: no table (out stays 0)
    for i in range(1, largest + 1):
        if i > 1:
            # law of K_i from K_{i-1} on [lo, hi]: the support grows to [lo, hi + 1]
            seg = law[lo:hi + 1]
            new = np.zeros(seg.size + 1)
            new[:-1] = seg * ((i - 1) - join[lo:hi + 1])
            new[1:] += seg * open_[lo:hi + 1]
            new /= strength + (i - 1)
            # tails below 1e-40 of the peak are dropped (their mass is below 1e-35 in all)
            kept = np.flatnonzero(new >= new.max() * _TAIL)
            law[lo:hi + 2] = 0.0
            law[lo + kept[0]:lo + kept[-1] + 1] = new[kept[0]:kept[-1] + 1]
            lo, hi = lo + int(kept[0]), lo + int(kept[-1])
        while group < starts.size and sizes[starts[group]] == i:
            first, last = bounds[group], bounds[group + 1]
            cdf = np.cumsum(law[lo:hi + 1])
            out[order[first:last]] = lo + np.minimum(np.searchsorted(cdf, u[first:last] * cdf[-1], side="right"),
                                                     hi - lo)
            group += 1
    return out
