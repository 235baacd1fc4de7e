"""Downstream Bayesian inference from a Dirichlet-process posterior-predictive release (SPEC §6).

Paper §4.1 and Appendix C.1 (Menicucci, Beraha, Favaro and Lazzarini, 2026). An analyst
who receives only the release :math:`Z = (Z_1, \\dots, Z_m)` of the PYPP mechanism with
σ = 0 and puts the prior :math:`p \\sim \\mathrm{DP}(\\theta, H)` on the data-generating
law obtains the ordinary Dirichlet-process posterior

.. math::
    \\tilde p \\mid Z \\sim \\mathrm{DP}\\Big(\\theta + m,\\
    \\frac{\\theta H + \\sum_{i=1}^m \\delta_{Z_i}}{\\theta + m}\\Big),

with ``H = Uniform[lo, hi]`` on public bounds. It is simulated exactly, up to a
truncation below ``1e-6`` of mass, as

.. math::
    \\tilde p = \\sum_{j=1}^{J} W_j\\,\\delta_{z^*_j} + W_0\\,\\tilde p_H,\\qquad
    (W_1, \\dots, W_J, W_0) \\sim \\mathrm{Dir}(c_1, \\dots, c_J, \\theta),\\qquad
    \\tilde p_H \\sim \\mathrm{DP}(\\theta, H),

where :math:`z^*_j` are the distinct values of :math:`Z` with counts :math:`c_j` and
:math:`\\tilde p_H = \\sum_l \\beta_l \\delta_{\\xi_l}` is a stick-breaking draw
(:func:`stick_breaking_dp`). Functionals of each posterior draw — the mean, quantiles
(the quartiles by default) and tail probabilities :math:`\\tilde p((t, \\infty))` — give
posterior means and equal-tailed credible intervals (:func:`dp_posterior_functionals`).
:func:`repeated_release_experiment` reproduces the paper's Table 2 (bias, RMSE, interval
length, coverage per functional over repeated releases).

Everything is vectorised over posterior draws; draws are processed in blocks that bound
memory, and nothing loops over ``m``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from .data import frequency_table
from .mechanisms import UniformBase, pypp_release
from .validation import (
    check_bounds,
    check_finite_array,
    check_integer,
    check_probability,
    check_py_parameters,
    check_release_size,
    check_rng,
    check_sample,
)

__all__ = [
    "DEFAULT_QUANTILE_LEVELS",
    "MAX_POSTERIOR_DRAWS",
    "MAX_STICK_ENTRIES",
    "PosteriorFunctionals",
    "RepeatedReleaseResult",
    "dp_posterior_functionals",
    "empirical_functionals",
    "functional_names",
    "measure_functionals",
    "repeated_release_experiment",
    "stick_breaking_dp",
]

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
    """Draws of functionals of the analyst's posterior given a release (SPEC §6).

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
    base = UniformBase(lo, hi)

    shape = (replicates, truth.size)
    post_mean, lower, upper = np.empty(shape), np.empty(shape), np.empty(shape)
    seconds = np.empty(replicates)
    for r in range(replicates):
        release = pypp_release(atoms, counts, 0.0, theta, m, rng, base=base)
        start = time.perf_counter()
        post = dp_posterior_functionals(release.values, theta, (lo, hi), n_draws, rng,
                                        quantile_levels=levels, thresholds=ts)
        lower[r], upper[r] = post.credible_interval(level)
        post_mean[r] = post.posterior_mean()
        seconds[r] = time.perf_counter() - start
        if progress is not None:
            progress((r + 1) / replicates, f"release {r + 1}/{replicates}")
    return RepeatedReleaseResult(names=tuple(functional_names(levels, ts)), truth=truth,
                                 posterior_mean=post_mean, lower=lower, upper=upper, seconds=seconds,
                                 level=level, n_draws=n_draws, m=m)


# ================================================ discovery probability (thesis §6.3, issue 11)
#: Largest n of :func:`discovery_probability` (the law of K_n costs O(n × width of its window)).
MAX_DISCOVERY_N = 10**6
#: Largest generalized factorial table, (largest l + 1) × new values, and largest number of
#: likelihood terms, Σ over values of K_n of their l-ranges, of :func:`discovery_probability`.
_MAX_GFC_ENTRIES = 10**8
#: Certified bound on the truncation error of the discovery probability, relative to its
#: value (docs/bayesian_family.md §4): every term the computation leaves out is bounded, and
#: the bounds add up to less than this.
_DISCOVERY_TOLERANCE = 1e-14
#: Steps of the K_n chain between two trims of its window.
_TRIM_EVERY = 64
#: Points at which the likelihood is computed exactly to build its envelope.
_ENVELOPE_POINTS = 256
#: Climb bound (:func:`_log_climb_bound`): tried every this many trims (up to 16 times fewer
#: while it drops nothing), at this many cuts, with this many levels and orders r.
_CLIMB_EVERY, _CLIMB_CUTS, _CLIMB_LEVELS, _CLIMB_ORDERS = 4, 12, 24, 24
#: Standard deviations of BB(m, θ + jσ, n − jσ) covered by the first l-range of the likelihood.
_L_RANGE_SD = 12.0
#: Likelihood terms of one evaluation below which every l-range starts at k.
_FULL_RANGE_TERMS = 1 << 25


def confidential_discovery_probability(n, k, sigma, theta) -> float:
    """:math:`(\\theta + k\\sigma)/(\\theta + n)`: the new-value probability given the confidential data.

    The (n+1)-th predictive probability of a new value given n records with k distinct
    values (SPEC §2). It uses k, a statistic of the confidential data: **curator only**.
    """
    n = check_integer("n", n, minimum=1, maximum=MAX_DISCOVERY_N)
    k = check_integer("k", k, minimum=1, maximum=n)
    sigma, theta, _ = check_py_parameters(sigma, theta)
    if sigma < 0:
        raise ValueError(f"sigma must be in [0, 1) (new values exist only for sigma >= 0), got {sigma!r}")
    return (theta + k * sigma) / (theta + n)


def _log_generalized_factorial(length: int, k: int, sigma: float) -> np.ndarray:
    """:math:`\\log\\mathcal C(l, k; \\sigma)` for l = 0..length (−inf for l < k), σ ∈ (0, 1).

    From the recursion :math:`\\mathcal C(l+1,k) = \\sigma\\mathcal C(l,k-1) + (l-k\\sigma)\\mathcal C(l,k)`
    (all terms ≥ 0 for σ ∈ (0, 1)): dividing by :math:`\\Gamma(l+1-k\\sigma)` turns it into a
    cumulative sum, :math:`\\mathcal C(l,k) = \\Gamma(l-k\\sigma)\\sum_{l'<l}\\sigma\\,\\mathcal C(l',k-1)/\\Gamma(l'+1-k\\sigma)`,
    evaluated in log space (``logaddexp.accumulate``): no cancellation and no overflow. The
    absolute error of each log is a few units in the last place of
    :math:`\\log\\Gamma(l)` (it enters through ``gammaln``): about 1e-12 at l ≈ 300 and
    4e-12 at l ≈ 1500 against mpmath, growing like :math:`l\\log l\\cdot 10^{-16}`.
    O(k × length).
    """
    from scipy import special

    ell = np.arange(length + 1, dtype=float)
    log_c = np.full(length + 1, -np.inf)
    log_c[0] = 0.0                                           # C(0, 0) = 1, C(l, 0) = 0 for l ≥ 1
    log_sigma = math.log(sigma)
    for j in range(1, min(k, length) + 1):
        # C(l, j) = 0 for l < j: only l' ≥ j − 1 of the previous row can contribute
        src = ell[j - 1:-1]
        terms = log_sigma + log_c[j - 1:-1] - special.gammaln(src + 1.0 - j * sigma)
        acc = np.logaddexp.accumulate(terms)                 # Σ over j − 1 ≤ l' ≤ l − 1, for l = j..length
        new = np.full(length + 1, -np.inf)
        new[j:] = special.gammaln(ell[j:] - j * sigma) + acc
        log_c = new
    if k > length:
        log_c[:] = -np.inf
    return log_c


def _log_bb_tail_bound(m: int, a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """An upper bound on :math:`\\log P(S \\ge x)`, :math:`S \\sim \\mathrm{BB}(m, a, b)`, x ≥ 1 (elementwise).

    Markov's inequality on the falling factorial moments
    :math:`E[S(S-1)\\cdots(S-r+1)] = m^{\\underline r}\\,(a)_r/(a+b)_r`:
    :math:`P(S \\ge x) \\le \\min_{1 \\le r \\le x} m^{\\underline r}(a)_r / ((a+b)_r\\,x^{\\underline r})`,
    over 32 orders r. Within a few nats of the exact tail in the tests of the l-ranges, at a
    cost that does not grow with m (unlike summing the tail). 0 for x > m is −inf.
    """
    from .betabinom import log_gamma_ratio

    x = np.asarray(x, dtype=float)
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    fraction = np.geomspace(1e-3, 1.0, 32)
    r = np.maximum(1.0, np.floor(x[..., None] * fraction))
    bound = (log_gamma_ratio(m - r + 1.0, r) + log_gamma_ratio(a[..., None], r)
             - log_gamma_ratio((a + b)[..., None], r) - log_gamma_ratio(x[..., None] - r + 1.0, r))
    out = np.minimum(0.0, bound.min(axis=-1))
    return np.where(x > m, -np.inf, out)


class _DiscoveryLikelihood:
    """:math:`L(j) = P(K^{(n)}_m = k \\mid K_n = j)` for j = 1..n: exact on request, bounded everywhere.

    Given :math:`K_n = j`, the release continues the distinct-value chain from j: draw t of
    the release is a new value w.p. :math:`(\\theta + D_t\\sigma)/(\\theta + n + t)`, D_t the
    number of distinct values so far, and k is the number of such births.

    * :meth:`exact` — :math:`L(j) = \\sum_l \\mathrm{BB}(l; m, \\theta+j\\sigma, n-j\\sigma)
      \\,P_{\\theta+j\\sigma}(K_l=k)` over an l-range, with a bound on the left-out terms (the
      beta-binomial tails outside the range, as :math:`P_{\\theta'}(K_l = k) \\le 1`);
    * ``log_upper`` — an upper envelope of :math:`\\log L` on all of 1..n: exact values plus
      tails at ``_ENVELOPE_POINTS`` points, and between them the per-path likelihood-ratio
      bounds :math:`\\rho_-(j) \\le L(j+1)/L(j) \\le \\rho_+(j)` of :meth:`_log_ratio_bounds`;
    * ``log_mid`` — a point estimate of :math:`\\log L` (the mean of the two envelopes),
      used only to size the trimming budget;
    * :meth:`reach_sup` — :math:`\\sup_{j' \\in [j, r]} L(j')` bounded through the unimodal
      hull of the envelope.

    For k = 0, :math:`L(j) = \\mathrm{BB}(0; m, \\theta+j\\sigma, n-j\\sigma)` exactly.
    """

    def __init__(self, n: int, m: int, k: int, sigma: float, theta: float):
        from .betabinom import log_pmf

        self.n, self.m, self.k, self.sigma, self.theta = n, m, k, sigma, theta
        j = np.arange(1, n + 1, dtype=float)
        if k == 0:
            value, err = log_pmf(m, theta + j * sigma, n - j * sigma, 0.0)
            self.log_upper = value + err
            self.log_mid = value
        else:
            if (k + 1) * k > _MAX_GFC_ENTRIES:
                raise ValueError(f"new_values = {k} needs a table of more than {_MAX_GFC_ENTRIES:.0e} generalized "
                                 "factorial coefficients; not computed")
            self.table = -1
            self._envelope(j)
        self.log_upper = np.maximum(self.log_upper, self.log_mid)
        # Unimodal hull: min(prefix max, suffix max) ≥ the envelope, nondecreasing up to its
        # argmax and nonincreasing after, so its sup over an interval is one lookup.
        self.hull = np.minimum(np.maximum.accumulate(self.log_upper),
                               np.maximum.accumulate(self.log_upper[::-1])[::-1])
        self.peak = int(np.argmax(self.hull)) + 1

    def _l_range(self, j, widen: int, max_width: int | None = None):
        """l-range [lo, hi] per j: from k (or the lower tail) to past max(mean, k) of BB(m, θ + jσ, n − jσ).

        The terms :math:`\\mathrm{BB}(l)\\,P(K_l = k)` are 0 below k and at most the
        beta-binomial pmf, which puts all but a tail beyond ``_L_RANGE_SD`` standard deviations
        of its mass below the top of the range; each ``widen`` step quadruples that reach.
        The range starts at k — the terms can peak far below the mean when k is small
        (:math:`P(K_l = k)` falls with l) — unless rows × columns would exceed
        ``_FULL_RANGE_TERMS``; then it too stops at the same distance below the centre.
        ``max_width`` caps the range (an envelope only needs a valid bound).
        """
        a, b = self.theta + j * self.sigma, self.n - j * self.sigma
        mean = self.m * a / (a + b)
        sd = np.sqrt(mean * (b / (a + b)) * ((a + b + self.m) / (a + b + 1.0)))
        centre = np.maximum(mean, self.k)
        half = (_L_RANGE_SD * sd + 32.0) * 4.0 ** widen
        hi = np.minimum(self.m, np.ceil(centre + half))
        lo = np.full(hi.shape, float(self.k))
        if float(np.sum(hi - lo + 1.0)) > _FULL_RANGE_TERMS:
            lo = np.maximum(self.k, np.floor(centre - half))
        if max_width is not None:
            lo = np.maximum(lo, hi - max_width)
        return lo.astype(np.int64), np.maximum(hi, lo).astype(np.int64)

    def exact(self, js, widen: int = 0, max_width: int | None = None):
        """log L(j) for sorted j from the terms of an l-range, and bounds on what that leaves out.

        Returns ``(value, tail, error)``: the log of the sum :math:`\\tilde L(j)` of the terms
        :math:`T_l = \\mathrm{BB}(l; m, a, b)\\,P_a(K_l = k)` (a = θ + jσ, b = n − jσ) over the
        l-range (:meth:`_l_range`), within ``error`` in log, and :math:`\\tilde L(j) \\le L(j) \\le
        \\tilde L(j) + e^{tail}`: τ = e^tail bounds the probability that BB(m, a, b) falls
        outside the l-range (the terms are at most that pmf; :func:`_log_bb_tail_bound`).

        In :math:`T_{l+1}/T_l = \\frac{(m-l)(a+l)}{(l+1)(b+m-l-1)}\\cdot
        \\frac{\\mathcal C(l+1,k)}{(a+l)\\,\\mathcal C(l,k)}` the factor a + l cancels, so
        :math:`\\log T_l` is a cumulative sum of one shared vector and one logarithm per term,
        re-anchored every 64 terms at its exact value (:func:`core.betabinom.log_pmf` and
        :func:`core.betabinom.log_gamma_ratio`) so that the rounding of the sum cannot build up.
        More than ``_MAX_GFC_ENTRIES`` terms in all raise ValueError.
        """
        from .betabinom import log_gamma_ratio, log_pmf

        js = np.asarray(js, dtype=float)
        n, m, k, sigma, theta = self.n, self.m, self.k, self.sigma, self.theta
        if k == 0:
            value, err = log_pmf(m, theta + js * sigma, n - js * sigma, 0.0)
            return value, np.full(js.size, -np.inf), err
        lo, hi = self._l_range(js, widen, max_width)
        if max_width is None:
            self._extend_table(int(hi.max()))
        else:                   # an envelope: the tails cover what a smaller table leaves out
            self._extend_table(min(int(hi.max()), max(self.table, 1 << 18)))
        hi = np.minimum(hi, self.table)
        lo = np.minimum(lo, hi)
        if float(np.sum(hi - lo + 1.0)) > _MAX_GFC_ENTRIES:
            raise ValueError(f"new_values = {k} with m = {m} and n = {n} needs more than {_MAX_GFC_ENTRIES:.0e} "
                             "likelihood terms; not computed")
        out, tail, error = np.empty(js.size), np.empty(js.size), np.empty(js.size)
        s = 0
        while s < js.size:
            # the largest block of rows whose common l-range keeps rows × columns within 2^22
            e, step = s + 1, 1
            while e < js.size:
                cand = min(js.size, e + step)
                if (cand - s) * (hi[s:cand].max() - lo[s:cand].min() + 1) <= (1 << 22):
                    e, step = cand, 2 * step
                elif step > 1:
                    step = 1
                else:
                    break
            l0, l1 = int(lo[s:e].min()), int(hi[s:e].max())
            width = l1 - l0 + 1
            aa = theta + js[s:e, None] * sigma
            bb = n - js[s:e, None] * sigma
            ell = np.arange(l0, l1 + 1, dtype=float)
            log_c = self.log_c[l0:l1 + 1]
            # one-step log-ratios log T_{l+1}/T_l for l = l0 .. l1 − 1
            shared = np.log(m - ell[:-1]) - np.log(ell[:-1] + 1.0) + (log_c[1:] - log_c[:-1])
            with np.errstate(divide="ignore"):
                steps = shared[None, :] - np.log(bb + (m - 1.0 - ell[:-1])[None, :])
            anchors = np.arange(0, width, 64)
            la = ell[anchors][None, :]
            anchor_value, anchor_err = log_pmf(m, aa, bb, la)
            anchor_value = anchor_value + (log_gamma_ratio(aa / sigma + 1.0, k - 1.0) - math.log(sigma)
                                           - log_gamma_ratio(aa + 1.0, la - 1.0) + log_c[anchors][None, :])
            pad = (-width) % 64
            x = np.zeros((e - s, width + pad))
            x[:, 1:width] = steps
            x[:, anchors] = anchor_value
            log_t = np.cumsum(x.reshape(e - s, -1, 64), axis=2).reshape(e - s, -1)[:, :width]
            top = log_t.max(axis=1)
            out[s:e] = top + np.log(np.exp(log_t - top[:, None]).sum(axis=1))
            # error: the anchor's bound, 64 steps of a few round-offs each, and log C's rounding
            step_size = np.abs(steps).max(axis=1) if width > 1 else np.zeros(e - s)
            error[s:e] = anchor_err.max(axis=1) + 64 * 2.0**-52 * (8.0 + 64.0 * step_size) + 1e-12
            a1, b1 = aa[:, 0], bb[:, 0]
            up = _log_bb_tail_bound(m, a1, b1, np.full(e - s, l1 + 1.0))
            # below l = k the terms are 0 exactly (fewer than k draws cannot show k values);
            # L < l0 is m − L > m − l0, and m − L ~ BB(m, b, a)
            down = (_log_bb_tail_bound(m, b1, a1, np.full(e - s, m - l0 + 1.0)) if l0 > k
                    else np.full(e - s, -np.inf))
            tail[s:e] = np.logaddexp(up, down) + 1e-9
            s = e
        return out, tail, error

    def _extend_table(self, upto: int):
        """Make ``log_c`` hold :math:`\\log\\mathcal C(l, k)` for l ≤ ``upto`` (within ``_MAX_GFC_ENTRIES``)."""
        limit = min(self.m, _MAX_GFC_ENTRIES // self.k - 1)
        if min(upto, limit) > self.table:
            # at least double it: a table is rebuilt from l = 0
            self.table = max(self.k, min(limit, max(upto, 2 * self.table)))
            self.log_c = _log_generalized_factorial(self.table, self.k, self.sigma)

    def _log_ratio_bounds(self, j):
        """Bounds on :math:`\\log L(j+1) - \\log L(j)`, j = 1..n−1 (docs/bayesian_family.md §4).

        Along one birth/no-birth path of the release, the ratio of its probabilities from
        j + 1 and from j is :math:`\\frac{\\theta+(j+k)\\sigma}{\\theta+j\\sigma}` (the births
        telescope) times :math:`\\prod (1 - \\sigma/d_t)` over the m − k no-birth steps,
        :math:`d_t = n + t - (j + K_t)\\sigma` with :math:`0 \\le K_t \\le t`. Bounding each
        factor and putting the no-births at the last (first) m − k steps gives

        .. math:: \\log\\rho_+ = \\log\\tfrac{\\theta+(j+k)\\sigma}{\\theta+j\\sigma}
                  - \\sigma\\,[\\psi(n+m-j\\sigma) - \\psi(n+k-j\\sigma)],

        .. math:: \\log\\rho_- = \\log\\tfrac{\\theta+(j+k)\\sigma}{\\theta+j\\sigma}
                  - \\tfrac{\\sigma}{1-\\sigma}\\,[\\psi(c+m-k) - \\psi(c)],
                  \\quad c = \\tfrac{n-(j+1)\\sigma}{1-\\sigma},

        from :math:`\\log(1-x) \\le -x` and :math:`\\log(1-x) \\ge -x/(1-x)`. A ratio of sums of
        path probabilities lies between the smallest and largest path ratio.
        """
        from scipy import special

        n, m, k, sigma, theta = self.n, self.m, self.k, self.sigma, self.theta
        births = np.log1p(k * sigma / (theta + j * sigma))
        upper = births - sigma * (special.digamma(n + m - j * sigma) - special.digamma(n + k - j * sigma))
        c = (n - (j + 1.0) * sigma) / (1.0 - sigma)
        lower = births - sigma / (1.0 - sigma) * (special.digamma(c + (m - k)) - special.digamma(c))
        slack = 1e-9 * (1.0 + np.abs(births) + np.abs(upper - births) + np.abs(lower - births))
        return lower - slack, upper + slack

    def _envelope(self, j):
        n = self.n
        pts = np.concatenate([np.geomspace(1, n, _ENVELOPE_POINTS // 2),
                              n + 1 - np.geomspace(1, n, _ENVELOPE_POINTS // 4),
                              np.linspace(1, n, _ENVELOPE_POINTS // 4)])
        grid = np.unique(np.clip(np.rint(pts), 1, n).astype(np.int64))
        value, tail, error = self.exact(grid, max_width=1 << 14)
        for widen in (1, 2, 3):
            # where the left-out tail dominates, a wider range makes the bound tight
            loose = np.flatnonzero(tail > value - 8.0)
            if loose.size == 0:
                break
            value[loose], tail[loose], error[loose] = self.exact(grid[loose], widen, max_width=1 << 16)
        g_up = np.logaddexp(value + error, tail)
        if n == 1:
            self.log_upper, self.log_mid = g_up.copy(), value.copy()
            return
        low, up = self._log_ratio_bounds(j[:-1])
        cum_low = np.concatenate([[0.0], np.cumsum(low)])   # Σ_{i<j} log ρ−(i), at index j − 1
        cum_up = np.concatenate([[0.0], np.cumsum(up)])
        seg = np.clip(np.searchsorted(grid, j, side="right") - 1, 0, grid.size - 2)
        left, right = grid[seg], grid[seg + 1]
        idx = j.astype(np.int64) - 1
        # upper: forward from the left point with ρ+, backward from the right one with ρ−
        self.log_upper = np.minimum(g_up[seg] + cum_up[idx] - cum_up[left - 1],
                                    g_up[seg + 1] - (cum_low[right - 1] - cum_low[idx]))
        lower = np.maximum(value[seg] + cum_low[idx] - cum_low[left - 1],
                           value[seg + 1] - (cum_up[right - 1] - cum_up[idx]))
        self.log_mid = 0.5 * (self.log_upper + np.minimum(lower, self.log_upper))

    def reach_sup(self, lo, hi) -> np.ndarray:
        """An upper bound on :math:`\\log\\sup_{j \\in [lo, hi]} L(j)`, elementwise (1 ≤ lo ≤ hi ≤ n)."""
        return self.hull[np.clip(self.peak, lo, hi) - 1]


class _NeedsLogSpace(Exception):
    """The scaled chain cannot guarantee that no entry under- or overflows: use :class:`_LogChain`."""


class _ScaledChain:
    """The law of :math:`K_t` on a window of j, each entry scaled by its own power of e.

    :math:`P(K_t = j) = P_i\\,e^{r_i}` (i = j − j0). A step is five vector operations in
    probability space (positive terms only: relative error ~2^-52 per step); the references
    :math:`r_i` absorb the scale when an entry leaves [1e-100, 1e100], checked every R steps
    with R chosen so that no entry can leave the double range in between (each step
    multiplies an entry by at least the smallest stay or birth probability, and by at most
    the largest ratio of neighbouring references). Raises :class:`_NeedsLogSpace` when
    even R = 1 is not safe (extreme θ or σ).
    """

    def __init__(self, sigma: float, theta: float):
        self.sigma, self.theta = sigma, theta
        self.j0, self.size, self.cap = 1, 1, 256
        self.P = np.zeros(self.cap)
        self.P[0] = 1.0
        self.ref = np.zeros(self.cap)
        self.bx = np.zeros(self.cap)        # inflow factor into i from i − 1: (θ + σ(j−1)) e^{r_{i−1} − r_i}
        self.tmp = np.empty(self.cap)
        self.tmp2 = np.empty(self.cap)
        self.sj = sigma * np.arange(1, self.cap + 1, dtype=float)
        self.next_check = 0
        self.xmax = 1.0

    def _grow(self):
        self.cap *= 2
        for name in ("P", "ref", "bx"):
            old = getattr(self, name)
            new = np.zeros(self.cap)
            new[:old.size] = old
            setattr(self, name, new)
        self.tmp = np.empty(self.cap)
        self.tmp2 = np.empty(self.cap)
        self.sj = self.sigma * np.arange(self.j0, self.j0 + self.cap, dtype=float)

    def step(self, t: int):
        """From t draws to t + 1."""
        s = self.size
        if s + 1 > self.cap:
            self._grow()
        P, tmp = self.P, self.tmp
        self.ref[s] = self.ref[s - 1]                       # a new top entry starts at its neighbour's scale
        self.bx[s] = self.theta + self.sigma * (self.j0 + s - 1)
        mv = np.multiply(P[:s], self.bx[1:s + 1], out=tmp[:s])
        P[:s] *= np.subtract(t, self.sj[:s], out=self.tmp2[:s])
        P[s] = 0.0
        P[1:s + 1] += mv
        P[:s + 1] *= 1.0 / (self.theta + t)
        self.size = s + 1
        if t + 1 >= self.next_check:
            self._check(t + 1)

    def _check(self, t: int):
        s = self.size
        seg = self.P[:s]
        low, high = float(seg.min()), float(seg.max())
        if not (low > 0.0 and high < math.inf):
            raise _NeedsLogSpace
        if low < 1e-100 or high > 1e100 or self.next_check == 0:
            self.ref[:s] += np.log(seg)
            seg[:] = 1.0
            low = high = 1.0
            if s > 1:
                gap = self.ref[:s - 1] - self.ref[1:s]
                if gap.max() > 600.0:
                    raise _NeedsLogSpace
                x = np.exp(gap)
                self.xmax = max(1.0, float(x.max()))
                self.bx[1:s] = (self.theta + self.sigma * np.arange(self.j0, self.j0 + s - 1)) * x
        # next check after R steps: an entry shrinks by at most mu and grows by at most xmax per step
        top = self.j0 + s - 1
        mu = min(t - self.sigma * top, self.theta + self.sigma * top) / (self.theta + t + 64.0)
        room_low = math.log(low) + 640.0
        room_high = 640.0 - math.log(high)
        r = 64.0
        if mu < 1.0:
            r = min(r, room_low / -math.log(mu))
        if self.xmax > 1.0:
            r = min(r, room_high / math.log(self.xmax))
        if r < 1.0:
            raise _NeedsLogSpace
        self.next_check = t + int(r)

    def log_p(self) -> np.ndarray:
        return self.ref[:self.size] + np.log(self.P[:self.size])

    def drop(self, low: int, high: int):
        """Remove ``low`` entries at the bottom of the window and ``high`` at the top."""
        s = self.size - low - high
        if low:
            for arr in (self.P, self.ref, self.bx):
                arr[:s] = arr[low:low + s].copy()
            self.j0 += low
            self.sj = self.sigma * np.arange(self.j0, self.j0 + self.cap, dtype=float)
        self.P[s:] = 0.0
        self.size = s


class _LogChain:
    """The same chain in log space (``logaddexp``): slower, used only when :class:`_ScaledChain` is not safe."""

    def __init__(self, sigma: float, theta: float):
        self.sigma, self.theta = sigma, theta
        self.j0 = 1
        self.lp = np.zeros(1)

    @property
    def size(self) -> int:
        return self.lp.size

    def step(self, t: int):
        j = self.j0 + np.arange(self.lp.size, dtype=float)
        stay = self.lp + np.log(t - self.sigma * j)
        move = self.lp + np.log(self.theta + self.sigma * j)
        new = np.empty(self.lp.size + 1)
        new[0] = stay[0]
        new[1:-1] = np.logaddexp(stay[1:], move[:-1])
        new[-1] = move[-1]
        self.lp = new - math.log(self.theta + t)

    def log_p(self) -> np.ndarray:
        return self.lp.copy()

    def drop(self, low: int, high: int):
        self.lp = self.lp[low:self.lp.size - high]
        self.j0 += low


def _trimmed_k_n_law(n: int, sigma: float, theta: float, lik: _DiscoveryLikelihood, log_budget,
                     log_target: float):
    """The law of :math:`K_n` where it matters for the posterior, and a bound on what was left out.

    The number of distinct values of t draws from PY(σ, θ) is a Markov chain: a new value
    w.p. :math:`(\\theta + j\\sigma)/(\\theta + t)` after t draws with j values. Every
    ``_TRIM_EVERY`` steps, entries at either end of the window are dropped while the sum of
    their *potentials* stays within the budget: an entry j with probability p at time t
    contributes :math:`p\\,E[L(K_n) \\mid K_t = j] \\le p \\sup_{j \\le j' \\le j + n - t} L(j')`
    to :math:`Z = \\sum_j P(K_n = j) L(j)` (its descendants stay in that range), so the
    dropped potentials bound the part of Z — and of :math:`\\sum_j j\\,P(K_n=j)L(j)`, up to a
    factor n — that the kept window misses. The kept entries are exact (the chain is linear
    with positive coefficients; dropping only removes mass).

    ``log_budget``: a float (the same absolute budget at every trim), or None to derive it
    at each trim — so that the dropped potentials move :math:`E[K_n \\mid K^{(n)}_m = k]` by
    at most :math:`e^{\\text{log\\_target}}` — from an estimate of Z:
    :math:`\\sum_j p_j \\hat L(E[K_n \\mid K_t = j])`,
    with :math:`E[\\theta/\\sigma + K_n \\mid K_t] = (\\theta/\\sigma + K_t)\\,
    \\frac{\\Gamma(\\theta+\\sigma+n)\\Gamma(\\theta+t)}{\\Gamma(\\theta+\\sigma+t)\\Gamma(\\theta+n)}` (a martingale).

    Returns
    -------
    j0 : int
    log_p : ndarray — log P(K_n = j) for j = j0, j0 + 1, … (exact where kept)
    log_dropped : float — log of the bound on the dropped potentials
    """
    try:
        return _run_chain(_ScaledChain(sigma, theta), n, sigma, theta, lik, log_budget, log_target)
    except _NeedsLogSpace:
        return _run_chain(_LogChain(sigma, theta), n, sigma, theta, lik, log_budget, log_target)


def _log_sum_exp(x: np.ndarray) -> float:
    """log Σ exp(x) of a 1-D array (−inf when empty or all −inf)."""
    if x.size == 0:
        return -math.inf
    top = float(x.max())
    if top == -math.inf:
        return top
    return top + math.log(float(np.exp(x - top).sum()))


def _log_climb_bound(n: int, sigma: float, theta: float, t: int, starts: np.ndarray,
                     log_rising_upper: np.ndarray) -> np.ndarray:
    """log of an upper bound on :math:`E[L(K_n) \\mid K_t = c]` for each c in ``starts``.

    With :math:`g \\ge L` nondecreasing (``log_rising_upper``, the running maximum of the
    envelope) and levels :math:`c = c_0 < c_1 < \\dots < c_I = n`,
    :math:`E[g(K_n)] \\le g(c_0) + \\sum_i g(c_{i+1})\\,P(K_n > c_i)`, and the tails come from
    the martingale :math:`(\\theta/\\sigma + K_t)_r\\,\\Gamma(\\theta+t)/\\Gamma(\\theta+t+r\\sigma)`
    (rising factorial, any real r ≥ 0: one step multiplies its mean by
    :math:`(\\theta+t+r\\sigma)/(\\theta+t)`) and Markov's inequality,

    .. math:: P(K_n \\ge x \\mid K_t = c) \\le \\min_r \\frac{(\\theta/\\sigma + c)_r}{(\\theta/\\sigma + x)_r}
              \\frac{\\Gamma(\\theta+n+r\\sigma)\\,\\Gamma(\\theta+t)}
              {\\Gamma(\\theta+t+r\\sigma)\\,\\Gamma(\\theta+n)}.

    A chain started lower stays lower (same uniforms: the birth probability grows with the
    state), so the bound at c also holds for every start below c.
    """
    from .betabinom import log_gamma_ratio

    c = np.asarray(starts, dtype=float)[:, None]
    steps = np.arange(_CLIMB_LEVELS + 1, dtype=float)[None, :] / _CLIMB_LEVELS
    levels = np.minimum(n, np.floor(c * (n / c) ** steps))            # (C, I + 1), c_0 = c, c_I = n
    g_next = log_rising_upper[levels[:, 1:].astype(np.int64) - 1]
    x = theta / sigma + levels[:, :-1] + 1.0                          # P(K_n ≥ c_i + 1)
    base = theta / sigma + c
    r = np.geomspace(0.25, 4.0 * (theta / sigma + n), _CLIMB_ORDERS)[None, None, :]
    log_b = (log_gamma_ratio(base[:, :, None], r) - log_gamma_ratio(x[:, :, None], r)
             + log_gamma_ratio(theta + n, sigma * r) - log_gamma_ratio(theta + t, sigma * r)).min(axis=2)
    terms = np.concatenate([log_rising_upper[c[:, 0].astype(np.int64) - 1][:, None],
                            g_next + np.minimum(0.0, log_b)], axis=1)
    top = terms.max(axis=1)
    return top + np.log(np.exp(terms - top[:, None]).sum(axis=1))


def _drop_share(n: int, log_target: float) -> float:
    """log of the potential one trim may drop: all trims together move E[K_n | k] by at most
    (n − 1) × (dropped potential)/Z ≤ e^log_target / 4, with a factor 4 to spare (two ends, rounding)."""
    trims = (n - 1) // _TRIM_EVERY + 2
    return log_target - math.log(n) - math.log(trims) - math.log(4.0)


def _run_chain(chain, n, sigma, theta, lik, log_budget, log_target):
    log_share = _drop_share(n, log_target)
    log_dropped = -math.inf
    rising = np.maximum.accumulate(lik.log_upper)
    climb_every, next_climb = _CLIMB_EVERY, _CLIMB_EVERY * _TRIM_EVERY
    for t in range(1, n + 1):
        if t > 1:
            chain.step(t - 1)
        if t % _TRIM_EVERY and t != n:
            continue
        lp = chain.log_p()
        j = chain.j0 + np.arange(lp.size)
        if t == n:
            pot = lp + lik.log_upper[j - 1]
        else:
            pot = lp + lik.reach_sup(j, np.minimum(n, j + (n - t)))
        if log_budget is None:
            # E[θ/σ + K_n | K_t] = (θ/σ + K_t)·Γ(θ+σ+n)Γ(θ+t)/(Γ(θ+σ+t)Γ(θ+n))
            #                   ≈ (θ/σ + K_t)((θ+n)/(θ+t))^σ:
            # only a point estimate for the budget, so the simpler form will do.
            ratio = math.exp(sigma * math.log1p((n - t) / (theta + t)))
            ahead = np.rint((theta / sigma + j) * ratio - theta / sigma)
            ahead = np.clip(ahead, j, np.minimum(n, j + (n - t))).astype(np.int64)
            budget = _log_sum_exp(lp + lik.log_mid[ahead - 1]) + log_share
        else:
            budget = log_budget
        side = budget - math.log(2.0)
        best = int(np.argmax(pot))
        # Only entries below the budget can go, and only up to the first one above it.
        above = pot > side
        high = min(int(np.argmax(above[::-1])) if above.any() else pot.size, pot.size - 1 - best)
        if high:
            down = np.logaddexp.accumulate(pot[::-1][:high])
            high = int(np.searchsorted(down, side, side="right"))
            if high:
                log_dropped = float(np.logaddexp(log_dropped, down[high - 1]))
        low = min(int(np.argmax(above)) if above.any() else pot.size, best)
        if low:
            up = np.logaddexp.accumulate(pot[:low])
            low = int(np.searchsorted(up, side, side="right"))
            if low:
                log_dropped = float(np.logaddexp(log_dropped, up[low - 1]))
        room = lp.size - high - 1 - low            # entries the bottom could still lose
        if t < n and room > _TRIM_EVERY and t >= next_climb:
            # The reach bound keeps every entry that could still climb to where L is large;
            # the climb bound drops the ones too far below to get there in the steps left.
            mass = np.logaddexp.accumulate(lp[low:low + room])
            cuts = np.unique(np.rint(np.geomspace(1, room, _CLIMB_CUTS)).astype(np.int64)) - 1
            bound = mass[cuts] + _log_climb_bound(n, sigma, theta, t, j[low + cuts], rising)
            ok = np.flatnonzero(bound <= side)
            if ok.size:
                i = int(ok[-1])
                low += int(cuts[i]) + 1
                log_dropped = float(np.logaddexp(log_dropped, bound[i]))
            # try again soon after a success, ever more rarely after failures (it costs ~1 ms)
            climb_every = _CLIMB_EVERY if ok.size else min(16 * _CLIMB_EVERY, 2 * climb_every)
            next_climb = t + climb_every * _TRIM_EVERY
        if low or high:
            chain.drop(low, high)
    return chain.j0, chain.log_p(), log_dropped


def discovery_probability(n, m, new_values, sigma, theta) -> float:
    """Bayes estimate of the probability that the next draw is a new value, from the release alone.

    Thesis §6.3 (docs/bayesian_family.md §4). Given the confidential size ``n``, the release
    size ``m`` and the number k of distinct new values in the release — but not the number
    :math:`K_n` of distinct confidential values — the estimate under squared loss is

    .. math:: \\hat D = \\frac{\\theta + k\\sigma + \\sigma\\,E[K_n \\mid K^{(n)}_m = k]}{\\theta + n + m},
              \\qquad P(K_n = j \\mid K^{(n)}_m = k) \\propto P(K_n = j)\\,L(j),\\quad
              L(j) = P(K^{(n)}_m = k \\mid K_n = j),

    the thesis's :math:`P(Y=j)\\propto(\\theta/\\sigma+1)_{j+k-1}\\mathcal C(n,j;\\sigma)\\mathcal C(m,k;\\sigma,-n+j\\sigma)`
    computed as prior × likelihood without noncentral coefficients: the likelihood is
    :math:`\\sum_l \\mathrm{BB}(l; m, \\theta+j\\sigma, n-j\\sigma)\\,P_{\\theta+j\\sigma}(K_l = k)`
    (l draws go to new values, and they form a PY(σ, θ + jσ) partition), with
    :math:`P_{\\theta'}(K_l=k) = \\frac{(\\theta'/\\sigma+1)_{k-1}}{\\sigma\\,(\\theta'+1)_{l-1}}\\mathcal C(l,k;\\sigma)`
    and the generalized factorial coefficients in log space
    (:func:`_log_generalized_factorial`); the prior :math:`P(K_n = j)` is propagated by its
    Markov chain (:func:`_trimmed_k_n_law`). For σ = 0 the estimate is θ/(θ + n + m) exactly.

    **Accuracy.** Where k is unlikely a priori the posterior of :math:`K_n` sits far in a
    tail of its prior (at n = 500, m = k = 300, σ = 0.3, θ = 1 the posterior mode has prior
    mass e^-100 of the prior mode's, and all but 1e-16 of the posterior lies where that
    ratio is between e^-33 and e^-207), so no value of :math:`K_n` is dropped for being
    unlikely *a priori*. A value j —
    or a term l of the likelihood — is left out only under a proven bound on its
    contribution to the posterior (its prior mass times an upper bound on the likelihood
    it can still reach, :func:`_trimmed_k_n_law`), and the bounds of everything left out
    move :math:`\\hat D` by less than 1e-14 of its value (``_DISCOVERY_TOLERANCE``,
    checked after the fact; a second pass with the budget the first one proves sufficient
    runs when it is not met, and ValueError if even that fails). What remains is rounding:
    about :math:`n \\cdot 2^{-52}` relative in the prior, and a few units in the last place
    of :math:`\\log\\Gamma(l)` in the coefficients :math:`\\mathcal C(l, k; \\sigma)`;
    against the thesis's formula in 40-digit mpmath, the largest relative difference in the
    tests is 3e-14. Cost O(n × width of the window of :math:`K_n` that matters) for the
    prior and O(k × largest l) for the coefficients: 0.02 s at the point above, ~2 s at
    n = 10^5 with m = 500, ~6 s at n = 10^5, m = 10^4, k = 2500
    (``benchmarks/bench_inference.py``).

    Parameters
    ----------
    n : int in [1, 10^6]
        Size of the confidential data (public under replacement neighbours).
    m : int in [1, 10^7]
        Size of the release.
    new_values : int in [0, m]
        Number of distinct new values in the release.
    sigma : float in [0, 1)
    theta : float > −σ

    Returns
    -------
    float in [0, 1] (in (0, 1) before rounding)

    Raises
    ------
    ValueError
        For inadmissible arguments (the message names the parameter), and — "not
        computed" — when the likelihood would need more than ``_MAX_GFC_ENTRIES`` terms
        (``m`` in the millions with n in the thousands, or ``new_values`` above 10^4) or the
        truncation cannot be bounded within the tolerance.
    """
    from scipy import special

    n = check_integer("n", n, minimum=1, maximum=MAX_DISCOVERY_N)
    m = check_release_size(m)
    k = check_integer("new_values", new_values, minimum=0, maximum=m)
    sigma, theta, _ = check_py_parameters(sigma, theta)
    if sigma < 0:
        raise ValueError(f"sigma must be in [0, 1) (new values exist only for sigma >= 0), got {sigma!r}")
    if sigma == 0:
        return theta / (theta + n + m)
    lik = _DiscoveryLikelihood(n, m, k, sigma, theta)
    # D̂ is within the tolerance, relatively, if E[K_n | k] moves by at most
    # tolerance × (θ + kσ + σE)/σ, and E ≥ 1: aim for tolerance × (θ + kσ + σ)/σ.
    log_target = math.log(_DISCOVERY_TOLERANCE) + math.log(min(1.0, (theta + k * sigma + sigma) / sigma))
    log_budget, rerun = None, True
    while True:
        if rerun:
            j0, log_p, log_dropped = _trimmed_k_n_law(n, sigma, theta, lik, log_budget, log_target)
            j = j0 + np.arange(log_p.size, dtype=float)
            widen = np.zeros(j.size, dtype=np.int64)
            log_l, log_tail, _ = lik.exact(j)
            rerun = False
        log_w = log_p + log_l
        log_z = float(special.logsumexp(log_w))
        expected_k_n = float(np.exp(log_w - log_z) @ j)
        # What was left out is at most (dropped potentials + likelihood tails)/Z̃ of the
        # posterior mass, wherever in 1..n it lies: E[K_n | k] moves by at most that × (n − 1),
        # and D̂ by σ times that.
        log_tails = float(special.logsumexp(log_p + log_tail))
        left_out = float(np.logaddexp(log_dropped, log_tails))
        numerator = theta + k * sigma + sigma * expected_k_n
        if sigma * (n - 1) * math.exp(min(0.0, left_out - log_z)) <= _DISCOVERY_TOLERANCE * numerator:
            return numerator / (theta + n + m)
        share = log_z + log_target - math.log(4.0 * n * j.size)
        loose = np.flatnonzero((log_p + log_tail > share) & (widen < 12))
        if log_dropped >= log_tails and log_budget is None:
            # The first window missed part of the posterior (its budget came from an estimate
            # of Z): rerun with the budget that Z̃ ≤ Z proves sufficient.
            log_budget = log_z + _drop_share(n, log_target)
            rerun = True
        elif log_tails > log_dropped and loose.size:
            # the l-ranges of these values of K_n left out too much: widen them
            widen[loose] += 1
            for level in np.unique(widen[loose]):
                rows = loose[widen[loose] == level]
                log_l[rows], log_tail[rows], _ = lik.exact(j[rows], int(level))
        else:
            break
    raise ValueError(f"discovery_probability(n={n}, m={m}, new_values={k}, sigma={sigma!r}, theta={theta!r}): "
                     f"the truncation error could not be bounded below {_DISCOVERY_TOLERANCE:g}; not computed")
