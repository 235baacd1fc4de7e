"""Exact sampling from a Dirichlet law truncated to p ≥ p_min (docs/bayesian_family.md).
"""
from __future__ import annotations

import math

import numpy as np
from scipy import special

from ..validation import (
    check_integer,
    check_rng,
)
from ..privacy import MAX_CELLS


def _inverse_digamma(y: float) -> float:
    """x > 0 with ψ(x) = y (Newton from Minka's starting point; 12 steps reach full precision)."""
    x = math.exp(y) + 0.5 if y >= -2.22 else -1.0 / (y + 0.5772156649015329)
    for _ in range(12):
        x -= (float(special.digamma(x)) - y) / float(special.polygamma(1, x))
        x = max(x, 1e-300)
    return x


#: Reach of the proposal tables, in standard deviations: the omitted terms weigh less than
#: e^{-800} of their cell's table, far below what a double-precision uniform can select.
_TABLE_REACH = 40.0


class TruncatedDirichlet:
    """Exact sampler of :math:`\\mathrm{Dir}(a)` restricted to :math:`\\{p : p_j \\ge q_j\\ \\forall j\\}`.

    docs/bayesian_family.md §1.3. Write :math:`p = q + s\\,u` with :math:`s = 1-\\sum_j q_j`
    and :math:`u` on the simplex; the target is :math:`\\pi(u)\\propto\\prod_j(c_j+u_j)^{M_j}`
    with :math:`c_j = q_j/s`, :math:`M_j = a_j - 1 \\ge 0`. Split :math:`M_j = N_j+\\varphi_j`
    (integer and fractional parts) and bound the concave :math:`(c+u)^{\\varphi}` by its
    tangent :math:`A_j + B_j u` at a typical point. The envelope
    :math:`\\prod_j (c_j+u_j)^{N_j}(A_j+B_ju_j)` expands (binomial theorem) into a finite
    mixture of Dirichlet kernels :math:`\\prod_j u_j^{g_j}`, :math:`g_j = N_j - f_j + e_j`,
    with weights :math:`\\prod_j w_j(f_j,e_j)/\\Gamma(G+K)`, :math:`G=\\sum_j g_j`. A draw:

    1. the mixture index, by rejection: independent proposals
       :math:`\\propto w_j(f_j,e_j)\\,r^{g_j}` per cell (inverse-CDF tables), accepted with
       probability :math:`h(G)/\\max h`, :math:`h(G) = r^{-G}/\\Gamma(G+K)` (log-concave);
    2. :math:`u\\sim\\mathrm{Dir}(g+1)` (normalised Gammas);
    3. accepted with probability :math:`\\prod_j (c_j+u_j)^{\\varphi_j}/(A_j+B_ju_j) \\le 1`.

    Each step is an exact rejection or an exact draw, so the accepted ``p`` follows the
    truncated Dirichlet exactly — no Markov chain, no burn-in. ``r`` (tuned so that the
    proposal's mean G sits at the maximiser of h) and the tangent points affect only the
    speed. The tests compare it with plain rejection from the untruncated Dirichlet.

    Parameters
    ----------
    alpha : array_like of float in [1, 1e12], shape (K,)
        Dirichlet parameters (posterior counts plus prior); ≥ 1 so that every factor
        :math:`p_j^{a_j-1}` is bounded on the simplex.
    lower : array_like of float ≥ 0, shape (K,)
        Truncation :math:`q_j`; :math:`\\sum_j q_j < 1`.
    """

    def __init__(self, alpha, lower):
        a = np.asarray(alpha, dtype=float)
        q = np.asarray(lower, dtype=float)
        if a.ndim != 1 or a.size == 0 or a.size > MAX_CELLS:
            raise ValueError(f"alpha must be a 1-D array of 1 to {MAX_CELLS} Dirichlet parameters, got shape {a.shape}")
        if not np.all(np.isfinite(a)) or a.min() < 1.0 or a.max() > 1e12:
            raise ValueError(f"alpha must lie in [1, 1e12], got values in [{a.min()!r}, {a.max()!r}]")
        if q.shape != a.shape or not np.all(np.isfinite(q)) or q.min() < 0.0:
            raise ValueError(f"lower must be finite and >= 0 with the shape of alpha {a.shape}, got {q.shape}")
        s = 1.0 - math.fsum(q.tolist())
        if not s > 1e-12:
            raise ValueError(f"lower must sum to less than 1 (leave room for the simplex), got sum {1.0 - s!r}")
        self.alpha, self.lower, self.scale, self.cells = a, q, s, a.size
        M = a - 1.0
        # Cells whose factor (c + u)^M is not constant: a truncation and M > 0. The others are
        # plain Dirichlet factors u^M (a cell with M = 0 contributes 1 whatever its truncation,
        # which the affine map already enforces).
        self.floor = np.flatnonzero((q > 0) & (M > 0))
        self.free = np.flatnonzero((q <= 0) | (M <= 0))
        self.g_free = M[self.free]
        Mf = M[self.floor]
        self.N = np.floor(Mf)
        self.phi = Mf - self.N
        self.logc = np.log(q[self.floor]) - math.log(s)
        c = np.exp(self.logc)
        # tangent point: the untruncated posterior mean, mapped into u (only speed depends on it)
        total = max(float(M.sum()), 1.0)
        t = np.maximum(Mf / total - q[self.floor], 0.0) / s
        with np.errstate(divide="ignore"):
            self.log_a = np.where(self.phi > 0, (self.phi - 1.0) * np.log(c + t) + np.log(c + (1.0 - self.phi) * t), 0.0)
            self.log_b = np.where(self.phi > 0, np.log(self.phi) + (self.phi - 1.0) * np.log(c + t), -np.inf)
        self._tune()

    # ---------------------------------------------------------------- proposal tables
    def _tables(self, log_r: float, reach: float):
        """Per floor cell, the support (f, e) of the proposal ∝ w(f, e) r^g, concatenated.

        Returns (start (F,), size (F,), g (T,), cdf (T,)) with the within-cell CDFs."""
        N, logc = self.N, self.logc
        with np.errstate(over="ignore"):
            lam = np.exp(np.minimum(logc - log_r, 700.0))
        mode = np.minimum(N, np.floor(lam))
        width = np.ceil(reach * np.sqrt(np.maximum(np.minimum(lam, N), 1.0)) + 5.0 * reach)
        lo = np.maximum(0.0, mode - width)
        hi = np.minimum(N, mode + width)
        two = (self.phi > 0).astype(np.int64)
        size = ((hi - lo + 1.0).astype(np.int64)) * (1 + two)
        start = np.concatenate([[0], np.cumsum(size)[:-1]])
        cell = np.repeat(np.arange(N.size), size)
        pos = np.arange(int(size.sum())) - start[cell]
        span = (hi - lo + 1.0).astype(np.int64)[cell]
        e = (pos >= span).astype(float)
        f = lo[cell] + (pos - span * e.astype(np.int64))
        Nc = N[cell]
        g = Nc - f + e
        logw = (-special.gammaln(f + 1.0) + f * logc[cell] + g * log_r
                + np.where(e > 0, np.log(Nc - f + 1.0) + self.log_b[cell], self.log_a[cell]))
        top = np.full(N.size, -np.inf)
        np.maximum.at(top, cell, logw)
        w = np.exp(logw - top[cell])
        cum = np.cumsum(w)
        base = np.concatenate([[0.0], cum])[start]
        cell_total = np.add.reduceat(w, start) if w.size else w
        cdf = (cum - base[cell]) / cell_total[cell]
        return start, size, g, cdf, w / cell_total[cell]

    def _log_h(self, G, log_r):
        return -G * log_r - special.gammaln(G + self.cells)

    def _g_star(self, log_r):
        return max(_inverse_digamma(-log_r) - self.cells, 0.0)

    def _tune(self):
        g_fixed = float(self.g_free.sum())
        self.g_fixed = g_fixed
        if self.floor.size == 0:
            self.log_r, self.log_h_max = 0.0, 0.0
            self.tables = None
            return

        def excess(log_r):
            start, size, g, _, p = self._tables(log_r, 8.0)
            return float((p * g).sum()) + g_fixed - self._g_star(log_r)   # no BLAS call: cheaper here

        lo, hi = -1.0, 1.0
        while excess(lo) > 0.0 and lo > -700.0:
            lo -= 8.0
        while excess(hi) < 0.0 and hi < 700.0:
            hi += 8.0
        for _ in range(30):
            mid = 0.5 * (lo + hi)
            if excess(mid) > 0.0:
                hi = mid
            else:
                lo = mid
        self.log_r = 0.5 * (lo + hi)
        self.tables = self._tables(self.log_r, _TABLE_REACH)
        g_star = self._g_star(self.log_r)
        # h is log-concave in G, maximal at G*; a 1e-9 margin keeps the acceptance ≤ 1
        self.log_h_max = float(self._log_h(g_star, self.log_r)) + 1e-9
        self.g_fixed = g_fixed

    def _pick(self, u):
        """Inverse-CDF lookup in every floor cell's table: u shape (b, F) → g shape (b, F)."""
        start, size, g, cdf, _ = self.tables
        lo = np.broadcast_to(start, u.shape).copy()
        hi = lo + size - 1
        while True:  # vectorised binary search for the first cdf entry ≥ u
            active = lo < hi
            if not active.any():
                break
            mid = (lo + hi) // 2
            go_right = cdf[mid] < u
            lo = np.where(active & go_right, mid + 1, lo)
            hi = np.where(active & ~go_right, mid, hi)
        return g[lo]

    def sample(self, size, rng: np.random.Generator, *, max_proposals: int = 10**7) -> np.ndarray:
        """``size`` independent exact draws, shape (size, K).

        Raises ``RuntimeError`` if more than ``max_proposals`` proposals are needed (the
        acceptance rate would make the call hang), rather than returning anything inexact.
        """
        size = check_integer("size", size, minimum=1, maximum=10**7)
        rng = check_rng(rng)
        K = self.cells
        out = np.empty((size, K))
        done = proposals = 0
        rate = 0.5
        while done < size:
            need = size - done
            # proposals per pass: enough for the remaining draws, at most ~4M cells × rows at once
            b = int(min(max(16, 2 * need / max(rate, 1e-3)), max(1, (1 << 22) // K)))
            proposals += b
            if proposals > max_proposals:
                raise RuntimeError(f"truncated Dirichlet: more than {max_proposals} proposals for {size} draws "
                                   f"(acceptance {rate:.2g}); this truncation is too extreme for the exact sampler")
            gam_shape = np.empty((b, K))
            gam_shape[:, self.free] = self.g_free + 1.0
            if self.floor.size:
                g_floor = self._pick(rng.random((b, self.floor.size)))
                G = g_floor.sum(axis=1) + self.g_fixed
                keep = np.log(rng.random(b)) < self._log_h(G, self.log_r) - self.log_h_max
                gam_shape[:, self.floor] = g_floor + 1.0
                gam_shape = gam_shape[keep]
            u = rng.standard_gamma(gam_shape)
            u /= u.sum(axis=1, keepdims=True)
            frac = np.flatnonzero(self.phi > 0)
            if frac.size and u.shape[0]:
                uf = u[:, self.floor[frac]]
                c = np.exp(self.logc[frac])
                log_ratio = (self.phi[frac] * np.log(c + uf)
                             - np.logaddexp(self.log_a[frac], self.log_b[frac] + np.log(np.maximum(uf, 1e-300))))
                u = u[np.log(rng.random(u.shape[0])) < np.minimum(log_ratio, 0.0).sum(axis=1)]
            take = min(u.shape[0], need)
            out[done:done + take] = self.lower + self.scale * u[:take]
            done += take
            rate = 0.8 * rate + 0.2 * (u.shape[0] / b)
        return out


def truncated_dirichlet(alpha, lower, size, rng: np.random.Generator) -> np.ndarray:
    """``size`` exact draws of Dir(alpha) restricted to {p_j ≥ lower_j} (see :class:`TruncatedDirichlet`)."""
    return TruncatedDirichlet(alpha, lower).sample(size, rng)
