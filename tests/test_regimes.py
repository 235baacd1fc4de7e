"""The regime type (core.privacy.regimes), the one Guarantee and the frozen ReleaseSpec.

The numbers each regime computes are tested against enumeration and mpmath in
test_privacy.py and test_privacy_exact.py; here: that every caller reaches the same numbers
through the regime's hooks, and that the types behave as the pages and caches rely on.
"""

import math
import pickle
import time
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from core import privacy as P
from core.release.recipe import ReleaseRecipe, public_report
from core.release.report import guarantees, release_report

MULT = np.array([1, 1, 2, 3, 5, 5])   # n = 17, two singletons


@pytest.mark.parametrize("sigma, regime", [(0.0, P.DIRICHLET_PROCESS), (-0.0, P.DIRICHLET_PROCESS),
                                           (0.3, P.PITMAN_YOR), (-1.5, P.DIRICHLET_MULTINOMIAL)])
def test_regime_of_sigma(sigma, regime):
    assert P.regime_of(sigma) is regime
    assert P.regime_of_key(regime.key) is regime and P.REGIMES[regime.key] is regime


@pytest.mark.parametrize("sigma", [1.0, 2.0, math.nan])
def test_regime_of_refuses_sigma_outside_the_model(sigma):
    with pytest.raises(ValueError, match="sigma"):
        P.regime_of(sigma)


def test_regime_of_key_names_the_parameter():
    with pytest.raises(ValueError, match="regime"):
        P.regime_of_key("gaussian")


def test_regimes_are_singletons_through_pickle():
    # cache keys are pickled: a spec must come back with the same regime object
    for regime in P.REGIMES.values():
        assert pickle.loads(pickle.dumps(regime)) is regime
    spec = P.ReleaseSpec(0.0, 2.0, 10, 17, eps=1.0, delta=0.01)
    again = pickle.loads(pickle.dumps(spec))
    assert again == spec and again.regime is P.DIRICHLET_PROCESS and hash(again) == hash(spec)


def test_capabilities_of_each_regime():
    dp, py, dm = P.DIRICHLET_PROCESS, P.PITMAN_YOR, P.DIRICHLET_MULTINOMIAL
    assert (dp.has_new_values, py.has_new_values, dm.has_new_values) == (True, True, False)
    assert (dp.exact_instance_delta, py.exact_instance_delta, dm.exact_instance_delta) == (True, False, True)
    assert dp.exact_loss_distribution and not py.exact_loss_distribution and not dm.exact_loss_distribution
    assert dp.loss_scopes == ("instance", "global") and py.loss_scopes == ("instance",) and dm.loss_scopes == ()
    assert dp.size_rules == ("global", "instance") and py.size_rules == () and dm.size_rules == ("global",)
    # σ = 0: the exact global profile T₁ ≤ δ, at any ε — one release's m is the singleton limit
    assert dp.largest_m(17, 0.0, 2.0, 1.0, 0.05) == P.singleton_limit(17, 2.0, 0.05) == 0
    assert dp.largest_m(170, 0.0, 2.0, 0.1, 0.05) == dp.largest_m(170, 0.0, 2.0, 9.0, 0.05) == 9
    assert py.largest_m(17, 0.5, 2.0, 1.0, 0.05) is None
    # σ < 0: ⌊(e^ε − 1)·α⌋ (docs/mathematics.md §3.3), composed over k releases: ⌊(e^{ε/k} − 1)·α⌋
    assert dm.largest_m(17, -2.0, 10.0, 1.0, None) == 3 and dm.largest_m(17, -2.0, 10.0, 1.0, None, releases=2) == 1
    assert dp.singleton_limit(17, 2.0, 0.05) == P.singleton_limit(17, 2.0, 0.05)
    assert py.singleton_limit(17, 2.0, 0.05) is None
    assert "z = 6 public categories" in dm.describe(-0.5, 3.0) and "θ = 2" in dp.describe(0.0, 2.0)


@pytest.mark.parametrize("sigma, theta", [(0.0, 2.0), (-0.5, 4.0)])
def test_instance_hooks_are_the_public_functions(sigma, theta):
    eps = np.array([0.1, 0.7, 2.0, np.inf])
    spec = P.ReleaseSpec(sigma, theta, 9, int(MULT.sum()))
    values = np.unique(MULT)
    via_hook = spec.regime.instance_delta(MULT, values, sigma, theta, spec.categories, 9, eps, n_mc=0, seed=0,
                                          progress=None)
    np.testing.assert_array_equal(via_hook, P.instance_delta(MULT, sigma, theta, 9, eps))
    for e in eps:
        for target in (1e-3, 0.05, 0.3):
            assert (spec.regime.instance_delta_at_most(MULT, values, sigma, theta, spec.categories, 9, float(e),
                                                       target)
                    == P.instance_delta_at_most(MULT, sigma, theta, 9, float(e), target))


def test_statements_use_one_scope_vocabulary():
    for sigma, theta in [(0.0, 2.0), (0.4, 1.0), (-0.5, 4.0)]:
        spec = P.ReleaseSpec(sigma, theta, 3, 17, eps=1.0, delta=0.1)
        items = guarantees(spec, MULT, 1.0, 0.1, n_mc=2000, mc_seed=3)
        assert all(isinstance(g, P.Guarantee) for g in items)
        assert {g.scope for g in items} <= {"instance", "global"}
        assert [g.name for g in items][0] == "instance_delta"
    report = release_report(multiplicities=MULT, sigma=0.0, theta=2.0, m=3, eps=1.0, delta=0.1, seed=1)
    assert report["regime"] == "dirichlet-process"
    assert report["data"]["singleton_limit_m"] == P.singleton_limit(17, 2.0, 0.1)
    assert "singleton_limit_m" not in release_report(multiplicities=MULT, sigma=-0.5, theta=4.0, m=3, eps=1.0,
                                                     delta=0.1, seed=1)["data"]


@pytest.mark.parametrize("sigma, theta, kind, verdict", [(0.0, 2.0, "approximate", "weak"),
                                                          (0.3, 2.0, "none", "missed"),
                                                          (-0.5, 3.0, "pure", "pure")])
def test_public_guarantee_is_the_release_guarantee(sigma, theta, kind, verdict):
    recipe = ReleaseRecipe(source="sample:cps_earnings.csv", columns=("age",), eps=3.0, delta=0.05, m=5,
                           sigma=sigma, theta=theta)
    public = public_report(recipe, n=500, m=5)
    g = public["guarantee"]
    statement = P.regime_of(sigma).release_guarantee(P.ReleaseSpec(sigma, theta, 5, 500, eps=3.0, delta=0.05))
    assert (g["scope"], g["kind"]) == ("global", kind) == (statement.scope, statement.kind)
    assert g["delta"] == statement.delta and g["meets_target"] == statement.meets_target
    assert public["strength"] == statement.verdict == verdict and public["releases_planned"] == 1
    assert public["mechanism"]["regime"] == P.regime_of(sigma).name
    assert (public["attack"] is None) == (statement.attack is None)


def test_guarantee_validates_kind_and_scope():
    with pytest.raises(ValueError, match="kind"):
        P.Guarantee("strong", "global", 1.0, 0.0)
    with pytest.raises(ValueError, match="scope"):
        P.Guarantee("pure", "instance-level", 1.0, 0.0)
    g = P.Guarantee("approximate", "instance", 1.0, 1.23456e-4, "x")
    assert g.scope_words == "instance-level" and g.label == "approximate (ε, δ)-DP, instance-level (ε = 1, δ = 0.000124)"
    assert P.Guarantee("approximate", "global", 1.0, None).label.endswith("δ = unknown)")
    assert P.Guarantee("none", "none", math.inf, 1.0).label == "no privacy"


def test_release_spec_is_frozen_validated_and_keys_without_its_target():
    spec = P.ReleaseSpec(0, 2, 10, 17, eps=1, delta=0.01, releases=3)
    assert (type(spec.sigma), type(spec.theta), type(spec.eps)) == (float, float, float)
    with pytest.raises(AttributeError):
        spec.m = 11
    bare = spec.without_target()
    assert (bare.eps, bare.delta, bare.releases) == (None, None, 1)
    assert bare == P.ReleaseSpec(0.0, 2.0, 10, 17)
    assert P.ReleaseSpec(0.0, 2.0, 10, 17, eps=math.inf).eps == math.inf
    for kwargs, name in [({"eps": 0.0}, "eps"), ({"eps": [1.0, 2.0]}, "eps"), ({"delta": 1.0}, "delta"),
                         ({"releases": 0}, "releases"), ({"releases": 1001}, "releases")]:
        with pytest.raises(ValueError, match=name):
            P.ReleaseSpec(0.0, 2.0, 10, 17, **kwargs)


@pytest.mark.parametrize("alpha, m0", [(2.0, 3), (0.5, 7), (1.0, 1), (3.7, 40), (10.0, 123456), (1e-300, 12345),
                                      (1e-250, 9_999_999)])
def test_largest_pure_m_is_exact_at_the_boundary(alpha, m0):
    """⌊(e^ε − 1)·α⌋ (docs/mathematics.md §3.3) at ε on either side of log(1 + m0/α), against mpmath."""
    dm = P.DIRICHLET_MULTINOMIAL
    centre = math.log1p(m0 / alpha)
    for eps in (np.nextafter(centre, 0), centre, np.nextafter(centre, 10)):
        for k in (1, 2):
            with mpmath.workdps(60):
                expected = int(mpmath.floor(mpmath.expm1(mpmath.mpf(float(eps)) / k) * mpmath.mpf(alpha)))
            assert dm.largest_m(100, -alpha, 5 * alpha, float(eps), None, releases=k) == expected


@pytest.mark.parametrize("alpha, eps, k", [(1e-300, 800.0, 1), (1e-300, 700.0, 1), (1e-300, 709.0, 1),
                                           (1e-300, 1400.0, 2), (1e-308, 720.0, 1), (1e-250, 3000.0, 5),
                                           (5e-324, 745.0, 1), (1e-300, 5000.0, 1)])
def test_largest_pure_m_for_tiny_alpha_and_huge_eps_is_exact_and_fast(alpha, eps, k):
    """Tiny α and ε/k ≥ 700: a closed-form guess in log space and a bisection on the exact verdict
    (O(log cap) checks), against mpmath — no step of one at a time from the cap."""
    dm, cap = P.DIRICHLET_MULTINOMIAL, 10**7
    start = time.perf_counter()
    got = dm.largest_m(100, -alpha, 5 * alpha, eps, None, releases=k, m_cap=cap)
    assert time.perf_counter() - start < 0.5
    with mpmath.workdps(80):
        expected = int(min(cap, mpmath.floor(mpmath.expm1(mpmath.mpf(eps) / k) * mpmath.mpf(alpha))))
    assert got == expected


@pytest.mark.parametrize("n, theta, delta, k", [(13501, 2.0, 1e-3, 1), (13501, 2.0, 1e-3, 3), (17, 2.0, 0.05, 2),
                                                (10**6, 0.5, 1e-6, 10), (10**9, 1e-3, 0.3, 1000),
                                                (500, 1e6, 0.01, 7), (10**12, 1e300, 0.5, 2)])
def test_largest_global_m_of_sigma_zero_is_the_exact_profile_bound(n, theta, delta, k):
    """The largest m with 1 − (1 − T₁)^k ≤ δ, decided on the rationals, the same at every ε."""
    dp = P.DIRICHLET_PROCESS
    cap = 10**7
    start = time.perf_counter()
    got = dp.largest_m(n, 0.0, theta, 0.5, delta, releases=k, m_cap=cap)
    assert time.perf_counter() - start < 0.5
    assert got == dp.largest_m(n, 0.0, theta, 12.0, delta, releases=k, m_cap=cap)

    def holds(m):
        return 1 - ((Fraction(theta) + n - 1) / (Fraction(theta) + n - 1 + m)) ** k <= Fraction(delta)

    assert 0 <= got <= min(cap, P.singleton_limit(n, theta, delta))
    if got >= 1:
        assert holds(got)
    if got < cap:
        assert not holds(got + 1)


def test_sample_largest_m_is_the_exact_profile_bound():
    # the bundled sample's default column (n = 13 501), θ = 2, ε = 0.5, δ = 10⁻³: Theorem 2's δ* allowed
    # 6, the exact global profile allows 13 (= m_sing: T₁ = 13/13515 ≤ 10⁻³ < 14/13516)
    assert P.max_synthetic_size(13501, 2.0, 0.5, 1e-3) == 6
    assert P.DIRICHLET_PROCESS.largest_m(13501, 0.0, 2.0, 0.5, 1e-3) == 13
    spec = P.ReleaseSpec(0.0, 2.0, 13, 13501, eps=0.5, delta=1e-3)
    assert P.DIRICHLET_PROCESS.release_guarantee(spec).meets_target
    assert not P.DIRICHLET_PROCESS.release_guarantee(P.ReleaseSpec(0.0, 2.0, 14, 13501, eps=0.5,
                                                                   delta=1e-3)).meets_target


@pytest.mark.parametrize("eps", [0.05, 0.5, 2.5, 12.0])
def test_no_sigma_zero_statement_prints_a_delta_above_the_attack_advantage(eps):
    # the worked example of docs/mathematics.md §3.1 — multiplicities (2, 3), θ = 1, m = 3 — has the
    # paper's δ*(0.5) = 5/7 against an advantage T₁ = 3/8; every global δ stated is the exact profile
    mult = np.array([2, 3])
    spec = P.ReleaseSpec(0.0, 1.0, 3, 5, eps=eps, delta=0.5)
    release = P.DIRICHLET_PROCESS.release_guarantee(spec)
    assert release.delta == release.attack.advantage == 0.375
    statement = next(g for g in guarantees(spec, mult, eps, 0.5, n_mc=0, mc_seed=None) if g.scope == "global")
    assert statement.delta == release.attack.advantage and statement.meets_target
    assert "at every ε ≥ 0" in statement.description and "0.375" in statement.description
    if eps == 0.5:
        assert P.global_delta(5, 1.0, 3, 0.5) == pytest.approx(5 / 7, rel=1e-12)   # the paper's curve, unchanged
    curve = P.DIRICHLET_PROCESS.global_delta_curve(spec, np.array([0.05, 1.0, 12.0]))
    np.testing.assert_array_equal(curve, [0.375] * 3)
