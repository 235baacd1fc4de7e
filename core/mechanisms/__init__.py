"""Release mechanisms: the Pitman–Yor posterior predictive (PYPP), the histogram baselines,
the Bayesian family and the bootstrap (docs/mathematics.md §2 and §4, docs/bayesian_family.md).

* :mod:`.pypp` — :func:`py_predictive_counts` (count level), :func:`pypp_release` and
  :func:`categorical_draws` (independent draws of a category index);
* :mod:`.base` — the :class:`Mechanism` interface of the comparison and the histogram machinery;
* :mod:`.histograms` — perturbed (Laplace, Gaussian) and smoothed histograms;
* :mod:`.bayesian` — Dirichlet–multinomial, Dirichlet posterior sampling, truncated-Dirichlet
  posterior and pseudo-posterior mechanisms;
* :mod:`.truncated_dirichlet` — exact draws from a truncated Dirichlet;
* :mod:`.bootstrap` — the non-private reference;
* :mod:`.peers` — the field's peers calibrated by OpenDP (OpenDP's Laplace and Gaussian
  histograms, AIM, MST; calibrated by OpenDP), on :mod:`.pgm` (select–measure–estimate).

All histogram baselines work on data scaled to the unit box [0, 1]^d with *public* bounds,
cut into ``B`` bins per axis. Their noise is calibrated by :mod:`core.privacy.calibration`; the
three calibrations of the API contract (docs/mathematics.md §7) are also importable from here:
:func:`smoothed_histogram_lambda`, :func:`gaussian_sigma`, :func:`dirichlet_sampling_epsilon`.

==============================  ============================================  =======================
mechanism                       cell probabilities                            guarantee
==============================  ============================================  =======================
perturbed histogram, Laplace    :math:`q\\propto\\max(C+\\mathrm{Lap}(2/\\varepsilon),0)`   pure ε-DP, global, any m
perturbed histogram, Gaussian   :math:`q\\propto\\max(C+N(0,s^2),0)`, analytic s  (ε, δ)-DP, global, any m
smoothed histogram              :math:`(1-\\lambda)C/n+\\lambda/k_B`               pure ε-DP, global, for m
Dirichlet–multinomial           :math:`p\\sim\\mathrm{Dir}(C+\\alpha)`, α = m/(e^ε−1)    pure ε-DP, global, for m
Dirichlet posterior sampling    one :math:`p\\sim\\mathrm{Dir}(C+\\alpha)`           (ε, δ)-DP, global, any m
truncated-Dirichlet posterior   one :math:`p\\sim\\mathrm{Dir}(C+\\alpha_0)` on p ≥ p_min    pure ε-DP, global, any m
pseudo-posterior (2 variants)   one :math:`p\\sim\\mathrm{Dir}(\\beta+W)`, truncated      LOCAL (data-dependent), not DP
bootstrap                       m draws with replacement from x               no privacy
==============================  ============================================  =======================
"""

from ..privacy import Guarantee, dirichlet_sampling_epsilon, gaussian_sigma, smoothed_histogram_lambda
from .base import (
    HistogramMechanism,
    Knob,
    Mechanism,
    axis_sizes,
    category_codes,
    category_positions,
    cells_to_points,
    check_release_arguments,
    distinct_rows,
    histogram_counts,
)
from .bayesian import (
    DirichletMultinomialHistogram,
    DirichletPosteriorSampling,
    PseudoPosteriorMechanism,
    PseudoPosteriorWeights,
    TruncatedDirichletPosteriorSampling,
)
from .bootstrap import Bootstrap
from .histograms import GaussianHistogram, LaplaceHistogram, SmoothedHistogram
from .peers import PEER_LABELS, PEER_MECHANISMS, PEERS_MISSING, peer_entries, peer_mechanism, peers_available, require_peers
from .pypp import SyntheticRelease, categorical_draws, public_domain_can_serve, py_predictive_counts, pypp_release
from .truncated_dirichlet import TruncatedDirichlet, truncated_dirichlet

__all__ = [
    "Bootstrap", "DirichletMultinomialHistogram", "DirichletPosteriorSampling", "GaussianHistogram",
    "Guarantee", "HistogramMechanism", "Knob", "LaplaceHistogram", "Mechanism", "PEERS_MISSING", "PEER_LABELS", "PEER_MECHANISMS", "PseudoPosteriorMechanism",
    "PseudoPosteriorWeights", "SmoothedHistogram", "SyntheticRelease", "TruncatedDirichlet",
    "TruncatedDirichletPosteriorSampling", "axis_sizes", "categorical_draws", "category_codes", "category_positions", "cells_to_points",
    "check_release_arguments", "dirichlet_sampling_epsilon",
    "distinct_rows", "gaussian_sigma", "histogram_counts", "peer_entries", "peer_mechanism", "peers_available",
    "public_domain_can_serve", "py_predictive_counts", "require_peers",
    "pypp_release", "smoothed_histogram_lambda", "truncated_dirichlet",
]
