"""The instance-level δ of any regime: σ = 0 in closed form, σ < 0 from the
Dirichlet–multinomial tails, σ ∈ (0, 1) by Monte Carlo (docs/mathematics.md §3.1–3.3).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from . import betabinom
from ..validation import (
    check_delta,
    check_py_parameters,
)
from .common import (
    _check_m_accounting,
    _check_scalar_eps,
    _eps_values,
    _first_bad,
    _multiplicity_profile,
    _shaped,
)
from .dirichlet_multinomial import _dm_tails
from .dirichlet_process import _dp_instance_max, _second_shape, _singleton_term_at_most
from .monte_carlo import monte_carlo_delta


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
    n = int(counts.sum())
    if sigma == 0:
        delta = _dp_instance_max(values, theta, n, m, eps_arr)
    elif z is not None:
        delta = _dm_tails(values, -sigma, z, n, m, eps_arr).max(axis=0)
    else:
        rng = np.random.default_rng(seed)
        delta = monte_carlo_delta(counts, sigma, theta, m, eps_arr, n_mc=n_mc, rng=rng, progress=progress).upper
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
    eps_arr = np.array([_check_scalar_eps(eps, "a verdict")])
    delta = check_delta(delta)
    n = int(counts.sum())
    if sigma > 0:
        return bool(instance_delta(counts, sigma, theta, m, eps_arr[0]) <= delta)
    if sigma == 0:
        if values[0] == 1 and not _singleton_term_at_most(m, theta, n, delta):
            return False
        r = values[values >= 2].astype(float)
        a, b, w = r, _second_shape(theta, n, r), r - 1.0
    else:
        if z == 1:
            return True
        alpha = -sigma
        r = values.astype(float)
        a, b, w = r + alpha, (n - r) + (z - 1) * alpha, r - 1.0 + alpha
    if r.size == 0:
        return True
    start = _first_bad(eps_arr, w)[0][:, 0]
    live = start <= m
    if not live.any():
        return True
    log_t, rel = betabinom.log_tail(m, a[live], b[live], start[live])
    return bool(betabinom.verdicts_at_most(log_t, rel, delta, m, a[live], b[live], start[live]).all())
