"""Real microdata (issue 14): coarsening advisor, quality report, joint W1 and planner timings.

Synthetic wage-file-like data (seeded): wage (log-normal, cents), experience (integer
years), education (7 levels), region (4 levels). Measures, in this run:

* advisor: 10^5 rows × 4 columns, a grid of ≥ 20 candidates (target ≤ 3 s);
* quality report of a 10^5-row release against the 10^5 rows;
* joint W1 of R = 100 PYPP releases (n = m = 1000, 3 all-distinct columns): the residual
  exact method against one full ``ot.emd2`` per run (``core.evaluation.wasserstein1``),
  timed on 5 runs and scaled to 100 (target ≤ 2 s, method reported);
* the Compare page's joint W1: every mechanism × R = 100 runs, n = m = 1000 all-distinct
  rows in 2 columns (``core.evaluation.compare._joint_w1``; target ≤ 2 s, method reported);
* planner on 28 155 rows × 4 columns (the size of the public wage file of the issue)
  with 16 coarsenings × 4 θ (target ≤ 10 s); the same with the pure options searched too
  (3 × 3 public grid steps × 7 α, public category lists; target ≤ 20 s);
* the Privacy page's utility cost of the pure path (``core.planning.pure_utility_cost``,
  20 + 20 releases) on 5 000 rows × 4 columns (target ≤ 1 s: it runs on every slider move).

Prints JSON. Not a test.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from core.data import ColumnTransform
from core.planning import advise, candidate_grid, default_transforms  # noqa: E402
from core.evaluation.compare import _joint_w1, calibrate  # noqa: E402
from core.data import UniformBase
from core.mechanisms import pypp_release  # noqa: E402
from core.planning import GuaranteeTarget, PureSearch, UtilityTarget, default_grid_steps, plan_release  # noqa: E402
from core.planning import pure_utility_cost  # noqa: E402
from core.evaluation.quality import quality_report  # noqa: E402
from core.evaluation import joint_w1_runs, wasserstein1  # noqa: E402
from timing import timings  # noqa: E402


def wage_file(n: int, rng: np.random.Generator) -> pd.DataFrame:
    return pd.DataFrame({"wage": np.round(rng.lognormal(6.5, 0.6, n), 2),
                         "exper": rng.integers(0, 45, n).astype(float),
                         "educ": rng.choice([f"e{i}" for i in range(7)], n),
                         "region": rng.choice(["N", "S", "E", "W"], n)})


def main() -> None:
    rng = np.random.default_rng(2026)
    out = {}

    frame = wage_file(10**5, rng)
    grid = candidate_grid({
        "wage": default_transforms("wage", "numeric", bounds=(0.0, 100000.0), log=True),
        "exper": [ColumnTransform("exper"), ColumnTransform("exper", "round", step=5),
                  ColumnTransform("exper", "clip", bounds=(0, 40))],
        "educ": [ColumnTransform("educ"), ColumnTransform("educ", "keep", keep=("e0", "e1", "e2"))],
        "region": [ColumnTransform("region")],
    })
    best = min(timings(lambda: advise(frame, grid, eps=1.0, delta=1e-3, theta=1.0), 3))
    result = advise(frame, grid, eps=1.0, delta=1e-3, theta=1.0)
    out["advisor"] = {"rows": len(frame), "columns": frame.shape[1], "candidates": len(grid),
                      "seconds": best, "target_seconds": 3.0, "frontier": len(result.frontier()),
                      "max_m_star": max(c.m_star for c in result.candidates),
                      "min_singletons": min(c.singletons for c in result.candidates)}

    release = frame.sample(n=len(frame), replace=True, random_state=1).reset_index(drop=True)
    kinds = {"wage": "numeric", "exper": "numeric", "educ": "categorical", "region": "categorical"}
    best = min(timings(lambda: quality_report(frame, release, kinds), 3))
    out["quality_report"] = {"rows": len(frame), "seconds": best,
                             "overall": quality_report(frame, release, kinds).overall}

    x = rng.random((1000, 3))
    z = np.stack([pypp_release(x, np.ones(1000, int), 0.0, 5.0, 1000, rng,
                               base=[UniformBase(0.0, 1.0)] * 3).values for _ in range(100)])
    t = time.perf_counter()
    values, method = joint_w1_runs(z, x, rng=rng)
    fast = time.perf_counter() - t
    t = time.perf_counter()
    ref = [float(wasserstein1(x, z[r])) for r in range(5)]
    full = (time.perf_counter() - t) * 20
    out["joint_w1"] = {"runs": 100, "n": 1000, "m": 1000, "d": 3, "method": method, "seconds": fast,
                       "full_emd_seconds_per_100_runs": full, "speedup": full / fast, "target_seconds": 2.0,
                       "max_abs_diff_first_5": float(np.max(np.abs(values[:5] - ref)))}

    # The Compare page's joint W1: every mechanism, R = 100, all-distinct rows (issue 14 §4);
    # one method for all runs (exact on the residuals when it fits the budget, else sliced).
    x2 = rng.random((1000, 2))
    cal = calibrate(1000, 1.0, 1e-3, 1000, theta=5.0, d=2, bins=10)
    releases = [mech.release_runs(x2, 1000, 100, rng).reshape(100, 1000, 2) for mech in cal.mechanisms]
    best = min(timings(lambda: _joint_w1(x2, releases, 32 * 2**20, 50, np.random.default_rng(0)), 3))
    _, method = _joint_w1(x2, releases, 32 * 2**20, 50, np.random.default_rng(0))
    out["compare_joint_w1"] = {"mechanisms": len(cal.mechanisms), "runs": 100, "n": 1000, "m": 1000, "d": 2,
                               "method": method, "seconds": best, "target_seconds": 2.0}

    planner_frame = wage_file(28155, rng)
    candidates = candidate_grid({
        "wage": [ColumnTransform("wage"), ColumnTransform("wage", "signif", digits=2),
                 ColumnTransform("wage", "signif", digits=1), ColumnTransform("wage", "log_round", step=0.2)],
        "exper": [ColumnTransform("exper"), ColumnTransform("exper", "round", step=5),
                  ColumnTransform("exper", "round", step=20), ColumnTransform("exper", "clip", bounds=(0, 40))],
    })
    ticks = []
    t = time.perf_counter()
    plan = plan_release(planner_frame, kinds, GuaranteeTarget(1.0, 1e-3, "instance"),
                        UtilityTarget(w1={"wage": 150.0, "exper": 5.0}), candidates=candidates,
                        thetas=(0.5, 1.0, 5.0, 25.0), runs=30, rng=rng,
                        bounds={"wage": (1.0, 100000.0), "exper": (0.0, 60.0)}, log={"wage": True},
                        progress=lambda f, msg: ticks.append(f))
    out["planner"] = {"rows": len(planner_frame), "candidates": len(candidates), "thetas": 4,
                      "evaluated": len(plan.options), "runs": 30, "seconds": time.perf_counter() - t,
                      "target_seconds": 10.0, "progress_updates": len(ticks), "utility_met": plan.utility_met,
                      "message": plan.message}

    bounds = {"wage": (1.0, 100000.0), "exper": (0.0, 60.0)}
    log = {"wage": True}
    public_lists = {"educ": tuple(f"e{i}" for i in range(7)), "region": ("N", "S", "E", "W")}
    pure = PureSearch({c: default_grid_steps(c, bounds[c], log=log.get(c, False)) for c in bounds},
                      categories=public_lists)
    t = time.perf_counter()
    plan = plan_release(planner_frame, kinds, GuaranteeTarget(1.0, 1e-3, "instance"),
                        UtilityTarget(w1={"wage": 150.0, "exper": 5.0}), candidates=candidates,
                        thetas=(0.5, 1.0, 5.0, 25.0), runs=30, rng=rng, bounds=bounds, log=log, pure=pure)
    out["planner_with_pure_options"] = {
        "rows": len(planner_frame), "grids": 9, "alphas": len(pure.alphas), "evaluated": len(plan.options),
        "pure_evaluated": sum(o.pure for o in plan.options), "runs": 30, "seconds": time.perf_counter() - t,
        "target_seconds": 20.0, "message": plan.message}

    small = wage_file(5000, rng)
    steps = {"wage": 0.2, "exper": 6.0}
    best = min(timings(lambda: pure_utility_cost(small, kinds, steps, alpha=1.0, m_pure=1, theta=2.0, m=1000,
                                                 runs=20, rng=np.random.default_rng(1), bounds=bounds, log=log,
                                                 categories=public_lists), 3))
    out["pure_utility_cost"] = {"rows": len(small), "runs_per_kind": 20, "seconds": best, "target_seconds": 1.0}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
