"""The scale of copying: how many released rows are confidential records (docs/verdicts.md §2.1).

A σ = 0 release is m draws of the Pólya urn that starts from the n confidential records and a
mass θ of the base measure. Colour every ball by its origin — a confidential record, or a draw
from the base measure — and the origins form a two-colour Pólya urn with initial weights
(n, θ): the draws are exchangeable, so **each released row is a verbatim copy of a confidential
record with probability n/(n + θ)**, the number of copied rows is beta-binomial
BB(m, n, θ) with mean m·n/(n + θ), and no row at all is new with probability
∏_{j<m} (n + j)/(n + θ + j). These depend on n, θ and m only: n is published with every
release, so they are public. A copied row whose value is unique in the data identifies its
record; how many rows do is a count of the confidential data (curator only,
:func:`core.privacy.verdict.expected_unique_records_copied` and the curator report).

For σ ≠ 0 the probability that a released row is an *old* value is (n − σk)/(n + θ)
(docs/mathematics.md §2.2; every draw has the first draw's law by exchangeability), with k the
number of distinct values of the confidential data: :func:`old_value_probability` gives it to
the curator. It is not stated publicly for σ ∈ (0, 1). For σ < 0 (the Dirichlet–multinomial
over a public domain, θ = z·α) every row is a label of the public domain, drawn under a pure
ε-DP guarantee: a row falls in a cell held by a record with probability (n + αk)/(n + zα),
between (n + α)/(n + θ) and (n + α·min(n, z))/(n + θ), but such a row is no more a copy of a
record than a draw from the prior landing in the same cell.

Every probability and expectation is rounded up (toward the attacker): a printed value is
never below the exact one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath

from ..formatting import format_upper
from ..validation import check_delta, check_integer, check_positive
from .verdict import EXPOSURE_LIMIT, composed_singleton_term_at_most, largest_admissible, round_up

__all__ = ["CopyScale", "copy_probability", "copy_scale", "expected_copied_rows", "largest_strong_m",
           "no_new_row_probability", "old_value_probability"]


def _n_theta(n, theta) -> tuple[int, float]:
    n = check_integer("n", n, minimum=1)
    theta = check_positive("theta", theta)
    if not math.isfinite(theta):
        raise ValueError(f"theta must be finite, got {theta!r}")
    return n, theta


def _sigma_zero(sigma) -> None:
    sigma = float(sigma)
    if sigma != 0.0:
        raise ValueError(
            f"sigma: the share of released rows that are confidential records is public for σ = 0 only, got "
            f"σ = {sigma:g}; for σ in (0, 1) it is (n − σk)/(n + θ), which depends on the confidential number k of "
            "distinct values, and for σ < 0 every row is a label of the public domain (docs/verdicts.md §2.1)")


def copy_probability(n: int, theta: float, sigma: float = 0.0) -> float:
    """The probability n/(n + θ) that a released row of a σ = 0 release is a verbatim copy of a
    confidential record, rounded up (docs/verdicts.md §2.1).

    Public: it depends on n (published) and θ only. The same for every row, whatever m (the
    draws are exchangeable). ``sigma`` other than 0 raises ``ValueError``: for σ ≠ 0 the
    probability depends on the confidential k (:func:`old_value_probability`).
    """
    n, theta = _n_theta(n, theta)
    _sigma_zero(sigma)
    return round_up(Fraction(n) / (n + Fraction(theta)))


def expected_copied_rows(m: int, n: int, theta: float) -> float:
    """m·n/(n + θ), rounded up: the expected number of rows of a σ = 0 release of m rows that are
    verbatim copies of confidential records (docs/verdicts.md §2.1)."""
    m = check_integer("m", m, minimum=1)
    n, theta = _n_theta(n, theta)
    return round_up(Fraction(m * n) / (n + Fraction(theta)))


def no_new_row_probability(m: int, n: int, theta: float) -> float:
    """∏_{j<m} (n + j)/(n + θ + j) = B(n + m, θ)/B(n, θ), rounded up: the probability that every
    row of a σ = 0 release of m rows is a copy of a confidential record (docs/verdicts.md §2.1).

    Computed as exp of a difference of log-gamma values in mpmath at 40 digits (m up to 10⁸ in
    microseconds), then one double up: the cancellation of the log-gammas leaves far more than
    the 17 digits a double holds.
    """
    m = check_integer("m", m, minimum=1)
    n, theta = _n_theta(n, theta)
    with mpmath.workdps(40):
        t = mpmath.mpf(theta)
        log_p = (mpmath.loggamma(n + m) - mpmath.loggamma(n) + mpmath.loggamma(n + t)
                 - mpmath.loggamma(n + t + m))
        value = mpmath.exp(log_p)
    return min(1.0, math.nextafter(float(value), math.inf))


def old_value_probability(n: int, k: int, theta: float, sigma: float) -> float:
    """(n − σk)/(n + θ), rounded up: the probability that a released row takes a value held by a
    confidential record, in every regime (docs/mathematics.md §2.2; docs/verdicts.md §2.1).

    **Curator only** for σ ≠ 0: k, the number of distinct values, is a statistic of the
    confidential data. For σ = 0 it is :func:`copy_probability`. For σ < 0 (θ = z·α) it is
    (n + αk)/(n + zα): a row in a cell some record holds, not necessarily drawn from one.
    """
    n = check_integer("n", n, minimum=1)
    k = check_integer("k", k, minimum=1, maximum=n)
    sigma, theta = float(sigma), float(theta)
    if not (math.isfinite(sigma) and sigma < 1):
        raise ValueError(f"sigma must be a finite number below 1, got {sigma!r}")
    if not (math.isfinite(theta) and theta > (-sigma if sigma > 0 else 0.0)):
        raise ValueError(f"theta must be finite, > −σ for σ in (0, 1) and > 0 otherwise, got {theta!r}")
    return round_up((n - Fraction(sigma) * k) / (n + Fraction(theta)))


def largest_strong_m(n: int, theta: float, delta: float, *, releases: int = 1, m_cap: int | None = None) -> int:
    """The largest m whose k composed σ = 0 releases meet δ **and** are ``strong``:
    1 − (1 − T₁)^k ≤ min(δ, 1/(100 n)), T₁ = m/(m + θ + n − 1), decided exactly on rationals
    (docs/verdicts.md §1–§2); 0 when none does (strong σ = 0 needs θ of order 100·n·m).
    """
    n, theta = _n_theta(n, theta)
    releases = check_integer("releases", releases, minimum=1, maximum=1000)
    bound = min(Fraction(check_delta(delta)), EXPOSURE_LIMIT / n)
    cap = 10**8 if m_cap is None else check_integer("m_cap", m_cap, minimum=1)
    # T₁ ≤ t ⇔ m ≤ (θ + n − 1)·t/(1 − t), t = 1 − (1 − bound)^{1/k}: the float guess, settled exactly
    t = -math.expm1(math.log1p(-float(bound)) / releases)
    raw = (theta + n - 1) * t / (1 - t)
    guess = min(cap, math.floor(raw)) if math.isfinite(raw) else cap
    if not composed_singleton_term_at_most(1, theta, n, releases, bound):
        return 0
    return largest_admissible(lambda size: composed_singleton_term_at_most(size, theta, n, releases, bound),
                              max(guess, 1), 1, cap)


def _probability_text(value: float) -> str:
    """A probability rounded up (:func:`core.formatting.format_upper`), with as many digits as it
    takes not to print "1" for a value below 1 (0.99997 at three digits would read "1")."""
    for digits in range(3, 18):
        text = format_upper(value, digits)
        if value >= 1.0 or float(text) < 1.0:
            return text
    return format_upper(value, 17)


@dataclass(frozen=True)
class CopyScale:
    """The public scale of copying of a σ = 0 release of m rows from n records at θ
    (docs/verdicts.md §2.1); every number rounded up.

    Attributes
    ----------
    m, n, theta : the release
    probability : n/(n + θ), the chance that a released row is a confidential record
    expected_rows : m·n/(n + θ), the expected number of released rows that are
    no_new_row : the probability that every released row is a confidential record
    """

    m: int
    n: int
    theta: float
    probability: float
    expected_rows: float
    no_new_row: float

    @property
    def rows_in_words(self) -> str:
        """"about 612 of the 620" (the expectation rounded up to a whole row; "fewer than one" below 1)."""
        if self.expected_rows < 1:
            return f"fewer than one of the {self.m:,}"
        return f"about {min(self.m, math.ceil(self.expected_rows)):,} of the {self.m:,}"

    @property
    def probability_text(self) -> str:
        """n/(n + θ) rounded up, with the digits it takes not to read "1" below 1."""
        return _probability_text(self.probability)

    @property
    def no_new_row_text(self) -> str:
        """The probability that no row is new, rounded up (as :attr:`probability_text`)."""
        return _probability_text(self.no_new_row)

    @property
    def words(self) -> str:
        """The scale of copying in the words the verdict box, the card and the planner use."""
        return (f"Each released row is a verbatim copy of a confidential record with probability n/(n + θ) = "
                f"{self.probability_text} (n = {self.n:,} is public): {self.rows_in_words} released rows "
                f"are expected to be copies, and with probability {self.no_new_row_text} no row at all is "
                "new. A copied row whose value is unique in the data identifies its record.")

    def to_dict(self) -> dict:
        """JSON-ready: the three public numbers and their words."""
        return {"copy_probability": self.probability, "expected_copied_rows": self.expected_rows,
                "no_new_row_probability": self.no_new_row, "words": self.words}


def copy_scale(m: int, n: int, theta: float, sigma: float = 0.0) -> CopyScale:
    """The :class:`CopyScale` of a σ = 0 release (``ValueError`` naming ``sigma`` otherwise)."""
    _sigma_zero(sigma)
    return CopyScale(int(m), int(n), float(theta), copy_probability(n, theta), expected_copied_rows(m, n, theta),
                     no_new_row_probability(m, n, theta))
