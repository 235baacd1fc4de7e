"""σ ∈ (0, 1): the instance-level δ by Monte Carlo over neighbour types, with a
Clopper–Pearson upper confidence bound (docs/mathematics.md §3.2).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import stats

from .crp import crp_tables
from ..validation import (
    check_integer,
    check_py_parameters,
    check_rng,
)
from .common import _check_m_accounting, _eps_values, _multiplicity_profile, _round_up_mc


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


def monte_carlo_delta(multiplicities, sigma, theta, m, eps, *, n_mc: int = 20000,
                      rng: np.random.Generator, confidence: float = 0.95,
                      progress: Callable[[float, str], None] | None = None,
                      batch: int = 2000, prune: bool = True) -> MonteCarloDelta:
    """Estimate δ_x(ε) for σ ∈ (0, 1) by simulation (docs/mathematics.md §3.2, Theorem 1).

    Replicates of :math:`(S_1,\\dots,S_k,K)` are drawn with the exact sampler, collapsed
    to one representative atom per multiplicity value (two when the value is shared,
    for old-to-old replacements) plus the rest. For every neighbour type — a pair of
    multiplicities :math:`(r_l, r_t)` or :math:`(r_l, \\text{new})` — the bad events
    (a)–(d) of docs/mathematics.md §3 are evaluated; atoms of equal multiplicity are exchangeable, so
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
    (:mod:`core.privacy.old_values`), whose likelihood ratios have the same structure and differ
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
