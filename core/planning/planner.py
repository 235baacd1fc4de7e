"""Release planner: search θ, m and coarsenings for a release meeting a privacy and a utility target.

The user states

* a **guarantee target** (ε, δ) and its scope: ``"global"`` — Theorem 2, every dataset of
  n records, m ≤ :func:`core.privacy.max_synthetic_size` (depends on n only, so a
  coarsening never raises it), or ``"instance"`` — the instance-level curve of the
  (coarsened) data, m ≤ :func:`core.privacy.max_instance_synthetic_size`;
* a **utility target** per numeric column: a bound on W1 between the release and the
  original (uncoarsened) column, and/or on the absolute error of the mean and of the
  three quartiles.

For every coarsening candidate and θ in the grid the planner takes the largest admissible
m (capped at ``m_max``; utility improves with m, since copies of the data dominate the
release), predicts the utility by Monte Carlo — ``runs`` PYPP releases (σ = 0) of the
coarsened data, new values from the base measure H uniform on the column's public bounds,
each metric's ``level`` quantile over runs — and recommends the setting that meets both
targets with the largest margin. When none does it says which target cannot be met and by
how much (docs/mathematics.md §3.6).

The MC evaluates each release exactly and without a loop over m or n: counts of a release
come from :func:`core.mechanisms.py_predictive_counts` (O(k + K)); its W1 to the original
column is :math:`\\int|F_Z - F_x|` on the merged support, and its quartiles are numpy's
linear-interpolation quantiles read off the cumulative counts.

Caveats (returned with every plan): the plan reads the confidential data (the utility
prediction always, the instance-level m* too), so the *choice* it recommends is itself
data-dependent (docs/mathematics.md §3.4); bounds read from the data are flagged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..data import ColumnTransform, coarsening_label, distinct_row_counts, factor_codes, numeric_values
from .advisor import transform_cost
from ..formatting import format_upper
from ..mechanisms import py_predictive_counts
from ..privacy import global_delta, instance_delta, max_instance_synthetic_size, max_synthetic_size
from ..evaluation import repeated_quantiles
from ..validation import (
    check_bounds,
    check_choice,
    check_delta,
    check_finite_eps,
    check_integer,
    check_positive,
    check_probability,
    check_rng,
    check_row_counts,
    warn_bounds_from_data,
)

__all__ = ["GuaranteeTarget", "Plan", "PlanOption", "UtilityTarget", "plan_release", "predict_utility"]

Progress = Callable[[float, str], None]
_METRICS = ("w1", "mean", "q1", "median", "q3")
PLAN_CAVEAT = ("The planner reads the confidential data (utility prediction; instance-level m* when scope is "
               "instance), so choosing its recommendation is a data-dependent choice not covered by the "
               "guarantee (docs/mathematics.md §3.4).")


@dataclass(frozen=True)
class GuaranteeTarget:
    """(ε, δ) and scope ``"global"`` (Theorem 2) or ``"instance"`` (this dataset)."""

    eps: float
    delta: float
    scope: str = "global"

    def __post_init__(self):
        object.__setattr__(self, "eps", check_finite_eps(self.eps))
        object.__setattr__(self, "delta", check_delta(self.delta))
        check_choice("scope", self.scope, ("global", "instance"))


@dataclass(frozen=True)
class UtilityTarget:
    """Largest acceptable errors per numeric column (a float applies to every numeric column).

    w1 : W1 between release and original column, in the column's units.
    mean_error, quartile_error : largest |error| of the mean and of Q1, median, Q3.
    level : float in (0, 1) — the target must hold for this quantile of the MC runs.
    """

    w1: float | Mapping[str, float] | None = None
    mean_error: float | Mapping[str, float] | None = None
    quartile_error: float | Mapping[str, float] | None = None
    level: float = 0.9

    def __post_init__(self):
        if self.w1 is None and self.mean_error is None and self.quartile_error is None:
            raise ValueError("a utility target needs w1, mean_error or quartile_error")
        check_probability(self.level, "level")

    def bounds_for(self, column: str) -> dict[str, float]:
        """Target per metric of ``column`` (``inf`` where none is set)."""
        def get(value, name):
            if value is None:
                return math.inf
            v = value.get(column) if isinstance(value, Mapping) else value
            return math.inf if v is None else check_positive(f"{name} for column {column!r}", v)
        quart = get(self.quartile_error, "quartile_error")
        return {"w1": get(self.w1, "w1"), "mean": get(self.mean_error, "mean_error"),
                "q1": quart, "median": quart, "q3": quart}


@dataclass(frozen=True)
class PlanOption:
    """One evaluated setting: coarsening, θ, m and its predicted utility."""

    transforms: tuple
    theta: float
    m: int
    m_allowed: int
    predicted: dict          # column -> metric -> level-quantile over runs
    ratio: float             # max over columns and metrics of predicted / target (≤ 1 meets)
    meets_utility: bool

    @property
    def label(self) -> str:
        return coarsening_label(self.transforms)

    def to_dict(self) -> dict:
        row = {"coarsening": self.label, "theta": self.theta, "m": self.m, "m_allowed": self.m_allowed,
               "ratio": self.ratio, "meets_utility": self.meets_utility}
        for col, metrics in self.predicted.items():
            for k, v in metrics.items():
                row[f"{k}[{col}]"] = v
        return row


@dataclass(frozen=True)
class Plan:
    """The planner's answer."""

    guarantee: GuaranteeTarget
    utility: UtilityTarget
    recommended: PlanOption | None
    options: tuple
    privacy_met: bool
    utility_met: bool
    message: str
    bounds_from_data: tuple = ()
    caveat: str = PLAN_CAVEAT

    def table(self) -> pd.DataFrame:
        return pd.DataFrame([o.to_dict() for o in self.options])


# --------------------------------------------------------------------------- prediction
@dataclass
class _Column:
    """One numeric column prepared for exact per-run W1 and quartiles."""

    grid: np.ndarray          # sorted union of original and coarsened values
    x_weight: np.ndarray      # original counts on grid / n
    atom_slot: np.ndarray     # grid index of each atom's coarsened value
    lo: float
    hi: float
    log: bool
    truth: dict               # original mean and quartiles


def _prepare_column(original: np.ndarray, atom_values: np.ndarray, lo: float, hi: float, log: bool,
                    weights: np.ndarray | None = None) -> _Column:
    """``weights``: records per row of ``original`` (a frequency table); None = one each."""
    grid = np.union1d(original, atom_values)
    slots = np.searchsorted(grid, original)
    if weights is None:
        x_weight = np.bincount(slots, minlength=grid.size) / original.size
        q1, med, q3 = np.quantile(original, [0.25, 0.5, 0.75])
        mean, sd = float(original.mean()), float(original.std())
    else:
        per_point = np.bincount(slots, weights=weights, minlength=grid.size)
        x_weight = per_point / per_point.sum()
        # numpy's linear quantiles of the records, from the grid and its cumulative counts
        q1, med, q3 = repeated_quantiles(grid, np.cumsum(per_point.astype(np.int64)))
        mean = float(np.dot(grid, x_weight))
        sd = math.sqrt(float(np.dot((grid - mean) ** 2, x_weight)))
    truth = {"mean": mean, "sd": sd, "q1": float(q1), "median": float(med), "q3": float(q3)}
    return _Column(grid, x_weight, np.searchsorted(grid, atom_values), lo, hi, log, truth)


def _run_metrics(col: _Column, old_counts: np.ndarray, new_values: np.ndarray, new_counts: np.ndarray,
                 m: int) -> dict[str, float]:
    z_grid = np.bincount(col.atom_slot, weights=old_counts, minlength=col.grid.size)
    points = np.concatenate([col.grid, new_values])
    z_w = np.concatenate([z_grid, new_counts.astype(float)]) / m
    x_w = np.concatenate([col.x_weight, np.zeros(new_values.size)])
    order = np.argsort(points, kind="stable")
    points, z_w, x_w = points[order], z_w[order], x_w[order]
    w1 = float(np.sum(np.abs(np.cumsum(z_w) - np.cumsum(x_w))[:-1] * np.diff(points)))
    cum = np.cumsum(np.rint(z_w * m)).astype(np.int64)
    q1, med, q3 = repeated_quantiles(points, cum)  # cum[-1] == m
    mean = float(np.dot(points, z_w))
    t = col.truth
    return {"w1": w1, "mean": abs(mean - t["mean"]), "q1": abs(q1 - t["q1"]), "median": abs(med - t["median"]),
            "q3": abs(q3 - t["q3"])}


def _draw_new(col: _Column, size: int, rng: np.random.Generator) -> np.ndarray:
    if col.log:
        return np.exp(rng.uniform(math.log(col.lo), math.log(col.hi), size))
    return rng.uniform(col.lo, col.hi, size)


def _with_counts(frame, counts) -> tuple[pd.DataFrame, np.ndarray | None]:
    """``frame`` and its records per row (a frequency table: whole numbers ≥ 0, one per row,
    some > 0), without the rows that hold no record; ``counts=None`` passes through."""
    if counts is None or not isinstance(frame, pd.DataFrame):
        return frame, None
    arr = check_row_counts(counts, len(frame))
    if not arr.sum() > 0:
        raise ValueError("counts must hold at least one record (all are 0)")
    keep = arr > 0
    return frame.loc[keep].reset_index(drop=True), arr[keep].astype(np.int64)


def _setup(frame: pd.DataFrame, kinds: Mapping[str, str], bounds: Mapping | None, log: Mapping | None,
           transforms: Sequence[ColumnTransform], counts: np.ndarray | None = None):
    """Coarsened atoms (multiplicities and per-numeric-column prepared columns).

    Atom values outside the bounds are clipped to them, as :func:`core.data.prepare` does.
    ``counts``: records per row of ``frame`` (a frequency table), checked by the caller.
    """
    bounds = dict(bounds or {})
    log = dict(log or {})
    if not isinstance(frame, pd.DataFrame) or frame.shape[0] == 0:
        raise ValueError("frame must be a non-empty DataFrame")
    missing = [c for c in kinds if c not in frame.columns]
    if not kinds or missing:
        raise ValueError(f"kinds must name columns of frame; not in frame: {missing}")
    by_col = {t.column: t for t in transforms}
    if set(by_col) - set(kinds):
        raise ValueError(f"transforms for column(s) {sorted(set(by_col) - set(kinds))} not named in kinds")
    codes, numeric_cols, from_data = [], {}, []
    coarse = {}
    for c, kind in kinds.items():
        check_choice(f"kind of column {c!r}", kind, ("numeric", "categorical"))
        t = by_col.get(c, ColumnTransform(c))
        coarse[c] = t.apply(frame[c].to_numpy(), weights=counts)
        codes.append(factor_codes(coarse[c]))
    weights = counts
    first, counts = distinct_row_counts(codes, weights=weights)
    for c, kind in kinds.items():
        if kind != "numeric":
            continue
        original = numeric_values(frame[c].to_numpy(), c)
        if bounds.get(c) is not None:
            lo, hi = check_bounds(bounds[c], f"bounds of column {c!r}", positive=bool(log.get(c)))
        else:
            lo, hi = check_bounds((float(original.min()), float(original.max())),
                                  f"bounds read from the data of column {c!r}", positive=bool(log.get(c)))
            from_data.append(c)
        atoms = np.clip(numeric_values(coarse[c], c)[first], lo, hi)
        numeric_cols[c] = _prepare_column(original, atoms, lo, hi, bool(log.get(c)), weights)
    return counts, numeric_cols, from_data


def _simulate(counts, columns: dict, theta: float, m: int, runs: int, rng) -> dict[str, dict[str, np.ndarray]]:
    out = {c: {k: np.empty(runs) for k in _METRICS} for c in columns}
    for r in range(runs):  # loop over runs only; each run costs O(k + K)
        old, new_sizes = py_predictive_counts(counts, 0.0, theta, m, rng)
        for c, col in columns.items():
            vals = _draw_new(col, new_sizes.size, rng)
            for k, v in _run_metrics(col, old, vals, new_sizes, m).items():
                out[c][k][r] = v
    return out


def predict_utility(frame: pd.DataFrame, kinds: Mapping[str, str], transforms: Sequence[ColumnTransform], *,
                    theta, m, runs: int = 40, rng: np.random.Generator, bounds: Mapping | None = None,
                    log: Mapping | None = None, counts=None) -> dict[str, dict[str, np.ndarray]]:
    """Monte Carlo utility of PYPP (σ = 0) releases of the coarsened data.

    Parameters
    ----------
    frame : DataFrame with the columns of ``kinds`` (the original data)
    kinds : column -> 'numeric' | 'categorical' (all are part of a record)
    transforms : the coarsening (columns without one are kept as recorded)
    theta : float > 0; m : int ≥ 1; runs : int in [2, 10^4]
    bounds : column -> public (lo, hi) of the base measure H; missing: read from the data
        (a PrivacyLeakWarning)
    log : column -> bool, H uniform on the log scale
    counts : array of int, shape (len(frame),), optional
        Records per row when ``frame`` is a frequency table (e.g. the distinct rows of a
        large file): the same prediction as for the rows repeated, at a cost in rows of
        ``frame``.

    Returns
    -------
    dict column -> metric ('w1', 'mean', 'q1', 'median', 'q3') -> ndarray (runs,)
        W1 to the original column and absolute errors of the mean and quartiles.
    """
    theta = check_positive("theta", theta)
    m = check_integer("m", m, minimum=1, maximum=10**8)
    runs = check_integer("runs", runs, minimum=2, maximum=10**4)
    frame, weights = _with_counts(frame, counts)
    counts, columns, from_data = _setup(frame, kinds, bounds, log, transforms, weights)
    if from_data:
        warn_bounds_from_data(f"bounds of column(s) {from_data}")
    return _simulate(counts, columns, theta, m, runs, check_rng(rng))


def _summarise(sim, utility: UtilityTarget) -> tuple[dict, float]:
    predicted, ratio = {}, 0.0
    for c, metrics in sim.items():
        target = utility.bounds_for(c)
        predicted[c] = {k: float(np.quantile(v, utility.level)) for k, v in metrics.items()}
        for k, v in predicted[c].items():
            if math.isfinite(target[k]):
                ratio = max(ratio, v / target[k])
    return predicted, ratio


def plan_release(frame: pd.DataFrame, kinds: Mapping[str, str], guarantee: GuaranteeTarget,
                 utility: UtilityTarget, *, candidates: Sequence[Sequence[ColumnTransform]] = ((),),
                 thetas: Sequence[float] = (0.5, 1.0, 5.0, 25.0), m_max: int | None = None, m_min: int = 1,
                 runs: int = 30, max_evaluations: int = 12, rng: np.random.Generator,
                 bounds: Mapping | None = None, log: Mapping | None = None,
                 progress: Progress | None = None, counts=None) -> Plan:
    """Search coarsening × θ × m for a release meeting ``guarantee`` and ``utility``.

    For each (candidate, θ): m = min(m_max, largest m admissible at the guarantee) —
    global: :func:`max_synthetic_size`, instance: :func:`max_instance_synthetic_size` of
    the coarsened multiplicities; settings with m < ``m_min`` fail the privacy target.
    The feasible settings are ordered by a cheap proxy, the largest over numeric columns of
    (coarsening cost + θ/(θ+n) × half the bounds' width + SD/√m) / W1 target, and the
    first ``max_evaluations`` are predicted by Monte Carlo (``runs`` releases each, :func:`predict_utility`). The
    recommendation is the evaluated setting meeting the utility target with the smallest
    ``ratio`` (largest predicted / target over columns and metrics).

    Parameters
    ----------
    frame, kinds, bounds, log, counts : as in :func:`predict_utility` (``counts``: a
        frequency table's records per row; n is their sum)
    guarantee : GuaranteeTarget; utility : UtilityTarget
    candidates : coarsenings (sequences of ColumnTransform); ``((),)`` = as recorded
    thetas : θ grid (each > 0); m_max : largest m considered (default n); m_min : smallest acceptable m
    runs : MC runs per evaluated setting; max_evaluations : settings predicted by MC
    rng : numpy.random.Generator; progress : callable(fraction, message)

    Returns
    -------
    Plan
    """
    rng = check_rng(rng)
    if not isinstance(frame, pd.DataFrame) or frame.shape[0] == 0:
        raise ValueError("frame must be a non-empty DataFrame")
    frame, weights = _with_counts(frame, counts)
    n = int(frame.shape[0]) if weights is None else int(weights.sum())
    thetas = [check_positive("theta", t) for t in thetas]
    if not thetas:
        raise ValueError("thetas must list at least one θ > 0")
    m_max = n if m_max is None else check_integer("m_max", m_max, minimum=1, maximum=10**8)
    m_min = check_integer("m_min", m_min, minimum=1, maximum=m_max)
    runs = check_integer("runs", runs, minimum=2, maximum=10**4)
    max_evaluations = check_integer("max_evaluations", max_evaluations, minimum=1, maximum=1000)
    candidates = [tuple(c) for c in candidates]
    if not candidates:
        raise ValueError("candidates must list at least one coarsening (() = as recorded)")
    numeric = [c for c, k in kinds.items() if k == "numeric"]
    if not numeric:
        raise ValueError("the utility targets apply to numeric columns; kinds has none")
    for name in ("w1", "mean_error", "quartile_error"):
        value = getattr(utility, name)
        if isinstance(value, Mapping) and set(value) - set(numeric):
            raise ValueError(f"utility {name} names column(s) {sorted(set(value) - set(numeric))} that are not "
                             f"numeric columns of kinds ({numeric})")
    prepared, from_data = [], set()
    for cand in candidates:
        counts, columns, fd = _setup(frame, kinds, bounds, log, cand, weights)
        from_data |= set(fd)
        by_col = {t.column: t for t in cand}
        cost = {c: (0.0 if c not in by_col or by_col[c].kind == "identity"
                    else transform_cost(numeric_values(frame[c].to_numpy(), c), numeric_values(by_col[c].apply(frame[c].to_numpy()), c),
                               True, weights=weights)) for c in numeric}
        prepared.append((cand, counts, columns, cost))
    if from_data:
        warn_bounds_from_data(f"bounds of column(s) {sorted(from_data)}")
    feasible, best_privacy = [], None
    global_m = {th: max_synthetic_size(n, th, guarantee.eps, guarantee.delta, m_cap=m_max) for th in thetas} \
        if guarantee.scope == "global" else None
    for cand, counts, columns, cost in prepared:
        for th in thetas:
            allowed = global_m[th] if global_m is not None else \
                max_instance_synthetic_size(counts, th, guarantee.eps, guarantee.delta, m_cap=m_max)
            m = min(allowed, m_max)
            if best_privacy is None or allowed > best_privacy[0]:
                best_privacy = (allowed, th, counts)
            if m < m_min:
                continue
            proxy = 0.0
            for c in numeric:
                target = utility.bounds_for(c)["w1"]
                scale = target if math.isfinite(target) else (columns[c].hi - columns[c].lo)
                spread = columns[c].truth["sd"] / math.sqrt(m)   # sampling error of m copies
                proxy = max(proxy, (cost[c] + th / (th + n) * (columns[c].hi - columns[c].lo) / 2 + spread) / scale)
            feasible.append((proxy, cand, counts, columns, th, m, allowed))
    if not feasible:
        allowed, th, counts = best_privacy
        if guarantee.scope == "global":
            achieved = float(global_delta(n, th, m_min, guarantee.eps))
        else:
            achieved = float(instance_delta(counts, 0.0, th, m_min, guarantee.eps))
        message = (f"The privacy target cannot be met: at most m = {allowed} records are admissible at "
                   f"(ε = {guarantee.eps:g}, δ = {guarantee.delta:g}, {guarantee.scope}) for θ in the grid, "
                   f"fewer than m_min = {m_min}; releasing m_min records needs δ ≥ {format_upper(achieved)} "
                   f"({achieved / guarantee.delta:.3g}× the target) at θ = {th:g}.")
        return Plan(guarantee, utility, None, (), False, False, message, tuple(sorted(from_data)))
    feasible.sort(key=lambda item: item[0])
    chosen = feasible[:max_evaluations]
    options = []
    for i, (_, cand, counts, columns, th, m, allowed) in enumerate(chosen):
        if progress is not None:
            progress(i / len(chosen), f"predicting setting {i + 1} of {len(chosen)} (θ = {th:g}, m = {m})")
        sim = _simulate(counts, columns, th, m, runs, rng)
        predicted, ratio = _summarise(sim, utility)
        full = tuple(next((t for t in cand if t.column == c), ColumnTransform(c)) for c in kinds)
        options.append(PlanOption(full, th, int(m), int(allowed), predicted, ratio, ratio <= 1.0))
    if progress is not None:
        progress(1.0, "done")
    best = min(options, key=lambda o: o.ratio)
    if best.meets_utility:
        message = (f"Recommended: {best.label}; θ = {best.theta:g}, m = {best.m} (admissible up to "
                   f"{best.m_allowed}); predicted utility at the {utility.level:g} quantile of {runs} runs is "
                   f"{best.ratio:.3g} of the target.")
    else:
        worst = []
        for c, metrics in best.predicted.items():
            target = utility.bounds_for(c)
            worst += [(v / target[k], c, k, v, target[k]) for k, v in metrics.items() if math.isfinite(target[k])]
        r, c, k, v, t = max(worst)
        message = (f"The utility target cannot be met with the privacy target: the best setting ({best.label}; "
                   f"θ = {best.theta:g}, m = {best.m}) predicts {k} of {c} = {v:.4g} against a target of "
                   f"{t:.4g} ({r:.3g}× the target).")
    return Plan(guarantee, utility, best if best.meets_utility else None, tuple(options), True,
                best.meets_utility, message, tuple(sorted(from_data)))
