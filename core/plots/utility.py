"""Figures of the synthetic data and the comparison: overlays, W1 boxplots and sweeps (docs/mathematics.md §5)."""

from __future__ import annotations

import html
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..validation import check_integer
from .style import CURATOR_ONLY, LAYOUT, as_1d, plot_text, same_length, series_colour

__all__ = ["category_shares_figure", "distribution_overlay_figure", "w1_boxplot_figure", "w1_frontier_figure"]


def distribution_overlay_figure(samples: Mapping[str, Sequence[float]], *, kde_grid=None,
                                kde: Mapping[str, Sequence[float]] | None = None, bins: int = 40,
                                title: str = "Confidential vs synthetic", curator_only: bool = True,
                                x_title: str = "value") -> go.Figure:
    """Overlaid density histograms and KDE curves of several samples of one column.

    Parameters
    ----------
    samples : mapping label → array of shape (n_label,)
        e.g. ``{"confidential": x, "synthetic (PYPP)": z}``; all histograms share one set
        of ``bins`` edges over the pooled range so their heights are comparable.
    kde_grid : array_like of float, shape (G,), optional
        Common evaluation grid of the KDEs (``core.evaluation``).
    kde : mapping label → array of shape (G,), optional
        Density values on ``kde_grid``; drawn as lines in the colour of the sample with
        the same label.
    curator_only : bool
        Mark the figure as a curator-only view (it shows confidential data).
    """
    bins = check_integer("bins", bins, minimum=1, maximum=10_000)
    arrays = {label: as_1d(f"samples[{label!r}]", v) for label, v in samples.items()}
    finite = [a[np.isfinite(a)] for a in arrays.values() if a.size]
    if not finite or not any(f.size for f in finite):
        raise ValueError("samples must contain at least one finite value")
    pooled = np.concatenate(finite)
    lo, hi = float(pooled.min()), float(pooled.max())
    if hi == lo:
        hi = lo + 1.0
    size = (hi - lo) / bins
    fig = go.Figure()
    colours = {}
    for i, (label, a) in enumerate(arrays.items()):
        colours[label] = series_colour(i)
        fig.add_trace(go.Histogram(x=a, name=label, histnorm="probability density", opacity=0.45,
                                   marker_color=colours[label], legendgroup=label,
                                   xbins=dict(start=lo, end=hi + size * 1e-9, size=size)))
    if kde:
        if kde_grid is None:
            raise ValueError("kde_grid is required when kde curves are given")
        g = as_1d("kde_grid", kde_grid)
        for i, (label, dens) in enumerate(kde.items()):
            y = same_length(f"kde[{label!r}]", dens, g, "kde_grid")
            fig.add_trace(go.Scatter(x=g, y=y, mode="lines", name=f"{label} KDE", legendgroup=label,
                                     line=dict(color=colours.get(label, series_colour(len(arrays) + i)), width=2)))
    if curator_only:
        title = f"{title} — {CURATOR_ONLY}"
    fig.update_layout(title=plot_text(title), barmode="overlay", xaxis_title=plot_text(x_title),
                      yaxis_title="density", **LAYOUT)
    return fig


def category_shares_figure(categories: Sequence, shares: Mapping[str, Sequence[float]], *, max_categories: int = 30,
                           title: str = "Category shares", curator_only: bool = True,
                           x_title: str = "category") -> go.Figure:
    """Grouped bars of the share of each category in several samples of one categorical column.

    Parameters
    ----------
    categories : sequence, length K
        Category labels (user text: shown as text, never as markup).
    shares : mapping label → array of shape (K,)
        e.g. ``{"confidential": p, "PYPP": q}``, each summing to at most 1.
    max_categories : int ≥ 1
        Categories drawn: the largest ones of the first sample; the others are summed into
        one bar "(other categories)".
    curator_only : bool
        Mark the figure as a curator-only view (it shows confidential data).
    """
    max_categories = check_integer("max_categories", max_categories, minimum=1, maximum=10_000)
    names = [html.escape(str(c)) for c in categories]
    arrays = {label: same_length(f"shares[{label!r}]", v, np.zeros(len(names)), "categories")
              for label, v in shares.items()}
    if not arrays:
        raise ValueError("shares must hold at least one sample")
    first = next(iter(arrays.values()))
    keep = np.sort(np.argsort(-first, kind="stable")[:max_categories])
    rest = np.setdiff1d(np.arange(len(names)), keep)
    x = [names[i] for i in keep] + (["(other categories)"] if rest.size else [])
    fig = go.Figure()
    for i, (label, a) in enumerate(arrays.items()):
        y = np.concatenate([a[keep], [a[rest].sum()] if rest.size else []])
        fig.add_trace(go.Bar(x=x, y=y, name=html.escape(str(label)), marker_color=series_colour(i), opacity=0.8))
    if curator_only:
        title = f"{title} — {CURATOR_ONLY}"
    fig.update_layout(title=plot_text(title), barmode="group", xaxis_title=plot_text(x_title),
                      yaxis_title="share of records",
                      xaxis_type="category", **LAYOUT)
    return fig


def _ceiling_label(name) -> str:
    name = str(name)
    return name if "no privacy" in name else f"{name} (no privacy)"


def w1_boxplot_figure(runs: pd.DataFrame, *, value: str = "W1", by: str = "mechanism",
                      order: Sequence[str] | None = None, ceiling: str | None = "bootstrap",
                      title: str = "W1 to the confidential data over independent runs") -> go.Figure:
    """One box of per-run W1 per mechanism (docs/mathematics.md §5: R runs at the same (ε, δ) and m).

    Parameters
    ----------
    runs : DataFrame
        Tidy runs, one row per (mechanism, run), with columns ``by`` and ``value``.
    order : sequence of str, optional
        Order of the boxes (default: order of first appearance).
    ceiling : str, optional
        Name of the non-private mechanism; its box is grey and labelled "no privacy".
    """
    for col in (value, by):
        if col not in runs.columns:
            raise ValueError(f"runs must have a column {col!r}; columns are {list(runs.columns)}")
    names = list(order) if order is not None else list(pd.unique(runs[by]))
    fig = go.Figure()
    for i, name in enumerate(names):
        vals = runs.loc[runs[by] == name, value].to_numpy(dtype=float)
        is_ceiling = ceiling is not None and name == ceiling
        label = _ceiling_label(name) if is_ceiling else str(name)
        fig.add_trace(go.Box(y=vals, name=label, boxpoints="outliers",
                             marker_color="grey" if is_ceiling else series_colour(i)))
    fig.update_layout(title=plot_text(title), yaxis_title=plot_text(value), showlegend=False, **LAYOUT)
    return fig


def w1_frontier_figure(runs: pd.DataFrame, *, x: str = "eps", value: str = "W1",
                       by: str = "mechanism", log_x: bool = True, log_y: bool = True,
                       ceiling: str | None = "bootstrap",
                       title: str = "Utility frontier: median W1 against ε") -> go.Figure:
    """Median W1 against ε per mechanism with a band from the first to the third quartile.

    Parameters
    ----------
    runs : DataFrame
        Tidy runs with columns ``x`` (ε), ``by`` (mechanism) and ``value`` (W1), several
        runs per (mechanism, ε).
    """
    for col in (x, value, by):
        if col not in runs.columns:
            raise ValueError(f"runs must have a column {col!r}; columns are {list(runs.columns)}")
    grouped = runs.groupby([by, x], sort=False)[value]
    stats = pd.DataFrame({"q1": grouped.quantile(0.25), "median": grouped.median(),
                          "q3": grouped.quantile(0.75)}).reset_index()
    fig = go.Figure()
    for i, name in enumerate(pd.unique(runs[by])):
        s = stats[stats[by] == name].sort_values(x)
        colour = "#7f7f7f" if ceiling is not None and name == ceiling else series_colour(i)
        label = _ceiling_label(name) if ceiling is not None and name == ceiling else str(name)
        xs = s[x].to_numpy(dtype=float)
        fig.add_trace(go.Scatter(x=np.concatenate([xs, xs[::-1]]),
                                 y=np.concatenate([s["q3"].to_numpy(float), s["q1"].to_numpy(float)[::-1]]),
                                 fill="toself", mode="lines", line=dict(width=0), fillcolor=colour,
                                 opacity=0.2, name=f"{label} quartiles", legendgroup=label,
                                 showlegend=False, hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=xs, y=s["median"].to_numpy(float), mode="lines+markers", name=label,
                                 legendgroup=label, line=dict(color=colour)))
    fig.update_layout(title=plot_text(title), xaxis_title="ε", yaxis_title=plot_text(f"median {value}"), **LAYOUT)
    if log_x:
        fig.update_xaxes(type="log")
    if log_y:
        fig.update_yaxes(type="log")
    return fig
