"""Informativity page: how fast PYPP synthetic data recover the confidential data (docs/mathematics.md).

Paper §4.2: W1 between a release and its confidential sample, against n on log–log
axes. Every number comes from ``core.evaluation.informativity`` (the experiment, release-size
rules, slope fit) and ``core.evaluation.simulation`` (the dyadic-geometric population); this page
holds the widgets, the caches (keyed by the population's content and every parameter,
seeds explicit) and the layout.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import streamlit as st

from core.evaluation import informativity
from core import plots
from ui import compute, downloads, state, widgets
from ui import selection as sel
from ui.text import literal, quoted

st.title("Informativity: how fast synthetic data recover the data")

SOURCES = {"dyadic": "Dyadic-geometric population (simulated)",
           "data": "The current data (Data page), subsampled"}
RULES = {"privacy": "Largest admissible m for (ε, δ) (Theorem 2)",
         "power": "m = ⌈c·n^a⌉"}
# Page settings, kept under plain keys so they survive page switches (see ui/state.py,
# which holds their ranges). They are this experiment's own: they do not change the
# release settings of the other pages; (ε, δ) start from the Privacy page's values.
SETTINGS = {
    "inf_source": "dyadic", "inf_rule": "privacy", "inf_column": None,
    "inf_p": 0.1, "inf_population": 100_000, "inf_population_seed": 1,
    "inf_n_min": 100, "inf_n_max": 10_000, "inf_points": 6,
    "inf_c": 0.1, "inf_a": 1.0,
    "inf_theta": 1.0, "inf_runs": 200, "inf_seed": 2024,
}
state.init_state(dict(SETTINGS, inf_eps=float(st.session_state.eps), inf_delta=float(st.session_state.delta)))

FORM_FIELDS = ("inf_p", "inf_population", "inf_population_seed", "inf_n_min", "inf_n_max", "inf_points",
               "inf_eps", "inf_delta", "inf_c", "inf_a", "inf_theta", "inf_runs", "inf_seed")


# ------------------------------------------------------------------ explanation
st.markdown(
    "**Why this matters to you.** W1 is the average distance each synthetic value has to move to become the "
    "confidential data — in the column's own units (dollars, years, …). This page shows how that error of a PYPP "
    "release shrinks as the data grow, at the release size your privacy target allows (Theorem 2: m grows at most "
    "linearly with n and never beyond the singleton limit). A slope near −1/2 means four times the records halve "
    "the error; a flatter slope means more data buys less. Read off the curve how many records you need before a "
    "release at your (ε, δ) is as faithful as your users need, or how much error your current n implies.")
st.markdown(
    "For each confidential sample size n on a log grid, each of R runs draws a confidential sample of size n "
    "(without replacement) from a population, releases m synthetic values with the Dirichlet-process "
    "posterior-predictive mechanism (PYPP with σ = 0, strength θ, base measure H uniform on the public "
    "bounds), and measures **W1 between the empirical measures of the release and of the sample**. "
    "The paper (§4.2, Theorem 4) predicts mean W1 ∝ n^(−1/2) when m grows linearly in n.")
st.caption("This experiment has its own settings: they do not change the release settings of the other pages "
           "(ε and δ start from the Privacy page's values).")

# ------------------------------------------------------------------ population and rule (immediate)
top_left, top_right = st.columns(2)
top_left.radio("Population", list(SOURCES), format_func=SOURCES.get, **state.bind("inf_source"))
top_right.radio("Release size m(n)", list(RULES), format_func=RULES.get, **state.bind("inf_rule"))
source, rule_kind = st.session_state.inf_source, st.session_state.inf_rule

selection, problem = sel.load_selection()
widgets.sidebar_summary(None if selection is None else selection.profile())
population = bounds = population_key = None
population_note, log_base = "", False
if source == "data":
    if problem:
        st.error(f"The current data cannot be used: {literal(problem)} Choose the data on the Data page, or use the "
                 "dyadic-geometric population.")
        st.stop()
    prepared = selection.prepared
    numeric = sel.numeric_columns(prepared)
    if not numeric:
        st.error("The current selection has no numeric column: W1 needs numbers. Choose a numeric column on the "
                 "Data page, or use the dyadic-geometric population.")
        st.stop()
    if st.session_state.inf_column not in numeric:
        st.session_state.inf_column = numeric[0]
    column = st.selectbox("Column", numeric, **state.bind("inf_column"))
    j = [str(c) for c in prepared.columns].index(column)
    info = prepared.column_info[j]
    # Every record while n ≤ compute.PICTURE_ROWS; above, a fixed-seed sample of that many
    # records drawn from the frequency table (the experiment subsamples it anyway).
    rows, sampled = compute.data_picture(prepared)
    values = rows if prepared.d == 1 else rows[:, j]
    # back to original units (old values exactly, docs/mathematics.md §2.4): W1 is then in the column's units
    population = pd.array(info.inverse(values)).to_numpy(dtype=np.float64, na_value=np.nan)
    # "missing is a value" (Data page): W1 is between numbers, so the population is the records with a number
    n_missing = int(np.count_nonzero(np.isnan(population)))
    population = population[~np.isnan(population)]
    if population.size < 2:
        st.error(f"{quoted(column)} has fewer than two records with a number: choose another column, or use the "
                 "dyadic-geometric population.")
        st.stop()
    bounds = (float(info.bounds[0]), float(info.bounds[1]))
    log_base = bool(info.spec.log)
    population_key = f"{selection.key}:{column}:original"
    which = (f"a sample of {population.size:,} of the {prepared.n:,} records (drawn without replacement with a "
             f"fixed seed)" if sampled else f"the {population.size:,} records")
    population_note = (f"Population: {which} of **{literal(column)}** from {literal(selection.source.name)}, in "
                       f"its original units (after the Data page's clipping to the public bounds "
                       f"[{bounds[0]:g}, {bounds[1]:g}]); H is "
                       + ("log-uniform on them (the Data page's log scale)" if log_base else "uniform on them")
                       + "; W1 is in the column's units."
                       + (f" The {n_missing:,} record(s) with a missing value in this column are left out (W1 is "
                          "between numbers)." if n_missing else ""))
    if info.bounds_from_data:
        st.warning(f"The bounds of {quoted(column)} were read off the data (Data page): the base measure H then "
                   "depends on the confidential data, so a release made this way is not covered by the "
                   "privacy guarantees (including the Theorem 2 release sizes below).", icon="⚠️")

# ------------------------------------------------------------------ numeric settings (form)
with st.form("informativity_settings"):
    a, b, c = st.columns(3)
    with a:
        st.markdown("**Population**")
        if source == "dyadic":
            widgets.form_number("p (geometric success probability)", "inf_p", step=0.01, format="%.3f")
            widgets.form_number("N (population size)", "inf_population", step=1000)
            widgets.form_number("population seed", "inf_population_seed", step=1)
        else:
            st.caption(population_note)
        widgets.form_number("θ (strength of the Dirichlet process)", "inf_theta", step=0.5)
    with b:
        st.markdown("**Grid of n and runs**")
        widgets.form_number("smallest n", "inf_n_min", step=10)
        widgets.form_number("largest n", "inf_n_max", step=1000)
        widgets.form_number("grid points (log-spaced)", "inf_points", step=1)
        widgets.form_number("R (runs per grid point)", "inf_runs", step=10)
        widgets.form_number("seed", "inf_seed", step=1)
    with c:
        st.markdown(f"**{RULES[rule_kind]}**")
        if rule_kind == "privacy":
            widgets.form_number("ε", "inf_eps", step=0.1, format="%.2f")
            widgets.form_number("δ", "inf_delta", step=0.001, format="%.6g")
        else:
            widgets.form_number("c", "inf_c", step=0.05, format="%.4g")
            widgets.form_number("a", "inf_a", step=0.05, format="%.3f")
    st.form_submit_button("Run experiment", type="primary", on_click=state.commit_form, args=(FORM_FIELDS,))

s = st.session_state
theta, runs, seed = float(s.inf_theta), int(s.inf_runs), int(s.inf_seed)
rule = ("privacy", float(s.inf_eps), float(s.inf_delta)) if rule_kind == "privacy" else \
    ("power", float(s.inf_c), float(s.inf_a))
with widgets.show_errors("These settings cannot be run: "):
    if source == "dyadic":
        p, size, population_seed = float(s.inf_p), int(s.inf_population), int(s.inf_population_seed)
        population = compute.dyadic_population(p, size, population_seed)
        bounds = (0.0, 1.0)
        population_key = f"dyadic:{p!r}:{size}:{population_seed}"
        population_note = (f"Population: N = {size:,} draws of g(Y), Y ~ Geometric(p = {p:g}) on {{1, 2, …}}, "
                           f"with g the dyadic map (g(1), g(2), g(3), … = 1/2, 1/4, 3/4, …), population seed "
                           f"{population_seed}; H uniform on [0, 1].")
    # the samples are drawn without replacement: the *default* grid (n up to 10,000) on a smaller file (3,987
    # records) stops at its size and says so; an n typed beyond the data is refused with the reason
    default_grid = int(s.inf_n_max) == SETTINGS["inf_n_max"]
    n_max = min(int(s.inf_n_max), int(population.size)) if source == "data" and default_grid else int(s.inf_n_max)
    n_min = int(s.inf_n_min)
    if n_max < int(s.inf_n_max):
        n_min = min(n_min, n_max)
        population_note += (f" The grid of n stops at the population's {population.size:,} records (largest n "
                            f"{int(s.inf_n_max):,} asked).")
    n_grid = tuple(int(v) for v in informativity.log_grid(n_min, n_max, int(s.inf_points) if n_max > n_min else 1))
    result = compute.run_informativity_experiment(population_key, population, n_grid, rule, theta, runs, seed, bounds,
                                                  log_base)

# ------------------------------------------------------------------ results
st.subheader("Mean W1 against n")
st.caption(population_note + f" θ = {theta:g}, R = {runs:,} runs per point, seed {seed}.")
if rule_kind == "privacy":
    st.markdown(f"Release size: the largest m for which the release is **globally** (ε, δ)-DP "
                f"with ε = {rule[1]:g}, δ = {plots.format_upper(rule[2])} (Theorem 2, σ = 0): a guarantee for "
                "every dataset of size n, approximate DP (δ > 0). It grows at most linearly in n: it never exceeds the "
                "singleton limit m_sing = ⌊δ(θ + n − 1)/(1 − δ)⌋.")
else:
    st.markdown(f"Release size {result.label}: a = 1 keeps a fixed fraction of the data (the fixed-δ regime), "
                "a < 1 a vanishing one. This rule fixes m, not a privacy level: no guarantee is stated for it "
                "here.")
skipped = result.n[result.m == 0]
if skipped.size:
    st.warning(f"No synthetic value can be released at n = {', '.join(f'{v:,}' for v in skipped)} "
               "under these (ε, δ) (m* = 0): those points are left out of the plot and the fit.")

slope, slope_se = result.slope, result.slope_se
c1, c2, c3 = st.columns(3)
if math.isfinite(slope):
    c1.metric("fitted log–log slope", f"{slope:.3f}",
              help="Least-squares slope of log(mean W1) against log(n) over the grid points with a release.")
    c2.metric("standard error of the slope", f"{slope_se:.3f}" if math.isfinite(slope_se) else "n/a",
              help="From the residuals of the fit; it ignores the Monte Carlo error of each mean.")
else:
    c1.metric("fitted log–log slope", "n/a")
    st.info("The slope needs at least two grid points with a release.")
c3.metric("reference slope (n^−1/2)", "-0.5")

width = bounds[1] - bounds[0]
table = result.table(width=width if source == "data" else None)
plotted = table[table["m"] > 0]
if not plotted.empty:
    fig = plots.informativity_figure(plotted, slopes={result.label: slope} if math.isfinite(slope) else None,
                                     y_title="mean W1" + (f" ({column}, original units)" if source == "data" else ""))
    st.plotly_chart(fig, key="informativity_figure")
    st.caption(f"Bands: {100 * result.level:g}% Student-t confidence intervals of the mean over the R runs. "
               "Dashed: a reference line ∝ n^(−1/2) anchored at the first point.")

table_units = "the population's units, on [0, 1])"
if source == "data":
    table_units = (f"the original units of {literal(column)}; “mean / (hi − lo)” is the mean W1 as a fraction of "
                   "the width of the public bounds, comparable across columns)")
st.markdown("**Table** (one row per grid point; W1 in " + table_units)
st.dataframe(table, hide_index=True)
downloads.confidential_download("Download the table (CSV)", functools.partial(widgets.confidential_csv_bytes, table),
                                file_name="CONFIDENTIAL_informativity.csv", mime="text/csv", key="download_informativity")
