"""Every mechanism a release recipe can name, behind one interface (docs/verdicts.md §6).

A recipe names its mechanism (``ReleaseRecipe.mechanism``); :func:`release_mechanism` returns
the :class:`ReleaseMechanism` that knows everything mechanism-specific about a release, so
that :func:`core.release.run_recipe`, the public report, the gate, the card and the privacy
ledger treat every mechanism the same way:

* :class:`PYPPRelease` — the Pitman–Yor posterior predictive in its three regimes
  (σ = 0, σ ∈ (0, 1), σ < 0): the path it always had (``core.mechanisms.pypp_release``,
  :mod:`core.privacy.regimes`);
* :class:`HistogramRelease` — a mechanism of :mod:`core.mechanisms` on the product of numeric
  bins and public categories: the field's peers calibrated by OpenDP (AIM, MST, OpenDP's
  Laplace and Gaussian histograms; calibrated by OpenDP) and the seed papers' baselines
  that carry a global guarantee (perturbed, smoothed and Dirichlet histograms).

Adding a mechanism is one entry of :data:`RELEASE_MECHANISMS` (a :class:`HistogramRelease`
with its factory, or a new subclass).

A histogram mechanism needs a **public domain** (docs/verdicts.md §6): public bounds for each
numeric column (cut into ``bins`` equal bins, a public parameter of the recipe, default
:data:`DEFAULT_BINS`) and a public category list for each categorical one; without them the
recipe is refused, naming what is missing. Its guarantee is the global (ε, δ) its own
accounting calibrates (OpenDP's zCDP → (ε, δ) conversion for AIM, MST and the Gaussian
histogram; pure ε for the Laplace histogram), composed over the planned releases
(ε_k = k·ε, δ_k = 1 − (1 − δ)^k); its verdict is read exactly as PYPP's: ``pure`` for a pure
guarantee within the target, ``strong`` iff n·δ_k ≤ 0.01, ``weak`` above, ``missed`` when the
composed guarantee is above the target. Its release size defaults to ``m = n`` (the size rule
``"n"``): n is published in every public report, so m = n adds nothing to it.
"""
from __future__ import annotations

import dataclasses
import math
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from fractions import Fraction

import numpy as np
import pandas as pd

from .. import __version__
from ..data import PreparedData
from ..evaluation.columns import comparison_table
from ..formatting import format_upper
from ..mechanisms import (
    DirichletMultinomialHistogram,
    DirichletPosteriorSampling,
    GaussianHistogram,
    LaplaceHistogram,
    SmoothedHistogram,
    TruncatedDirichletPosteriorSampling,
    peer_mechanism,
    pypp_release,
)
from ..privacy import Guarantee, ReleaseSpec, max_instance_synthetic_size, regime_of
from ..privacy.verdict import (
    ATTACK_FPRS,
    AttackTerms,
    exposure_within_limit,
    pure_attack_terms,
    records_exposed,
    round_up,
    verdict_of,
)
from ..privacy.zcdp import zcdp_delta
from ..validation import check_bins, check_choice, check_delta, check_integer, check_py_parameters
from .report import release_report

__all__ = ["DEFAULT_BINS", "MAX_RECIPE_SIZE", "RELEASE_MECHANISMS", "Draw", "HistogramRelease", "MechanismSpec",
           "PYPPRelease", "ReleaseMechanism", "mechanism_lines", "release_mechanism"]

#: Largest release a recipe makes (rows), below ``core.validation.MAX_RELEASE_SIZE`` (one
#: draw in memory) because :func:`core.release.run_recipe` also writes the CSV (about 10 MB per
#: million rows of one column) and builds the reports and figures, whose cost grows with m.
MAX_RECIPE_SIZE = 10**6
#: Bins per numeric axis of a histogram mechanism when the recipe gives none (the Compare page's
#: default): a public constant, never read off the data.
DEFAULT_BINS = 25


@dataclass(frozen=True, eq=False)
class Draw:
    """One release drawn by a mechanism: the rows in original units, which rows are new values
    (PYPP's draws from its base measure; curator only) and how many distinct new values."""

    synthetic: pd.DataFrame
    is_new: np.ndarray
    n_new_values: int


# ======================================================================= a non-PYPP release's spec
def _pure_rr_delta(eps: float, at) -> np.ndarray:
    """δ(ε') of any pure ε-DP mechanism, at most (e^ε − e^ε')/(1 + e^ε) (randomized response is
    the worst case; Kairouz et al. 2015)."""
    at = np.asarray(at, dtype=float)
    return np.clip((math.exp(eps) - np.exp(np.minimum(at, eps))) / (1.0 + math.exp(eps)), 0.0, 1.0)


def _approximate_attack_terms(eps: float, delta: float) -> AttackTerms:
    """Attack terms of an (ε, δ)-DP guarantee (Kairouz et al. 2015): advantage at most
    (e^ε − 1 + 2δ)/(e^ε + 1), TPR at FPR α at most min(1, e^ε·α + δ, 1 − e^{−ε}(1 − δ − α));
    rounded up. No curve is attached: the card draws none."""
    up = lambda x: float(min(1.0, max(0.0, x * (1.0 + 2.0**-48))))  # noqa: E731  toward the attacker
    adv = up((math.expm1(eps) + 2.0 * delta) / (math.exp(eps) + 1.0))
    tpr = tuple((a, up(min(1.0, math.exp(eps) * a + delta, 1.0 - math.exp(-eps) * (1.0 - delta - a))))
                for a in ATTACK_FPRS)
    return AttackTerms(adv, tpr, "trade-off curve of (ε, δ)-DP (an upper bound on this mechanism's)", ())


@dataclass(frozen=True)
class MechanismSpec:
    """A release of a mechanism other than PYPP, as the public report states it: the global
    guarantee of one release (``kind``, ``eps_1``, ``delta_1``), the target, n, m and the planned
    releases — public quantities only, so the gate, the card and the ledger read it without
    running the mechanism (or its optional library).

    ``sigma``, ``theta`` and ``regime`` are ``None`` (readers of a PYPP spec find them empty);
    :meth:`global_guarantee` is the composed statement with its verdict.
    """

    mechanism: str
    label: str
    kind: str
    eps_1: float
    delta_1: float
    notion: str
    m: int
    n: int
    eps: float
    delta: float | None
    releases: int = 1
    rho: float | None = None
    sigma: None = None
    theta: None = None
    regime: None = None

    def composed(self) -> tuple[Fraction, Fraction]:
        """(ε_k, δ_k) exactly: basic composition ε_k = k·ε, δ_k = 1 − (1 − δ)^k."""
        k = self.releases
        return k * Fraction(self.eps_1), 1 - (1 - Fraction(self.delta_1)) ** k

    def global_guarantee(self):
        """The composed global :class:`~core.privacy.Guarantee` of the planned releases, with its
        verdict (docs/verdicts.md §1, §6)."""
        eps_k, delta_k = self.composed()
        meets = eps_k <= Fraction(self.eps) and (delta_k == 0 or (self.delta is not None
                                                                  and delta_k <= Fraction(self.delta)))
        pure = self.kind == "pure"
        verdict = verdict_of(pure=pure, meets_target=meets, exposure_ok=exposure_within_limit(self.n, delta_k))
        eps_up, delta_up = round_up(eps_k), round_up(delta_k)
        times = "one release" if self.releases == 1 else f"{self.releases} independent releases (basic composition)"
        if pure:
            text = (f"Global pure ε-DP of {times} ({self.notion}): ε = {format_upper(eps_up)} for every "
                    f"dataset of n = {self.n} records, any m.")
            attack = pure_attack_terms(eps_up)
        else:
            text = (f"Global (ε, δ)-DP of {times} ({self.notion}): ε = {format_upper(eps_up)}, "
                    f"δ = {format_upper(delta_up)} (rounded up) for every dataset of n = {self.n} records, any m.")
            attack = _approximate_attack_terms(eps_up, delta_up)
        return Guarantee("pure" if pure else "approximate", "global", eps_up, 0.0 if pure else delta_up,
                         notion=self.notion, name="global_pure_dp" if pure else "global_delta", meets_target=meets,
                         description=text, verdict=verdict, releases=self.releases, attack=attack,
                         records_exposed=0.0 if pure else records_exposed(self.n, delta_k))

    def delta_curve(self, eps_grid) -> np.ndarray | None:
        """δ(ε) of the planned releases on ``eps_grid``: the ρ-zCDP profile (kρ) for a zCDP
        mechanism, the pure ε bound for a pure one; ``None`` otherwise."""
        if self.kind == "pure":
            return _pure_rr_delta(float(self.composed()[0]), eps_grid)
        if self.rho is None:
            return None
        return np.array([zcdp_delta(self.releases * self.rho, float(e)) for e in np.ravel(eps_grid)])


# ======================================================================= the interface
class ReleaseMechanism(ABC):
    """What a release needs to know about its mechanism (see the module docstring).

    Attributes
    ----------
    key : str
        The name a recipe and ``--mechanism`` use.
    label, description, citation : str
        Its short name, what it is in one sentence, and the paper or library it comes from
        (the release card cites it).
    parameters : tuple of str
        The recipe fields of ``"mechanism"`` in its JSON form (PYPP: σ, θ; a histogram: bins).
    size_rules : tuple of str
        The release-size rules it accepts besides ``"fixed"``.
    default_size_rule : str
        The rule without ``m``.
    """

    key: str = ""
    label: str = ""
    description: str = ""
    citation: str = ""
    parameters: tuple = ()
    size_rules: tuple = ()
    default_size_rule: str = "fixed"

    @abstractmethod
    def normalise(self, recipe) -> dict:
        """The recipe's mechanism fields validated (field → value); raises ValueError naming
        what is wrong or missing."""

    def check_params(self, params: dict) -> None:
        """Refuse a recipe JSON whose ``mechanism`` object lacks a required field (none by default)."""

    @abstractmethod
    def delta_required(self, params: dict) -> bool:
        """Whether a recipe with these mechanism parameters needs a δ target."""

    @abstractmethod
    def release_size(self, recipe, counts) -> tuple[int, str]:
        """(m, how it was chosen in words) for the recipe's rule (not ``"fixed"``) and the data's counts."""

    @abstractmethod
    def spec(self, recipe, n: int, m: int):
        """The public spec of a release (public recipe, n, m): a ReleaseSpec or a MechanismSpec."""

    @abstractmethod
    def spec_of_report(self, report: dict):
        """The same spec, read back from a public report."""

    @abstractmethod
    def guarantee_of(self, spec):
        """The composed global guarantee of the spec, with its verdict."""

    @abstractmethod
    def public_block(self, recipe, spec) -> dict:
        """The public report's ``mechanism`` block."""

    @abstractmethod
    def card_rows(self, report: dict) -> list[tuple]:
        """The card's rows about the mechanism (public)."""

    def public_caveats(self, spec) -> list[str]:
        """Warnings of the public report about the statement (none by default)."""
        return []

    @abstractmethod
    def delta_curve(self, spec, eps_grid) -> np.ndarray | None:
        """The composed global δ(ε) on ``eps_grid`` (the card's chart), or ``None``."""

    @abstractmethod
    def meeting_advice(self, spec) -> str:
        """What would meet the target, in words (the gate's refusal)."""

    @abstractmethod
    def release(self, recipe, prepared: PreparedData, m: int, rng: np.random.Generator) -> Draw:
        """Draw the release."""

    @abstractmethod
    def curator_report(self, recipe, prepared: PreparedData, draw: Draw, m: int, **facts) -> dict:
        """The curator's JSON record (before the common additions of run_recipe)."""

    def size_rule_text(self) -> str:
        return ", ".join(("fixed",) + tuple(self.size_rules))


# ======================================================================= PYPP
class PYPPRelease(ReleaseMechanism):
    """The Pitman–Yor posterior predictive in its three regimes (docs/mathematics.md §2–§3)."""

    key = "pypp"
    label = "PYPP"
    description = "Pitman–Yor posterior predictive (PYPP)"
    citation = "Pitman–Yor posterior predictive release (docs/mathematics.md §2 of bnp-synth)"
    parameters = ("sigma", "theta")
    size_rules = ("global", "instance")
    default_size_rule = "global"

    def normalise(self, recipe) -> dict:
        sigma = _number("sigma", recipe.sigma)
        out = {}
        if recipe.delta is not None or not sigma < 0:   # the Dirichlet–multinomial: δ = 0
            out["delta"] = check_delta(_number("delta", recipe.delta), "delta")
        theta = recipe.theta
        if theta is None and sigma < 0:
            theta = _public_domain_theta(recipe.columns, sigma)
        sigma, theta, _ = check_py_parameters(sigma, _number("theta", theta))
        if recipe.size_rule != "fixed" and recipe.size_rule not in regime_of(sigma).size_rules:
            raise ValueError(f"size_rule {recipe.size_rule!r} is not available with sigma={sigma!r}: the largest "
                             "admissible m is known under the global guarantee for sigma = 0 (its exact privacy profile; "
                             "also 'instance') and sigma < 0 (pure ε-DP, docs/mathematics.md §3.3), not for sigma in "
                             "(0, 1). Fix m.")
        return {**out, "sigma": sigma, "theta": theta, "bins": None}

    def check_params(self, params):
        if "theta" not in params and not (isinstance(params.get("sigma"), (int, float)) and params["sigma"] < 0):
            raise ValueError("recipe.mechanism lacks the required field 'theta' (it may be left out only with "
                             "sigma < 0 and every column on a public domain: theta = z·|sigma|)")

    def delta_required(self, params):
        sigma = params.get("sigma", 0.0)
        return not (isinstance(sigma, (int, float)) and sigma < 0)

    def release_size(self, recipe, counts):
        n = int(np.sum(counts))
        eps, delta, theta, k = recipe.eps, recipe.delta, recipe.theta, recipe.releases
        regime = regime_of(recipe.sigma)
        times = "one release" if k == 1 else f"{k} releases"
        if recipe.size_rule == "global":
            # the regime's exact largest m whose composed global guarantee meets the target (docs/verdicts.md §2)
            m = regime.largest_m(n, recipe.sigma, theta, eps, delta, releases=k, m_cap=MAX_RECIPE_SIZE)
            notion = regime.release_guarantee(ReleaseSpec(recipe.sigma, theta, max(m, 1), n, eps=eps, delta=delta,
                                                          releases=k)).notion
            rule = f"largest m whose global guarantee ({notion}) over {times} meets the target at the given eps" + (
                "" if delta is None else ", delta")
        else:
            m = max_instance_synthetic_size(counts, theta, eps, delta, m_cap=MAX_RECIPE_SIZE)
            rule = ("largest m whose instance-level delta at the confidential data is within the target at the given "
                    "eps (a choice that depends on the data)")
        if m == MAX_RECIPE_SIZE:
            rule += f", capped at this tool's limit of {MAX_RECIPE_SIZE:,} rows"
        if m < 1:
            spec = ReleaseSpec(recipe.sigma, theta, 1, n, eps=eps, delta=delta, releases=k)
            m_sing = None if delta is None else regime.singleton_limit(n, theta, delta)
            raise ValueError(f"no synthetic row can be released at eps={eps!r}" + (
                "" if delta is None else f", delta={delta!r}") + f" with n={n} over {times}: "
                + regime.meeting_advice(spec) + ("" if m_sing is None else
                                                 f" (the singleton limit is floor(delta*(theta+n-1)/(1-delta)) = {m_sing})"))
        return int(m), rule

    def spec(self, recipe, n, m):
        return ReleaseSpec(sigma=recipe.sigma, theta=recipe.theta, m=m, n=n, eps=recipe.eps, delta=recipe.delta,
                           releases=recipe.releases)

    def spec_of_report(self, report):
        return ReleaseSpec(sigma=report["mechanism"]["sigma"], theta=report["mechanism"]["theta"],
                           m=report["release"]["m"], n=report["data"]["n"], eps=report["privacy_target"]["eps"],
                           delta=report["privacy_target"]["delta"], releases=report["releases_planned"])

    def guarantee_of(self, spec):
        return spec.regime.release_guarantee(spec)

    def public_caveats(self, spec):
        return list(spec.regime.public_caveats(spec)[1])   # its data-dependent part is 'instance_accounting'

    def public_block(self, recipe, spec):
        return {"name": self.key, "description": self.description, "regime": spec.regime.name,
                "sigma": recipe.sigma, "theta": recipe.theta}

    def card_rows(self, report):
        mech = report["mechanism"]
        return [("regime", mech["regime"]), ("σ", mech["sigma"]), ("θ", mech["theta"])]

    def delta_curve(self, spec, eps_grid):
        return spec.regime.global_delta_curve(spec, eps_grid)

    def meeting_advice(self, spec):
        return spec.regime.meeting_advice(spec)

    def release(self, recipe, prepared, m, rng):
        table = prepared.table
        release = pypp_release(table.atoms, table.counts, recipe.sigma, recipe.theta, m, rng, base=prepared.bases)
        return Draw(prepared.to_original(release.values), release.is_new, release.n_new_values)

    def curator_report(self, recipe, prepared, draw, m, **facts):
        return release_report(
            multiplicities=prepared.table.counts, sigma=recipe.sigma, theta=recipe.theta, m=m, eps=recipe.eps,
            delta=recipe.delta, seed=recipe.seed, columns=[str(c) for c in prepared.columns],
            transforms=prepared.describe(), n_new_values=draw.n_new_values, n_mc=recipe.n_mc,
            releases=recipe.releases, **facts)


def _number(name: str, value) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    return float(value)


def _public_domain_theta(columns, sigma: float) -> float:
    """θ = z·|σ| of a σ < 0 recipe whose every column is on a public domain (docs/mathematics.md §3.3.1)."""
    sizes = [c.public_domain for c in columns]
    if not sizes or any(z is None for z in sizes):
        missing = [c.name for c, z in zip(columns, sizes) if z is None]
        raise ValueError("theta is required unless every column is on a public domain (a grid step for a numeric "
                         f"column, a public category list for a categorical one); {', '.join(map(repr, missing))} "
                         "has none")
    return math.prod(sizes) * -sigma


# ======================================================================= histogram mechanisms
class HistogramRelease(ReleaseMechanism):
    """A mechanism of :mod:`core.mechanisms` on the product of ``bins`` numeric bins and the
    public categories (docs/mathematics.md §4, docs/peers.md), released as a recipe.

    Parameters
    ----------
    key, label, description, citation : str
    factory : callable (eps, delta, bins, levels) → core.mechanisms.Mechanism
        Builds the calibrated mechanism (``delta`` is ``None`` for a pure one).
    pure : bool
        The mechanism is pure ε-DP (no δ target needed).
    rho : callable (mechanism) → float or None, optional
        The ρ-zCDP of one release of a zCDP mechanism (its δ(ε) curve on the card); default: the
        mechanism's own ``rho`` attribute, if any.
    """

    parameters = ("bins",)
    size_rules = ("n",)
    default_size_rule = "n"

    def __init__(self, key, label, description, citation, factory, *, pure: bool, rho=None):
        self.key, self.label, self.description, self.citation = key, label, description, citation
        self.factory, self.pure = factory, pure
        self.rho = rho if rho is not None else (lambda mechanism: getattr(mechanism, "rho", None))

    def normalise(self, recipe) -> dict:
        out = {"sigma": None, "theta": None,
               "bins": check_bins(DEFAULT_BINS if recipe.bins is None else recipe.bins)}
        if recipe.delta is not None or not self.pure:
            out["delta"] = check_delta(_number("delta", recipe.delta), "delta")
        if recipe.size_rule not in ("fixed",) + self.size_rules:
            raise ValueError(f"size_rule {recipe.size_rule!r} is not available with the mechanism {self.key!r}: "
                             f"give m (fixed) or the rule 'n' (m = n, the number of records)")
        missing = [f"{c.name!r} (public bounds: --bounds LO HI)" for c in recipe.columns
                   if c.kind == "numeric" and c.bounds is None]
        missing += [f"{c.name!r} (a public category list: --public-categories {c.name} A,B,...)"
                    for c in recipe.columns if c.kind == "categorical" and c.categories is None]
        if missing:
            raise ValueError(f"the mechanism {self.key!r} needs a public domain for every column, fixed without "
                             f"looking at the data; missing for {'; '.join(missing)}")
        as_value = [c.name for c in recipe.columns if c.missing == "value"]
        if as_value:   # the product of bins and public categories has no cell for a missing cell
            raise ValueError(f"the mechanism {self.key!r} has no cell for a missing value: for "
                             f"{', '.join(map(repr, as_value))} choose missing = 'drop' (--missing C drop), or pypp")
        unscaled = [c.name for c in recipe.columns if c.kind == "numeric" and not c.scale]
        if unscaled:
            raise ValueError(f"the mechanism {self.key!r} bins [0, 1]: numeric columns must be scaled with their "
                             f"bounds (scale = true); {', '.join(map(repr, unscaled))} is not")
        return out

    def delta_required(self, params):
        return not self.pure

    def release_size(self, recipe, counts):
        m = int(np.sum(counts))
        if m > MAX_RECIPE_SIZE:
            raise ValueError(f"m = n = {m:,} records is above this tool's limit of {MAX_RECIPE_SIZE:,} rows: give a "
                             "smaller fixed m")
        return m, "m = n, the number of records (public in the report; any m is post-processing of the DP model)"

    def build(self, recipe, levels=None):
        """The calibrated mechanism (:mod:`core.mechanisms`) of this recipe."""
        return self.factory(recipe.eps, recipe.delta, recipe.bins, levels)

    @staticmethod
    def _levels(recipe):
        sizes = tuple(len(c.categories) if c.kind == "categorical" else None for c in recipe.columns)
        return None if all(s is None for s in sizes) else sizes

    def spec(self, recipe, n, m):
        mech = self.build(recipe, self._levels(recipe))
        g = mech.guarantee
        rho = self.rho(mech)
        return MechanismSpec(self.key, self.label, g.kind, float(g.eps), float(g.delta), g.notion, m=m, n=n,
                             eps=recipe.eps, delta=recipe.delta, releases=recipe.releases,
                             rho=None if rho is None else float(rho))

    def spec_of_report(self, report):
        mech, one = report["mechanism"], report["mechanism"]["per_release"]
        return MechanismSpec(self.key, self.label, one["kind"], one["eps"], one["delta"], one["notion"],
                             m=report["release"]["m"], n=report["data"]["n"], eps=report["privacy_target"]["eps"],
                             delta=report["privacy_target"]["delta"], releases=report["releases_planned"],
                             rho=one.get("rho"))

    def guarantee_of(self, spec):
        return spec.global_guarantee()

    def public_block(self, recipe, spec):
        return {"name": self.key, "label": self.label, "description": self.description, "citation": self.citation,
                "regime": self.label, "sigma": None, "theta": None, "bins": recipe.bins,
                # the guarantee of one release, as its own accounting states it (public: no data enters it)
                "per_release": {"kind": spec.kind, "eps": spec.eps_1, "delta": spec.delta_1, "notion": spec.notion,
                                "rho": spec.rho}}

    def card_rows(self, report):
        mech = report["mechanism"]
        one = mech["per_release"]
        rows = [("mechanism", mech["label"]), ("what it is", mech["description"]), ("reference", mech["citation"]),
                ("bins per numeric axis", mech["bins"]), ("accounting of one release", one["notion"])]
        if one.get("rho") is not None:
            rows.append(("ρ-zCDP of one release", f"{one['rho']:.6g}"))
        return rows

    def delta_curve(self, spec, eps_grid):
        return spec.delta_curve(eps_grid)

    def meeting_advice(self, spec):
        return (f"{self.label} is calibrated to the target for one release: plan one release (releases = 1), or "
                "raise the target.")

    def release(self, recipe, prepared, m, rng):
        table = comparison_table(prepared)   # the unit box: numeric bins × public categories
        mech = self.build(recipe, table.levels)
        mech.knobs(table.n, m, table.d)   # refuses a domain too large for the mechanism, naming it
        values = np.asarray(mech.release(table.atoms, m, rng, counts=table.counts)).reshape(m, -1)
        frame = pd.DataFrame({c.name: (c.original(values[:, j]) if c.kind == "numeric"
                                       else c.category_labels(values[:, j]))
                              for j, c in enumerate(table.columns)})
        return Draw(frame, np.zeros(m, dtype=bool), 0)

    def curator_report(self, recipe, prepared, draw, m, **facts):
        spec = self.spec(recipe, prepared.n, m)
        statement = spec.global_guarantee()
        counts = prepared.table.counts
        k1 = int(np.sum(counts == 1))
        mech = self.build(recipe, comparison_table(prepared).levels)
        warnings = []
        if not statement.meets_target:
            warnings.append(f"The release misses the target: {statement.description}")
        if facts.get("bounds_from_data"):
            warnings.append("The bounds were computed from the confidential data; no guarantee covers them.")
        return {
            "tool": "bnp-synth", "version": __version__,
            "mechanism": f"{self.label}: {self.description}", "regime": self.label, "citation": self.citation,
            "parameters": {"name": self.key, "bins": recipe.bins, "m": m, "eps": float(recipe.eps),
                           "delta_target": None if recipe.delta is None else float(recipe.delta), "seed": recipe.seed},
            "knobs": [asdict(k) for k in mech.knobs(prepared.n, m, prepared.d)],
            "data": {"source": facts.get("data_source"), "columns": [str(c) for c in prepared.columns],
                     "transforms": prepared.describe(), "n": prepared.n, "k": int(counts.size), "singletons": k1},
            "release": {"m": m, "new_values": 0, "releases": recipe.releases},
            "strength": statement.verdict,
            "release_guarantee": {**{key: value for key, value in asdict(statement).items() if key != "attack"},
                                  "attack": None if statement.attack is None else statement.attack.to_dict()},
            "verbatim": {"unique_records_in_data": k1, "unique_records_copied": facts.get("unique_records_copied"),
                         "unique_rows_copied": facts.get("unique_rows_copied")},
            "guarantees": [asdict(dataclasses.replace(statement, attack=None))],
            "warnings": warnings,
            "command": facts.get("command"),
        }


def _peer(key):
    return lambda eps, delta, bins, levels: peer_mechanism(key, eps, delta, bins, levels=levels)


_OPENDP = "the OpenDP library (opendp.org; Gaboardi et al., OpenDP: an open-source suite of differential privacy tools)"
_WZ = "Wasserman & Zhou 2010, A statistical framework for differential privacy (JASA)"

#: Every mechanism a recipe can name, in the order ``--help`` lists them.
RELEASE_MECHANISMS: dict[str, ReleaseMechanism] = {m.key: m for m in (
    PYPPRelease(),
    HistogramRelease("aim", "AIM", "adaptive and iterative select–measure–estimate of the workload's marginals "
                     "(Gaussian measurements, exponential-mechanism selection, a graphical model fitted by mirror "
                     "descent), ρ-zCDP", "McKenna, Mullins, Sheldon & Miklau 2022, AIM: an adaptive and iterative "
                     "mechanism for differentially private synthetic data (PVLDB 15)", _peer("aim"), pure=False),
    HistogramRelease("mst", "MST", "the one-way marginals and a maximum spanning tree of pairs, measured with "
                     "Gaussian noise, and a graphical model fitted to them, ρ-zCDP", "McKenna, Miklau & Sheldon 2021, "
                     "Winning the NIST contest: a scalable and general approach to differentially private synthetic "
                     "data (Journal of Privacy and Confidentiality 11)", _peer("mst"), pure=False),
    HistogramRelease("opendp_laplace_histogram", "OpenDP Laplace histogram", "the cell counts with OpenDP's Laplace "
                     "noise, scale from its privacy map; pure ε-DP", _OPENDP, _peer("opendp_laplace_histogram"),
                     pure=True),
    HistogramRelease("opendp_gaussian_histogram", "OpenDP Gaussian histogram", "the cell counts with OpenDP's "
                     "Gaussian noise, calibrated through zCDP", _OPENDP, _peer("opendp_gaussian_histogram"),
                     # ρ = Δ²/(2s²) of the Gaussian on counts, Δ = √2 under replacement
                     pure=False, rho=lambda mechanism: 1.0 / float(mechanism.sigma) ** 2),
    HistogramRelease("laplace_histogram", "Perturbed histogram (Laplace)", "the cell counts plus Laplace(2/ε) "
                     "noise, m draws from the clipped noisy histogram; pure ε-DP", _WZ,
                     lambda eps, delta, bins, levels: LaplaceHistogram(eps, bins, levels=levels), pure=True),
    HistogramRelease("gaussian_histogram", "Perturbed histogram (Gaussian)", "the cell counts plus analytic-Gaussian "
                     "noise; (ε, δ)-DP", "Balle & Wang 2018, Improving the Gaussian mechanism for differential "
                     "privacy (ICML)", lambda eps, delta, bins, levels: GaussianHistogram(eps, delta, bins,
                                                                                        levels=levels), pure=False),
    HistogramRelease("smoothed_histogram", "Smoothed histogram", "m draws from the histogram mixed with the uniform "
                     "(the smallest λ for n and m); pure ε-DP for the m released", _WZ,
                     lambda eps, delta, bins, levels: SmoothedHistogram(eps, bins, levels=levels), pure=True),
    HistogramRelease("dirichlet_multinomial", "Dirichlet–multinomial", "m draws from Dir(C + α) with "
                     "α = m/(e^ε − 1); pure ε-DP for the m released", "Machanavajjhala, Kifer, Abowd, Gehrke & "
                     "Vilhuber 2008, Privacy: theory meets practice on the map (ICDE)",
                     lambda eps, delta, bins, levels: DirichletMultinomialHistogram(eps, bins, levels=levels),
                     pure=True),
    HistogramRelease("dirichlet_posterior_sampling", "Dirichlet posterior sampling", "one p ~ Dir(C + α) released, "
                     "m draws from it; (ε, δ)-DP", "Dimitrakakis, Nelson, Zhang, Mitrokotsa & Rubinstein 2017, "
                     "Differential privacy for Bayesian inference through posterior sampling (JMLR 18)",
                     lambda eps, delta, bins, levels: DirichletPosteriorSampling(eps, delta, bins, levels=levels),
                     pure=False),
    HistogramRelease("truncated_dirichlet_posterior", "Truncated-Dirichlet posterior sampling", "one p ~ Dir(C + α₀) "
                     "restricted to p ≥ p_min released, m draws from it; pure ε-DP", "docs/bayesian_family.md §1 of "
                     "bnp-synth (posterior sampling with a truncated prior)",
                     lambda eps, delta, bins, levels: TruncatedDirichletPosteriorSampling(eps, bins, levels=levels),
                     pure=True),
)}


def release_mechanism(key) -> ReleaseMechanism:
    """The :class:`ReleaseMechanism` a recipe names; a ValueError listing the choices otherwise."""
    return RELEASE_MECHANISMS[check_choice("mechanism", key, tuple(RELEASE_MECHANISMS))]


def mechanism_lines() -> list[str]:
    """One line per mechanism, ``key: label — reference`` (``--help``)."""
    return [f"{m.key}: {m.label} — {m.citation}" for m in RELEASE_MECHANISMS.values()]
