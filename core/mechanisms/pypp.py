"""The Pitman–Yor posterior-predictive (PYPP) mechanism (docs/mathematics.md §2).

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

import math

import numpy as np

from ..validation import (
    check_integer,
    check_multiplicities,
    check_py_parameters,
    check_release_budget,
    check_release_size,
    check_rng,
)
from ..data import CategoricalBase, UniformBase, public_domain_size
from ..privacy import crp_tables


# σ < 0: up to this many unobserved categories their Dirichlet weights are drawn densely;
# beyond it the draws are split over halves of the categories (memory O(K log z), not O(z)).
_DENSE_CATEGORIES = 2**16


def py_predictive_counts(multiplicities, sigma, theta, m, rng):
    """Counts of one PYPP release of size ``m`` (docs/mathematics.md §2, §7).

    Parameters
    ----------
    multiplicities : array_like of int, shape (k,)
        Multiplicities ``n_1..n_k ≥ 1`` of the distinct confidential values.
    sigma : float
        Discount: ``σ ∈ [0, 1)``, or ``σ < 0`` for the Dirichlet–multinomial model.
    theta : float
        Strength: ``θ > −σ`` for ``σ ≥ 0``; ``θ = z|σ|`` with integer ``z ≥ k`` for ``σ < 0``.
    m : int in [1, MAX_RELEASE_SIZE]
        Synthetic sample size.
    rng : numpy.random.Generator

    Memory is O(k + K) (K the number of new values), never O(z): for σ < 0 with many
    public categories the ``L`` draws that miss the observed ones are split over halves
    of the unobserved categories (beta-binomial splits of the Dirichlet–multinomial), so
    only categories that receive draws are ever represented.

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
    m = check_release_size(m)
    rng = check_rng(rng)
    if z is not None:
        alpha = -sigma
        if z - k <= _DENSE_CATEGORIES:
            weights = rng.dirichlet(np.concatenate([counts + alpha, np.full(z - k, alpha)]))
            drawn = rng.multinomial(m, weights)
            new = drawn[k:]
            return drawn[:k], new[new > 0]
        # Aggregation: (P_1..P_k, R) ~ Dir(n_i + α, (z − k)α), R the unobserved categories' mass.
        weights = rng.dirichlet(np.append(counts + alpha, (z - k) * alpha))
        drawn = rng.multinomial(m, weights)
        return drawn[:k], _split_dirichlet_multinomial(int(drawn[k]), z - k, alpha, rng)
    weights = rng.dirichlet(np.append(counts - sigma, theta + k * sigma))
    drawn = rng.multinomial(m, weights)
    _, sizes = crp_tables(int(drawn[k]), sigma, theta + k * sigma, rng, return_sizes=True)
    return drawn[:k], sizes


def _split_dirichlet_multinomial(total: int, categories: int, alpha: float,
                                 rng: np.random.Generator) -> np.ndarray:
    """Positive counts of DirMult(total; α, …, α) over ``categories`` cells, in cell order.

    The count of a group of ``g`` cells splits between its halves ``g₁ + g₂ = g`` as
    :math:`\\mathrm{BetaBin}(c, g_1\\alpha, g_2\\alpha)` (aggregation property of the
    Dirichlet), independently across groups. Splitting only groups with a positive count
    takes ``ceil(log2(categories))`` vectorised rounds over at most ``total`` groups.
    """
    size = np.array([categories], dtype=np.int64)
    count = np.array([total], dtype=np.int64)
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    while np.any(size > 1):
        split = size > 1
        left = size[split] // 2
        right = size[split] - left
        share = rng.beta(left * alpha, right * alpha)
        to_left = rng.binomial(count[split], share)
        new_size = np.empty(size.size + int(split.sum()), dtype=np.int64)
        new_count = np.empty_like(new_size)
        # Keep cell order: each split group is replaced by (left, right) in place.
        slots = np.arange(size.size) + np.cumsum(split) - split
        new_size[slots] = np.where(split, 0, size)
        new_count[slots] = np.where(split, 0, count)
        new_size[slots[split]] = left
        new_count[slots[split]] = to_left
        new_size[slots[split] + 1] = right
        new_count[slots[split] + 1] = count[split] - to_left
        keep = new_count > 0
        size, count = new_size[keep], new_count[keep]
    return count


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
    """Release ``m`` synthetic values or rows with the PYPP mechanism (docs/mathematics.md §2).

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
    if atoms.ndim not in (1, 2) or (atoms.ndim == 2 and atoms.shape[1] == 0):
        raise ValueError(f"atoms must be an array of shape (k,) or (k, d) with d >= 1, got shape {atoms.shape}")
    counts = check_multiplicities(multiplicities)
    if atoms.shape[0] != counts.size:
        raise ValueError(f"atoms has {atoms.shape[0]} rows but multiplicities has {counts.size} entries")
    check_release_budget(1, check_release_size(m), 1 if atoms.ndim == 1 else atoms.shape[1])
    d = 1 if atoms.ndim == 1 else atoms.shape[1]
    bases = _per_column(base, d, "base")
    digits = _per_column(decimals, d, "decimals")
    z = check_py_parameters(sigma, theta, counts.size)[2]
    if z is not None:
        # Checked before sampling: whether the guarantee holds must not depend on the draw.
        domain = public_domain_size(bases)
        if domain is None:
            raise ValueError(
                "sigma < 0 (Dirichlet–multinomial over z public categories) releases unobserved categories by "
                "name, so every column needs a public domain: a public grid step for a numeric column, a public "
                "category list for a categorical one. A fresh value for an unobserved category would be "
                "impossible under a neighbour that lacks it, a singular output that voids the pure ε-DP "
                "guarantee (docs/mathematics.md §3.3, §3.3.1)")
        if domain != z:
            raise ValueError(f"theta must equal z*|sigma| with z = {domain:,}, the size of the public category "
                             f"domain (the product of the columns' public lists), got z = theta/|sigma| = {z:,}")
    old, new = py_predictive_counts(counts, sigma, theta, m, rng)
    k, n_new = counts.size, new.size

    if n_new and z is not None:
        new_atoms = _unobserved_public_rows(bases, atoms, n_new, rng)
        all_atoms = np.concatenate([atoms.astype(object), new_atoms])
    elif n_new:
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


_ENUMERATE_DOMAIN = 1 << 20   # public domains up to this size are listed; larger ones are sampled


def public_domain_can_serve(z: int, observed: int, size: int) -> bool:
    """Whether :func:`pypp_release` can give ``size`` new blocks distinct unobserved rows of a
    public domain of ``z`` rows of which ``observed`` occur in the data (σ < 0).

    Domains up to 2^20 rows are listed, so any ``size ≤ z − observed`` is served; a larger
    domain is sampled by rejection and needs at least ``max(2·size, ⌊z/2⌋)`` unobserved rows
    (an acceptance rate of at least 1/2). The release planner offers only what this accepts.
    """
    free = int(z) - int(observed)
    if size > free:
        return False
    return int(z) <= _ENUMERATE_DOMAIN or free >= max(2 * int(size), int(z) // 2)


def _unobserved_public_rows(bases, atoms: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` distinct rows of the public product domain that are not atoms, uniformly.

    The z − k unobserved categories of the Dirichlet–multinomial are exchangeable, so
    giving the new blocks distinct unobserved categories uniformly at random without
    replacement is exactly the mechanism's law. Domains up to 2^20 rows are listed;
    larger ones are sampled by rejection (the acceptance rate is at least 1/2 whenever
    k + size ≤ z/2; a nearly exhausted large domain is refused).
    """
    # a grid's points stay an array (up to 10^7 of them); a category list is a tuple
    cats = [b.categories if isinstance(b.categories, np.ndarray) else tuple(b.categories) for b in bases]
    d = len(cats)
    rows = atoms.reshape(atoms.shape[0], -1) if atoms.ndim == 2 else atoms[:, None]
    observed = {tuple(r) for r in rows.tolist()}
    z = math.prod(len(c) for c in cats)
    free = z - len(observed)
    if size > free:
        raise ValueError(f"the release needs {size} unobserved categories but the public domain of z = {z} "
                         f"has only {free}")
    if not public_domain_can_serve(z, len(observed), size):
        raise ValueError(f"a public domain of z = {z} categories with only {free} unobserved is too large "
                         f"to list and too full to sample; at most {_ENUMERATE_DOMAIN:,} categories are listed")
    if z <= _ENUMERATE_DOMAIN:
        grids = np.indices([len(c) for c in cats]).reshape(d, -1).T
        domain = [tuple(cats[j][i] for j, i in enumerate(g)) for g in grids.tolist()]
        unobserved = [r for r in domain if r not in observed]
        chosen = [unobserved[i] for i in rng.choice(len(unobserved), size=size, replace=False)]
    else:
        chosen, seen = [], set(observed)
        while len(chosen) < size:
            draw = np.column_stack([rng.integers(0, len(c), size=2 * (size - len(chosen))) for c in cats])
            for g in draw.tolist():
                row = tuple(cats[j][i] for j, i in enumerate(g))
                if row not in seen:
                    seen.add(row)
                    chosen.append(row)
                    if len(chosen) == size:
                        break
    out = np.empty((size, d), dtype=object)
    for i, row in enumerate(chosen):
        out[i] = row
    return out[:, 0] if atoms.ndim == 1 else out


def _stack_columns(columns: list[np.ndarray], atoms: np.ndarray) -> np.ndarray:
    if atoms.ndim == 1:
        return columns[0]
    if atoms.dtype == object or any(c.dtype == object for c in columns):
        out = np.empty((columns[0].size, len(columns)), dtype=object)
        for j, c in enumerate(columns):
            out[:, j] = c
        return out
    return np.column_stack(columns)
