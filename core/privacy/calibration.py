"""Calibration of the baselines' noise and of the Bayesian family, rounded to the safe side
(more noise, more smoothing, larger ε): located in double precision, settled in 50-digit
arithmetic (docs/mathematics.md §9, docs/bayesian_family.md).

Neighbouring datasets differ by the replacement of one record, so one count goes down by
one and another goes up by one: L1 sensitivity 2, L2 sensitivity √2, L∞ sensitivity 1.

References: Wasserman & Zhou (2010), Balle & Wang (2018), Machanavajjhala et al. (2008),
seed 003 (*Differential Privacy of Dirichlet Posterior Sampling*, eqs. 6–8).
"""
from __future__ import annotations

import math
import struct
import sys
import threading

import numpy as np
from scipy import optimize, special

from ..validation import (
    MAX_RECORDS,
    check_delta,
    check_eps,
    check_finite_eps,
    check_integer,
    check_positive,
    check_real,
)



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
    installed with dp-accounting, a dependency; :mod:`core.privacy.betabinom` uses it the same way).
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
    """Privacy of ``m`` iid draws from a smoothed histogram (docs/mathematics.md §4.3), rounded up.

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
    """Smallest smoothing weight λ making ``m`` smoothed-histogram draws ε-DP (docs/mathematics.md §4.3, §7).

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
    """Noise SD of the analytic Gaussian mechanism (Balle & Wang 2018; docs/mathematics.md §4.2, §7).

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
    """ε of one Dirichlet posterior draw :math:`p\\sim\\mathrm{Dir}(C+\\alpha)` at δ (docs/mathematics.md §4.5, §7).

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
    """Smallest symmetric prior α with ``dirichlet_sampling_epsilon(α, δ) ≤ ε`` (docs/mathematics.md §4.5).

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
    """Prior weight per cell making the Dirichlet–multinomial release globally ε-DP (docs/mathematics.md §4.4).

    The release :math:`S\\sim\\mathrm{DirMult}(m, C+\\alpha)` is globally ε-DP iff
    :math:`m\\le(e^{\\varepsilon}-1)\\alpha` (docs/mathematics.md §3.3: the worst neighbour empties a
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


# ================================================ truncated Dirichlet (seed 001)
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
