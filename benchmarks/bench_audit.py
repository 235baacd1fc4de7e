"""Timing of the Audit page's computations (issue 12), and the audit's false-alarm rate.
Prints JSON; not a test.

Run: python benchmarks/bench_audit.py [--quick]

* ``audit``: :func:`core.evaluation.audit.audit_pypp` with 10^5 simulated releases per side,
  n = 10^4, m = 100 (target ≤ 5 s), for data with singletons and without (σ = 0), and
  for σ = 0.25; plus the Laplace-histogram audit at 10^5.
* ``pld_composition``: building the exact PYPP PLD and composing it k = 100 times, then
  reading δ(ε) on the page's 121-point grid and ε at δ (target ≤ 1 s), for the global
  worst case, an instance with singletons, and instances without (one and four
  multiplicities), cold each time.
* ``false_alarms``: how often the audit flags a *correct* mechanism, i.e. the larger of
  its two certified bounds exceeds the true ε (docs/audit.md §5.3, bound 1 − c). Seeded
  audits (seeds 0, 1, …) of PYPP (σ = 0) on data with a singleton at the exact δ of ε = 1
  (the singleton pair, where both attacks reach the boundary through the singular event)
  and of the Laplace histogram at its ε, each at confidence c = 0.95 and c = 0.5; with the
  alarm count, the rate and its one-sided 95% Clopper–Pearson upper bound.
Each figure is the best of ``repeats`` cold runs (best-of is the least noisy on a
shared 2-core machine), with the median next to it.
"""

import json
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from core.evaluation import audit
from core.privacy import pld
from core import privacy  # noqa: E402
from core.mechanisms import LaplaceHistogram  # noqa: E402
from timing import timings  # noqa: E402

QUICK = "--quick" in sys.argv
REPEATS = 2 if QUICK else 5
N, M, THETA = 10_000, 100, 1.0
EPS_GRID = np.linspace(0.0, 12.0, 121)


def summary(times):
    return {"best_s": round(min(times), 4), "median_s": round(statistics.median(times), 4)}


def false_alarm_rate(run_audit, audits: int, confidence: float) -> dict:
    """Alarms of ``audits`` seeded audits of a correct mechanism, against the bound 1 − c."""
    alarms = sum(run_audit(np.random.default_rng(seed), confidence).contradicts_stated for seed in range(audits))
    _, upper = audit.clopper_pearson(alarms, audits, 0.95, side="upper")
    return {"confidence": confidence, "audits": audits, "alarms": int(alarms), "rate": alarms / audits,
            "rate_upper_95": round(float(upper), 4), "bound": round(1 - confidence, 4)}


def false_alarms(rng) -> dict:
    mult, theta, m, eps = np.array([1] + [2] * 20 + [5] * 10), 1.0, 5, 1.0
    delta = float(privacy.instance_delta(mult, 0.0, theta, m, eps))    # exact at σ = 0 (the singleton term)

    def pypp(seed_rng, confidence):
        return audit.audit_pypp(mult, 0.0, theta, m, eps, delta, n_simulations=20_000, rng=seed_rng,
                                confidence=confidence)

    data = rng.beta(2, 5, size=300)
    lap = LaplaceHistogram(1.0, 10)

    def laplace(seed_rng, confidence):
        return audit.audit_histogram(data, lap, 100, n_simulations=20_000, rng=seed_rng, confidence=confidence)

    n_pypp, n_lap = (100, 50) if QUICK else (400, 200)
    return {"pypp_singleton_pair": {"n": int(mult.sum()), "m": m, "theta": theta, "eps": eps, "delta": delta,
                                    "runs": [false_alarm_rate(pypp, n_pypp, c) for c in (0.95, 0.5)]},
            "laplace_histogram_10_bins": {"n": 300, "m": 100, "eps": 1.0,
                                          "runs": [false_alarm_rate(laplace, n_lap, c) for c in (0.95, 0.5)]}}


def main():
    rng = np.random.default_rng(0)
    with_singletons = np.concatenate([np.ones(1000, int), np.full(1500, 2), np.full(300, 10), np.full(100, 30)])
    with_singletons = with_singletons[: np.searchsorted(np.cumsum(with_singletons), N) + 1]
    with_singletons[-1] -= with_singletons.sum() - N
    no_singletons = np.full(N // 2, 2)
    four = np.concatenate([np.full(2000, 2), np.full(1000, 3), np.full(200, 5), np.full(100, 10)])
    assert with_singletons.sum() == N and no_singletons.sum() == N
    out = {"n": N, "m": M, "theta": THETA, "simulations_per_side": 100_000, "audit": {}, "pld_composition": {}}

    cases = {"sigma0_singletons": (with_singletons, 0.0), "sigma0_no_singletons": (no_singletons, 0.0),
             "sigma0.25_singletons": (with_singletons, 0.25)}
    for name, (mult, sigma) in cases.items():
        def run(mult=mult, sigma=sigma):
            audit.audit_pypp(mult, sigma, THETA, M, 2.0, 0.05, n_simulations=100_000, rng=rng)
        out["audit"][name] = summary(timings(run, REPEATS))
    data = rng.beta(2, 5, size=N)
    lap = LaplaceHistogram(1.0, 25)
    out["audit"]["laplace_histogram_25_bins"] = summary(timings(
        lambda: audit.audit_histogram(data, lap, M, n_simulations=100_000, rng=rng), REPEATS))

    models = {"global": lambda: pld.pypp_global_loss(N, THETA, M),
              "instance_singletons": lambda: pld.pypp_instance_loss(with_singletons, THETA, M),
              "instance_r2": lambda: pld.pypp_instance_loss(no_singletons, THETA, M),
              "instance_four_multiplicities": lambda: pld.pypp_instance_loss(four, THETA, M)}
    for name, make in models.items():
        def run(make=make):
            loss = make()
            loss.delta(EPS_GRID, releases=100)
            loss.epsilon(1e-6, releases=100)
        out["pld_composition"][name] = summary(timings(run, REPEATS))
        out["pld_composition"][name]["grid"] = make().composition_discretization(100)
    out["false_alarms"] = false_alarms(np.random.default_rng(3))
    out["targets"] = {"audit_s": 5.0, "pld_composition_s": 1.0}
    out["meets_targets"] = (all(v["best_s"] <= 5.0 for v in out["audit"].values())
                            and all(v["best_s"] <= 1.0 for v in out["pld_composition"].values()))
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
