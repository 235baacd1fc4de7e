"""Figures of the data profile: the multiplicity spectrum and singletons by rounding (docs/mathematics.md §1)."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from .style import LAYOUT, as_1d, log_axis, series_colour, same_length
from ..validation import check_integer, check_real

__all__ = ["multiplicity_bins", "singletons_by_rounding_figure", "spectrum_figure"]


#: Growth of the multiplicity bins of :func:`spectrum_figure`: each bin ends about 40 % above
#: where it starts (and holds at least one whole multiplicity).
SPECTRUM_BIN_RATIO = 1.4


def multiplicity_bins(largest: int, ratio: float = SPECTRUM_BIN_RATIO) -> np.ndarray:
    """Edges of log-spaced bins of whole multiplicities: bin j holds ``edges[j] ≤ r < edges[j + 1]``.

    ``edges[0] = 1`` and ``edges[j + 1] = max(edges[j] + 1, ⌈ratio·edges[j]⌉)``: one
    multiplicity per bin while they are small (r = 1, the singletons, and r = 2 alone), then
    bins growing by ``ratio``, so that about ``log(largest)/log(ratio)`` bins cover
    1..``largest`` whatever the number of distinct multiplicities.
    """
    largest = check_integer("largest", largest, minimum=1)
    ratio = check_real("ratio", ratio, low=1.0, low_open=True)
    edges = [1]
    while edges[-1] <= largest:
        edges.append(max(edges[-1] + 1, math.ceil(edges[-1] * ratio)))
    return np.asarray(edges, dtype=float)   # whole numbers, exact up to 2^53 (MAX_RECORDS)


def spectrum_figure(multiplicity, number_of_values, *, log_y: bool | str = "auto",
                    title: str = "Multiplicity spectrum") -> go.Figure:
    """Log-binned histogram of the multiplicity spectrum: how many distinct values appear
    r times, with r in log-spaced bins (:func:`multiplicity_bins`).

    Real data have thousands of distinct multiplicities (one bar each would be a pixel
    wide); the bins keep r = 1 (the singletons, highlighted) and r = 2 alone and grow by
    about 40 % above, so the chart has a few dozen bars whatever the data.

    Parameters
    ----------
    multiplicity : array_like of int, shape (J,)
        The multiplicities ``r`` present in the data (whole numbers ≥ 1).
    number_of_values : array_like of int, shape (J,)
        :math:`\\#\\{i : n_i = r\\}` for each ``r``; the bar at ``r = 1`` is the number of
        singletons ``k_1`` (docs/mathematics.md §1).
    log_y : bool or 'auto'
        Log scale for the counts (spectra of real data span several decades). ``'auto'``:
        when the bars span at least two decades (on a narrower span a log axis makes a bar
        of 1 look empty).

    Returns
    -------
    plotly.graph_objects.Figure
        One bar per non-empty bin (trace ``"distinct values"``): x the bin's label ("1",
        "3–4", ...), y the distinct values whose multiplicity lies in it; the hover adds the
        records they stand for.
    """
    r = as_1d("multiplicity", multiplicity)
    counts = same_length("number_of_values", number_of_values, r, "multiplicity")
    if r.size and not (np.all(r >= 1) and np.all(r == np.floor(r)) and np.all(np.isfinite(r))):
        raise ValueError("multiplicity must hold whole numbers >= 1")
    edges = multiplicity_bins(int(r.max()) if r.size else 1)
    which = np.searchsorted(edges, r, side="right") - 1
    values = np.bincount(which, weights=counts, minlength=edges.size - 1)[:edges.size - 1]
    records = np.bincount(which, weights=counts * r, minlength=edges.size - 1)[:edges.size - 1]
    shown = np.flatnonzero(values > 0)
    lo, hi = edges[shown].astype(int), (edges[shown + 1] - 1).astype(int)
    labels = [f"{a:,}" if a == b else f"{a:,}–{b:,}" for a, b in zip(lo, hi)]
    colours = [series_colour(1) if a == 1 else series_colour(0) for a in lo]
    fig = go.Figure(go.Bar(
        x=labels, y=values[shown], name="distinct values", marker_color=colours,
        customdata=np.column_stack([records[shown]]),
        hovertemplate="appear %{x} times: %{y:,} values (%{customdata[0]:,} records)<extra></extra>"))
    fig.update_layout(title=title, xaxis_title="multiplicity r (times a value appears; log-spaced bins)",
                      yaxis_title="number of distinct values", showlegend=False, bargap=0.1, **LAYOUT)
    fig.update_xaxes(type="category")
    if log_y == "auto":
        log_y = bool(shown.size) and values[shown].max() >= 100 * values[shown].min()
    if log_y:
        fig.update_yaxes(**log_axis(values[shown]))
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
