"""The privacy ledger as a figure: cumulative ε and δ of a dataset's releases against the
release index, with the budget line (docs/audit.md §8).

The numbers come from :mod:`core.ledger` (each release's cumulative guarantee as the ledger
recorded it, rounded up); nothing is composed here.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .style import LAYOUT, as_1d, plot_text, same_length, series_colour

__all__ = ["ledger_figure"]

#: Stable trace names (the app and the tests find a series by name).
TRACE_EPS, TRACE_DELTA = "cumulative ε", "cumulative δ"
TRACE_BUDGET_EPS, TRACE_BUDGET_DELTA = "budget ε", "budget δ"
TRACE_INCOMPLETE = "incomplete (counted)"


def ledger_figure(index: Sequence[int], cumulative_eps: Sequence[float], cumulative_delta: Sequence[float], *,
                  budget_eps: float, budget_delta: float, incomplete: Sequence[bool] | None = None,
                  dataset: str | None = None) -> go.Figure:
    """Cumulative ε (left panel) and δ (right panel) after each release, with the budget.

    Parameters
    ----------
    index : array_like of int, shape (R,)
        Release indices (1, 2, …), in order.
    cumulative_eps, cumulative_delta : array_like of float, shape (R,)
        The dataset's spend after each release, as the ledger recorded it
        (:attr:`core.ledger.ReleaseEntry.cumulative_eps`, ``cumulative_delta``; docs/audit.md §8).
    budget_eps, budget_delta : float
        The dataset's current budget, drawn as a horizontal line in each panel.
    incomplete : array_like of bool, shape (R,), optional
        Releases recorded but not confirmed written: marked apart (they count all the same).
    dataset : str, optional
        The dataset's name for the title (user text: shown as text, never markup).

    Returns
    -------
    plotly.graph_objects.Figure
        Traces ``"cumulative ε"``, ``"cumulative δ"``, ``"budget ε"``, ``"budget δ"`` and,
        when some release is incomplete, ``"incomplete (counted)"``.
    """
    x = np.asarray(as_1d("index", index) if len(index) else [], dtype=float).astype(int)
    eps = same_length("cumulative_eps", cumulative_eps, x, "index") if x.size else np.zeros(0)
    delta = same_length("cumulative_delta", cumulative_delta, x, "index") if x.size else np.zeros(0)
    flagged = np.zeros(x.size, dtype=bool) if incomplete is None else np.asarray(incomplete, dtype=bool).reshape(-1)
    if flagged.size != x.size:
        raise ValueError(f"incomplete must have one flag per release ({x.size}), got {flagged.size}")
    fig = make_subplots(rows=1, cols=2, subplot_titles=("cumulative ε", "cumulative δ"), horizontal_spacing=0.12)
    # the budget line spans the releases and one more (where the next release would land)
    span = [0, int(x.max()) + 1 if x.size else 1]
    for col, (values, budget, name, budget_name) in enumerate(
            ((eps, budget_eps, TRACE_EPS, TRACE_BUDGET_EPS), (delta, budget_delta, TRACE_DELTA, TRACE_BUDGET_DELTA)),
            start=1):
        fig.add_trace(go.Scatter(x=[0, *x.tolist()], y=[0.0, *values.tolist()], mode="lines+markers", name=name,
                                 line=dict(color=series_colour(col - 1), shape="hv")), row=1, col=col)
        fig.add_trace(go.Scatter(x=span, y=[float(budget)] * 2, mode="lines", name=budget_name,
                                 line=dict(color="#B22222", dash="dash")), row=1, col=col)
        if flagged.any():
            fig.add_trace(go.Scatter(x=x[flagged].tolist(), y=values[flagged].tolist(), mode="markers",
                                     name=TRACE_INCOMPLETE, showlegend=col == 1,
                                     marker=dict(symbol="x", size=11, color="#B22222")), row=1, col=col)
        fig.update_xaxes(title_text="release index", dtick=1, rangemode="tozero", row=1, col=col)
    fig.update_yaxes(title_text="ε", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title_text="δ", rangemode="tozero", row=1, col=2)
    title = "Privacy ledger: spend after each release" + (f" of {plot_text(dataset)}" if dataset else "")
    fig.update_layout(**LAYOUT, title=title)
    return fig
