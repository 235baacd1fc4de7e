"""Histogram baselines, the Bayesian family of issue 11 and the non-private bootstrap (SPEC §4).

All histogram baselines work on data already scaled to the unit box :math:`[0,1]^d` with
*public* bounds, cut into ``B`` bins per axis (:math:`k_B = B^d` cells). From the cell
counts :math:`C_j` each one produces a vector of cell probabilities :math:`q`, then
releases ``m`` synthetic points: a cell drawn with probabilities ``q``, then a uniform
point inside it (``m`` iid draws, emitted in uniformly random order).

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

The truncated-Dirichlet and pseudo-posterior mechanisms (issue 11; seeds 001 and 004) are
derived in docs/bayesian_family.md; both draw from a truncated Dirichlet exactly
(:class:`TruncatedDirichlet`).

Neighbouring datasets differ by the *replacement* of one record (SPEC §3), so one count
goes down by one and another goes up by one: L1 sensitivity 2, L2 sensitivity √2,
L∞ sensitivity 1.

The three calibration functions of the API contract (SPEC §7) live here and are
re-exported by :mod:`core.mechanisms`: :func:`smoothed_histogram_lambda`,
:func:`gaussian_sigma`, :func:`dirichlet_sampling_epsilon`. Every number they (and the other
calibrations here) return is rounded toward the conservative side — more noise, more
smoothing, larger ε, δ up: it is located in double precision and then settled in 50-digit
arithmetic (mpmath), so that the privacy condition holds exactly for the float returned,
which is at most an ulp or two from the exact calibration (docs/mathematics.md §9).

This module must not import :mod:`core.mechanisms` (which imports it back).

References: Wasserman & Zhou (2010) for the perturbed and smoothed histograms;
Balle & Wang (2018) for the analytic Gaussian mechanism; Machanavajjhala et al. (2008)
for the Dirichlet–multinomial; seed 003 (*Differential Privacy of Dirichlet Posterior
Sampling*, eqs. 6–8) for Dirichlet posterior sampling; the thesis (seed 002, §3.3) for
the baselines as used in the paper's comparisons.
"""

from __future__ import annotations

import math
import struct
import sys
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from .formatting import format_upper
from .validation import (
    MAX_RECORDS,
    MAX_RELEASE_SIZE,
    check_bins,
    check_counts,
    check_delta,
    check_eps,
    check_finite_eps,
    check_integer,
    check_positive,
    check_real,
    check_release_budget,
    check_release_size,
    check_rng,
    check_row_counts,
    check_unit_data,
)

__all__ = [
    "DIRICHLET_ALPHA_RANGE",
    "PseudoPosteriorMechanism",
    "PseudoPosteriorWeights",
    "TruncatedDirichlet",
    "TruncatedDirichletPosteriorSampling",
    "truncated_dirichlet",
    "truncated_dirichlet_epsilon",
    "truncated_dirichlet_p_min",
    "MAX_CELLS",
    "SENSITIVITY_RANGE",
    "Bootstrap",
    "DirichletMultinomialHistogram",
    "DirichletPosteriorSampling",
    "GaussianHistogram",
    "Guarantee",
    "HistogramMechanism",
    "Knob",
    "LaplaceHistogram",
    "Mechanism",
    "SmoothedHistogram",
    "cells_to_points",
    "check_release_arguments",
    "distinct_rows",
    "dirichlet_multinomial_alpha",
    "dirichlet_sampling_alpha",
    "dirichlet_sampling_epsilon",
    "gaussian_delta",
    "gaussian_sigma",
    "histogram_counts",
    "smoothed_histogram_epsilon",
    "smoothed_histogram_lambda",
]

#: Largest number of histogram cells ``B**d`` a baseline accepts (8 MB of counts per run).
MAX_CELLS = 1_000_000

#: Prior weights α for which the Dirichlet posterior-sampling ε is computed to full
#: precision (ψ′(α − γ) neither overflows nor loses its digits to cancellation).
DIRICHLET_ALPHA_RANGE = (1e-10, 1e10)
#: Sensitivities (Δ, Δ₂², Δ∞) accepted by the calibrations: the noise scales they imply
#: stay inside the double-precision range.
SENSITIVITY_RANGE = (1e-100, 1e100)

#: Sensitivities of a histogram under replacement of one record.
L1_SENSITIVITY = 2.0
L2_SENSITIVITY = math.sqrt(2.0)
LINF_SENSITIVITY = 1.0


# ============================================ safe-side rounding in high precision
# Every calibration below computes its answer in floating point (fast, accurate to a few
# ulps or, at extreme parameters, to ~1e-6 relative), then settles the last digits with
# mpmath: the privacy quantity is evaluated at _MP_DPS digits, widened on the conservative
# side by 10^-_MP_SLACK_DIGITS relative and rounded outward to a float, and the value
# returned is the smallest float (noise, smoothing, prior weight) for which that rounded
# condition holds. mpmath evaluates exp, log, erfc and ψ′ to within a few units of the
# last of its 50 digits, so a 1e-35 widening puts each check on the conservative side of
# the exact one with 15 orders of magnitude to spare, while moving the answer by less than
# one ulp (docs/mathematics.md §9, "Rounding to the safe side"; docs/accuracy.md).

#: Working precision, in decimal digits, of the high-precision checks.
_MP_DPS = 50
#: Relative widening of a 50-digit value before it is rounded to a float.
_MP_SLACK_DIGITS = 35
#: A bound below the smallest positive float (2^-1100 < 2^-1074 = 5e-324).
_BELOW_FLOATS_LOG2 = -1100
_MP_LOCAL = threading.local()


def _mp():
    """This thread's mpmath context, at ``_MP_DPS`` digits.

    A private context per thread: the Streamlit server runs sessions in threads, and
    ``mpmath.mp.workdps`` on the shared global context would let one thread change the
    precision of another's check mid-computation. mpmath is imported lazily (it is
    installed with dp-accounting, a dependency; :mod:`core.betabinom` uses it the same way).
    """
    ctx = getattr(_MP_LOCAL, "ctx", None)
    if ctx is None:
        import mpmath

        ctx = _MP_LOCAL.ctx = mpmath.MPContext()
        ctx.dps = _MP_DPS
    return ctx


def _widen_up(ctx, value):
    """``value·(1 + 10^-35)`` for value ≥ 0: above the exact quantity a 50-digit value approximates."""
    return value * (1 + ctx.mpf(10) ** -_MP_SLACK_DIGITS)


def _float_up(ctx, value) -> float:
    """The smallest float ≥ the mpf ``value`` (``inf`` beyond the float range)."""
    f = float(value)
    if ctx.mpf(f) < value:
        f = math.nextafter(f, math.inf)
    return f


def _float_bits(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


def _bits_float(i: int) -> float:
    return struct.unpack("<d", struct.pack("<q", i))[0]


def _smallest_float_where(ok, guess: float, lo: float, hi: float) -> float:
    """Smallest float ``x`` in ``[lo, hi]`` with ``ok(x)``, for ``ok`` False below a threshold, True above.

    Non-negative floats are ordered like their bit patterns read as integers, so the search
    runs on those integers: from ``guess`` it probes 1, 2, 4, … ulps towards the threshold,
    then bisects. A guess ``j`` ulps from the answer costs about :math:`2\\log_2 j + 2`
    calls; the high-precision guesses below are within an ulp or two. ``ok(hi)`` must hold.
    """
    i_lo, i_hi = _float_bits(lo), _float_bits(hi)
    i = min(max(_float_bits(guess), i_lo), i_hi)
    step = 1
    if ok(_bits_float(i)):
        good = i
        while True:
            if good == i_lo:
                return lo
            probe = max(i_lo, good - step)
            if not ok(_bits_float(probe)):
                bad = probe
                break
            good, step = probe, 2 * step
    else:
        bad = i
        while True:
            probe = min(i_hi, bad + step)
            if ok(_bits_float(probe)):
                good = probe
                break
            if probe == i_hi:  # pragma: no cover - callers guarantee ok(hi)
                raise RuntimeError("no float in the range satisfies the condition")
            bad, step = probe, 2 * step
    while good - bad > 1:
        mid = (good + bad) // 2
        if ok(_bits_float(mid)):
            good = mid
        else:
            bad = mid
    return _bits_float(good)


# ============================================================== calibration functions
def _smoothed_epsilon_up(n: int, cells: int, m: int, lam: float) -> float:
    """:math:`m\\log(1+(1-\\lambda)k_B/(n\\lambda))` at 50 digits, rounded up to a float.

    Every operation is well conditioned: ``1 − λ`` and the quotient keep their relative
    precision, and :math:`\\log(1+x)` has condition number :math:`x/((1+x)\\log(1+x))\\le 1`.
    """
    if lam == 1.0:
        return 0.0
    ctx = _mp()
    lam_mp = ctx.mpf(lam)
    x = (1 - lam_mp) * cells / (n * lam_mp)
    return _float_up(ctx, _widen_up(ctx, m * ctx.log1p(x)))


def smoothed_histogram_epsilon(n, cells, m, lam):
    """Privacy of ``m`` iid draws from a smoothed histogram (SPEC §4.3), rounded up.

    The density is :math:`f = (1-\\lambda)\\hat f + \\lambda`, with :math:`\\hat f` the
    histogram of ``n`` records on ``cells`` equal cells of :math:`[0,1]^d`. The worst
    density ratio of one draw between neighbours is reached in a cell that is empty under
    one of them, so ``m`` draws are ε-DP exactly for

    .. math:: \\varepsilon(\\lambda) = m \\log\\Big(\\frac{(1-\\lambda)k_B}{n\\lambda} + 1\\Big).

    Evaluated at 50 digits and returned as the float above (never below the exact value,
    at most an ulp above it).

    Parameters
    ----------
    n : int in [1, 2**53]
    cells : int in [1, 2**53]
        Number of cells :math:`k_B = B^d`.
    m : int in [1, 2**53]
    lam : float in (0, 1]

    Returns
    -------
    float ≥ 0
    """
    n = check_integer("n", n, minimum=1, maximum=MAX_RECORDS)
    cells = check_integer("cells", cells, minimum=1, maximum=MAX_RECORDS)
    m = check_integer("m", m, minimum=1, maximum=MAX_RECORDS)
    lam = check_real("lam", lam, low=0.0, high=1.0, low_open=True)
    return _smoothed_epsilon_up(n, cells, m, lam)


def smoothed_histogram_lambda(n, cells, m, eps):
    """Smallest smoothing weight λ making ``m`` smoothed-histogram draws ε-DP (SPEC §4.3, §7).

    .. math:: \\lambda_{\\min} = \\frac{k_B}{k_B + n\\,(e^{\\varepsilon/m}-1)},

    the root of :math:`m\\log((1-\\lambda)k_B/(n\\lambda)+1) = \\varepsilon` (Wasserman &
    Zhou 2010; thesis §3.3). The condition is tight: at :math:`\\lambda_{\\min}` the
    worst-case likelihood ratio of the ``m`` draws equals :math:`e^{\\varepsilon}`.

    Rounded to the safe side: :math:`\\lambda_{\\min}` is computed at 50 digits, and the
    value returned is the smallest float λ with ``smoothed_histogram_epsilon(n, cells, m, λ)
    ≤ eps`` — whose ε is itself rounded up — so :math:`\\lambda\\ge\\lambda_{\\min}` and the
    condition holds exactly, with λ at most an ulp or two above :math:`\\lambda_{\\min}`
    (a double-precision formula alone can land a few ulps below it).

    Parameters
    ----------
    n : int in [1, 2**53]
        Number of confidential records (public under replacement neighbours).
    cells : int in [1, 2**53]
        Number of histogram cells :math:`k_B = B^d`.
    m : int in [1, 2**53]
        Number of released draws.
    eps : float or array_like of float, in (0, ∞]
        ``ε = ∞`` gives λ = 0.

    Returns
    -------
    float or ndarray (same shape as ``eps``), in [0, 1]; where :math:`\\lambda_{\\min}` is
    below the smallest positive float, that float (5e-324).
    """
    n = check_integer("n", n, minimum=1, maximum=MAX_RECORDS)
    cells = check_integer("cells", cells, minimum=1, maximum=MAX_RECORDS)
    m = check_integer("m", m, minimum=1, maximum=MAX_RECORDS)
    eps_arr, scalar = check_eps(eps)
    out = np.empty(eps_arr.shape)
    ctx = _mp()
    for i, e in enumerate(eps_arr):
        e = float(e)
        if math.isinf(e):
            out[i] = 0.0
            continue
        rate = ctx.mpf(e) / m
        if rate > 1000:
            # λ_min < k_B/(n e^{ε/m}) ≤ 2^53·e^-1000: below every positive float.
            guess = 5e-324
        else:
            guess = _float_up(ctx, _widen_up(ctx, cells / (cells + n * ctx.expm1(rate))))
        out[i] = _smallest_float_where(lambda lam, e=e: _smoothed_epsilon_up(n, cells, m, lam) <= e,
                                       guess, 5e-324, 1.0)
    return float(out[0]) if scalar else out


def _gaussian_log_delta(sigma: float, eps: float, sensitivity: float) -> float:
    """log δ(σ) of the Gaussian mechanism in double precision (Balle & Wang 2018, Theorem 8).

    .. math:: \\delta(\\sigma) = \\Phi\\Big(\\frac{\\Delta}{2\\sigma}-\\frac{\\varepsilon\\sigma}{\\Delta}\\Big)
              - e^{\\varepsilon}\\Phi\\Big(-\\frac{\\Delta}{2\\sigma}-\\frac{\\varepsilon\\sigma}{\\Delta}\\Big)

    evaluated as :math:`\\log\\Phi(a) + \\log(1 - e^{\\varepsilon+\\log\\Phi(b)-\\log\\Phi(a)})`
    so that neither term underflows. Used only to locate the calibration: the difference
    cancels when δ ≪ Φ(a) (small ε, tiny δ), where this loses up to ~1e-6 relative;
    :func:`_gaussian_delta_upper` settles the result.
    """
    a = sensitivity / (2.0 * sigma) - eps * sigma / sensitivity
    b = -sensitivity / (2.0 * sigma) - eps * sigma / sensitivity
    log_a = float(special.log_ndtr(a))
    if log_a == -math.inf:  # Φ(a) underflows: δ(σ) ≤ Φ(a) is below the smallest float
        return -math.inf
    ratio = eps + float(special.log_ndtr(b)) - log_a
    if ratio >= 0.0:  # only through rounding when δ(σ) is below ~1e-300
        return -math.inf
    return float(log_a + math.log(-math.expm1(ratio)))


def _mills_ratio(ctx, x):
    """Mills ratio :math:`R(x) = \\Phi(-x)/\\varphi(x)` for x > 0, to the working precision.

    Up to x = 100 as :math:`\\sqrt{\\pi/2}\\,e^{x^2/2}\\operatorname{erfc}(x/\\sqrt2)`, with 6
    guard digits for the factor :math:`e^{x^2/2}` (up to :math:`e^{5000}`); beyond, the
    asymptotic series :math:`R(x) = x^{-1}\\sum_k (-1)^k (2k-1)!!\\,x^{-2k}` (DLMF 7.12.1 with
    :math:`z = x/\\sqrt2`), which for real x envelops R: the remainder is at most the first
    omitted term (DLMF §7.12(i)). It is summed until that term is below the working
    precision and then subtracted, giving a lower bound of R — so the δ built from it,
    :math:`\\Phi(a)-\\varphi(a)R`, is not understated.
    """
    if x <= 100:
        with ctx.extradps(6):
            return ctx.sqrt(ctx.pi / 2) * ctx.exp(x * x / 2) * ctx.erfc(x / ctx.sqrt(2))
    inv2 = 1 / (x * x)
    term, total, k = ctx.mpf(1), ctx.mpf(0), 0
    tol = ctx.mpf(10) ** -(ctx.dps + 5)
    while abs(term) > tol:
        total += term
        k += 1
        term *= -(2 * k - 1) * inv2
    return (total - abs(term)) / x   # minus the first omitted term: a lower bound of R


def _gaussian_delta_terms(ctx, sigma, eps: float, sens: float):
    """(upper bound of δ(σ), a, c) at the context's precision; a, c are None where δ is clamped.

    Writes δ with the Mills ratio R: with :math:`c=\\Delta/(2\\sigma)`,
    :math:`s=\\varepsilon\\sigma/\\Delta`, :math:`a = c-s`, :math:`b=-c-s`, one has
    :math:`cs = \\varepsilon/2`, hence :math:`e^{\\varepsilon}\\varphi(b)=\\varphi(a)` and

    .. math:: \\delta(\\sigma) = \\Phi(a) - e^{\\varepsilon}\\Phi(b) = \\Phi(a) - \\varphi(a)\\,R(c+s),

    so :math:`e^{\\varepsilon}` and :math:`\\Phi(b)` (which can be :math:`e^{\\pm 10^{300}}`)
    are never formed. ``a = c − s`` cancels when c ≈ s: it is computed with as many extra
    digits as c + s has before the point. The difference is recomputed with doubled
    precision until its rounding error (at most :math:`10^{-(dps-8)}\\Phi(a)`) is below
    1e-30 of it, and that error is added: the result is an upper bound of δ(σ).
    """
    dps = ctx.dps
    with ctx.workdps(20):
        s_, e_, d_ = ctx.mpf(sigma), ctx.mpf(eps), ctx.mpf(sens)
        size = d_ / (2 * s_) + e_ * s_ / d_
        digits = max(0, int(ctx.log10(size))) + 1 if size > 1 else 0
    work = dps
    while True:
        with ctx.workdps(work + digits + 10):
            s_, e_, d_ = ctx.mpf(sigma), ctx.mpf(eps), ctx.mpf(sens)
            c = d_ / (2 * s_)
            t = e_ * s_ / d_
            a = c - t
            x = c + t
            if a < -40:   # δ ≤ Φ(a) ≤ φ(40)/40 < 1e-349: below every float
                return ctx.mpf(2) ** _BELOW_FLOATS_LOG2, None, None
            if a > 40:    # δ ≤ 1
                return ctx.mpf(1), None, None
            with ctx.workdps(work + 10):
                big = ctx.ncdf(a)
                small = ctx.npdf(a) * _mills_ratio(ctx, x)
                diff = big - small
                err = big * ctx.mpf(10) ** -(work - 8)
                if (diff > 0 and err <= diff * ctx.mpf(10) ** -30) or work >= 1600:
                    return min(big, max(diff, 0) + err), a, c
        work *= 2


def _gaussian_delta_upper(sigma, eps: float, sens: float):
    """An upper bound of δ(σ) (mpf), within 1e-30 relative of the exact value."""
    return _gaussian_delta_terms(_mp(), sigma, eps, sens)[0]


def gaussian_delta(sigma, eps, l2_sensitivity):
    """δ of the Gaussian mechanism with noise SD ``sigma`` at ``eps`` (Balle & Wang 2018), rounded up.

    .. math:: \\delta = \\Phi\\Big(\\frac{\\Delta}{2\\sigma}-\\frac{\\varepsilon\\sigma}{\\Delta}\\Big)
              - e^{\\varepsilon}\\Phi\\Big(-\\frac{\\Delta}{2\\sigma}-\\frac{\\varepsilon\\sigma}{\\Delta}\\Big)

    Evaluated to 30 significant digits in high precision (:func:`_gaussian_delta_terms`)
    and returned as the float above: never below the exact δ, at most an ulp above it
    (5e-324 where δ is below every positive float).

    Parameters
    ----------
    sigma : float > 0
    eps : float > 0
    l2_sensitivity : float > 0

    Returns
    -------
    float in (0, 1]
    """
    sigma = check_positive("sigma", sigma)
    eps = check_finite_eps(eps)
    sens = _check_sensitivity("l2_sensitivity", l2_sensitivity)
    ctx = _mp()
    return _float_up(ctx, _gaussian_delta_upper(sigma, eps, sens))


def _check_sensitivity(name: str, value) -> float:
    lo, hi = SENSITIVITY_RANGE
    return check_real(name, value, low=lo, high=hi)


def _gaussian_sigma_newton(ctx, sigma0: float, eps: float, sens: float, delta: float) -> float:
    """The exact calibration near ``sigma0``, by Newton's method on log δ against log σ at 40 digits.

    With :math:`\\sigma\\,d\\delta/d\\sigma = -2c\\,\\varphi(a)` (the two φ terms of
    :math:`d\\delta/d\\sigma` merge through :math:`e^{\\varepsilon}\\varphi(b)=\\varphi(a)`),
    the step is :math:`\\Delta t = (\\log\\delta(\\sigma)-\\log\\delta)\\,\\delta(\\sigma)/(2c\\varphi(a))`.
    Returns the float above the root, or ``sigma0`` if the iteration strays (the caller's
    search is correct from any guess; this only makes it short).
    """
    with ctx.workdps(40):
        log_target = ctx.log(ctx.mpf(delta))
        t = ctx.log(ctx.mpf(sigma0))
        for _ in range(20):
            value, a, c = _gaussian_delta_terms(ctx, ctx.exp(t), eps, sens)
            if a is None or not value > 0:
                return sigma0
            step = (ctx.log(value) - log_target) * value / (2 * c * ctx.npdf(a))
            t += step
            if abs(step) < ctx.mpf(10) ** -32:
                root = ctx.exp(t)
                if not sigma0 / 2 < root < 2 * sigma0:
                    return sigma0
                return _float_up(ctx, _widen_up(ctx, root))
    return sigma0


def gaussian_sigma(eps, delta, l2_sensitivity):
    """Noise SD of the analytic Gaussian mechanism (Balle & Wang 2018; SPEC §4.2, §7).

    The Gaussian mechanism :math:`f(x) + N(0, s^2 I)` with L2 sensitivity Δ is (ε, δ)-DP
    if and only if

    .. math:: \\Phi\\Big(\\frac{\\Delta}{2s}-\\frac{\\varepsilon s}{\\Delta}\\Big)
              - e^{\\varepsilon}\\Phi\\Big(-\\frac{\\Delta}{2s}-\\frac{\\varepsilon s}{\\Delta}\\Big) \\le \\delta .

    The left side decreases in ``s``. The root is located by Brent's method on
    :math:`\\log s` in double precision, refined by Newton's method at 40 digits
    (:func:`_gaussian_sigma_newton`), and the value returned is the smallest float ``s``
    whose δ(s), evaluated in high precision and rounded up, is at most ``delta``. So the
    condition holds exactly and ``s`` is at most an ulp or two above the exact
    calibration. (The double-precision evaluation alone cancels when δ ≪ Φ(a), e.g. ε =
    0.001 and δ = 1e-300, and its root can miss by ~1e-6 relative in δ.)

    Parameters
    ----------
    eps : float or array_like of float, in (0, ∞]
        ``ε = ∞`` gives s = 0.
    delta : float in (0, 1)
    l2_sensitivity : float in [1e-100, 1e100] (``SENSITIVITY_RANGE``)
        √2 for a histogram under replacement.

    Returns
    -------
    float or ndarray (same shape as ``eps``)
    """
    eps_arr, scalar = check_eps(eps)
    delta = check_delta(delta)
    sens = _check_sensitivity("l2_sensitivity", l2_sensitivity)
    log_delta = math.log(delta)
    ctx = _mp()
    target = ctx.mpf(delta)
    out = np.empty(eps_arr.shape)
    for i, e in enumerate(eps_arr):
        e = float(e)
        if math.isinf(e):
            out[i] = 0.0
            continue

        def excess(t, e=e):
            return _gaussian_log_delta(math.exp(t), e, sens) - log_delta

        lo = hi = math.log(sens)
        # δ(s) decreases from 1 (s → 0) to 0 (s → ∞): the brackets stop at the edge of the
        # float range with a clear message instead of running away.
        while excess(lo) <= 0.0:
            lo -= 1.0
            if lo < -700.0:
                raise ValueError(f"eps = {e!r} is too large for the Gaussian calibration: the noise SD "
                                 f"underflows (below ~1e-304 × l2_sensitivity)")
        while excess(hi) > 0.0:
            hi += 1.0
            if hi > 700.0:  # pragma: no cover - excess(hi) ≤ 0 well before for δ ≥ 1e-308
                raise ValueError(f"eps = {e!r}, delta = {delta!r}: the noise SD overflows")
        if not _gaussian_delta_upper(sys.float_info.max, e, sens) <= target:
            # The double-precision bracket can close on a δ that only rounding made small
            # enough (δ and ε near the smallest floats): no float noise SD meets the target.
            raise ValueError(f"eps = {e!r}, delta = {delta!r}: the noise SD the Gaussian calibration needs "
                             f"exceeds the float range")
        t = optimize.brentq(excess, lo, hi, xtol=1e-14, rtol=1e-15, maxiter=500)
        guess = _gaussian_sigma_newton(ctx, math.exp(t), e, sens, delta)
        out[i] = _smallest_float_where(lambda s, e=e: _gaussian_delta_upper(s, e, sens) <= target,
                                       guess, 5e-324, sys.float_info.max)
    return float(out[0]) if scalar else out


def _dirichlet_sampling_epsilon_one(alpha: float, delta: float, l2_sq: float, linf: float, *,
                                    safe: bool = True) -> float:
    """Seed 003, Theorem 2: ε = min over γ ∈ (0, γ_M] of f(γ) (eqs. 6–8); see the public docstring.

    ``safe``: evaluate f at the computed minimiser at 50 digits and round up (the value
    returned is then never below the exact minimum); ``False`` gives the double-precision
    value, for root-finding.
    """
    log_inv_delta = -math.log(delta)
    half = 0.5 * l2_sq

    def rho(u):  # ρ(γ) with u = α − γ, so that α − γ keeps full precision near γ → α
        return half * float(special.polygamma(1, u))

    # γ_M solves log(1/δ) = γ²ρ(γ)/Δ∞²; h decreases in u = α − γ from +∞ (u → 0) to −log(1/δ) (u = α).
    def h(u):
        return (alpha - u) ** 2 * rho(u) / linf ** 2 - log_inv_delta

    u_lo = alpha
    while h(u_lo) <= 0.0:
        u_lo *= 0.5
        if u_lo < 1e-300:  # pragma: no cover - h → +∞ as u → 0
            raise RuntimeError("could not bracket gamma_M")
    u_m = optimize.brentq(h, u_lo, alpha, xtol=1e-300, rtol=1e-15, maxiter=1000)
    gamma_max = alpha - u_m

    def f(gamma):  # eq. (7)
        return rho(alpha - gamma) * (gamma / linf + 1.0) + log_inv_delta * linf / gamma

    def f_prime(gamma):  # f is convex on (0, γ_M]: its derivative is increasing
        u = alpha - gamma
        return (half * (float(special.polygamma(1, u)) / linf
                        - float(special.polygamma(2, u)) * (gamma / linf + 1.0))
                - log_inv_delta * linf / gamma ** 2)

    if f_prime(gamma_max) <= 0.0:
        gamma_min = gamma_max
    else:
        g_lo = gamma_max
        while f_prime(g_lo) >= 0.0:
            g_lo *= 0.5
        gamma_min = optimize.brentq(f_prime, g_lo, gamma_max, xtol=1e-300, rtol=1e-15, maxiter=1000)
    if not safe:
        return f(gamma_min)
    # f(γ) = ρ(γ)λ + log(1/δ)/(λ − 1) at λ = γ/Δ∞ + 1, an admissible pair for every
    # γ ∈ (0, α): a valid ε wherever the computed minimiser lands. Its 50-digit value,
    # widened and rounded up, is therefore never below the exact minimum.
    gamma_min = min(max(gamma_min, 5e-324), math.nextafter(alpha, 0.0))
    ctx = _mp()
    g = ctx.mpf(gamma_min)
    value = (ctx.mpf(half) * ctx.psi(1, ctx.mpf(alpha) - g) * (g / linf + 1)
             - ctx.log(ctx.mpf(delta)) * linf / g)
    return _float_up(ctx, _widen_up(ctx, value))


def dirichlet_sampling_epsilon(alpha, delta, *, l2_sq: float = 2.0, linf: float = 1.0):
    """ε of one Dirichlet posterior draw :math:`p\\sim\\mathrm{Dir}(C+\\alpha)` at δ (SPEC §4.5, §7).

    Seed 003 (Theorem 1, Corollary/Theorem 2, eqs. 6–8): the draw is
    :math:`(\\rho(\\gamma), \\gamma/\\Delta_\\infty + 1)`-tCDP for every
    :math:`\\gamma\\in(0,\\alpha)` with :math:`\\rho(\\gamma)=\\tfrac12\\Delta_2^2\\psi'(\\alpha-\\gamma)`,
    hence (ε, δ)-DP with

    .. math::

        \\varepsilon(\\delta) = \\min_{\\gamma,\\lambda}\\ \\rho(\\gamma)\\lambda + \\frac{\\log(1/\\delta)}{\\lambda-1},
        \\qquad \\gamma\\in(0,\\alpha),\\ \\lambda\\in(1,\\gamma/\\Delta_\\infty+1].

    The inner minimum over λ is eq. (6); over γ it is attained on :math:`(0,\\gamma_M]`
    where :math:`\\log(1/\\delta)=\\gamma_M^2\\rho(\\gamma_M)/\\Delta_\\infty^2`, and there it
    is the minimum of the convex function (eq. 7)

    .. math:: f(\\gamma)=\\rho(\\gamma)\\Big(\\frac{\\gamma}{\\Delta_\\infty}+1\\Big)+\\frac{\\log(1/\\delta)\\Delta_\\infty}{\\gamma},

    found by solving :math:`f'(\\gamma)=0` with Brent's method (eq. 8). Any ``m`` draws
    from ``p`` are post-processing, so the guarantee does not depend on ``m``. Rounded up:
    f is evaluated at the computed minimiser at 50 digits (ψ′ from mpmath) and returned as
    the float above, so ε is never below the exact minimum and exceeds it only by the
    (second-order) error of the minimiser.

    Parameters
    ----------
    alpha : float or array_like of float in [1e-10, 1e10] (``DIRICHLET_ALPHA_RANGE``)
        Symmetric prior weight per cell (for a non-symmetric prior pass :math:`\\min_i\\alpha_i`).
        An array gives the curve ε(α).
    delta : float or array_like of float in (0, 1)
        Broadcast against ``alpha``.
    l2_sq, linf : float > 0
        :math:`\\Delta_2^2` and :math:`\\Delta_\\infty`: 2 and 1 for a histogram under replacement.

    Returns
    -------
    float, or ndarray of the broadcast shape
    """
    l2_sq = _check_sensitivity("l2_sq", l2_sq)
    linf = _check_sensitivity("linf", linf)
    scalar = np.ndim(alpha) == 0 and np.ndim(delta) == 0
    try:
        a_arr, d_arr = np.broadcast_arrays(np.asarray(alpha, dtype=float), np.asarray(delta, dtype=float))
    except (TypeError, ValueError):
        raise ValueError(f"alpha and delta must be numbers that broadcast together, got shapes "
                         f"{np.shape(alpha)} and {np.shape(delta)}") from None
    if a_arr.size > 10_000:
        raise ValueError(f"alpha and delta give {a_arr.size} pairs; at most 10000 per call")
    out = np.empty(a_arr.shape)
    lo_alpha, hi_alpha = DIRICHLET_ALPHA_RANGE
    for idx in np.ndindex(a_arr.shape):
        a = check_real("alpha", float(a_arr[idx]), low=lo_alpha, high=hi_alpha)
        d = check_delta(float(d_arr[idx]))
        out[idx] = _dirichlet_sampling_epsilon_one(a, d, l2_sq, linf)
    return float(out) if scalar else out


def dirichlet_sampling_alpha(eps, delta, *, l2_sq: float = 2.0, linf: float = 1.0) -> float:
    """Smallest symmetric prior α with ``dirichlet_sampling_epsilon(α, δ) ≤ ε`` (SPEC §4.5).

    ε(α, δ) decreases in α (ψ′ decreases and the range of γ grows), so the root of
    :math:`\\varepsilon(\\alpha,\\delta)=\\varepsilon` is found by Brent's method on
    :math:`\\log\\alpha` in double precision, then the smallest float α nearby whose
    rounded-up ε (:func:`dirichlet_sampling_epsilon`) is at most ``eps`` is returned.

    Parameters
    ----------
    eps : float in (0, ∞)
    delta : float in (0, 1)

    Returns
    -------
    float in ``DIRICHLET_ALPHA_RANGE``; ``ValueError`` if ε needs a larger α
    """
    eps = check_finite_eps(eps)
    delta = check_delta(delta)
    l2_sq = _check_sensitivity("l2_sq", l2_sq)
    linf = _check_sensitivity("linf", linf)
    a_min, a_max = DIRICHLET_ALPHA_RANGE
    t_min, t_max = math.log(a_min), math.log(a_max)

    def meets(alpha):
        return _dirichlet_sampling_epsilon_one(alpha, delta, l2_sq, linf) <= eps

    def excess(t):
        return _dirichlet_sampling_epsilon_one(math.exp(t), delta, l2_sq, linf, safe=False) - eps

    if not meets(a_max):
        raise ValueError(f"eps = {eps!r} at delta = {delta!r} needs a prior weight alpha above "
                         f"{a_max:g} (DIRICHLET_ALPHA_RANGE); raise eps or delta")
    if meets(a_min):
        return a_min  # every α in the range meets ε: the smallest is returned
    # The double-precision ε locates the root; near an end of the range it may disagree
    # with the rounded-up one by an ulp, and the end itself is then the guess.
    if excess(t_min) <= 0.0:
        guess = a_min
    elif excess(t_max) > 0.0:
        guess = a_max
    else:
        lo = hi = 0.0
        while excess(lo) <= 0.0:
            lo = max(lo - 2.0, t_min)
        while excess(hi) > 0.0:
            hi = min(hi + 2.0, t_max)
        guess = math.exp(optimize.brentq(excess, lo, hi, xtol=1e-13, rtol=1e-15, maxiter=500))
    return _smallest_float_where(meets, guess, a_min, a_max)


def dirichlet_multinomial_alpha(eps, m) -> float:
    """Prior weight per cell making the Dirichlet–multinomial release globally ε-DP (SPEC §4.4).

    The release :math:`S\\sim\\mathrm{DirMult}(m, C+\\alpha)` is globally ε-DP iff
    :math:`m\\le(e^{\\varepsilon}-1)\\alpha` (SPEC §3.3: the worst neighbour empties a
    singleton cell and all ``m`` draws land in it), so

    .. math:: \\alpha = \\frac{m}{e^{\\varepsilon}-1},

    returned as the smallest float α (at least the smallest normal float) for which the
    condition holds at 50 digits with a 1e-35 relative margin — hence exactly — and for
    which :math:`\\log(1+m/\\alpha)\\le\\varepsilon` also holds in floating point.

    Parameters
    ----------
    eps : float in (0, ∞)
    m : int in [1, 2**53]

    Returns
    -------
    float > 0 (``ValueError`` when m/(e^ε − 1) exceeds the float range)
    """
    eps = check_finite_eps(eps)
    m = check_integer("m", m, minimum=1, maximum=MAX_RECORDS)
    # In log space: for ε beyond ~709, e^ε − 1 overflows and m/(e^ε − 1) may underflow.
    log_expm1 = math.log(math.expm1(eps)) if eps < 700.0 else eps + math.log1p(-math.exp(-eps))
    log_alpha = math.log(m) - log_expm1
    if log_alpha > 709.0:
        raise ValueError(f"eps = {eps!r} is too small for m = {m}: the prior weight m/(e^eps - 1) exceeds the "
                         "largest float")
    ctx = _mp()
    # e^ε − 1 ≥ e^min(ε, 1000) − 1: a lower bound, so a check with it is sufficient;
    # beyond ε = 1000 the answer is the smallest normal float anyway.
    growth = ctx.expm1(min(ctx.mpf(eps), 1000))
    shrink = 1 - ctx.mpf(10) ** -_MP_SLACK_DIGITS

    def meets(alpha):
        return growth * ctx.mpf(alpha) * shrink >= m and _log1p_ratio(m, alpha) <= eps

    tiny = float(np.finfo(float).tiny)
    guess = max(tiny, _float_up(ctx, _widen_up(ctx, m / growth)))
    return _smallest_float_where(meets, guess, tiny, sys.float_info.max)


def _log1p_ratio(m: float, alpha: float) -> float:
    """log(1 + m/α) without overflow for tiny α (double precision)."""
    if alpha > m * 1e-300:
        return math.log1p(m / alpha)
    return math.log(m) - math.log(alpha) + math.log1p(alpha / m)


# ================================================ truncated Dirichlet (seed 001, issue 11)
def truncated_dirichlet_epsilon(p_min, cells) -> float:
    """Pure ε of one draw from a Dirichlet posterior truncated to :math:`\\{p_j \\ge p_{\\min}\\}`.

    docs/bayesian_family.md §1. Under replacement of one record (cell a → cell b) the
    posterior density ratio at ``p`` is :math:`\\frac{p_a}{p_b}\\,E_x[p_b/p_a]`, and on the
    truncated simplex :math:`p_a/p_b \\le (1-(K-1)p_{\\min})/p_{\\min}`, so every draw is
    pure ε-DP, for every dataset and every prior supported there, with

    .. math:: \\varepsilon = 2\\log\\frac{1-(K-1)\\,p_{\\min}}{p_{\\min}}
              = 2\\log\\big(1/p_{\\min} - (K-1)\\big),

    at most the seed's :math:`2L = 2\\log(1/p_{\\min})` (Dimitrakakis et al. 2017, Lemma 24).
    The constant is approached as n → ∞ (see the tests), so it cannot be lowered for all n.
    Evaluated at 50 digits and rounded up to a float: in double precision
    :math:`1/p_{\\min}-(K-1)` cancels when :math:`p_{\\min}` is near 1/K.

    Parameters
    ----------
    p_min : float in (0, 1/cells]
    cells : int in [1, MAX_CELLS]

    Returns
    -------
    float ≥ 0 (0 when p_min = 1/cells: the only admissible p is uniform)
    """
    cells = check_integer("cells", cells, minimum=1, maximum=MAX_CELLS)
    p_min = check_real("p_min", p_min, low=0.0, high=1.0 / cells, low_open=True)
    if cells == 1:
        return 0.0
    ctx = _mp()
    p = ctx.mpf(p_min)
    value = 2 * ctx.log((1 - (cells - 1) * p) / p)
    return _float_up(ctx, _widen_up(ctx, value)) if value > 0 else 0.0


def truncated_dirichlet_p_min(eps, cells) -> float:
    """Smallest truncation :math:`p_{\\min}` whose draw is ε-DP: :math:`1/(K - 1 + e^{\\varepsilon/2})`.

    The inverse of :func:`truncated_dirichlet_epsilon`: the smallest float ``p`` for which
    that function (itself rounded up) returns at most ``eps``.

    Parameters
    ----------
    eps : float in (0, 700]
    cells : int in [1, MAX_CELLS]

    Returns
    -------
    float in (0, 1/cells]; ``ValueError`` when ε is so small that no float below 1/cells
    meets it (ε under ~2·cells·2^-53, where the float nearest 1/K is already too far from it)
    """
    eps = check_real("eps", eps, low=0.0, high=700.0, low_open=True)
    cells = check_integer("cells", cells, minimum=1, maximum=MAX_CELLS)
    if cells == 1:
        return 1.0
    top = 1.0 / cells

    def meets(p):
        return truncated_dirichlet_epsilon(p, cells) <= eps

    if not meets(top):
        raise ValueError(f"eps = {eps!r} is too small for cells = {cells}: even p_min = 1/cells rounded to a "
                         f"float gives eps = {truncated_dirichlet_epsilon(top, cells)!r}")
    ctx = _mp()
    guess = _float_up(ctx, _widen_up(ctx, 1 / (cells - 1 + ctx.exp(ctx.mpf(eps) / 2))))
    return _smallest_float_where(meets, min(guess, top), 5e-324, top)


def _inverse_digamma(y: float) -> float:
    """x > 0 with ψ(x) = y (Newton from Minka's starting point; 12 steps reach full precision)."""
    x = math.exp(y) + 0.5 if y >= -2.22 else -1.0 / (y + 0.5772156649015329)
    for _ in range(12):
        x -= (float(special.digamma(x)) - y) / float(special.polygamma(1, x))
        x = max(x, 1e-300)
    return x


#: Reach of the proposal tables, in standard deviations: the omitted terms weigh less than
#: e^{-800} of their cell's table, far below what a double-precision uniform can select.
_TABLE_REACH = 40.0


class TruncatedDirichlet:
    """Exact sampler of :math:`\\mathrm{Dir}(a)` restricted to :math:`\\{p : p_j \\ge q_j\\ \\forall j\\}`.

    docs/bayesian_family.md §1.3. Write :math:`p = q + s\\,u` with :math:`s = 1-\\sum_j q_j`
    and :math:`u` on the simplex; the target is :math:`\\pi(u)\\propto\\prod_j(c_j+u_j)^{M_j}`
    with :math:`c_j = q_j/s`, :math:`M_j = a_j - 1 \\ge 0`. Split :math:`M_j = N_j+\\varphi_j`
    (integer and fractional parts) and bound the concave :math:`(c+u)^{\\varphi}` by its
    tangent :math:`A_j + B_j u` at a typical point. The envelope
    :math:`\\prod_j (c_j+u_j)^{N_j}(A_j+B_ju_j)` expands (binomial theorem) into a finite
    mixture of Dirichlet kernels :math:`\\prod_j u_j^{g_j}`, :math:`g_j = N_j - f_j + e_j`,
    with weights :math:`\\prod_j w_j(f_j,e_j)/\\Gamma(G+K)`, :math:`G=\\sum_j g_j`. A draw:

    1. the mixture index, by rejection: independent proposals
       :math:`\\propto w_j(f_j,e_j)\\,r^{g_j}` per cell (inverse-CDF tables), accepted with
       probability :math:`h(G)/\\max h`, :math:`h(G) = r^{-G}/\\Gamma(G+K)` (log-concave);
    2. :math:`u\\sim\\mathrm{Dir}(g+1)` (normalised Gammas);
    3. accepted with probability :math:`\\prod_j (c_j+u_j)^{\\varphi_j}/(A_j+B_ju_j) \\le 1`.

    Each step is an exact rejection or an exact draw, so the accepted ``p`` follows the
    truncated Dirichlet exactly — no Markov chain, no burn-in. ``r`` (tuned so that the
    proposal's mean G sits at the maximiser of h) and the tangent points affect only the
    speed. The tests compare it with plain rejection from the untruncated Dirichlet.

    Parameters
    ----------
    alpha : array_like of float in [1, 1e12], shape (K,)
        Dirichlet parameters (posterior counts plus prior); ≥ 1 so that every factor
        :math:`p_j^{a_j-1}` is bounded on the simplex.
    lower : array_like of float ≥ 0, shape (K,)
        Truncation :math:`q_j`; :math:`\\sum_j q_j < 1`.
    """

    def __init__(self, alpha, lower):
        a = np.asarray(alpha, dtype=float)
        q = np.asarray(lower, dtype=float)
        if a.ndim != 1 or a.size == 0 or a.size > MAX_CELLS:
            raise ValueError(f"alpha must be a 1-D array of 1 to {MAX_CELLS} Dirichlet parameters, got shape {a.shape}")
        if not np.all(np.isfinite(a)) or a.min() < 1.0 or a.max() > 1e12:
            raise ValueError(f"alpha must lie in [1, 1e12], got values in [{a.min()!r}, {a.max()!r}]")
        if q.shape != a.shape or not np.all(np.isfinite(q)) or q.min() < 0.0:
            raise ValueError(f"lower must be finite and >= 0 with the shape of alpha {a.shape}, got {q.shape}")
        s = 1.0 - math.fsum(q.tolist())
        if not s > 1e-12:
            raise ValueError(f"lower must sum to less than 1 (leave room for the simplex), got sum {1.0 - s!r}")
        self.alpha, self.lower, self.scale, self.cells = a, q, s, a.size
        M = a - 1.0
        # Cells whose factor (c + u)^M is not constant: a truncation and M > 0. The others are
        # plain Dirichlet factors u^M (a cell with M = 0 contributes 1 whatever its truncation,
        # which the affine map already enforces).
        self.floor = np.flatnonzero((q > 0) & (M > 0))
        self.free = np.flatnonzero((q <= 0) | (M <= 0))
        self.g_free = M[self.free]
        Mf = M[self.floor]
        self.N = np.floor(Mf)
        self.phi = Mf - self.N
        self.logc = np.log(q[self.floor]) - math.log(s)
        c = np.exp(self.logc)
        # tangent point: the untruncated posterior mean, mapped into u (only speed depends on it)
        total = max(float(M.sum()), 1.0)
        t = np.maximum(Mf / total - q[self.floor], 0.0) / s
        with np.errstate(divide="ignore"):
            self.log_a = np.where(self.phi > 0, (self.phi - 1.0) * np.log(c + t) + np.log(c + (1.0 - self.phi) * t), 0.0)
            self.log_b = np.where(self.phi > 0, np.log(self.phi) + (self.phi - 1.0) * np.log(c + t), -np.inf)
        self._tune()

    # ---------------------------------------------------------------- proposal tables
    def _tables(self, log_r: float, reach: float):
        """Per floor cell, the support (f, e) of the proposal ∝ w(f, e) r^g, concatenated.

        Returns (start (F,), size (F,), g (T,), cdf (T,)) with the within-cell CDFs."""
        N, logc = self.N, self.logc
        with np.errstate(over="ignore"):
            lam = np.exp(np.minimum(logc - log_r, 700.0))
        mode = np.minimum(N, np.floor(lam))
        width = np.ceil(reach * np.sqrt(np.maximum(np.minimum(lam, N), 1.0)) + 5.0 * reach)
        lo = np.maximum(0.0, mode - width)
        hi = np.minimum(N, mode + width)
        two = (self.phi > 0).astype(np.int64)
        size = ((hi - lo + 1.0).astype(np.int64)) * (1 + two)
        start = np.concatenate([[0], np.cumsum(size)[:-1]])
        cell = np.repeat(np.arange(N.size), size)
        pos = np.arange(int(size.sum())) - start[cell]
        span = (hi - lo + 1.0).astype(np.int64)[cell]
        e = (pos >= span).astype(float)
        f = lo[cell] + (pos - span * e.astype(np.int64))
        Nc = N[cell]
        g = Nc - f + e
        logw = (-special.gammaln(f + 1.0) + f * logc[cell] + g * log_r
                + np.where(e > 0, np.log(Nc - f + 1.0) + self.log_b[cell], self.log_a[cell]))
        top = np.full(N.size, -np.inf)
        np.maximum.at(top, cell, logw)
        w = np.exp(logw - top[cell])
        cum = np.cumsum(w)
        base = np.concatenate([[0.0], cum])[start]
        cell_total = np.add.reduceat(w, start) if w.size else w
        cdf = (cum - base[cell]) / cell_total[cell]
        return start, size, g, cdf, w / cell_total[cell]

    def _log_h(self, G, log_r):
        return -G * log_r - special.gammaln(G + self.cells)

    def _g_star(self, log_r):
        return max(_inverse_digamma(-log_r) - self.cells, 0.0)

    def _tune(self):
        g_fixed = float(self.g_free.sum())
        self.g_fixed = g_fixed
        if self.floor.size == 0:
            self.log_r, self.log_h_max = 0.0, 0.0
            self.tables = None
            return

        def excess(log_r):
            start, size, g, _, p = self._tables(log_r, 8.0)
            return float((p * g).sum()) + g_fixed - self._g_star(log_r)   # no BLAS call: cheaper here

        lo, hi = -1.0, 1.0
        while excess(lo) > 0.0 and lo > -700.0:
            lo -= 8.0
        while excess(hi) < 0.0 and hi < 700.0:
            hi += 8.0
        for _ in range(30):
            mid = 0.5 * (lo + hi)
            if excess(mid) > 0.0:
                hi = mid
            else:
                lo = mid
        self.log_r = 0.5 * (lo + hi)
        self.tables = self._tables(self.log_r, _TABLE_REACH)
        g_star = self._g_star(self.log_r)
        # h is log-concave in G, maximal at G*; a 1e-9 margin keeps the acceptance ≤ 1
        self.log_h_max = float(self._log_h(g_star, self.log_r)) + 1e-9
        self.g_fixed = g_fixed

    def _pick(self, u):
        """Inverse-CDF lookup in every floor cell's table: u shape (b, F) → g shape (b, F)."""
        start, size, g, cdf, _ = self.tables
        lo = np.broadcast_to(start, u.shape).copy()
        hi = lo + size - 1
        while True:  # vectorised binary search for the first cdf entry ≥ u
            active = lo < hi
            if not active.any():
                break
            mid = (lo + hi) // 2
            go_right = cdf[mid] < u
            lo = np.where(active & go_right, mid + 1, lo)
            hi = np.where(active & ~go_right, mid, hi)
        return g[lo]

    def sample(self, size, rng: np.random.Generator, *, max_proposals: int = 10**7) -> np.ndarray:
        """``size`` independent exact draws, shape (size, K).

        Raises ``RuntimeError`` if more than ``max_proposals`` proposals are needed (the
        acceptance rate would make the call hang), rather than returning anything inexact.
        """
        size = check_integer("size", size, minimum=1, maximum=10**7)
        rng = check_rng(rng)
        K = self.cells
        out = np.empty((size, K))
        done = proposals = 0
        rate = 0.5
        while done < size:
            need = size - done
            # proposals per pass: enough for the remaining draws, at most ~4M cells × rows at once
            b = int(min(max(16, 2 * need / max(rate, 1e-3)), max(1, (1 << 22) // K)))
            proposals += b
            if proposals > max_proposals:
                raise RuntimeError(f"truncated Dirichlet: more than {max_proposals} proposals for {size} draws "
                                   f"(acceptance {rate:.2g}); this truncation is too extreme for the exact sampler")
            gam_shape = np.empty((b, K))
            gam_shape[:, self.free] = self.g_free + 1.0
            if self.floor.size:
                g_floor = self._pick(rng.random((b, self.floor.size)))
                G = g_floor.sum(axis=1) + self.g_fixed
                keep = np.log(rng.random(b)) < self._log_h(G, self.log_r) - self.log_h_max
                gam_shape[:, self.floor] = g_floor + 1.0
                gam_shape = gam_shape[keep]
            u = rng.standard_gamma(gam_shape)
            u /= u.sum(axis=1, keepdims=True)
            frac = np.flatnonzero(self.phi > 0)
            if frac.size and u.shape[0]:
                uf = u[:, self.floor[frac]]
                c = np.exp(self.logc[frac])
                log_ratio = (self.phi[frac] * np.log(c + uf)
                             - np.logaddexp(self.log_a[frac], self.log_b[frac] + np.log(np.maximum(uf, 1e-300))))
                u = u[np.log(rng.random(u.shape[0])) < np.minimum(log_ratio, 0.0).sum(axis=1)]
            take = min(u.shape[0], need)
            out[done:done + take] = self.lower + self.scale * u[:take]
            done += take
            rate = 0.8 * rate + 0.2 * (u.shape[0] / b)
        return out


def truncated_dirichlet(alpha, lower, size, rng: np.random.Generator) -> np.ndarray:
    """``size`` exact draws of Dir(alpha) restricted to {p_j ≥ lower_j} (see :class:`TruncatedDirichlet`)."""
    return TruncatedDirichlet(alpha, lower).sample(size, rng)


# ======================================================================= interface
@dataclass(frozen=True)
class Guarantee:
    """The privacy guarantee a mechanism states.

    Attributes
    ----------
    kind : {"pure", "approximate", "none"}
        Pure ε-DP (δ = 0), approximate (ε, δ)-DP, or no privacy.
    scope : {"global", "instance", "local", "none"}
        Global: holds for every dataset of size n. Instance: only at the dataset released.
        Local: a data-dependent bound computed from the observed records (seed 004), which
        contracts to a global guarantee only as n → ∞ — not a DP guarantee for this n, and
        never reported as meeting a target.
    eps : float
        ε actually guaranteed (∞ for no privacy).
    delta : float
        δ actually guaranteed (0 for pure DP, 1 for no privacy).
    notion : str
        How the guarantee is obtained, in a few words, for the UI.
    """

    kind: str
    scope: str
    eps: float
    delta: float
    notion: str

    def __post_init__(self):
        if self.kind not in ("pure", "approximate", "none"):
            raise ValueError(f"kind must be 'pure', 'approximate' or 'none', got {self.kind!r}")
        if self.scope not in ("global", "instance", "local", "none"):
            raise ValueError(f"scope must be 'global', 'instance', 'local' or 'none', got {self.scope!r}")

    @property
    def is_private(self) -> bool:
        return self.kind != "none"

    @property
    def label(self) -> str:
        """A one-line statement for the UI, e.g. ``"pure ε-DP, global (ε = 2.5)"``.

        ε and δ are rounded up (:func:`core.plots.format_upper`): a printed guarantee is
        never stronger than the computed one.
        """
        if self.kind == "none":
            return "no privacy"
        if self.scope == "local":
            return (f"local, data-dependent ε = {format_upper(self.eps, 6)} "
                    "(computed from the data; not a DP guarantee for this n)")
        if self.kind == "pure":
            return f"pure ε-DP, {self.scope} (ε = {format_upper(self.eps, 6)})"
        return (f"approximate (ε, δ)-DP, {self.scope} (ε = {format_upper(self.eps, 6)}, "
                f"δ = {format_upper(self.delta, 3)})")


@dataclass(frozen=True)
class Knob:
    """One calibrated parameter of a mechanism and why it has that value."""

    parameter: str
    value: float
    reason: str


class Mechanism(ABC):
    """Common interface of every mechanism compared in the dashboard.

    Subclasses set :attr:`name` (a stable key) and :attr:`label` (display name), state
    their :attr:`guarantee`, list their calibrated parameters with :meth:`knobs`, and
    release synthetic data from confidential data on :math:`[0,1]^d`.
    """

    name: str = ""
    label: str = ""

    @property
    @abstractmethod
    def guarantee(self) -> Guarantee:
        """The guarantee stated for releases of any size this object accepts."""

    @abstractmethod
    def knobs(self, n: int, m: int, d: int = 1) -> list[Knob]:
        """Calibrated parameters for ``n`` confidential records, ``m`` released points, ``d`` columns."""

    @abstractmethod
    def release_runs(self, data, m, runs, rng, *, counts=None) -> np.ndarray:
        """``runs`` independent releases of ``m`` points.

        The confidential data are either the ``n`` records themselves (``counts=None``) or
        a frequency table: ``data`` holds rows (typically the ``k`` distinct rows,
        ``prepared.table.atoms``) and ``counts`` how many records each row stands for, so
        that the data are ``numpy.repeat(data, counts, axis=0)`` with
        :math:`n = \\sum_i` ``counts[i]``. From a table every mechanism costs
        :math:`O(k + \\text{runs}\\cdot m)` (never the ``n`` rows), and its release has the
        same law as from the repeated rows.

        Parameters
        ----------
        data : ndarray, shape (n,) or (n, d), values in [0, 1]
            Records, or the rows of a frequency table (then shape (k,) or (k, d)).
        m : int ≥ 1
        runs : int ≥ 1
        rng : numpy.random.Generator
        counts : array_like of int ≥ 1, shape (k,), optional
            Multiplicities of the rows of ``data``; ``None``: one record per row.

        Returns
        -------
        ndarray, shape (runs, m) for 1-D data, (runs, m, d) otherwise
        """

    def release(self, data, m, rng, *, counts=None) -> np.ndarray:
        """One release of ``m`` points: shape (m,) for 1-D data, (m, d) otherwise (``counts``
        as in :meth:`release_runs`)."""
        return self.release_runs(data, m, 1, rng, counts=counts)[0]


def check_release_arguments(data, m, runs, rng, counts=None) -> tuple[np.ndarray, np.ndarray | None, int, int,
                                                                      np.random.Generator, int]:
    """Validate the arguments of :meth:`Mechanism.release_runs` in one place.

    Returns ``(x, counts, m, runs, rng, d)``: the data on the unit box, their multiplicities
    (``None`` for records, else ``int64`` of shape (len(x),), each ≥ 1, summing to at most
    ``MAX_RECORDS``), the release size, the number of runs, the generator and the number of
    columns; refuses a call above ``MAX_RELEASE_VALUES``.
    """
    x = check_unit_data(data)
    counts = check_row_counts(counts, x.shape[0], minimum=1)
    m = check_release_size(m)
    runs = check_integer("runs", runs, minimum=1)
    rng = check_rng(rng)
    d = 1 if x.ndim == 1 else x.shape[1]
    check_release_budget(runs, m, d)
    return x, counts, m, runs, rng, d


def distinct_rows(x: np.ndarray, counts: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The frequency table (sorted distinct rows, multiplicities) of validated release data.

    One reduction for records and for tables (:func:`core.data.frequency_table`, which adds
    the counts of repeated rows), so a mechanism that works on the table gives the same
    release from the records as from their table.
    """
    # deferred: core.data imports core.mechanisms, which imports this module
    from .data import frequency_table

    table = frequency_table(x, counts)
    return table.atoms, table.counts


# ================================================================ histogram helpers
def _cell_shape(bins: int, d: int) -> int:
    cells = bins ** d
    if cells > MAX_CELLS:
        raise ValueError(f"bins must satisfy bins**d <= {MAX_CELLS} cells; got bins={bins} with d={d} "
                         f"columns ({cells} cells)")
    return cells


def histogram_counts(data, bins, *, counts=None) -> np.ndarray:
    """Cell counts :math:`C_j` of data on :math:`[0,1]^d` with ``bins`` equal bins per axis.

    Bin ``b`` of an axis is :math:`[b/B, (b+1)/B)`, the last one closed at 1. Cells are
    numbered in C order of the per-axis bin indices (``numpy.ravel_multi_index``).

    Parameters
    ----------
    data : array_like, shape (n,) or (n, d), values in [0, 1]
        Records, or the rows of a frequency table (with ``counts``).
    bins : int ≥ 1
    counts : array_like of int ≥ 1, shape (k,), optional
        Multiplicities of the rows of ``data``: :math:`C_j = \\sum_{i \\in j}` ``counts[i]``,
        the cell counts of the repeated rows at cost O(k).

    Returns
    -------
    ndarray of int64, shape (bins**d,)
    """
    x = check_unit_data(data)
    bins = check_bins(bins)
    counts = check_row_counts(counts, x.shape[0], minimum=1)
    x2 = x.reshape(x.shape[0], -1)
    d = x2.shape[1]
    cells = _cell_shape(bins, d)
    idx = np.minimum((x2 * bins).astype(np.int64), bins - 1)
    flat = np.ravel_multi_index(tuple(idx.T), (bins,) * d) if d > 1 else idx[:, 0]
    if counts is None:
        return np.bincount(flat, minlength=cells).astype(np.int64)
    # Float64 sums of integers are exact below 2**53 (counts sum to at most MAX_RECORDS).
    return np.bincount(flat, weights=counts.astype(np.float64), minlength=cells).astype(np.int64)


def cells_to_points(cell_counts, bins: int, d: int, rng: np.random.Generator, *,
                    squeeze: bool = True) -> np.ndarray:
    """Uniform points inside cells, given how many land in each cell, in random order.

    Parameters
    ----------
    cell_counts : ndarray of int ≥ 0, shape (runs, bins**d)
        Each row sums to the same ``m`` in [1, MAX_RELEASE_SIZE]; runs × m × d ≤ MAX_RELEASE_VALUES.
    bins, d : int
    rng : numpy.random.Generator
    squeeze : bool
        Return shape (runs, m) when ``d == 1``.

    Returns
    -------
    ndarray, shape (runs, m) or (runs, m, d)
    """
    counts = check_counts(cell_counts, "cell_counts", maximum=MAX_RELEASE_SIZE)
    bins = check_bins(bins)
    d = check_integer("d", d, minimum=1)
    rng = check_rng(rng)
    if counts.ndim != 2 or counts.shape[0] == 0 or counts.shape[1] != _cell_shape(bins, d):
        raise ValueError(f"cell_counts must have shape (runs, bins**d) = (runs, {bins}**{d}), got {counts.shape}")
    runs, cells = counts.shape
    totals = counts.sum(axis=1)
    m = int(totals[0])
    if m < 1 or np.any(totals != m):
        raise ValueError(f"every row of cell_counts must sum to the same m >= 1, got sums in "
                         f"[{int(totals.min())}, {int(totals.max())}]")
    check_release_budget(runs, check_release_size(m), d)
    occupied = np.flatnonzero(counts.ravel())  # memory O(runs·m), not O(runs·cells)
    flat = np.repeat(occupied % cells, counts.ravel()[occupied]).reshape(runs, m)
    flat = rng.permuted(flat, axis=1)
    if d == 1:
        idx = flat[..., None]
    else:
        idx = np.stack(np.unravel_index(flat, (bins,) * d), axis=-1)
    points = (idx + rng.random(idx.shape)) / bins
    return points[..., 0] if (d == 1 and squeeze) else points


def _normalise_rows(weights: np.ndarray) -> np.ndarray:
    """Rows divided by their sums; an all-zero row becomes uniform (SPEC §4.1)."""
    totals = weights.sum(axis=1, keepdims=True)
    empty = totals[:, 0] <= 0
    if empty.any():
        weights = weights.copy()
        weights[empty] = 1.0
        totals = weights.sum(axis=1, keepdims=True)
    return weights / totals


class HistogramMechanism(Mechanism):
    """A histogram baseline: cell probabilities from the counts, then ``m`` uniform-in-cell draws."""

    def __init__(self, bins):
        self.bins = check_bins(bins)

    @abstractmethod
    def cell_probabilities(self, counts: np.ndarray, m: int, runs: int,
                           rng: np.random.Generator) -> np.ndarray:
        """Released cell probabilities, shape (runs, cells), rows summing to one."""

    def release_runs(self, data, m, runs, rng, *, counts=None) -> np.ndarray:
        x, weights, m, runs, rng, d = check_release_arguments(data, m, runs, rng, counts)
        # The mechanism sees the cell counts only: from records or from a table they are equal.
        counts = histogram_counts(x, self.bins, counts=weights)
        # Runs are processed in blocks so that the (runs × cells) probability matrix stays
        # within ~32 MB however many cells there are.
        block = max(1, (1 << 22) // counts.size)
        parts = []
        for start in range(0, runs, block):
            size = min(block, runs - start)
            q = self.cell_probabilities(counts, m, size, rng)
            parts.append(cells_to_points(rng.multinomial(m, q), self.bins, d, rng, squeeze=x.ndim == 1))
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


# ======================================================================= baselines
class LaplaceHistogram(HistogramMechanism):
    """Perturbed histogram with Laplace noise (Wasserman & Zhou 2010; SPEC §4.1).

    :math:`D_j = C_j + \\mathrm{Laplace}(2/\\varepsilon)`, :math:`q_j\\propto\\max(D_j,0)`
    (uniform if every :math:`D_j\\le0`). The noisy counts are pure ε-DP (L1 sensitivity 2
    under replacement); any number of draws from ``q`` is post-processing.

    Parameters
    ----------
    eps : float in (0, ∞)
    bins : int ≥ 1
    """

    name = "laplace_histogram"
    label = "Perturbed histogram (Laplace)"

    def __init__(self, eps, bins):
        super().__init__(bins)
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
    """Perturbed histogram with analytic-Gaussian noise (SPEC §4.2).

    :math:`D_j = C_j + N(0, s^2)` with ``s = gaussian_sigma(ε, δ, √2)``,
    :math:`q_j\\propto\\max(D_j,0)`. (ε, δ)-DP for any ``m``.

    Parameters
    ----------
    eps : float in (0, ∞)
    delta : float in (0, 1)
    bins : int ≥ 1
    """

    name = "gaussian_histogram"
    label = "Perturbed histogram (Gaussian)"

    def __init__(self, eps, delta, bins):
        super().__init__(bins)
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
    """Smoothed histogram (Wasserman & Zhou 2010; SPEC §4.3).

    :math:`q = (1-\\lambda)C/n + \\lambda/k_B` with the smallest admissible λ for the
    ``n`` and ``m`` of each release, :math:`\\lambda_{\\min} = k_B/(k_B + n(e^{\\varepsilon/m}-1))`.
    Pure ε-DP for the ``m`` requested (the guarantee is spent on the draws themselves).

    Parameters
    ----------
    eps : float in (0, ∞)
    bins : int ≥ 1
    """

    name = "smoothed_histogram"
    label = "Smoothed histogram"

    def __init__(self, eps, bins):
        super().__init__(bins)
        self.eps = check_finite_eps(eps)

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee("pure", "global", self.eps, 0.0,
                         "m iid draws from the smoothed histogram; λ depends on m")

    def smoothing(self, n, m, d: int = 1) -> float:
        """λ for ``n`` records, ``m`` draws and ``d`` columns."""
        return smoothed_histogram_lambda(n, _cell_shape(self.bins, d), m, self.eps)

    def knobs(self, n, m, d: int = 1):
        cells = _cell_shape(self.bins, d)
        return [Knob("lambda", self.smoothing(n, m, d),
                     f"λ_min = k_B/(k_B + n(e^(ε/m) − 1)) with k_B = {cells}: smallest λ with "
                     "m·log((1 − λ)k_B/(nλ) + 1) ≤ ε")]

    def cell_probabilities(self, counts, m, runs, rng):
        n = int(counts.sum())
        lam = smoothed_histogram_lambda(n, counts.size, m, self.eps)
        q = (1.0 - lam) * counts / n + lam / counts.size
        return np.broadcast_to(q, (runs, counts.size))


class DirichletMultinomialHistogram(HistogramMechanism):
    """Dirichlet–multinomial synthesiser (Machanavajjhala et al. 2008; SPEC §4.4).

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
    alpha_rule : {"global", "data-dependent"}
    alpha_floor : float > 0
        :math:`\\alpha_0` of the data-dependent rule (thesis: 1e-4).
    """

    name = "dirichlet_multinomial"
    label = "Dirichlet–multinomial"

    def __init__(self, eps, bins, *, alpha_rule: str = "global", alpha_floor: float = 1e-4):
        super().__init__(bins)
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
                     "(worst case: a singleton cell, SPEC §3.3)")]

    def cell_probabilities(self, counts, m, runs, rng):
        alpha = self.alpha(m)
        if self.alpha_rule == "data-dependent":
            prior = np.maximum(self.alpha_floor, alpha - counts)
        else:
            prior = np.full(counts.size, alpha)
        return rng.dirichlet(counts + prior, size=runs)


class DirichletPosteriorSampling(HistogramMechanism):
    """Dirichlet posterior sampling (seed 003; SPEC §4.5).

    Release one :math:`p\\sim\\mathrm{Dir}(C+\\alpha)`; any number ``m`` of draws from
    ``p`` is post-processing. α is the smallest symmetric prior with
    ``dirichlet_sampling_epsilon(α, δ) ≤ ε`` (truncated CDP with Δ₂² = 2, Δ∞ = 1), unless
    given.

    Parameters
    ----------
    eps : float in (0, ∞)
    delta : float in (0, 1)
    bins : int ≥ 1
    alpha : float > 0, optional
        A fixed prior weight; the stated ε is then ``dirichlet_sampling_epsilon(alpha, delta)``.
    """

    name = "dirichlet_posterior_sampling"
    label = "Dirichlet posterior sampling"

    def __init__(self, eps, delta, bins, *, alpha=None):
        super().__init__(bins)
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
    prior : int in [1, 10^6]
        Symmetric Dirichlet weight :math:`\\alpha_0` (1: uniform on the truncated simplex). An
        integer, so that every exponent :math:`C_j+\\alpha_0-1` is an integer and the exact
        sampler needs no fractional envelope (whose acceptance decays with the number of cells).
    """

    name = "truncated_dirichlet_posterior"
    label = "Truncated-Dirichlet posterior sampling"

    def __init__(self, eps, bins, *, prior: float = 1.0):
        super().__init__(bins)
        self.eps = check_real("eps", eps, low=0.0, high=1400.0, low_open=True)
        self.prior = float(check_integer("prior", prior, minimum=1, maximum=10**6))

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee("pure", "global", self.eps, 0.0,
                         "one exact draw from the truncated Dirichlet posterior, "
                         "ε = 2 log((1 − (k_B − 1)p_min)/p_min) (seed 001); any m")

    def p_min(self, d: int = 1) -> float:
        """The truncation for ``d`` columns (``bins**d`` cells)."""
        return truncated_dirichlet_p_min(self.eps, _cell_shape(self.bins, d))

    def knobs(self, n, m, d: int = 1):
        cells = _cell_shape(self.bins, d)
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
    weighting : {"vector", "scalar"}
    prior : int in [1, 10^6]
        Symmetric Dirichlet weight β.
    tau : float in (0, 0.5)
        Quantile defining each record's Lipschitz bound (the seed keeps 99% of the draws).
    """

    def __init__(self, eps, bins, *, weighting: str = "vector", prior: float = 1.0, tau: float = 0.01):
        super().__init__(bins)
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


class Bootstrap(Mechanism):
    """Non-private bootstrap: ``m`` draws with replacement from the confidential data.

    The utility ceiling of the comparison (SPEC §4); it releases confidential records
    verbatim and has **no privacy**.
    """

    name = "bootstrap"
    label = "Bootstrap (no privacy)"

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee("none", "none", math.inf, 1.0, "no privacy: resamples the confidential records")

    def knobs(self, n, m, d: int = 1):
        return [Knob("m", float(m), "utility ceiling: m draws with replacement from the data, no privacy")]

    def release_runs(self, data, m, runs, rng, *, counts=None) -> np.ndarray:
        x, counts, m, runs, rng, _ = check_release_arguments(data, m, runs, rng, counts)
        if counts is None:
            return x[rng.integers(0, x.shape[0], size=(runs, m))]
        # Record i of the repeated rows is row j of the table for cum[j-1] <= i < cum[j]: the
        # same uniform record indices give exactly numpy.repeat(x, counts, axis=0)[index], at
        # cost O(k + runs·m·log k) instead of O(n).
        cumulative = np.cumsum(counts)
        index = rng.integers(0, int(cumulative[-1]), size=(runs, m))
        return x[np.searchsorted(cumulative, index, side="right")]
