"""A Compare run at the page's defaults on a 60 000-row, 5-column file (issue 36 item 4). Prints JSON; not a test.

Run: python benchmarks/bench_compare_defaults.py [--rows 60000] [--peer aim]

The file: a log-normal wage with cents, an integer age, a 6-category region, weekly hours and a
3-category sex, every column on public bounds or a public category list (numpy, fixed seed). The
run is what the Compare page does on "Run comparison" at its defaults (ui/state.py: R = 100 runs,
20 bins per numeric axis, m = 100, θ = 2, ε = 2.5, δ = 0.01, no peer): the calibration with the
evaluated release's mechanism first (PYPP at σ = 0 at those settings), R runs of every mechanism
with their metrics (``core.evaluation.compare.run_comparison``) and one release per mechanism for
the overlays. Target: under 60 s on the 2-core development machine. It also prints the estimate the
page shows before the run (``core.evaluation.evaluated.estimate_seconds``) next to the measured
time, and each mechanism's measured seconds per release (the constants of the cost model come from
these figures, rounded up).

``--page`` times the Compare page itself instead (Streamlit's AppTest, in this process): the file
uploaded as CSV, its public bounds and category lists set as on the Data page, then the script run
that follows a press of "Run comparison" at the defaults — the runs, the box plots, the overlays
and the tables (the figure is that run's wall-clock seconds).

``--peer aim`` (or ``mst``) evaluates that peer's release instead: m = n = 60 000 rows per run, whose
graphical model takes tens of seconds per release on this domain (20³·6·3 = 144 000 cells) —
informational: the page's estimate says so before the run.
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core import data as core_data  # noqa: E402
from core.evaluation import comparison_table  # noqa: E402
from core.evaluation import compare as C  # noqa: E402
from core.evaluation import evaluated as E  # noqa: E402
from core.privacy import ReleaseSpec  # noqa: E402
from core.release import RELEASE_MECHANISMS  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402
from ui.selection import content_hash  # noqa: E402

TARGET_SECONDS = 60.0
RUNS, BINS, M, THETA, EPS, DELTA = 100, 20, 100, 2.0, 2.5, 0.01


def wage_file(rows: int, seed: int = 36) -> tuple[pd.DataFrame, list]:
    """The benchmark's confidential file and its public column specs."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "wage": np.round(np.clip(np.exp(rng.normal(3.0, 0.6, rows)), 1.0, 500.0), 2),
        "age": rng.integers(18, 81, rows),
        "region": rng.choice([f"region_{i}" for i in range(6)], rows),
        "hours": np.clip(np.round(rng.normal(38.0, 8.0, rows)), 1, 80).astype(int),
        "sex": rng.choice(["female", "male", "other"], rows, p=[0.49, 0.49, 0.02]),
    })
    specs = [core_data.ColumnSpec("wage", bounds=(1.0, 500.0), decimals=2),
             core_data.ColumnSpec("age", bounds=(18, 80), decimals=0),
             core_data.ColumnSpec("region", kind="categorical", categories=tuple(f"region_{i}" for i in range(6))),
             core_data.ColumnSpec("hours", bounds=(1, 80), decimals=0),
             core_data.ColumnSpec("sex", kind="categorical", categories=("female", "male", "other"))]
    return frame, specs


class _Recipe:
    """The public fields a peer's registry entry builds its mechanism from."""

    def __init__(self, eps, delta, bins):
        self.eps, self.delta, self.bins = eps, delta, bins


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=60_000)
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--peer", choices=("aim", "mst"), default=None)
    parser.add_argument("--page", action="store_true")
    args = parser.parse_args()
    frame, specs = wage_file(args.rows)
    if args.page:
        return page(frame, specs)
    start = time.perf_counter()
    table = comparison_table(core_data.prepare(frame, specs))
    prepare_s = time.perf_counter() - start
    if args.peer is None:
        evaluated = E.evaluated_mechanism(ReleaseSpec(0.0, THETA, M, table.n, eps=EPS, delta=DELTA), table)
    else:
        evaluated = E.evaluated_mechanism(_Recipe(EPS, DELTA, BINS), table, RELEASE_MECHANISMS[args.peer])
    start = time.perf_counter()
    cal = C.calibrate(table.n, EPS, DELTA, M, theta=THETA, d=table.d, bins=BINS, levels=table.levels,
                      unlisted=table.unlisted, evaluated=evaluated)
    estimate = E.estimate_seconds(cal.mechanisms, cal.m, args.runs, table.d)
    labels = []
    out = C.run_comparison(table, cal, runs=args.runs, rng=np.random.default_rng(1), columns=list(table.names),
                           progress=lambda fraction, message: labels.append(message))
    rng = np.random.default_rng([1, 1])   # one release per mechanism, for the overlays
    for mech in cal.mechanisms:
        mech.release(table.atoms, mech.release_size or cal.m, rng, counts=table.counts)
    figure = time.perf_counter() - start
    print(json.dumps({
        "figure": round(figure, 2), "target": TARGET_SECONDS, "met": figure < TARGET_SECONDS,
        "units": "seconds: calibration, R runs of every mechanism with their metrics, one release each",
        "rows": args.rows, "columns": table.d, "distinct_rows": table.k, "runs": args.runs, "bins": BINS, "m": cal.m,
        "evaluated": evaluated.label, "prepare_seconds": round(prepare_s, 2),
        "estimate_seconds": round(estimate["total"], 2),
        "seconds_per_release": {k: round(v, 5) for k, v in out.attrs["seconds"].items()},
        "progress_names_each_mechanism": all(any(m.label in s for s in labels) for m in cal.mechanisms),
    }, indent=1))


def page(frame: pd.DataFrame, specs) -> None:
    """Time the Compare page's run at its defaults (see the module docstring)."""
    app = str(Path(__file__).resolve().parents[1] / "app.py")
    content = frame.to_csv(index=False).encode()
    at = AppTest.from_file(app, default_timeout=600)
    at.session_state["source_kind"] = "upload"
    at.session_state["upload"] = {"name": "wages.csv", "bytes": content, "hash": content_hash(content)}
    at.session_state["columns"] = [s.name for s in specs]
    at.run()
    for spec in specs:
        t = dict(at.session_state["transforms"][spec.name])
        if spec.kind == "categorical":
            t.update(kind="categorical", categories=tuple(spec.categories))
        else:
            t.update(kind="numeric", bounds_public=True, lo=spec.bounds[0], hi=spec.bounds[1])
        at.session_state["transforms"][spec.name] = t
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception, [e.value for e in at.exception]
    estimate = next(c.value for c in at.caption if "Estimated time of a run" in c.value)
    start = time.perf_counter()
    at.button(key="run_compare").click().run()
    figure = time.perf_counter() - start
    assert not at.exception, [e.value for e in at.exception]
    print(json.dumps({"figure": round(figure, 2), "target": TARGET_SECONDS, "met": figure < TARGET_SECONDS,
                      "units": "seconds: the Compare page's script run after Run comparison, at its defaults",
                      "rows": len(frame), "columns": len(specs), "page_estimate": estimate,
                      "boxplots": len(at.get("plotly_chart"))}, indent=1))


if __name__ == "__main__":
    main()
