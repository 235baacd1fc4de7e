"""Privacy loss distributions, trade-off curves and composition (docs/audit.md).

A mechanism's **privacy loss** against one neighbour is the random variable
:math:`L = \\log q_x(Z)/q_y(Z)`, :math:`Z\\sim Q(\\cdot\\mid x)` (``+∞`` on an output that
is impossible under ``y``). Its law, the privacy loss distribution (PLD), determines
everything:

* the exact privacy profile (hockey-stick divergence)
  :math:`\\delta(\\varepsilon) = E[(1 - e^{\\varepsilon - L})_+] + P(L = \\infty)`;
* the trade-off (f-DP) curve :math:`\\beta(\\alpha)` of the best test between ``x`` and
  ``y`` (:meth:`PrivacyLoss.tradeoff`);
* the PLD of ``k`` independent releases from the same data: the ``k``-fold convolution
  (the losses add).

The PLDs are held and composed by Google's ``dp_accounting`` (``dp_accounting.pld``), with
*pessimistic* discretisation: every loss is rounded **up** to the grid, so every δ read
off a PLD is at least the exact one (docs/audit.md §2).

PYPP, σ = 0 (docs/audit.md §1). Against the worst neighbour type of multiplicity ``r``
(a record of a value with ``r`` copies replaced by a new value)

.. math:: L_r = \\log\\frac{r - 1 + S}{r - 1},\\qquad S\\sim\\mathrm{BB}(m, r, \\theta + n - r),

and for ``r = 1`` (a singleton) :math:`L_1 = \\infty` with probability
:math:`T_1 = m/(m+\\theta+n-1)` and 0 otherwise. Every :math:`L_r \\ge 0` and
:math:`E[e^{-L_r}] = (\\theta+n-1)/(\\theta+n+m-1) = 1 - T_1` for every ``r``, which makes the
singleton pair the worst one for every ε ≥ 0, every number of releases ``k`` and every
point of the trade-off curve (docs/audit.md §1.3). Hence the **global** worst case of
Theorem 2's maximisation over ``r`` is the singleton PLD, and an instance with a
singleton has the same PLD; an instance without singletons is the maximum over the
multiplicities present.

σ ∈ (0, 1) has no closed form: :func:`pypp_monte_carlo_loss` builds *empirical* PLDs
from simulated replicates (an estimate, labelled "Monte Carlo"). The baselines have
their own PLDs: Laplace and Gaussian noise on two cells (exact), the smoothed histogram's
``m`` draws (exact for its worst pair), and the generic PLD of an (ε, δ)-DP mechanism
(``from_privacy_parameters``: an upper bound) for the pure-ε Dirichlet–multinomial and
the Dirichlet posterior sampling.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from dp_accounting.pld import common as pld_common
from dp_accounting.pld import pld_pmf
from dp_accounting.pld import privacy_loss_distribution as pld_lib

from . import betabinom
from .betabinom import UNIT_ROUNDOFF
from ..validation import (
    check_delta,
    check_eps,
    check_integer,
    check_release_size,
    check_multiplicities,
    check_positive,
    check_py_parameters,
    check_real,
    check_rng,
)
from .crp import crp_tables

__all__ = [
    "COMPOSITION_DISCRETIZATION",
    "EXACT_DISCRETIZATION",
    "MAX_PLD_M",
    "MAX_RELEASES",
    "PrivacyLoss",
    "calibration_losses",
    "dirichlet_multinomial_loss",
    "gaussian_histogram_loss",
    "generic_loss",
    "laplace_histogram_loss",
    "naive_composition_delta",
    "pypp_global_loss",
    "pypp_instance_loss",
    "pypp_loss_values",
    "pypp_monte_carlo_loss",
    "smoothed_histogram_loss",
]

#: Loss grid of a single exact PYPP release: at most m + 1 distinct losses, held sparsely,
#: so a grid this fine costs nothing and moves δ by at most 1e-10 (docs/audit.md §2).
EXACT_DISCRETIZATION = 1e-10
#: Loss grid of composed releases and of the baselines' PLDs: a composed δ(ε) is bounded
#: by the exact δ(ε − k·Δ) of the same k releases (each loss rounded up by < Δ).
COMPOSITION_DISCRETIZATION = 1e-4
#: Largest release size whose exact PLD is built (m + 1 loss values are held in memory).
MAX_PLD_M = 10**6
#: Largest number of releases composed (the page's slider goes to 100).
MAX_RELEASES = 1000
#: Mass of the composed PLD's tails dp_accounting may drop; pessimistic: it is added to
#: the mass at +∞, so δ only grows.
_TAIL_TRUNCATION = 1e-15
#: Absolute allowance per release for the floating-point error of δ read off a PLD (sums of
#: at most ~10^7 terms each ≤ 1, and FFT convolution): added to every positive δ.
_ABS_MARGIN = 2.0**-40
#: Largest loss grid (points) of a composed PLD before the grid is coarsened.
_MAX_GRID = 2**20
#: Grid of ε on which trade-off curves are taken as a supremum (both signs).
_TRADEOFF_EPS = np.concatenate([-np.geomspace(60.0, 1e-4, 500), [0.0], np.geomspace(1e-4, 60.0, 500)])
#: Largest number of neighbour types the Monte Carlo PLD evaluates.
MAX_MC_TYPES = 121

Members = list  # [(name, PrivacyLossDistribution)]


# ----------------------------------------------------------------------------- the object
@dataclass(frozen=True, eq=False)
class PrivacyLoss:
    """The privacy loss of one mechanism: one PLD per neighbour type, δ the maximum.

    Parameters
    ----------
    label : str
        Display name of the mechanism.
    kind : {"exact", "monte carlo", "bound"}
        ``exact``: the PLD of the worst neighbour(s), discretised pessimistically (δ ≥ the
        exact value); ``monte carlo``: empirical PLDs from simulated replicates (an
        estimate, no confidence bound); ``bound``: the generic PLD of a mechanism that
        is (ε, δ)-DP (an upper bound on the mechanism's own).
    scope : {"instance", "global"}
    note : str
        How the PLD is obtained, in a sentence, for the UI.
    build : callable(discretization) -> list of (name, PrivacyLossDistribution)
        Builds the members at a loss grid.
    single_discretization : float
        Loss grid of one release (finer for the sparse exact PYPP PLDs).
    mu_gdp : float or None
        μ of μ-GDP when the mechanism is exactly Gaussian (Dong, Roth & Su 2022).
    loss_span : float or None
        Width of the range of finite losses of one release, when known: the composition
        grid is then coarsened so that ``k`` releases need at most :data:`_MAX_GRID` points.
    """

    label: str
    kind: str
    scope: str
    note: str
    build: Callable[[float], Members] = field(repr=False)
    single_discretization: float = COMPOSITION_DISCRETIZATION
    mu_gdp: float | None = None
    loss_span: float | None = None
    _cache: dict = field(default_factory=dict, repr=False)

    # ------------------------------------------------------------------ members
    def members(self, releases: int = 1, discretization: float | None = None) -> Members:
        """The PLDs of ``releases`` independent releases, one per neighbour type.

        Parameters
        ----------
        releases : int in [1, MAX_RELEASES]
        discretization : float in [1e-12, 0.1], optional
            Loss grid; defaults to :attr:`single_discretization` for one release and to
            :data:`COMPOSITION_DISCRETIZATION` for more.
        """
        k = check_integer("releases", releases, minimum=1, maximum=MAX_RELEASES)
        if discretization is None:
            disc = self.single_discretization if k == 1 else self.composition_discretization(k)
        else:
            disc = check_real("discretization", discretization, low=1e-12, high=0.1)
        key = (k, disc)
        if key not in self._cache:
            base = self._cache.get((1, disc))
            if base is None:
                base = self.build(disc)
                self._cache[(1, disc)] = base
            if k > 1:
                self._cache[key] = [(name, pld.self_compose(k, tail_mass_truncation=_TAIL_TRUNCATION))
                                    for name, pld in base]
        return self._cache[key]

    def composition_discretization(self, releases: int) -> float:
        """Loss grid used for ``releases`` ≥ 2: :data:`COMPOSITION_DISCRETIZATION`, coarsened
        to ``k · span / 2^20`` when the losses of ``k`` releases span more than 2^20 points.
        Each composed δ(ε) is at most the exact δ(ε − k·Δ) (docs/audit.md §2)."""
        k = check_integer("releases", releases, minimum=1, maximum=MAX_RELEASES)
        if self.loss_span is None:
            return COMPOSITION_DISCRETIZATION
        return max(COMPOSITION_DISCRETIZATION, k * self.loss_span / _MAX_GRID)

    # ------------------------------------------------------------------ readings
    def delta(self, eps, releases: int = 1, discretization: float | None = None):
        """δ(ε) of ``releases`` independent releases: the maximum over neighbour types.

        Pessimistic: each loss rounded up to the grid, and the floating-point error of
        the sums added (docs/audit.md §2; see :func:`_hockey_stick`).

        Parameters
        ----------
        eps : float or array_like of float ≥ 0, shape (E,)
            ``0`` and ``inf`` allowed.

        Returns
        -------
        float or ndarray, shape (E,)
        """
        eps_arr, scalar = _check_eps_nonneg(eps)
        k = check_integer("releases", releases, minimum=1, maximum=MAX_RELEASES)
        out = np.zeros(eps_arr.size)
        for _, pld in self.members(k, discretization):
            out = np.maximum(out, _hockey_stick(pld, eps_arr, k))
        return float(out[0]) if scalar else out

    def epsilon(self, delta, releases: int = 1, discretization: float | None = None) -> float:
        """Smallest ε ≥ 0 with δ(ε) ≤ ``delta`` (``inf`` if none), from the pessimistic PLDs.

        Computed on the same rounded-up δ as :meth:`delta` (to a relative 1e-12 in ε, on
        the side of the larger ε), so ``self.delta(self.epsilon(d)) ≤ d``.
        """
        delta = check_delta(delta)
        k = check_integer("releases", releases, minimum=1, maximum=MAX_RELEASES)
        return max(_epsilon_for_delta(pld, delta, k) for _, pld in self.members(k, discretization))

    def tradeoff(self, alpha, releases: int = 1, discretization: float | None = None) -> np.ndarray:
        """Trade-off curve β(α) of the best test between ``x`` and its worst neighbour.

        For a test that decides "y" on a set of outputs, α = P_x(decide y) (type I) and
        β = P_y(decide x) (type II). Every (ε, δ(ε)) pair gives
        :math:`\\beta \\ge e^{-\\varepsilon}(1 - \\alpha - \\delta(\\varepsilon))` (ε of either
        sign), and the supremum over ε is the curve (docs/audit.md §3). It is taken over a
        fixed grid of 1001 values of ε with the pessimistic δ, so the curve returned is
        never above the exact one; the minimum over neighbour types is taken.

        Parameters
        ----------
        alpha : array_like of float in [0, 1], shape (A,)

        Returns
        -------
        ndarray, shape (A,), values in [0, 1 − α]
        """
        a = np.atleast_1d(np.asarray(alpha, dtype=float))
        if a.ndim != 1 or not np.all((a >= 0) & (a <= 1)):
            raise ValueError("alpha must be a 1-D array of values in [0, 1]")
        k = check_integer("releases", releases, minimum=1, maximum=MAX_RELEASES)
        curve = np.full(a.size, np.inf)
        for _, pld in self.members(k, discretization):
            d = _hockey_stick(pld, _TRADEOFF_EPS, k)
            with np.errstate(over="ignore", invalid="ignore"):
                cand = np.exp(-_TRADEOFF_EPS)[None, :] * (1.0 - a[:, None] - d[None, :])
            curve = np.minimum(curve, np.clip(np.nanmax(cand, axis=1), 0.0, None))
        return np.minimum(curve, 1.0 - a)


def _pmf_arrays(pld) -> tuple[np.ndarray, np.ndarray, float]:
    """(losses ascending, probabilities, mass at +∞) of the x-side PMF of a dp_accounting PLD.

    dp_accounting has no public accessor for the PMF; this reads the attributes of
    ``DensePLDPmf`` / ``SparsePLDPmf`` of dp-accounting 0.6 (pinned in pyproject.toml), so
    that δ(ε) on a whole grid is one vectorised pass instead of its Python loop.
    """
    pmf = pld._pmf_remove   # noqa: SLF001
    disc = pmf._discretization   # noqa: SLF001
    if isinstance(pmf, pld_pmf.DensePLDPmf):
        probs = np.asarray(pmf._probs, dtype=float)   # noqa: SLF001
        losses = (np.arange(probs.size) + pmf._lower_loss) * disc   # noqa: SLF001
    else:
        keys = np.array(sorted(pmf._loss_probs), dtype=np.int64)   # noqa: SLF001
        probs = np.array([pmf._loss_probs[int(i)] for i in keys], dtype=float)   # noqa: SLF001
        losses = keys * disc
    return losses, probs, float(pmf._infinity_mass)   # noqa: SLF001


#: A PMF with at most this many points is summed term by term (no cancellation, δ
#: accurate in relative terms down to the smallest floats); larger ones by suffix sums.
_TERMWISE_MAX = 20_000


def _hockey_stick(pld, eps_arr: np.ndarray, releases: int) -> np.ndarray:
    """δ(ε) = P(L = ∞) + Σ_{ℓ > ε} p_ℓ (1 − e^{ε − ℓ}) on a grid of ε (any sign), rounded up.

    A small PMF (one exact PYPP release) is summed term by term with ``−expm1(ε − ℓ)``:
    every term is ≥ 0, so the relative error is at most 8u per term and δ is rounded up
    by that, keeping tiny δ accurate. A large (composed) PMF uses suffix sums of p and
    p·e^{−ℓ} for every ε at once and is raised by an absolute allowance for their
    cancellation and for the FFT convolutions (2^-40 per release): composed δ below
    about 10^-10 are not resolved and show as that allowance.
    """
    losses, probs, inf_mass = _pmf_arrays(pld)
    probs = np.maximum(probs, 0.0)     # FFT round-off can leave tiny negative entries
    eps_arr = np.asarray(eps_arr, dtype=float)
    if probs.size <= _TERMWISE_MAX:
        delta = np.empty(eps_arr.size)
        per = max(1, (1 << 21) // max(1, probs.size))
        for lo in range(0, eps_arr.size, per):
            e = eps_arr[lo:lo + per, None]
            with np.errstate(over="ignore", invalid="ignore"):
                terms = np.where(losses[None, :] > e, -np.expm1(e - losses[None, :]), 0.0)
            delta[lo:lo + per] = terms @ probs
        # the mass at +∞ is already rounded up by its builder; the sum gets its own bound
        delta = inf_mass + np.where(np.isposinf(eps_arr), 0.0, delta) * (1 + 8 * UNIT_ROUNDOFF * (probs.size + 16))
        return np.minimum(1.0, delta)
    with np.errstate(over="ignore", invalid="ignore"):
        upper = np.concatenate([np.cumsum(probs[::-1])[::-1], [0.0]])
        lower = np.concatenate([np.cumsum((probs * np.exp(-losses))[::-1])[::-1], [0.0]])
        first = np.searchsorted(losses, eps_arr, side="right")    # losses > ε start here
        delta = inf_mass + upper[first] - np.exp(eps_arr) * lower[first]
    delta = np.where(np.isposinf(eps_arr), inf_mass, delta)
    delta = np.where(np.isfinite(delta), delta, inf_mass)
    margin = 8 * UNIT_ROUNDOFF * (probs.size + 16) + releases * _ABS_MARGIN
    return np.where(delta > 0, np.minimum(1.0, delta * (1 + 1e-12) + margin), 0.0)


def _epsilon_for_delta(pld, target: float, releases: int) -> float:
    """Smallest ε ≥ 0 with the rounded-up δ(ε) of :func:`_hockey_stick` ≤ ``target`` (a
    bisection on the monotone δ; ``inf`` when even ε = ∞ leaves δ above the target)."""
    if _hockey_stick(pld, np.array([np.inf]), releases)[0] > target:
        return math.inf
    if _hockey_stick(pld, np.array([0.0]), releases)[0] <= target:
        return 0.0
    losses, _, _ = _pmf_arrays(pld)
    lo, hi = 0.0, float(losses[-1]) + 1.0
    while _hockey_stick(pld, np.array([hi]), releases)[0] > target:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        grid = np.linspace(lo, hi, 34)[1:-1]
        ok = _hockey_stick(pld, grid, releases) <= target
        j = int(np.argmax(ok)) if ok.any() else grid.size
        lo = float(grid[j - 1]) if j > 0 else lo
        hi = float(grid[j]) if j < grid.size else hi
        if hi - lo <= 1e-12 * max(1.0, hi):
            break
    return hi


def _check_eps_nonneg(eps):
    return check_eps(eps, allow_zero=True)


def naive_composition_delta(loss: PrivacyLoss, eps, releases: int):
    """Naive composition: ``k`` releases each (ε/k, δ₁(ε/k)) give (ε, k·δ₁(ε/k)).

    The textbook bound (Dwork et al. 2006) that the PLD composition improves on.

    Returns
    -------
    float or ndarray, same shape as ``eps`` (capped at 1)
    """
    eps_arr, scalar = _check_eps_nonneg(eps)
    k = check_integer("releases", releases, minimum=1, maximum=MAX_RELEASES)
    out = np.minimum(1.0, k * np.asarray(loss.delta(eps_arr / k), dtype=float))
    return float(out[0]) if scalar else out


# ----------------------------------------------------------------------------- PYPP, σ = 0
def _singleton_mass(m: int, N: float) -> float:
    """T₁ = m/(m + N − 1) rounded up (four roundings)."""
    return min(1.0, m / (m + (N - 1.0)) * (1.0 + 8 * UNIT_ROUNDOFF))


def pypp_loss_values(r, n, theta, m):
    """The exact privacy loss of PYPP (σ = 0) against the new-value neighbour of multiplicity ``r``.

    .. math:: L_r = \\log\\frac{r-1+S}{r-1},\\quad S\\sim\\mathrm{BB}(m, r, \\theta+n-r)\\quad (r \\ge 2),

    and for ``r = 1``: :math:`+\\infty` with probability :math:`T_1 = m/(m+\\theta+n-1)`,
    0 otherwise (docs/audit.md §1).

    Parameters
    ----------
    r : int in [1, n]
    n : int ≥ 1
    theta : float > 0
    m : int in [1, MAX_PLD_M]

    Returns
    -------
    losses : ndarray, shape (m + 1,) or (1,)
        ``log1p(s/(r − 1))`` for s = 0..m (or ``[0.0]`` for r = 1).
    probs : ndarray, same shape
        Probabilities, each rounded **up** by the proven error bound of the log-pmf
        (:func:`core.privacy.betabinom.log_pmf`), so they bound the exact ones from above.
    infinity_mass : float
        T₁ rounded up for r = 1, else 0.
    """
    n = check_integer("n", n, minimum=1, maximum=10**12)
    r = check_integer("r", r, minimum=1, maximum=n)
    _, theta, _ = check_py_parameters(0.0, theta)
    m = check_integer("m", m, minimum=1, maximum=MAX_PLD_M)
    N = theta + n
    if r == 1:
        t1 = _singleton_mass(m, N)
        return np.zeros(1), np.array([1.0 - m / (m + (N - 1.0)) * (1.0 - 8 * UNIT_ROUNDOFF)]), t1
    s = np.arange(m + 1, dtype=float)
    # exact anchors every 64 terms and the one-step ratio in between (core.privacy.betabinom)
    log_p, err = betabinom._window(np.array([float(m)]), np.array([float(r)]), np.array([N - r]),
                                   np.array([0.0]), m + 1)
    probs = np.exp(log_p[0] + err[0])
    return np.log1p(s / (r - 1.0)), probs, 0.0


def _sparse_pld(losses, probs, infinity_mass: float, disc: float):
    """A pessimistic dp_accounting PLD (x-side, used for both directions) from loss values.

    Each loss ℓ ≠ 0 is moved to the grid point strictly above it (index ⌊ℓ/Δ + 8u|ℓ/Δ|⌋ + 1,
    which also covers the rounding of ℓ/Δ); ℓ = 0 stays at 0. The rounding can only raise δ.
    """
    losses = np.asarray(losses, dtype=float)
    probs = np.asarray(probs, dtype=float)
    keep = probs > 0
    losses, probs = losses[keep], probs[keep]
    x = losses / disc
    idx = np.where(losses == 0, 0.0, np.floor(x + 8 * UNIT_ROUNDOFF * np.abs(x)) + 1.0).astype(np.int64)
    order = np.argsort(idx, kind="stable")
    idx, probs = idx[order], probs[order]
    uniq, start = np.unique(idx, return_index=True)
    sums = np.add.reduceat(probs, start) if probs.size else np.zeros(0)
    table = dict(zip(uniq.tolist(), sums.tolist())) or {0: 0.0}
    if disc < 1e-6:
        # a very fine grid holds one release only: keep it sparse whatever its size (a dense
        # array over the loss range would not fit in memory); composition uses a coarser grid
        pmf = pld_pmf.SparsePLDPmf(table, disc, float(infinity_mass), True)
    else:
        pmf = pld_pmf.create_pmf(table, disc, float(infinity_mass), True)
    return pld_lib.PrivacyLossDistribution(pmf)


def _pypp_member(r: int, n: int, theta: float, m: int, disc: float):
    losses, probs, inf_mass = pypp_loss_values(r, n, theta, m)
    return _sparse_pld(losses, probs, inf_mass, disc)


def pypp_instance_loss(multiplicities, theta, m) -> PrivacyLoss:
    """Exact PLD of the PYPP release (σ = 0) at the data ``x`` (instance level).

    With a singleton in ``x`` the singleton's PLD (∞ w.p. T₁, else 0) dominates every
    other neighbour for every ε ≥ 0, every number of releases and the whole trade-off
    curve (docs/audit.md §1.3), so it is the only member. Without singletons the members
    are the PLDs :math:`L_r` of every multiplicity ``r`` present.

    Parameters
    ----------
    multiplicities : array_like of int ≥ 1, shape (k,)
    theta : float > 0
    m : int in [1, MAX_PLD_M]

    Returns
    -------
    PrivacyLoss
        ``kind="exact"``, ``scope="instance"``; one release is held on the loss grid
        :data:`EXACT_DISCRETIZATION`.
    """
    counts = check_multiplicities(multiplicities)
    _, theta, _ = check_py_parameters(0.0, theta, counts.size)
    m = check_integer("m", m, minimum=1, maximum=MAX_PLD_M)
    n = int(counts.sum())
    values = np.unique(counts)
    if values[0] == 1:
        rows = [1]
        note = ("x has a singleton: its PLD (∞ with probability m/(m+θ+n−1), else 0) dominates "
                "every other neighbour")
    else:
        rows = [int(r) for r in values]
        note = f"maximum over the {len(rows)} multiplicities present (no singleton)"

    def build(disc):
        return [(f"r = {r}", _pypp_member(r, n, theta, m, disc)) for r in rows]

    span = math.log1p(m / (rows[0] - 1.0)) if rows[0] >= 2 else 0.0
    return PrivacyLoss("PYPP (σ = 0)", "exact", "instance", note, build, EXACT_DISCRETIZATION, loss_span=span)


def pypp_global_loss(n, theta, m) -> PrivacyLoss:
    """Exact PLD of the global worst case of PYPP (σ = 0), Theorem 2's maximisation over r.

    Every :math:`L_r \\ge 0` has :math:`E[e^{-L_r}] = 1 - T_1`, so the hockey-stick
    divergence of any ``r`` (and of ``k`` releases) is at most that of the singleton,
    :math:`1-(1-T_1)^k` for every ε ≥ 0 (docs/audit.md §1.3): the maximum over
    r = 1..n is attained at r = 1, for every ε and k.

    Parameters
    ----------
    n : int ≥ 1
    theta : float > 0
    m : int in [1, MAX_PLD_M]
    """
    n = check_integer("n", n, minimum=1, maximum=10**12)
    _, theta, _ = check_py_parameters(0.0, theta)
    m = check_integer("m", m, minimum=1, maximum=MAX_PLD_M)

    def build(disc):
        return [("r = 1 (worst over r = 1..n)", _pypp_member(1, n, theta, m, disc))]

    return PrivacyLoss("PYPP (σ = 0)", "exact", "global",
                       "global worst case over every dataset of size n: the singleton neighbour (Theorem 2)",
                       build, EXACT_DISCRETIZATION, loss_span=0.0)


# ----------------------------------------------------------------------------- PYPP, σ ∈ (0, 1)
def pypp_monte_carlo_loss(multiplicities, sigma, theta, m, *, n_mc: int = 20000,
                          rng: np.random.Generator, max_types: int = 10) -> PrivacyLoss:
    """Empirical PLDs of the PY release (σ ∈ (0, 1)) from simulated replicates (an estimate).

    Replicates of :math:`(S_1,\\dots,S_k,K)` are drawn with the exact sampler collapsed to
    one representative atom per multiplicity value (two when shared) and the log-ratios
    (a)–(d) of docs/mathematics.md §3 evaluated for every neighbour type ``r_l → r_t`` or
    ``r_l → new`` over the ``max_types`` smallest multiplicities; each type's empirical
    PLD has mass 1/N at each replicate's loss (+∞ for a singular one). Only the (at most
    four) types whose empirical δ(ε) is the largest somewhere on a grid of ε are kept as
    members. δ(ε) and its composition are **estimates** (no confidence bound): labelled
    "Monte Carlo".

    Parameters
    ----------
    multiplicities : array_like of int ≥ 1, shape (k,)
    sigma : float in (0, 1)
    theta : float > −σ
    m : int ≥ 1
    n_mc : int in [100, 10^6]
    rng : numpy.random.Generator
    max_types : int in [1, 10]
        Number of smallest multiplicities used as replaced and as target values.
    """

    counts = check_multiplicities(multiplicities)
    sigma, theta, z = check_py_parameters(sigma, theta, counts.size)
    if not 0 < sigma < 1:
        raise ValueError(f"sigma must be in (0, 1) for the Monte Carlo PLD, got {sigma!r}")
    m = check_release_size(m)
    n_mc = check_integer("n_mc", n_mc, minimum=100, maximum=10**6)
    rng = check_rng(rng)
    max_types = check_integer("max_types", max_types, minimum=1, maximum=10)
    k = counts.size
    values, how_many = np.unique(counts, return_counts=True)
    values, how_many = values[:max_types], how_many[:max_types]
    D = values.size
    # representatives: A_d for each value, B_d (a second atom) where the value is shared
    has_b = how_many >= 2
    rep = np.concatenate([values, values[has_b]]).astype(float)
    b_of = np.full(D, -1)
    b_of[has_b] = D + np.arange(int(has_b.sum()))
    rest = float(np.sum(counts - sigma) - np.sum(rep - sigma))
    alpha = np.concatenate([rep - sigma, [max(rest, 0.0), theta + k * sigma]])
    S = np.empty((rep.size, n_mc))
    K = np.empty(n_mc)
    for lo in range(0, n_mc, 5000):
        size = min(5000, n_mc - lo)
        draws = rng.multinomial(m, rng.dirichlet(np.maximum(alpha, 1e-300), size=size))
        S[:, lo:lo + size] = draws[:, :rep.size].T
        K[lo:lo + size] = crp_tables(draws[:, -1], sigma, theta + k * sigma, rng)
    with np.errstate(divide="ignore"):
        new_factor = math.log(theta + k * sigma) - np.log(theta + (k + K) * sigma)
        singleton_factor = (np.log(theta + (k + K - 1) * sigma) - math.log(theta + (k - 1) * sigma)
                            if k >= 2 else np.zeros(n_mc))
    types: list[tuple[str, np.ndarray]] = []
    for d in range(D):
        r_l = int(values[d])
        if r_l == 1:
            singular = S[d] >= 1
            types.append(("r_l = 1 → new", np.where(singular, np.inf, 0.0)))
            left = np.where(singular, np.inf, singleton_factor)
        else:
            left = np.log(r_l + S[d] - 1 - sigma) - math.log(r_l - 1 - sigma)
            types.append((f"r_l = {r_l} → new", left + new_factor))
        for e in range(D):
            t = e if e != d else b_of[d]
            if t < 0:
                continue
            right = math.log(values[e] - sigma) - np.log(values[e] + S[t] - sigma)
            types.append((f"r_l = {r_l} → r_t = {int(values[e])}", left + right))
    types = _dominant_types(types[:MAX_MC_TYPES], n_mc)
    finite = np.concatenate([t[np.isfinite(t)] for _, t in types])
    span = float(finite.max() - finite.min()) if finite.size else 0.0

    def build(disc):
        out = []
        for name, sample in types:
            finite = np.isfinite(sample)
            inf_mass = float(np.count_nonzero(~finite)) / n_mc
            losses, freq = np.unique(sample[finite], return_counts=True)
            out.append((name, _sparse_pld(losses, freq / n_mc, inf_mass, max(disc, 1e-6))))
        return out

    return PrivacyLoss(f"PYPP (σ = {sigma:g}, Monte Carlo)", "monte carlo", "instance",
                       f"Monte Carlo estimate from {n_mc:,} replicates; the {len(types)} worst neighbour type(s) "
                       "(no confidence bound)", build, COMPOSITION_DISCRETIZATION, loss_span=span)


def _dominant_types(types: list, n_mc: int, keep: int = 4) -> list:
    """The neighbour types whose empirical δ(ε) is the largest somewhere on a grid of ε.

    Composing every type would cost one convolution each; the others never reach the
    maximum of a single release on the grid and are left out (the result is a Monte Carlo
    estimate either way). At most ``keep`` types, by how often they attain the maximum.
    """
    grid = np.concatenate([[0.0], np.geomspace(1e-3, 50.0, 200)])
    curves = []
    for _, sample in types:
        inf_mass = np.count_nonzero(np.isposinf(sample)) / n_mc
        finite = np.sort(sample[np.isfinite(sample)])
        upper = np.concatenate([np.cumsum(np.ones(finite.size)[::-1])[::-1], [0.0]]) / n_mc
        lower = np.concatenate([np.cumsum(np.exp(-finite)[::-1])[::-1], [0.0]]) / n_mc
        first = np.searchsorted(finite, grid, side="right")
        curves.append(inf_mass + upper[first] - np.exp(grid) * lower[first])
    curves = np.array(curves)
    wins = np.bincount(np.argmax(curves, axis=0), minlength=len(types))
    order = np.argsort(-wins, kind="stable")
    return [types[i] for i in order[:keep] if wins[i] > 0]


# ----------------------------------------------------------------------------- baselines
def laplace_histogram_loss(eps) -> PrivacyLoss:
    """Exact PLD of the Laplace-perturbed histogram (docs/mathematics.md §4.1).

    Replacing one record lowers one count and raises another by one; each noisy count is
    a Laplace mechanism with sensitivity 1 and scale 2/ε, so the PLD is the composition of
    two such (dp_accounting's ``from_laplace_mechanism``): pure ε-DP.
    """
    eps = check_positive("eps", eps)
    scale = 2.0 / eps

    def build(disc):
        one = pld_lib.from_laplace_mechanism(scale, sensitivity=1.0, value_discretization_interval=disc)
        return [("two cells change by one", one.compose(one))]

    return PrivacyLoss("Perturbed histogram (Laplace)", "exact", "global",
                       f"two Laplace(2/ε) counts, each with sensitivity 1 (scale {scale:.6g})", build)


def gaussian_histogram_loss(sd) -> PrivacyLoss:
    """Exact PLD of the Gaussian-perturbed histogram (docs/mathematics.md §4.2): L2 sensitivity √2.

    The mechanism is exactly μ-GDP with μ = √2/s (Dong, Roth & Su 2022).
    """
    sd = check_positive("sd", sd)
    sens = math.sqrt(2.0)

    def build(disc):
        return [("two cells change by one", pld_lib.from_gaussian_mechanism(
            sd, sensitivity=sens, value_discretization_interval=disc))]

    return PrivacyLoss("Perturbed histogram (Gaussian)", "exact", "global",
                       f"Gaussian noise s = {sd:.6g} on the counts, L2 sensitivity √2", build,
                       mu_gdp=sens / sd)


def smoothed_histogram_loss(n, cells, m, lam) -> PrivacyLoss:
    """PLD of ``m`` iid draws from the smoothed histogram (docs/mathematics.md §4.3), worst pair.

    The worst neighbours move a record between two cells that are otherwise empty: one
    draw lands in cell a with probability (1−λ)/n + λ/k_B under x and λ/k_B under y
    (b symmetrically); the PLD of one draw is composed ``m`` times.
    """
    n = check_integer("n", n, minimum=1)
    cells = check_integer("cells", cells, minimum=1)
    m = check_release_size(m)
    lam = check_real("lam", lam, low=0.0, high=1.0, low_open=True)
    if cells == 1:
        def build(disc):
            return [("one cell: no loss", pld_lib.identity(value_discretization_interval=disc))]
    else:
        heavy = (1.0 - lam) / n + lam / cells
        light = lam / cells
        rest = 1.0 - heavy - light
        upper = {"a": math.log(heavy), "b": math.log(light)}
        lower = {"a": math.log(light), "b": math.log(heavy)}
        if rest > 0:
            upper["rest"] = lower["rest"] = math.log(rest)

        def build(disc):
            one = pld_lib.from_two_probability_mass_functions(lower, upper, value_discretization_interval=disc)
            return [("record moves between two empty cells", one.self_compose(m) if m > 1 else one)]

    return PrivacyLoss("Smoothed histogram", "exact", "global",
                       f"{m:,} draws, λ = {lam:.6g}, k_B = {cells:,}; worst pair: two empty cells", build)


def generic_loss(label: str, eps, delta: float = 0.0) -> PrivacyLoss:
    """The generic pessimistic PLD of an (ε, δ)-DP mechanism (``from_privacy_parameters``).

    +∞ with probability δ, ±ε otherwise, with the weights of randomized response: every
    (ε, δ)-DP mechanism's PLD is dominated by it, so its δ(ε′), compositions and trade-off
    curve are **upper bounds** for the mechanism (kind ``"bound"``).
    """
    eps = check_positive("eps", eps)
    delta = float(delta)
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    params = pld_common.DifferentialPrivacyParameters(eps, delta)

    def build(disc):
        return [("(ε, δ)-DP", pld_lib.from_privacy_parameters(params, value_discretization_interval=disc))]

    what = "pure ε-DP" if delta == 0 else "(ε, δ)-DP"
    return PrivacyLoss(label, "bound", "global", f"generic PLD of a {what} mechanism (upper bound)", build)


def dirichlet_multinomial_loss(eps) -> PrivacyLoss:
    """The Dirichlet–multinomial baseline (pure ε-DP, docs/mathematics.md §4.4): generic pure-ε PLD."""
    return generic_loss("Dirichlet–multinomial", eps, 0.0)


def calibration_losses(calibration, multiplicities=None) -> dict[str, PrivacyLoss]:
    """PLDs of every mechanism of a :class:`core.evaluation.compare.Calibration`, keyed by its name.

    PYPP: the exact global PLD (:func:`pypp_global_loss`; the comparison uses its global
    guarantee). Laplace, Gaussian, smoothed histogram: exact. Dirichlet–multinomial and
    Dirichlet posterior sampling: the generic PLD of their stated (ε, δ) (a bound). The
    bootstrap has no privacy and no PLD (left out).
    """
    out: dict[str, PrivacyLoss] = {}
    n, m, d = calibration.n, calibration.m, calibration.d
    for mech in calibration.mechanisms:
        g = mech.guarantee
        if mech.name == "pypp":
            out[mech.name] = pypp_global_loss(n, calibration.theta, m)
        elif mech.name == "laplace_histogram":
            out[mech.name] = laplace_histogram_loss(mech.eps)
        elif mech.name == "gaussian_histogram":
            out[mech.name] = gaussian_histogram_loss(mech.sigma)
        elif mech.name == "smoothed_histogram":
            out[mech.name] = smoothed_histogram_loss(n, mech.cells(d), m, mech.smoothing(n, m, d))
        elif g.kind != "none":
            out[mech.name] = generic_loss(mech.label, g.eps, g.delta)
    return out
