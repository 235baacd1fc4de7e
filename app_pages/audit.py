"""Audit page: privacy loss distributions, trade-off curves, repeated releases, an
empirical audit that tries to contradict the guarantee, and disclosure risk (docs/audit.md).

Every number comes from ``core.privacy.pld`` and ``core.evaluation.audit``, through the cached
calls of :mod:`ui.compute` (per session, keyed by the selection and the parameters); this page
lays them out.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import streamlit as st

from core import privacy
from core.evaluation import audit as core_audit
from core.plots import audit as plots_audit
from core import formatting
from core.formatting import format_upper as fmt
from ui import compute, downloads, release, state, widgets
from ui import evaluated as ui_evaluated
from ui.text import literal

EPS_GRID = tuple(float(e) for e in np.linspace(0.0, 12.0, 121))
SIMULATIONS = (10_000, 100_000, 300_000)


# --------------------------------------------------------------------------- page
st.title("Audit: privacy loss, repeated releases, attacks")

selection = widgets.require_selection()
table = selection.table
n, k_distinct = table.n, table.k
multiplicities = table.counts
# the release evaluated: the Synthetic data page's last draw, else the current settings (ui/evaluated.py)
ev = ui_evaluated.evaluated(selection)
ui_evaluated.banner(ev)
pypp_spec = state.release_spec(n, k_distinct, selection.prepared.public_domain)
# PYPP's tabs read the evaluated spec; a peer's release is evaluated by its own accounting (verdict
# box), and the tabs that are PYPP's say so
spec = ev.spec if ev.is_pypp else pypp_spec
regime = spec.regime
sigma, theta, m, eps, delta_target = spec.sigma, spec.theta, spec.m, spec.eps, spec.delta
if not ev.is_pypp:
    eps, delta_target = ev.spec.eps, ev.spec.delta
# the release's verdict and what an attacker can do, from the one guarantee (docs/verdicts.md §3)
verdict, conditional_on, blocked = ev.guarantee, [], None
if ev.problem is not None:
    st.error(f"The evaluated release cannot be stated: {literal(ev.problem)}", icon="🛑")
else:
    try:
        conditional_on = release.conditional_on(selection, ev.spec)
    except ValueError as exc:   # the recipe is refused: nothing is conditional on a release that cannot be made
        blocked = literal(str(exc))
    if ev.is_pypp:
        blocked = widgets.public_domain_gap(ev.spec, selection.prepared.public_domain) or blocked
    widgets.verdict_box(verdict, advice=ev.advice, conditional_on=conditional_on, blocked=blocked,
                        spec=ev.verdict_spec)
n_mc, mc_seed = int(st.session_state.n_mc), int(st.session_state.mc_seed)
if ev.is_pypp:
    st.markdown(f"Settings of the evaluated release: {regime.label}, σ = {sigma:g}, θ = {theta:g}, m = {m:,}, "
                f"ε = {eps:g}, δ target = {fmt(delta_target) if delta_target is not None else 'none (pure)'}.")
else:
    st.markdown(f"Settings of the evaluated release: **{literal(ev.label)}**, {ev.spec.bins} bins per numeric axis, "
                f"m = n = {ev.spec.m:,}, ε = {eps:g}, δ target = {fmt(delta_target)}. Its guarantee is its own "
                "accounting's (the verdict above); the privacy-loss, repeated-release and disclosure-risk tabs are "
                "PYPP's and say so.")
if selection.prepared.any_bounds_from_data:
    st.warning("The bounds of the base measure were read off the confidential data: no guarantee on this "
               "page covers them.", icon="⚠️")

# The data on public cells, as the Compare page calibrates them: numeric bins × public categories.
data, data_problem = None, None
try:
    data = compute.comparison_data(selection.prepared)
except ValueError as exc:
    data_problem = str(exc)

tab_pld, tab_repeat, tab_tradeoff, tab_audit, tab_risk = st.tabs(
    ["Privacy loss", "Repeated releases", "Trade-off curves", "Empirical audit", "Disclosure risk"])

# ------------------------------------------------------------------ privacy loss distribution
model = None
PYPP_ONLY = ("This tab is PYPP's (the privacy-loss distribution of the posterior predictive); the evaluated "
             "release is {label}, whose guarantee comes from its own accounting — the verdict above states it.")
if not ev.is_pypp:
    with tab_pld:
        st.info(PYPP_ONLY.format(label=literal(ev.label)))
elif not regime.loss_scopes:
    with tab_pld:
        st.info("For σ < 0 (Dirichlet–multinomial) the release is pure ε-DP at the thresholds of the Privacy "
                "page; its PLD is audited as the Dirichlet–multinomial baseline on the Trade-off tab.")
else:
    scope = "instance"
    with tab_pld:
        if len(regime.loss_scopes) > 1:
            scope = st.radio("Scope", list(regime.loss_scopes), horizontal=True, key="audit_scope",
                             format_func={"instance": "instance level (your data)",
                                          "global": "global (every dataset of size n, exact profile)"}.get)
        model = compute.pypp_loss_model(selection.key, multiplicities, spec.without_target(), scope, n_mc, mc_seed)
        single = model.delta(np.asarray(EPS_GRID))
        at_eps = model.delta(eps)
        kind = {"exact": "exact (pessimistic discretisation: never below the true value)",
                "monte carlo": "Monte Carlo estimate (no confidence bound)"}[model.kind]
        st.markdown(f"**{model.label}, {model.scope} level, {kind}.** {model.note}. At ε = {eps:g} the hockey-stick "
                    f"divergence (the smallest δ for which one release is (ε, δ)-DP) is **δ = {fmt(at_eps)}**.")
        if regime is privacy.DIRICHLET_PROCESS and table.singletons and scope == "instance":
            st.caption("With a singleton in the data, δ(ε) equals m/(m + θ + n − 1) for every ε ≥ 0: all the "
                       "privacy loss sits in the event that the singleton is copied into the release.")
        st.plotly_chart(plots_audit.composition_figure(EPS_GRID, single, single, releases=1,
                                                       delta_target=delta_target,
                                                       title="δ(ε) of one release, read off the PLD"),
                        key="audit_pld_curve")

# ------------------------------------------------------------------ repeated releases
with tab_repeat:
    if model is None:
        st.info("Repeated releases are composed here by PLD for PYPP with σ ≥ 0; the evaluated release is "
                + (f"{literal(ev.label)}" if not ev.is_pypp else f"PYPP with σ = {sigma:g} (pure ε-DP)")
                + ", whose planned releases the verdict above composes (k·ε"
                + ("" if ev.is_pypp else ", 1 − (1 − δ)^k") + ").")
    else:
        # exploring k here does not change the release: the planned k is set on the Synthetic data page
        k = st.slider("number of independent releases k from the same data", 1, 100,
                      value=min(100, int(st.session_state.releases_planned)), key="audit_k")
        model_key = (selection.key, sigma, theta, m, model.scope, n_mc, mc_seed)
        eps_k = compute.composed_epsilon(model_key, model, int(k), delta_target)
        eps_max = float(max(12.0, min(1.5 * eps_k, 1000.0)) if np.isfinite(eps_k) else max(12.0, 2.0 * k * eps))
        curves = compute.composed_delta_curves(model_key, model, int(k), eps_max)
        st.markdown(
            f"After **k = {k}** releases at the target δ = {fmt(delta_target)}: PLD composition gives "
            f"**{formatting.format_composed(eps_k, delta_target)}**; naive composition of the single-release guarantee gives "
            f"(kε, kδ) = ({formatting.format_eps(k * eps)}, {fmt(min(1.0, k * float(model.delta(eps))))}). Loss grid "
            f"of the composition: "
            f"{model.composition_discretization(int(k)) if k > 1 else model.single_discretization:.2g} "
            "(each δ(ε) shown is at most the exact δ at ε − k·grid).")
        eps_words = formatting.composed_eps_note(eps_k, delta_target, int(k))
        if eps_words:
            st.info(eps_words)
        st.plotly_chart(plots_audit.composition_figure(curves["eps"], curves["composed"], curves["naive"], releases=int(k),
                                                       single=curves["single"], delta_target=delta_target),
                        key="audit_composition")

# ------------------------------------------------------------------ trade-off curves
with tab_tradeoff:
    with widgets.show_errors("The mechanisms cannot be calibrated: ", stop=False):
        if data is None:
            raise ValueError(data_problem)
        cal = compute.calibration(selection.key, data.n, selection.prepared.d, eps, delta_target, m, theta,
                                  int(st.session_state.bins), selection.prepared.any_bounds_from_data,
                                  data.levels, data.unlisted)
        cal_key = (selection.key, eps, delta_target, m, theta, int(st.session_state.bins))
        curves, mu, notes, curve_names = compute.tradeoff_curves(cal_key, cal)
        st.markdown(f"Every mechanism calibrated to ε = {eps:g}, δ = {delta_target:g}, m = {m:,} (as on the Compare "
                    "page; PYPP at σ = 0 with its global guarantee). β(α) is the smallest type-II error of any test "
                    "between x and its worst neighbour with type-I error α; the diagonal is perfect privacy.")
        st.plotly_chart(plots_audit.tradeoff_figure(curves, mu_gdp=mu, names=curve_names), key="audit_tradeoff")
        rows = [{"mechanism": label, "PLD": note} for label, note in notes.items()]
        st.dataframe(pd.DataFrame(rows), hide_index=True)
        if cal.skipped:
            st.caption("Histogram baselines left out: " + literal(next(iter(cal.skipped.values())))
                       + " (give it on the Data page, in the column's panel).")
        if mu is not None:
            st.caption(f"The Gaussian histogram is exactly μ-GDP with μ = √2/s = {mu:.4g}; no other mechanism here "
                       "is Gaussian-DP (PYPP and the pure-ε mechanisms have other curve shapes).")

# ------------------------------------------------------------------ empirical audit
with tab_audit:
    # the attacks tell a record from a new value: PYPP with σ ≥ 0 only
    options = ["pypp"] if ev.is_pypp and regime.has_new_values else []
    if ev.is_pypp and not regime.has_new_values:
        st.caption(f"PYPP with σ = {sigma:g} (Dirichlet–multinomial) releases no new value for the attacks to tell a "
                   "record from: it is pure ε-DP (verdict above); the histogram audits below test pure and "
                   "approximate noise on the same cells.")
    evaluated_mech = None
    if not ev.is_pypp and data is not None:
        try:
            evaluated_mech = ui_evaluated.comparison_mechanism(ev, data)
        except ValueError as exc:
            st.caption(f"The evaluated release cannot run on these columns: {literal(str(exc))}")
        if evaluated_mech is not None and core_audit.auditable(evaluated_mech):
            options.insert(0, "evaluated")
        elif evaluated_mech is not None:
            st.caption(f"{literal(ev.label)}, the evaluated release, has no simulator for the empirical audit "
                       f"({core_audit.AUDITABLE_WORDS}); its verdict above is its accounting's.")
    if data is not None and not data.unlisted:
        options += ["laplace_histogram", "gaussian_histogram"]
    elif data is not None:
        st.caption("The histogram audits need the public cells of every column: "
                   + literal(", ".join(map(repr, data.unlisted))) + " has no public category list (give it on the "
                   "Data page, in the column's panel).")
    if not options:
        st.info("Nothing to audit with these settings: choose σ ≥ 0 for PYPP, or give every categorical column a "
                "public category list for the histograms.")
    else:
        labels = {"pypp": f"PYPP at your settings (σ = {sigma:g})", "laplace_histogram": "Perturbed histogram (Laplace)",
                  "evaluated": f"{ev.label}, the evaluated release",
                  "gaussian_histogram": "Perturbed histogram (Gaussian)"}
        a, b, c = st.columns(3)
        target = a.selectbox("mechanism", options, format_func=labels.get, key="audit_mechanism")
        n_sim = b.select_slider("simulated releases per side", SIMULATIONS, value=100_000, key="audit_n_sim",
                                format_func=lambda v: f"{v:,}")
        confidence = c.select_slider("confidence", (0.9, 0.95, 0.99), value=0.95, key="audit_confidence")
        seed = int(st.number_input("audit seed", 0, 2**32 - 1, value=2024, key="audit_seed"))
        stated_eps = eps
        if target == "pypp":
            stated = compute.stated_instance_delta(selection.key, multiplicities, sigma, theta, m, eps, n_mc,
                                                   mc_seed)
            st.caption(f"Stated guarantee under test: instance-level (ε = {eps:g}, δ = {fmt(stated)}) at your data "
                       "(the Privacy page's δ_x(ε)).")
        params = (target, n_sim, confidence, seed, sigma, theta, m, eps, ev.spec)
        if st.button("Run audit", type="primary", key="run_audit"):
            st.session_state.audit_params = (selection.key, params)
        if st.session_state.get("audit_params") != (selection.key, params):
            st.info("Press **Run audit** to simulate the mechanism on your data and on its worst neighbour.")
        else:
            with widgets.show_errors("The audit cannot run: ", stop=False):
                if target == "pypp":
                    res = compute.run_pypp_audit(selection.key, multiplicities, sigma, theta, m, eps, stated, n_sim,
                                         confidence, seed)
                    theory = None
                    if model is not None and model.kind == "exact":
                        inst = compute.pypp_loss_model(selection.key, multiplicities, spec.without_target(),
                                                       "instance", n_mc, mc_seed)
                        alpha = np.asarray(compute.TRADEOFF_ALPHA)
                        theory = (alpha, inst.tradeoff(alpha))
                elif target == "evaluated":
                    res = compute.run_mechanism_audit((selection.key, ev.spec), data, evaluated_mech, n_sim,
                                                      confidence, seed)
                    theory = None
                else:
                    cal_key = (selection.key, eps, delta_target, m, theta, int(st.session_state.bins))
                    res = compute.run_histogram_audit(cal_key, data, cal, target, n_sim, confidence, seed)
                    theory = compute.histogram_tradeoff_curve(cal_key, cal, target)
                widgets.curator_only_note()
                st.markdown(f"**Neighbour simulated:** {literal(res.target)}.")
                st.plotly_chart(plots_audit.audit_figure(res, theory), key="audit_roc")
                st.dataframe(pd.DataFrame([{
                    "attack": a_.name, "FPR": a_.fpr, "TPR": a_.tpr,
                    "FPR interval": f"[{a_.fpr_interval[0]:.4g}, {a_.fpr_interval[1]:.4g}]",
                    "TPR interval": f"[{a_.tpr_interval[0]:.4g}, {a_.tpr_interval[1]:.4g}]",
                    "certified ε ≥": formatting.format_certified_eps(a_.eps_lower, 4)} for a_ in res.attacks]),
                    hide_index=True)
                theory_txt = ("" if res.theory_eps is None else
                              f" The exact PLD allows at most ε = {formatting.format_eps(res.theory_eps)} at this δ. "
                              + formatting.composed_eps_note(res.theory_eps, res.stated_delta))
                nothing = formatting.certified_eps_note(res.certified_eps)
                if nothing:
                    msg = (f"The audit certifies nothing at {confidence:.0%} confidence (stated ε = {res.stated_eps:g}): "
                           + nothing + theory_txt)
                else:
                    msg = (f"The audit certifies ε ≥ {formatting.format_certified_eps(res.certified_eps, 4)} with "
                           f"{confidence:.0%} confidence (stated ε = {res.stated_eps:g}): a lower bound, rounded "
                           f"down.{theory_txt}")
                if res.contradicts_stated or res.contradicts_theory:
                    st.error("The audit certifies MORE than the stated guarantee allows: " + msg
                             + " Either the stated ε is wrong or the implementation has a bug (a correct mechanism "
                             f"triggers this by chance with probability at most {1 - confidence:.0%}; rerun with "
                             "another seed to tell).")
                elif widgets.green_verdict(verdict, conditional_on, blocked):
                    st.success(msg + " Consistent with the guarantee.")
                else:
                    # no green on a weak release (or one resting on uncovered data-dependent choices): an audit
                    # that finds nothing does not make the release safe (docs/verdicts.md §1)
                    st.info(msg + f" Consistent with the stated numbers — but the release's verdict is "
                            f"**{verdict.verdict}**" + (" and rests on choices the confidential data made"
                                                        if conditional_on else "")
                            + ": an audit that finds nothing does not make it safe.", icon="ℹ️")

# ------------------------------------------------------------------ disclosure risk
with tab_risk:
    widgets.curator_only_note()
    st.markdown("Computed from the confidential data: **curator-only** numbers, not themselves private. Two "
                "releases at your settings: the **exact copies** are counted in a release made from all the "
                "records, as the published one is; the **attacks** run on a second release made from a training "
                "part only, with a control part (20 % of the records) held out of it. Anonymeter (Giomi et al. "
                "2023) could not be installed here (it requires numpy < 1.27); its three attacks are "
                "re-implemented from its paper.")
    cols = [str(c) for c in selection.prepared.columns]
    a, b = st.columns(2)
    n_attacks = int(a.select_slider("attacks per measure", (100, 300, 500, 1000), value=300, key="risk_n_attacks"))
    secret = b.selectbox("secret column (inference)", cols, index=len(cols) - 1, key="risk_secret") if len(cols) > 1 else None
    risk_seed = int(st.number_input("seed", 0, 2**32 - 1, value=7, key="risk_seed"))
    risk_params = (selection.key, sigma, theta, m, risk_seed, n_attacks, secret)
    if not ev.is_pypp:
        st.info(f"Disclosure risk is computed for PYPP with σ ≥ 0; the evaluated release is {literal(ev.label)}, "
                "whose rows are cells of the public domain (no confidential value is copied as such).")
    elif not regime.has_new_values:
        st.info("Disclosure risk is computed for σ ≥ 0 (a release with new values from H).")
    elif st.button("Compute disclosure risk", key="run_risk"):
        st.session_state.risk_params = risk_params
    if ev.is_pypp and regime.has_new_values and st.session_state.get("risk_params") == risk_params:
        with widgets.show_errors("The disclosure risk cannot be computed: ", stop=False):
            out = compute.disclosure_risk_summary(selection.key, selection.prepared, sigma, theta, m, risk_seed,
                                                  n_attacks, secret)
            cnt = out["counts"]
            st.markdown(f"**Exact copies in a release of m = {m:,} rows made from all n = {n:,} records** (not the "
                        f"attacks' release): {cnt['equal_to_confidential']:,} "
                        f"released rows equal a confidential row; {cnt['equal_to_singleton']:,} of those equal a "
                        f"confidential **singleton** ({cnt['distinct_singletons_released']:,} distinct singletons "
                        "copied: these records are revealed verbatim).")
            risks = out["risks"]
            sample = (f"a fixed-seed sample of {out['n_records']:,} of the {n:,} records (drawn without replacement "
                      "from the frequency table), " if out.get("sampled") else "")
            st.markdown(f"**Attacks** on a second release of m = {m:,} rows, made from {sample}"
                        f"{out['n_train']:,} training records; {out['n_control']:,} records (20 %) are held out of it "
                        "as the control part.")
            st.plotly_chart(plots_audit.risk_figure(risks), key="risk_bars")
            st.dataframe(pd.DataFrame([{"attack": r.attack, "attacks": r.n_attacks, "success on training": r.train_rate,
                                        "success on control": r.control_rate,
                                        "residual risk": formatting.format_risk(r.risk),
                                        "interval": formatting.format_risk_interval(*r.risk_interval),
                                        "how": r.note} for r in risks]), hide_index=True)
            noise = formatting.risk_note([r.risk for r in risks])
            if noise:
                st.caption(noise)
            if len(cols) < 2:
                st.caption("Linkability and inference need at least two columns; choose more columns on the Data page.")
            summary_json = json.dumps({"CONFIDENTIAL": "curator only: computed from the confidential data; never publish",
                                       "releases_k": int(spec.releases), "exact_matches": cnt,
                                       "risks": [r.__dict__ for r in risks]}, default=str, indent=1)
            downloads.confidential_download("Download audit summary (JSON)", summary_json.encode,
                                            file_name="CONFIDENTIAL_audit_summary.json", mime="application/json",
                                            key="download_audit")
