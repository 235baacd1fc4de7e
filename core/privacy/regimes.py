"""The three regimes of the PYPP release, one type with hooks (docs/mathematics.md §3).

The sign of the discount σ decides what a release guarantees and how it is accounted:

======================  ========  =========================================  ===================
regime                  σ         instance-level δ_x(ε)                      global guarantee
======================  ========  =========================================  ===================
Dirichlet process       σ = 0     exact closed form (§3.1)                   (ε, δ)-DP at every ε,
                                                                             δ = 1 − (1 − T₁)^k exactly
Pitman–Yor              0 < σ < 1 Monte Carlo, 95% upper bound (§3.2)        none known
Dirichlet–multinomial   σ < 0     upper bound from tails (§3.3)              pure ε-DP iff
                                                                             m ≤ (e^ε − 1)·|σ|
======================  ========  =========================================  ===================

In the style of :mod:`scipy.stats`' distribution classes, :class:`Regime` declares the hooks
every caller needs — the instance-level δ and its exact verdict, the statements of the
curator report, the guarantee of the public release, the largest release size, the words —
and each regime implements them once; :func:`regime_of` picks the instance for a σ. Callers
ask the regime instead of testing the sign of σ.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import ClassVar

import numpy as np

from . import betabinom
from ..formatting import format_upper
from ..validation import MAX_RELEASE_SIZE, check_py_parameters
from .common import _DEFAULT_M_CAP, _first_bad, _multiplicity_profile
from .dirichlet_multinomial import _dm_tails, dirichlet_multinomial_is_pure, dirichlet_multinomial_pure_epsilon
from .dirichlet_process import _dp_instance_max, _second_shape, _singleton_term_at_most, tight_instance_delta
from .global_accounting import singleton_limit
from .guarantee import Guarantee
from .monte_carlo import monte_carlo_replicates
from .verdict import (
    check_target,
    composed_singleton_exact,
    composed_singleton_term,
    composed_singleton_term_at_most,
    exposure_within_limit,
    largest_admissible,
    pure_attack_terms,
    pure_composition_holds,
    records_exposed,
    round_up,
    singleton_attack_terms,
    verdict_of,
)

__all__ = ["DIRICHLET_MULTINOMIAL", "DIRICHLET_PROCESS", "PITMAN_YOR", "REGIMES", "Regime", "regime_of"]


class Regime:
    """One regime of the PYPP release. Use the instances :data:`DIRICHLET_PROCESS`,
    :data:`PITMAN_YOR` and :data:`DIRICHLET_MULTINOMIAL`, or :func:`regime_of`.

    Attributes
    ----------
    key : str
        Short stable key (``"dp"``, ``"py"``, ``"dm"``), used by the dashboard's settings.
    name : str
        The name written in reports (``"dirichlet-process"``, …).
    label : str
        The name a user reads.
    has_new_values : bool
        Whether the release can contain values never seen in the data (σ ≥ 0): the
        discovery probability, the old-values-only variant and the disclosure-risk attacks
        concern those.
    exact_instance_delta : bool
        Whether :meth:`instance_delta` is computed exactly (rounded up) rather than
        estimated by Monte Carlo.
    exact_loss_distribution : bool
        Whether the privacy-loss distribution is known exactly (σ = 0), so that repeated
        releases compose exactly (docs/audit.md).
    loss_scopes : tuple of str
        The scopes at which the Audit page can compute a privacy-loss distribution.
    size_rules : tuple of str
        The rules by which the release size m can be computed from (ε, δ) (``"global"``,
        ``"instance"``); empty when m must be given.
    pure : bool
        The global guarantee is pure ε-DP (δ = 0): a δ target is optional and always met.
    """

    key: ClassVar[str] = ""
    name: ClassVar[str] = ""
    label: ClassVar[str] = ""
    has_new_values: ClassVar[bool] = True
    exact_instance_delta: ClassVar[bool] = True
    exact_loss_distribution: ClassVar[bool] = False
    loss_scopes: ClassVar[tuple[str, ...]] = ()
    size_rules: ClassVar[tuple[str, ...]] = ()
    pure: ClassVar[bool] = False

    def __repr__(self) -> str:
        return f"<regime {self.name}>"

    def __reduce__(self):
        # the instances are singletons: a pickled regime (a cache key) comes back as the same object
        return (regime_of_key, (self.key,))

    # ------------------------------------------------------------------ hooks
    def instance_delta(self, counts: np.ndarray, values: np.ndarray, sigma: float, theta: float, z: int | None,
                       m: int, eps: np.ndarray, *, n_mc: int, seed, progress) -> np.ndarray:
        """δ_x(ε) on the flat array ``eps`` (validated inputs; see :func:`core.privacy.instance_delta`)."""
        raise NotImplementedError

    def instance_delta_at_most(self, counts: np.ndarray, values: np.ndarray, sigma: float, theta: float,
                               z: int | None, m: int, eps: float, delta: float) -> bool:
        """Exact verdict δ_x(ε) ≤ δ (see :func:`core.privacy.instance_delta_at_most`)."""
        raise NotImplementedError

    def statements(self, spec, counts: np.ndarray, eps: float, delta_target: float, *, n_mc: int,
                   mc_seed: int | None) -> list[Guarantee]:
        """The guarantees of the curator report at one ε, in the order the dashboard shows them."""
        raise NotImplementedError

    def global_delta_curve(self, spec, eps: np.ndarray) -> np.ndarray | None:
        """The composed global δ of ``spec`` (its k releases) at each ε of ``eps`` (each rounded
        up; 1 where no guarantee is stated); ``None`` where no global guarantee is known."""
        return None

    def meeting_advice(self, spec) -> str:
        """What would make the release ``spec`` meet its target, in one sentence (for a
        refused public release)."""
        raise NotImplementedError

    def public_caveats(self, spec) -> tuple[list[str], list[str]]:
        """What the public release must add to its guarantee in this regime (public quantities only).

        Returns
        -------
        data_dependent : list of str
            Reasons why the statement itself depends on the confidential data.
        warnings : list of str
        """
        return [], []

    def release_guarantee(self, spec) -> Guarantee:
        """The composed global guarantee of the release ``spec`` (its ``releases`` planned
        releases) at its ε, with its verdict against the δ target, the attack terms and the
        verbatim risk (docs/verdicts.md). Public quantities only: no data enter.

        ``spec`` must carry ``eps`` and ``delta``.
        """
        raise NotImplementedError

    def largest_m(self, n: int, sigma: float, theta: float, eps: float, delta: float | None, *,
                  releases: int = 1, m_cap: int | None = None) -> int | None:
        """Largest release size m whose composed global guarantee over ``releases`` releases meets
        the target (ε, δ), decided exactly (0 when none does; at most ``m_cap``); ``None`` where
        no global guarantee is known. ``delta`` may be ``None`` for a pure regime."""
        return None

    def singleton_limit(self, n: int, theta: float, delta: float) -> int | None:
        """The largest m any ε allows when the data hold a singleton; ``None`` where no such closed form exists."""
        return None

    def describe(self, sigma: float, theta: float) -> str:
        """The mechanism and its parameters in one line."""
        return f"{self.label}, σ = {sigma:g}, θ = {theta:g}"


def _statement(name, scope, kind, eps, delta, meets, text) -> Guarantee:
    return Guarantee(kind, scope, eps, delta, name=name, meets_target=meets, description=text)


class DirichletProcess(Regime):
    """σ = 0: exact instance-level δ; global (ε, δ)-DP on the exact profile δ = 1 − (1 − T₁)^k
    at every ε ≥ 0 (docs/audit.md §1.3), which also composes exactly."""

    key, name, label = "dp", "dirichlet-process", "Dirichlet process (σ = 0)"
    exact_loss_distribution = True
    loss_scopes = ("instance", "global")
    size_rules = ("global", "instance")

    def instance_delta(self, counts, values, sigma, theta, z, m, eps, *, n_mc, seed, progress):
        return _dp_instance_max(values, theta, int(counts.sum()), m, eps)

    def instance_delta_at_most(self, counts, values, sigma, theta, z, m, eps, delta):
        n = int(counts.sum())
        if values[0] == 1 and not _singleton_term_at_most(m, theta, n, delta):
            return False
        r = values[values >= 2].astype(float)
        return _tails_at_most(m, eps, delta, r, _second_shape(theta, n, r), r - 1.0)

    def statements(self, spec, counts, eps, delta_target, *, n_mc, mc_seed):
        n, m, theta = spec.n, spec.m, spec.theta
        up, e_txt = format_upper, f"{eps!r}"   # every printed δ rounded up; the user's ε exactly as given
        profile = _multiplicity_profile(counts)
        d_inst = float(self.instance_delta(counts, profile[1], 0.0, theta, None, m, np.array([eps]),
                                           n_mc=n_mc, seed=mc_seed, progress=None)[0])
        d_tight = float(tight_instance_delta(counts, theta, m, eps))
        # one release's exact global profile: T₁ at every ε ≥ 0 (docs/audit.md §1.3)
        d_glob = composed_singleton_term(m, theta, n)
        inst_ok = self.instance_delta_at_most(counts, profile[1], 0.0, theta, None, m, eps, delta_target)
        return [
            _statement("instance_delta", "instance", "approximate", eps, d_inst, inst_ok,
                       f"Instance-level probabilistic DP (paper, Theorem 1): at this dataset, the privacy loss "
                       f"exceeds ε = {e_txt} with probability at most δ = {up(d_inst)}, against every neighbour. "
                       "It does not protect other datasets."),
            # the tight profile is never above the probabilistic δ, so it meets whenever that does
            _statement("tight_instance_delta", "instance", "approximate", eps, d_tight,
                       True if inst_ok else bool(d_tight <= delta_target),
                       f"Tight instance-level (ε, δ)-DP profile: this dataset is (ε = {e_txt}, δ = {up(d_tight)})-DP "
                       "against every neighbour (exact hockey-stick divergence; never above the probabilistic δ)."),
            _statement("global_delta", "global", "approximate", eps, d_glob,
                       composed_singleton_term_at_most(m, theta, n, 1, Fraction(delta_target)),
                       f"Global (ε, δ)-DP, exact privacy profile of one release (docs/audit.md §1.3): every dataset "
                       f"of size n = {n} is protected with δ = {up(d_glob)} at every ε ≥ 0, so at ε = {e_txt}. The "
                       "worst case is a record whose value is unique: it appears verbatim with probability exactly "
                       "T₁ = m/(m + θ + n − 1)."),
        ]

    def release_guarantee(self, spec):
        n, theta, m, k = spec.n, spec.theta, spec.m, spec.releases
        eps, target = _target_of(spec)
        # The exact global profile of k releases: the hockey-stick divergence of the worst pair
        # (a record whose value is unique) is 1 − (1 − T₁)^k at every ε ≥ 0 (docs/audit.md §1.3);
        # every yes/no below is decided on that exact rational.
        exact = composed_singleton_exact(m, theta, n, k)
        delta_k = round_up(exact)
        meets = composed_singleton_term_at_most(m, theta, n, k, Fraction(target))
        verdict = verdict_of(pure=False, meets_target=meets, exposure_ok=exposure_within_limit(n, exact))
        times = "one release" if k == 1 else f"{k} independent releases"
        text = (f"Global (ε, δ)-DP of {times} (exact privacy profile, docs/audit.md §1.3): for every dataset of "
                f"n = {n} records, δ = {format_upper(delta_k)} (rounded up) at every ε ≥ 0, so at ε = {eps!r}; "
                "it is the probability that a record whose value is unique appears verbatim.")
        return Guarantee("approximate", "global", eps, delta_k, notion="exact global privacy profile, 1 − (1 − T₁)^k",
                         name="global_delta", meets_target=meets, description=text, verdict=verdict, releases=k,
                         attack=singleton_attack_terms(m, theta, n, k), verbatim_probability=delta_k,
                         records_exposed=records_exposed(n, exact))

    def largest_m(self, n, sigma, theta, eps, delta, *, releases=1, m_cap=None):
        # 1 − (1 − T₁)^k ≤ δ, the exact global profile of k releases, at every ε ≥ 0: ε does not enter
        check_target(eps, delta)
        cap = _DEFAULT_M_CAP if m_cap is None else int(m_cap)
        upper = min(cap, singleton_limit(n, theta, delta))     # k = 1 exactly; more releases allow no more
        if releases == 1 or upper < 1:
            return int(max(upper, 0))
        # ⇔ T₁ ≤ t = 1 − (1 − δ)^{1/k} ⇔ m ≤ (θ + n − 1)·t/(1 − t): the float guess, settled by
        # the exact verdict in O(log) checks
        t = -math.expm1(math.log1p(-delta) / releases)
        raw = (theta + n - 1) * t / (1 - t) if t < 1 else math.inf     # a float product overflows to inf
        guess = math.floor(raw) if math.isfinite(raw) else upper
        target = Fraction(delta)
        return largest_admissible(lambda size: composed_singleton_term_at_most(size, theta, n, releases, target),
                                  min(guess, upper), 0, upper)

    def global_delta_curve(self, spec, eps):
        # flat in ε: the exact profile is the singleton term at every ε ≥ 0
        value = composed_singleton_term(spec.m, spec.theta, spec.n, spec.releases)
        return np.full(np.shape(eps), value, dtype=float)

    def meeting_advice(self, spec):
        n, theta, k = spec.n, spec.theta, spec.releases
        eps, delta = _target_of(spec)
        best = self.largest_m(n, 0.0, theta, eps, delta, releases=k)
        times = "" if k == 1 else f" for {k} releases"
        if best >= 1:
            return (f"At θ = {theta:g} the target is met{times} by a release of at most m = {best:,} rows, at "
                    "any ε (the exact global δ does not depend on ε); a larger θ or δ allows more.")
        return f"No release size meets the target{times} at θ = {theta:g}, at any ε: raise θ or δ."

    def singleton_limit(self, n, theta, delta):
        return int(singleton_limit(n, theta, delta))

    def describe(self, sigma, theta):
        return f"{self.label}, θ = {theta:g}"


class PitmanYor(Regime):
    """σ ∈ (0, 1): instance-level δ by Monte Carlo with a Clopper–Pearson bound; no global guarantee."""

    key, name, label = "py", "pitman-yor", "Pitman–Yor (0 < σ < 1)"
    exact_instance_delta = False
    loss_scopes = ("instance",)

    def instance_delta(self, counts, values, sigma, theta, z, m, eps, *, n_mc, seed, progress):
        # seeded replicates are kept and reused at every ε (core.privacy.monte_carlo_replicates)
        replicates = monte_carlo_replicates(counts, sigma, theta, m, n_mc=n_mc, seed=seed, progress=progress)
        return replicates.delta(eps, progress=progress).upper

    def instance_delta_at_most(self, counts, values, sigma, theta, z, m, eps, delta):
        # a statistical statement, as the Monte Carlo upper confidence bound is
        upper = self.instance_delta(counts, values, sigma, theta, z, m, np.array([eps]), n_mc=20000, seed=None,
                                    progress=None)
        return bool(upper[0] <= delta)

    def statements(self, spec, counts, eps, delta_target, *, n_mc, mc_seed):
        up = format_upper
        mc = monte_carlo_replicates(counts, spec.sigma, spec.theta, spec.m, n_mc=n_mc, seed=mc_seed).delta(eps)
        upper, est, se = float(mc.upper[0]), float(mc.estimate[0]), float(mc.std_error[0])
        return [
            _statement("instance_delta", "instance", "approximate", eps, upper, bool(upper <= delta_target),
                       f"Instance-level probabilistic DP (Theorem 1, Monte Carlo with {mc.n_mc:,} replicates, seed "
                       f"{mc_seed}): estimate δ = {up(est)} ± {up(se, 2)} (standard error); the one-sided 95% "
                       f"Clopper–Pearson upper confidence bound δ = {up(upper)} is used. It is a statistical, not a certain, bound, and covers this "
                       "dataset only."),
            _statement("global_delta", "global", "none", eps, None, None,
                       "No global guarantee is known for σ in (0, 1): the release is only accounted at this dataset."),
        ]

    def release_guarantee(self, spec):
        eps, _ = _target_of(spec)
        return Guarantee("none", "global", eps, None, notion="none known for σ in (0, 1)", name="global_delta",
                         meets_target=False, verdict="missed", releases=spec.releases,
                         description="No global guarantee is known for σ in (0, 1): the release is accounted only "
                                     "at the confidential dataset (instance level), which is not itself private.")

    def meeting_advice(self, spec):
        return ("No global guarantee is known for σ in (0, 1): choose the Dirichlet process (σ = 0) or the "
                "Dirichlet–multinomial over a public domain (σ < 0).")

    def public_caveats(self, spec):
        dependent = ["With σ in (0, 1) the release has only an instance-level guarantee (Theorem 1, "
                     "accounted by Monte Carlo at the confidential dataset): the statement itself depends on "
                     "the data, and no guarantee is known for other datasets."]
        return dependent, ["No global guarantee: the release is protected only at the confidential dataset itself."]


class DirichletMultinomial(Regime):
    """σ < 0 over z = θ/|σ| public categories: an instance-level δ bound and the exact pure-ε conditions."""

    key, name, label = "dm", "dirichlet-multinomial", "Dirichlet–multinomial (σ < 0, z public categories)"
    has_new_values = False
    size_rules = ("global",)
    pure = True

    def instance_delta(self, counts, values, sigma, theta, z, m, eps, *, n_mc, seed, progress):
        return _dm_tails(values, -sigma, z, int(counts.sum()), m, eps).max(axis=0)

    def instance_delta_at_most(self, counts, values, sigma, theta, z, m, eps, delta):
        if z == 1:
            return True   # one public category: no neighbour differs from x
        alpha, n = -sigma, int(counts.sum())
        r = values.astype(float)
        return _tails_at_most(m, eps, delta, r + alpha, (n - r) + (z - 1) * alpha, r - 1.0 + alpha)

    def statements(self, spec, counts, eps, delta_target, *, n_mc, mc_seed):
        up, e_txt = format_upper, f"{eps!r}"
        sigma, theta, m, z = spec.sigma, spec.theta, spec.m, spec.categories
        alpha = -sigma
        values = _multiplicity_profile(counts)[1]
        d_bound = float(self.instance_delta(counts, values, sigma, theta, z, m, np.array([eps]), n_mc=n_mc,
                                            seed=mc_seed, progress=None)[0])
        eps_inst = dirichlet_multinomial_pure_epsilon(counts, alpha, m)
        eps_glob = dirichlet_multinomial_pure_epsilon(counts, alpha, m, instance=False)
        inst_pure = z == 1 or dirichlet_multinomial_is_pure(counts, alpha, m, eps)
        glob_ok = dirichlet_multinomial_is_pure(counts, alpha, m, eps, instance=False)
        return [
            _statement("instance_delta", "instance", "pure" if inst_pure else "approximate", eps, d_bound,
                       inst_pure if delta_target is None else
                       self.instance_delta_at_most(counts, values, sigma, theta, z, m, eps, delta_target),
                       f"Instance-level δ bound (Dirichlet–multinomial over z = {z} public categories): "
                       f"δ ≤ {up(d_bound)} at ε = {e_txt} (an upper bound, not the exact δ); pure ε-DP at this "
                       f"dataset for every ε ≥ {up(eps_inst)} "
                       f"({'holds' if inst_pure else 'does NOT hold'} at ε = {e_txt})."),
            _statement("global_pure_dp", "global", "pure", eps, 0.0 if glob_ok else None, glob_ok,
                       f"Global pure ε-DP holds iff m ≤ (e^ε − 1)·α, i.e. ε ≥ {up(eps_glob)} "
                       f"({'holds' if glob_ok else 'does NOT hold'} at ε = {e_txt})."),
        ]

    def release_guarantee(self, spec):
        m, k, alpha, z = spec.m, spec.releases, -spec.sigma, spec.categories
        eps = _target_eps(spec)   # pure: any δ target is met
        # k releases compose to ε_k = k·log(1 + m/α), pure (docs/verdicts.md §2)
        eps_1 = dirichlet_multinomial_pure_epsilon([1], alpha, m, instance=False)
        eps_k = eps_1 * k * (1.0 + 2.0**-50)    # rounded up: the product adds one rounding
        holds = pure_composition_holds(m, alpha, k, eps)
        times = "one release" if k == 1 else f"{k} independent releases"
        text = (f"Global pure ε-DP of {times} (Dirichlet–multinomial over z = {z} public categories, α = {alpha:g}): "
                f"ε = {format_upper(eps_k)} for every dataset of n = {spec.n} records "
                f"({'within' if holds else 'above'} the target ε = {eps!r}).")
        return Guarantee("pure", "global", eps_k, 0.0, notion="Machanavajjhala et al. condition, composed",
                         name="global_pure_dp", meets_target=holds, description=text,
                         verdict=verdict_of(pure=True, meets_target=holds, exposure_ok=True), releases=k,
                         attack=pure_attack_terms(eps_k), records_exposed=0.0)

    def global_delta_curve(self, spec, eps):
        alpha, k = -spec.sigma, spec.releases
        return np.array([0.0 if pure_composition_holds(spec.m, alpha, k, float(e)) else 1.0
                         for e in np.ravel(eps)])

    def largest_m(self, n, sigma, theta, eps, delta, *, releases=1, m_cap=None):
        # m ≤ (e^{ε/k} − 1)·α (docs/verdicts.md §2): a guess in log space, log m = log α + log expm1(ε/k)
        # (no overflow however large ε/k), settled by the exact verdict in O(log cap) checks
        alpha, k = -sigma, releases
        cap = MAX_RELEASE_SIZE if m_cap is None else int(m_cap)
        if not math.isfinite(eps):
            return cap
        x = eps / k
        if x > 1.0:
            log_expm1 = x + math.log1p(-math.exp(-x))
        else:
            log_expm1 = math.log(math.expm1(x)) if x > 0 else -math.inf
        log_guess = math.log(alpha) + log_expm1
        guess = cap if log_guess >= math.log(cap + 1) else int(math.floor(math.exp(log_guess)))
        return largest_admissible(lambda size: pure_composition_holds(size, alpha, k, eps), guess, 0, cap)

    def meeting_advice(self, spec):
        alpha, k = -spec.sigma, spec.releases
        eps = _target_eps(spec)
        guess = self.largest_m(spec.n, spec.sigma, spec.theta, eps, None, releases=k)
        times = "" if k == 1 else f" for {k} releases"
        if guess >= 1:
            return f"At α = {alpha:g} pure ε-DP within the target{times} allows at most m = {guess:,} rows."
        return f"No release size is pure ε-DP within the target{times} at α = {alpha:g}: raise α (|σ|) or ε."

    def public_caveats(self, spec):
        return [], ["z = θ/|σ| must be the size of a public category domain fixed without looking at the data; "
                    "if it was chosen from the data (e.g. z = the number of observed values) the statement "
                    "depends on the data."]

    def describe(self, sigma, theta):
        z = check_py_parameters(sigma, theta)[2]
        return f"{self.label}, α = |σ| = {-sigma:g}, z = {z:,} public categories"


def _tails_at_most(m: int, eps: float, delta: float, a: np.ndarray, b: np.ndarray, w: np.ndarray) -> bool:
    """Exact verdict max_l P(S_l ≥ s_l) ≤ δ with S_l ~ BB(m, a_l, b_l) and s_l the first count
    whose likelihood ratio exceeds e^ε, s > (e^ε − 1)·w_l (docs/mathematics.md §3.1, §3.3)."""
    if a.size == 0:
        return True
    eps_arr = np.array([eps])
    start = _first_bad(eps_arr, w)[0][:, 0]
    live = start <= m
    if not live.any():
        return True
    log_t, rel = betabinom.log_tail(m, a[live], b[live], start[live])
    return bool(betabinom.verdicts_at_most(log_t, rel, delta, m, a[live], b[live], start[live]).all())


def _target_eps(spec) -> float:
    if spec.eps is None:
        raise ValueError("the release spec needs eps (the target) for its guarantee")
    return spec.eps


def _target_of(spec) -> tuple[float, float]:
    if spec.eps is None or spec.delta is None:
        raise ValueError("the release spec needs eps and delta (the target) for its guarantee")
    return spec.eps, spec.delta


DIRICHLET_PROCESS = DirichletProcess()
PITMAN_YOR = PitmanYor()
DIRICHLET_MULTINOMIAL = DirichletMultinomial()
#: The regimes by key, in the order the dashboard offers them.
REGIMES: dict[str, Regime] = {r.key: r for r in (DIRICHLET_PROCESS, PITMAN_YOR, DIRICHLET_MULTINOMIAL)}


def regime_of(sigma) -> Regime:
    """The regime of a discount σ < 1: Dirichlet process (σ = 0), Pitman–Yor (0 < σ < 1),
    Dirichlet–multinomial (σ < 0)."""
    sigma = float(sigma)
    if math.isnan(sigma) or sigma >= 1:
        raise ValueError(f"sigma must be a real number < 1, got {sigma!r}")
    if sigma == 0:
        return DIRICHLET_PROCESS
    return PITMAN_YOR if sigma > 0 else DIRICHLET_MULTINOMIAL


def regime_of_key(key: str) -> Regime:
    """The regime of a key ``"dp"``, ``"py"`` or ``"dm"`` (:attr:`Regime.key`)."""
    try:
        return REGIMES[key]
    except KeyError:
        raise ValueError(f"regime must be one of {', '.join(map(repr, REGIMES))}, got {key!r}") from None
