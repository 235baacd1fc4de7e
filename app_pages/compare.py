"""Compare page: PYPP against the histogram baselines and, on request, the field's peers (OpenDP
histograms, AIM, MST) at the same (ε, δ) and m (docs/mathematics.md, docs/peers.md).

Calibration, runs, metrics and summaries all come from ``core.evaluation.compare``; this page lays
them out.
"""

from __future__ import annotations

import functools

import streamlit as st

from core.evaluation import compare as core_compare
from core.evaluation import evaluated as core_evaluated
from core import mechanisms as core_mechanisms
from core import plots
from core.plots import quality as plots_quality
from ui import compute, downloads, state, widgets
from ui import evaluated as ui_evaluated
from ui.text import literal, quoted


st.title("Compare mechanisms at the same privacy level")

selection = widgets.require_selection()
prepared = selection.prepared
# the release evaluated (the Synthetic data page's last draw, else the current settings): the first row
ev = ui_evaluated.evaluated(selection)
ui_evaluated.banner(ev)
with widgets.show_errors("The comparison cannot use these columns: "):
    # the frequency table on [0, 1]^d with each column's public domain: the n rows are never built
    data = compute.comparison_data(prepared)
columns = data.names
n, d = data.n, prepared.d   # the records compared (the numbers: see below)
categorical = [c.name for c in data.columns if c.kind == "categorical"]

theta = float(st.session_state.theta)
# the evaluated release's target (a σ < 0 release may state none for δ: the Privacy page's is the baselines')
eps = float(ev.spec.eps)
delta = float(ev.spec.delta) if ev.spec.delta is not None else float(st.session_state.delta)
evaluated_mech, evaluated_problem = None, None
try:
    evaluated_mech = ui_evaluated.comparison_mechanism(ev, data)
except ValueError as exc:
    evaluated_problem = str(exc)
if evaluated_mech is not None:
    first = (f"The first row is the evaluated release's mechanism, **{literal(evaluated_mech.label)}**, at its own "
             f"settings and size m = {int(evaluated_mech.release_size):,}, with its global guarantee of one release; "
             "PYPP's σ = 0 variants of the Bayesian family keep the Privacy page's θ")
else:
    first = (f"PYPP is compared at σ = 0 with θ = {theta:g} and its *global* guarantee (the exact profile the "
             "verdict reads: δ = m/(m + θ + n − 1) at every ε)")
st.markdown(f"Every mechanism is calibrated to **ε = {eps:g}, δ = {plots.format_upper(delta)}** (the evaluated "
            "release's target). " + first + "; the "
            "histogram baselines work on public cells: bins of each numeric column scaled to [0, 1] with its "
            "bounds" + (" times the public categories of each categorical column" if categorical else "")
            + ". Numeric columns are compared by W1 in their original units"
            + (", categorical columns by the total variation (TV) of their shares" if categorical else "")
            + "; the joint W1 is on the scaled columns (docs/quality.md §8).")
if data.missing_left_out:
    st.info(f"**Compared over the numbers:** {data.missing_left_out:,} of the {prepared.n:,} records have a missing value "
            "in a numeric column (missing is a value, Data page); the histograms and distances work on numbers, so "
            f"every mechanism here is run and measured on the other n = {n:,} records. A missing "
            "value of a categorical column is one more category and is compared.", icon="ℹ️")
if evaluated_problem is not None:
    st.warning(f"**The evaluated release ({literal(ev.label)}) cannot be compared here:** "
               f"{literal(evaluated_problem)}. The comparison below runs the other mechanisms without it (PYPP at "
               "σ = 0 with the Privacy page's θ), which is not the evaluated release.", icon="⚠️")
if prepared.any_bounds_from_data:
    st.warning("The scaling bounds were read off the confidential data: no guarantee below covers them.",
               icon="⚠️")

with st.container(border=True):
    a, b, c = st.columns(3)
    m_now = int(ev.spec.m) if ev.is_pypp else int(st.session_state.m)
    m_rule = a.radio("Release size m", ["current", "largest"], horizontal=True, key="compare_m_rule",
                     format_func={"current": f"current m = {m_now:,}",
                                  "largest": "largest admissible for PYPP"}.get)
    widgets.slider("histogram bins per numeric axis", "bins", step=1, where=b)
    widgets.slider("repetitions R", "runs", step=5, where=c)
    # an evaluation seed, never the release's (its own key; nothing drawn here is offered as a release)
    widgets.number("seed of the comparison (an evaluation seed, not a release's)", "compare_seed", step=1)
m_arg: int | str = m_now if m_rule == "current" else "largest"
bins, runs, seed = int(st.session_state.bins), int(st.session_state.runs), int(st.session_state.compare_seed)

with st.container(border=True):
    st.markdown("**The field's peers** — mechanisms of established libraries at the same (ε, δ), on the same "
                "public cells as the histograms (docs/peers.md)")
    peers: tuple[str, ...] = ()
    if core_mechanisms.peers_available():
        a, b = st.columns([3, 2])
        # the choice lives in the session (not in the widget, whose state Streamlit drops off the page)
        kept = [p for p in st.session_state.peers_chosen if p in core_mechanisms.PEER_LABELS]
        chosen = a.multiselect("peers", list(core_mechanisms.PEER_LABELS), format_func=core_mechanisms.PEER_LABELS.get,
                               **state.bind_value("compare_peers", kept,
                                                  lambda v: state.set_setting("peers_chosen", tuple(v or ()))),
                               help="OpenDP's Laplace and Gaussian histograms, calibrated by OpenDP's accounting; AIM "
                                    "and MST (select–measure–estimate, refitted on every run: a few tenths of a "
                                    "second to seconds each)")
        size = b.radio("peers' release size m", ["both", "m", "n"], horizontal=True,
                       format_func={"both": "both", "m": "the common m", "n": "m = n"}.get,
                       **state.bind_value("compare_peer_size", st.session_state.peers_size,
                                          lambda v: state.set_setting("peers_size", v)))
        peers = core_mechanisms.peer_entries(chosen, size)
    else:
        st.info(core_mechanisms.PEERS_MISSING[0].upper() + core_mechanisms.PEERS_MISSING[1:] + ".")
    with_yardsticks = st.checkbox("with the field's yardsticks (3-way marginal score, unique exact match, row match, pMSE "
                                  "ratio; SDNist's own k-marginal and pMSE; curator only)", key="compare_yardsticks")

# a peer chosen above that cannot run stops here with what is missing; a default mechanism is skipped
with widgets.show_errors("The mechanisms cannot be calibrated: "):
    cal = compute.evaluated_calibration(selection.key, n, d, eps, delta, m_arg, theta, bins,
                                        prepared.any_bounds_from_data, data.levels, data.unlisted, peers,
                                        ev.spec if evaluated_mech is not None else None, evaluated_mech)
cal_key = (eps, delta, m_arg, theta, bins, peers, ev.spec if evaluated_mech is not None else None)
if any("public category list" in why for why in cal.skipped.values()):
    which = ", ".join(quoted(c) for c in data.unlisted)   # column names: text, never Markdown
    st.info(f"Histogram baselines skipped: categorical column{'s' if len(data.unlisted) > 1 else ''} {which} "
            f"{'have' if len(data.unlisted) > 1 else 'has'} no public category list, and a histogram needs its "
            "public cells (a list read off the data would reveal which categories occur). Give the list in the "
            "column's panel on the Data page (public categories). PYPP, its old-values variant and the "
            "bootstrap run without one.")

for note in cal.notes:   # PYPP's singleton cap in words (numbers only: no user text)
    st.info(literal(note))
st.subheader(f"Calibration (m = {cal.m:,}, {cal.m_rule})")
# knob values as text: a δ rounded up with the guarantee's digits (core.formatting.format_upper)
st.dataframe(core_compare.calibration_table(cal.table), hide_index=True)
missed = cal.table.loc[(cal.table["mechanism"] != "all") & ~cal.table["meets_target"].astype(bool), "label"]
missed = [x for x in dict.fromkeys(missed) if x != compute.CEILING_LABEL]
if missed:
    st.warning("Not within the target (ε, δ): " + ", ".join(missed) + ".")

tab_runs, tab_sweep = st.tabs(["Comparison at this (ε, δ)", "Utility frontier over ε"])

with tab_runs:
    # before the run: its expected time, per mechanism (core's cost model, benchmarks/bench_compare_defaults.py)
    cost = core_evaluated.estimate_seconds(cal.mechanisms, cal.m, runs, d)
    slowest = sorted(((v, k) for k, v in cost.items() if k != "total"), reverse=True)[:3]
    st.caption(f"Estimated time of a run: about **{cost['total']:.0f} s** for R = {runs} (slowest: "
               + "; ".join(f"{literal(k)} {v:.0f} s" for v, k in slowest) + "), measured on a 2-core machine; the "
               "bar names each mechanism as it runs, and the run stops if you close the tab.")
    if cost["total"] > compute.COMPARE_BUDGET_S:
        st.warning(f"This run is expected to take more than {compute.COMPARE_BUDGET_S:.0f} s: lower R, the bins, or "
                   "the peers to shorten it.", icon="⏱️")
        r_lo, r_hi = state.RANGES["runs"]
        fitting = core_evaluated.runs_within(compute.COMPARE_BUDGET_S, cal.mechanisms, cal.m, d,
                                             choices=range(r_lo, r_hi + 1, 5))
        if fitting is not None:
            st.button(f"Fit it in {compute.COMPARE_BUDGET_S:.0f} s: R = {fitting} (about "
                      f"{core_evaluated.estimate_seconds(cal.mechanisms, cal.m, fitting, d)['total']:.0f} s)",
                      key="compare_fit_runs", on_click=state.set_setting, args=("runs", fitting))
    if st.button("Run comparison", type="primary", key="run_compare"):
        st.session_state.compare_params = (selection.key, cal_key, runs, seed, with_yardsticks)
    params = st.session_state.get("compare_params")
    if params != (selection.key, cal_key, runs, seed, with_yardsticks):
        st.info(f"Press **Run comparison** to run every mechanism R = {runs} times.")
    else:
        results = compute.comparison_runs(selection.key, data, cal, cal_key, runs, seed, columns, with_yardsticks)
        widgets.curator_only_note()
        for j, col in enumerate(columns):
            sub = results[results["column"] == col]
            metric, what = (("TV", "total variation of the category shares") if col in categorical
                            else ("W1", "W1 in original units"))
            st.plotly_chart(plots.w1_boxplot_figure(sub, value=metric, by="label", ceiling=compute.CEILING_LABEL,
                                                    value_title=(f"{metric} ({col}, original units)"
                                                                 if metric == "W1" else f"{metric} of {col}"),
                                                    title=f"{col}: {what} to the confidential data over {runs} runs"),
                            key=f"box_{j}")
        if d > 1:
            joint = results[results["column"] == "(joint)"]
            method = ", ".join(sorted(set(joint["W1_method"])))
            st.plotly_chart(plots.w1_boxplot_figure(joint, value="W1", by="label", ceiling=compute.CEILING_LABEL,
                                                    value_title="joint W1 (columns scaled to [0, 1])",
                                                    title=f"joint W1 over all columns ({method})"),
                            key="box_joint")
            st.caption(f"Joint W1 method: **{method}**, on the columns scaled to [0, 1]"
                       + (" with a distance of 1 between two different categories" if categorical else "")
                       + ". Exact is POT's linear program (ot.emd2) on the part "
                       "where each release differs from the data; when that does not fit the time budget for "
                       "every run, all runs get the sliced W1 (the mean 1-D W1 over the same random directions "
                       "for every mechanism — a lower bound of the joint W1), so the boxes stay comparable "
                       "(docs/quality.md).")
        releases = compute.overlay_releases(selection.key, data, cal, cal_key, seed)
        picture, sampled = compute.data_picture(prepared)
        mechanism_names = {mech.label: mech.name for mech in cal.mechanisms}
        for j, col in enumerate(columns):
            st.plotly_chart(compute.comparison_overlay(data, picture, releases, j, mechanism_names), key=f"kde_{j}")
        if sampled:
            st.caption(f"The confidential histograms show a fixed-seed sample of {len(picture):,} of the n = {n:,} "
                       "records; the confidential KDE curves and every metric above use all of them (the "
                       "frequency table).")
        summary = core_compare.comparison_summary(results)
        st.markdown(f"**Summary table** (mean over {runs} runs; numeric columns in original units, TV for "
                    "categorical columns, joint W1 on the scaled columns; m: each mechanism's release size)")
        st.dataframe(summary, hide_index=True)
        downloads.confidential_download("Download summary table (CSV)", functools.partial(widgets.confidential_csv_bytes, summary),
                                        file_name="CONFIDENTIAL_comparison_summary.csv", mime="text/csv", key="download_summary")
        # after the summary: one row per mechanism (seconds per release, and the yardsticks when asked)
        if with_yardsticks:
            st.subheader("The field's yardsticks (curator only)")
            st.caption(f"Mean over {runs} runs (docs/peers.md §4, docs/quality.md §9), computed against the "
                       "confidential data: CURATOR ONLY, not covered by any guarantee. seconds: wall-clock seconds "
                       "per release. 3-way marginal score (marginal3): 1000·(1 − mean TV) of every 3-way table (of "
                       "all columns when fewer; numeric columns in the histograms' bins), next to the score of m "
                       "records drawn from the data themselves (marginal3_reference); UEM: share of the data's "
                       "unique records found exactly in the release; row_match: share of released rows equal to a "
                       "record; pMSE_logistic: propensity mean squared error of a logistic model, pMSE_null its "
                       "expected value when release and data come from one distribution, pMSE_ratio = pMSE/null "
                       "(about 1 = indistinguishable; comparable across m, the raw pMSE is not); SDNist k-marginal: "
                       "every pair of columns, 20 percentile bins; SDNist pMSE: its depth-6 tree.")
        else:
            st.markdown("**Per mechanism** (guarantee, release size m, wall-clock seconds per release)")
        st.dataframe(core_compare.mechanism_table(summary), hide_index=True)
        # On request: the report of every mechanism's release costs about as much as the runs above.
        if d > 1:
            st.subheader("Quality report of one release per mechanism")
        if d > 1 and st.toggle("Show it (SDMetrics-style scores of the releases drawn in the overlays; about as "
                               "long to compute as the runs)", key="compare_quality"):
            quality_table, reports = compute.quality_of_releases(selection.key, cal_key, seed, columns, prepared, releases)
            st.caption("SDMetrics-style scores of each mechanism's release drawn above against the confidential "
                       "data (scaled units), 1 = the same: per column the KS complement (numeric) or TV complement "
                       "(categorical), per pair of columns the correlation similarity (two numeric columns) or the "
                       "contingency similarity; overall = mean of the two averages (docs/quality.md). One release "
                       "each: the scores vary from release to release.")
            st.dataframe(quality_table, hide_index=True)
            chosen = st.selectbox("pair heatmap of", list(reports), key="compare_quality_mechanism")
            st.plotly_chart(plots_quality.pair_scores_figure(reports[chosen], title=f"{chosen}: column pair trends"),
                            key="quality_heatmap")

with tab_sweep:
    st.caption("The ε sweep recalibrates the default mechanisms at each ε (PYPP at σ = 0 with the Privacy page's θ); "
               "the evaluated release is stated at one target, so it is compared on the first tab.")
    sweep_runs = st.slider("repetitions per ε", 5, 100, value=20, step=5, key="sweep_runs")
    st.caption(f"ε grid: {', '.join(f'{e:g}' for e in compute.SWEEP_EPS)}; δ = {plots.format_upper(delta)}; "
               "m as chosen above (\"largest\" re-computes m* at each ε).")
    if st.button("Run ε sweep", key="run_sweep"):
        st.session_state.sweep_params = (selection.key, delta, m_arg, theta, bins, int(sweep_runs), seed, peers)
    sweep_params = st.session_state.get("sweep_params")
    if sweep_params != (selection.key, delta, m_arg, theta, bins, int(sweep_runs), seed, peers):
        st.info("Press **Run ε sweep** to plot median W1 against ε for every mechanism.")
    else:
        frontier = compute.sweep_runs(selection.key, data, compute.SWEEP_EPS, delta, m_arg, theta, bins, int(sweep_runs),
                                 seed, columns, peers)
        for j, col in enumerate(columns):
            sub = frontier[frontier["column"] == col]
            metric = "TV" if col in categorical else "W1"
            st.plotly_chart(plots.w1_frontier_figure(sub, x="target_eps", value=metric, by="label",
                                                     ceiling=compute.CEILING_LABEL,
                                                     value_title=(f"median W1 ({col}, original units)"
                                                                  if metric == "W1" else f"median TV of {col}"),
                                                     title=f"{col}: median {metric} against ε (quartile bands)"),
                            key=f"frontier_{j}")
