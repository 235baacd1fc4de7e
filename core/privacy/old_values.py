"""Old-values-only PYPP (thesis Algorithm 3, "BNP histogram perturbation"): law and privacy.

The mechanism runs the PYPP predictive for ``m`` steps from the confidential sample and
releases only the draws that equal a confidential value; the number released, m − L, is
random. docs/bayesian_family.md §3 derives what follows.

**Law of the release.** The m-step predictive sequence is exchangeable, so the released
subsequence is, given its counts, in uniformly random order, and its law is that of the
old counts :math:`S = (S_1,\\dots,S_k)`: with :math:`(S, L)\\sim\\mathrm{DirMult}(m;\\
n_1-\\sigma,\\dots,n_k-\\sigma,\\ \\theta+k\\sigma)`,

.. math:: P_x(S=s) = \\frac{m!}{L!\\,(\\theta+n)_m}\\,(\\theta+k\\sigma)_L
          \\prod_{i=1}^k\\frac{(n_i-\\sigma)_{s_i}}{s_i!},\\qquad L = m-\\textstyle\\sum_i s_i.

**Likelihood ratios** (neighbour y replaces one record of :math:`x^*_l` by v;
:math:`c_l = n_l-1-\\sigma`; :math:`(a)_L` the rising factorial):

* (a) :math:`n_l\\ge2`, v old: :math:`\\frac{n_l+S_l-1-\\sigma}{c_l}\\cdot\\frac{n_t-\\sigma}{n_t+S_t-\\sigma}` (as full PYPP);
* (b) :math:`n_l\\ge2`, v new: :math:`\\frac{n_l+S_l-1-\\sigma}{c_l}\\cdot\\frac{(\\theta+k\\sigma)_L}{(\\theta+(k+1)\\sigma)_L}`;
* (c) :math:`n_l=1`, v old: singular if :math:`S_l\\ge1`; else
  :math:`\\frac{n_t-\\sigma}{n_t+S_t-\\sigma}\\cdot\\frac{(\\theta+k\\sigma)_L}{(\\theta+(k-1)\\sigma)_L}`;
* (d) :math:`n_l=1`, v new: singular if :math:`S_l\\ge1`; else 1.

For σ = 0 the L-factors are 1 and the ratios are functions of :math:`(S_l, S_t)` only —
exactly those of full PYPP — so :math:`\\delta_x(\\varepsilon)` is the same closed form,
:math:`\\max_r P(S>(e^\\varepsilon-1)(r-1))` with :math:`S\\sim\\mathrm{BB}(m,r,\\theta+n-r)`
(:math:`m/(m+\\theta+n-1)` for a singleton): suppressing the new values buys nothing under
the paper's accounting. For σ ∈ (0, 1) the new values' information enters only through L,
and δ is estimated by Monte Carlo exactly as for full PYPP (docs/mathematics.md §3.2), with a
Clopper–Pearson upper bound.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .betabinom import log_gamma_ratio
from ..validation import check_eps, check_integer, check_multiplicities, check_py_parameters, check_rng
from .instance import instance_delta
from .monte_carlo import NewValueRows, monte_carlo_replicates, simulate_replicates

__all__ = ["OLD_VALUES_ROWS", "expected_release_size", "old_values_counts", "old_values_delta",
           "old_values_monte_carlo"]


def _singleton_to_new(L, sigma, theta, k):
    """Case (c): log (θ + kσ)_L − log (θ + (k−1)σ)_L (0 for k = 1)."""
    if k < 2:
        return np.zeros(np.shape(L))
    return log_gamma_ratio(theta + k * sigma, L) - log_gamma_ratio(theta + (k - 1) * sigma, L)


def _new_target(L, sigma, theta, k):
    """A new target value: log (θ + kσ)_L − log (θ + (k+1)σ)_L ≤ 0."""
    return log_gamma_ratio(theta + k * sigma, L) - log_gamma_ratio(theta + (k + 1) * sigma, L)


#: The old-values-only release: its new-value rows are functions of L, the number of new
#: draws (docs/bayesian_family.md §3.3); the old counts are those of full PYPP.
OLD_VALUES_ROWS = NewValueRows("old_values", "new_draws", _singleton_to_new, _new_target)


def _check_regime(multiplicities, sigma, theta):
    counts = check_multiplicities(multiplicities)
    sigma, theta, z = check_py_parameters(sigma, theta, counts.size)
    if sigma < 0:
        raise ValueError(f"sigma must be in [0, 1) for the old-values-only mechanism (thesis Algorithm 3 has "
                         f"new values only for sigma >= 0), got {sigma!r}")
    return counts, sigma, theta


def expected_release_size(multiplicities, sigma, theta, m) -> float:
    """:math:`E[m - L] = m\\,(n - k\\sigma)/(\\theta + n)`, the mean number of released values."""
    counts, sigma, theta = _check_regime(multiplicities, sigma, theta)
    m = check_integer("m", m, minimum=1, maximum=10**8)
    n, k = float(counts.sum()), counts.size
    return m * (n - k * sigma) / (theta + n)


def old_values_counts(multiplicities, sigma, theta, m, rng: np.random.Generator, *, size: int = 1) -> np.ndarray:
    """Released counts of Algorithm 3: ``size`` draws of :math:`S`, shape (size, k).

    :math:`(S, L)\\sim\\mathrm{DirMult}(m;\\ n_i-\\sigma,\\ \\theta+k\\sigma)` (a Dirichlet draw
    then a multinomial), the law of the old counts of the m-step predictive; the new
    values are never released, so their seating is not simulated.
    """
    counts, sigma, theta = _check_regime(multiplicities, sigma, theta)
    m = check_integer("m", m, minimum=1, maximum=10**8)
    size = check_integer("size", size, minimum=1, maximum=10**6)
    rng = check_rng(rng)
    if counts.size * size > 5 * 10**7:
        raise ValueError(f"size × k = {size} × {counts.size} exceeds 5e7 counts; lower size")
    alpha = np.concatenate([counts - sigma, [theta + counts.size * sigma]])
    draws = rng.multinomial(m, rng.dirichlet(alpha, size=size))
    return draws[:, :-1]


def old_values_delta(multiplicities, sigma, theta, m, eps, *, n_mc: int = 20000, seed=None,
                     progress: Callable[[float, str], None] | None = None):
    """Instance-level δ_x(ε) of the old-values-only mechanism (thesis Alg. 3; docs/mathematics.md §7).

    Same conventions as :func:`core.privacy.instance_delta`: the probability under x that
    some neighbour's likelihood ratio exceeds :math:`e^{\\varepsilon}` or the output is
    singular, maximised over neighbours; ``eps`` may be an array, ε = ∞ is allowed
    (singular outputs still count); rounded to the safe side.

    * σ = 0: exact closed form — the same as full PYPP (module docstring), computed by
      :func:`core.privacy.instance_delta` with its proven upward rounding.
    * σ ∈ (0, 1): the one-sided 95% Clopper–Pearson upper bound of the Monte Carlo
      estimate (:func:`old_values_monte_carlo`).

    Parameters
    ----------
    multiplicities : array_like of int ≥ 1, shape (k,)
    sigma : float in [0, 1)
    theta : float > −σ
    m : int in [1, 10^8]
        Iterations of the predictive (the release has random size ≤ m).
    eps : float or array_like of float > 0, any shape (``inf`` allowed)
    n_mc : int
        Monte Carlo replicates (σ > 0 only).
    seed : int or None
        Seed of the Monte Carlo generator (σ > 0 only).
    progress : callable(fraction, message), optional

    Returns
    -------
    float or ndarray, same shape as ``eps``
    """
    counts, sigma, theta = _check_regime(multiplicities, sigma, theta)
    eps_arr, scalar = check_eps(eps)
    if sigma == 0:

        return instance_delta(counts, 0.0, theta, m, eps)
    m = check_integer("m", m, minimum=1, maximum=10**8)
    # seeded replicates are kept (core.privacy.monte_carlo_replicates): full PYPP's curve with
    # the same seed drew them already, and a move of ε does not draw them again
    replicates = monte_carlo_replicates(counts, sigma, theta, m, n_mc=n_mc, seed=seed, progress=progress)
    out = replicates.delta(eps_arr.ravel(), rows=OLD_VALUES_ROWS, progress=progress).upper
    # computed on the flattened ε values, returned in the shape of eps
    return float(out[0]) if scalar else out.reshape(np.shape(eps))


def old_values_monte_carlo(multiplicities, sigma, theta, m, eps, *, n_mc: int = 20000,
                           rng: np.random.Generator, confidence: float = 0.95,
                           progress: Callable[[float, str], None] | None = None,
                           batch: int = 2000, prune: bool = True):
    """Monte Carlo δ_x(ε) of the old-values-only mechanism, σ ∈ (0, 1) (docs/bayesian_family.md §3.3).

    The estimator of docs/mathematics.md §3.2 with the likelihood ratios (a)–(d) of this module:
    replicates of the representative old counts and L (a Dirichlet–multinomial draw),
    every neighbour type (a pair of multiplicities, or a multiplicity and "new"), the
    maximum empirical frequency of a bad event, and a Bonferroni-corrected one-sided
    Clopper–Pearson upper bound.

    Returns
    -------
    core.privacy.MonteCarloDelta
    """
    counts, sigma, theta = _check_regime(multiplicities, sigma, theta)
    if not 0 < sigma < 1:
        raise ValueError(f"sigma must be in (0, 1) for the Monte Carlo estimator, got {sigma!r}")
    m = check_integer("m", m, minimum=1, maximum=10**8)
    eps_arr = check_eps(eps)[0].ravel()        # MonteCarloDelta holds flat arrays, shape (E,)
    n_mc = check_integer("n_mc", n_mc, minimum=1, maximum=10**7)
    batch = check_integer("batch", batch, minimum=1, maximum=10**6)
    rng = check_rng(rng)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    # the replicates of full PYPP (same old counts and L); the ratios that differ are the
    # two rows of OLD_VALUES_ROWS, functions of L; types, pruning and bound are shared
    replicates = simulate_replicates(counts, sigma, theta, m, n_mc=n_mc, rng=rng, progress=progress, batch=batch)
    return replicates.delta(eps_arr, rows=OLD_VALUES_ROWS, confidence=confidence, progress=progress, prune=prune)
