"""Downstream Bayesian inference from a Dirichlet-process posterior-predictive release
(docs/mathematics.md §6; Menicucci, Beraha, Favaro and Lazzarini 2026, §4.1 and
Appendix C.1): posterior functionals by stick breaking and the repeated-release experiment.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ..data import CategoricalBase, UniformBase, frequency_table
from ..mechanisms import pypp_release
from ..validation import (
    check_bounds,
    check_finite_array,
    check_integer,
    check_probability,
    check_py_parameters,
    check_release_size,
    check_rng,
    check_row_counts,
    check_sample,
)



ProgressCallback = Callable[[float, str], None]


DEFAULT_QUANTILE_LEVELS = (0.25, 0.5, 0.75)


_QUANTILE_NAMES = {0.25: "Q1 (25%)", 0.5: "median", 0.75: "Q3 (75%)"}


# Entries per block of posterior draws (draws × atoms); bounds memory at ~8 MB per array.
_BLOCK_ENTRIES = 2**20


#: Largest number of posterior draws per call (the output holds draws × functionals).
MAX_POSTERIOR_DRAWS = 10**6


#: Largest stick-breaking array, draws × sticks (~θ log(1/truncation) sticks per draw), of one
#: :func:`stick_breaking_dp` call or one block of :func:`dp_posterior_functionals` (400 MB).
MAX_STICK_ENTRIES = 5 * 10**7


#: Largest number of quantile levels or thresholds of one call.
_MAX_FUNCTIONALS = 1000


def functional_names(levels: Sequence[float], thresholds: Sequence[float]) -> list[str]:
    """Display names, in column order: ``mean``, one per quantile level, one per threshold."""
    names = ["mean"]
    names += [_QUANTILE_NAMES.get(float(q), f"quantile {float(q):g}") for q in levels]
    names += [f"P(X > {float(t):g})" for t in thresholds]
    return names


def _check_levels(levels) -> np.ndarray:
    try:
        arr = np.atleast_1d(np.asarray(levels, dtype=np.float64))
    except (TypeError, ValueError):
        raise ValueError(f"quantile_levels must be numbers in (0, 1), got {levels!r}") from None
    if arr.ndim != 1 or arr.size > _MAX_FUNCTIONALS:
        raise ValueError(f"quantile_levels must be a 1-D sequence of at most {_MAX_FUNCTIONALS} levels, "
                         f"got shape {arr.shape}")
    for q in arr:
        check_probability(float(q), "quantile_levels")
    return arr


def _check_thresholds(thresholds) -> np.ndarray:
    try:
        arr = np.atleast_1d(np.asarray(thresholds, dtype=np.float64))
    except (TypeError, ValueError):
        raise ValueError(f"thresholds must be finite numbers, got {thresholds!r}") from None
    if arr.ndim != 1 or not np.all(np.isfinite(arr)) or arr.size > _MAX_FUNCTIONALS:
        raise ValueError(f"thresholds must be a 1-D sequence of at most {_MAX_FUNCTIONALS} finite numbers, "
                         f"got {thresholds!r}")
    return arr


def _first_at_least(rows: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Row-wise ``searchsorted(rows[r], targets[r, :], side='left')`` for nondecreasing rows.

    Vectorised bisection: ``ceil(log2(J + 1))`` gathers of shape ``targets.shape``.

    Parameters
    ----------
    rows : ndarray, shape (D, J), each row nondecreasing
    targets : ndarray, shape (D, Q)

    Returns
    -------
    ndarray of int, shape (D, Q), values in [0, J]
    """
    D, J = rows.shape
    lo = np.zeros(targets.shape, dtype=np.int64)
    hi = np.full(targets.shape, J, dtype=np.int64)
    if J == 0:
        return lo
    row = np.arange(D)[:, None]
    for _ in range(int(J).bit_length()):
        mid = (lo + hi) // 2
        below = rows[row, np.minimum(mid, J - 1)] < targets
        active = lo < hi
        lo = np.where(active & below, mid + 1, lo)
        hi = np.where(active & ~below, mid, hi)
    return lo


def measure_functionals(atoms, weights, extra_atoms, extra_weights, *,
                        quantile_levels=DEFAULT_QUANTILE_LEVELS, thresholds=()):
    """Mean, quantiles and tail probabilities of D discrete measures.

    Measure ``d`` is

    .. math:: \\mu_d = \\frac{\\sum_j w_{dj}\\,\\delta_{a_j} + \\sum_l v_{dl}\\,\\delta_{\\xi_{dl}}}
                            {\\sum_j w_{dj} + \\sum_l v_{dl}}

    with atoms :math:`a_j` shared by all measures and atoms :math:`\\xi_{dl}` of its own.
    Quantiles are :math:`Q_d(q) = \\min\\{x : \\mu_d((-\\infty, x]) \\ge q\\}` (numpy's
    ``inverted_cdf``); tails are :math:`\\mu_d((t, \\infty))`. Cost: one cumulative sum of
    the ``(D, J)`` weights, a bisection per quantile and sorts of the ``(D, L)`` own atoms.

    Parameters
    ----------
    atoms : ndarray, shape (J,), strictly increasing
    weights : ndarray of float ≥ 0, shape (D, J)
    extra_atoms : ndarray, shape (D, L) (L may be 0)
    extra_weights : ndarray of float ≥ 0, shape (D, L)
        Every measure needs a positive total weight.
    quantile_levels : sequence of float in (0, 1), shape (Q,)
    thresholds : sequence of float, shape (T,)

    Returns
    -------
    mean : ndarray, shape (D,)
    quantiles : ndarray, shape (D, Q)
    tails : ndarray, shape (D, T)
    """
    a = check_finite_array(atoms, "atoms")
    w = check_finite_array(weights, "weights")
    xa = check_finite_array(extra_atoms, "extra_atoms")
    xw = check_finite_array(extra_weights, "extra_weights")
    if np.any(w < 0) or np.any(xw < 0):
        raise ValueError("weights and extra_weights must be >= 0")
    levels = _check_levels(quantile_levels)
    ts = _check_thresholds(thresholds) if np.size(thresholds) else np.zeros(0)
    if a.ndim != 1 or w.ndim != 2 or w.shape[1] != a.size:
        raise ValueError(f"weights must have shape (D, {a.size}) to match atoms, got {w.shape}")
    if xa.ndim != 2 or xa.shape != xw.shape or xa.shape[0] != w.shape[0]:
        raise ValueError(f"extra_atoms and extra_weights must both have shape ({w.shape[0]}, L), "
                         f"got {xa.shape} and {xw.shape}")
    if a.size > 1 and not np.all(np.diff(a) > 0):
        raise ValueError("atoms must be strictly increasing")
    D, J = w.shape
    order = np.argsort(xa, axis=1)
    xs = np.take_along_axis(xa, order, axis=1)
    cum_extra = np.cumsum(np.take_along_axis(xw, order, axis=1), axis=1)
    cum_atoms = np.cumsum(w, axis=1)
    mass_atoms = cum_atoms[:, -1] if J else np.zeros(D)
    mass_extra = cum_extra[:, -1] if xs.shape[1] else np.zeros(D)
    total = mass_atoms + mass_extra
    if not np.all(total > 0) or not np.all(np.isfinite(total)):
        raise ValueError("every measure needs a positive, finite total weight")
    row = np.arange(D)[:, None]

    def atoms_mass_upto(points):  # Σ_{a_j ≤ point} w_dj for points of shape (D, K)
        k = np.searchsorted(a, points, side="right")
        if J == 0:
            return np.zeros(points.shape)
        return np.where(k > 0, cum_atoms[row, np.maximum(k - 1, 0)], 0.0)

    def extra_mass_upto(points):  # Σ_{ξ_dl ≤ point} v_dl
        if xs.shape[1] == 0:
            return np.zeros(points.shape)
        k = (xs[:, :, None] <= points[:, None, :]).sum(axis=1)
        return np.where(k > 0, cum_extra[row, np.maximum(k - 1, 0)], 0.0)

    mean = (w @ a + (xw * xa).sum(axis=1)) / total

    tail_points = np.broadcast_to(ts, (D, ts.size))
    # (mass − mass up to t) per part: exactly 0 beyond the last atom, never a rounding residue.
    tails = ((mass_atoms[:, None] - atoms_mass_upto(tail_points))
             + (mass_extra[:, None] - extra_mass_upto(tail_points))) / total[:, None]

    # The quantile is the first own atom ξ_l* with CDF ≥ target, unless a shared atom between
    # ξ_{l*-1} and ξ_l* gets there first; on that stretch the own-atom mass is constant (h).
    targets = levels[None, :] * total[:, None]
    if xs.shape[1]:
        cdf_at_extra = atoms_mass_upto(xs) + cum_extra
        lstar = (cdf_at_extra[:, :, None] < targets[:, None, :]).sum(axis=1)
        h = np.where(lstar > 0, cum_extra[row, np.maximum(lstar - 1, 0)], 0.0)
        extra_candidate = np.where(lstar < xs.shape[1],
                                   xs[row, np.minimum(lstar, xs.shape[1] - 1)], np.inf)
    else:
        h = np.zeros(targets.shape)
        extra_candidate = np.full(targets.shape, np.inf)
    if J:
        j0 = _first_at_least(cum_atoms, targets - h)
        atom_candidate = np.where(j0 < J, a[np.minimum(j0, J - 1)], np.inf)
    else:
        atom_candidate = np.full(targets.shape, np.inf)
    quantiles = np.minimum(atom_candidate, extra_candidate)
    return mean, quantiles, tails


def _initial_sticks(theta: float, truncation: float) -> int:
    """Sticks T such that a Gamma(T, 1) sum exceeds θ log(1/truncation) with high probability (mean + 4 SD)."""
    need = theta * math.log(1.0 / truncation)
    return int(math.ceil(need + 4.0 * math.sqrt(need) + 4.0))


def _check_sticks(theta: float, truncation: float, rows: int) -> int:
    """Initial number of sticks, refusing a stick-breaking array beyond ``MAX_STICK_ENTRIES``."""
    need = theta * math.log(1.0 / truncation)
    if not need * rows <= MAX_STICK_ENTRIES:
        raise ValueError(f"theta = {theta!r} with truncation = {truncation!r} needs about {need:.3g} sticks per "
                         f"draw; {rows} draw(s) exceed MAX_STICK_ENTRIES = {MAX_STICK_ENTRIES}; lower theta, "
                         "n_draws or raise truncation")
    return _initial_sticks(theta, truncation)


def stick_breaking_dp(theta, bounds, n_draws, rng, *, truncation: float = 1e-6):
    """Truncated stick-breaking draws of :math:`\\mathrm{DP}(\\theta, H)`, ``H = Uniform(bounds)``.

    .. math::
        \\tilde p_H = \\sum_{l=1}^{T} \\beta_l \\delta_{\\xi_l} + \\rho_T\\,\\delta_{\\xi_{T+1}},\\quad
        \\beta_l = V_l \\prod_{i<l} (1 - V_i),\\quad V_l \\sim \\mathrm{Beta}(1, \\theta),\\quad
        \\rho_T = \\prod_{l \\le T} (1 - V_l),\\quad \\xi_l \\sim H.

    Because :math:`-\\log(1 - V_l) \\sim \\mathrm{Exp}(\\theta)`, the leftover mass is
    :math:`\\rho_T = \\exp(-\\Gamma_T/\\theta)` with :math:`\\Gamma_T` a sum of ``T`` unit
    exponentials. ``T`` (common to all draws) grows until :math:`\\rho_T <` ``truncation``
    for every draw, and :math:`\\rho_T` goes to one last atom, so each draw is a
    probability measure whose total-variation distance to the untruncated one is below
    ``truncation``. About :math:`\\theta \\log(1/\\text{truncation})` sticks are used.

    Parameters
    ----------
    theta : float > 0
    bounds : (lo, hi), lo < hi
    n_draws : int in [1, MAX_POSTERIOR_DRAWS]
    rng : numpy.random.Generator
    truncation : float in (0, 1)

    ``n_draws × T`` (about ``n_draws · θ log(1/truncation)``) must not exceed
    ``MAX_STICK_ENTRIES``.

    Returns
    -------
    atoms : ndarray, shape (n_draws, T + 1)
    weights : ndarray, shape (n_draws, T + 1), rows summing to 1; last column :math:`\\rho_T`
    """
    _, theta, _ = check_py_parameters(0.0, theta)
    lo, hi = check_bounds(bounds)
    n_draws = check_integer("n_draws", n_draws, minimum=1, maximum=MAX_POSTERIOR_DRAWS)
    rng = check_rng(rng)
    truncation = check_probability(truncation, "truncation")
    sticks = _check_sticks(theta, truncation, n_draws)
    gaps = rng.standard_exponential((n_draws, sticks))
    log_left = -np.cumsum(gaps, axis=1) / theta  # log ρ_l, l = 1..T
    while log_left[:, -1].max() >= math.log(truncation):  # rare: extend every draw by more sticks
        more = rng.standard_exponential((n_draws, max(8, sticks // 4)))
        gaps = np.hstack([gaps, more])
        log_left = np.hstack([log_left, log_left[:, -1:] - np.cumsum(more, axis=1) / theta])
    left_before = np.exp(np.hstack([np.zeros((n_draws, 1)), log_left[:, :-1]]))
    weights = np.hstack([left_before * -np.expm1(-gaps / theta), np.exp(log_left[:, -1:])])
    atoms = rng.uniform(lo, hi, size=weights.shape)
    return atoms, weights


@dataclass(frozen=True)
class PosteriorFunctionals:
    """Posterior draws of functionals of :math:`\\tilde p`.

    Attributes
    ----------
    draws : ndarray, shape (D, F)
        One row per posterior draw; columns ``names``: mean, quantiles, tail probabilities.
    names : tuple of str, length F
    quantile_levels, thresholds : tuple of float
    """

    draws: np.ndarray
    names: tuple
    quantile_levels: tuple = field(default=DEFAULT_QUANTILE_LEVELS)
    thresholds: tuple = field(default=())

    @property
    def n_draws(self) -> int:
        return int(self.draws.shape[0])

    def posterior_mean(self) -> np.ndarray:
        """Posterior mean of each functional, shape (F,)."""
        return self.draws.mean(axis=0)

    def credible_interval(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Equal-tailed credible interval: the :math:`(1 \\mp \\text{level})/2` quantiles of the draws."""
        level = check_probability(level, "level")
        lower, upper = np.quantile(self.draws, [0.5 - level / 2, 0.5 + level / 2], axis=0)
        return lower, upper

    def summary(self, level: float = 0.95, confidential=None) -> pd.DataFrame:
        """One row per functional: ``functional, posterior_mean, lower, upper`` (+ ``confidential``).

        Parameters
        ----------
        level : float in (0, 1)
        confidential : array_like, shape (F,), optional
            The same functionals of the confidential data, shown alongside
            (:func:`empirical_functionals`).
        """
        lower, upper = self.credible_interval(level)
        table = pd.DataFrame({"functional": list(self.names), "posterior_mean": self.posterior_mean(),
                              "lower": lower, "upper": upper})
        if confidential is not None:
            truth = np.asarray(confidential, dtype=np.float64)
            if truth.shape != (len(self.names),):
                raise ValueError(f"confidential must have one value per functional ({len(self.names)}), "
                                 f"got shape {truth.shape}")
            table["confidential"] = truth
        return table


def _release_atoms(release, counts=None, name: str = "release") -> tuple[np.ndarray, np.ndarray]:
    """Distinct values and multiplicities of one column of values, or of a frequency table
    (``counts``: multiplicities of ``release``'s values; repeated values have them added), so
    that records and their table reduce to the same (sorted) table."""
    values = getattr(release, "values", release)
    data = check_sample(values, name, one_column=True)
    if counts is None:
        return np.unique(data, return_counts=True)
    table = frequency_table(data, counts)   # validates the counts; adds those of repeated values exactly
    return table.atoms, table.counts


def dp_posterior_functionals(release, theta, bounds, n_draws, rng, *,
                             quantile_levels=DEFAULT_QUANTILE_LEVELS, thresholds=(),
                             truncation: float = 1e-6) -> PosteriorFunctionals:
    """Draws of functionals of the analyst's posterior given a release (docs/mathematics.md §6).

    .. math:: \\tilde p \\mid Z \\sim \\mathrm{DP}\\big(\\theta + m,\\
              (\\theta H + \\textstyle\\sum_i \\delta_{Z_i})/(\\theta + m)\\big)

    For each draw: gamma variables :math:`G_j \\sim \\mathrm{Gamma}(c_j)` on the distinct
    released values and :math:`G_0 \\sim \\mathrm{Gamma}(\\theta)` (normalised, these are
    the Dirichlet weights), and a :func:`stick_breaking_dp` draw carrying the mass
    :math:`G_0`; then :func:`measure_functionals`. Checks: :math:`E[\\tilde p(A)] =
    (\\theta H(A) + \\#\\{Z_i \\in A\\})/(\\theta + m)` and
    :math:`\\mathrm{Var}[\\tilde p(A)] = E[\\tilde p(A)](1 - E[\\tilde p(A)])/(\\theta + m + 1)`.

    Parameters
    ----------
    release : array_like of float, shape (m,), or a SyntheticRelease
        The released values :math:`Z`.
    theta : float > 0
        Prior strength (the one used by the mechanism).
    bounds : (lo, hi)
        Public bounds: ``H = Uniform[lo, hi]``.
    n_draws : int ≥ 1
    rng : numpy.random.Generator
    quantile_levels : sequence of float in (0, 1)
        Default: the quartiles.
    thresholds : sequence of float
        Each ``t`` adds the functional :math:`\\tilde p((t, \\infty)) = P(X > t)`.
    truncation : float in (0, 1)
        Mass left to a single atom by the stick-breaking truncation.

    Returns
    -------
    PosteriorFunctionals
    """
    atoms, counts = _release_atoms(release)
    _, theta, _ = check_py_parameters(0.0, theta)
    lo, hi = check_bounds(bounds)
    n_draws = check_integer("n_draws", n_draws, minimum=1, maximum=MAX_POSTERIOR_DRAWS)
    rng = check_rng(rng)
    levels = _check_levels(quantile_levels)
    ts = _check_thresholds(thresholds) if np.size(thresholds) else np.zeros(0)
    _check_sticks(theta, check_probability(truncation, "truncation"), 1)
    singletons = np.flatnonzero(counts == 1)
    repeated = np.flatnonzero(counts > 1)
    shape_repeated = counts[repeated].astype(np.float64)
    truncation = check_probability(truncation, "truncation")
    # A block holds (draws × distinct values) gammas and (draws × sticks) stick-breaking arrays.
    block = max(1, min(n_draws, _BLOCK_ENTRIES // (atoms.size + _initial_sticks(theta, truncation))))
    out = np.empty((n_draws, 1 + levels.size + ts.size))
    for start in range(0, n_draws, block):
        rows = min(block, n_draws - start)
        gammas = np.empty((rows, atoms.size))
        # Gamma(1) is a unit exponential, about twice as fast to draw: most released values are singletons.
        gammas[:, singletons] = rng.standard_exponential((rows, singletons.size))
        gammas[:, repeated] = rng.standard_gamma(shape_repeated, size=(rows, repeated.size))
        base_mass = rng.standard_gamma(theta, size=rows)
        h_atoms, h_weights = stick_breaking_dp(theta, (lo, hi), rows, rng, truncation=truncation)
        mean, quant, tails = measure_functionals(atoms, gammas, h_atoms, base_mass[:, None] * h_weights,
                                                 quantile_levels=levels, thresholds=ts)
        out[start:start + rows] = np.column_stack([mean, quant, tails])
    return PosteriorFunctionals(draws=out, names=tuple(functional_names(levels, ts)),
                                quantile_levels=tuple(levels.tolist()), thresholds=tuple(ts.tolist()))


def empirical_functionals(data, *, counts=None, quantile_levels=DEFAULT_QUANTILE_LEVELS,
                          thresholds=()) -> np.ndarray:
    """The same functionals for the empirical measure of ``data`` (e.g. the confidential values).

    Mean, ``inverted_cdf`` quantiles and :math:`\\#\\{x_i > t\\}/n`, in the column order of
    :func:`functional_names`.

    Parameters
    ----------
    data : array_like of float, shape (n,)
        Values, or the values of a frequency table (with ``counts``).
    counts : array_like of int ≥ 1, shape (k,), optional
        Multiplicities of ``data`` (e.g. a column of ``prepared.table``): the functionals of
        the values repeated by their counts, identical to those of the repeated values, at
        cost O(k log k).
    quantile_levels, thresholds
        As in :func:`dp_posterior_functionals`.

    Returns
    -------
    ndarray, shape (1 + Q + T,)
    """
    atoms, counts = _release_atoms(data, counts, "data")
    mean, quant, tails = measure_functionals(atoms, counts[None, :].astype(np.float64), np.zeros((1, 0)),
                                             np.zeros((1, 0)), quantile_levels=quantile_levels,
                                             thresholds=thresholds)
    return np.concatenate([mean, quant[0], tails[0]])


@dataclass(frozen=True)
class RepeatedReleaseResult:
    """Output of :func:`repeated_release_experiment`.

    Attributes
    ----------
    names : tuple of str, length F
    truth : ndarray, shape (F,)
        Functionals of the confidential data.
    posterior_mean, lower, upper : ndarray, shape (R, F)
        Per release: posterior mean and credible interval of each functional.
    seconds : ndarray, shape (R,)
        Wall-clock time of the posterior simulation of each release.
    level : float
    n_draws, m : int
    """

    names: tuple
    truth: np.ndarray
    posterior_mean: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    seconds: np.ndarray
    level: float
    n_draws: int
    m: int

    def table(self) -> pd.DataFrame:
        """Paper Table 2 layout: one row per functional.

        Columns ``functional, confidential, bias, rmse, ci_length, coverage,
        coverage_se, seconds`` with bias = mean(posterior mean − truth), RMSE likewise,
        ci_length the mean credible-interval length, coverage the fraction of releases
        whose interval contains the truth (``coverage_se`` its binomial standard error)
        and seconds the mean time of one posterior simulation.
        """
        error = self.posterior_mean - self.truth[None, :]
        covered = (self.lower <= self.truth[None, :]) & (self.truth[None, :] <= self.upper)
        coverage = covered.mean(axis=0)
        reps = self.posterior_mean.shape[0]
        return pd.DataFrame({
            "functional": list(self.names),
            "confidential": self.truth,
            "bias": error.mean(axis=0),
            "rmse": np.sqrt((error ** 2).mean(axis=0)),
            "ci_length": (self.upper - self.lower).mean(axis=0),
            "coverage": coverage,
            "coverage_se": np.sqrt(coverage * (1 - coverage) / reps),
            "seconds": float(self.seconds.mean()),
        })


def _coverage_if_shifted(bias: float, length: float, level: float) -> float:
    """Coverage of normal intervals of length ``length`` at ``level`` whose centre is off by ``bias``."""
    normal = NormalDist()
    z = normal.inv_cdf(0.5 + level / 2)
    if not length > 0:
        return 0.0 if bias else level
    shift = abs(bias) / (length / (2 * z))
    return normal.cdf(z - shift) - normal.cdf(-z - shift)


def coverage_notes(table: pd.DataFrame, *, theta: float, n: int, m: int, level: float = 0.95,
                   bounds: tuple[float, float] | None = None, categorical: bool = False) -> dict[str, str]:
    """Why a functional's coverage falls below the nominal level, in plain words (docs/mathematics.md §6.2).

    A functional is *below nominal* when its estimated coverage plus 1.96 standard errors is
    still below ``level``. Its reason is the first of:

    1. **Degenerate truth.** A probability functional (``P(X > t)``, ``P(X = c)``) whose
       confidential value is exactly 0 or 1. Every release and the analyst's prior carry mass
       from the base measure H (new values drawn from H, weight θ/(θ + m) in the posterior),
       so the posterior of the share is continuous on (0, 1) and an equal-tailed interval
       never contains 0 or 1: coverage is 0 however close the interval comes.
    2. **Bias towards H.** The mean error b of the posterior mean accounts for at least half
       the shortfall: intervals of the mean length L, read as normal intervals
       (σ = L/(2z), z the normal quantile of the level) shifted by b, would cover with
       probability :math:`\\Phi(z - |b|/σ) - \\Phi(-z - |b|/σ)`. The release is not a sample of the data: each released value
       is new, drawn from H, with probability θ/(θ + n), and the analyst's posterior adds
       weight θ/(θ + m) on H. The posterior treats the release as a plain sample of the
       population and does not undo this privacy-induced pull toward H, so its intervals are
       centred off the confidential value.
    3. **Intervals too short.** Otherwise: the intervals are shorter than the spread of the
       posterior means across releases (RMSE against the mean half-length).

    Parameters
    ----------
    table : DataFrame
        :meth:`RepeatedReleaseResult.table` (columns ``functional, confidential, bias, rmse,
        ci_length, coverage, coverage_se``).
    theta : float > 0
    n, m : int ≥ 1
        Confidential records and release size (public).
    level : float in (0, 1)
        The nominal level of the intervals.
    bounds : (lo, hi), optional
        The public bounds H is uniform on (a numeric column), quoted in the reason.
    categorical : bool
        A categorical column: H gives each new value a fresh label, never a listed category.

    Returns
    -------
    dict functional → str
        One entry per functional below nominal, in table order; empty when none is.
    """
    needed = ("functional", "confidential", "bias", "rmse", "ci_length", "coverage", "coverage_se")
    missing = [c for c in needed if c not in getattr(table, "columns", ())]
    if missing:
        raise ValueError(f"table must come from RepeatedReleaseResult.table(); missing columns {missing}")
    _, theta, _ = check_py_parameters(0.0, theta)
    n = check_integer("n", n, minimum=1)
    m = check_release_size(m)
    level = check_probability(level, "level")
    h = ("H (a fresh label, never one of the categories)" if categorical else
         "H (uniform on the public bounds" + (f" [{bounds[0]:g}, {bounds[1]:g}])" if bounds is not None else ")"))
    new_share, prior_share = theta / (theta + n), theta / (theta + m)
    pull = (f"each released value is a new one drawn from {h} with probability θ/(θ + n) = {new_share:.2g}, and the "
            f"analyst's posterior puts weight θ/(θ + m) = {prior_share:.2g} on H")
    notes = {}
    for row in table.itertuples(index=False):
        coverage, se = float(row.coverage), float(row.coverage_se)
        if not coverage + 1.96 * se < level:
            continue
        name, truth = str(row.functional), float(row.confidential)
        head = f"{name}: coverage {coverage:.2f}, below the nominal {level:.0%}. "
        if name.startswith("P(") and truth in (0.0, 1.0):
            which = "no confidential record" if truth == 0.0 else "every confidential record"
            event = name[2:-1] if name.endswith(")") else name
            notes[name] = head + (
                f"The functional is degenerate here: {which} satisfies {event}, so its true value is exactly "
                f"{truth:g}. But {pull}, so every posterior of it is spread over (0, 1) and an equal-tailed "
                f"{level:.0%} interval never contains {truth:g}: the coverage is 0 however close the intervals come "
                "(see their bias and length in the table). Read the posterior mean and its bias instead, or choose "
                "a functional the data do not make certain.")
        elif level - _coverage_if_shifted(float(row.bias), float(row.ci_length), level) >= 0.5 * (level - coverage):
            notes[name] = head + (
                f"The posterior mean is off by {float(row.bias):+.3g} on average, against intervals {float(row.ci_length):.3g} "
                f"long: the release is not a plain sample of the data — {pull}. The analyst's posterior treats the "
                "release as a sample of the population and does not undo that privacy-induced pull toward H, so its "
                "intervals are centred off the confidential value. A larger n or m, or a smaller θ, shrinks it.")
        else:
            notes[name] = head + (
                f"The intervals (mean length {float(row.ci_length):.3g}) are short for the spread of the posterior "
                f"means across releases (RMSE {float(row.rmse):.3g}): the posterior's uncertainty understates how much "
                "a release varies around the data.")
    return notes


def repeated_release_experiment(confidential, theta, m, bounds, rng, *, counts=None, replicates: int = 100,
                                n_draws: int = 1000, quantile_levels=DEFAULT_QUANTILE_LEVELS,
                                thresholds=(), level: float = 0.95,
                                progress: ProgressCallback | None = None) -> RepeatedReleaseResult:
    """Frequentist behaviour of the analyst's posterior over repeated releases (paper Table 2).

    Each replicate releases ``m`` values from ``confidential`` with the PYPP mechanism
    (σ = 0, strength ``theta``, ``H = Uniform(bounds)``; :func:`core.mechanisms.pypp_release`),
    simulates the posterior with ``n_draws`` draws (:func:`dp_posterior_functionals`) and
    records the posterior mean and the equal-tailed ``level`` credible interval of every
    functional. The truth is the functional of the confidential data
    (:func:`empirical_functionals`).

    Parameters
    ----------
    confidential : array_like of float, shape (n,)
        Values, or the values of a frequency table (with ``counts``).
    theta : float > 0
    m : int ≥ 1
        Release size.
    bounds : (lo, hi)
        Public bounds of the base measure.
    rng : numpy.random.Generator
    counts : array_like of int ≥ 1, shape (k,), optional
        Multiplicities of ``confidential``: the experiment on the values repeated by their
        counts — the same result for the same ``rng`` (the mechanism and the truth use the
        table only), at cost O(k) per release instead of O(n).
    replicates : int ≥ 1
    n_draws : int ≥ 1
    quantile_levels, thresholds
        As in :func:`dp_posterior_functionals`.
    level : float in (0, 1)
    progress : callable (fraction, message) -> None, optional
        Called after every replicate.

    Returns
    -------
    RepeatedReleaseResult
    """
    atoms, counts = _release_atoms(confidential, counts, "confidential")
    _, theta, _ = check_py_parameters(0.0, theta)
    m = check_release_size(m)
    lo, hi = check_bounds(bounds)
    rng = check_rng(rng)
    replicates = check_integer("replicates", replicates, minimum=1, maximum=10**5)
    n_draws = check_integer("n_draws", n_draws, minimum=1, maximum=MAX_POSTERIOR_DRAWS)
    level = check_probability(level, "level")
    levels = _check_levels(quantile_levels)
    ts = _check_thresholds(thresholds) if np.size(thresholds) else np.zeros(0)
    truth = empirical_functionals(atoms, counts=counts, quantile_levels=levels, thresholds=ts)
    return _repeat_releases(atoms, counts, theta, m, UniformBase(lo, hi), truth, functional_names(levels, ts),
                            lambda values: dp_posterior_functionals(values, theta, (lo, hi), n_draws, rng,
                                                                    quantile_levels=levels, thresholds=ts),
                            rng, replicates, level, n_draws, progress)


def _repeat_releases(atoms, counts, theta: float, m: int, base, truth: np.ndarray, names, posterior,
                     rng: np.random.Generator, replicates: int, level: float, n_draws: int,
                     progress: ProgressCallback | None) -> RepeatedReleaseResult:
    """The loop of the repeated-release experiments: ``replicates`` PYPP releases (σ = 0,
    base measure ``base``) from the table (atoms, counts), each analysed by
    ``posterior(values) -> PosteriorFunctionals``, against the ``truth``."""
    shape = (replicates, truth.size)
    post_mean, lower, upper = np.empty(shape), np.empty(shape), np.empty(shape)
    seconds = np.empty(replicates)
    for r in range(replicates):
        release = pypp_release(atoms, counts, 0.0, theta, m, rng, base=base)
        start = time.perf_counter()
        post = posterior(release.values)
        lower[r], upper[r] = post.credible_interval(level)
        post_mean[r] = post.posterior_mean()
        seconds[r] = time.perf_counter() - start
        if progress is not None:
            progress((r + 1) / replicates, f"release {r + 1}/{replicates}")
    return RepeatedReleaseResult(names=tuple(names), truth=truth, posterior_mean=post_mean, lower=lower,
                                 upper=upper, seconds=seconds, level=level, n_draws=n_draws, m=m)


# ============================================================== categorical columns
def share_names(categories) -> list[str]:
    """Display names of the category shares, ``P(X = c)``, in order."""
    return [f"P(X = {c})" for c in categories]


def _categories(categories) -> list:
    try:
        out = list(categories)
    except TypeError:
        raise ValueError(f"categories must be a list of category labels, got {categories!r}") from None
    if not 1 <= len(out) <= _MAX_FUNCTIONALS:
        raise ValueError(f"categories must hold 1 to {_MAX_FUNCTIONALS} labels, got {len(out)}")
    if len(set(out)) != len(out):
        raise ValueError("categories must not repeat a label")
    return out


def _label_counts(values, categories: list, counts=None) -> tuple[np.ndarray, int]:
    """How many of ``values`` (weighted by ``counts``) equal each category, and their total."""
    labels = pd.Series(np.asarray(values, dtype=object).ravel())
    if labels.isna().any():
        raise ValueError("values must not be missing")
    weights = np.ones(len(labels), dtype=np.int64) if counts is None else \
        check_row_counts(counts, len(labels), minimum=1)
    hit = pd.Series(weights).groupby(labels.to_numpy()).sum()
    return np.array([int(hit.get(c, 0)) for c in categories], dtype=np.int64), int(weights.sum())


def dp_posterior_shares(release, theta, categories, n_draws, rng) -> PosteriorFunctionals:
    """Draws of the shares :math:`\\tilde p(\\{c\\})` of categories under the analyst's posterior
    given a categorical release (docs/mathematics.md §6).

    At σ = 0 a categorical column's base measure H draws a fresh label for every new value
    (docs/mathematics.md §2): it puts no mass on any given label, so under
    :math:`\\mathrm{DP}(\\theta + m, (\\theta H + \\sum_i \\delta_{Z_i})/(\\theta + m))`

    .. math:: \\big(\\tilde p(c_1), \\dots, \\tilde p(c_K), \\text{rest}\\big) \\sim
              \\mathrm{Dir}\\big(n_1, \\dots, n_K,\\ \\theta + m - \\textstyle\\sum_j n_j\\big),

    :math:`n_j` the number of released values equal to :math:`c_j`; marginally
    :math:`\\tilde p(c) \\sim \\mathrm{Beta}(n_c, \\theta + m - n_c)`, with mean
    :math:`n_c/(\\theta + m)`, and a category never released has share 0 a.s. Drawn exactly
    from normalised gamma variables.

    Parameters
    ----------
    release : array_like, shape (m,)
        The released labels of one categorical column.
    theta : float > 0
    categories : sequence of labels, length K in [1, 1000], without repeats
    n_draws : int in [1, MAX_POSTERIOR_DRAWS]
    rng : numpy.random.Generator

    Returns
    -------
    PosteriorFunctionals
        ``names`` = ``P(X = c)`` per category; no quantile levels or thresholds.
    """
    cats = _categories(categories)
    _, theta, _ = check_py_parameters(0.0, theta)
    n_draws = check_integer("n_draws", n_draws, minimum=1, maximum=MAX_POSTERIOR_DRAWS)
    rng = check_rng(rng)
    hits, m = _label_counts(release, cats)
    if m < 1:
        raise ValueError("release must hold at least one value")
    block = max(1, min(n_draws, _BLOCK_ENTRIES // (len(cats) + 1)))
    out = np.empty((n_draws, len(cats)))
    positive = hits > 0
    for start in range(0, n_draws, block):
        rows = min(block, n_draws - start)
        gammas = np.zeros((rows, len(cats)))
        gammas[:, positive] = rng.standard_gamma(hits[positive].astype(np.float64), size=(rows, int(positive.sum())))
        rest = rng.standard_gamma(theta + m - float(hits.sum()), size=rows)
        out[start:start + rows] = gammas / (gammas.sum(axis=1) + rest)[:, None]
    return PosteriorFunctionals(draws=out, names=tuple(share_names(cats)), quantile_levels=(), thresholds=())


def empirical_shares(data, categories, *, counts=None) -> np.ndarray:
    """The share of each category among ``data`` (labels; with ``counts``, a frequency table),
    shape (K,): the functionals of :func:`dp_posterior_shares` for the empirical measure."""
    cats = _categories(categories)
    hits, total = _label_counts(data, cats, counts)
    if total < 1:
        raise ValueError("data must hold at least one record")
    return hits / float(total)


def repeated_share_experiment(confidential, theta, m, categories, rng, *, counts=None, replicates: int = 100,
                              n_draws: int = 1000, level: float = 0.95,
                              progress: ProgressCallback | None = None) -> RepeatedReleaseResult:
    """:func:`repeated_release_experiment` for a categorical column: each replicate releases
    ``m`` labels with PYPP (σ = 0, new values get fresh labels,
    :class:`core.data.CategoricalBase`) and records the posterior mean and credible interval
    of every share ``P(X = c)`` (:func:`dp_posterior_shares`) against the confidential shares.

    Parameters
    ----------
    confidential : array_like, shape (n,) or (k,) with ``counts``
        The column's labels, or its frequency table's labels.
    theta, m, rng, counts, replicates, n_draws, level, progress
        As in :func:`repeated_release_experiment`.
    categories : sequence of labels
        The categories whose shares are estimated.

    Returns
    -------
    RepeatedReleaseResult
    """
    cats = _categories(categories)
    _, theta, _ = check_py_parameters(0.0, theta)
    m = check_release_size(m)
    rng = check_rng(rng)
    replicates = check_integer("replicates", replicates, minimum=1, maximum=10**5)
    n_draws = check_integer("n_draws", n_draws, minimum=1, maximum=MAX_POSTERIOR_DRAWS)
    level = check_probability(level, "level")
    values = np.asarray(confidential, dtype=object).ravel()
    table = frequency_table(values, check_row_counts(counts, values.size, minimum=1))
    truth = empirical_shares(table.atoms, cats, counts=table.counts)
    return _repeat_releases(table.atoms, table.counts, theta, m, CategoricalBase(), truth, share_names(cats),
                            lambda released: dp_posterior_shares(released, theta, cats, n_draws, rng),
                            rng, replicates, level, n_draws, progress)
