"""Plotly figure of the coarsening advisor (docs/mathematics.md §3.4).

:func:`coarsening_frontier_figure` takes the table of :meth:`core.planning.AdvisorResult.table`
(one row per candidate) and returns a :class:`plotly.graph_objects.Figure`: each candidate
at (relative coarsening cost, m* or singletons), the non-dominated candidates joined in
cost order, data-dependent candidates drawn with another symbol. No arithmetic beyond
sorting. Trace names are stable so that tests can find a series: ``"candidates"``,
``"data-dependent candidates"``, ``"frontier"``, ``"applied"``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .style import CURATOR_ONLY, LAYOUT, plot_text, series_colour
from ..validation import check_choice

__all__ = ["coarsening_frontier_figure"]

_Y = {"m_star": "largest instance-level release size m*", "singletons": "singletons k₁"}
_NEEDED = ("candidate", "relative_cost", "m_star", "singletons", "data_dependent", "on_relative_frontier")


def coarsening_frontier_figure(table: pd.DataFrame, *, y: str = "m_star", applied: str | None = None) -> go.Figure:
    """m* (or singletons) of each coarsening candidate against its relative cost.

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
    fig = go.Figure()
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
    costs = table["relative_cost"].to_numpy(float)
    fig.update_layout(
        title=f"Coarsening candidates: {_Y[y]} against cost — {CURATOR_ONLY}",
        xaxis_title="relative coarsening cost (max over columns of W1 / SD; TV for categories)",
        yaxis_title=_Y[y], **LAYOUT)
    if np.all(costs == 0):
        fig.update_xaxes(range=[-0.5, 0.5])
    return fig
