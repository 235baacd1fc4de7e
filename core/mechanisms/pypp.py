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

import functools
from dataclasses import dataclass, field
from typing import Callable, Sequence

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
from ..data import CategoricalBase, GridBase, UniformBase, public_domain_size
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


class _Draws:
    """``size`` independent draws of a category index with probabilities ∝ ``weights``,
    kept in the form they were made in (:func:`categorical_draws` gives the method), so
    that values indexed by the categories are read with a single gather."""

    def __init__(self, weights, size: int, rng: np.random.Generator):
        w = np.asarray(weights, dtype=float)
        if w.ndim != 1 or w.size == 0 or not np.all(np.isfinite(w)) or np.any(w < 0) or not w.sum() > 0:
            raise ValueError("weights must be a non-empty 1-D array of finite numbers >= 0 with a positive sum")
        size = check_integer("size", size, minimum=0)
        rng = check_rng(rng)
        self.k = k = w.size
        if size <= 2 * k:                                  # few draws: the inverse transform
            cdf = np.cumsum(w)
            self.owner, self.n_whole = np.arange(k, dtype=np.intp), k
            self.column = np.minimum(np.searchsorted(cdf, rng.random(size) * cdf[-1], side="right"), k - 1)
            self.rest_at = self.rest_of = np.zeros(0, dtype=np.intp)
            return
        columns = 16 * k
        q = w * (columns / w.sum())                        # adds up to G, up to rounding
        whole = np.floor(q)
        rest = q - whole
        self.n_whole = int(whole.sum())
        self.owner = np.zeros(columns, dtype=np.intp)      # column → category (a rests' column: set per draw)
        self.owner[:self.n_whole] = np.repeat(np.arange(k, dtype=np.intp), whole.astype(np.intp))
        self.column = rng.integers(0, columns, size=size)
        # the G − n_whole columns of the rests hold the categories' rests in proportion: the
        # draws that land there are draws ∝ the rests, made the same way (a few % of the draws)
        self.rest_at = np.flatnonzero(self.column >= self.n_whole)
        if self.rest_at.size:
            self.rest_of = _Draws(rest, self.rest_at.size, rng).take(np.arange(k, dtype=np.intp))
        else:
            self.rest_of = np.zeros(0, dtype=np.intp)

    def take(self, values: np.ndarray) -> np.ndarray:
        """``values[draws]``, for values indexed by the categories (shape (≥ k, …))."""
        out = values[self.owner][self.column]
        out[self.rest_at] = values[self.rest_of]
        return out

    def at(self, positions: np.ndarray) -> np.ndarray:
        """The categories drawn at ``positions``."""
        out = self.owner[self.column[positions]]
        j = np.searchsorted(self.rest_at, positions)
        hit = (j < self.rest_at.size) & (self.rest_at[np.minimum(j, max(self.rest_at.size - 1, 0))] == positions) \
            if self.rest_at.size else np.zeros(len(positions), dtype=bool)
        out[hit] = self.rest_of[j[hit]]
        return out

    def counts(self) -> np.ndarray:
        """How many draws fell on each category, shape (k,)."""
        if self.owner.size == self.k:
            return np.bincount(self.column, minlength=self.k)
        per_column = np.bincount(self.column, minlength=self.owner.size)[:self.n_whole]
        whole = np.bincount(self.owner[:self.n_whole], weights=per_column, minlength=self.k)
        return np.rint(whole).astype(np.int64) + np.bincount(self.rest_of, minlength=self.k)


def categorical_draws(weights, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` independent draws of a category index with probabilities ∝ ``weights``.

    Exact. Few draws (at most twice the number of categories k): inverse transform on the
    cumulative weights. Many: the total mass is cut into G = 16k columns of mass 1/G; a
    category holding ⌊G·p_i⌋ whole columns owns them, and the fractional rests of all the
    categories fill the remaining columns (as many as the rests add up to). A draw is one
    column, uniform among the G: a whole column answers with one look-up, and the draws that
    land in the rests (at most 1/16 of them) are draws ∝ the rests, made the same way — O(1)
    expected work a draw, about the cost of drawing records with replacement (like Walker's
    alias method, with one look-up for most draws instead of two and a comparison).

    Parameters
    ----------
    weights : array_like of float ≥ 0, shape (k,), finite, with a positive sum
    size : int ≥ 0
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of intp, shape (size,)
    """
    draws = _Draws(weights, size, rng)
    return draws.take(np.arange(draws.k, dtype=np.intp))


def _sequence_release(atoms, counts, sigma, theta, m, rng, new_values):
    """One PYPP release (σ ∈ [0, 1)) in uniformly random order, without shuffling the m draws:
    ``(values, is_new, old, new_counts)``, ``old()`` counting the copies of each atom.

    Given the posterior weights :math:`(P_1,\\dots,P_k,P_{new})\\sim\\mathrm{Dir}(n_i-\\sigma,\\
    \\theta+k\\sigma)` the m draws are independent: atom i with probability :math:`P_i`, a new
    value with :math:`P_{new}` — the multinomial counts of :func:`py_predictive_counts` in
    uniformly random order. So the number of new draws is :math:`L\\sim\\mathrm{Bin}(m,
    P_{new})`, at a uniformly random set of L positions, and every other position holds an
    independent draw of the old atoms (:class:`_Draws`; made at every position, the L new
    positions then overwritten). The L new draws are seated in a Chinese restaurant
    (:func:`core.privacy.crp_tables`); their partition is exchangeable, so the K blocks'
    labels go to the new positions in uniformly random order. ``new_values(K)`` gives the
    K new values (from the base measure). Cost O(k + m).
    """
    k = counts.size
    weights = rng.dirichlet(np.append(counts - sigma, theta + k * sigma))
    n_new_draws = int(rng.binomial(m, min(1.0, max(0.0, float(weights[k])))))
    _, sizes = crp_tables(n_new_draws, sigma, theta + k * sigma, rng, return_sizes=True)
    new_atoms = new_values(sizes.size) if sizes.size else None
    all_atoms = atoms if new_atoms is None else np.concatenate([atoms, new_atoms])  # promotes int+float, str+object
    is_new = np.zeros(m, dtype=bool)
    if n_new_draws == m:
        labels = np.repeat(np.arange(k, k + sizes.size, dtype=np.intp), sizes)
        return all_atoms[rng.permutation(labels)], ~is_new, np.zeros(k, dtype=np.int64), sizes
    draws = _Draws(weights[:k], m, rng)
    values = draws.take(all_atoms)
    positions = rng.choice(m, size=n_new_draws, replace=False) if n_new_draws else np.zeros(0, dtype=np.intp)
    if n_new_draws:
        labels = np.repeat(np.arange(k, k + sizes.size, dtype=np.intp), sizes)
        values[positions] = all_atoms[rng.permutation(labels) if sizes.size > 1 else labels]
        is_new[positions] = True

    def count_old():
        return draws.counts() - np.bincount(draws.at(positions), minlength=k)

    return values, is_new, count_old, sizes


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
    old : ndarray of int, or a callable that counts them
        Gives :attr:`old_counts`.
    new_counts : ndarray of int
        As returned by :func:`py_predictive_counts`.
    old_counts : ndarray of int (property)
        As returned by :func:`py_predictive_counts`.
    """

    values: np.ndarray
    is_new: np.ndarray
    old: np.ndarray | Callable[[], np.ndarray] = field(repr=False)
    new_counts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @functools.cached_property
    def old_counts(self) -> np.ndarray:
        """:math:`S_i`, the copies of each confidential value (counted on first use: most
        callers read the values only, and counting m draws costs a pass over them)."""
        return np.asarray(self.old() if callable(self.old) else self.old)

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
        Post-processing: round new numeric values to these decimals. Typed (public), it
        is data-independent and leaves every guarantee unchanged; a precision read off
        the data would not be (docs/mathematics.md §2.4, §2.6).

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
        # Whether the new rows can be named must not depend on the draw either: the worst case, min(m, z − k)
        # new blocks, is checked before sampling (a domain up to 2^20 rows always serves it).
        if not public_domain_can_serve(z, counts.size, min(int(m), z - counts.size)):
            raise ValueError(f"a public domain of z = {z:,} categories with only {z - counts.size:,} unobserved is "
                             f"too large to list and too full to sample a release of m = {int(m):,}; at most "
                             f"{_ENUMERATE_DOMAIN:,} categories are listed")
    if z is None:
        def new_values(size):
            if any(b is None for b in bases):
                raise ValueError("base must give a base measure for every column: the release contains new values")
            return _new_atoms(atoms, bases, digits, size, rng)

        values, is_new, old, new = _sequence_release(atoms, counts, sigma, theta, m, rng, new_values)
        return SyntheticRelease(values=values, is_new=is_new, old=old, new_counts=new)
    old, new = py_predictive_counts(counts, sigma, theta, m, rng)
    k, n_new = counts.size, new.size
    if n_new:
        new_atoms = _unobserved_public_rows(bases, atoms, n_new, rng)
        all_atoms = np.concatenate([atoms.astype(object), new_atoms])
    else:
        all_atoms = atoms
    # intp, not a narrower type: numpy's shuffle has a fast path for native-width items.
    index = np.repeat(np.arange(k + n_new, dtype=np.intp), np.concatenate([old, new]))
    rng.shuffle(index)
    return SyntheticRelease(values=all_atoms[index], is_new=index >= k, old=old, new_counts=new)


def _new_atoms(atoms: np.ndarray, bases: list, digits: list, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` new values (rows) drawn from the base measure ``H`` (σ ≥ 0), rounded to ``digits``.

    Each column's factor of ``H`` draws without looking at ``atoms`` (only their shape and
    dtype shape the output array): a categorical column's new labels come from its public
    list or are fresh, never "the categories the data lack" (docs/mathematics.md §2.4)."""
    columns = []
    for j, b in enumerate(bases):
        # H is fixed before the data are seen: no base measure is shown the atoms (docs/mathematics.md §2.4)
        col = b.sample(size, rng)
        if digits[j] is not None and not isinstance(b, CategoricalBase):
            col = np.round(col, check_integer("decimals", digits[j], minimum=0))
        columns.append(col)
    return _stack_columns(columns, atoms)


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
    # a grid's points stay an array (up to 10^7 of them); a category list is a tuple. A grid column
    # that keeps its missing cells as a value has one more public category, the missing atom (NaN in
    # transformed units), as a category list holds the missing marker None (docs/mathematics.md §2.5).
    cats = [_grid_domain(b) if isinstance(b, GridBase) else tuple(b.categories) for b in bases]
    d = len(cats)
    rows = atoms.reshape(atoms.shape[0], -1) if atoms.ndim == 2 else atoms[:, None]
    observed = {_row_key(r) for r in rows.tolist()}
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
        unobserved = [r for r in domain if _row_key(r) not in observed]
        chosen = [unobserved[i] for i in rng.choice(len(unobserved), size=size, replace=False)]
    else:
        chosen, seen = [], set(observed)
        while len(chosen) < size:
            draw = np.column_stack([rng.integers(0, len(c), size=2 * (size - len(chosen))) for c in cats])
            for g in draw.tolist():
                row = tuple(cats[j][i] for j, i in enumerate(g))
                if _row_key(row) not in seen:
                    seen.add(_row_key(row))
                    chosen.append(row)
                    if len(chosen) == size:
                        break
    out = np.empty((size, d), dtype=object)
    for i, row in enumerate(chosen):
        out[i] = row
    return out[:, 0] if atoms.ndim == 1 else out


#: What the missing atom of a numeric column (NaN, which equals nothing) is compared as.
_MISSING_NUMBER = ("missing number",)


def _row_key(row) -> tuple:
    """A row of atoms as a set member: NaN — a numeric column's missing atom — equal to itself."""
    return tuple(_MISSING_NUMBER if isinstance(v, float) and v != v else v for v in row)


def _grid_domain(base: GridBase) -> np.ndarray:
    """The public categories of a grid column under σ < 0: its points, and the missing atom (NaN)
    when the column keeps missing cells as a value."""
    return np.append(base.categories.astype(float), np.nan) if base.missing else base.categories


def _stack_columns(columns: list[np.ndarray], atoms: np.ndarray) -> np.ndarray:
    if atoms.ndim == 1:
        return columns[0]
    if atoms.dtype == object or any(c.dtype == object for c in columns):
        out = np.empty((columns[0].size, len(columns)), dtype=object)
        for j, c in enumerate(columns):
            out[:, j] = c
        return out
    return np.column_stack(columns)
