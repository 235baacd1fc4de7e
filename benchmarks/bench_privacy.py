"""Timing of every computation the Privacy page makes (issue 8). Prints JSON; not a test.

Run: python benchmarks/bench_privacy.py [--quick]

For each column it times, cold (no cache), the full set of core calls behind one render
of the Privacy page — σ = 0: the δ(ε) curves on the 40-point ε grid (instance, tight,
global, simple bound, singleton term), the point guarantees at the selected ε, the
ε-vs-m curves on the 25-point grid (global and instance-level) with m_sing, and the
inverse calibration (m* on the 30-point θ grid plus the selected θ); σ < 0: the δ bound
on the grid, at ε, and both pure-DP thresholds — plus ``max_instance_synthetic_size``
alone at the largest m* the column reaches (target ≤ 50 ms for m* up to 10^6).

Then the global accounting on its own (``figures``: each with its target and whether it
is met; the tests keep only hang guards of at least ten times these):

* ``cli_max_synthetic_size_s`` — m* of the CLI example ``python -m core release
  sample_data/cps_earnings.csv --column earnings --theta 2 --eps 2.5 --delta 0.999999``
  (n = 13 501, m* = 151 157): target 1 s (it took 35 s before the branch-and-bound search);
* ``cli_release_accounting_s`` — everything the CLI computes for that release's global
  guarantee: m*, then δ*(ε) and its verdict at m*: target 1 s;
* ``agency_max_synthetic_size_six_eps_s`` — m* at n = 10^8, θ = 2, δ = 10^-3 for six ε
  (0.05 … 5): target 2 s;
* ``extreme_max_synthetic_size_worst_s`` — the slowest m* over a grid of extremes
  (n up to 10^12, θ from 10^-3 to 10^300, δ from 10^-12 to 0.999999, ε from 10^-12 to
  709.5): target 2 s per call (several took over 30 s or raised before);
* ``small_n_huge_release_worst_s`` — the slowest m* where the release dwarfs the data
  (n from 10 to 300, ε from 7.5 to 12.5, δ = 0.999999: m* up to ~10^7 ≫ θ + n, where a
  beta-binomial tail spans ~m/(θ + n) terms per decay length and every tail sums ~10^6–10^7
  terms): target 30 s per call (the old code took up to ~2 min here).
"""

import itertools
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core import privacy  # noqa: E402
from timing import timings  # noqa: E402

EPS_GRID = np.geomspace(0.05, 12.0, 40)          # the page's δ(ε) grid
EPS_GRID_SIZE_CURVE = np.geomspace(0.05, 12.0, 25)  # the page's ε-vs-m grid
THETA_SIZE = 30


def theta_grid(n):
    return np.geomspace(0.1, max(2.0 * n, 10.0), THETA_SIZE)


def page_sigma0(counts, theta=2.0, m=100, eps=2.5, delta=0.01):
    n = int(counts.sum())
    privacy.instance_delta(counts, 0.0, theta, m, EPS_GRID)
    privacy.tight_instance_delta(counts, theta, m, EPS_GRID)
    privacy.global_delta(n, theta, m, EPS_GRID)
    privacy.global_delta_simple_bound(n, theta, m, EPS_GRID)
    privacy.global_delta(n, theta, m, np.inf)
    privacy.instance_delta(counts, 0.0, theta, m, eps)
    privacy.tight_instance_delta(counts, theta, m, eps)
    privacy.global_delta(n, theta, m, eps)
    privacy.synthetic_size_curve(n, theta, EPS_GRID_SIZE_CURVE, delta)
    privacy.synthetic_size_curve(n, theta, EPS_GRID_SIZE_CURVE, delta, multiplicities=counts)
    privacy.singleton_limit(n, theta, delta)
    for t in list(theta_grid(n)) + [theta + 0.5]:
        privacy.max_synthetic_size(n, float(t), eps, delta)


def page_sigma_neg(counts, alpha=1.0, m=100, eps=2.5):
    z = counts.size
    sigma, theta = -alpha, z * alpha
    privacy.instance_delta(counts, sigma, theta, m, EPS_GRID)
    privacy.instance_delta(counts, sigma, theta, m, eps)
    privacy.dirichlet_multinomial_pure_epsilon(counts, alpha, m, instance=True)
    privacy.dirichlet_multinomial_pure_epsilon(counts, alpha, m, instance=False)


def columns():
    cps = pd.read_csv(ROOT / "sample_data" / "cps_earnings.csv")
    out = {
        "cps_earnings": cps["earnings"].value_counts().to_numpy(),
        "cps_age": cps["age"].value_counts().to_numpy(),
    }
    rng = np.random.default_rng(8)
    # 10^6 rows, ~3·10^4 distinct values, large counts (a rounded income-like column).
    values = np.round(rng.lognormal(10.0, 1.0, size=1_000_000) / 8.0)
    out["1e6_rows_3e4_distinct"] = pd.Series(values).value_counts().to_numpy()
    # 2·10^5 categories with heavy-tailed counts (many singletons), ~10^6 rows.
    out["2e5_categories"] = 1 + rng.negative_binomial(0.3, 0.06, size=200_000)
    return out


def timed(fn, repeats):
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


EXTREME_GRID = {
    "n": [2, 100, 13_501, 10**6, 10**9, 10**12],
    "theta": [1e-3, 2.0, 1e6, 1e300],
    "delta": [1e-12, 1e-3, 0.5, 0.999999],
    "eps": [1e-12, 1e-3, 0.1, 2.5, 30.0, 709.5],
}


SMALL_N_GRID = {"n": [10, 30, 100, 300], "theta": [1e-3, 2.0, 100.0], "eps": [7.5, 10.0, 12.5]}


def figure(name, seconds, target, **extra):
    """One benchmark figure: the measured seconds, the target and whether it is met."""
    return {"figure": name, "seconds": seconds, "target_seconds": target, "met": bool(seconds <= target), **extra}


def accounting_figures(repeats, quick):
    cps = pd.read_csv(ROOT / "sample_data" / "cps_earnings.csv", usecols=["earnings"])
    n_cps = int(cps["earnings"].notna().sum())
    theta, eps, delta = 2.0, 2.5, 0.999999
    out = []
    m_star = privacy.max_synthetic_size(n_cps, theta, eps, delta, m_cap=10**6)   # the CLI's cap
    t = min(timings(lambda: privacy.max_synthetic_size(n_cps, theta, eps, delta, m_cap=10**6), repeats))
    out.append(figure("cli_max_synthetic_size_s", t, 1.0, n=n_cps, m_star=m_star))

    def release():
        m = privacy.max_synthetic_size(n_cps, theta, eps, delta, m_cap=10**6)
        privacy.global_delta(n_cps, theta, m, eps)
        privacy.global_delta_at_most(n_cps, theta, m, eps, delta)

    out.append(figure("cli_release_accounting_s", min(timings(release, repeats)), 1.0))

    def agency():
        for e in (0.05, 0.1, 0.5, 1.0, 2.0, 5.0):
            privacy.max_synthetic_size(10**8, 2.0, e, 1e-3)

    out.append(figure("agency_max_synthetic_size_six_eps_s", min(timings(agency, repeats)), 2.0))

    grid = EXTREME_GRID if not quick else {**EXTREME_GRID, "n": [100, 13_501, 10**9], "theta": [1e-3, 1e6]}
    worst, where = 0.0, None
    for n, th, d, e in itertools.product(grid["n"], grid["theta"], grid["delta"], grid["eps"]):
        t = time.perf_counter()
        privacy.max_synthetic_size(n, th, e, d)
        t = time.perf_counter() - t
        if t > worst:
            worst, where = t, {"n": n, "theta": th, "delta": d, "eps": e}
    out.append(figure("extreme_max_synthetic_size_worst_s", worst, 2.0, at=where,
                      calls=int(np.prod([len(v) for v in grid.values()]))))

    small = SMALL_N_GRID if not quick else {"n": [100], "theta": [2.0], "eps": [7.5]}
    worst, where = 0.0, None
    for n, th, e in itertools.product(small["n"], small["theta"], small["eps"]):
        t = time.perf_counter()
        m_star = privacy.max_synthetic_size(n, th, e, 0.999999)
        t = time.perf_counter() - t
        if t > worst:
            worst, where = t, {"n": n, "theta": th, "eps": e, "delta": 0.999999, "m_star": m_star}
    out.append(figure("small_n_huge_release_worst_s", worst, 30.0, at=where,
                      calls=int(np.prod([len(v) for v in small.values()]))))
    return out


def main():
    quick = "--quick" in sys.argv
    repeats = 1 if quick else 3
    out = {}
    out["figures"] = accounting_figures(repeats, quick)
    for row in out["figures"]:
        print(row, file=sys.stderr, flush=True)
    for name, counts in columns().items():
        counts = np.asarray(counts, dtype=np.int64)
        n = int(counts.sum())
        row = {"n": n, "k": int(counts.size), "distinct_multiplicities": int(np.unique(counts).size),
               "singletons": int(np.sum(counts == 1))}
        row["privacy_page_sigma0_s"] = timed(lambda: page_sigma0(counts), repeats)
        row["privacy_page_sigma_neg_s"] = timed(lambda: page_sigma_neg(counts), repeats)
        # max_instance_synthetic_size at the grid's ε with the largest m* below the cap (10^6).
        sizes = privacy.synthetic_size_curve(n, 2.0, EPS_GRID_SIZE_CURVE, 0.01, multiplicities=counts)
        below = np.flatnonzero(sizes < 10**6)
        e_star = float(EPS_GRID_SIZE_CURVE[below[-1]])
        row["max_instance_eps"] = e_star
        row["max_instance_m_star"] = int(sizes[below[-1]])
        row["max_instance_synthetic_size_s"] = timed(
            lambda: privacy.max_instance_synthetic_size(counts, 2.0, e_star, 0.01), repeats)
        out[name] = row
        print(name, row, file=sys.stderr, flush=True)
    out["targets"] = {"privacy_page_s": 0.5, "max_instance_synthetic_size_s": 0.05}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
