"""Timing of the comparison experiment (issue 3 target). Prints JSON; not a test.

Run: python benchmarks/bench_compare.py [--repeats 3]

Target: R = 100 runs of every mechanism of ``core.evaluation.compare`` (``DEFAULT_MECHANISMS`` and
``BAYESIAN_FAMILY``) — PYPP, the
old-values-only PYPP, the five histogram baselines, truncated-Dirichlet posterior sampling,
the pseudo-posterior (record and scalar weights) and the bootstrap — n = 5·10^4, m = 2000,
one column: at most 5 s on the 2-core development machine (issues 3 and 11). Each figure is the
best of a few repeats; the reference is the bootstrap alone (100 releases of m plus their
exact W1), measured in the same run, and every timing is also reported as a ratio to it.

The billion-record case (n = 10^9 as a table of 2 000 values, R = 5, m = 200; target
≤ 10 s) is the one tests/test_compare.py guards against hanging.

Issue 13: the comparison runs on the data's frequency table (distinct values and counts;
records are reduced to it once), so it is also timed from the table directly, and at agency
scale — n = 10^8 records given as the table of the rounded incomes (the 8·10^8 bytes of
rows are never built) — where its cost depends on k, m and R, not on n (informational:
the 5 s target is for n = 5·10^4).
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from timing import timings  # noqa: E402
from core.mechanisms import Bootstrap  # noqa: E402
from core.evaluation.compare import BAYESIAN_FAMILY, DEFAULT_MECHANISMS, calibrate, run_comparison  # noqa: E402
from core.evaluation import wasserstein1_runs  # noqa: E402

N, M, RUNS, EPS, DELTA, THETA, BINS = 50_000, 2000, 100, 2.5, 0.05, 2.0, 25
AGENCY_N = 10**8
TARGET_SECONDS = 5.0
#: n = 10^9 records given as a table of 2 000 distinct values, R = 5, m = 200, default
#: mechanisms (tests/test_compare.py keeps a hang guard of 10× this).
BILLION_TARGET_SECONDS = 10.0
#: Every mechanism of the comparison (the defaults and the Bayesian family of issue 11).
MECHANISMS = DEFAULT_MECHANISMS + tuple(k for k in BAYESIAN_FAMILY if k not in DEFAULT_MECHANISMS)


def income_like(rng, *, rounding):
    """Log-normal 'incomes', rounded (ties, like the thesis's US income data), log then min–max scaled."""
    income = np.exp(rng.normal(10.5, 0.8, size=N))
    if rounding is not None:
        income = np.round(income, rounding)
    logged = np.log(income)
    return (logged - logged.min()) / (logged.max() - logged.min())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(2026)
    out = {"config": {"n": N, "m": M, "runs": RUNS, "eps": EPS, "delta": DELTA, "theta": THETA,
                      "bins": BINS, "columns": 1, "repeats": args.repeats,
                      "mechanisms": None}}

    for label, rounding in (("income_rounded_to_100", -2), ("continuous_all_distinct", None)):
        x = income_like(rng, rounding=rounding)
        boot = Bootstrap()

        def reference():
            z = boot.release_runs(x, M, RUNS, rng)
            wasserstein1_runs(z, x)

        def full():
            cal = calibrate(N, EPS, DELTA, M, theta=THETA, bins=BINS, mechanisms=MECHANISMS)
            run_comparison(x, cal, runs=RUNS, rng=rng)

        cal = calibrate(N, EPS, DELTA, M, theta=THETA, bins=BINS, mechanisms=MECHANISMS)
        out["config"]["mechanisms"] = [mech.name for mech in cal.mechanisms]
        t_ref = timings(reference, args.repeats)
        t_full = timings(full, args.repeats)
        t_cal = timings(lambda: calibrate(N, EPS, DELTA, M, theta=THETA, bins=BINS, mechanisms=MECHANISMS), args.repeats)
        atoms, counts = np.unique(x, return_counts=True)

        def from_table(atoms=atoms, counts=counts, n=N):
            cal = calibrate(n, EPS, DELTA, M, theta=THETA, bins=BINS, mechanisms=MECHANISMS)
            return run_comparison(atoms, cal, counts=counts, runs=RUNS, rng=np.random.default_rng(1))

        t_table = timings(from_table, args.repeats)
        same = from_table().equals(run_comparison(x, cal, runs=RUNS, rng=np.random.default_rng(1)))
        per_mech = {}
        for mech in cal.mechanisms:
            per_mech[mech.name] = min(timings(lambda mech=mech: mech.release_runs(x, M, RUNS, rng),
                                              args.repeats))
        best_ref, best_full = min(t_ref), min(t_full)
        out[label] = {
            "distinct_values": int(atoms.size),
            "comparison_from_table_seconds_best": min(t_table),
            "table_results_equal_records": bool(same),
            "comparison_seconds_best": best_full,
            "comparison_seconds_all": t_full,
            "target_seconds_max": TARGET_SECONDS,
            "meets_target": best_full <= TARGET_SECONDS and max(t_full) <= TARGET_SECONDS,
            "calibration_seconds_best": min(t_cal),
            "reference_bootstrap_release_plus_w1_seconds_best": best_ref,
            "ratio_comparison_to_reference": best_full / best_ref,
            "release_runs_seconds_best": per_mech,
            "release_runs_ratio_to_reference": {k: v / best_ref for k, v in per_mech.items()},
        }
        if rounding is not None:
            # Agency scale: the same distinct values standing for 10^8 records.
            big = counts + rng.multinomial(AGENCY_N - N, counts / N)
            cal_big = calibrate(AGENCY_N, EPS, DELTA, M, theta=THETA, bins=BINS, mechanisms=MECHANISMS)
            t_big = timings(lambda atoms=atoms, big=big: from_table(atoms, big, AGENCY_N), args.repeats)
            per_big = {mech.name: min(timings(lambda mech=mech, atoms=atoms, big=big:
                                              mech.release_runs(atoms, M, RUNS, rng, counts=big), args.repeats))
                       for mech in cal_big.mechanisms}
            out["agency_scale_table"] = {
                "n": AGENCY_N, "distinct_values": int(atoms.size),
                "comparison_from_table_seconds_best": min(t_big),
                "comparison_from_table_seconds_all": t_big,
                "ratio_to_the_same_table_at_n_5e4": min(t_big) / min(t_table),
                "rows_bytes_never_built": 8 * AGENCY_N,
                "release_runs_seconds_best": per_big,
            }
    out["billion_records_table"] = billion_records(args.repeats)
    print(json.dumps(out, indent=2))


def billion_records(repeats):
    """The comparison of 10^9 records from their frequency table (2 000 distinct values)."""
    atoms = np.linspace(0.0, 1.0, 2000)
    counts = np.random.default_rng(37).integers(1, 10**5, 2000)
    counts[-1] += 10**9 - int(counts.sum())

    def run():
        cal = calibrate(10**9, 1.0, 1e-3, 200, theta=5.0, bins=10)
        run_comparison(atoms, cal, counts=counts, runs=5, rng=np.random.default_rng(38))

    t = timings(run, repeats)
    return {"n": 10**9, "distinct_values": 2000, "runs": 5, "m": 200, "seconds_best": min(t),
            "seconds_all": t, "target_seconds_max": BILLION_TARGET_SECONDS,
            "meets_target": min(t) <= BILLION_TARGET_SECONDS}


if __name__ == "__main__":
    main()
