"""The release planner's candidates side by side, and which one to release (docs/verdicts.md §7).

For the target (ε, δ) of a plan the curator compares, in one table,

* PYPP's best σ = 0 release and PYPP's best pure release over public grids — the plan's own
  options (:class:`core.planning.PlanOption`), whose utility the planner predicted by Monte
  Carlo;
* AIM and MST (:data:`core.release.RELEASE_MECHANISMS`) at the same (ε, δ), m = n, on the
  public bins — their utility measured by :func:`peer_candidates`, which runs each mechanism
  ``runs`` times on the confidential data exactly as a release would
  (:meth:`core.release.HistogramRelease.release`), with an explicit ``rng``.

Every :class:`Candidate` carries its verdict (the composed global guarantee of the planned
releases, from the mechanism's own accounting: docs/verdicts.md §1, §6), its release size m in
public words (:func:`size_in_words`) and its utility in the planner's terms: per numeric column
the W1 to the original column at the planner's quantile level over runs
(:class:`core.planning.UtilityTarget`), and whether the utility target is met.
:func:`recommend` says which to release, by the rule of docs/verdicts.md §7.

The utility is measured on the confidential data: the table is for the curator only, and
releasing the candidate it recommends (or any candidate chosen after reading it) is a
data-dependent choice (``mechanism_from_data``, :mod:`core.release.choices`) that the gate
names and asks to be acknowledged.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ..evaluation import repeated_quantiles, wasserstein1
from ..mechanisms import PEERS_MISSING, peers_available
from ..privacy import VERDICTS, Guarantee, ReleaseSpec
from ..release import RELEASE_MECHANISMS, ReleaseRecipe
from ..validation import check_integer, check_rng, check_row_counts
# the planner's own summary of runs (each metric's level quantile, the largest ratio to its target): the
# peers' utility is read exactly as PYPP's (same package)
from .planner import GuaranteeTarget, Plan, PlanOption, UtilityTarget, _summarise

__all__ = ["PEER_CANDIDATES", "SMALL_SHARE", "TOO_FEW_ROWS", "Candidate", "Recommendation",
           "candidates_side_by_side", "peer_candidates", "recommend", "size_in_words"]

Progress = Callable[[float, str], None]

#: Below this many rows a release is "too few for most uses" (a table of summary statistics
#: or a handful of examples, not a data set to analyse).
TOO_FEW_ROWS = 100
#: Below this share of the n records a release is "a small sample" of them.
SMALL_SHARE = 0.1
#: The peers laid beside PYPP, by mechanism key of :data:`core.release.RELEASE_MECHANISMS`.
PEER_CANDIDATES = ("aim", "mst")
#: Verdict first: pure, strong, weak, missed (docs/verdicts.md §1); none (unavailable) last.
_RANK = {v: i for i, v in enumerate(VERDICTS)}
_METRICS = ("w1", "mean", "q1", "median", "q3")


def size_in_words(m: int, n: int) -> str:
    """The release size m in public words, next to the n records (docs/verdicts.md §7).

    * m < :data:`TOO_FEW_ROWS` (100): ``"11 rows: too few for most uses"``;
    * m < :data:`SMALL_SHARE`·n (a tenth of the records): ``"500 rows: a small sample of the
      13,501 records"``;
    * otherwise ``"13,501 rows, as many as the data's records"`` when m = n, else
      ``"5,000 rows, like the data's 13,501 records"``.

    Public: it reads m and n only (both are published in every public report).

    Parameters
    ----------
    m : int ≥ 0 — released rows; n : int ≥ 1 — records of the data
    """
    m = check_integer("m", m, minimum=0)
    n = check_integer("n", n, minimum=1)
    rows = f"{m:,} row{'s' if m != 1 else ''}"
    if m < TOO_FEW_ROWS:
        return f"{rows}: too few for most uses"
    if m < SMALL_SHARE * n:
        return f"{rows}: a small sample of the {n:,} records"
    if m == n:
        return f"{rows}, as many as the data's records"
    return f"{rows}, like the data's {n:,} records"


@dataclass(frozen=True)
class Candidate:
    """One release the curator may choose, with its verdict, size and utility (docs/verdicts.md §7).

    Attributes
    ----------
    key : str
        ``"pypp_sigma0"``, ``"pypp_pure"``, ``"aim"`` or ``"mst"``.
    label : str
        Its name in words.
    mechanism : str
        Its key in :data:`core.release.RELEASE_MECHANISMS` (``"pypp"`` for both PYPP ones).
    settings : dict
        What the release needs besides (ε, δ): PYPP σ = 0 ``sigma``, ``theta``, ``coarsening``;
        PYPP pure ``sigma`` (= −α), ``alpha``, ``theta``, ``grid_steps``; a peer ``bins``.
    m, n : int or None, int
        Released rows (``None`` when unavailable) and records of the data.
    verdict : {"pure", "strong", "weak", "missed"} or None
        That of ``guarantee`` (``None`` when unavailable).
    guarantee : core.privacy.Guarantee or None
        The composed global guarantee of the planned releases at the target.
    size_words : str
        :func:`size_in_words` of m and n.
    utility : dict
        Numeric column → W1 to the original column (the column's units) at the planner's
        quantile level over runs.
    metrics : dict
        Numeric column → metric (``"w1"``, ``"mean"``, ``"q1"``, ``"median"``, ``"q3"``) → that
        quantile: what the utility target is checked against.
    ratio : float
        Largest metric / target over columns (≤ 1 meets; ``nan`` when unavailable).
    meets_utility : bool or None
        ``ratio ≤ 1``; ``None`` when unavailable.
    seconds : float or None
        Measured seconds per release (peers); ``None`` for PYPP, whose utility the planner
        predicts from counts without drawing a release.
    unavailable : str or None
        Why this candidate cannot be released or measured (e.g. OpenDP, the peers' library, is
        missing, a column without a public domain, missing cells kept as a value); ``None``
        when available.
    """

    key: str
    label: str
    mechanism: str
    settings: dict
    m: int | None
    n: int
    verdict: str | None = None
    guarantee: Guarantee | None = None
    size_words: str = ""
    utility: dict = field(default_factory=dict)
    metrics: dict = field(default_factory=dict)
    ratio: float = math.nan
    meets_utility: bool | None = None
    seconds: float | None = None
    unavailable: str | None = None

    @property
    def available(self) -> bool:
        """Whether the candidate can be released (measured, with a verdict)."""
        return self.unavailable is None and self.verdict is not None

    @property
    def releasable(self) -> bool:
        """Available and not ``missed`` (the gate refuses a missed release)."""
        return self.available and self.verdict != "missed"

    def to_dict(self) -> dict:
        """One row of the side-by-side table (curator only: the utility is the confidential data's)."""
        row = {"candidate": self.label, "verdict": self.verdict or "—", "m": self.m,
               "size": self.size_words or "—"}
        for col, w1 in self.utility.items():
            row[f"W1[{col}]"] = w1
        row.update({"ratio to target": self.ratio, "meets target": self.meets_utility,
                    "seconds per release": self.seconds, "unavailable": self.unavailable or ""})
        return row


@dataclass(frozen=True)
class Recommendation:
    """What :func:`recommend` says: the candidate to release (or ``None``), in words, and the order.

    Attributes
    ----------
    candidate : Candidate or None
        The one to release; ``None`` when no candidate is releasable.
    message : str
        The recommendation in plain words (it says first when no candidate meets the utility
        target, or when the one recommended is weak).
    meets_utility : bool
        Whether the recommended candidate meets the utility target.
    ranked : tuple of Candidate
        Every candidate in the rule's order (unavailable ones last).
    """

    candidate: Candidate | None
    message: str
    meets_utility: bool
    ranked: tuple = ()


# --------------------------------------------------------------------------- PYPP's options
def _pypp_candidate(option: PlanOption | None, plan: Plan, n: int, pure: bool) -> Candidate:
    key, label = (("pypp_pure", "PYPP pure (Dirichlet–multinomial over public grids)") if pure
                  else ("pypp_sigma0", "PYPP σ = 0 (Dirichlet process)"))
    if option is None:
        why = ("the plan holds no pure option: every column needs a public domain and the pure search must be on"
               if pure else "the plan holds no σ = 0 setting admissible at the target")
        return Candidate(key, label, "pypp", {}, None, n, unavailable=why)
    target = plan.guarantee
    sigma = -float(option.alpha) if pure else 0.0
    spec = ReleaseSpec(sigma, float(option.theta), int(option.m), n, eps=target.eps, delta=target.delta,
                       releases=target.releases)
    guarantee = spec.regime.release_guarantee(spec)
    settings = ({"sigma": sigma, "alpha": float(option.alpha), "theta": float(option.theta),
                 "grid_steps": dict(option.grid_steps)} if pure else
                {"sigma": 0.0, "theta": float(option.theta), "coarsening": option.label})
    return Candidate(key, label, "pypp", settings, int(option.m), n, verdict=guarantee.verdict, guarantee=guarantee,
                     size_words=size_in_words(option.m, n),
                     utility={c: float(v["w1"]) for c, v in option.predicted.items()},
                     metrics={c: dict(v) for c, v in option.predicted.items()}, ratio=float(option.ratio),
                     meets_utility=bool(option.meets_utility))


def candidates_side_by_side(plan: Plan, peers: Sequence[Candidate] = (), *, n: int) -> list[Candidate]:
    """The plan's best σ = 0 option and best pure option as :class:`Candidate`, then ``peers``.

    "Best" is the plan's own order (:func:`core.planning.planner.rank_key`: verdict first, then
    meeting the utility target, then the ratio); a kind the plan lacks is listed as unavailable,
    saying why. The PYPP guarantees are the regimes' composed global ones at the plan's target
    (the verdict the Privacy page shows for the same settings).

    Parameters
    ----------
    plan : core.planning.Plan
    peers : sequence of Candidate — e.g. :func:`peer_candidates`
    n : int ≥ 1 — records of the data (a frequency table's total)
    """
    n = check_integer("n", n, minimum=1)
    sigma0 = next((o for o in plan.options if not o.pure), None)
    pure = next((o for o in plan.options if o.pure), None)
    return [_pypp_candidate(sigma0, plan, n, False), _pypp_candidate(pure, plan, n, True), *peers]


# --------------------------------------------------------------------------- the peers, measured
def _truth(values: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict]:
    """Sorted distinct values of the original column, their cumulative counts and its mean and quartiles."""
    order = np.argsort(values, kind="stable")
    points, inverse = np.unique(values[order], return_inverse=True)
    per_point = np.bincount(inverse, weights=weights[order], minlength=points.size).astype(np.int64)
    cum = np.cumsum(per_point)
    q1, med, q3 = repeated_quantiles(points, cum)
    mean = float(np.dot(points, per_point) / cum[-1])
    return points, per_point, {"mean": mean, "q1": float(q1), "median": float(med), "q3": float(q3)}


def _metrics(released: np.ndarray, points: np.ndarray, per_point: np.ndarray, truth: dict) -> dict:
    """The planner's metrics of one release of a column: W1 to the original and |error| of mean and quartiles."""
    q1, med, q3 = np.quantile(released, [0.25, 0.5, 0.75])
    return {"w1": float(wasserstein1(released, points, None, per_point)),
            "mean": abs(float(released.mean()) - truth["mean"]), "q1": abs(float(q1) - truth["q1"]),
            "median": abs(float(med) - truth["median"]), "q3": abs(float(q3) - truth["q3"])}


def peer_candidates(prepared, original: pd.DataFrame, guarantee: GuaranteeTarget, utility: UtilityTarget, *,
                    bins: int, rng: np.random.Generator, runs: int = 3, counts=None,
                    mechanisms: Sequence[str] = PEER_CANDIDATES, progress: Progress | None = None) -> list[Candidate]:
    """AIM and MST at the target (ε, δ), m = n, measured on the confidential data (curator only).

    For each mechanism the recipe of its release is built from the prepared columns' public
    specs (:class:`core.release.ReleaseRecipe`, ``bins`` per numeric axis, the planned
    releases ``guarantee.releases``); its guarantee is the mechanism's own accounting composed
    over them (:meth:`core.release.HistogramRelease.spec` → ``global_guarantee()``,
    docs/verdicts.md §6). Its utility is that of ``runs`` releases drawn exactly as the release
    would be (:meth:`~core.release.HistogramRelease.release`, from ``rng``): per numeric column
    of ``original`` the W1 to the original column and the absolute errors of the mean and the
    quartiles, each metric's ``utility.level`` quantile over runs — the planner's definition
    (:class:`core.planning.UtilityTarget`). A mechanism that cannot run is returned with
    ``unavailable`` saying why (OpenDP, the peers' library, missing; the recipe refused: a column
    without a public domain, missing cells kept as a value; a domain too large).

    Parameters
    ----------
    prepared : core.data.PreparedData
        The data the release is made from (after any coarsening), every numeric column scaled.
    original : pandas.DataFrame
        The original columns (before coarsening): the planner's frame; ``counts`` its records
        per row when it is a frequency table.
    guarantee : core.planning.GuaranteeTarget — ε, δ and the planned releases k
    utility : core.planning.UtilityTarget
    bins : int in [1, …] — public bins per numeric axis (the recipe's ``bins``)
    rng : numpy.random.Generator — draws every release (the measurement is reproducible)
    runs : int in [1, 100] — releases per mechanism
    counts : array of int, shape (len(original),), optional
    mechanisms : keys of :data:`core.release.RELEASE_MECHANISMS` (default AIM, MST)
    progress : callable(fraction, message), optional

    Returns
    -------
    list of Candidate, one per mechanism, in the order given
    """
    rng = check_rng(rng)
    runs = check_integer("runs", runs, minimum=1, maximum=100)
    if not isinstance(original, pd.DataFrame) or original.empty:
        raise ValueError("original must be a non-empty DataFrame")
    weights = (np.ones(len(original), dtype=np.int64) if counts is None
               else check_row_counts(counts, len(original)).astype(np.int64))
    n = int(prepared.n)
    specs = tuple(info.spec for info in prepared.column_info)
    numeric = [s.name for s in specs if s.kind == "numeric" and s.name in original.columns]
    out = []
    for i, key in enumerate(mechanisms):
        mechanism = RELEASE_MECHANISMS[key]
        base = dict(key=key, label=mechanism.label, mechanism=key, settings={"bins": int(bins)}, m=None, n=n)
        if not peers_available():
            out.append(Candidate(**base, unavailable=PEERS_MISSING))
            continue
        try:
            recipe = ReleaseRecipe(source="upload", columns=specs, eps=guarantee.eps, delta=guarantee.delta,
                                   mechanism=key, bins=int(bins), sigma=None, theta=None, m=None,
                                   releases=guarantee.releases)
            m, _ = mechanism.release_size(recipe, prepared.table.counts)
            statement = mechanism.spec(recipe.public(), n, m).global_guarantee()
            measured = {c: {k: np.empty(runs) for k in _METRICS} for c in numeric}
            truths = {}
            for c in numeric:
                values = pd.to_numeric(original[c], errors="coerce").to_numpy(float)
                present = np.isfinite(values)
                truths[c] = _truth(values[present], weights[present])
            start = time.perf_counter()
            for r in range(runs):   # a loop over runs only: each release is vectorised
                if progress is not None:
                    progress((i * runs + r) / (len(mechanisms) * runs),
                             f"{mechanism.label}: release {r + 1} of {runs} (m = {m:,})")
                draw = mechanism.release(recipe, prepared, m, rng)
                for c in numeric:
                    released = draw.synthetic[c].to_numpy(float)
                    for k, v in _metrics(released, *truths[c]).items():
                        measured[c][k][r] = v
            seconds = (time.perf_counter() - start) / runs
        except ValueError as exc:   # the recipe refused, or the domain too large: say why, do not fail
            out.append(Candidate(**base, unavailable=str(exc)))
            continue
        metrics, ratio = _summarise(measured, utility)
        out.append(Candidate(**{**base, "m": int(m)}, verdict=statement.verdict, guarantee=statement,
                             size_words=size_in_words(m, n), utility={c: v["w1"] for c, v in metrics.items()},
                             metrics=metrics, ratio=float(ratio), meets_utility=bool(ratio <= 1.0), seconds=seconds))
    if progress is not None:
        progress(1.0, "done")
    return out


# --------------------------------------------------------------------------- the rule
def _order(c: Candidate) -> tuple:
    """Verdict first (pure > strong > weak > missed; unavailable last), then meeting the utility
    target, then the larger m, then the smaller worst ratio."""
    ratio = c.ratio if math.isfinite(c.ratio) else math.inf
    return (_RANK.get(c.verdict, len(_RANK)) if c.available else len(_RANK) + 1, c.meets_utility is not True,
            -(c.m or 0), ratio)


def _worst(c: Candidate, utility: UtilityTarget | None) -> str:
    """The candidate's worst metric against its target, in words (``""`` without a target)."""
    if utility is None or not c.metrics:
        return f"its worst ratio to the target is {c.ratio:.3g}"
    worst = max(((v / utility.bounds_for(col)[k], col, k, v, utility.bounds_for(col)[k])
                 for col, metrics in c.metrics.items() for k, v in metrics.items()
                 if math.isfinite(utility.bounds_for(col)[k])), default=None)
    if worst is None:
        return "no utility target is set"
    r, col, k, v, t = worst
    return f"{k} of {col!r} is {v:.4g} against a target of {t:.4g} ({r:.3g}× the target)"


def recommend(candidates: Sequence[Candidate], utility: UtilityTarget | None = None) -> Recommendation:
    """Which candidate to release, by the rule of docs/verdicts.md §7.

    The candidates are ordered **verdict first** (pure > strong > weak > missed; unavailable
    ones last), then by meeting the utility target, then by the larger m, then by the smaller
    worst ratio (largest metric / target). The recommendation is the first *releasable*
    candidate (available, verdict not ``missed``: the gate refuses a missed release) that
    **meets the utility target** — so a weak one is never recommended while a pure or strong
    one meets it, and a weak one recommended is said to be weak first. When none meets the
    target, the message says so plainly first, and the first releasable one in the order is
    named as the closest privacy-first choice (its worst metric against the target).

    Parameters
    ----------
    candidates : sequence of Candidate
    utility : core.planning.UtilityTarget, optional
        Names the worst metric in the message.

    Returns
    -------
    Recommendation
    """
    ranked = tuple(sorted(candidates, key=_order))
    releasable = [c for c in ranked if c.releasable]
    if not releasable:
        why = "; ".join(f"{c.label}: {c.unavailable or 'verdict ' + str(c.verdict)}" for c in ranked)
        return Recommendation(None, "No candidate can be released at this target (" + (why or "none listed") + ").",
                              False, ranked)
    meeting = [c for c in releasable if c.meets_utility]
    if meeting:
        best = meeting[0]
        message = (f"Release {best.label}: verdict {best.verdict}, {best.size_words}; it meets the utility target "
                   f"(worst ratio {best.ratio:.3g}).")
        if best.verdict == "weak":
            message = ("No pure or strong candidate meets the utility target, so the best is a weak one. " + message)
        others = meeting[1:]
        if others:
            message += (" Also meeting it: " + "; ".join(f"{c.label} ({c.verdict}, {c.m:,} rows, worst ratio "
                                                          f"{c.ratio:.3g})" for c in others) + ".")
        better = [c for c in releasable if _RANK[c.verdict] < _RANK[best.verdict] and not c.meets_utility]
        if better:
            message += (" Candidates with a better verdict miss the utility target: "
                        + "; ".join(f"{c.label} ({c.verdict}: {_worst(c, utility)})" for c in better) + ".")
        return Recommendation(best, message, True, ranked)
    best = releasable[0]
    message = (f"None of the candidates meets the utility target. The privacy-first choice is {best.label} "
               f"(verdict {best.verdict}, {best.size_words}), but {_worst(best, utility)}: relax the utility target, "
               "raise ε or δ, or coarsen the data before releasing anything.")
    return Recommendation(best, message, False, ranked)
