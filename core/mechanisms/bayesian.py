"""The Bayesian family: Dirichlet–multinomial histogram, Dirichlet posterior sampling, the
truncated-Dirichlet posterior and the pseudo-posterior mechanisms (docs/bayesian_family.md;
seeds 001, 003 and 004).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from ..formatting import format_upper
from ..validation import (
    check_counts,
    check_delta,
    check_finite_eps,
    check_integer,
    check_positive,
    check_real,
)
from ..privacy import Guarantee
from .base import HistogramMechanism, Knob
from .truncated_dirichlet import TruncatedDirichlet
from ..privacy import (
    dirichlet_multinomial_alpha,
    dirichlet_sampling_alpha,
    dirichlet_sampling_epsilon,
    truncated_dirichlet_epsilon,
    truncated_dirichlet_p_min,
)


class DirichletMultinomialHistogram(HistogramMechanism):
    """Dirichlet–multinomial synthesiser (Machanavajjhala et al. 2008; docs/mathematics.md §4.4).

    :math:`p\\sim\\mathrm{Dir}(C+\\alpha)`, then ``m`` draws from ``p`` (the counts are
    :math:`\\mathrm{DirMult}(m, C+\\alpha)`); this is PYPP with σ = −α over the cells.

    * ``alpha_rule="global"`` (default): α = m/(e^ε − 1) in every cell, globally pure ε-DP.
    * ``alpha_rule="data-dependent"``: the thesis's
      :math:`\\alpha_j=\\max(\\alpha_0, m/(e^{\\varepsilon}-1)-C_j)`. The prior depends on the
      confidential counts, so this is **not DP**; it is labelled so.

    Parameters
    ----------
    eps : float in (0, ∞)
    bins : int ≥ 1
    levels : sequence of (None or int ≥ 1), optional
        Categorical axes of the product domain (:class:`~core.mechanisms.HistogramMechanism`).
    alpha_rule : {"global", "data-dependent"}
    alpha_floor : float > 0
        :math:`\\alpha_0` of the data-dependent rule (thesis: 1e-4).
    """

    name = "dirichlet_multinomial"
    label = "Dirichlet–multinomial"

    def __init__(self, eps, bins, *, alpha_rule: str = "global", alpha_floor: float = 1e-4, levels=None):
        super().__init__(bins, levels)
        self.eps = check_finite_eps(eps)
        if alpha_rule not in ("global", "data-dependent"):
            raise ValueError(f"alpha_rule must be 'global' or 'data-dependent', got {alpha_rule!r}")
        self.alpha_rule = alpha_rule
        self.alpha_floor = check_positive("alpha_floor", alpha_floor)
        if alpha_rule == "data-dependent":
            self.name = "dirichlet_multinomial_data_dependent"
            self.label = "Dirichlet–multinomial, data-dependent α (not DP)"

    @property
    def guarantee(self) -> Guarantee:
        if self.alpha_rule == "data-dependent":
            return Guarantee("none", "none", math.inf, 1.0,
                             "not DP: the prior α_j = max(α_0, m/(e^ε − 1) − C_j) depends on the data")
        return Guarantee("pure", "global", self.eps, 0.0,
                         "Dirichlet–multinomial with α = m/(e^ε − 1); α depends on m")

    def alpha(self, m) -> float:
        """The global prior weight per cell for ``m`` draws."""
        return dirichlet_multinomial_alpha(self.eps, m)

    def knobs(self, n, m, d: int = 1):
        if self.alpha_rule == "data-dependent":
            return [Knob("alpha_floor", self.alpha_floor,
                         f"α_j = max(α_0, m/(e^ε − 1) − C_j) with m/(e^ε − 1) = {self.alpha(m):.6g}: "
                         "thesis rule, NOT differentially private (α depends on the counts)")]
        return [Knob("alpha", self.alpha(m),
                     "α = m/(e^ε − 1) per cell: global ε-DP iff m ≤ (e^ε − 1)α "
                     "(worst case: a singleton cell, docs/mathematics.md §3.3)")]

    def cell_probabilities(self, counts, m, runs, rng):
        alpha = self.alpha(m)
        if self.alpha_rule == "data-dependent":
            prior = np.maximum(self.alpha_floor, alpha - counts)
        else:
            prior = np.full(counts.size, alpha)
        return rng.dirichlet(counts + prior, size=runs)


class DirichletPosteriorSampling(HistogramMechanism):
    """Dirichlet posterior sampling (seed 003; docs/mathematics.md §4.5).

    Release one :math:`p\\sim\\mathrm{Dir}(C+\\alpha)`; any number ``m`` of draws from
    ``p`` is post-processing. α is the smallest symmetric prior with
    ``dirichlet_sampling_epsilon(α, δ) ≤ ε`` (truncated CDP with Δ₂² = 2, Δ∞ = 1), unless
    given.

    Parameters
    ----------
    eps : float in (0, ∞)
    delta : float in (0, 1)
    bins : int ≥ 1
    levels : sequence of (None or int ≥ 1), optional
        Categorical axes of the product domain (:class:`~core.mechanisms.HistogramMechanism`).
    alpha : float > 0, optional
        A fixed prior weight; the stated ε is then ``dirichlet_sampling_epsilon(alpha, delta)``.
    """

    name = "dirichlet_posterior_sampling"
    label = "Dirichlet posterior sampling"

    def __init__(self, eps, delta, bins, *, alpha=None, levels=None):
        super().__init__(bins, levels)
        self.delta = check_delta(delta)
        if alpha is None:
            self.target_eps = check_finite_eps(eps)
            self.alpha = dirichlet_sampling_alpha(self.target_eps, self.delta)
        else:
            self.target_eps = None if eps is None else check_finite_eps(eps)
            self.alpha = check_positive("alpha", alpha)
        self.eps = dirichlet_sampling_epsilon(self.alpha, self.delta)

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee("approximate", "global", self.eps, self.delta,
                         "one Dirichlet posterior draw, truncated CDP (seed 003, Thm 2); any m")

    def knobs(self, n, m, d: int = 1):
        return [Knob("alpha", self.alpha,
                     "smallest symmetric α with min over γ, λ of ρ(γ)λ + log(1/δ)/(λ − 1) ≤ ε, "
                     f"ρ(γ) = ψ′(α − γ) (Δ₂² = 2, Δ∞ = 1); achieved ε = {format_upper(self.eps, 6)}; "
                     "m draws are post-processing")]

    def cell_probabilities(self, counts, m, runs, rng):
        return rng.dirichlet(counts + self.alpha, size=runs)


class TruncatedDirichletPosteriorSampling(HistogramMechanism):
    """Posterior sampling with a truncated Dirichlet prior (seed 001, §5; docs/bayesian_family.md §1).

    The prior is :math:`\\mathrm{Dir}(\\alpha_0)` restricted to
    :math:`\\{p : p_j \\ge p_{\\min}\\ \\forall j\\}`; one posterior draw
    :math:`p \\sim \\mathrm{Dir}(C+\\alpha_0)` restricted to the same set is released (drawn
    exactly by :class:`TruncatedDirichlet`), and the ``m`` synthetic points are draws from
    ``p`` (post-processing). Pure ε-DP, global, any m, with
    :math:`p_{\\min} = 1/(k_B - 1 + e^{\\varepsilon/2})` (:func:`truncated_dirichlet_p_min`).

    Parameters
    ----------
    eps : float in (0, 1400]
    bins : int ≥ 1
    levels : sequence of (None or int ≥ 1), optional
        Categorical axes of the product domain (:class:`~core.mechanisms.HistogramMechanism`).
    prior : int in [1, 10^6]
        Symmetric Dirichlet weight :math:`\\alpha_0` (1: uniform on the truncated simplex). An
        integer, so that every exponent :math:`C_j+\\alpha_0-1` is an integer and the exact
        sampler needs no fractional envelope (whose acceptance decays with the number of cells).
    """

    name = "truncated_dirichlet_posterior"
    label = "Truncated-Dirichlet posterior sampling"

    def __init__(self, eps, bins, *, prior: float = 1.0, levels=None):
        super().__init__(bins, levels)
        self.eps = check_real("eps", eps, low=0.0, high=1400.0, low_open=True)
        self.prior = float(check_integer("prior", prior, minimum=1, maximum=10**6))

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee("pure", "global", self.eps, 0.0,
                         "one exact draw from the truncated Dirichlet posterior, "
                         "ε = 2 log((1 − (k_B − 1)p_min)/p_min) (seed 001); any m")

    def p_min(self, d: int = 1) -> float:
        """The truncation for ``d`` columns (:meth:`cells` cells)."""
        return truncated_dirichlet_p_min(self.eps, self.cells(d))

    def knobs(self, n, m, d: int = 1):
        cells = self.cells(d)
        p_min = self.p_min(d)
        achieved = truncated_dirichlet_epsilon(p_min, cells)
        return [Knob("p_min", p_min,
                     f"p_min = 1/(k_B − 1 + e^(ε/2)) with k_B = {cells}: the posterior density ratio of "
                     f"neighbours is at most ((1 − (k_B − 1)p_min)/p_min)², achieved ε = {format_upper(achieved, 6)} "
                     "(the seed's 2·ln(1/p_min) is looser); exact sampler, m draws are post-processing")]

    def cell_probabilities(self, counts, m, runs, rng):
        p_min = truncated_dirichlet_p_min(self.eps, counts.size)
        return TruncatedDirichlet(counts + self.prior, np.full(counts.size, p_min)).sample(runs, rng)


@dataclass(frozen=True)
class PseudoPosteriorWeights:
    """The record weights of the pseudo-posterior mechanism for one dataset (seed 004).

    Records of the same cell are exchangeable, so everything is per cell (shape (k_B,);
    empty cells have weight 0, bound ``nan`` and truncation 0).

    Attributes
    ----------
    lipschitz : ndarray
        :math:`L_j = -\\log q_j`, :math:`q_j` the τ-quantile of :math:`p_j` under the
        unweighted posterior: the record's log-likelihood bound on the seed's truncated
        parameter region.
    weights : ndarray in [0, 1]
        :math:`\\alpha_j`: the inverse-proportional weight rounded down so that the weighted
        count :math:`\\alpha_j C_j` is an integer (rounding down only lowers Δ_α).
    lower : ndarray
        Truncation of the released draw, :math:`t_j = e^{-\\Delta_\\alpha/\\alpha_j}`, where
        every observed record's weighted log-likelihood is within :math:`\\Delta_\\alpha`.
    delta_alpha : float
        :math:`\\Delta_\\alpha = \\max_j \\sup_p \\alpha_j|\\log p_j|` over the truncated region.
    eps_local : float
        :math:`2\\Delta_\\alpha` (seed 004, Theorem 2), per posterior draw.
    delta_unweighted : float
        :math:`\\max_j L_j`, the unweighted posterior's local bound (weights all 1).
    """

    lipschitz: np.ndarray
    weights: np.ndarray
    lower: np.ndarray
    delta_alpha: float
    eps_local: float
    delta_unweighted: float


class PseudoPosteriorMechanism(HistogramMechanism):
    """Pseudo-posterior mechanism for the histogram model (seed 004; docs/bayesian_family.md §2).

    Each record gets a weight :math:`\\alpha_i\\in[0,1]` inversely proportional to its
    Lipschitz bound :math:`L_i` (the largest :math:`|\\log p_{c(i)}|` over the parameter
    region the unweighted posterior occupies, :math:`p_j \\ge q_j`, :math:`q_j` its
    τ-quantile): :math:`\\alpha_i = \\min(1, \\Delta_\\alpha/L_i)` (``weighting="vector"``),
    or one scalar :math:`\\alpha = \\min(1, \\Delta_\\alpha/\\max_i L_i)` for every record
    (``"scalar"``: the exponential mechanism with the log-likelihood as utility, as the
    seed compares them); in both, each cell's weight is rounded down so that its weighted
    count is an integer (exact sampling with many cells; rounding down only lowers Δ_α). The weighted posterior is conjugate,
    :math:`\\mathrm{Dir}(\\beta + W)` with weighted counts :math:`W_j=\\sum_{i\\in j}\\alpha_i`;
    one draw, restricted to :math:`\\{p_j \\ge e^{-\\Delta_\\alpha/\\alpha_j}\\}` (the seed's
    truncation of the draws whose weighted log-likelihood exceeds the bound) and sampled
    exactly, is released, and the ``m`` points are draws from it.

    The guarantee is **local**: :math:`\\Delta_\\alpha` is computed from the observed
    records (and the weights themselves depend on the data), so ε = 2Δ_α is the seed's
    local statement, contracting to a global guarantee only as n → ∞. It is never reported
    as meeting a target. With Δ_α = ε/2, ``eps`` is that local ε.

    Parameters
    ----------
    eps : float in (0, 1400]
        Local ε = 2Δ_α.
    bins : int ≥ 1
    levels : sequence of (None or int ≥ 1), optional
        Categorical axes of the product domain (:class:`~core.mechanisms.HistogramMechanism`).
    weighting : {"vector", "scalar"}
    prior : int in [1, 10^6]
        Symmetric Dirichlet weight β.
    tau : float in (0, 0.5)
        Quantile defining each record's Lipschitz bound (the seed keeps 99% of the draws).
    """

    def __init__(self, eps, bins, *, weighting: str = "vector", prior: float = 1.0, tau: float = 0.01,
                 levels=None):
        super().__init__(bins, levels)
        self.eps = check_real("eps", eps, low=0.0, high=1400.0, low_open=True)
        if weighting not in ("vector", "scalar"):
            raise ValueError(f"weighting must be 'vector' or 'scalar', got {weighting!r}")
        self.weighting = weighting
        self.prior = float(check_integer("prior", prior, minimum=1, maximum=10**6))
        self.tau = check_real("tau", tau, low=0.0, high=0.5, low_open=True, high_open=True)
        self.delta_alpha = self.eps / 2.0
        if weighting == "vector":
            self.name, self.label = "pseudo_posterior", "Pseudo-posterior (record weights)"
        else:
            self.name = "pseudo_posterior_scalar"
            self.label = "Pseudo-posterior, scalar weight (exponential mechanism)"

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee("pure", "local", self.eps, 0.0,
                         "local, data-dependent: Δ_α from the observed records, ε = 2Δ_α per posterior draw "
                         "(seed 004, Thm 2, one record's likelihood term; 4Δ_α under replacement); "
                         "contracts to a global guarantee only as n → ∞ — not DP for this n")

    def local_weights(self, counts) -> PseudoPosteriorWeights:
        """Weights, bounds, truncation and Δ_α for cell counts ``counts`` (shape (k_B,))."""
        C = check_counts(counts, "counts").astype(float).ravel()
        if C.size == 0 or C.sum() < 1:
            raise ValueError("counts must hold at least one record")
        K, n, beta = C.size, float(C.sum()), self.prior
        occupied = C > 0
        a = C + beta
        q0 = np.where(occupied, special.betaincinv(a, n + K * beta - a, self.tau), 1.0)
        L = np.where(occupied, -np.log(q0), np.nan)
        L_max = float(np.nanmax(L))
        kappa = self.delta_alpha
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.weighting == "vector":
                raw = np.where(occupied, np.minimum(1.0, kappa / L), 0.0)
            else:
                raw = np.where(occupied, min(1.0, kappa / L_max), 0.0)
            # Integer weighted counts (rounded down: a smaller weight only lowers Δ_α) keep every
            # exponent of the pseudo-posterior an integer, for the exact sampler.
            w = np.where(occupied, np.floor(raw * C) / np.where(occupied, C, 1.0), 0.0)
            lower = np.where(w > 0, np.exp(-kappa / w), 0.0)
        if not lower.sum() < 1.0 - 1e-9:
            raise ValueError(f"tau = {self.tau!r} leaves no room for the truncation (its quantiles sum to "
                             f"{lower.sum()!r}); lower tau")
        with np.errstate(divide="ignore"):
            delta_alpha = float(np.max(np.where(w > 0, w * -np.log(np.where(w > 0, lower, 1.0)), 0.0)))
        return PseudoPosteriorWeights(lipschitz=L, weights=w, lower=lower, delta_alpha=delta_alpha,
                                      eps_local=2.0 * delta_alpha, delta_unweighted=L_max)

    def weighted_counts(self, counts) -> np.ndarray:
        """:math:`W_j = \\alpha_j C_j` (integers), the counts of the conjugate pseudo-posterior."""
        lw = self.local_weights(counts)
        return np.rint(lw.weights * check_counts(counts, "counts").ravel())

    def knobs(self, n, m, d: int = 1):
        rule = ("α_i = min(1, Δ_α/L_i)" if self.weighting == "vector"
                else "one scalar α = min(1, Δ_α/max_i L_i) (exponential mechanism)")
        return [Knob("delta_alpha", self.delta_alpha,
                     f"Δ_α = ε/2, {rule}, L_i = −log of the {self.tau:g}-quantile of p_cell under the unweighted "
                     "posterior; draw truncated to α_j|log p_j| ≤ Δ_α. LOCAL, data-dependent guarantee "
                     "(seed 004): not DP for this n, never meets a global target")]

    def cell_probabilities(self, counts, m, runs, rng):
        lw = self.local_weights(counts)
        return TruncatedDirichlet(self.prior + np.rint(lw.weights * counts), lw.lower).sample(runs, rng)
