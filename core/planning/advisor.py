"""The singleton-aware coarsening advisor: candidate transforms, their singletons, their
instance-level largest m and their cost in W1, next to the global largest m that limits a
public release whatever the coarsening (docs/mathematics.md §3.5).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..privacy import DIRICHLET_PROCESS, max_instance_synthetic_size
from ..validation import check_bounds, check_choice, check_integer, check_real, check_row_counts
from ..data import (
    ColumnTransform,
    apply_coarsening,
    coarsening_label,
    distinct_row_counts,
    factor_codes,
    numeric_values,
)
from ..data.coarsening import Progress


#: Largest number of candidates one :func:`advise` call evaluates (each costs ~10 ms at n = 10^5).
MAX_CANDIDATES = 2000


SELECTION_CAVEAT = ("Choosing a coarsening after seeing its singletons or m* is a choice made by looking at the "
                    "confidential data: no privacy number shown covers that choice (docs/mathematics.md §3.4). "
                    "Fix the coarsening from public information when the guarantee must cover it.")


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
    """All evaluated candidates and the scope of their numbers.

    ``global_m_star``: the largest release size whose global (ε, δ)-DP guarantee holds for
    every dataset of n records (the exact global profile T₁ ≤ δ, docs/audit.md §1.3;
    :meth:`core.privacy.DIRICHLET_PROCESS.largest_m` at the candidates' (ε, δ, θ)), what
    limits a public release. It depends on n, θ and δ only (not even on ε),
    so it is the same for every candidate: a coarsening changes the singletons and the
    instance-level m*, never the global m* (``None`` when not computed).
    """

    candidates: tuple
    scope: str = "instance-level (computed from the confidential data; for the curator)"
    caveat: str = SELECTION_CAVEAT
    global_m_star: int | None = None

    def table(self) -> pd.DataFrame:
        """One row per candidate, with ``on_frontier`` (per-column costs) and ``on_relative_frontier``,
        led by ``global_m_star`` (the same in every row) when it is known."""
        frame = pd.DataFrame([c.to_dict() for c in self.candidates])
        if self.global_m_star is not None:
            frame.insert(1, "global_m_star", int(self.global_m_star))
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
        out += [ColumnTransform(column, "round", step=s) for s in reversed(_round_steps(bounds))]
    return out


def _round_steps(bounds) -> tuple[float, ...]:
    """:math:`w/10^j`, j = 1..3, with :math:`w = 10^{\\lfloor\\log_{10}(hi - lo)\\rfloor}`: coarsest first."""
    lo, hi = bounds
    width = 10.0 ** math.floor(math.log10(float(hi) - float(lo)))
    return tuple(width / 10.0**j for j in (1, 2, 3))


#: Public grid steps on the log scale offered for a log column (log units; coarsest first).
LOG_GRID_STEPS = (0.2, 0.1, 0.05)


def default_grid_steps(column: str, bounds, *, log: bool = False) -> tuple[float, ...]:
    """A data-independent menu of public grid steps for a numeric column (docs/mathematics.md §3.3.1, §3.6).

    The grid needs public ``bounds`` (lo, hi). Linear: the advisor's rounding steps
    :math:`w/10^j`, j = 1..3, :math:`w = 10^{\\lfloor\\log_{10}(hi - lo)\\rfloor}` — from 11 to about
    10⁴ grid points; ``log``: steps 0.2, 0.1, 0.05 in log units (relative spacing about
    22%, 11%, 5%). Coarsest first. Nothing is read from the data.
    """
    if bounds is None:
        raise ValueError(f"a public grid on column {column!r} needs public bounds")
    lo, hi = check_bounds(bounds, f"bounds of column {column!r}", positive=bool(log))
    return LOG_GRID_STEPS if log else _round_steps((lo, hi))


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


def advise(frame: pd.DataFrame, candidates: Sequence[Sequence[ColumnTransform]], *, eps, delta, theta,
           m_cap: int = 10**6, cost_scales: Mapping[str, float] | None = None,
           progress: Progress | None = None, counts=None) -> AdvisorResult:
    """Evaluate coarsening candidates on the release columns of ``frame``.

    Parameters
    ----------
    frame : pandas.DataFrame, shape (n, d)
        The release columns (every column of ``frame`` is part of a record). Columns
        without a transform in a candidate are kept as recorded. A missing cell (None,
        NaN) is one more value of its column (docs/mathematics.md §2.5, "missing is a
        value"): the transforms leave it missing and the costs are over the records with a
        value. Records a column drops for a missing value must be removed by the caller.
    candidates : sequence of sequences of ColumnTransform
        E.g. from :func:`candidate_grid`. At most ``MAX_CANDIDATES``.
    eps : float > 0, delta : float in (0, 1), theta : float > 0
        Target of the instance-level m* of each candidate and of the global m* (σ = 0).
    m_cap : int
        Largest m* searched (instance-level and global).
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
        With ``global_m_star``, the global m* (exact global profile) at n = the records of ``frame``.
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
    originals = {col: frame[col].to_numpy() for col in columns}
    present = {col: ~pd.isna(frame[col]).to_numpy() for col in columns}   # the records with a value

    def with_value(col, values):
        """``values`` and the records' weights restricted to the records with a value in ``col``."""
        keep = present[col]
        return values[keep], None if counts is None else counts[keep]

    scales = {}
    for col in columns:
        given = None if cost_scales is None else cost_scales.get(col)
        if given is not None:
            scales[col] = check_real(f"cost_scales[{col!r}]", given, low=0.0, low_open=True)
        elif frame[col].dtype.kind in "biuf" and present[col].any():
            values, weights = with_value(col, originals[col])
            x = numeric_values(values, col)
            mean = np.average(x, weights=weights)
            sd = float(np.sqrt(np.average((x - mean) ** 2, weights=weights)))
            scales[col] = sd if sd > 0 else 1.0
        else:
            scales[col] = 1.0
    cache = {}
    for t in applied:
        values = t.apply(originals[t.column], weights=counts)
        cost = 0.0
        if t.kind != "identity" and present[t.column].any():
            original, weights = with_value(t.column, originals[t.column])
            original = numeric_values(original, t.column) if t.numeric else original
            cost = transform_cost(original, values[present[t.column]], t.numeric, weights)
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
    # Every candidate keeps the n records, so one global m* serves them all.
    n = int(len(frame) if counts is None else np.sum(counts))
    return AdvisorResult(tuple(out), global_m_star=int(DIRICHLET_PROCESS.largest_m(n, 0.0, theta, eps, delta,
                                                                                   m_cap=m_cap)))


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
