"""PYPP against the field's peers on public data (issue 23). Prints JSON; not a test.

Run: python benchmarks/bench_peers.py [--runs 10] [--markdown]   (needs the extra: pip install -e ".[peers]")

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
(original units), TV of each categorical one, the joint W1 (scaled columns), the k-marginal
score with the score of m records subsampled from the data, UEM, pMSE, and the seconds per
release. Where m* = 0 (PYPP cannot release at δ = 10⁻³) only the m = n entries run.

Target: one release of AIM or MST at most 5 s on these domains (2-core machine).

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
        for key in ("k_marginal", "k_marginal_reference", "UEM", "pMSE"):
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
    dense = pgm.fit_marginals(sizes, log, iters=3000)
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


def markdown(out):
    lines = []
    for name, block in out["datasets"].items():
        lines.append(f"**{name}** (n = {block['n']:,}; m* of PYPP at ε = 1, 4: "
                     f"{', '.join(str(block['m_star'][str(e)]) for e in EPS)})\n")
        lines.append("| ε | mechanism | m | W1 / TV per column | joint W1 | k-marginal (subsample of m) | UEM | s/release |")
        lines.append("|---|---|---:|---|---:|---|---:|---:|")
        for row in block["rows"]:
            cols = ", ".join(f"{k} {v:.3g}" for k, v in row.items() if k.startswith(("W1[", "TV[")) and k != "W1[joint]")
            uem = "–" if row["UEM"] != row["UEM"] else f"{100 * row['UEM']:.1f}%"
            lines.append(f"| {row['eps']:g} | {row['label']} | {row['m']:,} | {cols} | {row['W1[joint]']:.3g} | "
                         f"{row['k_marginal']:.0f} ({row['k_marginal_reference']:.0f}) | {uem} | "
                         f"{row['seconds_per_release']:.2f} |")
        lines.append("")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--markdown", action="store_true", help="also print the table for docs/peers.md (stderr)")
    args = parser.parse_args()
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
