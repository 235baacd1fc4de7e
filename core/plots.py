"""Plotly figure builders for the dashboard (SPEC §3, §5, §6).

Every builder takes numbers that were already computed by the rest of :mod:`core`
(frequency tables, privacy curves, releases, comparison runs) and returns a
:class:`plotly.graph_objects.Figure`. No privacy or utility quantity is computed here:
the only arithmetic is presentation (grouping runs into quartiles for a band, anchoring a
reference slope, hiding zeros on a log axis, rounding a displayed number up).

Trace names are stable so that the app and the tests can find a series by name:

* δ(ε) plots: one trace per series (for example ``"instance-level δ_x(ε) (paper)"``),
  ``"singleton plateau"`` for T₁ = m/(m + θ + n − 1) (SPEC §3.1), ``"δ target"``.
* m*(ε) plots: one trace per series, ``"singleton limit m_sing"`` (SPEC §3.1).
* Feasible-region plots: ``"feasibility"`` (heatmap), ``"m*(θ)"`` boundary,
  ``"largest admissible m"`` marker.
"""

from __future__ import annotations

import math
import numbers
from decimal import ROUND_CEILING, Decimal, localcontext
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .validation import check_integer

__all__ = [
    "CURATOR_ONLY",
    "delta_curves_figure",
    "distribution_overlay_figure",
    "feasible_region_figure",
    "format_upper",
    "informativity_figure",
    "max_m_figure",
    "spectrum_figure",
    "singletons_by_rounding_figure",
    "w1_boxplot_figure",
    "w1_frontier_figure",
]

CURATOR_ONLY = "curator-only view: shows confidential data, not itself private"

# A fixed palette so a mechanism keeps its colour across every chart of a session.
_PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
            "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
# Legend under the plot: above it, long series names collide with the title.
_LAYOUT = dict(template="plotly_white", margin=dict(l=60, r=20, t=60, b=60),
               legend=dict(orientation="h", yanchor="top", y=-0.2, x=0))


def _colour(i: int) -> str:
    return _PALETTE[i % len(_PALETTE)]


def _as_1d(name: str, values) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(values, dtype=float))
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    return arr


def _same_length(name: str, values, reference: np.ndarray, ref_name: str) -> np.ndarray:
    arr = _as_1d(name, values)
    if arr.size != reference.size:
        raise ValueError(f"{name} has {arr.size} values but {ref_name} has {reference.size}")
    return arr


def _upper_labels(values: np.ndarray) -> list[str]:
    """:func:`format_upper` of each drawable value (empty text for the gaps)."""
    return [format_upper(float(v)) if np.isfinite(v) and v >= 0 else "" for v in values]


def _positive_or_nan(values: np.ndarray) -> np.ndarray:
    """Zeros (and negatives) cannot be drawn on a log axis: leave a gap rather than
    invent a floor value, so the plot never shows a δ that was not computed."""
    out = values.astype(float).copy()
    out[~(out > 0)] = np.nan
    return out


def format_upper(value, digits: int = 3) -> str:
    """Format a privacy number (a δ or an ε threshold) rounded *up* to ``digits`` significant digits.

    Privacy numbers shown to a user are rounded toward the conservative side: the printed
    number, read back, is never smaller than ``value`` (``float(text) >= value``), and it
    exceeds ``value`` by at most one unit in its last printed digit. The rounding is
    exact: ``decimal.Decimal(value)`` is the exact binary value of the float (subnormals
    included), rounded with ``ROUND_CEILING`` at the requested digit. The style is that of
    ``format(x, "g")``: fixed notation for exponents in ``[-4, digits)``, scientific
    otherwise, trailing zeros dropped. When the shortest decimal that reads back as the same
    float (``repr``) has at most ``digits`` digits, it is printed as is (``0.1`` stays
    ``"0.1"``). Exact zeros print ``"0"``, ``+inf`` prints ``"inf"``.

    Use it for every δ and every ε threshold ("pure ε-DP for ε ≥ …"); both are safe when
    rounded up.

    Parameters
    ----------
    value : float in [0, ∞]
    digits : int in [1, 17]

    Returns
    -------
    str
        For example ``format_upper(0.0123401) == "0.0124"``,
        ``format_upper(3.1e-9) == "3.1e-09"`` and ``format_upper(8.29344e-319) == "8.294e-319"``
        with ``digits=4``.

    Raises
    ------
    TypeError
        ``value`` is not a real number.
    ValueError
        ``value`` is negative or NaN, or ``digits`` is out of range.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"value must be a real number, got {type(value).__name__}")
    value = float(value)
    digits = check_integer("digits", digits, minimum=1, maximum=17)
    if math.isnan(value) or value < 0:
        raise ValueError(f"value must be in [0, ∞] (a δ or an ε threshold), got {value!r}")
    if value == math.inf:
        return "inf"
    if value == 0:
        return "0"
    with localcontext() as ctx:
        ctx.prec = 60
        # The shortest decimal that reads back as this very float (repr) is used when it fits
        # in ``digits``: 0.1 prints "0.1", not "0.101" (the float 0.1 is 0.1000000000000000055…).
        shortest = Decimal(repr(value)).normalize()
        if len(shortest.as_tuple().digits) <= digits:
            rounded = shortest
        else:
            exact = Decimal(value)
            rounded = exact.quantize(Decimal(1).scaleb(exact.adjusted() - digits + 1), rounding=ROUND_CEILING)
            rounded = rounded.normalize()
    exponent = rounded.adjusted()
    if -4 <= exponent < digits:
        text = format(rounded, "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    mantissa = rounded.scaleb(-exponent)
    head = format(mantissa, "f")
    head = head.rstrip("0").rstrip(".") if "." in head else head
    return f"{head}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"


# ---------------------------------------------------------------------------
# Data profile
# ---------------------------------------------------------------------------

def spectrum_figure(multiplicity, number_of_values, *, log_y: bool = True,
                    title: str = "Multiplicity spectrum") -> go.Figure:
    """Bar chart of the multiplicity spectrum: how many distinct values appear ``r`` times.

    Parameters
    ----------
    multiplicity : array_like of int, shape (J,)
        The multiplicities ``r`` present in the data.
    number_of_values : array_like of int, shape (J,)
        :math:`\\#\\{i : n_i = r\\}` for each ``r``; the bar at ``r = 1`` is the number of
        singletons ``k_1`` (SPEC §1).
    log_y : bool
        Log scale for the counts (spectra of real data span several decades).
    """
    r = _as_1d("multiplicity", multiplicity)
    counts = _same_length("number_of_values", number_of_values, r, "multiplicity")
    colours = [_colour(1) if ri == 1 else _colour(0) for ri in r]
    fig = go.Figure(go.Bar(
        x=r, y=counts, name="distinct values", marker_color=colours,
        hovertemplate="appear %{x} times: %{y} values<extra></extra>"))
    fig.update_layout(title=title, xaxis_title="multiplicity r (times a value appears)",
                      yaxis_title="number of distinct values", showlegend=False, **_LAYOUT)
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
    d = _as_1d("decimals", decimals)
    k1 = _same_length("singletons", singletons, d, "decimals")
    fig = go.Figure(go.Scatter(x=d, y=k1, mode="lines+markers", name="singletons k₁",
                               line=dict(color=_colour(1))))
    if distinct is not None:
        k = _same_length("distinct", distinct, d, "decimals")
        fig.add_trace(go.Scatter(x=d, y=k, mode="lines+markers", name="distinct values k",
                                 line=dict(color=_colour(0), dash="dot")))
    if current is not None:
        fig.add_vline(x=current, line_dash="dash", line_color="grey",
                      annotation_text="selected", annotation_position="top")
    fig.update_layout(title="Rounding and singletons", xaxis_title="decimals kept",
                      yaxis_title="count", **_LAYOUT)
    return fig


# ---------------------------------------------------------------------------
# Privacy (SPEC §3)
# ---------------------------------------------------------------------------

def delta_curves_figure(eps, series: Mapping[str, Sequence[float]], *,
                        plateau: float | None = None, plateau_label: str = "singleton plateau",
                        bands: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None,
                        delta_target: float | None = None, eps_selected: float | None = None,
                        title: str = "δ(ε): probability that the privacy loss exceeds ε") -> go.Figure:
    """δ(ε) curves on a log-δ axis (SPEC §3).

    Parameters
    ----------
    eps : array_like of float, shape (E,)
        Grid of ε > 0.
    series : mapping label → array of shape (E,)
        One curve per label, e.g. instance-level δ_x(ε), tight profile, global δ*(ε),
        simple bound. Values ≤ 0 are not drawable on a log axis and are left as gaps
        (``NaN``): for σ = 0 the paper's δ is exactly 0 once (e^ε − 1)(r − 1) ≥ m.
    plateau : float, optional
        The singleton term :math:`T_1 = m/(m+\\theta+n-1)` (SPEC §3.1), drawn as a
        labelled horizontal line across the ε range: no ε brings δ below it when the
        data contain a singleton.
    plateau_label : str
        Legend name of the plateau trace.
    bands : mapping label → (lower, upper), optional
        Shaded interval around a series (the Monte Carlo interval for σ ∈ (0, 1)).
    delta_target : float, optional
        Horizontal line at the δ the user targets.
    eps_selected : float, optional
        Vertical line at the ε currently selected.
    """
    x = _as_1d("eps", eps)
    fig = go.Figure()
    for i, (label, values) in enumerate(series.items()):
        y = _positive_or_nan(_same_length(f"series[{label!r}]", values, x, "eps"))
        colour = _colour(i)
        if bands and label in bands:
            lower, upper = bands[label]
            lo = _positive_or_nan(_same_length(f"bands[{label!r}] lower", lower, x, "eps"))
            hi = _positive_or_nan(_same_length(f"bands[{label!r}] upper", upper, x, "eps"))
            fig.add_trace(go.Scatter(x=x, y=hi, mode="lines", line=dict(width=0), showlegend=False,
                                     name=f"{label} upper", hoverinfo="skip"))
            fig.add_trace(go.Scatter(x=x, y=lo, mode="lines", line=dict(width=0), fill="tonexty",
                                     fillcolor="rgba(31,119,180,0.2)", name=f"{label} interval",
                                     hoverinfo="skip"))
        # Hover text rounds δ up (format_upper); plotly's d3 formats round to nearest.
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=label, line=dict(color=colour),
                                 customdata=_upper_labels(y),
                                 hovertemplate="ε=%{x:.3g}<br>δ ≤ %{customdata}<extra>" + label + "</extra>"))
    if plateau is not None:
        fig.add_trace(go.Scatter(x=[x.min(), x.max()], y=[plateau, plateau], mode="lines",
                                 name=plateau_label, line=dict(color="black", dash="dash"),
                                 hovertemplate=f"{plateau_label}: {format_upper(plateau)}<extra></extra>"))
        fig.add_annotation(x=x.max(), y=math.log10(plateau) if plateau > 0 else 0,
                           text=f"{plateau_label} = {format_upper(plateau)}",
                           showarrow=False, xanchor="right", yanchor="bottom")
    if delta_target is not None:
        fig.add_trace(go.Scatter(x=[x.min(), x.max()], y=[delta_target, delta_target], mode="lines",
                                 name="δ target", line=dict(color="grey", dash="dot")))
    if eps_selected is not None:
        fig.add_vline(x=eps_selected, line_dash="dot", line_color="grey",
                      annotation_text=f"ε = {eps_selected:g}", annotation_position="top left")
    fig.update_layout(title=title, xaxis_title="ε", yaxis_title="δ (log scale)", **_LAYOUT)
    # One tick per decade reads well over a few decades; over a hundred (δ can reach 1e-300)
    # it costs the browser ~0.4 s per redraw, so plotly then picks its own ticks.
    positive = np.concatenate([np.asarray(v, dtype=float).ravel() for v in series.values()] + [np.ones(1)])
    positive = positive[np.isfinite(positive) & (positive > 0)]
    decades = math.log10(positive.max()) - math.log10(positive.min()) if positive.size else 0.0
    fig.update_yaxes(type="log", exponentformat="power", **({"dtick": 1} if decades <= 12 else {}))
    return fig


def max_m_figure(eps, series: Mapping[str, Sequence[float]], *, m_sing: float | None = None,
                 selected: tuple[float, float] | None = None, delta: float | None = None,
                 log_x: bool = False) -> go.Figure:
    """Largest admissible release size m*(ε, δ) against ε, with the singleton limit.

    Parameters
    ----------
    eps : array_like of float, shape (E,)
    series : mapping label → array of shape (E,)
        m*(ε, δ) per guarantee (e.g. global Theorem 2, instance-level).
    m_sing : float, optional
        The singleton limit :math:`m_{\\text{sing}}(\\delta)=\\lfloor\\delta(\\theta+n-1)/(1-\\delta)\\rfloor`
        (SPEC §3.1), drawn as a horizontal line annotated "plateau": no ε, however
        large, admits a bigger release.
    selected : (ε, m), optional
        The current setting, marked.
    delta : float, optional
        Shown in the title.
    """
    x = _as_1d("eps", eps)
    fig = go.Figure()
    for i, (label, values) in enumerate(series.items()):
        y = _same_length(f"series[{label!r}]", values, x, "eps")
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines+markers", name=label,
                                 line=dict(color=_colour(i), shape="hv"), marker=dict(size=4),
                                 hovertemplate="ε=%{x:.3g}<br>m*=%{y:,.0f}<extra>" + label + "</extra>"))
    if m_sing is not None:
        fig.add_trace(go.Scatter(x=[x.min(), x.max()], y=[m_sing, m_sing], mode="lines",
                                 name="singleton limit m_sing", line=dict(color="black", dash="dash")))
        # Annotation coordinates on a log axis are log10 of the data value.
        fig.add_annotation(x=math.log10(x.max()) if log_x else x.max(), y=m_sing,
                           text=f"plateau: m_sing = {int(m_sing):,}",
                           showarrow=False, xanchor="right", yanchor="bottom")
    if selected is not None:
        fig.add_trace(go.Scatter(x=[selected[0]], y=[selected[1]], mode="markers", name="selected (ε, m)",
                                 marker=dict(symbol="x", size=12, color="black")))
    title = "Largest admissible release size m*(ε" + (f", δ = {delta:g})" if delta is not None else ")")
    fig.update_layout(title=title, xaxis_title="ε", yaxis_title="m*", **_LAYOUT)
    if log_x:
        fig.update_xaxes(type="log")
    return fig


def feasible_region_figure(theta, m_star, *, m_grid=None, delta_grid=None,
                           delta_target: float | None = None, eps_target: float | None = None,
                           selected_theta: float | None = None, log_x: bool = False) -> go.Figure:
    """Feasible (θ, m) region for a target (ε, δ) (inverse calibration, SPEC §3.1).

    A setting (θ, m) is feasible when m ≤ m*(ε, δ; θ), because δ*(ε) grows with m.

    Parameters
    ----------
    theta : array_like of float, shape (T,)
        Grid of θ > 0.
    m_star : array_like of int, shape (T,)
        Largest admissible m at each θ (``core.privacy.max_synthetic_size``).
    m_grid : array_like of int, shape (M,), optional
        Release sizes for the heatmap rows; by default 60 values up to 1.2·max m*.
    delta_grid : array_like of float, shape (M, T), optional
        δ*(ε; θ, m) on the grid; if given the heatmap shows log10 δ* (with the target as
        the colour midpoint), otherwise it shows feasibility (1 = feasible, 0 = not).
    delta_target, eps_target : float, optional
        The target, shown in the title.
    selected_theta : float, optional
        θ whose largest admissible m is marked (the nearest grid point; default: the θ
        of the grid with the largest m*).
    log_x : bool
        Log scale for θ (for a geometric θ grid).
    """
    t = _as_1d("theta", theta)
    ms = _same_length("m_star", m_star, t, "theta")
    if m_grid is None:
        top = max(1.0, 1.2 * float(np.nanmax(ms)))
        m_grid = np.unique(np.linspace(1, top, 60).round())
    mg = _as_1d("m_grid", m_grid)
    if delta_grid is not None:
        z = np.asarray(delta_grid, dtype=float)
        if z.shape != (mg.size, t.size):
            raise ValueError(f"delta_grid must have shape (len(m_grid), len(theta)) = "
                             f"{(mg.size, t.size)}, got {z.shape}")
        with np.errstate(divide="ignore"):
            zlog = np.log10(np.where(z > 0, z, np.nan))
        heat = go.Heatmap(x=t, y=mg, z=zlog, name="feasibility", colorscale="RdBu_r",
                          zmid=math.log10(delta_target) if delta_target else None,
                          colorbar=dict(title="log10 δ*"),
                          customdata=np.array([_upper_labels(row) for row in z], dtype=object),
                          hovertemplate="θ=%{x:.3g}<br>m=%{y:,.0f}<br>δ* ≤ %{customdata}<extra></extra>")
    else:
        feasible = (mg[:, None] <= ms[None, :]).astype(float)
        heat = go.Heatmap(x=t, y=mg, z=feasible, name="feasibility", zmin=0, zmax=1,
                          colorscale=[[0, "#f4cccc"], [0.5, "#f4cccc"], [0.5, "#b6d7a8"], [1, "#b6d7a8"]],
                          showscale=False,
                          hovertemplate="θ=%{x:.3g}<br>m=%{y:,.0f}<br>feasible=%{z}<extra></extra>")
    fig = go.Figure(heat)
    fig.add_trace(go.Scatter(x=t, y=ms, mode="lines", name="m*(θ)", line=dict(color="black", shape="hv")))
    if selected_theta is None:
        idx = int(np.nanargmax(ms))
    else:
        idx = int(np.argmin(np.abs(t - selected_theta)))
    fig.add_trace(go.Scatter(x=[t[idx]], y=[ms[idx]], mode="markers+text", name="largest admissible m",
                             marker=dict(symbol="star", size=14, color="gold", line=dict(color="black", width=1)),
                             text=[f"m* = {int(ms[idx]):,}"], textposition="top center"))
    target = ""
    if eps_target is not None and delta_target is not None:
        target = f" for ε = {eps_target:g}, δ = {delta_target:g}"
    fig.update_layout(title="Feasible (θ, m)" + target + " (σ = 0, global Theorem 2)",
                      xaxis_title="θ", yaxis_title="m", **_LAYOUT)
    if log_x:
        fig.update_xaxes(type="log")
    return fig


# ---------------------------------------------------------------------------
# Synthetic data and comparison (SPEC §5)
# ---------------------------------------------------------------------------

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
        Common evaluation grid of the KDEs (``core.utility``).
    kde : mapping label → array of shape (G,), optional
        Density values on ``kde_grid``; drawn as lines in the colour of the sample with
        the same label.
    curator_only : bool
        Mark the figure as a curator-only view (it shows confidential data).
    """
    bins = check_integer("bins", bins, minimum=1, maximum=10_000)
    arrays = {label: _as_1d(f"samples[{label!r}]", v) for label, v in samples.items()}
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
        colours[label] = _colour(i)
        fig.add_trace(go.Histogram(x=a, name=label, histnorm="probability density", opacity=0.45,
                                   marker_color=colours[label], legendgroup=label,
                                   xbins=dict(start=lo, end=hi + size * 1e-9, size=size)))
    if kde:
        if kde_grid is None:
            raise ValueError("kde_grid is required when kde curves are given")
        g = _as_1d("kde_grid", kde_grid)
        for i, (label, dens) in enumerate(kde.items()):
            y = _same_length(f"kde[{label!r}]", dens, g, "kde_grid")
            fig.add_trace(go.Scatter(x=g, y=y, mode="lines", name=f"{label} KDE", legendgroup=label,
                                     line=dict(color=colours.get(label, _colour(len(arrays) + i)), width=2)))
    if curator_only:
        title = f"{title} — {CURATOR_ONLY}"
    fig.update_layout(title=title, barmode="overlay", xaxis_title=x_title, yaxis_title="density", **_LAYOUT)
    return fig


def _ceiling_label(name) -> str:
    name = str(name)
    return name if "no privacy" in name else f"{name} (no privacy)"


def w1_boxplot_figure(runs: pd.DataFrame, *, value: str = "W1", by: str = "mechanism",
                      order: Sequence[str] | None = None, ceiling: str | None = "bootstrap",
                      title: str = "W1 to the confidential data over independent runs") -> go.Figure:
    """One box of per-run W1 per mechanism (SPEC §5: R runs at the same (ε, δ) and m).

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
                             marker_color="grey" if is_ceiling else _colour(i)))
    fig.update_layout(title=title, yaxis_title=value, showlegend=False, **_LAYOUT)
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
        colour = "#7f7f7f" if ceiling is not None and name == ceiling else _colour(i)
        label = _ceiling_label(name) if ceiling is not None and name == ceiling else str(name)
        xs = s[x].to_numpy(dtype=float)
        fig.add_trace(go.Scatter(x=np.concatenate([xs, xs[::-1]]),
                                 y=np.concatenate([s["q3"].to_numpy(float), s["q1"].to_numpy(float)[::-1]]),
                                 fill="toself", mode="lines", line=dict(width=0), fillcolor=colour,
                                 opacity=0.2, name=f"{label} quartiles", legendgroup=label,
                                 showlegend=False, hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=xs, y=s["median"].to_numpy(float), mode="lines+markers", name=label,
                                 legendgroup=label, line=dict(color=colour)))
    fig.update_layout(title=title, xaxis_title="ε", yaxis_title=f"median {value}", **_LAYOUT)
    if log_x:
        fig.update_xaxes(type="log")
    if log_y:
        fig.update_yaxes(type="log")
    return fig


# ---------------------------------------------------------------------------
# Informativity (SPEC §6)
# ---------------------------------------------------------------------------

def informativity_figure(curves: pd.DataFrame, *, slopes: Mapping[str, float] | None = None,
                         reference_slope: float = -0.5,
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
        colour = _colour(i)
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
    fig.update_layout(title=title, xaxis_title="n (confidential sample size)", yaxis_title="mean W1", **_LAYOUT)
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return fig
