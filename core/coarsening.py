"""Singleton-aware coarsening advisor for multi-column microdata (issue 14 §1).

Under PYPP a record is an atom, so with several columns almost every record is a
singleton and the instance-level release size is capped by the singleton limit
(docs/mathematics.md §3.1). Coarsening the columns merges records and removes singletons.
This module evaluates candidate transforms (docs/mathematics.md §3.5):

* numeric: rounding to a step (``round``), to significant digits (``signif``), on the
  log scale (``log_round``: :math:`\\exp(h\\,\\mathrm{round}(\\log x / h))`, a relative
  precision), top/bottom-coding at public bounds (``clip``);
* categorical: merging into ``"other"`` every category outside a public list (``keep``),
  or every category with fewer than ``min_count`` records (``min_count``: a rule that
  looks at the data, so **data-dependent**).

For each candidate (one transform per column) it reports ``k`` (distinct rows),
``k_1`` (singletons), the instance-level largest release size
:math:`m^*_x(\\varepsilon,\\delta,\\theta)` =
:func:`core.privacy.max_instance_synthetic_size` of the coarsened multiplicities, and the
coarsening cost per column:

* numeric: :math:`W_1` between the coarsened and the original column. Every transform
  here is a non-decreasing map ``T``, so the coupling :math:`(x, T(x))` is comonotone
  and therefore optimal in 1-D: :math:`W_1 = \\frac1n\\sum_i |T(x_i) - x_i|` exactly;
* categorical: :math:`W_1` under the discrete metric (0/1 cost), which is the total
  variation distance :math:`\\tfrac12\\sum_c |p_c - q_c|`.

**Data dependence.** A candidate whose *construction* reads the data (``min_count``, or
bounds read from the data) has ``data_dependent=True``. Independently of that, *choosing*
one candidate after seeing its singletons or m* is a choice made by looking at the
confidential data: no guarantee covers it (docs/mathematics.md §3.4); the advisor says so
in :data:`SELECTION_CAVEAT`.

Cost: each transform is applied and factorised once per column; each candidate then
combines integer codes and counts with one ``np.unique`` — O(d n log n) per candidate,
no Python loop over rows.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from .privacy import max_instance_synthetic_size
from .validation import check_bounds, check_choice, check_integer, check_real, check_row_counts

__all__ = [
    "SELECTION_CAVEAT",
    "AdvisorResult",
    "CoarseningCandidate",
    "ColumnTransform",
    "advise",
    "apply_candidate",
    "apply_coarsening",
    "candidate_grid",
    "coarsening_label",
    "default_transforms",
    "distinct_row_counts",
    "factor_codes",
    "frontier",
    "numeric_values",
    "transform_cost",
]

#: Largest number of candidates one :func:`advise` call evaluates (each costs ~10 ms at n = 10^5).
MAX_CANDIDATES = 2000

SELECTION_CAVEAT = ("Choosing a coarsening after seeing its singletons or m* is a choice made by looking at the "
                    "confidential data: no privacy number shown covers that choice (docs/mathematics.md §3.4). "
                    "Fix the coarsening from public information when the guarantee must cover it.")

_KINDS = ("identity", "round", "signif", "log_round", "clip", "keep", "min_count")
Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class ColumnTransform:
    """One data-independent (or flagged data-dependent) transform of one column.

    Parameters
    ----------
    column : str
    kind : {'identity', 'round', 'signif', 'log_round', 'clip', 'keep', 'min_count'}
    step : float > 0
        ``round``: :math:`\\mathrm{step}\\cdot\\mathrm{round}(x/\\mathrm{step})`;
        ``log_round``: step ``h`` of natural-log rounding (values must be > 0).
    digits : int in [1, 15]
        ``signif``: significant digits.
    bounds : (lo, hi)
        ``clip``: public bounds; values outside are set to the nearest bound.
    keep : tuple of labels
        ``keep``: public list of categories kept; every other becomes ``other_label``.
    min_count : int ≥ 2
        ``min_count``: categories with fewer records become ``other_label`` (reads the data).
    bounds_from_data : bool
        ``clip`` only: the bounds were read from the data (then ``data_dependent``).
    """

    column: str
    kind: str = "identity"
    step: float | None = None
    digits: int | None = None
    bounds: tuple[float, float] | None = None
    keep: tuple | None = None
    min_count: int | None = None
    other_label: str = "other"
    bounds_from_data: bool = False

    def __post_init__(self):
        check_choice("kind", self.kind, _KINDS)
        need = {"round": "step", "log_round": "step", "signif": "digits", "clip": "bounds", "keep": "keep",
                "min_count": "min_count"}.get(self.kind)
        if need is not None and getattr(self, need) is None:
            raise ValueError(f"transform {self.kind!r} of column {self.column!r} needs {need}")
        if self.step is not None:
            object.__setattr__(self, "step", check_real("step", self.step, low=0.0, high=1e300, low_open=True))
        if self.digits is not None:
            object.__setattr__(self, "digits", check_integer("digits", self.digits, minimum=1, maximum=15))
        if self.bounds is not None:
            object.__setattr__(self, "bounds", check_bounds(self.bounds, f"bounds of column {self.column!r}"))
        if self.keep is not None:
            object.__setattr__(self, "keep", tuple(self.keep))
        if self.min_count is not None:
            object.__setattr__(self, "min_count", check_integer("min_count", self.min_count, minimum=2,
                                                                maximum=2**62))

    @property
    def numeric(self) -> bool:
        """Whether the transform applies to numeric columns (else categorical; identity: both)."""
        return self.kind in ("round", "signif", "log_round", "clip")

    @property
    def data_dependent(self) -> bool:
        """The transform's construction reads the confidential data."""
        return self.kind == "min_count" or (self.kind == "clip" and self.bounds_from_data)

    @property
    def label(self) -> str:
        """Short human-readable description."""
        if self.kind == "identity":
            return f"{self.column}: as recorded"
        if self.kind == "round":
            return f"{self.column}: round to {self.step:g}"
        if self.kind == "signif":
            return f"{self.column}: {self.digits} significant digit(s)"
        if self.kind == "log_round":
            return f"{self.column}: log-scale step {self.step:g} (±{100 * math.expm1(self.step / 2):.3g}%)"
        if self.kind == "clip":
            src = " (bounds from the data)" if self.bounds_from_data else ""
            return f"{self.column}: top/bottom-code at [{self.bounds[0]:g}, {self.bounds[1]:g}]{src}"
        if self.kind == "keep":
            return f"{self.column}: keep {len(self.keep)} public categories, rest -> {self.other_label!r}"
        return f"{self.column}: categories with < {self.min_count} records -> {self.other_label!r} (data-dependent)"

    def to_dict(self) -> dict:
        """JSON-ready fields (only those set), for a recipe; :meth:`from_dict` reads them back."""
        out = {"column": self.column, "kind": self.kind}
        for name in ("step", "digits", "min_count"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        if self.bounds is not None:
            out["bounds"] = [self.bounds[0], self.bounds[1]]
        if self.keep is not None:
            out["keep"] = list(self.keep)
        if self.kind in ("keep", "min_count"):
            out["other_label"] = self.other_label
        if self.bounds_from_data:
            out["bounds_from_data"] = True
        return out

    @classmethod
    def from_dict(cls, obj) -> "ColumnTransform":
        """The transform of :meth:`to_dict`; unknown fields are refused (``ValueError``)."""
        if not isinstance(obj, Mapping):
            raise ValueError(f"a coarsening transform must be a JSON object, got {obj!r}")
        known = {"column", "kind", "step", "digits", "bounds", "keep", "min_count", "other_label",
                 "bounds_from_data"}
        unknown = sorted(set(obj) - known)
        if unknown:
            raise ValueError(f"unknown field(s) {unknown} in coarsening transform {dict(obj)!r}; known: "
                             f"{sorted(known)}")
        if "column" not in obj:
            raise ValueError(f"coarsening transform {dict(obj)!r} has no 'column'")
        fields = dict(obj)
        if fields.get("bounds") is not None:
            fields["bounds"] = tuple(fields["bounds"])
        if fields.get("keep") is not None:
            fields["keep"] = tuple(fields["keep"])
        return cls(**fields)

    def apply(self, values, weights=None) -> np.ndarray:
        """The transformed column, shape (n,).

        ``weights`` (shape (n,), whole numbers ≥ 0): each row stands for this many records
        (a frequency table); only ``min_count`` reads them (records per category).
        """
        if self.kind == "identity":
            return np.asarray(values)
        if self.numeric:
            out = self._apply_numeric(numeric_values(values, self.column))
            if not np.all(np.isfinite(out)):
                raise ValueError(f"{self.label} overflows for some values: choose a coarser step")
            return out
        labels = pd.Series(np.asarray(values, dtype=object))
        if labels.isna().any():
            raise ValueError(f"column {self.column!r} has missing values: remove or impute them first")
        if self.kind == "keep":
            merged = ~labels.isin(self.keep)
        else:
            per_label = (labels.value_counts() if weights is None
                         else pd.Series(np.asarray(weights)).groupby(labels.to_numpy(), sort=False).sum())
            merged = labels.map(per_label) < self.min_count
        return labels.where(~merged, self.other_label).to_numpy(dtype=object)


    def _apply_numeric(self, x: np.ndarray) -> np.ndarray:
        if self.kind == "round":
            exponent = math.log10(self.step)
            if exponent == round(exponent) and abs(exponent) <= 15:  # numpy's decimal rounding: no x/step error
                return np.round(x, -int(round(exponent)))
            with np.errstate(over="ignore"):
                return np.round(x / self.step) * self.step
        if self.kind == "signif":
            with np.errstate(divide="ignore"):
                mag = np.floor(np.log10(np.abs(x)))
            decimals = np.where(np.isfinite(mag), self.digits - 1 - mag, 0.0)
            # Like numpy.round: multiply by 10**d when d ≥ 0, divide by the exact 10**-d when d < 0;
            # two factors when 10**d would overflow (|x| below ~1e-290).
            first = np.where(decimals > 290, np.trunc(decimals / 2), 0.0)
            s1, s2 = 10.0 ** first, 10.0 ** np.abs(decimals - first)
            up = decimals >= 0
            return np.where(up, np.round(x * s1 * np.where(up, s2, 1.0)) / np.where(up, s2, 1.0) / s1,
                            np.round(x / np.where(up, 1.0, s2)) * np.where(up, 1.0, s2))
        if self.kind == "log_round":
            if np.any(x <= 0):
                raise ValueError(f"log-scale rounding of column {self.column!r} needs values > 0")
            return np.exp(np.round(np.log(x) / self.step) * self.step)
        return np.clip(x, self.bounds[0], self.bounds[1])


def coarsening_label(transforms) -> str:
    """One line describing a coarsening (its transforms' labels)."""
    return "; ".join(t.label for t in transforms)


def numeric_values(values, column: str) -> np.ndarray:
    """``values`` as finite floats; ``ValueError`` naming ``column`` otherwise."""
    try:
        x = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"column {column!r} must be numeric for this transform") from None
    if not np.all(np.isfinite(x)):
        raise ValueError(f"column {column!r} has missing or infinite values: remove or impute them first")
    return x


@dataclass(frozen=True)
class CoarseningCandidate:
    """One evaluated coarsening (a transform per column) — what the advisor table shows.

    Attributes
    ----------
    transforms : tuple of ColumnTransform
    k, singletons, n : int
        Distinct rows, singletons :math:`k_1` and records of the coarsened data.
    m_star : int
        Instance-level largest release size :func:`core.privacy.max_instance_synthetic_size`
        at (eps, delta, theta) of the coarsened multiplicities (capped at ``m_cap``).
    cost : tuple of float
        Coarsening cost per column (W1 in the column's units; TV for categorical).
    relative_cost : float
        :math:`\\max_c \\mathrm{cost}_c / \\mathrm{scale}_c` (scales of :func:`advise`): one
        unit-free number for a frontier plot.
    data_dependent : bool
        Some transform was constructed by reading the data.
    """

    transforms: tuple
    k: int
    singletons: int
    n: int
    m_star: int
    cost: tuple
    relative_cost: float
    data_dependent: bool
    eps: float
    delta: float
    theta: float

    @property
    def label(self) -> str:
        return coarsening_label(self.transforms)

    def to_dict(self) -> dict:
        row = {"candidate": self.label, "k": self.k, "singletons": self.singletons, "m_star": self.m_star,
               "relative_cost": self.relative_cost, "data_dependent": self.data_dependent}
        for t, c in zip(self.transforms, self.cost):
            row[f"cost[{t.column}]"] = c
        return row


@dataclass(frozen=True)
class AdvisorResult:
    """All evaluated candidates and the scope of their numbers."""

    candidates: tuple
    scope: str = "instance-level (computed from the confidential data; for the curator)"
    caveat: str = SELECTION_CAVEAT

    def table(self) -> pd.DataFrame:
        """One row per candidate, with ``on_frontier`` (per-column costs) and ``on_relative_frontier``."""
        frame = pd.DataFrame([c.to_dict() for c in self.candidates])
        for name, by in (("on_frontier", "columns"), ("on_relative_frontier", "relative")):
            front = {id(c) for c in frontier(self.candidates, by=by)}
            frame[name] = [id(c) in front for c in self.candidates]
        return frame

    def frontier(self, *, by: str = "columns") -> list:
        return frontier(self.candidates, by=by)


def default_transforms(column: str, kind: str, *, bounds=None, log: bool = False) -> list[ColumnTransform]:
    """A data-independent menu of transforms for one column.

    Numeric: as recorded; 1–3 significant digits; log-scale steps 0.05, 0.1, 0.2 when
    ``log``; with public ``bounds`` (lo, hi) rounding to :math:`w/10^j`, j = 1..3, where
    :math:`w = 10^{\\lfloor\\log_{10}(hi - lo)\\rfloor}`. Nothing is read from the data.
    Categorical: as recorded only (a public ``keep`` list is the user's to give).
    """
    kind = check_choice("kind", kind, ("numeric", "categorical"))
    if bounds is not None:
        bounds = check_bounds(bounds, f"bounds of column {column!r}")
    out = [ColumnTransform(column)]
    if kind == "categorical":
        return out
    out += [ColumnTransform(column, "signif", digits=d) for d in (3, 2, 1)]
    if log:
        out += [ColumnTransform(column, "log_round", step=h) for h in (0.05, 0.1, 0.2)]
    if bounds is not None:
        lo, hi = bounds
        width = 10.0 ** math.floor(math.log10(float(hi) - float(lo)))
        out += [ColumnTransform(column, "round", step=width / 10.0**j) for j in (3, 2, 1)]
    return out


def candidate_grid(per_column: Mapping[str, Sequence[ColumnTransform]], *,
                   max_candidates: int = MAX_CANDIDATES) -> list[tuple]:
    """Every combination of one transform per column (the Cartesian product), capped.

    Raises ValueError when the product exceeds ``max_candidates``.
    """
    lists = [list(v) for v in per_column.values()]
    if not lists or any(len(v) == 0 for v in lists):
        raise ValueError("per_column must give at least one transform for each of at least one column")
    size = math.prod(len(v) for v in lists)
    max_candidates = check_integer("max_candidates", max_candidates, minimum=1, maximum=MAX_CANDIDATES)
    if size > max_candidates:
        raise ValueError(f"the grid has {size} candidates, more than max_candidates = {max_candidates}; "
                         "offer fewer transforms per column")
    return [tuple(c) for c in itertools.product(*lists)]


def transform_cost(original, coarsened, numeric: bool, weights=None) -> float:
    """Utility cost of a coarsening of one column (docs/mathematics.md §3.5).

    Numeric: W1 between the column and its image, ``mean |T(x) − x|`` for a non-decreasing
    T (the comonotone coupling is optimal). Categorical: total variation between the two
    category distributions. ``weights``: records per row (a frequency table).
    """
    if numeric:
        # Non-decreasing transform: the comonotone coupling (x, T(x)) is optimal, W1 = mean |T(x) − x|.
        return float(np.average(np.abs(coarsened - original), weights=weights))
    w = np.ones(len(original)) if weights is None else np.asarray(weights, dtype=float)
    a = pd.Series(w).groupby(np.asarray(original, dtype=object)).sum() / w.sum()
    b = pd.Series(w).groupby(np.asarray(coarsened, dtype=object)).sum() / w.sum()
    p, q = a.align(b, fill_value=0.0)
    return float(0.5 * np.abs(p - q).sum())


def factor_codes(values: np.ndarray) -> tuple[np.ndarray, int]:
    """(int64 code of each value, number of distinct values), in order of first appearance."""
    codes, uniques = pd.factorize(values, sort=False)
    return codes.astype(np.int64), len(uniques)


def distinct_row_counts(columns: list[tuple[np.ndarray, int]], weights=None) -> tuple[np.ndarray, np.ndarray]:
    """(index of the first row of each distinct row, multiplicities) from per-column integer codes
    (``weights``: records per row, for a frequency table)."""
    key, width = columns[0]
    for codes, size in columns[1:]:
        if width * size >= 2**62:  # re-compress so the mixed-radix key stays in int64
            _, key = np.unique(key, return_inverse=True)
            width = int(key.max()) + 1
        key = key * size + codes
        width *= size
    if weights is None:
        _, first, counts = np.unique(key, return_index=True, return_counts=True)
        return first, counts
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return first, np.bincount(inverse.ravel(), weights=weights, minlength=first.size).astype(np.int64)


def advise(frame: pd.DataFrame, candidates: Sequence[Sequence[ColumnTransform]], *, eps, delta, theta,
           m_cap: int = 10**6, cost_scales: Mapping[str, float] | None = None,
           progress: Progress | None = None, counts=None) -> AdvisorResult:
    """Evaluate coarsening candidates on the release columns of ``frame``.

    Parameters
    ----------
    frame : pandas.DataFrame, shape (n, d)
        The release columns (every column of ``frame`` is part of a record). Columns
        without a transform in a candidate are kept as recorded.
    candidates : sequence of sequences of ColumnTransform
        E.g. from :func:`candidate_grid`. At most ``MAX_CANDIDATES``.
    eps : float > 0, delta : float in (0, 1), theta : float > 0
        Target of the instance-level m* (σ = 0).
    m_cap : int
        Largest m* searched.
    cost_scales : mapping column -> float > 0, optional
        Divisors of the per-column costs in ``relative_cost``. Default: the standard
        deviation of a numeric column (1 if it is constant) — read from the data, which
        is fine for the curator's view — and 1 for a categorical column (TV is in [0, 1]).
    progress : callable(fraction, message), optional
    counts : array of int ≥ 1, shape (n,), optional
        ``frame`` is a frequency table: row i stands for ``counts[i]`` records (k,
        singletons, m*, costs and ``min_count`` count records).

    Returns
    -------
    AdvisorResult
    """
    if not isinstance(frame, pd.DataFrame) or frame.shape[0] == 0 or frame.shape[1] == 0:
        raise ValueError("frame must be a non-empty pandas DataFrame of the release columns")
    candidates = [tuple(c) for c in candidates]
    counts = check_row_counts(counts, len(frame), minimum=1)
    if not candidates or len(candidates) > MAX_CANDIDATES:
        raise ValueError(f"candidates must list 1..{MAX_CANDIDATES} candidates, got {len(candidates)}")
    columns = list(frame.columns)
    # Each distinct transform is applied, factorised and costed once, shared by every candidate.
    applied: dict = {}
    for col in columns:
        applied[ColumnTransform(col)] = None
    for cand in candidates:
        for t in cand:
            if t.column not in frame.columns:
                raise ValueError(f"transform for column {t.column!r}, which is not among {columns}")
            applied[t] = None
    originals = {}
    for col in columns:
        originals[col] = frame[col].to_numpy()
        if pd.isna(frame[col]).any():
            raise ValueError(f"column {col!r} has missing values: remove or impute them first")
    scales = {}
    for col in columns:
        given = None if cost_scales is None else cost_scales.get(col)
        if given is not None:
            scales[col] = check_real(f"cost_scales[{col!r}]", given, low=0.0, low_open=True)
        elif frame[col].dtype.kind in "biuf":
            x = numeric_values(originals[col], col)
            mean = np.average(x, weights=counts)
            sd = float(np.sqrt(np.average((x - mean) ** 2, weights=counts)))
            scales[col] = sd if sd > 0 else 1.0
        else:
            scales[col] = 1.0
    cache = {}
    for t in applied:
        values = t.apply(originals[t.column], weights=counts)
        original = numeric_values(originals[t.column], t.column) if t.numeric else originals[t.column]
        cost = 0.0 if t.kind == "identity" else transform_cost(original, values, t.numeric, counts)
        cache[t] = (factor_codes(values), cost)
    out = []
    for i, cand in enumerate(candidates):
        by_column = {t.column: t for t in cand}
        if len(by_column) != len(cand):
            raise ValueError(f"candidate {i} has two transforms for one column")
        chosen = [by_column.get(col, ColumnTransform(col)) for col in columns]
        _, mult = distinct_row_counts([cache[t][0] for t in chosen], counts)
        m_star = max_instance_synthetic_size(mult, theta, eps, delta, m_cap=m_cap)
        out.append(CoarseningCandidate(
            transforms=tuple(chosen), k=int(mult.size), singletons=int(np.count_nonzero(mult == 1)),
            n=int(mult.sum()), m_star=int(m_star), cost=tuple(cache[t][1] for t in chosen),
            relative_cost=max(cache[t][1] / scales[t.column] for t in chosen),
            data_dependent=any(t.data_dependent for t in chosen), eps=float(eps), delta=float(delta),
            theta=float(theta)))
        if progress is not None:
            progress((i + 1) / len(candidates), f"candidate {i + 1} of {len(candidates)}")
    return AdvisorResult(tuple(out))


def frontier(candidates: Sequence[CoarseningCandidate], *, by: str = "columns") -> list[CoarseningCandidate]:
    """The non-dominated candidates, by decreasing m* then increasing singletons.

    ``a`` dominates ``b`` when ``a.m_star ≥ b.m_star``, ``a.singletons ≤ b.singletons``
    and its cost is ≤ that of ``b``, with at least one strict. ``by="columns"`` compares
    every per-column cost (their units differ; never summed); ``by="relative"`` compares
    ``relative_cost`` (the frontier of a plot against one cost axis).
    """
    by = check_choice("by", by, ("columns", "relative"))
    cands = list(candidates)
    if not cands:
        return []
    m = np.array([c.m_star for c in cands], dtype=float)
    s = np.array([c.singletons for c in cands], dtype=float)
    cost = np.array([c.cost if by == "columns" else (c.relative_cost,) for c in cands], dtype=float)
    # Lower is better in every column of `score`.
    score = np.column_stack([-m, s, cost])
    le = np.all(score[:, None, :] <= score[None, :, :], axis=2)
    lt = np.any(score[:, None, :] < score[None, :, :], axis=2)
    dominated = np.any(le & lt, axis=0)
    keep = np.flatnonzero(~dominated)
    order = keep[np.lexsort((s[keep], -m[keep]))]
    return [cands[i] for i in order]


def apply_candidate(frame: pd.DataFrame, candidate: CoarseningCandidate) -> pd.DataFrame:
    """A copy of ``frame`` with the candidate's transforms applied (the "apply" click)."""
    return apply_coarsening(frame, candidate.transforms)


def apply_coarsening(frame: pd.DataFrame, transforms: Sequence[ColumnTransform], counts=None) -> pd.DataFrame:
    """A copy of ``frame`` with each transform applied to its column, in original units.

    This is the step between reading the data and :func:`core.data.prepare` (the recipe's
    ``coarsening``). Columns without a transform are kept; at most one transform per column.

    Parameters
    ----------
    frame : pandas.DataFrame, shape (n, d)
    transforms : sequence of ColumnTransform
    counts : array of int, shape (n,), optional
        Records per row when ``frame`` is a frequency table (``min_count`` counts records).

    Raises
    ------
    ValueError
        A transform names a column not in ``frame``, two transforms share a column, or a
        transform refuses the column (missing, non-numeric, non-positive for log).
    """
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    transforms = tuple(transforms)
    seen = set()
    for t in transforms:
        if not isinstance(t, ColumnTransform):
            raise ValueError(f"coarsening must list ColumnTransform objects, got {t!r}")
        if t.column not in frame.columns:
            raise ValueError(f"coarsening transform for column {t.column!r}, which is not among "
                             f"{list(frame.columns)}")
        if t.column in seen:
            raise ValueError(f"coarsening has two transforms for column {t.column!r}")
        seen.add(t.column)
    counts = check_row_counts(counts, len(frame))
    out = frame.copy()
    for t in transforms:
        if t.kind != "identity":
            out[t.column] = t.apply(frame[t.column].to_numpy(), weights=counts)
    return out
