"""Privacy accounting of the Pitman–Yor posterior-predictive mechanism (SPEC §3).

Neighbouring datasets differ by the replacement of one record (``n`` fixed). For a
confidential dataset ``x`` with multiplicities ``n_1..n_k`` the instance-level
probabilistic-DP curve is

.. math::

    \\delta_x(\\varepsilon) = \\max_{y\\sim x}
        P_{Z\\sim Q(\\cdot\\mid x)}\\Big(\\tfrac{q_x(Z)}{q_y(Z)} > e^{\\varepsilon}
        \\ \\text{or}\\ Z \\text{ singular for } y\\Big),

(Menicucci, Beraha, Favaro, Lazzarini 2026, Theorem 1). This module implements

* σ = 0 (Dirichlet process), exact closed forms (docs/mathematics.md §3.1):
  :func:`instance_delta`, :func:`tight_instance_delta` (the exact hockey-stick privacy
  profile), :func:`global_delta` (Theorem 2, exact maximum over multiplicities),
  :func:`global_delta_simple_bound`, :func:`singleton_limit`, :func:`max_synthetic_size`,
  :func:`max_instance_synthetic_size` and :func:`synthetic_size_curve` (the ε-vs-m
  plateau), and the exact verdicts :func:`instance_delta_at_most` and
  :func:`global_delta_at_most`;
* σ ∈ (0, 1), Monte Carlo with a Clopper–Pearson upper confidence bound (§3.2):
  :func:`monte_carlo_delta`;
* σ < 0 (Dirichlet–multinomial over ``z`` public categories, §3.3): the δ bound and the
  exact pure-DP conditions :func:`dirichlet_multinomial_pure_epsilon`,
  :func:`dirichlet_multinomial_is_pure`.

**Rounding to the safe side** (docs/accuracy.md). Every tail is computed by
:mod:`core.betabinom`, which returns a proven relative error bound with it; a returned δ
is the computed value times (1 + that bound), so it is never below the exact value, and a
positive exact δ is never returned as 0. Every yes/no — meets a target, largest
admissible m, pure ε-DP — is exact: decided in floating point when the target is outside
the error band, by an mpmath recheck when it is inside. The first bad count
⌊(e^ε − 1)w⌋ + 1 is exact too (mpmath when (e^ε − 1)w is within rounding of an integer).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable

import numpy as np
from scipy import special, stats

from . import betabinom
from .betabinom import UNIT_ROUNDOFF
from .mechanisms import crp_tables
from .validation import (
    check_delta,
    check_eps,
    check_integer,
    check_m,
    check_multiplicities,
    check_positive,
    check_py_parameters,
    check_rng,
)

__all__ = [
    "MAX_ACCOUNTING_M",
    "MonteCarloDelta",
    "ReleaseSpec",
    "beta_binomial_log_tail",
    "dirichlet_multinomial_is_pure",
    "dirichlet_multinomial_pure_epsilon",
    "global_delta",
    "global_delta_at_most",
    "global_delta_simple_bound",
    "instance_delta",
    "instance_delta_at_most",
    "max_instance_synthetic_size",
    "max_synthetic_size",
    "monte_carlo_delta",
    "singleton_limit",
    "synthetic_size_curve",
    "tight_instance_delta",
]

#: Largest release size the accounting evaluates (and the default cap of every m*
#: search): a tail costs O(sd) ≤ O(√m·m/√n) terms, bounded in memory by core.betabinom's
#: chunking; beyond 10^8 synthetic records a release is not something this tool produces.
MAX_ACCOUNTING_M = 10**8
_DEFAULT_M_CAP = 10**7
_TINY = float(np.nextafter(0.0, 1.0))   # a positive exact δ is never returned as 0
_MP_DPS = 60


# --------------------------------------------------------------------------- helpers
def _eps_values(eps, name: str = "eps") -> tuple[np.ndarray, tuple | None]:
    """ε values as a flat array, and the shape to give the result (``None``: a scalar).

    Any array shape is accepted; results are computed on the flattened values and given
    back in the shape of ``eps`` (SPEC §7: "same shape as eps").
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

    The bad event of SPEC §3 is ``S > (e^ε − 1)·w`` (w = r − 1 for σ = 0, n_l − 1 + α for
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

    Computed by :func:`core.betabinom.log_tail` (accurate at large arguments, never
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


# --------------------------------------------------------------------- release spec
@dataclass(frozen=True)
class ReleaseSpec:
    """A PYPP release: what accounting needs to know about it.

    Parameters
    ----------
    sigma, theta : float
        PY parameters (SPEC §2).
    m : int ≥ 1
        Released synthetic sample size.
    n : int ≥ 1
        Size of the confidential dataset.
    mechanism : str
        Always ``"pypp"`` here; baselines describe themselves in :mod:`core.baselines`.
    """

    sigma: float
    theta: float
    m: int
    n: int
    mechanism: str = field(default="pypp")

    def __post_init__(self):
        check_py_parameters(self.sigma, self.theta)
        check_m(self.m)
        check_integer("n", self.n, minimum=1)

    @property
    def regime(self) -> str:
        if self.sigma == 0:
            return "dirichlet-process"
        return "pitman-yor" if self.sigma > 0 else "dirichlet-multinomial"

    @property
    def categories(self) -> int | None:
        """``z`` for σ < 0, else ``None``."""
        return check_py_parameters(self.sigma, self.theta)[2]



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


def instance_delta(multiplicities, sigma, theta, m, eps, *, n_mc: int = 20000, seed=None,
                   progress: Callable[[float, str], None] | None = None):
    """Instance-level probabilistic-DP curve δ_x(ε) (docs/mathematics.md §3; SPEC §7).

    * σ = 0: exact,
      :math:`\\delta_x(\\varepsilon)=\\max_{r\\in\\{n_i\\}} P\\big(S>(e^{\\varepsilon}-1)(r-1)\\big)`,
      :math:`S\\sim\\mathrm{BB}(m,r,\\theta+n-r)`; with a singleton the curve never falls
      below :math:`m/(m+\\theta+n-1)`, at every ε including ∞.
    * σ ∈ (0, 1): the one-sided 95% Clopper–Pearson upper confidence bound of the Monte
      Carlo estimate (:func:`monte_carlo_delta` gives the estimate and its error); singular
      outputs count at every ε, including ∞.
    * σ < 0 (``z = θ/|σ|`` public categories, α = |σ|): the upper **bound**
      :math:`\\max_l P\\big(S_l>(e^{\\varepsilon}-1)(n_l-1+\\alpha)\\big)`,
      :math:`S_l\\sim\\mathrm{BB}(m,n_l+\\alpha,n+z\\alpha-n_l-\\alpha)`; it is 0 exactly when
      the pure ε-DP condition holds, and 0 for z = 1 (no neighbour differs from x).

    Every value is rounded up by the proven error bound of its computation (never below
    the exact value; a positive value is never returned as 0).

    Parameters
    ----------
    multiplicities : array_like of int ≥ 1, shape (k,)
    sigma, theta : float
        Admissible PY parameters (see :func:`core.validation.check_py_parameters`).
    m : int in [1, MAX_ACCOUNTING_M]
    eps : float or array_like of float > 0 (``inf`` allowed)
    n_mc : int
        Monte Carlo replicates (σ ∈ (0, 1) only).
    seed : int or None
        Seed of the Monte Carlo generator (σ ∈ (0, 1) only).
    progress : callable(fraction, message), optional
        Progress of the Monte Carlo (σ ∈ (0, 1) only).

    Returns
    -------
    float or ndarray, same shape as ``eps``
    """
    counts, values, _ = _multiplicity_profile(multiplicities)
    sigma, theta, z = check_py_parameters(sigma, theta, counts.size)
    m = _check_m_accounting(m)
    eps_arr, shape = _eps_values(eps)
    n = int(counts.sum())
    if sigma == 0:
        delta = _dp_instance_max(values, theta, n, m, eps_arr)
    elif z is not None:
        delta = _dm_tails(values, -sigma, z, n, m, eps_arr).max(axis=0)
    else:
        rng = np.random.default_rng(seed)
        delta = monte_carlo_delta(counts, sigma, theta, m, eps_arr, n_mc=n_mc, rng=rng, progress=progress).upper
    return _shaped(delta, shape)


def instance_delta_at_most(multiplicities, sigma, theta, m, eps, delta) -> bool:
    """Exact verdict δ_x(ε) ≤ δ (the "meets the target" of the report and the app).

    σ = 0 and σ < 0: exact (floating point outside the error band, mpmath inside). σ ∈ (0, 1):
    whether the Monte Carlo upper confidence bound of :func:`instance_delta` is ≤ δ — a
    statistical statement, as that bound is.
    """
    counts, values, _ = _multiplicity_profile(multiplicities)
    sigma, theta, z = check_py_parameters(sigma, theta, counts.size)
    m = _check_m_accounting(m)
    eps_arr = np.array([_check_scalar_eps(eps, "a verdict")])
    delta = check_delta(delta)
    n = int(counts.sum())
    if sigma > 0:
        return bool(instance_delta(counts, sigma, theta, m, eps_arr[0]) <= delta)
    if sigma == 0:
        if values[0] == 1 and not _singleton_term_at_most(m, theta, n, delta):
            return False
        r = values[values >= 2].astype(float)
        a, b, w = r, _second_shape(theta, n, r), r - 1.0
    else:
        if z == 1:
            return True
        alpha = -sigma
        r = values.astype(float)
        a, b, w = r + alpha, (n - r) + (z - 1) * alpha, r - 1.0 + alpha
    if r.size == 0:
        return True
    start = _first_bad(eps_arr, w)[0][:, 0]
    live = start <= m
    if not live.any():
        return True
    log_t, rel = betabinom.log_tail(m, a[live], b[live], start[live])
    return bool(betabinom.verdicts_at_most(log_t, rel, delta, m, a[live], b[live], start[live]).all())


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


# --------------------------------------------- Theorem 2: the maximum over r by branch and bound
class _GlobalRows:
    """The candidate rows (r_i, s_i), i = 0..K − 1, of δ* = max_r T_r (docs/mathematics.md §3.1).

    All r sharing a first bad count s have T_r = P(S_r ≥ s) increasing in r (Beta(r, N − r)
    increases in likelihood-ratio order), so only the largest r of each run matters. Indexed
    so that both r_i and s_i are nondecreasing in i:

    * c = e^ε − 1 ≥ 1: every r has its own first bad count, i ↦ r = 2 + i, s = s(r);
    * c < 1: every s ≥ 1 up to s(n) is the first bad count of a run, i ↦ s = 1 + i,
      r = R(s) = the largest r ≤ n with s(r) ≤ s.

    Nothing is tabulated: rows are computed on demand, exactly (first bad counts by
    :func:`_first_bad`), so the cost does not depend on n or m.
    """

    def __init__(self, n: int, theta: float, eps: float):
        self.n, self.theta = n, theta
        self.eps_arr = np.array([eps], dtype=float)
        with np.errstate(over="ignore"):
            self.c = float(np.expm1(eps))           # inf for ε ≳ 709.78: no row is ever bad
        self.by_r = not self.c < 1.0

    def b(self, r) -> np.ndarray:
        """The second shape θ + n − r of S_r (:func:`_second_shape`)."""
        return _second_shape(self.theta, self.n, r)

    def starts(self, r) -> np.ndarray:
        """Exact first bad counts s(r) = ⌊c(r − 1)⌋ + 1 (inf: no count is bad)."""
        r = np.atleast_1d(np.asarray(r, dtype=float))
        return _first_bad(self.eps_arr, r - 1.0)[0][:, 0]

    def _near(self, estimate, upper: float) -> np.ndarray:
        """Five integers around a floating-point estimate of a row index, clipped to [2, upper]:
        the estimate is within a few ulps of r ≤ n ≤ 10^12, far less than 2 away."""
        est = np.minimum(np.asarray(estimate, dtype=float), upper)
        return np.clip(est[:, None] + np.arange(-2.0, 3.0)[None, :], 2.0, upper)

    def count(self, m: int) -> int:
        """Number K of candidate rows with a bad count reachable in m draws."""
        if self.n < 2 or not self.starts(2.0)[0] <= m:
            return 0
        if self.by_r:
            # the largest r ≤ n with s(r) ≤ m, i.e. c(r − 1) < m
            with np.errstate(over="ignore"):
                est = np.floor(m / self.c) + 1.0
            cand = self._near(np.array([est]), float(self.n)).ravel()
            return int(cand[self.starts(cand) <= m].max()) - 1
        return int(min(float(m), self.starts(float(self.n))[0]))

    def rows(self, i) -> tuple[np.ndarray, np.ndarray]:
        """(r_i, s_i) for an array of indices."""
        i = np.asarray(i, dtype=float)
        if self.by_r:
            r = i + 2.0
            return r, self.starts(r)
        s = i + 1.0
        with np.errstate(over="ignore", divide="ignore"):
            est = np.ceil(s / self.c)                  # R(s) = ⌈s/c⌉ (s/c is irrational), capped at n
        cand = self._near(est, float(self.n))
        ok = self.starts(cand.ravel()).reshape(cand.shape) <= s[:, None]
        return np.where(ok, cand, 0.0).max(axis=1), s

    def start_of(self, i) -> np.ndarray:
        """s_i alone (cheaper than :meth:`rows` in the s-indexed case)."""
        i = np.asarray(i, dtype=float)
        return self.starts(i + 2.0) if self.by_r else i + 1.0


# Children per split: 16 while an interval is wide (few levels, each one vectorised batch of
# tails), 4 below _FINE_WIDTH candidates, where most of a failed interval's children would
# be pruned anyway (measured: the least tail work over the extreme cases of the benchmark).
_BRANCH = 16
_FINE_WIDTH = 256
_PRUNE_REL = 1e-12    # max mode: an interval within this of the running maximum is not split
# Up to this many candidate rows the search starts from the rows themselves: one level of
# O(1) bounds and exact tails costs less than the Python overhead of several levels.
_DIRECT_ROWS = 256
# Wide intervals get exact tails only while at most _EXACT_WIDE are left; otherwise only
# the _VALUE_ROWS with the largest O(1) bound get their right-end value (a lower bound).
_EXACT_WIDE = 64
_VALUE_ROWS = 16
# m* searches the rows as an explicit list (:func:`_max_m`) when there are at most
# _DIRECT_SIZE_ROWS and at most _DIRECT_SIZE_RISKY of them are not within δ by an O(1)
# bound: that avoids the per-level overhead of the branch and bound. With many risky rows
# (δ close to 1) the explicit search would sum them all at every step: branch and bound.
_DIRECT_SIZE_ROWS = 16384
_DIRECT_SIZE_RISKY = 64


def _quick_tail_bound(m: int, r, b, start, threshold: float | None = None) -> np.ndarray:
    """Upper bounds on P(S ≥ start), S ~ BB(m, r, b), 1 ≤ start ≤ m, at O(1) cost per row.

    The smallest of three (docs/mathematics.md §3.1):

    * Cantelli's inequality (above the mean);
    * one minus a lower bound of the lower tail P(S ≤ t), t = start − 1: the term p(t),
      and for a log-concave law (r, b ≥ 1) the k ≈ sd terms below it, at least
      p(t)·(1 − q^k)/(1 − q) with q = p(t − k)/p(t − k + 1) — going down, the ratios
      p(u − 1)/p(u) only shrink, so q is the smallest of the k (decisive when δ is close
      to 1, or when start is within a few standard deviations of the mean);
    * for a log-concave law past its mode, the geometric series p(start)/(1 − ρ),
      ρ = p(start + 1)/p(start), which the later ratios cannot exceed.

    Log-pmfs carry core.betabinom's proven error bound, widened by 1e-12, so each bound
    is rigorous. With ``threshold``, rows whose Cantelli bound is already within it keep
    that bound (the caller only asks whether a bound is ≤ threshold): the log-pmfs are
    computed for the others only.
    """
    r, b, start = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (r, b, start)))
    bound = np.minimum(_cantelli(m, r, b, start) * (1 + 1e-9), 1.0)
    if threshold is not None:
        todo = np.flatnonzero(bound > threshold)
        if todo.size < bound.size:
            bound = bound.copy()
            if todo.size:
                bound[todo] = _quick_tail_bound(m, r[todo], b[todo], start[todo])
            return bound
    concave = (r >= 1) & (b >= 1)
    t = start - 1.0
    _, var = _dp_moments(m, r, b)
    k = np.where(concave, np.clip(np.floor(np.sqrt(var)), 1.0, np.maximum(t, 1.0)), 1.0)
    lps, errs = betabinom.log_pmf(m, r, b, np.stack([t, start]))    # one call, both terms
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        # log q = −log ρ(t − k), lowered by a margin far above its rounding (a smaller q is safe)
        log_q = -betabinom._log_ratio(float(m), r, b, np.maximum(t - k, 0.0)) - 1e-12
        series = np.where(log_q < 0, np.expm1(k * log_q) / np.expm1(log_q), np.where(log_q >= 0, k, 1.0))
        series = np.where((k > 1) & (t >= k), series, 1.0) * (1 - 1e-12)
        below = np.exp(lps[0] - errs[0] - 1e-12) * series
        below = np.where(np.isfinite(below), below, 0.0)      # never let a NaN prune a row
        bound = np.minimum(bound, np.maximum(1.0 - below, 0.0) + 2 * UNIT_ROUNDOFF)
        lp, err = lps[1], errs[1]
        rho = np.exp(betabinom._log_ratio(float(m), r, b, start) + 1e-12)
        geo = np.exp(lp + err + 1e-12) / (1.0 - rho) * (1 + 1e-12)
    usable = concave & (rho < 1) & np.isfinite(geo)
    bound = np.where(usable, np.minimum(bound, geo), bound)
    return np.where(np.isnan(bound), 1.0, bound)


def _log_margin(log_t, rel):
    """Half-width of the error band of a computed log tail (as in betabinom.verdicts_at_most)."""
    return np.log1p(rel) + 4 * UNIT_ROUNDOFF * (np.abs(log_t) + 1.0)


def _global_search(rows: _GlobalRows, m: int, *, floor: float = 0.0, target: float | None = None):
    """max_i T_{r_i}(m) (``target`` None) or the verdict max_i T_{r_i}(m) ≤ ``target``, by branch and bound.

    An interval of candidates [i₁, i₂] is bounded by one tail,

    .. math:: \\max_{i_1\\le i\\le i_2} P(S_{r_i}\\ge s_i) \\le P(S_{r_{i_2}}\\ge s_{i_1}),

    since S_r increases stochastically in r and the tail decreases in the threshold; its
    right end is a real row, whose exact tail bounds the maximum from below. Intervals that
    cannot beat the running maximum (or that provably stay within ``target``) are dropped
    — first by the O(1) bounds of :func:`_quick_tail_bound`, then, while few intervals are
    left, by their exact tail — and the others are split in ``_BRANCH`` parts (4 below
    ``_FINE_WIDTH``). Single rows are exact, so the result is the exact maximum rounded up
    (docs/mathematics.md §3.1); the cost depends on how many rows come close to the
    maximum, not on n or m.

    Returns
    -------
    float
        Max mode: the maximum over rows and ``floor``, upper-rounded (≥ the exact value,
        within ``_PRUNE_REL`` plus the tails' error bounds of it).
    tuple (r, s) of ndarrays, or None
        Verdict mode: rows with T_r(m) > target (those met at the level where the first
        was found), or None if every row is within the target — exact (mpmath settles
        rows inside the error band).
    """
    K = rows.count(m)
    verdict = target is not None
    best, slack = float(floor), 0.0
    if K == 0:
        return None if verdict else best
    log_target = math.log(target) if verdict else 0.0
    if K <= _DIRECT_ROWS:
        lo = hi = np.arange(float(K))     # few rows: every one is a leaf of the first level
    else:
        lo, hi = np.array([0.0]), np.array([K - 1.0])
    while lo.size:
        r_hi, s_hi = rows.rows(hi)
        s_lo = np.where(lo == hi, s_hi, rows.start_of(lo))
        leaf = lo == hi
        # 1. O(1) bounds of the interval tails: drop what provably cannot matter.
        thr = target if verdict else best
        quick = _quick_tail_bound(m, r_hi, rows.b(r_hi), s_lo, thr)
        live = quick > thr
        lo, hi, r_hi, s_hi, s_lo, leaf, quick = (v[live] for v in (lo, hi, r_hi, s_hi, s_lo, leaf, quick))
        if lo.size == 0:
            break
        # 2. Exact tails, in one call: every single row; for wide intervals, their bound
        #    P(S_{r_hi} ≥ s_lo) and right-end value while few are left. When many are, a
        #    bound that the O(1) ones could not bring under the threshold is rarely brought
        #    there by the exact tail (only splitting helps), and a handful of right-end values
        #    (those with the largest bounds) is enough to raise the running maximum.
        wide = np.flatnonzero(~leaf)
        exact_bounds = wide.size <= _EXACT_WIDE
        if exact_bounds:
            val = np.arange(lo.size)
        else:
            val = np.concatenate([np.flatnonzero(leaf), wide[np.argsort(-quick[wide], kind="stable")[:_VALUE_ROWS]]])
        bnd = wide if exact_bounds else wide[:0]
        a = np.concatenate([r_hi[val], r_hi[bnd]])
        log_t, rel = betabinom.log_tail(m, a, rows.b(a), np.concatenate([s_hi[val], s_lo[bnd]]))
        log_v, rel_v = log_t[:val.size], rel[:val.size]
        log_b, rel_b = log_t[val.size:], rel[val.size:]
        split = ~leaf                     # wide intervals split unless their exact bound settles them
        if verdict:
            margin_v = _log_margin(log_v, rel_v)
            fails = val[log_v - margin_v > log_target]
            if fails.size == 0:
                # rows inside the error band: exact verdicts (only single rows need them)
                unsure = np.flatnonzero(leaf[val] & ~(log_v + margin_v <= log_target) & (log_v > -np.inf))
                if unsure.size:
                    rr = r_hi[val[unsure]]
                    ok = betabinom.verdicts_at_most(log_v[unsure], rel_v[unsure], target, m, rr, rows.b(rr),
                                                    s_hi[val[unsure]])
                    fails = val[unsure[~ok]]
            if fails.size:
                return r_hi[fails], s_hi[fails]
            within = (log_b == -np.inf) | (log_b + _log_margin(log_b, rel_b) <= log_target)
            split[bnd[within]] = False
        else:
            best = max(best, float(_upper_from_log(log_v, rel_v).max()))
            bound = _upper_from_log(log_b, rel_b)
            settled = bound <= best * (1 + _PRUNE_REL)
            split[bnd[settled]] = False
            # an interval dropped within _PRUNE_REL of the maximum still bounds the result
            near = settled & (bound > best)
            if near.any():
                slack = max(slack, float(bound[near].max()))
        lo, hi = lo[split], hi[split]
        if lo.size == 0:
            break
        width = hi - lo + 1.0
        parts = np.minimum(np.where(width > _FINE_WIDTH, float(_BRANCH), 4.0), width).astype(np.int64)
        owner = np.repeat(np.arange(lo.size), parts)
        j = (np.arange(parts.sum()) - np.repeat(np.cumsum(parts) - parts, parts)).astype(float)
        w, p = width[owner], parts[owner].astype(float)
        lo, hi = lo[owner] + np.floor(w * j / p), lo[owner] + np.floor(w * (j + 1.0) / p) - 1.0
    return None if verdict else max(best, slack)


def global_delta(n, theta, m, eps):
    """Global (ε, δ)-DP of the DP posterior-predictive release (Theorem 2, docs §3.1).

    .. math::

        \\delta^*(\\varepsilon) = \\max_{r=1,\\dots,n} P\\big(S_r > (e^{\\varepsilon}-1)(r-1)\\big),
        \\quad S_r\\sim\\mathrm{BB}(m, r, \\theta+n-r),

    valid for every dataset of size ``n`` (σ = 0). It never falls below the singleton
    term :math:`m/(m+\\theta+n-1)` and equals it for :math:`\\varepsilon\\ge\\log(1+m)`.
    The maximum over ``r`` is exact, found by branch and bound over the candidate rows
    (:func:`_global_search`) at a cost that does not grow with n or m; the value is rounded
    up by its proven error bound.

    Parameters
    ----------
    n : int in [1, 10^12]
    theta : float > 0
    m : int in [1, MAX_ACCOUNTING_M]
    eps : float or array_like of float > 0 (``inf`` allowed)

    Returns
    -------
    float or ndarray, same shape as ``eps``
    """
    n = _check_n(n)
    _, theta, _ = check_py_parameters(0.0, theta)
    m = _check_m_accounting(m)
    eps_arr, shape = _eps_values(eps)
    single = _singleton_term_up(m, theta + n)
    # δ* ≥ the singleton term, so rows that cannot exceed it do not matter
    out = np.array([_global_search(_GlobalRows(n, theta, float(e)), m, floor=single) for e in eps_arr])
    return _shaped(out, shape)


def global_delta_at_most(n, theta, m, eps, delta) -> bool:
    """Exact verdict δ*(ε) ≤ δ (Theorem 2): the global "meets the target".

    The singleton term is decided in rational arithmetic, the rows r ≥ 2 by the branch
    and bound of :func:`_global_search` (mpmath inside the floating-point error band).

    Parameters
    ----------
    n : int in [1, 10^12]
    theta : float > 0
    m : int in [1, MAX_ACCOUNTING_M]
    eps : float > 0 (``inf`` allowed)
    delta : float in (0, 1)

    Returns
    -------
    bool
    """
    n = _check_n(n)
    _, theta, _ = check_py_parameters(0.0, theta)
    m = _check_m_accounting(m)
    eps = _check_scalar_eps(eps, "a verdict")
    delta = check_delta(delta)
    if not _singleton_term_at_most(m, theta, n, delta):
        return False
    return _global_search(_GlobalRows(n, theta, eps), m, target=delta) is None


def global_delta_simple_bound(n, theta, m, eps):
    """Simple upper bound of Theorem 2 (docs §3.1).

    .. math:: \\delta^*(\\varepsilon) \\le \\max\\Big\\{\\frac{m}{m+\\theta+n-1},\\
              \\frac{2m}{(\\theta+n)(e^{\\varepsilon}-1)}\\Big\\}

    Returns
    -------
    float or ndarray, same shape as ``eps`` (capped at 1, rounded up)
    """
    n = _check_n(n)
    _, theta, _ = check_py_parameters(0.0, theta)
    m = _check_m_accounting(m)
    eps_arr, shape = _eps_values(eps)
    with np.errstate(divide="ignore", over="ignore"):
        second = 2.0 * m / ((theta + n) * np.expm1(eps_arr)) * (1.0 + 8 * UNIT_ROUNDOFF)
    out = np.minimum(1.0, np.maximum(_singleton_term_up(m, theta + n), second))
    return _shaped(out, shape)


def singleton_limit(n, theta, delta) -> int:
    """Largest m whose singleton term stays within δ (docs §3.1), exactly.

    .. math:: m_{\\mathrm{sing}}(\\delta) = \\Big\\lfloor \\frac{\\delta(\\theta+n-1)}{1-\\delta}\\Big\\rfloor

    computed in rational arithmetic from the exact binary values of θ and δ (so
    m/(m + θ + n − 1) ≤ δ holds for m = m_sing and fails for m_sing + 1, exactly). No ε,
    however large, admits a release larger than this under Theorem 2, nor at an instance
    with a singleton. Constant time for any n and θ.

    Parameters
    ----------
    n : int in [1, 10^12]
    theta : float in (0, 1e300]
    delta : float in (0, 1)

    Returns
    -------
    int
        A Python int, exact however large (about 10^316 for θ = 10^300 and δ = 1 − 2^-53);
        never converted to float.
    """
    n = _check_n(n)
    _, theta, _ = check_py_parameters(0.0, theta)
    delta = check_delta(delta)
    d = Fraction(delta)
    return int(math.floor(d * (Fraction(theta) + n - 1) / (1 - d)))


def _normal_guess(a, b, start, delta, lo, hi):
    """m in [lo, hi] where the normal approximation of P(BB(m, a, b) ≥ start) reaches δ (rows broadcast).

    Solves m·p + z·sd(m) = start − ½ (p = a/N, sd² = m p q (N + m)/(N + 1)) as the smaller
    root of the quadratic (t − m p)² = z² m p q (N + m)/(N + 1); only a starting point for
    the exact search.
    """
    z = -float(special.ndtri(delta))       # the normal upper quantile isf(δ), without scipy.stats' overhead
    a, b, start, lo, hi = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (a, b, start, lo, hi)))
    N = a + b
    p, q, t = a / N, b / N, start - 0.5
    K = z * z * p * q / (N + 1.0)
    A, B = p * p - K, 2.0 * t * p + K * N
    with np.errstate(invalid="ignore", divide="ignore"):
        disc = np.sqrt(np.maximum(B * B - 4.0 * A * t * t, 0.0)) * (1.0 if z >= 0 else -1.0)
        root = np.where(np.abs(A) > 1e-300, (B - disc) / (2.0 * A), t * t / B)
        root = np.where(np.isfinite(root) & (root > 0), root, t / p)
    return np.clip(root, lo, hi)


def _row_max_m(a: float, b: float, start: float, delta: float, lo: int, hi: int) -> int:
    """Largest m in [lo, hi] with P(BB(m, a, b) ≥ start) ≤ δ, exactly.

    The tail increases with m; T(lo) ≤ δ is known. Interpolation search from a
    normal-approximation guess, three probes per step evaluated together, with bisection
    whenever a step fails to halve the bracket; brackets of ≤ 48 are settled by evaluating
    every m at once when a tail is short (sd ≤ 2000), else by further steps. The first
    step also probes hi, which settles at once a row that stays
    within δ over the whole bracket. The interpolated quantity is log T, or log(1 − T) when
    δ > 1/2: near 1, log T ≈ −(1 − T) is too flat to interpolate on, while the lower tail
    1 − T decays smoothly (about exponentially) in m.
    """
    complement = delta > 0.5

    def key(log_t: float) -> float:
        """A monotone function of T that is smooth in m near the target."""
        if not complement:
            return log_t
        log_t = min(log_t, 0.0)
        return math.log(-math.expm1(log_t)) if log_t < 0 else -math.inf

    key_d = math.log1p(-delta) if complement else math.log(delta)
    guess = float(_normal_guess(a, b, start, delta, lo, hi))
    # a tail's window spans a few standard deviations, or many decay lengths m/(a + b) of
    # an exponential tail when m ≫ a + b: short when both are small (≲ 16 000 terms)
    short = float(np.sqrt(_dp_moments(float(hi), a, b)[1]) + hi / (a + b)) <= 2000.0
    lo_key, hi_key = math.nan, math.nan       # unknown until probed
    bisect, first = False, True
    while hi > lo:
        if hi - lo <= (48 if short else 2):
            probes = np.arange(lo + 1, hi + 1, dtype=float)
        else:
            g = min(max(int(round(guess)), lo + 1), hi)
            d = max(1, (hi - lo) // 2048)
            cand = [g - d, g, g + d] + ([(lo + hi + 1) // 2] if bisect else []) + ([hi] if first else [])
            probes = np.unique(np.clip(np.array(cand, dtype=float), lo + 1, hi))
        first = False
        log_t, rel = betabinom.log_tail(probes, a, b, start)
        ok = betabinom.verdicts_at_most(log_t, rel, delta, probes, a, b, start)
        width = hi - lo
        if ok.any():
            j = np.flatnonzero(ok)[-1]
            lo, lo_key = int(probes[j]), key(float(log_t[j]))
        if (~ok).any():
            j = np.flatnonzero(~ok)[0]
            hi, hi_key = int(probes[j]) - 1, key(float(log_t[j]))
        bisect = (hi - lo) > width / 2
        if math.isfinite(lo_key) and math.isfinite(hi_key) and hi_key != lo_key:
            # the key at lo is on one side of key_d and the key at hi + 1 on the other
            guess = lo + (key_d - lo_key) / (hi_key - lo_key) * (hi + 1 - lo)
        else:
            guess = float(_normal_guess(a, b, start, delta, lo, hi))
    return lo


def _max_m(r: np.ndarray, start: np.ndarray, b: np.ndarray, delta: float, m_max: int) -> int:
    """Largest m ≤ m_max with T_r(m) ≤ δ for every row (r ≥ 2, exact first bad count), exactly.

    The row whose normal-approximation guess is smallest is searched first (it usually
    binds); then every row is checked at that size (O(1) bounds first,
    :func:`_quick_tail_bound`, then exact tails) and the worst failing row's own largest m
    becomes the new bound, until every row passes.
    """
    m_cur = int(m_max)
    live = start <= m_cur
    r, start, b = r[live], start[live], b[live]
    risky = _quick_tail_bound(m_cur, r, b, start, delta) > delta
    if risky.any():
        guess = _normal_guess(r[risky], b[risky], start[risky], delta, start[risky] - 1, m_cur)
        j = np.flatnonzero(risky)[np.argmin(guess)]
        m_cur = _row_max_m(float(r[j]), float(b[j]), float(start[j]), delta, int(start[j]) - 1, m_cur)
    while m_cur >= 1:
        live = start <= m_cur
        r, start, b = r[live], start[live], b[live]
        if r.size == 0:
            return m_cur
        idx = np.flatnonzero(_quick_tail_bound(m_cur, r, b, start, delta) > delta)
        if idx.size == 0:
            return m_cur
        log_t, rel = betabinom.log_tail(m_cur, r[idx], b[idx], start[idx])
        ok = betabinom.verdicts_at_most(log_t, rel, delta, m_cur, r[idx], b[idx], start[idx])
        if ok.all():
            return m_cur
        worst = idx[~ok][np.argmax(log_t[~ok])]
        m_cur = _row_max_m(float(r[worst]), float(b[worst]), float(start[worst]), delta,
                           int(start[worst]) - 1, m_cur - 1)
    return 0


def _check_scalar_eps(eps, purpose: str = "this call; use synthetic_size_curve for arrays") -> float:
    eps_arr, shape = _eps_values(eps)
    if shape is not None:
        raise ValueError(f"eps must be a scalar for {purpose}, got an array of shape {shape}")
    return float(eps_arr[0])


def max_synthetic_size(n, theta, eps, delta, *, m_cap: int = _DEFAULT_M_CAP) -> int:
    """Largest release size admissible under Theorem 2 (docs §3.1), exactly.

    .. math:: m^*(\\varepsilon,\\delta) = \\max\\{m : \\delta^*(\\varepsilon; m) \\le \\delta\\}
              \\le m_{\\mathrm{sing}}(\\delta)

    δ* increases with m, so m* is the smallest of the per-multiplicity largest sizes
    (and of m_sing). The search keeps a bracket lo ≤ m* ≤ hi: the exact verdict at hi
    (:func:`_global_search`) either holds — then m* = hi — or names a failing row, whose
    own largest size (an exact search, :func:`_row_max_m`) becomes the new hi; when such
    a step does not halve the bracket the next probe is its midpoint, so the number of
    verdicts is O(log m_cap) at worst, and none costs more than a few beta-binomial tails
    per candidate that comes close to δ (docs/mathematics.md §3.1). The verdict
    δ*(ε; m*) ≤ δ < δ*(ε; m* + 1) is exact. Returns 0 when not even one synthetic value
    can be released, and at most ``m_cap``.

    Parameters
    ----------
    n : int ≥ 1
    theta : float > 0
    eps : float > 0 (``inf`` allowed: then m* = m_sing)
    delta : float in (0, 1)
    m_cap : int in [1, MAX_ACCOUNTING_M]
        Largest size searched (a larger m* is reported as ``m_cap``).
    """
    n = _check_n(n)
    _, theta, _ = check_py_parameters(0.0, theta)
    eps = _check_scalar_eps(eps)
    delta = check_delta(delta)
    m_cap = _check_m_accounting(m_cap, "m_cap")
    upper = min(m_cap, singleton_limit(n, theta, delta))
    if upper < 1:
        return 0
    # m ≤ m_sing: the singleton term is within δ, only the rows r ≥ 2 remain to check
    return _global_max_m(_GlobalRows(n, theta, eps), delta, upper)


def _smallest_row_max_m(r, s, b, delta: float, lo: int, hi: int, *, tries: int = 3,
                        check_hi: bool = False) -> int:
    """min over the given rows of their largest m in [lo, hi] with T_r(m) ≤ δ, for the ``tries``
    rows whose normal-approximation guess is smallest (each exact; rows must have T_r(lo) ≤ δ).

    With ``check_hi`` the rows whose O(1) bound (:func:`_quick_tail_bound`) at hi is
    within δ are dropped first: they cannot bind below hi.
    """
    r, s, b = (np.atleast_1d(v).astype(float) for v in (r, s, b))
    keep = s <= hi                      # a row with s > hi never fails in [lo, hi]
    r, s, b = r[keep], s[keep], b[keep]
    if check_hi and r.size:
        keep = _quick_tail_bound(hi, r, b, s, delta) > delta
        r, s, b = r[keep], s[keep], b[keep]
    if r.size == 0:
        return hi
    guess = _normal_guess(r, b, s, delta, np.maximum(s - 1.0, lo), hi)
    best = hi
    for j in np.argsort(guess, kind="stable")[:tries]:
        # T_r(m) = 0 for m < s, so the row's own search may start at max(lo, s − 1)
        best = min(best, _row_max_m(float(r[j]), float(b[j]), float(s[j]), delta,
                                    max(lo, int(s[j]) - 1), best))
    return best


def _global_max_m(rows: _GlobalRows, delta: float, upper: int) -> int:
    """Largest m ≤ ``upper`` with every candidate row's T_r(m) ≤ δ, exactly (see max_synthetic_size)."""
    lo, hi = 0, upper              # δ*(lo) ≤ δ is known (lo = 0: nothing released); m* ≤ hi
    K = rows.count(hi)
    if K == 0:
        return hi
    if K <= _DIRECT_SIZE_ROWS:
        # Few rows, and few of them not already within δ at hi by an O(1) bound (T grows
        # with m, so those stay within δ below hi): search those as an explicit list.
        r, s = rows.rows(np.arange(float(K)))
        b = rows.b(r)
        risky = _quick_tail_bound(hi, r, b, s, delta) > delta
        if np.count_nonzero(risky) <= _DIRECT_SIZE_RISKY:
            return _max_m(r[risky], s[risky], b[risky], delta, hi)
    # A first upper bound from a spread of rows (both ends, log- and evenly spaced): the
    # binding row is usually among those with the smallest normal-approximation guess, and
    # starting near m* keeps the verdicts away from sizes where many rows are close to δ.
    idx = np.unique(np.concatenate([np.arange(min(K, 32)), K - 1 - np.arange(min(K, 32)),
                                    np.floor(np.geomspace(1, K, 256)) - 1, np.floor(np.linspace(0, K - 1, 256))]))
    r, s = rows.rows(idx)
    hi = _smallest_row_max_m(r, s, rows.b(r), delta, lo, hi, tries=3, check_hi=True)
    bisect = False
    while lo < hi:
        probe = (lo + hi + 1) // 2 if bisect else hi
        failing = _global_search(rows, probe, target=delta)
        if failing is None:
            if probe == hi:
                return hi
            lo, bisect = probe, False
            continue
        # every row passes at lo, so each failing row's own search starts there
        r, s = failing
        new_hi = _smallest_row_max_m(r, s, rows.b(r), delta, lo, probe - 1)
        bisect = hi - new_hi < (hi - lo) / 2
        hi = new_hi
    return lo


def max_instance_synthetic_size(multiplicities, theta, eps, delta, *, m_cap: int = 10**6) -> int:
    """Largest m whose instance-level δ_x(ε) (σ = 0) stays within δ, exactly, capped at ``m_cap``.

    With a singleton in the data this never exceeds :func:`singleton_limit`. Cost grows
    with the number of distinct multiplicities and the width of a beta-binomial tail, not
    with m*: about 10 ms for m* ~ 10^6.

    Parameters
    ----------
    multiplicities : array_like of int ≥ 1, shape (k,)
    theta : float > 0
    eps : float > 0 (``inf`` allowed)
    delta : float in (0, 1)
    m_cap : int in [1, MAX_ACCOUNTING_M]
        Largest size searched (a larger m* is reported as ``m_cap``).

    Returns
    -------
    int
    """
    counts, values, _ = _multiplicity_profile(multiplicities)
    _, theta, _ = check_py_parameters(0.0, theta, counts.size)
    eps = _check_scalar_eps(eps)
    delta = check_delta(delta)
    m_cap = _check_m_accounting(m_cap, "m_cap")
    n = int(counts.sum())
    upper = m_cap
    if values[0] == 1:
        upper = min(upper, singleton_limit(n, theta, delta))
    if upper < 1:
        return 0
    r = values[values >= 2].astype(float)
    start = _first_bad(np.array([eps]), r - 1.0)[0][:, 0]
    return _max_m(r, start, _second_shape(theta, n, r), delta, upper)


def synthetic_size_curve(n, theta, eps, delta, *, multiplicities=None, m_cap: int = 10**6):
    """The ε-vs-m curve: largest admissible release size for each ε (docs §3.1).

    Parameters
    ----------
    n : int ≥ 1
    theta : float > 0
    eps : float or array_like of float > 0 (any shape; ``inf`` allowed)
    delta : float in (0, 1)
    multiplicities : array_like of int, optional
        Given: the instance-level curve for this dataset (``n`` must be their sum);
        omitted: the global Theorem-2 curve, which plateaus at :func:`singleton_limit`.
    m_cap : int
        Largest size searched.

    Returns
    -------
    ndarray of int, the shape of ``eps`` (shape (1,) for a scalar)
    """
    eps_arr, shape = _eps_values(eps)
    shape = (1,) if shape is None else shape
    if multiplicities is None:
        sizes = [max_synthetic_size(n, theta, float(e), delta, m_cap=m_cap) for e in eps_arr]
    else:
        counts = check_multiplicities(multiplicities)
        if int(counts.sum()) != _check_n(n):
            raise ValueError(f"n = {n} must equal the sum of the multiplicities, {int(counts.sum())}")
        sizes = [max_instance_synthetic_size(counts, theta, float(e), delta, m_cap=m_cap) for e in eps_arr]
    return np.array(sizes, dtype=np.int64).reshape(shape)


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


# ------------------------------------------------------------------ σ ∈ (0, 1)
@dataclass(frozen=True)
class MonteCarloDelta:
    """Monte Carlo estimate of δ_x(ε) for σ ∈ (0, 1) (SPEC §3.2).

    Attributes
    ----------
    eps : ndarray, shape (E,)
    estimate : ndarray, shape (E,)
        Largest empirical frequency of a bad event over neighbour types.
    std_error : ndarray, shape (E,)
        Binomial standard error of that frequency.
    upper : ndarray, shape (E,)
        One-sided 95% Clopper–Pearson upper bound, Bonferroni-corrected over the
        neighbour types so that it bounds the maximum simultaneously. This is the δ
        the product uses.
    n_mc : int
    n_types : int
        Number of neighbour types evaluated.
    worst_type : list of str, length E
        The neighbour type attaining the estimate, e.g. ``"r_l=1 -> r_t=3"``.
    """

    eps: np.ndarray
    estimate: np.ndarray
    std_error: np.ndarray
    upper: np.ndarray
    n_mc: int
    n_types: int
    worst_type: list


def monte_carlo_delta(multiplicities, sigma, theta, m, eps, *, n_mc: int = 20000,
                      rng: np.random.Generator, confidence: float = 0.95,
                      progress: Callable[[float, str], None] | None = None,
                      batch: int = 2000, prune: bool = True) -> MonteCarloDelta:
    """Estimate δ_x(ε) for σ ∈ (0, 1) by simulation (SPEC §3.2, Theorem 1).

    Replicates of :math:`(S_1,\\dots,S_k,K)` are drawn with the exact sampler, collapsed
    to one representative atom per multiplicity value (two when the value is shared,
    for old-to-old replacements) plus the rest. For every neighbour type — a pair of
    multiplicities :math:`(r_l, r_t)` or :math:`(r_l, \\text{new})` — the bad events
    (a)–(d) of SPEC §3 are evaluated; atoms of equal multiplicity are exchangeable, so
    this covers every neighbour.

    Parameters
    ----------
    multiplicities : array_like of int ≥ 1, shape (k,)
    sigma : float in (0, 1)
    theta : float > −σ
    m : int ≥ 1
    eps : float or array_like of float > 0, shape (E,)
    n_mc : int ≥ 1
        Number of replicates.
    rng : numpy.random.Generator
    confidence : float in (0, 1)
    progress : callable(fraction, message), optional
    batch : int
        Replicates simulated at once (memory bound).
    prune : bool
        Skip old-to-old neighbour types that provably cannot raise the maximum on these
        replicates (exact; ``False`` evaluates all of them, for verification).

    Returns
    -------
    MonteCarloDelta
    """
    counts, values, how_many = _multiplicity_profile(multiplicities)
    sigma, theta, z = check_py_parameters(sigma, theta, counts.size)
    if not 0 < sigma < 1:
        raise ValueError(f"sigma must be in (0, 1) for the Monte Carlo estimator, got {sigma!r}")
    m = _check_m_accounting(m)
    eps_arr, _ = _eps_values(eps)
    n_mc = check_integer("n_mc", n_mc, minimum=1, maximum=10**7)
    rng = check_rng(rng)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    k = counts.size
    has_b, b_index, rep_mult, alpha = _representatives(counts, values, how_many, sigma, theta)
    n_rep = rep_mult.size

    strength = theta + k * sigma
    # 1. Simulate every replicate of (S_representatives, K); memory O(n_rep · n_mc).
    S = np.empty((n_rep, n_mc))
    K = np.empty(n_mc)
    done = 0
    while done < n_mc:
        size = min(batch, n_mc - done)
        draws = rng.multinomial(m, rng.dirichlet(alpha, size=size))
        S[:, done:done + size] = draws[:, :n_rep].T
        K[done:done + size] = crp_tables(draws[:, -1], sigma, strength, rng)
        done += size
        if progress is not None:
            progress(0.5 * done / n_mc, f"Monte Carlo replicates: {done:,} of {n_mc:,}")

    # 2. The ratios of cases (c) and of a new target, here with the K new values of the CRP.
    singleton_to_new = None
    if values[0] == 1:
        singleton_to_new = (np.log(theta + (k + K - 1) * sigma) - np.log(theta + (k - 1) * sigma)
                            if k >= 2 else np.zeros(n_mc))
    new_target = np.log(strength) - np.log(theta + (k + K) * sigma)
    return _neighbour_type_delta(S, values, rep_mult, has_b, b_index, sigma, eps_arr,
                                 singleton_to_new=singleton_to_new, new_target=new_target, n_mc=n_mc,
                                 confidence=confidence, prune=prune, progress=progress)


def _representatives(counts, values, how_many, sigma, theta):
    """The Dirichlet components of the neighbour-type Monte Carlo (σ ∈ (0, 1)).

    One representative atom A_d per multiplicity value ``values[d]``, a second one B_d
    where that value is shared (old-to-old replacements between equal multiplicities),
    the rest of the atoms, and the new-value mass θ + kσ; the rest is dropped when empty.
    Returns ``(has_b, b_index, rep, alpha)``: which values have a B, its row, the
    representatives' multiplicities (float, A rows then B rows) and the Dirichlet weights.
    """
    D, k, n = values.size, counts.size, int(counts.sum())
    has_b = how_many >= 2
    b_index = np.cumsum(has_b) - 1 + D
    rep = np.concatenate([values, values[has_b]]).astype(float)
    rest = float(np.sum(counts - sigma) - np.sum(rep - sigma))
    alpha = np.concatenate([rep - sigma, [max(rest, 0.0), theta + k * sigma]])
    if not rest > 1e-12 * max(1.0, n):
        alpha = np.delete(alpha, rep.size)
    return has_b, b_index, rep, alpha


def _neighbour_type_delta(S, values, rep, has_b, b_index, sigma, eps_arr, *, singleton_to_new, new_target,
                          n_mc: int, confidence: float, prune: bool, progress) -> MonteCarloDelta:
    """The Monte Carlo δ over every neighbour type, from the replicates of the representatives.

    Shared by :func:`monte_carlo_delta` and the old-values-only mechanism
    (:mod:`core.old_values`), whose likelihood ratios have the same structure and differ
    only in two rows, given per replicate: ``singleton_to_new`` (case (c): the new-value
    factor when a singleton is replaced, used only when ``values[0] == 1``; else ``None``)
    and ``new_target`` (the log-ratio of a new target value, ≤ 0). ``S`` has shape
    (len(rep), n_mc): the release counts of the representatives (:func:`_representatives`).

    The log-ratio of the type (l, t) on a replicate is ``left[l_row] + right[t_row]``:

    * left row d: the replaced atom l of multiplicity values[d], log((n_l+S_l−1−σ)/(n_l−1−σ))
      for n_l ≥ 2; for n_l = 1, +inf if S_l ≥ 1 (singular) else ``singleton_to_new``;
    * left row D: case (d), n_l = 1 and v new: +inf if S_l ≥ 1, else 0;
    * right row j: old target t = representative j, log((n_t−σ)/(n_t+S_t−σ)) ≤ 0;
    * right row n_rep: ``new_target``; right row n_rep + 1: 0.

    Singular outputs are coded +inf.
    """
    D, n_rep = values.size, rep.size
    vals = values.astype(float)[:, None]
    left = np.empty((D + 1, n_mc))
    right = np.empty((n_rep + 2, n_mc))
    with np.errstate(divide="ignore", invalid="ignore"):
        left[:D] = np.log(vals + S[:D] - 1 - sigma) - np.log(vals - 1 - sigma)
        left[D] = 0.0
        if values[0] == 1:
            singular = S[0] >= 1
            left[0] = np.where(singular, np.inf, singleton_to_new)
            left[D] = np.where(singular, np.inf, 0.0)
        right[:n_rep] = np.log(rep[:, None] - sigma) - np.log(rep[:, None] + S - sigma)
        right[n_rep] = new_target
        right[n_rep + 1] = 0.0
    del S
    rows_per_chunk = max(1, 4_000_000 // n_mc)
    # A singular output is coded +inf and is bad at every ε, ε = ∞ included: count
    # "log-ratio > ε" as "> the largest finite float" there, which only +inf satisfies.
    eps_search = np.where(np.isinf(eps_arr), np.finfo(float).max, eps_arr)

    def exceed_counts(l_rows, r_rows):
        """#replicates with log-ratio > ε, for each type (rows) and ε (columns)."""
        out = np.empty((len(l_rows), eps_arr.size), dtype=np.int64)
        for i in range(0, len(l_rows), rows_per_chunk):
            block = left[l_rows[i:i + rows_per_chunk]]
            if r_rows is not None:
                block += right[r_rows[i:i + rows_per_chunk]]
            block.sort(axis=1)
            out[i:i + len(block)] = n_mc - np.stack([np.searchsorted(row, eps_search, side="right")
                                                     for row in block])
        return out

    # 3. Cheap types first: (l, new) for every l, and every pair with a singleton l.
    l_rows, r_rows, names = [], [], []

    def add_type(l_row, r_row, name):
        l_rows.append(l_row)
        r_rows.append(r_row)
        names.append(name)

    for d in range(D):
        if values[d] == 1:
            add_type(D, n_rep + 1, "r_l=1 -> new")
            for e in range(D):
                if e != 0 or has_b[0]:
                    add_type(0, b_index[0] if e == 0 else e, f"r_l=1 -> r_t={values[e]}")
        else:
            add_type(d, n_rep, f"r_l={values[d]} -> new")
    exceed = exceed_counts(np.array(l_rows), np.array(r_rows))
    best_counts = exceed.max(axis=0)
    n_types = len(names) + sum(int(has_b[d]) + D - 1 for d in range(D) if values[d] >= 2)

    # 4. Old-to-old types with n_l ≥ 2. Pathwise, right ≤ 0, so a type's count never
    #    exceeds that of its replaced atom alone (bound[d]); an l whose bound is within
    #    the running maximum at every ε cannot raise it and is skipped — exactly.
    candidates = np.flatnonzero(values >= 2)
    if candidates.size:
        bound = exceed_counts(candidates, None)
        order = np.argsort(-bound.max(axis=1), kind="stable")
        for step, j in enumerate(order):
            d = int(candidates[j])
            if prune and np.all(bound[j] <= best_counts):
                continue
            targets = [e for e in range(D) if e != d or has_b[d]]
            if not targets:
                # a single atom (k = 1): no other value to move its record to, only the
                # (l, new) type above, which is already counted
                continue
            r_idx = np.array([b_index[d] if e == d else e for e in targets])
            counts_d = exceed_counts(np.full(len(targets), d), r_idx)
            exceed = np.vstack([exceed, counts_d])
            names.extend(f"r_l={values[d]} -> r_t={values[e]}" for e in targets)
            best_counts = np.maximum(best_counts, counts_d.max(axis=0))
            if progress is not None:
                progress(0.5 + 0.5 * (step + 1) / order.size, "Evaluating neighbour types")
    if progress is not None:
        progress(1.0, "Monte Carlo done")
    T = n_types
    best = exceed.argmax(axis=0)
    top = exceed[best, np.arange(eps_arr.size)]
    estimate = top / n_mc
    std_error = np.sqrt(estimate * (1 - estimate) / n_mc)
    level = 1 - (1 - confidence) / T
    upper = np.where(top >= n_mc, 1.0, stats.beta.ppf(level, top + 1, n_mc - top))
    return MonteCarloDelta(eps=eps_arr, estimate=estimate, std_error=std_error,
                           upper=_round_up_mc(upper), n_mc=n_mc, n_types=T,
                           worst_type=[names[i] for i in best])


# ----------------------------------------- old-values-only PYPP (thesis Algorithm 3, issue 11)
from .old_values import old_values_delta  # noqa: E402  (SPEC §7: core.privacy.old_values_delta)

__all__ += ["old_values_delta"]
