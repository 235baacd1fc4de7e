"""Release planner page: state the guarantee and the utility needed; get θ, m and a coarsening.

Every number comes from :func:`core.planning.plan_release` (docs/mathematics.md §3.6); this
page lays out the targets, runs the seeded search with a progress bar and loads the
recommended settings into the session keys the Privacy and Synthetic data pages read.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from core import planning as core_planning
from core import privacy
from core import data as core_data
from core.formatting import format_upper
from ui import advisor, candidates, compute, release, state, widgets
from ui import selection as sel
from ui.text import literal

#: Largest coarsening grid the planner searches with "default transforms".
MAX_PLAN_CANDIDATES = 200
_ARGS = "planner_args"
#: The run (its ``_ARGS``) whose recommended settings were loaded.
_LOADED_FOR = "planner_loaded_for"

st.title("Release planner")
st.caption("State the guarantee you need and the utility you need; the planner searches θ, m and coarsenings "
           "(σ = 0) and, when every column has a public domain, pure ε-DP releases (Dirichlet–multinomial over public "
           "grids: α and the grid steps), predicts the utility of each setting by Monte Carlo and recommends one that "
           "meets both — verdict first: a pure one when one does, else a strong one, and a weak one only when no pure or "
           "strong one meets the utility target, saying so — or says which target cannot be met and by how much.")

selection = widgets.require_selection()
st.warning("**The plan is computed from the confidential data** (the utility prediction always; m* too when the "
           "guarantee is instance-level), so following its recommendation is a data-dependent choice that no "
           "privacy guarantee covers (docs/mathematics.md §3.4). Curator-only.", icon="⚠️")

frame = sel.release_frame()
if frame is None or frame.empty:
    st.info("Choose the data and the columns on the Data page first.")
    st.stop()
# On the lean path the frame holds the distinct rows and ``counts`` their records: the planner
# works on that table (cost in distinct rows, not records).
counts = sel.release_counts()
n_records = len(frame) if counts is None else int(counts.sum())

columns = [str(c) for c in frame.columns]
domains = sel.public_domains(columns)
kinds = domains.kinds
numeric = [c for c in columns if kinds[c] == "numeric"]
if not numeric:
    st.info("The utility targets are stated for numeric columns: choose at least one numeric column on the Data page.")
    st.stop()
bounds, log = domains.bounds, domains.log

# ------------------------------------------------------------------ targets
with st.container(border=True):
    st.markdown("**Guarantee needed**")
    a, b, c = st.columns(3)
    eps_lo, eps_hi = state.RANGES["eps"]
    eps = a.number_input("ε", min_value=eps_lo, max_value=eps_hi, step=0.05, key="_plan_eps",
                         value=float(st.session_state.eps))
    delta = b.selectbox("δ", state.DELTA_OPTIONS, key="_plan_delta", format_func=format_upper,
                        index=state.DELTA_OPTIONS.index(state.nearest_option(st.session_state.delta,
                                                                             state.DELTA_OPTIONS)))
    scope = c.radio("Scope", ["global", "instance"], key="_plan_scope", horizontal=True,
                    format_func={"global": "global (every dataset of n records; exact profile)",
                                 "instance": "instance-level (this dataset)"}.get)

    st.markdown("**Utility needed** (per numeric column, against the original column; in the column's units)")
    kind = st.radio("Target", ["w1", "moments"], key="_plan_target", horizontal=True,
                    format_func={"w1": "W1 distance to the original column",
                                 "moments": "largest error of the mean and of the quartiles"}.get)
    targets = {}
    for col, cell in zip(numeric, st.columns(len(numeric))):
        values = frame[col].to_numpy(float)
        present = np.isfinite(values)     # a missing cell has no distance to count
        weights = None if counts is None else counts[present]
        sd = (math.sqrt(float(np.cov(values[present], fweights=weights, bias=True)))
              if present.sum() > 1 else 0.0)
        sd = sd or 1.0
        default = float(f"{0.25 * sd:.2g}")   # a starting point (curator's view): a quarter of the column's SD
        if kind == "w1":
            targets[col] = (cell.number_input(f"W1 bound — {literal(col)}", min_value=0.0, value=default, format="%g",
                                              key=f"_plan_w1_{col}"),)
        else:
            targets[col] = (cell.number_input(f"mean error — {literal(col)}", min_value=0.0, value=default,
                                              format="%g", key=f"_plan_mean_{col}"),
                            cell.number_input(f"quartile error — {literal(col)}", min_value=0.0, value=2 * default,
                                              format="%g", key=f"_plan_q_{col}"))
    level = st.slider("The target must hold in this share of the Monte Carlo runs", 0.5, 0.99, 0.9, 0.01,
                      key="_plan_level")

# ------------------------------------------------------------------ search
with st.container(border=True):
    st.markdown("**Search**")
    applied = advisor.applied_coarsening()
    frontier = advisor.current_frontier()   # none evaluated on other data
    choices = ["none", "applied", "frontier", "defaults"]
    labels = {"none": "none (as recorded)",
              # a radio renders its option labels as Markdown: the coarsening quotes column and category names
              "applied": f"the applied coarsening ({literal(core_data.coarsening_label(applied) or 'none applied')})",
              "frontier": f"the advisor's frontier ({len(frontier)} candidate(s); evaluate on the Data page)",
              "defaults": (f"default transforms of the numeric columns (public bounds, log; every combination up to "
                           f"{MAX_PLAN_CANDIDATES}, else one column at a time)")}
    searched = st.radio("Coarsening candidates", choices, key="_plan_candidates", format_func=labels.get)
    a, b, c = st.columns(3)
    theta_lo, theta_hi = state.THETA_RANGE
    thetas_text = a.text_input(f"θ grid (comma-separated, {theta_lo:g} to {theta_hi:,.0f})", value="0.5, 1, 2, 5, 25",
                               key="_plan_thetas",
                               help="The Privacy page's θ range. A larger θ allows a larger m (the singleton limit "
                                    "grows with θ + n − 1) and draws more values from the base measure.")
    m_lo, m_hi = state.RANGES["m"]
    m_min = b.number_input("smallest acceptable m", min_value=m_lo, max_value=m_hi, value=1, step=1,
                           key="_plan_m_min")
    m_max = c.number_input("largest m considered", min_value=m_lo, max_value=m_hi, value=min(m_hi, n_records),
                           step=1, key="_plan_m_max")
    a, b, c = st.columns(3)
    runs = a.number_input("Monte Carlo runs per setting", min_value=2, max_value=500, value=30, step=1,
                          key="_plan_runs")
    evaluations = b.number_input("settings predicted by Monte Carlo (per kind: σ = 0, pure)", min_value=1,
                                 max_value=100, value=12, step=1, key="_plan_evals")
    seed = c.number_input("seed", min_value=0, max_value=state.SEED_MAX, value=1, step=1, key="_plan_seed")

# ------------------------------------------------------------------ pure options
gaps = core_planning.public_domain_gaps(kinds, bounds, domains.categories)
with st.container(border=True):
    st.markdown("**Pure ε-DP options** (Dirichlet–multinomial, σ = −α < 0, over the columns' public domain; "
                "verdict *pure*: no δ at all; docs/mathematics.md §3.3.1)")
    if gaps:
        search_pure = False
        st.info("The pure options need every column on a public domain, and these columns lack one: give a numeric "
                "column public bounds (the planner proposes grid steps from them), a categorical column a public "
                "category list, on the Data page. A categorical column without a public list cannot be on a pure "
                "path.", icon="ℹ️")
        st.dataframe(pd.DataFrame({"column": list(gaps), "what it lacks": list(gaps.values())}), hide_index=True)
    else:
        search_pure = st.checkbox("Search pure ε-DP releases alongside σ = 0", value=True, key="_plan_pure")
        alphas_text = st.text_input("α grid (comma-separated; θ = z·α, m = ⌊(e^(ε/k) − 1)·α⌋)",
                                    value=", ".join(f"{a:g}" for a in core_planning.DEFAULT_ALPHAS),
                                    key="_plan_alphas", disabled=not search_pure)
        step_texts = {}
        for col, cell in zip(numeric, st.columns(len(numeric))):
            offered = core_planning.default_grid_steps(col, bounds[col], log=log[col])
            if col in domains.grids:     # the column's own step first
                offered = (domains.grids[col],) + tuple(s for s in offered if s != domains.grids[col])
            step_texts[col] = cell.text_input(
                "grid steps — " + literal(f"{col}{' (log units)' if log[col] else ''}"),
                value=", ".join(f"{s:g}" for s in offered), key=f"_plan_steps_{col}", disabled=not search_pure,
                help="Public grid steps on the column's public bounds: from public knowledge, never from this file. "
                     "Offered: the column's own step, then steps of a tenth, hundredth and thousandth of the "
                     "bounds' order of magnitude (log columns: 0.2, 0.1, 0.05).")
        st.caption(f"With k = {int(st.session_state.releases_planned)} planned release(s) (Synthetic data page), "
                   "each pure option releases the largest m whose composed guarantee is pure ε-DP; any δ target "
                   "is met. Categorical columns take their public category lists.")


def _numbers(text: str, what: str, lo: float, hi: float, where: str) -> tuple[float, ...]:
    """The comma-separated numbers of ``text``, each in [lo, hi] (a clear message otherwise)."""
    out = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            value = float(part)
        except ValueError:
            raise ValueError(f"{what}: {part!r} is not a number") from None
        if not (math.isfinite(value) and lo <= value <= hi):
            raise ValueError(f"{what}: {part!r} must lie in [{lo:g}, {hi:g}] ({where})")
        out.append(value)
    if not out:
        raise ValueError(f"{what}: give at least one number")
    return tuple(sorted(set(out)))


def _thetas(text: str) -> tuple[float, ...]:
    return _numbers(text, "θ grid", *state.THETA_RANGE, "the Privacy page's range")


def _pure_search() -> tuple | None:
    """The pure options to search, as the cache key of ``compute.run_plan``; ``None`` when off."""
    if not search_pure:
        return None
    alphas = _numbers(alphas_text, "α grid", *state.RANGES["alpha_dm"], "the Privacy page's range")
    steps = tuple((col, _numbers(text, f"grid steps of {col!r}", 1e-300, 1e300, "steps are > 0"))
                  for col, text in step_texts.items())
    return steps, tuple(domains.categories.items()), alphas


def _candidates(choice: str) -> tuple:
    if choice == "applied":
        return (applied,)
    if choice == "frontier":
        if not frontier:
            raise ValueError("the advisor has no frontier yet: open the coarsening advisor on the Data page and "
                             "evaluate its candidates, or choose another search")
        return tuple(tuple(t for t in cand if t.column in kinds) for cand in frontier)
    if choice == "defaults":
        menus = {c: advisor.default_menu(c) for c in numeric}
        if math.prod(len(v) for v in menus.values()) <= MAX_PLAN_CANDIDATES:
            return tuple(core_planning.candidate_grid(menus, max_candidates=MAX_PLAN_CANDIDATES))
        # Too many combinations: change one column at a time (the rest as recorded).
        return ((),) + tuple((t,) for menu in menus.values() for t in menu if t.kind != "identity")
    return ((),)


with widgets.show_errors("The planner cannot run: "):
    if st.button("Run planner", type="primary", key="_plan_run"):
        if m_min > m_max:
            raise ValueError(f"the smallest acceptable m ({m_min}) exceeds the largest m considered ({m_max})")
        holed = [c for c in numeric if frame[c].isna().any()]
        if holed:   # the records a column drops are already gone (ui.selection.release_frame)
            raise ValueError(f"the planner predicts utility on numbers, and the numeric column(s) {holed} keep "
                             "missing values as a value; set them to drop the records with a missing value on "
                             "the Data page to plan, or choose the settings by hand on the Privacy page")
        for col, values in targets.items():
            if not all(v > 0 for v in values):
                raise ValueError(f"the utility target of column {col!r} must be > 0")
        st.session_state[_ARGS] = dict(
            data_key=advisor.data_key(), kinds=kinds,
            guarantee=(float(eps), float(delta), scope, int(st.session_state.releases_planned)),
            utility=(kind, tuple(targets.items()), float(level)), candidates=_candidates(searched),
            thetas=_thetas(thetas_text), m_min=int(m_min), m_max=int(m_max), runs=int(runs),
            evaluations=int(evaluations), seed=int(seed), bounds=bounds, log=log, pure=_pure_search())
    args = st.session_state.get(_ARGS)
    if args is None or args["data_key"] != advisor.data_key() or args["kinds"] != kinds:
        st.stop()
    plan = compute.run_plan(args["data_key"], frame, counts, **{k: v for k, v in args.items() if k != "data_key"})

# ------------------------------------------------------------------ the plan
if plan.recommended is not None:
    # verdict first (docs/verdicts.md §1): a weak recommendation is one that no strong or pure
    # setting matched on utility; its message says so first, with what it copies, and its verdict
    # box below is amber
    st.info(literal(plan.message), icon="🧭")
    # the verdict of the recommended release, from the one guarantee every page reads
    # (green only for pure and strong: a plan that meets a loose δ is still weak)
    best = plan.recommended
    planned = privacy.ReleaseSpec(sigma=-float(best.alpha) if best.pure else 0.0, theta=float(best.theta),
                                  m=int(best.m), n=n_records, eps=float(plan.guarantee.eps),
                                  delta=float(plan.guarantee.delta), releases=int(plan.guarantee.releases))
    planned_guarantee, planned_advice = compute.release_guarantee(planned)
    widgets.verdict_box(planned_guarantee, advice=planned_advice,
                        conditional_on=release.conditional_on(selection, planned, planner_settings=True), spec=planned)
else:
    st.error(literal(plan.message), icon="❌")
st.caption(literal(plan.caveat))
if plan.bounds_from_data:
    st.warning(f"The bounds of {literal(', '.join(map(repr, plan.bounds_from_data)))} (the range of new values in the "
               "prediction) were read off the confidential data: enter public bounds on the Data page.", icon="⚠️")
if plan.options:
    st.markdown(f"**Settings predicted** (each metric at the {plan.utility.level:g} quantile of "
                f"{args['runs']} runs; ratio = largest predicted / target, ≤ 1 meets the utility target; verdict of "
                "each release's composed global guarantee: pure, strong, weak or missed; ranked verdict first; "
                "copied_rows = m·n/(n + θ), the expected number of released rows that are verbatim copies of "
                "confidential records, σ = 0)")
    st.dataframe(plan.table(), hide_index=True)

if plan.recommended is not None:
    best = plan.recommended

    # the recommended settings into the keys the Privacy and Synthetic data pages read (θ or α and the
    # grid steps, m, the coarsening, ε, δ; the mechanism PYPP; chosen on the confidential data: the recipe says so)
    st.button("Load these settings", key="_plan_load", on_click=candidates.load_option,
              args=(best, plan, args, _LOADED_FOR), type="primary")
# "Loaded" speaks of the plan on the page: it goes when a later run fails to recommend, when
# the run's inputs change, and when a loaded setting is changed by hand or the data change
# (settings_chosen_from_data is then False).
if st.session_state.get("planner_loaded") and not (
        plan.recommended is not None and st.session_state.get(_LOADED_FOR) == args
        and st.session_state.get("settings_chosen_from_data")):
    del st.session_state["planner_loaded"]
if st.session_state.get("planner_loaded"):
    pure_loaded = st.session_state["planner_loaded"] == privacy.DIRICHLET_MULTINOMIAL.key
    loaded = ("σ < 0 (Dirichlet–multinomial), α, m, ε, δ and each numeric column's public grid step are set"
              if pure_loaded else "σ = 0, θ, m, ε, δ and the coarsening are set")
    st.info(f"Loaded: {loaded}. Next: **Privacy** to see the guarantee, then **Synthetic data** to release.",
            icon="➡️")
    st.page_link("app_pages/privacy.py", label="Go to Privacy", icon="🔒")
    st.page_link("app_pages/synthetic_data.py", label="Go to Synthetic data", icon="🎲")

# ------------------------------------------------------------------ candidates side by side
# PYPP's best σ = 0 and pure releases next to AIM and MST at the same target, and which to release
# (docs/verdicts.md §7): measured on the confidential data, so loading one is a data-dependent choice.
candidates.section(selection, plan, args, frame, counts, n_records, _LOADED_FOR)
