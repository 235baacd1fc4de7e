"""What one release costs, and what a sequence of releases costs together (docs/audit.md §8).

A release is charged as a pair (ε_i, δ_i) held **exactly** (rationals): the release is
(ε_i, δ_i)-DP against every neighbouring pair of datasets of its size. A σ = 0 release of m
draws is (0, T₁)-DP with T₁ = m/(m + θ + n − 1), flat in ε (docs/audit.md §1.3); a σ < 0
release over a public domain is pure (log(1 + m/α), 0)-DP; any other global statement
(:class:`core.privacy.Guarantee`) is charged as it reads. The releases of one dataset
compose to

.. math::

    \\varepsilon = \\sum_i \\varepsilon_i, \\qquad \\delta = 1 - \\prod_i (1 - \\delta_i),

which is exact for σ = 0 releases alone (the singleton pair attains it at every ε ≥ 0),
exact in δ at the stated ε for any mixture with σ = 0 releases, the plain sum for pure
releases alone, and a valid bound in general (docs/audit.md §8.2). Nothing is rounded
until a number is shown: a budget is checked on the exact rationals, and every float shown
is rounded toward the attacker (ε and δ up, what remains down).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from fractions import Fraction

from ..privacy import DIRICHLET_PROCESS, Guarantee, ReleaseSpec
from ..privacy.verdict import composed_singleton_exact, round_up

__all__ = ["CHARGE_KINDS", "Charge", "Spend", "charge_of_guarantee", "charge_of_spec", "compose",
           "fraction_text", "parse_fraction", "round_down"]

#: How a release's charge was obtained: the exact σ = 0 profile (0, T₁), a pure ε, or an (ε, δ) statement.
CHARGE_KINDS = ("singleton", "pure", "approximate")


def fraction_text(value: Fraction) -> str:
    """A rational as ``"p/q"`` text (exact; how the ledger stores it)."""
    value = Fraction(value)
    return f"{value.numerator}/{value.denominator}"


def parse_fraction(text: str) -> Fraction:
    """The rational of :func:`fraction_text`."""
    if not isinstance(text, str) or "/" not in text:
        raise ValueError(f"an exact value must be 'p/q' text, got {text!r}")
    return Fraction(text)


def round_down(value: Fraction) -> float:
    """The largest double ≤ the rational ``value`` (what remains is never overstated)."""
    return -round_up(-Fraction(value))


@dataclass(frozen=True)
class Charge:
    """The privacy cost of one release: it is (ε, δ)-DP with the exact rationals below.

    Attributes
    ----------
    kind : {"singleton", "pure", "approximate"}
        ``singleton``: a σ = 0 release, (0, T₁)-DP at every ε ≥ 0 (docs/audit.md §1.3);
        ``pure``: pure ε-DP; ``approximate``: an (ε, δ) statement.
    eps : Fraction ≥ 0
    survival : Fraction in [0, 1]
        1 − δ, exact (for σ = 0: (θ + n − 1)/(θ + n + m − 1)).
    """

    kind: str
    eps: Fraction
    survival: Fraction

    def __post_init__(self):
        if self.kind not in CHARGE_KINDS:
            raise ValueError(f"kind must be one of {', '.join(CHARGE_KINDS)}, got {self.kind!r}")
        eps, survival = Fraction(self.eps), Fraction(self.survival)
        if eps < 0:
            raise ValueError(f"eps must be ≥ 0, got {float(eps)!r}")
        if not 0 <= survival <= 1:
            raise ValueError(f"survival (1 − delta) must be in [0, 1], got {float(survival)!r}")
        object.__setattr__(self, "eps", eps)
        object.__setattr__(self, "survival", survival)

    @property
    def delta(self) -> Fraction:
        return 1 - self.survival

    def to_state(self) -> dict:
        """JSON-ready exact state: ``{"kind", "eps": "p/q", "survival": "p/q"}``."""
        return {"kind": self.kind, "eps": fraction_text(self.eps), "survival": fraction_text(self.survival)}

    @classmethod
    def from_state(cls, state: dict) -> "Charge":
        return cls(state["kind"], parse_fraction(state["eps"]), parse_fraction(state["survival"]))


@dataclass(frozen=True)
class Spend:
    """The composed cost of a sequence of releases (docs/audit.md §8.2): ε = Σ ε_i,
    δ = 1 − Π (1 − δ_i), both exact.

    Attributes
    ----------
    eps : Fraction
    survival : Fraction
        Π (1 − δ_i); δ = 1 − survival.
    releases : int
    """

    eps: Fraction = Fraction(0)
    survival: Fraction = Fraction(1)
    releases: int = 0

    @property
    def delta(self) -> Fraction:
        return 1 - self.survival

    @property
    def eps_up(self) -> float:
        """ε rounded up to a double."""
        return round_up(self.eps)

    @property
    def delta_up(self) -> float:
        """δ rounded up to a double."""
        return round_up(self.delta)

    def plus(self, charge: Charge) -> "Spend":
        """The spend after one more release."""
        return Spend(self.eps + charge.eps, self.survival * charge.survival, self.releases + 1)

    def within(self, eps: float, delta: float) -> bool:
        """Whether the composed guarantee is within the budget (ε, δ), decided exactly."""
        return self.eps <= Fraction(eps) and self.delta <= Fraction(delta)

    def remaining(self, eps: float, delta: float) -> tuple[float, float]:
        """(ε left, largest δ of one more release) under the budget (ε, δ), each rounded down
        and at least 0: one more (ε', δ')-DP release fits iff ε' ≤ ε left and
        1 − survival·(1 − δ') ≤ δ, i.e. δ' ≤ 1 − (1 − δ)/survival."""
        eps_left = max(Fraction(0), Fraction(eps) - self.eps)
        if self.survival == 0:
            return round_down(eps_left), 0.0
        delta_left = max(Fraction(0), 1 - (1 - Fraction(delta)) / self.survival)
        return round_down(eps_left), round_down(delta_left)


def compose(charges) -> Spend:
    """The composed cost of ``charges`` (an iterable of :class:`Charge`), exact."""
    spend = Spend()
    for charge in charges:
        spend = spend.plus(charge)
    return spend


def charge_of_spec(spec) -> Charge:
    """The charge of ONE release described by ``spec`` (its planned ``releases`` are not
    charged: the ledger counts the releases made).

    A PYPP release (:class:`core.privacy.ReleaseSpec`): σ = 0 is (0, T₁) exactly, from
    :func:`core.privacy.verdict.composed_singleton_exact` with k = 1 (docs/audit.md §1.3);
    otherwise the regime's global guarantee of one release
    (:meth:`core.privacy.Regime.release_guarantee`; σ < 0: pure ε = log(1 + m/α) rounded up).
    Another mechanism (AIM, MST, the histograms: a spec with ``releases`` and a
    ``global_guarantee()`` method, :class:`core.release.mechanisms.MechanismSpec`): the global
    (ε, δ) of one release as its own accounting states it, rounded up (docs/verdicts.md §6).

    Raises
    ------
    ValueError
        The release has no global guarantee (σ ∈ (0, 1)): it cannot be charged to a budget.
    """
    if not isinstance(spec, ReleaseSpec):
        statement = getattr(spec, "global_guarantee", None)
        if not (dataclasses.is_dataclass(spec) and hasattr(spec, "releases") and callable(statement)):
            raise ValueError(f"spec must be a core.privacy.ReleaseSpec or a mechanism's spec with global_guarantee(), "
                             f"got {type(spec).__name__}")
        return charge_of_guarantee(dataclasses.replace(spec, releases=1).global_guarantee())
    one = dataclasses.replace(spec, releases=1)
    if one.regime is DIRICHLET_PROCESS:
        return Charge("singleton", Fraction(0), 1 - composed_singleton_exact(one.m, one.theta, one.n, 1))
    return charge_of_guarantee(one.regime.release_guarantee(one))


def charge_of_guarantee(guarantee: Guarantee) -> Charge:
    """The charge of a release stated by a global :class:`~core.privacy.Guarantee`.

    A σ = 0 release is charged more tightly by :func:`charge_of_spec` ((0, T₁): its
    guarantee object carries the target ε, at which the same δ holds).

    Raises
    ------
    ValueError
        ``guarantee`` is not global, or states no privacy, or no δ.
    """
    if not isinstance(guarantee, Guarantee):
        raise ValueError(f"guarantee must be a core.privacy.Guarantee, got {type(guarantee).__name__}")
    if guarantee.scope != "global" or guarantee.kind == "none" or guarantee.delta is None \
            or not math.isfinite(guarantee.eps):
        raise ValueError("only a global (ε, δ) or pure ε guarantee can be charged to a budget: this release has "
                         f"{guarantee.label!r} (an instance-level or data-dependent statement protects only the "
                         "dataset released)")
    if guarantee.kind == "pure":
        return Charge("pure", Fraction(guarantee.eps), Fraction(1))
    return Charge("approximate", Fraction(guarantee.eps), 1 - Fraction(guarantee.delta))
