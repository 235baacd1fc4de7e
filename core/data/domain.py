"""Public domains and base measures H of the release: a uniform law on public bounds per
numeric column, a categorical law over public categories, and a uniform law over a numeric
column's public grid (docs/mathematics.md §2.4, §3.3.1).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import math
from decimal import Decimal

import numpy as np

from ..validation import (
    MAX_RELEASE_SIZE,
    check_bounds,
    check_counts,
    check_grid_step,
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
    """Base measure of a categorical column, fixed before the data are seen
    (docs/mathematics.md §2.4).

    σ ≥ 0 (:meth:`sample`): each new value (each new table of the Chinese restaurant) is
    drawn independently and uniformly from the *whole* public list of ``categories`` (the
    missing marker ``None``, present when missing is a value, excluded: ``H`` draws
    categories only), so it may coincide with an observed category; without a list the
    new values get the fresh labels ``new_category_1``, ``new_category_2``, … Either law is
    the same for every dataset: the release with fresh labels, followed by a relabelling
    with randomness independent of the data (post-processing).

    σ < 0: the public list (with the missing marker) is the Dirichlet–multinomial's domain
    of z categories; the unobserved ones are released by name
    (:func:`core.mechanisms.pypp_release`, docs/mathematics.md §3.3), not through
    :meth:`sample`.
    """

    categories: tuple | None = None

    def sample(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` new labels (σ ≥ 0): iid uniform over the public list, else fresh names.

        ``0 ≤ size ≤ MAX_RELEASE_SIZE``. The law does not depend on the data: nothing
        about the observed values is an argument.
        """
        size = _check_sample_size(size)
        rng = check_rng(rng)
        if self.categories is not None:
            public = [c for c in self.categories if c is not None]
            if public:
                return np.asarray(public, dtype=object)[rng.integers(0, len(public), size=size)]
        return np.array([f"new_category_{j}" for j in range(1, size + 1)], dtype=object)


@dataclass(frozen=True)
class PublicGrid:
    """A numeric column's public grid: the points ``g⁻¹(g(lo) + j·s)``, ``j = 0 … z − 1``
    (docs/mathematics.md §3.3.1).

    ``g`` is the identity, or log when ``log``. Bounds and step are public: chosen without
    looking at the data. A value is released as its nearest grid point (clipped to the
    bounds first), so the column becomes categorical over ``z`` public points — what the
    Dirichlet–multinomial (σ < 0) needs for its pure ε-DP guarantee.

    Attributes
    ----------
    lo, hi : float
        Public bounds in original units (``lo > 0`` on a log grid).
    step : float
        ``s > 0``, in original units (or in log units when ``log``).
    log : bool
    size : int
        ``z = ⌊(g(hi) − g(lo))/s⌋ + 1`` (see :func:`core.validation.check_grid_step`).
    """

    lo: float
    hi: float
    step: float
    log: bool = False
    size: int = field(init=False)

    def __post_init__(self):
        lo, hi = check_bounds((self.lo, self.hi), "bounds of a grid", positive=bool(self.log))
        step, z = check_grid_step(self.step, (lo, hi), log=bool(self.log))
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)
        object.__setattr__(self, "step", step)
        object.__setattr__(self, "size", z)

    def _decimals(self) -> int:
        """Decimal places of a linear grid's points: those of ``lo`` and ``s`` as printed."""
        places = [-Decimal(repr(v)).normalize().as_tuple().exponent for v in (self.lo, self.step)]
        return int(min(15, max(0, *places)))

    def points(self) -> np.ndarray:
        """The ``z`` grid points in original units, increasing; ``int64`` when they are all whole."""
        j = np.arange(self.size, dtype=np.float64)
        if self.log:
            x = np.exp(math.log(self.lo) + j * self.step)
        else:
            # lo + j·s rounded to the decimals lo and s are written with: 0.1·3 is 0.3, not 0.30000000000000004
            x = np.round(self.lo + j * self.step, self._decimals())
        x = np.clip(x, self.lo, self.hi)
        if np.all(x == np.round(x)) and np.all(np.abs(x) < 2.0**53):
            return x.astype(np.int64)
        return x

    def index_of(self, values) -> np.ndarray:
        """Index ``j`` of the grid point nearest to each value (values clipped to the bounds first)."""
        x = np.clip(np.asarray(values, dtype=np.float64), self.lo, self.hi)
        t = (np.log(x) - math.log(self.lo)) if self.log else (x - self.lo)
        return np.clip(np.rint(t / self.step), 0, self.size - 1).astype(np.intp)


@dataclass(frozen=True, eq=False)
class GridBase:
    """Base measure of a column on a public grid: uniform over its ``z`` points, given in the
    column's transformed units (``categories``, increasing). New values are grid points; with
    σ < 0 the unobserved points are the public categories released by name.

    ``missing``: the column keeps its missing cells as a value (docs/mathematics.md §2.5), an
    atom beside the grid points that :meth:`sample` never draws (σ ≥ 0); under σ < 0 it is one
    more public category (z = points + 1), released by name as an empty cell like the missing
    marker of a public category list."""

    categories: np.ndarray
    missing: bool = False

    def sample(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` iid draws, uniform over the grid points; ``0 ≤ size ≤ MAX_RELEASE_SIZE``."""
        size = _check_sample_size(size)
        return self.categories[check_rng(rng).integers(0, len(self.categories), size=size)]


def public_domain_size(bases) -> int | None:
    """z of a σ < 0 release: the product of the public category lists, or None if a column has none.

    Under σ < 0 (Dirichlet–multinomial over z public categories, docs/mathematics.md §3.3)
    the pure ε-DP guarantee needs every unobserved category to be released *by name*, as
    an element of a public domain fixed without looking at the data: a fresh value for
    it would be impossible under a neighbour that does not hold it — a singular output.
    """
    sizes = []
    for b in bases:
        if not (isinstance(b, (CategoricalBase, GridBase)) and b.categories is not None):
            return None
        # a grid column keeping missing cells as a value: its points and the missing atom
        sizes.append(len(b.categories) + (isinstance(b, GridBase) and b.missing))
    return math.prod(sizes)
