"""Privacy page: mechanism settings, live δ(ε) and m*(ε) curves, inverse calibration.

Every number comes from ``core.privacy`` (docs/mathematics.md); this page only lays it out.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from core import data as core_data
from core import planning as core_planning
from core import plots, privacy
from ui import compute, release, state, widgets
from ui import selection as sel

st.title("Privacy: what a release of m synthetic values guarantees")

selection = widgets.require_selection(summary=False)
table = selection.table
n, k = table.n, table.k
multiplicities = table.counts

# ------------------------------------------------------------------ settings
with st.container(border=True):
    st.selectbox("Mechanism family", list(state.REGIMES), format_func=state.REGIMES.get, **state.bind("regime"))
    regime = state.regime()
    a, b = st.columns(2)
    with a:
        if regime is privacy.PITMAN_YOR:
            widgets.slider("σ (discount)", "sigma_py", step=0.01)
        if regime is privacy.DIRICHLET_MULTINOMIAL:
            widgets.slider("α = |σ| (symmetric Dirichlet prior per category)", "alpha_dm", step=0.05)
            domain = selection.prepared.public_domain
            if domain is not None:
                st.markdown(f"z = **{domain:,}** public categories: the product of the columns' public domains "
                            "(grid steps and category lists, Data page).")
            else:
                st.session_state.z_dm = state.public_categories(k)
                st.number_input(f"z: size of the public category domain (≥ k = {k:,})", min_value=k, step=1,
                                **state.bind("z_dm"))
                st.caption("To release with this family, give every column a public domain on the Data page "
                           "(a grid step for a numeric column, a public category list for a categorical one).")
        else:
            widgets.log_slider(f"θ (strength; log scale, {widgets.parameter_text(state.THETA_RANGE[0])} to "
                               f"{widgets.parameter_text(state.THETA_RANGE[1])})", "theta",
                               help="θ matters once it is comparable with n: the singleton limit m_sing grows "
                                    "with θ + n − 1. The inverse calibration below and the Release planner use "
                                    "the same range.")
        m_lo, m_hi = state.m_range(n)
        widgets.log_slider(f"m (synthetic sample size; log scale, {m_lo:,} to {m_hi:,})", "m", hi=m_hi,
                           help=f"From {m_lo:,} to {m_hi:,}: the largest m that some setting of this family "
                                f"gives a global guarantee for, at n = {n:,} records.")
    with b:
        widgets.slider("ε", "eps", step=0.05)
        widgets.select_slider("δ target", "delta", format_func=plots.format_upper)

spec = state.release_spec(n, k, selection.prepared.public_domain)
sigma, theta, m, eps, delta = spec.sigma, spec.theta, spec.m, spec.eps, spec.delta
theta_text = widgets.parameter_text(theta)   # 10^6 as '1,000,000'
widgets.sidebar_summary(selection.profile())
fmt = plots.format_upper
eps_grid = compute.EPS_GRID

if selection.prepared.any_bounds_from_data:
    st.warning("The bounds of the base measure were read off the confidential data (see the Data page): "
               "they are not covered by the guarantees below.", icon="⚠️")

# ------------------------------------------------------------------ the verdict
# One guarantee, computed once from the spec: the Synthetic data page, the reports and the
# public files read the same object (docs/verdicts.md).
guarantee, advice = compute.release_guarantee(spec)
widgets.verdict_box(guarantee, advice=advice, conditional_on=release.conditional_on(selection, spec),
                    blocked=widgets.public_domain_gap(spec, selection.prepared.public_domain), spec=spec)
st.caption(f"The verdict is read from the **global** guarantee of {spec.releases:,} planned release"
           f"{'' if spec.releases == 1 else 's'} (set on the Synthetic data page): it holds for every dataset of "
           f"n = {n:,} records. The instance-level facts below are about your data only; they are not private "
           "themselves and never decide the verdict.")


# ------------------------------------------------------------------ the pure path
def _switch_to_pure(steps: dict, m_pure: int) -> None:
    """A hand choice (data-independent: grid steps from public bounds, m from ε and α): the
    Dirichlet–multinomial over the columns' public domain at the largest pure m."""
    for column, step in steps.items():
        sel.grid_setter(column)(step)
    state.set_setting("regime", privacy.DIRICHLET_MULTINOMIAL.key)
    state.set_setting("m", int(m_pure))


def _pure_pointer() -> None:
    """σ = 0 with a weak or missed verdict: what the pure path needs, its largest m and its utility
    cost against the data (docs/mathematics.md §3.3.1)."""
    columns = [str(c) for c in selection.prepared.columns]
    domains = sel.public_domains(columns)
    gaps = core_planning.public_domain_gaps(domains.kinds, domains.bounds, domains.categories)
    # what a missing cell means in each column (Data page): kept as a value, it is one more public category
    missing = {c: st.session_state.transforms.get(c, {}).get("missing") for c in columns}
    gaps.update({c: "missing kept as a value: the pure release takes it (the missing cell is one more public "
                    "category of the grid), but this utility prediction works on numbers; choose the "
                    "Dirichlet–multinomial family above by hand, or drop the records with a missing value to see "
                    "the prediction" for c in columns
                 if c not in gaps and domains.kinds[c] == "numeric" and missing[c] == "value"})
    head = (f"**A pure ε-DP release would have the verdict pure instead of {guarantee.verdict}.** The "
            "Dirichlet–multinomial (σ = −α < 0) over the columns' public domain is pure ε-DP for every dataset — no "
            "δ at all — when m ≤ ⌊(e^(ε/k) − 1)·α⌋ (docs/mathematics.md §3.3.1). It needs every column on a public "
            "domain: a numeric column on a public grid (public bounds and a step), a categorical column on its "
            "public category list.")
    if gaps:
        st.info(head + f" {len(gaps)} of the released columns lack one (table): set them on the Data page. A "
                "categorical column without a public category list cannot be on a pure path.", icon="🧭")
        st.dataframe(pd.DataFrame({"column": list(gaps), "what it lacks": list(gaps.values())}), hide_index=True)
        return
    numeric = [c for c in columns if domains.kinds[c] == "numeric"]
    # a column's own grid step, else the coarsest step offered from its public bounds (never from the data)
    steps = {c: domains.grids.get(c) or core_planning.default_grid_steps(c, domains.bounds[c], log=domains.log[c])[0]
             for c in numeric}
    specs = [core_data.ColumnSpec(c, log=domains.log[c], bounds=domains.bounds[c], grid=steps[c]) if c in steps
             else core_data.ColumnSpec(c, kind="categorical", categories=domains.categories[c], missing=missing[c])
             for c in columns]
    sizes = {s.name: s.public_domain for s in specs}
    z = math.prod(sizes.values())
    alpha = float(st.session_state.alpha_dm)
    k = spec.releases
    m_pure = privacy.DIRICHLET_MULTINOMIAL.largest_m(n, -alpha, z * alpha, eps, None, releases=k,
                                                     m_cap=state.RANGES["m"][1])
    at = f"At ε = {eps:g}{'' if k == 1 else f' ({k} releases)'} and α = {alpha:g} (the Dirichlet–multinomial's α)"
    if m_pure < 1:
        st.info(head + f" {at}, no release of m ≥ 1 is pure: raise α or ε.", icon="🧭")
        return
    # the public lists as the release sees them: with the missing marker when missing is a value
    categories = {c: (*cats, None) if missing[c] == "value" else cats for c, cats in domains.categories.items()}
    cost = compute.pure_path_cost(
        selection.key, sel.release_frame(), sel.release_counts(), tuple(domains.kinds.items()), tuple(steps.items()),
        tuple(categories.items()), tuple(domains.bounds.items()), tuple(domains.log.items()),
        sel.active_coarsening(columns), alpha, m_pure, float(theta), int(m))
    proposed = [c for c in numeric if c not in domains.grids]
    st.info(head + f" {at}, over z = {z:,} public rows (θ = z·α = {z * alpha:g}), the largest pure m is "
            f"**{m_pure:,}**" + (f" — with grid steps proposed from the public bounds for {len(proposed)} numeric "
                                 "column(s) without one" if proposed else "")
            + ". **The utility cost** (table): the expected W1 of such a release against your data, per numeric "
            f"column in its own units, next to the σ = 0 release you have now (θ = {theta_text}, m = {m:,}); the mean of "
            f"{compute.PURE_COST_RUNS} releases of each, computed from the confidential data (curator-only). The "
            "Release planner searches α and the grid steps for the best pure option.", icon="🧭")
    fmt3 = "{:.3g}".format
    st.dataframe(pd.DataFrame({
        "column": columns,
        "public domain": [f"grid step {steps[c]:g}{' (log units)' if domains.log[c] else ''}"
                          f"{' (proposed)' if c in proposed else ''}: {sizes[c]:,} points" if c in steps
                          else f"public list: {sizes[c]:,} categories" for c in columns],
        "expected W1, pure release": [fmt3(cost[c]["pure"]) if c in cost else "" for c in columns],
        "s.e. (pure)": [fmt3(cost[c]["pure_se"]) if c in cost else "" for c in columns],
        "expected W1, σ = 0 release now": [fmt3(cost[c]["dp"]) if c in cost else "" for c in columns],
        "s.e. (σ = 0)": [fmt3(cost[c]["dp_se"]) if c in cost else "" for c in columns],
    }), hide_index=True)
    left, right = st.columns(2)
    left.button(f"Switch to the pure release (m = {m_pure:,})", key="switch_to_pure", on_click=_switch_to_pure,
                args=(steps, m_pure),
                help="Sets the Dirichlet–multinomial at this α, m = the largest pure m and the grid steps shown "
                     "(a hand choice from public information).")
    right.page_link("app_pages/planner.py", label="Search α and the grid steps in the Release planner", icon="🧭")


if spec.regime is privacy.DIRICHLET_PROCESS and guarantee.verdict in ("weak", "missed"):
    with widgets.show_errors("The pure path cannot be proposed: ", stop=False):
        _pure_pointer()

# ------------------------------------------------------------------ δ(ε)
# Every δ and ε threshold below is rounded up by core.plots.format_upper, and every yes/no
# comes from core's exact verdict functions, never from comparing rounded floats.
def _dirichlet_process_guarantee() -> None:
    """σ = 0: the global guarantee on its exact profile (the verdict's), the instance-level facts
    and, named as such, the paper's probabilistic curve δ*(ε) of Theorem 2."""
    curves = compute.dp_delta_curves(selection.key, multiplicities, spec.without_target(), eps_grid)
    point = compute.dp_point_guarantees(selection.key, multiplicities, spec)
    k = spec.releases
    times = "one release" if k == 1 else f"{k:,} planned releases"
    st.markdown(
        f"**Guarantee at ε = {eps:g}, m = {m:,}, θ = {theta_text} (σ = 0, Dirichlet process).** "
        f"**Globally** — for every dataset of n = {n:,} records — {times} "
        f"{'is' if k == 1 else 'are'} (ε, δ)-DP with **δ = {fmt(guarantee.delta)} at every ε ≥ 0** "
        f"(n·δ = **{fmt(guarantee.records_exposed)}**): the exact global privacy profile 1 − (1 − T₁)^k, "
        "T₁ = m/(m + θ + n − 1), the probability that a record whose value is unique appears verbatim "
        "(docs/audit.md §1.3). It is *approximate* DP, never pure, and no ε lowers it; it is what the verdict, "
        f"the largest m and the attack terms read. For *your data* the release is **instance-level** "
        f"(ε, δ)-probabilistic DP with δ = {fmt(point['instance'])} (the paper's notion; the tight privacy "
        f"profile gives δ = {fmt(point['tight'])}): it depends on the confidential data and is not itself "
        f"private. **The paper's probabilistic curve (Theorem 2)**, δ*(ε) = {fmt(point['global'])} at this ε "
        f"(simple bound {fmt(point['simple'])}), bounds the chance that the privacy loss exceeds ε: a "
        "stronger notion than (ε, δ)-DP, never below T₁, drawn below for reference; no verdict reads it. "
        "Each δ is rounded up.")
    meets_instance, meets_global = point["instance_meets"], point["global_meets"]
    st.info(f"Instance-level fact about your data (not the verdict): δ = {fmt(point['instance'])} "
            f"{'≤' if meets_instance else '>'} δ target {fmt(delta)}. The paper's probabilistic δ*(ε) = "
            f"{fmt(point['global'])} {'≤' if meets_global else '>'} δ target (both decided exactly).")
    plateau = curves["singleton_term"] if table.singletons else None
    old_values = compute.old_values_curve(selection.key, multiplicities, spec.without_target(), eps_grid, 0, 0)
    series = {f"global δ, exact profile ({times})": spec.regime.global_delta_curve(spec, eps_grid),
              "instance-level δ_x(ε) (paper)": curves["instance"],
              "old values only (Alg. 3) δ_x(ε)": old_values,
              "tight profile δ_x^tight(ε)": curves["tight"],
              "the paper's probabilistic curve δ*(ε) (Theorem 2)": curves["global"],
              "simple bound of Theorem 2": curves["simple"]}
    fig = plots.delta_curves_figure(eps_grid, series, plateau=plateau,
                                    plateau_label="singleton plateau m/(m+θ+n−1)",
                                    delta_target=delta, eps_selected=eps,
                                    title="δ(ε) at σ = 0: the global guarantee (exact profile, flat in ε), the "
                                          "paper's probabilistic curves and the instance-level facts")
    st.plotly_chart(fig, key="delta_curve")
    if plateau is not None:
        st.caption(f"Your data contain {table.singletons:,} singleton(s): δ_x(ε) never falls below "
                   f"the singleton plateau {fmt(plateau)}, whatever ε. Lower m or raise θ to lower it.")
    same = bool(np.array_equal(old_values, curves["instance"]))
    st.caption("**Old values only** (thesis Algorithm 3: run the same predictive, release only the draws equal to "
               "confidential values, a random number of them). At σ = 0 its likelihood ratios are those of full "
               f"PYPP, so its instance-level δ_x(ε) {'equals' if same else 'differs from'} the full curve at every ε "
               "of the grid, and so do its tight profile, its global profile and the paper's δ*: suppressing new "
               "values buys **nothing** (docs/bayesian_family.md §3.4).")


def _dirichlet_multinomial_guarantee() -> None:
    """σ < 0: the instance-level δ bound and the pure-ε conditions."""
    z = spec.categories
    alpha = -sigma
    res = compute.dm_delta_curve(selection.key, multiplicities, spec.without_target(), eps_grid)
    point = compute.dm_point_guarantees(selection.key, multiplicities, spec)
    head = (f"**Guarantee at ε = {eps:g}, m = {m:,} (σ = {sigma:g} < 0: Dirichlet–multinomial over z = {z:,} "
            f"public categories, α = {alpha:g}).** ")
    if z == 1:
        # One public category: every dataset releases m copies of it, so no neighbour differs.
        st.markdown(head + "With a single public category every dataset gives the same release (m copies of "
                    "that category): **δ = 0 exactly** at every ε — the release reveals nothing.")
    else:
        if point["pure_instance"]:
            at_eps = (f"At ε = {eps:g} the pure condition holds at your data, so the exact instance-level "
                      "**δ = 0**.")
        else:
            at_eps = (f"At ε = {eps:g} the pure condition does not hold at your data; the instance-level "
                      f"probabilistic δ is at most **δ ≤ {fmt(point['bound'])}** — an upper *bound* (it can "
                      "exceed the exact value several times on small data), rounded up.")
        st.markdown(
            head + f"The release is **pure** ε-DP **globally** for ε ≥ {fmt(res['pure_eps_global'])} "
            f"(at ε = {eps:g}: **{'yes' if point['pure_global'] else 'no'}**) and pure ε-DP **at your data** "
            f"(instance-level) for ε ≥ {fmt(res['pure_eps_instance'])} "
            f"(at ε = {eps:g}: **{'yes' if point['pure_instance'] else 'no'}**). " + at_eps)
        if point["bound_meets"]:
            st.info(f"Instance-level fact about your data (not the verdict): the δ bound {fmt(point['bound'])} ≤ "
                    f"δ target {fmt(delta)} (decided exactly).")
        else:
            st.info(f"Instance-level fact about your data (not the verdict): the δ bound {fmt(point['bound'])} > "
                    f"δ target {fmt(delta)} (the exact δ may be lower; the bound is what is guaranteed).")
    # the largest m whose planned releases are globally pure ε-DP at the slider's ε, ⌊(e^{ε/k} − 1)·α⌋ exactly
    largest = spec.regime.largest_m(n, sigma, theta, eps, None, releases=spec.releases,
                                    m_cap=state.RANGES["m"][1])
    if largest >= 1 and largest != m:
        st.button(f"Use the largest globally pure m = {largest:,}", key="use_largest_pure_m",
                  on_click=state.set_setting, args=("m", largest),
                  help="m ≤ (e^(ε/k) − 1)·α, decided exactly (docs/mathematics.md §3.3): the verdict becomes pure.")
    fig = plots.delta_curves_figure(eps_grid, {"instance-level δ bound (σ < 0)": res["curve"]},
                                    delta_target=delta, eps_selected=eps,
                                    title="δ(ε) upper bound (σ < 0): the exact δ is at most this curve")
    st.plotly_chart(fig, key="delta_curve")
    st.caption("The curve is an upper **bound** on the instance-level δ_x(ε), not its exact value (exact only "
               "where it is 0: in the pure region, and for a single public category).")


def _pitman_yor_guarantee() -> None:
    """σ ∈ (0, 1): the Monte Carlo instance-level δ."""
    n_mc = int(st.session_state.n_mc)
    # One Monte Carlo, seeded from the mechanism (not from ε), for the curves and the statement
    seed = spec.monte_carlo_seed
    res = compute.py_monte_carlo(selection.key, multiplicities, spec.without_target(), eps_grid, n_mc, seed)
    # At the slider's ε, with the spec's own seed: the value the curator record carries.
    statement = compute.py_instance_statement(selection.key, multiplicities, spec, n_mc)
    st.markdown(
        f"**Guarantee at ε = {eps:g}, m = {m:,}, σ = {sigma:g}, θ = {theta_text} (Pitman–Yor).** "
        f"{statement.description} *Approximate* and *instance-level*: it depends on the confidential data and "
        "is not itself private. No global closed form exists for σ > 0. The curve below is the same Monte Carlo "
        f"on a grid of ε ({res['n_types']} neighbour types, seed {seed}).")
    i = int(np.argmin(np.abs(np.asarray(eps_grid) - eps)))   # the grid point nearest the chosen ε
    old_values = compute.old_values_curve(selection.key, multiplicities, spec.without_target(), eps_grid, n_mc, seed)
    fig = plots.delta_curves_figure(
        eps_grid, {"instance-level δ_x(ε) (Monte Carlo 95% upper bound)": res["upper"],
                   "Monte Carlo estimate": res["estimate"],
                   "old values only (Alg. 3), Monte Carlo 95% upper bound": old_values},
        bands={"Monte Carlo estimate": (res["estimate"], res["upper"])}, delta_target=delta, eps_selected=eps)
    st.plotly_chart(fig, key="delta_curve")
    st.caption("**Old values only** (thesis Algorithm 3): the release keeps only the draws equal to confidential "
               "values, so a neighbour sees L (how many draws were new) but not K (how many distinct new values). "
               f"At ε ≈ {fmt(eps_grid[i])} its δ is at most **{fmt(old_values[i])}** (Monte Carlo 95% upper bound) "
               f"against {fmt(res['upper'][i])} for full PYPP. The singleton plateau is the same for both (a copied "
               "singleton is revealed either way), and the paper's probabilistic δ need not fall when values are "
               "suppressed: only the tight profile is guaranteed not to grow (docs/bayesian_family.md §3.4).")
    widgets.number("Monte Carlo replicates", "n_mc", step=500)


#: One section per regime: the page asks the regime of the spec for its section.
GUARANTEE_SECTIONS = {privacy.DIRICHLET_PROCESS: _dirichlet_process_guarantee,
                      privacy.DIRICHLET_MULTINOMIAL: _dirichlet_multinomial_guarantee,
                      privacy.PITMAN_YOR: _pitman_yor_guarantee}
GUARANTEE_SECTIONS[spec.regime]()

# ------------------------------------------------------------------ m*(ε)
st.subheader("Largest admissible release size")
if spec.regime is privacy.DIRICHLET_PROCESS:
    sizes = compute.size_curves(selection.key, multiplicities, n, theta, delta, compute.EPS_GRID_SIZE_CURVE)
    # the verdict's rule: the exact global profile 1 − (1 − T₁)^k ≤ δ, the same at every ε (docs/verdicts.md §2)
    largest = spec.regime.largest_m(n, 0.0, theta, eps, delta, releases=spec.releases)
    times = "one release" if spec.releases == 1 else f"{spec.releases:,} planned releases"
    st.markdown(f"With δ = {fmt(delta)} and θ = {theta_text}, the largest release whose global guarantee meets "
                f"the target ({times}, exact profile) is **m = {largest:,} at every ε** — the singleton limit "
                f"m_sing = {sizes['m_sing']:,} for one release: a record whose value is unique must appear with "
                "probability at most δ, and no ε changes that. The paper's m*(ε, δ) of Theorem 2 (its "
                "probabilistic curve) reaches m_sing only at large ε; the instance-level curve is a fact about "
                "your data.")
    if 1 <= largest != m:
        st.button(f"Use the largest m = {largest:,}", key="use_largest_global_m", on_click=state.set_setting,
                  args=("m", largest),
                  help="1 − (1 − T₁)^k ≤ δ, decided exactly in rational arithmetic (docs/verdicts.md §2).")
    fig_m = plots.max_m_figure(compute.EPS_GRID_SIZE_CURVE,
                               {f"global largest m (exact profile, {times})": np.full(len(sizes["global"]), largest),
                                "the paper's m*(ε, δ) (Theorem 2)": sizes["global"],
                                "instance-level m*(ε, δ) at your data": sizes["instance"]},
                               m_sing=sizes["m_sing"], selected=(eps, m), delta=delta, log_x=True)
    st.plotly_chart(fig_m, key="m_curve")
elif spec.regime.size_rules:
    st.info("The largest globally pure m is given with the guarantee above.")
else:
    st.info("The ε-vs-m curve and the singleton limit are closed forms of the Dirichlet-process case "
            "(σ = 0); choose that family to see them.")

# ------------------------------------------------------------------ inverse calibration
st.subheader("Inverse calibration: from a target (ε, δ) to feasible (θ, m)")
# a σ = 0 section: in another family it would quote the σ = 0 slider's θ beside the family's own θ
if spec.regime is not privacy.DIRICHLET_PROCESS:
    st.info("Inverse calibration to (θ, m) is the Dirichlet-process case (σ = 0): choose that family to see it. "
            "The family chosen above states its own largest m with its guarantee.")
else:
    st.caption("State the guarantee you need; the chart shows every (θ, m) for which one Dirichlet-process "
               "release (σ = 0) is globally (ε, δ)-DP on its exact profile — T₁ = m/(m + θ + n − 1) ≤ δ, at any ε "
               "(docs/audit.md §1.3) — and marks the largest admissible m.")
    left, right = st.columns(2)
    target_eps = left.number_input("target ε", min_value=0.05, max_value=20.0, value=float(st.session_state.eps),
                                   step=0.25, key="target_eps")
    target_delta = right.select_slider("target δ", options=list(state.DELTA_OPTIONS),
                                       value=float(st.session_state.delta), format_func=plots.format_upper,
                                       key="target_delta")
    current_theta = float(st.session_state.theta)
    grid, m_star = compute.feasible_region(n, float(target_eps), float(target_delta), current_theta)
    at_current = int(m_star[grid.index(current_theta)])
    best = int(np.argmax(m_star))
    best_theta = widgets.parameter_text(f"{grid[best]:.3g}")
    st.markdown(f"For ε = {target_eps:g}, δ = {fmt(target_delta)} and n = {n:,}: at your θ = "
                f"{widgets.parameter_text(current_theta)} the largest admissible release is **m\\* = {at_current:,}**; "
                f"over the θ grid (the θ slider's range) the largest is m\\* = {int(m_star[best]):,} at "
                f"θ = {best_theta} (a larger θ puts more mass on new values, which buys a larger release at the cost "
                "of more values drawn from H).")
    st.plotly_chart(plots.feasible_region_figure(grid, m_star, delta_target=float(target_delta),
                                                 eps_target=float(target_eps), selected_theta=current_theta,
                                                 log_x=True), key="feasible")
