"""Informativity page: how fast PYPP synthetic data recover the confidential data (SPEC §6).

Paper §4.2: W1 between a release and its confidential sample, against n on log–log
axes. Every number comes from ``core.informativity`` (the experiment, release-size
rules, slope fit) and ``core.simulation`` (the dyadic-geometric population); this page
holds the widgets, the caches (keyed by the population's content and every parameter,
seeds explicit) and the layout.
"""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

import ui_state as ui
from core import informativity, plots, simulation

st.set_page_config(page_title="bnp-synth · Informativity", page_icon="🔒", layout="wide")
ui.init_state()
st.title("Informativity: how fast synthetic data recover the data")

SOURCES = {"dyadic": "Dyadic-geometric population (simulated)",
           "data": "The current data (Data page), subsampled"}
RULES = {"privacy": "Largest admissible m for (ε, δ) (Theorem 2)",
         "power": "m = ⌈c·n^a⌉"}
# Page settings, kept under plain keys so they survive page switches (see ui_state).
# They are this experiment's own: they do not change the release settings of the other pages.
SETTINGS = {
    "inf_source": "dyadic", "inf_rule": "privacy", "inf_column": None,
    "inf_p": 0.1, "inf_population": 100_000, "inf_population_seed": 1,
    "inf_n_min": 100, "inf_n_max": 10_000, "inf_points": 6,
    "inf_eps": None, "inf_delta": None, "inf_c": 0.1, "inf_a": 1.0,
    "inf_theta": 1.0, "inf_runs": 200, "inf_seed": 2024,
}
for _name, _value in SETTINGS.items():
    if _name not in st.session_state:
        st.session_state[_name] = _value
# (ε, δ) start from the Privacy page's values the first time the page opens.
if st.session_state.inf_eps is None:
    st.session_state.inf_eps = float(st.session_state.eps)
if st.session_state.inf_delta is None:
    st.session_state.inf_delta = float(st.session_state.delta)

FORM_FIELDS = ("inf_p", "inf_population", "inf_population_seed", "inf_n_min", "inf_n_max", "inf_points",
               "inf_eps", "inf_delta", "inf_c", "inf_a", "inf_theta", "inf_runs", "inf_seed")


@st.cache_data(show_spinner=False, max_entries=8)
def dyadic_population(p: float, size: int, seed: int) -> np.ndarray:
    """``core.simulation.sample_dyadic_geometric`` with ``default_rng(seed)`` (cached)."""
    return simulation.sample_dyadic_geometric(size, p, np.random.default_rng(seed))


@st.cache_data(show_spinner=False, max_entries=16)
def run_experiment(population_key: str, _population: np.ndarray, n_grid: tuple[int, ...], rule: tuple,
                   theta: float, runs: int, seed: int, bounds: tuple[float, float]):
    """``core.informativity.informativity_experiment`` with ``default_rng(seed)`` (cached), with a
    progress bar driven by the experiment's progress callback."""
    kind, first, second = rule
    size_rule = (informativity.PrivacySizeRule(first, second) if kind == "privacy"
                 else informativity.PowerSizeRule(first, second))
    bar, progress = ui.progress_bar("Running the informativity experiment…")
    result = informativity.informativity_experiment(_population, np.asarray(n_grid), size_rule, theta, runs,
                                                    np.random.default_rng(seed), bounds=bounds, progress=progress)
    bar.empty()
    return result


# ------------------------------------------------------------------ explanation
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
top_left.radio("Population", list(SOURCES), format_func=SOURCES.get, **ui.bind("inf_source"))
top_right.radio("Release size m(n)", list(RULES), format_func=RULES.get, **ui.bind("inf_rule"))
source, rule_kind = st.session_state.inf_source, st.session_state.inf_rule

selection, problem = ui.load_selection()
ui.sidebar_summary(None if selection is None else selection.profile())
population = bounds = population_key = None
population_note = ""
if source == "data":
    if problem:
        st.error(f"The current data cannot be used: {problem} Choose the data on the Data page, or use the "
                 "dyadic-geometric population.")
        st.stop()
    prepared = selection.prepared
    numeric = ui.numeric_columns(prepared)
    if not numeric:
        st.error("The current selection has no numeric column: W1 needs numbers. Choose a numeric column on the "
                 "Data page, or use the dyadic-geometric population.")
        st.stop()
    if st.session_state.inf_column not in numeric:
        st.session_state.inf_column = numeric[0]
    column = st.selectbox("Column", numeric, **ui.bind("inf_column"))
    j = [str(c) for c in prepared.columns].index(column)
    info = prepared.column_info[j]
    values = prepared.values if prepared.d == 1 else prepared.values[:, j]
    population = np.asarray(values, dtype=np.float64)
    bounds = (float(info.base.lo), float(info.base.hi))
    population_key = f"{selection.key}:{column}"
    population_note = (f"Population: the {population.size:,} records of **{column}** from "
                       f"{selection.source.name}, on the mechanism's scale (after the Data page's transforms, "
                       f"scaled to [{bounds[0]:g}, {bounds[1]:g}] by the bounds); W1 is measured on that scale.")
    if info.bounds_from_data:
        st.warning(f"The bounds of {column!r} were read off the data (Data page): the base measure H then "
                   "depends on the confidential data, so a release made this way is not covered by the "
                   "privacy guarantees (including the Theorem 2 release sizes below).", icon="⚠️")

# ------------------------------------------------------------------ numeric settings (form)
with st.form("informativity_settings"):
    a, b, c = st.columns(3)
    with a:
        st.markdown("**Population**")
        if source == "dyadic":
            st.number_input("p (geometric success probability)", min_value=0.001, max_value=1.0, step=0.01,
                            format="%.3f", **ui.form_field("inf_p"))
            st.number_input("N (population size)", min_value=10, max_value=2_000_000, step=1000,
                            **ui.form_field("inf_population"))
            st.number_input("population seed", min_value=0, max_value=2**32 - 1, step=1,
                            **ui.form_field("inf_population_seed"))
        else:
            st.caption(population_note)
        st.number_input("θ (strength of the Dirichlet process)", min_value=0.01, max_value=1e6, step=0.5,
                        **ui.form_field("inf_theta"))
    with b:
        st.markdown("**Grid of n and runs**")
        st.number_input("smallest n", min_value=2, step=10, **ui.form_field("inf_n_min"))
        st.number_input("largest n", min_value=2, step=1000, **ui.form_field("inf_n_max"))
        st.number_input("grid points (log-spaced)", min_value=2, max_value=30, step=1, **ui.form_field("inf_points"))
        st.number_input("R (runs per grid point)", min_value=2, max_value=5000, step=10, **ui.form_field("inf_runs"))
        st.number_input("seed", min_value=0, max_value=2**32 - 1, step=1, **ui.form_field("inf_seed"))
    with c:
        st.markdown(f"**{RULES[rule_kind]}**")
        if rule_kind == "privacy":
            st.number_input("ε", min_value=0.01, max_value=50.0, step=0.1, format="%.2f", **ui.form_field("inf_eps"))
            st.number_input("δ", min_value=1e-12, max_value=0.5, step=0.001, format="%.6g",
                            **ui.form_field("inf_delta"))
        else:
            st.number_input("c", min_value=1e-6, max_value=1e6, step=0.05, format="%.4g", **ui.form_field("inf_c"))
            st.number_input("a", min_value=0.0, max_value=2.0, step=0.05, format="%.3f", **ui.form_field("inf_a"))
    st.form_submit_button("Run experiment", type="primary", on_click=ui.commit_form, args=(FORM_FIELDS,))

s = st.session_state
theta, runs, seed = float(s.inf_theta), int(s.inf_runs), int(s.inf_seed)
rule = ("privacy", float(s.inf_eps), float(s.inf_delta)) if rule_kind == "privacy" else \
    ("power", float(s.inf_c), float(s.inf_a))
try:
    if source == "dyadic":
        p, size, population_seed = float(s.inf_p), int(s.inf_population), int(s.inf_population_seed)
        population = dyadic_population(p, size, population_seed)
        bounds = (0.0, 1.0)
        population_key = f"dyadic:{p!r}:{size}:{population_seed}"
        population_note = (f"Population: N = {size:,} draws of g(Y), Y ~ Geometric(p = {p:g}) on {{1, 2, …}}, "
                           f"with g the dyadic map (g(1), g(2), g(3), … = 1/2, 1/4, 3/4, …), population seed "
                           f"{population_seed}; H uniform on [0, 1].")
    if int(s.inf_n_min) > int(s.inf_n_max):
        raise ValueError(f"the smallest n ({int(s.inf_n_min):,}) is above the largest n ({int(s.inf_n_max):,})")
    if int(s.inf_n_max) > population.size:
        raise ValueError(f"the largest n ({int(s.inf_n_max):,}) exceeds the population size "
                         f"N = {population.size:,}: samples are drawn without replacement")
    n_grid = tuple(int(v) for v in informativity.log_grid(int(s.inf_n_min), int(s.inf_n_max), int(s.inf_points)))
    result = run_experiment(population_key, population, n_grid, rule, theta, runs, seed, bounds)
except ValueError as exc:
    st.error(f"These settings cannot be run: {exc}")
    st.stop()

# ------------------------------------------------------------------ results
st.subheader("Mean W1 against n")
st.caption(population_note + f" θ = {theta:g}, R = {runs:,} runs per point, seed {seed}.")
if rule_kind == "privacy":
    st.markdown(f"Release size: the largest m for which the release is **globally** (ε, δ)-DP "
                f"with ε = {rule[1]:g}, δ = {rule[2]:g} (Theorem 2, σ = 0): a guarantee for every dataset of "
                "size n, approximate DP (δ > 0). It grows at most linearly in n: it never exceeds the "
                "singleton limit m_sing = ⌊δ(θ + n − 1)/(1 − δ)⌋ (SPEC §3.1).")
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

table = result.table()
plotted = table[table["m"] > 0]
if not plotted.empty:
    fig = plots.informativity_figure(plotted, slopes={result.label: slope} if math.isfinite(slope) else None)
    st.plotly_chart(fig, key="informativity_figure")
    st.caption(f"Bands: {100 * result.level:g}% Student-t confidence intervals of the mean over the R runs. "
               "Dashed: a reference line ∝ n^(−1/2) anchored at the first point.")

st.markdown("**Table** (one row per grid point)")
st.dataframe(table, hide_index=True)
st.download_button("Download the table (CSV)", data=ui.csv_bytes(table), file_name="informativity.csv",
                   mime="text/csv", key="download_informativity")
