"""The Pitman–Yor posterior-predictive (PYPP) mechanism (SPEC §2).

Count level: :func:`py_predictive_counts` draws how many synthetic copies each
confidential value receives and the block sizes of the new values. Value level:
:func:`pypp_release` turns those counts into ``m`` synthetic values or rows, drawing the
new ones from the base measure ``H`` and emitting everything in uniformly random order.

The sampler is the exact fast form of Algorithm 1 of Menicucci, Beraha, Favaro and
Lazzarini (2026), via the posterior characterisation of the PY process (Pitman 1996):

1. :math:`(P_1,\\dots,P_k,R)\\sim\\mathrm{Dir}(n_1-\\sigma,\\dots,n_k-\\sigma,\\theta+k\\sigma)`;
2. :math:`(S_1,\\dots,S_k,L)\\sim\\mathrm{Mult}(m;P_1,\\dots,P_k,R)`;
3. the ``L`` draws that are not old values are seated in a Chinese restaurant with
   discount σ and strength θ + kσ; each table is one new value.

For σ < 0 (Dirichlet–multinomial over ``z = θ/|σ|`` public categories) there is no
step 3: the ``z − k`` unobserved categories are atoms with count 0.

The literal sequential algorithm lives in ``tests/reference_pypp.py``; the tests check
that both produce the same laws of S_1, L and K.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .validation import (
    check_integer,
    check_m,
    check_multiplicities,
    check_py_parameters,
    check_rng,
)

__all__ = [
    "CategoricalBase",
    "SyntheticRelease",
    "UniformBase",
    "crp_tables",
    "py_predictive_counts",
    "pypp_release",
]

# Baselines (SPEC §4) live in core.baselines; the calibration helpers named in the
# API contract (SPEC §7) are re-exported at the end of this module.


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

    Parameters
    ----------
    customers : int or ndarray of int, shape (N,)
        Number of customers ``L ≥ 0`` in each restaurant.
    sigma : float in [0, 1)
    strength : float > 0
        ``θ + kσ`` when seating the new values of the PYPP mechanism.
    rng : numpy.random.Generator
    return_sizes : bool
        Also return the table sizes.

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
    remaining = np.atleast_1d(np.asarray(customers, dtype=np.int64)).copy()
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


def py_predictive_counts(multiplicities, sigma, theta, m, rng):
    """Counts of one PYPP release of size ``m`` (SPEC §2, §7).

    Parameters
    ----------
    multiplicities : array_like of int, shape (k,)
        Multiplicities ``n_1..n_k ≥ 1`` of the distinct confidential values.
    sigma : float
        Discount: ``σ ∈ [0, 1)``, or ``σ < 0`` for the Dirichlet–multinomial model.
    theta : float
        Strength: ``θ > −σ`` for ``σ ≥ 0``; ``θ = z|σ|`` with integer ``z ≥ k`` for ``σ < 0``.
    m : int ≥ 1
        Synthetic sample size.
    rng : numpy.random.Generator

    Returns
    -------
    old_counts : ndarray of int, shape (k,)
        :math:`S_i`, the number of synthetic copies of the i-th confidential value.
    new_counts : ndarray of int, shape (K,)
        Sizes of the blocks of new values (each block is one value drawn from ``H``),
        in order of appearance; all positive, summing to ``L = m − ΣS_i``. For σ < 0
        these are the positive counts of the ``z − k`` unobserved categories.
    """
    counts = check_multiplicities(multiplicities)
    k = counts.size
    sigma, theta, z = check_py_parameters(sigma, theta, k)
    m = check_m(m)
    rng = check_rng(rng)
    if z is not None:
        alpha = -sigma
        weights = rng.dirichlet(np.concatenate([counts + alpha, np.full(z - k, alpha)]))
        drawn = rng.multinomial(m, weights)
        new = drawn[k:]
        return drawn[:k], new[new > 0]
    weights = rng.dirichlet(np.append(counts - sigma, theta + k * sigma))
    drawn = rng.multinomial(m, weights)
    _, sizes = crp_tables(int(drawn[k]), sigma, theta + k * sigma, rng, return_sizes=True)
    return drawn[:k], sizes


@dataclass(frozen=True)
class UniformBase:
    """Uniform base measure on a public interval ``[lo, hi]`` for a numeric column."""

    lo: float
    hi: float

    def __post_init__(self):
        if not (np.isfinite(self.lo) and np.isfinite(self.hi) and self.lo < self.hi):
            raise ValueError(f"bounds must be finite with lo < hi, got lo={self.lo!r}, hi={self.hi!r}")

    def sample(self, size: int, rng: np.random.Generator) -> np.ndarray:
        return rng.uniform(self.lo, self.hi, size=size)


@dataclass(frozen=True)
class CategoricalBase:
    """Base measure of a categorical column.

    New values get the labels ``new_category_1``, ``new_category_2``, … in order of
    appearance. With σ < 0 and a public list of ``categories``, the new blocks are
    instead the unobserved public categories, assigned uniformly at random without
    replacement (exact: the symmetric Dirichlet prior makes them exchangeable).
    """

    categories: tuple | None = None

    def sample(self, size: int, rng: np.random.Generator, *, observed=None) -> np.ndarray:
        if self.categories is not None and observed is not None:
            unobserved = [c for c in self.categories if c not in set(observed)]
            if len(unobserved) >= size:
                pick = rng.choice(len(unobserved), size=size, replace=False)
                return np.asarray(unobserved, dtype=object)[pick]
        return np.array([f"new_category_{j}" for j in range(1, size + 1)], dtype=object)


@dataclass(frozen=True)
class SyntheticRelease:
    """One PYPP release.

    Attributes
    ----------
    values : ndarray, shape (m,) or (m, d)
        The synthetic data in uniformly random order (object dtype if any column is
        categorical).
    is_new : ndarray of bool, shape (m,)
        Whether each synthetic value is a new value drawn from ``H``.
    old_counts, new_counts : ndarray of int
        As returned by :func:`py_predictive_counts`.
    """

    values: np.ndarray
    is_new: np.ndarray
    old_counts: np.ndarray
    new_counts: np.ndarray

    @property
    def m(self) -> int:
        return int(self.is_new.size)

    @property
    def n_new_values(self) -> int:
        """Number of distinct new values (``K``)."""
        return int(self.new_counts.size)


def pypp_release(atoms, multiplicities, sigma, theta, m, rng, *,
                 base: Sequence | UniformBase | CategoricalBase | None = None,
                 decimals: Sequence[int | None] | int | None = None) -> SyntheticRelease:
    """Release ``m`` synthetic values or rows with the PYPP mechanism (SPEC §2).

    Parameters
    ----------
    atoms : ndarray, shape (k,) or (k, d)
        The distinct confidential values (rows for multi-column data; a row is one atom).
    multiplicities : array_like of int, shape (k,)
    sigma, theta, m, rng
        As in :func:`py_predictive_counts`.
    base : base measure, or one per column
        :class:`UniformBase` on public bounds for numeric columns,
        :class:`CategoricalBase` for categorical ones; ``H`` is their product.
        Required unless the release contains no new value.
    decimals : int or sequence of (int or None), optional
        Post-processing: round new numeric values to the recorded precision. It is
        data-independent and leaves every guarantee unchanged.

    Returns
    -------
    SyntheticRelease
    """
    atoms = np.asarray(atoms)
    if atoms.ndim not in (1, 2):
        raise ValueError(f"atoms must be an array of shape (k,) or (k, d), got shape {atoms.shape}")
    counts = check_multiplicities(multiplicities)
    if atoms.shape[0] != counts.size:
        raise ValueError(f"atoms has {atoms.shape[0]} rows but multiplicities has {counts.size} entries")
    old, new = py_predictive_counts(counts, sigma, theta, m, rng)
    k, n_new = counts.size, new.size
    d = 1 if atoms.ndim == 1 else atoms.shape[1]
    bases = _per_column(base, d, "base")
    digits = _per_column(decimals, d, "decimals")

    if n_new:
        if any(b is None for b in bases):
            raise ValueError("base must give a base measure for every column: the release contains new values")
        columns = []
        for j, b in enumerate(bases):
            column_atoms = atoms if atoms.ndim == 1 else atoms[:, j]
            if isinstance(b, CategoricalBase):
                col = b.sample(n_new, rng, observed=column_atoms.tolist())
            else:
                col = b.sample(n_new, rng)
                if digits[j] is not None:
                    col = np.round(col, check_integer("decimals", digits[j], minimum=0))
            columns.append(col)
        new_atoms = _stack_columns(columns, atoms)
        all_atoms = np.concatenate([atoms, new_atoms])  # numpy promotes int+float, str+object
    else:
        all_atoms = atoms
    # intp, not a narrower type: numpy's shuffle has a fast path for native-width items.
    index = np.repeat(np.arange(k + n_new, dtype=np.intp), np.concatenate([old, new]))
    rng.shuffle(index)
    return SyntheticRelease(values=all_atoms[index], is_new=index >= k, old_counts=old, new_counts=new)


def _per_column(spec, d: int, name: str) -> list:
    if spec is None or isinstance(spec, (UniformBase, CategoricalBase, int, np.integer)):
        return [spec] * d
    spec = list(spec)
    if len(spec) != d:
        raise ValueError(f"{name} must have one entry per column ({d}), got {len(spec)}")
    return spec


def _stack_columns(columns: list[np.ndarray], atoms: np.ndarray) -> np.ndarray:
    if atoms.ndim == 1:
        return columns[0]
    if atoms.dtype == object or any(c.dtype == object for c in columns):
        out = np.empty((columns[0].size, len(columns)), dtype=object)
        for j, c in enumerate(columns):
            out[:, j] = c
        return out
    return np.column_stack(columns)
from .baselines import dirichlet_sampling_epsilon, gaussian_sigma, smoothed_histogram_lambda  # noqa: E402,F401  (SPEC §7 names)
