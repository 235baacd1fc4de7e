"""Issue 25 ("Live"): every computation behind a control of the app, on real-sized data.
Prints JSON; not a test.

Run: python benchmarks/bench_live.py [--repeats 2]

Data: a generated 60 000-row upload of four columns — a log-normal wage with 2 decimals and a
few values held by thousands of records (7.25, 15, 20), an integer age 16–90, a region of 6
categories and hours (half of them 40) — 56 000 distinct rows, most of them singletons.
Every figure calls what the page calls, at the ``core`` / ``ui.compute`` level, uncached
(``ui.compute``'s functions through ``__wrapped__``), with its target on a quiet machine
(``met`` compares the wall-clock seconds; ``load_average`` says how quiet the machine was):

Privacy figures are given for the four columns and for ``wage`` alone (the column an upload
starts with), ``[selection]`` in their names:

* ``privacy_<regime>_move_s`` — a move of σ (or α), θ, m or the Monte Carlo size, or a switch
  of family: every computation of the Privacy page's section for that regime, cold (σ = 0:
  δ curves, point guarantees, old-values curve, ε-vs-m curves, inverse calibration, verdict;
  σ < 0: the δ bound, the pure thresholds and largest pure m; σ ∈ (0, 1): the Monte Carlo
  curve of 5 000 replicates, its old-values curve and the statement at ε): target 1 s;
* ``privacy_<regime>_eps_move_s`` — a move of ε or δ: what depends on them (σ ∈ (0, 1): the
  statement at the new ε from the replicates already drawn): target 1 s;
* ``privacy_pitman_yor_worst_s`` — σ = 0.25 with 200 000 replicates (the largest Monte Carlo
  size) and the largest m the page offers (its slider's limit, at most the singleton limit at
  the largest θ and δ), cold: target 30 s;
* ``compare_run_s`` — the Compare page's "Run comparison" on two numeric columns of a
  28 155-row upload, m = 284, R = 100, every mechanism: the runs, one release per
  mechanism, both overlays and the summary: target 3 s;
* ``compare_quality_on_request_s`` — the quality report of one release per mechanism, which
  the page computes only when its toggle is switched on: target 3 s;
* ``compare_sweep_s`` — its ε sweep (six ε, 20 runs each, the page's default): target 5 s;
* ``generate_release_s`` — "Generate release" at m = 10⁴ on the 60 000-row upload: the
  release, the page's overlays, the summary, the gated public zip, the quality report:
  target 1 s;
* ``curator_record_one_column_bytes`` — the CONFIDENTIAL curator record of a one-column
  release (m = 10⁴): target 10⁶ bytes;
* ``release_m1e6_ratio_to_rng_choice`` — a PYPP release of m = 10⁶ from 10⁵ records with 10⁴
  distinct values against ``rng.choice`` of the same size (as benchmarks/bench_core.py, best
  of 40 interleaved): target 2.
"""

import argparse
import json
import logging
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
logging.getLogger("streamlit").setLevel(logging.ERROR)
warnings.simplefilter("ignore")

from core import privacy  # noqa: E402
from core.data import ColumnSpec, UniformBase, prepare_frame  # noqa: E402
from core.evaluation import compare as core_compare  # noqa: E402
from core.mechanisms import pypp_release  # noqa: E402
from core.release import bundle as core_bundle  # noqa: E402
from core.release import recipe as core_recipe  # noqa: E402
from ui import compute, state  # noqa: E402

N_ROWS, COMPARE_ROWS = 60_000, 28_155
SPEC = dict(theta=2.0, m=100, eps=2.5, delta=0.01)     # the app's defaults
PY_SIGMA, PY_N_MC, DM_ALPHA = 0.25, 5_000, 1.0


def live_frame(n: int = N_ROWS, seed: int = 25) -> pd.DataFrame:
    """The generated upload: wage (2 decimals, mass points), age, region, hours."""
    rng = np.random.default_rng(seed)
    wage = np.round(rng.lognormal(3.0, 0.6, n), 2)
    pick = rng.random(n)
    wage[pick < 0.08] = 7.25
    wage[(pick >= 0.08) & (pick < 0.12)] = 15.0
    wage[(pick >= 0.12) & (pick < 0.14)] = 20.0
    return pd.DataFrame({
        "wage": wage,
        "age": rng.integers(16, 91, n),
        "region": rng.choice(["north", "south", "east", "west", "centre", "islands"], n,
                             p=[0.3, 0.25, 0.2, 0.15, 0.07, 0.03]),
        "hours": np.where(rng.random(n) < 0.5, 40, rng.integers(1, 80, n)),
    })


SPECS = (ColumnSpec("wage"), ColumnSpec("age"), ColumnSpec("region", kind="categorical"), ColumnSpec("hours"))


def timed(fn, repeats: int = 1) -> tuple[float, float]:
    """Best wall-clock and CPU seconds of ``repeats`` calls (``fn(i)`` gets the repeat's index)."""
    wall, cpu = np.inf, np.inf
    for i in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        fn(i)
        wall, cpu = min(wall, time.perf_counter() - t), min(cpu, time.process_time() - c)
    return wall, cpu


def figure(name: str, seconds: float, target: float, cpu: float | None = None, **extra) -> dict:
    out = {"figure": name, "seconds": round(seconds, 4), "target_seconds": target, "met": bool(seconds <= target)}
    if cpu is not None:
        out["cpu_seconds"] = round(cpu, 4)
    out.update(extra)
    print(out, file=sys.stderr, flush=True)
    return out


# --------------------------------------------------------------------------- Privacy page
def largest_m(n: int) -> int:
    """The largest m the Privacy page offers for n records: its slider's limit, and at most the
    singleton limit at the largest θ and δ offered (beyond it no ε gives a global guarantee)."""
    m_sing = privacy.singleton_limit(n, state.RANGES["theta"][1], max(state.DELTA_OPTIONS))
    return int(min(state.RANGES["m"][1], max(1, m_sing)))


def privacy_section(key: str, mult: np.ndarray, spec: privacy.ReleaseSpec, n_mc: int, *, eps_only: bool) -> None:
    """The ui.compute calls of the Privacy page for ``spec``'s regime (app_pages/privacy.py),
    uncached: all of them (a move of σ, θ, m, the Monte Carlo size, or a family switch), or
    those that depend on ε and δ only."""
    grid, mechanism = compute.EPS_GRID, spec.without_target()
    compute.release_guarantee.__wrapped__(spec)
    regime = spec.regime
    if regime is privacy.DIRICHLET_PROCESS:
        compute.dp_point_guarantees.__wrapped__(key, mult, spec)
        if not eps_only:
            compute.dp_delta_curves.__wrapped__(key, mult, mechanism, grid)
            compute.old_values_curve.__wrapped__(key, mult, mechanism, grid, 0, 0)
    elif regime is privacy.DIRICHLET_MULTINOMIAL:
        compute.dm_point_guarantees.__wrapped__(key, mult, spec)
        regime.largest_m(spec.n, spec.sigma, spec.theta, spec.eps, None, releases=spec.releases, m_cap=5000)
        if not eps_only:
            compute.dm_delta_curve.__wrapped__(key, mult, mechanism, grid)
    else:
        seed = spec.monte_carlo_seed
        if not eps_only:
            compute.py_monte_carlo.__wrapped__(key, mult, mechanism, grid, n_mc, seed)
            compute.old_values_curve.__wrapped__(key, mult, mechanism, grid, n_mc, seed)
        compute.py_instance_statement.__wrapped__(key, mult, spec, n_mc)
    if regime.size_rules and not eps_only:
        compute.size_curves.__wrapped__(key, mult, spec.n, spec.theta, spec.delta, compute.EPS_GRID_SIZE_CURVE)
    # the inverse calibration: the θ grid at the target (ε, δ), and the selected θ
    if not eps_only:
        theta_grid = compute.theta_grid(spec.n)
        compute.feasible_theta_m.__wrapped__(spec.n, spec.eps, spec.delta, theta_grid)
    compute.max_size_at.__wrapped__(spec.n, spec.theta, spec.eps, spec.delta)


def privacy_figures(mult: np.ndarray, repeats: int, selection: str) -> list[dict]:
    n, k = int(mult.sum()), mult.size
    out = []
    regimes = {"dirichlet_process": (0.0, SPEC["theta"]), "dirichlet_multinomial": (-DM_ALPHA, k * DM_ALPHA),
               "pitman_yor": (PY_SIGMA, SPEC["theta"])}
    for name, (sigma, theta) in regimes.items():
        def spec_at(i, eps=SPEC["eps"], sigma=sigma, theta=theta):
            # a new θ each repeat for σ ≥ 0: a cold computation (new Monte Carlo seed, no memo)
            moved = theta + 0.01 * i if sigma >= 0 else theta
            return privacy.ReleaseSpec(sigma=sigma, theta=moved, m=SPEC["m"] + i, n=n, eps=eps, delta=SPEC["delta"])

        wall, cpu = timed(lambda i: privacy_section("live", mult, spec_at(i), PY_N_MC, eps_only=False), repeats)
        out.append(figure(f"privacy_{name}_move_s[{selection}]", wall, 1.0, cpu, k=k,
                          distinct_multiplicities=int(np.unique(mult).size), n_mc=PY_N_MC if sigma > 0 else None))
        # ε moves after the section was drawn once (its Monte Carlo replicates kept by core)
        privacy_section("live", mult, spec_at(repeats), PY_N_MC, eps_only=False)
        wall, cpu = timed(lambda i: privacy_section("live", mult, spec_at(repeats, eps=1.0 + 0.37 * (i + 1)), PY_N_MC,
                                                    eps_only=True), repeats)
        out.append(figure(f"privacy_{name}_eps_move_s[{selection}]", wall, 1.0, cpu))
    m_max = largest_m(n)
    worst = privacy.ReleaseSpec(sigma=PY_SIGMA, theta=SPEC["theta"], m=m_max, n=n, eps=SPEC["eps"],
                                delta=SPEC["delta"])
    wall, cpu = timed(lambda i: privacy_section("live", mult, worst, state.RANGES["n_mc"][1], eps_only=False))
    out.append(figure(f"privacy_pitman_yor_worst_s[{selection}]", wall, 30.0, cpu, n_mc=state.RANGES["n_mc"][1],
                      m=m_max))
    return out


# --------------------------------------------------------------------------- Compare page
def compare_figures(repeats: int) -> list[dict]:
    frame = live_frame(COMPARE_ROWS, seed=7)[["wage", "age"]]
    prepared = prepare_frame(frame, [ColumnSpec("wage"), ColumnSpec("age")])
    data = compute.comparison_data(prepared)
    columns, m, runs, seed = tuple(data.names), 284, 100, 12345
    eps, delta, theta, bins = SPEC["eps"], SPEC["delta"], SPEC["theta"], 20

    def run(i):
        cal = compute.calibration.__wrapped__("cmp", prepared.n, 2, eps, delta, m, theta, bins, True, data.levels,
                                              data.unlisted)
        results = compute.comparison_runs.__wrapped__("cmp", data, cal, (i,), runs, seed + i, columns)
        releases = compute.one_release_per_mechanism.__wrapped__("cmp", data, cal, (i,), seed + i)
        picture, _ = compute.data_picture(prepared)
        for j in range(len(columns)):
            compute.comparison_overlay(data, picture, releases, j)
        core_compare.comparison_summary(results)
        return releases

    wall, cpu = timed(run, repeats)
    out = [figure("compare_run_s", wall, 3.0, cpu, rows=COMPARE_ROWS, k=data.k, m=m, runs=runs)]
    # the quality report of one release per mechanism: on request (a toggle under the overlays)
    releases = run(repeats)
    wall, cpu = timed(lambda i: compute.quality_of_releases.__wrapped__("cmp", (repeats,), seed + repeats, columns,
                                                                        prepared, releases), repeats)
    out.append(figure("compare_quality_on_request_s", wall, 3.0, cpu))
    wall, cpu = timed(lambda i: compute.sweep_runs.__wrapped__("cmp", data, compute.SWEEP_EPS, delta, m, theta, bins,
                                                               20, seed + i, columns), repeats)
    out.append(figure("compare_sweep_s", wall, 5.0, cpu, eps=list(compute.SWEEP_EPS), runs_per_eps=20))
    return out


# --------------------------------------------------------------------------- Synthetic data page
def release_recipe(specs, m: int, seed: int) -> core_recipe.ReleaseRecipe:
    return core_recipe.ReleaseRecipe(source=core_recipe.upload_source(b"bench"), columns=tuple(specs),
                                     eps=SPEC["eps"], delta=SPEC["delta"], m=m, size_rule="fixed", sigma=0.0,
                                     theta=SPEC["theta"], seed=seed, n_mc=PY_N_MC)


def generate_figures(frame: pd.DataFrame, repeats: int) -> list[dict]:
    prepared = prepare_frame(frame, list(SPECS))

    def generate(i):
        # ui.release.release, then what app_pages/synthetic_data.py computes before it draws
        result = core_recipe.run_recipe(release_recipe(SPECS, 10_000, 100 + i), prepared)
        core_bundle.comparison_figures(result)
        core_bundle.summary_table(result)
        core_bundle.gated_public_bundle(result)
        core_bundle.quality_report(result)

    wall, cpu = timed(generate, repeats)
    out = [figure("generate_release_s", wall, 1.0, cpu, m=10_000, rows=len(frame), columns=len(SPECS))]
    sizes = {}
    for label, specs in (("one_column", (SPECS[0],)), ("four_columns", SPECS)):
        chosen = prepare_frame(frame[[s.name for s in specs]], list(specs))
        result = core_recipe.run_recipe(release_recipe(specs, 10_000, 1), chosen)
        record = core_bundle.curator_bundle(result, figures=core_bundle.record_figures(result))
        sizes[label] = len(record)
    out.append({"figure": "curator_record_one_column_bytes", "bytes": sizes["one_column"], "target_bytes": 10**6,
                "met": sizes["one_column"] <= 10**6, "four_columns_bytes": sizes["four_columns"]})
    print(out[-1], file=sys.stderr, flush=True)
    return out


# --------------------------------------------------------------------------- release of m = 10^6
def release_ratio() -> dict:
    """As benchmarks/bench_core.py: n = 10^5 records, 10^4 distinct, m = 10^6, best of 40 interleaved."""
    rng = np.random.default_rng(2026)
    n, k, m = 100_000, 10_000, 1_000_000
    weights = rng.pareto(1.2, size=k) + 1e-3
    counts = 1 + rng.multinomial(n - k, weights / weights.sum())
    atoms = np.sort(rng.uniform(0, 1, size=k))
    x = np.repeat(atoms, counts)
    t_choice = t_release = np.inf
    for _ in range(40):
        t = time.perf_counter()
        rng.choice(x, size=m)
        t_choice = min(t_choice, time.perf_counter() - t)
        t = time.perf_counter()
        pypp_release(atoms, counts, 0.0, 2.0, m, rng, base=UniformBase(0, 1))
        t_release = min(t_release, time.perf_counter() - t)
    ratio = t_release / t_choice
    out = {"figure": "release_m1e6_ratio_to_rng_choice", "ratio": round(ratio, 3), "target_ratio": 2.0,
           "met": bool(ratio <= 2.0), "release_seconds": round(t_release, 4), "rng_choice_seconds": round(t_choice, 4)}
    print(out, file=sys.stderr, flush=True)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    started = time.perf_counter()
    compute.progress_bar("warm-up")   # Streamlit's first call outside a server inspects the stack once
    frame = live_frame()
    prepared = prepare_frame(frame, list(SPECS))
    mult = np.asarray(prepared.table.counts)
    # the four columns, and the column an upload starts with (core.data.default_columns: the
    # numeric column with the most distinct values)
    figures = privacy_figures(mult, args.repeats, "four columns")
    wage = np.asarray(prepare_frame(frame[["wage"]], [SPECS[0]]).table.counts)
    figures += privacy_figures(wage, args.repeats, "wage")
    figures += compare_figures(args.repeats)
    figures += generate_figures(frame, args.repeats)
    figures.append(release_ratio())
    print(json.dumps({"data": {"rows": N_ROWS, "distinct_rows": int(mult.size), "singletons": int(np.sum(mult == 1)),
                               "largest_count": int(mult.max())},
                      "figures": figures, "met": all(f["met"] for f in figures),
                      "load_average": [round(v, 2) for v in os.getloadavg()],
                      "bench_seconds": round(time.perf_counter() - started, 1)}, indent=2))


if __name__ == "__main__":
    main()
