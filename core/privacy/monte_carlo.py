"""σ ∈ (0, 1): the instance-level δ by Monte Carlo over neighbour types, with a
Clopper–Pearson upper confidence bound (docs/mathematics.md §3.2).

One set of replicates (:class:`MonteCarloReplicates`) serves every ε and both mechanisms
whose old counts have the same law — full PYPP and the old-values-only release
(:mod:`core.privacy.old_values`): the replicates are drawn once, and δ at a new ε reuses
the counts already made (common random numbers across ε). :func:`monte_carlo_replicates`
keeps the last few seeded replicate sets, so the Privacy page's curve, the statement at the
chosen ε and the curator record read one simulation.
"""
from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import stats

from .crp import crp_table_counts
from ..validation import (
    check_integer,
    check_py_parameters,
    check_rng,
)
from .common import _check_m_accounting, _eps_values, _multiplicity_profile, _round_up_mc

__all__ = ["MonteCarloDelta", "MonteCarloReplicates", "NewValueRows", "PYPP_ROWS", "monte_carlo_delta",
           "monte_carlo_replicates", "simulate_replicates"]

#: Replicate sets :func:`monte_carlo_replicates` keeps (the most recently used first), and
#: the bytes they may hold together: the replicates of 2·10^5 runs on ~120 representatives
#: take ~50 MB.
REPLICATES_KEPT = 4
REPLICATES_BYTES = 2**28
#: Elements of the integer work arrays of one evaluation step (memory bound, ~32 MB).
_CHUNK_ELEMENTS = 4_000_000


# ------------------------------------------------------------------ σ ∈ (0, 1)
@dataclass(frozen=True)
class MonteCarloDelta:
    """Monte Carlo estimate of δ_x(ε) for σ ∈ (0, 1) (docs/mathematics.md §3.2).

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


@dataclass(frozen=True)
class NewValueRows:
    """How a mechanism's new values enter its likelihood ratios (docs/mathematics.md §3.2).

    The ratios of full PYPP and of the old-values-only release (docs/bayesian_family.md §3)
    differ only in two rows, both functions of one count per replicate: the tables K of
    the new values (``variable = "tables"``) or the number L of new draws
    (``variable = "new_draws"``).

    Attributes
    ----------
    name : str
        The key under which a replicate set keeps this mechanism's evaluations.
    variable : {"tables", "new_draws"}
    singleton_to_new : callable(N, sigma, theta, k) -> ndarray
        Case (c): the log-factor of the new values when a singleton is replaced and not
        drawn, for each value of N (used only when some multiplicity is 1).
    new_target : callable(N, sigma, theta, k) -> ndarray
        The log-ratio of a new target value (≤ 0), for each value of N.
    """

    name: str
    variable: str
    singleton_to_new: Callable
    new_target: Callable


def _pypp_singleton_to_new(K, sigma, theta, k):
    if k < 2:
        return np.zeros(np.shape(K))
    return np.log(theta + (k + K - 1) * sigma) - np.log(theta + (k - 1) * sigma)


def _pypp_new_target(K, sigma, theta, k):
    return np.log(theta + k * sigma) - np.log(theta + (k + K) * sigma)


#: Full PYPP: the K new values of the CRP (docs/mathematics.md §3.2).
PYPP_ROWS = NewValueRows("pypp", "tables", _pypp_singleton_to_new, _pypp_new_target)


def monte_carlo_delta(multiplicities, sigma, theta, m, eps, *, n_mc: int = 20000,
                      rng: np.random.Generator, confidence: float = 0.95,
                      progress: Callable[[float, str], None] | None = None,
                      batch: int = 2000, prune: bool = True) -> MonteCarloDelta:
    """Estimate δ_x(ε) for σ ∈ (0, 1) by simulation (docs/mathematics.md §3.2, Theorem 1).

    Replicates of :math:`(S_1,\\dots,S_k,K)` are drawn with the exact sampler, collapsed
    to one representative atom per multiplicity value (two when the value is shared,
    for old-to-old replacements) plus the rest (:func:`simulate_replicates`). For every
    neighbour type — a pair of multiplicities :math:`(r_l, r_t)` or :math:`(r_l, \\text{new})`
    — the bad events (a)–(d) of docs/mathematics.md §3 are evaluated; atoms of equal
    multiplicity are exchangeable, so this covers every neighbour
    (:meth:`MonteCarloReplicates.delta`).

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
    replicates = simulate_replicates(multiplicities, sigma, theta, m, n_mc=n_mc, rng=rng, progress=progress,
                                     batch=batch)
    return replicates.delta(eps, confidence=confidence, progress=progress, prune=prune)


def simulate_replicates(multiplicities, sigma, theta, m, *, n_mc: int = 20000, rng: np.random.Generator,
                        progress: Callable[[float, str], None] | None = None,
                        batch: int = 2000) -> "MonteCarloReplicates":
    """Draw the replicates of the neighbour-type Monte Carlo (docs/mathematics.md §3.2).

    Each replicate is one draw of the old counts of the representatives, the rest and the
    number L of new draws, :math:`\\mathrm{DirMult}(m;\\ \\text{representatives},\\ \\text{rest},\\
    \\theta+k\\sigma)` (a Dirichlet draw then a multinomial, ``batch`` at a time); the
    tables K of the new values are drawn when first needed from their exact law given L
    (:func:`core.privacy.crp.crp_table_counts`), with a generator seeded from ``rng``
    after the counts. Cost O(n_mc · representatives) — the representatives are at most
    twice the number of distinct multiplicities, whatever n or m.

    Parameters
    ----------
    multiplicities : array_like of int ≥ 1, shape (k,)
    sigma : float in (0, 1)
    theta : float > −σ
    m : int in [1, 10^8]
    n_mc : int in [1, 10^7]
    rng : numpy.random.Generator
    progress : callable(fraction, message), optional
        Called after each batch with fractions up to 0.5 (the evaluation reports the rest).
    batch : int ≥ 1

    Returns
    -------
    MonteCarloReplicates
    """
    counts, values, how_many = _multiplicity_profile(multiplicities)
    sigma, theta, _ = check_py_parameters(sigma, theta, counts.size)
    if not 0 < sigma < 1:
        raise ValueError(f"sigma must be in (0, 1) for the Monte Carlo estimator, got {sigma!r}")
    m = _check_m_accounting(m)
    n_mc = check_integer("n_mc", n_mc, minimum=1, maximum=10**7)
    batch = check_integer("batch", batch, minimum=1, maximum=10**6)
    rng = check_rng(rng)
    _, _, rep, alpha = _representatives(counts, values, how_many, sigma, theta)
    n_rep = rep.size
    S = np.empty((n_rep, n_mc), dtype=np.int32)
    L = np.empty(n_mc, dtype=np.int32)
    done = 0
    while done < n_mc:
        size = min(batch, n_mc - done)
        draws = rng.multinomial(m, rng.dirichlet(alpha, size=size))
        S[:, done:done + size] = draws[:, :n_rep].T
        L[done:done + size] = draws[:, -1]
        done += size
        if progress is not None:
            progress(0.5 * done / n_mc, f"Monte Carlo replicates: {done:,} of {n_mc:,}")
    table_seed = int(rng.integers(0, 2**63 - 1))
    return MonteCarloReplicates(counts, values, how_many, sigma, theta, m, S, L, table_seed)


_KEPT: OrderedDict = OrderedDict()
_KEPT_LOCK = threading.Lock()


def monte_carlo_replicates(multiplicities, sigma, theta, m, *, n_mc: int = 20000, seed: int | None,
                           progress: Callable[[float, str], None] | None = None,
                           batch: int = 2000) -> "MonteCarloReplicates":
    """:func:`simulate_replicates` with ``numpy.random.default_rng(seed)``, kept for reuse.

    The same data, parameters and seed give the same replicates, so the last
    :data:`REPLICATES_KEPT` sets (at most :data:`REPLICATES_BYTES` together) are kept and
    returned again: every δ computed from them — at any ε, for full PYPP or the
    old-values-only release — is the one a fresh simulation with that seed would give.
    ``seed=None`` draws fresh replicates, never kept.
    """
    counts = _multiplicity_profile(multiplicities)[0]
    if seed is None or not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        return simulate_replicates(counts, sigma, theta, m, n_mc=n_mc, rng=np.random.default_rng(seed),
                                   progress=progress, batch=batch)
    key = (hashlib.sha256(counts.tobytes()).hexdigest(), float(sigma), float(theta), int(m), int(n_mc), int(seed),
           int(batch))
    with _KEPT_LOCK:
        found = _KEPT.get(key)
        if found is not None:
            _KEPT.move_to_end(key)
            return found
    made = simulate_replicates(counts, sigma, theta, m, n_mc=n_mc, rng=np.random.default_rng(int(seed)),
                               progress=progress, batch=batch)
    with _KEPT_LOCK:
        _KEPT[key] = made
        while len(_KEPT) > REPLICATES_KEPT or (len(_KEPT) > 1 and sum(r.nbytes for r in _KEPT.values())
                                                > REPLICATES_BYTES):
            _KEPT.popitem(last=False)
    return made


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


class _Rows:
    """The log-ratio rows of one mechanism on a replicate set (docs/mathematics.md §3.2).

    Every row is a table of values indexed by one small integer per replicate: a
    representative's count S_j (minus its smallest value), the new-value count N (K or
    L), or, for a replaced singleton, N where S_l = 0 and one code past it where
    S_l ≥ 1 (singular, +inf). The log-ratio of the type (l, t) on a replicate is
    ``left[l][code] + right[t][code]``:

    * left row d: the replaced atom l of multiplicity values[d], log((n_l+S_l−1−σ)/(n_l−1−σ))
      for n_l ≥ 2; for n_l = 1, +inf if S_l ≥ 1 (singular) else ``singleton_to_new``;
    * left row D: case (d), n_l = 1 and v new: +inf if S_l ≥ 1, else 0;
    * right row j: old target t = representative j, log((n_t−σ)/(n_t+S_t−σ)) ≤ 0;
    * right row n_rep: ``new_target``; right row n_rep + 1: 0.
    """

    def __init__(self, reps: "MonteCarloReplicates", rows: NewValueRows):
        values, sigma, theta, k = reps.values, reps.sigma, reps.theta, reps.k
        D, n_rep = values.size, reps.rep.size
        N = reps.tables if rows.variable == "tables" else reps.new_draws
        n_min = int(N.min())
        n_values = np.arange(n_min, int(N.max()) + 1, dtype=float)
        self.codes = [reps.codes[j] for j in range(n_rep)] + [(N - n_min).astype(np.int32)]
        self.widths = [int(w) for w in reps.widths] + [n_values.size]
        self.constant = len(self.codes)            # the variable of a constant row: code 0, width 1
        self.codes.append(None)
        self.widths.append(1)

        def s_values(j):
            return np.arange(reps.s_min[j], reps.s_min[j] + reps.widths[j], dtype=float)

        left: list = []
        with np.errstate(divide="ignore", invalid="ignore"):
            for d in range(D):
                if values[d] == 1:
                    # N where S_l = 0, one code past it where S_l ≥ 1 (singular)
                    singular = (reps.codes[0] + reps.s_min[0]) >= 1
                    self.codes.append(np.where(singular, n_values.size, self.codes[n_rep]).astype(np.int32))
                    self.widths.append(n_values.size + 1)
                    table = np.append(rows.singleton_to_new(n_values, sigma, theta, k), np.inf)
                    left.append((len(self.codes) - 1, table))
                else:
                    v = float(values[d])
                    left.append((d, np.log(v + s_values(d) - 1 - sigma) - np.log(v - 1 - sigma)))
            if values[0] == 1:
                left.append((0, np.where(s_values(0) >= 1, np.inf, 0.0)))
            else:
                left.append((self.constant, np.zeros(1)))
            right = [(j, np.log(reps.rep[j] - sigma) - np.log(reps.rep[j] + s_values(j) - sigma))
                     for j in range(n_rep)]
        right.append((n_rep, rows.new_target(n_values, sigma, theta, k)))
        right.append((self.constant, np.zeros(1)))
        self.left, self.right = left, right

    def exceed(self, types, eps_sorted: np.ndarray, n_mc: int) -> np.ndarray:
        """#replicates whose log-ratio exceeds each ε, for each type ``(l_row, t_row)``
        (``t_row`` None: the replaced atom alone), shape (len(types), E); ``eps_sorted``
        increasing, +inf coded as the largest float.

        A type's log-ratio takes at most W_l·W_t values (the widths of its two codes): when
        that is small against n_mc its replicates are counted in a joint histogram of the
        two codes (one integer pass) and the ε thresholds are applied to the W_l·W_t cells;
        otherwise its values are sorted. Both give the exact counts.
        """
        E = eps_sorted.size
        out = np.empty((len(types), E), dtype=np.int64)
        joint = []
        for i, (l_row, t_row) in enumerate(types):
            vl, tl = self.left[l_row]
            vt, tt = self.right[t_row] if t_row is not None else (self.constant, np.zeros(1))
            if tl.size * tt.size <= max(64, n_mc // 2):
                joint.append((i, vl, tl, vt, tt))
                continue
            x = tl[self.codes[vl]] if vl != self.constant else np.full(n_mc, tl[0])
            if vt != self.constant:
                x = x + tt[self.codes[vt]]
            x.sort()
            out[i] = n_mc - np.searchsorted(x, eps_sorted, side="right")
        rows_per_chunk = max(1, _CHUNK_ELEMENTS // n_mc)
        for start in range(0, len(joint), rows_per_chunk):
            chunk = joint[start:start + rows_per_chunk]
            codes = np.zeros((len(chunk), n_mc), dtype=np.int64)
            cells, offset, sizes = [], 0, []
            for r, (_, vl, tl, vt, tt) in enumerate(chunk):
                row = codes[r]
                if vl != self.constant:
                    np.multiply(self.codes[vl], tt.size, out=row, dtype=np.int64)   # never in uint16
                if vt != self.constant:
                    row += self.codes[vt]
                row += offset
                cells.append((tl[:, None] + tt[None, :]).ravel())
                sizes.append(tl.size * tt.size)
                offset += sizes[-1]
            histogram = np.bincount(codes.ravel(), minlength=offset)
            # bin b of a cell: how many ε lie below its log-ratio; it exceeds ε_j iff j < b
            bins = np.searchsorted(eps_sorted, np.concatenate(cells), side="left")
            owner = np.repeat(np.arange(len(chunk)), sizes)
            per_bin = np.bincount(owner * (E + 1) + bins, weights=histogram,
                                  minlength=len(chunk) * (E + 1)).reshape(len(chunk), E + 1)
            above = np.cumsum(per_bin[:, ::-1], axis=1)[:, ::-1]
            out[[c[0] for c in chunk]] = np.rint(above[:, 1:]).astype(np.int64)
        return out


class MonteCarloReplicates:
    """Replicates of the representatives' old counts, the new draws L and the tables K
    (docs/mathematics.md §3.2), from :func:`simulate_replicates`.

    :meth:`delta` evaluates every neighbour type on them at any ε, for full PYPP
    (:data:`PYPP_ROWS`) or another mechanism with the same old counts
    (:data:`core.privacy.old_values.OLD_VALUES_ROWS`). The counts made at the first set of
    ε are kept per mechanism: at a new ε only the types whose count there could still
    reach the maximum are evaluated again (a type's count does not increase with ε), so a
    move of ε costs a few types, not a new simulation. Thread-safe.
    """

    def __init__(self, counts, values, how_many, sigma, theta, m, S, L, table_seed):
        self.k, self.n_mc = int(counts.size), int(L.size)
        self.values, self.sigma, self.theta, self.m = values, float(sigma), float(theta), int(m)
        self.has_b, self.b_index, self.rep, _ = _representatives(counts, values, how_many, sigma, theta)
        self.s_min = S.min(axis=1).astype(np.int64) if S.size else np.zeros(0, dtype=np.int64)
        self.widths = (S.max(axis=1) - self.s_min + 1) if S.size else np.zeros(0, dtype=np.int64)
        small = self.widths.size == 0 or int(self.widths.max()) <= 2**16
        self.codes = (S - self.s_min[:, None].astype(S.dtype)).astype(np.uint16 if small else np.int32)
        self.new_draws = L
        self._table_seed = table_seed
        self._tables = None
        self._rows: dict = {}
        self._kept: dict = {}
        self._histograms: dict = {}
        self._lock = threading.RLock()

    @property
    def tables(self) -> np.ndarray:
        """K, the tables of the L new draws of each replicate: exact draws given L
        (:func:`core.privacy.crp.crp_table_counts`), made on first use."""
        with self._lock:
            if self._tables is None:
                k_strength = self.theta + self.k * self.sigma
                self._tables = crp_table_counts(self.new_draws, self.sigma, k_strength,
                                                np.random.default_rng(self._table_seed)).astype(np.int32)
            return self._tables

    @property
    def nbytes(self) -> int:
        """Memory held by the replicates (the kept evaluations are small)."""
        rows = sum(c.nbytes for r in self._rows.values() for c in r.codes[len(self.rep):] if c is not None)
        return int(self.codes.nbytes + self.new_draws.nbytes + (0 if self._tables is None else self._tables.nbytes)
                   + rows)

    def delta(self, eps, *, rows: NewValueRows = PYPP_ROWS, confidence: float = 0.95,
              progress: Callable[[float, str], None] | None = None, prune: bool = True) -> MonteCarloDelta:
        """δ_x(ε) on these replicates: the largest frequency of a bad event over the neighbour
        types, and its Bonferroni-corrected one-sided Clopper–Pearson upper bound
        (docs/mathematics.md §3.2).

        Parameters
        ----------
        eps : float or array_like of float > 0 (``inf`` allowed)
        rows : NewValueRows
            The mechanism: full PYPP by default.
        confidence : float in (0, 1)
        progress : callable(fraction, message), optional
            Fractions from 0.5 to 1 (the simulation reported the first half).
        prune : bool
            Skip types that provably cannot raise the maximum (exact; ``False`` evaluates
            every type, for verification).

        Returns
        -------
        MonteCarloDelta
        """
        eps_arr, _ = _eps_values(eps)
        if not 0 < confidence < 1:
            raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
        # A singular output is coded +inf and is bad at every ε, ε = ∞ included: count
        # "log-ratio > ε" as "> the largest finite float" there, which only +inf satisfies.
        eps_search = np.where(np.isinf(eps_arr), np.finfo(float).max, eps_arr)
        grid, where = np.unique(eps_search, return_inverse=True)
        with self._lock:
            engine = self._rows.get(rows.name)
            if engine is None:
                engine = self._rows[rows.name] = _Rows(self, rows)
            kept = self._kept.get(rows.name) if prune else None
            fresh = kept is None or np.setdiff1d(grid, kept["eps"]).size > 4
            if fresh:
                top, names, n_types, kept_now = self._evaluate(engine, grid, prune, progress)
                if prune:
                    self._kept[rows.name] = kept_now
            else:
                top, names = self._from_kept(engine, kept, grid)
                n_types = kept["n_types"]
                if progress is not None:
                    progress(1.0, "Monte Carlo done")
        top, names = top[where.ravel()], [names[i] for i in where.ravel()]
        n_mc = self.n_mc
        estimate = top / n_mc
        std_error = np.sqrt(estimate * (1 - estimate) / n_mc)
        level = 1 - (1 - confidence) / n_types
        upper = np.where(top >= n_mc, 1.0, stats.beta.ppf(level, top + 1, n_mc - top))
        return MonteCarloDelta(eps=eps_arr, estimate=estimate, std_error=std_error, upper=_round_up_mc(upper),
                               n_mc=n_mc, n_types=n_types, worst_type=names)

    # -------------------------------------------------------------- evaluation
    def _cheap_types(self):
        """(l, new) for every l, and every pair with a singleton l: (l_row, t_row, name)."""
        values, has_b, b_index, D, n_rep = self.values, self.has_b, self.b_index, self.values.size, self.rep.size
        out = []
        for d in range(D):
            if values[d] == 1:
                out.append((D, n_rep + 1, "r_l=1 -> new"))
                out.extend((0, b_index[0] if e == 0 else e, f"r_l=1 -> r_t={values[e]}")
                           for e in range(D) if e != 0 or has_b[0])
            else:
                out.append((d, n_rep, f"r_l={values[d]} -> new"))
        return out

    def _targets(self, d):
        """The old-to-old types of the replaced value d: (t_row, name) for every target."""
        values, has_b, b_index = self.values, self.has_b, self.b_index
        return [(int(b_index[d]) if e == d else e, f"r_l={values[d]} -> r_t={values[e]}")
                for e in range(values.size) if e != d or has_b[d]]

    def _histogram(self, j) -> np.ndarray:
        """Replicates at each value of representative j's count (from its smallest)."""
        with self._lock:
            found = self._histograms.get(j)
            if found is None:
                found = self._histograms[j] = np.bincount(self.codes[j], minlength=int(self.widths[j]))
            return found

    def _pair_bounds(self, engine: _Rows, d: int, t_rows, grid) -> np.ndarray:
        """Upper bounds of the counts of the old-to-old types (d, t) at each ε, from the
        counts of each representative alone, shape (len(t_rows), E).

        With f = left row d (increasing in S_d) and g = right row t (decreasing in S_t), for
        every value q of S_t the bad event {f + g > ε} lies in {f > ε − g(q)} ∪ {S_t < q}, so
        the count is at most min over q of #{f > ε − g(q)} + #{S_t < q}. The thresholds are
        lowered by a relative 1e-9 so that rounding never makes the bound too small."""
        _, f = engine.left[d]
        tail = np.append(np.cumsum(self._histogram(d)[::-1])[::-1], 0)     # tail[i] = #{code_d ≥ i}
        if not len(t_rows):
            return np.zeros((0, grid.size), dtype=np.int64)
        g = np.concatenate([engine.right[t][1] for t in t_rows])
        # #{S_t < q} for every value q of each target, concatenated like g
        below = np.concatenate([np.cumsum(self._histogram(t)) - self._histogram(t) for t in t_rows])
        starts = np.cumsum([0] + [engine.right[t][1].size for t in t_rows[:-1]])
        x = grid[None, :] - g[:, None]
        x = x - 1e-9 * (np.abs(grid[None, :]) + np.abs(g[:, None]) + 1.0)
        over = tail[np.searchsorted(f, x, side="right")]                     # #{f > x}
        return np.minimum.reduceat(over + below[:, None], starts, axis=0)

    def _evaluate(self, engine: _Rows, grid, prune, progress):
        """Every type at the ε of ``grid``, the dominated ones skipped when ``prune``."""
        values, n_mc = self.values, self.n_mc
        cheap = self._cheap_types()
        types = [(l_row, t_row) for l_row, t_row, _ in cheap]
        names = [name for _, _, name in cheap]
        exceed = [engine.exceed(types, grid, n_mc)]
        best_counts = exceed[0].max(axis=0)
        n_types = len(names) + sum(int(self.has_b[d]) + values.size - 1 for d in range(values.size) if values[d] >= 2)
        # Old-to-old types with n_l ≥ 2. Pathwise, right ≤ 0, so a type's count never
        # exceeds that of its replaced atom alone (bound[d]), nor the bound of
        # _pair_bounds; a type whose bound is within the running maximum at every ε cannot
        # raise it and is skipped — exactly.
        candidates = np.flatnonzero(values >= 2)
        skipped = []
        if candidates.size:
            bound = engine.exceed([(int(d), None) for d in candidates], grid, n_mc)
            order = np.argsort(-bound.max(axis=1), kind="stable")
            for step, j in enumerate(order):
                d = int(candidates[j])
                targets = self._targets(d)
                if prune and np.all(bound[j] <= best_counts):
                    skipped.extend((d, t, name) for t, name in targets)
                elif targets:
                    # (a single atom, k = 1, has no other value to move its record to: only
                    # the (l, new) type above, which is already counted)
                    if prune:
                        pair = self._pair_bounds(engine, d, [t for t, _ in targets], grid)
                        dominated = np.all(pair <= best_counts, axis=1)
                        skipped.extend((d, t, name) for (t, name), out in zip(targets, dominated) if out)
                        targets = [target for target, out in zip(targets, dominated) if not out]
                    if targets:
                        counts_d = engine.exceed([(d, t) for t, _ in targets], grid, n_mc)
                        exceed.append(counts_d)
                        types.extend((d, t) for t, _ in targets)
                        names.extend(name for _, name in targets)
                        best_counts = np.maximum(best_counts, counts_d.max(axis=0))
                if progress is not None:
                    progress(0.5 + 0.5 * (step + 1) / order.size, "Evaluating neighbour types")
        if progress is not None:
            progress(1.0, "Monte Carlo done")
        exceed = np.vstack(exceed)
        best = exceed.argmax(axis=0)
        top = exceed[best, np.arange(grid.size)]
        kept = {"eps": grid, "exceed": exceed, "types": types, "names": names, "skipped": skipped,
                "n_types": n_types}
        return top, [names[i] for i in best], n_types, kept

    def _from_kept(self, engine: _Rows, kept: dict, grid):
        """The maximum count at each ε of ``grid`` from the counts kept at other ε.

        A type's count does not increase with ε, so between two kept ε it lies between its
        counts there: the maximum is at least the largest count at the next kept ε above,
        and only the types whose count at the kept ε below exceeds that need evaluating; a
        skipped type is evaluated only if its bound at the new ε (:meth:`_pair_bounds`)
        exceeds the maximum found. The result is the maximum a full evaluation gives."""
        n_mc, kept_eps = self.n_mc, kept["eps"]
        exceed, types, names = kept["exceed"], kept["types"], kept["names"]
        by_d: dict = {}
        for d, t, t_name in kept["skipped"]:
            by_d.setdefault(d, []).append((t, t_name))
        top = np.empty(grid.size, dtype=np.int64)
        worst = []
        for i, e in enumerate(grid):
            at = np.array([e])
            pos = int(np.searchsorted(kept_eps, e, side="left"))
            if pos < kept_eps.size and kept_eps[pos] == e:
                j = int(exceed[:, pos].argmax())
                top[i] = exceed[j, pos]
                worst.append(names[j])
                continue
            above = exceed[:, pos] if pos < kept_eps.size else np.zeros(len(types), dtype=np.int64)
            below = exceed[:, pos - 1] if pos > 0 else np.full(len(types), n_mc, dtype=np.int64)
            j = int(above.argmax())
            best, name = int(above[j]), names[j]
            need = np.flatnonzero(below > best)
            if need.size:
                counts = engine.exceed([types[t] for t in need], at, n_mc)[:, 0]
                if counts.max() > best:
                    c = int(counts.argmax())
                    best, name = int(counts[c]), names[need[c]]
            over = []
            for d, targets in by_d.items():
                bound = self._pair_bounds(engine, d, [t for t, _ in targets], at)[:, 0]
                over.extend((d, t, t_name) for (t, t_name), b in zip(targets, bound) if b > best)
            if over:
                counts = engine.exceed([(d, t) for d, t, _ in over], at, n_mc)[:, 0]
                if counts.max() > best:
                    c = int(counts.argmax())
                    best, name = int(counts[c]), over[c][2]
            top[i] = best
            worst.append(name)
        return top, worst
