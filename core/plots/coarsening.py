"""Plotly figure of the coarsening advisor (docs/mathematics.md §3.4).

:func:`coarsening_frontier_figure` takes the table of :meth:`core.planning.AdvisorResult.table`
(one row per candidate) and returns a :class:`plotly.graph_objects.Figure`: each candidate
at (relative coarsening cost, m* or singletons), the non-dominated candidates joined in
cost order, data-dependent candidates drawn with another symbol. No arithmetic beyond
sorting. Trace names are stable so that tests can find a series: ``"global m*"`` (the
line of the global m* that limits a public release, first when given), ``"candidates"``,
``"data-dependent candidates"``, ``"frontier"``, ``"applied"``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .style import CURATOR_ONLY, LAYOUT, log_axis, plot_text, series_colour
from ..validation import check_choice, check_integer

__all__ = ["coarsening_frontier_figure"]

_Y = {"m_star": "instance-level m*ₓ (this data)", "singletons": "singletons k₁"}
_NEEDED = ("candidate", "relative_cost", "m_star", "singletons", "data_dependent", "on_relative_frontier")


def coarsening_frontier_figure(table: pd.DataFrame, *, y: str = "m_star", applied: str | None = None,
                               global_m_star: int | None = None) -> go.Figure:
    """Instance-level m* (or singletons) of each coarsening candidate against its relative
    cost, led by the global m* that limits a public release.

    The global m* (Theorem 2) depends on n, θ, ε and δ only, so it is one number for every
    candidate: the title states it and, with ``y='m_star'``, a line draws it under the
    instance-level m*ₓ of the candidates (log axis). A candidate that keeps a singleton has
    m*ₓ at most the singleton limit, so with singletons everywhere the m*ₓ are all equal:
    the figure then says so (the singletons are the axis that moves). The singletons are
    drawn on a log axis when every candidate keeps one.

    Parameters
    ----------
    table : pandas.DataFrame
        :meth:`core.planning.AdvisorResult.table`: columns ``candidate`` (label),
        ``relative_cost`` (max over columns of cost / scale, ≥ 0), ``m_star``,
        ``singletons``, ``data_dependent`` and ``on_relative_frontier`` (bool).
    y : {'m_star', 'singletons'}
        The vertical axis (m* is better high, singletons better low).
    applied : str, optional
        Label of the candidate currently applied, marked with a ring.
    global_m_star : int ≥ 0, optional
        :attr:`core.planning.AdvisorResult.global_m_star` (docs/mathematics.md §3.5).

    Returns
    -------
    plotly.graph_objects.Figure
        Curator-only: the numbers are instance-level, computed from the confidential data.
    """
    y = check_choice("y", y, tuple(_Y))
    if not isinstance(table, pd.DataFrame) or table.empty:
        raise ValueError("table must be a non-empty DataFrame of advisor candidates (AdvisorResult.table())")
    missing = [c for c in _NEEDED if c not in table.columns]
    if missing:
        raise ValueError(f"table lacks the column(s) {missing} of AdvisorResult.table()")
    if global_m_star is not None:
        global_m_star = check_integer("global_m_star", global_m_star, minimum=0)
    fig = go.Figure()
    costs = table["relative_cost"].to_numpy(float)
    values = table[y].to_numpy(float)
    if global_m_star is not None and y == "m_star":
        span = [float(costs.min()), float(costs.max())] if costs.max() > costs.min() else [-0.5, 0.5]
        fig.add_trace(go.Scatter(x=span, y=[global_m_star] * 2, mode="lines", name="global m*",
                                 line=dict(color="black", dash="dash", width=3),
                                 hovertemplate=f"global m* = {global_m_star:,}: limits a public release "
                                               "(every candidate)<extra></extra>"))
    dependent = table["data_dependent"].to_numpy(bool)
    for name, rows, symbol, colour in (("candidates", ~dependent, "circle", series_colour(0)),
                                       ("data-dependent candidates", dependent, "x", series_colour(1))):
        part = table[rows]
        if part.empty:
            continue
        fig.add_trace(go.Scatter(x=part["relative_cost"], y=part[y], mode="markers", name=name,
                                 text=[plot_text(c) for c in part["candidate"]], marker=dict(symbol=symbol, color=colour, size=9,
                                                                      opacity=0.6),
                                 hovertemplate="%{text}<br>relative cost %{x:.3g}<br>" + y + " %{y}<extra></extra>"))
    front = table[table["on_relative_frontier"].to_numpy(bool)].sort_values(["relative_cost", y])
    fig.add_trace(go.Scatter(x=front["relative_cost"], y=front[y], mode="lines+markers", name="frontier",
                             text=[plot_text(c) for c in front["candidate"]], line=dict(color=series_colour(2), shape="hv"),
                             marker=dict(size=11, color=series_colour(2)),
                             hovertemplate="%{text}<br>relative cost %{x:.3g}<br>" + y + " %{y}<extra></extra>"))
    if applied is not None:
        hit = table[table["candidate"] == applied]
        if not hit.empty:
            fig.add_trace(go.Scatter(x=hit["relative_cost"], y=hit[y], mode="markers", name="applied",
                                     text=[plot_text(c) for c in hit["candidate"]], hoverinfo="text",
                                     marker=dict(symbol="circle-open", size=20, line=dict(width=3),
                                                 color="black")))
    lead = ("" if global_m_star is None else
            f"Global m* = {global_m_star:,} limits a public release (every candidate)<br>")
    fig.update_layout(
        title=f"{lead}Coarsening candidates: {_Y[y]} against cost — {CURATOR_ONLY}",
        xaxis_title="relative coarsening cost (max over columns of W1 / SD; TV for categories)",
        yaxis_title=_Y[y], **LAYOUT)
    fig.update_layout(margin=dict(t=90 if lead else 60))
    if np.all(costs == 0):
        fig.update_xaxes(range=[-0.5, 0.5])
    singletons = table["singletons"].to_numpy(float)
    if y == "singletons" and np.all(singletons > 0):
        fig.update_yaxes(**log_axis(singletons))
    if y == "m_star" and np.all(values > 0):
        fig.update_yaxes(**log_axis(values))
    if y == "m_star" and np.unique(values).size == 1:
        why = (" (every candidate keeps a singleton: m*ₓ is at most the singleton limit; coarser transforms "
               "lower the singletons, plot them)") if np.all(singletons > 0) else ""
        fig.add_annotation(text=plot_text(f"m*ₓ = {int(values[0]):,} for every candidate{why}"),
                           xref="paper", yref="paper", x=0.5, y=1.0, yanchor="bottom", showarrow=False)
    return fig
