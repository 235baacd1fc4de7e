"""Beta-binomial tails with a proven error bound, for the privacy accounting.

Every δ of the Dirichlet-process and Dirichlet–multinomial accounting (SPEC §3.1, §3.3)
is an upper tail :math:`P(S \\ge s_0)` of a beta-binomial law
:math:`S\\sim\\mathrm{BB}(m, a, b)`. This module computes those tails

* **accurately at agency sizes** (``a + b`` up to 10^9, ``m`` up to 10^8): the log-pmf
  is built from log-gamma *differences* :func:`log_gamma_ratio` computed by a shifted
  Stirling series, never from ``betaln`` (whose ``log Γ(b)`` terms are ~10^7 at
  ``b = 10^6`` and carry absolute errors of ~10^-9, i.e. relative errors of δ above the
  margin a safe rounding can afford);
* **fast**: the beta-binomial is log-concave for ``a, b ≥ 1``, so a tail needs only the
  terms until a geometric bound on the remainder is negligible — a window of a few
  standard deviations, not ``m`` terms;
* **with a rigorous relative error bound** returned next to each value, so callers can
  round δ up by it and settle every yes/no that falls inside it by an exact
  high-precision recheck (:func:`log_tail_mp`, mpmath).

The derivation of the bounds is in ``docs/accuracy.md``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

__all__ = [
    "UNIT_ROUNDOFF",
    "log_gamma_ratio",
    "log_pmf",
    "log_tail",
    "log_tail_mp",
    "tail_at_most",
]

UNIT_ROUNDOFF = 2.0 ** -53

# B_{2k} / (2k (2k − 1)), k = 1..6: the Stirling series of log Γ. For y ≥ 16 the first
# omitted term is below 3e-18 · y^{-12}: far under one rounding error.
_STIRLING = (1.0 / 12.0, -1.0 / 360.0, 1.0 / 1260.0, -1.0 / 1680.0, 1.0 / 1188.0, -691.0 / 360360.0)
_SHIFT = 16.0
# Relative error allowance per log-gamma difference, in units of the round-off, over the
# magnitude bound of _magnitude (measured worst case against mpmath: < 4; see tests).
_LGR_ERR_UNITS = 32.0
_TRUNCATION = 2.0 ** -45          # remainder a window may leave, relative to its sum (in the error bound)
_BLOCK = 64                       # exact anchors every 64 terms bound the cumulative-sum drift
_CHUNK_TERMS = 1 << 22            # rows × columns processed at once (memory bound, ~32 MiB)


def _stirling_tail(y: np.ndarray) -> np.ndarray:
    t = 1.0 / y
    t2 = t * t
    acc = _STIRLING[-1]
    for c in _STIRLING[-2::-1]:
        acc = c + t2 * acc
    return t * acc


def _gammaln(x):
    """log Γ(x), also for subnormal x (scipy returns inf there): −log x − γx + O(x²) below 1e-8."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(x < 1e-8, -np.log(x) - 0.5772156649015329 * x, special.gammaln(np.maximum(x, 1e-8)))


def log_gamma_ratio(x, h) -> np.ndarray:
    """:math:`\\log\\Gamma(x+h) - \\log\\Gamma(x)`, accurate for large arguments.

    For ``x < 16``, ``gammaln(x + h) − gammaln(x)`` (log Γ(x) is small there); otherwise
    the Stirling series gives

    .. math:: (x-\\tfrac12)\\,\\mathrm{log1p}(h/x) + h\\log(x+h) - h + S(x+h) - S(x),

    whose terms are all of the size of the result or smaller, so the absolute error is
    a few round-offs times :math:`h\\,|\\log(x+h)| + h + 1` — unlike
    ``gammaln(x + h) − gammaln(x)``, whose error scales with ``x log x``.

    Parameters
    ----------
    x : array_like of float > 0
    h : array_like of float ≥ 0 (broadcast with ``x``)

    Returns
    -------
    ndarray of float
    """
    x, h = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(h, dtype=float))
    out = np.empty(x.shape)
    small = x < _SHIFT
    if small.any():
        # log Γ(x) is below 30 in size here, and log Γ(x + h) carries an error of a few
        # round-offs of h·log(x + h) at most: within the magnitude bound of _magnitude.
        xs, hs = x[small], h[small]
        out[small] = _gammaln(xs + hs) - _gammaln(xs)
    big = ~small
    if big.any():
        y, hb = x[big], h[big]
        y1 = y + hb
        with np.errstate(invalid="ignore"):
            main = (y - 0.5) * np.log1p(hb / y) + (hb * np.log(y1) - hb)
        out[big] = main + (_stirling_tail(y1) - _stirling_tail(y))
    return np.where(h == 0, 0.0, out)


def _magnitude(x, h) -> np.ndarray:
    """Bound on the size of the terms summed by :func:`log_gamma_ratio` (error scale)."""
    x = np.asarray(x, dtype=float)
    h = np.asarray(h, dtype=float)
    return h * (np.abs(np.log(x + h + 1.0)) + np.abs(np.log(x + 1.0)) + 2.0) + 40.0


def log_pmf(m, a, b, s):
    """Log-pmf of :math:`\\mathrm{BB}(m, a, b)` at ``s``, with its absolute error bound.

    .. math::

        \\log p(s) = \\log\\binom{m}{s} + \\log\\frac{\\Gamma(s+a)}{\\Gamma(a)}
        + \\log\\frac{\\Gamma(m-s+b)}{\\Gamma(b)} - \\log\\frac{\\Gamma(m+a+b)}{\\Gamma(a+b)},

    each ratio from :func:`log_gamma_ratio`, and
    :math:`\\log\\binom{m}{s} = \\log\\frac{\\Gamma(m+1)}{\\Gamma(m-s+1)} - \\log\\frac{\\Gamma(s+1)}{\\Gamma(1)}`.

    Parameters
    ----------
    m : array_like of int ≥ 0
    a, b : array_like of float > 0
    s : array_like of int in [0, m] (all four broadcast)

    Returns
    -------
    value, abs_error : ndarray, ndarray
    """
    m, a, b, s = (np.asarray(v, dtype=float) for v in (m, a, b, s))
    parts = ((m - s + 1.0, s, 1.0), (1.0, s, -1.0), (a, s, 1.0), (b, m - s, 1.0), (a + b, m, -1.0))
    value = 0.0
    err = 0.0
    for x, h, sign in parts:
        value = value + sign * log_gamma_ratio(x, h)
        err = err + _magnitude(x, h)
    return value, _LGR_ERR_UNITS * UNIT_ROUNDOFF * err


def _log_ratio(m, a, b, s):
    """log p(s+1)/p(s) = log[(m − s)(s + a) / ((s + 1)(m − s − 1 + b))]."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = np.log(((m - s) * (s + a)) / ((s + 1.0) * (m - s - 1.0 + b)))
        bad = np.isinf(out) & (m - s > 0)
        if np.any(bad):  # the quotient over/underflowed (a subnormal shape): four logs instead
            m, s, a, b = np.broadcast_arrays(m, s, a, b)
            out[bad] = (np.log(m[bad] - s[bad]) + np.log(s[bad] + a[bad]) - np.log(s[bad] + 1.0)
                        - np.log(m[bad] - s[bad] - 1.0 + b[bad]))
    return out


def _window(m, a, b, lo, width):
    """Log-pmf on s = lo .. lo + width − 1 (−inf outside [0, m]) and its error bound.

    Rows of ``m, a, b, lo`` (shape (R,)); anchors from :func:`log_pmf` every 64 columns,
    the exact one-step ratio in between. Returns (log_p (R, width), abs_error (R,)).
    """
    R = lo.size
    cols = np.arange(width, dtype=float)
    s = lo[:, None] + cols[None, :]
    ss = np.clip(s, 0.0, m[:, None])
    steps = _log_ratio(m[:, None], a[:, None], b[:, None], ss[:, :-1])
    x = np.empty((R, width))
    x[:, 1:] = steps
    anchor_cols = np.arange(0, width, _BLOCK)
    anchor_val, anchor_err = log_pmf(m[:, None], a[:, None], b[:, None], ss[:, anchor_cols])
    x[:, anchor_cols] = anchor_val
    pad = (-width) % _BLOCK
    if pad:
        x = np.concatenate([x, np.zeros((R, pad))], axis=1)
    with np.errstate(invalid="ignore"):
        log_p = np.cumsum(x.reshape(R, -1, _BLOCK), axis=2).reshape(R, -1)[:, :width]
    log_p[(s < 0) | (s > m[:, None])] = -np.inf
    # Error: anchor + 64 steps each within (2 + |step|)·2u + cumulative-sum rounding.
    finite_steps = np.where(np.isfinite(steps), np.abs(steps), 0.0)
    step_max = finite_steps.max(axis=1) if width > 1 else np.zeros(R)
    drift = _BLOCK * UNIT_ROUNDOFF * (4.0 + 2.0 * step_max + _BLOCK * step_max)
    return log_p, anchor_err.max(axis=1) + drift


def _sum_exp(log_terms):
    """Row-wise log Σ exp (−inf for an empty or all −inf row)."""
    top = log_terms.max(axis=1)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return safe + np.log(np.exp(log_terms - safe[:, None]).sum(axis=1))


def _moments(m, a, b):
    """Mean and variance of BB(m, a, b), in an order that cannot overflow or divide 0 by 0."""
    p = a / (a + b)
    mean = m * p
    var = mean * (b / (a + b)) * ((a + b + m) / (a + b + 1.0))
    return mean, var


def log_tail(m, a, b, s0, *, offset=None, shift=None, total=None, total_err=None):
    """Log upper tail :math:`\\log P(S \\ge s_0)`, :math:`S\\sim\\mathrm{BB}(m, a, b)`, and its error bound.

    Rows broadcast over ``m, a, b, s0``. For log-concave rows (``a, b ≥ 1``) the sum runs
    over a window that grows until the remainder, bounded by the geometric series of the
    last one-step ratio (ratios decrease by log-concavity), is below ``2^-45`` of the sum (and counted in the error bound).
    A tail starting below the mean is computed as ``1 −`` the lower tail when that is at
    least 1/4 (so no relative accuracy is lost), else summed directly through the mode.
    Other rows are summed over ``[s0, m]`` in full, in bounded-memory chunks.

    With ``offset`` (d₀ ∈ (0, 1]) and ``shift`` (k ≥ 0) it returns instead the weighted tail
    :math:`\\log E\\big[\\tfrac{d_0 + S - s_0}{S + k};\\ S \\ge s_0\\big]` (weights in
    [−1, 1], ≥ 0 exactly from s₀ on; the tight privacy profile, docs/mathematics.md §3.1).
    If ``total`` = :math:`E\\big[\\tfrac{d_0 + S - s_0}{S + k}\\big]` over all S is known in
    closed form (with absolute error ``total_err``), a tail starting below the mean is
    ``total`` minus the (negative) weighted lower tail when that keeps the accuracy;
    otherwise it is summed directly.

    Parameters
    ----------
    m : array_like of int ≥ 1
    a, b : array_like of float, a > 0, b ≥ 0 (b = 0 is the point mass at m)
    s0 : array_like of int (any; ≤ 0 gives log 1 = 0, > m gives −inf)
    offset, shift, total, total_err : array_like of float, optional

    Returns
    -------
    log_value : ndarray of float
    rel_error : ndarray of float
        A bound on :math:`|\\hat T/T - 1|` (0 where the value is exact).
    """
    weighted = offset is not None
    arrays = [np.asarray(v, dtype=float) for v in (m, a, b, s0)]
    if weighted:
        if total is None:
            total, total_err = np.nan, 0.0
        arrays += [np.asarray(v, dtype=float) for v in (offset, shift, total, total_err)]
    arrays = np.broadcast_arrays(*arrays)
    shape = arrays[0].shape
    m, a, b, s0, *w = (v.ravel().copy() for v in arrays)
    out = np.zeros(m.size)
    err = np.zeros(m.size)
    out[s0 > m] = -np.inf
    point_mass = (b <= 0) & (s0 <= m)   # BB(m, a, 0) is the point mass at m
    if weighted:
        s0 = np.maximum(s0, 0.0)
        with np.errstate(divide="ignore"):
            out[point_mass] = np.log((w[0] + m - s0) / (m + w[1]))[point_mass]
        todo = np.flatnonzero((s0 <= m) & ~point_mass)
    else:
        todo = np.flatnonzero((s0 > 0) & (s0 <= m) & ~point_mass)
    if todo.size:
        extra = [v[todo] for v in w]
        if weighted and np.isnan(extra[2]).any():
            extra[2] = extra[3] = None
        rows = _Rows(m[todo], a[todo], b[todo], s0[todo], *extra)
        out[todo], err[todo] = rows.solve()
    return out.reshape(shape), err.reshape(shape)


class _Rows:
    """Tail sums of a batch of rows, windows grown until the remainder is negligible.

    Unweighted rows starting below the mean are one minus the lower tail; weighted rows
    starting below the mean use ``total`` (the closed-form E[w(S)] over all S, when the
    caller has one) minus the weighted lower tail. Either complement is used only when it
    keeps the relative accuracy; otherwise the tail is summed directly through the mode.
    Every window is processed in column chunks, so memory stays bounded whatever m is.
    """

    def __init__(self, m, a, b, s0, offset=None, shift=None, total=None, total_err=None):
        self.m, self.a, self.b, self.s0 = m, a, b, s0
        self.offset, self.shift = offset, shift
        self.total, self.total_err = total, total_err
        self.weighted = offset is not None
        self.out = np.full(m.size, np.nan)
        self.err = np.zeros(m.size)
        self.mean, var = _moments(m, a, b)
        self.sd = np.sqrt(var)
        self.concave = (a >= 1.0) & (b >= 1.0)
        can_complement = (not self.weighted) or total is not None
        self.complement = self.concave & (s0 <= self.mean) & can_complement
        # First window: about where the terms have fallen by 2^-45 — Gaussian decay over
        # ~8 sd, or sooner (~32 sd²/gap steps) far out in a tail. Only a first guess:
        # the remainder check widens any window that is too short.
        gap = np.abs(s0 - self.mean)
        reach = np.minimum(8.0 * self.sd, 32.0 * self.sd ** 2 / np.maximum(gap, 1.0)) + 64.0
        self.width = np.where(self.complement | (s0 > self.mean), reach, (self.mean - s0) + reach)
        self.width = np.where(self.concave, self.width, m - s0 + 1.0)
        self._clip_width(np.arange(m.size))

    def _clip_width(self, idx):
        # never wider than the range a window can cover: [0, s0 − 1] or [s0, m]
        cover = np.where(self.complement[idx], self.s0[idx], self.m[idx] - self.s0[idx] + 1.0)
        self.width[idx] = np.maximum(np.minimum(self.width[idx], cover), 1.0)

    def solve(self):
        pending = np.arange(self.m.size)
        while pending.size:
            self.retry = []
            _grouped(pending, self.width[pending], self._run)
            pending = np.unique(np.array(self.retry, dtype=np.int64))
            self.width[pending] *= 2.0
            self._clip_width(pending)
        return self.out, self.err

    def _run(self, idx, w):
        comp = self.complement[idx]
        if (~comp).any():
            self._direct(idx[~comp], w)
        if comp.any():
            self._lower(idx[comp], w)

    def _sum(self, idx, lo, w, upto=None):
        """log Σ p(s)·|weight(s)| over s = lo .. lo + w − 1 (and ≤ upto), in column chunks.

        Returns (log_total, log_first_term, log_last_term, error bound of the logs)."""
        m, a, b = self.m[idx], self.a[idx], self.b[idx]
        R = idx.size
        total = np.full(R, -np.inf)
        first = last = None
        err = np.zeros(R)
        step = max(_BLOCK, (_CHUNK_TERMS // max(R, 1)) // _BLOCK * _BLOCK)
        for off in range(0, w, step):
            cw = min(step, w - off)
            start = lo + off
            lp, e = _window(m, a, b, start, cw)
            cols = start[:, None] + np.arange(cw)[None, :]
            if upto is not None:
                lp = np.where(cols <= upto[:, None], lp, -np.inf)
            if first is None:
                first = lp[:, 0].copy()
            last = lp[:, -1].copy()
            if self.weighted:
                with np.errstate(divide="ignore", invalid="ignore"):
                    weight = np.abs(self.offset[idx][:, None] + cols - self.s0[idx][:, None]) / (
                        cols + self.shift[idx][:, None])
                    lp = lp + np.log(weight)
            total = np.logaddexp(total, _sum_exp(lp))
            err = np.maximum(err, e)
        return total, first, last, err

    def _direct(self, idx, w):
        m, a, b, s0 = self.m[idx], self.a[idx], self.b[idx], self.s0[idx]
        total, _, log_last, e = self._sum(idx, s0, w)
        last = s0 + w - 1
        ok = last >= m
        if (~ok).any():
            rho = np.exp(_log_ratio(m, a, b, last))
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                rem = np.where(self.concave[idx] & (rho < 1), np.exp(log_last - total) * rho / (1.0 - rho), np.inf)
            ok |= rem <= _TRUNCATION
        self.out[idx[ok]] = total[ok]
        self.err[idx[ok]] = np.expm1(e[ok]) + w * UNIT_ROUNDOFF + 2 * _TRUNCATION
        self.retry.extend(idx[~ok].tolist())

    def _lower(self, idx, w):
        m, a, b, s0 = self.m[idx], self.a[idx], self.b[idx], self.s0[idx]
        lo = np.maximum(s0 - w, 0.0)
        log_lower, log_first, _, e = self._sum(idx, lo, w, upto=s0 - 1)
        ok = lo <= 0
        if (~ok).any():
            # Going down from lo the terms shrink at least by the ratio at lo − 1 (log-concave);
            # weights are at most 1 in size, so the same bound holds for the weighted sum.
            rho = np.exp(_log_ratio(m, a, b, lo - 1))
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                rem = np.where(rho > 1, np.exp(log_first - log_lower) / (rho - 1.0), np.inf)
            ok |= rem <= _TRUNCATION
        lower = np.exp(log_lower)
        rel_lower = np.expm1(e) + w * UNIT_ROUNDOFF + 2 * _TRUNCATION
        if self.weighted:
            # E[w; S ≥ s0] = E[w] − E[w; S < s0], and the weights are ≤ 0 below s0
            full, full_err = self.total[idx], self.total_err[idx]
            tail = full + lower
            abs_err = full_err + rel_lower * lower + 4 * UNIT_ROUNDOFF * (abs(full) + lower)
            good = ok & (tail > 0) & (np.abs(full) + lower <= 4.0 * tail)
        else:
            tail = 1.0 - lower
            abs_err = rel_lower * lower + 2 * UNIT_ROUNDOFF
            good = ok & (tail >= 0.25)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.out[idx[good]] = np.log(tail[good])
            self.err[idx[good]] = abs_err[good] / tail[good]
        # A complement that would lose digits: sum the tail directly (through the mode).
        switch = idx[ok & ~good]
        self.complement[switch] = False
        self.width[switch] = (np.maximum(self.mean[switch] - self.s0[switch], 0.0) + 8.0 * self.sd[switch] + 64.0) / 2
        self.retry.extend(idx[~good].tolist())


def _grouped(rows, widths, fn):
    """Call ``fn(idx, width)`` on groups of rows of similar window width (same power of
    two), each group with its largest width rounded up to a multiple of 64."""
    widths = np.maximum(np.ceil(widths), 2.0)
    bucket = np.ceil(np.log2(widths)).astype(np.int64)
    for k in np.unique(bucket):
        sel = bucket == k
        idx = rows[sel]
        w = int(-(-widths[sel].max() // _BLOCK) * _BLOCK)
        per = max(1, _CHUNK_TERMS // min(w, 1 << 16))
        for i in range(0, idx.size, per):
            fn(idx[i:i + per], w)


def tail_at_most(m, a, b, s0, target: float) -> np.ndarray:
    """Exact verdicts :math:`P(S \\ge s_0) \\le` ``target``, row by row (rows broadcast).

    The floating-point tail decides each row unless ``target`` lies within its error
    band; such rows are settled by :func:`log_tail_mp` at high precision.

    Returns
    -------
    ndarray of bool
    """
    log_t, rel = log_tail(m, a, b, s0)
    return verdicts_at_most(log_t, rel, target, m, a, b, s0)


def verdicts_at_most(log_t, rel, target: float, m, a, b, s0) -> np.ndarray:
    """``T ≤ target`` for tails already computed by :func:`log_tail` (exact; see :func:`tail_at_most`)."""
    log_t = np.asarray(log_t, dtype=float)
    rel = np.asarray(rel, dtype=float)
    log_target = math.log(target)
    with np.errstate(invalid="ignore"):
        margin = np.log1p(rel) + 4 * UNIT_ROUNDOFF * (np.abs(log_t) + 1.0)
        yes = (log_t == -np.inf) | (log_t + margin <= log_target)
        no = ~yes & (log_t - margin > log_target)
    out = yes.ravel().copy()
    unsure = np.flatnonzero(~yes.ravel() & ~no.ravel())
    if unsure.size:
        import mpmath

        m_, a_, b_, s_ = (np.broadcast_to(np.asarray(v, dtype=float), log_t.shape).ravel() for v in (m, a, b, s0))
        with mpmath.workdps(40):
            log_target_mp = mpmath.log(mpmath.mpf(target))
            for i in unsure:
                out[i] = bool(log_tail_mp(m_[i], a_[i], b_[i], s_[i]) <= log_target_mp)
    return out.reshape(log_t.shape)


def log_tail_mp(m, a, b, s0, *, dps: int = 40):
    """High-precision reference :math:`\\log P(S\\ge s_0)` with mpmath (for rechecks and tests).

    Sums the terms from an exact log-gamma anchor by the one-step ratio at ``dps``
    digits, stopping when a geometric bound on the remainder is below ``10^{-dps+5}``
    of the sum (the terms are log-concave for ``a, b ≥ 1``; other rows are summed in
    full). A tail starting below the mean is one minus the lower tail.
    """
    import mpmath

    m, s0 = int(m), int(s0)
    if s0 <= 0:
        return mpmath.mpf(0)
    if s0 > m:
        return mpmath.mpf("-inf")
    with mpmath.workdps(dps):
        a, b = mpmath.mpf(float(a)), mpmath.mpf(float(b))
        if b == 0:
            return mpmath.mpf(0)
        tol = mpmath.mpf(10) ** (-dps + 5)

        def logp(s):
            return (mpmath.loggamma(m + 1) - mpmath.loggamma(s + 1) - mpmath.loggamma(m - s + 1)
                    + mpmath.loggamma(s + a) + mpmath.loggamma(m - s + b)
                    - mpmath.loggamma(m + a + b) - mpmath.loggamma(a) - mpmath.loggamma(b)
                    + mpmath.loggamma(a + b))

        def ratio(s):  # p(s+1)/p(s)
            return (m - s) * (s + a) / ((s + 1) * (m - s - 1 + b))

        concave = a >= 1 and b >= 1
        mean = m * a / (a + b)
        if concave and s0 <= mean:
            # lower tail, from s0 − 1 down
            s = s0 - 1
            term = mpmath.exp(logp(s))
            total = term
            while s > 0:
                term = term / ratio(s - 1)
                s -= 1
                total += term
                r_down = 1 / ratio(s - 1) if s > 0 else 0
                if s > 0 and r_down < 1 and term * r_down / (1 - r_down) < tol * total:
                    break
            return mpmath.log(1 - total)
        s = s0
        term = mpmath.exp(logp(s))
        total = term
        while s < m:
            term = term * ratio(s)
            s += 1
            total += term
            if concave and s < m:
                r_up = ratio(s)
                if r_up < 1 and term * r_up / (1 - r_up) < tol * total:
                    break
        return mpmath.log(total)
