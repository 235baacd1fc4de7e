"""σ = 0: the global δ (Theorem 2, the exact maximum over multiplicity profiles by branch
and bound), the singleton limit and the largest admissible release size m, global and
instance-level (docs/mathematics.md §3.1).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy import special

from . import betabinom
from .betabinom import UNIT_ROUNDOFF
from ..validation import (
    check_delta,
    check_multiplicities,
    check_py_parameters,
)
from .common import (
    _DEFAULT_M_CAP,
    _check_m_accounting,
    _check_n,
    _check_scalar_eps,
    _eps_values,
    _first_bad,
    _multiplicity_profile,
    _shaped,
    _upper_from_log,
)
from .dirichlet_process import (
    _cantelli,
    _dp_moments,
    _second_shape,
    _singleton_term_at_most,
    _singleton_term_up,
)


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

    Log-pmfs carry core.privacy.betabinom's proven error bound, widened by 1e-12, so each bound
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

    This is the paper's probabilistic curve. The smallest global δ of (ε, δ)-DP is smaller:
    the singleton term at every ε ≥ 0 (docs/audit.md §1.3), which the verdict, the largest m
    and the attack terms read (:meth:`core.privacy.DIRICHLET_PROCESS.release_guarantee`).

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
    can be released, and at most ``m_cap``. (The paper's m*; the tool's largest m is that of
    the exact global profile, :meth:`core.privacy.DIRICHLET_PROCESS.largest_m`, m_sing at
    every ε.)

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
