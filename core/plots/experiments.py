"""Plotly figure builders for the inference experiments of docs/mathematics.md §6 (paper §4.1, Appendix C.1).

Companions of :mod:`core.plots` (whose :func:`core.plots.informativity_figure` draws the
informativity experiment). Each builder takes a table that :mod:`core.evaluation`
already computed and returns a :class:`plotly.graph_objects.Figure`; nothing here
computes a posterior, a coverage or a privacy number. The only arithmetic is
presentation: error-bar lengths from interval end points and a normal-approximation
error bar of ±1.96 standard errors around an estimated coverage.

Trace names are stable so that the app and the tests can find a series by name:

* :func:`posterior_intervals_figure`: ``"posterior mean, 95% credible interval"`` and
  ``"confidential value (curator only)"`` for the location functionals (mean,
  quantiles); the same names prefixed by ``"probabilities: "`` for the probabilities (P(X > t), P(X = c)),
  which live on their own [0, 1] axis.
* :func:`coverage_figure`: ``"coverage"`` and ``"nominal level"``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .style import LAYOUT, plot_text

__all__ = [
    "CONFIDENTIAL_TRACE",
    "COVERAGE_TRACE",
    "NOMINAL_TRACE",
    "PROBABILITY_PREFIX",
    "coverage_figure",
    "interval_trace_name",
    "posterior_intervals_figure",
]

CONFIDENTIAL_TRACE = "confidential value (curator only)"
COVERAGE_TRACE = "coverage"
NOMINAL_TRACE = "nominal level"
#: Prefix of the traces drawn on the probability panel of :func:`posterior_intervals_figure`.
PROBABILITY_PREFIX = "probabilities: "   # P(X > t) of a numeric column, P(X = c) of a categorical one

_POSTERIOR_COLOUR = "#1f77b4"
_CONFIDENTIAL_COLOUR = "#d62728"


def interval_trace_name(level: float = 0.95) -> str:
    """Name of the posterior-mean trace for credible level ``level`` (e.g. 0.95 → ``"… 95% …"``)."""
    return f"posterior mean, {100 * level:g}% credible interval"


def _require_columns(table: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    if not isinstance(table, pd.DataFrame):
        raise ValueError(f"{what} must be a pandas DataFrame, got {type(table).__name__}")
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise ValueError(f"{what} must have the column(s) {missing}; its columns are {list(table.columns)}")
    if table.empty:
        raise ValueError(f"{what} is empty: there is nothing to plot")


def posterior_intervals_figure(summary: pd.DataFrame, *, level: float = 0.95,
                               probabilities: Sequence[str] | None = None, value_label: str = "value",
                               title: str = "Posterior of the functionals given the release") -> go.Figure:
    """Posterior means with credible intervals, next to the confidential values.

    One row per functional (y axis), the posterior mean as a marker with an error bar
    from ``lower`` to ``upper``, and — when ``summary`` has a ``confidential`` column — the
    confidential value as a second marker. Location functionals (mean, quantiles, in data
    units) and tail probabilities :math:`P(X > t)` (in [0, 1]) get separate x axes.

    Parameters
    ----------
    summary : DataFrame, shape (F, 4 or 5)
        Columns ``functional, posterior_mean, lower, upper`` and optionally
        ``confidential`` (:meth:`core.evaluation.PosteriorFunctionals.summary`).
    level : float in (0, 1)
        Credible level of ``lower``/``upper``, for the legend only.
    probabilities : sequence of str, optional
        Functionals drawn on the probability panel; default: names starting with
        ``"P("`` (:func:`core.evaluation.functional_names` names tails ``"P(X > t)"``).
    value_label : str
        Axis title of the location panel (e.g. the column name and its units).
    title : str

    Returns
    -------
    plotly.graph_objects.Figure
        A curator-only view when ``confidential`` is present: the legend says so.
    """
    _require_columns(summary, ("functional", "posterior_mean", "lower", "upper"), "summary")
    names = summary["functional"].astype(str)
    if probabilities is None:
        is_probability = names.str.startswith("P(").to_numpy()
    else:
        unknown = sorted(set(probabilities) - set(names))
        if unknown:
            raise ValueError(f"probabilities names functionals that are not in summary: {unknown}")
        is_probability = names.isin(list(probabilities)).to_numpy()
    panels = [("", ~is_probability), (PROBABILITY_PREFIX, is_probability)]
    panels = [(prefix, mask) for prefix, mask in panels if mask.any()]
    fig = make_subplots(rows=1, cols=len(panels), horizontal_spacing=0.15,
                        column_widths=[0.65, 0.35] if len(panels) == 2 else None)
    has_truth = "confidential" in summary.columns
    for col, (prefix, mask) in enumerate(panels, start=1):
        part = summary[mask]
        y = part["functional"].astype(str).tolist()
        mean = part["posterior_mean"].to_numpy(float)
        lower, upper = part["lower"].to_numpy(float), part["upper"].to_numpy(float)
        fig.add_trace(go.Scatter(
            x=mean, y=y, mode="markers", name=prefix + interval_trace_name(level),
            marker=dict(color=_POSTERIOR_COLOUR, size=10), legendgroup="posterior", showlegend=col == 1,
            error_x=dict(type="data", symmetric=False, array=upper - mean, arrayminus=mean - lower, thickness=2),
            customdata=np.column_stack([lower, upper]),
            hovertemplate="%{y}: posterior mean %{x:.4g}<br>interval [%{customdata[0]:.4g}, "
                          "%{customdata[1]:.4g}]<extra></extra>"), row=1, col=col)
        if has_truth:
            fig.add_trace(go.Scatter(
                x=part["confidential"].to_numpy(float), y=y, mode="markers", name=prefix + CONFIDENTIAL_TRACE,
                marker=dict(color=_CONFIDENTIAL_COLOUR, symbol="x", size=11), legendgroup="confidential",
                showlegend=col == 1, hovertemplate="%{y}: confidential %{x:.4g}<extra></extra>"), row=1, col=col)
        fig.update_yaxes(autorange="reversed", row=1, col=col)
        fig.update_xaxes(title_text="probability" if prefix else plot_text(value_label), row=1, col=col)
    fig.update_layout(title=plot_text(title), **LAYOUT)
    return fig


def coverage_figure(table: pd.DataFrame, *, level: float = 0.95,
                    title: str = "Coverage of the credible intervals over repeated releases") -> go.Figure:
    """Estimated coverage per functional with ±1.96 standard errors and the nominal level.

    Parameters
    ----------
    table : DataFrame, shape (F, ≥ 3)
        Columns ``functional, coverage, coverage_se``
        (:meth:`core.evaluation.RepeatedReleaseResult.table`).
    level : float in (0, 1)
        Nominal level of the intervals, drawn as a dashed line.
    title : str

    Returns
    -------
    plotly.graph_objects.Figure
        Traces ``"coverage"`` (bars) and ``"nominal level"``.
    """
    _require_columns(table, ("functional", "coverage", "coverage_se"), "table")
    if not 0 < float(level) < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    x = table["functional"].astype(str).tolist()
    coverage = table["coverage"].to_numpy(float)
    half = 1.96 * table["coverage_se"].to_numpy(float)
    fig = go.Figure()
    fig.add_trace(go.Bar(x=x, y=coverage, name=COVERAGE_TRACE, marker_color=_POSTERIOR_COLOUR,
                         # the value on each bar (inside, clear of the nominal line; above a bar too low for it)
                         text=[f"{c:.2f}" for c in coverage], cliponaxis=False, insidetextanchor="middle",
                         textposition=["inside" if c >= 0.15 else "outside" for c in coverage],
                         error_y=dict(type="data", array=np.minimum(half, 1 - coverage),
                                      arrayminus=np.minimum(half, coverage)),
                         hovertemplate="%{x}: coverage %{y:.3f}<extra></extra>"))
    fig.add_trace(go.Scatter(x=x, y=[float(level)] * len(x), mode="lines+markers", name=NOMINAL_TRACE,
                             line=dict(color="black", dash="dash"), marker=dict(size=4)))
    fig.update_layout(title=title, xaxis_title="functional", yaxis_title="fraction of intervals covering",
                      yaxis_range=[0, 1.05], **LAYOUT)
    return fig
