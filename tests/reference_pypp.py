"""Reference implementations used only by tests and benchmarks.

* :func:`literal_algorithm_1` — the PYPP mechanism exactly as Algorithm 1 states it:
  m sequential draws from the one-step predictive (SPEC §2), a Python loop on purpose.
* :func:`enumerate_outputs` and :func:`enumerated_deltas` — brute-force enumeration of
  every output sequence of a tiny case and of every neighbour (SPEC §8).

They share no code with ``core`` so that agreement is evidence, not tautology.
"""

from __future__ import annotations

import math

import numpy as np


def literal_algorithm_1(multiplicities, sigma, theta, m, rng):
    """One run of Algorithm 1. Returns (S, L, K): old counts, new draws, distinct new values.

    σ ≥ 0: a new value w.p. (θ + kσ)/(θ + N), else x*_i w.p. (n_i − σ)/(θ + N).
    σ < 0: z = θ/|σ| categories, category c w.p. (count_c + |σ|)/(N + z|σ|).
    """
    counts = [int(c) for c in multiplicities]
    k = len(counts)
    if sigma < 0:
        alpha = -sigma
        z = int(round(theta / alpha))
        cat = counts + [0] * (z - k)
        for _ in range(m):
            w = np.array(cat, dtype=float) + alpha
            c = rng.choice(z, p=w / w.sum())
            cat[c] += 1
        S = np.array([cat[i] - counts[i] for i in range(k)])
        extra = np.array(cat[k:])
        return S, int(extra.sum()), int((extra > 0).sum())
    atoms = list(counts)
    N = sum(atoms)
    for _ in range(m):
        kk = len(atoms)
        p_new = (theta + kk * sigma) / (theta + N)
        if rng.random() < p_new:
            atoms.append(1)
        else:
            w = np.array(atoms, dtype=float) - sigma
            i = rng.choice(kk, p=w / w.sum())
            atoms[i] += 1
        N += 1
    S = np.array([atoms[i] - counts[i] for i in range(k)])
    new = atoms[k:]
    return S, int(sum(new)), len(new)


def _sequences(k_old, m, sigma, z=None):
    """All label sequences of length m with positive probability under x.

    Old atoms are 0..k−1; for σ ≥ 0 new atoms are ('N', j) in order of first
    appearance; for σ < 0 the alphabet is the z categories.
    """
    if z is not None:
        for seq in np.ndindex(*([z] * m)):
            yield tuple(int(v) for v in seq)
        return

    def rec(prefix, fresh):
        if len(prefix) == m:
            yield tuple(prefix)
            return
        for label in list(range(k_old)) + [("N", j) for j in range(fresh)]:
            yield from rec(prefix + [label], fresh)
        yield from rec(prefix + [("N", fresh)], fresh + 1)

    yield from rec([], 0)


def sequence_probability(seq, counts: dict, sigma, theta, z=None):
    """Product of one-step predictive probabilities (SPEC §8); 0 if impossible."""
    counts = {a: c for a, c in counts.items() if c > 0}
    N = sum(counts.values())
    if z is not None:
        alpha = -sigma
        p = 1.0
        for c in seq:
            p *= (counts.get(c, 0) + alpha) / (N + z * alpha)
            counts[c] = counts.get(c, 0) + 1
            N += 1
        return p
    kcur, fresh, p = len(counts), 0, 1.0
    for a in seq:
        if a in counts:
            p *= (counts[a] - sigma) / (theta + N)
            counts[a] += 1
        elif a == ("N", fresh):
            p *= (theta + kcur * sigma) / (theta + N)
            counts[a] = 1
            kcur += 1
            fresh += 1
        else:
            return 0.0
        N += 1
    return p


def neighbours(multiplicities, sigma, theta):
    """Every neighbour y (replace one record of x*_l by v): list of (description, counts)."""
    k = len(multiplicities)
    base = {i: int(c) for i, c in enumerate(multiplicities)}
    out = []
    if sigma < 0:
        z = int(round(theta / -sigma))
        targets = range(z)
    else:
        targets = list(range(k)) + ["V"]
    for l in range(k):
        for v in targets:
            if v == l:
                continue
            y = dict(base)
            y[l] -= 1
            y[v] = y.get(v, 0) + 1
            out.append(((l, v), y))
    return out


def enumerate_outputs(multiplicities, sigma, theta, m):
    """Probabilities of every output under x and under each neighbour.

    Returns (sequences, p_x array, {neighbour: p_y array}).
    """
    z = int(round(theta / -sigma)) if sigma < 0 else None
    k = len(multiplicities)
    x = {i: int(c) for i, c in enumerate(multiplicities)}
    seqs = list(_sequences(k, m, sigma, z))
    px = np.array([sequence_probability(s, x, sigma, theta, z) for s in seqs])
    pys = {}
    for desc, y in neighbours(multiplicities, sigma, theta):
        pys[desc] = np.array([sequence_probability(s, y, sigma, theta, z) for s in seqs])
    return seqs, px, pys


def enumerated_deltas(multiplicities, sigma, theta, m, eps):
    """(δ_x(ε), tight δ_x(ε)) by brute force, for each ε in ``eps`` (SPEC §8)."""
    _, px, pys = enumerate_outputs(multiplicities, sigma, theta, m)
    eps = np.atleast_1d(np.asarray(eps, dtype=float))
    delta = np.zeros(eps.size)
    tight = np.zeros(eps.size)
    for py in pys.values():
        for j, e in enumerate(eps):
            bound = math.exp(e) * py
            delta[j] = max(delta[j], px[px > bound].sum())
            tight[j] = max(tight[j], np.clip(px - bound, 0, None).sum())
    return delta, tight
