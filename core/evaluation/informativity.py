"""The informativity experiment: how fast PYPP synthetic data recover the confidential data (docs/mathematics.md §6).

Paper §4.2 and Appendix C.2 (Menicucci, Beraha, Favaro and Lazzarini, 2026; Theorem 4,
Corollaries 3 and 13). A confidential *population* of size ``N`` is given (the
dyadic-geometric population of :mod:`core.evaluation.simulation`, or any uploaded numeric column).
For every ``n`` on a grid, each of ``R`` runs

1. draws a confidential subsample :math:`x` of size ``n`` without replacement;
2. releases ``m`` synthetic values :math:`Z` with the Dirichlet-process posterior-predictive
   mechanism (PYPP with σ = 0, strength θ, base measure ``H = Uniform[lo, hi]``);
3. records :math:`W_1(P_Z, P_x)`, the 1-Wasserstein distance between the two empirical
   measures.

The release size follows a rule: the largest ``m`` admissible for (ε, δ) under Theorem 2
(:class:`PrivacySizeRule`, docs/mathematics.md §3.1) or :math:`m = \\lceil c\\,n^{a} \\rceil`
(:class:`PowerSizeRule`). The output is the mean W1 per ``n`` with a 95% confidence band
and the least-squares slope of :math:`\\log \\overline{W_1}` against :math:`\\log n`, to
compare with the :math:`n^{-1/2}` rate.

All ``R`` runs of a grid point are simulated at once, on the count level: the subsample
is a multivariate hypergeometric draw over the distinct population values, the release
is the exact fast sampler of docs/mathematics.md §2 written for σ = 0 (Dirichlet weights as normalised
gammas, a multinomial, a Chinese restaurant for the new values), and W1 is computed for
all runs by one sort (:func:`core.evaluation.batched_wasserstein1`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
from scipy import stats

from ..privacy import crp_tables
from ..privacy import max_synthetic_size
from .distances import signed_wasserstein1
from ..validation import (
    MAX_RELEASE_SIZE,
    MAX_RELEASE_VALUES,
    check_bounds,
    check_delta,
    check_finite_eps,
    check_integer,
    check_positive,
    check_positive_integer_array,
    check_probability,
    check_py_parameters,
    check_rng,
    check_sample,
)

__all__ = [
    "InformativityResult",
    "PowerSizeRule",
    "PrivacySizeRule",
    "fit_loglog_slope",
    "informativity_experiment",
    "log_grid",
    "release_sizes",
]

ProgressCallback = Callable[[float, str], None]

# Entries per dense (runs × distinct population values) block; bounds memory at ~16 MB.
_BLOCK_ENTRIES = 2**21


@dataclass(frozen=True)
class PowerSizeRule:
    """Release size :math:`m = \\lceil c\\,n^{a} \\rceil` (at least 1).

    ``a = 1`` gives a fixed fraction of the data (the fixed-δ regime of the issue,
    ``c = 0.1``); ``0 < a < 1`` a vanishing fraction (asymptotic ε-DP, paper Corollary 13);
    ``a = 0`` a fixed release size ``⌈c⌉``.

    Parameters
    ----------
    c : float > 0
    a : float ≥ 0
    """

    c: float
    a: float

    def __post_init__(self):
        check_positive("c", self.c)
        check_positive("a", self.a, allow_zero=True)

    @property
    def label(self) -> str:
        return f"m = ⌈{self.c:g}·n^{self.a:g}⌉"


@dataclass(frozen=True)
class PrivacySizeRule:
    """Release size :math:`m^*(\\varepsilon, \\delta)`: the largest m admissible under Theorem 2.

    Computed by :func:`core.privacy.max_synthetic_size` (docs/mathematics.md §3.1); it is 0 when not a
    single synthetic value can be released at that ``n``.
    """

    eps: float
    delta: float

    def __post_init__(self):
        check_finite_eps(self.eps)
        check_delta(self.delta)

    @property
    def label(self) -> str:
        return f"(ε, δ) = ({self.eps:g}, {self.delta:g})"


def log_grid(n_min, n_max, points) -> np.ndarray:
    """Integers spread evenly on a log scale from ``n_min`` to ``n_max`` (both included).

    Parameters
    ----------
    n_min, n_max : int, 1 ≤ n_min ≤ n_max
    points : int in [1, 10**5]
        Number of grid points before rounding; rounding may merge neighbours, so the
        result can be shorter.

    Returns
    -------
    ndarray of int64, shape (≤ points,), strictly increasing
    """
    n_min = check_integer("n_min", n_min, minimum=1)
    n_max = check_integer("n_max", n_max, minimum=n_min, maximum=2**53)
    points = check_integer("points", points, minimum=1, maximum=10**5)
    if points == 1:
        return np.array([n_max], dtype=np.int64)
    grid = np.rint(np.geomspace(n_min, n_max, points)).astype(np.int64)
    grid[0], grid[-1] = n_min, n_max
    return np.unique(grid)


def release_sizes(n, rule: PowerSizeRule | PrivacySizeRule, theta) -> np.ndarray:
    """Release size ``m`` for each confidential size ``n`` under a rule.

    Parameters
    ----------
    n : array_like of int ≥ 1, shape (G,)
    rule : PowerSizeRule or PrivacySizeRule
    theta : float > 0
        Strength of the Dirichlet process (Theorem 2 depends on it).

    Returns
    -------
    ndarray of int64, shape (G,), values in [0, MAX_RELEASE_SIZE] (``ValueError`` beyond)
        For :class:`PowerSizeRule`, :math:`\\lceil c n^a \\rceil \\ge 1`. Because ``c`` and
        :math:`n^a` are rounded binary numbers, a product within a relative 1e-12 of an
        integer counts as that integer (so ``c = 0.1, n = 1000`` gives exactly 100). For
        :class:`PrivacySizeRule`, :math:`m^*(\\varepsilon, \\delta)`, possibly 0.
    """
    n_arr = np.atleast_1d(check_positive_integer_array(n, "n"))
    if n_arr.ndim != 1 or n_arr.size > 10**5:
        raise ValueError(f"n must be a 1-D array of at most 100000 sizes, got shape {n_arr.shape}")
    _, theta, _ = check_py_parameters(0.0, theta)
    if isinstance(rule, PowerSizeRule):
        with np.errstate(over="ignore"):
            raw = np.ceil(rule.c * n_arr.astype(np.float64) ** rule.a * (1.0 - 1e-12))
        if not np.all(raw <= MAX_RELEASE_SIZE):
            raise ValueError(f"rule {rule.label} gives m = {float(raw.max()):g} > MAX_RELEASE_SIZE = "
                             f"{MAX_RELEASE_SIZE} at n = {int(n_arr[np.argmax(raw)])}; lower c or a")
        return np.maximum(raw, 1.0).astype(np.int64)
    if isinstance(rule, PrivacySizeRule):
        return np.array([max_synthetic_size(int(v), theta, rule.eps, rule.delta) for v in n_arr],
                        dtype=np.int64)
    raise ValueError(f"rule must be a PowerSizeRule or a PrivacySizeRule, got {type(rule).__name__}")


def _w1_of_dp_releases(atoms, counts, n, m, theta, lo, hi, runs, rng, log_base=False):
    """W1 between PYPP (σ = 0) releases and their confidential subsamples, for ``runs`` runs.

    Count-level form of docs/mathematics.md §2 with σ = 0 on a subsample with counts :math:`X_i` over the
    population's distinct values :math:`u_i` (absent values have :math:`X_i = 0`):
    :math:`(P, R) \\sim \\mathrm{Dir}(X_1, \\dots, X_K, \\theta)` as normalised gammas
    (a Gamma(0) is 0), :math:`(S, L) \\sim \\mathrm{Mult}(m; P, R)`, and the ``L`` new
    draws seated in a Chinese restaurant of strength θ, one value from H per table
    (uniform on [lo, hi], or ``exp`` of a uniform on [log lo, log hi] with ``log_base``).
    """
    subsample = rng.multivariate_hypergeometric(counts, n, size=runs)
    gammas = np.column_stack([rng.standard_gamma(subsample.astype(np.float64)),
                              rng.standard_gamma(theta, size=runs)])
    drawn = rng.multinomial(m, gammas / gammas.sum(axis=1, keepdims=True))
    old, new_total = drawn[:, :-1], drawn[:, -1]
    _, owner, block = crp_tables(new_total, 0.0, theta, rng, return_sizes=True)
    run_of_atom, atom = np.nonzero(subsample)
    # One signed entry per occupied value: synthetic mass minus confidential mass.
    signed_old = old[run_of_atom, atom] / m - subsample[run_of_atom, atom] / n
    fresh = np.exp(rng.uniform(math.log(lo), math.log(hi), size=block.size)) if log_base else \
        rng.uniform(lo, hi, size=block.size)
    values = np.concatenate([atoms[atom], fresh])
    weights = np.concatenate([signed_old, block / m])
    groups = np.concatenate([run_of_atom, owner])
    return signed_wasserstein1(values, weights, groups, runs)


def fit_loglog_slope(n, w1) -> tuple[float, float, float]:
    """Least-squares line :math:`\\log W_1 = b + s \\log n`.

    Parameters
    ----------
    n : array_like of float > 0, shape (G,)
    w1 : array_like of float > 0, shape (G,)
        Mean W1 per grid point; non-finite entries (grid points without a release) are
        ignored.

    Returns
    -------
    slope, intercept : float
        ``nan`` with fewer than two usable points.
    slope_se : float
        Standard error of the slope from the residuals (``nan`` with fewer than three
        points). It ignores the Monte Carlo error of each mean, so read it as a guide.
    """
    x = np.asarray(n, dtype=np.float64)
    y = np.asarray(w1, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"n and w1 must be 1-D arrays of equal length, got shapes {x.shape} and {y.shape}")
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    if ok.sum() < 2:
        return math.nan, math.nan, math.nan
    lx, ly = np.log(x[ok]), np.log(y[ok])
    fit = stats.linregress(lx, ly)
    se = float(fit.stderr) if ok.sum() >= 3 else math.nan
    return float(fit.slope), float(fit.intercept), se


@dataclass(frozen=True)
class InformativityResult:
    """Output of :func:`informativity_experiment`.

    Attributes
    ----------
    n, m : ndarray of int, shape (G,)
        Confidential subsample size and release size per grid point (``m = 0``: no release
        is admissible there; its W1 entries are ``nan``).
    w1 : ndarray of float, shape (G, R)
        W1 of every run.
    mean, lower, upper : ndarray of float, shape (G,)
        Mean W1 and its two-sided confidence interval (Student t over the ``R`` runs).
    slope, intercept, slope_se : float
        :func:`fit_loglog_slope` of ``mean`` against ``n``.
    level : float
        Confidence level of the band.
    label : str
        The release-size rule, for legends.
    """

    n: np.ndarray
    m: np.ndarray
    w1: np.ndarray
    mean: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    slope: float
    intercept: float
    slope_se: float
    level: float
    label: str

    @property
    def runs(self) -> int:
        return int(self.w1.shape[1])

    def table(self, width: float | None = None) -> pd.DataFrame:
        """One row per grid point: ``series, n, m, runs, mean, sd, lower, upper``.

        The columns ``n, mean, lower, upper, series`` are what
        :func:`core.plots.informativity_figure` reads; W1 is in the population's units.

        Parameters
        ----------
        width : float > 0, optional
            The width hi − lo of the public bounds: adds the column ``"mean / (hi − lo)"``,
            the mean W1 as a fraction of the bounds (unit-free, comparable across columns).
        """
        sd = np.full(self.n.shape, np.nan)
        ok = self.m > 0
        if ok.any():
            sd[ok] = self.w1[ok].std(axis=1, ddof=1)
        out = pd.DataFrame({"series": self.label, "n": self.n, "m": self.m, "runs": self.runs,
                            "mean": self.mean, "sd": sd, "lower": self.lower, "upper": self.upper})
        if width is not None:
            out["mean / (hi − lo)"] = self.mean / check_positive("width", width)
        return out


def informativity_experiment(population, n_values, rule: PowerSizeRule | PrivacySizeRule, theta,
                             runs, rng, *, bounds=(0.0, 1.0), log_base: bool = False, level: float = 0.95,
                             progress: ProgressCallback | None = None) -> InformativityResult:
    """Mean W1 between DP-posterior-predictive releases and confidential subsamples, per n.

    For each ``n`` in ``n_values`` and each of ``runs`` independent runs: a subsample of
    size ``n`` drawn without replacement from ``population`` (a fresh one per run), a
    release of size ``m(n)`` (PYPP, σ = 0, strength ``theta``,
    ``H = Uniform(bounds)``), and :math:`W_1(P_Z, P_x)`. The band is the Student-t
    interval of the mean over runs,
    :math:`\\bar W \\pm t_{R-1,(1+\\text{level})/2}\\, s/\\sqrt R`.

    Paper §4.2 (Figure 1); Theorem 4 predicts :math:`\\mathbb E W_1 \\asymp n^{-1/2}`
    when ``m`` grows linearly in ``n``.

    Parameters
    ----------
    population : array_like of float, shape (N,)
        The confidential population (any numeric column; ties allowed).
    n_values : array_like of int, shape (G,)
        Subsample sizes, ``1 ≤ n ≤ N``; sorted and de-duplicated here.
    rule : PowerSizeRule or PrivacySizeRule
    theta : float > 0
    runs : int in [2, 10**6]
        Independent runs ``R`` per grid point.
    rng : numpy.random.Generator
    bounds : (lo, hi)
        Public bounds of the base measure, in the population's units (W1 is in those units).
        The dyadic population lives in [0, 1].
    log_base : bool
        ``H`` is log-uniform on the bounds (uniform on [log lo, log hi], mapped back by
        ``exp``): a column released on the log scale (``ColumnSpec.log``), its population
        and W1 still in original units. Needs ``lo > 0``.
    level : float in (0, 1)
    progress : callable (fraction in [0, 1], message) -> None, optional
        Called after every block of runs.

    Returns
    -------
    InformativityResult
    """
    data = check_sample(population, "population", one_column=True)
    atoms, counts = np.unique(data, return_counts=True)
    N = int(counts.sum())
    n_arr = np.unique(np.atleast_1d(check_positive_integer_array(n_values, "n_values", maximum=N)))
    _, theta, _ = check_py_parameters(0.0, theta)
    runs = check_integer("runs", runs, minimum=2, maximum=10**6)
    rng = check_rng(rng)
    lo, hi = check_bounds(bounds)
    if log_base and not lo > 0:
        raise ValueError(f"bounds: a log-uniform base measure needs lo > 0, got ({lo!r}, {hi!r})")
    level = check_probability(level, "level")
    m_arr = release_sizes(n_arr, rule, theta)
    if int(m_arr.max()) > MAX_RELEASE_SIZE:
        raise ValueError(f"the rule gives m = {int(m_arr.max())} > MAX_RELEASE_SIZE = {MAX_RELEASE_SIZE}")
    if n_arr.size * runs > MAX_RELEASE_VALUES:
        raise ValueError(f"{n_arr.size} grid points × {runs} runs exceed MAX_RELEASE_VALUES = {MAX_RELEASE_VALUES}")

    block = max(1, min(runs, _BLOCK_ENTRIES // max(atoms.size, 1)))
    w1 = np.full((n_arr.size, runs), np.nan)
    for g, (n, m) in enumerate(zip(n_arr.tolist(), m_arr.tolist())):
        if m == 0:
            if progress is not None:
                progress((g + 1) / n_arr.size, f"n = {n}: no admissible release (m* = 0), skipped")
            continue
        for start in range(0, runs, block):
            stop = min(runs, start + block)
            w1[g, start:stop] = _w1_of_dp_releases(atoms, counts, n, m, theta, lo, hi, stop - start, rng,
                                                   log_base=bool(log_base))
            if progress is not None:
                progress((g + stop / runs) / n_arr.size, f"n = {n}, m = {m}: {stop}/{runs} runs")

    mean = w1.mean(axis=1)
    half = stats.t.ppf(0.5 + level / 2, runs - 1) * w1.std(axis=1, ddof=1) / math.sqrt(runs)
    slope, intercept, slope_se = fit_loglog_slope(n_arr, mean)
    return InformativityResult(n=n_arr, m=m_arr, w1=w1, mean=mean, lower=mean - half, upper=mean + half,
                               slope=slope, intercept=intercept, slope_se=slope_se, level=level,
                               label=rule.label)
