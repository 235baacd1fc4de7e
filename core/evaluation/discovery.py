"""The probability that a release shows a value the data do not have (discovery), exact to
~1e-12 by the K_n chain (docs/mathematics.md §6).
"""
from __future__ import annotations

import math

import numpy as np

from ..validation import (
    check_integer,
    check_py_parameters,
    check_release_size,
)
from ..privacy.betabinom import log_gamma_ratio, log_pmf



# ================================================ discovery probability (thesis §6.3)
#: Largest n of :func:`discovery_probability` (the law of K_n costs O(n × width of its window)).
MAX_DISCOVERY_N = 10**6


#: Largest generalized factorial table, (largest l + 1) × new values, and largest number of
#: likelihood terms, Σ over values of K_n of their l-ranges, of :func:`discovery_probability`.
_MAX_GFC_ENTRIES = 10**8


#: Certified bound on the truncation error of the discovery probability, relative to its
#: value (docs/bayesian_family.md §4): every term the computation leaves out is bounded, and
#: the bounds add up to less than this.
_DISCOVERY_TOLERANCE = 1e-14


#: Steps of the K_n chain between two trims of its window.
_TRIM_EVERY = 64


#: Points at which the likelihood is computed exactly to build its envelope.
_ENVELOPE_POINTS = 256


#: Climb bound (:func:`_log_climb_bound`): tried every this many trims (up to 16 times fewer
#: while it drops nothing), at this many cuts, with this many levels and orders r.
_CLIMB_EVERY, _CLIMB_CUTS, _CLIMB_LEVELS, _CLIMB_ORDERS = 4, 12, 24, 24


#: Standard deviations of BB(m, θ + jσ, n − jσ) covered by the first l-range of the likelihood.
_L_RANGE_SD = 12.0


#: Likelihood terms of one evaluation below which every l-range starts at k.
_FULL_RANGE_TERMS = 1 << 25


def confidential_discovery_probability(n, k, sigma, theta) -> float:
    """:math:`(\\theta + k\\sigma)/(\\theta + n)`: the new-value probability given the confidential data.

    The (n+1)-th predictive probability of a new value given n records with k distinct
    values (docs/mathematics.md §2). It uses k, a statistic of the confidential data: **curator only**.
    """
    n = check_integer("n", n, minimum=1, maximum=MAX_DISCOVERY_N)
    k = check_integer("k", k, minimum=1, maximum=n)
    sigma, theta, _ = check_py_parameters(sigma, theta)
    if sigma < 0:
        raise ValueError(f"sigma must be in [0, 1) (new values exist only for sigma >= 0), got {sigma!r}")
    return (theta + k * sigma) / (theta + n)


def _log_generalized_factorial(length: int, k: int, sigma: float) -> np.ndarray:
    """:math:`\\log\\mathcal C(l, k; \\sigma)` for l = 0..length (−inf for l < k), σ ∈ (0, 1).

    From the recursion :math:`\\mathcal C(l+1,k) = \\sigma\\mathcal C(l,k-1) + (l-k\\sigma)\\mathcal C(l,k)`
    (all terms ≥ 0 for σ ∈ (0, 1)): dividing by :math:`\\Gamma(l+1-k\\sigma)` turns it into a
    cumulative sum, :math:`\\mathcal C(l,k) = \\Gamma(l-k\\sigma)\\sum_{l'<l}\\sigma\\,\\mathcal C(l',k-1)/\\Gamma(l'+1-k\\sigma)`,
    evaluated in log space (``logaddexp.accumulate``): no cancellation and no overflow. The
    absolute error of each log is a few units in the last place of
    :math:`\\log\\Gamma(l)` (it enters through ``gammaln``): about 1e-12 at l ≈ 300 and
    4e-12 at l ≈ 1500 against mpmath, growing like :math:`l\\log l\\cdot 10^{-16}`.
    O(k × length).
    """
    from scipy import special

    ell = np.arange(length + 1, dtype=float)
    log_c = np.full(length + 1, -np.inf)
    log_c[0] = 0.0                                           # C(0, 0) = 1, C(l, 0) = 0 for l ≥ 1
    log_sigma = math.log(sigma)
    for j in range(1, min(k, length) + 1):
        # C(l, j) = 0 for l < j: only l' ≥ j − 1 of the previous row can contribute
        src = ell[j - 1:-1]
        terms = log_sigma + log_c[j - 1:-1] - special.gammaln(src + 1.0 - j * sigma)
        acc = np.logaddexp.accumulate(terms)                 # Σ over j − 1 ≤ l' ≤ l − 1, for l = j..length
        new = np.full(length + 1, -np.inf)
        new[j:] = special.gammaln(ell[j:] - j * sigma) + acc
        log_c = new
    if k > length:
        log_c[:] = -np.inf
    return log_c


def _log_bb_tail_bound(m: int, a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """An upper bound on :math:`\\log P(S \\ge x)`, :math:`S \\sim \\mathrm{BB}(m, a, b)`, x ≥ 1 (elementwise).

    Markov's inequality on the falling factorial moments
    :math:`E[S(S-1)\\cdots(S-r+1)] = m^{\\underline r}\\,(a)_r/(a+b)_r`:
    :math:`P(S \\ge x) \\le \\min_{1 \\le r \\le x} m^{\\underline r}(a)_r / ((a+b)_r\\,x^{\\underline r})`,
    over 32 orders r. Within a few nats of the exact tail in the tests of the l-ranges, at a
    cost that does not grow with m (unlike summing the tail). 0 for x > m is −inf.
    """

    x = np.asarray(x, dtype=float)
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    fraction = np.geomspace(1e-3, 1.0, 32)
    r = np.maximum(1.0, np.floor(x[..., None] * fraction))
    bound = (log_gamma_ratio(m - r + 1.0, r) + log_gamma_ratio(a[..., None], r)
             - log_gamma_ratio((a + b)[..., None], r) - log_gamma_ratio(x[..., None] - r + 1.0, r))
    out = np.minimum(0.0, bound.min(axis=-1))
    return np.where(x > m, -np.inf, out)


class _DiscoveryLikelihood:
    """:math:`L(j) = P(K^{(n)}_m = k \\mid K_n = j)` for j = 1..n: exact on request, bounded everywhere.

    Given :math:`K_n = j`, the release continues the distinct-value chain from j: draw t of
    the release is a new value w.p. :math:`(\\theta + D_t\\sigma)/(\\theta + n + t)`, D_t the
    number of distinct values so far, and k is the number of such births.

    * :meth:`exact` — :math:`L(j) = \\sum_l \\mathrm{BB}(l; m, \\theta+j\\sigma, n-j\\sigma)
      \\,P_{\\theta+j\\sigma}(K_l=k)` over an l-range, with a bound on the left-out terms (the
      beta-binomial tails outside the range, as :math:`P_{\\theta'}(K_l = k) \\le 1`);
    * ``log_upper`` — an upper envelope of :math:`\\log L` on all of 1..n: exact values plus
      tails at ``_ENVELOPE_POINTS`` points, and between them the per-path likelihood-ratio
      bounds :math:`\\rho_-(j) \\le L(j+1)/L(j) \\le \\rho_+(j)` of :meth:`_log_ratio_bounds`;
    * ``log_mid`` — a point estimate of :math:`\\log L` (the mean of the two envelopes),
      used only to size the trimming budget;
    * :meth:`reach_sup` — :math:`\\sup_{j' \\in [j, r]} L(j')` bounded through the unimodal
      hull of the envelope.

    For k = 0, :math:`L(j) = \\mathrm{BB}(0; m, \\theta+j\\sigma, n-j\\sigma)` exactly.
    """

    def __init__(self, n: int, m: int, k: int, sigma: float, theta: float):

        self.n, self.m, self.k, self.sigma, self.theta = n, m, k, sigma, theta
        j = np.arange(1, n + 1, dtype=float)
        if k == 0:
            value, err = log_pmf(m, theta + j * sigma, n - j * sigma, 0.0)
            self.log_upper = value + err
            self.log_mid = value
        else:
            if (k + 1) * k > _MAX_GFC_ENTRIES:
                raise ValueError(f"new_values = {k} needs a table of more than {_MAX_GFC_ENTRIES:.0e} generalized "
                                 "factorial coefficients; not computed")
            self.table = -1
            self._envelope(j)
        self.log_upper = np.maximum(self.log_upper, self.log_mid)
        # Unimodal hull: min(prefix max, suffix max) ≥ the envelope, nondecreasing up to its
        # argmax and nonincreasing after, so its sup over an interval is one lookup.
        self.hull = np.minimum(np.maximum.accumulate(self.log_upper),
                               np.maximum.accumulate(self.log_upper[::-1])[::-1])
        self.peak = int(np.argmax(self.hull)) + 1

    def _l_range(self, j, widen: int, max_width: int | None = None):
        """l-range [lo, hi] per j: from k (or the lower tail) to past max(mean, k) of BB(m, θ + jσ, n − jσ).

        The terms :math:`\\mathrm{BB}(l)\\,P(K_l = k)` are 0 below k and at most the
        beta-binomial pmf, which puts all but a tail beyond ``_L_RANGE_SD`` standard deviations
        of its mass below the top of the range; each ``widen`` step quadruples that reach.
        The range starts at k — the terms can peak far below the mean when k is small
        (:math:`P(K_l = k)` falls with l) — unless rows × columns would exceed
        ``_FULL_RANGE_TERMS``; then it too stops at the same distance below the centre.
        ``max_width`` caps the range (an envelope only needs a valid bound).
        """
        a, b = self.theta + j * self.sigma, self.n - j * self.sigma
        mean = self.m * a / (a + b)
        sd = np.sqrt(mean * (b / (a + b)) * ((a + b + self.m) / (a + b + 1.0)))
        centre = np.maximum(mean, self.k)
        half = (_L_RANGE_SD * sd + 32.0) * 4.0 ** widen
        hi = np.minimum(self.m, np.ceil(centre + half))
        lo = np.full(hi.shape, float(self.k))
        if float(np.sum(hi - lo + 1.0)) > _FULL_RANGE_TERMS:
            lo = np.maximum(self.k, np.floor(centre - half))
        if max_width is not None:
            lo = np.maximum(lo, hi - max_width)
        return lo.astype(np.int64), np.maximum(hi, lo).astype(np.int64)

    def exact(self, js, widen: int = 0, max_width: int | None = None):
        """log L(j) for sorted j from the terms of an l-range, and bounds on what that leaves out.

        Returns ``(value, tail, error)``: the log of the sum :math:`\\tilde L(j)` of the terms
        :math:`T_l = \\mathrm{BB}(l; m, a, b)\\,P_a(K_l = k)` (a = θ + jσ, b = n − jσ) over the
        l-range (:meth:`_l_range`), within ``error`` in log, and :math:`\\tilde L(j) \\le L(j) \\le
        \\tilde L(j) + e^{tail}`: τ = e^tail bounds the probability that BB(m, a, b) falls
        outside the l-range (the terms are at most that pmf; :func:`_log_bb_tail_bound`).

        In :math:`T_{l+1}/T_l = \\frac{(m-l)(a+l)}{(l+1)(b+m-l-1)}\\cdot
        \\frac{\\mathcal C(l+1,k)}{(a+l)\\,\\mathcal C(l,k)}` the factor a + l cancels, so
        :math:`\\log T_l` is a cumulative sum of one shared vector and one logarithm per term,
        re-anchored every 64 terms at its exact value (:func:`core.privacy.betabinom.log_pmf` and
        :func:`core.privacy.betabinom.log_gamma_ratio`) so that the rounding of the sum cannot build up.
        More than ``_MAX_GFC_ENTRIES`` terms in all raise ValueError.
        """

        js = np.asarray(js, dtype=float)
        n, m, k, sigma, theta = self.n, self.m, self.k, self.sigma, self.theta
        if k == 0:
            value, err = log_pmf(m, theta + js * sigma, n - js * sigma, 0.0)
            return value, np.full(js.size, -np.inf), err
        lo, hi = self._l_range(js, widen, max_width)
        if max_width is None:
            self._extend_table(int(hi.max()))
        else:                   # an envelope: the tails cover what a smaller table leaves out
            self._extend_table(min(int(hi.max()), max(self.table, 1 << 18)))
        hi = np.minimum(hi, self.table)
        lo = np.minimum(lo, hi)
        if float(np.sum(hi - lo + 1.0)) > _MAX_GFC_ENTRIES:
            raise ValueError(f"new_values = {k} with m = {m} and n = {n} needs more than {_MAX_GFC_ENTRIES:.0e} "
                             "likelihood terms; not computed")
        out, tail, error = np.empty(js.size), np.empty(js.size), np.empty(js.size)
        s = 0
        while s < js.size:
            # the largest block of rows whose common l-range keeps rows × columns within 2^22
            e, step = s + 1, 1
            while e < js.size:
                cand = min(js.size, e + step)
                if (cand - s) * (hi[s:cand].max() - lo[s:cand].min() + 1) <= (1 << 22):
                    e, step = cand, 2 * step
                elif step > 1:
                    step = 1
                else:
                    break
            l0, l1 = int(lo[s:e].min()), int(hi[s:e].max())
            width = l1 - l0 + 1
            aa = theta + js[s:e, None] * sigma
            bb = n - js[s:e, None] * sigma
            ell = np.arange(l0, l1 + 1, dtype=float)
            log_c = self.log_c[l0:l1 + 1]
            # one-step log-ratios log T_{l+1}/T_l for l = l0 .. l1 − 1
            shared = np.log(m - ell[:-1]) - np.log(ell[:-1] + 1.0) + (log_c[1:] - log_c[:-1])
            with np.errstate(divide="ignore"):
                steps = shared[None, :] - np.log(bb + (m - 1.0 - ell[:-1])[None, :])
            anchors = np.arange(0, width, 64)
            la = ell[anchors][None, :]
            anchor_value, anchor_err = log_pmf(m, aa, bb, la)
            anchor_value = anchor_value + (log_gamma_ratio(aa / sigma + 1.0, k - 1.0) - math.log(sigma)
                                           - log_gamma_ratio(aa + 1.0, la - 1.0) + log_c[anchors][None, :])
            pad = (-width) % 64
            x = np.zeros((e - s, width + pad))
            x[:, 1:width] = steps
            x[:, anchors] = anchor_value
            log_t = np.cumsum(x.reshape(e - s, -1, 64), axis=2).reshape(e - s, -1)[:, :width]
            top = log_t.max(axis=1)
            out[s:e] = top + np.log(np.exp(log_t - top[:, None]).sum(axis=1))
            # error: the anchor's bound, 64 steps of a few round-offs each, and log C's rounding
            step_size = np.abs(steps).max(axis=1) if width > 1 else np.zeros(e - s)
            error[s:e] = anchor_err.max(axis=1) + 64 * 2.0**-52 * (8.0 + 64.0 * step_size) + 1e-12
            a1, b1 = aa[:, 0], bb[:, 0]
            up = _log_bb_tail_bound(m, a1, b1, np.full(e - s, l1 + 1.0))
            # below l = k the terms are 0 exactly (fewer than k draws cannot show k values);
            # L < l0 is m − L > m − l0, and m − L ~ BB(m, b, a)
            down = (_log_bb_tail_bound(m, b1, a1, np.full(e - s, m - l0 + 1.0)) if l0 > k
                    else np.full(e - s, -np.inf))
            tail[s:e] = np.logaddexp(up, down) + 1e-9
            s = e
        return out, tail, error

    def _extend_table(self, upto: int):
        """Make ``log_c`` hold :math:`\\log\\mathcal C(l, k)` for l ≤ ``upto`` (within ``_MAX_GFC_ENTRIES``)."""
        limit = min(self.m, _MAX_GFC_ENTRIES // self.k - 1)
        if min(upto, limit) > self.table:
            # at least double it: a table is rebuilt from l = 0
            self.table = max(self.k, min(limit, max(upto, 2 * self.table)))
            self.log_c = _log_generalized_factorial(self.table, self.k, self.sigma)

    def _log_ratio_bounds(self, j):
        """Bounds on :math:`\\log L(j+1) - \\log L(j)`, j = 1..n−1 (docs/bayesian_family.md §4).

        Along one birth/no-birth path of the release, the ratio of its probabilities from
        j + 1 and from j is :math:`\\frac{\\theta+(j+k)\\sigma}{\\theta+j\\sigma}` (the births
        telescope) times :math:`\\prod (1 - \\sigma/d_t)` over the m − k no-birth steps,
        :math:`d_t = n + t - (j + K_t)\\sigma` with :math:`0 \\le K_t \\le t`. Bounding each
        factor and putting the no-births at the last (first) m − k steps gives

        .. math:: \\log\\rho_+ = \\log\\tfrac{\\theta+(j+k)\\sigma}{\\theta+j\\sigma}
                  - \\sigma\\,[\\psi(n+m-j\\sigma) - \\psi(n+k-j\\sigma)],

        .. math:: \\log\\rho_- = \\log\\tfrac{\\theta+(j+k)\\sigma}{\\theta+j\\sigma}
                  - \\tfrac{\\sigma}{1-\\sigma}\\,[\\psi(c+m-k) - \\psi(c)],
                  \\quad c = \\tfrac{n-(j+1)\\sigma}{1-\\sigma},

        from :math:`\\log(1-x) \\le -x` and :math:`\\log(1-x) \\ge -x/(1-x)`. A ratio of sums of
        path probabilities lies between the smallest and largest path ratio.
        """
        from scipy import special

        n, m, k, sigma, theta = self.n, self.m, self.k, self.sigma, self.theta
        births = np.log1p(k * sigma / (theta + j * sigma))
        upper = births - sigma * (special.digamma(n + m - j * sigma) - special.digamma(n + k - j * sigma))
        c = (n - (j + 1.0) * sigma) / (1.0 - sigma)
        lower = births - sigma / (1.0 - sigma) * (special.digamma(c + (m - k)) - special.digamma(c))
        slack = 1e-9 * (1.0 + np.abs(births) + np.abs(upper - births) + np.abs(lower - births))
        return lower - slack, upper + slack

    def _envelope(self, j):
        n = self.n
        pts = np.concatenate([np.geomspace(1, n, _ENVELOPE_POINTS // 2),
                              n + 1 - np.geomspace(1, n, _ENVELOPE_POINTS // 4),
                              np.linspace(1, n, _ENVELOPE_POINTS // 4)])
        grid = np.unique(np.clip(np.rint(pts), 1, n).astype(np.int64))
        value, tail, error = self.exact(grid, max_width=1 << 14)
        for widen in (1, 2, 3):
            # where the left-out tail dominates, a wider range makes the bound tight
            loose = np.flatnonzero(tail > value - 8.0)
            if loose.size == 0:
                break
            value[loose], tail[loose], error[loose] = self.exact(grid[loose], widen, max_width=1 << 16)
        g_up = np.logaddexp(value + error, tail)
        if n == 1:
            self.log_upper, self.log_mid = g_up.copy(), value.copy()
            return
        low, up = self._log_ratio_bounds(j[:-1])
        cum_low = np.concatenate([[0.0], np.cumsum(low)])   # Σ_{i<j} log ρ−(i), at index j − 1
        cum_up = np.concatenate([[0.0], np.cumsum(up)])
        seg = np.clip(np.searchsorted(grid, j, side="right") - 1, 0, grid.size - 2)
        left, right = grid[seg], grid[seg + 1]
        idx = j.astype(np.int64) - 1
        # upper: forward from the left point with ρ+, backward from the right one with ρ−
        self.log_upper = np.minimum(g_up[seg] + cum_up[idx] - cum_up[left - 1],
                                    g_up[seg + 1] - (cum_low[right - 1] - cum_low[idx]))
        lower = np.maximum(value[seg] + cum_low[idx] - cum_low[left - 1],
                           value[seg + 1] - (cum_up[right - 1] - cum_up[idx]))
        self.log_mid = 0.5 * (self.log_upper + np.minimum(lower, self.log_upper))

    def reach_sup(self, lo, hi) -> np.ndarray:
        """An upper bound on :math:`\\log\\sup_{j \\in [lo, hi]} L(j)`, elementwise (1 ≤ lo ≤ hi ≤ n)."""
        return self.hull[np.clip(self.peak, lo, hi) - 1]


class _NeedsLogSpace(Exception):
    """The scaled chain cannot guarantee that no entry under- or overflows: use :class:`_LogChain`."""


class _ScaledChain:
    """The law of :math:`K_t` on a window of j, each entry scaled by its own power of e.

    :math:`P(K_t = j) = P_i\\,e^{r_i}` (i = j − j0). A step is five vector operations in
    probability space (positive terms only: relative error ~2^-52 per step); the references
    :math:`r_i` absorb the scale when an entry leaves [1e-100, 1e100], checked every R steps
    with R chosen so that no entry can leave the double range in between (each step
    multiplies an entry by at least the smallest stay or birth probability, and by at most
    the largest ratio of neighbouring references). Raises :class:`_NeedsLogSpace` when
    even R = 1 is not safe (extreme θ or σ).
    """

    def __init__(self, sigma: float, theta: float):
        self.sigma, self.theta = sigma, theta
        self.j0, self.size, self.cap = 1, 1, 256
        self.P = np.zeros(self.cap)
        self.P[0] = 1.0
        self.ref = np.zeros(self.cap)
        self.bx = np.zeros(self.cap)        # inflow factor into i from i − 1: (θ + σ(j−1)) e^{r_{i−1} − r_i}
        self.tmp = np.empty(self.cap)
        self.tmp2 = np.empty(self.cap)
        self.sj = sigma * np.arange(1, self.cap + 1, dtype=float)
        self.next_check = 0
        self.xmax = 1.0

    def _grow(self):
        self.cap *= 2
        for name in ("P", "ref", "bx"):
            old = getattr(self, name)
            new = np.zeros(self.cap)
            new[:old.size] = old
            setattr(self, name, new)
        self.tmp = np.empty(self.cap)
        self.tmp2 = np.empty(self.cap)
        self.sj = self.sigma * np.arange(self.j0, self.j0 + self.cap, dtype=float)

    def step(self, t: int):
        """From t draws to t + 1."""
        s = self.size
        if s + 1 > self.cap:
            self._grow()
        P, tmp = self.P, self.tmp
        self.ref[s] = self.ref[s - 1]                       # a new top entry starts at its neighbour's scale
        self.bx[s] = self.theta + self.sigma * (self.j0 + s - 1)
        mv = np.multiply(P[:s], self.bx[1:s + 1], out=tmp[:s])
        P[:s] *= np.subtract(t, self.sj[:s], out=self.tmp2[:s])
        P[s] = 0.0
        P[1:s + 1] += mv
        P[:s + 1] *= 1.0 / (self.theta + t)
        self.size = s + 1
        if t + 1 >= self.next_check:
            self._check(t + 1)

    def _check(self, t: int):
        s = self.size
        seg = self.P[:s]
        low, high = float(seg.min()), float(seg.max())
        if not (low > 0.0 and high < math.inf):
            raise _NeedsLogSpace
        if low < 1e-100 or high > 1e100 or self.next_check == 0:
            self.ref[:s] += np.log(seg)
            seg[:] = 1.0
            low = high = 1.0
            if s > 1:
                gap = self.ref[:s - 1] - self.ref[1:s]
                if gap.max() > 600.0:
                    raise _NeedsLogSpace
                x = np.exp(gap)
                self.xmax = max(1.0, float(x.max()))
                self.bx[1:s] = (self.theta + self.sigma * np.arange(self.j0, self.j0 + s - 1)) * x
        # next check after R steps: an entry shrinks by at most mu and grows by at most xmax per step
        top = self.j0 + s - 1
        mu = min(t - self.sigma * top, self.theta + self.sigma * top) / (self.theta + t + 64.0)
        room_low = math.log(low) + 640.0
        room_high = 640.0 - math.log(high)
        r = 64.0
        if mu < 1.0:
            r = min(r, room_low / -math.log(mu))
        if self.xmax > 1.0:
            r = min(r, room_high / math.log(self.xmax))
        if r < 1.0:
            raise _NeedsLogSpace
        self.next_check = t + int(r)

    def log_p(self) -> np.ndarray:
        return self.ref[:self.size] + np.log(self.P[:self.size])

    def drop(self, low: int, high: int):
        """Remove ``low`` entries at the bottom of the window and ``high`` at the top."""
        s = self.size - low - high
        if low:
            for arr in (self.P, self.ref, self.bx):
                arr[:s] = arr[low:low + s].copy()
            self.j0 += low
            self.sj = self.sigma * np.arange(self.j0, self.j0 + self.cap, dtype=float)
        self.P[s:] = 0.0
        self.size = s


class _LogChain:
    """The same chain in log space (``logaddexp``): slower, used only when :class:`_ScaledChain` is not safe."""

    def __init__(self, sigma: float, theta: float):
        self.sigma, self.theta = sigma, theta
        self.j0 = 1
        self.lp = np.zeros(1)

    @property
    def size(self) -> int:
        return self.lp.size

    def step(self, t: int):
        j = self.j0 + np.arange(self.lp.size, dtype=float)
        stay = self.lp + np.log(t - self.sigma * j)
        move = self.lp + np.log(self.theta + self.sigma * j)
        new = np.empty(self.lp.size + 1)
        new[0] = stay[0]
        new[1:-1] = np.logaddexp(stay[1:], move[:-1])
        new[-1] = move[-1]
        self.lp = new - math.log(self.theta + t)

    def log_p(self) -> np.ndarray:
        return self.lp.copy()

    def drop(self, low: int, high: int):
        self.lp = self.lp[low:self.lp.size - high]
        self.j0 += low


def _trimmed_k_n_law(n: int, sigma: float, theta: float, lik: _DiscoveryLikelihood, log_budget,
                     log_target: float):
    """The law of :math:`K_n` where it matters for the posterior, and a bound on what was left out.

    The number of distinct values of t draws from PY(σ, θ) is a Markov chain: a new value
    w.p. :math:`(\\theta + j\\sigma)/(\\theta + t)` after t draws with j values. Every
    ``_TRIM_EVERY`` steps, entries at either end of the window are dropped while the sum of
    their *potentials* stays within the budget: an entry j with probability p at time t
    contributes :math:`p\\,E[L(K_n) \\mid K_t = j] \\le p \\sup_{j \\le j' \\le j + n - t} L(j')`
    to :math:`Z = \\sum_j P(K_n = j) L(j)` (its descendants stay in that range), so the
    dropped potentials bound the part of Z — and of :math:`\\sum_j j\\,P(K_n=j)L(j)`, up to a
    factor n — that the kept window misses. The kept entries are exact (the chain is linear
    with positive coefficients; dropping only removes mass).

    ``log_budget``: a float (the same absolute budget at every trim), or None to derive it
    at each trim — so that the dropped potentials move :math:`E[K_n \\mid K^{(n)}_m = k]` by
    at most :math:`e^{\\text{log\\_target}}` — from an estimate of Z:
    :math:`\\sum_j p_j \\hat L(E[K_n \\mid K_t = j])`,
    with :math:`E[\\theta/\\sigma + K_n \\mid K_t] = (\\theta/\\sigma + K_t)\\,
    \\frac{\\Gamma(\\theta+\\sigma+n)\\Gamma(\\theta+t)}{\\Gamma(\\theta+\\sigma+t)\\Gamma(\\theta+n)}` (a martingale).

    Returns
    -------
    j0 : int
    log_p : ndarray — log P(K_n = j) for j = j0, j0 + 1, … (exact where kept)
    log_dropped : float — log of the bound on the dropped potentials
    """
    try:
        return _run_chain(_ScaledChain(sigma, theta), n, sigma, theta, lik, log_budget, log_target)
    except _NeedsLogSpace:
        return _run_chain(_LogChain(sigma, theta), n, sigma, theta, lik, log_budget, log_target)


def _log_sum_exp(x: np.ndarray) -> float:
    """log Σ exp(x) of a 1-D array (−inf when empty or all −inf)."""
    if x.size == 0:
        return -math.inf
    top = float(x.max())
    if top == -math.inf:
        return top
    return top + math.log(float(np.exp(x - top).sum()))


def _log_climb_bound(n: int, sigma: float, theta: float, t: int, starts: np.ndarray,
                     log_rising_upper: np.ndarray) -> np.ndarray:
    """log of an upper bound on :math:`E[L(K_n) \\mid K_t = c]` for each c in ``starts``.

    With :math:`g \\ge L` nondecreasing (``log_rising_upper``, the running maximum of the
    envelope) and levels :math:`c = c_0 < c_1 < \\dots < c_I = n`,
    :math:`E[g(K_n)] \\le g(c_0) + \\sum_i g(c_{i+1})\\,P(K_n > c_i)`, and the tails come from
    the martingale :math:`(\\theta/\\sigma + K_t)_r\\,\\Gamma(\\theta+t)/\\Gamma(\\theta+t+r\\sigma)`
    (rising factorial, any real r ≥ 0: one step multiplies its mean by
    :math:`(\\theta+t+r\\sigma)/(\\theta+t)`) and Markov's inequality,

    .. math:: P(K_n \\ge x \\mid K_t = c) \\le \\min_r \\frac{(\\theta/\\sigma + c)_r}{(\\theta/\\sigma + x)_r}
              \\frac{\\Gamma(\\theta+n+r\\sigma)\\,\\Gamma(\\theta+t)}
              {\\Gamma(\\theta+t+r\\sigma)\\,\\Gamma(\\theta+n)}.

    A chain started lower stays lower (same uniforms: the birth probability grows with the
    state), so the bound at c also holds for every start below c.
    """

    c = np.asarray(starts, dtype=float)[:, None]
    steps = np.arange(_CLIMB_LEVELS + 1, dtype=float)[None, :] / _CLIMB_LEVELS
    levels = np.minimum(n, np.floor(c * (n / c) ** steps))            # (C, I + 1), c_0 = c, c_I = n
    g_next = log_rising_upper[levels[:, 1:].astype(np.int64) - 1]
    x = theta / sigma + levels[:, :-1] + 1.0                          # P(K_n ≥ c_i + 1)
    base = theta / sigma + c
    r = np.geomspace(0.25, 4.0 * (theta / sigma + n), _CLIMB_ORDERS)[None, None, :]
    log_b = (log_gamma_ratio(base[:, :, None], r) - log_gamma_ratio(x[:, :, None], r)
             + log_gamma_ratio(theta + n, sigma * r) - log_gamma_ratio(theta + t, sigma * r)).min(axis=2)
    terms = np.concatenate([log_rising_upper[c[:, 0].astype(np.int64) - 1][:, None],
                            g_next + np.minimum(0.0, log_b)], axis=1)
    top = terms.max(axis=1)
    return top + np.log(np.exp(terms - top[:, None]).sum(axis=1))


def _drop_share(n: int, log_target: float) -> float:
    """log of the potential one trim may drop: all trims together move E[K_n | k] by at most
    (n − 1) × (dropped potential)/Z ≤ e^log_target / 4, with a factor 4 to spare (two ends, rounding)."""
    trims = (n - 1) // _TRIM_EVERY + 2
    return log_target - math.log(n) - math.log(trims) - math.log(4.0)


def _run_chain(chain, n, sigma, theta, lik, log_budget, log_target):
    log_share = _drop_share(n, log_target)
    log_dropped = -math.inf
    rising = np.maximum.accumulate(lik.log_upper)
    climb_every, next_climb = _CLIMB_EVERY, _CLIMB_EVERY * _TRIM_EVERY
    for t in range(1, n + 1):
        if t > 1:
            chain.step(t - 1)
        if t % _TRIM_EVERY and t != n:
            continue
        lp = chain.log_p()
        j = chain.j0 + np.arange(lp.size)
        if t == n:
            pot = lp + lik.log_upper[j - 1]
        else:
            pot = lp + lik.reach_sup(j, np.minimum(n, j + (n - t)))
        if log_budget is None:
            # E[θ/σ + K_n | K_t] = (θ/σ + K_t)·Γ(θ+σ+n)Γ(θ+t)/(Γ(θ+σ+t)Γ(θ+n))
            #                   ≈ (θ/σ + K_t)((θ+n)/(θ+t))^σ:
            # only a point estimate for the budget, so the simpler form will do.
            ratio = math.exp(sigma * math.log1p((n - t) / (theta + t)))
            ahead = np.rint((theta / sigma + j) * ratio - theta / sigma)
            ahead = np.clip(ahead, j, np.minimum(n, j + (n - t))).astype(np.int64)
            budget = _log_sum_exp(lp + lik.log_mid[ahead - 1]) + log_share
        else:
            budget = log_budget
        side = budget - math.log(2.0)
        best = int(np.argmax(pot))
        # Only entries below the budget can go, and only up to the first one above it.
        above = pot > side
        high = min(int(np.argmax(above[::-1])) if above.any() else pot.size, pot.size - 1 - best)
        if high:
            down = np.logaddexp.accumulate(pot[::-1][:high])
            high = int(np.searchsorted(down, side, side="right"))
            if high:
                log_dropped = float(np.logaddexp(log_dropped, down[high - 1]))
        low = min(int(np.argmax(above)) if above.any() else pot.size, best)
        if low:
            up = np.logaddexp.accumulate(pot[:low])
            low = int(np.searchsorted(up, side, side="right"))
            if low:
                log_dropped = float(np.logaddexp(log_dropped, up[low - 1]))
        room = lp.size - high - 1 - low            # entries the bottom could still lose
        if t < n and room > _TRIM_EVERY and t >= next_climb:
            # The reach bound keeps every entry that could still climb to where L is large;
            # the climb bound drops the ones too far below to get there in the steps left.
            mass = np.logaddexp.accumulate(lp[low:low + room])
            cuts = np.unique(np.rint(np.geomspace(1, room, _CLIMB_CUTS)).astype(np.int64)) - 1
            bound = mass[cuts] + _log_climb_bound(n, sigma, theta, t, j[low + cuts], rising)
            ok = np.flatnonzero(bound <= side)
            if ok.size:
                i = int(ok[-1])
                low += int(cuts[i]) + 1
                log_dropped = float(np.logaddexp(log_dropped, bound[i]))
            # try again soon after a success, ever more rarely after failures (it costs ~1 ms)
            climb_every = _CLIMB_EVERY if ok.size else min(16 * _CLIMB_EVERY, 2 * climb_every)
            next_climb = t + climb_every * _TRIM_EVERY
        if low or high:
            chain.drop(low, high)
    return chain.j0, chain.log_p(), log_dropped


def discovery_probability(n, m, new_values, sigma, theta) -> float:
    """Bayes estimate of the probability that the next draw is a new value, from the release alone.

    Thesis §6.3 (docs/bayesian_family.md §4). Given the confidential size ``n``, the release
    size ``m`` and the number k of distinct new values in the release — but not the number
    :math:`K_n` of distinct confidential values — the estimate under squared loss is

    .. math:: \\hat D = \\frac{\\theta + k\\sigma + \\sigma\\,E[K_n \\mid K^{(n)}_m = k]}{\\theta + n + m},
              \\qquad P(K_n = j \\mid K^{(n)}_m = k) \\propto P(K_n = j)\\,L(j),\\quad
              L(j) = P(K^{(n)}_m = k \\mid K_n = j),

    the thesis's :math:`P(Y=j)\\propto(\\theta/\\sigma+1)_{j+k-1}\\mathcal C(n,j;\\sigma)\\mathcal C(m,k;\\sigma,-n+j\\sigma)`
    computed as prior × likelihood without noncentral coefficients: the likelihood is
    :math:`\\sum_l \\mathrm{BB}(l; m, \\theta+j\\sigma, n-j\\sigma)\\,P_{\\theta+j\\sigma}(K_l = k)`
    (l draws go to new values, and they form a PY(σ, θ + jσ) partition), with
    :math:`P_{\\theta'}(K_l=k) = \\frac{(\\theta'/\\sigma+1)_{k-1}}{\\sigma\\,(\\theta'+1)_{l-1}}\\mathcal C(l,k;\\sigma)`
    and the generalized factorial coefficients in log space
    (:func:`_log_generalized_factorial`); the prior :math:`P(K_n = j)` is propagated by its
    Markov chain (:func:`_trimmed_k_n_law`). For σ = 0 the estimate is θ/(θ + n + m) exactly.

    **Accuracy.** Where k is unlikely a priori the posterior of :math:`K_n` sits far in a
    tail of its prior (at n = 500, m = k = 300, σ = 0.3, θ = 1 the posterior mode has prior
    mass e^-100 of the prior mode's, and all but 1e-16 of the posterior lies where that
    ratio is between e^-33 and e^-207), so no value of :math:`K_n` is dropped for being
    unlikely *a priori*. A value j —
    or a term l of the likelihood — is left out only under a proven bound on its
    contribution to the posterior (its prior mass times an upper bound on the likelihood
    it can still reach, :func:`_trimmed_k_n_law`), and the bounds of everything left out
    move :math:`\\hat D` by less than 1e-14 of its value (``_DISCOVERY_TOLERANCE``,
    checked after the fact; a second pass with the budget the first one proves sufficient
    runs when it is not met, and ValueError if even that fails). What remains is rounding:
    about :math:`n \\cdot 2^{-52}` relative in the prior, and a few units in the last place
    of :math:`\\log\\Gamma(l)` in the coefficients :math:`\\mathcal C(l, k; \\sigma)`;
    against the thesis's formula in 40-digit mpmath, the largest relative difference in the
    tests is 3e-14. Cost O(n × width of the window of :math:`K_n` that matters) for the
    prior and O(k × largest l) for the coefficients: 0.02 s at the point above, ~2 s at
    n = 10^5 with m = 500, ~6 s at n = 10^5, m = 10^4, k = 2500
    (``benchmarks/bench_inference.py``).

    Parameters
    ----------
    n : int in [1, 10^6]
        Size of the confidential data (public under replacement neighbours).
    m : int in [1, 10^7]
        Size of the release.
    new_values : int in [0, m]
        Number of distinct new values in the release.
    sigma : float in [0, 1)
    theta : float > −σ

    Returns
    -------
    float in [0, 1] (in (0, 1) before rounding)

    Raises
    ------
    ValueError
        For inadmissible arguments (the message names the parameter), and — "not
        computed" — when the likelihood would need more than ``_MAX_GFC_ENTRIES`` terms
        (``m`` in the millions with n in the thousands, or ``new_values`` above 10^4) or the
        truncation cannot be bounded within the tolerance.
    """
    from scipy import special

    n = check_integer("n", n, minimum=1, maximum=MAX_DISCOVERY_N)
    m = check_release_size(m)
    k = check_integer("new_values", new_values, minimum=0, maximum=m)
    sigma, theta, _ = check_py_parameters(sigma, theta)
    if sigma < 0:
        raise ValueError(f"sigma must be in [0, 1) (new values exist only for sigma >= 0), got {sigma!r}")
    if sigma == 0:
        return theta / (theta + n + m)
    lik = _DiscoveryLikelihood(n, m, k, sigma, theta)
    # D̂ is within the tolerance, relatively, if E[K_n | k] moves by at most
    # tolerance × (θ + kσ + σE)/σ, and E ≥ 1: aim for tolerance × (θ + kσ + σ)/σ.
    log_target = math.log(_DISCOVERY_TOLERANCE) + math.log(min(1.0, (theta + k * sigma + sigma) / sigma))
    log_budget, rerun = None, True
    while True:
        if rerun:
            j0, log_p, log_dropped = _trimmed_k_n_law(n, sigma, theta, lik, log_budget, log_target)
            j = j0 + np.arange(log_p.size, dtype=float)
            widen = np.zeros(j.size, dtype=np.int64)
            log_l, log_tail, _ = lik.exact(j)
            rerun = False
        log_w = log_p + log_l
        log_z = float(special.logsumexp(log_w))
        expected_k_n = float(np.exp(log_w - log_z) @ j)
        # What was left out is at most (dropped potentials + likelihood tails)/Z̃ of the
        # posterior mass, wherever in 1..n it lies: E[K_n | k] moves by at most that × (n − 1),
        # and D̂ by σ times that.
        log_tails = float(special.logsumexp(log_p + log_tail))
        left_out = float(np.logaddexp(log_dropped, log_tails))
        numerator = theta + k * sigma + sigma * expected_k_n
        if sigma * (n - 1) * math.exp(min(0.0, left_out - log_z)) <= _DISCOVERY_TOLERANCE * numerator:
            return numerator / (theta + n + m)
        share = log_z + log_target - math.log(4.0 * n * j.size)
        loose = np.flatnonzero((log_p + log_tail > share) & (widen < 12))
        if log_dropped >= log_tails and log_budget is None:
            # The first window missed part of the posterior (its budget came from an estimate
            # of Z): rerun with the budget that Z̃ ≤ Z proves sufficient.
            log_budget = log_z + _drop_share(n, log_target)
            rerun = True
        elif log_tails > log_dropped and loose.size:
            # the l-ranges of these values of K_n left out too much: widen them
            widen[loose] += 1
            for level in np.unique(widen[loose]):
                rows = loose[widen[loose] == level]
                log_l[rows], log_tail[rows], _ = lik.exact(j[rows], int(level))
        else:
            break
    raise ValueError(f"discovery_probability(n={n}, m={m}, new_values={k}, sigma={sigma!r}, theta={theta!r}): "
                     f"the truncation error could not be bounded below {_DISCOVERY_TOLERANCE:g}; not computed")
