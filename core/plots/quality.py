"""Plotly figures of the quality report (docs/quality.md).

Builders take a :class:`core.evaluation.quality.QualityReport` and return a
:class:`plotly.graph_objects.Figure`; the only arithmetic is presentation. The overall
score is in every title, rounded *down* to three decimals so a figure never shows a
release as better than it is. Trace names are stable so that tests can find a series:

* :func:`column_scores_figure`: one bar trace per metric, ``"KSComplement"`` (numeric
  columns) and ``"TVComplement"`` (categorical columns);
* :func:`pair_scores_figure`: one heatmap trace ``"pair scores"`` — correlation
  similarity for numeric × numeric pairs, contingency similarity otherwise — with every
  score written in its cell, and the metric of each cell in its hover text.

The scores describe the confidential data: the figures are for the curator.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from .style import LAYOUT, plot_text, series_colour
from ..evaluation.quality import QualityReport

__all__ = ["column_scores_figure", "format_score", "overall_label", "pair_scores_figure"]

_METRICS = ("KSComplement", "TVComplement")


def _check_report(report) -> QualityReport:
    if not isinstance(report, QualityReport):
        raise ValueError(f"report must be a QualityReport from core.evaluation.quality.quality_report, got "
                         f"{type(report).__name__}")
    return report


def format_score(value: float) -> str:
    """A score rounded *down* to 3 decimals (``"0.812"``), ``"n/a"`` when undefined (NaN)."""
    value = float(value)
    # round(…, 6) first: 0.813 * 1000 is 812.9999999999999 in binary, which is not below 0.813
    return "n/a" if not math.isfinite(value) else f"{math.floor(round(value * 1000, 6)) / 1000:.3f}"


def overall_label(report: QualityReport) -> str:
    """``"overall quality 0.812"`` (rounded down to 3 decimals; "n/a" when undefined)."""
    return f"overall quality {format_score(_check_report(report).overall)}"


def column_scores_figure(report: QualityReport, *, title: str | None = None) -> go.Figure:
    """Bar chart of the per-column scores (Column Shapes), one colour per metric.

    Parameters
    ----------
    report : QualityReport
    title : str, optional
        Prefix of the title (the overall score is appended).
    """
    cols = _check_report(report).columns
    fig = go.Figure()
    for i, metric in enumerate(_METRICS):
        sub = cols[cols["metric"] == metric]
        if sub.empty:
            continue
        fig.add_trace(go.Bar(x=[plot_text(c) for c in sub["column"]], y=sub["score"], name=metric,
                             marker_color=series_colour(i), text=[f"{s:.3f}" for s in sub["score"]],
                             textposition="outside",
                             hovertemplate="%{x}: %{y:.4f}<extra>" + metric + "</extra>"))
    head = title or "Column shapes (1 = same distribution)"
    fig.update_layout(title=f"{head} — {overall_label(report)}", yaxis=dict(range=[0, 1.1], title="score"),
                      xaxis_title="column", **LAYOUT)
    return fig


def pair_scores_figure(report: QualityReport, *, title: str | None = None) -> go.Figure:
    """Heatmap of the pair scores (Column Pair Trends), values written in the cells.

    The diagonal is left empty (a column with itself is not a pair); each cell's hover
    says which metric gave it. NaN scores (a constant column has no correlation) show as
    "n/a".
    """
    report = _check_report(report)
    names = [str(c) for c in report.columns["column"]]
    k = len(names)
    z = np.full((k, k), np.nan)
    metric = np.full((k, k), "", dtype=object)
    index = {c: i for i, c in enumerate(names)}
    for r in report.pairs.itertuples():
        i, j = index[str(r.column_1)], index[str(r.column_2)]
        z[i, j] = z[j, i] = r.score
        metric[i, j] = metric[j, i] = r.metric
    text = [["" if i == j else ("n/a" if not np.isfinite(z[i, j]) else f"{z[i, j]:.3f}") for j in range(k)]
            for i in range(k)]
    shown = [plot_text(c) for c in names]
    fig = go.Figure(go.Heatmap(z=z, x=shown, y=shown, zmin=0.0, zmax=1.0, colorscale="Viridis",
                               text=text, texttemplate="%{text}", customdata=metric, name="pair scores",
                               hovertemplate="%{y} × %{x}: %{z:.4f}<br>%{customdata}<extra></extra>",
                               colorbar=dict(title="score")))
    head = title or "Column pair trends (1 = same relationship)"
    fig.update_layout(title=f"{head} — {overall_label(report)}", **LAYOUT)
    fig.update_yaxes(autorange="reversed")
    return fig
