"""Inference page: Bayesian inference by an analyst who receives only the release (docs/mathematics.md).

The release analysed is the one the Synthetic data page drew last (its settings and its secret
seed, :func:`ui.release.last_drawn`): this page never draws a release of its own, and offers no
file of released rows (the Synthetic data page's gated downloads are the only way out). Its
own seeds (posterior draws, repeated releases) are evaluation seeds with their own keys.

Paper §4.1 and Appendix C.1: given a release Z of the Dirichlet-process
posterior-predictive mechanism (σ = 0), the analyst's posterior is
DP(θ + m, (θH + Σ δ_{Z_i})/(θ + m)). Every number comes from ``core.evaluation``; this page
holds the widgets, the caches (keyed by the data's content and every parameter, seeds
explicit) and the layout.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import streamlit as st

from core import evaluation, privacy
from core.evaluation import dirichlet_posterior
from core.plots import experiments as pe
from ui import compute, downloads, release, state, widgets
from ui import evaluated as ui_evaluated
from ui.text import literal, quoted

st.title("Inference: what an analyst learns from the release")

# Page settings under plain keys (they survive page switches; see ui/state.py, which holds
# their ranges): evaluation seeds only; the release is the Synthetic data page's.
SETTINGS = {"post_column": None, "post_threshold": None, "post_threshold_for": None, "post_categories": None,
            "post_categories_for": None, "post_draws": 2000,
            "post_seed": 1, "rep_replicates": 100, "rep_draws": 500, "rep_seed": 7}
state.init_state(SETTINGS)
FORM_FIELDS = ("rep_replicates", "rep_draws", "rep_seed")


# ------------------------------------------------------------------ data and mechanism
selection = widgets.require_selection()
prepared = selection.prepared
spec = state.release_spec(selection.table.n, selection.table.k, selection.prepared.public_domain)
# the release evaluated (ui/evaluated.py): this page needs a drawn one, the analyst's data
ev = ui_evaluated.evaluated(selection)
ui_evaluated.banner(ev)
last = ev.drawn
if last is None:
    st.info("Generate a release on the **Synthetic data** page first: this page analyses that release (the analyst "
            "receives it and nothing else).")
    st.stop()
if not ev.is_pypp:
    st.info(f"**No conjugate posterior for {literal(ev.label)}.** This page's analysis is exact because PYPP's release "
            "is the posterior predictive of a Dirichlet-process prior the analyst shares: the release is then data "
            "for that prior, and its posterior is DP(θ + m, (θH + Σ δ_Zᵢ)/(θ + m)) (paper §4.1). "
            f"{literal(ev.label)} releases m = n rows sampled from a model fitted to noisy measurements of the cells; "
            "no prior makes those rows exchangeable draws of a posterior predictive, so treating them as data would "
            "count n noisy rows as n observations (intervals far too narrow). An honest analysis models the "
            "measurement noise (e.g. the noisy marginals, which the release does not publish) — beyond this page "
            "(docs/quality.md §10). Generate a PYPP release on the Synthetic data page to analyse it here.",
            icon="ℹ️")
    st.stop()
# the release's own settings (the Privacy page's may have moved since)
sigma, theta, m = last.spec.sigma, last.spec.theta, last.spec.m

if last.spec.regime is privacy.DIRICHLET_PROCESS:
    st.markdown(
        "**Why this matters to you.** Your users will analyse the release, not your data. Because the mechanism is the "
        "posterior predictive of a Dirichlet process, an analyst who knows only the public θ and bounds can turn the "
        "release into honest Bayesian answers — the mean, the quartiles, the share above a threshold or of a category, "
        "each with a credible interval — with ordinary conjugate formulas and no model of the privacy mechanism. This "
        "page shows you, as curator, what they will conclude from the release and how far that is from what your "
        "confidential data say: the bias of their estimates and how often their 95% intervals contain the true value "
        "over many releases. Where coverage falls short, the page says why — most often the pull of the base measure H "
        "on the public bounds (new values and the prior's weight θ), strongest for quantities the data make certain.")
    st.markdown(
        "The analyst receives only the release Z = (Z₁, …, Zₘ) and puts the mechanism's own prior "
        "DP(θ, H) on the data-generating law. The posterior is then "
        r"$\mathrm{DP}\big(\theta + m,\ (\theta H + \sum_i \delta_{Z_i})/(\theta + m)\big)$ "
        "(paper §4.1), simulated as Dirichlet weights over the distinct released values plus mass θ on a "
        "truncated stick-breaking draw from DP(θ, H) (truncation error below 10⁻⁶ of mass). Posterior means "
        "and equal-tailed 95% credible intervals follow for the mean, the quartiles and P(X > t) of a numeric "
        "column, and for the shares P(X = c) of a categorical one.")
else:
    st.markdown(
        "**Why this matters to you.** Your users will analyse the release, not your data. This page shows you, as "
        "curator, what an analyst who shares the mechanism's prior concludes from this release, next to what your "
        "confidential data say (curator only); the σ = 0 analysis of the paper (§4.1) is for the Dirichlet process "
        "and is not run for this regime.")
# ------------------------------------------------------------------ discovery probability (thesis §6.3)
st.subheader("Discovery probability: is the next value a new one?")
if last.spec != spec:
    st.info(f"The settings changed since the Synthetic data page drew the release: this page analyses that release "
            f"(σ = {sigma:g}, θ = {theta:g}, m = {m:,}). Generate a new one there to analyse the current settings.")
if not last.spec.regime.has_new_values:
    st.info("The discovery probability concerns values never seen before; the Dirichlet–multinomial mechanism "
            "(σ < 0) draws only from a public category domain. Choose σ ≥ 0 on the Privacy page.")
else:
    with widgets.show_errors("Could not compute the discovery probability: ", stop=False):
        disc = release.release(selection, last.spec, last.seed)
        n_conf, k_conf = selection.table.n, selection.table.k
        d_hat = compute.discovery_estimate(n_conf, disc.m, disc.n_new_values, sigma, theta)
        d_conf = evaluation.confidential_discovery_probability(n_conf, k_conf, sigma, theta)
        how = ("at σ = 0 it is θ/(θ + n + m) exactly: the new-value probability does not depend on the number "
               "of distinct confidential values" if sigma == 0 else
               "the posterior mean of (θ + (K_n + K)σ)/(θ + n + m) given K, with generalized factorial "
               "coefficients computed in log space")
        d1, d2 = st.columns(2)
        d1.metric("analyst's estimate D̂ (from the release)", f"{d_hat:.6g}")
        st.caption(f"Bayes estimate (thesis §6.3) of the probability that draw n + m + 1 is new, from the public "
                   f"n = {n_conf:,}, the release size m = {disc.m:,} and its K = {disc.n_new_values:,} distinct new "
                   f"values; {how} (docs/bayesian_family.md §4).")
        d2.metric("confidential value (θ + kσ)/(θ + n) — curator only", f"{d_conf:.6g}")
        widgets.curator_only_note()

if last.spec.regime is not privacy.DIRICHLET_PROCESS:
    if not last.spec.regime.has_new_values:   # σ < 0: the Dirichlet posterior over the public domain
        st.subheader("The analyst's posterior: a Dirichlet over the public domain")
        alpha, z = -sigma, int(round(theta / -sigma))
        st.markdown(
            f"With σ = {sigma:g} the release is the posterior predictive of the Dirichlet–multinomial model: prior "
            f"Dir(α, …, α) with α = |σ| = {alpha:g} on the z = {z:,} public cells. The analyst who receives the release "
            "and shares that prior gets, by conjugacy, the posterior "
            r"$\mathrm{Dir}(\alpha + c_1(Z), \dots, \alpha + c_z(Z))$ with $c_j(Z)$ the released rows in cell $j$; one "
            r"column's values $v$ then have $\mathrm{Dir}(\alpha z / z_j + c_v(Z))$ (aggregation), which gives the "
            f"posterior means and {compute.CREDIBLE_LEVEL:.0%} credible intervals below (docs/quality.md §10).")
        columns = [str(c) for c in prepared.columns]
        column = st.selectbox("Column analysed", columns, key="post_dm_column")
        info = prepared.column_info[columns.index(column)]
        numeric = info.kind == "numeric"
        try:   # the Synthetic data page says why a σ < 0 release cannot be drawn (no public domain): so does this one
            drawn = release.release(selection, last.spec, last.seed)
        except ValueError as exc:
            drawn = None
            st.warning(f"The release could not be drawn, so there is nothing to analyse: {literal(str(exc))}",
                       icon="⚠️")
        with widgets.show_errors("Could not analyse the release: ", stop=False):
            if drawn is None:
                st.stop()
            domain = (np.asarray(info.inverse(np.asarray(info.base.categories, dtype=float)), dtype=float) if numeric
                      else list(info.base.categories))
            # a numeric column keeping missing cells as a value has one more public cell (docs/mathematics.md §2.5)
            missing_cell = numeric and info.missing == "value"
            x_values, x_counts = compute.column_table(prepared, column)
            released = np.asarray(drawn.synthetic[column].to_numpy(dtype=float if numeric else object,
                                                                   na_value=np.nan if numeric else None))
            summary = dirichlet_posterior.dirichlet_column_posterior(
                domain, dirichlet_posterior.domain_codes(domain, released, numeric=numeric, missing=missing_cell),
                alpha * z / (len(domain) + missing_cell), numeric=numeric, missing=missing_cell,
                draws=int(st.session_state.post_draws),
                rng=np.random.default_rng(int(st.session_state.post_seed)), level=compute.CREDIBLE_LEVEL,
                threshold=float(np.median(domain)) if numeric else None,
                confidential_codes=dirichlet_posterior.domain_codes(domain, x_values, numeric=numeric,
                                                                    missing=missing_cell),
                confidential_counts=x_counts, labels=None if numeric else [str(v) for v in domain])
            widgets.curator_only_note()
            st.dataframe(summary, hide_index=True)
            st.caption("confidential: the value in your data (curator only); covered: inside the interval. The "
                       "threshold t of P(X > t) is the middle public grid point (public).")
    else:
        st.info(f"**No conjugate posterior for σ = {sigma:g} on this page.** Its analysis is the Dirichlet "
                "process's (σ = 0): the release is the posterior predictive of DP(θ, H), so the analyst's posterior is "
                "again a Dirichlet process. For σ ∈ (0, 1) the release is the Pitman–Yor posterior predictive, and "
                "the analyst's posterior (Pitman 1996) is not a Pitman–Yor process: Dir(n₁ − σ, …, n_K − σ, θ + Kσ) "
                "weights on the K distinct released values (nᵢ their counts) and a fresh PY(σ, θ + Kσ, H) on the rest. "
                "This page's simulator, coverage checks and repeated releases are built for σ = 0 and are not run "
                "for it (docs/quality.md §10). The discovery probability above is this regime's.", icon="ℹ️")
    st.stop()

columns = [str(c) for c in prepared.columns]
if st.session_state.post_column not in columns:
    st.session_state.post_column = columns[0]

left, _, right = st.columns(3)
column = left.selectbox("Column analysed", columns, **state.bind("post_column"),
                        help="With several columns the release is of whole rows; the analyst's posterior for one "
                             "column is the same Dirichlet process restricted to that column.")
info = prepared.column_info[columns.index(column)]
categorical = info.kind == "categorical"

# ------------------------------------------------------------------ the release
with widgets.show_errors("Could not generate the release: "):
    drawn = release.release(selection, last.spec, last.seed)   # σ = 0 here: the page stopped otherwise
synthetic = drawn.synthetic
# The confidential column as its frequency table (distinct values, counts): never the n records.
x_values, x_counts = compute.column_table(prepared, column)

if categorical:
    # P(X = c) for chosen categories: the public list if the column has one, else the labels
    # the release shows (new labels excluded: they name values drawn from H, not categories).
    labels = synthetic[column].to_numpy(dtype=object)
    x = np.asarray(x_values, dtype=object)
    # missing is a value (Data page): one more category, P(X = missing) like any other, under a name
    # no category of the column has (an empty cell in the release, None in the data)
    missing_label = compute.MISSING_LABEL
    known = {str(v) for v in (*x.tolist(), *(info.spec.categories or ()))}
    while missing_label in known:
        missing_label += "'"
    has_missing = bool(pd.isna(x).any() or pd.isna(labels).any())
    if has_missing:
        labels = np.where(pd.isna(labels), missing_label, labels).astype(object)
        x = np.where(pd.isna(x), missing_label, x).astype(object)
    released = pd.Series(labels[~np.asarray(drawn.is_new)]).value_counts(sort=True)
    options = list(info.spec.categories) if info.spec.categories is not None else list(released.index)
    if has_missing and missing_label not in options:
        options.append(missing_label)
    if st.session_state.post_categories_for != (selection.key, column) or st.session_state.post_categories is None:
        st.session_state.post_categories = [c for c in released.index if c in set(options)][:5] or options[:1]
        st.session_state.post_categories_for = (selection.key, column)
    st.session_state.post_categories = [c for c in st.session_state.post_categories if c in set(options)]
    right.multiselect("categories c of P(X = c)", options, **state.bind("post_categories"), format_func=str,
                      help="From the column's public category list, or else the categories the release shows.")
    categories = tuple(st.session_state.post_categories)
    scale_label = str(column)
    z = labels
    st.caption(f"Mechanism of the release: σ = 0, θ = {theta:g}, m = {m:,}. On a categorical column H draws "
               "a fresh label for each new value, so it puts no mass on any given category: the posterior share "
               "of c is Beta(n_c, θ + m − n_c), n_c the released values equal to c, with mean n_c/(θ + m); a "
               "category the release does not show has share 0 (docs/mathematics.md §6).")
else:
    if info.spec.log:
        # H is uniform on the log scale (Data page), so that is where the analyst's prior is a DP with uniform base.
        scale_label, to_scale, bounds = f"log({column})", np.log, info.transformed_bounds()
    else:
        scale_label, to_scale, bounds = str(column), np.asarray, info.bounds
    bounds = (float(bounds[0]), float(bounds[1]))
    # t starts at the middle of the public bounds, and again whenever the data or the column change.
    if st.session_state.post_threshold_for != (selection.key, column) or st.session_state.post_threshold is None:
        st.session_state.post_threshold = float(np.mean(bounds))
        st.session_state.post_threshold_for = (selection.key, column)
    right.number_input(f"threshold t of P(X > t), on the scale of {literal(scale_label)}", step=0.01, format="%.6g",
                       **state.bind("post_threshold"))
    threshold = float(st.session_state.post_threshold)
    z = to_scale(synthetic[column].to_numpy(dtype=np.float64))
    x = to_scale(np.asarray(x_values, dtype=np.float64))
    # "missing is a value" (Data page): the functionals are of the numbers; empty cells are left out on both sides
    if np.isnan(z).any() or np.isnan(x).any():
        present = ~np.isnan(x)
        st.caption(f"Missing is a value of this column: the {int(np.isnan(z).sum()):,} empty cell(s) of the release "
                   "and the missing records of the data are left out; the functionals below are those of the "
                   "numbers, given that a value is present.")
        z, x, x_counts = z[~np.isnan(z)], x[present], np.asarray(x_counts)[present]
    st.caption(f"Mechanism of the release: σ = 0, θ = {theta:g}, m = {m:,}. H is uniform on "
               f"[{bounds[0]:.6g}, {bounds[1]:.6g}] on the scale of {literal(scale_label)}"
               + (" (the Data page's log transform)." if info.spec.log else "."))
    if info.bounds_from_data:
        st.warning(f"The bounds of {quoted(column)} were read off the confidential data (Data page): the base measure H, "
                   "and hence this analysis, depends on them, and the release is not covered by the privacy "
                   "guarantees.", icon="⚠️")

st.subheader("The release Z")
r1, r2, r3 = st.columns(3)
r1.metric("released values m", f"{len(z):,}")
r2.metric("distinct values in Z", f"{pd.unique(pd.Series(z)).size:,}")
r3.metric("distinct new values K (drawn from H)", f"{drawn.n_new_values:,}")
st.caption("The release the Synthetic data page drew last, with its secret seed (recorded only in its CONFIDENTIAL "
           "curator record). Its file is downloaded there, behind the publication gate: this page offers none.")

# ------------------------------------------------------------------ posterior from this release
st.subheader("Posterior given the release")
if categorical and not categories:
    st.info("Choose at least one category c above: the page shows the posterior of P(X = c).")
    st.stop()
p1, p2 = st.columns(2)
widgets.number("posterior draws", "post_draws", step=500, where=p1)
widgets.number("posterior seed", "post_seed", step=1, where=p2)
n_draws, post_seed = int(st.session_state.post_draws), int(st.session_state.post_seed)
release_key = (release.release_key(drawn), column, bool(info.spec.log))
with widgets.show_errors("These settings cannot be run: "):
    if categorical:
        summary = compute.posterior_share_summary(release_key, z, x, x_counts, theta, categories, n_draws, post_seed)
    else:
        summary = compute.posterior_summary(release_key, z, x, x_counts, theta, bounds, n_draws, threshold,
                                            post_seed)
analyst = summary.drop(columns="confidential")

st.markdown(f"**Analyst's view** (computed from the release only; {n_draws:,} posterior draws, "
            f"posterior seed {post_seed}; scale: {literal(scale_label)})")
st.dataframe(analyst, hide_index=True)
downloads.confidential_download("Download the posterior summary (CSV)", functools.partial(widgets.csv_bytes, analyst),
                                file_name="posterior_summary.csv", mime="text/csv", key="download_posterior")

st.markdown("**Next to the confidential values**")
widgets.curator_only_note()
st.plotly_chart(pe.posterior_intervals_figure(summary, level=compute.CREDIBLE_LEVEL, value_label=scale_label,
                                              title=f"Posterior of the functionals of {scale_label} given Z "
                                                    "(curator-only: shows confidential values)"),
                key="posterior_figure")
st.dataframe(summary, hide_index=True)
downloads.confidential_download("Download the posterior summary with the confidential values (CSV, curator only)",
                                functools.partial(widgets.confidential_csv_bytes, summary),
                                file_name="CONFIDENTIAL_posterior_summary.csv", mime="text/csv",
                                key="download_posterior_curator")

# ------------------------------------------------------------------ repeated releases
st.subheader("Repeated releases: frequentist behaviour of the analyst's posterior")
st.markdown(
    "Each replicate draws a fresh release of m values from the confidential data with the same mechanism "
    f"(σ = 0, θ = {theta:g}, m = {m:,}, H as above), simulates the analyst's posterior and records the posterior "
    "mean and 95% credible interval of every functional. The table reports, per functional, the bias and RMSE "
    "of the posterior mean against the confidential value, the mean interval length and the coverage "
    "(fraction of intervals that contain the confidential value), as in the paper's Appendix C.1.")
with st.form("repeated_release_settings"):
    f1, f2, f3 = st.columns(3)
    widgets.form_number("R (releases)", "rep_replicates", step=50, where=f1)
    widgets.form_number("posterior draws per release", "rep_draws", step=100, where=f2)
    widgets.form_number("seed", "rep_seed", step=1, where=f3)
    st.form_submit_button("Run repeated releases", type="primary", on_click=state.commit_form, args=(FORM_FIELDS,))
replicates, rep_draws, rep_seed = (int(st.session_state.rep_replicates), int(st.session_state.rep_draws),
                                   int(st.session_state.rep_seed))
with widgets.show_errors("These settings cannot be run: "):
    if categorical:
        repeated = compute.repeated_share_releases((selection.key, column), x, x_counts, theta, m, categories,
                                                   replicates, rep_draws, rep_seed)
    else:
        repeated = compute.repeated_releases((selection.key, column, bool(info.spec.log)), x, x_counts, theta, m,
                                             bounds, replicates, rep_draws, threshold, rep_seed)
rep_table = repeated.table()

widgets.curator_only_note()
st.caption(f"R = {replicates:,} releases, {rep_draws:,} posterior draws each, seed {rep_seed}; "
           f"mean time of one posterior simulation {1000 * float(repeated.seconds.mean()):.1f} ms.")
st.plotly_chart(pe.coverage_figure(rep_table, level=repeated.level,
                                   title=f"Coverage of the 95% credible intervals over {replicates:,} releases"),
                key="coverage_figure")
st.dataframe(rep_table, hide_index=True)
shortfalls = evaluation.coverage_notes(rep_table, theta=theta, n=selection.table.n, m=m, level=repeated.level,
                                       bounds=None if categorical else bounds, categorical=categorical)
for note in shortfalls.values():
    st.warning("**Coverage below nominal.** " + literal(note), icon="⚠️")
if not shortfalls:
    st.caption(f"Every coverage is within its Monte Carlo error (±1.96 standard errors) of the nominal "
               f"{repeated.level:.0%} or above it.")
downloads.confidential_download("Download the repeated-release table (CSV, curator only)",
                                functools.partial(widgets.confidential_csv_bytes, rep_table), file_name="CONFIDENTIAL_repeated_releases.csv",
                                mime="text/csv", key="download_repeated")
