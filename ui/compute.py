"""Cached calls into :mod:`core`: privacy curves, comparisons and the Audit page's
computations (releases: :mod:`ui.release`).

Every function here calls ``core`` and caches the result with
:data:`ui.selection.session_cache` (``st.cache_data(scope="session")``), keyed by the
selection key and the parameters; its inputs derived from the confidential data are
passed unhashed (underscore-prefixed). Random functions take the seed explicitly and
build ``numpy.random.default_rng(seed)`` inside, so a cached result is always the result
for that seed.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd
import streamlit as st
from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from core.evaluation import audit as core_audit
from core.evaluation import compare, informativity, simulation
from core import evaluation, plots, privacy
from core import data as core_data
from core.mechanisms import pypp_release
from core.planning import planner as core_planner
from core.privacy import pld as core_pld
from core.release import report as core_report
from core.validation import PrivacyLeakWarning

from . import state
from .selection import session_cache
from .widgets import progress_bar as _shown_progress_bar

# Grids of the live curves: fixed so that moving ε only moves a marker (no recompute).
EPS_GRID = tuple(float(e) for e in np.geomspace(0.05, 12.0, 40))
EPS_GRID_SIZE_CURVE = tuple(float(e) for e in np.geomspace(0.05, 12.0, 25))
CEILING_LABEL = "Bootstrap (no privacy)"
SWEEP_EPS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
#: The fewest seconds between two updates of a progress bar: core may report far more often
#: (every report is a point where a run whose session ended stops), the browser needs no more.
PROGRESS_INTERVAL_S = 0.1


def session_ended() -> bool:
    """Whether the session of the current script run has ended (its tab closed or its
    connection lost): the runtime no longer lists it as active. ``False`` outside a run."""
    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None or not Runtime.exists():
        return False
    return not Runtime.instance().is_active_session(ctx.session_id)


def cancellable(progress, *, ended=session_ended, interval: float = PROGRESS_INTERVAL_S):
    """A core ``progress(fraction, message)`` callback that is also the run's cancellation point.

    A long computation in core calls no Streamlit function between its reports, so Streamlit's
    own stop request (sent when a session disconnects, acted on at the next element it sends)
    reaches it only there. Each report first asks whether the session has ended and then stops
    the script run (``st.stop``, Streamlit's StopException: a BaseException, which core's
    ``except Exception`` clauses let through, and nothing is cached); the bar itself is updated
    at most every ``interval`` seconds, and always at the end.
    """
    last = [-float("inf")]

    def report(fraction, message):
        if ended():
            st.stop()
        now = time.monotonic()
        if now - last[0] >= interval or fraction >= 1.0:
            last[0] = now
            progress(fraction, message)

    return report


def progress_bar(text: str):
    """:func:`ui.widgets.progress_bar` whose callback is :func:`cancellable`."""
    bar, progress = _shown_progress_bar(text)
    return bar, cancellable(progress)



# --------------------------------------------------------------------------- privacy
@session_cache(max_entries=64)
def release_guarantee(spec: privacy.ReleaseSpec) -> tuple[privacy.Guarantee, str]:
    """The composed global guarantee of ``spec`` with its verdict (docs/verdicts.md), and what
    would meet the target — the object every page, report and file reads (public inputs only)."""
    return spec.regime.release_guarantee(spec), spec.regime.meeting_advice(spec)


@session_cache(max_entries=32)
def dp_delta_curves(table_key: str, _multiplicities: np.ndarray, mechanism: privacy.ReleaseSpec,
                    eps_grid: tuple[float, ...]) -> dict:
    """σ = 0 curves on ``eps_grid`` (docs/mathematics.md §3.1), plus the singleton term T₁.
    ``mechanism``: the spec without its target (:meth:`core.privacy.ReleaseSpec.without_target`),
    so moving ε or δ only moves a marker."""
    eps = np.asarray(eps_grid)
    mult = np.asarray(_multiplicities)
    n, theta, m = mechanism.n, mechanism.theta, mechanism.m
    return {
        "instance": privacy.instance_delta(mult, 0.0, theta, m, eps),
        "tight": privacy.tight_instance_delta(mult, theta, m, eps),
        "global": privacy.global_delta(n, theta, m, eps),
        "simple": privacy.global_delta_simple_bound(n, theta, m, eps),
        # δ*(ε) equals the singleton term exactly for ε ≥ log(1 + m), so its value at
        # ε = ∞ is T₁ = m/(m + θ + n − 1), computed by core.
        "singleton_term": float(privacy.global_delta(n, theta, m, np.inf)),
    }


@session_cache(max_entries=128)
def dp_point_guarantees(table_key: str, _multiplicities: np.ndarray, spec: privacy.ReleaseSpec) -> dict:
    """σ = 0 at the spec's ε: the δ's (each rounded up by core) and the exact verdicts against
    its δ target (``core.privacy.*_at_most``, decided exactly, never by comparing rounded floats)."""
    mult = np.asarray(_multiplicities)
    n, theta, m, eps, delta = spec.n, spec.theta, spec.m, spec.eps, spec.delta
    return {
        "instance": float(privacy.instance_delta(mult, 0.0, theta, m, eps)),
        "tight": float(privacy.tight_instance_delta(mult, theta, m, eps)),
        "global": float(privacy.global_delta(n, theta, m, eps)),
        "simple": float(privacy.global_delta_simple_bound(n, theta, m, eps)),
        "instance_meets": privacy.instance_delta_at_most(mult, 0.0, theta, m, eps, delta),
        "global_meets": privacy.global_delta_at_most(n, theta, m, eps, delta),
    }


@session_cache(max_entries=32)
def dm_delta_curve(table_key: str, _multiplicities: np.ndarray, mechanism: privacy.ReleaseSpec,
                   eps_grid: tuple[float, ...]) -> dict:
    """σ < 0: the δ bound on the grid (docs/mathematics.md §3.3) and the pure-DP ε thresholds
    (rounded up by core). Independent of the selected ε, so moving ε only moves a marker."""
    mult = np.asarray(_multiplicities)
    sigma, theta, m = mechanism.sigma, mechanism.theta, mechanism.m
    return {
        "curve": privacy.instance_delta(mult, sigma, theta, m, np.asarray(eps_grid)),
        "pure_eps_instance": privacy.dirichlet_multinomial_pure_epsilon(mult, -sigma, m, instance=True),
        "pure_eps_global": privacy.dirichlet_multinomial_pure_epsilon(mult, -sigma, m, instance=False),
    }


@session_cache(max_entries=128)
def dm_point_guarantees(table_key: str, _multiplicities: np.ndarray, spec: privacy.ReleaseSpec) -> dict:
    """σ < 0 at the spec's ε: the δ bound and the exact verdicts (pure ε-DP at the data and
    globally, docs/mathematics.md §3.3; bound ≤ δ target), each decided exactly by core."""
    mult = np.asarray(_multiplicities)
    sigma, theta, m, eps, delta = spec.sigma, spec.theta, spec.m, spec.eps, spec.delta
    return {
        "bound": float(privacy.instance_delta(mult, sigma, theta, m, eps)),
        "pure_instance": privacy.dirichlet_multinomial_is_pure(mult, -sigma, m, eps, instance=True),
        "pure_global": privacy.dirichlet_multinomial_is_pure(mult, -sigma, m, eps, instance=False),
        "bound_meets": privacy.instance_delta_at_most(mult, sigma, theta, m, eps, delta),
    }


@session_cache(max_entries=16)
def py_instance_statement(table_key: str, _multiplicities: np.ndarray, spec: privacy.ReleaseSpec,
                          n_mc: int) -> privacy.Guarantee:
    """σ ∈ (0, 1): the instance-level statement of the curator record at the spec's ε, with the
    spec's own Monte Carlo seed (``ReleaseSpec.monte_carlo_seed``): the value the record carries."""
    bar, _ = progress_bar("Monte Carlo estimate of δ_x(ε) at the chosen ε…")
    statement = core_report.guarantees(spec, np.asarray(_multiplicities), spec.eps, spec.delta, n_mc=n_mc)[0]
    bar.empty()
    return statement


@session_cache(max_entries=16)
def py_monte_carlo(table_key: str, _multiplicities: np.ndarray, mechanism: privacy.ReleaseSpec,
                   eps_grid: tuple[float, ...], n_mc: int, seed: int) -> dict:
    """σ ∈ (0, 1): Monte Carlo δ with its standard error and upper bound (docs/mathematics.md §3.2).
    The replicates are kept by core (``core.privacy.monte_carlo_replicates``): the statement at
    the chosen ε and the old-values curve with the same seed read them again, so a move of ε
    draws nothing new."""
    bar, progress = progress_bar("Monte Carlo estimate of δ_x(ε)…")
    replicates = privacy.monte_carlo_replicates(np.asarray(_multiplicities), mechanism.sigma, mechanism.theta,
                                                mechanism.m, n_mc=n_mc, seed=seed, progress=progress)
    res = replicates.delta(np.asarray(eps_grid), progress=progress)
    bar.empty()
    return {"eps": res.eps, "estimate": res.estimate, "std_error": res.std_error, "upper": res.upper,
            "n_mc": res.n_mc, "n_types": res.n_types, "worst_type": list(res.worst_type)}


@session_cache(max_entries=16)
def old_values_curve(table_key: str, _multiplicities: np.ndarray, mechanism: privacy.ReleaseSpec,
                     eps_grid: tuple[float, ...], n_mc: int, seed: int) -> np.ndarray:
    """``core.privacy.old_values_delta`` on ``eps_grid``: the old-values-only release (thesis
    Algorithm 3; docs/bayesian_family.md §3). Exact where the regime's instance δ is (σ = 0);
    otherwise the Monte Carlo 95% upper bound, with a progress bar."""
    mult, eps = np.asarray(_multiplicities), np.asarray(eps_grid)
    sigma, theta, m = mechanism.sigma, mechanism.theta, mechanism.m
    if mechanism.regime.exact_instance_delta:
        return privacy.old_values_delta(mult, sigma, theta, m, eps)
    bar, progress = progress_bar("Monte Carlo estimate of δ_x(ε), old values only…")
    out = privacy.old_values_delta(mult, sigma, theta, m, eps, n_mc=n_mc, seed=seed, progress=progress)
    bar.empty()
    return out


@session_cache(max_entries=16)
def size_curves(table_key: str, _multiplicities: np.ndarray, n: int, theta: float, delta: float,
                eps_grid: tuple[float, ...]) -> dict:
    """The ε-vs-m curves (the paper's global m* of Theorem 2 and instance-level) and m_sing."""
    eps = np.asarray(eps_grid)
    return {
        "global": privacy.synthetic_size_curve(n, theta, eps, delta),
        "instance": privacy.synthetic_size_curve(n, theta, eps, delta, multiplicities=np.asarray(_multiplicities)),
        "m_sing": privacy.singleton_limit(n, theta, delta),
    }


@session_cache(max_entries=16)
def feasible_theta_m(n: int, eps: float, delta: float, theta_grid: tuple[float, ...]) -> np.ndarray:
    """The largest m at each θ of the grid whose one release is globally (ε, δ)-DP on the exact
    profile, T₁ ≤ δ at any ε (inverse calibration, σ = 0; docs/verdicts.md §2)."""
    return np.array([privacy.DIRICHLET_PROCESS.largest_m(n, 0.0, t, eps, delta) for t in theta_grid],
                    dtype=np.int64)


def theta_grid(n: int, size: int = 30) -> tuple[float, ...]:
    """θ on a log grid over the range of the Privacy page's θ slider and of the Release
    planner (:data:`ui.state.THETA_RANGE`): m_sing grows with θ + n − 1, so θ matters once
    it is comparable with n, and any θ recommended here can be chosen there."""
    return tuple(float(t) for t in np.geomspace(*state.THETA_RANGE, size))


@session_cache(max_entries=64)
def max_size_at(n: int, theta: float, eps: float, delta: float) -> int:
    return int(privacy.DIRICHLET_PROCESS.largest_m(n, 0.0, theta, eps, delta))


def feasible_region(n: int, eps: float, delta: float, theta: float) -> tuple[tuple[float, ...], np.ndarray]:
    """The θ grid with the selected θ inserted, and m*(ε, δ; θ) on it. The fixed grid is
    cached per (n, ε, δ), so moving θ computes one more m* only."""
    grid = theta_grid(n)
    m_star = feasible_theta_m(n, eps, delta, grid)
    if theta in grid:
        return grid, m_star
    pos = int(np.searchsorted(grid, theta))
    return (grid[:pos] + (float(theta),) + grid[pos:],
            np.insert(m_star, pos, max_size_at(n, float(theta), eps, delta)))


# --------------------------------------------------------------------------- figures
def distribution_overlay(samples: dict[str, np.ndarray], *, title: str, x_title: str,
                         first_table: tuple[np.ndarray, np.ndarray] | None = None, **options):
    """Histograms of ``samples`` with a KDE (``core.evaluation``) of each sample that has one
    (a KDE needs two distinct values; without a common grid the histograms alone show).

    ``first_table``: ``(values, counts)``, the frequency table of the whole data the first
    sample pictures (e.g. a bounded sample of it): its KDE and the grid then come from the
    table (cost in k), the histogram from the sample. The KDEs are binned where the grid
    resolves them (``core.evaluation.kde_curves``). ``options``: passed to
    ``core.plots.distribution_overlay_figure`` (``names``, ``histograms``)."""
    kde_inputs = list(samples.values())
    counts = None
    if first_table is not None:
        kde_inputs[0], counts = first_table
    try:
        grid = evaluation.kde_grid(*kde_inputs, first_counts=counts)
    except ValueError:
        return plots.distribution_overlay_figure(samples, title=title, x_title=x_title, **options)
    # a sample with a single distinct value has no KDE
    curves = evaluation.kde_curves(kde_inputs, grid, first_counts=counts)
    kde = {label: curve for label, curve in zip(samples, curves) if curve is not None}
    return plots.distribution_overlay_figure(samples, kde_grid=grid, kde=kde or None, title=title,
                                             x_title=x_title, **options)


# --------------------------------------------------------------------------- pictures of the data
#: Rows drawn from the frequency table (fixed seed) when a page needs rows but only a
#: picture of the data: n ≤ this many keeps every record (``PreparedData.sample``).
PICTURE_ROWS = 1_000_000
PICTURE_SEED = 20_240_613


def data_picture(prepared: core_data.PreparedData, size: int = PICTURE_ROWS) -> tuple[np.ndarray, bool]:
    """Rows of the prepared data for a picture or an experiment that needs rows, and
    whether they are a sample: every record while n ≤ ``size``, else ``size`` records
    drawn without replacement from the table with a fixed seed (cost O(k + size), never
    the n rows). Pages say so when it is a sample."""
    rows = prepared.sample(size, np.random.default_rng(PICTURE_SEED))
    return rows, prepared.n > size


def column_table(prepared: core_data.PreparedData, column: str) -> tuple[np.ndarray, np.ndarray]:
    """The frequency table of one column in original units (as ``ReleaseResult.confidential()``
    gives its values): the sorted distinct values and how many records hold each, built from
    the table — the k distinct rows mapped back once and reduced — so cost O(k), never the n
    records. ``numpy.repeat(values, counts)`` is the column's sorted records."""
    table = prepared.table
    distinct = prepared.to_original(table.atoms)[column].to_numpy()
    # missing is a value (docs/mathematics.md §2.5): the missing cells are one more entry, last (NaN in a
    # numeric column, None in a categorical one), never refused
    missing = pd.isna(distinct)
    reduced = core_data.frequency_table(distinct[~missing], np.asarray(table.counts)[~missing])
    if not missing.any():
        return reduced.atoms, reduced.counts
    marker = np.array([np.nan if reduced.atoms.dtype.kind == "f" else None], dtype=reduced.atoms.dtype)
    return (np.concatenate([reduced.atoms, marker]),
            np.append(reduced.counts, np.asarray(table.counts)[missing].sum()))


def singleton_stand_ins(prepared: core_data.PreparedData) -> np.ndarray:
    """The distinct rows, each repeated min(count, 2) times: a row equals a confidential
    row, or a confidential singleton, exactly when it does so for these stand-ins, so
    ``core.evaluation.audit.exact_match_counts`` gives the same counts on them at cost O(k), not O(n)."""
    table = prepared.table
    return np.repeat(table.atoms, np.minimum(table.counts, 2), axis=0)


# --------------------------------------------------------------------------- comparison
def comparison_data(prepared: core_data.PreparedData) -> evaluation.ComparisonTable:
    """The confidential data as the comparison sees them (``core.evaluation.comparison_table``):
    the k distinct rows on [0, 1]^d — numeric columns scaled with their public bounds,
    categorical ones at their categories' positions — with their ``counts`` and what is
    public about each column. Every mechanism and metric of the comparison runs on this
    table, so the n rows are never built. Raises ValueError (naming the column) for a
    numeric column that is not scaled to [0, 1]."""
    return evaluation.comparison_table(prepared)


@session_cache(max_entries=8)
def calibration(selection_key: str, n: int, d: int, eps: float, delta: float, m: int | str, theta: float,
                bins: int, bounds_from_data: bool, levels: tuple | None = None, unlisted: tuple[str, ...] = (),
                peers: tuple[str, ...] = ()):
    """``core.evaluation.compare.calibrate`` (cached) of the default mechanisms and the ``peers``
    (keys of ``core.mechanisms.PEER_MECHANISMS``); ``levels`` and ``unlisted`` from the
    selection's :func:`comparison_data` (categorical columns and those without a public list).
    The peers were asked for by name: one that cannot run is an error naming what is missing;
    a default mechanism that cannot run is skipped (``Calibration.skipped``)."""
    return compare.calibrate(n, eps, delta, m, theta=theta, d=d, bins=bins, bounds_from_data=bounds_from_data,
                             levels=levels, unlisted=unlisted, mechanisms=compare.DEFAULT_MECHANISMS + tuple(peers),
                             required=tuple(peers))


#: Seconds a Compare run should take at the page's defaults (issue 36; benchmarks/bench_compare_defaults.py).
COMPARE_BUDGET_S = 60.0


@session_cache(max_entries=8)
def evaluated_calibration(selection_key: str, n: int, d: int, eps: float, delta: float, m: int | str, theta: float,
                          bins: int, bounds_from_data: bool, levels: tuple | None, unlisted: tuple[str, ...],
                          peers: tuple[str, ...], evaluated_key, _evaluated):
    """:func:`calibration` with the evaluated release's mechanism first (``_evaluated``, from
    ``ui.evaluated.comparison_mechanism``; ``evaluated_key``: its release, the cache key), or
    without one when it is ``None``."""
    return compare.calibrate(n, eps, delta, m, theta=theta, d=d, bins=bins, bounds_from_data=bounds_from_data,
                             levels=levels, unlisted=unlisted, mechanisms=compare.DEFAULT_MECHANISMS + tuple(peers),
                             required=tuple(peers), evaluated=_evaluated)


@session_cache(max_entries=4)
def comparison_runs(selection_key: str, _table: evaluation.ComparisonTable, _calibration, calibration_key: tuple,
                    runs: int, seed: int, columns: tuple[str, ...], yardsticks: bool = False) -> pd.DataFrame:
    """``core.evaluation.compare.run_comparison`` on the comparison table with ``default_rng(seed)`` (cached),
    with a progress bar; ``yardsticks``: with the field's yardsticks of every run."""
    bar, progress = progress_bar("Running the mechanisms…")
    out = compare.run_comparison(_table, _calibration, runs=runs, rng=np.random.default_rng(seed),
                                 progress=progress, columns=list(columns), yardsticks=yardsticks)
    bar.empty()
    return out


@session_cache(max_entries=4)
def one_release_per_mechanism(selection_key: str, _table: evaluation.ComparisonTable, _calibration,
                              calibration_key: tuple, seed: int) -> dict[str, np.ndarray]:
    """One release of every calibrated mechanism from the frequency table (for the KDE
    overlays), label → (m, d)."""
    rng = np.random.default_rng([seed, 1])
    out = {}
    for mech in _calibration.mechanisms:
        size = mech.release_size or _calibration.m
        z = np.asarray(mech.release(_table.atoms, size, rng, counts=_table.counts), dtype=float)
        out[mech.label] = z.reshape(z.shape[0], -1)
    return out


@session_cache(max_entries=4)
def overlay_releases(selection_key: str, _table: evaluation.ComparisonTable, _calibration, calibration_key: tuple,
                     seed: int) -> dict[str, np.ndarray]:
    """:func:`one_release_per_mechanism` with a progress bar naming each mechanism; each report is
    where the run stops when its session has ended (:func:`cancellable`): a peer at m = n may take
    long for its one release."""
    bar, progress = progress_bar("One release per mechanism for the overlays…")
    rng = np.random.default_rng([seed, 1])
    out = {}
    mechanisms = _calibration.mechanisms
    for i, mech in enumerate(mechanisms):
        progress(i / len(mechanisms), f"overlays: one release of {mech.label}")
        size = mech.release_size or _calibration.m
        z = np.asarray(mech.release(_table.atoms, size, rng, counts=_table.counts), dtype=float)
        out[mech.label] = z.reshape(z.shape[0], -1)
    progress(1.0, "done")
    bar.empty()
    return out


@session_cache(max_entries=2)
def sweep_runs(selection_key: str, _table: evaluation.ComparisonTable, eps_values: tuple[float, ...], delta: float,
               m: int | str, theta: float, bins: int, runs: int, seed: int, columns: tuple[str, ...],
               peers: tuple[str, ...] = ()) -> pd.DataFrame:
    """``core.evaluation.compare.sweep_comparison`` on the comparison table (the utility frontier) of the
    default mechanisms and the ``peers``, cached, with a progress bar."""
    bar, progress = progress_bar("Sweeping ε…")
    out = compare.sweep_comparison(_table, list(eps_values), delta, m, theta=theta, runs=runs,
                                   rng=np.random.default_rng(seed), bins=bins, progress=progress,
                                   columns=list(columns), mechanisms=compare.DEFAULT_MECHANISMS + tuple(peers))
    bar.empty()
    return out


#: How a missing value kept as a value (one more public category) is named in a figure.
MISSING_LABEL = "(missing)"


def comparison_overlay(table: evaluation.ComparisonTable, picture: np.ndarray, releases: dict[str, np.ndarray],
                       j: int, names: dict[str, str] | None = None):
    """One release per mechanism against the data on column ``j``, in the column's own terms
    (``names``: label → mechanism name, for each mechanism's colour and panel).

    A numeric column: histograms + KDEs in original units, the confidential histogram from
    ``picture`` (:func:`data_picture`: every record while n ≤ ``PICTURE_ROWS``, else a
    fixed-seed sample), its KDE from the whole frequency table. A categorical column: the
    share of each category (new labels pooled), the confidential shares from the table."""
    column = table.columns[j]
    atoms = table.atoms.reshape(table.k, -1)[:, j]
    if column.kind == "categorical":
        shares = {"confidential": column.shares(atoms, table.counts)}
        shares.update({label: column.shares(z[:, j]) for label, z in releases.items()})
        # the missing marker (missing is a value) is one more public category: named, never "None"
        categories = [MISSING_LABEL if c is None else c for c in column.labels] + [evaluation.OTHER_CATEGORY]
        return plots.category_shares_figure(categories, shares, x_title=column.name, names=names,
                                            title=f"{column.name}: category shares, one release per mechanism")
    values = column.original(atoms)
    confidential = column.original(np.asarray(picture).reshape(len(picture), -1)[:, j].astype(float))
    # the comparison is over the numbers (ComparisonTable.missing_left_out): a missing cell is no point to draw
    samples = {"confidential": confidential[~np.isnan(confidential)]}
    samples.update({label: column.original(z[:, j]) for label, z in releases.items()})
    return distribution_overlay(samples, title=f"{column.name} (original units): one release per mechanism",
                                x_title=column.name, first_table=(values, table.counts), names=names,
                                histograms="reference")


# --------------------------------------------------------------------------- audit
#: Type-I errors α at which the trade-off curves β(α) are drawn (docs/audit.md).
TRADEOFF_ALPHA = tuple(float(a) for a in np.linspace(0.0, 1.0, 201))
#: Privacy-loss models of PYPP kept per session (each holds its cached compositions).
LOSS_MODELS_KEPT = 4


def pypp_loss_model(table_key: str, multiplicities: np.ndarray, mechanism: privacy.ReleaseSpec, scope: str,
                    n_mc: int, seed: int) -> core_pld.PrivacyLoss:
    """The PYPP privacy-loss model (``core.privacy.pld``), kept in this session's state: a
    PLD object holds callables and dp_accounting objects, which st.cache_data would pickle
    on every hit; its compositions are cached inside it. At most :data:`LOSS_MODELS_KEPT`
    models are kept. Where the regime's loss distribution is exact (σ = 0): global (every
    dataset of size n) or instance level; otherwise (σ ∈ (0, 1)) Monte Carlo with
    ``default_rng(seed)``. ``mechanism``: the spec without its target."""
    sigma, theta, m = mechanism.sigma, mechanism.theta, mechanism.m
    key = (table_key, mechanism, scope, n_mc, seed)
    memo = st.session_state.setdefault("_audit_models", {})
    if key not in memo:
        mult = np.asarray(multiplicities)
        if mechanism.regime.exact_loss_distribution:
            model = (core_pld.pypp_global_loss(int(mult.sum()), theta, m) if scope == "global"
                     else core_pld.pypp_instance_loss(mult, theta, m))
        else:
            model = core_pld.pypp_monte_carlo_loss(mult, sigma, theta, m, n_mc=n_mc, rng=np.random.default_rng(seed))
        while len(memo) >= LOSS_MODELS_KEPT:
            memo.pop(next(iter(memo)))
        memo[key] = model
    return memo[key]


@session_cache(max_entries=64)
def composed_delta_curves(model_key: tuple, _model: core_pld.PrivacyLoss, k: int, eps_max: float) -> dict:
    """δ(ε) on 121 points of [0, ``eps_max``] after k releases: by PLD composition, by naive
    composition of the single-release guarantee, and for one release."""
    eps = np.linspace(0.0, eps_max, 121)
    return {"eps": eps, "composed": _model.delta(eps, releases=k),
            "naive": core_pld.naive_composition_delta(_model, eps, k), "single": _model.delta(eps)}


@session_cache(max_entries=64)
def composed_epsilon(model_key: tuple, _model: core_pld.PrivacyLoss, k: int, delta: float) -> float:
    """The total ε of k releases at ``delta`` (PLD composition)."""
    return _model.epsilon(delta, releases=k)


@session_cache(max_entries=8)
def tradeoff_curves(cal_key: tuple, _calibration) -> tuple[dict, float | None, dict, dict]:
    """The trade-off curve β(α) on :data:`TRADEOFF_ALPHA` of every calibrated mechanism
    (``core.privacy.pld.calibration_losses``), label → (α, β); the μ of the one that is
    Gaussian-DP (or ``None``); label → the note on its PLD; and label → the mechanism's
    name (its colour and panel in the figure)."""
    losses = core_pld.calibration_losses(_calibration)
    alpha = np.asarray(TRADEOFF_ALPHA)
    curves, notes, names, mu = {}, {}, {}, None
    for name, loss in losses.items():
        label = f"{loss.label} ({loss.kind})"
        curves[label] = (alpha, loss.tradeoff(alpha))
        notes[label] = loss.note
        names[label] = name
        mu = loss.mu_gdp if loss.mu_gdp is not None else mu
    return curves, mu, notes, names


@session_cache(max_entries=8)
def histogram_tradeoff_curve(cal_key: tuple, _calibration, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(α, β(α)) on :data:`TRADEOFF_ALPHA` of the calibrated histogram mechanism ``name``:
    the theory an empirical audit of it is drawn against."""
    alpha = np.asarray(TRADEOFF_ALPHA)
    return alpha, core_pld.calibration_losses(_calibration)[name].tradeoff(alpha)


@session_cache(max_entries=8)
def stated_instance_delta(table_key: str, _multiplicities: np.ndarray, sigma: float, theta: float, m: int,
                          eps: float, n_mc: int, seed: int) -> float:
    """The Privacy page's δ_x(ε) at the data (``core.privacy.instance_delta``; Monte Carlo
    with ``seed`` for σ ∈ (0, 1)): the guarantee an audit of PYPP tests."""
    return float(privacy.instance_delta(np.asarray(_multiplicities), sigma, theta, m, eps, n_mc=n_mc, seed=seed))


@session_cache(max_entries=4)
def run_pypp_audit(table_key: str, _multiplicities: np.ndarray, sigma: float, theta: float, m: int, eps: float,
                   delta: float, n_sim: int, confidence: float, seed: int):
    """``core.evaluation.audit.audit_pypp`` with ``default_rng(seed)``, with a progress bar."""
    bar, progress = progress_bar("Simulating releases on x and on its worst neighbour…")
    res = core_audit.audit_pypp(np.asarray(_multiplicities), sigma, theta, m, eps, delta, n_simulations=n_sim,
                                rng=np.random.default_rng(seed), confidence=confidence, progress=progress)
    bar.empty()
    return res


@session_cache(max_entries=4)
def run_histogram_audit(cal_key: tuple, _table, _calibration, name: str, n_sim: int,
                        confidence: float, seed: int):
    """``core.evaluation.audit.audit_histogram`` on the scaled data given as its frequency table
    (:func:`comparison_data`): the audit reads the cell counts only (cost in k, not n)."""
    bar, progress = progress_bar("Simulating releases on x and on its worst neighbour…")
    res = core_audit.audit_histogram(_table.atoms, _calibration.mechanism(name), _calibration.m, counts=_table.counts,
                                     n_simulations=n_sim, rng=np.random.default_rng(seed), confidence=confidence,
                                     progress=progress)
    bar.empty()
    return res


@session_cache(max_entries=2)
def run_mechanism_audit(key: tuple, _table, _mechanism, n_sim: int, confidence: float, seed: int):
    """``core.evaluation.audit.audit_histogram`` of the evaluated release's mechanism (``key``: the
    selection and the release, ``ui.evaluated``) at its own release size, with a progress bar."""
    bar, progress = progress_bar(f"Simulating {_mechanism.label} on x and on its worst neighbour…")
    res = core_audit.audit_histogram(_table.atoms, _mechanism, int(_mechanism.release_size or _table.n),
                                     counts=_table.counts, n_simulations=n_sim, rng=np.random.default_rng(seed),
                                     confidence=confidence, progress=progress)
    bar.empty()
    return res


@session_cache(max_entries=2)
def disclosure_risk_summary(table_key: str, _prepared, sigma: float, theta: float, m: int, seed: int,
                            n_attacks: int, secret: str | None) -> dict:
    """Exact matches of a release with the confidential rows and singletons, and the three
    Anonymeter-style attacks (``core.evaluation.audit.disclosure_risk``) on a release from a
    training part with a held-out control part; every draw from ``default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    columns = [str(c) for c in _prepared.columns]
    table = _prepared.table
    bases = _prepared.bases
    # 1. the simple counts, for a release made from all the confidential records (exact,
    #    from the table: each distinct row at most twice tells equal rows and singletons)
    full = pypp_release(table.atoms, table.counts, sigma, theta, m, rng, base=bases)
    counts = core_audit.exact_match_counts(singleton_stand_ins(_prepared), full.values)
    # 2. Anonymeter-style attacks: release from the training part, control held out. They
    #    need records: every record while n ≤ PICTURE_ROWS, else a fixed-seed sample.
    values, sampled = data_picture(_prepared)
    values = np.asarray(values)
    train_idx, control_idx = core_audit.holdout_split(values.shape[0], 0.2, rng)
    train_table = core_data.frequency_table(values[train_idx])
    release = pypp_release(train_table.atoms, train_table.counts, sigma, theta, m, rng, base=bases)

    def frame(rows):
        rows = np.asarray(rows, dtype=object if rows.dtype == object else float)
        return pd.DataFrame(rows.reshape(rows.shape[0], -1), columns=columns).infer_objects()

    risks = core_audit.disclosure_risk(frame(values[train_idx]), frame(values[control_idx]), frame(release.values),
                                       rng=rng, n_attacks=n_attacks, secret=secret)
    return {"counts": counts, "risks": risks, "n_train": int(train_idx.size), "n_control": int(control_idx.size),
            "sampled": sampled, "n_records": int(values.shape[0])}


# --------------------------------------------------------------------------- compare
@session_cache(max_entries=4)
def quality_of_releases(selection_key: str, calibration_key: tuple, seed: int, columns: tuple[str, ...], _prepared,
                        _releases: dict):
    """``core.evaluation.compare.quality_by_mechanism`` of the one release per mechanism (cached by the
    data, calibration and seed), from the frequency table; with a progress bar."""
    bar, progress = progress_bar("Quality report of each mechanism's release…")
    out = compare.quality_by_mechanism(comparison_data(_prepared), None, _releases, columns=list(columns),
                                       progress=progress)
    bar.empty()
    return out


# --------------------------------------------------------------------------- inference
#: Level of the credible and confidence intervals of the Inference page.
CREDIBLE_LEVEL = 0.95


@session_cache(max_entries=8)
def posterior_summary(release_key: tuple, _release: np.ndarray, _confidential: np.ndarray, _counts: np.ndarray,
                      theta: float, bounds: tuple[float, float], n_draws: int, threshold: float, seed: int):
    """``core.evaluation.dp_posterior_functionals`` with ``default_rng(seed)`` and the same functionals
    of the confidential data, given as its frequency table (values, counts) (cached). Returns the
    summary table (with a ``confidential`` column)."""
    posterior = evaluation.dp_posterior_functionals(_release, theta, bounds, n_draws, np.random.default_rng(seed),
                                                   thresholds=(threshold,))
    truth = evaluation.empirical_functionals(_confidential, counts=_counts, thresholds=(threshold,))
    return posterior.summary(CREDIBLE_LEVEL, confidential=truth)


@session_cache(max_entries=4)
def repeated_releases(data_key: tuple, _confidential: np.ndarray, _counts: np.ndarray, theta: float, m: int,
                      bounds: tuple[float, float], replicates: int, n_draws: int, threshold: float, seed: int):
    """``core.evaluation.repeated_release_experiment`` on the confidential frequency table
    (values, counts) with ``default_rng(seed)`` (cached), with a progress bar driven by the
    experiment's progress callback."""
    bar, progress = progress_bar("Releasing and analysing repeatedly…")
    result = evaluation.repeated_release_experiment(
        _confidential, theta, m, bounds, np.random.default_rng(seed), counts=_counts, replicates=replicates,
        n_draws=n_draws, thresholds=(threshold,), level=CREDIBLE_LEVEL, progress=progress)
    bar.empty()
    return result


@session_cache(max_entries=8)
def posterior_share_summary(release_key: tuple, _release: np.ndarray, _confidential: np.ndarray, _counts: np.ndarray,
                            theta: float, categories: tuple, n_draws: int, seed: int):
    """``core.evaluation.dp_posterior_shares`` of a categorical column's release with ``default_rng(seed)``,
    and the confidential shares from its frequency table (labels, counts) (cached): the summary table
    with a ``confidential`` column."""
    posterior = evaluation.dp_posterior_shares(_release, theta, list(categories), n_draws, np.random.default_rng(seed))
    truth = evaluation.empirical_shares(_confidential, list(categories), counts=_counts)
    return posterior.summary(CREDIBLE_LEVEL, confidential=truth)


@session_cache(max_entries=4)
def repeated_share_releases(data_key: tuple, _confidential: np.ndarray, _counts: np.ndarray, theta: float, m: int,
                            categories: tuple, replicates: int, n_draws: int, seed: int):
    """``core.evaluation.repeated_share_experiment`` on a categorical column's frequency table with
    ``default_rng(seed)`` (cached), with a progress bar."""
    bar, progress = progress_bar("Releasing and analysing repeatedly…")
    result = evaluation.repeated_share_experiment(
        _confidential, theta, m, list(categories), np.random.default_rng(seed), counts=_counts,
        replicates=replicates, n_draws=n_draws, level=CREDIBLE_LEVEL, progress=progress)
    bar.empty()
    return result


@session_cache(max_entries=32)
def discovery_estimate(n: int, m: int, new_values: int, sigma: float, theta: float) -> float:
    """``core.evaluation.discovery_probability`` (cached; deterministic, public inputs only)."""
    return evaluation.discovery_probability(n, m, new_values, sigma, theta)


# --------------------------------------------------------------------------- informativity
@st.cache_data(show_spinner=False, max_entries=4)
def dyadic_population(p: float, size: int, seed: int) -> np.ndarray:
    """``core.evaluation.simulation.sample_dyadic_geometric`` with ``default_rng(seed)`` (cached)."""
    return simulation.sample_dyadic_geometric(size, p, np.random.default_rng(seed))


@session_cache(max_entries=8)
def run_informativity_experiment(population_key: str, _population: np.ndarray, n_grid: tuple[int, ...], rule: tuple,
                   theta: float, runs: int, seed: int, bounds: tuple[float, float], log_base: bool = False):
    """``core.evaluation.informativity.informativity_experiment`` with ``default_rng(seed)`` (cached), with a
    progress bar driven by the experiment's progress callback. ``log_base``: H log-uniform on the bounds."""
    kind, first, second = rule
    size_rule = (informativity.PrivacySizeRule(first, second) if kind == "privacy"
                 else informativity.PowerSizeRule(first, second))
    bar, progress = progress_bar("Running the informativity experiment…")
    result = informativity.informativity_experiment(_population, np.asarray(n_grid), size_rule, theta, runs,
                                                    np.random.default_rng(seed), bounds=bounds, log_base=log_base,
                                                    progress=progress)
    bar.empty()
    return result


# --------------------------------------------------------------------------- release planner
@session_cache(max_entries=4)
def run_plan(data_key: str, _frame: pd.DataFrame, _counts, kinds: dict, guarantee: tuple, utility: tuple,
             candidates: tuple, thetas: tuple, m_min: int, m_max: int, runs: int, evaluations: int, seed: int,
             bounds: dict, log: dict, pure: tuple | None = None) -> core_planner.Plan:
    """``core.planning.plan_release`` with ``numpy.random.default_rng(seed)`` (cached: seeded, so
    the same arguments give the same plan). ``guarantee``: (ε, δ, scope, releases); ``pure``:
    ``(steps, categories, alphas)`` as tuples of pairs and a tuple — the
    :class:`core.planning.PureSearch` — or ``None`` (σ = 0 only)."""
    search = None
    if pure is not None:
        steps, categories, alphas = pure
        search = core_planner.PureSearch(dict(steps), categories=dict(categories), alphas=alphas,
                                         max_evaluations=evaluations)
    kind, targets, level = utility
    if kind == "w1":
        target = core_planner.UtilityTarget(w1={c: v[0] for c, v in targets}, level=level)
    else:
        target = core_planner.UtilityTarget(mean_error={c: v[0] for c, v in targets},
                                            quartile_error={c: v[1] for c, v in targets}, level=level)
    bar, progress = progress_bar("Planning …")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)   # the page states bounds from the data itself
        plan = core_planner.plan_release(
            _frame, kinds, core_planner.GuaranteeTarget(*guarantee), target, candidates=candidates, thetas=thetas,
            m_max=m_max, m_min=m_min, runs=runs, max_evaluations=evaluations, rng=np.random.default_rng(seed),
            bounds=bounds, log=log, progress=progress, counts=_counts, pure=search)
    bar.empty()
    return plan


#: Monte Carlo releases per kind behind the Privacy page's utility cost of the pure path.
PURE_COST_RUNS = 20


@session_cache(max_entries=16)
def pure_path_cost(data_key: str, _frame: pd.DataFrame, _counts, kinds: tuple, steps: tuple, categories: tuple,
                   bounds: tuple, log: tuple, coarsening: tuple, alpha: float, m_pure: int, theta: float, m: int,
                   seed: int = 1) -> dict:
    """``core.planning.pure_utility_cost`` (docs/mathematics.md §3.3.1): expected W1 per numeric
    column of the pure release (grid ``steps``, α, ``m_pure``) and of the σ = 0 release (θ, m),
    :data:`PURE_COST_RUNS` releases each from ``default_rng(seed)``, read off counts (cost in
    distinct rows, not in n or m). Mapping arguments come as tuples of pairs (cache keys)."""
    frame, categories = _missing_as_category(_frame, dict(categories))
    return core_planner.pure_utility_cost(
        frame, dict(kinds), dict(steps), alpha=alpha, m_pure=m_pure, theta=theta, m=m, runs=PURE_COST_RUNS,
        rng=np.random.default_rng(seed), bounds=dict(bounds), log=dict(log), categories=categories,
        transforms=coarsening, counts=_counts)


def _missing_as_category(frame: pd.DataFrame, categories: dict) -> tuple[pd.DataFrame, dict]:
    """A categorical column whose public list holds the missing marker ``None`` (missing is a value:
    one more public category, docs/mathematics.md §2.5): its missing cells and that marker become one
    label outside the list, so a search that matches categories by their text counts them as that
    category (the label is a stand-in of this computation only, never released)."""
    frame = frame.copy() if any(None in cats for cats in categories.values()) else frame
    for c, cats in categories.items():
        if None not in cats:
            continue
        label = "(missing)"
        while label in {str(v) for v in cats}:
            label += "'"
        categories[c] = tuple(label if v is None else v for v in cats)
        frame[c] = frame[c].astype(object).where(frame[c].notna(), label)
    return frame, categories
