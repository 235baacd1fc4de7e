"""PYPP against the field's peers on public data (issue 23). Prints JSON; not a test.

Run: python benchmarks/bench_peers.py [--runs 10] [--markdown]   (needs the extra: pip install -e ".[peers]")
     python benchmarks/bench_peers.py --reference [--runs 4] [--markdown]   (project vs reference; needs dpmm)

Datasets, all public and shipped in an installed package or with the project:
``cps_earnings`` (the bundled CPS sample, n = 13 501: earnings, age, degree, gender),
``gapminder`` (plotly.data, n = 1 704: lifeExp, gdpPercap, continent) and ``tips``
(plotly.data, n = 244: total_bill, tip, day, smoker). Numeric columns get bounds fixed
without looking at the records (the sample's public bounds; round numbers around the
published ranges), categorical columns their public category lists, 20 bins per numeric axis.

Mechanisms at ε ∈ {1, 4}, δ = 10⁻³: PYPP (σ = 0, θ = 2) at its largest admissible m = m*
(Theorem 2), the pure Dirichlet–multinomial (PYPP with σ < 0 over the cells, pure ε-DP), the
project's Laplace and Gaussian histograms and OpenDP's, AIM and MST — at m* and at m = n —
and the bootstrap (no privacy). Each is released ``--runs`` times (``core.evaluation.compare``
with ``yardsticks=True``); the figures are medians over the runs: m, W1 of each numeric column
(original units), TV of each categorical one, the joint W1 (scaled columns), the 3-way marginal
score with the score of m records subsampled from the data, UEM, the pMSE ratio, and the seconds per
release. Where m* = 0 (PYPP cannot release at δ = 10⁻³) only the m = n entries run.

Target: one release of AIM or MST at most 5 s on these domains (2-core machine).

``--reference``: the project's AIM and MST against the reference implementation ``dpmm`` 0.1.9
(Private-PGM's mechanisms with its NumPy estimator; installed ``--no-deps``: see
tests/test_peers_reference.py, whose harness runs it) on gapminder (lifeExp, gdpPercap,
continent) and tips (tip, day, smoker), 4 bins per numeric column, ε ∈ {1, 4}, δ = 10⁻³, the
reference at ρ/2 (add/remove neighbours; the same measurement noise). Each fit is released at
m = n by the same controlled rounding (dpmm's own sampler needs pandas < 3), and for AIM also
by i.i.d. draws from the project's fit. Figures are means over ``--runs`` fits: SDNist's
k-marginal on the cells (every pair, ``core.evaluation.sdnist_k_marginal``), W1 of each numeric
column's cells on the unit scale, seconds per fit.

``estimator_cross_check``: one MST measurement set on the CPS domain fitted by the dense
estimator (core.mechanisms.pgm) and by mbi's ``estimation.mirror_descent`` (Private-PGM, JAX):
the largest difference of their 2-way marginals.
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from core.data import ColumnSpec, prepare  # noqa: E402
from core.evaluation.columns import comparison_table  # noqa: E402
from core.evaluation.compare import calibrate, run_comparison  # noqa: E402
from core.privacy import max_synthetic_size  # noqa: E402

EPS, DELTA, THETA, BINS = (1.0, 4.0), 1e-3, 2.0, 20
TARGET_RELEASE_SECONDS = 5.0
SAME_M = ("pypp", "dirichlet_multinomial", "laplace_histogram", "gaussian_histogram", "opendp_laplace_histogram",
          "opendp_gaussian_histogram", "aim", "mst", "bootstrap")
AT_N = ("opendp_laplace_histogram_at_n", "opendp_gaussian_histogram_at_n", "aim_at_n", "mst_at_n")
PEERS = ("aim", "mst", "aim_at_n", "mst_at_n")


def datasets():
    """(name, frame, specs) of each public dataset."""
    import plotly.data

    cps = pd.read_csv(REPO / "sample_data" / "cps_earnings.csv")
    yield "cps_earnings", cps, [ColumnSpec("earnings", bounds=(0, 100)), ColumnSpec("age", bounds=(25, 34)),
                                ColumnSpec("degree", kind="categorical", categories=["bachelor", "highschool"]),
                                ColumnSpec("gender", kind="categorical", categories=["female", "male"])]
    gap = plotly.data.gapminder()
    yield "gapminder", gap, [ColumnSpec("lifeExp", bounds=(20, 90)), ColumnSpec("gdpPercap", bounds=(0, 120_000)),
                             ColumnSpec("continent", kind="categorical",
                                        categories=["Africa", "Americas", "Asia", "Europe", "Oceania"])]
    tips = plotly.data.tips()
    yield "tips", tips, [ColumnSpec("total_bill", bounds=(0, 60)), ColumnSpec("tip", bounds=(0, 12)),
                         ColumnSpec("day", kind="categorical", categories=["Thur", "Fri", "Sat", "Sun"]),
                         ColumnSpec("smoker", kind="categorical", categories=["No", "Yes"])]


def run_one(table, names, eps, runs, seed):
    n = table.n
    m_star = max_synthetic_size(n, THETA, eps, DELTA)
    keys = (SAME_M if m_star >= 1 else ()) + AT_N
    cal = calibrate(n, eps, DELTA, max(m_star, 1), theta=THETA, d=table.d, bins=BINS, mechanisms=keys,
                    levels=table.levels, unlisted=table.unlisted)
    stamps = []
    results = run_comparison(table, cal, runs=runs, rng=np.random.default_rng(seed), yardsticks=True,
                             progress=lambda fraction, message: stamps.append((time.perf_counter(), message)))
    seconds = {mech.name: (stamps[i + 1][0] - stamps[i][0]) / runs for i, mech in enumerate(cal.mechanisms)}
    rows = []
    for mech in cal.mechanisms:
        sub = results[results["mechanism"] == mech.name]
        row = {"mechanism": mech.name, "label": mech.label, "eps": eps, "guarantee": mech.guarantee.label,
               "m": int(sub["m"].iloc[0])}
        for col in names:
            c = sub[sub["column"] == col]
            row[f"TV[{col}]" if c["TV"].notna().any() else f"W1[{col}]"] = float(
                (c["TV"] if c["TV"].notna().any() else c["W1"]).median())
        row["W1[joint]"] = float(sub.loc[sub["column"] == "(joint)", "W1"].median())
        first = sub[sub["column"] == names[0]]
        for key in ("marginal3", "marginal3_reference", "UEM", "pMSE_logistic", "pMSE_ratio"):
            row[key] = float(first[key].median())
        row["seconds_per_release"] = seconds[mech.name]
        if mech.name in PEERS:
            row["target_seconds_max"] = TARGET_RELEASE_SECONDS
            row["meets_target"] = seconds[mech.name] <= TARGET_RELEASE_SECONDS
        rows.append(row)
    return m_star, rows


def estimator_cross_check(table):
    """Dense estimator vs mbi's mirror descent on one MST measurement set (CPS domain)."""
    try:
        import mbi
    except ImportError:
        return {"skipped": "mbi is not installed"}
    from core.mechanisms import histogram_counts, pgm
    from core.mechanisms.base import axis_sizes

    sizes = axis_sizes(BINS, table.d, table.levels)
    counts = histogram_counts(table.atoms, BINS, counts=table.counts, levels=table.levels).reshape(sizes)
    rng = np.random.default_rng(7)
    names = [f"c{j}" for j in range(table.d)]
    log = [pgm._measure(counts, c, 20.0, rng) for c in [(0,), (1,), (2,), (3,), (0, 1), (1, 2), (2, 3)]]
    t = time.perf_counter()
    dense = pgm.fit_marginals(sizes, log, iters=3000)  # the same fixed count as mbi's
    t_dense = time.perf_counter() - t
    domain = mbi.Domain(tuple(names), tuple(sizes))
    measurements = [mbi.LinearMeasurement(np.asarray(y).ravel(), tuple(names[a] for a in c), stddev=s)
                    for c, y, s in log]
    t = time.perf_counter()
    model = mbi.estimation.mirror_descent(domain, measurements, iters=3000)
    t_mbi = time.perf_counter() - t
    worst = 0.0
    for a in range(table.d):
        for b in range(a + 1, table.d):
            ours = pgm._marginal(dense, (a, b))
            theirs = np.asarray(model.project((names[a], names[b])).datavector(flatten=False)) / float(model.total)
            worst = max(worst, float(np.abs(ours - theirs).max()))
    return {"max_abs_difference_of_2way_shares": worst, "dense_seconds": t_dense, "mbi_seconds": t_mbi}


def _unit_w1(p_cells: np.ndarray, r_cells: np.ndarray) -> float:
    """W1 on [0, 1] between two distributions over the equal cells of a numeric column."""
    return float(np.abs(np.cumsum(p_cells / p_cells.sum()) - np.cumsum(r_cells / r_cells.sum()))[:-1].sum()
                 / p_cells.size)


def reference_comparison(runs: int, names=("gapminder", "tips"), eps_values=EPS) -> dict:
    """The project's AIM and MST against dpmm's (see the module docstring)."""
    sys.path.insert(0, str(REPO / "tests"))
    from test_peers_reference import dpmm_available, project_table, reference_table, table_of

    from core.evaluation import sdnist_k_marginal
    from core.mechanisms import pgm
    from core.privacy.zcdp import zcdp_rho

    if not dpmm_available():
        return {"skipped": "dpmm is not installed: pip install --no-deps dpmm==0.1.9 disjoint-set==0.7.4"}
    numeric = {"gapminder": (0, 1), "tips": (0,)}
    out = {}
    for name in names:
        counts = table_of(name, 4)
        cells = np.argwhere(np.ones(counts.shape, dtype=bool))
        frame = pd.DataFrame(cells, columns=[f"c{j}" for j in range(counts.ndim)])
        flat = counts.ravel()
        occupied = flat > 0
        n = int(counts.sum())
        rows = []
        for eps in eps_values:
            rho = zcdp_rho(eps, DELTA)
            for kind in ("aim", "mst"):
                variants = {"project": project_table, "reference (dpmm)": reference_table}
                for who, fit in variants.items():
                    samplers = ("round", "iid") if (who == "project" and kind == "aim") else ("round",)
                    scores = {s: [] for s in samplers}
                    w1 = {s: [] for s in samplers}
                    seconds = []
                    for r in range(runs):
                        t = time.perf_counter()
                        q = fit(kind, counts, rho, 1000 * r + int(eps))
                        seconds.append(time.perf_counter() - t)
                        rng = np.random.default_rng(77 + r)
                        for sampler in samplers:
                            release = (pgm.controlled_rounding(q, n, rng) if sampler == "round"
                                       else rng.multinomial(n, q.ravel() / q.sum()).reshape(q.shape))
                            scores[sampler].append(sdnist_k_marginal(
                                frame[occupied], frame, target_counts=flat[occupied], deid_counts=release.ravel()))
                            w1[sampler].append(np.mean([_unit_w1(pgm._marginal(counts, (a,)),
                                                                 pgm._marginal(release, (a,)))
                                                        for a in numeric[name]]))
                    for sampler in samplers:
                        rows.append({"eps": eps, "mechanism": kind.upper(), "implementation": who,
                                     "sampler": sampler, "k_marginal": float(np.mean(scores[sampler])),
                                     "k_marginal_sd": float(np.std(scores[sampler], ddof=1)) if runs > 1 else 0.0,
                                     "W1_unit": float(np.mean(w1[sampler])),
                                     "seconds_per_fit": float(np.mean(seconds))})
        out[name] = {"n": n, "cells": list(counts.shape), "rows": rows}
    return out


def reference_markdown(out) -> str:
    lines = []
    for name, block in out.items():
        if not isinstance(block, dict) or "rows" not in block:
            continue
        lines.append(f"**{name}** (n = {block['n']:,}; cells {' × '.join(map(str, block['cells']))})\n")
        lines.append("| ε | mechanism | implementation | release | SDNist k-marginal (SD) | W1 (unit) | s/fit |")
        lines.append("|---|---|---|---|---:|---:|---:|")
        for r in block["rows"]:
            lines.append(f"| {r['eps']:g} | {r['mechanism']} | {r['implementation']} | {r['sampler']} | "
                         f"{r['k_marginal']:.1f} ({r['k_marginal_sd']:.1f}) | {r['W1_unit']:.4f} | "
                         f"{r['seconds_per_fit']:.2f} |")
        lines.append("")
    return "\n".join(lines)


def markdown(out):
    lines = []
    for name, block in out["datasets"].items():
        lines.append(f"**{name}** (n = {block['n']:,}; m* of PYPP at ε = 1, 4: "
                     f"{', '.join(str(block['m_star'][str(e)]) for e in EPS)})\n")
        lines.append("| ε | mechanism | m | W1 / TV per column | joint W1 | 3-way marginal (subsample of m) | UEM | s/release |")
        lines.append("|---|---|---:|---|---:|---|---:|---:|")
        for row in block["rows"]:
            cols = ", ".join(f"{k} {v:.3g}" for k, v in row.items() if k.startswith(("W1[", "TV[")) and k != "W1[joint]")
            uem = "–" if row["UEM"] != row["UEM"] else f"{100 * row['UEM']:.1f}%"
            lines.append(f"| {row['eps']:g} | {row['label']} | {row['m']:,} | {cols} | {row['W1[joint]']:.3g} | "
                         f"{row['marginal3']:.0f} ({row['marginal3_reference']:.0f}) | {uem} | "
                         f"{row['seconds_per_release']:.2f} |")
        lines.append("")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--markdown", action="store_true", help="also print the table for docs/peers.md (stderr)")
    parser.add_argument("--reference", action="store_true", help="only the project vs the reference (dpmm)")
    parser.add_argument("--dataset", action="append", choices=["gapminder", "tips"],
                        help="with --reference: this dataset only (repeatable; default both)")
    parser.add_argument("--eps", type=float, action="append", help="with --reference: this ε only (repeatable)")
    args = parser.parse_args()
    if args.reference:
        out = reference_comparison(args.runs, tuple(args.dataset or ("gapminder", "tips")), tuple(args.eps or EPS))
        print(json.dumps(out, indent=2))
        if args.markdown:
            print(reference_markdown(out), file=sys.stderr)
        return
    out = {"config": {"eps": EPS, "delta": DELTA, "theta": THETA, "bins": BINS, "runs": args.runs,
                      "statistic": "median over runs"}, "datasets": {}}
    cps_table = None
    for i, (name, frame, specs) in enumerate(datasets()):
        prepared = prepare(frame, specs)
        table = comparison_table(prepared)
        cps_table = cps_table or table
        names = [s.name for s in specs]
        block = {"n": table.n, "columns": names, "m_star": {}, "rows": []}
        for eps in EPS:
            m_star, rows = run_one(table, names, eps, args.runs, seed=100 * i + int(eps))
            block["m_star"][str(eps)] = m_star
            block["rows"] += rows
        out["datasets"][name] = block
    out["estimator_cross_check"] = estimator_cross_check(cps_table)
    print(json.dumps(out, indent=2))
    if args.markdown:
        print(markdown(out), file=sys.stderr)


if __name__ == "__main__":
    main()
