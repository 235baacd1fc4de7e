"""The Release planner's candidates side by side (docs/verdicts.md §7): the cached measurement of
AIM and MST on the confidential data, the table, the recommendation with its verdict box, and
"Release this one", which loads a candidate into the keys the Privacy and Synthetic data pages read.

Every number comes from :mod:`core.planning.candidates`. The measurement draws each peer's
releases from ``numpy.random.default_rng(seed)`` with the planner's own evaluation seed, so the
session cache holds the result *for that seed* (never an unseeded draw). Loading a candidate
from this comparison records ``mechanism_chosen_from_data``: the choice read the confidential
data, and the gate asks its acknowledgement (``mechanism_from_data``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core import planning as core_planning
from core import privacy
from core.release import RELEASE_MECHANISMS
from core.release import choices as core_choices

from . import compute, release, widgets
from .peer_release import MECHANISM_KEY, PYPP, peer_problem
from .selection import Selection, session_cache
from .text import literal

#: The measurement asked for (its arguments), kept across reruns: shown while they still hold.
_MEASURED = "planner_peers_measured"
#: The candidate loaded from the side-by-side table, with the run of the plan it came from.
LOADED = "planner_candidate_loaded"
#: Releases per peer in the measurement (each one a full release of m = n rows).
DEFAULT_PEER_RUNS = 3
#: A peer that can run, before its measurement.
NOT_MEASURED = "not measured yet"


@session_cache(max_entries=8)
def measure_peer(selection_key: str, _prepared, _frame: pd.DataFrame, _counts, mechanism: str, guarantee: tuple,
                 utility: tuple, _guarantee: core_planning.GuaranteeTarget, _utility: core_planning.UtilityTarget,
                 bins: int, runs: int, seed: int) -> core_planning.Candidate:
    """:func:`core.planning.peer_candidates` for one mechanism, ``runs`` releases from
    ``numpy.random.default_rng(seed)`` (cached per seed: the same arguments give the same
    measurement), with its own progress bar. ``guarantee`` and ``utility`` are the plan's
    arguments (the cache key) of the targets ``_guarantee`` and ``_utility``."""
    bar, progress = compute.progress_bar(f"Measuring {RELEASE_MECHANISMS[mechanism].label} on the confidential data …")
    (candidate,) = core_planning.peer_candidates(_prepared, _frame, _guarantee, _utility, bins=bins,
                                                 rng=np.random.default_rng(seed), runs=runs, counts=_counts,
                                                 mechanisms=(mechanism,), progress=progress)
    bar.empty()
    return candidate


def _request(selection: Selection, args: dict, bins: int, runs: int) -> tuple:
    """What a measurement depends on: the data, the plan's targets, the public bins, the releases and the seed."""
    return (selection.key, args["data_key"], args["guarantee"], args["utility"], int(bins), int(runs),
            int(args["seed"]))


def _unmeasured(selection: Selection, plan, key: str, n: int, bins: int) -> core_planning.Candidate:
    """A peer's row before its measurement: why it cannot run (no peers library, a column without a
    public domain, missing cells kept as a value), else that it waits for the button."""
    target = plan.guarantee
    why = peer_problem(selection, release.PeerChoice(key, int(bins), float(target.eps), float(target.delta),
                                                      int(target.releases), int(n)))
    return core_planning.Candidate(key, RELEASE_MECHANISMS[key].label, key, {"bins": int(bins)}, None, n,
                                   unavailable=why or NOT_MEASURED)


def _conditional_on(selection: Selection, candidate, plan, n: int) -> list[str]:
    """The data-dependent choices of the candidate's release once loaded from this table: those of
    its recipe, with the planner's settings (PYPP) and the mechanism chosen on the comparison."""
    target = plan.guarantee
    if candidate.mechanism == PYPP:
        spec = privacy.ReleaseSpec(float(candidate.settings["sigma"]), float(candidate.settings["theta"]),
                                   int(candidate.m), n, eps=float(target.eps), delta=float(target.delta),
                                   releases=int(target.releases))
        titles = release.conditional_on(selection, spec, planner_settings=True)
    else:
        choice = release.PeerChoice(candidate.mechanism, int(candidate.settings["bins"]), float(target.eps),
                                    float(target.delta), int(target.releases), n)
        recipe = release.build_recipe(selection, choice, None)
        titles = [c.title for c in core_choices.data_dependent_choices(recipe, n)]
    mechanism_title = core_choices.CHOICE_TITLES["mechanism_from_data"]
    return titles + ([mechanism_title] if mechanism_title not in titles else [])


def load_option(option, plan, args: dict, loaded_for: str) -> None:
    """A plan's option (σ = 0 or pure) into the keys the Privacy and Synthetic data pages read:
    regime, θ or α and the grid steps, the coarsening, m, ε, δ, and the mechanism PYPP.
    ``loaded_for``: the session key recording the plan run it came from."""
    if option.pure:
        st.session_state.regime = privacy.DIRICHLET_MULTINOMIAL.key
        st.session_state.alpha_dm = float(option.alpha)
        for col, step in option.grid_steps.items():      # the pure option's public grid, column by column
            st.session_state.transforms[col]["grid"] = float(step)
        st.session_state.coarsening = ()               # predicted on the grid of the recorded values
        st.session_state["planner_loaded"] = privacy.DIRICHLET_MULTINOMIAL.key
    else:
        st.session_state.regime = privacy.DIRICHLET_PROCESS.key
        st.session_state.theta = float(option.theta)
        st.session_state.coarsening = tuple(t for t in option.transforms if t.kind != "identity")
        st.session_state["planner_loaded"] = privacy.DIRICHLET_PROCESS.key
    st.session_state.m = int(option.m)
    st.session_state.eps = float(plan.guarantee.eps)
    st.session_state.delta = float(plan.guarantee.delta)
    st.session_state[MECHANISM_KEY] = PYPP           # the Synthetic data page releases what was loaded
    st.session_state[loaded_for] = args   # the run whose plan was loaded
    # a coarsening picked by the plan is picked by looking at the data (the recipe says so)
    st.session_state.coarsening_chosen_from_data = bool(st.session_state.coarsening)
    # θ or α, m and the grid steps searched on the confidential data: the recipe and its public report say so
    st.session_state.settings_chosen_from_data = True


def load_candidate(candidate, plan, args: dict, loaded_for: str) -> None:
    """"Release this one": the candidate into the session (a PYPP one as :func:`load_option`, a peer
    as the Synthetic data page's mechanism at the plan's target with the public bins), and
    ``mechanism_chosen_from_data``: it was chosen on the comparison measured on the confidential data."""
    if candidate.mechanism == PYPP:
        option = next(o for o in plan.options if o.pure == (candidate.key == "pypp_pure"))
        load_option(option, plan, args, loaded_for)
    else:
        st.session_state[MECHANISM_KEY] = candidate.mechanism
        st.session_state.bins = int(candidate.settings["bins"])
        st.session_state.eps = float(plan.guarantee.eps)
        st.session_state.delta = float(plan.guarantee.delta)
    st.session_state.mechanism_chosen_from_data = True
    st.session_state[LOADED] = (candidate.key, candidate.label, args)


def _table(candidates) -> pd.DataFrame:
    return pd.DataFrame([c.to_dict() for c in candidates])


def section(selection: Selection, plan, args: dict, frame: pd.DataFrame, counts, n: int, loaded_for: str) -> None:
    """The "Candidates side by side" section of the Release planner page (docs/verdicts.md §7)."""
    st.subheader("Candidates side by side")
    st.caption("For the target above: PYPP's best σ = 0 release and best pure release (from the plan), and AIM and "
               "MST at the same (ε, δ) with m = n on the public bins per numeric axis (the Compare and Synthetic "
               "data pages' setting), each with its verdict, m, the W1 of each numeric column to the original "
               "column at the plan's quantile level, and whether the utility target is met (docs/verdicts.md §7).")
    st.warning("**Curator-only.** AIM and MST are measured by releasing them on the confidential data, and the "
               "planner's utility of PYPP is predicted on it: releasing the candidate chosen from this table is a "
               "data-dependent choice that no guarantee covers. The release records it, and the gate asks its "
               "acknowledgement.", icon="⚠️")
    bins = int(st.session_state.bins)
    runs = st.number_input("releases per peer mechanism (each a full release of m = n rows)", min_value=1,
                           max_value=20, value=DEFAULT_PEER_RUNS, step=1, key="_cand_runs")
    request = _request(selection, args, bins, runs)
    if st.button("Measure AIM and MST on the confidential data", key="_cand_measure"):
        st.session_state[_MEASURED] = request
    if st.session_state.get(_MEASURED) != request:
        # laid out once measured for this plan, data, bins, releases and seed (a cache hit after that)
        st.caption("Press the button to measure AIM and MST and lay the four candidates side by side with the "
                   "one to release.")
        return
    peers = []
    with widgets.show_errors("The measurement cannot run: ", stop=False):
        for key in core_planning.PEER_CANDIDATES:
            waiting = _unmeasured(selection, plan, key, n, bins)
            if waiting.unavailable != NOT_MEASURED:   # cannot run: say why instead of failing
                peers.append(waiting)
                continue
            peers.append(measure_peer(selection.key, selection.prepared, frame, counts, key, args["guarantee"],
                                      args["utility"], plan.guarantee, plan.utility, bins, int(runs),
                                      int(args["seed"])))
    candidates = core_planning.candidates_side_by_side(plan, peers, n=n)
    st.dataframe(_table(candidates), hide_index=True)
    advice = core_planning.recommend(candidates, plan.utility)
    best = advice.candidate
    (st.info if advice.meets_utility else st.error)(literal(advice.message), icon="🧭")
    if best is not None:
        spec = (privacy.ReleaseSpec(float(best.settings["sigma"]), float(best.settings["theta"]), int(best.m), n,
                                    eps=float(plan.guarantee.eps), delta=float(plan.guarantee.delta),
                                    releases=int(plan.guarantee.releases))
                if best.mechanism == PYPP else None)
        widgets.verdict_box(best.guarantee, conditional_on=_conditional_on(selection, best, plan, n), spec=spec)
    available = [c for c in advice.ranked if c.releasable]
    if available:
        cells = st.columns(len(available))
        for cell, candidate in zip(cells, available):
            recommended = best is not None and candidate.key == best.key
            cell.button(f"Release this one: {candidate.label}", key=f"_cand_load_{candidate.key}",
                        type="primary" if recommended else "secondary", on_click=load_candidate,
                        args=(candidate, plan, args, loaded_for))
    loaded = st.session_state.get(LOADED)
    if loaded is not None and loaded[2] == args and st.session_state.get("mechanism_chosen_from_data"):
        st.info(f"Loaded: **{literal(loaded[1])}** at the target ε and δ, chosen on this comparison (the recipe "
                "records it; the gate asks its acknowledgement). Next: **Synthetic data** to release.", icon="➡️")
        st.page_link("app_pages/synthetic_data.py", label="Go to Synthetic data", icon="🎲")

