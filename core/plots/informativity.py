"""Figure of the informativity experiment: W1 against n on log–log axes (docs/mathematics.md §6)."""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .style import LAYOUT, log_axis, plot_text, series_colour

__all__ = ["informativity_figure"]


def informativity_figure(curves: pd.DataFrame, *, slopes: Mapping[str, float] | None = None,
                         reference_slope: float = -0.5, y_title: str = "mean W1",
                         title: str = "Informativity: W1 between synthetic and confidential data") -> go.Figure:
    """Mean W1 against n on log–log axes with confidence bands and a reference slope.

    Parameters
    ----------
    curves : DataFrame
        Columns ``n``, ``mean``, ``lower``, ``upper`` and optionally ``series`` (one curve
        per distinct value).
    slopes : mapping series → float, optional
        Fitted log–log slopes, shown in the legend.
    reference_slope : float
        Exponent of the reference line :math:`c\\,n^{a}` (default ``a = −1/2``), anchored
        at the first point of the first series so it can be compared by eye.
    y_title : str
        Title of the W1 axis (say its units: e.g. the column's name).

    Both axes are logarithmic with readable ticks (:func:`core.plots.style.log_axis`).
    """
    for col in ("n", "mean", "lower", "upper"):
        if col not in curves.columns:
            raise ValueError(f"curves must have a column {col!r}; columns are {list(curves.columns)}")
    data = curves if "series" in curves.columns else curves.assign(series="mean W1")
    fig = go.Figure()
    anchor = None
    for i, name in enumerate(pd.unique(data["series"])):
        s = data[data["series"] == name].sort_values("n")
        n = s["n"].to_numpy(float)
        colour = series_colour(i)
        label = str(name)
        if slopes and name in slopes:
            label = f"{name} (slope {slopes[name]:.2f})"
        fig.add_trace(go.Scatter(x=np.concatenate([n, n[::-1]]),
                                 y=np.concatenate([s["upper"].to_numpy(float), s["lower"].to_numpy(float)[::-1]]),
                                 fill="toself", mode="lines", line=dict(width=0), fillcolor=colour, opacity=0.2,
                                 name=f"{label} 95% band", legendgroup=label, showlegend=False, hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=n, y=s["mean"].to_numpy(float), mode="lines+markers", name=label,
                                 legendgroup=label, line=dict(color=colour)))
        if anchor is None and n.size:
            anchor = (n[0], float(s["mean"].iloc[0]), n[-1])
    if anchor is not None:
        n0, y0, n1 = anchor
        xs = np.array([n0, n1])
        fig.add_trace(go.Scatter(x=xs, y=y0 * (xs / n0) ** reference_slope, mode="lines",
                                 name=f"reference n^{reference_slope:g}",
                                 line=dict(color="black", dash="dash")))
    fig.update_layout(title=plot_text(title), xaxis_title="n (confidential sample size)",
                      yaxis_title=plot_text(y_title), **LAYOUT)
    fig.update_xaxes(**log_axis(data["n"].to_numpy(float)))
    fig.update_yaxes(**log_axis(np.concatenate([np.asarray(t.y, dtype=float) for t in fig.data])))
    return fig
