"""The verdict of a release and what its guarantee allows an attacker (docs/verdicts.md).

A release planned ``k`` times is judged on its **composed global** guarantee (ε_k, δ_k) —
one that holds for every dataset of size n, never an instance-level fact — against the
target (ε, δ):

* ``pure``   — δ_k = 0 and ε_k ≤ ε;
* ``strong`` — the target is met and n·δ_k ≤ 0.01;
* ``weak``   — the target is met but n·δ_k > 0.01: δ permits a mechanism that publishes
  each record outright with probability δ, and n·δ_k is the expected number of records so
  published; ``strong`` asks that it be at most 1 in 100 (Dwork & Roth ask δ ≪ 1/n);
* ``missed`` — the target is not met (or no global guarantee is known).

Every yes/no here is exact (rational arithmetic, or mpmath where an exponential enters)
or decided on the safe side, and every number is rounded toward the attacker: a printed
δ, n·δ, advantage or true-positive rate is never below the exact one.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np

from ..validation import check_delta, check_integer, check_multiplicities

__all__ = ["ATTACK_FPRS", "EXPOSURE_LIMIT", "RECORDS_EXPOSED_WORDS", "VERDICTS", "VERDICT_WORDS", "AttackTerms",
           "check_target", "composed_singleton_exact", "composed_singleton_term", "composed_singleton_term_at_most",
           "expected_unique_records_copied", "exposure_within_limit", "largest_admissible", "pure_attack_terms",
           "pure_composition_holds", "records_exposed", "round_up", "singleton_attack_terms", "verdict_of"]

#: The four verdicts, from the strongest.
VERDICTS = ("pure", "strong", "weak", "missed")
#: What each verdict means, in the words every page, report and file uses.
VERDICT_WORDS = {
    "pure": "pure ε-DP: no record's presence can change the probability of any release by more than a factor "
            "e^ε, with no exception (δ = 0)",
    "strong": "the target is met and n·δ ≤ 0.01: a mechanism allowed by δ could publish a whole record with "
              "expected count at most 1 in 100",
    "weak": "the target is met, but n·δ > 0.01: a guarantee this loose allows a mechanism to publish whole "
            "records outright, more than 1 in 100 expected",
    "missed": "the release does not meet the target",
}
#: False-positive rates at which the true-positive rate of the best membership test is reported.
ATTACK_FPRS = (0.01, 0.001)
#: What n·δ_k means, in the words every page and file uses beside its value (docs/verdicts.md §1).
RECORDS_EXPOSED_WORDS = ("the expected number of records a mechanism allowed by this δ could publish outright "
                         "(strong needs at most 0.01)")
#: ``strong`` needs n·δ_k ≤ this, exactly (docs/verdicts.md §1).
EXPOSURE_LIMIT = Fraction(1, 100)

#: The pure-ε closed forms below take at most six roundings of 2^-53 each (exp, expm1, tanh,
#: a product and a sum); 16 units cover them with room to spare. (The σ = 0 terms are exact
#: rationals, rounded up by :func:`round_up`.)
_ROUND_UP = 1.0 + 16 * 2.0**-53


def _up(value: float) -> float:
    """``value`` rounded toward the attacker (up), clipped to [0, 1]."""
    return float(min(1.0, max(0.0, value * _ROUND_UP)))


@dataclass(frozen=True)
class AttackTerms:
    """What the best membership test can achieve against a release (docs/verdicts.md §3).

    From the trade-off curve f (type II error as a function of type I error α): the true
    positive rate at false positive rate α is 1 − f(α), and the largest advantage of any
    test is max_α (1 − f(α) − α). Both are rounded up (toward the attacker).

    Attributes
    ----------
    advantage : float in [0, 1]
        The largest TPR − FPR of any test telling a dataset from a neighbour.
    tpr_at_fpr : tuple of (fpr, tpr)
        The largest TPR at each false positive rate of :data:`ATTACK_FPRS`.
    source : str
        Which trade-off curve the terms come from, in words.
    """

    advantage: float
    tpr_at_fpr: tuple
    source: str
    #: ("singleton", p) — f(α) = max(0, 1 − p − α) — or ("pure", ε): the curve the terms come from
    curve: tuple = ()

    def tradeoff(self, alpha) -> np.ndarray:
        """The trade-off curve f(α) (type II error at type I error α) the terms are read from,
        on ``alpha`` in [0, 1] (docs/verdicts.md §3); never above the exact curve."""
        a = np.clip(np.asarray(alpha, dtype=float), 0.0, 1.0)
        family, value = self.curve
        if family == "singleton":
            return np.maximum(0.0, 1.0 - value - a)
        if math.isinf(value):
            return np.zeros_like(a)
        return np.maximum.reduce([np.zeros_like(a), 1.0 - math.exp(value) * a, math.exp(-value) * (1.0 - a)])

    def to_dict(self) -> dict:
        """``{"advantage": …, "tpr_at_fpr": {"0.01": …, "0.001": …}, "source": …}`` (JSON-ready)."""
        return {"advantage": self.advantage, "tpr_at_fpr": {repr(a): t for a, t in self.tpr_at_fpr},
                "source": self.source}


# ------------------------------------------------------------------ exact rationals, rounded up
def round_up(value: Fraction) -> float:
    """The smallest double ≥ the rational ``value`` (exact: ``float`` of a Fraction is
    correctly rounded, then one step up when it fell below)."""
    value = Fraction(value)
    x = float(value)
    if Fraction(x) < value:
        x = float(np.nextafter(x, math.inf))
    return x


def largest_admissible(holds, guess: int, lo: int, hi: int) -> int:
    """Largest integer m in [lo, hi] with ``holds(m)``, for a verdict that holds on [lo, m*] and
    fails above (``holds(lo)`` is taken as known, not asked).

    Starts at ``guess`` (a closed form's float value), gallops away from it by doubling steps
    until the boundary is bracketed, then bisects: O(log |guess − m*| + 1) calls of the exact
    verdict, O(log (hi − lo)) at worst — never a step of one at a time.
    """
    lo, hi = int(lo), int(hi)
    if hi <= lo:
        return lo
    g = min(max(int(guess), lo), hi)
    if g > lo:
        step = 1
        if holds(g):
            lo = g
            while lo < hi:                       # gallop up until a size fails
                probe = min(hi, lo + step)
                if not holds(probe):
                    hi = probe - 1
                    break
                lo, step = probe, 2 * step
        else:
            hi = g - 1
            while lo < hi:                       # gallop down until a size holds
                probe = max(lo, hi - step)
                if probe == lo:
                    break
                if holds(probe):
                    lo = probe
                    break
                hi, step = probe - 1, 2 * step
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if holds(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


# ------------------------------------------------------------------ σ = 0: the singleton term
def _singleton_survival(m: int, theta: float, n: int) -> Fraction:
    """1 − T₁ = (θ + n − 1)/(θ + n + m − 1), exactly (θ as its exact binary value)."""
    base = Fraction(theta) + n - 1
    return base / (base + m)


@functools.lru_cache(maxsize=32)
def composed_singleton_exact(m: int, theta: float, n: int, releases: int = 1) -> Fraction:
    """1 − (1 − T₁)^k with T₁ = m/(m + θ + n − 1), as an exact rational (θ as its exact binary
    value; docs/verdicts.md §2): the exact global privacy profile of k releases (σ = 0) at every
    ε ≥ 0 (docs/audit.md §1.3). Cached: a release's verdict, δ, n·δ and attack terms read the
    same value (k = 1000 with θ = 10³⁰⁰ is a million-bit rational)."""
    k = check_integer("releases", releases, minimum=1, maximum=1000)
    return 1 - _singleton_survival(m, theta, n) ** k


def composed_singleton_term(m: int, theta: float, n: int, releases: int = 1) -> float:
    """1 − (1 − T₁)^k with T₁ = m/(m + θ + n − 1), rounded up to the nearest double above
    (docs/verdicts.md §2).

    The probability that a record whose value is unique in the data appears verbatim in at
    least one of ``releases`` independent releases of m draws; also the exact hockey-stick
    divergence of k releases against the global worst-case neighbour at every ε ≥ 0
    (docs/audit.md §1.3), i.e. the δ_k of the release and the advantage of the best
    membership test. Computed in rational arithmetic, then rounded up (never below the exact
    value, and at most one double above it).
    """
    return round_up(composed_singleton_exact(m, theta, n, releases))


def composed_singleton_term_at_most(m: int, theta: float, n: int, releases: int, bound: Fraction, *,
                                    strict: bool = False) -> bool:
    """Exact verdict 1 − (1 − T₁)^k ≤ ``bound`` (``<`` with ``strict``), ``bound`` a rational
    (a float converts exactly), in rational arithmetic."""
    value = composed_singleton_exact(m, theta, n, releases)
    return value < Fraction(bound) if strict else value <= Fraction(bound)


def records_exposed(n: int, delta: Fraction) -> float:
    """n·δ rounded up to a double (``delta`` the exact rational δ_k): the expected number of
    records a mechanism allowed by δ could publish outright (docs/verdicts.md §1)."""
    return round_up(n * Fraction(delta))


def exposure_within_limit(n: int, delta: Fraction) -> bool:
    """Exact verdict n·δ ≤ 1/100 (:data:`EXPOSURE_LIMIT`), ``delta`` the exact rational δ_k."""
    return n * Fraction(delta) <= EXPOSURE_LIMIT


def expected_unique_records_copied(multiplicities, theta: float, m: int, releases: int = 1) -> float:
    """Expected number of the data's unique records that appear verbatim in at least one of
    ``releases`` releases (σ = 0): k₁·(1 − (1 − T₁)^k), by linearity (docs/verdicts.md §2).

    **Curator only**: k₁, the number of values held by one record, is a statistic of the
    confidential data.
    """
    counts = check_multiplicities(multiplicities)
    k1 = int(np.sum(counts == 1))
    return round_up(k1 * composed_singleton_exact(m, theta, int(counts.sum()), releases))


def singleton_attack_terms(m: int, theta: float, n: int, releases: int = 1) -> AttackTerms:
    """Attack terms of k releases of the Dirichlet-process release (σ = 0), exactly.

    The global worst case is the singleton neighbour (docs/audit.md §1.3): its trade-off
    curve is f(α) = max(0, (1 − T₁)^k − α), so the advantage is p = 1 − (1 − T₁)^k and the
    TPR at FPR α is min(1, α + p) — the test "the unique value appears in the release".
    """
    exact = composed_singleton_exact(m, theta, n, releases)
    p = round_up(exact)
    return AttackTerms(p, tuple((a, round_up(min(Fraction(1), Fraction(a) + exact))) for a in ATTACK_FPRS),
                       "exact trade-off curve of the global worst case (a record whose value is unique)",
                       ("singleton", p))


# ------------------------------------------------------------------ pure ε-DP
def pure_composition_holds(m: int, alpha: float, releases: int, eps: float) -> bool:
    """Exact verdict k·log(1 + m/α) ≤ ε, i.e. m ≤ (e^{ε/k} − 1)·α (docs/verdicts.md §2).

    Decided with mpmath at a precision that grows until the two sides separate (they are
    never equal: e^{ε/k} is irrational for a rational ε/k > 0).
    """
    if math.isinf(eps):
        return True
    for dps in (40, 80, 160, 320):
        with mpmath.workdps(dps):
            lhs = mpmath.mpf(m)
            rhs = mpmath.expm1(mpmath.mpf(eps) / releases) * mpmath.mpf(alpha)
            gap = rhs - lhs
            if abs(gap) > mpmath.mpf(10) ** (-(dps - 10)) * max(lhs, 1):
                return bool(gap > 0)
    return True   # equal to 300 digits: m = (e^{ε/k} − 1)·α holds with equality


def pure_attack_terms(eps: float) -> AttackTerms:
    """Attack terms of a pure ε-DP guarantee: advantage (e^ε − 1)/(e^ε + 1), TPR at FPR α
    at most min(e^ε·α, 1 − e^{−ε}(1 − α)) (Kairouz et al. 2015), rounded up."""
    if math.isinf(eps):
        return AttackTerms(1.0, tuple((a, 1.0) for a in ATTACK_FPRS), "pure ε-DP trade-off curve (ε = ∞)",
                           ("pure", math.inf))
    adv = math.tanh(eps / 2.0)
    tpr = tuple((a, _up(min(math.exp(eps) * a, -math.expm1(-eps) + math.exp(-eps) * a, 1.0))) for a in ATTACK_FPRS)
    return AttackTerms(_up(adv), tpr, "trade-off curve of pure ε-DP (an upper bound on this mechanism's)",
                       ("pure", eps))


# ------------------------------------------------------------------ the verdict
def verdict_of(*, pure: bool, meets_target: bool, exposure_ok: bool) -> str:
    """The verdict word from the three exact facts about the composed global guarantee:
    pure (δ_k = 0), meets the target, and ``exposure_ok`` — n·δ_k ≤ 0.01
    (:func:`exposure_within_limit`)."""
    if not meets_target:
        return "missed"
    if pure:
        return "pure"
    return "strong" if exposure_ok else "weak"


def check_target(eps, delta) -> tuple[float, float]:
    """The target (ε, δ) of a verdict: ε > 0 (``inf`` allowed), δ in (0, 1)."""
    eps = float(eps)
    if not eps > 0:
        raise ValueError(f"eps must be in (0, ∞], got {eps!r}")
    return eps, check_delta(delta)
