"""The instance-level δ of any regime: σ = 0 in closed form, σ < 0 from the
Dirichlet–multinomial tails, σ ∈ (0, 1) by Monte Carlo (docs/mathematics.md §3.1–3.3).

Each regime computes its own δ (:mod:`.regimes`); these are the public entry points that
validate the inputs and ask the regime of σ.
"""
from __future__ import annotations

from typing import Callable

from ..validation import check_delta, check_py_parameters
from .common import _check_m_accounting, _check_scalar_eps, _eps_values, _multiplicity_profile, _shaped
from .regimes import regime_of


def instance_delta(multiplicities, sigma, theta, m, eps, *, n_mc: int = 20000, seed=None,
                   progress: Callable[[float, str], None] | None = None):
    """Instance-level probabilistic-DP curve δ_x(ε) (docs/mathematics.md §3; docs/mathematics.md §7).

    * σ = 0: exact,
      :math:`\\delta_x(\\varepsilon)=\\max_{r\\in\\{n_i\\}} P\\big(S>(e^{\\varepsilon}-1)(r-1)\\big)`,
      :math:`S\\sim\\mathrm{BB}(m,r,\\theta+n-r)`; with a singleton the curve never falls
      below :math:`m/(m+\\theta+n-1)`, at every ε including ∞.
    * σ ∈ (0, 1): the one-sided 95% Clopper–Pearson upper confidence bound of the Monte
      Carlo estimate (:func:`monte_carlo_delta` gives the estimate and its error); singular
      outputs count at every ε, including ∞.
    * σ < 0 (``z = θ/|σ|`` public categories, α = |σ|): the upper **bound**
      :math:`\\max_l P\\big(S_l>(e^{\\varepsilon}-1)(n_l-1+\\alpha)\\big)`,
      :math:`S_l\\sim\\mathrm{BB}(m,n_l+\\alpha,n+z\\alpha-n_l-\\alpha)`; it is 0 exactly when
      the pure ε-DP condition holds, and 0 for z = 1 (no neighbour differs from x).

    Every value is rounded up by the proven error bound of its computation (never below
    the exact value; a positive value is never returned as 0).

    Parameters
    ----------
    multiplicities : array_like of int ≥ 1, shape (k,)
    sigma, theta : float
        Admissible PY parameters (see :func:`core.validation.check_py_parameters`).
    m : int in [1, MAX_ACCOUNTING_M]
    eps : float or array_like of float > 0 (``inf`` allowed)
    n_mc : int
        Monte Carlo replicates (σ ∈ (0, 1) only).
    seed : int or None
        Seed of the Monte Carlo generator (σ ∈ (0, 1) only).
    progress : callable(fraction, message), optional
        Progress of the Monte Carlo (σ ∈ (0, 1) only).

    Returns
    -------
    float or ndarray, same shape as ``eps``
    """
    counts, values, _ = _multiplicity_profile(multiplicities)
    sigma, theta, z = check_py_parameters(sigma, theta, counts.size)
    m = _check_m_accounting(m)
    eps_arr, shape = _eps_values(eps)
    delta = regime_of(sigma).instance_delta(counts, values, sigma, theta, z, m, eps_arr, n_mc=n_mc, seed=seed,
                                            progress=progress)
    return _shaped(delta, shape)


def instance_delta_at_most(multiplicities, sigma, theta, m, eps, delta) -> bool:
    """Exact verdict δ_x(ε) ≤ δ (the "meets the target" of the report and the app).

    σ = 0 and σ < 0: exact (floating point outside the error band, mpmath inside). σ ∈ (0, 1):
    whether the Monte Carlo upper confidence bound of :func:`instance_delta` is ≤ δ — a
    statistical statement, as that bound is.
    """
    counts, values, _ = _multiplicity_profile(multiplicities)
    sigma, theta, z = check_py_parameters(sigma, theta, counts.size)
    m = _check_m_accounting(m)
    eps = _check_scalar_eps(eps, "a verdict")
    delta = check_delta(delta)
    return regime_of(sigma).instance_delta_at_most(counts, values, sigma, theta, z, m, eps, delta)
