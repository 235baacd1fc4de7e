"""Perturbed (Laplace, Gaussian) and smoothed histograms (docs/mathematics.md §4;
Wasserman & Zhou 2010; Balle & Wang 2018).
"""
from __future__ import annotations


import numpy as np

from ..validation import (
    check_delta,
    check_finite_eps,
)
from ..privacy import Guarantee
from .base import HistogramMechanism, Knob, _normalise_rows
from ..privacy import gaussian_sigma, smoothed_histogram_lambda
from ..privacy.calibration import L1_SENSITIVITY, L2_SENSITIVITY


# ======================================================================= baselines
class LaplaceHistogram(HistogramMechanism):
    """Perturbed histogram with Laplace noise (Wasserman & Zhou 2010; docs/mathematics.md §4.1).

    :math:`D_j = C_j + \\mathrm{Laplace}(2/\\varepsilon)`, :math:`q_j\\propto\\max(D_j,0)`
    (uniform if every :math:`D_j\\le0`). The noisy counts are pure ε-DP (L1 sensitivity 2
    under replacement); any number of draws from ``q`` is post-processing.

    Parameters
    ----------
    eps : float in (0, ∞)
    bins : int ≥ 1
    levels : sequence of (None or int ≥ 1), optional
        Categorical axes of the product domain (:class:`~core.mechanisms.HistogramMechanism`).
    """

    name = "laplace_histogram"
    label = "Perturbed histogram (Laplace)"

    def __init__(self, eps, bins, *, levels=None):
        super().__init__(bins, levels)
        self.eps = check_finite_eps(eps)
        self.scale = L1_SENSITIVITY / self.eps

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee("pure", "global", self.eps, 0.0, "Laplace noise on the counts; any m")

    def knobs(self, n, m, d: int = 1):
        return [Knob("laplace_scale", self.scale,
                     "b = 2/ε: the L1 sensitivity of a histogram under replacement is 2; "
                     "releasing m draws from the noisy histogram is post-processing")]

    def noisy_counts(self, counts, runs, rng) -> np.ndarray:
        """:math:`D = C + \\mathrm{Laplace}(2/\\varepsilon)`, shape (runs, cells) (the ε-DP release)."""
        return counts + rng.laplace(0.0, self.scale, size=(runs, counts.size))

    def cell_probabilities(self, counts, m, runs, rng):
        return _normalise_rows(np.maximum(self.noisy_counts(counts, runs, rng), 0.0))


class GaussianHistogram(HistogramMechanism):
    """Perturbed histogram with analytic-Gaussian noise (docs/mathematics.md §4.2).

    :math:`D_j = C_j + N(0, s^2)` with ``s = gaussian_sigma(ε, δ, √2)``,
    :math:`q_j\\propto\\max(D_j,0)`. (ε, δ)-DP for any ``m``.

    Parameters
    ----------
    eps : float in (0, ∞)
    delta : float in (0, 1)
    bins : int ≥ 1
    levels : sequence of (None or int ≥ 1), optional
        Categorical axes of the product domain (:class:`~core.mechanisms.HistogramMechanism`).
    """

    name = "gaussian_histogram"
    label = "Perturbed histogram (Gaussian)"

    def __init__(self, eps, delta, bins, *, levels=None):
        super().__init__(bins, levels)
        self.eps = check_finite_eps(eps)
        self.delta = check_delta(delta)
        self.sigma = gaussian_sigma(self.eps, self.delta, L2_SENSITIVITY)

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee("approximate", "global", self.eps, self.delta,
                         "analytic Gaussian noise on the counts (Balle & Wang 2018); any m")

    def knobs(self, n, m, d: int = 1):
        return [Knob("gaussian_sd", self.sigma,
                     "smallest s with Φ(Δ/2s − εs/Δ) − e^ε Φ(−Δ/2s − εs/Δ) ≤ δ, Δ = √2 "
                     "(analytic Gaussian mechanism, exact); m draws are post-processing")]

    def noisy_counts(self, counts, runs, rng) -> np.ndarray:
        """:math:`D = C + N(0, s^2)`, shape (runs, cells) (the (ε, δ)-DP release)."""
        return counts + rng.normal(0.0, self.sigma, size=(runs, counts.size))

    def cell_probabilities(self, counts, m, runs, rng):
        return _normalise_rows(np.maximum(self.noisy_counts(counts, runs, rng), 0.0))


class SmoothedHistogram(HistogramMechanism):
    """Smoothed histogram (Wasserman & Zhou 2010; docs/mathematics.md §4.3).

    :math:`q = (1-\\lambda)C/n + \\lambda/k_B` with the smallest admissible λ for the
    ``n`` and ``m`` of each release, :math:`\\lambda_{\\min} = k_B/(k_B + n(e^{\\varepsilon/m}-1))`.
    Pure ε-DP for the ``m`` requested (the guarantee is spent on the draws themselves).

    Parameters
    ----------
    eps : float in (0, ∞)
    bins : int ≥ 1
    levels : sequence of (None or int ≥ 1), optional
        Categorical axes of the product domain (:class:`~core.mechanisms.HistogramMechanism`).
    """

    name = "smoothed_histogram"
    label = "Smoothed histogram"

    def __init__(self, eps, bins, *, levels=None):
        super().__init__(bins, levels)
        self.eps = check_finite_eps(eps)

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee("pure", "global", self.eps, 0.0,
                         "m iid draws from the smoothed histogram; λ depends on m")

    def smoothing(self, n, m, d: int = 1) -> float:
        """λ for ``n`` records, ``m`` draws and ``d`` columns."""
        return smoothed_histogram_lambda(n, self.cells(d), m, self.eps)

    def knobs(self, n, m, d: int = 1):
        cells = self.cells(d)
        return [Knob("lambda", self.smoothing(n, m, d),
                     f"λ_min = k_B/(k_B + n(e^(ε/m) − 1)) with k_B = {cells}: smallest λ with "
                     "m·log((1 − λ)k_B/(nλ) + 1) ≤ ε")]

    def cell_probabilities(self, counts, m, runs, rng):
        n = int(counts.sum())
        lam = smoothed_histogram_lambda(n, counts.size, m, self.eps)
        q = (1.0 - lam) * counts / n + lam / counts.size
        return np.broadcast_to(q, (runs, counts.size))
