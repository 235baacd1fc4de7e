"""Figures of the synthetic data and the comparison: overlays, W1 boxplots and sweeps (docs/mathematics.md §5).

A figure of many mechanisms is a set of small multiples (:func:`core.plots.style.mechanism_panels`):
at most :data:`~core.plots.style.MAX_SERIES_PER_AXIS` series per panel, mechanisms grouped by
family, the reference (the confidential data, or the non-private bootstrap for a W1 figure)
repeated in every panel, and each mechanism in its own colour
(:data:`~core.plots.style.MECHANISM_COLOURS`) in every figure. Pass ``names`` (series key →
mechanism name, e.g. ``{"PYPP (σ = 0)": "pypp"}``) when the keys are labels; a W1 table's
``mechanism`` column gives them by itself.
"""

from __future__ import annotations

import html
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..validation import check_integer
from .style import (CONFIDENTIAL_COLOUR, CURATOR_ONLY, MECHANISM_COLOURS, PanelGrid, as_1d, log_axis,
                    mechanism_colours, mechanism_panels, plot_text, same_length)

__all__ = ["category_shares_figure", "distribution_overlay_figure", "w1_boxplot_figure", "w1_frontier_figure"]


def _reference_key(keys, reference):
    """The reference series of a figure of samples: ``reference`` if given (it must be a key),
    else ``"confidential"`` when there is such a series, else none."""
    if reference is None:
        return "confidential" if "confidential" in keys else None
    if reference not in keys:
        raise ValueError(f"reference {reference!r} is not one of the series {list(keys)}")
    return reference


def distribution_overlay_figure(samples: Mapping[str, Sequence[float]], *, kde_grid=None,
                                kde: Mapping[str, Sequence[float]] | None = None, bins: int = 40,
                                title: str = "Confidential vs synthetic", curator_only: bool = True,
                                x_title: str = "value", names: Mapping[str, str] | None = None,
                                reference: str | None = None, histograms: str = "all") -> go.Figure:
    """Density histograms and KDE curves of several samples of one column, as small multiples.

    Parameters
    ----------
    samples : mapping label → array of shape (n_label,)
        e.g. ``{"confidential": x, "synthetic (PYPP)": z}``; all histograms share one set
        of ``bins`` edges over the pooled range so their heights are comparable.
    kde_grid : array_like of float, shape (G,), optional
        Common evaluation grid of the KDEs (``core.evaluation``).
    kde : mapping label → array of shape (G,), optional
        Density values on ``kde_grid``; drawn as lines in the colour of the sample with
        the same label (with ``histograms="reference"``, over the samples' range and a bin
        beyond each end).
    curator_only : bool
        Mark the figure as a curator-only view (it shows confidential data).
    names : mapping label → mechanism name, optional
        Gives each mechanism its colour and family panel (:func:`core.plots.style.mechanism_panels`).
    reference : str, optional
        The sample drawn in every panel (default ``"confidential"`` when there is one), in black.
    histograms : {"all", "reference"}
        ``"reference"``: only the reference is drawn as a histogram, every other sample as
        its KDE line (a histogram when it has none) — many translucent histograms on one
        axis cannot be told apart. Every histogram is binned here (a ``go.Bar`` of the
        density per bin, :math:`c_b / (N h)` for count :math:`c_b` of the sample's N finite
        values and bin width h), so a sample costs ``bins`` numbers per panel, whatever its
        size, and the browser bins nothing.

    Returns
    -------
    plotly.graph_objects.Figure
        One panel per family of at most five series (:data:`~core.plots.style.MAX_SERIES_PER_AXIS`,
        the reference included) on shared axes; a histogram trace (a ``go.Bar`` of densities at
        the bin centres) is named by its label, a KDE trace ``"<label> KDE"``; the reference's
        traces repeat in every panel (in the legend once).
    """
    bins = check_integer("bins", bins, minimum=1, maximum=10_000)
    if histograms not in ("all", "reference"):
        raise ValueError(f"histograms must be 'all' or 'reference', got {histograms!r}")
    arrays = {label: as_1d(f"samples[{label!r}]", v) for label, v in samples.items()}
    finite = [a[np.isfinite(a)] for a in arrays.values() if a.size]
    if not finite or not any(f.size for f in finite):
        raise ValueError("samples must contain at least one finite value")
    curves = {}
    if kde:
        if kde_grid is None:
            raise ValueError("kde_grid is required when kde curves are given")
        g = as_1d("kde_grid", kde_grid)
        curves = {label: same_length(f"kde[{label!r}]", dens, g, "kde_grid") for label, dens in kde.items()}
    pooled = np.concatenate(finite)
    lo, hi = float(pooled.min()), float(pooled.max())
    if hi == lo:
        hi = lo + 1.0
    size = (hi - lo) / bins
    if curves:
        # with many panels, the curves over the samples' range: the KDE grid's padding holds no sample
        shown = (g >= lo - size) & (g <= hi + size) if histograms == "reference" else np.ones(g.size, dtype=bool)
    ref = _reference_key(list(arrays), reference)
    others = [label for label in arrays if label != ref] + [label for label in curves if label not in arrays]
    colours = mechanism_colours(others, names)
    if ref is not None:
        colours[ref] = CONFIDENTIAL_COLOUR
    panels = mechanism_panels(others, names, references=ref is not None)
    grid = PanelGrid(panels)
    # Binned here, never in the browser: a plotly histogram ships every raw value (a megabyte of
    # JSON per 60 000-row column, once per panel) and bins them in the page on every redraw.
    edges = lo + size * np.arange(bins + 1)
    edges[-1] = hi
    binned = {}
    for label, a in arrays.items():
        counts, _ = np.histogram(a[np.isfinite(a)], bins=edges)
        binned[label] = counts / max(1, counts.sum()) / size

    def draw(i, label, first):
        is_ref = label == ref
        style = dict(name=plot_text(label), opacity=0.25 if is_ref else 0.45, marker=dict(color=colours[label]),
                     legendgroup=label, showlegend=first)
        if label in binned and (is_ref or histograms == "all" or label not in curves):
            grid.add(i, dict(type="bar", x=edges[:-1] + size / 2, y=binned[label], width=size, **style,
                             hovertemplate="%{x:.4g}: density %{y:.3g}<extra>" + plot_text(label) + "</extra>"))
        if label in curves:
            grid.add(i, dict(type="scatter", x=g[shown], y=curves[label][shown], mode="lines",
                             name=plot_text(f"{label} KDE"), legendgroup=label, showlegend=first,
                             line=dict(color=colours[label], width=2.5 if is_ref else 2)))

    for i, panel in enumerate(panels or [None]):
        if ref is not None:
            draw(i, ref, i == 0)
        for label in (panel.keys if panel is not None else ()):
            draw(i, label, True)
    if curator_only:
        title = f"{title} — {CURATOR_ONLY}"
    grid.title_axes(x_title=plot_text(x_title), y_title="density")
    grid.axes("y", exponentformat="power")     # a density of 2·10⁻⁵ per dollar, not "20μ"
    return grid.figure(title=plot_text(title), barmode="overlay")


def category_shares_figure(categories: Sequence, shares: Mapping[str, Sequence[float]], *, max_categories: int = 30,
                           title: str = "Category shares", curator_only: bool = True,
                           x_title: str = "category", names: Mapping[str, str] | None = None,
                           reference: str | None = None) -> go.Figure:
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
    names : mapping label → mechanism name, optional
        Colours and family panels, as in :func:`distribution_overlay_figure`.
    reference : str, optional
        The sample drawn in every panel (default ``"confidential"`` when there is one).

    Returns
    -------
    plotly.graph_objects.Figure
        Panels stacked on a shared category axis, at most five bar series each (the
        reference included).
    """
    max_categories = check_integer("max_categories", max_categories, minimum=1, maximum=10_000)
    names_x = [html.escape(str(c)) for c in categories]
    arrays = {label: same_length(f"shares[{label!r}]", v, np.zeros(len(names_x)), "categories")
              for label, v in shares.items()}
    if not arrays:
        raise ValueError("shares must hold at least one sample")
    first = next(iter(arrays.values()))
    keep = np.sort(np.argsort(-first, kind="stable")[:max_categories])
    rest = np.setdiff1d(np.arange(len(names_x)), keep)
    x = [names_x[i] for i in keep] + (["(other categories)"] if rest.size else [])
    ref = _reference_key(list(arrays), reference)
    others = [label for label in arrays if label != ref]
    colours = mechanism_colours(others, names)
    if ref is not None:
        colours[ref] = CONFIDENTIAL_COLOUR
    panels = mechanism_panels(others, names, references=ref is not None)
    grid = PanelGrid(panels, cols=1)
    for i, panel in enumerate(panels or [None]):
        labels = ([ref] if ref is not None else []) + list(panel.keys if panel is not None else ())
        for label in labels:
            a = arrays[label]
            y = np.concatenate([a[keep], [a[rest].sum()] if rest.size else []])
            # the reference: light bars outlined in black, apart from every mechanism's solid colour
            marker = (dict(color="rgba(0, 0, 0, 0.15)", line=dict(color=colours[label], width=1.5)) if label == ref
                      else dict(color=colours[label]))
            grid.add(i, dict(type="bar", x=x, y=y, name=html.escape(str(label)), marker=marker,
                             legendgroup=str(label), showlegend=label != ref or i == 0))
    if curator_only:
        title = f"{title} — {CURATOR_ONLY}"
    grid.title_axes(x_title=plot_text(x_title), y_title="share of records")
    grid.axes("x", type="category")
    return grid.figure(title=plot_text(title), barmode="group")


def _ceiling_label(name) -> str:
    name = str(name)
    return name if "no privacy" in name else f"{name} (no privacy)"


def _series_names(runs: pd.DataFrame, by: str, names: Mapping[str, str] | None) -> dict:
    """Series key → mechanism name: ``names``, else the table's ``mechanism`` column."""
    if names is not None:
        return dict(names)
    if by != "mechanism" and "mechanism" in runs.columns:
        return dict(runs.groupby(by, sort=False)["mechanism"].first())
    return {}


def _ceiling_panels(runs: pd.DataFrame, by: str, keys: list, ceiling, names: Mapping[str, str] | None):
    """The panels of a W1 figure: the non-private ceiling, when present, is the reference
    repeated last in every panel; the other mechanisms are grouped by family.

    Returns
    -------
    (panels, shown, colours, reference)
        The :class:`~core.plots.style.Panel` list (one ``None`` panel when only the ceiling is
        there), the keys each panel draws, key → colour, and the ceiling's key or ``None``.
    """
    names = _series_names(runs, by, names)
    reference = ceiling if ceiling is not None and ceiling in keys else None
    others = [k for k in keys if k != reference]
    panels = mechanism_panels(others, names, references=reference is not None)
    panels = panels or ([None] if reference is not None else [])
    colours = mechanism_colours(keys, names)
    if reference is not None:
        colours[reference] = MECHANISM_COLOURS["bootstrap"]
    shown = [list(p.keys if p is not None else ()) + ([reference] if reference is not None else []) for p in panels]
    return panels, shown, colours, reference


def w1_boxplot_figure(runs: pd.DataFrame, *, value: str = "W1", by: str = "mechanism",
                      order: Sequence[str] | None = None, ceiling: str | None = "bootstrap",
                      names: Mapping[str, str] | None = None, value_title: str | None = None,
                      title: str = "W1 to the confidential data over independent runs") -> go.Figure:
    """One horizontal box of per-run W1 per mechanism (docs/mathematics.md §5: R runs at the same (ε, δ) and m).

    Small multiples: one panel per family of mechanisms (at most five boxes each), stacked
    on one shared W1 axis, with the non-private ceiling repeated as the last box of every
    panel, so each panel reads against it.

    Parameters
    ----------
    runs : DataFrame
        Tidy runs, one row per (mechanism, run), with columns ``by`` and ``value`` (and
        ``mechanism``, the mechanism's name, when ``by`` is a label column).
    order : sequence of str, optional
        Order of the boxes within a family (default: order of first appearance).
    ceiling : str, optional
        Key of the non-private mechanism; its box is the bootstrap's grey and labelled "no privacy".
    names : mapping key → mechanism name, optional
        Default: the ``mechanism`` column of ``runs``.
    value_title : str, optional
        Title of the value axis (say its units); default ``value``.

    Returns
    -------
    plotly.graph_objects.Figure
        One ``go.Box`` per (panel, series), its values in ``x``, named by the series (the
        ceiling "… (no privacy)"); boxes from top to bottom in family order. The value axis
        is logarithmic when the largest median is ten times the smallest or more.
    """
    for col in (value, by):
        if col not in runs.columns:
            raise ValueError(f"runs must have a column {col!r}; columns are {list(runs.columns)}")
    keys = list(order) if order is not None else list(pd.unique(runs[by]))
    panels, shown, colours, reference = _ceiling_panels(runs, by, keys, ceiling, names)
    grid = PanelGrid([p for p in panels if p is not None], cols=1, shared_y=False,
                     row_heights=[36.0 * len(drawn) + 30 for drawn in shown])
    values = runs[value].to_numpy(dtype=float)
    groups = runs.groupby(by, sort=False).indices
    for i, drawn in enumerate(shown):
        for key in drawn:
            vals = values[groups.get(key, [])]
            label = _ceiling_label(key) if key == reference else str(key)
            grid.add(i, dict(type="box", x=vals, name=plot_text(label), boxpoints="outliers", orientation="h",
                             marker=dict(color=colours[key]), line=dict(color=colours[key]), legendgroup=str(key)))
        grid.axes("y", i, autorange="reversed", automargin=True)
    grid.title_axes(x_title=plot_text(value if value_title is None else value_title))
    # one mechanism far off the others squeezes every box on a shared linear axis: a log axis then
    drawn_values = values[runs[by].isin(keys).to_numpy()]
    medians = np.array([np.median(values[groups[k]]) for k in keys if k in groups and len(groups[k])])
    if medians.size > 1 and np.all(drawn_values[np.isfinite(drawn_values)] > 0) and medians.min() > 0 \
            and medians.max() >= 10 * medians.min():
        grid.axes("x", **log_axis(drawn_values))
    return grid.figure(title=plot_text(title), showlegend=False)


def w1_frontier_figure(runs: pd.DataFrame, *, x: str = "eps", value: str = "W1",
                       by: str = "mechanism", log_x: bool = True, log_y: bool = True,
                       ceiling: str | None = "bootstrap", names: Mapping[str, str] | None = None,
                       value_title: str | None = None,
                       title: str = "Utility frontier: median W1 against ε") -> go.Figure:
    """Median W1 against ε per mechanism with a band from the first to the third quartile.

    Small multiples on shared axes: one panel per family of mechanisms (at most five
    curves each), the non-private ceiling repeated (dashed) in every panel. Log axes carry
    readable ticks (:func:`core.plots.style.log_axis`); the ε axis is ticked at the grid.

    Parameters
    ----------
    runs : DataFrame
        Tidy runs with columns ``x`` (ε), ``by`` (mechanism) and ``value`` (W1), several
        runs per (mechanism, ε).
    names : mapping key → mechanism name, optional
        Default: the ``mechanism`` column of ``runs``.
    value_title : str, optional
        Title of the value axis (say its units); default ``"median <value>"``.
    """
    for col in (x, value, by):
        if col not in runs.columns:
            raise ValueError(f"runs must have a column {col!r}; columns are {list(runs.columns)}")
    grouped = runs.groupby([by, x], sort=False)[value]
    stats = pd.DataFrame({"q1": grouped.quantile(0.25), "median": grouped.median(),
                          "q3": grouped.quantile(0.75)}).reset_index()
    keys = list(pd.unique(runs[by]))
    panels, shown, colours, reference = _ceiling_panels(runs, by, keys, ceiling, names)
    grid = PanelGrid([p for p in panels if p is not None], cols=2)
    for i, drawn in enumerate(shown):
        for key in drawn:
            s = stats[stats[by] == key].sort_values(x)
            is_ref = key == reference
            label = _ceiling_label(key) if is_ref else str(key)
            xs = s[x].to_numpy(dtype=float)
            grid.add(i, dict(type="scatter", x=np.concatenate([xs, xs[::-1]]),
                             y=np.concatenate([s["q3"].to_numpy(float), s["q1"].to_numpy(float)[::-1]]),
                             fill="toself", mode="lines", line=dict(width=0), fillcolor=colours[key],
                             opacity=0.2, name=plot_text(f"{label} quartiles"), legendgroup=str(key),
                             showlegend=False, hoverinfo="skip"))
            grid.add(i, dict(type="scatter", x=xs, y=s["median"].to_numpy(float), mode="lines+markers",
                             name=plot_text(label), legendgroup=str(key), showlegend=not is_ref or i == 0,
                             line=dict(color=colours[key], dash="dash" if is_ref else "solid")))
    grid.title_axes(x_title="ε", y_title=plot_text(f"median {value}" if value_title is None else value_title))
    if log_x:
        eps = np.unique(runs[x].to_numpy(dtype=float))
        eps = eps[np.isfinite(eps) & (eps > 0)]
        if 1 < eps.size <= 12:
            grid.axes("x", type="log", tickmode="array", tickvals=eps, ticktext=[f"{e:g}" for e in eps])
        else:
            grid.axes("x", **log_axis(eps))
    if log_y:
        grid.axes("y", **log_axis(stats[["q1", "median", "q3"]].to_numpy(float)))
    return grid.figure(title=plot_text(title))
