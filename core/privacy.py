"""Privacy accounting of the Pitman–Yor posterior-predictive mechanism (SPEC §3).

Neighbouring datasets differ by the replacement of one record (``n`` fixed). For a
confidential dataset ``x`` with multiplicities ``n_1..n_k`` the instance-level
probabilistic-DP curve is

.. math::

    \\delta_x(\\varepsilon) = \\max_{y\\sim x}
        P_{Z\\sim Q(\\cdot\\mid x)}\\Big(\\tfrac{q_x(Z)}{q_y(Z)} > e^{\\varepsilon}
        \\ \\text{or}\\ Z \\text{ singular for } y\\Big),

(Menicucci, Beraha, Favaro, Lazzarini 2026, Theorem 1). This module implements

* σ = 0 (Dirichlet process), exact closed forms (SPEC §3.1): :func:`instance_delta`,
  :func:`tight_instance_delta` (the exact hockey-stick privacy profile),
  :func:`global_delta` (Theorem 2, exact maximum over multiplicities),
  :func:`global_delta_simple_bound`, :func:`singleton_limit`,
  :func:`max_synthetic_size` and :func:`synthetic_size_curve` (the ε-vs-m plateau);
* σ ∈ (0, 1), Monte Carlo with a Clopper–Pearson upper confidence bound (SPEC §3.2):
  :func:`monte_carlo_delta`;
* σ < 0 (Dirichlet–multinomial over ``z`` public categories, SPEC §3.3): the δ bound
  and the exact pure-DP conditions.

Every tail of a beta-binomial law is a log-sum-exp of log-pmf values, never
``1 − cdf`` (which loses everything below ~1e-16, where δ targets live). Returned δ
values are rounded up by a relative 1e-10 so that floating-point error never makes a
guarantee look stronger than it is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy import special, stats

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
    "MonteCarloDelta",
    "ReleaseSpec",
    "beta_binomial_log_tail",
    "dirichlet_multinomial_pure_epsilon",
    "global_delta",
    "global_delta_simple_bound",
    "instance_delta",
    "max_instance_synthetic_size",
    "max_synthetic_size",
    "monte_carlo_delta",
    "singleton_limit",
    "synthetic_size_curve",
    "tight_instance_delta",
]

# Conservative rounding of every returned δ. scipy's betaln carries up to ~1e-12
# relative error for large arguments; this margin dominates it (tests use mpmath).
_ROUND_UP = 1.0 + 1e-10
_THRESHOLD_RTOL = 1e-12          # a threshold this close above an integer j counts S = j as bad
_ANCHOR_EVERY = 64               # exact betaln anchors bound the cumulative-sum drift


# --------------------------------------------------------------------------- helpers
def _round_up(delta):
    return np.minimum(1.0, np.asarray(delta, dtype=float) * _ROUND_UP)


def _as_output(values: np.ndarray, scalar: bool):
    return float(values[0]) if scalar else values


def _first_bad_count(threshold):
    """Smallest integer ``s`` with ``s > threshold`` (conservatively).

    The bad event ``S > x`` is ``S ≥ ⌊x⌋ + 1``. When ``x`` lies within a relative 1e-12
    above a positive integer ``j`` (where rounding of e^ε could have pushed it), the
    integer ``j`` itself is counted as bad, which can only enlarge δ.
    """
    x = np.asarray(threshold, dtype=float)
    with np.errstate(invalid="ignore"):
        fl = np.floor(x)
        start = fl + 1
        near = (fl >= 1) & ((x - fl) <= _THRESHOLD_RTOL * x)
    start = np.where(near, fl, start)
    return np.where(np.isfinite(x), start, np.inf)


def _beta_binomial_logpmf(m: int, a, b, s_min: int = 0) -> np.ndarray:
    """Log-pmf of BB(m, a_j, b_j) at s = s_min..m, shape (R, m − s_min + 1).

    Exact ``betaln`` anchors every 64 counts and, in between, the closed-form ratio
    :math:`p(s+1)/p(s) = \\frac{(m-s)(s+a)}{(s+1)(m-s-1+b)}` (one ``log`` per entry
    instead of four log-gamma calls; the anchors bound the cumulative-sum drift).
    """
    a = np.atleast_1d(np.asarray(a, dtype=float))[:, None]
    b = np.atleast_1d(np.asarray(b, dtype=float))[:, None]
    s = np.arange(s_min, m + 1, dtype=float)[None, :]
    width = s.shape[1]
    x = np.empty((a.shape[0], width))
    sp = s[:, :-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        x[:, 1:] = np.log(((m - sp) * (sp + a)) / ((sp + 1.0) * (m - sp - 1.0 + b)))
    anchor_idx = np.arange(0, width, _ANCHOR_EVERY)
    sa = s[:, anchor_idx]
    with np.errstate(invalid="ignore"):
        x[:, anchor_idx] = (-np.log(m + 1.0) - special.betaln(sa + 1.0, m - sa + 1.0)
                            + special.betaln(sa + a, m - sa + b) - special.betaln(a, b))
    pad = (-width) % _ANCHOR_EVERY
    if pad:
        x = np.concatenate([x, np.zeros((x.shape[0], pad))], axis=1)
    with np.errstate(invalid="ignore"):  # only the degenerate rows below produce NaN
        logpmf = np.cumsum(x.reshape(x.shape[0], -1, _ANCHOR_EVERY), axis=2).reshape(x.shape[0], -1)
    logpmf = logpmf[:, :width]
    # b = 0 (σ < 0 with a single public category) is the point mass at m.
    degenerate = b[:, 0] <= 0
    if degenerate.any():
        logpmf[degenerate] = -np.inf
        logpmf[degenerate, -1] = 0.0
    return logpmf


def _reverse_logcumsumexp(log_terms: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):  # log(0 + 0) = -inf is the right answer
        return np.logaddexp.accumulate(log_terms[:, ::-1], axis=1)[:, ::-1]


def beta_binomial_log_tail(m: int, a, b, s_min: int = 0) -> np.ndarray:
    """Log upper tails of beta-binomial laws on a grid of counts.

    .. math:: \\log P(S \\ge s),\\quad S\\sim\\mathrm{BB}(m, a_j, b_j),\\quad s = s_{\\min},\\dots,m.

    Tails are reverse cumulative log-sum-exps of the log-pmf, so tails far below
    1e-300 stay accurate in relative terms (``betabinom.sf`` is ``1 − cdf`` and
    returns 0 below ~1e-16).

    Parameters
    ----------
    m : int ≥ 1
    a, b : array_like of float > 0, shape (R,)
    s_min : int in [0, m]

    Returns
    -------
    ndarray, shape (R, m − s_min + 1)
        Entry ``[j, i]`` is :math:`\\log P(S_j \\ge s_{\\min} + i)`.
    """
    return _reverse_logcumsumexp(_beta_binomial_logpmf(m, a, b, s_min))


def _tail_at(log_tails: np.ndarray, s_min: int, start: np.ndarray) -> np.ndarray:
    """``P(S ≥ start)`` from a table of log tails; 0 beyond ``m``, 1 at or below 0."""
    m_plus_1 = s_min + log_tails.shape[1]
    start = np.asarray(start, dtype=float)
    out = np.zeros(start.shape)
    inside = start < m_plus_1
    if inside.any():
        idx = np.maximum(start[inside], s_min).astype(np.int64) - s_min
        rows = np.broadcast_to(np.arange(log_tails.shape[0])[:, None], start.shape)[inside]
        out[inside] = np.exp(log_tails[rows, idx])
    return out


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
def _dp_instance_tails(values, theta, n, m, c):
    """T_r(ε) for each multiplicity value r (rows) and each c = e^ε − 1 (columns)."""
    r = values.astype(float)
    with np.errstate(invalid="ignore"):
        thresholds = np.where(r[:, None] == 1, 0.0, c[None, :] * (r[:, None] - 1))
    start = _first_bad_count(thresholds)
    needed = start[start <= m]
    if needed.size == 0:
        return np.zeros(start.shape)
    s_min = int(needed.min())
    log_tails = beta_binomial_log_tail(m, r, theta + n - r, s_min)
    return _tail_at(log_tails, s_min, start)


def instance_delta(multiplicities, sigma, theta, m, eps, *, n_mc: int = 20000, seed=None,
                   progress: Callable[[float, str], None] | None = None):
    """Instance-level probabilistic-DP curve δ_x(ε) (SPEC §3, §7).

    * σ = 0: exact,
      :math:`\\delta_x(\\varepsilon)=\\max_{r\\in\\{n_i\\}} P\\big(S>(e^{\\varepsilon}-1)(r-1)\\big)`,
      :math:`S\\sim\\mathrm{BB}(m,r,\\theta+n-r)`; with a singleton the curve never falls
      below :math:`m/(m+\\theta+n-1)`.
    * σ ∈ (0, 1): the one-sided 95% Clopper–Pearson upper confidence bound of the Monte
      Carlo estimate (:func:`monte_carlo_delta` gives the estimate and its error).
    * σ < 0 (``z = θ/|σ|`` public categories, α = |σ|): the bound
      :math:`\\max_l P\\big(S_l>(e^{\\varepsilon}-1)(n_l-1+\\alpha)\\big)`,
      :math:`S_l\\sim\\mathrm{BB}(m,n_l+\\alpha,n+z\\alpha-n_l-\\alpha)`, which is 0 exactly
      when the pure ε-DP condition holds.

    Parameters
    ----------
    multiplicities : array_like of int ≥ 1, shape (k,)
    sigma, theta : float
        Admissible PY parameters (see :func:`core.validation.check_py_parameters`).
    m : int ≥ 1
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
    m = check_m(m)
    eps_arr, scalar = check_eps(eps)
    n = int(counts.sum())
    with np.errstate(over="ignore"):
        c = np.expm1(eps_arr)
    if sigma == 0:
        delta = _dp_instance_tails(values, theta, n, m, c).max(axis=0)
    elif z is not None:
        alpha = -sigma
        r = values.astype(float)
        start = _first_bad_count(c[None, :] * (r[:, None] - 1 + alpha))
        needed = start[start <= m]
        if needed.size == 0:
            delta = np.zeros(eps_arr.shape)
        else:
            s_min = int(needed.min())
            log_tails = beta_binomial_log_tail(m, r + alpha, n + z * alpha - r - alpha, s_min)
            delta = _tail_at(log_tails, s_min, start).max(axis=0)
    else:
        rng = np.random.default_rng(seed)
        delta = monte_carlo_delta(counts, sigma, theta, m, eps_arr, n_mc=n_mc, rng=rng, progress=progress).upper
    return _as_output(_round_up(delta), scalar)


def tight_instance_delta(multiplicities, theta, m, eps):
    """Tight instance-level privacy profile for σ = 0 (SPEC §3.1).

    The exact one-sided hockey-stick divergence

    .. math::

        \\delta^{\\mathrm{tight}}_x(\\varepsilon) = \\max_{y\\sim x}
        E_x\\big[(1-e^{\\varepsilon} q_y(Z)/q_x(Z))_+\\big]
        = \\max_{r\\in\\{n_i\\}} \\begin{cases}
        \\frac{m}{m+\\theta+n-1} & r = 1\\\\
        E\\big[(1-e^{\\varepsilon}\\tfrac{r-1}{r-1+S})_+\\big],\\ S\\sim\\mathrm{BB}(m,r,\\theta+n-r) & r\\ge 2
        \\end{cases}

    It is the smallest δ for which the release is (ε, δ)-DP at ``x`` against every
    neighbour, and never exceeds :func:`instance_delta`.

    Parameters
    ----------
    multiplicities : array_like of int ≥ 1, shape (k,)
    theta : float > 0
    m : int ≥ 1
    eps : float or array_like of float > 0

    Returns
    -------
    float or ndarray, same shape as ``eps``
    """
    counts, values, _ = _multiplicity_profile(multiplicities)
    _, theta, _ = check_py_parameters(0.0, theta, counts.size)
    m = check_m(m)
    eps_arr, scalar = check_eps(eps)
    n = int(counts.sum())
    c = np.expm1(eps_arr)
    # Rows and tails are computed exactly as in instance_delta (the singleton row's
    # weight (r−1)/(r−1+S) is 0, leaving P(S ≥ 1)), so the profile can never exceed the
    # probabilistic curve, not even by a rounding error.
    r = values.astype(float)
    thresholds = np.where(r[:, None] == 1, 0.0, c[None, :] * (r[:, None] - 1))
    start = _first_bad_count(thresholds)
    result = np.zeros(eps_arr.shape)
    needed = start[start <= m]
    if needed.size:
        s_min = int(needed.min())
        log_pmf = _beta_binomial_logpmf(m, r, theta + n - r, s_min)
        log_tail = _reverse_logcumsumexp(log_pmf)
        # (1 − e^ε (r−1)/(r−1+S))_+ is positive exactly on the bad event S ≥ start, so
        # the profile is P(S ≥ start) − e^ε E[(r−1)/(r−1+S); S ≥ start].
        s_grid = np.arange(s_min, m + 1, dtype=float)[None, :]
        with np.errstate(divide="ignore"):
            log_w = log_pmf + np.log(r[:, None] - 1) - np.log(r[:, None] - 1 + s_grid)
        log_wtail = _reverse_logcumsumexp(log_w)
        tail = _tail_at(log_tail, s_min, start)
        wtail = _tail_at(log_wtail, s_min, start)
        with np.errstate(invalid="ignore", over="ignore"):
            value = tail - np.exp(eps_arr)[None, :] * wtail
        value = np.where(np.isfinite(value), value, 0.0)
        result = np.clip(value, 0.0, tail).max(axis=0)
    return _as_output(_round_up(result), scalar)


def _dp_bb_moments(m, r, N):
    mean = m * r / N
    var = m * r * (N - r) * (N + m) / (N * N * (N + 1.0))
    return mean, var


def _global_delta_one(n: int, theta: float, m: int, c: float) -> float:
    """δ*(ε) = max_{r=1..n} T_r(ε) for one ε, exactly (Theorem 2).

    Within a run of multiplicities r sharing the same first bad count s, T_r = P(S ≥ s)
    increases with r (Beta(r, N − r) increases in likelihood-ratio order), so only the
    largest r of each run can be the maximiser: at most min(n, m) candidates. They are
    evaluated in order of a Cantelli upper bound and the search stops as soon as no
    remaining candidate can beat the current maximum.
    """
    N = theta + n
    if not np.isfinite(c):
        return m / (m + N - 1.0)
    s = np.arange(1, m + 1, dtype=float)
    with np.errstate(divide="ignore", over="ignore"):
        approx = np.floor(s / c) + 1.0 if c > 0 else np.full(s.shape, float(n))
    approx = np.minimum(approx, n)
    # Fix floating-point edges: take the largest r near the estimate whose first bad count is ≤ s.
    best = np.ones(s.shape)
    for shift in (-2.0, -1.0, 0.0, 1.0, 2.0):
        r = np.clip(approx + shift, 1, n)
        ok = _first_bad_count(np.where(r == 1, 0.0, c * (r - 1))) <= s
        best = np.where(ok & (r > best), r, best)
    r_cand = np.unique(best)
    start = _first_bad_count(np.where(r_cand == 1, 0.0, c * (r_cand - 1)))
    keep = start <= m
    r_cand, start = r_cand[keep], start[keep]
    if r_cand.size == 0:
        return 0.0
    mean, var = _dp_bb_moments(m, r_cand, N)
    gap = start - mean
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.where(gap > 0, var / (var + gap * gap), 1.0)
    order = np.argsort(-bound, kind="stable")
    best_value = 0.0
    budget = max(1, 2_000_000 // (m + 1))  # rows per batch: bounded memory
    i = 0
    while i < order.size:
        if bound[order[i]] <= best_value:
            break
        batch = order[i:i + budget]
        batch = batch[bound[batch] > best_value]
        if batch.size == 0:
            break
        s_min = int(start[batch].min())
        log_tails = beta_binomial_log_tail(m, r_cand[batch], N - r_cand[batch], s_min)
        values = np.exp(log_tails[np.arange(batch.size), start[batch].astype(np.int64) - s_min])
        best_value = max(best_value, float(values.max()))
        i += budget
    return best_value


def global_delta(n, theta, m, eps):
    """Global (ε, δ)-DP of the DP posterior-predictive release (Theorem 2, SPEC §3.1).

    .. math::

        \\delta^*(\\varepsilon) = \\max_{r=1,\\dots,n} P\\big(S_r > (e^{\\varepsilon}-1)(r-1)\\big),
        \\quad S_r\\sim\\mathrm{BB}(m, r, \\theta+n-r),

    valid for every dataset of size ``n`` (σ = 0). It never falls below the singleton
    term :math:`m/(m+\\theta+n-1)` and equals it for :math:`\\varepsilon\\ge\\log(1+m)`.
    The maximum over ``r`` is exact (see :func:`_global_delta_one`).

    Parameters
    ----------
    n : int ≥ 1
    theta : float > 0
    m : int ≥ 1
    eps : float or array_like of float > 0

    Returns
    -------
    float or ndarray, same shape as ``eps``
    """
    n = check_integer("n", n, minimum=1)
    _, theta, _ = check_py_parameters(0.0, theta)
    m = check_m(m)
    eps_arr, scalar = check_eps(eps)
    c = np.expm1(eps_arr)
    out = np.array([_global_delta_one(n, theta, m, float(ci)) for ci in c])
    return _as_output(_round_up(out), scalar)


def global_delta_simple_bound(n, theta, m, eps):
    """Simple upper bound of Theorem 2 (SPEC §3.1).

    .. math:: \\delta^*(\\varepsilon) \\le \\max\\Big\\{\\frac{m}{m+\\theta+n-1},\\
              \\frac{2m}{(\\theta+n)(e^{\\varepsilon}-1)}\\Big\\}

    Returns
    -------
    float or ndarray, same shape as ``eps`` (capped at 1)
    """
    n = check_integer("n", n, minimum=1)
    _, theta, _ = check_py_parameters(0.0, theta)
    m = check_m(m)
    eps_arr, scalar = check_eps(eps)
    with np.errstate(divide="ignore"):
        second = 2.0 * m / ((theta + n) * np.expm1(eps_arr))
    out = np.maximum(m / (m + theta + n - 1.0), second)
    return _as_output(_round_up(out), scalar)


def singleton_limit(n, theta, delta) -> int:
    """Largest m whose singleton term stays within δ (SPEC §3.1).

    .. math:: m_{\\mathrm{sing}}(\\delta) = \\Big\\lfloor \\frac{\\delta(\\theta+n-1)}{1-\\delta}\\Big\\rfloor

    No ε, however large, admits a release larger than this under Theorem 2, nor at an
    instance with a singleton.
    """
    n = check_integer("n", n, minimum=1)
    _, theta, _ = check_py_parameters(0.0, theta)
    delta = check_delta(delta)
    m = math.floor(delta * (theta + n - 1.0) / (1.0 - delta))
    # Guard the floor against rounding: the singleton term must really be ≤ δ.
    while m > 0 and m / (m + theta + n - 1.0) * _ROUND_UP > delta:
        m -= 1
    while (m + 1) / (m + 1 + theta + n - 1.0) * _ROUND_UP <= delta:
        m += 1
    return max(m, 0)


def _largest_m(feasible: Callable[[int], bool], upper: int) -> int:
    """Largest m in [0, upper] with ``feasible(m)``, for a monotone predicate (feasible(0))."""
    if upper <= 0 or not feasible(1):
        return 0
    lo, hi = 1, upper
    if feasible(hi):
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if feasible(mid):
            lo = mid
        else:
            hi = mid
    return lo


def max_synthetic_size(n, theta, eps, delta) -> int:
    """Largest release size admissible under Theorem 2 (SPEC §3.1).

    .. math:: m^*(\\varepsilon,\\delta) = \\max\\{m : \\delta^*(\\varepsilon; m) \\le \\delta\\}
              \\le m_{\\mathrm{sing}}(\\delta)

    δ* increases with m (the count of any value in the release grows with m), so a
    bisection over ``[1, m_sing]`` is exact. Returns 0 when not even one synthetic value
    can be released.

    Parameters
    ----------
    n : int ≥ 1
    theta : float > 0
    eps : float > 0
    delta : float in (0, 1)
    """
    n = check_integer("n", n, minimum=1)
    _, theta, _ = check_py_parameters(0.0, theta)
    eps_arr, scalar = check_eps(eps)
    if not scalar:
        raise ValueError("eps must be a scalar here; use synthetic_size_curve for arrays")
    delta = check_delta(delta)
    with np.errstate(over="ignore"):
        c = float(np.expm1(eps_arr[0]))
    upper = singleton_limit(n, theta, delta)
    return _largest_m(lambda m: _global_delta_one(n, theta, m, c) * _ROUND_UP <= delta, upper)


def max_instance_synthetic_size(multiplicities, theta, eps, delta, *, m_cap: int = 10**6) -> int:
    """Largest m whose instance-level δ_x(ε) (σ = 0) stays within δ, capped at ``m_cap``.

    With a singleton in the data this never exceeds :func:`singleton_limit`.
    """
    counts, values, _ = _multiplicity_profile(multiplicities)
    _, theta, _ = check_py_parameters(0.0, theta, counts.size)
    eps_arr, scalar = check_eps(eps)
    if not scalar:
        raise ValueError("eps must be a scalar here; use synthetic_size_curve for arrays")
    delta = check_delta(delta)
    m_cap = check_m(m_cap, "m_cap")
    n = int(counts.sum())
    c = np.expm1(eps_arr)
    upper = m_cap
    if values[0] == 1:
        upper = min(upper, singleton_limit(n, theta, delta))

    def feasible(m: int) -> bool:
        return float(_dp_instance_tails(values, theta, n, m, c).max()) * _ROUND_UP <= delta

    return _largest_m(feasible, upper)


def synthetic_size_curve(n, theta, eps, delta, *, multiplicities=None, m_cap: int = 10**6):
    """The ε-vs-m curve: largest admissible release size for each ε (SPEC §3.1).

    Parameters
    ----------
    n : int ≥ 1
    theta : float > 0
    eps : array_like of float > 0, shape (E,)
    delta : float in (0, 1)
    multiplicities : array_like of int, optional
        Given: the instance-level curve for this dataset (capped at ``m_cap``);
        omitted: the global Theorem-2 curve, which plateaus at :func:`singleton_limit`.

    Returns
    -------
    ndarray of int, shape (E,)
    """
    eps_arr, _ = check_eps(eps)
    if multiplicities is None:
        return np.array([max_synthetic_size(n, theta, float(e), delta) for e in eps_arr], dtype=np.int64)
    return np.array([max_instance_synthetic_size(multiplicities, theta, float(e), delta, m_cap=m_cap)
                     for e in eps_arr], dtype=np.int64)


# ------------------------------------------------------------------------ σ < 0
def dirichlet_multinomial_pure_epsilon(multiplicities, alpha, m, *, instance: bool = True) -> float:
    """Smallest ε for which the σ < 0 release is pure ε-DP (SPEC §3.3).

    Instance level (at ``x``): :math:`m \\le (e^{\\varepsilon}-1)(\\min_i n_i - 1 + \\alpha)`,
    i.e. :math:`\\varepsilon = \\log\\big(1 + m/(\\min_i n_i - 1 + \\alpha)\\big)`;
    global: :math:`\\varepsilon = \\log(1 + m/\\alpha)` (Machanavajjhala et al. 2008).
    """
    counts = check_multiplicities(multiplicities)
    alpha = check_positive("alpha", alpha)
    m = check_m(m)
    floor = (counts.min() - 1 + alpha) if instance else alpha
    return float(np.log1p(m / floor)) * _ROUND_UP


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
    m = check_m(m)
    eps_arr, _ = check_eps(eps)
    n_mc = check_integer("n_mc", n_mc, minimum=1)
    rng = check_rng(rng)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    k, n = counts.size, int(counts.sum())
    D = values.size
    # Dirichlet components: A_d (one atom of multiplicity values[d]), B_d (a second one
    # where that multiplicity is shared), the rest, and the new-value mass.
    has_b = how_many >= 2
    b_index = np.cumsum(has_b) - 1 + D
    n_rep = D + int(has_b.sum())
    rep_mult = np.concatenate([values, values[has_b]]).astype(float)
    rest_mass = float(np.sum(counts - sigma) - np.sum(rep_mult - sigma))
    alpha = np.concatenate([rep_mult - sigma, [max(rest_mass, 0.0), theta + k * sigma]])
    use_rest = rest_mass > 1e-12 * max(1.0, n)
    if not use_rest:
        alpha = np.delete(alpha, n_rep)

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

    # 2. The log-ratio of a neighbour type is left[l_row] + right[t_row]:
    #   left row d  : the replaced atom l of multiplicity values[d]: log((n_l+S_l−1−σ)/(n_l−1−σ))
    #                 for n_l ≥ 2; for n_l = 1, +inf if S_l ≥ 1 (singular) else the new-value
    #                 factor (θ+(k+K−1)σ)/(θ+(k−1)σ) of case (c);
    #   left row D  : case (d), n_l = 1 and v new: +inf if S_l ≥ 1, else 0;
    #   right row j : old target t = representative j: log((n_t−σ)/(n_t+S_t−σ)) ≤ 0;
    #   right row n_rep: v new, log((θ+kσ)/(θ+(k+K)σ)) ≤ 0; right row n_rep+1: 0.
    vals = values.astype(float)[:, None]
    left = np.empty((D + 1, n_mc))
    right = np.empty((n_rep + 2, n_mc))
    with np.errstate(divide="ignore", invalid="ignore"):
        left[:D] = np.log(vals + S[:D] - 1 - sigma) - np.log(vals - 1 - sigma)
        left[D] = 0.0
        if values[0] == 1:
            singular = S[0] >= 1
            c_factor = (np.log(theta + (k + K - 1) * sigma) - np.log(theta + (k - 1) * sigma)
                        if k >= 2 else np.zeros(n_mc))
            left[0] = np.where(singular, np.inf, c_factor)
            left[D] = np.where(singular, np.inf, 0.0)
        right[:n_rep] = np.log(rep_mult[:, None] - sigma) - np.log(rep_mult[:, None] + S - sigma)
        right[n_rep] = np.log(strength) - np.log(theta + (k + K) * sigma)
        right[n_rep + 1] = 0.0
    del S

    rows_per_chunk = max(1, 4_000_000 // n_mc)

    def exceed_counts(l_rows, r_rows):
        """#replicates with log-ratio > ε, for each type (rows) and ε (columns)."""
        out = np.empty((len(l_rows), eps_arr.size), dtype=np.int64)
        for i in range(0, len(l_rows), rows_per_chunk):
            block = left[l_rows[i:i + rows_per_chunk]]
            if r_rows is not None:
                block += right[r_rows[i:i + rows_per_chunk]]
            block.sort(axis=1)
            out[i:i + len(block)] = n_mc - np.stack([np.searchsorted(row, eps_arr, side="right")
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
                           upper=_round_up(upper), n_mc=n_mc, n_types=T,
                           worst_type=[names[i] for i in best])
