"""Figures of the data profile: the multiplicity spectrum and singletons by rounding (docs/mathematics.md §1)."""

from __future__ import annotations

import plotly.graph_objects as go

from .style import LAYOUT, as_1d, series_colour, same_length

__all__ = ["singletons_by_rounding_figure", "spectrum_figure"]


def spectrum_figure(multiplicity, number_of_values, *, log_y: bool = True,
                    title: str = "Multiplicity spectrum") -> go.Figure:
    """Bar chart of the multiplicity spectrum: how many distinct values appear ``r`` times.

    Parameters
    ----------
    multiplicity : array_like of int, shape (J,)
        The multiplicities ``r`` present in the data.
    number_of_values : array_like of int, shape (J,)
        :math:`\\#\\{i : n_i = r\\}` for each ``r``; the bar at ``r = 1`` is the number of
        singletons ``k_1`` (docs/mathematics.md §1).
    log_y : bool
        Log scale for the counts (spectra of real data span several decades).
    """
    r = as_1d("multiplicity", multiplicity)
    counts = same_length("number_of_values", number_of_values, r, "multiplicity")
    colours = [series_colour(1) if ri == 1 else series_colour(0) for ri in r]
    fig = go.Figure(go.Bar(
        x=r, y=counts, name="distinct values", marker_color=colours,
        hovertemplate="appear %{x} times: %{y} values<extra></extra>"))
    fig.update_layout(title=title, xaxis_title="multiplicity r (times a value appears)",
                      yaxis_title="number of distinct values", showlegend=False, **LAYOUT)
    if log_y:
        fig.update_yaxes(type="log")
    return fig


def singletons_by_rounding_figure(decimals, singletons, *, distinct=None,
                                  current: int | None = None) -> go.Figure:
    """How the rounding precision changes the number of singletons (and distinct values).

    Parameters
    ----------
    decimals : array_like of int, shape (J,)
        Rounding precisions (number of decimals; may be negative for tens, hundreds…).
    singletons : array_like of int, shape (J,)
        Singleton count ``k_1`` of the data rounded to each precision.
    distinct : array_like of int, shape (J,), optional
        Number of distinct values ``k`` at each precision.
    current : int, optional
        The precision currently selected, marked on the chart.
    """
    d = as_1d("decimals", decimals)
    k1 = same_length("singletons", singletons, d, "decimals")
    fig = go.Figure(go.Scatter(x=d, y=k1, mode="lines+markers", name="singletons k₁",
                               line=dict(color=series_colour(1))))
    if distinct is not None:
        k = same_length("distinct", distinct, d, "decimals")
        fig.add_trace(go.Scatter(x=d, y=k, mode="lines+markers", name="distinct values k",
                                 line=dict(color=series_colour(0), dash="dot")))
    if current is not None:
        fig.add_vline(x=current, line_dash="dash", line_color="grey",
                      annotation_text="selected", annotation_position="top")
    fig.update_layout(title="Rounding and singletons", xaxis_title="decimals kept",
                      yaxis_title="count", **LAYOUT)
    return fig
