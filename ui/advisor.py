"""The singleton-aware coarsening advisor of the Data page (docs/mathematics.md §3.5).

:func:`render_advisor` offers, per released column, data-independent coarsening
transforms (:func:`core.planning.default_transforms` from the column's public settings,
rounding steps the user types, a public list of categories to keep, and the flagged
data-dependent ``min_count`` rule), evaluates every combination with
:func:`core.planning.advise` at the current (ε, δ, θ) and lets the user apply one: it
sets ``st.session_state.coarsening`` (applied by :mod:`ui.selection` before
``core.data.prepare``) and ``st.session_state.coarsening_chosen_from_data`` (recorded in
the recipe: choosing by looking at the data is a data-dependent choice).

The advisor runs on the released columns as read (:func:`ui.selection.release_frame`,
original units, before the coarsening and the Data page's rounding and bounds); the
profile above it shows the data after everything.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from core import planning as core_planning
from core import data as core_data
from core.plots.coarsening import coarsening_frontier_figure

from . import selection as sel
from . import widgets
from .text import literal, quoted

#: Session key of the frontier of the last evaluation (tuples of transforms), read by the planner
#: page through :func:`current_frontier`, and of the data it was evaluated on (:func:`data_key`).
FRONTIER_KEY = "advisor_frontier"
_FRONTIER_FOR = "advisor_frontier_for"
#: The source (its content hash) the advisor was switched on for: a new file starts it off.
_ON_KEY = "advisor_on"
#: Rows of the best-candidates table.
SHOWN = 15


def _public_settings(column: str) -> dict:
    return st.session_state.transforms.get(column, {"kind": "numeric", "log": False, "bounds_public": False})


def default_menu(column: str) -> list[core_data.ColumnTransform]:
    """The data-independent default transforms of ``column`` from its public settings on the
    Data page: bounds only when public, log-scale steps when the column uses log."""
    t = _public_settings(column)
    if t.get("kind") == "categorical":
        return core_planning.default_transforms(column, "categorical")
    bounds = sel.typed_bounds(t)
    bounds = bounds if bounds is not None and bounds[0] < bounds[1] else None
    return core_planning.default_transforms(column, "numeric", bounds=bounds, log=bool(t.get("log")))


def _parse_list(text: str) -> list[str]:
    return [part.strip() for part in str(text or "").split(",") if part.strip()]


def _steps(text: str, column: str) -> list[core_data.ColumnTransform]:
    out = []
    for part in _parse_list(text):
        try:
            step = float(part)
        except ValueError:
            raise ValueError(f"rounding step {part!r} of column {column!r} is not a number") from None
        if not math.isfinite(step) or step <= 0:
            raise ValueError(f"rounding step {part!r} of column {column!r} must be a finite number > 0")
        out.append(core_data.ColumnTransform(column, "round", step=step))
    return out


def _keep_labels(labels: list[str], frame: pd.DataFrame, column: str) -> tuple:
    """The typed labels in the column's own type (a numeric label typed as text matches its number)."""
    values = frame[column]
    if values.dtype.kind in "biuf":
        try:
            return tuple(values.dtype.type(float(x)) for x in labels)
        except ValueError:
            raise ValueError(f"keep list of column {column!r}: {labels!r} are not all numbers") from None
    return tuple(labels)


def _menus(columns: list[str], frame: pd.DataFrame) -> dict:
    """The per-column candidate transforms chosen with the widgets."""
    menus = {}
    for c in columns:
        kind = _public_settings(c).get("kind", "numeric")
        st.markdown(f"**{literal(c)}** ({kind})")
        if kind == "numeric":
            offered = default_menu(c)
            labels = [t.label for t in offered]
            left, right = st.columns([3, 2])
            chosen = left.multiselect(f"Transforms of {quoted(c)}", labels, default=labels, key=f"_adv_menu_{c}",
                                      label_visibility="collapsed")
            steps = right.text_input(f"More rounding steps for {quoted(c)} (comma-separated)", key=f"_adv_steps_{c}",
                                     placeholder="e.g. 250, 1000")
            menu = [t for t in offered if t.label in chosen] + _steps(steps, c)
        else:
            left, right = st.columns([3, 2])
            keep = left.text_input(f"Public list of categories of {quoted(c)} to keep (comma-separated; the rest "
                                   "become 'other')", key=f"_adv_keep_{c}",
                                   help="Type categories known from public sources, not read off this file.")
            min_count = right.number_input(f"Merge categories with fewer records (0 = off; data-dependent) — "
                                           f"{literal(c)}",
                                           min_value=0, max_value=10**9, value=0, step=1, key=f"_adv_min_{c}")
            menu = [core_data.ColumnTransform(c)]
            labels = _parse_list(keep)
            if labels:
                menu.append(core_data.ColumnTransform(c, "keep", keep=_keep_labels(labels, frame, c)))
            if min_count >= 2:
                menu.append(core_data.ColumnTransform(c, "min_count", min_count=int(min_count)))
        if not any(t.kind == "identity" for t in menu):
            menu.insert(0, core_data.ColumnTransform(c))   # "as recorded" is always a candidate
        menus[c] = menu
    return menus


@sel.session_cache(max_entries=4)
def evaluate(data_key: str, _frame: pd.DataFrame, _counts, grid: tuple, eps: float, delta: float,
             theta: float) -> core_planning.AdvisorResult:
    """``core.planning.advise`` of ``grid`` (cached per session by the data's key, the grid and
    (ε, δ, θ); deterministic: no random numbers)."""
    bar, progress = widgets.progress_bar(f"Evaluating {len(grid)} coarsening candidates …")
    result = core_planning.advise(_frame, grid, eps=eps, delta=delta, theta=theta, counts=_counts,
                                    progress=progress)
    bar.empty()
    return result


def data_key() -> str | None:
    """Content hash + reader options + released columns + counts column: the advisor's cache key."""
    source = sel.current_source()
    if source is None:
        return None
    return repr((source.key, sel.read_options(), tuple(st.session_state.columns or ()),
                 st.session_state.get("counts_column")))


def current_frontier() -> tuple:
    """The frontier of the last evaluation when it was made on the current data and columns,
    else ``()``: the candidates of another file or other columns are never offered."""
    if st.session_state.get(_FRONTIER_FOR) != data_key():
        return ()
    return tuple(st.session_state.get(FRONTIER_KEY) or ())


def _switched_on() -> bool:
    """Whether "Evaluate candidates" was clicked for the current file (not for a previous one)."""
    source = sel.current_source()
    return source is not None and st.session_state.get(_ON_KEY) == source.key


def applied_coarsening() -> tuple:
    return tuple(st.session_state.get("coarsening") or ())


def apply(transforms) -> None:
    """Set the session's coarsening (a candidate of the advisor: chosen from the data)."""
    st.session_state.coarsening = tuple(t for t in transforms if t.kind != "identity")
    st.session_state.coarsening_chosen_from_data = bool(st.session_state.coarsening)


def clear() -> None:
    st.session_state.coarsening = ()
    st.session_state.coarsening_chosen_from_data = False


def show_applied() -> None:
    """What coarsening the release uses now, and whether it depends on the data."""
    applied = applied_coarsening()
    if not applied:
        return
    dependent = [t.label for t in applied if t.data_dependent]
    chosen = st.session_state.get("coarsening_chosen_from_data", False)
    st.info(f"**Coarsening applied before the transforms:** {literal(core_data.coarsening_label(applied))}. The "
            "profile above and every release use the coarsened data; the recipe records the coarsening.",
            icon="🧱")
    if dependent or chosen:
        reasons = dependent + (["chosen with the advisor by looking at its numbers"] if chosen else [])
        st.warning(f"This coarsening depends on the confidential data ({literal('; '.join(reasons))}). No guarantee "
                   "covers that choice; the public report says so.", icon="⚠️")
    st.button("Clear coarsening", key="_adv_clear", on_click=clear)


#: Headers of the advisor's table: the global m* (what limits a public release) leads, the
#: instance-level m*ₓ (this data only) is secondary.
GLOBAL_M, INSTANCE_M = "global m* (public release)", "instance-level m*ₓ (this data)"


def _shown_table(result: core_planning.AdvisorResult, table: pd.DataFrame) -> pd.DataFrame:
    """Frontier first (by singletons, then instance-level m*), then the rest; one row per
    candidate, at most SHOWN; the global m* in the first column of numbers."""
    order = table.sort_values(["on_relative_frontier", "singletons", "m_star", "relative_cost"],
                              ascending=[False, True, False, True])
    shown = order.head(SHOWN).copy()
    shown.insert(1, "data-dependent", np.where(shown["data_dependent"], "⚠ data-dependent", ""))
    shown["frontier"] = np.where(shown["on_relative_frontier"], "✔", "")
    shown = shown.drop(columns=["data_dependent", "on_frontier", "on_relative_frontier"])
    shown = shown.rename(columns={"global_m_star": GLOBAL_M, "m_star": INSTANCE_M})
    lead = [c for c in ("candidate", GLOBAL_M, "data-dependent", "singletons", "k", INSTANCE_M) if c in shown]
    return shown[lead + [c for c in shown.columns if c not in lead]]


def render_advisor() -> None:
    """The advisor expander of the Data page (no-op without a usable selection)."""
    show_applied()
    frame = sel.release_frame()
    if frame is None or frame.empty:
        return
    counts = sel.release_counts()
    columns = [str(c) for c in frame.columns]
    with st.expander("Coarsening advisor (singleton-aware)", expanded=_switched_on()):
        st.caption("**What limits a public release is the global m\\*** (the exact global profile): it depends on n, θ "
                   "and δ (not on ε) "
                   "only, so it is the same for one column or several, coarsened or not. With several columns "
                   "a record is one value (a whole row), so most records are singletons; each singleton puts the "
                   "plateau m/(m + θ + n − 1) into the instance-level δ, so while one is left the instance-level "
                   "m\\*ₓ of this data stays at or below the singleton limit m_sing, which caps the global m\\* "
                   "too. Coarsening merges records: it lowers the singletons and, once none is left, lifts m\\*ₓ "
                   "above m_sing — a fact about this data, not a larger public release. Each candidate takes "
                   "one transform per column; the advisor reports distinct rows k, singletons k₁, m\\*ₓ at the "
                   f"current (ε = {st.session_state.eps:g}, δ = {st.session_state.delta:g}, "
                   f"θ = {widgets.parameter_text(st.session_state.theta)}; σ = 0) and what the coarsening alone "
                   "costs per column (W1 in the column's units; total variation for categories). Numbers are "
                   "for the columns as read, before the rounding and bounds set above. Curator-only: they "
                   "describe the confidential data.")
        with widgets.show_errors("The advisor cannot run: ", stop=False):
            menus = _menus(columns, frame)
            grid = core_planning.candidate_grid(menus)
            st.caption(f"{len(grid)} candidate(s).")
            if st.button("Evaluate candidates", key="_adv_run", type="primary"):
                st.session_state[_ON_KEY] = sel.current_source().key
            if not _switched_on():
                return
            result = evaluate(data_key(), frame, counts, tuple(grid), float(st.session_state.eps),
                              float(st.session_state.delta), float(st.session_state.theta))
            _show_result(result)


def _show_result(result: core_planning.AdvisorResult) -> None:
    table = result.table()
    st.session_state[FRONTIER_KEY] = tuple(c.transforms for c in result.frontier(by="relative"))
    st.session_state[_FRONTIER_FOR] = data_key()
    st.warning(literal(result.caveat), icon="⚠️")
    st.caption(f"Scope: {literal(result.scope)}.")
    applied = applied_coarsening()
    applied_label = next((c.label for c in result.candidates
                          if tuple(t for t in c.transforms if t.kind != "identity") == applied), None)
    st.markdown(f"**Global m\\* = {result.global_m_star:,}** at ε = {st.session_state.eps:g}, "
                f"δ = {st.session_state.delta:g}, θ = {widgets.parameter_text(st.session_state.theta)} for "
                f"n = {result.candidates[0].n:,} records: the largest public release, the same for every candidate "
                "below. The instance-level m\\*ₓ describes this data only (not private).")
    flat = table["m_star"].nunique() == 1   # every candidate at one m*ₓ (e.g. each keeps a singleton)
    y = st.radio("Plot", ["m_star", "singletons"], horizontal=True, key="_adv_y", index=1 if flat else 0,
                 # radio options are Markdown: the asterisks are escaped
                 format_func={"m_star": "m\\*ₓ against cost (global m\\* as a line)",
                              "singletons": "singletons against cost"}.get)
    st.plotly_chart(coarsening_frontier_figure(table, y=y, applied=applied_label,
                                               global_m_star=result.global_m_star), key="advisor_frontier_plot")
    shown = _shown_table(result, table)
    st.markdown("**Best candidates** (frontier ✔ first: no other candidate has fewer singletons, a larger "
                "instance-level m\\*ₓ and a smaller cost)")
    st.dataframe(shown, hide_index=True)
    labels = list(shown["candidate"])
    by_label = {c.label: c for c in result.candidates}
    pick = st.selectbox("Candidate to apply", labels, key="_adv_pick")
    if st.button("Apply this coarsening", key="_adv_apply"):
        apply(by_label[pick].transforms)
        st.rerun()
