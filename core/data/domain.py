"""Public domains and base measures H of the release: a uniform law on public bounds per
numeric column and a categorical law over public categories (docs/mathematics.md §2).
"""
from __future__ import annotations

from dataclasses import dataclass

import math

import numpy as np

from ..validation import (
    MAX_RELEASE_SIZE,
    check_bounds,
    check_counts,
    check_rng,
)



@dataclass(frozen=True)
class UniformBase:
    """Uniform base measure on a public interval ``[lo, hi]`` for a numeric column."""

    lo: float
    hi: float

    def __post_init__(self):
        lo, hi = check_bounds((self.lo, self.hi))
        if not math.isfinite(hi - lo):
            raise ValueError(f"bounds must have a finite width hi - lo (at most ~1.8e308), got lo={lo!r}, hi={hi!r}")

    def sample(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` iid draws from Uniform[lo, hi]; ``0 ≤ size ≤ MAX_RELEASE_SIZE``."""
        return check_rng(rng).uniform(self.lo, self.hi, size=_check_sample_size(size))


def _check_sample_size(size) -> int:
    """Number of new values drawn from a base measure: one integer in [0, MAX_RELEASE_SIZE]."""
    if np.ndim(size) != 0:
        raise ValueError(f"size must be one integer in [0, {MAX_RELEASE_SIZE}], got {size!r}")
    return int(check_counts(size, "size", maximum=MAX_RELEASE_SIZE))


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
        """``size`` new labels: unobserved public categories if there are enough, else fresh names.

        ``0 ≤ size ≤ MAX_RELEASE_SIZE``; ``observed`` is the list of observed labels.
        """
        size = _check_sample_size(size)
        rng = check_rng(rng)
        if self.categories is not None and observed is not None:
            seen = set(observed)
            unobserved = [c for c in self.categories if c not in seen]
            if len(unobserved) >= size:
                pick = rng.choice(len(unobserved), size=size, replace=False)
                return np.asarray(unobserved, dtype=object)[pick]
        return np.array([f"new_category_{j}" for j in range(1, size + 1)], dtype=object)


def public_domain_size(bases) -> int | None:
    """z of a σ < 0 release: the product of the public category lists, or None if a column has none.

    Under σ < 0 (Dirichlet–multinomial over z public categories, docs/mathematics.md §3.3)
    the pure ε-DP guarantee needs every unobserved category to be released *by name*, as
    an element of a public domain fixed without looking at the data: a fresh value for
    it would be impossible under a neighbour that does not hold it — a singular output.
    """
    sizes = []
    for b in bases:
        if not (isinstance(b, CategoricalBase) and b.categories is not None):
            return None
        sizes.append(len(b.categories))
    return math.prod(sizes)
