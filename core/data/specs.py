"""What the user says about a column: its kind, public bounds, rounding, log scale, public domain
and what a missing cell means.
"""
from __future__ import annotations

from dataclasses import dataclass


from ..validation import (
    check_bounds,
    check_choice,
    check_flag,
    check_grid_step,
    check_integer,
)
from .domain import PublicGrid

_KINDS = ("numeric", "categorical")

#: What a missing cell of a released column may mean (:attr:`ColumnSpec.missing`):
#: ``"value"`` — missing is one more value (one more atom, released as an empty cell);
#: ``"drop"`` — records with a missing cell in the column are removed before the mechanism.
MISSING_CHOICES = ("value", "drop")


@dataclass(frozen=True)
class ColumnSpec:
    """How to prepare one column for the mechanism.

    Parameters
    ----------
    name : str
        Column name in the DataFrame.
    kind : {'numeric', 'categorical'}
        A categorical column keeps its values as labels; new values drawn from ``H``
        are ``new_category_1``, ``new_category_2``, … (docs/mathematics.md §2).
    log : bool
        Numeric only: work with :math:`\\log x` (values must be > 0).
    bounds : (lo, hi) or None
        Numeric only: *public* bounds in the column's original units (before log).
        Values outside are clipped to them. ``None`` takes them from the data, which is
        not private (:class:`~core.validation.PrivacyLeakWarning`).
    decimals : int or None
        Numeric only: round to this public precision, in original units, before any
        other transform (``2`` -> cents, ``0`` -> units, ``-2`` -> hundreds; numpy's
        round-half-to-even). Also applied to new synthetic values by
        :meth:`PreparedData.to_original` (data-independent post-processing,
        docs/mathematics.md §2.4). ``None`` (default): no rounding, and new values keep
        their full float64 precision — nothing read off the data.
    scale : bool
        Numeric only: map ``[g(lo), g(hi)]`` affinely to ``[0, 1]`` (``g`` = log or
        identity), as the histogram baselines of docs/mathematics.md §4 need; otherwise ``H`` is
        uniform on ``[g(lo), g(hi)]``.
    categories : sequence or None
        Categorical only: the public list of categories (docs/mathematics.md §2–3.3: with σ < 0,
        ``z = len(categories)``). Observed values must belong to it.
    grid : float or None
        Numeric only: a public grid step ``s > 0`` (in log units when ``log``) on the public
        ``bounds``, which it needs. Each value is replaced by its nearest grid point
        ``g⁻¹(g(lo) + j·s)`` and the column becomes categorical over those ``z`` public
        points; released values are grid points (docs/mathematics.md §3.3.1).
    missing : {None, 'value', 'drop'}
        What a missing cell (empty, ``NA``, NaN) of this column means (docs/mathematics.md
        §2.5). ``None`` (default): no choice yet, and :func:`prepare` refuses a column
        with missing cells, naming both choices. ``'value'``: missing is one more value —
        one more atom, released as an empty cell; with a public category list it is one
        more public category (``z + 1``); in a numeric column it lies outside the numeric
        range and ``H`` still draws numbers only. ``'drop'``: the records with a missing
        cell in this column are removed before the mechanism, so n is the count after
        dropping — a data-dependent choice the reports state.
    precision_from_data : bool
        Numeric only, without ``decimals`` or a grid: round new values to the precision
        read off the data (the fewest decimals ≤ 10 to which every value is rounded; ``0``
        for a column read as whole numbers), so invented values look like the recorded
        ones. The precision is then a statistic of the confidential data that no guarantee
        covers: a data-dependent choice the reports name (docs/mathematics.md §2.4, §2.6).
        Default ``False``: the output precision is public.
    """

    name: str
    kind: str = "numeric"
    log: bool = False
    bounds: tuple[float, float] | None = None
    decimals: int | None = None
    scale: bool = True
    categories: tuple | None = None
    grid: float | None = None
    missing: str | None = None
    precision_from_data: bool = False

    def __post_init__(self):
        if self.name is None:
            raise ValueError("name must be a column name, got None")
        object.__setattr__(self, "precision_from_data",
                           check_flag(f"precision_from_data of column {self.name!r}", self.precision_from_data))
        if self.kind not in _KINDS:
            raise ValueError(f"kind of column {self.name!r} must be 'numeric' or 'categorical', got {self.kind!r}")
        if self.missing is not None:
            check_choice(f"missing of column {self.name!r}", self.missing, MISSING_CHOICES)
        if self.kind == "categorical":
            numeric_only = [opt for opt, on in (("log", self.log), ("bounds", self.bounds is not None),
                                                ("decimals", self.decimals is not None),
                                                ("grid", self.grid is not None),
                                                ("precision_from_data", self.precision_from_data)) if on]
            if numeric_only:
                raise ValueError(f"column {self.name!r} is categorical: {', '.join(numeric_only)} apply to "
                                 "numeric columns only")
            if self.categories is not None:
                categories = tuple(self.categories)
                if len(categories) == 0 or len(set(categories)) != len(categories):
                    raise ValueError(f"categories of column {self.name!r} must be a non-empty list without "
                                     f"repeats, got {self.categories!r}")
                object.__setattr__(self, "categories", categories)
            return
        if self.categories is not None:
            raise ValueError(f"column {self.name!r} is numeric: categories apply to categorical columns only")
        if self.bounds is not None:
            object.__setattr__(self, "bounds", check_bounds(self.bounds, f"bounds of column {self.name!r}",
                                                            positive=bool(self.log), keep_integers=True))
        if self.decimals is not None:
            object.__setattr__(self, "decimals", check_integer(f"decimals of column {self.name!r}",
                                                               self.decimals, minimum=-15, maximum=15))
            if self.precision_from_data:
                raise ValueError(f"column {self.name!r} has typed decimals ({self.decimals}): the output precision "
                                 "is public, so it cannot also be read off the data (precision_from_data must be "
                                 "False)")
        if self.grid is not None:
            if self.bounds is None:
                raise ValueError(f"grid of column {self.name!r} needs public bounds: a grid read off the data "
                                 "would not be public")
            if self.precision_from_data:
                raise ValueError(f"column {self.name!r} is on a public grid: its values are the public grid points, "
                                 "so there is no precision to read off the data (precision_from_data must be False)")
            step, _ = check_grid_step(self.grid, self.bounds, log=bool(self.log), name=f"grid of column {self.name!r}")
            object.__setattr__(self, "grid", step)

    @property
    def public_grid(self) -> PublicGrid | None:
        """The column's :class:`~core.data.PublicGrid`, or ``None`` without a grid step."""
        if self.grid is None:
            return None
        return PublicGrid(float(self.bounds[0]), float(self.bounds[1]), self.grid, log=bool(self.log))

    @property
    def public_domain(self) -> int | None:
        """Size of the column's public domain (grid points, or public categories, with the missing
        one when missing is a value), or ``None`` (no list, no grid)."""
        if self.grid is not None:
            # Missing kept as a value on a grid: one more public category beside the grid points (σ ≥ 0
            # releases it as an empty cell, H draws grid points only; σ < 0 names it like any point).
            return self.public_grid.size + (self.missing == "value")
        # missing is a value: one more public category (docs/mathematics.md §2.5)
        return None if self.categories is None else len(self.categories) + (self.missing == "value")


def normalise_specs(specs) -> list[ColumnSpec]:
    if isinstance(specs, (ColumnSpec, str)):
        specs = [specs]
    try:
        specs = [s if isinstance(s, ColumnSpec) else ColumnSpec(s) for s in specs]
    except TypeError:
        raise ValueError(f"specs must be a ColumnSpec, a column name or a list of them, got {specs!r}") from None
    if not specs:
        raise ValueError("choose at least one column to release")
    names = [s.name for s in specs]
    repeated = sorted({n for n in names if names.count(n) > 1}, key=names.index)
    if repeated:
        raise ValueError(f"column {repeated[0]!r} is chosen more than once; choose each column once")
    return specs
