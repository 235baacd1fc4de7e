"""The release report (core.release.report): guarantees carry the accounting's numbers and say their kind."""

import json

import numpy as np
import pytest

from core import privacy as P
from core.privacy import ReleaseSpec
from core.release import guarantees, release_report

MULT = [1, 2, 3, 3, 1, 7]


def test_dp_report_numbers_come_from_the_accounting_functions():
    rep = release_report(multiplicities=MULT, sigma=0.0, theta=2.0, m=4, eps=1.5, delta=1e-2, seed=9,
                         columns=["x"], bounds_from_data=True, command="python -m core release …")
    json.dumps(rep)  # serialisable as is
    g = {item["name"]: item for item in rep["guarantees"]}
    assert g["instance_delta"]["delta"] == P.instance_delta(MULT, 0.0, 2.0, 4, 1.5)
    assert g["tight_instance_delta"]["delta"] == P.tight_instance_delta(MULT, 2.0, 4, 1.5)
    # the exact global profile of one release, T₁ = 4/(4 + 2 + 16) at every ε (docs/audit.md §1.3)
    assert g["global_delta"]["delta"] == P.DIRICHLET_PROCESS.release_guarantee(
        ReleaseSpec(0.0, 2.0, 4, 17, eps=1.5, delta=1e-2)).delta == pytest.approx(4 / 22, rel=1e-15)
    assert g["instance_delta"]["scope"] == "instance" and g["global_delta"]["scope"] == "global"
    assert g["global_delta"]["meets_target"] == (g["global_delta"]["delta"] <= 1e-2)
    assert rep["data"] == {**rep["data"], "n": 17, "k": 6, "singletons": 2}
    assert rep["parameters"]["seed"] == 9 and any("not private" in w for w in rep["warnings"])
    assert rep["data"]["singleton_limit_m"] == P.singleton_limit(17, 2.0, 1e-2)


def test_pitman_yor_report_states_monte_carlo_and_no_global_guarantee():
    items = guarantees(P.ReleaseSpec(0.4, 1.0, 3, 17), MULT, 1.0, 0.1, n_mc=2000, mc_seed=3)
    inst = items[0]
    mc = P.monte_carlo_delta(MULT, 0.4, 1.0, 3, 1.0, n_mc=2000, rng=np.random.default_rng(3))
    assert inst.delta == pytest.approx(mc.upper[0]) and "Monte Carlo" in inst.description
    assert items[1].kind == "none" and items[1].delta is None


def test_dirichlet_multinomial_report_pure_conditions():
    alpha, z, m = 0.5, 8, 3
    eps_glob = np.log1p(m / alpha)
    items = guarantees(P.ReleaseSpec(-alpha, z * alpha, m, 17), MULT, eps_glob * 1.01, 0.1)
    assert items[1].kind == "pure" and items[1].delta == 0.0
    items = guarantees(P.ReleaseSpec(-alpha, z * alpha, m, 17), MULT, eps_glob * 0.9, 0.1)
    assert items[1].delta is None and "NOT" in items[1].description


def test_report_rejects_inconsistent_inputs():
    with pytest.raises(ValueError, match="n ="):
        guarantees(P.ReleaseSpec(0.0, 1.0, 3, 99), MULT, 1.0, 0.1)
    with pytest.raises(ValueError, match="delta"):
        release_report(multiplicities=MULT, sigma=0.0, theta=1.0, m=3, eps=1.0, delta=2.0, seed=1)


def _numbers_after(text, marker):
    import re
    return [float(x) for x in re.findall(re.escape(marker) + r"\s*(\d+(?:\.\d+)?(?:e[-+]?\d+)?)", text)]


@pytest.mark.parametrize("mult,sigma,theta,m,eps", [
    ([1, 3, 5, 9, 9], 0.0, 2.0, 4, 1.0),
    ([1000] * 10, -1.0, 14.0, 14, 2.708),        # pure threshold log 15 = 2.70805…
    ([2, 3, 4], -0.5, 2.0, 3, 0.5),
])
def test_printed_privacy_numbers_round_to_the_safe_side(mult, sigma, theta, m, eps):
    spec = ReleaseSpec(sigma=sigma, theta=theta, m=m, n=sum(mult))
    for g in guarantees(spec, mult, eps, 0.05):
        for value in _numbers_after(g.description, "δ = ") + _numbers_after(g.description, "δ ≤ "):
            assert g.delta is None or value >= g.delta
    if sigma < 0:
        threshold = P.dirichlet_multinomial_pure_epsilon(mult, -sigma, m)
        text = " ".join(g.description for g in guarantees(spec, mult, eps, 0.05))
        assert all(v >= threshold for v in _numbers_after(text, "every ε ≥ ")[:1])
        # at ε = 2.708 < log 15 the condition does not hold, and the text must not contradict it
        if mult[0] == 1000:
            assert "does NOT hold" in text and "2.708" not in _numbers_after(text, "every ε ≥ ")


def test_missed_target_is_a_warning():
    rep = release_report(multiplicities=[1, 1, 2], sigma=0.0, theta=1.0, m=50, eps=1.0, delta=1e-6, seed=1)
    assert any("misses the target" in w for w in rep["warnings"])


def test_report_records_repeated_releases_and_their_composition():
    one = release_report(multiplicities=MULT, sigma=0.0, theta=2.0, m=4, eps=1.5, delta=0.5, seed=1)
    assert one["release"]["releases"] == 1 and one["composition"] is None
    ten = release_report(multiplicities=MULT, sigma=0.0, theta=2.0, m=4, eps=1.5, delta=0.5, seed=1, releases=10)
    comp = ten["composition"]
    assert ten["release"]["releases"] == 10 and comp["releases"] == 10
    from core.privacy import pld
    single = float(pld.pypp_global_loss(sum(MULT), 2.0, 4).delta(1.5, 1))
    # composing ten releases costs more than one; the singleton bound 1 − (1 − T₁)^10 is a floor
    t1 = 4 / (4 + 2.0 + sum(MULT) - 1)
    assert comp["global_delta"] >= single and comp["global_delta"] >= 1 - (1 - t1) ** 10 - 1e-12
    assert comp["naive"][0]["eps"] == 15.0
    with pytest.raises(ValueError, match="releases"):
        release_report(multiplicities=MULT, sigma=0.0, theta=2.0, m=4, eps=1.5, delta=0.5, seed=1, releases=0)


def test_a_pure_report_states_its_guarantee_once():
    # issue 36: the curator report listed global_pure_dp twice (at the target ε and at the ε it certifies)
    alpha, z, m = 0.5, 8, 3
    rep = release_report(multiplicities=MULT, sigma=-alpha, theta=z * alpha, m=m, eps=2.5, delta=None, seed=1,
                         columns=["x"], command="python -m core release …")
    names = [g["name"] for g in rep["guarantees"]] + [rep["release_guarantee"]["name"]]
    assert names.count("global_pure_dp") == 1
    assert rep["release_guarantee"]["eps"] == pytest.approx(np.log1p(m / alpha), rel=1e-12, abs=0) or \
        rep["release_guarantee"]["eps"] >= np.log1p(m / alpha)
