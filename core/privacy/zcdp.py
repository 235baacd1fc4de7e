"""Zero-concentrated DP (zCDP) and its conversion to (ε, δ)-DP, the accounting of the peer
mechanisms (docs/peers.md §2).

A mechanism is ρ-zCDP (Bun & Steinke 2016) when every Rényi divergence of order α > 1
between its outputs on neighbouring datasets is at most ρα. The Gaussian mechanism with L2
sensitivity Δ and noise SD s is ρ-zCDP with :math:`\\rho = \\Delta^2/(2s^2)`; an ε₀-DP
exponential mechanism is :math:`\\varepsilon_0^2/8`-zCDP (Cesar & Rogers 2021); zCDP composes
by adding the ρ's. A ρ-zCDP mechanism is (ε, δ)-DP with (Canonne, Kamath & Steinke 2020,
Proposition 12 and Corollary 13)

.. math:: \\delta(\\rho, \\varepsilon) = \\inf_{\\alpha > 1}
          \\frac{\\exp\\big((\\alpha-1)(\\alpha\\rho-\\varepsilon)\\big)}{\\alpha-1}
          \\Big(1-\\frac1\\alpha\\Big)^{\\alpha},

the conversion OpenDP's ``make_zCDP_to_approxDP`` applies (it searches α on
[1.01, (ε + 1)/(2ρ) + 2], as here). This is a bound for *any* ρ-zCDP mechanism: for the
Gaussian mechanism itself the exact profile (Balle & Wang 2018,
:func:`core.privacy.gaussian_sigma`) needs 6–15 % less noise at the same (ε, δ).

Computed in double precision; the returned ρ is lowered by a relative 1e-12 (the noise SD
raised by half that), which covers the rounding of the formula, so the (ε, δ) target holds.
"""
from __future__ import annotations

import math

from scipy import optimize

from ..validation import check_delta, check_finite_eps, check_positive, check_real

__all__ = ["zcdp_delta", "zcdp_gaussian_sigma", "zcdp_rho"]

#: Smallest Rényi order searched (OpenDP's lower end).
_ALPHA_MIN = 1.01
#: Relative margin of the returned ρ (below the root) against the rounding of the formula.
_RHO_MARGIN = 1e-12


def _log_delta_at(alpha: float, rho: float, eps: float) -> float:
    """log of the CKS20 bound at order ``alpha``."""
    return (alpha - 1.0) * (alpha * rho - eps) + alpha * math.log1p(-1.0 / alpha) - math.log(alpha - 1.0)


def _best_alpha(rho: float, eps: float) -> float:
    """The order minimising the bound on [1.01, (ε + 1)/(2ρ) + 2]: the root of its derivative
    :math:`(2\\alpha-1)\\rho - \\varepsilon + \\log(1 - 1/\\alpha)` (increasing in α), or an end."""
    hi = (eps + 1.0) / (2.0 * rho) + 2.0

    def slope(a):
        return (2.0 * a - 1.0) * rho - eps + math.log1p(-1.0 / a)

    if slope(_ALPHA_MIN) >= 0.0:
        return _ALPHA_MIN
    if slope(hi) <= 0.0:
        return hi
    return optimize.brentq(slope, _ALPHA_MIN, hi, xtol=1e-15, rtol=1e-15, maxiter=400)


def zcdp_delta(rho, eps) -> float:
    """δ of a ρ-zCDP mechanism at ε (Canonne, Kamath & Steinke 2020, Corollary 13).

    Parameters
    ----------
    rho : float ≥ 0
    eps : float ≥ 0

    Returns
    -------
    float in [0, 1]
    """
    rho = check_real("rho", rho, low=0.0)
    eps = check_real("eps", eps, low=0.0)
    if rho == 0.0:
        return 0.0
    if math.isinf(rho):
        return 1.0
    alpha = _best_alpha(rho, eps)
    return min(1.0, math.exp(_log_delta_at(alpha, rho, eps)))


def zcdp_rho(eps, delta) -> float:
    """The largest ρ whose zCDP guarantee implies (ε, δ)-DP by :func:`zcdp_delta` (the budget of a
    zCDP mechanism calibrated to a target (ε, δ)), lowered by a relative 1e-12.

    Parameters
    ----------
    eps : float in (0, ∞)
    delta : float in (0, 1)
    """
    eps = check_finite_eps(eps)
    delta = check_delta(delta)
    log_delta = math.log(delta)

    def excess(t):
        return math.log(max(zcdp_delta(math.exp(t), eps), 1e-320)) - log_delta

    lo = hi = math.log(eps * eps / 4.0)
    while excess(lo) > 0.0:
        lo -= 1.0
    while excess(hi) <= 0.0:
        hi += 1.0
    t = optimize.brentq(excess, lo, hi, xtol=1e-15, rtol=1e-15, maxiter=400)
    return math.exp(t) * (1.0 - _RHO_MARGIN)


def zcdp_gaussian_sigma(eps, delta, l2_sensitivity) -> float:
    """Noise SD of the Gaussian mechanism calibrated through zCDP: :math:`s = \\Delta/\\sqrt{2\\rho}`
    with ρ = :func:`zcdp_rho` (ε, δ) — OpenDP's calibration of its Gaussian measurement.

    Parameters
    ----------
    eps : float in (0, ∞)
    delta : float in (0, 1)
    l2_sensitivity : float > 0
    """
    sens = check_positive("l2_sensitivity", l2_sensitivity)
    return sens / math.sqrt(2.0 * zcdp_rho(eps, delta))
